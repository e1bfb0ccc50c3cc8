"""Drift and mutations in OpenCode streams (DESIGN §6 rules 19-20), each built by changing the
bytes of a real capture: what the adapter does not understand is drift (kind, name, count, first
line), never a failed or absent read; the honest captures carry none."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.contracts.enums import DriftKind
from tests._support.drift_support import Line, drift_raw, mutated_raw, no_failed_reads, record_raw
from tests.conftest import DATA

FORMAT = "opencode"
FOLDER = DATA / "opencode"
HONEST = FOLDER / "opencode_capture.jsonl"
EDIT = FOLDER / "content_opencode_edit_then_read.jsonl"
REAL = [
    *(p for p in sorted(FOLDER.glob("*.jsonl")) if not p.name.startswith("crafted_")),
    *sorted((DATA / "hostile").glob("opencode_*.jsonl")),
]


def tool_lines(lines: list[bytes], kind: str) -> list[int]:
    return [n for n, raw in enumerate(lines, 1) if json.loads(raw).get("type") == kind]


def part_of(obj: Line, **changes: Any) -> Line:
    return {**obj, "part": {**obj["part"], **changes}}


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_honest_real_captures_carry_no_drift(path: Path, tmp_path: Path) -> None:
    assert record_raw(FORMAT, mutated_raw(path, lambda obj: None), tmp_path).drift == []


def test_renamed_tool_event_is_unknown_event_drift_and_no_read_fails(tmp_path: Path) -> None:
    lines = mutated_raw(
        HONEST, lambda obj: {**obj, "type": "tool_call"} if obj["type"] == "tool_use" else None
    )
    document = record_raw(FORMAT, lines, tmp_path)
    renamed = tool_lines(lines, "tool_call")
    assert drift_raw(document)[(DriftKind.UNKNOWN_EVENT, "tool_call")] == (len(renamed), renamed[0])
    assert document.drift[0].hides_reads
    no_failed_reads(document)


def test_unknown_event_type_is_drift_named_for_it(tmp_path: Path) -> None:
    lines = mutated_raw(
        HONEST, lambda obj: {**obj, "type": "step_begin"} if obj["type"] == "step_start" else None
    )
    found = drift_raw(record_raw(FORMAT, lines, tmp_path))
    renamed = tool_lines(lines, "step_begin")
    assert found == {(DriftKind.UNKNOWN_EVENT, "step_begin"): (len(renamed), renamed[0])}


def test_renamed_read_tool_is_unknown_and_never_a_failed_read(tmp_path: Path) -> None:
    def rename(obj: Line) -> Line | None:
        if obj["type"] == "tool_use" and obj["part"].get("tool") == "read":
            return part_of(obj, tool="view")
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, rename), tmp_path)
    no_failed_reads(document)
    assert all(f.reads_succeeded == 0 for f in document.files)
    assert not any(d.hides_reads for d in document.drift)


@pytest.mark.parametrize(
    ("damage", "kind", "name"),
    [
        (lambda part: {**part, "callID": 7}, DriftKind.FIELD_TYPE, "part.callID"),
        (
            lambda part: {k: v for k, v in part.items() if k != "callID"},
            DriftKind.MISSING_FIELD,
            "part.callID",
        ),
        (lambda part: {**part, "state": []}, DriftKind.FIELD_TYPE, "part.state"),
        (
            lambda part: {**part, "state": {**part["state"], "status": 1}},
            DriftKind.FIELD_TYPE,
            "part.state.status",
        ),
    ],
)
def test_tool_line_fields_of_another_type_are_drift_and_unreadable(
    damage: Callable[[Line], Line], kind: DriftKind, name: str, tmp_path: Path
) -> None:
    def change(obj: Line) -> Line | None:
        if obj["type"] == "tool_use" and obj["part"].get("tool") == "read":
            return {**obj, "part": damage(obj["part"])}
        return None

    lines = mutated_raw(HONEST, change)
    document = record_raw(FORMAT, lines, tmp_path)
    assert drift_raw(document)[(kind, name)][0] == 7
    no_failed_reads(document)
    assert all(f.reads_succeeded == 0 for f in document.files)


def test_edit_capture_records_the_mutation_and_it_is_no_read(tmp_path: Path) -> None:
    document = record_raw(FORMAT, mutated_raw(EDIT, lambda obj: None), tmp_path)
    assert [(m.tool, m.path) for m in document.mutations] == [("edit", "src/api/models.py")]


@pytest.mark.parametrize(
    ("tool", "given", "path"),
    [
        ("write", {"filePath": "notes.txt", "content": "x"}, "notes.txt"),
        ("patch", {"patchText": "*** Begin Patch\n*** Update File: a.py\n"}, "a.py"),
        ("bash", {"command": "git checkout -- README.md"}, "README.md"),
    ],
)
def test_writing_tools_are_mutations(tool: str, given: Line, path: str, tmp_path: Path) -> None:
    state = {"done": False}

    def change(obj: Line) -> Line | None:
        if obj["type"] == "tool_use" and obj["part"].get("tool") == "bash" and not state["done"]:
            state["done"] = True
            return part_of(obj, tool=tool, state={**obj["part"]["state"], "input": given})
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, change), tmp_path)
    assert [(m.tool, m.path) for m in document.mutations] == [(tool, path)]
    assert document.drift == []
