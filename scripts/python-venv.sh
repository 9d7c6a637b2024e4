# Sourced by the scripts that run the official Python SDK (not run): the one virtual environment
# of every Python test, .cache/py (or $INTEROP_VENV), with tests/python/requirements.txt installed
# (mcp 2.3.0, mcp-server-time, pytest, Playwright and their pinned dependencies). Nothing is
# installed globally; it is reinstalled when the requirements change. Needs python3 with venv and
# pip. The install takes a lock (flock on $venv/.install.lock), so scripts run side by side never
# install into it at once.
#
#   python_venv      # sets $venv; progress goes to stderr, so a caller's stdout stays its own

python_venv() {
    venv="${INTEROP_VENV:-$PWD/.cache/py}"
    local requirements=tests/python/requirements.txt stamp="$venv/.interop-requirements"
    if [ ! -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$stamp"; then
        mkdir -p "$venv"
        (
            flock 9
            if [ ! -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$stamp"; then
                echo "== installing $requirements into $venv" >&2
                python3 -m venv "$venv"
                "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
                cp "$requirements" "$stamp"
            fi
        ) 9>"$venv/.install.lock"
    fi
}
