"""Fixtures for the interop tests: the example binary, and a way to connect the official Python
SDK client (`mcp` 2.3.0) to it over stdio or Streamable HTTP, in either protocol era.

Run through `scripts/interop.sh`, which sets `MCP_EVERYTHING_BIN` to the built example.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
# `pytest_runtest_makereport` is the hook that keeps a test's report for `server_log`.
from local_servers import free_port, listening, pytest_runtest_makereport, stderr_log  # noqa: F401

REPO = Path(__file__).resolve().parents[2]

# Every wait in these tests is bounded: connecting, each request, each awaited notification.
STARTUP_TIMEOUT = 30.0


def _binary() -> Path:
    path = Path(os.environ.get("MCP_EVERYTHING_BIN", REPO / "target" / "debug" / "examples" / "everything"))
    if not path.is_file():
        pytest.exit(f"example binary {path} not found; run scripts/interop.sh (or set MCP_EVERYTHING_BIN)", 2)
    return path


@pytest.fixture(scope="session")
def everything_bin() -> Path:
    return _binary()


@pytest.fixture
def server_log(request):
    """A file for the server's stderr, printed when the test fails."""
    yield from stderr_log(request, "everything-", "server stderr")


@pytest.fixture
def http_url(everything_bin, server_log):
    """The everything example serving Streamable HTTP on a free port of 127.0.0.1."""
    port = free_port()
    with listening([everything_bin, "--port", port], port, "the server", STARTUP_TIMEOUT, stderr=server_log):
        yield f"http://127.0.0.1:{port}/mcp"
