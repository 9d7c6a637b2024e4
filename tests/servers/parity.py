"""What the parity tests of the reference servers (servers/) share: each server's session runs
against the original and against ours, both over stdio, driven by the official Python SDK client
(`mcp` 2.3.0) in the handshake era the originals speak.

Run through `scripts/servers.sh`, which installs the pinned originals and builds ours, and sets
`SERVERS_NODE` (Node 22) and, per server, `ORIGINAL_<NAME>` (the original's entry script) and
`OURS_<NAME>` (our binary).
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[2]
sys.path.append(str(REPO / "tests" / "python"))
from local_servers import pytest_runtest_makereport, run_within, stderr_log  # noqa: E402, F401

REQUEST_TIMEOUT = 20.0  # each request's read timeout
SESSION_TIMEOUT = 120.0  # a whole session, start and shutdown included


@dataclass
class Implementation:
    """One side of a comparison: how to start it."""

    label: str  # "original" | "ours"
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)

    @asynccontextmanager
    async def connect(self, log, env: dict[str, str] | None = None, cwd: str | None = None, **client_kwargs: Any):
        """A `Client` in the handshake era (mode="legacy"), the era the originals speak."""
        params = StdioServerParameters(
            command=self.command[0],
            args=self.command[1:],
            env={**os.environ, **self.env, **(env or {})},
            cwd=cwd,
        )
        async with Client(
            stdio_client(params, errlog=log), mode="legacy", read_timeout_seconds=REQUEST_TIMEOUT, **client_kwargs
        ) as client:
            yield client


def implementations(name: str) -> dict[str, Implementation]:
    """The original and ours for server `name`, from the variables scripts/servers.sh sets."""
    original = os.environ.get(f"ORIGINAL_{name.upper()}")
    ours = os.environ.get(f"OURS_{name.upper()}")
    node = os.environ.get("SERVERS_NODE")
    if not (original and ours and node):
        pytest.exit(f"run scripts/servers.sh {name}: it installs the original and builds ours", 2)
    for path in (original, ours, node):
        if not Path(path).is_file():
            pytest.exit(f"{path} does not exist: run scripts/servers.sh {name}", 2)
    return {
        "original": Implementation("original", [node, original]),
        "ours": Implementation("ours", [ours]),
    }


@pytest.fixture
def server_log(request):
    """A file for the servers' stderr, printed when the test fails."""
    yield from stderr_log(request, "servers-", "servers' stderr")


def run(scenario, *args) -> None:
    """Runs an async scenario under the session deadline."""
    run_within(SESSION_TIMEOUT, scenario, *args)


def schema_shape(schema: dict[str, Any] | None, root: dict[str, Any] | None = None) -> Any:
    """A schema as the comparison sees it: types, properties, required names and items, with
    `$ref`s into the root's `$defs` followed; descriptions, titles and `$schema` left out (each
    framework words and versions them its own way)."""
    if schema is None:
        return None
    root = schema if root is None else root
    ref = schema.get("$ref", "")
    if ref.startswith("#/$defs/") or ref.startswith("#/definitions/"):
        name = ref.rsplit("/", 1)[1]
        defs = root.get("$defs") or root.get("definitions") or {}
        return schema_shape(defs.get(name, {}), root)
    if "enum" in schema:
        return ("enum", tuple(schema["enum"]))
    if "anyOf" in schema:
        return ("anyOf", tuple(schema_shape(s, root) for s in schema["anyOf"]))
    if schema.get("type") == "array":
        return ("array", schema_shape(schema.get("items", {}), root))
    if schema.get("type") == "object":
        props = schema.get("properties", {})
        return (
            "object",
            tuple(sorted((k, schema_shape(v, root)) for k, v in props.items())),
            tuple(sorted(schema.get("required", []))),
        )
    return schema.get("type")


def tool_surface(tools: list[types.Tool]) -> dict[str, dict[str, Any]]:
    """What the comparison holds each tool to: its arguments (name, type, required), the shape of
    its `outputSchema`, its description and title with whitespace collapsed, and its
    annotations."""

    def arg_type(schema: dict[str, Any]) -> Any:
        if "enum" in schema:
            return ("enum", tuple(schema["enum"]))
        if schema.get("type") == "array":
            return ("array", arg_type(schema.get("items", {})))
        if schema.get("type") == "object":
            props = schema.get("properties", {})
            return ("object", tuple(sorted((k, arg_type(v)) for k, v in props.items())), tuple(sorted(schema.get("required", []))))
        return schema.get("type")

    out = {}
    for tool in tools:
        schema = tool.input_schema
        annotations = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
        annotations.pop("title", None)
        out[tool.name] = {
            "arguments": {name: arg_type(prop) for name, prop in schema.get("properties", {}).items()},
            "required": sorted(schema.get("required", [])),
            "output": schema_shape(tool.output_schema),
            "description": " ".join((tool.description or "").split()),
            "title": tool.title,
            "annotations": annotations,
        }
    return out


def outcome(result: types.CallToolResult, replace: dict[str, str] | None = None) -> dict[str, Any]:
    """A call's result as the comparison sees it: error or not, each block (text with the
    run's own paths replaced), and the structured content likewise."""

    def clean(text: str) -> str:
        for old, new in (replace or {}).items():
            text = text.replace(old, new)
        return text

    def clean_value(value: Any) -> Any:
        if isinstance(value, str):
            return clean(value)
        if isinstance(value, list):
            return [clean_value(v) for v in value]
        if isinstance(value, dict):
            return {k: clean_value(v) for k, v in value.items()}
        return value

    blocks = [clean_value(block.model_dump(mode="json", exclude_none=True, by_alias=True)) for block in result.content]
    return {
        "isError": bool(result.is_error),
        "content": blocks,
        "structured": clean_value(result.structured_content),
    }


def assert_same(ours: Any, original: Any, what: Any) -> None:
    """`ours == original`, or a failure showing where they differ, line by line."""
    if ours == original:
        return
    import difflib
    import json

    def lines(value: Any) -> list[str]:
        text = json.dumps(value, indent=1, ensure_ascii=False, default=repr, sort_keys=True)
        return text.replace("\\n", "\\n\n").splitlines()

    diff = "\n".join(difflib.unified_diff(lines(original), lines(ours), "original", "ours", lineterm=""))
    pytest.fail(f"{what}: ours differs from the original\n{diff}")


def collapse(pattern: str, replacement: str, value: Any) -> Any:
    """`value` with every match of `pattern` in its strings replaced (for times and ids that
    differ from run to run)."""
    if isinstance(value, str):
        return re.sub(pattern, replacement, value)
    if isinstance(value, list):
        return [collapse(pattern, replacement, v) for v in value]
    if isinstance(value, dict):
        return {k: collapse(pattern, replacement, v) for k, v in value.items()}
    return value
