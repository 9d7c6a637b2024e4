"""Fixtures for the developer-loop tests: a crate made by `cargo mcp new`, and `cargo mcp dev`
serving it on 127.0.0.1 with its log kept (printed when a test fails).

Run through `scripts/dev-loop.sh`, which builds `cargo-mcp` and sets `CARGO_MCP_BIN`. The crates'
builds share one target directory (`DEV_LOOP_TARGET`, by default `target/dev-loop`), so the
runtime and its dependencies compile once for every test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# The child-process helpers of the interop tests (tests/python/local_servers.py), appended so
# that nothing there shadows a module of this folder.
sys.path.append(str(REPO / "tests" / "python"))

from local_servers import free_port, pytest_runtest_makereport, stop  # noqa: E402, F401

# A first build compiles the runtime and its dependencies on a loaded 2-core machine.
FIRST_BUILD_TIMEOUT = 1500.0


def cargo_mcp_bin() -> Path:
    path = Path(os.environ.get("CARGO_MCP_BIN", REPO / "target" / "debug" / "cargo-mcp"))
    if not path.is_file():
        pytest.exit(f"{path} not found; run scripts/dev-loop.sh (or set CARGO_MCP_BIN)", 2)
    return path


def target_dir() -> Path:
    return Path(os.environ.get("DEV_LOOP_TARGET", REPO / "target" / "dev-loop"))


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["CARGO_TARGET_DIR"] = str(target_dir())
    env.setdefault("RUST_LOG", "info")
    return env


def new_crate(parent: Path, name: str, *flags: str) -> Path:
    """`cargo mcp new parent/name FLAGS`, depending on this checkout's runtime, with the
    workspace's lock file so the dependencies resolve to the versions already built."""
    crate = parent / name
    done = subprocess.run(
        [cargo_mcp_bin(), "mcp", "new", crate, "--path", REPO, *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"cargo mcp new failed:\n{done.stdout}\n{done.stderr}"
    shutil.copy(REPO / "Cargo.lock", crate / "Cargo.lock")
    return crate


class Log:
    """A child's stderr, read as it comes, kept whole, and searchable with a deadline."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.ended = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in iter(stream.readline, ""):
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self.ended = True
            self._changed.notify_all()

    def text(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def wait_for(self, pattern: str, timeout: float, start: int = 0) -> re.Match:
        """The first line from `start` on matching `pattern`, waited for up to `timeout` s."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        with self._changed:
            while True:
                for line in self.lines[start:]:
                    match = regex.search(line)
                    if match:
                        return match
                if self.ended:
                    pytest.fail(f"the process closed its stderr before a line matching {pattern!r}; the log:\n{self.text()[-6000:]}")
                left = deadline - time.monotonic()
                if left <= 0:
                    pytest.fail(f"no line matching {pattern!r} within {timeout}s; the log:\n{self.text()[-6000:]}")
                self._changed.wait(left)


@dataclass
class DevServer:
    process: subprocess.Popen
    log: Log
    url: str
    crate: Path


def start_dev(crate: Path, *args: str) -> tuple[subprocess.Popen, Log]:
    process = subprocess.Popen(
        [str(cargo_mcp_bin()), "mcp", "dev", *args],
        cwd=crate,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, Log(process.stderr)


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="dev-loop-") as directory:
        yield Path(directory)


@pytest.fixture
def dev_log(request):
    """Where a test puts the log of its `cargo mcp dev`, printed when the test failed."""
    logs: list[Log] = []
    yield logs
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        for log in logs:
            print(f"\n--- cargo mcp dev's stderr\n{log.text()[-12000:]}")


def serve(crate: Path, logs: list) -> DevServer:
    """`cargo mcp dev --port P` in `crate`, once it says where it serves."""
    port = free_port()
    process, log = start_dev(crate, "--port", str(port))
    logs.append(log)
    match = log.wait_for(r"cargo mcp dev: serving (http://\S+/mcp)", FIRST_BUILD_TIMEOUT)
    return DevServer(process=process, log=log, url=match.group(1), crate=crate)


@pytest.fixture
def dev_server_factory(dev_log):
    started: list[DevServer] = []

    def start(crate: Path) -> DevServer:
        server = serve(crate, dev_log)
        started.append(server)
        return server

    yield start
    for server in started:
        stop(server.process)
