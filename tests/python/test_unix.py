"""Streamable HTTP over a Unix domain socket (`everything --unix PATH`), driven by the official
Python SDK client through an httpx client whose transport connects to the socket (`uds=`):
initialize (or discover), list and call in both eras; the socket file's mode; a second server
refused on a live socket; a stale socket file replaced; the file removed at shutdown.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from local_servers import run_within, stop

STARTUP_TIMEOUT = 30.0
TEST_TIMEOUT = 45.0
REQUEST_TIMEOUT = 15.0
# The URL names only the endpoint: the connection goes to the socket.
ENDPOINT = "http://localhost/mcp"


def await_socket(proc: subprocess.Popen, path: Path, timeout: float) -> None:
    """Waits until `proc` accepts connections on the socket at `path`; fails if it exits first
    or takes longer than `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"the server exited with {proc.returncode} before listening on {path}")
        try:
            with socket.socket(socket.AF_UNIX) as probe:
                probe.connect(str(path))
            return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"the server did not listen on {path} within {timeout} s")
        time.sleep(0.05)


@pytest.fixture
def socket_dir():
    # Short: a socket's path must fit in 108 bytes.
    with tempfile.TemporaryDirectory(prefix="mcp-uds-") as directory:
        yield Path(directory)


def start(binary: Path, path: Path, log) -> subprocess.Popen:
    proc = subprocess.Popen(
        [str(binary), "--unix", str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log
    )
    try:
        await_socket(proc, path, STARTUP_TIMEOUT)
    except BaseException:
        stop(proc)
        raise
    return proc


@pytest.fixture
def unix_server(everything_bin, server_log, socket_dir):
    """The everything example serving Streamable HTTP on a Unix socket; its path."""
    path = socket_dir / "everything.sock"
    proc = start(everything_bin, path, server_log)
    try:
        yield path
    finally:
        stop(proc)


async def list_and_call(path: Path, mode: str) -> None:
    http = httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(uds=str(path)), timeout=httpx2.Timeout(REQUEST_TIMEOUT)
    )
    async with http:
        transport = streamable_http_client(ENDPOINT, http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=REQUEST_TIMEOUT) as client:
            assert client.server_info is not None
            assert client.server_info.name == "mcp-conformance-everything"
            if mode == "legacy":
                assert client.session.initialize_result is not None
            else:
                assert client.protocol_version == "2026-07-28"
                assert client.session.discover_result is not None
            tools = await client.list_tools()
            assert "test_simple_text" in {tool.name for tool in tools.tools}
            result = await client.call_tool("test_simple_text", {})
            assert not result.is_error
            [block] = result.content
            assert isinstance(block, types.TextContent)
            assert block.text == "This is a simple text response for testing."


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "stateless"])
def test_sdk_client_lists_and_calls_over_the_socket(unix_server: Path, mode: str) -> None:
    run_within(TEST_TIMEOUT, list_and_call, unix_server, mode)


def test_socket_is_for_its_owner_only(unix_server: Path) -> None:
    info = os.stat(unix_server)
    assert stat.S_ISSOCK(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o600, oct(stat.S_IMODE(info.st_mode))


def test_second_server_on_a_live_socket_is_refused(everything_bin, unix_server: Path) -> None:
    second = subprocess.run(
        [str(everything_bin), "--unix", str(unix_server)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=STARTUP_TIMEOUT,
    )
    assert second.returncode != 0
    assert f"another server is listening on {unix_server}" in second.stderr, second.stderr
    # The first one is untouched and still serving.
    run_within(TEST_TIMEOUT, list_and_call, unix_server, "legacy")


def test_stale_socket_is_replaced_and_removed_at_shutdown(everything_bin, server_log, socket_dir) -> None:
    path = socket_dir / "stale.sock"
    # A socket file nothing listens on: what a killed server leaves.
    left = socket.socket(socket.AF_UNIX)
    left.bind(str(path))
    left.close()
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    proc = start(everything_bin, path, server_log)
    try:
        run_within(TEST_TIMEOUT, list_and_call, path, "auto")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        stop(proc)
    assert not path.exists(), "the socket file outlived the server"


def test_a_file_that_is_not_a_socket_is_left_alone(everything_bin, socket_dir) -> None:
    path = socket_dir / "notes.txt"
    path.write_text("mine")
    refused = subprocess.run(
        [str(everything_bin), "--unix", str(path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=STARTUP_TIMEOUT,
    )
    assert refused.returncode != 0
    assert "exists and is not a socket" in refused.stderr, refused.stderr
    assert path.read_text() == "mine"
