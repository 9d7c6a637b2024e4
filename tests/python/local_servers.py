"""Servers the Python tests run as child processes on 127.0.0.1, and the deadline their
scenarios run under: a free port, the wait until a process listens, its stop, and an async
scenario run with a hard deadline. Shared by tests/python and tests/replicas (whose conftest
puts this folder on `sys.path`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager

import anyio
import pytest


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def await_port(proc: subprocess.Popen, port: int, what: str, timeout: float) -> None:
    """Waits until `proc` (`what`, in the failure) accepts connections on 127.0.0.1:`port`:
    the test fails if it exits first or takes longer than `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode} before accepting connections")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not accept connections on 127.0.0.1:{port} within {timeout}s")
            time.sleep(0.05)


def stop(proc: subprocess.Popen) -> None:
    """Terminates `proc`, and kills it if it has not exited within 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@contextmanager
def listening(args: list, port: int, what: str, timeout: float, stderr=subprocess.DEVNULL, env=None):
    """The process `args` (`what`, in a failure), once it accepts connections on
    127.0.0.1:`port` (see `await_port`); stopped when the block ends."""
    proc = subprocess.Popen(
        [str(arg) for arg in args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    try:
        await_port(proc, port, what, timeout)
        yield proc
    finally:
        stop(proc)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keeps each test's call report on its item (`rep_call`), for fixtures that print a
    server's log when the test failed; a conftest that imports this has the hook."""
    report = yield
    if report.when == "call":
        item.rep_call = report
    return report


def stderr_log(request, prefix: str, what: str):
    """A generator for a fixture: a file for child processes' stderr, printed (its last 8,000
    characters, headed by `what`) when the test fails, then removed."""
    log = tempfile.NamedTemporaryFile("w+", prefix=prefix, suffix=".log", delete=False)
    yield log
    log.flush()
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        log.seek(0)
        text = log.read()
        if text.strip():
            print(f"\n--- {what} ({log.name})\n{text[-8000:]}")
    log.close()
    os.unlink(log.name)


def run_within(timeout: float, scenario, *args) -> None:
    """Runs the async `scenario(*args)`, which fails past `timeout` seconds."""

    async def bounded() -> None:
        with anyio.fail_after(timeout):
            await scenario(*args)

    try:
        anyio.run(bounded)
    except BaseExceptionGroup as group:
        # The client's task groups wrap a failure; report the one underneath when there is one.
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out
