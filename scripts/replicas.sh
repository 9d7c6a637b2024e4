#!/usr/bin/env bash
# Replica tests (issue 20): a real redis-server and haproxy (Debian's packages) with three
# `everything --redis URL --port PORT` replicas behind HAProxy round-robin, no sticky sessions,
# all on 127.0.0.1; the official Python SDK client (mcp 2.3.0, the interop venv) and raw HTTP
# through the balancer. The tests live in tests/replicas.
#
# redis-server and haproxy are installed with apt-get when missing; if that fails the script
# fails loudly (it never skips).
#
#   scripts/replicas.sh                  # install, build, run every test
#   scripts/replicas.sh -k killed        # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

find_tool() { command -v "$1" || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } || true; }
if [ -z "$(find_tool redis-server)" ] || [ -z "$(find_tool haproxy)" ]; then
    echo "== installing redis-server and haproxy (Debian)"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server haproxy; }; then
        echo "FAIL: could not install redis-server and haproxy with apt-get: the replica tests cannot run" >&2
        exit 1
    fi
fi
# The packages' own services are not used (the tests start their own on free ports).
echo "== $(redis-server --version | cut -d' ' -f1-3), $(haproxy -v | head -1 | cut -d' ' -f1-3)"

. scripts/python-venv.sh
python_venv

. scripts/everything-server.sh
everything_binary
echo "== pytest tests/replicas against $MCP_EVERYTHING_BIN"
exec "$venv/bin/python" -m pytest tests/replicas -p no:cacheprovider --timeout 120 -q -rfE "$@"
