"""Metrics a real Prometheus scrapes (issue 28): Debian's `prometheus` scraping
`everything --metrics-port M` on 127.0.0.1, the server driven by the official Python SDK client
(`mcp` 2.3.0) over stdio and Streamable HTTP, and the count of `tools/call` for the tool read back
through Prometheus's own HTTP query API. Run through `scripts/prometheus.sh`, which installs
Prometheus when it is missing and sets `MCP_EVERYTHING_BIN` and `PROMETHEUS_BIN`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

# The child-process helpers of the interop tests (tests/python/local_servers.py), appended so
# that nothing there shadows a module of this folder.
sys.path.append(str(Path(__file__).resolve().parents[1] / "python"))
from local_servers import await_port, free_port, stop  # noqa: E402

CALLS = 5
STARTUP_TIMEOUT = 30.0  # how long a server gets to listen
WAIT = 40.0  # how long Prometheus gets to scrape what the calls left


def binary(variable: str) -> str:
    path = os.environ.get(variable)
    if not path or not Path(path).is_file():
        pytest.fail(f"{variable} is not set to a binary: run scripts/prometheus.sh")
    return path


@contextmanager
def prometheus(metrics_port: int):
    """Prometheus on a free port, scraping 127.0.0.1:`metrics_port` every second."""
    with tempfile.TemporaryDirectory(prefix="prometheus-") as home:
        config = Path(home) / "prometheus.yml"
        config.write_text(
            "global:\n"
            "  scrape_interval: 1s\n"
            "  scrape_timeout: 1s\n"
            "scrape_configs:\n"
            "  - job_name: everything\n"
            f"    static_configs: [{{targets: ['127.0.0.1:{metrics_port}']}}]\n"
        )
        port = free_port()
        log = open(Path(home) / "prometheus.log", "w+")
        process = subprocess.Popen(
            [
                binary("PROMETHEUS_BIN"),
                f"--config.file={config}",
                f"--storage.tsdb.path={home}/data",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
        try:
            await_port(process, port, "prometheus", STARTUP_TIMEOUT)
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(process)
            log.seek(0)
            print(log.read()[-4000:])
            log.close()


def query(base: str, promql: str) -> list[dict]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return body["data"]["result"]


def scraped_count(base: str, tool: str, transport: str) -> dict:
    """The series of `tools/call` of `tool` once Prometheus has scraped all CALLS of them."""
    promql = (
        "mcp_server_operation_duration_seconds_count"
        f'{{mcp_method_name="tools/call",gen_ai_tool_name="{tool}",network_transport="{transport}"}}'
    )
    deadline = time.monotonic() + WAIT
    seen: list[dict] = []
    while time.monotonic() < deadline:
        seen = query(base, promql)
        if sum(float(s["value"][1]) for s in seen) >= CALLS:
            return seen
        time.sleep(0.5)
    pytest.fail(f"Prometheus never read {CALLS} calls of {tool}: {seen}")


async def call_tools(server, mode: str) -> None:
    async with Client(server, mode=mode, read_timeout_seconds=15) as client:
        for _ in range(CALLS):
            result = await client.call_tool("test_simple_text")
            assert not result.is_error


def test_prometheus_scrapes_a_stdio_server_driven_by_the_python_client() -> None:
    metrics_port = free_port()
    everything = binary("MCP_EVERYTHING_BIN")
    with prometheus(metrics_port) as base:

        async def scenario() -> None:
            params = StdioServerParameters(command=everything, args=["--metrics-port", str(metrics_port)])
            # The server lives while the client is connected: Prometheus scrapes it meanwhile.
            async with Client(stdio_client(params), mode="legacy", read_timeout_seconds=15) as client:
                for _ in range(CALLS):
                    result = await client.call_tool("test_simple_text")
                    assert not result.is_error
                series = await anyio.to_thread.run_sync(scraped_count, base, "test_simple_text", "pipe")
                labels = series[0]["metric"]
                assert labels["mcp_protocol_version"] == "2025-11-25", labels
                assert labels["gen_ai_operation_name"] == "execute_tool", labels
                assert "error_type" not in labels, labels
                # The histogram's buckets are the conventions' boundaries.
                buckets = query(base, 'mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call"}')
                bounds = sorted({b["metric"]["le"] for b in buckets}, key=lambda le: float(le))
                assert bounds == ["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "30", "60", "120", "300", "+Inf"]

        anyio.run(scenario)


def test_prometheus_scrapes_an_http_server_in_both_eras() -> None:
    metrics_port, port = free_port(), free_port()
    log = tempfile.TemporaryFile("w+")
    server = subprocess.Popen(
        [binary("MCP_EVERYTHING_BIN"), "--port", str(port), "--metrics-port", str(metrics_port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        await_port(server, port, "everything", STARTUP_TIMEOUT)
        await_port(server, metrics_port, "everything's metrics", STARTUP_TIMEOUT)
        with prometheus(metrics_port) as base:
            url = f"http://127.0.0.1:{port}/mcp"
            anyio.run(call_tools, url, "legacy")
            anyio.run(call_tools, url, "auto")
            series = scraped_count(base, "test_simple_text", "tcp")
            versions = {s["metric"].get("mcp_protocol_version") for s in series}
            assert versions == {"2025-11-25", "2026-07-28"}, series
            # The same numbers at the server's own `/metrics` on its HTTP port.
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                text = response.read().decode()
            assert 'gen_ai_tool_name="test_simple_text"' in text
    finally:
        stop(server)
        log.close()
