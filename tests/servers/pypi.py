"""The PyPI originals (mcp-server-time, mcp-server-fetch): installed in the interop venv from
tests/python/requirements.txt, where they are pinned, and started with that venv's Python."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from parity import Implementation


def implementations(name: str, *args: str) -> dict[str, Implementation]:
    """The original and ours for server `name`, both started with `args`, from the variables
    scripts/servers.sh sets (`ORIGINAL_<NAME>`, the original's console script in the venv, and
    `OURS_<NAME>`, our binary)."""
    original = os.environ.get(f"ORIGINAL_{name.upper()}")
    ours = os.environ.get(f"OURS_{name.upper()}")
    if not (original and ours):
        pytest.exit(f"run scripts/servers.sh {name}: it installs the original and builds ours", 2)
    for path in (original, ours):
        if not Path(path).is_file():
            pytest.exit(f"{path} does not exist: run scripts/servers.sh {name}", 2)
    return {
        "original": Implementation("original", [original, *args]),
        "ours": Implementation("ours", [ours, *args]),
    }
