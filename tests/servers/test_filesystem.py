"""Parity: `mcp-server-filesystem` against `@modelcontextprotocol/server-filesystem` (pinned in
scripts/servers.sh). The same tree is laid out for each, the same session runs against each,
and the tool lists, every result and the tree left behind are compared, the run's own paths
replaced by <ROOT> and <OUTSIDE>. The hostile paths (traversal, links out of the sandbox, a root
the client removed) must be refused by both.

Intended differences, each asserted below where it shows:
- MEDIA_OUTPUT_SCHEMA: `read_media_file` answers with the media block itself and its
  `structuredContent`; ours lists no `outputSchema` for it (every other tool's is the
  original's, `{"content": string}`).
- DANGLING_LINK: writing through a dangling symbolic link is refused by both, but ours says so
  ("... is a symbolic link to ..., which does not exist") where the original reports "Parent
  directory does not exist".
- ARGUMENT_ERRORS: a missing or mistyped argument is a tool error in both, worded by each
  framework's validator.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from parity import assert_same, collapse, implementations, outcome, run, tool_surface

IMPLEMENTATIONS = implementations("filesystem")

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
DATE = r"\w{3} \w{3} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4} \([^)]*\)"
# The environment both servers run in: the original writes dates in the local time zone.
ENV = {"TZ": "UTC"}


class Layout:
    """A sandbox and a directory outside it, laid out the same for each implementation."""

    def __init__(self) -> None:
        self.base = Path(os.path.realpath(tempfile.mkdtemp(prefix="fs-parity-")))
        self.root = self.base / "sandbox"
        self.outside = self.base / "outside"
        files = {
            "hello.txt": "line one\nline two\nline three\nline four\n",
            "crlf.txt": "a\r\nb\r\nc\r\n",
            "code.py": "def f():\n    x = 1\n    y = 2\n    return x + y\n",
            "Upper.md": "# Upper\n",
            "docs/readme.md": "# Readme\n",
            "docs/guide.md": "# Guide\nsee ``` fences\n",
            "docs/.hidden.txt": "hidden\n",
            "docs/deep/notes.txt": "deep notes\n",
            "node_modules/pkg/index.js": "module.exports = 1;\n",
            "unicode-é.txt": "caf\u00e9 \u2713\n",
        }
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode())
        (self.root / "image.png").write_bytes(PNG)
        (self.root / "sound.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVE")
        (self.root / "data.bin").write_bytes(bytes(range(256)))
        (self.root / "sized.bin").write_bytes(b"x" * 1536)
        (self.root / "empty").mkdir()
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text("top secret\n")
        os.symlink(self.outside / "secret.txt", self.root / "escape.txt")
        os.symlink(self.outside, self.root / "escape_dir")
        os.symlink(self.root / "hello.txt", self.root / "inner_link.txt")
        os.symlink(self.outside / "planted.txt", self.root / "dangling.txt")
        # Fixed times, so the listings' and infos' times do not differ by when a tree was made.
        for path in [self.root, *self.root.rglob("*")]:
            if not path.is_symlink():
                os.utime(path, (1_700_000_000, 1_700_000_000))

    def replacements(self) -> dict[str, str]:
        return {str(self.root): "<ROOT>", str(self.outside): "<OUTSIDE>"}

    def snapshot(self) -> dict[str, Any]:
        """Every path below the sandbox and outside it, with a file's bytes or a link's target."""
        out = {}
        for top, label in ((self.root, "<ROOT>"), (self.outside, "<OUTSIDE>")):
            for path in sorted(top.rglob("*")):
                key = label + "/" + str(path.relative_to(top))
                if path.is_symlink():
                    out[key] = ("link", os.readlink(path).replace(str(self.base), "<BASE>"))
                elif path.is_dir():
                    out[key] = ("dir",)
                else:
                    out[key] = ("file", path.read_bytes())
        return out

    def remove(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


# The session: (tool, arguments) with {root} and {outside} filled in for each run. Every step's
# result is compared; `HOSTILE` steps must be refused by both.
SESSION: list[tuple[str, dict[str, Any]]] = [
    ("list_allowed_directories", {}),
    ("read_text_file", {"path": "{root}/hello.txt"}),
    ("read_text_file", {"path": "{root}/hello.txt", "head": 2}),
    ("read_text_file", {"path": "{root}/hello.txt", "tail": 2}),
    ("read_text_file", {"path": "{root}/crlf.txt", "tail": 2}),
    ("read_text_file", {"path": "{root}/hello.txt", "head": 1, "tail": 1}),
    ("read_text_file", {"path": "hello.txt"}),
    ("read_text_file", {"path": "{root}/unicode-é.txt"}),
    ("read_text_file", {"path": "{root}/inner_link.txt"}),
    ("read_text_file", {"path": "{root}/missing.txt"}),
    ("read_file", {"path": "{root}/docs/readme.md"}),
    ("read_multiple_files", {"paths": ["{root}/hello.txt", "{root}/missing.txt", "{root}/docs/guide.md"]}),
    ("write_file", {"path": "{root}/new.txt", "content": "first\nsecond\n"}),
    ("write_file", {"path": "{root}/new.txt", "content": "replaced\nsecond\n"}),
    ("read_text_file", {"path": "{root}/new.txt"}),
    ("write_file", {"path": "{root}/no/such/dir/file.txt", "content": "x"}),
    ("edit_file", {"path": "{root}/code.py", "edits": [{"oldText": "x = 1", "newText": "x = 10"}], "dryRun": True}),
    ("edit_file", {"path": "{root}/code.py", "edits": [{"oldText": "x = 1", "newText": "x = 10"}]}),
    (
        "edit_file",
        {"path": "{root}/code.py", "edits": [{"oldText": "y = 2\nreturn x + y", "newText": "y = 20\n    return y"}]},
    ),
    ("edit_file", {"path": "{root}/crlf.txt", "edits": [{"oldText": "b\n", "newText": "B\n"}]}),
    ("edit_file", {"path": "{root}/docs/guide.md", "edits": [{"oldText": "Guide", "newText": "Guide ```"}]}),
    ("edit_file", {"path": "{root}/code.py", "edits": [{"oldText": "not there", "newText": "x"}]}),
    ("read_text_file", {"path": "{root}/code.py"}),
    ("create_directory", {"path": "{root}/made/a/b"}),
    ("create_directory", {"path": "{root}/made"}),
    ("list_directory", {"path": "{root}"}),
    ("list_directory", {"path": "{root}/empty"}),
    ("list_directory_with_sizes", {"path": "{root}"}),
    ("list_directory_with_sizes", {"path": "{root}", "sortBy": "size"}),
    ("directory_tree", {"path": "{root}/docs"}),
    ("directory_tree", {"path": "{root}", "excludePatterns": ["node_modules", "*.bin"]}),
    ("search_files", {"path": "{root}", "pattern": "**/*.md"}),
    ("search_files", {"path": "{root}", "pattern": "*.txt"}),
    ("search_files", {"path": "{root}", "pattern": "**/*.txt", "excludePatterns": ["docs/deep/**"]}),
    ("search_files", {"path": "{root}", "pattern": "**/nothing-*"}),
    ("get_file_info", {"path": "{root}/hello.txt"}),
    ("get_file_info", {"path": "{root}/docs"}),
    ("move_file", {"source": "{root}/new.txt", "destination": "{root}/made/moved.txt"}),
    ("move_file", {"source": "{root}/hello.txt", "destination": "{root}/code.py"}),
    ("read_media_file", {"path": "{root}/image.png"}),
    ("read_media_file", {"path": "{root}/sound.wav"}),
    ("read_media_file", {"path": "{root}/data.bin"}),
    # Errors of the operating system, worded as Node words them.
    ("read_text_file", {"path": "{root}/docs"}),
    ("list_directory", {"path": "{root}/hello.txt"}),
    ("get_file_info", {"path": "{root}/missing.txt"}),
    ("edit_file", {"path": "{root}/missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
    ("create_directory", {"path": "{root}/hello.txt"}),
    ("move_file", {"source": "{root}/missing.txt", "destination": "{root}/elsewhere.txt"}),
    ("read_media_file", {"path": "{root}/missing.png"}),
    ("directory_tree", {"path": "{root}/missing"}),
]

HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("read_text_file", {"path": "{root}/../outside/secret.txt"}),
    ("read_text_file", {"path": "{root}/docs/../../outside/secret.txt"}),
    ("read_text_file", {"path": "../outside/secret.txt"}),
    ("read_text_file", {"path": "/etc/passwd"}),
    ("read_text_file", {"path": "{outside}/secret.txt"}),
    ("read_text_file", {"path": "{root}/hello.txt\u0000"}),
    ("read_text_file", {"path": "{root}/escape.txt"}),
    ("read_media_file", {"path": "{root}/escape.txt"}),
    ("list_directory", {"path": "{root}/escape_dir"}),
    ("read_text_file", {"path": "{root}/escape_dir/secret.txt"}),
    ("write_file", {"path": "{root}/escape.txt", "content": "overwritten"}),
    ("write_file", {"path": "{root}/escape_dir/new.txt", "content": "planted"}),
    ("edit_file", {"path": "{root}/escape.txt", "edits": [{"oldText": "top", "newText": "no"}]}),
    ("create_directory", {"path": "{root}/escape_dir/sub"}),
    ("move_file", {"source": "{outside}/secret.txt", "destination": "{root}/stolen.txt"}),
    ("move_file", {"source": "{root}/hello.txt", "destination": "{outside}/hello.txt"}),
    ("get_file_info", {"path": "{root}/escape_dir"}),
    ("search_files", {"path": "{root}/escape_dir", "pattern": "**"}),
    ("read_multiple_files", {"paths": ["{root}/escape.txt", "{outside}/secret.txt"]}),
]
DANGLING_LINK = ("write_file", {"path": "{root}/dangling.txt", "content": "through the link"})
ARGUMENT_ERRORS = [
    ("read_text_file", {}),
    ("write_file", {"path": "{root}/x.txt", "content": 5}),
]


def fill(value: Any, layout: Layout) -> Any:
    if isinstance(value, str):
        return value.format(root=layout.root, outside=layout.outside)
    if isinstance(value, list):
        return [fill(v, layout) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, layout) for k, v in value.items()}
    return value


async def play(client, steps, layout: Layout) -> list[dict[str, Any]]:
    results = []
    for tool, arguments in steps:
        result = await client.call_tool(tool, fill(arguments, layout))
        results.append(collapse(DATE, "<DATE>", outcome(result, layout.replacements())))
    return results


class Run:
    """What one implementation showed: its tools, the session's results, the tree after."""

    tools: dict[str, Any]
    raw_tools: list[types.Tool]
    session: list[dict[str, Any]]
    hostile: list[dict[str, Any]]
    dangling: dict[str, Any]
    argument_errors: list[dict[str, Any]]
    snapshot: dict[str, Any]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Run]:
    log = open(tmp_path_factory.mktemp("logs") / "servers.log", "w+")
    out: dict[str, Run] = {}
    for label, implementation in IMPLEMENTATIONS.items():
        layout = Layout()
        got = Run()

        async def scenario() -> None:
            async with implementation.connect(log, env=ENV, cwd=str(layout.base)) as client:
                listed = await client.list_tools()
                got.raw_tools = listed.tools
                got.tools = tool_surface(listed.tools)
                got.session = await play(client, SESSION, layout)
                got.hostile = await play(client, HOSTILE, layout)
                got.dangling = (await play(client, [DANGLING_LINK], layout))[0]
                got.argument_errors = await play(client, ARGUMENT_ERRORS, layout)

        try:
            implementation.command.append(str(layout.root))
            run(scenario)
            got.snapshot = layout.snapshot()
        finally:
            implementation.command.pop()
            layout.remove()
        out[label] = got
    log.seek(0)
    print(log.read()[-4000:])
    return out


def test_the_tools_are_the_originals(runs) -> None:
    original, ours = runs["original"].tools, runs["ours"].tools
    assert sorted(ours) == sorted(original)
    # MEDIA_OUTPUT_SCHEMA: see the module's docs.
    assert original["read_media_file"]["output"] is not None
    assert ours["read_media_file"]["output"] is None
    ours["read_media_file"]["output"] = original["read_media_file"]["output"]
    for name in original:
        assert_same(ours[name], original[name], name)


@pytest.mark.parametrize("step", range(len(SESSION)), ids=[f"{i}-{t}" for i, (t, _) in enumerate(SESSION)])
def test_each_result_is_the_originals(runs, step) -> None:
    assert_same(runs["ours"].session[step], runs["original"].session[step], SESSION[step])


def test_the_session_leaves_the_same_tree(runs) -> None:
    assert_same(runs["ours"].snapshot, runs["original"].snapshot, "the tree")


@pytest.mark.parametrize("step", range(len(HOSTILE)), ids=[f"{i}-{t}" for i, (t, _) in enumerate(HOSTILE)])
def test_hostile_paths_are_refused_by_both(runs, step) -> None:
    original, ours = runs["original"].hostile[step], runs["ours"].hostile[step]
    text = ours["content"][0]["text"] if ours["content"] else ""
    if HOSTILE[step][0] == "read_multiple_files":
        # Each path's failure is a line of the answer, not an error of the call.
        assert text.count("Error - Access denied") == 2, text
    else:
        assert ours["isError"], (HOSTILE[step], text)
        assert "Access denied" in text, text
    assert "top secret" not in text
    assert_same(ours, original, HOSTILE[step])


def test_nothing_outside_the_sandbox_was_touched(runs) -> None:
    for run_ in runs.values():
        outside = {k: v for k, v in run_.snapshot.items() if k.startswith("<OUTSIDE>")}
        assert outside == {"<OUTSIDE>/secret.txt": ("file", b"top secret\n")}


def test_a_dangling_link_is_not_written_through(runs) -> None:
    # DANGLING_LINK: both refuse, each in its own words.
    original, ours = runs["original"].dangling, runs["ours"].dangling
    assert original["isError"] and ours["isError"]
    assert original["content"][0]["text"] == "Parent directory does not exist: <ROOT>"
    assert ours["content"][0]["text"] == (
        "Access denied - <ROOT>/dangling.txt is a symbolic link to <OUTSIDE>/planted.txt, which does not exist"
    )


def test_ours_serves_the_stateless_era_too(tmp_path) -> None:
    """Not a comparison (the original speaks only the handshake era): a 2026-07-28 client
    (`mode="auto"`) settles on that revision with ours and is served."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    (tmp_path / "a.txt").write_text("in a\n")
    ours = IMPLEMENTATIONS["ours"]

    async def scenario() -> None:
        params = StdioServerParameters(command=ours.command[0], args=[str(tmp_path)])
        with open(os.devnull, "w") as log:
            async with Client(stdio_client(params, errlog=log), mode="auto") as client:
                assert client.protocol_version == "2026-07-28"
                result = await client.call_tool("read_text_file", {"path": str(tmp_path / "a.txt")})
                assert result.content[0].text == "in a\n"

    run(scenario)


def test_argument_errors_are_tool_errors_in_both(runs) -> None:
    # ARGUMENT_ERRORS: the wording is each validator's.
    for original, ours in zip(runs["original"].argument_errors, runs["ours"].argument_errors):
        assert original["isError"] and ours["isError"]
        assert ours["content"][0]["text"]


# -- roots ------------------------------------------------------------------------------------


class Roots:
    """Two directories: A, the client's first root, and B, the command line's and the
    client's second; B holds a link into A."""

    def __init__(self) -> None:
        self.base = Path(os.path.realpath(tempfile.mkdtemp(prefix="fs-roots-")))
        self.a = self.base / "a"
        self.b = self.base / "b"
        for d in (self.a, self.b):
            d.mkdir()
            (d / "file.txt").write_text(f"in {d.name}\n")
        os.symlink(self.a / "file.txt", self.b / "link-to-a.txt")
        self.current = [self.a]

    async def list_roots(self, _context) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=d.as_uri(), name=d.name) for d in self.current])


async def allowed(client) -> str:
    result = await client.call_tool("list_allowed_directories", {})
    return result.content[0].text


async def wait_for_allowed(client, expected: str) -> None:
    """The original takes its roots after `initialized` and after each change, while other
    requests go on: wait (bounded) until it has them."""
    with anyio.fail_after(10):
        while (got := await allowed(client)) != expected:
            await anyio.sleep(0.05)
    assert got == expected


@pytest.fixture(scope="module")
def roots_runs(tmp_path_factory) -> dict[str, list[dict[str, Any]]]:
    log = open(tmp_path_factory.mktemp("logs") / "roots.log", "w+")
    out = {}
    for label, implementation in IMPLEMENTATIONS.items():
        roots = Roots()
        results: list[dict[str, Any]] = []
        replace = {str(roots.base): "<BASE>"}

        async def call(client, tool, **arguments) -> None:
            result = await client.call_tool(tool, arguments)
            results.append(outcome(result, replace))

        async def scenario() -> None:
            async with implementation.connect(log, list_roots_callback=roots.list_roots) as client:
                await wait_for_allowed(client, f"Allowed directories:\n{roots.a}")
                # The client's roots replace the command line's directory.
                await call(client, "read_text_file", path=str(roots.a / "file.txt"))
                await call(client, "read_text_file", path=str(roots.b / "file.txt"))
                # The client removes A and adds B.
                roots.current = [roots.b]
                with pytest.warns(Warning):
                    await client.send_roots_list_changed()
                await wait_for_allowed(client, f"Allowed directories:\n{roots.b}")
                await call(client, "read_text_file", path=str(roots.b / "file.txt"))
                await call(client, "read_text_file", path=str(roots.a / "file.txt"))
                await call(client, "read_text_file", path=str(roots.b / "link-to-a.txt"))
                await call(client, "write_file", path=str(roots.a / "new.txt"), content="x")
                await call(client, "list_directory", path=str(roots.a))

        implementation.command.append(str(roots.b))
        try:
            run(scenario)
        finally:
            implementation.command.pop()
            assert not (roots.a / "new.txt").exists()
            shutil.rmtree(roots.base, ignore_errors=True)
        out[label] = results
    return out


def test_roots_replace_the_command_line_and_follow_changes(roots_runs) -> None:
    ours = roots_runs["ours"]
    texts = [r["content"][0]["text"] for r in ours]
    assert [r["isError"] for r in ours] == [False, True, False, True, True, True, True]
    assert texts[0] == "in a\n" and texts[2] == "in b\n"
    # A path through the root the client removed, directly or by a link.
    assert texts[3].startswith("Access denied - path outside allowed directories: <BASE>/a/file.txt")
    assert texts[4].startswith("Access denied - symlink target outside allowed directories: <BASE>/a/file.txt")
    assert_same(ours, roots_runs["original"], "the roots session")
