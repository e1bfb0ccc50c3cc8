"""Drift and mutations in GitHub Copilot CLI streams (DESIGN §6 rules 19-20), each built by
changing the bytes of a real capture: what the adapter does not understand is drift (kind, name,
count, first line), never a failed or absent read; the honest captures carry none."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from coverage_gate.contracts.enums import DriftKind
from tests._support.drift_support import Line, drift_raw, mutated_raw, no_failed_reads, record_raw
from tests.conftest import DATA, REPO_ROOT

FORMAT = "copilot-cli"
FOLDER = DATA / "copilot-cli"
HONEST = FOLDER / "copilot_capture.jsonl"
TASK = FOLDER / "copilot_task.jsonl"
LARGE = FOLDER / "copilot_large.jsonl"
REAL = [
    *(p for p in sorted(FOLDER.glob("*.jsonl")) if not p.name.startswith("crafted_")),
    *sorted((DATA / "hostile").glob("copilot_*.jsonl")),
]
START, COMPLETE = "tool.execution_start", "tool.execution_complete"


def typed(lines: list[bytes], kind: str) -> list[int]:
    return [n for n, raw in enumerate(lines, 1) if json.loads(raw).get("type") == kind]


def renamed(old: str, new: str) -> Callable[[Line], Line | None]:
    return lambda obj: {**obj, "type": new} if obj.get("type") == old else None


def views(lines: list[bytes]) -> set[str]:
    return {
        json.loads(raw)["data"]["toolCallId"]
        for raw in lines
        if json.loads(raw).get("type") == START
        and json.loads(raw)["data"].get("toolName") == "view"
    }


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_honest_real_captures_carry_no_drift(path: Path, tmp_path: Path) -> None:
    assert record_raw(FORMAT, mutated_raw(path, lambda obj: None), tmp_path).drift == []


@pytest.mark.parametrize(
    ("old", "new"), [(COMPLETE, "tool.execution_finished"), (START, "tool.execution_begin")]
)
def test_renamed_tool_event_is_unknown_event_drift_and_no_read_fails(
    old: str, new: str, tmp_path: Path
) -> None:
    lines = mutated_raw(HONEST, renamed(old, new))
    document = record_raw(FORMAT, lines, tmp_path)
    found = typed(lines, new)
    assert drift_raw(document)[(DriftKind.UNKNOWN_EVENT, new)] == (len(found), found[0])
    no_failed_reads(document)
    assert all(f.reads_succeeded == 0 for f in document.files)


def test_unknown_event_type_is_drift_named_for_it(tmp_path: Path) -> None:
    lines = mutated_raw(HONEST, renamed("assistant.turn_end", "assistant.turn_done"))
    found = typed(lines, "assistant.turn_done")
    assert drift_raw(record_raw(FORMAT, lines, tmp_path)) == {
        (DriftKind.UNKNOWN_EVENT, "assistant.turn_done"): (len(found), found[0])
    }


def test_renamed_read_tool_is_unknown_and_never_a_failed_read(tmp_path: Path) -> None:
    def rename(obj: Line) -> Line | None:
        if obj.get("type") == START and obj["data"].get("toolName") == "view":
            return {**obj, "data": {**obj["data"], "toolName": "read_file"}}
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, rename), tmp_path)
    no_failed_reads(document)
    assert all(f.reads_succeeded == 0 for f in document.files)
    assert not any(d.hides_reads for d in document.drift)


def test_a_built_in_tool_the_client_lists_and_the_adapter_lacks_is_unlisted_tool(
    tmp_path: Path,
) -> None:
    def add(obj: Line) -> Line | None:
        if obj.get("type") == "subagent.selected":
            tools = [*obj["data"]["tools"], "view_file", "github-mcp-server/new_tool"]
            return {**obj, "data": {**obj["data"], "tools": tools}}
        return None

    lines = mutated_raw(TASK, add)
    found = drift_raw(record_raw(FORMAT, lines, tmp_path))
    assert found == {
        (DriftKind.UNLISTED_TOOL, "view_file"): (1, typed(lines, "subagent.selected")[0])
    }


@pytest.mark.parametrize(
    ("field", "value", "kind", "name"),
    [
        ("success", "true", DriftKind.FIELD_TYPE, "data.success"),
        ("success", None, DriftKind.MISSING_FIELD, "data.success"),
        ("toolCallId", None, DriftKind.MISSING_FIELD, "toolCallId"),
    ],
)
def test_completion_fields_of_another_type_are_drift_and_unreadable(
    field: str, value: object, kind: DriftKind, name: str, tmp_path: Path
) -> None:
    ids = views(mutated_raw(HONEST, lambda obj: None))

    def damage(obj: Line) -> Line | None:
        if obj.get("type") == COMPLETE and obj["data"]["toolCallId"] in ids:
            data = {k: v for k, v in obj["data"].items() if k != field}
            return {**obj, "data": data if value is None else {**data, field: value}}
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, damage), tmp_path)
    assert drift_raw(document)[(kind, name)][0] == len(ids)
    no_failed_reads(document)


def test_an_exit_code_past_64_bits_is_unreadable_not_a_failure(tmp_path: Path) -> None:
    def damage(obj: Line) -> Line | None:
        if obj.get("type") == COMPLETE and "shellExecution" in obj["data"]:
            return {**obj, "data": {**obj["data"], "shellExecution": {"exitCode": 10**30}}}
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, damage), tmp_path)
    assert drift_raw(document)[(DriftKind.FIELD_TYPE, "data.shellExecution.exitCode")][0] == 3
    honest = record_raw(FORMAT, mutated_raw(HONEST, lambda obj: None), tmp_path)
    # the command that exited 1 is no longer a failure: its outcome is unknown
    assert document.counters.failed == honest.counters.failed - 1
    assert document.counters.incomplete == honest.counters.incomplete + 3


def test_a_shell_command_writing_files_is_a_mutation(tmp_path: Path) -> None:
    document = record_raw(FORMAT, mutated_raw(LARGE, lambda obj: None), tmp_path)
    assert [(m.tool, m.path) for m in document.mutations] == [("bash", None)]


@pytest.mark.parametrize(
    ("tool", "arguments", "path"),
    [
        (
            "edit",
            {"path": "/REPO/src/api/models.py", "old_str": "a", "new_str": "b"},
            "src/api/models.py",
        ),
        ("create", {"path": "/REPO/notes.txt", "file_text": "x"}, "notes.txt"),
    ],
)
def test_writing_tools_are_mutations_never_reads(
    tool: str, arguments: Line, path: str, tmp_path: Path
) -> None:
    state = {"id": None}

    def change(obj: Line) -> Line | None:
        if obj.get("type") == START and obj["data"].get("toolName") == "view" and not state["id"]:
            state["id"] = obj["data"]["toolCallId"]
            given = {k: v.replace("/REPO", REPO_ROOT) for k, v in arguments.items()}
            return {**obj, "data": {**obj["data"], "toolName": tool, "arguments": given}}
        return None

    document = record_raw(FORMAT, mutated_raw(HONEST, change), tmp_path)
    assert [(m.tool, m.path) for m in document.mutations] == [(tool, path)]
    assert document.drift == []
