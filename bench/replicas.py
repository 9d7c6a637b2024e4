"""The Redis rows (issues 20 and 31): HTTP `tools/call add` in session mode (2025-11-25) through
the Redis store beside in-memory, at 1 and 32 connections, and two replicas behind HAProxy
beside one. The server is the benchmark's own (`bench-ours http` and `bench-ours http-redis`,
built with the `redis` feature) and so is the client (`bench-runner --drive-http`: keep-alive
hyper connections, each its own session). Starts its own redis-server and haproxy
(scripts/replicas.sh installs them) on free ports of 127.0.0.1.

    python3 bench/replicas.py [--runs 5] [--calls-1 10000] [--calls-32 50000] [--no-build]

Each run drives every row once, in an order that rotates from run to run, so each Redis row
runs right beside its in-memory row; the tables show medians over the runs. Beside calls/s and
latency, two figures that load on the machine does not move: the servers' CPU time per call
(user + system, from /proc) and Redis's commands per call (`INFO commandstats` before and
after each drive: every command any replica sent, heartbeat `PING`s included).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"{proc.args[0]} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"nothing listens on {port}")
            time.sleep(0.05)


def cpu_seconds(pid: int) -> float:
    """User + system time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def commandstats(port: int) -> dict[str, int]:
    """Calls per command so far (`INFO commandstats`, RESP by hand)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n")
        reader = s.makefile("rb")
        head = reader.readline().decode().rstrip("\r\n")
        text = reader.read(int(head[1:]) + 2)[:-2].decode()
    calls = {}
    for line in text.splitlines():
        if line.startswith("cmdstat_"):
            name, fields = line[len("cmdstat_"):].split(":", 1)
            calls[name] = int(fields.split("calls=")[1].split(",")[0])
    return calls


def served(stats_port: int) -> dict[str, int]:
    """Requests HAProxy sent to each server so far, by backend and server."""
    with urllib.request.urlopen(f"http://127.0.0.1:{stats_port}/stats;csv", timeout=5) as r:
        text = r.read().decode()
    rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
    return {f"{row['pxname']}/{row['svname']}": int(row["stot"] or 0) for row in rows
            if row["svname"] not in ("FRONTEND", "BACKEND")}


DRIVE = re.compile(r"(\d+) calls, (\d+) errors, (\d+) calls/s, p50 ([\d.]+) µs, p99 ([\d.]+) µs")


def drive(runner: Path, port: int, connections: int, calls: int) -> tuple[int, int, float, float, float]:
    """(calls, errors, calls/s, p50 µs, p99 µs) of one `--drive-http`."""
    out = subprocess.run([str(runner), "--drive-http", f"127.0.0.1:{port}", str(connections), str(calls)],
                         capture_output=True, text=True, timeout=300)
    match = DRIVE.search(out.stdout)
    if out.returncode != 0 or not match:
        raise SystemExit(f"bench-runner failed: {out.stdout}{out.stderr}")
    done, errors, rate, p50, p99 = match.groups()
    return int(done), int(errors), float(rate), float(p50), float(p99)


HAPROXY = """global
    maxconn 512
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
frontend stats
    bind 127.0.0.1:{stats}
    stats enable
    stats uri /stats
{frontends}
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls-1", type=int, default=10_000)
    parser.add_argument("--calls-32", type=int, default=50_000)
    parser.add_argument("--no-build", action="store_true", help="use the binaries in bench/target/release")
    args = parser.parse_args()
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "bench-ours", "-p", "bench-runner",
                        "--features", "bench-ours/redis"], cwd=BENCH, check=True)
    ours, runner = BENCH / "target/release/bench-ours", BENCH / "target/release/bench-runner"
    redis_server = shutil.which("redis-server")
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not redis_server or not os.path.exists(haproxy):
        raise SystemExit("needs redis-server and haproxy: scripts/replicas.sh installs them")
    work = Path(tempfile.mkdtemp(prefix="mcp-bench-replicas-"))
    procs: list[subprocess.Popen] = []

    def spawn(cmd: list[str], port: int) -> subprocess.Popen:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        procs.append(proc)
        wait_port(port, proc)
        return proc

    try:
        redis_port = free_port()
        spawn([redis_server, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", str(work)], redis_port)
        url = f"redis://127.0.0.1:{redis_port}/0"
        ports = {name: free_port() for name in ("memory", "redis", "uncached", "second", "one", "two", "stats")}
        servers = {
            "memory": spawn([str(ours), "http", f"127.0.0.1:{ports['memory']}"], ports["memory"]),
            "redis": spawn([str(ours), "http-redis", f"127.0.0.1:{ports['redis']}", url], ports["redis"]),
            "uncached": spawn([str(ours), "http-redis", f"127.0.0.1:{ports['uncached']}", url, "0"],
                              ports["uncached"]),
            "second": spawn([str(ours), "http-redis", f"127.0.0.1:{ports['second']}", url], ports["second"]),
        }
        frontends = ""
        for name, backends in (("one", ["redis"]), ("two", ["redis", "second"])):
            lines = "\n".join(f"    server {b} 127.0.0.1:{ports[b]}" for b in backends)
            frontends += (f"frontend {name}\n    bind 127.0.0.1:{ports[name]}\n    default_backend {name}\n"
                          f"backend {name}\n    balance roundrobin\n{lines}\n")
        config = work / "haproxy.cfg"
        config.write_text(HAPROXY.format(stats=ports["stats"], frontends=frontends))
        balancer = spawn([haproxy, "-db", "-f", str(config)], ports["one"])
        wait_port(ports["two"], balancer)

        # (row, port, connections, calls, the server processes whose CPU is the row's)
        rows = [
            ("in-memory, 1 connection", ports["memory"], 1, args.calls_1, ["memory"]),
            ("Redis, 1 connection", ports["redis"], 1, args.calls_1, ["redis"]),
            ("Redis without the record cache, 1 connection", ports["uncached"], 1, args.calls_1, ["uncached"]),
            ("in-memory, 32 connections", ports["memory"], 32, args.calls_32, ["memory"]),
            ("Redis, 32 connections", ports["redis"], 32, args.calls_32, ["redis"]),
            ("Redis without the record cache, 32 connections", ports["uncached"], 32, args.calls_32,
             ["uncached"]),
            ("HAProxy -> 1 replica (Redis), 32 connections", ports["one"], 32, args.calls_32, ["redis"]),
            ("HAProxy -> 2 replicas (Redis), 32 connections", ports["two"], 32, args.calls_32,
             ["redis", "second"]),
        ]
        for port in (ports["memory"], ports["redis"], ports["uncached"], ports["one"]):
            drive(runner, port, 4, 2_000)  # warm-up
        results: dict[str, list[tuple]] = {row[0]: [] for row in rows}
        loadavg_start = Path("/proc/loadavg").read_text().split()[:3]
        for run in range(args.runs):
            order = rows[run % len(rows):] + rows[:run % len(rows)]
            for name, port, connections, calls, pids in order:
                before_cpu = sum(cpu_seconds(servers[p].pid) for p in pids)
                before_redis = commandstats(redis_port)
                done, errors, rate, p50, p99 = drive(runner, port, connections, calls)
                after_redis = commandstats(redis_port)
                cpu = sum(cpu_seconds(servers[p].pid) for p in pids) - before_cpu
                delta = {k: after_redis[k] - before_redis.get(k, 0) for k in after_redis}
                delta.pop("info", None)
                commands = sum(delta.values())
                reads = sum(delta.get(k, 0) for k in ("get", "pttl"))
                if errors:
                    raise SystemExit(f"{name}: {errors} errors")
                results[name].append((rate, p50, p99, cpu / done * 1e6, commands / done, reads / done))
                print(f"run {run + 1}: {name}: {rate:,.0f} calls/s, CPU {cpu / done * 1e6:.1f} µs/call, "
                      f"{commands / done:.4f} Redis commands/call", flush=True)
        loadavg_end = Path("/proc/loadavg").read_text().split()[:3]
        by_server = served(ports["stats"])

        def median(name: str, i: int) -> float:
            return statistics.median(r[i] for r in results[name])

        print(f"\n{args.runs} runs, rows alternated; medians. Load average {' '.join(loadavg_start)} at the "
              f"start, {' '.join(loadavg_end)} at the end. HAProxy sent {by_server}.\n")
        print("| row | calls/s | p50 µs | p99 µs | server CPU µs/call | Redis commands/call | record reads/call |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, *_ in rows:
            print(f"| {name} | {median(name, 0):,.0f} | {median(name, 1):.1f} | {median(name, 2):.1f} | "
                  f"{median(name, 3):.1f} | {median(name, 4):.4f} | {median(name, 5):.4f} |")
        print("\n| ratio (medians of the per-run ratios) | calls/s | server CPU per call |\n|---|---:|---:|")
        for label, a, b in (
            ("Redis / in-memory, 1 connection", "Redis, 1 connection", "in-memory, 1 connection"),
            ("Redis / in-memory, 32 connections", "Redis, 32 connections", "in-memory, 32 connections"),
            ("Redis without the cache / in-memory, 1 connection", "Redis without the record cache, 1 connection",
             "in-memory, 1 connection"),
            ("Redis without the cache / in-memory, 32 connections",
             "Redis without the record cache, 32 connections", "in-memory, 32 connections"),
            ("2 replicas / 1 replica behind HAProxy, 32 connections",
             "HAProxy -> 2 replicas (Redis), 32 connections", "HAProxy -> 1 replica (Redis), 32 connections"),
        ):
            rates = statistics.median(x[0] / y[0] for x, y in zip(results[a], results[b]))
            cpus = statistics.median(x[3] / y[3] for x, y in zip(results[a], results[b]) if y[3])
            print(f"| {label} | {rates:.2f} | {cpus:.2f} |")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
