#!/usr/bin/env bash
# Parity tests of the reference servers in servers/: each server's scripted session, driven by
# the official Python SDK client (mcp 2.3.0, tests/python/requirements.txt), runs against the
# original (installed here, pinned) and against ours, and tests/servers/test_<server>.py
# compares their tool lists and results. Everything speaks stdio; nothing listens on a port.
#
#   scripts/servers.sh                      # every server
#   scripts/servers.sh filesystem memory    # some of them
#   scripts/servers.sh memory -k concurrent # one server, extra arguments to pytest
#
# The originals go into .cache/servers (or $SERVERS_CACHE): npm packages, run by the project's
# one Node 22 (scripts/node.sh); PyPI packages into the interop venv (.cache/py). A component that
# cannot be installed at its pinned version fails the run, loudly. Ours are built (debug) from
# this checkout.
#
# One function per server, `server_<name>`: it installs its original, builds ours, exports the
# variables its tests read and runs them. To add a server, add its function and its name to
# `all_servers`.
set -euo pipefail
cd "$(dirname "$0")/.."

all_servers=(filesystem memory time fetch)

cache="${SERVERS_CACHE:-$PWD/.cache/servers}"
modules="$cache/node_modules"

. scripts/node.sh

. scripts/python-venv.sh
python_venv
target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

# npm_original PACKAGE VERSION: PACKAGE@VERSION in $cache, run by the project's one Node 22
# (scripts/node.sh); fails when it is missing afterwards.
npm_original() {
    local package=$1 version=$2
    node22
    installed() { "$node" -p "require('$modules/$package/package.json').version" 2>/dev/null || true; }
    if [ "$(installed)" != "$version" ]; then
        echo "== installing $package $version into $cache" >&2
        npm_install "$cache" "$package@$version"
    fi
    if [ "$(installed)" != "$version" ]; then
        echo "FAILED: $package $version is not installed in $cache (found: $(installed || true))" >&2
        exit 1
    fi
    export SERVERS_NODE="$node"
}

# ours PACKAGE: builds our server and prints its binary's path.
# Our server NAME, as the workspace builds it: on the workspace's features, which `cargo test
# --workspace` compiled the runtime with (`-p NAME` alone would resolve the runtime's features for
# that package and compile it again, once per server). .ci/run's feature-set step checks that
# each also builds on its own features.
ours() {
    cargo build --workspace --bins --locked --quiet >&2
    echo "$target_dir/debug/$1"
}

# run_tests FILE [PYTEST ARGS...]
run_tests() {
    local file=$1
    shift
    echo "== pytest $file" >&2
    # A per-test timeout as a backstop; every wait inside has its own, shorter bound.
    "$venv/bin/python" -m pytest "$file" -p no:cacheprovider --timeout 300 -q -rfE "$@"
}

server_filesystem() {
    npm_original @modelcontextprotocol/server-filesystem 2026.8.31
    export ORIGINAL_FILESYSTEM="$modules/@modelcontextprotocol/server-filesystem/dist/index.js"
    OURS_FILESYSTEM=$(ours mcp-server-filesystem)
    export OURS_FILESYSTEM
    run_tests tests/servers/test_filesystem.py "$@"
}

server_memory() {
    npm_original @modelcontextprotocol/server-memory 2026.8.31
    export ORIGINAL_MEMORY="$modules/@modelcontextprotocol/server-memory/dist/index.js"
    OURS_MEMORY=$(ours mcp-server-memory)
    export OURS_MEMORY
    run_tests tests/servers/test_memory.py "$@"
}

# pypi_original PACKAGE: prints the path of PACKAGE's console script in the interop venv, where
# tests/python/requirements.txt pins it; fails when it is not installed at that version.
pypi_original() {
    local package=$1 want got
    want=$(sed -n "s/^$package==//p" tests/python/requirements.txt)
    got=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$package'))" 2>/dev/null || true)
    if [ -z "$want" ] || [ "$got" != "$want" ] || [ ! -x "$venv/bin/$package" ]; then
        echo "FAILED: $package ${want:-(not pinned)} is not installed in $venv (found: ${got:-nothing})" >&2
        exit 1
    fi
    echo "$venv/bin/$package"
}

server_time() {
    ORIGINAL_TIME=$(pypi_original mcp-server-time)
    OURS_TIME=$(ours mcp-server-time)
    export ORIGINAL_TIME OURS_TIME
    run_tests tests/servers/test_time.py "$@"
}

# The fetch session fetches from HTTP servers the test starts on 127.0.0.1, never the internet.
server_fetch() {
    ORIGINAL_FETCH=$(pypi_original mcp-server-fetch)
    OURS_FETCH=$(ours mcp-server-fetch)
    export ORIGINAL_FETCH OURS_FETCH
    run_tests tests/servers/test_fetch.py "$@"
}

selected=()
while [ $# -gt 0 ] && [[ " ${all_servers[*]} " == *" $1 "* ]]; do
    selected+=("$1")
    shift
done
[ ${#selected[@]} -gt 0 ] || selected=("${all_servers[@]}")
echo "== reference servers against their pinned originals: ${selected[*]}"
for server in "${selected[@]}"; do
    "server_$server" "$@"
done
