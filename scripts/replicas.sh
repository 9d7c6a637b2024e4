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
#   scripts/replicas.sh --install-only   # redis-server, haproxy and the venv; nothing built or run
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/debian.sh
debian_install redis-server haproxy
# The packages' own services are not used (the tests start their own on free ports).
echo "== $(redis-server --version | cut -d' ' -f1-3), $(haproxy -v | head -1 | cut -d' ' -f1-3)"

. scripts/python-venv.sh
python_venv
if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi

. scripts/everything-server.sh
example_binaries
echo "== pytest tests/replicas against $MCP_EVERYTHING_BIN"
exec "$venv/bin/python" -m pytest tests/replicas -p no:cacheprovider --timeout 120 -q -rfE "$@"
