"""Drift and mutations in OpenCode streams (DESIGN §6 rules 19-20), each built by changing the
bytes of a real capture: what the adapter does not understand is drift (kind, name, count, first
line), never a failed or absent read; the honest captures carry none."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters import ADAPTERS
from coverage_gate.diffmap import DiffIndex
from coverage_gate.enums import DriftKind
from coverage_gate.evidence_doc import Bounds
from coverage_gate.model import EvidenceDocument
from coverage_gate.recording import RecordSettings, record_stream
from tests.conftest import DATA, REPO_ROOT

FOLDER = DATA / "opencode"
HONEST = FOLDER / "opencode_capture.jsonl"
EDIT = FOLDER / "content_opencode_edit_then_read.jsonl"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
REAL = [
    *(p for p in sorted(FOLDER.glob("*.jsonl")) if not p.name.startswith("crafted_")),
    *sorted(Path("/work/shared/realclients/native/captures").glob("opencode_*.jsonl")),
]

Line = dict[str, Any]


def mutated(path: Path, change: Callable[[Line], Line | None]) -> list[bytes]:
    """The capture's lines, each JSON-loaded, changed (``None``: kept as it was) and dumped."""
    out = []
    for raw in path.read_bytes().splitlines():
        if raw.strip():
            changed = change(json.loads(raw))
            out.append(raw if changed is None else json.dumps(changed).encode())
    return out


def record(lines: list[bytes], root: Path) -> EvidenceDocument:
    data = b"\n".join(lines).replace(REPO_ROOT.encode(), str(root).encode()) + b"\n"
    settings = RecordSettings(
        revision="rev1", repo_root=str(root), bounds=Bounds(), diff=DiffIndex.parse(DIFF)
    )
    return record_stream(io.BytesIO(data), ADAPTERS["opencode"], settings)


def drift(document: EvidenceDocument) -> dict[tuple[DriftKind, str], tuple[int, int]]:
    return {(d.kind, d.name): (d.count, d.first_line) for d in document.drift}


def tool_lines(lines: list[bytes], kind: str) -> list[int]:
    return [n for n, raw in enumerate(lines, 1) if json.loads(raw).get("type") == kind]


def no_failed_reads(document: EvidenceDocument) -> None:
    assert all(f.reads_failed == 0 for f in document.files)


def part_of(obj: Line, **changes: Any) -> Line:
    return {**obj, "part": {**obj["part"], **changes}}


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_honest_real_captures_carry_no_drift(path: Path, tmp_path: Path) -> None:
    assert record(mutated(path, lambda obj: None), tmp_path).drift == []


def test_renamed_tool_event_is_unknown_event_drift_and_no_read_fails(tmp_path: Path) -> None:
    lines = mutated(
        HONEST, lambda obj: {**obj, "type": "tool_call"} if obj["type"] == "tool_use" else None
    )
    document = record(lines, tmp_path)
    renamed = tool_lines(lines, "tool_call")
    assert drift(document)[(DriftKind.UNKNOWN_EVENT, "tool_call")] == (len(renamed), renamed[0])
    assert document.drift[0].hides_reads
    no_failed_reads(document)


def test_unknown_event_type_is_drift_named_for_it(tmp_path: Path) -> None:
    lines = mutated(
        HONEST, lambda obj: {**obj, "type": "step_begin"} if obj["type"] == "step_start" else None
    )
    found = drift(record(lines, tmp_path))
    renamed = tool_lines(lines, "step_begin")
    assert found == {(DriftKind.UNKNOWN_EVENT, "step_begin"): (len(renamed), renamed[0])}


def test_renamed_read_tool_is_unknown_and_never_a_failed_read(tmp_path: Path) -> None:
    def rename(obj: Line) -> Line | None:
        if obj["type"] == "tool_use" and obj["part"].get("tool") == "read":
            return part_of(obj, tool="view")
        return None

    document = record(mutated(HONEST, rename), tmp_path)
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

    lines = mutated(HONEST, change)
    document = record(lines, tmp_path)
    assert drift(document)[(kind, name)][0] == 7
    no_failed_reads(document)
    assert all(f.reads_succeeded == 0 for f in document.files)


def test_edit_capture_records_the_mutation_and_it_is_no_read(tmp_path: Path) -> None:
    document = record(mutated(EDIT, lambda obj: None), tmp_path)
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

    document = record(mutated(HONEST, change), tmp_path)
    assert [(m.tool, m.path) for m in document.mutations] == [(tool, path)]
    assert document.drift == []
