"""Claude Code adapter (stream-json and transcripts): one stream per rule, the real capture's
truth, and golden files for the capture and the crafted streams in ``tests/data/claude-code``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters.claude_code import ADAPTER
from coverage_gate.contracts.model import Depth, EvidenceDocument, IssueKind, LineRange
from coverage_gate.core.events import ByteSpan, LineClass, ReadAction, Shown, ToolEnd, ToolStart
from tests.conftest import (
    DATA,
    GOLDEN,
    REPO_ROOT,
    REVISION_FILES,
    assert_capture_reproduces_truth,
    check_golden_evidence,
    record_bytes,
    revision_content,
    stream_truths,
)

FORMAT = "claude-code"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


INIT = line(
    {"type": "system", "subtype": "init", "cwd": REPO_ROOT, "session_id": "s1", "tools": ["Read"]}
)


def use(call_id: str, name: str = "Read", parent: str | None = None, **arguments: Any) -> str:
    """An assistant line asking for one tool."""
    block = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    message = {"id": f"msg_{call_id}", "role": "assistant", "content": [block], "stop_reason": None}
    return line(
        {"type": "assistant", "message": message, "parent_tool_use_id": parent, "session_id": "s1"}
    )


def result(
    call_id: str,
    *,
    is_error: Any = None,
    text: str = "1\tcontent",
    parent: str | None = None,
    file: dict[str, int] | None = None,
    decision: str | None = None,
) -> str:
    """A user line carrying one tool result; ``is_error=None`` leaves the key out."""
    block: dict[str, Any] = {"tool_use_id": call_id, "type": "tool_result", "content": text}
    if is_error is not None:
        block["is_error"] = is_error
    obj: dict[str, Any] = {
        "type": "user",
        "message": {"role": "user", "content": [block]},
        "parent_tool_use_id": parent,
        "session_id": "s1",
    }
    if file is not None:
        obj["tool_use_result"] = {"type": "text", "file": {"filePath": "x", **file}}
    if decision is not None:
        obj["tool_result_meta"] = [{"id": call_id, "permission_decision": {"decision": decision}}]
    return line(obj)


def done(*denied: str) -> str:
    denials = [{"tool_name": "Read", "tool_use_id": d, "tool_input": {}} for d in denied]
    return line(
        {
            "duration_ms": 1,
            "permission_denials": denials,
            "is_error": False,
            "subtype": "success",
            "result": "{}",
            "type": "result",
        }
    )


def stream(*lines: str, complete: bool = True) -> bytes:
    body = [INIT, *lines, *([done()] if complete else [])]
    return ("\n".join(body) + "\n").encode()


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def issue_kinds(document: EvidenceDocument) -> list[IssueKind]:
    return [issue.kind for issue in document.issues]


def record(data: bytes, **kwargs: Any) -> EvidenceDocument:
    return record_bytes(data, FORMAT, **kwargs)


# --- what a call is ----------------------------------------------------------------------------


def test_read_tool_use_and_its_result_pair_by_id_not_by_order() -> None:
    data = stream(
        use("a", file_path="src/a.py"),
        use("b", file_path="src/b.py"),
        result("b", is_error=True, text="File does not exist."),
        result("a"),
    )
    assert reads(record(data)) == {"src/a.py": (1, 0), "src/b.py": (0, 1)}


@pytest.mark.parametrize(
    ("is_error", "succeeded"),
    [(None, (1, 0)), (False, (1, 0)), (True, (0, 1)), ("false", (0, 0)), (0, (0, 0))],
    ids=["absent", "false", "true", "string", "zero"],
)
def test_success_only_when_is_error_is_absent_or_false(
    is_error: Any, succeeded: tuple[int, int]
) -> None:
    """A non-boolean ``is_error`` is neither a success nor a failure (its outcome is unknown)."""
    doc = record(stream(use("a", file_path="a.py"), result("a", is_error=is_error)))
    assert reads(doc) == {"a.py": succeeded}


def test_other_tools_are_ignored_and_never_parsed() -> None:
    """Bash, Grep, Glob are counted as ignored calls; a `cat` inside Bash is no read."""
    data = stream(
        use("b", "Bash", command="cat src/a.py"),
        result("b"),
        use("g", "Grep", pattern="x", path="src/a.py"),
        result("g"),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert doc.counters.ignored == 2


def test_read_without_a_string_file_path_is_arguments_unavailable() -> None:
    no_input = json.loads(use("c"))
    no_input["message"]["content"][0]["input"] = "a.py"
    data = stream(
        use("a", path="a.py"),
        result("a"),
        use("b", file_path=5),
        result("b"),
        line(no_input),
        result("c"),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.ARGUMENTS_UNAVAILABLE] * 3


def test_result_detail_without_a_usable_file_range_records_no_range() -> None:
    """Claude's tool_use_result is a string on errors and has no line fields for images."""
    for detail in (
        "Error: x",
        {"type": "image"},
        {"file": {"startLine": 0, "numLines": 1, "totalLines": 1}},
    ):
        obj = json.loads(result("a"))
        obj["tool_use_result"] = detail
        (end,) = ADAPTER.decoder().decode(line(obj).encode(), 1)
        assert isinstance(end, ToolEnd)
        assert end.succeeded
        assert end.result_range is None


def test_relative_path_resolves_against_the_init_cwd() -> None:
    init = INIT.replace(f'"cwd":"{REPO_ROOT}"', f'"cwd":"{REPO_ROOT}/src"')
    data = ("\n".join([init, use("a", file_path="api/x.py"), result("a"), done()]) + "\n").encode()
    assert reads(record(data)) == {"src/api/x.py": (1, 0)}


def test_absolute_path_inside_the_repo_becomes_repo_relative() -> None:
    data = stream(use("a", file_path=f"{REPO_ROOT}/src/a.py"), result("a"))
    assert reads(record(data)) == {"src/a.py": (1, 0)}


def test_read_of_a_path_outside_the_repo_is_rejected_and_labelled() -> None:
    doc = record(stream(use("a", file_path="/etc/passwd"), result("a")))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.PATH_REJECTED]


def test_read_of_a_directory_fails_and_is_no_evidence() -> None:
    error = "EISDIR: illegal operation on a directory, read '/home/user/repo/src/util'"
    doc = record(stream(use("a", file_path="src/util"), result("a", is_error=True, text=error)))
    assert reads(doc) == {"src/util": (0, 1)}


# --- ranges are lines --------------------------------------------------------------------------


def test_reported_line_range_is_recorded_zero_based_and_end_exclusive() -> None:
    file = {"startLine": 11, "numLines": 20, "totalLines": 100}
    doc = record(stream(use("a", file_path="a.py", offset=11, limit=20), result("a", file=file)))
    (entry,) = doc.files
    assert entry.partial
    assert [(r.offset, r.end, r.total) for r in entry.ranges] == [(10, 30, 100)]


def test_whole_file_reported_by_lines_is_not_partial() -> None:
    file = {"startLine": 1, "numLines": 47, "totalLines": 47}
    doc = record(stream(use("a", file_path="a.py"), result("a", file=file)))
    (entry,) = doc.files
    assert not entry.partial
    assert entry.ranges == []


def test_a_read_past_the_end_returned_nothing_and_is_not_evidence() -> None:
    """Claude Code reports an offset past the end without ``is_error``: zero lines came back."""
    warning = "<system-reminder>Warning: the file exists but is shorter than the provided offset"
    file = {"startLine": 500, "numLines": 0, "totalLines": 17}
    data = stream(
        use("a", file_path="README.md", offset=500, limit=20), result("a", text=warning, file=file)
    )
    doc = record(data, diff=DIFF)
    (entry,) = doc.files
    assert (entry.reads_succeeded, entry.reads_failed, entry.reads_empty) == (0, 0, 1)
    assert entry.depth is None
    assert issue_kinds(doc) == [IssueKind.EMPTY_RESULT]


def test_the_reported_lines_are_the_lines_seen() -> None:
    """Lines 1-5 of README.md (17 lines, changed at 13-17): read, but no change seen."""
    file = {"startLine": 1, "numLines": 5, "totalLines": 17}
    data = stream(use("a", file_path="README.md", offset=1, limit=5), result("a", file=file))
    (entry,) = record(data, diff=DIFF).files
    assert entry.reads_succeeded == 1
    assert entry.lines_seen == [LineRange(start=1, end=5)]
    assert entry.depth is not None
    assert entry.depth.depth is Depth.NONE
    assert entry.depth.unseen == [LineRange(start=13, end=17)]


def test_without_the_result_detail_the_request_says_which_lines() -> None:
    """``offset`` alone reads Claude Code's default of 2000 lines from there; no range at all
    reads them from the top: every line of a file no longer than that once its length is known
    (README.md has 17 at the revision), lines 1-2000 while it is not."""
    readme = (REVISION_FILES / "README.md").read_text().splitlines()
    numbered = "\n".join(f"{n}\t{text}" for n, text in enumerate(readme, 1))
    tail = "\n".join(f"{n}\t{text}" for n, text in enumerate(readme, 1) if n >= 14)
    ranged = stream(use("a", file_path="README.md", offset=14), result("a", text=tail))
    (entry,) = record(ranged).files
    assert entry.lines_seen == [LineRange(start=14, end=2013)]
    unranged = stream(use("a", file_path="README.md"), result("a", text=numbered))
    (asked,) = record(unranged).files
    assert (asked.lines_seen, asked.lines_seen_whole) == ([LineRange(start=1, end=2000)], False)
    (whole,) = record(unranged, diff=DIFF, content=revision_content()).files
    assert (whole.lines_seen, whole.lines_seen_whole) == ([LineRange(start=1, end=17)], True)
    assert whole.depth is not None and whole.depth.depth is Depth.FULL


def test_requested_offset_is_one_based_and_becomes_zero_based() -> None:
    decoder = ADAPTER.decoder()
    (event,) = decoder.decode(use("a", file_path="a.py", offset=5, limit=3).encode(), 1)
    assert isinstance(event, ToolStart)
    assert event.action == ReadAction(
        path="a.py", offset=4, limit=3, cwd=None, shown=Shown.lines(5, 7)
    )


@pytest.mark.parametrize(
    ("offset", "limit", "expected"),
    [(-3, 5, (None, 5)), ("5", 5, (None, 5)), (5, -1, (4, None)), (5, True, (4, None))],
)
def test_requested_offset_or_limit_that_is_not_a_count_is_left_out(
    offset: Any, limit: Any, expected: tuple[int | None, int | None]
) -> None:
    decoder = ADAPTER.decoder()
    (event,) = decoder.decode(use("a", file_path="a.py", offset=offset, limit=limit).encode(), 1)
    assert isinstance(event, ToolStart)
    assert isinstance(event.action, ReadAction)
    assert (event.action.offset, event.action.limit) == expected


def test_result_range_is_only_taken_from_a_line_with_one_result() -> None:
    decoder = ADAPTER.decoder()
    two = json.loads(result("a", file={"startLine": 1, "numLines": 2, "totalLines": 9}))
    two["message"]["content"].append({"tool_use_id": "b", "type": "tool_result", "content": "x"})
    events = decoder.decode(line(two).encode(), 3)
    assert [e.result_range for e in events if isinstance(e, ToolEnd)] == [None, None]
    (single,) = decoder.decode(
        result("c", file={"startLine": 1, "numLines": 2, "totalLines": 9}).encode(), 4
    )
    assert isinstance(single, ToolEnd)
    assert single.result_range == ByteSpan(offset=0, end=2, total=9)


# --- denials -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Claude requested permissions to read from a.py, but you haven't granted it yet.",
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        "Permission to use Read has been denied.",
    ],
)
def test_denial_text_without_is_error_is_a_failed_call(text: str) -> None:
    doc = record(stream(use("a", file_path="a.py"), result("a", text=text)))
    assert reads(doc) == {"a.py": (0, 1)}


def test_denial_text_in_a_list_of_content_blocks_is_a_failed_call() -> None:
    blocks = json.loads(result("a"))
    blocks["message"]["content"][0]["content"] = [
        {"type": "text", "text": "The user doesn't want to proceed with this tool use."}
    ]
    assert reads(record(stream(use("a", file_path="a.py"), line(blocks)))) == {"a.py": (0, 1)}


def test_denial_without_a_call_id_in_the_result_line_is_passed_over() -> None:
    final = json.loads(done())
    final["permission_denials"] = [{"tool_name": "Read"}, "junk"]
    data = (
        stream(use("a", file_path="a.py"), result("a"), complete=False)
        + (line(final) + "\n").encode()
    )
    doc = record(data)
    assert reads(doc) == {"a.py": (1, 0)}
    assert doc.stream_complete


def test_denial_words_inside_file_content_are_not_a_denial() -> None:
    """Only a result that *starts* with a denial is one; a file may quote the words."""
    text = "1\tThe user doesn't want to proceed with this tool use"
    assert reads(record(stream(use("a", file_path="a.py"), result("a", text=text)))) == {
        "a.py": (1, 0)
    }


def test_permission_decision_deny_in_result_meta_is_a_failed_call() -> None:
    doc = record(stream(use("a", file_path="a.py"), result("a", decision="deny")))
    assert reads(doc) == {"a.py": (0, 1)}


def test_denial_listed_in_the_result_line_for_a_call_without_result_fails_it() -> None:
    data = stream(use("a", file_path="a.py"), complete=False) + (done("a") + "\n").encode()
    doc = record(data)
    assert reads(doc) == {"a.py": (0, 1)}
    assert doc.stream_complete


def test_denial_listed_for_a_call_reported_as_success_makes_it_ambiguous() -> None:
    data = stream(use("a", file_path="a.py"), result("a"), complete=False)
    doc = record(data + (done("a") + "\n").encode())
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.AMBIGUOUS_CALL_ID]


# --- pairing -----------------------------------------------------------------------------------


def test_unmatched_and_reused_ids_are_no_evidence_and_labelled() -> None:
    data = stream(
        use("a", file_path="a.py"),  # never answered
        result("zz"),  # answers nothing
        use("c", file_path="c.py"),
        use("c", file_path="d.py"),  # the same id for another read
        result("c"),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert sorted(issue_kinds(doc)) == sorted(
        [IssueKind.MISSING_END, IssueKind.MISSING_START, IssueKind.AMBIGUOUS_CALL_ID]
    )


def test_a_line_repeated_to_the_byte_is_one_call_not_an_ambiguous_id() -> None:
    """A repeated start or end that says exactly the same thing is a repeated line (damage, or a
    harness writing it twice), not a second call: the honest read still counts."""
    data = stream(
        use("c", file_path="c.py"),
        use("c", file_path="c.py"),
        result("c"),
        result("c"),
    )
    doc = record(data)
    assert reads(doc) == {"c.py": (1, 0)}
    assert issue_kinds(doc) == []


# --- sub-agents --------------------------------------------------------------------------------


def test_subagent_reads_count_and_task_calls_are_ignored() -> None:
    """Interleaved sub-agents: each read pairs by its own id, whatever the order."""
    data = stream(
        use("t1", "Task", prompt="read a"),
        use("t2", "Agent", prompt="read b"),
        use("s1", file_path="a.py", parent="t1"),
        use("s2", file_path="b.py", parent="t2"),
        result("s2", parent="t2"),
        result("s1", is_error=True, text="File does not exist.", parent="t1"),
        result("t2", text="b.py looks fine"),
        result("t1", text="a.py looks fine"),
    )
    doc = record(data)
    assert reads(doc) == {"a.py": (0, 1), "b.py": (1, 0)}
    assert doc.counters.ignored == 2


def test_subagent_task_result_text_is_never_evidence() -> None:
    data = stream(use("t1", "Task", prompt="read a.py"), result("t1", text="I read a.py fully."))
    assert reads(record(data)) == {}


# --- completion --------------------------------------------------------------------------------


def test_stream_json_without_result_line_is_incomplete() -> None:
    doc = record(stream(use("a", file_path="a.py"), result("a"), complete=False))
    assert not doc.stream_complete
    assert reads(doc) == {"a.py": (1, 0)}


def test_main_agent_line_after_result_reopens_the_stream() -> None:
    data = (
        stream(use("a", file_path="a.py"), result("a"))
        + (use("b", file_path="b.py") + "\n").encode()
    )
    assert not record(data).stream_complete


def test_subagent_line_after_result_does_not_reopen() -> None:
    data = stream() + (use("s", file_path="b.py", parent="t9") + "\n").encode()
    assert record(data).stream_complete


def test_partial_message_stream_events_are_passed_over_unread() -> None:
    """--include-partial-messages: a tool_use inside a stream_event is model output."""
    event = line(
        {
            "type": "stream_event",
            "event": {
                "type": "content_block_start",
                "content_block": {"type": "tool_use", "id": "p", "name": "Read", "input": {}},
            },
            "session_id": "s1",
        }
    )
    assert ADAPTER.decoder().classify(event.encode()[:256]) is LineClass.SKIP
    doc = record(stream(event, event))
    assert reads(doc) == {}
    assert doc.counters.calls == 0


# --- transcripts -------------------------------------------------------------------------------


def entry(kind: str, content: Any, *, stop: str | None = None, sidechain: bool = False) -> str:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message |= {"id": "m", "type": "message", "stop_reason": stop}
    return line(
        {
            "parentUuid": "p0",
            "isSidechain": sidechain,
            "userType": "external",
            "cwd": REPO_ROOT,
            "sessionId": "s1",
            "version": "2.1.0",
            "type": kind,
            "message": message,
            "uuid": "u1",
        }
    )


def t_use(call_id: str, path: str, *, sidechain: bool = False) -> str:
    block = {"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": path}}
    return entry("assistant", [block], stop="tool_use", sidechain=sidechain)


def t_result(call_id: str, *, sidechain: bool = False) -> str:
    block = {"tool_use_id": call_id, "type": "tool_result", "content": "1\tx"}
    return entry("user", [block], sidechain=sidechain)


T_PROMPT = entry("user", "Review the change")
T_ANSWER = entry("assistant", [{"type": "text", "text": "{}"}], stop="end_turn")


def transcript(*lines: str) -> bytes:
    return (
        "\n".join([line({"type": "summary", "summary": "s", "leafUuid": "u"}), *lines]) + "\n"
    ).encode()


def test_transcript_reads_resolve_against_the_cwd_each_line_carries() -> None:
    doc = record(transcript(T_PROMPT, t_use("a", "src/a.py"), t_result("a"), T_ANSWER))
    assert reads(doc) == {"src/a.py": (1, 0)}


def test_transcript_completes_on_a_main_chain_end_turn_answer() -> None:
    doc = record(transcript(T_PROMPT, t_use("a", "a.py"), t_result("a"), T_ANSWER))
    assert doc.stream_complete


def test_transcript_without_end_turn_answer_is_incomplete() -> None:
    answer = entry("assistant", [{"type": "text", "text": "{}"}], stop=None)
    doc = record(transcript(T_PROMPT, t_use("a", "a.py"), t_result("a"), answer))
    assert not doc.stream_complete


def test_transcript_sidechain_end_turn_does_not_complete_but_its_reads_count() -> None:
    side_answer = entry(
        "assistant", [{"type": "text", "text": "ok"}], stop="end_turn", sidechain=True
    )
    doc = record(
        transcript(
            T_PROMPT, t_use("s", "b.py", sidechain=True), t_result("s", sidechain=True), side_answer
        )
    )
    assert reads(doc) == {"b.py": (1, 0)}
    assert not doc.stream_complete


def test_transcript_work_after_an_answer_reopens_until_the_next_answer() -> None:
    reopened = transcript(
        T_PROMPT, T_ANSWER, entry("user", "more"), t_use("a", "a.py"), t_result("a")
    )
    assert not record(reopened).stream_complete
    assert record(reopened + (T_ANSWER + "\n").encode()).stream_complete


def test_stream_json_end_turn_without_transcript_fields_is_not_completion() -> None:
    """Only the result line completes stream-json: an assistant end_turn is not the run's end."""
    answer = line(
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [], "stop_reason": "end_turn"},
            "parent_tool_use_id": None,
            "session_id": "s1",
        }
    )
    assert not record(stream(answer, complete=False)).stream_complete


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        (b"[1, 2]", "not an object"),
        (b'{"type": 5}', "'type'"),
        (b'{"type": "assistant", "message": "hi"}', "'message'"),
        (b'{"type": "assistant", "message": {"content": 7}}', "'message.content'"),
        (b'{"type": "user", "message": {"content": [{"type": "tool_result"}]}}', "'tool_use_id'"),
        (
            b'{"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "R"}]}}',
            "'id'",
        ),
        (b'{"type": "assistant", "mess', "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested"),
        (b'{"type": "user", "message": {"content": "caf\xff"}}', "UTF-8"),
    ],
    ids=["array", "type", "message", "content", "result-id", "use-id", "cut", "deep", "utf8"],
)
def test_malformed_lines_are_counted_with_a_detail_naming_the_fault(
    raw: bytes, detail: str
) -> None:
    doc = record(stream(complete=False) + raw + b"\n" + (done() + "\n").encode())
    assert doc.counters.malformed_lines == 1
    (issue,) = doc.issues
    assert issue.kind is IssueKind.MALFORMED_LINE
    assert issue.line == 2
    assert detail in issue.detail


def test_unknown_line_kinds_are_counted_as_unrecognised() -> None:
    doc = record(stream(line({"type": "mystery", "x": 1})))
    assert doc.counters.unrecognised_events == 1
    assert doc.counters.malformed_lines == 0


def test_non_utf8_tool_result_line_makes_only_that_calls_outcome_unknown() -> None:
    bad = result("b").encode().replace(b"content", b"cont\xffent")
    data = stream(
        use("a", file_path="a.py"), result("a"), use("b", file_path="b.py"), complete=False
    )
    doc = record(data + bad + b"\n" + (done() + "\n").encode())
    assert reads(doc) == {"a.py": (1, 0), "b.py": (0, 0)}
    assert [(f.path, f.reads_unknown) for f in doc.files] == [("a.py", 0), ("b.py", 1)]
    assert doc.unattributed_calls == 0
    assert sorted(issue_kinds(doc)) == sorted(
        [IssueKind.MALFORMED_LINE, IssueKind.OUTCOME_UNREADABLE]
    )


def test_result_line_of_several_megabytes_is_decoded() -> None:
    text = "".join(f"{n}\t{'x' * 80}\n" for n in range(1, 60_001))  # ~5 MB
    file = {"startLine": 1, "numLines": 60_000, "totalLines": 60_000}
    data = stream(use("a", file_path="big.py"), result("a", text=text, file=file))
    assert len(data) > 5_000_000
    doc = record(data)
    assert reads(doc) == {"big.py": (1, 0)}
    check_golden_evidence(GOLDEN / FORMAT / "generated_several_mb_line.evidence.json", doc)


def test_result_line_over_the_line_limit_is_read_as_it_flows() -> None:
    data = stream(use("a", file_path="big.py"), result("a", text="x" * 10_000))
    doc = record(data, max_line_bytes=4096)
    assert reads(doc) == {"big.py": (1, 0)}
    assert issue_kinds(doc) == []


# --- real capture and golden files -------------------------------------------------------------

CAPTURES = stream_truths(DATA / FORMAT)
STREAMS = sorted((DATA / FORMAT).glob("*.jsonl"))


@pytest.mark.parametrize("truth_path", CAPTURES, ids=lambda p: p.name.split(".")[0])
def test_capture_reproduces_its_truth(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    doc = record((truth_path.parent / truth["capture"]).read_bytes())
    assert_capture_reproduces_truth(doc, truth)


def test_capture_head_is_sniffed_as_this_format() -> None:
    data = (DATA / FORMAT / "claude_b_overclaim.jsonl").read_bytes()
    assert ADAPTER.sniff([raw[:256] for raw in data.splitlines()[:3]])


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.stem)
def test_golden_evidence(path: Path) -> None:
    doc = record(path.read_bytes())
    check_golden_evidence(GOLDEN / FORMAT / f"{path.stem}.evidence.json", doc)


@pytest.mark.parametrize("flag", [None, "false", 0, "true"])
def test_is_error_other_than_a_boolean_is_no_success_and_its_outcome_unknown(flag: Any) -> None:
    """Claude Code writes a boolean ``is_error``. Any other value on a real capture's successful
    result is damage: the read no longer counts, and its file is unknown, never failed."""
    capture = DATA / "claude-code" / "claude_b_overclaim.jsonl"
    before = record(capture.read_bytes())
    lines = capture.read_bytes().splitlines()
    reads: set[str] = set()
    for index, raw in enumerate(lines):
        obj = json.loads(raw)
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        items = [block for block in (content or []) if isinstance(block, dict)]
        reads |= {b["id"] for b in items if b.get("type") == "tool_use" and b["name"] == "Read"}
        blocks = [
            block
            for block in items
            if block.get("type") == "tool_result"
            and block.get("tool_use_id") in reads
            and block.get("is_error", False) is False
        ]
        if obj.get("type") == "user" and len(blocks) == 1:
            blocks[0]["is_error"] = flag
            lines[index] = json.dumps(obj).encode()
            break
    else:
        raise AssertionError("no successful tool_result in the capture")
    after = record(b"\n".join(lines) + b"\n")
    changed = [f for f in after.files if f.reads_unknown]
    assert len(changed) == 1
    was = before.file(changed[0].path)
    assert was is not None
    assert changed[0].reads_succeeded == was.reads_succeeded - 1
    assert changed[0].reads_failed == was.reads_failed


def test_golden_evidence_of_the_capture_with_its_pinned_diff() -> None:
    path = DATA / FORMAT / "claude_b_overclaim.jsonl"
    doc = record(path.read_bytes(), diff=DIFF)
    check_golden_evidence(GOLDEN / FORMAT / f"{path.stem}.diff.evidence.json", doc)


@pytest.mark.parametrize("odd", [None, [], 10**30])
def test_a_content_block_whose_type_cannot_be_read_is_unknown_never_unsupported(odd: Any) -> None:
    """A ``tool_result`` or ``tool_use`` block whose ``type`` is damaged, but that names its call,
    could be that call's end or start: the claim on that file is unknown, never unsupported."""
    damaged_end = result("a").replace('"type":"tool_result"', f'"type":{json.dumps(odd)}', 1)
    assert damaged_end != result("a")
    doc = record(stream(use("a", file_path="a.py"), damaged_end))
    assert [(f.path, f.reads_unknown) for f in doc.files] == [("a.py", 1)]
    damaged_start = use("b", file_path="b.py").replace(
        '"type":"tool_use"', f'"type":{json.dumps(odd)}', 1
    )
    assert damaged_start != use("b", file_path="b.py")
    doc = record(stream(damaged_start, result("b")))
    assert doc.unattributed_calls == 1
