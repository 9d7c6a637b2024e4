"""Parity: `mcp-server-fetch` against the PyPI `mcp-server-fetch` (pinned in
tests/python/requirements.txt). The pages come from HTTP servers this test starts on 127.0.0.1
(never the internet), so the session runs with `--allow-private-ips`, and once without it to
see the loopback address refused. The tool lists, every result and the prompt are compared, and
the user agents the servers sent are checked on the HTTP side.

Intended differences, each asserted below where it shows:
- MARKDOWN: HTML is simplified by a Rust port of Readability and its own Markdown writer, not
  readabilipy and markdownify, so the Markdown reads alike (the article's headings, emphasis,
  links and lists, without the navigation) but not byte for byte; compared by what it holds.
- ARGUMENT_ERRORS: an argument outside its schema (max_length 0, a start_index below 0, a URL
  that does not parse) is an error result in both, worded by each one's validator.
- BODY_BOUND: ours reads at most --max-body-bytes (10 MiB by default) of a page and refuses a
  longer one; the original reads any body whole. Checked on ours alone.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from parity import assert_same, outcome, run, tool_surface
from pypi import implementations

IMPLEMENTATIONS = implementations("fetch")

AUTONOMOUS = "ModelContextProtocol/1.0 (Autonomous; +https://github.com/modelcontextprotocol/servers)"
MANUAL = "ModelContextProtocol/1.0 (User-Specified; +https://github.com/modelcontextprotocol/servers)"

ARTICLE = """<html><head><title>A Test Article</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>A Test Article</h1>
<p>The first paragraph has <strong>bold</strong> and <em>italic</em> words, and a
<a href="https://example.com/x">link</a>. It is long enough to count as content,
with commas, and more than twenty five characters.</p>
<h2>Details</h2>
<p>A second paragraph, also long enough to be content, with commas, and sentences.
Readability keeps paragraphs like this one, and drops the navigation.</p>
<ul><li>first item</li><li>second item</li></ul></article>
<footer>Copyright footer</footer></body></html>"""

PLAIN = "caf\u00e9 \u2713 \U0001f600 " + "".join(f"line {n}\n" for n in range(40))
ROBOTS = "# a comment\nUser-agent: *\nDisallow: /private\n"


class Site(BaseHTTPRequestHandler):
    """The pages the session fetches; `server.robots_status` decides the robots.txt answer."""

    def do_GET(self):  # noqa: N802 (the handler's name is the standard library's)
        self.server.agents.append((self.path, self.headers.get("User-Agent")))
        routes = {
            "/article.html": (200, "text/html; charset=utf-8", ARTICLE),
            "/plain.txt": (200, "text/plain; charset=utf-8", PLAIN),
            "/data.json": (200, "application/json", '{"a": [1, 2, 3]}'),
            "/untyped": (200, None, "<p>no content type</p>"),
            "/private/secret.txt": (200, "text/plain", "secret"),
            "/large.txt": (200, "text/plain", "x" * 5000),
            "/error": (500, "text/plain", "boom"),
        }
        if self.path == "/robots.txt":
            status = self.server.robots_status
            route = (status, "text/plain", ROBOTS if status == 200 else "no")
        elif self.path.startswith("/redirect-to"):
            self.send_response(302)
            self.send_header("Location", self.path.removeprefix("/redirect-to"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        else:
            route = routes.get(self.path, (404, "text/plain", "not found"))
        status, content_type, body = route
        data = body.encode()
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@contextmanager
def site(robots_status: int = 200):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    server.robots_status = robots_status
    server.agents = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def session_calls(base: str, forbidden: str) -> list[dict[str, Any]]:
    return [
        {"url": f"{base}/plain.txt"},
        {"url": f"{base}/plain.txt", "max_length": 25},
        {"url": f"{base}/plain.txt", "max_length": 25, "start_index": 25},
        {"url": f"{base}/plain.txt", "start_index": 100000},
        {"url": f"{base}/data.json"},
        {"url": f"{base}/article.html", "raw": True},
        {"url": f"{base}/untyped", "raw": True},
        {"url": f"{base}/private/secret.txt"},
        {"url": f"{base}/redirect-to/plain.txt", "max_length": 40},
        {"url": f"{base}/redirect-to/private/secret.txt"},
        {"url": f"{base}/missing"},
        {"url": f"{base}/error"},
        {"url": f"{forbidden}/plain.txt"},
        {"url": "ftp://127.0.0.1/file"},
    ]


ARGUMENT_ERRORS = [
    {"url": "not a url"},
    {"url": "http://127.0.0.1/", "max_length": 0},
    {"url": "http://127.0.0.1/", "start_index": -1},
]


async def session(implementation, log, base: str, forbidden: str) -> dict[str, Any]:
    async with implementation.connect(log) as client:
        tools = await client.list_tools()
        prompts = await client.list_prompts()
        results = [outcome(await client.call_tool("fetch", arguments)) for arguments in session_calls(base, forbidden)]
        article = outcome(await client.call_tool("fetch", {"url": f"{base}/article.html"}))
        argument_errors = [(await client.call_tool("fetch", arguments)).is_error for arguments in ARGUMENT_ERRORS]
        prompt = await client.get_prompt("fetch", {"url": f"{base}/private/secret.txt"})
        return {
            "tools": tool_surface(tools.tools),
            "prompts": [p.model_dump(mode="json", exclude_none=True) for p in prompts.prompts],
            "results": results,
            "article": article,
            "argument_errors": argument_errors,
            "prompt": [m.model_dump(mode="json", exclude_none=True) for m in prompt.messages],
        }


def test_the_same_session_gives_the_same_tools_and_results(server_log):
    seen: dict[str, Any] = {}
    agents: dict[str, list] = {}

    async def both():
        for label, implementation in IMPLEMENTATIONS.items():
            implementation.command.append("--allow-private-ips")
            try:
                with site() as (server, base), site(robots_status=403) as (_, forbidden):
                    seen[label] = await session(implementation, server_log, base, forbidden)
                    agents[label] = list(server.agents)
                    seen[label] = replace_base(seen[label], base, forbidden)
            finally:
                implementation.command.pop()

    run(both)
    ours, original = seen["ours"], seen["original"]
    assert_same(ours["tools"], original["tools"], "tools/list")
    assert_same(ours["prompts"], original["prompts"], "prompts/list")
    for arguments, mine, theirs in zip(session_calls("<base>", "<forbidden>"), ours["results"], original["results"], strict=True):
        assert_same(mine, theirs, f"fetch {arguments}")
    assert_same(ours["prompt"], original["prompt"], "prompts/get fetch")
    errors = [r["isError"] for r in ours["results"]]
    assert errors == [False] * 7 + [True, False, True, True, True, True, True], errors
    assert "<robots>\n" + ROBOTS + "\n</robots>" in ours["results"][7]["content"][0]["text"]

    # MARKDOWN: the same article, in each one's Markdown.
    for label in ("ours", "original"):
        article = seen[label]["article"]
        text = article["content"][0]["text"]
        assert not article["isError"], (label, text)
        assert text.startswith("Contents of <base>/article.html:\n"), (label, text)
        for held in ("**bold**", "[link](https://example.com/x)", "## Details", "first item", "second item"):
            assert held in text, (label, held, text)
        assert "Copyright footer" not in text, (label, text)

    # ARGUMENT_ERRORS: refused by both.
    assert ours["argument_errors"] == original["argument_errors"] == [True, True, True]

    # The same requests with the same user agents: autonomous for the tool (robots.txt first),
    # the user's for the prompt, which does not read robots.txt.
    assert_same(agents["ours"], agents["original"], "requests and user agents")
    assert ("/robots.txt", AUTONOMOUS) in agents["ours"]
    assert agents["ours"][-1] == ("/private/secret.txt", MANUAL)


def replace_base(value: Any, base: str, forbidden: str) -> Any:
    if isinstance(value, str):
        return value.replace(base, "<base>").replace(forbidden, "<forbidden>")
    if isinstance(value, list):
        return [replace_base(v, base, forbidden) for v in value]
    if isinstance(value, tuple):
        return tuple(replace_base(v, base, forbidden) for v in value)
    if isinstance(value, dict):
        return {k: replace_base(v, base, forbidden) for k, v in value.items()}
    return value


def test_loopback_is_refused_without_allow_private_ips(server_log):
    seen: dict[str, Any] = {}

    async def both():
        for label, implementation in IMPLEMENTATIONS.items():
            with site() as (server, base):
                async with implementation.connect(server_log) as client:
                    result = outcome(await client.call_tool("fetch", {"url": f"{base}/plain.txt", "raw": True}))
                    prompt = await client.get_prompt("fetch", {"url": f"{base}/plain.txt"})
                seen[label] = replace_base(
                    {"result": result, "prompt": [m.model_dump(mode="json") for m in prompt.messages], "requests": len(server.agents)},
                    base,
                    base,
                )

    run(both)
    assert_same(seen["ours"], seen["original"], "a loopback URL without --allow-private-ips")
    assert seen["ours"]["result"]["isError"]
    assert "which is not a public address" in seen["ours"]["result"]["content"][0]["text"]
    assert seen["ours"]["requests"] == 0


def test_a_custom_user_agent_and_ignoring_robots_txt(server_log):
    seen: dict[str, Any] = {}

    async def both():
        for label, implementation in IMPLEMENTATIONS.items():
            extra = ["--allow-private-ips", "--ignore-robots-txt", "--user-agent", "Tester/1.0"]
            implementation.command.extend(extra)
            try:
                with site() as (server, base):
                    async with implementation.connect(server_log) as client:
                        result = outcome(await client.call_tool("fetch", {"url": f"{base}/private/secret.txt"}))
                    seen[label] = replace_base({"result": result, "agents": list(server.agents)}, base, base)
            finally:
                del implementation.command[-len(extra):]

    run(both)
    assert_same(seen["ours"], seen["original"], "--ignore-robots-txt --user-agent")
    assert seen["ours"]["agents"] == [("/private/secret.txt", "Tester/1.0")]
    assert not seen["ours"]["result"]["isError"]


def test_ours_refuses_a_body_past_its_bound(server_log):
    """BODY_BOUND: ours alone."""
    ours = IMPLEMENTATIONS["ours"]

    async def scenario():
        with site() as (_, base):
            extra = ["--allow-private-ips", "--max-body-bytes", "1000"]
            ours.command.extend(extra)
            try:
                async with ours.connect(server_log) as client:
                    large = await client.call_tool("fetch", {"url": f"{base}/large.txt"})
                    small = await client.call_tool("fetch", {"url": f"{base}/plain.txt"})
            finally:
                del ours.command[-len(extra):]
        assert large.is_error
        assert "larger than 1000 bytes" in large.content[0].text, large
        assert not small.is_error

    run(scenario)
