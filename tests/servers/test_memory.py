"""Parity: `mcp-server-memory` against `@modelcontextprotocol/server-memory` (pinned in
scripts/servers.sh). The same session runs against each with its own `MEMORY_FILE_PATH`; the
tool lists, every result, the resource and the file left behind (byte for byte) are compared.
Each reads the file the other wrote, so a user switches with their data.

Intended differences, each asserted below where it shows:
- BATCH_DUPLICATES: an entity (or relation) named twice in one `create_entities`
  (`create_relations`) call is created once by ours, twice by the original.
- CONCURRENT_CHANGES: calls that change the graph at the same time each see the others' changes
  in ours (one change at a time); the original reads and writes the file for each call
  concurrently, so it may lose some. Ours must keep all; the original's count is only reported.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest

from parity import assert_same, implementations, outcome, run, tool_surface

IMPLEMENTATIONS = implementations("memory")
GRAPH_URI = "memory://knowledge-graph"

SESSION: list[tuple[str, dict[str, Any]]] = [
    ("read_graph", {}),
    (
        "create_entities",
        {
            "entities": [
                {"name": "Ada", "entityType": "person", "observations": ["mathematician"]},
                {"name": "Bob", "entityType": "person", "observations": []},
                {"name": "Engine", "entityType": "machine", "observations": ["steam \"powered\"", "caf\u00e9 \u2713"]},
            ]
        },
    ),
    (
        "create_entities",
        {
            "entities": [
                {"name": "Ada", "entityType": "robot", "observations": []},
                {"name": "Carol", "entityType": "person", "observations": ["new"]},
            ]
        },
    ),
    (
        "create_relations",
        {
            "relations": [
                {"from": "Ada", "to": "Engine", "relationType": "programmed"},
                {"from": "Bob", "to": "Ada", "relationType": "admires"},
            ]
        },
    ),
    (
        "create_relations",
        {
            "relations": [
                {"from": "Ada", "to": "Engine", "relationType": "programmed"},
                {"from": "Carol", "to": "Bob", "relationType": "knows"},
            ]
        },
    ),
    ("add_observations", {"observations": [{"entityName": "Ada", "contents": ["mathematician", "born 1815"]}]}),
    ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
    ("read_graph", {}),
    ("search_nodes", {"query": "ada"}),
    ("search_nodes", {"query": "MACHINE"}),
    ("search_nodes", {"query": "born"}),
    ("search_nodes", {"query": "nothing at all"}),
    ("open_nodes", {"names": ["Ada", "Nobody"]}),
    ("open_nodes", {"names": []}),
    (
        "delete_observations",
        {"deletions": [{"entityName": "Ada", "observations": ["born 1815"]}, {"entityName": "Nobody", "observations": ["x"]}]},
    ),
    ("delete_relations", {"relations": [{"from": "Bob", "to": "Ada", "relationType": "admires"}]}),
    ("delete_entities", {"entityNames": ["Carol", "Nobody"]}),
    ("read_graph", {}),
]
BATCH_DUPLICATES = (
    "create_entities",
    {
        "entities": [
            {"name": "Twin", "entityType": "x", "observations": []},
            {"name": "Twin", "entityType": "x", "observations": []},
        ]
    },
)
CONCURRENT = 40


class Run:
    tools: dict[str, Any]
    raw_tools: list
    session: list[dict[str, Any]]
    resources: list[dict[str, Any]]
    resource_text: str
    file: bytes
    read_back: dict[str, Any]  # read_graph of the file the other implementation wrote
    batch_duplicates: dict[str, Any]
    concurrent_kept: int


async def session(implementation, log, path: Path, got: Run) -> None:
    async with implementation.connect(log, env={"MEMORY_FILE_PATH": str(path)}) as client:
        listed = await client.list_tools()
        got.raw_tools = listed.tools
        got.tools = tool_surface(listed.tools)
        got.session = [outcome(await client.call_tool(tool, args)) for tool, args in SESSION]
        resources = await client.list_resources()
        got.resources = [r.model_dump(mode="json", exclude_none=True, by_alias=True) for r in resources.resources]
        read = await client.read_resource(GRAPH_URI)
        got.resource_text = read.contents[0].text


async def read_graph(implementation, log, path: Path) -> dict[str, Any]:
    async with implementation.connect(log, env={"MEMORY_FILE_PATH": str(path)}) as client:
        return outcome(await client.call_tool("read_graph", {}))


async def extras(implementation, log, base: Path, got: Run) -> None:
    async with implementation.connect(log, env={"MEMORY_FILE_PATH": str(base / "extras.jsonl")}) as client:
        got.batch_duplicates = outcome(await client.call_tool(*BATCH_DUPLICATES))
        await client.call_tool(
            "create_entities", {"entities": [{"name": "Busy", "entityType": "counter", "observations": []}]}
        )

        async def add(i: int) -> None:
            result = await client.call_tool(
                "add_observations", {"observations": [{"entityName": "Busy", "contents": [f"observation {i}"]}]}
            )
            assert not result.is_error, result

        async with anyio.create_task_group() as group:
            for i in range(CONCURRENT):
                group.start_soon(add, i)
        graph = json.loads((await client.call_tool("open_nodes", {"names": ["Busy"]})).content[0].text)
        got.concurrent_kept = len(graph["entities"][0]["observations"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Run]:
    log = open(tmp_path_factory.mktemp("logs") / "servers.log", "w+")
    base = Path(tempfile.mkdtemp(prefix="memory-parity-"))
    out: dict[str, Run] = {}
    try:
        for label, implementation in IMPLEMENTATIONS.items():
            got = Run()
            (base / label).mkdir()
            path = base / label / "memory.jsonl"
            run(session, implementation, log, path, got)
            got.file = path.read_bytes()
            run(extras, implementation, log, base / label, got)
            out[label] = got
        # Each reads the file the other wrote.
        for label, other in (("ours", "original"), ("original", "ours")):
            copy = base / f"{label}-reads-{other}.jsonl"
            shutil.copy(base / other / "memory.jsonl", copy)
            out[label].read_back = {}
            result: dict[str, Any] = {}

            async def read_back() -> None:
                result.update(await read_graph(IMPLEMENTATIONS[label], log, copy))

            run(read_back)
            out[label].read_back = result
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def test_the_tools_are_the_originals(runs) -> None:
    original, ours = runs["original"].tools, runs["ours"].tools
    assert sorted(ours) == sorted(original)
    for name in original:
        assert_same(ours[name], original[name], name)


@pytest.mark.parametrize("step", range(len(SESSION)), ids=[f"{i}-{t}" for i, (t, _) in enumerate(SESSION)])
def test_each_result_is_the_originals(runs, step) -> None:
    assert_same(runs["ours"].session[step], runs["original"].session[step], SESSION[step])


def test_the_missing_entity_is_named(runs) -> None:
    failed = runs["ours"].session[6]
    assert failed["isError"] and failed["content"][0]["text"] == "Entity with name Nobody not found"


def test_the_resource_is_the_originals(runs) -> None:
    assert_same(runs["ours"].resources, runs["original"].resources, "resources/list")
    assert_same(runs["ours"].resource_text, runs["original"].resource_text, "the graph resource")


def test_the_file_is_the_originals_byte_for_byte(runs) -> None:
    ours, original = runs["ours"].file, runs["original"].file
    assert ours == original
    lines = ours.decode().split("\n")
    assert json.loads(lines[0]) == {
        "type": "entity",
        "name": "Ada",
        "entityType": "person",
        "observations": ["mathematician"],
    }


def test_each_reads_the_file_the_other_wrote(runs) -> None:
    final = runs["original"].session[-1]
    assert_same(runs["ours"].read_back, final, "ours reading the original's file")
    assert_same(runs["original"].read_back, final, "the original reading our file")


def test_a_name_twice_in_one_call_is_created_once(runs) -> None:
    # BATCH_DUPLICATES
    ours = json.loads(runs["ours"].batch_duplicates["content"][0]["text"])
    original = json.loads(runs["original"].batch_duplicates["content"][0]["text"])
    assert [e["name"] for e in ours] == ["Twin"]
    assert [e["name"] for e in original] == ["Twin", "Twin"]


def test_concurrent_changes_are_all_kept(runs) -> None:
    # CONCURRENT_CHANGES
    print(f"of {CONCURRENT} concurrent add_observations the original kept {runs['original'].concurrent_kept}")
    assert runs["ours"].concurrent_kept == CONCURRENT
