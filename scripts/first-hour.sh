#!/usr/bin/env bash
# What a new user does first, from the README alone: Getting started followed literally. The
# checkout sits next to a new crate (a link to this one stands in for the clone), the
# dependencies are the README's block as it is (the path dependency, `[dev-dependencies]` with
# `testing` and `serde_json`), `src/main.rs` is the README's first example with the three
# logging lines at the start of `main` and the test appended; then `cargo test`, the binary
# driven over stdio (the protocol on stdout, the start-up log line on stderr), the HTTP variant
# (`.serve_http(..)` in place of `.serve_stdio()`, on port 0 instead of 8000 so runs never
# collide) found through the "listening on" line it logs and called over HTTP, and a tool
# whose result type derives `Serialize` and `JsonSchema` (the README's serde and schemars lines).
#
# The new crate's build shares this workspace's target directory, so dependencies it already
# compiled are not compiled again.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The README's blocks: the first ```rust block (the example), and under "## Getting started" the
# ```toml block, the ```rust block after "**Logs.**" and the one after "**Test it.**".
python3 - "$root/README.md" "$work" <<'PY2'
import re, sys
readme, work = open(sys.argv[1]).read(), sys.argv[2]
def block(lang, text):
    found = re.search(r"```" + lang + r"\n(.*?)```", text, re.S)
    return found.group(1) if found else None
start = readme.find("## Getting started")
section = readme[start:readme.find("\n## ", start + 1)] if start >= 0 else ""
example = block("rust", readme)
deps = block("toml", section)
logs = block("rust", section[section.find("**Logs.**"):]) if "**Logs.**" in section else None
test = block("rust", section[section.find("**Test it.**"):]) if "**Test it.**" in section else None
if not all([example, deps, logs, test]):
    sys.exit("README.md: Getting started needs a ```toml block, a ```rust block after **Logs.** and one after **Test it.**")
if not deps.lstrip().startswith("[dependencies]"):
    sys.exit("README.md: the Getting started ```toml block must begin with [dependencies]")
if 'path = "../mcp-runtime/mcp-runtime"' not in deps:
    sys.exit("README.md: Getting started no longer depends on ../mcp-runtime/mcp-runtime by path")
head = "async fn main() -> mcp_runtime::Result<()> {\n"
if head not in example:
    sys.exit("README.md: the first example has no `async fn main() -> mcp_runtime::Result<()> {`")
indented = "".join("    " + line + "\n" for line in logs.rstrip("\n").split("\n"))
main = example.replace(head, head + indented, 1) + "\n" + test
open(f"{work}/main.rs", "w").write(main)
open(f"{work}/deps.toml", "w").write(deps)
PY2

target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

cd "$work"
# Getting started: the checkout is cloned next to the new crate.
ln -s "$root" mcp-runtime
cargo new --bin --vcs none --quiet my-server
cd my-server
# `cargo new` ends the manifest with an empty [dependencies] table; the README's block replaces it.
python3 - <<'PY'
manifest = open("Cargo.toml").read().rstrip()
assert manifest.endswith("[dependencies]"), manifest
manifest = manifest[: -len("[dependencies]")]
open("Cargo.toml", "w").write(manifest + open("../deps.toml").read())
PY
cp ../main.rs src/main.rs
echo "== Cargo.toml of the new crate"
cat Cargo.toml

drive() {
    # Drives the built binary over stdio and checks what a client sees; $1 names the tool to
    # call, $2 its arguments, $3 the text its result must hold.
    python3 - "$CARGO_TARGET_DIR/debug/my-server" "$1" "$2" "$3" <<'PY'
import json, subprocess, sys, threading
binary, tool, arguments, expected = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
child = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
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
logs = child.stderr.read()
# The logging lines of Getting started: the start-up line is on stderr, stdout held only JSON.
assert f"serving {len(names)} tools" in logs, logs
print(f"   {tool}: listed with {names}; called: {text}; stderr: {logs.splitlines()[0].strip()}")
PY
}

export CARGO_TARGET_DIR="$target_dir"
echo "== building the README's first example, with the logging lines and the test"
cargo build --quiet
echo "== cargo test (the README's test: the testing feature and serde_json)"
cargo test --quiet 2>&1 | tail -3
drive add '{"a": 2, "b": 3}' 5

echo "== over HTTP: serve_http, found through the address it logs"
cp src/main.rs ../stdio-main.rs
python3 - <<'PY'
main = open("src/main.rs").read()
assert ".serve_stdio()" in main, "the README's example no longer calls serve_stdio()"
open("src/main.rs", "w").write(main.replace(".serve_stdio()", '.serve_http("127.0.0.1:0")', 1))
PY
cargo build --quiet
python3 - "$CARGO_TARGET_DIR/debug/my-server" <<'PY'
import json, re, subprocess, sys, threading, urllib.request
child = subprocess.Popen([sys.argv[1]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
timer = threading.Timer(30, child.kill)
timer.start()
try:
    url = None
    for line in child.stderr:
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+/mcp)", line)
        if found:
            url = found.group(1)
            break
    assert url, "the HTTP server never logged `listening on http://...`"
    def post(body, session=None):
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if session:
            headers["mcp-session-id"] = session
        request = urllib.request.Request(url, json.dumps(body).encode(), headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.headers.get("mcp-session-id"), response.read().decode()
    session, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "first-hour", "version": "0"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    _, body = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}, session)
    assert json.loads(body)["result"]["structuredContent"] == {"result": 5}, body
    print(f"   {url}: add(2, 3) = 5")
finally:
    child.kill()
    child.wait()
    timer.cancel()
PY
cp ../stdio-main.rs src/main.rs

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
