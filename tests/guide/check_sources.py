"""The guide's sources, checked before mdbook builds them (scripts/guide.sh runs this).

mdbook includes an anchor it cannot find as nothing, silently, and cannot compile a snippet
written in the Markdown. So:

- every ```rust and ```toml block of guide/src holds nothing but `{{#include ...}}` lines: the
  code lives in files that `cargo test --workspace` or scripts/first-hour.sh build;
- every include names a file that exists, and an anchor that file opens and closes (or a line
  range within it), and what it includes is not empty;
- every link of README.md to a file of the repository resolves, and its `#anchor` is a heading
  of that Markdown file (the README points into the guide's chapters);
- the OpenTelemetry recipe's versions are the ones examples/Cargo.toml builds `otlp` with.

Exits non-zero with every problem listed.
"""

import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parents[2]
src = root / "guide" / "src"
problems = []

FENCE = re.compile(r"^```([A-Za-z0-9_-]*)[^\n]*\n(.*?)^```", re.M | re.S)
INCLUDE = re.compile(r"\{\{#include\s+([^}\s]+)\s*\}\}")
CHECKED = {"rust", "toml"}


def included(page: pathlib.Path, target: str) -> str | None:
    path, _, selector = target.partition(":")
    file = (page.parent / path).resolve()
    where = f"{page.relative_to(root)}: `{target}`"
    if not file.is_file():
        problems.append(f"{where}: no file {file.relative_to(root) if file.is_relative_to(root) else file}")
        return None
    lines = file.read_text().splitlines()
    if not selector:
        text = lines
    elif re.fullmatch(r"\d*(:\d*)?", selector):
        start, _, end = selector.partition(":")
        first = int(start) - 1 if start else 0
        last = int(end) if end else (first + 1 if not _ else len(lines))
        if first >= len(lines) or last > len(lines):
            problems.append(f"{where}: the file has {len(lines)} lines")
            return None
        text = lines[first:last]
    else:
        opens = [i for i, line in enumerate(lines) if re.search(rf"ANCHOR:\s*{re.escape(selector)}\b", line)]
        closes = [i for i, line in enumerate(lines) if re.search(rf"ANCHOR_END:\s*{re.escape(selector)}\b", line)]
        if not opens or not closes or closes[0] < opens[0]:
            problems.append(f"{where}: the file has no `ANCHOR: {selector}` ... `ANCHOR_END: {selector}`")
            return None
        text = [line for line in lines[opens[0] + 1 : closes[0]] if "ANCHOR" not in line]
    body = "\n".join(text)
    if not body.strip():
        problems.append(f"{where}: includes nothing")
    return body


pages = sorted(src.glob("*.md"))
summary = (src / "SUMMARY.md").read_text()
for link in re.findall(r"\]\(([^)#]+\.md)\)", summary):
    if not (src / link).is_file():
        problems.append(f"guide/src/SUMMARY.md: `{link}` does not exist")
for page in pages:
    text = page.read_text()
    for fence in FENCE.finditer(text):
        language, body = fence.group(1), fence.group(2)
        if language in CHECKED:
            stray = [line for line in body.splitlines() if line.strip() and not INCLUDE.fullmatch(line.strip())]
            if stray:
                problems.append(
                    f"{page.relative_to(root)}: a ```{language} block written inline (`{stray[0].strip()}`): "
                    "put the code in guide/snippets or guide/recipes and include it"
                )
    for target in INCLUDE.findall(text):
        included(page, target)



def slug(heading: str) -> str:
    """The anchor GitHub and mdbook give a Markdown heading."""
    text = re.sub(r"[`*_\[\]()]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


readme = (root / "README.md").read_text()
for link in re.findall(r"\]\(([^)\s]+)\)", readme):
    if re.match(r"^[a-z]+:", link):
        continue
    path, _, anchor = link.partition("#")
    file = root / path
    if not file.exists():
        problems.append(f"README.md: `{link}`: no such file")
    elif anchor and file.suffix == ".md":
        headings = {slug(h) for h in re.findall(r"^#+\s+(.*)$", file.read_text(), re.M)}
        if anchor not in headings:
            problems.append(f"README.md: `{link}`: {path} has no heading `#{anchor}`")

# The OpenTelemetry recipe shows the versions the `otlp` example is built with.
examples = (root / "examples" / "Cargo.toml").read_text()
for line in (root / "guide" / "recipes" / "otlp" / "Cargo.toml.add").read_text().splitlines():
    found = re.match(r'^(opentelemetry[\w-]*|tracing-opentelemetry) = "([^"]+)"', line)
    if found:
        crate, version = found.groups()
        built = re.search(rf'^{re.escape(crate)} = \{{ version = "([^"]+)"', examples, re.M)
        if not built or built.group(1) != version:
            problems.append(
                f"guide/recipes/otlp/Cargo.toml.add: {crate} {version}, but examples/Cargo.toml builds "
                f"the otlp example with {built.group(1) if built else 'none'}"
            )

if problems:
    print("FAIL: the guide's sources:", *problems, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"   {len(pages)} pages: every Rust and TOML block included from a built file, every include found, README links resolved")
