#!/usr/bin/env bash
# The user guide (guide/), built and checked as CI does:
#
# 1. its sources: every Rust and TOML block an include of a file that is built, every include
#    and anchor found (tests/guide/check_sources.py); the two snippets that need what
#    `cargo test --workspace` does not build, compiled: the rmcp side of "Coming from rmcp"
#    (guide/peers/rmcp, rmcp 3.11) and the OpenTelemetry example (`otlp`, feature `otel`);
# 2. `mdbook build guide`, with no warning;
# 3. the built book (tests/guide/test_guide.py): every internal link of every page and its
#    `#anchor` resolves in the built HTML (the web is not fetched); then in headless Chromium
#    (Debian's, driven by Playwright from the project's Python venv) the sidebar is followed
#    through every page, each renders without a console error, and the search finds a word
#    (tests/guide/test_guide.py).
#
# The guide's code itself (guide/snippets, guide/recipes) is compiled and tested by
# `cargo test --workspace`; scripts/first-hour.sh builds the recipes in new crates.
#
# mdbook is installed from crates.io into .cache/mdbook, pinned
# (scripts/mdbook.sh); chromium with apt-get and Playwright into the venv (scripts/chromium.sh),
# when missing. Whatever cannot be installed fails the script.
#
#   scripts/guide.sh             # everything
#   scripts/guide.sh -k search   # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

# mdbook, pinned, from crates.io (scripts/mdbook.sh).
mdbook=$(scripts/mdbook.sh)
export PATH="$(dirname "$mdbook"):$PATH"

echo "== the guide's sources"
python3 tests/guide/check_sources.py
echo "== the snippets cargo test does not build: rmcp's side of the comparison, the OTLP example"
cargo check --quiet --locked --manifest-path guide/peers/rmcp/Cargo.toml \
    --target-dir "$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
cargo check --quiet --locked -p mcp-examples --example otlp --features otel

echo "== mdbook build guide ($(mdbook --version))"
rm -rf guide/book
if ! mdbook build guide 2>&1 | tee guide/.mdbook.log; then
    echo "FAIL: mdbook build guide" >&2
    exit 1
fi
# mdbook reports some problems (a missing include, an unclosed tag) as warnings and goes on.
if grep -E '(WARN|ERROR)' guide/.mdbook.log; then
    echo "FAIL: mdbook warned (above)" >&2
    exit 1
fi
rm -f guide/.mdbook.log
test -f guide/book/index.html || { echo "FAIL: no guide/book/index.html" >&2; exit 1; }

# Debian's chromium and Playwright in the project's venv (scripts/chromium.sh).
. scripts/chromium.sh
chromium_browser
CHROMIUM_BIN=$chromium
export CHROMIUM_BIN
GUIDE_BOOK="$PWD/guide/book"
export GUIDE_BOOK
echo "== pytest tests/guide against $GUIDE_BOOK"
exec "$venv/bin/python" -m pytest tests/guide -p no:cacheprovider --timeout 300 -q -rfE "$@"
