"""Gemini CLI drift and mutations (DESIGN §6 rules 19-20), on real captures mutated one field at a
time: what the adapter does not understand is drift (kind, name, count, first line), never a
failed or absent read; the honest capture carries none; a reviewer's writes are mutations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters.gemini_cli import KNOWS
from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import DriftKind
from coverage_gate.contracts.model import EvidenceDocument
from tests._support.drift_support import (
    Line,
    assert_no_read_lost,
    backed,
    capture,
    drift_parsed,
    mutated_parsed,
    record_parsed,
)
from tests.conftest import DATA, REPO_ROOT

FORMAT = "gemini-cli"
HONEST = DATA / FORMAT / "gemini_a_honest.jsonl"
READ = "read_file"
SHELL = "run_shell_command"


def of_type(lines: list[Line], kind: str) -> list[int]:
    return [n for n, obj in enumerate(lines, start=1) if obj.get("type") == kind]


def first_read(lines: list[Line]) -> int:
    return next(n for n in of_type(lines, "tool_use") if lines[n - 1]["tool_name"] == READ)


@pytest.fixture(scope="module")
def honest_lines() -> list[Line]:
    return capture(HONEST)


@pytest.fixture
def honest(tmp_path: Path, honest_lines: list[Line]) -> EvidenceDocument:
    return record_parsed(FORMAT, tmp_path, honest_lines)


def test_honest_capture_has_no_drift(honest: EvidenceDocument) -> None:
    """Gemini CLI names no version in its stream: nothing to compare, nothing said."""
    assert honest.drift == []
    assert honest.client_version is None
    assert honest.mutations == []
    assert len(backed(honest)) == 6
    assert KNOWS.versions == CHECKED[FORMAT]


@pytest.mark.parametrize(
    "path",
    [
        *sorted(p for p in (DATA / FORMAT).glob("*.jsonl") if not p.name.startswith("crafted_")),
        DATA / "hostile" / "gemini-cli_0.61.0_probe.stream-json.jsonl",
    ],
    ids=lambda p: p.name,
)
def test_every_real_capture_is_free_of_drift(tmp_path: Path, path: Path) -> None:
    assert record_parsed(FORMAT, tmp_path, capture(path)).drift == []


def test_renamed_read_tool_is_an_unknown_tool_said_loudly(
    tmp_path: Path, honest_lines: list[Line], honest: EvidenceDocument
) -> None:
    """``read_file`` → ``read_file_v2``: Gemini CLI lists no tools in its stream, and its
    ``read_file`` output is a summary, not the file: each call is an unknown tool naming an
    in-scope file, counted and said; never a read, never a failed one."""

    def rename(_n: int, obj: Line) -> None:
        if obj.get("tool_name") == READ:
            obj["tool_name"] = "read_file_v2"

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    reads = sum(obj.get("tool_name") == READ for obj in honest_lines)
    assert drift_parsed(doc) == {
        (DriftKind.UNKNOWN_TOOL, "read_file_v2"): (reads, first_read(honest_lines), False)
    }
    assert all(f.reads_succeeded == 0 and f.reads_failed == 0 for f in doc.files)
    assert_no_read_lost(honest, doc)


@pytest.mark.parametrize(
    ("kind", "new", "side"),
    [("tool_result", "tool_response", "end"), ("tool_use", "tool_call", "start")],
)
def test_renamed_start_or_end_line_is_an_unknown_event(
    tmp_path: Path,
    honest_lines: list[Line],
    honest: EvidenceDocument,
    kind: str,
    new: str,
    side: str,
) -> None:
    """A renamed ``tool_use``/``tool_result`` line: the calls it carried are no longer seen, so
    the stream's absences prove nothing (drift that hides reads); no call fails."""

    def rename(_n: int, obj: Line) -> None:
        if obj.get("type") == kind:
            obj["type"] = new

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    carrying = of_type(honest_lines, kind)
    assert drift_parsed(doc)[(DriftKind.UNKNOWN_EVENT, new)] == (len(carrying), carrying[0], True)
    assert any(e.kind is DriftKind.UNPAIRED and side in e.name for e in doc.drift)
    assert doc.counters.unrecognised_events == len(carrying)
    assert all(f.reads_failed == 0 for f in doc.files)
    assert_no_read_lost(honest, doc)


def test_unknown_line_type_is_drift(
    tmp_path: Path, honest_lines: list[Line], honest: EvidenceDocument
) -> None:
    def rename(number: int, obj: Line) -> None:
        if number == 1:
            obj["type"] = "session_start"

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    assert drift_parsed(doc) == {(DriftKind.UNKNOWN_EVENT, "session_start"): (1, 1, True)}
    assert doc.files == honest.files


def _set(field: str, value: Any) -> Callable[[Line], None]:
    def change(obj: Line) -> None:
        obj[field] = value

    return change


def _drop(field: str) -> Callable[[Line], None]:
    def change(obj: Line) -> None:
        del obj[field]

    return change


@pytest.mark.parametrize(
    ("change", "kind", "name"),
    [
        (_set("status", 5), DriftKind.FIELD_TYPE, "tool_result.status"),
        (_drop("status"), DriftKind.MISSING_FIELD, "tool_result.status"),
        (_set("output", 7), DriftKind.FIELD_TYPE, "tool_result.output"),
        (_set("output", ["x"]), DriftKind.FIELD_TYPE, "tool_result.output"),
        (_drop("tool_id"), DriftKind.MISSING_FIELD, "tool_result.tool_id"),
        (_set("type", 5), DriftKind.FIELD_TYPE, "type"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_result_line_of_a_shape_never_written_is_unreadable_and_drift(
    tmp_path: Path,
    honest_lines: list[Line],
    honest: EvidenceDocument,
    change: Callable[[Line], None],
    kind: DriftKind,
    name: str,
) -> None:
    """A field of a type Gemini CLI never writes on the line ending a ``read_file``: the line is
    unreadable (that call's outcome unknown, never failed), and drift names the field."""
    start = first_read(honest_lines)
    target = next(
        n for n in of_type(honest_lines, "tool_result")
        if honest_lines[n - 1]["tool_id"] == honest_lines[start - 1]["tool_id"]
    )  # fmt: skip

    def apply(number: int, obj: Line) -> None:
        if number == target:
            change(obj)

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, apply))
    assert drift_parsed(doc)[(kind, name)] == (1, target, True)
    assert doc.counters.malformed_lines == 1
    assert all(f.reads_failed == 0 for f in doc.files)
    assert_no_read_lost(honest, doc)


@pytest.mark.parametrize(
    ("change", "kind", "name"),
    [
        (_drop("tool_id"), DriftKind.MISSING_FIELD, "tool_use.tool_id"),
        (_set("tool_name", 3), DriftKind.FIELD_TYPE, "tool_use.tool_name"),
        (_set("type", None), DriftKind.FIELD_TYPE, "type"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_start_line_of_a_shape_never_written_is_unreadable_and_drift(
    tmp_path: Path,
    honest_lines: list[Line],
    honest: EvidenceDocument,
    change: Callable[[Line], None],
    kind: DriftKind,
    name: str,
) -> None:
    target = first_read(honest_lines)

    def apply(number: int, obj: Line) -> None:
        if number == target:
            change(obj)

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, apply))
    assert drift_parsed(doc)[(kind, name)] == (1, target, True)
    assert all(f.reads_failed == 0 for f in doc.files)
    assert_no_read_lost(honest, doc)


def test_mcp_tool_naming_a_file_is_an_unknown_tool_that_hides_nothing(
    tmp_path: Path, honest_lines: list[Line], honest: EvidenceDocument
) -> None:
    """A tool the adapter does not know (an MCP server's), called with an in-scope path: drift,
    never a read, never a reason to doubt an absence."""
    target = first_read(honest_lines)
    named: list[str] = []

    def rename(number: int, obj: Line) -> None:
        if number == target:
            obj["tool_name"] = "fs_peek"
            named.append(obj["parameters"]["file_path"].removeprefix(REPO_ROOT + "/"))
            obj["parameters"] = {"target": {"path": obj["parameters"]["file_path"]}}

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    assert drift_parsed(doc) == {(DriftKind.UNKNOWN_TOOL, "fs_peek"): (1, target, False)}
    # the file is still backed by the capture's `git diff` output (credited by content), but
    # the renamed call is no read of it
    before, after = honest.file(named[0]), doc.file(named[0])
    assert before is not None
    assert after is None or after.reads_succeeded == before.reads_succeeded - 1
    assert len(backed(doc)) >= len(backed(honest)) - 1


def test_writing_tools_are_mutations_never_reads(tmp_path: Path, honest_lines: list[Line]) -> None:
    """The capture's reads of ``README.md`` and ``docs/guide.md`` (an absolute path) made
    ``write_file`` and ``replace`` calls: each is a mutation with its tool and file, placed in
    the repository as a read's path is, and neither is a read."""
    targets = {"README.md": "write_file", "docs/guide.md": "replace"}

    def write(_n: int, obj: Line) -> None:
        path = (obj.get("parameters") or {}).get("file_path", "").removeprefix(REPO_ROOT + "/")
        if obj.get("tool_name") == READ and path in targets:
            obj["tool_name"] = targets[path]

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, write))
    assert {(m.tool, m.path) for m in doc.mutations} == {
        ("write_file", "README.md"),
        ("replace", "docs/guide.md"),
    }
    assert doc.drift == []
    for path in targets:
        found = doc.file(path)
        assert found is None or found.reads_succeeded == 0


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("git stash", None),
        ("git checkout -- src/util/strings.py", "src/util/strings.py"),
        ("git diff | tee review.diff", "review.diff"),
    ],
)
def test_shell_command_that_changes_files_is_a_mutation(
    tmp_path: Path, honest_lines: list[Line], command: str, path: str | None
) -> None:
    def run(_n: int, obj: Line) -> None:
        if obj.get("tool_name") == SHELL:
            obj["parameters"]["command"] = command

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, run))
    assert [(m.tool, m.path) for m in doc.mutations] == [(SHELL, path)]


@pytest.mark.parametrize("command", ["git diff 2>/dev/null", "git checkout -h", "git stash list"])
def test_shell_command_that_changes_nothing_is_no_mutation(
    tmp_path: Path, honest_lines: list[Line], command: str
) -> None:
    def run(_n: int, obj: Line) -> None:
        if obj.get("tool_name") == SHELL:
            obj["parameters"]["command"] = command

    assert record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, run)).mutations == []


def test_failed_write_is_no_mutation(tmp_path: Path, honest_lines: list[Line]) -> None:
    target = first_read(honest_lines)
    call = honest_lines[target - 1]["tool_id"]

    def fail(number: int, obj: Line) -> None:
        if number == target:
            obj["tool_name"] = "write_file"
        if obj.get("type") == "tool_result" and obj.get("tool_id") == call:
            obj["status"] = "error"
            obj["error"] = {"type": "permission_denied", "message": "no"}

    assert record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, fail)).mutations == []
