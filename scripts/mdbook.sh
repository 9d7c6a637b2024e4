#!/usr/bin/env bash
# Installs mdBook (crates.io, pinned below) into .cache/mdbook (or $MDBOOK_ROOT) with
# `cargo install --locked`, when missing or another version; nothing global. Prints mdbook's path
# on stdout. Built from source, so a first install takes minutes of CPU: mdbook with the `search`
# feature only (what `mdbook build` and `mdbook test` use): `serve` and `watch` would add a web
# server and a file watcher (tokio, axum, notify) to that build. The guide's links are checked in
# the built HTML by tests/guide/test_guide.py, not by a link-checking renderer (whose own build,
# an HTTP client and a TLS stack, would cost more than the rest of the guide's step).
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.5.4
root="${MDBOOK_ROOT:-$PWD/.cache/mdbook}"
mdbook="$root/bin/mdbook"
installed() {
    [ "$("$mdbook" --version 2>/dev/null)" = "mdbook v$version" ]
}
if ! installed; then
    mkdir -p "$root"
    (
        flock 9
        if ! installed; then
            echo "== installing mdbook $version into $root" >&2
            cargo install mdbook --version "$version" --locked --root "$root" --quiet \
                --no-default-features --features search >&2
        fi
    ) 9>"$root/.install.lock"
fi
if ! installed; then
    echo "FAILED: mdbook $version is not installed in $root" >&2
    exit 1
fi
echo "$mdbook"
