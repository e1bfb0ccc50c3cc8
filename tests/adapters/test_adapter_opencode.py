"""OpenCode adapter (``opencode run --format json``): one stream per rule, and golden files for
the real captures in ``tests/data/opencode`` and the probe in ``tests/data/hostile``.

The captures were made with OpenCode 1.18.33 against the mock model
(``tests/integration/realclients/capture_native.sh opencode SCENARIO OUT``, scenarios
``opencode_capture`` and ``opencode_task``); the ``crafted_*`` streams are ``opencode_capture``
changed by hand: ``crafted_cut_off`` stops in the middle of the line of the ranged read of
``src/util/strings.py``; ``crafted_call_ids`` sends README.md's report again (a later envelope
timestamp, the same part), sends handlers.py's report again as an ``error``, and adds a
``running`` and a ``pending`` report of two more reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters import ADAPTERS
from coverage_gate.adapters.opencode import ADAPTER
from coverage_gate.contracts.model import EvidenceDocument, IssueKind, LineRange
from coverage_gate.core.events import LineClass, ModelText
from coverage_gate.record.sniff import head_lines, sniff
from tests.conftest import (
    DATA,
    GOLDEN,
    REPO_ROOT,
    check_golden_evidence,
    record_bytes,
    revision_content,
)

FORMAT = "opencode"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
CAPTURE = DATA / FORMAT / "opencode_capture.jsonl"
PROBE = DATA / "hostile" / "opencode_1.18.33_probe.json.jsonl"
SESSION = "ses_test"


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def tool_use(
    call_id: str,
    tool: str = "read",
    status: Any = "completed",
    *,
    display: dict[str, Any] | None = None,
    error: str | None = None,
    timestamp: int = 1,
    started: int = 10,
    **arguments: Any,
) -> str:
    """One ``tool_use`` line; a finished read without ``display`` reports none."""
    state: dict[str, Any] = {"status": status, "input": arguments, "time": {"start": started}}
    if status == "completed":
        state["output"] = "text"
        state["metadata"] = {} if display is None else {"display": display}
        state["time"]["end"] = started + 5
    if status == "error":
        state["error"] = error or "File not found"
        state["time"]["end"] = started + 5
    part = {"type": "tool", "tool": tool, "callID": call_id, "state": state, "id": f"prt_{call_id}"}
    return line({"type": "tool_use", "timestamp": timestamp, "sessionID": SESSION, "part": part})


def lines_of(start: int, end: int, total: int) -> dict[str, Any]:
    return {"type": "file", "path": "x", "lineStart": start, "lineEnd": end, "totalLines": total}


def step(kind: str, reason: str | None = None) -> str:
    part: dict[str, Any] = {"type": kind.replace("_", "-")}
    if reason is not None:
        part["reason"] = reason
    return line({"type": kind, "timestamp": 1, "sessionID": SESSION, "part": part})


STOP = step("step_finish", "stop")


def stream(*lines: str, complete: bool = True) -> bytes:
    body = [step("step_start"), *lines, *([STOP] if complete else [])]
    return ("\n".join(body) + "\n").encode()


def record(data: bytes, **kwargs: Any) -> EvidenceDocument:
    return record_bytes(data, FORMAT, **kwargs)


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def issue_kinds(document: EvidenceDocument) -> list[IssueKind]:
    return [issue.kind for issue in document.issues]


# --- what a call is ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "expected"), [("completed", (1, 0)), ("error", (0, 1))], ids=["completed", "error"]
)
def test_a_finished_report_is_the_start_and_the_end_of_one_call(
    status: str, expected: tuple[int, int]
) -> None:
    """There is no start event: a ``completed`` report is a successful read, an ``error`` one a
    failed read, each a whole call."""
    doc = record(stream(tool_use("a", status=status, filePath="src/a.py")))
    assert reads(doc) == {"src/a.py": expected}
    assert doc.counters.calls == 1
    assert issue_kinds(doc) == []


@pytest.mark.parametrize("status", ["pending", "running", "queued"])
def test_a_status_other_than_completed_or_error_is_a_call_that_never_finished(status: str) -> None:
    """``pending``, ``running`` (and any other word): not finished, no evidence, labelled."""
    doc = record(stream(tool_use("a", status=status, filePath="src/a.py")))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.MISSING_END]


@pytest.mark.parametrize("status", [None, True, 1, ["completed"], {"status": "completed"}])
def test_a_status_that_is_not_a_string_makes_the_outcome_unknown(status: Any) -> None:
    """Damage to the status is neither a success nor a failure: the file is unknown."""
    doc = record(stream(tool_use("a", status=status, filePath="src/a.py")))
    assert reads(doc) == {"src/a.py": (0, 0)}
    file = doc.file("src/a.py")
    assert file is not None
    assert file.reads_unknown == 1


def test_a_running_report_then_its_finished_report_is_one_call() -> None:
    doc = record(
        stream(
            tool_use("a", status="running", filePath="src/a.py"),
            tool_use("a", filePath="src/a.py"),
        )
    )
    assert reads(doc) == {"src/a.py": (1, 0)}
    assert issue_kinds(doc) == []


def test_a_report_sent_again_unchanged_is_one_call() -> None:
    """OpenCode re-sends a part when it is updated: the same report under a later envelope
    timestamp is the same call, not an ambiguous id."""
    doc = record(
        stream(
            tool_use("a", filePath="src/a.py", timestamp=1),
            tool_use("a", filePath="src/a.py", timestamp=9),
        )
    )
    assert reads(doc) == {"src/a.py": (1, 0)}
    assert doc.counters.calls == 1
    assert issue_kinds(doc) == []


@pytest.mark.parametrize(
    "second",
    [
        tool_use("a", status="error", filePath="src/a.py"),
        tool_use("a", filePath="src/a.py", started=99),
        tool_use("a", filePath="src/b.py"),
        tool_use("a", "bash", command="cat src/a.py"),
        tool_use("a", filePath="src/a.py", display=lines_of(1, 3, 10)),
    ],
    ids=["another-outcome", "another-execution-time", "another-file", "another-tool", "range"],
)
def test_a_call_id_reported_again_saying_something_else_is_ambiguous(second: str) -> None:
    """Two executions under one id: neither is evidence, and the id is labelled."""
    doc = record(stream(tool_use("a", filePath="src/a.py"), second))
    assert all(succeeded == 0 for succeeded, _ in reads(doc).values())
    assert issue_kinds(doc) == [IssueKind.AMBIGUOUS_CALL_ID]


def test_only_read_counts_other_tools_are_ignored_and_shell_never_parsed() -> None:
    """``bash`` with a ``cat``, ``grep``, ``glob`` and ``invalid`` (OpenCode's answer to a tool it
    does not have) are counted as ignored calls, never reads."""
    doc = record(
        stream(
            tool_use("b", "bash", command="cat src/a.py"),
            tool_use("g", "grep", pattern="x", path="src/a.py"),
            tool_use("l", "glob", pattern="src/*.py"),
            tool_use("i", "invalid", name="read_file", error="unavailable tool"),
        )
    )
    assert reads(doc) == {}
    assert doc.counters.ignored == 4


def test_a_successful_task_makes_every_claim_without_evidence_unknown() -> None:
    """A sub-agent's calls are not in this stream: what a successful ``task`` read cannot be
    told (unattributed), so absence of evidence proves nothing. A failed one changes nothing."""
    doc = record(stream(tool_use("t", "task", prompt="read README.md", subagent_type="general")))
    assert doc.unattributed_calls == 1
    assert issue_kinds(doc) == [IssueKind.ARGUMENTS_UNAVAILABLE]
    failed = record(stream(tool_use("t", "task", status="error", prompt="x")))
    assert failed.unattributed_calls == 0


@pytest.mark.parametrize(
    "arguments", [{}, {"filePath": 5}, {"path": "src/a.py"}], ids=["none", "number", "path"]
)
def test_a_read_without_a_string_file_path_is_arguments_unavailable(
    arguments: dict[str, Any],
) -> None:
    doc = record(stream(tool_use("a", **arguments)))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.ARGUMENTS_UNAVAILABLE]
    assert doc.unattributed_calls == 1  # it read some file: which one cannot be told


# --- paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelled", "path"),
    [
        ("src/a.py", "src/a.py"),
        ("./src/a.py", "src/a.py"),
        (f"{REPO_ROOT}/src/a.py", "src/a.py"),
        ("@src/a.py", "@src/a.py"),
        ("src\\a.py", "src\\a.py"),
    ],
)
def test_paths_are_repo_relative_and_spelled_as_opened(spelled: str, path: str) -> None:
    """Relative paths are relative to the root; ``@`` and backslashes are part of the name."""
    assert reads(record(stream(tool_use("a", filePath=spelled)))) == {path: (1, 0)}


@pytest.mark.parametrize("spelled", ["/etc/passwd", "../outside.py", f"{REPO_ROOT}/.git/config"])
def test_a_read_outside_the_repository_is_rejected_and_labelled(spelled: str) -> None:
    doc = record(stream(tool_use("a", filePath=spelled)))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.PATH_REJECTED]


# --- what a read showed ------------------------------------------------------------------------


def test_the_reported_line_range_is_what_the_read_showed() -> None:
    """``display.lineStart``/``lineEnd`` of ``totalLines``: lines 3-6 seen, the range recorded
    zero-based and end-exclusive, partial."""
    doc = record(stream(tool_use("a", filePath="a.py", offset=3, display=lines_of(3, 6, 16))))
    file = doc.file("a.py")
    assert file is not None
    assert file.lines_seen == [LineRange(start=3, end=6)]
    assert [(r.offset, r.end, r.total) for r in file.ranges] == [(2, 6, 16)]
    assert file.partial


def test_a_whole_file_reported_by_lines_is_not_partial() -> None:
    doc = record(stream(tool_use("a", filePath="a.py", display=lines_of(1, 16, 16))))
    file = doc.file("a.py")
    assert file is not None
    assert not file.partial
    assert file.lines_seen_whole


@pytest.mark.parametrize(
    ("arguments", "seen"),
    [({"offset": 3, "limit": 4}, (3, 6)), ({"offset": 5}, (5, 2004)), ({"limit": 2}, (1, 2))],
    ids=["offset-limit", "offset-alone", "limit-alone"],
)
def test_without_the_result_detail_the_request_says_which_lines(
    arguments: dict[str, int], seen: tuple[int, int]
) -> None:
    """``offset`` is a 1-based line (OpenCode 1.18), ``limit`` a count, 2000 lines by default."""
    file = record(stream(tool_use("a", filePath="a.py", **arguments))).file("a.py")
    assert file is not None
    assert file.lines_seen == [LineRange(start=seen[0], end=seen[1])]
    assert file.partial


@pytest.mark.parametrize(
    "display",
    [
        {"type": "directory", "path": "src", "entries": ["a.py"], "offset": 1, "totalEntries": 1},
        lines_of(1, 0, 0),
    ],
    ids=["directory", "empty-file"],
)
def test_a_directory_listing_or_an_empty_file_showed_nothing(display: dict[str, Any]) -> None:
    doc = record(stream(tool_use("a", filePath="src", display=display)))
    file = doc.file("src")
    assert file is not None
    assert (file.reads_succeeded, file.reads_empty) == (0, 1)
    assert issue_kinds(doc) == [IssueKind.EMPTY_RESULT]


def test_numbers_past_64_bits_make_lines_or_outcome_unknown_never_a_crash() -> None:
    big = 2**64
    asked = record(stream(tool_use("a", filePath="a.py", offset=big)))
    file = asked.file("a.py")
    assert file is not None
    assert (file.reads_succeeded, file.reads_lines_unknown) == (1, 1)
    assert file.lines_seen == []
    reported = record(stream(tool_use("a", filePath="a.py", display=lines_of(1, big, big))))
    file = reported.file("a.py")
    assert file is not None
    assert (file.reads_succeeded, file.reads_unknown) == (0, 1)


# --- completion --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("last", "complete"),
    [
        (STOP, True),
        (step("step_finish", "length"), True),
        (step("step_finish", "tool-calls"), False),
        (step("step_finish"), False),
        (
            line({"type": "error", "timestamp": 1, "sessionID": SESSION, "error": {"name": "x"}}),
            False,
        ),
    ],
    ids=["stop", "length", "tool-calls", "no-reason", "error"],
)
def test_a_step_finish_other_than_tool_calls_completes_the_stream(
    last: str, complete: bool
) -> None:
    doc = record(stream(tool_use("a", filePath="a.py"), last, complete=False))
    assert doc.stream_complete is complete


def test_a_step_start_after_completion_reopens_the_stream() -> None:
    data = stream(tool_use("a", filePath="a.py"), STOP, step("step_start"), complete=False)
    assert not record(data).stream_complete


# --- lines that cannot be read -----------------------------------------------------------------


def test_a_cut_off_tool_use_line_makes_claims_without_evidence_unknown() -> None:
    """The cut line could be any read (its call id names a call seen nowhere else): the stream
    is incomplete and the call unattributed, so no claim lacking evidence is unsupported."""
    cut = tool_use("b", filePath="src/b.py")
    doc = record(stream(tool_use("a", filePath="src/a.py"), cut[: len(cut) // 2], complete=False))
    assert reads(doc) == {"src/a.py": (1, 0)}
    assert not doc.stream_complete
    assert doc.unattributed_calls == 1


def test_an_unreadable_repeat_of_a_read_makes_only_that_file_unknown() -> None:
    good = tool_use("a", filePath="src/a.py")
    doc = record(
        stream(good, good.replace('"completed"', '"completed'), tool_use("b", filePath="b"))
    )
    assert doc.unattributed_calls == 0
    file = doc.file("src/a.py")
    assert file is not None
    assert file.reads_unknown == 1
    assert reads(doc)["b"] == (1, 0)


@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        ("[1, 2]", IssueKind.MALFORMED_LINE),
        ('{"type": "step_finish", "part": {"reason": "st', IssueKind.MALFORMED_LINE),
    ],
    ids=["array", "step-cut"],
)
def test_a_broken_line_that_names_no_call_is_counted_and_affects_nothing(
    bad: str, kind: IssueKind
) -> None:
    doc = record(stream(tool_use("a", filePath="a.py"), bad))
    assert reads(doc) == {"a.py": (1, 0)}
    assert issue_kinds(doc) == [kind]
    assert doc.unattributed_calls == 0
    assert doc.counters.malformed_lines == 1


def test_unknown_line_kinds_are_counted_as_unrecognised() -> None:
    doc = record(stream(line({"type": "session.compacted", "sessionID": SESSION, "part": {}})))
    assert doc.counters.unrecognised_events == 1


def test_text_and_reasoning_lines_are_read_as_the_models_own_text() -> None:
    """Model output is read, as the model's own text (DESIGN §6 rule 29): a broken one is a
    malformed line that names no call, and affects none."""
    doc = record(
        stream(
            tool_use("a", filePath="a.py", display=lines_of(1, 9, 9)),
            '{"type": "text", "part": {"text": "cut',
            '{"type":"reasoning"}',
        )
    )
    assert (doc.counters.malformed_lines, doc.counters.unrecognised_events) == (1, 0)
    assert doc.unattributed_calls == 0
    decoder = ADAPTER.decoder()
    text = line({"type": "text", "sessionID": SESSION, "part": {"text": '"tool_use"'}})
    assert decoder.classify(text.encode()[:256]) is LineClass.PARSE
    (said,) = decoder.decode(text.encode(), 7)
    assert said == ModelText(line=7, text='"tool_use"')


def test_a_tool_use_line_over_the_line_limit_is_read_as_it_flows() -> None:
    """A read whose output is larger than the scanner holds whole gives the same evidence."""
    big = json.loads(tool_use("a", filePath="a.py", display=lines_of(1, 9, 9)))
    big["part"]["state"]["output"] = "x" * 300_000
    data = stream(line(big))
    assert record(data, max_line_bytes=4096) == record(data)
    assert reads(record(data, max_line_bytes=4096)) == {"a.py": (1, 0)}


# --- real captures and golden files ------------------------------------------------------------

STREAMS = [*sorted((DATA / FORMAT).glob("*.jsonl")), PROBE]


def test_the_capture_says_what_the_reviewer_did() -> None:
    """OpenCode 1.18.33 against the scripted model: a whole read, a relative read and a ranged
    one in parallel, a missing file (error), a directory (a listing: nothing), an offset past
    the end (error), an unknown tool (``invalid``), ``cat`` in bash (ignored) and a ``..`` path
    that cannot be checked without the repository (rejected)."""
    doc = record(CAPTURE.read_bytes())
    assert doc.stream_complete
    assert reads(doc) == {
        "README.md": (1, 0),
        "docs/guide.md": (0, 1),
        "src/api/handler.py": (0, 1),
        "src/api/handlers.py": (1, 0),
        "src/util": (0, 0),
        "src/util/strings.py": (1, 0),
    }
    assert doc.counters.ignored == 3  # bash twice, invalid once
    assert issue_kinds(doc) == [IssueKind.EMPTY_RESULT, IssueKind.PATH_REJECTED]


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.stem)
def test_every_capture_is_sniffed_as_opencode(path: Path) -> None:
    prefix = path.read_bytes()[: 64 * 1024]
    assert sniff(head_lines(prefix)) == FORMAT
    assert sniff(head_lines(prefix, max_bytes=256)) == FORMAT


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.stem)
def test_golden_evidence(path: Path) -> None:
    doc = record(path.read_bytes())
    check_golden_evidence(GOLDEN / FORMAT / f"{path.stem}.evidence.json", doc)


def test_golden_evidence_of_the_capture_with_its_pinned_diff() -> None:
    """With the pinned diff and the files at the revision: depth per claimed file."""
    doc = record(CAPTURE.read_bytes(), diff=DIFF, content=revision_content())
    check_golden_evidence(GOLDEN / FORMAT / f"{CAPTURE.stem}.diff.evidence.json", doc)


def test_registered_under_its_name() -> None:
    assert ADAPTERS[FORMAT] is ADAPTER
