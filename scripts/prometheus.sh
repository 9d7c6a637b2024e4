#!/usr/bin/env bash
# Metrics a real Prometheus scrapes (issue 28): Debian's `prometheus` scraping `everything
# --metrics-port M`, driven by the official Python SDK client (mcp 2.3.0, the interop venv), the
# counts read back through Prometheus's HTTP query API; everything on 127.0.0.1. The tests live
# in tests/prometheus.
#
# prometheus is installed with apt-get when missing; if that fails the script fails loudly (it
# never skips). The package's own service is not used: the tests start their own, on free ports.
#
#   scripts/prometheus.sh              # install, build, run every test
#   scripts/prometheus.sh -k stdio     # extra arguments go to pytest
#   scripts/prometheus.sh --install-only   # prometheus and the venv; nothing built or run
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/debian.sh
debian_install prometheus
find_tool() { command -v "$1" || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } || true; }
PROMETHEUS_BIN="$(find_tool prometheus)"
export PROMETHEUS_BIN
echo "== $("$PROMETHEUS_BIN" --version 2>&1 | head -1)"

. scripts/python-venv.sh
python_venv
if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi

. scripts/everything-server.sh
example_binaries
echo "== pytest tests/prometheus against $MCP_EVERYTHING_BIN"
exec "$venv/bin/python" -m pytest tests/prometheus -p no:cacheprovider --timeout 120 -q -rfE "$@"
