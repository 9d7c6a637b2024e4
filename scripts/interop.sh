#!/usr/bin/env bash
# Interop tests: the official MCP Python SDK client (mcp 2.3.0 from PyPI) against the `everything`
# example, over stdio and Streamable HTTP (127.0.0.1 only), in the handshake era (forced) and the
# stateless 2026-07-28 era (the client's auto mode), and over the deprecated HTTP+SSE transport
# (`sse_client`, tests/python/test_legacy_sse.py); and through the `gateway` example, whose
# upstreams (server-everything, mcp-server-time: scripts/client-upstreams.sh) it proxies
# (tests/python/test_gateway.py). The tests live in tests/python.
#
# The client is installed into a local virtual environment (.cache/py, or $INTEROP_VENV); nothing
# is installed globally. Needs python3 with venv and pip (tested with CPython 3.11).
#
#   scripts/interop.sh                    # build the example, run every test
#   scripts/interop.sh -k stateless       # extra arguments go to pytest
#   MCP_EVERYTHING_BIN=path/to/everything scripts/interop.sh   # use that binary (and the auth and
#                                         # gateway examples beside it, or $MCP_GATEWAY_BIN), build nothing
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/python-venv.sh
python_venv
echo "== $("$venv/bin/python" --version), mcp $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"

. scripts/everything-server.sh
example_binaries
# The gateway test's upstreams: Node 22 and server-everything, mcp-server-time (already in the
# venv above); nothing happens when they are there.
scripts/client-upstreams.sh
# The OAuth test (tests/python/test_oauth.py) runs the real oidc-provider.
scripts/oidc.sh
echo "== pytest tests/python against $MCP_EVERYTHING_BIN"

# Per-test timeout as a backstop; every wait inside the tests has its own, shorter bound.
exec "$venv/bin/python" -m pytest tests/python -p no:cacheprovider --timeout 120 -q -rfE "$@"
