"""GitHub Copilot CLI adapter (``copilot -p --output-format json``): one stream per rule, and
golden files for the real captures in ``tests/data/copilot-cli`` and the probe in
``tests/data/hostile``.

The captures were made with Copilot CLI 1.0.102 against the mock model
(``tests/integration/realclients/capture_native.sh copilot SCENARIO OUT``, scenarios
``copilot_capture``, ``copilot_task`` and ``copilot_large``); the ``crafted_*`` streams are
``copilot_capture`` changed by hand: ``crafted_cut_off`` stops in the middle of the complete
line of the ranged view of ``src/util/strings.py``; ``crafted_call_ids`` writes README.md's
start and complete twice each, to the letter, sends handlers.py's complete again saying
``success: false``, drops the directory view's start and models.py's complete, and adds a view
whose complete says ``success: true`` with ``shellExecution.exitCode`` 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters import ADAPTERS
from coverage_gate.adapters.copilot_cli import ADAPTER
from coverage_gate.contracts.model import EvidenceDocument, IssueKind, LineRange
from coverage_gate.core.events import LineClass
from coverage_gate.record.sniff import head_lines, sniff
from tests.conftest import (
    DATA,
    GOLDEN,
    REPO_ROOT,
    REVISION_FILES,
    check_golden_evidence,
    record_bytes,
    revision_content,
)

FORMAT = "copilot-cli"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
CAPTURE = DATA / FORMAT / "copilot_capture.jsonl"
PROBE = DATA / "hostile" / "copilot_1.0.102_probe.json.jsonl"
ABSENT = object()


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def event(kind: str, data: dict[str, Any], **extra: Any) -> str:
    return line({"type": kind, "data": data, "id": "e", "timestamp": "t", **extra})


def start(call_id: str, tool: str = "view", **arguments: Any) -> str:
    data = {"toolCallId": call_id, "toolName": tool, "arguments": arguments}
    return event("tool.execution_start", data)


def complete(
    call_id: str,
    *,
    success: Any = True,
    content: str = "text",
    exit_code: Any = ABSENT,
    telemetry: dict[str, Any] | None = None,
) -> str:
    data: dict[str, Any] = {"toolCallId": call_id, "success": success}
    if success is True:
        data["result"] = {"content": content, "detailedContent": "diff --git a/x b/x"}
    else:
        data["error"] = {"message": "Path does not exist", "code": "failure"}
    if exit_code is not ABSENT:
        data["shellExecution"] = {"exitCode": exit_code}
    if telemetry is not None:
        data["toolTelemetry"] = telemetry
    return event("tool.execution_complete", data)


RESULT = line({"type": "result", "timestamp": "t", "sessionId": "s", "exitCode": 0})
TURN = event("assistant.turn_start", {"turnId": "0"})


def stream(*lines: str, complete: bool = True) -> bytes:
    body = [TURN, *lines, *([RESULT] if complete else [])]
    return ("\n".join(body) + "\n").encode()


def record(data: bytes, **kwargs: Any) -> EvidenceDocument:
    return record_bytes(data, FORMAT, **kwargs)


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def issue_kinds(document: EvidenceDocument) -> list[IssueKind]:
    return [issue.kind for issue in document.issues]


# --- what a call is ----------------------------------------------------------------------------


def test_a_view_start_and_its_complete_pair_by_id_not_by_order() -> None:
    data = stream(
        start("a", path="src/a.py"),
        start("b", path="src/b.py"),
        complete("b", success=False),
        complete("a"),
    )
    assert reads(record(data)) == {"src/a.py": (1, 0), "src/b.py": (0, 1)}


@pytest.mark.parametrize(
    ("exit_code", "expected"),
    [(ABSENT, (1, 0)), (0, (1, 0)), (1, (0, 1)), (127, (0, 1))],
    ids=["no-shell", "exit-0", "exit-1", "exit-127"],
)
def test_success_true_with_a_non_zero_exit_code_is_a_failed_call(
    exit_code: Any, expected: tuple[int, int]
) -> None:
    """Copilot reports a command that exited non-zero as ``success: true``; the exit code in
    ``shellExecution`` decides."""
    doc = record(stream(start("a", path="a.py"), complete("a", exit_code=exit_code)))
    assert reads(doc) == {"a.py": expected}


@pytest.mark.parametrize(
    ("success", "exit_code"),
    [("true", ABSENT), (1, ABSENT), (None, ABSENT), (True, "0"), (True, None), (True, True)],
    ids=[
        "success-string",
        "success-number",
        "success-null",
        "exit-string",
        "exit-null",
        "exit-bool",
    ],
)
def test_a_success_or_exit_code_of_the_wrong_type_makes_the_outcome_unknown(
    success: Any, exit_code: Any
) -> None:
    data: dict[str, Any] = {"toolCallId": "a", "success": success, "result": {"content": "x"}}
    if exit_code is not ABSENT:
        data["shellExecution"] = {"exitCode": exit_code}
    doc = record(stream(start("a", path="a.py"), event("tool.execution_complete", data)))
    file = doc.file("a.py")
    assert file is not None
    assert (file.reads_succeeded, file.reads_failed, file.reads_unknown) == (0, 0, 1)


def test_only_view_counts_shell_and_other_tools_are_ignored() -> None:
    """``bash`` with a ``cat`` (and its ``possiblePaths`` permission hint), ``grep``, ``glob`` and
    a tool the model made up are counted as ignored calls, never reads."""
    bash = json.loads(start("b", "bash", command="cat src/a.py"))
    bash["data"]["shellToolInfo"] = {"possiblePaths": ["src/a.py"]}
    doc = record(
        stream(
            line(bash),
            complete("b", exit_code=0),
            start("g", "grep", pattern="x", paths=["src/a.py"]),
            complete("g"),
            start("n", "no_such_tool", path="src/a.py"),
            complete("n", success=False),
        )
    )
    assert reads(doc) == {}
    assert doc.counters.ignored == 3
    assert doc.counters.failed == 1


def test_a_subagents_views_count_and_its_task_call_is_ignored() -> None:
    """A sub-agent's own calls are in the stream (``agentId``, ``parentToolCallId``): executions
    against the same tree, paired by their own ids. The ``task`` call is ignored."""
    sub = json.loads(start("s", path="src/a.py"))
    sub["agentId"] = "agent-1"
    sub["data"]["parentToolCallId"] = "t"
    doc = record(
        stream(
            start("t", "task", prompt="read src/a.py", agent_type="explore"),
            line(sub),
            complete("s"),
            complete("t", content="I read src/b.py too"),
        )
    )
    assert reads(doc) == {"src/a.py": (1, 0)}
    assert doc.counters.ignored == 1


def test_requested_calls_and_progress_lines_are_never_evidence() -> None:
    """``assistant.message`` ``toolRequests`` and ``tool_call_delta`` are what the model asked
    for; partial results are progress: no call at all without the execution events."""
    request = {"toolCallId": "a", "name": "view", "arguments": {"path": "a.py"}}
    doc = record(
        stream(
            event("assistant.message", {"content": "", "toolRequests": [request]}),
            event("assistant.tool_call_delta", {"toolCallId": "a", "toolName": "view"}),
            event("tool.execution_partial_result", {"toolCallId": "a", "partialOutput": "x"}),
        )
    )
    assert reads(doc) == {}
    assert doc.counters.calls == 0


def test_a_complete_without_a_start_and_a_start_never_completed_are_no_evidence() -> None:
    doc = record(stream(complete("a"), start("b", path="b.py")))
    assert reads(doc) == {}
    assert sorted(issue_kinds(doc)) == [IssueKind.MISSING_END, IssueKind.MISSING_START]


def test_a_line_repeated_to_the_letter_is_one_call() -> None:
    data = stream(start("a", path="a.py"), start("a", path="a.py"), complete("a"), complete("a"))
    doc = record(data)
    assert reads(doc) == {"a.py": (1, 0)}
    assert issue_kinds(doc) == []


@pytest.mark.parametrize(
    "lines",
    [
        (start("a", path="a.py"), start("a", path="b.py"), complete("a")),
        (start("a", path="a.py"), complete("a"), complete("a", success=False)),
    ],
    ids=["started-again", "completed-again"],
)
def test_a_call_id_started_or_completed_again_differently_is_ambiguous(lines: tuple[str]) -> None:
    doc = record(stream(*lines))
    assert all(succeeded == 0 for succeeded, _ in reads(doc).values())
    assert issue_kinds(doc) == [IssueKind.AMBIGUOUS_CALL_ID]


@pytest.mark.parametrize(
    "arguments", [{}, {"path": 5}, {"file_path": "a.py"}], ids=["none", "number", "file_path"]
)
def test_a_view_without_a_string_path_is_arguments_unavailable(arguments: dict[str, Any]) -> None:
    doc = record(stream(start("a", **arguments), complete("a")))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.ARGUMENTS_UNAVAILABLE]
    assert doc.unattributed_calls == 1


# --- paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelled", "path"),
    [
        ("src/a.py", "src/a.py"),
        (f"{REPO_ROOT}/src/a.py", "src/a.py"),
        ("@src/a.py", "@src/a.py"),
        ("src\\a.py", "src\\a.py"),
    ],
)
def test_paths_are_repo_relative_and_spelled_as_opened(spelled: str, path: str) -> None:
    assert reads(record(stream(start("a", path=spelled), complete("a")))) == {path: (1, 0)}


@pytest.mark.parametrize("spelled", ["/etc/passwd", "../outside.py", f"{REPO_ROOT}/.git/HEAD"])
def test_a_view_outside_the_repository_is_rejected_and_labelled(spelled: str) -> None:
    doc = record(stream(start("a", path=spelled), complete("a")))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.PATH_REJECTED]


# --- what a view showed ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "seen", "ranges"),
    [
        ({"view_range": [3, 6]}, [LineRange(start=3, end=6)], [(2, 6)]),
        ({"view_range[0]": 3, "view_range[1]": 6}, [LineRange(start=3, end=6)], [(2, 6)]),
        ({"view_range": [40, -1]}, [], [(39, None)]),
    ],
    ids=["range", "flattened", "to-the-end"],
)
def test_the_view_range_is_what_the_view_showed(
    arguments: dict[str, Any], seen: list[LineRange], ranges: list[tuple[int, int | None]]
) -> None:
    """1-based and inclusive; ``-1`` runs to the last line, which needs the file to be told."""
    file = record(stream(start("a", path="a.py", **arguments), complete("a"))).file("a.py")
    assert file is not None
    assert file.lines_seen == seen
    assert [(r.offset, r.end) for r in file.ranges] == ranges
    assert file.partial


def test_a_range_to_the_end_is_told_with_the_file_at_the_revision() -> None:
    tail = "".join((REVISION_FILES / "src/api/models.py").read_text().splitlines(True)[29:])
    data = stream(
        start("a", path="src/api/models.py", view_range=[30, -1]), complete("a", content=tail)
    )
    file = record(data, diff=DIFF, content=revision_content()).file("src/api/models.py")
    assert file is not None
    assert file.lines_seen == [LineRange(start=30, end=46)]


@pytest.mark.parametrize("view_range", [[0, 5], [6, 3], [1], "1-5", [1, "5"], [2**64, -1]], ids=str)
def test_a_view_range_that_cannot_be_read_is_a_view_of_unknown_lines(view_range: Any) -> None:
    file = record(stream(start("a", path="a.py", view_range=view_range), complete("a"))).file(
        "a.py"
    )
    assert file is not None
    assert (file.reads_succeeded, file.reads_lines_unknown) == (1, 1)
    assert file.lines_seen == []


@pytest.mark.parametrize(
    ("content", "telemetry"),
    [
        ("", None),
        ("diff --git a/a.py b/a.py", {"metrics": {"resultLength": 0, "resultForLlmLength": 0}}),
        ("File too large to read at once (75.1 KB). Consider using the grep tool.", None),
        ("Too large", {"properties": {"largeOutputAvoided": "true"}}),
        ("a.py\nb.py", {"properties": {"viewType": "directory"}}),
    ],
    ids=["empty", "empty-file", "too-large-text", "too-large-flag", "directory"],
)
def test_a_view_that_gave_the_model_nothing_of_a_file_is_not_evidence(
    content: str, telemetry: dict[str, Any] | None
) -> None:
    """Copilot says ``success: true`` for an empty file (whose ``content`` is a diff-like
    placeholder), a file over its size limit, and a directory listing: none showed a line."""
    data = stream(start("a", path="a.py"), complete("a", content=content, telemetry=telemetry))
    doc = record(data)
    file = doc.file("a.py")
    assert file is not None
    assert (file.reads_succeeded, file.reads_empty) == (0, 1)
    assert issue_kinds(doc) == [IssueKind.EMPTY_RESULT]


def test_a_result_cut_for_the_model_shows_unknown_lines() -> None:
    telemetry = {"metrics": {"resultLength": 9000, "resultForLlmLength": 4000}}
    doc = record(stream(start("a", path="a.py"), complete("a", telemetry=telemetry)))
    file = doc.file("a.py")
    assert file is not None
    assert (file.reads_succeeded, file.reads_lines_unknown, file.lines_seen_whole) == (1, 1, False)


# --- completion --------------------------------------------------------------------------------


def test_the_result_line_completes_the_stream_and_a_later_turn_reopens_it() -> None:
    assert record(stream(start("a", path="a.py"), complete("a"))).stream_complete
    assert not record(stream(start("a", path="a.py"), complete=False)).stream_complete
    assert not record(stream(complete=True) + (TURN + "\n").encode()).stream_complete


# --- lines that cannot be read -----------------------------------------------------------------


def test_a_cut_off_complete_line_makes_only_its_file_unknown() -> None:
    cut = complete("a")
    lines = (start("a", path="a.py"), start("b", path="b.py"), complete("b"), cut[:40])
    doc = record(stream(*lines, complete=False))
    assert reads(doc) == {"a.py": (0, 0), "b.py": (1, 0)}
    file = doc.file("a.py")
    assert file is not None
    assert file.reads_unknown == 1
    assert not doc.stream_complete


def test_an_unreadable_start_of_a_completed_call_makes_claims_without_evidence_unknown() -> None:
    cut = start("a", path="a.py")
    doc = record(stream(cut[:60], complete("a")))
    assert reads(doc) == {}
    assert doc.unattributed_calls == 1


@pytest.mark.parametrize(
    "bad",
    ["[1, 2]", '{"type": "session.info", "data": {"x": ', '{"type": "result", "sessionId'],
    ids=["array", "other-event-cut", "result-cut"],
)
def test_a_broken_line_that_names_no_call_affects_no_call(bad: str) -> None:
    doc = record(stream(start("a", path="a.py"), complete("a"), bad))
    assert reads(doc) == {"a.py": (1, 0)}
    assert doc.unattributed_calls == 0
    assert doc.counters.malformed_lines == 1


def test_progress_and_model_output_deltas_are_passed_over_from_their_first_bytes() -> None:
    """A delta of the model's text is passed over; the whole message is read, as the model's
    own text (DESIGN §6 rule 29)."""
    decoder = ADAPTER.decoder()
    for kind in ("assistant.message_delta", "assistant.tool_call_delta", "tool.shell_output"):
        head = event(kind, {"toolCallId": "a"}).encode()[:256]
        assert decoder.classify(head) is LineClass.SKIP, kind
    for kind in ("assistant.message", "assistant.reasoning"):
        head = event(kind, {"content": "x"}).encode()[:256]
        assert decoder.classify(head) is LineClass.PARSE, kind
    assert decoder.classify(start("a", path="a.py").encode()[:256]) is LineClass.PARSE


def test_a_complete_line_over_the_line_limit_is_read_as_it_flows() -> None:
    data = stream(start("a", path="a.py"), complete("a", content="x" * 300_000))
    assert record(data, max_line_bytes=4096) == record(data)
    assert reads(record(data, max_line_bytes=4096)) == {"a.py": (1, 0)}


def test_unknown_event_kinds_are_counted_as_unrecognised() -> None:
    doc = record(stream(line({"type": "telemetry", "data": {}}), event("session.info", {})))
    assert doc.counters.unrecognised_events == 1


# --- real captures and golden files ------------------------------------------------------------

STREAMS = [*sorted((DATA / FORMAT).glob("*.jsonl")), PROBE]


def test_the_capture_says_what_the_reviewer_did() -> None:
    """Copilot CLI 1.0.102 against the scripted model: a whole view, a relative view and a
    ranged one in parallel, a missing file and a range past the end (``success: false``), a
    directory (a listing: nothing), a range to the end, a made-up tool, ``cat`` in bash
    (ignored) and a ``cat`` of a missing file (``success: true``, exit code 1: failed)."""
    doc = record(CAPTURE.read_bytes())
    assert doc.stream_complete
    assert reads(doc) == {
        "README.md": (1, 0),
        "docs/guide.md": (0, 1),
        "src/api/handler.py": (0, 1),
        "src/api/handlers.py": (1, 0),
        "src/api/models.py": (1, 0),
        "src/util": (0, 0),
        "src/util/strings.py": (1, 0),
    }
    assert (doc.counters.failed, doc.counters.ignored) == (4, 4)


def test_the_large_file_capture_shows_what_copilot_gave_the_model() -> None:
    """A view of a 3,000-line file without a range is refused with ``success: true``; with a
    range it shows those lines, with ``forceReadLargeFiles`` the whole file; an empty file's
    view showed nothing."""
    doc = record((DATA / FORMAT / "copilot_large.jsonl").read_bytes())
    big, empty = doc.file("big.txt"), doc.file("empty.txt")
    assert big is not None
    assert empty is not None
    assert (big.reads_succeeded, big.reads_empty, big.lines_seen_whole) == (2, 1, True)
    assert (empty.reads_succeeded, empty.reads_empty) == (0, 1)


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.stem)
def test_every_capture_is_sniffed_as_copilot_cli(path: Path) -> None:
    prefix = path.read_bytes()[: 64 * 1024]
    assert sniff(head_lines(prefix)) == FORMAT
    assert sniff(head_lines(prefix, max_bytes=256)) == FORMAT


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.stem)
def test_golden_evidence(path: Path) -> None:
    doc = record(path.read_bytes())
    check_golden_evidence(GOLDEN / FORMAT / f"{path.stem}.evidence.json", doc)


def test_golden_evidence_of_the_capture_with_its_pinned_diff() -> None:
    doc = record(CAPTURE.read_bytes(), diff=DIFF, content=revision_content())
    check_golden_evidence(GOLDEN / FORMAT / f"{CAPTURE.stem}.diff.evidence.json", doc)


def test_registered_under_its_name() -> None:
    assert ADAPTERS[FORMAT] is ADAPTER


def test_without_shell_execution_the_output_trailer_gives_the_exit_code() -> None:
    """Copilot CLI 1.0.82 writes no ``shellExecution``: a shell command that exited 1 says so
    only in its output's last line, and is a failed call, as 1.0.102's exit code makes it."""
    capture = DATA / "copilot-cli" / "older_1.0.82_copilot_overclaim.jsonl"
    assert b'"shellExecution"' not in capture.read_bytes()
    document = record_bytes(capture.read_bytes(), "copilot-cli")
    assert (document.counters.succeeded, document.counters.failed) == (5, 3)
