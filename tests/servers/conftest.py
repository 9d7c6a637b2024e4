"""Fixtures of the reference servers' parity tests (see parity.py)."""

# `pytest_runtest_makereport` keeps each test's report for `server_log`.
from parity import pytest_runtest_makereport, server_log  # noqa: F401
