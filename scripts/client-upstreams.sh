#!/usr/bin/env bash
# Installs the MCP servers that the client and gateway tests (tests/integration/client.rs and
# gateway.rs, tests/python/test_gateway.py through scripts/interop.sh) run as upstreams, none of
# them written here:
#   - @modelcontextprotocol/server-everything (npm, pinned) into .cache/client-upstreams (or
#     $CLIENT_UPSTREAMS_CACHE), run by the shared Node 22 (scripts/node.sh, .cache/node); it
#     speaks stdio, and Streamable HTTP with `streamableHttp`;
#   - the official Python SDK (mcp 2.3.0, tests/python/requirements.txt) and `mcp-server-time`
#     (PyPI, pinned there too) into .cache/py (or $INTEROP_VENV), the environment scripts/interop.sh
#     uses.
# The tests run this script themselves (once per test process); it does nothing when everything
# is there at the pinned versions, and fails, loudly, when something cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/node.sh
node22
everything_version=2026.8.31

cache="${CLIENT_UPSTREAMS_CACHE:-$PWD/.cache/client-upstreams}"
modules="$cache/node_modules"
installed() { "$node" -p "require('$modules/$1/package.json').version" 2>/dev/null || true; }
if [ "$(installed @modelcontextprotocol/server-everything)" != "$everything_version" ]; then
    echo "== installing @modelcontextprotocol/server-everything $everything_version into $cache" >&2
    npm_install "$cache" "@modelcontextprotocol/server-everything@$everything_version"
fi
got=$(installed @modelcontextprotocol/server-everything)
if [ "$got" != "$everything_version" ]; then
    echo "FAILED: @modelcontextprotocol/server-everything $everything_version is not installed in $cache (found: ${got:-nothing})" >&2
    exit 1
fi

. scripts/python-venv.sh
python_venv
for module in mcp mcp_server_time; do
    if ! "$venv/bin/python" -c "import $module" 2>/dev/null; then
        echo "FAILED: the Python module $module is not importable from $venv" >&2
        exit 1
    fi
done
echo "== node $("$node" --version), server-everything $everything_version, $("$venv/bin/python" --version), mcp-server-time $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp-server-time"))')" >&2
