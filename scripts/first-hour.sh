#!/usr/bin/env bash
# What a new user does first, from the README alone: a new crate outside this workspace, the
# dependencies exactly as the README's "Getting started" block lists them, the README's first
# example pasted into src/main.rs, built, and driven over stdio (initialize, tools/list,
# tools/call). Then the same crate with a tool whose result type derives `Serialize` and
# `JsonSchema`, which needs the README's serde and schemars lines.
#
# mcp-runtime is not on crates.io yet, so the new crate's `mcp-runtime = "..."` line is pointed at
# this checkout with `[patch.crates-io]`; every other dependency comes from crates.io as the user's
# would. The build shares this workspace's target directory, so dependencies it already compiled
# are not compiled again.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The README's blocks: the first ```rust block, and the first ```toml block after "## Getting started".
python3 - "$root/README.md" "$work" <<'PY'
import re, sys
readme, work = open(sys.argv[1]).read(), sys.argv[2]
rust = re.search(r"```rust\n(.*?)```", readme, re.S)
start = readme.find("## Getting started")
toml = re.search(r"```toml\n(.*?)```", readme[start:], re.S) if start >= 0 else None
if not rust or not toml:
    sys.exit("README.md: no first ```rust block, or no ```toml block under '## Getting started'")
deps = toml.group(1)
if not deps.lstrip().startswith("[dependencies]"):
    sys.exit("README.md: the Getting started ```toml block must begin with [dependencies]")
open(f"{work}/main.rs", "w").write(rust.group(1))
open(f"{work}/deps.toml", "w").write(deps)
PY

target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

cd "$work"
cargo new --bin --vcs none --quiet first-hour
cd first-hour
# `cargo new` ends the manifest with an empty [dependencies] table; the README's block replaces it.
python3 - <<'PY'
manifest = open("Cargo.toml").read().rstrip()
assert manifest.endswith("[dependencies]"), manifest
manifest = manifest[: -len("[dependencies]")]
open("Cargo.toml", "w").write(manifest + open("../deps.toml").read())
PY
cat >> Cargo.toml <<TOML

[patch.crates-io]
mcp-runtime = { path = "$root/mcp-runtime" }
TOML
cp ../main.rs src/main.rs
echo "== Cargo.toml of the new crate"
cat Cargo.toml

drive() {
    # Drives the built binary over stdio and checks what a client sees; $1 names the tool to
    # call, $2 its arguments, $3 the text its result must hold.
    python3 - "$CARGO_TARGET_DIR/debug/first-hour" "$1" "$2" "$3" <<'PY'
import json, subprocess, sys, threading
binary, tool, arguments, expected = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
child = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
timer = threading.Timer(20, child.kill)
timer.start()
def send(message):
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()
def reply():
    line = child.stdout.readline()
    if not line:
        sys.exit("the server closed stdout without answering")
    return json.loads(line)
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "first-hour", "version": "0"}}})
init = reply()
assert init["result"]["serverInfo"]["name"], init
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
names = [t["name"] for t in reply()["result"]["tools"]]
assert tool in names, names
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
result = reply()["result"]
text = result["content"][0]["text"]
assert not result.get("isError") and expected in text, result
child.stdin.close()
child.wait(timeout=10)
timer.cancel()
print(f"   {tool}: listed with {names}; called: {text}")
PY
}

export CARGO_TARGET_DIR="$target_dir"
echo "== building the README's first example"
cargo build --quiet
drive add '{"a": 2, "b": 3}' 5

echo "== a tool whose result type derives Serialize and JsonSchema"
cat >> src/main.rs <<'RS'

/// A sum and its operands.
#[derive(Serialize, JsonSchema)]
struct Sum {
    a: i64,
    b: i64,
    sum: i64,
}

/// Add two integers, showing the work.
#[tool]
fn add_verbose(a: i64, b: i64) -> Sum {
    Sum { a, b, sum: a + b }
}
RS
cargo build --quiet
drive add_verbose '{"a": 2, "b": 3}' '"sum":5'
echo "== first hour: ok"
