#!/usr/bin/env bash
# Installs the OpenID Certified `oidc-provider` (npm) into .cache/oidc (or $OIDC_CACHE), for the
# OAuth tests (tests/integration/oauth.rs start tests/oidc/provider.mjs with it, and run this
# script themselves when it is missing), and the shared Node 22 (scripts/node.sh, .cache/node)
# that runs it. Nothing is installed globally.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node.sh
node22
cache="${OIDC_CACHE:-$PWD/.cache/oidc}"
if [ ! -f "$cache/node_modules/oidc-provider/package.json" ]; then
    echo "== installing oidc-provider 9 into $cache"
    npm_install "$cache" oidc-provider@9
fi
echo "== oidc-provider $("$node" -p "require('$cache/node_modules/oidc-provider/package.json').version"), node $("$node" --version)"
