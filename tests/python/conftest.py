"""Fixtures for the interop tests: the example binary, and a way to connect the official Python
SDK client (`mcp` 2.3.0) to it over stdio or Streamable HTTP, in either protocol era.

Run through `scripts/interop.sh`, which sets `MCP_EVERYTHING_BIN` to the built example.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

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
    log = tempfile.NamedTemporaryFile("w+", prefix="everything-", suffix=".log", delete=False)
    yield log
    log.flush()
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        log.seek(0)
        text = log.read()
        if text.strip():
            print(f"\n--- server stderr ({log.name})\n{text[-8000:]}")
    log.close()
    os.unlink(log.name)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.rep_call = report
    return report


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_url(everything_bin, server_log):
    """The everything example serving Streamable HTTP on a free port of 127.0.0.1."""
    port = _free_port()
    proc = subprocess.Popen(
        [str(everything_bin), "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=server_log,
    )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the server exited with {proc.returncode} before accepting connections")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"the server did not accept connections on 127.0.0.1:{port} within {STARTUP_TIMEOUT}s")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
