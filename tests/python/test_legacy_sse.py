"""Interop: the Python SDK's client for the deprecated HTTP+SSE transport of 2024-11-05
(`mcp.client.sse.sse_client`) against the `everything` example, which serves it at `/sse` next to
Streamable HTTP at `/mcp`. The assertions are what a client application sees.
"""

from __future__ import annotations

import warnings

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.shared.exceptions import MCPDeprecationWarning

from test_interop import REQUEST_TIMEOUT, SERVER_NAME, run, text_of

PROGRESS_TIMEOUT = 10.0


@pytest.fixture
def sse_url(http_url: str) -> str:
    assert http_url.endswith("/mcp")
    return http_url[: -len("/mcp")] + "/sse"


def connect(url: str, **kwargs):
    # The SDK warns that the transport is deprecated: that is the point here.
    warnings.simplefilter("ignore", MCPDeprecationWarning)
    return Client(sse_client(url), mode="legacy", read_timeout_seconds=REQUEST_TIMEOUT, **kwargs)


def test_lists_and_calls_tools_over_legacy_sse(sse_url: str) -> None:
    sessions: list[str] = []

    async def scenario() -> None:
        transport = sse_client(sse_url, on_session_created=sessions.append)
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        async with Client(transport, mode="legacy", read_timeout_seconds=REQUEST_TIMEOUT) as client:
            assert client.server_info is not None
            assert client.server_info.name == SERVER_NAME
            listed = await client.list_tools()
            names = {tool.name for tool in listed.tools}
            assert {"test_simple_text", "test_structured_content", "test_tool_with_progress"} <= names

            simple = await client.call_tool("test_simple_text")
            assert not simple.is_error
            assert text_of(simple) == "This is a simple text response for testing."

            weather = await client.call_tool("test_structured_content", {"city": "Paris"})
            assert not weather.is_error
            assert weather.structured_content == {"city": "Paris", "temperature": 21.5, "conditions": "sunny"}

            failed = await client.call_tool("test_error_handling")
            assert failed.is_error is True

    run(scenario)
    # The endpoint event carried the session's id.
    assert len(sessions) == 1 and len(sessions[0]) >= 32


def test_progress_arrives_on_the_legacy_stream(sse_url: str) -> None:
    async def scenario() -> None:
        updates: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, total, message))

        async with connect(sse_url) as client:
            with anyio.fail_after(PROGRESS_TIMEOUT):
                result = await client.call_tool("test_tool_with_progress", progress_callback=on_progress)
            assert text_of(result) == "Tool with progress executed successfully"
        # Progress precedes the result on the session's one stream.
        assert updates == [
            (0.0, 100.0, "Completed step 1 of 3"),
            (50.0, 100.0, "Completed step 2 of 3"),
            (100.0, 100.0, "Completed step 3 of 3"),
        ]

    run(scenario)


def test_two_sessions_are_independent(sse_url: str) -> None:
    async def scenario() -> None:
        async with connect(sse_url) as first, connect(sse_url) as second:
            a = await first.call_tool("test_simple_text")
            b = await second.call_tool("test_simple_text")
            assert text_of(a) == text_of(b)
            assert isinstance(a.content[0], types.TextContent)

    run(scenario)


def test_a_request_to_the_client_goes_out_on_the_stream_and_its_answer_comes_back_by_post(sse_url: str) -> None:
    async def scenario() -> None:
        asked: list[types.ElicitRequestParams] = []

        async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
            asked.append(params)
            return types.ElicitResult(action="accept", content={"username": "alice", "email": "alice@example.com"})

        async with connect(sse_url, elicitation_callback=on_elicit) as client:
            result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            assert not result.is_error, result
            assert (
                text_of(result)
                == 'User response: action=accept, content={"username":"alice","email":"alice@example.com"}'
            )
        (params,) = asked
        assert params.message == "Who are you?"

    run(scenario)
