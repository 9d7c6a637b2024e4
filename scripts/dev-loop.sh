#!/usr/bin/env bash
# The developer-loop tests (tests/dev): `cargo mcp new`, then `cargo mcp dev` on the new crate,
# driven by the official Python SDK client (mcp 2.3.0) over Streamable HTTP and over
# `cargo mcp dev --stdio`, and the dev page in headless Chromium (Debian's) through Playwright
# (PyPI), with an MCP App written against @modelcontextprotocol/ext-apps 2.0.4 (npm) and
# skills_apps' weather page. Installs what it needs, pinned, into .cache (nothing global but
# Debian's chromium), and fails loudly when it cannot.
#
#   scripts/dev-loop.sh                       # build cargo-mcp, run every test
#   scripts/dev-loop.sh -k stdio              # extra arguments go to pytest
#   DEV_PAGE_SCREENSHOTS=cargo-mcp/docs scripts/dev-loop.sh -k page   # and write the screenshots
#
# The new crates build in target/dev-loop (DEV_LOOP_TARGET), shared between the tests and kept
# between runs, so the runtime and its dependencies compile once.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/python-venv.sh
python_venv
# Debian's chromium and Playwright in the one venv, as the other browser tests take them.
. scripts/chromium.sh
chromium_browser
command -v chromium >/dev/null || { echo "FAILED: chromium is not on PATH" >&2; exit 1; }
scripts/ext-apps.sh

if [ -z "${CARGO_MCP_BIN:-}" ]; then
    echo "== building cargo-mcp"
    cargo build -p mcp-runtime-cli --locked --quiet
    target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    CARGO_MCP_BIN="$target_dir/debug/cargo-mcp"
fi
export CARGO_MCP_BIN
echo "== $("$venv/bin/python" --version), mcp $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))'), playwright $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("playwright"))'), $(chromium --version 2>/dev/null)"
echo "== pytest tests/dev with $CARGO_MCP_BIN"
exec "$venv/bin/python" -m pytest tests/dev -p no:cacheprovider --timeout 3000 -q -rfE "$@"
