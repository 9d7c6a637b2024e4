"""Fixtures for the replica tests (issue 20): a real `redis-server` and `haproxy` (Debian's),
and three `everything --redis URL --port PORT` replicas behind HAProxy round-robin with no
sticky sessions. Everything binds 127.0.0.1.

Run through `scripts/replicas.sh`, which installs redis-server and haproxy (or fails loudly) and
sets `MCP_EVERYTHING_BIN`.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 30.0

# The child-process helpers of the interop tests (tests/python/local_servers.py), appended so
# that nothing there shadows a module of this folder.
sys.path.append(str(REPO / "tests" / "python"))
# `pytest_runtest_makereport` is the hook that keeps a test's report for the logs printed on failure.
from local_servers import await_port, free_port, pytest_runtest_makereport  # noqa: E402, F401


def _require(tool: str) -> str:
    path = shutil.which(tool) or (f"/usr/sbin/{tool}" if os.path.exists(f"/usr/sbin/{tool}") else None)
    if path is None:
        pytest.exit(f"{tool} is not installed: run scripts/replicas.sh (it installs Debian's package)", 2)
    return path


@dataclass
class Redis:
    port: int
    workdir: Path
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [_require("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.workdir)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        await_port(self.proc, self.port, "redis-server", STARTUP_TIMEOUT)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None


@dataclass
class Replica:
    port: int
    log: Path
    proc: subprocess.Popen

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class Cluster:
    redis: Redis
    replicas: list[Replica]
    balancer_port: int
    stats_port: int
    workdir: Path
    procs: list[subprocess.Popen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.balancer_port}/mcp"

    def served(self) -> dict[str, int]:
        """Requests HAProxy sent to each replica so far (its `stot` per server)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.stats_port}/stats;csv", timeout=5) as r:
            text = r.read().decode()
        rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
        return {row["svname"]: int(row["stot"] or 0) for row in rows if row["pxname"] == "replicas"
                and row["svname"] not in ("FRONTEND", "BACKEND")}

    def kill(self, replica: Replica) -> None:
        replica.proc.send_signal(signal.SIGKILL)
        replica.proc.wait(timeout=10)


def _replica(binary: Path, redis: Redis, workdir: Path, n: int) -> Replica:
    port = free_port()
    log = workdir / f"replica-{n}.log"
    proc = subprocess.Popen(
        [str(binary), "--redis", redis.url, "--port", str(port), "--trusted-proxy", "127.0.0.1"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "w"),
        env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
    )
    await_port(proc, port, f"replica {n}", STARTUP_TIMEOUT)
    return Replica(port=port, log=log, proc=proc)


HAPROXY_CONFIG = """
global
    maxconn 256
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout tunnel 120s
    option http-server-close
    option forwardfor
frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas
frontend stats
    bind 127.0.0.1:{stats}
    stats enable
    stats uri /stats
backend replicas
    balance roundrobin
    option redispatch
    retries 2
{servers}
"""


@pytest.fixture
def cluster(request):
    binary = Path(os.environ.get("MCP_EVERYTHING_BIN", REPO / "target" / "debug" / "examples" / "everything"))
    if not binary.is_file():
        pytest.exit(f"example binary {binary} not found; run scripts/replicas.sh", 2)
    haproxy = _require("haproxy")
    workdir = Path(tempfile.mkdtemp(prefix="mcp-replicas-"))
    redis = Redis(port=free_port(), workdir=workdir)
    redis.start()
    replicas = [_replica(binary, redis, workdir, n) for n in range(3)]
    port, stats = free_port(), free_port()
    servers = "\n".join(f"    server r{n} 127.0.0.1:{r.port} check inter 500ms fall 1 rise 1"
                        for n, r in enumerate(replicas))
    config = workdir / "haproxy.cfg"
    config.write_text(HAPROXY_CONFIG.format(port=port, stats=stats, servers=servers))
    balancer = subprocess.Popen([haproxy, "-db", "-f", str(config)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=open(workdir / "haproxy.log", "w"))
    await_port(balancer, port, "haproxy", STARTUP_TIMEOUT)
    c = Cluster(redis=redis, replicas=replicas, balancer_port=port, stats_port=stats, workdir=workdir,
                procs=[balancer])
    try:
        yield c
    finally:
        for r in replicas:
            if r.alive():
                r.proc.terminate()
        balancer.terminate()
        for p in [*(r.proc for r in replicas), balancer]:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        redis.stop()
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            for log in sorted(workdir.glob("*.log")):
                text = log.read_text(errors="replace")
                if text.strip():
                    print(f"\n--- {log.name}\n{text[-6000:]}")
        shutil.rmtree(workdir, ignore_errors=True)
