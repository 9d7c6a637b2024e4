"""`cargo mcp new`, then `cargo mcp dev` on the new crate, driven by the official Python SDK
client (`mcp` 2.3.0): one session lists the tools; a `#[tool]` appended to `src/main.rs` reaches
the same session as `list_changed`, and it lists and calls the new tool; a broken edit leaves the
old server serving and the session gets the compiler's message as a log at `error`; the fix
swaps again. Over Streamable HTTP (both eras), over `cargo mcp dev --stdio` started by the SDK's
stdio client, and for a crate that serves Streamable HTTP itself.

Run through `scripts/dev-loop.sh`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPDeprecationWarning

from conftest import FIRST_BUILD_TIMEOUT, Log, cargo_mcp_bin, environment, new_crate
from local_servers import free_port, run_within, stop

# An incremental rebuild of the small crate on a loaded 2-core machine, with room to spare.
REBUILD_TIMEOUT = 300.0
REQUEST_TIMEOUT = 60.0

GREET = '''
/// Greet someone.
#[tool]
async fn greet(
    /// Whom to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}
'''

BROKEN = '''
/// Does not compile: a string is not a number.
fn broken() -> u32 {
    "not a number"
}
'''

FAREWELL = '''
/// Say goodbye.
#[tool]
async fn farewell(
    /// To whom.
    name: String,
) -> String {
    format!("Goodbye, {name}.")
}
'''


def append(crate: Path, text: str) -> None:
    with open(crate / "src" / "main.rs", "a") as main:
        main.write(text)


def replace(crate: Path, old: str, new: str) -> None:
    main = crate / "src" / "main.rs"
    source = main.read_text()
    assert old in source
    main.write_text(source.replace(old, new))


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


class Session:
    """What one handshake-era session of the SDK's client heard: list changes and log messages."""

    def __init__(self) -> None:
        self.tools_changed = anyio.Event()
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.logged = anyio.Event()

    async def on_message(self, message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed.set()

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)
        self.logged.set()

    async def tools_become(self, client: Client, expected: set[str]) -> None:
        """Waits for `list_changed` notifications until the list is `expected`: the client
        lists again on each, as a client does, and never polls without one."""
        with anyio.fail_after(REBUILD_TIMEOUT):
            while True:
                await self.tools_changed.wait()
                self.tools_changed = anyio.Event()
                if await tool_names(client) == expected:
                    return

    async def error_log(self) -> types.LoggingMessageNotificationParams:
        with anyio.fail_after(REBUILD_TIMEOUT):
            while True:
                errors = [log for log in self.logs if log.level == "error"]
                if errors:
                    return errors[-1]
                await self.logged.wait()
                self.logged = anyio.Event()


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


async def edit_loop(client: Client, session: Session, crate: Path) -> None:
    """The scenario every transport runs, on one connected session."""
    assert await tool_names(client) == {"add"}
    result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}

    # A new tool: the same session hears of it, lists it and calls it.
    append(crate, GREET)
    await session.tools_become(client, {"add", "greet"})
    result = await client.call_tool("greet", {"name": "Ada"})
    assert text_of(result) == "Hello, Ada!"

    # A broken edit: the compiler's message arrives as a log, and the last good build serves.
    append(crate, BROKEN)
    error = await session.error_log()
    assert "mismatched types" in str(error.data), error.data
    assert "src/main.rs" in str(error.data), error.data
    result = await client.call_tool("greet", {"name": "Grace"})
    assert text_of(result) == "Hello, Grace!"
    assert await tool_names(client) == {"add", "greet"}

    # The fix (with one more tool) swaps again.
    replace(crate, BROKEN, FAREWELL)
    await session.tools_become(client, {"add", "greet", "farewell"})
    result = await client.call_tool("farewell", {"name": "Ada"})
    assert text_of(result) == "Goodbye, Ada."


def handshake_client(server, session: Session) -> Client:
    return Client(
        server,
        mode="legacy",
        read_timeout_seconds=REQUEST_TIMEOUT,
        message_handler=session.on_message,
        logging_callback=session.on_log,
    )


def test_http_session_survives_every_rebuild(workdir, dev_server_factory) -> None:
    crate = new_crate(workdir, "devhttp")
    dev = dev_server_factory(crate)

    async def scenario() -> None:
        session = Session()
        async with handshake_client(dev.url, session) as client:
            await edit_loop(client, session, crate)
            # A 2026-07-28 client of the same server hears of changes on its listen stream.
            async with Client(dev.url, mode="auto", read_timeout_seconds=REQUEST_TIMEOUT) as modern:
                assert modern.protocol_version == "2026-07-28"
                async with modern.listen(tools_list_changed=True) as listen:
                    assert listen.honored.tools_list_changed is True
                    replace(crate, FAREWELL, "")
                    with anyio.fail_after(REBUILD_TIMEOUT):
                        async for event in listen:
                            assert event == ToolsListChanged()
                            break
                assert await tool_names(modern) == {"add", "greet"}
            # The handshake session heard it too, and is still the same session.
            await session.tools_become(client, {"add", "greet"})

    run_within(REBUILD_TIMEOUT * 6, scenario)
    assert dev.process.poll() is None, "cargo mcp dev exited"
    # What the terminal showed: the compiler's own diagnostics, and each swap.
    log = dev.log.text()
    assert "error[E0308]: mismatched types" in log
    assert "the last good build keeps serving" in log
    assert "serving 2 tools [add, greet]" in log


def test_stdio_client_starts_dev_and_keeps_its_session(workdir, dev_log) -> None:
    crate = new_crate(workdir, "devstdio")
    # Built once before the client starts it, as an editor's client would find it after a
    # first `cargo build`: the client's own timeout then covers an incremental build only.
    built = subprocess.run(
        ["cargo", "build", "--quiet"], cwd=crate, env=environment(), timeout=FIRST_BUILD_TIMEOUT
    )
    assert built.returncode == 0
    stderr = (workdir / "dev-stdio.log").open("w+")

    async def scenario() -> None:
        session = Session()
        parameters = StdioServerParameters(
            command=str(cargo_mcp_bin()),
            args=["mcp", "dev", "--stdio"],
            cwd=str(crate),
            env=environment(),
        )
        async with handshake_client(stdio_client(parameters, errlog=stderr), session) as client:
            await edit_loop(client, session, crate)

    try:
        run_within(REBUILD_TIMEOUT * 5, scenario)
    except BaseException:
        stderr.seek(0)
        print(f"\n--- cargo mcp dev --stdio's stderr\n{stderr.read()[-12000:]}")
        raise


def test_a_crate_that_serves_http_itself_is_served_the_same_way(workdir, dev_server_factory) -> None:
    crate = new_crate(workdir, "devserves", "--http")
    assert 'serve_http(("127.0.0.1", port))' in (crate / "src" / "main.rs").read_text()
    dev = dev_server_factory(crate)

    async def scenario() -> None:
        session = Session()
        async with handshake_client(dev.url, session) as client:
            assert await tool_names(client) == {"add"}
            append(crate, GREET)
            await session.tools_become(client, {"add", "greet"})
            result = await client.call_tool("greet", {"name": "Ada"})
            assert text_of(result) == "Hello, Ada!"

    run_within(REBUILD_TIMEOUT * 2, scenario)


def test_new_refuses_an_existing_directory(workdir) -> None:
    existing = workdir / "taken"
    existing.mkdir()
    (existing / "notes.txt").write_text("mine")
    done = subprocess.run(
        [cargo_mcp_bin(), "mcp", "new", existing], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "exists" in done.stderr
    assert [p.name for p in existing.iterdir()] == ["notes.txt"]
    assert (existing / "notes.txt").read_text() == "mine"


def test_the_new_crate_builds_and_its_test_passes(workdir) -> None:
    crate = new_crate(workdir, "devtested", "--tasks")
    tested = subprocess.run(
        ["cargo", "test", "--quiet"],
        cwd=crate,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=FIRST_BUILD_TIMEOUT,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "test tests::adds ... ok" in tested.stdout or "1 passed" in tested.stdout, tested.stdout
    # It serves at once.
    binary = Path(environment()["CARGO_TARGET_DIR"]) / "debug" / "devtested"
    built = subprocess.run(["cargo", "build", "--quiet"], cwd=crate, env=environment(), timeout=FIRST_BUILD_TIMEOUT)
    assert built.returncode == 0

    async def scenario() -> None:
        parameters = StdioServerParameters(command=str(binary), env=environment())
        log = (workdir / "served.log").open("w+")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            async with Client(stdio_client(parameters, errlog=log), mode="legacy") as client:
                assert await tool_names(client) == {"add", "count"}
                prompts = (await client.list_prompts()).prompts
                assert [p.name for p in prompts] == ["sum"]
                resources = (await client.list_resources()).resources
                assert [str(r.uri) for r in resources] == ["about://devtested"]
                result = await client.call_tool("add", {"a": 2, "b": 2})
                assert result.structured_content == {"result": 4}

    run_within(REQUEST_TIMEOUT, scenario)

    # RUST_LOG decides what it logs: its start-up line is `info`.
    def startup_log(level: str) -> str:
        env = {**environment(), "RUST_LOG": level}
        done = subprocess.run([binary], input="", env=env, capture_output=True, text=True, timeout=60)
        return done.stderr

    assert "serving 2 tools" in startup_log("info")
    assert "serving 2 tools" not in startup_log("warn")


def test_an_installed_dev_entry_serves_the_crate_live(workdir) -> None:
    """`cargo mcp install claude-code --dev`: the entry starts `cargo mcp dev --stdio` on the
    crate from anywhere, and a client started from that entry alone sees the crate's edits."""
    crate = new_crate(workdir, "devinstalled")
    built = subprocess.run(["cargo", "build", "--quiet"], cwd=crate, env=environment(), timeout=FIRST_BUILD_TIMEOUT)
    assert built.returncode == 0
    config = workdir / "client" / "mcp.json"
    done = subprocess.run(
        [cargo_mcp_bin(), "mcp", "install", "claude-code", "--dev", "--config", config],
        cwd=crate, env=environment(), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    entry = json.loads(config.read_text())["mcpServers"]["devinstalled"]
    assert entry["type"] == "stdio"
    assert entry["args"][:3] == ["mcp", "dev", "--stdio"]
    assert Path(entry["env"]["CARGO"]).is_file()
    stderr = (workdir / "installed.log").open("w+")

    async def scenario() -> None:
        session = Session()
        # As the client runs it: the entry's command, arguments and environment, from elsewhere.
        env = {**environment(), **entry["env"]}
        parameters = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=str(workdir))
        async with handshake_client(stdio_client(parameters, errlog=stderr), session) as client:
            assert await tool_names(client) == {"add"}
            append(crate, GREET)
            await session.tools_become(client, {"add", "greet"})

    try:
        run_within(REBUILD_TIMEOUT * 2, scenario)
    except BaseException:
        stderr.seek(0)
        print(f"\n--- the entry's stderr\n{stderr.read()[-12000:]}")
        raise


def test_dev_keeps_serving_when_cargo_mcp_is_rebuilt_under_it(workdir, dev_log) -> None:
    """A rebuild or reinstall of `cargo-mcp` while `cargo mcp dev` runs (the workspace's own
    `cargo build`, a `cargo install`) replaces the file it was started from; the dev server still
    starts its child from its own image and serves."""
    crate = new_crate(workdir, "devreplaced")
    executable = workdir / "cargo-mcp"
    shutil.copy(cargo_mcp_bin(), executable)
    port = free_port()
    process = subprocess.Popen(
        [str(executable), "mcp", "dev", "--port", str(port)],
        cwd=crate, env=environment(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )
    log = Log(process.stderr)
    dev_log.append(log)
    try:
        # Gone while the crate builds, before the dev server starts its first child.
        log.wait_for(r"cargo mcp dev: building", 60)
        executable.unlink()
        match = log.wait_for(r"cargo mcp dev: serving (http://\S+/mcp)", FIRST_BUILD_TIMEOUT)

        async def scenario() -> None:
            session = Session()
            async with handshake_client(match.group(1), session) as client:
                assert await tool_names(client) == {"add"}

        run_within(REQUEST_TIMEOUT * 2, scenario)
    finally:
        stop(process)
