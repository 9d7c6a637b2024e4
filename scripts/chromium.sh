#!/usr/bin/env bash
# The browser tests' components: Debian's `chromium` (apt-get, when missing; with
# fonts-liberation, so pages render text as a reader sees it) and Playwright (PyPI, pinned in
# tests/python/requirements.txt, in the one venv of scripts/python-venv.sh), which drives that
# chromium through `executable_path`: Playwright's own browser download is never used. Fails,
# loudly, when either cannot be installed. As root (CI), chromium needs `--no-sandbox`.
#
#   scripts/chromium.sh          # install what is missing; prints chromium's path on stdout
#   . scripts/chromium.sh; chromium_browser   # the same from a script: sets $chromium and $venv

chromium_browser() {
    . scripts/debian.sh
    . scripts/python-venv.sh
    debian_install chromium fonts-liberation
    chromium=$(command -v chromium || true)
    if [ -z "$chromium" ]; then
        echo "FAILED: chromium is installed but not on PATH" >&2
        return 1
    fi
    python_venv
    if ! "$venv/bin/python" -c 'import playwright' 2>/dev/null; then
        echo "FAILED: Playwright is not importable from $venv" >&2
        return 1
    fi
    echo "== $("$chromium" --version 2>/dev/null), Playwright $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("playwright"))')" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    cd "$(dirname "$0")/.."
    chromium_browser
    echo "$chromium"
fi
