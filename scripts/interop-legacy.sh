#!/usr/bin/env bash
# Interop over the deprecated HTTP+SSE transport (2024-11-05): three real clients that speak only
# it, against the `everything` example's `/sse` on 127.0.0.1 (it serves Streamable HTTP at /mcp and
# the legacy transport at /sse, both from `everything --port N`):
# - the Python SDK's `mcp.client.sse.sse_client` (mcp 2.3.0, tests/python/test_legacy_sse.py, run
#   through scripts/interop.sh, which installs it into .cache/py);
# - the TypeScript SDK's `SSEClientTransport` (@modelcontextprotocol/sdk 1.32.2,
#   tests/node/legacy_sse.cjs): connect, list the tools, call three;
# - the MCP Inspector's CLI (@modelcontextprotocol/inspector 2.12.0) with `--transport sse`:
#   tools/list and tools/call.
#
# Both npm packages are installed from the npm registry into a local cache (.cache/legacy-interop,
# or $LEGACY_INTEROP_CACHE) and run by the shared Node 22 (scripts/node.sh); nothing is installed
# globally. A component that cannot be installed fails the run.
#
#   scripts/interop-legacy.sh
#   scripts/interop-legacy.sh --install-only   # Node and the npm packages; nothing built or run
#   MCP_EVERYTHING_BIN=path/to/everything scripts/interop-legacy.sh   # use that binary, build nothing
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/everything-server.sh

. scripts/node.sh
node22
sdk_version=1.32.2
inspector_version=2.12.0

cache="${LEGACY_INTEROP_CACHE:-$PWD/.cache/legacy-interop}"
modules="$cache/node_modules"
inspector="$modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
installed() { "$node" -p "require('$modules/$1/package.json').version" 2>/dev/null || true; }
components="@modelcontextprotocol/sdk:$sdk_version @modelcontextprotocol/inspector:$inspector_version"
missing=
for component in $components; do
    [ "$(installed "${component%:*}")" = "${component##*:}" ] || missing=1
done
if [ -n "$missing" ] || [ ! -f "$inspector" ]; then
    echo "== installing @modelcontextprotocol/sdk $sdk_version and @modelcontextprotocol/inspector $inspector_version into $cache"
    npm_install "$cache" "@modelcontextprotocol/sdk@$sdk_version" "@modelcontextprotocol/inspector@$inspector_version"
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
if [ ! -f "$inspector" ]; then
    echo "FAILED: the Inspector's launcher is not at $inspector" >&2
    exit 1
fi
echo "== node $("$node" --version), @modelcontextprotocol/sdk $sdk_version, @modelcontextprotocol/inspector $inspector_version"
if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi

example_binaries

echo "== Python SDK sse_client (tests/python/test_legacy_sse.py)"
scripts/interop.sh -k test_legacy_sse

start_everything /sse

echo "== TypeScript SDK SSEClientTransport (tests/node/legacy_sse.cjs) against $url"
timeout 120 "$node" tests/node/legacy_sse.cjs "$modules" "$url"

echo "== MCP Inspector CLI --transport sse against $url"
# The Inspector keeps a catalog and storage under $HOME: give it a throwaway one.
inspect() {
    HOME="$work/home" MCP_CATALOG_PATH="$work/home/mcp.json" \
        timeout 120 "$node" "$inspector" --cli "$url" --transport sse "$@"
}
mkdir -p "$work/home"
inspect --method tools/list >"$work/list.json"
inspect --method tools/call --tool-name test_structured_content --tool-arg city=Paris >"$work/call.json"
python3 - "$work/list.json" "$work/call.json" <<'PY'
import json, sys
listed = json.load(open(sys.argv[1]))
names = {tool["name"] for tool in listed["tools"]}
missing = {"test_simple_text", "test_structured_content", "test_error_handling"} - names
assert not missing, f"tools/list over SSE lacks {sorted(missing)}"
called = json.load(open(sys.argv[2]))
expected = {"city": "Paris", "temperature": 21.5, "conditions": "sunny"}
assert called.get("structuredContent") == expected, called
assert not called.get("isError"), called
print(f"ok: Inspector CLI over SSE: {len(names)} tools listed, test_structured_content called")
PY
echo "== all three legacy clients connected"
