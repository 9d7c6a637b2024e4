#!/usr/bin/env bash
# What a new user does first, from the README and the guide, in new crates outside the
# workspace (a link to this checkout stands in for the clone, as `mcp-runtime` next to them):
#
# 1. the README: its first example, its dependency lines appended below the `[dependencies]`
#    that `cargo new` wrote, its test; `cargo test`, then the binary driven over stdio;
# 2. Getting started (guide/src/getting-started.md): guide/recipes/getting-started's lines and
#    main.rs as the chapter shows them; `cargo test`; the binary driven over stdio (the start-up
#    line on stderr, and `RUST_LOG=warn` hiding it: the filter is read from the environment); the
#    HTTP variant (`.serve_http(..)` in place of `.serve_stdio()`, on port 0 so runs never
#    collide) found through the "listening on" line and called over HTTP; a tool whose result
#    type derives `Serialize` and `JsonSchema` (the serde and schemars lines);
# 3. only stdio: guide/recipes/stdio-only's lines with the same server and test; `cargo test`,
#    and `cargo tree -e normal,dev` without axum or hyper; then the deployment chapter's
#    `production` profile (cargo-mcp/src/production.toml, what `cargo mcp new` writes) appended, built and driven over stdio;
# 4. the middleware chapter's server as written (guide/recipes/middleware): a search past its
#    deadline is a tool error, and calls past the rate limit's burst are refused with
#    `retryAfterMs`.
#
# The new crates share this workspace's target directory, so dependencies already compiled are
# not compiled again.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
recipes="$root/guide/recipes"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
export CARGO_TARGET_DIR="$target_dir"
ln -s "$root" "$work/mcp-runtime"

# new_crate NAME DEPENDENCY-LINES: `cargo new` in $work, the lines appended to the manifest
# below the empty `[dependencies]` table it ends with, as the README and the guide say.
new_crate() {
    cd "$work"
    cargo new --bin --vcs none --quiet "$1"
    cd "$1"
    python3 - "$2" <<'PY'
import sys
manifest = open("Cargo.toml").read()
assert manifest.rstrip().endswith("[dependencies]"), f"`cargo new` no longer ends with [dependencies]:\n{manifest}"
lines = open(sys.argv[1]).read()
assert not lines.lstrip().startswith("[dependencies]"), "the lines to append start with a [dependencies] header `cargo new` already wrote"
open("Cargo.toml", "w").write(manifest.rstrip() + "\n" + lines)
PY
}

# drive BINARY TOOL ARGUMENTS TEXT [ENV=VALUE]: starts the server over stdio, checks what a
# client sees (the tool listed and called, its result holding TEXT) and prints its stderr's
# first line; with RUST_LOG=warn the start-up line must not be there.
drive() {
    env ${5:-} python3 - "$1" "$2" "$3" "$4" <<'PY'
import json, os, subprocess, sys, threading
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
started = f"serving {len(names)} tools"
if os.environ.get("RUST_LOG") == "warn":
    assert started not in logs, f"RUST_LOG=warn still logged the start-up line:\n{logs}"
    print(f"   {tool}: called: {text}; RUST_LOG=warn: no start-up line")
elif os.environ.get("EXPECT_LOGS") == "0":
    print(f"   {tool}: listed with {names}; called: {text}")
else:
    assert started in logs, f"no `{started}` on stderr:\n{logs}"
    print(f"   {tool}: listed with {names}; called: {text}; stderr: {logs.splitlines()[0].strip()}")
PY
}

echo "== 1. the README: its example, its dependency lines, its test"
python3 - "$root/README.md" "$work" <<'PY'
import re, sys, textwrap
readme, work = open(sys.argv[1]).read(), sys.argv[2]
blocks = [(lang, textwrap.dedent(body)) for lang, body in re.findall(r"^ *```(\w+)\n(.*?)^ *```", readme, re.S | re.M)]
rust = [body for lang, body in blocks if lang == "rust"]
toml = [body for lang, body in blocks if lang == "toml"]
if len(rust) < 2 or not toml:
    sys.exit("README.md: needs the example and the test (```rust) and the dependency lines (```toml)")
if "async fn main() -> mcp_runtime::Result<()> {" not in rust[0] or "#[tokio::test]" not in rust[1]:
    sys.exit("README.md: the first ```rust block is the example, the second the test")
open(f"{work}/readme-main.rs", "w").write(rust[0] + "\n" + rust[1])
open(f"{work}/readme-deps.toml", "w").write(toml[0])
PY
new_crate readme-server "$work/readme-deps.toml"
cp "$work/readme-main.rs" src/main.rs
cargo test --quiet 2>&1 | tail -2
cargo build --quiet
EXPECT_LOGS=0 drive "$CARGO_TARGET_DIR/debug/readme-server" add '{"a": 2, "b": 3}' 5

echo "== 2. Getting started: guide/recipes/getting-started"
new_crate my-server "$recipes/getting-started/Cargo.toml.add"
cp "$recipes/getting-started/main.rs" src/main.rs
echo "   Cargo.toml of the new crate:"
sed 's/^/     /' Cargo.toml
cargo test --quiet 2>&1 | tail -2
cargo build --quiet
drive "$CARGO_TARGET_DIR/debug/my-server" add '{"a": 2, "b": 3}' 5
drive "$CARGO_TARGET_DIR/debug/my-server" add '{"a": 2, "b": 3}' 5 RUST_LOG=warn

echo "== 2. over HTTP: serve_http, found through the address it logs"
cp src/main.rs ../stdio-main.rs
python3 - <<'PY'
main = open("src/main.rs").read()
assert ".serve_stdio()" in main, "the Getting started server no longer calls serve_stdio()"
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

echo "== 2. a tool whose result type derives Serialize and JsonSchema"
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
drive "$CARGO_TARGET_DIR/debug/my-server" add_verbose '{"a": 2, "b": 3}' '"sum":5'

echo "== 3. only stdio: guide/recipes/stdio-only, both lines without the default features"
new_crate stdio-server "$recipes/stdio-only/Cargo.toml.add"
cp "$recipes/getting-started/main.rs" src/main.rs
cargo test --quiet 2>&1 | tail -2
tree="$(cargo tree -e normal,dev --quiet)"
if grep -nE '\b(axum|hyper)\b' <<<"$tree"; then
    echo "FAIL: the stdio-only recipe (normal and dev dependencies) still pulls in axum or hyper (above)" >&2
    exit 1
fi
echo "   cargo tree -e normal,dev: $(wc -l <<<"$tree") lines, no axum or hyper"
cargo build --quiet
drive "$CARGO_TARGET_DIR/debug/stdio-server" add '{"a": 2, "b": 3}' 5
# The build the deployment chapter recommends: its profile appended, built, and served.
echo "   the deployment chapter's profile (cargo-mcp/src/production.toml): cargo build --profile production"
printf '\n' >> Cargo.toml
cat "$root/cargo-mcp/src/production.toml" >> Cargo.toml
cargo build --quiet --profile production
drive "$CARGO_TARGET_DIR/production/stdio-server" add '{"a": 2, "b": 3}' 5

echo "== 4. the middleware chapter's server: guide/recipes/middleware"
new_crate search-server "$recipes/middleware/Cargo.toml.add"
cp "$recipes/middleware/main.rs" src/main.rs
cargo build --quiet
python3 - "$CARGO_TARGET_DIR/debug/search-server" <<'PY'
import json, subprocess, sys, threading
child = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
timer = threading.Timer(60, child.kill)
timer.start()
ids = iter(range(1, 1000))
def call(method, params):
    child.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}) + "\n")
    child.stdin.flush()
    line = child.stdout.readline()
    if not line:
        sys.exit("the server closed stdout without answering")
    return json.loads(line)
call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "first-hour", "version": "0"}})
child.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
late = call("tools/call", {"name": "search", "arguments": {"query": "mcp", "seconds": 3}})["result"]
assert late.get("isError") and late["content"][0]["text"] == "tool `search` timed out", late
served, refused = 0, None
for _ in range(40):
    answer = call("tools/call", {"name": "search", "arguments": {"query": "mcp"}})
    if "result" in answer:
        assert answer["result"]["content"][0]["text"] == "results for mcp", answer
        served += 1
    else:
        refused = answer["error"]
        break
assert refused and refused.get("code") == -32023 and isinstance(refused.get("data", {}).get("retryAfterMs"), int), refused
assert served >= 15, f"only {served} calls served before the limit"
child.stdin.close()
child.wait(timeout=10)
timer.cancel()
print(f"   a 3 s search: {late['content'][0]['text']}; {served} calls served, then {refused['code']} {refused['message']!r} with retryAfterMs {refused['data']['retryAfterMs']}")
PY
echo "== first hour: ok"
