"""Interop: the official Python SDK client (`mcp` 2.3.0) against the `everything` example.

Every test runs four times: over stdio and over Streamable HTTP, once with the client forced into
the handshake era (`mode="legacy"`: `initialize`, 2025-11-25) and once in the stateless era
(`mode="auto"`: the client probes `server/discover` and must settle on 2026-07-28; a fallback
to `initialize` fails the test). The assertions are what a client application sees.
"""

from __future__ import annotations

import base64
import json
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
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from local_servers import run_within

HANDSHAKE_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"

REQUEST_TIMEOUT = 15.0  # each request's read timeout
TEST_TIMEOUT = 45.0  # a whole scenario, connect and shutdown included
NOTIFICATION_TIMEOUT = 10.0  # waiting for a notification a request should have caused

SERVER_NAME = "mcp-conformance-everything"
PNG_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
WATCHED = "test://watched-resource"


@dataclass
class Target:
    """One transport x era combination, able to open connected clients."""

    transport: str  # "stdio" | "http"
    era: str  # "handshake" | "stateless"
    binary: Path
    url: str | None
    log: Any  # the server's stderr file

    @asynccontextmanager
    async def connect(self, **client_kwargs: Any):
        """A `Client` connected in this target's era; fails if the era is not the expected one."""
        if self.transport == "stdio":
            server: Any = stdio_client(StdioServerParameters(command=str(self.binary)), errlog=self.log)
        else:
            server = self.url
        mode = "legacy" if self.era == "handshake" else "auto"
        # The connect is bounded by the read timeout (initialize) or the SDK's 10 s discover probe
        # timeout, and the whole scenario by run()'s deadline. A cancel scope must not wrap
        # `__aenter__` alone: the client's task groups outlive it.
        async with Client(server, mode=mode, read_timeout_seconds=REQUEST_TIMEOUT, **client_kwargs) as client:
            self.check_era(client)
            yield client

    def check_era(self, client: Client) -> None:
        session = client.session
        if self.era == "handshake":
            assert client.protocol_version == HANDSHAKE_VERSION
            assert session.initialize_result is not None
            assert session.discover_result is None
        else:
            assert client.protocol_version == STATELESS_VERSION, (
                f"mode='auto' settled on {client.protocol_version!r}: the server did not answer the "
                "server/discover probe as a 2026-07-28 server, so the client fell back to initialize"
            )
            assert session.discover_result is not None
            assert session.initialize_result is None


@pytest.fixture(
    params=[
        ("stdio", "handshake"),
        ("stdio", "stateless"),
        ("http", "handshake"),
        ("http", "stateless"),
    ],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def target(request, everything_bin, server_log) -> Target:
    transport, era = request.param
    url = request.getfixturevalue("http_url") if transport == "http" else None
    return Target(transport=transport, era=era, binary=everything_bin, url=url, log=server_log)


def run(scenario, *args) -> None:
    """Runs an async scenario with a hard deadline."""
    run_within(TEST_TIMEOUT, scenario, *args)


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


# -- connection -------------------------------------------------------------------------------


def test_connects_in_the_expected_era(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            # The era itself is checked by connect(); here, what the client learned about the server.
            assert client.server_info is not None, "no serverInfo (2026: the `_meta` serverInfo stamp)"
            assert client.server_info.name == SERVER_NAME
            assert client.instructions == "The catalogue of the MCP conformance suite."
            caps = client.server_capabilities
            assert caps.tools is not None
            assert caps.prompts is not None
            assert caps.resources is not None and caps.resources.subscribe
            assert caps.completions is not None
            assert caps.logging is not None
            if target.era == "stateless":
                discover = client.session.discover_result
                assert discover is not None and STATELESS_VERSION in discover.supported_versions

    run(scenario)


# -- tools ------------------------------------------------------------------------------------


def test_tools_list_and_structured_content(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            listed = await client.list_tools()
            tools = {tool.name: tool for tool in listed.tools}
            for name in (
                "test_simple_text",
                "test_error_handling",
                "test_tool_with_logging",
                "test_tool_with_progress",
                "test_sampling",
                "test_elicitation",
                "test_structured_content",
                "test_trigger_resource_update",
            ):
                assert name in tools, f"{name} missing from tools/list"
            schema = tools["test_structured_content"].output_schema
            assert schema is not None, "test_structured_content has no outputSchema"
            assert set(schema["properties"]) == {"city", "temperature", "conditions"}
            assert tools["test_structured_content"].input_schema["required"] == ["city"]

            result = await client.call_tool("test_structured_content", {"city": "Paris"})
            assert not result.is_error
            expected = {"city": "Paris", "temperature": 21.5, "conditions": "sunny"}
            assert result.structured_content == expected
            # The client validated structuredContent against the listed outputSchema; show that
            # the same validator rejects a result that breaks the schema.
            bad = result.model_copy(update={"structured_content": {"city": "Paris"}})
            with pytest.raises(RuntimeError, match="Invalid structured content"):
                await client.session.validate_tool_result("test_structured_content", bad)

            simple = await client.call_tool("test_simple_text")
            assert not simple.is_error
            assert text_of(simple) == "This is a simple text response for testing."

    run(scenario)


def test_tool_error_result(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            result = await client.call_tool("test_error_handling")
            assert result.is_error is True
            assert text_of(result) == "This tool intentionally returns an error for testing"

    run(scenario)


def test_unknown_tool_is_a_protocol_error(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("no_such_tool")
            assert raised.value.code == types.INVALID_PARAMS

    run(scenario)


# -- resources --------------------------------------------------------------------------------


def test_resources_and_templates(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            listed = await client.list_resources()
            uris = {str(r.uri) for r in listed.resources}
            assert {"test://static-text", "test://static-binary", WATCHED} <= uris

            text = await client.read_resource("test://static-text")
            (contents,) = text.contents
            assert isinstance(contents, types.TextResourceContents)
            assert contents.text == "This is the content of the static text resource."
            assert contents.mime_type == "text/plain"

            binary = await client.read_resource("test://static-binary")
            (blob,) = binary.contents
            assert isinstance(blob, types.BlobResourceContents)
            assert base64.b64decode(blob.blob) == base64.b64decode(PNG_BASE64)

            templates = await client.list_resource_templates()
            assert "test://template/{id}/data" in {t.uri_template for t in templates.resource_templates}

            read = await client.read_resource("test://template/42/data")
            (item,) = read.contents
            assert isinstance(item, types.TextResourceContents)
            assert str(item.uri) == "test://template/42/data"
            assert json.loads(item.text) == {"id": "42", "templateTest": True, "data": "Data for ID: 42"}

    run(scenario)


def test_missing_resource_is_an_error(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            with pytest.raises(MCPError) as raised:
                await client.read_resource("test://no-such-resource")
            # 2025-11-25 servers say -32002; 2026-07-28 requires -32602 (SEP-2164).
            expected = -32002 if target.era == "handshake" else types.INVALID_PARAMS
            assert raised.value.code == expected

    run(scenario)


# -- prompts and completion -------------------------------------------------------------------


def test_prompts(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            listed = await client.list_prompts()
            prompts = {p.name: p for p in listed.prompts}
            assert {"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_image"} <= set(prompts)
            args = {a.name: a.required for a in prompts["test_prompt_with_arguments"].arguments or []}
            assert args == {"arg1": True, "arg2": True}

            simple = await client.get_prompt("test_simple_prompt")
            (message,) = simple.messages
            assert message.role == "user"
            assert isinstance(message.content, types.TextContent)
            assert message.content.text == "This is a simple prompt for testing."

            with_args = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            (message,) = with_args.messages
            assert isinstance(message.content, types.TextContent)
            assert message.content.text == "Prompt with arguments: arg1='a', arg2='b'"

    run(scenario)


def test_completion(target: Target) -> None:
    async def scenario() -> None:
        async with target.connect() as client:
            result = await client.complete(
                types.PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": "par"}
            )
            assert result.completion.values == ["paris", "park", "parrot"]

    run(scenario)


# -- progress and logging ---------------------------------------------------------------------


def test_progress(target: Target) -> None:
    async def scenario() -> None:
        updates: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, total, message))

        async with target.connect() as client:
            result = await client.call_tool("test_tool_with_progress", progress_callback=on_progress)
            assert text_of(result) == "Tool with progress executed successfully"
        # Progress precedes the result on the request's own stream.
        assert updates == [
            (0.0, 100.0, "Completed step 1 of 3"),
            (50.0, 100.0, "Completed step 2 of 3"),
            (100.0, 100.0, "Completed step 3 of 3"),
        ]

    run(scenario)


LOG_LINES = ["Tool execution started", "Tool processing data", "Tool execution completed"]


def test_logging(target: Target) -> None:
    async def scenario() -> None:
        received: list[types.LoggingMessageNotificationParams] = []

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            received.append(params)

        if target.era == "handshake":
            # Handshake era: the level is set once for the session with logging/setLevel.
            async with target.connect(logging_callback=on_log) as client:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await client.set_logging_level("debug")
                result = await client.call_tool("test_tool_with_logging")
                assert text_of(result) == "Tool with logging executed successfully"
        else:
            # Stateless era: without the per-request `logLevel` opt-in the server must not log...
            async with target.connect(logging_callback=on_log) as client:
                result = await client.call_tool("test_tool_with_logging")
                assert text_of(result) == "Tool with logging executed successfully"
            assert received == [], "log messages sent for a request without _meta logLevel"
            # ...and with `log_level` the client stamps `io.modelcontextprotocol/logLevel` on each request.
            async with target.connect(logging_callback=on_log, log_level="debug") as client:
                result = await client.call_tool("test_tool_with_logging")
                assert text_of(result) == "Tool with logging executed successfully"
        # Logs precede the result on the request's own stream (HTTP) or the pipe (stdio).
        assert [p.data for p in received] == LOG_LINES
        assert {p.level for p in received} == {"info"}

    run(scenario)


# -- elicitation and sampling, answered by the client's callbacks -----------------------------


def test_elicitation(target: Target) -> None:
    async def scenario() -> None:
        asked: list[types.ElicitRequestParams] = []

        async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
            asked.append(params)
            return types.ElicitResult(action="accept", content={"username": "alice", "email": "alice@example.com"})

        async with target.connect(elicitation_callback=on_elicit) as client:
            result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            assert not result.is_error, result
            assert (
                text_of(result)
                == 'User response: action=accept, content={"username":"alice","email":"alice@example.com"}'
            )
        (params,) = asked
        assert isinstance(params, types.ElicitRequestFormParams)
        assert params.message == "Who are you?"
        assert set(params.requested_schema["properties"]) == {"username", "email"}

    run(scenario)


def test_elicitation_declined(target: Target) -> None:
    async def scenario() -> None:
        async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
            return types.ElicitResult(action="decline")

        async with target.connect(elicitation_callback=on_elicit) as client:
            result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            assert text_of(result) == "User response: action=decline, content=null"

    run(scenario)


def test_sampling(target: Target) -> None:
    async def scenario() -> None:
        asked: list[types.CreateMessageRequestParams] = []

        async def on_sample(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
            asked.append(params)
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text="Hello from the model"),
                model="interop-test-model",
                stop_reason="endTurn",
            )

        async with target.connect(sampling_callback=on_sample) as client:
            result = await client.call_tool("test_sampling", {"prompt": "Say hello"})
            assert not result.is_error, result
            assert text_of(result) == "LLM response: Hello from the model"
        (params,) = asked
        assert params.max_tokens == 100
        (message,) = params.messages
        assert message.role == "user"
        assert isinstance(message.content, types.TextContent)
        assert message.content.text == "Say hello"

    run(scenario)


# -- subscriptions ----------------------------------------------------------------------------


def test_subscriptions(target: Target) -> None:
    if target.era == "handshake":
        run(_subscriptions_handshake, target)
    else:
        run(_subscriptions_stateless, target)


async def _subscriptions_handshake(target: Target) -> None:
    """resources/subscribe, then notifications/resources/updated (and list_changed) on the session."""
    seen: list[types.ServerNotification] = []
    arrived = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification | types.ResourceListChangedNotification):
            seen.append(message)
            kinds = {type(m) for m in seen}
            if kinds == {types.ResourceUpdatedNotification, types.ResourceListChangedNotification}:
                arrived.set()

    async with target.connect(message_handler=on_message) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.subscribe_resource(WATCHED)
        result = await client.call_tool("test_trigger_resource_update")
        assert not result.is_error
        with anyio.fail_after(NOTIFICATION_TIMEOUT):
            await arrived.wait()
    updated = [m for m in seen if isinstance(m, types.ResourceUpdatedNotification)]
    assert [str(m.params.uri) for m in updated] == [WATCHED]


async def _subscriptions_stateless(target: Target) -> None:
    """subscriptions/listen: an acknowledged filter, then the events the filter asked for."""
    async with target.connect() as client:
        async with client.listen(resources_list_changed=True, resource_subscriptions=[WATCHED]) as sub:
            assert sub.honored.resources_list_changed is True
            assert sub.honored.resource_subscriptions == [WATCHED]
            result = await client.call_tool("test_trigger_resource_update")
            assert not result.is_error
            events = set()
            with anyio.fail_after(NOTIFICATION_TIMEOUT):
                async for event in sub:
                    events.add(event)
                    if len(events) == 2:
                        break
            assert events == {ResourceUpdated(uri=WATCHED), ResourcesListChanged()}
