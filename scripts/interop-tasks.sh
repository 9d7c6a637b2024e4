#!/usr/bin/env bash
# Interop for tasks, both forms, against the `everything` example over Streamable HTTP on
# 127.0.0.1:
# - the handshake era (2025-11-25's experimental core tasks): the TypeScript SDK's client
#   (@modelcontextprotocol/sdk 1.32.2, tests/node/tasks.cjs): create, poll, answer an
#   elicitation, read the result, cancel another, list, and check another session sees none;
# - 2026-07-28 (the tasks extension): the extension's own requester (@modelcontextprotocol/ext-tasks
#   0.2.2 on the v2 client @modelcontextprotocol/client 2.4.0, tests/node/ext_tasks.mjs): create,
#   poll, result, cancel, input, failed and immediate, with the package's schema validation.
#
# The packages are installed from the npm registry into a local cache (.cache/tasks-interop, or
# $TASKS_INTEROP_CACHE; a cache that already holds them at these versions is used as it is) and run
# by the shared Node 22 (scripts/node.sh); nothing is installed globally. A component that cannot
# be installed fails the run.
#
#   scripts/interop-tasks.sh
#   scripts/interop-tasks.sh --install-only   # Node and the npm packages; nothing built or run
#   MCP_EVERYTHING_BIN=path/to/everything scripts/interop-tasks.sh   # use that binary, build nothing
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/everything-server.sh

. scripts/node.sh
node22
sdk_version=1.32.2
ext_tasks_version=0.2.2
client_version=2.4.0

cache="${TASKS_INTEROP_CACHE:-$PWD/.cache/tasks-interop}"
modules="$cache/node_modules"
installed() { "$node" -p "require('$modules/$1/package.json').version" 2>/dev/null || true; }
components="@modelcontextprotocol/sdk:$sdk_version"
components+=" @modelcontextprotocol/ext-tasks:$ext_tasks_version @modelcontextprotocol/client:$client_version"
missing=
for component in $components; do
    [ "$(installed "${component%:*}")" = "${component##*:}" ] || missing=1
done
if [ -n "$missing" ]; then
    echo "== installing $components into $cache"
    # shellcheck disable=SC2046 # one argument per component
    npm_install "$cache" $(for component in $components; do echo "${component%:*}@${component##*:}"; done)
fi
for component in $components; do
    name=${component%:*}
    version=${component##*:}
    got=$(installed "$name")
    if [ "$got" != "$version" ]; then
        echo "FAILED: $name $version is not installed in $cache (found: ${got:-nothing})" >&2
        exit 1
    fi
done
echo "== node $("$node" --version), @modelcontextprotocol/sdk $sdk_version, ext-tasks $ext_tasks_version, client $client_version"
if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi

example_binaries

start_everything /mcp

echo "== TypeScript SDK client, experimental tasks (tests/node/tasks.cjs) against $url"
if ! timeout 120 "$node" tests/node/tasks.cjs "$modules" "$url"; then
    echo "the server's log:"
    tail -50 "$work/server.log"
    exit 1
fi

echo "== ext-tasks requester at 2026-07-28 (tests/node/ext_tasks.mjs) against $url"
if ! timeout 120 "$node" tests/node/ext_tasks.mjs "$modules" "$url"; then
    echo "the server's log:"
    tail -50 "$work/server.log"
    exit 1
fi
