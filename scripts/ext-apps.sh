#!/usr/bin/env bash
# Installs the MCP Apps SDK (@modelcontextprotocol/ext-apps 2.0.4, from npm) into a local cache
# (.cache/apps, or $EXT_APPS_CACHE), nothing global: the integration test `apps` validates the
# app page's `_meta.ui` and the tool's `_meta.ui` against the JSON schemas that package ships
# (dist/src/generated/schema.json). The test runs this script itself when the schemas are
# missing, and fails, naming it, when it cannot install them. With `--test`, also runs that test.
set -euo pipefail
cd "$(dirname "$0")/.."

version=2.0.4
cache="${EXT_APPS_CACHE:-$PWD/.cache/apps}"
package="$cache/node_modules/@modelcontextprotocol/ext-apps"
installed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$package/package.json" 2>/dev/null || true)
if [ "$installed" != "$version" ]; then
    echo "== installing @modelcontextprotocol/ext-apps@$version into $cache"
    . scripts/node.sh
    npm_install "$cache" "@modelcontextprotocol/ext-apps@$version"
fi
test -f "$package/dist/src/generated/schema.json"
echo "== @modelcontextprotocol/ext-apps $version: $package/dist/src/generated/schema.json"
if [ "${1:-}" = "--test" ]; then
    EXT_APPS_SCHEMA="$package/dist/src/generated/schema.json" \
        cargo test -p mcp-tests --test integration --locked -- apps::
fi
