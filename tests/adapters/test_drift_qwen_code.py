"""Qwen Code drift and mutations (DESIGN §6 rules 19-20), on real captures mutated one field at a
time: what the adapter does not understand is drift (kind, name, count, first line), never a
failed or absent read; the honest capture carries none; a reviewer's writes are mutations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters.qwen_code import KNOWS
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

FORMAT = "qwen-code"
HONEST = DATA / FORMAT / "qwen_a_honest.jsonl"
READ = "read_file"


@pytest.fixture(scope="module")
def honest_lines() -> list[Line]:
    return capture(HONEST)


@pytest.fixture
def honest(tmp_path: Path, honest_lines: list[Line]) -> EvidenceDocument:
    return record_parsed(FORMAT, tmp_path, honest_lines)


def test_honest_capture_has_no_drift_and_names_its_version(honest: EvidenceDocument) -> None:
    assert honest.drift == []
    assert honest.client_version == "0.24.4"
    assert honest.mutations == []
    assert len(backed(honest)) == 6


@pytest.mark.parametrize(
    "path",
    [
        *sorted(p for p in (DATA / FORMAT).glob("*.jsonl") if not p.name.startswith("crafted_")),
        DATA / "hostile" / "qwen-code_0.24.4_probe.stream-json.jsonl",
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
    """``read_file`` → ``read_text_file`` in the calls and in the init line's own tool list: the
    client lists a built-in tool the adapter lacks (drift that hides reads), and each call names
    an in-scope file (unknown tool). What came back is still credited by content."""

    def rename(_n: int, obj: Line) -> None:
        if obj.get("subtype") == "init":
            obj["tools"] = ["read_text_file" if t == READ else t for t in obj["tools"]]
        for block in blocks(obj, "tool_use"):
            if block["name"] == READ:
                block["name"] = "read_text_file"

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    found = drift_parsed(doc)
    assert found[(DriftKind.UNLISTED_TOOL, "read_text_file")] == (1, 1, True)
    first_read = next(
        n for n in lines_with(honest_lines, "tool_use")
        if blocks(honest_lines[n - 1], "tool_use")[0]["name"] == READ
    )  # fmt: skip
    assert found[(DriftKind.UNKNOWN_TOOL, "read_text_file")] == (6, first_read, False)
    assert all(f.reads_succeeded == 0 for f in doc.files)  # no call is read as a read
    assert backed(doc) == backed(honest)
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
    """A line of a type Qwen Code does not write (here a result line renamed): drift, whose
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
        if "qwen_code_version" in obj:
            obj["qwen_code_version"] = "9.0.0"

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, bump))
    assert doc.client_version == "9.0.0"
    [entry] = doc.drift
    assert entry.kind is DriftKind.CLIENT_VERSION and entry.name.startswith("9.0.0 (newer than")
    assert (entry.count, entry.hides_reads) == (1, False)
    assert doc.files == honest.files


def _result_line(lines: list[Line]) -> int:
    """The first line ending a ``read_file`` call (a line carrying one tool result)."""
    reads = {b["id"] for obj in lines for b in blocks(obj, "tool_use") if b["name"] == READ}
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
    """A field of a type Qwen Code never writes on the line ending a ``read_file``: the line is
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
        if blocks(honest_lines[n - 1], "tool_use")[0]["name"] == READ
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
        if blocks(honest_lines[n - 1], "tool_use")[0]["name"] == READ
    )  # fmt: skip

    def rename(number: int, obj: Line) -> None:
        if number == target:
            blocks(obj, "tool_use")[0]["name"] = "mcp__fs__read"

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, rename))
    assert drift_parsed(doc) == {(DriftKind.UNKNOWN_TOOL, "mcp__fs__read"): (1, target, False)}
    assert (
        sum(f.reads_succeeded for f in doc.files)
        == sum(f.reads_succeeded for f in honest.files) - 1
    )


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


def test_writing_tools_are_mutations_never_reads(
    tmp_path: Path, honest_lines: list[Line], honest: EvidenceDocument
) -> None:
    """The capture's reads of ``README.md`` and ``docs/guide.md`` made ``write_file`` and
    ``edit`` calls: each is a mutation with its tool and file, and neither is a read."""
    targets = {"README.md": "write_file", "docs/guide.md": "edit"}

    def write(_n: int, obj: Line) -> None:
        for block in blocks(obj, "tool_use"):
            path = block["input"].get("file_path", "").removeprefix(REPO_ROOT + "/")
            if block["name"] == READ and path in targets:
                block["name"] = targets[path]

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, write))
    assert {(m.tool, m.path) for m in doc.mutations} == {
        ("write_file", "README.md"),
        ("edit", "docs/guide.md"),
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
        ("sed -i s/a/b/ README.md", "README.md"),
        ("git diff > review.diff", "review.diff"),
    ],
)
def test_shell_command_that_changes_files_is_a_mutation(
    tmp_path: Path, honest_lines: list[Line], command: str, path: str | None
) -> None:
    def run(_n: int, obj: Line) -> None:
        for block in blocks(obj, "tool_use"):
            if block["name"] == "run_shell_command":
                block["input"]["command"] = command

    doc = record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, run))
    assert [(m.tool, m.path) for m in doc.mutations] == [("run_shell_command", path)]


@pytest.mark.parametrize(
    "command", ["git diff 2>/dev/null", "git checkout --help", "cat README.md >&2"]
)
def test_shell_command_that_changes_nothing_is_no_mutation(
    tmp_path: Path, honest_lines: list[Line], command: str
) -> None:
    def run(_n: int, obj: Line) -> None:
        for block in blocks(obj, "tool_use"):
            if block["name"] == "run_shell_command":
                block["input"]["command"] = command

    assert record_parsed(FORMAT, tmp_path, mutated_parsed(honest_lines, run)).mutations == []
