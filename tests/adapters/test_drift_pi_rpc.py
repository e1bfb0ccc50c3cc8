"""Drift and mutations in pi RPC streams (DESIGN §6 rules 19-20), each built by changing the bytes
of a real capture: what pi's adapter does not understand is recorded as drift (kind, name, count,
first line) and never turns a call into a failed or absent read; the honest captures carry none."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from coverage_gate.contracts.enums import DriftKind
from tests._support.drift_support import Line, drift_raw, mutated_raw, no_failed_reads, record_raw
from tests.conftest import DATA

FORMAT = "pi-rpc"
FOLDER = DATA / "pi-rpc"
HONEST = FOLDER / "pi_a_honest.jsonl"
EDIT = FOLDER / "content_pi_edit_then_read.jsonl"
BASH = FOLDER / "content_pi_bash_only.jsonl"
REAL = sorted(FOLDER.glob("*.jsonl"))


def first_line(lines: list[bytes], kind: str) -> int:
    return next(n for n, raw in enumerate(lines, 1) if json.loads(raw).get("type") == kind)


def renamed_type(old: str, new: str) -> Callable[[Line], Line | None]:
    return lambda obj: {**obj, "type": new} if obj.get("type") == old else None


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_honest_real_captures_carry_no_drift(path: Path, tmp_path: Path) -> None:
    document = record_raw(
        FORMAT, [line for line in path.read_bytes().splitlines() if line], tmp_path
    )
    assert document.drift == []


def test_renamed_end_event_is_unknown_event_drift_and_no_read_fails(tmp_path: Path) -> None:
    lines = mutated_raw(
        HONEST, renamed_type("tool_execution_end", "tool_execution_finish"), skip_blank=False
    )
    document = record_raw(FORMAT, lines, tmp_path)
    found = drift_raw(document)
    first = first_line(lines, "tool_execution_finish")
    assert found[(DriftKind.UNKNOWN_EVENT, "tool_execution_finish")] == (8, first)
    assert any(kind is DriftKind.UNPAIRED for kind, _ in found)
    assert all(d.hides_reads for d in document.drift)
    assert document.counters.unrecognised_events == 8
    no_failed_reads(document)


def test_renamed_start_event_is_unknown_event_drift_and_no_read_fails(tmp_path: Path) -> None:
    lines = mutated_raw(
        HONEST, renamed_type("tool_execution_start", "tool_execution_begin"), skip_blank=False
    )
    document = record_raw(FORMAT, lines, tmp_path)
    found = drift_raw(document)
    first = first_line(lines, "tool_execution_begin")
    assert found[(DriftKind.UNKNOWN_EVENT, "tool_execution_begin")] == (8, first)
    no_failed_reads(document)
    assert document.files == [] or all(f.reads_succeeded == 0 for f in document.files)


def test_unknown_event_type_is_drift_named_for_it(tmp_path: Path) -> None:
    lines = mutated_raw(HONEST, renamed_type("turn_start", "turn_begin"), skip_blank=False)
    document = record_raw(FORMAT, lines, tmp_path)
    assert drift_raw(document) == {
        (DriftKind.UNKNOWN_EVENT, "turn_begin"): (8, first_line(lines, "turn_begin"))
    }
    honest = record_raw(FORMAT, HONEST.read_bytes().splitlines(), tmp_path)
    assert {f.path: f.reads_succeeded for f in document.files} == {
        f.path: f.reads_succeeded for f in honest.files
    }


def renamed_read(obj: Line) -> Line | None:
    return {**obj, "toolName": "cr_view"} if obj.get("toolName") == "cr_read" else None


def test_renamed_read_tool_is_never_a_failed_read_nor_blinding(tmp_path: Path) -> None:
    document = record_raw(FORMAT, mutated_raw(HONEST, renamed_read, skip_blank=False), tmp_path)
    no_failed_reads(document)
    assert document.counters.ignored == 6
    assert not any(d.hides_reads for d in document.drift)  # the model can call any tool


def test_renamed_read_tool_naming_files_in_scope_is_unknown_tool_drift(tmp_path: Path) -> None:
    document = record_raw(FORMAT, mutated_raw(HONEST, renamed_read, skip_blank=False), tmp_path)
    assert drift_raw(document)[(DriftKind.UNKNOWN_TOOL, "cr_view")][0] == 6


@pytest.mark.parametrize(
    ("field", "value"),
    [("isError", "false"), ("isError", 0)],
)
def test_end_flag_of_another_type_is_field_type_drift_and_unreadable(
    field: str, value: object, tmp_path: Path
) -> None:
    def damage(obj: Line) -> Line | None:
        if obj.get("type") == "tool_execution_end" and obj.get("toolName") == "cr_read":
            return {**obj, field: value}
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, damage, skip_blank=False), tmp_path)
    assert drift_raw(document)[(DriftKind.FIELD_TYPE, field)][0] == 6
    no_failed_reads(document)
    assert document.counters.failed == 0


@pytest.mark.parametrize(
    ("result", "name"),
    [
        ("", "result"),
        ({"content": ""}, "result.content"),
        ({"content": [None]}, "result.content[0]"),
    ],
)
def test_result_of_another_type_makes_the_read_unknown_not_whole(
    result: object, name: str, tmp_path: Path
) -> None:
    def damage(obj: Line) -> Line | None:
        if obj.get("type") == "tool_execution_end" and obj.get("toolName") == "cr_read":
            return {**obj, "result": result}
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, damage, skip_blank=False), tmp_path)
    assert drift_raw(document)[(DriftKind.FIELD_TYPE, name)][0] == 6
    assert all(f.reads_succeeded == 0 and f.reads_failed == 0 for f in document.files)


def test_end_without_its_result_is_missing_field_drift(tmp_path: Path) -> None:
    def damage(obj: Line) -> Line | None:
        if obj.get("type") == "tool_execution_end" and obj.get("toolName") == "cr_read":
            return {key: value for key, value in obj.items() if key != "result"}
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, damage, skip_blank=False), tmp_path)
    assert drift_raw(document)[(DriftKind.MISSING_FIELD, "result")][0] == 6
    no_failed_reads(document)


def test_end_without_its_call_id_is_missing_field_drift(tmp_path: Path) -> None:
    def damage(obj: Line) -> Line | None:
        if obj.get("type") == "tool_execution_end":
            return {key: value for key, value in obj.items() if key != "toolCallId"}
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, damage, skip_blank=False), tmp_path)
    assert drift_raw(document)[(DriftKind.MISSING_FIELD, "toolCallId")][0] == 8
    no_failed_reads(document)


def test_edit_capture_records_the_mutation_and_it_is_no_read(tmp_path: Path) -> None:
    document = record_raw(FORMAT, EDIT.read_bytes().splitlines(), tmp_path)
    assert [(m.tool, m.path) for m in document.mutations] == [("edit", "src/api/models.py")]
    assert document.drift == []
    models = document.file("src/api/models.py")
    assert models is not None and models.reads_succeeded == 2  # the two reads, not the edit


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("echo limit >> src/api/models.py", ("bash", "src/api/models.py")),
        ("git stash", ("bash", None)),
        ("git diff 2>/dev/null", None),
        ("git checkout --help", None),
    ],
)
def test_shell_command_that_changes_files_is_a_mutation(
    command: str, written: tuple[str, str | None] | None, tmp_path: Path
) -> None:
    state = {"done": False}

    def rewrite(obj: Line) -> Line | None:
        if obj.get("type") == "tool_execution_start" and not state["done"]:
            state["done"] = True
            return {**obj, "args": {**obj["args"], "command": command}}
        return None

    document = record_raw(FORMAT, mutated_raw(BASH, rewrite, skip_blank=False), tmp_path)
    assert [(m.tool, m.path) for m in document.mutations] == ([written] if written else [])
    assert document.drift == []
