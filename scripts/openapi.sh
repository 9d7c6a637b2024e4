#!/usr/bin/env bash
# `openapi!` against real published descriptions and a real API server: the servers generated
# from GitHub's REST API (`@octokit/openapi`, its `issues` operations), Directus
# (`@directus/specs`, OpenAPI 3.0) and Scalar's Galaxy (`@scalar/galaxy`, OpenAPI 3.1), each
# called by the official Python SDK client (mcp 2.3.0) while Stoplight Prism
# (`@stoplight/prism-cli`) serves the same description on 127.0.0.1 and validates every request
# (tests/openapi/test_openapi.py). Then the whole GitHub description (1,223 operations, the 25
# whose names pass 64 characters renamed) is compiled once, to prove it compiles.
#
# Prism and the descriptions go into .cache/openapi (or $OPENAPI_CACHE), run by the shared Node 22
# (scripts/node.sh), the Python client into .cache/py (as scripts/interop.sh installs it); nothing
# is installed globally. The servers are built with the whole workspace's features (as `cargo test
# --workspace` builds the runtime, so that build's runtime is reused).
#
#   scripts/openapi.sh            # install what is missing, build, test, compile all of GitHub
#   scripts/openapi.sh -k galaxy  # extra arguments go to pytest (and skip the whole-GitHub build)
#   scripts/openapi.sh --install-only   # Node, Prism, the descriptions and the client; nothing run
#   scripts/openapi.sh --build-only     # install, build the three servers; nothing run
#   scripts/openapi.sh --tests-only     # install, build (unless $OPENAPI_BIN_DIR names the built
#                                       # servers), test; the whole description is not compiled
#   scripts/openapi.sh --whole-only     # install, compile the whole GitHub description
set -euo pipefail
cd "$(dirname "$0")/.."

mode=
case "${1:-}" in
    --install-only | --build-only | --tests-only | --whole-only) mode=$1; shift ;;
esac

. scripts/node.sh
node22
cache="${OPENAPI_CACHE:-$PWD/.cache/openapi}"
packages=(@stoplight/prism-cli@5.16.0 @octokit/openapi@23.0.2 @directus/specs@15.2.0 @scalar/galaxy@0.6.12)
stamp="$cache/.installed"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "${packages[*]}" ]; then
    echo "== installing ${packages[*]} into $cache"
    npm_install "$cache" "${packages[@]}"
    echo "${packages[*]}" >"$stamp"
fi
prism="$cache/node_modules/@stoplight/prism-cli/dist/index.js"
echo "== Node $("$node" --version), Prism $("$node" -p "require('$cache/node_modules/@stoplight/prism-cli/package.json').version")"

. scripts/python-venv.sh
python_venv

if [ "$mode" = --install-only ]; then
    exit 0
fi

if [ "$mode" != --whole-only ]; then
    if [ -z "${OPENAPI_BIN_DIR:-}" ]; then
        echo "== building the servers generated from the published descriptions"
        # With an example, so the dev-dependencies' features are those `cargo test --workspace`
        # unifies and the runtime that command built is reused.
        cargo build --workspace --features mcp-tests/published-apis --example everything --locked \
            --quiet --bin openapi-github --bin openapi-directus --bin openapi-galaxy
        target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
        OPENAPI_BIN_DIR="$target_dir/debug"
    fi
    if [ "$mode" = --build-only ]; then
        exit 0
    fi
    export OPENAPI_BIN_DIR PRISM="$node:$prism"
    echo "== pytest tests/openapi (Prism validating, the Python SDK client calling)"
    "$venv/bin/python" -m pytest tests/openapi -p no:cacheprovider --timeout 600 -q -rfE "$@"
fi

if [ "$mode" = --whole-only ] || { [ -z "$mode" ] && [ "$#" -eq 0 ]; }; then
    echo "== the whole GitHub description (every operation), compiled"
    start=$(date +%s)
    cargo build --workspace --features mcp-tests/github-whole --example everything --locked --quiet \
        --bin openapi-github-whole
    echo "== compiled in $(( $(date +%s) - start )) s"
fi
