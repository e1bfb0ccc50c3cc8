"""Claude Code drift and mutations (DESIGN §6 rules 19-20), on real captures mutated one field at
a time: what the adapter does not understand is drift (kind, name, count, first line), never a
failed or absent read; the honest capture carries none; a reviewer's edits are mutations."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters.claude_code import KNOWS
from coverage_gate.contracts.enums import DriftKind
from coverage_gate.contracts.model import EvidenceDocument
from tests._support.drift_support import (
    Line,
    assert_no_read_lost,
    backed,
    blocks,
    capture,
    drift_parsed,
    lines_with,
    mutated_parsed,
    record_parsed,
)
from tests.conftest import DATA, REPO_ROOT

FORMAT = "claude-code"
HONEST = DATA / FORMAT / "claude-code_otel_honest.stream-json.jsonl"


@pytest.fixture(scope="module")
def honest_lines() -> list[Line]:
    return capture(HONEST)


@pytest.fixture
def honest(tmp_path: Path, honest_lines: list[Line]) -> EvidenceDocument:
    return record_parsed(FORMAT, tmp_path, honest_lines)


def test_honest_capture_has_no_drift_and_names_its_version(honest: EvidenceDocument) -> None:
    assert honest.drift == []
    assert honest.client_version == "2.1.328"
    assert honest.mutations == []
    assert len(backed(honest)) == 6


@pytest.mark.parametrize(
    "path",
    [
        *sorted(p for p in (DATA / FORMAT).glob("*.jsonl") if not p.name.startswith("crafted_")),
        DATA / "hostile" / "claude-code_2.1.328_same_run.stream-json.jsonl",
    ],
    ids=lambda p: p.name,
)
def test_every_real_capture_is_free_of_drift(tmp_path: Path, path: Path) -> None:
    """No false alarm: every built-in tool the client lists, every line and block type it wrote
    is known."""
    assert record_parsed(FORMAT, tmp_path, capture(path)).drift == []


def test_every_tool_the_client_lists_is_known() -> None:
    listed = capture(HONEST)[0]["tools"]
    assert all(KNOWS.knows_tool(tool) for tool in listed)


def test_renamed_read_tool_is_an_unlisted_tool_and_an_unknown_one(
    tmp_path: Path, honest_lines: list[Line], honest: EvidenceDocument
) -> None:
    """``Read`` → ``ReadFile`` in the calls and in the init line's own tool list: the client
    lists a built-in tool the adapter lacks (drift that hides reads), and each call of it names
    an in-scope file (unknown tool). What came back is still credited by content."""

    def rename(_n: int, obj: Line) -> None:
        if obj.get("subtype") == "init":
            obj["tools"] = ["ReadFile" if t == "Read" else t for t in obj["tools"]]
        for block in blocks(obj, "tool_use"):
            if block["name"] == "Read":
                block["name"] = "ReadFile"

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    found = drift_parsed(doc)
    assert found[(DriftKind.UNLISTED_TOOL, "ReadFile")] == (1, 1, True)
    count, first, hides = found[(DriftKind.UNKNOWN_TOOL, "ReadFile")]
    reads = [
        n for n in lines_with(honest_lines, "tool_use") if "Read" in json.dumps(honest_lines[n - 1])
    ]
    assert (count, hides) == (6, False) and first in reads
    assert all(f.reads_succeeded == 0 for f in doc.files)  # no call is read as a read
    assert backed(doc) == backed(honest)  # by content: the stream carries what came back
    assert_no_read_lost(honest, doc)


@pytest.mark.parametrize(
    ("kind", "new", "side"),
    [("tool_result", "tool_output", "end"), ("tool_use", "tool_call", "start")],
)
def test_renamed_start_or_end_block_is_an_unknown_event(
    tmp_path: Path,
    honest_lines: list[Line],
    honest: EvidenceDocument,
    kind: str,
    new: str,
    side: str,
) -> None:
    """A renamed ``tool_use``/``tool_result`` block: the calls it carried are no longer seen,
    so the stream's absences prove nothing (drift that hides reads); no call fails."""

    def rename(_n: int, obj: Line) -> None:
        for block in blocks(obj, kind):
            block["type"] = new

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    carrying = lines_with(honest_lines, kind)
    renamed = sum(len(blocks(obj, kind)) for obj in honest_lines)
    assert drift_parsed(doc)[(DriftKind.UNKNOWN_EVENT, new)] == (renamed, carrying[0], True)
    assert any(e.kind is DriftKind.UNPAIRED and side in e.name for e in doc.drift)
    assert all(f.reads_failed == 0 for f in doc.files)
    assert_no_read_lost(honest, doc)


def test_unknown_line_type_is_drift(
    tmp_path: Path, honest_lines: list[Line], honest: EvidenceDocument
) -> None:
    """A line of a type Claude Code does not write (here a result line renamed): drift, whose
    calls are no longer vouched for; the reads already seen still count."""
    target = lines_with(honest_lines, "tool_result")[-1]

    def rename(number: int, obj: Line) -> None:
        if number == target:
            obj["type"] = "tool_feedback"

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    assert drift_parsed(doc)[(DriftKind.UNKNOWN_EVENT, "tool_feedback")] == (1, target, True)
    assert doc.counters.unrecognised_events == 1
    assert_no_read_lost(honest, doc)


def test_version_beyond_the_checked_range_is_said_and_changes_nothing(
    tmp_path: Path, honest_lines: list[Line], honest: EvidenceDocument
) -> None:
    def bump(_n: int, obj: Line) -> None:
        if "claude_code_version" in obj:
            obj["claude_code_version"] = "3.0.0"

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, bump))
    assert doc.client_version == "3.0.0"
    [entry] = doc.drift
    assert entry.kind is DriftKind.CLIENT_VERSION and entry.name.startswith("3.0.0 (newer than")
    assert (entry.count, entry.hides_reads) == (1, False)
    assert doc.files == honest.files


def _result_line(lines: list[Line]) -> int:
    """The first line ending a ``Read`` call (a line carrying one tool result)."""
    reads = {b["id"] for obj in lines for b in blocks(obj, "tool_use") if b["name"] == "Read"}
    return next(
        n
        for n in lines_with(lines, "tool_result")
        if blocks(lines[n - 1], "tool_result")[0]["tool_use_id"] in reads
    )


def _set_content(value: Any) -> Callable[[Line], None]:
    def change(obj: Line) -> None:
        obj["message"]["content"] = value

    return change


def _set_block(field: str, value: Any) -> Callable[[Line], None]:
    def change(obj: Line) -> None:
        obj["message"]["content"][0][field] = value

    return change


def _drop_block_field(field: str) -> Callable[[Line], None]:
    def change(obj: Line) -> None:
        del obj["message"]["content"][0][field]

    return change


def _set_first(value: Any) -> Callable[[Line], None]:
    def change(obj: Line) -> None:
        obj["message"]["content"][0] = value

    return change


def _set_start_line(obj: Line) -> None:
    obj["tool_use_result"]["file"]["startLine"] = "1"


@pytest.mark.parametrize(
    ("change", "kind", "name"),
    [
        (_set_content(""), DriftKind.FIELD_TYPE, "message.content"),
        (_set_content([]), DriftKind.FIELD_TYPE, "message.content"),
        (_set_content(7), DriftKind.FIELD_TYPE, "message.content"),
        (_set_first(None), DriftKind.FIELD_TYPE, "message.content[]"),
        (_set_first(5), DriftKind.FIELD_TYPE, "message.content[]"),
        (_set_block("type", 3), DriftKind.FIELD_TYPE, "message.content[].type"),
        (_set_block("is_error", "no"), DriftKind.FIELD_TYPE, "tool_result.is_error"),
        (_set_block("content", 12), DriftKind.FIELD_TYPE, "tool_result.content"),
        (_drop_block_field("tool_use_id"), DriftKind.MISSING_FIELD, "tool_result.tool_use_id"),
        (_set_start_line, DriftKind.FIELD_TYPE, "tool_use_result.file.startLine"),
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
    """A field of a type Claude Code never writes on the line ending a ``Read``: the line is
    unreadable (that call's outcome unknown, never failed), and drift names the field."""
    target = _result_line(honest_lines)

    def apply(number: int, obj: Line) -> None:
        if number == target:
            change(obj)

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, apply))
    assert drift_parsed(doc)[(kind, name)] == (1, target, True)
    assert doc.counters.malformed_lines == 1
    assert any(issue.line == target for issue in doc.issues)
    assert all(f.reads_failed == 0 for f in doc.files)
    assert_no_read_lost(honest, doc)


@pytest.mark.parametrize(
    ("change", "kind", "name"),
    [
        (_set_content(""), DriftKind.FIELD_TYPE, "message.content"),
        (_set_first(None), DriftKind.FIELD_TYPE, "message.content[]"),
        (_drop_block_field("id"), DriftKind.MISSING_FIELD, "tool_use.id"),
        (_set_block("name", 1), DriftKind.FIELD_TYPE, "tool_use.name"),
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
    target = next(
        n for n in lines_with(honest_lines, "tool_use")
        if blocks(honest_lines[n - 1], "tool_use")[0]["name"] == "Read"
    )  # fmt: skip

    def apply(number: int, obj: Line) -> None:
        if number == target:
            change(obj)

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, apply))
    assert drift_parsed(doc)[(kind, name)] == (1, target, True)
    assert all(f.reads_failed == 0 for f in doc.files)
    assert_no_read_lost(honest, doc)


def test_mcp_tool_is_an_unknown_tool_that_hides_nothing(
    tmp_path: Path, honest_lines: list[Line], honest: EvidenceDocument
) -> None:
    """An MCP tool is the model's to call with any path: counted as drift when it names a file
    in scope, never a reason to doubt an absence, never a read."""
    target = next(
        n for n in lines_with(honest_lines, "tool_use")
        if blocks(honest_lines[n - 1], "tool_use")[0]["name"] == "Read"
    )  # fmt: skip

    def rename(number: int, obj: Line) -> None:
        if number == target:
            blocks(obj, "tool_use")[0]["name"] = "mcp__fs__read"

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    assert drift_parsed(doc) == {(DriftKind.UNKNOWN_TOOL, "mcp__fs__read"): (1, target, False)}
    assert sum(f.reads_succeeded for f in doc.files) == 5


def test_lying_unknown_tool_call_is_drift_and_no_evidence(
    tmp_path: Path, honest_lines: list[Line]
) -> None:
    """A call of a tool nobody lists, naming an in-scope path, that returned nothing of it:
    counted as drift, and that file gains no evidence."""
    target = lines_with(honest_lines, "tool_use")[0]
    answer = target + 1

    def lie(number: int, obj: Line) -> None:
        if number == target:
            blocks(obj, "tool_use")[0].update(name="Peek", input={"path": "src/util/strings.py"})
        if number == answer:
            blocks(obj, "tool_result")[0]["content"] = "looks fine"

    lines = list(mutated_parsed(honest_lines, lie))
    # keep only the lying call: the other calls read other files
    doc = record_parsed(FORMAT, tmp_path, [*lines[:answer], lines[-1]])
    assert drift_parsed(doc)[(DriftKind.UNKNOWN_TOOL, "Peek")] == (1, target, False)
    assert "src/util/strings.py" not in backed(doc)


@pytest.mark.parametrize(
    ("capture_name", "tool", "path"),
    [
        ("content_claude_edit_then_read.jsonl", "Edit", "src/api/models.py"),
        ("content_claude_checkout_then_read.jsonl", "Bash", "src/util/strings.py"),
    ],
)
def test_writing_calls_are_mutations_never_reads(
    tmp_path: Path, capture_name: str, tool: str, path: str
) -> None:
    """The reviewer's own changes (an ``Edit``; a ``Bash`` ``git checkout -- F``) are recorded
    as mutations with the tool and the file, and never count as reads of it."""
    lines = capture(DATA / FORMAT / capture_name)
    truth = json.loads((DATA / FORMAT / capture_name.replace(".jsonl", ".truth.json")).read_text())
    doc = record_parsed(FORMAT, tmp_path, lines)
    assert (tool, path) in {(m.tool, m.path) for m in doc.mutations}
    assert doc.drift == []
    found = doc.file(path)
    assert found is not None
    # the reads the truth counts, each a read (a mismatched one no evidence); the write none
    mismatched = found.content.mismatched if found.content is not None else 0
    assert found.reads_succeeded + mismatched == truth["files"][path]["read_succeeded"]


def test_failed_shell_write_is_no_mutation(tmp_path: Path) -> None:
    """``git stash`` that failed changed nothing: it is not a mutation."""
    doc = record_parsed(
        FORMAT, tmp_path, capture(DATA / FORMAT / "content_claude_checkout_then_read.jsonl")
    )
    assert "git stash" not in json.dumps([m.tool for m in doc.mutations])
    assert len(doc.mutations) == 3


def test_write_of_a_notebook_names_its_path(tmp_path: Path, honest_lines: list[Line]) -> None:
    target = lines_with(honest_lines, "tool_use")[-1]

    def edit(number: int, obj: Line) -> None:
        if number == target:
            blocks(obj, "tool_use")[0].update(
                name="NotebookEdit", input={"notebook_path": f"{REPO_ROOT}/docs/guide.md"}
            )

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, edit))
    assert ("NotebookEdit", "docs/guide.md") in {(m.tool, m.path) for m in doc.mutations}
