"""The built guide, read as a person would: in headless Chromium (Debian's), served over HTTP on
127.0.0.1. scripts/guide.sh builds the book and runs this with GUIDE_BOOK set to it.

- every internal link of every page, and its `#anchor`, resolves in the built HTML;
- following the sidebar from the first page reaches every chapter of SUMMARY.md, and each page
  renders (a title, a body, its code blocks not empty) without a console error or a failed load;
- the search finds a word and its results link to pages of the book.
"""

import functools
import html.parser
import http.server
import os
import pathlib
import re
import threading
import urllib.parse

import pytest
from playwright.sync_api import sync_playwright

BOOK = pathlib.Path(os.environ.get("GUIDE_BOOK", "guide/book")).resolve()
SUMMARY = pathlib.Path(__file__).resolve().parents[2] / "guide" / "src" / "SUMMARY.md"
# The flags a headless browser in a container needs, and nothing that reaches the network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chapters() -> list[str]:
    """The pages SUMMARY.md lists, as the book's HTML paths, in reading order."""
    return [link[: -len(".md")] + ".html" for link in re.findall(r"\]\(([^)#]+\.md)\)", SUMMARY.read_text())]


class Links(html.parser.HTMLParser):
    """Every `href` and every `id` of a page."""

    def __init__(self):
        super().__init__()
        self.hrefs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


@functools.cache
def parsed(path: pathlib.Path) -> Links:
    links = Links()
    links.feed(path.read_text())
    return links


def test_every_internal_link_and_anchor_resolves():
    assert (BOOK / "index.html").is_file(), f"no book at {BOOK}: run scripts/guide.sh"
    broken, checked = [], 0
    for page in sorted(BOOK.rglob("*.html")):
        if page.name in {"print.html", "404.html", "toc.html"}:
            continue
        for href in parsed(page).hrefs:
            url = urllib.parse.urlsplit(href)
            if url.scheme or url.netloc or href.startswith("mailto:"):
                continue  # the web is not fetched
            target = (page.parent / urllib.parse.unquote(url.path)).resolve() if url.path else page
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.is_file():
                broken.append(f"{page.relative_to(BOOK)}: {href} (no such file)")
            elif url.fragment and target.suffix == ".html" and url.fragment not in parsed(target).ids:
                broken.append(f"{page.relative_to(BOOK)}: {href} (no such anchor)")
    assert checked > 100, f"only {checked} internal links found: is the book built?"
    assert not broken, "broken links:\n" + "\n".join(broken)


@pytest.fixture(scope="module")
def site():
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(BOOK))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    executable = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
    assert pathlib.Path(executable).is_file(), f"no chromium at {executable}: scripts/guide.sh installs it"
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=executable, args=CHROMIUM_ARGS, headless=True, timeout=60_000
        )
        yield context
        context.close()


def open_page(browser, url):
    """A page opened at `url`, with what went wrong on it collected in `page.problems`."""
    page = browser.new_page()
    problems = []
    page.on("console", lambda message: message.type == "error" and problems.append(f"console: {message.text}"))
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"failed load: {request.url}"))
    page.on("response", lambda response: response.status >= 400 and problems.append(f"{response.status}: {response.url}"))
    page.goto(url, wait_until="load", timeout=30_000)
    page.problems = problems
    return page


def test_the_sidebar_reaches_every_page_and_each_renders(browser, site):
    expected = chapters()
    assert len(expected) >= 20, expected
    page = open_page(browser, site + expected[0])
    seen, failures = [], []
    while True:
        path = urllib.parse.urlsplit(page.url).path.lstrip("/")
        seen.append(path)
        title = page.title()
        main = page.locator("main")
        if not main.count() or not main.first.inner_text().strip():
            failures.append(f"{path}: nothing rendered in <main>")
        if not page.locator("main h1").count():
            failures.append(f"{path}: no heading")
        empty = page.evaluate("() => [...document.querySelectorAll('main pre code')].filter(c => !c.textContent.trim()).length")
        if empty:
            failures.append(f"{path}: {empty} empty code block(s)")
        # The sidebar lists every chapter, and the current one is marked.
        sidebar = page.evaluate(
            "() => [...document.querySelectorAll('#mdbook-sidebar a[href], #sidebar a[href], nav.sidebar a[href]')]"
            ".map(a => a.getAttribute('href'))"
        )
        missing = [c for c in expected if not any(href.split("#")[0].endswith(c) for href in sidebar)]
        if missing:
            failures.append(f"{path} ({title}): the sidebar lacks {missing}")
        failures += [f"{path}: {problem}" for problem in page.problems]
        page.problems.clear()
        # The next page, as a reader would go: the sidebar's link after the current one.
        index = expected.index(path) if path in expected else -1
        if index < 0 or index + 1 == len(expected):
            break
        following = expected[index + 1]
        link = page.locator(
            f"#mdbook-sidebar a[href$='{following}'], #sidebar a[href$='{following}'], nav.sidebar a[href$='{following}']"
        ).first
        link.click()
        page.wait_for_url(f"**/{following}", timeout=15_000)
        page.wait_for_load_state("load")
    page.close()
    assert seen == expected, f"followed {seen}, expected {expected}"
    assert not failures, "\n".join(failures)


def test_the_search_finds_a_word(browser, site):
    page = open_page(browser, site + "index.html")
    page.locator("#mdbook-search-toggle, #search-toggle").first.click()
    bar = page.locator("#mdbook-searchbar, #searchbar").first
    bar.wait_for(state="visible", timeout=10_000)
    bar.fill("elicitation")
    # mdBook searches on key events; fill() sends only an input event.
    bar.press("End")
    results = page.locator("#mdbook-searchresults a, #searchresults a")
    results.first.wait_for(state="visible", timeout=10_000)
    hrefs = results.evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert any("context.html" in href for href in hrefs), hrefs
    assert not page.problems, page.problems
    page.close()
