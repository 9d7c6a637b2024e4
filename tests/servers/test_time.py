"""Parity: `mcp-server-time` against the PyPI `mcp-server-time` (pinned in
tests/python/requirements.txt). The same session, with `--local-timezone Europe/Paris`, runs
against each; the tool lists and every result are compared. The current time differs between
the two runs, so `get_current_time`'s datetime is compared by its shape and offset only.

Intended differences, each asserted below where it shows:
- JSON_TEXT: a result's text block is its JSON written compactly by ours, indented by the
  original; both hold the same JSON, and the same `structuredContent`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from parity import assert_same, collapse, outcome, run, tool_surface
from pypi import implementations

IMPLEMENTATIONS = implementations("time", "--local-timezone", "Europe/Paris")

# A datetime as both print it: 2026-12-02T05:07:08+01:00, the seconds' digits replaced.
NOW = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"

SESSION: list[tuple[str, dict[str, Any]]] = [
    ("get_current_time", {"timezone": "Europe/Paris"}),
    ("get_current_time", {"timezone": "Asia/Kathmandu"}),
    ("get_current_time", {"timezone": "UTC"}),
    ("get_current_time", {"timezone": "Nowhere/City"}),
    ("get_current_time", {"timezone": ""}),
    ("get_current_time", {"timezone": "europe/paris"}),
    ("get_current_time", {"timezone": "../../etc/passwd"}),
    ("convert_time", {"source_timezone": "America/New_York", "time": "16:30", "target_timezone": "Asia/Tokyo"}),
    ("convert_time", {"source_timezone": "Europe/London", "time": "00:00", "target_timezone": "Australia/Adelaide"}),
    ("convert_time", {"source_timezone": "Asia/Kolkata", "time": "23:59", "target_timezone": "America/St_Johns"}),
    ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Pacific/Chatham"}),
    ("convert_time", {"source_timezone": "UTC", "time": "25:00", "target_timezone": "Asia/Tokyo"}),
    ("convert_time", {"source_timezone": "UTC", "time": "4pm", "target_timezone": "Asia/Tokyo"}),
    ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Mars/Olympus"}),
    ("convert_time", {"source_timezone": "Nowhere", "time": "12:00", "target_timezone": "UTC"}),
]


async def session(implementation, log) -> dict[str, Any]:
    async with implementation.connect(log) as client:
        tools = await client.list_tools()
        results = []
        for name, arguments in SESSION:
            result = outcome(await client.call_tool(name, arguments))
            if not result["isError"]:
                # JSON_TEXT: the text block as the JSON it holds.
                block = result["content"][0]
                block["json"] = json.loads(block.pop("text"))
            results.append((name, arguments, collapse(NOW, "<now>", result)))
        return {"tools": tool_surface(tools.tools), "results": results}


def test_the_same_session_gives_the_same_tools_and_results(server_log):
    seen: dict[str, Any] = {}

    async def both():
        for label, implementation in IMPLEMENTATIONS.items():
            seen[label] = await session(implementation, server_log)

    run(both)
    assert_same(seen["ours"]["tools"], seen["original"]["tools"], "tools/list")
    assert set(seen["ours"]["tools"]) == {"get_current_time", "convert_time"}
    for ours, original in zip(seen["ours"]["results"], seen["original"]["results"], strict=True):
        assert_same(ours[2], original[2], f"{ours[0]} {ours[1]}")
    # The session reaches the failures it was written for, in both.
    errors = [result["isError"] for _, _, result in seen["ours"]["results"]]
    assert errors.count(True) == 8, errors
    first = seen["ours"]["results"][0][2]
    assert first["structured"]["timezone"] == "Europe/Paris"
    assert first["structured"]["datetime"].startswith("<now>"), first
