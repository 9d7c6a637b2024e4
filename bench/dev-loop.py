#!/usr/bin/env python3
"""Save to answer with `cargo mcp dev`: the seconds from saving an edit that adds a tool to the
README's first example (bench/firsthour/ours-default) to that tool answering `tools/call` in a
session that was open before the save, with the incremental dev build of the same edit beside
it, and rmcp 3.11's incremental rebuild of its equivalent (bench/firsthour/rmcp) for reference.

    bench/dev-loop.py [--rounds N] [--cargo-mcp PATH]

Each round appends a tool to a copy of the crate, waits until it answers, then removes it
again (a second swap). The session is plain Streamable HTTP (urllib; no SDK overhead in the
timing): `initialize` once, then `tools/call` of the new tool every 10 ms from the save on until
it answers with its result. The incremental builds are `cargo build` (dev profile) of the same
edit in the same target directory, timed as a whole. Prints a Markdown table and writes
bench/dev-loop.json. Everything binds 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
TARGET = Path(os.environ.get("DEV_LOOP_TARGET", BENCH / "target" / "dev-loop"))

NEW_TOOL = '''
/// Multiply two integers.
#[tool(read_only, idempotent)]
async fn multiply(
    /// The first factor.
    a: i64,
    /// The second factor.
    b: i64,
) -> i64 {
    a * b
}
'''

RMCP_TOOL = '''
    /// Multiply two integers.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    async fn multiply(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a * b).to_string()
    }
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Session:
    """One handshake-era session of Streamable HTTP."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.session = None
        self.next_id = 1
        init = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        assert "result" in init, init
        self.notify("notifications/initialized")

    def post(self, message: dict) -> dict | None:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
            headers["MCP-Protocol-Version"] = "2025-11-25"
        request = urllib.request.Request(self.url, data=json.dumps(message).encode(), headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            self.session = response.headers.get("Mcp-Session-Id") or self.session
            body = response.read().decode()
            if response.status == 202 or not body:
                return None
            if response.headers.get("Content-Type", "").startswith("text/event-stream"):
                for line in body.splitlines():
                    if line.startswith("data:"):
                        data = json.loads(line[5:])
                        if data.get("id") == message.get("id"):
                            return data
                return None
            return json.loads(body)

    def request(self, method: str, params: dict) -> dict:
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        return self.post(message) or {}

    def notify(self, method: str) -> None:
        self.post({"jsonrpc": "2.0", "method": method})


def timed_build(crate: Path, env: dict) -> float:
    started = time.monotonic()
    done = subprocess.run(["cargo", "build", "--quiet"], cwd=crate, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"cargo build failed in {crate}:\n{done.stderr}")
    return elapsed


def copy_crate(name: str, into: Path) -> Path:
    crate = into / name
    shutil.copytree(BENCH / "firsthour" / name, crate, ignore=shutil.ignore_patterns("target"))
    manifest = crate / "Cargo.toml"
    text = manifest.read_text()
    # The copy is a workspace of its own; its path dependencies point back into this checkout.
    text = re.sub(r'path\s*=\s*"([^"]+)"', lambda m: f'path = "{(BENCH / "firsthour" / name / m.group(1)).resolve()}"', text)
    text = text.replace("version.workspace = true", 'version = "0.1.0"').replace("edition.workspace = true", 'edition = "2024"').replace("publish.workspace = true", "publish = false")
    if "[workspace]" not in text:
        text += "\n[workspace]\n"
    manifest.write_text(text)
    shutil.copy(BENCH / "Cargo.lock", crate / "Cargo.lock")
    return crate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cargo-mcp", default=str(REPO / "target" / "debug" / "cargo-mcp"))
    args = parser.parse_args()
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET))
    work = Path(tempfile.mkdtemp(prefix="dev-loop-bench-"))
    try:
        ours = copy_crate("ours-default", work)
        rmcp = copy_crate("rmcp", work)
        main_rs = ours / "src" / "main.rs"
        original = main_rs.read_text()
        rmcp_rs = rmcp / "src" / "main.rs"
        rmcp_original = rmcp_rs.read_text()
        print("== warming both crates' dev builds (dependencies compile once)", file=sys.stderr)
        timed_build(ours, env)
        timed_build(rmcp, env)

        # Incremental builds of the same edit, as `cargo build` does them.
        ours_builds, rmcp_builds = [], []
        for _ in range(args.rounds):
            main_rs.write_text(original + NEW_TOOL)
            ours_builds.append(timed_build(ours, env))
            main_rs.write_text(original)
            ours_builds.append(timed_build(ours, env))
            anchor = "    /// Add two integers."
            rmcp_rs.write_text(rmcp_original.replace(anchor, RMCP_TOOL.strip("\n") + "\n\n" + anchor, 1))
            rmcp_builds.append(timed_build(rmcp, env))
            rmcp_rs.write_text(rmcp_original)
            rmcp_builds.append(timed_build(rmcp, env))

        # Save to answer through `cargo mcp dev`.
        port = free_port()
        dev = subprocess.Popen([args.cargo_mcp, "mcp", "dev", "--port", str(port)], cwd=ours, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines: list[str] = []
        threading.Thread(target=lambda: [lines.append(l.rstrip()) for l in iter(dev.stderr.readline, "")], daemon=True).start()
        deadline = time.monotonic() + 600
        while not any("cargo mcp dev: serving http://" in l for l in lines):
            if time.monotonic() > deadline or dev.poll() is not None:
                sys.exit("cargo mcp dev did not start:\n" + "\n".join(lines[-40:]))
            time.sleep(0.05)
        session = Session(f"http://127.0.0.1:{port}/mcp")
        answers, compiles = [], []
        try:
            for _ in range(args.rounds):
                for text, expect_tool in ((original + NEW_TOOL, True), (original, False)):
                    seen = len(lines)
                    saved = time.monotonic()
                    main_rs.write_text(text)
                    while True:
                        answer = session.request("tools/call", {"name": "multiply", "arguments": {"a": 6, "b": 7}})
                        result = answer.get("result")
                        done = (result is not None and not result.get("isError") and result.get("structuredContent") == {"result": 42}) if expect_tool else (answer.get("error") is not None)
                        if done:
                            break
                        if time.monotonic() - saved > 600:
                            sys.exit("no swap within 600 s:\n" + "\n".join(lines[-40:]))
                        time.sleep(0.01)
                    elapsed = time.monotonic() - saved
                    if expect_tool:
                        answers.append(elapsed)
                    # The dev process's own line for this swap: its compile time.
                    for _ in range(500):
                        swap = [l for l in lines[seen:] if "(save to swap:" in l]
                        if swap:
                            break
                        time.sleep(0.01)
                    match = re.search(r"compiled in ([0-9.]+) s\) \(save to swap: ([0-9.]+) s\)", swap[-1]) if swap else None
                    if match and expect_tool:
                        compiles.append(float(match.group(1)))
        finally:
            dev.terminate()
            dev.wait(timeout=10)
        median = statistics.median
        result = {
            "cores": os.cpu_count(),
            "load_average": os.getloadavg(),
            "save_to_answer_s": answers,
            "dev_compile_s": compiles,
            "ours_incremental_build_s": ours_builds,
            "rmcp_incremental_build_s": rmcp_builds,
        }
        (BENCH / "dev-loop.json").write_text(json.dumps(result, indent=2) + "\n")
        swap = [a - c for a, c in zip(answers, compiles)]
        print("| measure | median (s) | samples (s) |")
        print("|---|---|---|")
        print(f"| save to the new tool answering in an open session (`cargo mcp dev`) | {median(answers):.2f} | {', '.join(f'{x:.2f}' for x in answers)} |")
        print(f"| of which the dev build (cargo, compile and link) | {median(compiles):.2f} | {', '.join(f'{x:.2f}' for x in compiles)} |")
        print(f"| of which debounce, copy, start, list and swap | {median(swap):.2f} | {', '.join(f'{x:.2f}' for x in swap)} |")
        print(f"| `cargo build` of the same edit (ours, incremental) | {median(ours_builds):.2f} | {', '.join(f'{x:.2f}' for x in ours_builds)} |")
        print(f"| `cargo build` of the equivalent edit (rmcp 3.11, incremental) | {median(rmcp_builds):.2f} | {', '.join(f'{x:.2f}' for x in rmcp_builds)} |")
        print(f"\n{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
