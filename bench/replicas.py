"""Issue 20's benchmark rows: HTTP `tools/call` in session mode through the Redis store beside
in-memory, and replicas behind HAProxy. Starts its own redis-server, replicas of the
`everything` example and haproxy on free ports of 127.0.0.1 (scripts/replicas.sh installs
them), drives them with plain keep-alive HTTP/1.1 clients (one session per client, sequential
calls of `test_simple_text`), and prints a Markdown table.

    python3 bench/replicas.py [--binary target/release/examples/everything] [--calls 3000] [--clients 4]

The client is Python, so absolute rates are the client's as much as the server's; the
difference per call between two rows (same client) is the server-side cost being measured.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

VERSION = "2025-11-25"
CALL = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "test_simple_text", "arguments": {}}})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"nothing listens on {port}")
            time.sleep(0.05)


def client(port: int, calls: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    conn.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}),
        headers=headers)
    r = conn.getresponse()
    r.read()
    headers["mcp-session-id"] = r.getheader("mcp-session-id")
    headers["mcp-protocol-version"] = VERSION
    conn.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                 headers=headers)
    conn.getresponse().read()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        conn.request("POST", "/mcp", body=CALL, headers=headers)
        r = conn.getresponse()
        body = r.read()
        assert r.status == 200 and b'"result"' in body, body
        times.append(time.perf_counter() - start)
    return times


def run_load(port: int, clients: int, calls: int) -> tuple[float, float, float]:
    """(calls/s, mean µs, p99 µs)."""
    with multiprocessing.Pool(clients) as pool:
        start = time.perf_counter()
        results = pool.starmap(client, [(port, calls)] * clients)
        elapsed = time.perf_counter() - start
    times = sorted(t for r in results for t in r)
    return (len(times) / elapsed, statistics.mean(times) * 1e6, times[int(len(times) * 0.99)] * 1e6)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="target/debug/examples/everything")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mcp-bench-replicas-"))
    procs: list[subprocess.Popen] = []

    def spawn(cmd: list[str]) -> None:
        procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))

    try:
        redis_port = free_port()
        spawn(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", str(work)])
        wait_port(redis_port)
        url = f"redis://127.0.0.1:{redis_port}/0"
        memory, shared = free_port(), [free_port(), free_port()]
        spawn([args.binary, "--port", str(memory)])
        for port in shared:
            spawn([args.binary, "--redis", url, "--port", str(port)])
        balancers = {}
        for n in (1, 2):
            port = free_port()
            servers = "\n".join(f"    server r{i} 127.0.0.1:{p}" for i, p in enumerate(shared[:n]))
            cfg = work / f"haproxy-{n}.cfg"
            cfg.write_text(f"""defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
{servers}
""")
            spawn([shutil.which("haproxy") or "/usr/sbin/haproxy", "-db", "-f", str(cfg)])
            balancers[n] = port
        for port in [memory, *shared, *balancers.values()]:
            wait_port(port)
        rows = [
            ("HTTP `tools/call`, session, in-memory, 1 client", memory, 1),
            ("HTTP `tools/call`, session, Redis store, 1 client", shared[0], 1),
            (f"HTTP `tools/call`, session, in-memory, {args.clients} clients", memory, args.clients),
            (f"HTTP `tools/call`, session, Redis store, {args.clients} clients", shared[0], args.clients),
            (f"HAProxy -> 1 replica (Redis), {args.clients} clients", balancers[1], args.clients),
            (f"HAProxy -> 2 replicas (Redis), {args.clients} clients", balancers[2], args.clients),
        ]
        client(memory, 200)  # warm-up
        client(shared[0], 200)
        print(f"binary: {args.binary}; {args.calls} calls per client; Python keep-alive clients\n")
        print("| row | calls/s | mean µs | p99 µs |\n|---|---:|---:|---:|")
        results = {}
        for name, port, clients in rows:
            rate, mean, p99 = run_load(port, clients, args.calls)
            results[name] = mean
            print(f"| {name} | {rate:,.0f} | {mean:,.0f} | {p99:,.0f} |", flush=True)
        one = results[rows[1][0]] - results[rows[0][0]]
        print(f"\nshared-store overhead per call, 1 client: {one:,.0f} µs")
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
