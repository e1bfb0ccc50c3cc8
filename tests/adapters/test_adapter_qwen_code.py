"""Qwen Code adapter (``--output-format stream-json``, Claude Code's shapes): one stream per rule
where Qwen Code differs from Claude Code, the real captures' truth, and golden files for the
captures and the crafted streams in ``tests/data/qwen-code``.

The captures were written by Qwen Code 0.24.4 against the scripted mock model
(``tests/integration/realclients``): ``qwen_a_honest`` reads the six changed files,
``qwen_b_overclaim`` reads two, fails three (a relative path, a missing file, a directory), reads
one past its end, one partly and one again from Qwen Code's cache, ``cat``s one through the shell,
calls the unregistered ``read_many_files``, and claims all six. The crafted streams are those
captures changed: ``crafted_cut_off`` (the honest run cut inside a result line, no ``result``
line), ``crafted_duplicate_id`` (a call id started twice) and ``crafted_unmatched`` (a result
without its ``tool_use``, a ``tool_use`` without its result).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.adapters import ADAPTERS
from coverage_gate.adapters.qwen_code import ADAPTER
from coverage_gate.cli import app
from coverage_gate.contracts.model import Depth, EvidenceDocument, IssueKind, LineRange
from coverage_gate.core.events import EMPTY_SHOWN, ReadAction, Shown, ToolEnd, ToolStart
from coverage_gate.record.sniff import candidates, head_lines, sniff
from tests.conftest import (
    DATA,
    GOLDEN,
    REPO_ROOT,
    assert_capture_reproduces_truth,
    check_golden_evidence,
    record_bytes,
    stream_truths,
)

FORMAT = "qwen-code"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
PROBE = DATA / "hostile" / "qwen-code_0.24.4_probe.stream-json.jsonl"
HONEST = DATA / FORMAT / "qwen_a_honest.jsonl"


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


INIT = line(
    {
        "type": "system",
        "subtype": "init",
        "uuid": "s1",
        "session_id": "s1",
        "cwd": REPO_ROOT,
        "tools": ["read_file", "run_shell_command"],
        "model": "mock-model",
        "qwen_code_version": "0.24.4",
    }
)


def use(call_id: str, name: str = "read_file", parent: str | None = None, **arguments: Any) -> str:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    message = {"id": f"m_{call_id}", "role": "assistant", "content": [block], "stop_reason": None}
    return line(
        {"type": "assistant", "uuid": "u", "session_id": "s1", "parent_tool_use_id": parent,
         "message": message}
    )  # fmt: skip


def result(call_id: str, text: Any = "x = 1\n", *, is_error: bool = False) -> str:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "is_error": is_error}
    if text is not None:
        block["content"] = text
    message = {"role": "user", "content": [block]}
    return line(
        {"type": "user", "uuid": "u", "session_id": "s1", "parent_tool_use_id": None,
         "message": message}
    )  # fmt: skip


def done(*denied: str) -> str:
    denials = [{"tool_name": "read_file", "tool_use_id": d, "tool_input": {}} for d in denied]
    return line(
        {"type": "result", "subtype": "success", "uuid": "u", "session_id": "s1",
         "is_error": False, "result": "{}", "permission_denials": denials}
    )  # fmt: skip


def stream(*lines: str, complete: bool = True) -> bytes:
    return ("\n".join([INIT, *lines, *([done()] if complete else [])]) + "\n").encode()


def record(data: bytes, **kwargs: Any) -> EvidenceDocument:
    return record_bytes(data, FORMAT, **kwargs)


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def issue_kinds(document: EvidenceDocument) -> list[IssueKind]:
    return [issue.kind for issue in document.issues]


def absolute(path: str) -> str:
    return f"{REPO_ROOT}/{path}"


# --- what a call is ----------------------------------------------------------------------------


def test_read_file_and_its_result_pair_by_id() -> None:
    data = stream(
        use("a", file_path=absolute("src/a.py")),
        use("b", file_path=absolute("src/b.py")),
        result("b", "File not found: /home/user/repo/src/b.py", is_error=True),
        result("a"),
    )
    assert reads(record(data)) == {"src/a.py": (1, 0), "src/b.py": (0, 1)}


def test_only_read_file_counts_not_claude_codes_read_nor_the_shell() -> None:
    data = stream(
        use("r", "Read", file_path=absolute("a.py")),
        result("r"),
        use("s", "run_shell_command", command="cat a.py"),
        result("s", "Command: cat a.py\nOutput: x = 1\nExit Code: 0"),
        use("u", "no_such_tool", file_path=absolute("a.py")),
        result("u", 'Tool "no_such_tool" not found in registry.', is_error=True),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert doc.counters.ignored == 3


def test_claude_code_does_not_count_qwens_read_file() -> None:
    """The two formats name their read tool differently: each adapter counts only its own."""
    data = stream(use("a", file_path=absolute("a.py")), result("a"))
    assert reads(record_bytes(data, "claude-code")) == {}


def test_a_relative_path_resolves_against_the_init_cwd() -> None:
    """Qwen Code refuses relative paths (the call fails), but one it took would be under cwd."""
    data = stream(
        use("a", file_path="src/api/models.py"),
        result("a", "File path must be absolute, but was relative", is_error=True),
    )
    assert reads(record(data)) == {"src/api/models.py": (0, 1)}


def test_a_denial_is_a_failed_call_and_denial_words_in_a_file_are_not() -> None:
    """Qwen Code marks a denied call ``is_error`` and lists it in ``permission_denials``; a
    file whose text starts like a Claude Code denial is just a file."""
    text = "Permission to use this file is granted under the MIT licence.\n"
    data = stream(use("a", file_path=absolute("a.py")), result("a", text), complete=False)
    data += (done("b") + "\n").encode()
    assert reads(record(data)) == {"a.py": (1, 0)}
    denied = stream(use("b", file_path=absolute("b.py")), complete=False)
    assert reads(record(denied + (done("b") + "\n").encode())) == {"b.py": (0, 1)}


def test_subagent_reads_count() -> None:
    data = stream(
        use("t", "agent", prompt="read a"),
        use("s", file_path=absolute("a.py"), parent="t"),
        result("s"),
        result("t", "a.py looks fine"),
    )
    assert reads(record(data)) == {"a.py": (1, 0)}


# --- what a read showed ------------------------------------------------------------------------


def test_offset_is_zero_based() -> None:
    """``offset=2, limit=5`` asks for lines 3-7 (Claude Code's ``offset`` is 1-based)."""
    decoder = ADAPTER.decoder()
    (event,) = decoder.decode(use("a", file_path="/r/a.py", offset=2, limit=5).encode(), 1)
    assert isinstance(event, ToolStart)
    assert event.action == ReadAction(path="/r/a.py", offset=2, limit=5, shown=Shown.lines(3, 7))


def test_a_reported_line_range_is_the_lines_seen() -> None:
    data = stream(
        use("a", file_path=absolute("README.md"), offset=0, limit=5),
        result("a", "Read lines 1-5 of 18 from README.md"),
    )
    (entry,) = record(data, diff=DIFF).files
    assert entry.partial
    assert [(r.offset, r.end, r.total) for r in entry.ranges] == [(0, 5, 18)]
    assert entry.lines_seen == [LineRange(start=1, end=5)]
    assert entry.depth is not None
    assert entry.depth.depth is Depth.NONE


@pytest.mark.parametrize(
    ("text", "seen"),
    [
        ("Read lines 3-7 of at least 900 from a.py", [LineRange(start=3, end=7)]),
        ("Read lines 1-40 of 90 from a.py (truncated)", [LineRange(start=1, end=40)]),
    ],
    ids=["total-not-exact", "last-line-shortened"],
)
def test_a_cut_range_is_still_the_lines_it_names(text: str, seen: list[LineRange]) -> None:
    (entry,) = record(stream(use("a", file_path=absolute("a.py")), result("a", text))).files
    assert entry.reads_succeeded == 1
    assert entry.lines_seen == seen


@pytest.mark.parametrize(
    "text",
    ["Read lines 501-501 of 18 from README.md", "Unchanged: README.md", ""],
    ids=["past-the-end", "unchanged-cache", "empty"],
)
def test_a_read_that_returned_nothing_is_not_evidence(text: str) -> None:
    """An offset past the end, a cached ``Unchanged:`` placeholder (the earlier read is the
    evidence), an empty result: each succeeded and returned no line."""
    doc = record(stream(use("a", file_path=absolute("README.md"), offset=500), result("a", text)))
    (entry,) = doc.files
    assert (entry.reads_succeeded, entry.reads_empty) == (0, 1)
    assert issue_kinds(doc) == [IssueKind.EMPTY_RESULT]


def test_a_whole_read_returns_the_file_itself() -> None:
    (entry,) = record(stream(use("a", file_path=absolute("README.md")), result("a"))).files
    assert entry.lines_seen_whole
    assert not entry.partial


def test_without_a_result_text_the_request_says_which_lines_or_they_are_unknown() -> None:
    ranged = stream(
        use("a", file_path=absolute("README.md"), offset=13, limit=2), result("a", None)
    )
    (entry,) = record(ranged).files
    assert entry.lines_seen == [LineRange(start=14, end=15)]
    whole = stream(use("a", file_path=absolute("README.md")), result("a", None))
    (unknown,) = record(whole).files
    assert unknown.reads_lines_unknown == 1  # Qwen Code cuts a long file without a range


def test_a_zero_limit_asks_for_nothing() -> None:
    (event,) = ADAPTER.decoder().decode(use("a", file_path="/a", limit=0).encode(), 1)
    assert isinstance(event, ToolStart)
    assert isinstance(event.action, ReadAction)
    assert event.action.shown == EMPTY_SHOWN


def test_a_result_split_into_text_blocks_is_read_by_its_first_text() -> None:
    block = [{"type": "text", "text": "Read lines 2-3 of 9 from a.py"}]
    (end,) = ADAPTER.decoder().decode(result("a", block).encode(), 1)
    assert isinstance(end, ToolEnd)
    assert end.shown == Shown.lines(2, 3, 9)


# --- pairing and completion --------------------------------------------------------------------


def test_unmatched_and_reused_ids_are_no_evidence_and_labelled() -> None:
    data = stream(
        use("a", file_path=absolute("a.py")),  # never answered
        result("zz"),  # answers nothing
        use("c", file_path=absolute("c.py")),
        use("c", file_path=absolute("d.py")),  # the same id for another read
        result("c"),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert sorted(issue_kinds(doc)) == sorted(
        [IssueKind.MISSING_END, IssueKind.MISSING_START, IssueKind.AMBIGUOUS_CALL_ID]
    )


def test_complete_only_at_the_result_line() -> None:
    assert record(stream()).stream_complete
    assert not record(stream(use("a", file_path="/x"), complete=False)).stream_complete


# --- sniffing: Claude Code's shapes under Qwen Code's name ---------------------------------------


def test_a_qwen_stream_is_sniffed_as_qwen_code_and_not_claimed_by_claude_code() -> None:
    lines = head_lines(HONEST.read_bytes())
    assert candidates(lines) == [FORMAT]
    assert sniff(lines) == FORMAT
    assert not ADAPTERS["claude-code"].sniff(lines)


def test_an_init_line_cut_before_its_version_is_still_told_apart() -> None:
    """Qwen Code writes its version at the end of a long init line; its first keys differ."""
    lines = head_lines(HONEST.read_bytes(), max_bytes=256)
    assert b"qwen_code_version" not in lines[0]
    assert sniff(lines) == FORMAT
    claude = head_lines((DATA / "claude-code" / "claude_b_overclaim.jsonl").read_bytes(), 16, 256)
    assert sniff(claude) == "claude-code"


# --- real captures and golden files ------------------------------------------------------------

CAPTURES = stream_truths(DATA / FORMAT)
STREAMS = [*sorted((DATA / FORMAT).glob("*.jsonl")), PROBE]


@pytest.mark.parametrize("truth_path", CAPTURES, ids=lambda p: p.name.split(".")[0])
def test_capture_reproduces_its_truth(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    doc = record((truth_path.parent / truth["capture"]).read_bytes())
    assert_capture_reproduces_truth(doc, truth)


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.stem)
def test_golden_evidence(path: Path) -> None:
    doc = record(path.read_bytes())
    check_golden_evidence(GOLDEN / FORMAT / f"{path.stem}.evidence.json", doc)


@pytest.mark.parametrize("name", ["qwen_a_honest", "qwen_b_overclaim"])
def test_golden_evidence_of_the_captures_with_the_pinned_diff(name: str) -> None:
    doc = record((DATA / FORMAT / f"{name}.jsonl").read_bytes(), diff=DIFF)
    check_golden_evidence(GOLDEN / FORMAT / f"{name}.diff.evidence.json", doc)
    if name == "qwen_a_honest":
        assert all(f.depth is not None and f.depth.depth is Depth.FULL for f in doc.files)


def test_formats_lists_qwen_code_with_per_file_capability() -> None:
    result = CliRunner().invoke(app, ["formats"])
    assert result.exit_code == 0
    listed = {row.split()[0]: row.split()[2] for row in result.stdout.splitlines()}
    assert listed[FORMAT] == "per_file"
