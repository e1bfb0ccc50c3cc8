"""Codex adapters: the rollout file (per-file reads from Codex's own parsed commands) and
``codex exec --json`` (capability none); one stream per rule, the real captures' truth, and golden
files for the captures and the crafted streams in ``tests/data/codex-*``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters import codex_rollout
from coverage_gate.adapters._codex_commands import shown_by_command
from coverage_gate.adapters.codex_exec import EXEC_ADAPTER
from coverage_gate.adapters.codex_rollout import ROLLOUT_ADAPTER
from coverage_gate.contracts.model import Capability, Depth, EvidenceDocument, IssueKind, LineRange
from coverage_gate.core.events import (
    EMPTY_SHOWN,
    UNKNOWN_SHOWN,
    LineClass,
    ModelText,
    ReadAction,
    Shown,
    ToolStart,
)
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

ROLLOUT = "codex-rollout"
EXEC = "codex-exec"
CWD_URI = f"file://{REPO_ROOT}"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def envelope(kind: str, payload: dict[str, Any]) -> str:
    return line(
        {"timestamp": "2026-11-30T01:22:32.594Z", "ordinal": 1, "type": kind, "payload": payload}
    )


def call(call_id: str, cmd: str = "cat a.py", name: str = "exec_command") -> str:
    arguments = json.dumps({"cmd": cmd})
    return envelope(
        "response_item",
        {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id},
    )


def completed(
    call_id: str,
    *reads: str,
    status: str = "completed",
    exit_code: Any = 0,
    cwd: str | None = CWD_URI,
    parsed: list[dict[str, Any]] | None = None,
) -> str:
    """The harness's record of one finished command, with its parsed reads."""
    item: dict[str, Any] = {
        "type": "CommandExecution",
        "id": call_id,
        "command": ["/bin/bash", "-lc", "..."],
        "parsed_cmd": parsed
        if parsed is not None
        else [{"type": "read", "cmd": f"cat {p}", "name": p, "path": p} for p in reads],
        "status": status,
        "exit_code": exit_code,
    }
    if cwd is not None:
        item["cwd"] = cwd
    return envelope("event_msg", {"type": "item_completed", "item": item})


def output(call_id: str, text: str = "Process exited with code 0") -> str:
    return envelope(
        "response_item", {"type": "function_call_output", "call_id": call_id, "output": text}
    )


TASK_STARTED = envelope("event_msg", {"type": "task_started", "turn_id": "t1"})
TASK_COMPLETE = envelope("event_msg", {"type": "task_complete", "turn_id": "t1"})
TURN_CONTEXT = envelope("turn_context", {"turn_id": "t1", "cwd": REPO_ROOT})


def rollout(*lines: str, complete: bool = True) -> bytes:
    body = [TURN_CONTEXT, TASK_STARTED, *lines, *([TASK_COMPLETE] if complete else [])]
    return ("\n".join(body) + "\n").encode()


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def issue_kinds(document: EvidenceDocument) -> list[IssueKind]:
    return sorted(issue.kind for issue in document.issues)


def record(data: bytes, source: str = ROLLOUT, **kwargs: Any) -> EvidenceDocument:
    return record_bytes(data, source, **kwargs)


# --- codex-rollout: what a read is -------------------------------------------------------------


def test_parsed_read_of_a_completed_command_is_a_read() -> None:
    doc = record(rollout(call("c1"), completed("c1", "src/a.py"), output("c1")))
    assert reads(doc) == {"src/a.py": (1, 0)}
    assert doc.counters.calls == 1


@pytest.mark.parametrize(
    ("status", "exit_code", "succeeded"),
    [
        ("completed", 0, True),
        ("completed", 1, False),
        ("failed", 1, False),
        ("failed", 0, False),
        ("completed", None, None),
        ("completed", False, None),
        ("in_progress", 0, False),
        ("declined", None, False),
    ],
)
def test_success_needs_status_completed_and_exit_code_zero(
    status: str, exit_code: Any, succeeded: bool | None
) -> None:
    """A completed command whose exit code is not an integer is damage: no success, and no
    proven failure either (``None``: the outcome is unknown)."""
    data = rollout(call("c1"), completed("c1", "a.py", status=status, exit_code=exit_code))
    doc = record(data)
    expected = {True: (1, 0), False: (0, 1), None: (0, 0)}[succeeded]
    assert reads(doc) == {"a.py": expected}
    assert [f.reads_unknown for f in doc.files] == [1 if succeeded is None else 0]


def test_the_same_function_call_line_twice_is_one_call() -> None:
    """A start line repeated to the letter is one call; the honest read still counts."""
    doc = record(rollout(call("c1"), call("c1"), completed("c1", "a.py")))
    assert reads(doc) == {"a.py": (1, 0)}


def test_read_path_is_relative_to_the_command_cwd_uri() -> None:
    cwd = f"file://{REPO_ROOT}/docs%20dir"
    doc = record(rollout(call("c1"), completed("c1", "guide.md", cwd=cwd)))
    assert reads(doc) == {"docs dir/guide.md": (1, 0)}


def test_command_without_cwd_uses_the_turn_context_cwd() -> None:
    context = envelope("turn_context", {"cwd": f"{REPO_ROOT}/src"})
    doc = record(rollout(context, call("c1"), completed("c1", "api/x.py", cwd=None)))
    assert reads(doc) == {"src/api/x.py": (1, 0)}


def test_command_cwd_that_is_not_a_local_file_uri_falls_back_to_the_turn_cwd() -> None:
    doc = record(rollout(call("c1"), completed("c1", "a.py", cwd="https://example.org/x")))
    assert reads(doc) == {"a.py": (1, 0)}


def test_one_command_parsed_into_several_reads_gives_one_call_per_read() -> None:
    decoder = ROLLOUT_ADAPTER.decoder()
    decoder.decode(call("c1", "cat a.py b.py").encode(), 1)
    assert decoder.decode(completed("c1", "a.py", "b.py").encode(), 2) == []  # held
    events = decoder.decode(output("c1").encode(), 3)  # passed on with the output
    starts = [e for e in events if isinstance(e, ToolStart)]
    assert [(s.call_id, s.action) for s in starts] == [
        ("c1#1", ReadAction(path="a.py", cwd=REPO_ROOT, shown=Shown.whole())),
        ("c1#2", ReadAction(path="b.py", cwd=REPO_ROOT, shown=Shown.whole())),
    ]
    doc = record(rollout(call("c1"), completed("c1", "a.py", "b.py", exit_code=1)))
    assert reads(doc) == {"a.py": (0, 1), "b.py": (0, 1)}


def test_commands_without_parsed_reads_are_ignored_never_parsed_by_us() -> None:
    """`git diff` and `cat x | head` parse to unknown: we do not read the shell string."""
    unknown = [{"type": "unknown", "cmd": "cat src/a.py | head"}]
    listing = [{"type": "list_files", "cmd": "ls src", "path": "src"}]
    data = rollout(
        call("c1", "cat src/a.py | head"),
        completed("c1", parsed=unknown),
        call("c2", "ls src"),
        completed("c2", parsed=listing),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert doc.counters.ignored == 2


def test_parsed_read_without_a_path_is_arguments_unavailable() -> None:
    doc = record(rollout(call("c1"), completed("c1", parsed=[{"type": "read", "cmd": "cat"}])))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.ARGUMENTS_UNAVAILABLE]


def test_other_tools_end_with_their_output_and_are_ignored() -> None:
    plan = envelope(
        "response_item",
        {"type": "function_call", "name": "update_plan", "call_id": "p1", "arguments": "{}"},
    )
    planned = envelope(
        "response_item", {"type": "function_call_output", "call_id": "p1", "output": "Done"}
    )
    doc = record(rollout(plan, planned))
    assert doc.counters.calls == 1
    assert doc.counters.ignored == 1
    assert doc.issues == []
    assert doc.mutations == []


def test_an_apply_patch_tool_ends_with_its_output_and_is_a_mutation_of_its_file() -> None:
    patch = envelope(
        "response_item",
        {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "call_id": "p1",
            "input": "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** End Patch\n",
        },
    )
    patched = envelope(
        "response_item", {"type": "custom_tool_call_output", "call_id": "p1", "output": "Done"}
    )
    doc = record(rollout(patch, patched))
    assert doc.counters.calls == 1
    assert doc.counters.ignored == 0
    assert doc.files == []
    assert [(m.tool, m.path) for m in doc.mutations] == [("apply_patch", "src/a.py")]


# --- codex-rollout: which lines a read showed ------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat a.py", Shown.whole()),
        ("cat -n a.py", Shown.whole()),
        ("nl -ba a.py", Shown.whole()),
        ("sed -n '1,60p' a.py", Shown.lines(1, 60)),
        ("sed -n 12p a.py", Shown.lines(12, 12)),
        ("sed -n '40,$p' a.py", Shown.lines(40, None)),
        ("sed -n '9,3p' a.py", Shown.lines(9, 9)),  # sed prints line 9 alone
        ("head a.py", Shown.lines(1, 10)),
        ("head -n 5 a.py", Shown.lines(1, 5)),
        ("head -n5 a.py", Shown.lines(1, 5)),
        ("head -20 a.py", Shown.lines(1, 20)),
        ("head --lines=7 a.py", Shown.lines(1, 7)),
        ("head -n 0 a.py", EMPTY_SHOWN),
        ("tail -n 5 a.py", Shown.lines(-5, None)),
        ("tail a.py", Shown.lines(-10, None)),
        ("tail -n +30 a.py", Shown.lines(30, None)),
        # anything else: a read of an unknown range, never a whole one
        ("nl -ba a.py | sed -n '1,80p'", UNKNOWN_SHOWN),
        ("cat a.py|head", UNKNOWN_SHOWN),
        ("cat a.py > /tmp/x", UNKNOWN_SHOWN),
        ("sed -n '1,60p' ./a.py", UNKNOWN_SHOWN),  # not the path the harness named
        ("sed -n '/def/,/return/p' a.py", UNKNOWN_SHOWN),
        ("sed -n 0p a.py", UNKNOWN_SHOWN),
        ("sed '1,5d' a.py", UNKNOWN_SHOWN),
        ("head -c 100 a.py", UNKNOWN_SHOWN),
        ("head -n -5 a.py", UNKNOWN_SHOWN),
        ("less a.py", UNKNOWN_SHOWN),
        ("cat 'a.py", UNKNOWN_SHOWN),  # unbalanced quote
        (None, UNKNOWN_SHOWN),
    ],
)
def test_a_parsed_reads_command_says_which_lines_it_showed(
    command: str | None, expected: Shown
) -> None:
    assert shown_by_command(command, "a.py") == expected


def read_of(path: str, cmd: str) -> list[dict[str, Any]]:
    return [{"type": "read", "cmd": cmd, "name": path, "path": path}]


def test_a_sed_range_is_a_partial_read_of_those_lines_not_a_whole_one() -> None:
    data = rollout(call("c1"), completed("c1", parsed=read_of("a.py", "sed -n '1,60p' a.py")))
    (entry,) = record(data).files
    assert entry.reads_succeeded == 1
    assert entry.partial
    assert not entry.lines_seen_whole
    assert entry.lines_seen == [LineRange(start=1, end=60)]


def test_an_unrecognised_command_is_a_read_of_unknown_lines() -> None:
    cmd = "nl -ba src/api/handlers.py | sed -n '1,5p'"
    data = rollout(call("c1"), completed("c1", parsed=read_of("src/api/handlers.py", cmd)))
    (entry,) = record(data, diff=DIFF).files
    assert entry.reads_succeeded == 1
    assert entry.reads_lines_unknown == 1
    assert entry.lines_seen == []
    assert entry.depth is not None
    assert entry.depth.depth is Depth.UNKNOWN


def test_tail_is_told_in_lines_with_the_files_content() -> None:
    """strings.py has 16 lines; its changes are at 1-6: the last five lines show none of them."""
    data = rollout(
        call("c1"),
        completed("c1", parsed=read_of("src/util/strings.py", "tail -n 5 src/util/strings.py")),
    )
    (entry,) = record(data, diff=DIFF, content=revision_content()).files
    assert entry.lines_seen == [LineRange(start=12, end=16)]
    assert entry.depth is not None
    assert entry.depth.depth is Depth.NONE
    (unknown,) = record(data, diff=DIFF).files  # no content: its lines cannot be told
    assert unknown.depth is not None
    assert unknown.depth.depth is Depth.UNKNOWN


def test_a_command_that_printed_nothing_is_not_evidence() -> None:
    """``sed -n '500,520p'`` of a short file exits 0 with no output."""
    item = json.loads(completed("c1", parsed=read_of("a.py", "sed -n '500,520p' a.py")))
    item["payload"]["item"]["aggregated_output"] = ""
    doc = record(rollout(call("c1"), line(item)))
    (entry,) = doc.files
    assert (entry.reads_succeeded, entry.reads_empty) == (0, 1)
    assert issue_kinds(doc) == [IssueKind.EMPTY_RESULT]


# --- codex-rollout: what the model got of a long output ----------------------------------------

CUT_CAPTURE = DATA / ROLLOUT / "codex_cut_output.rollout.jsonl"


def captured_outputs() -> dict[str, str]:
    """The captured text Codex gave the model for each command, by the command it ran."""
    found: dict[str, str] = {}
    commands: dict[str, str] = {}
    for raw in CUT_CAPTURE.read_bytes().splitlines():
        payload = json.loads(raw)["payload"]
        if payload.get("type") == "function_call":
            commands[payload["call_id"]] = json.loads(payload["arguments"])["cmd"]
        elif payload.get("type") == "function_call_output":
            found[commands[payload["call_id"]]] = payload["output"]
    return found


CUT_CAT = captured_outputs()["cat data/numbers.txt"]
WHOLE_CAT = captured_outputs()["cat data/small.txt"]


def test_a_long_output_codex_cut_for_the_model_shows_unknown_lines_not_the_whole_file() -> None:
    """Real capture: Codex gave the model a head and a tail of `cat` of a 1500-line file (and of
    `sed -n '1,1200p'`): those reads show unknown lines, never the whole file or range. The
    short `head -n 3` and `cat` of a three-line file, not cut, keep their lines."""
    assert CUT_CAT.split("Output:\n", 1)[1].startswith("Warning: truncated output")
    assert "…26393 chars truncated…" in CUT_CAT
    numbers, small = record(CUT_CAPTURE.read_bytes()).files
    assert (numbers.path, numbers.reads_succeeded, numbers.reads_lines_unknown) == (
        "data/numbers.txt",
        3,
        2,
    )
    assert not numbers.lines_seen_whole
    assert numbers.lines_seen == [LineRange(start=1, end=3)]
    assert (small.path, small.lines_seen_whole, small.reads_lines_unknown) == (
        "data/small.txt",
        True,
        0,
    )


def test_a_cut_output_read_as_it_flows_is_still_told_cut() -> None:
    """A line past --max-line-bytes keeps the head of the output text: the notice is in it."""
    flowing = record(CUT_CAPTURE.read_bytes(), max_line_bytes=4096)
    assert [f.reads_lines_unknown for f in flowing.files] == [2, 0]
    assert flowing.files == record(CUT_CAPTURE.read_bytes()).files


def test_a_cut_cat_of_a_changed_file_leaves_its_depth_unknown_never_full() -> None:
    """The captured cut output, given to a `cat` of handlers.py: what it showed cannot be told,
    so its changes are not seen in full (the same read with the whole output is)."""

    def depth_with(text: str) -> Depth | None:
        data = rollout(call("c1"), completed("c1", "src/api/handlers.py"), output("c1", text))
        (entry,) = record(data, diff=DIFF, content=revision_content()).files
        assert entry.reads_succeeded == 1
        return entry.depth.depth if entry.depth is not None else None

    assert depth_with(CUT_CAT) is Depth.UNKNOWN
    handlers = (REVISION_FILES / "src/api/handlers.py").read_text()
    whole = f"Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n{handlers}"
    # the whole file: every added line seen; its deleted lines show only in a diff
    assert depth_with(whole) is Depth.PARTIAL


@pytest.mark.parametrize(
    "cmd", ["cat a.py", "nl -ba a.py", "sed -n '1,1200p' a.py", "head -n 1200 a.py", "tail a.py"]
)
def test_every_read_shape_whose_output_was_cut_shows_unknown_lines(cmd: str) -> None:
    data = rollout(call("c1"), completed("c1", parsed=read_of("a.py", cmd)), output("c1", CUT_CAT))
    (entry,) = record(data).files
    assert (entry.reads_succeeded, entry.reads_lines_unknown, entry.lines_seen) == (1, 1, [])
    assert not entry.lines_seen_whole


@pytest.mark.parametrize(
    "text",
    [
        "Chunk ID: 1\nOutput:\nline\nWarning: truncated output (original token count: 5)\n",
        "Process exited with code 0",  # no output text: nothing says it was cut
        WHOLE_CAT,
    ],
)
def test_an_output_codex_did_not_cut_keeps_the_commands_lines(text: str) -> None:
    """Only Codex's own notice opening the output says it was cut: the same words further in
    are the file's text."""
    data = rollout(call("c1"), completed("c1", "a.py"), output("c1", text))
    (entry,) = record(data).files
    assert (entry.lines_seen_whole, entry.reads_lines_unknown) == (True, 0)


def test_an_output_that_is_not_text_says_nothing_of_a_cut() -> None:
    item = json.loads(output("c1"))
    item["payload"]["output"] = [{"type": "input_text", "text": CUT_CAT}]
    (entry,) = record(rollout(call("c1"), completed("c1", "a.py"), line(item))).files
    assert entry.lines_seen_whole


def test_each_of_two_commands_gets_its_own_output_whatever_their_order() -> None:
    """Parallel commands: both records, then the outputs the other way round; and an output
    written before its record."""
    data = rollout(
        call("c1"),
        call("c2", "cat b.py"),
        completed("c1", "a.py"),
        completed("c2", "b.py"),
        output("c2", CUT_CAT),
        output("c1", WHOLE_CAT),
        call("c3", "cat c.py"),
        output("c3", CUT_CAT),
        completed("c3", "c.py"),
    )
    seen = {f.path: (f.lines_seen_whole, f.reads_lines_unknown) for f in record(data).files}
    assert seen == {"a.py": (True, 0), "b.py": (False, 1), "c.py": (False, 1)}


def test_a_record_whose_output_never_came_keeps_its_commands_lines() -> None:
    """Without an output nothing says the model's copy was cut: the command's own shape is the
    evidence, passed on when the next line has events of its own or the stream ends."""
    ended = record(rollout(call("c1"), completed("c1", "a.py")))
    unfinished = record(rollout(call("c1"), completed("c1", "a.py"), complete=False))
    for doc in (ended, unfinished):
        (entry,) = doc.files
        assert (entry.reads_succeeded, entry.lines_seen_whole) == (1, True)


def test_held_records_keep_the_order_of_the_lines() -> None:
    """A record waiting for its output is passed on before any later line's events."""
    decoder = ROLLOUT_ADAPTER.decoder()
    lines = [call("c1"), completed("c1", "a.py"), completed("ghost", "b.py"), output("c1")]
    events = [e for n, raw in enumerate(lines, 1) for e in decoder.decode(raw.encode(), n)]
    assert [(type(e).__name__, getattr(e, "call_id", None)) for e in events] == [
        ("ToolStart", "c1"),
        ("ToolEnd", "c1"),
        ("ToolEnd", "ghost"),
    ]


# --- codex-rollout: pairing --------------------------------------------------------------------


def test_command_output_without_the_harness_record_is_no_evidence() -> None:
    """The function_call_output is not where Codex parses the command; the call never ended."""
    doc = record(rollout(call("c1"), output("c1")))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.MISSING_END]


def test_call_without_its_end_keeps_a_finished_rollout_incomplete() -> None:
    """What an unrecorded command read is unknown: its absence of evidence proves nothing."""
    assert not record(rollout(call("c1"), output("c1"))).stream_complete
    assert record(rollout(call("c1"), completed("c1", "a.py"), output("c1"))).stream_complete


def test_harness_record_without_a_call_is_missing_start() -> None:
    doc = record(rollout(completed("ghost", "a.py")))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.MISSING_START]


def test_call_started_twice_is_ambiguous() -> None:
    """The same call id started again with other arguments: ambiguous, no evidence."""
    doc = record(rollout(call("c1"), call("c1", cmd="head a.py"), completed("c1", "a.py")))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.AMBIGUOUS_CALL_ID]


# --- codex-rollout: completion and bad input ---------------------------------------------------


def test_rollout_without_task_complete_is_incomplete() -> None:
    doc = record(rollout(call("c1"), completed("c1", "a.py"), complete=False))
    assert not doc.stream_complete
    assert reads(doc) == {"a.py": (1, 0)}


def test_task_started_after_task_complete_reopens_the_stream() -> None:
    data = rollout(call("c1"), completed("c1", "a.py")) + (TASK_STARTED + "\n").encode()
    assert not record(data).stream_complete
    assert record(data + (TASK_COMPLETE + "\n").encode()).stream_complete


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        (b'{"type": "event_msg", "payload": []}', "'payload'"),
        (b'{"payload": {}}', "'type'"),
        (b'{"type": "response_item", "payload": {"type": "function_call"}}', "'payload.call_id'"),
        (b'{"type": "event_msg", "payload": {"type": "item_completed"}}', "'payload.item'"),
        (
            b'{"type": "event_msg", "payload": {"type": "item_completed", '
            b'"item": {"type": "CommandExecution"}}}',
            "'payload.item.id'",
        ),
        (b'{"type": "event_msg", "payload": {"type": "task_compl', "not JSON"),
        (b'{"type": "event_msg", "payload": {"type": "\xff"}}', "UTF-8"),
    ],
    ids=["payload", "type", "call-id", "item", "item-id", "cut", "utf8"],
)
def test_malformed_lines_are_counted_with_a_detail_naming_the_fault(
    raw: bytes, detail: str
) -> None:
    doc = record(rollout(complete=False) + raw + b"\n")
    (issue,) = doc.issues
    assert issue.kind is IssueKind.MALFORMED_LINE
    assert issue.line == 3
    assert detail in issue.detail


def test_command_record_of_several_megabytes_is_decoded() -> None:
    big = json.loads(completed("c1", "big.log"))
    big["payload"]["item"]["aggregated_output"] = "x" * 6_000_000
    doc = record(rollout(call("c1"), line(big), output("c1", "y" * 6_000_000)))
    assert reads(doc) == {"big.log": (1, 0)}


def test_token_lines_are_passed_over_and_messages_read_as_the_models_own_text() -> None:
    """An assistant message is the model's own text (DESIGN §6 rule 29); its streamed copy
    (``agent_message``) and token counts are passed over from their head."""
    decoder = ROLLOUT_ADAPTER.decoder()
    content = [{"type": "output_text", "text": "x = 1"}]
    message = envelope(
        "response_item", {"type": "message", "role": "assistant", "content": content}
    )
    tokens = envelope("event_msg", {"type": "token_count", "info": None})
    copy = envelope("event_msg", {"type": "agent_message", "message": "x = 1"})
    assert decoder.classify(message.encode()[:256]) is LineClass.PARSE
    assert decoder.decode(message.encode(), 4) == [ModelText(line=4, text="x = 1")]
    assert decoder.classify(tokens.encode()[:256]) is LineClass.SKIP
    assert decoder.classify(copy.encode()[:256]) is LineClass.SKIP
    assert decoder.classify(call("c1").encode()[:256]) is LineClass.PARSE


def test_unknown_line_kinds_are_counted_as_unrecognised() -> None:
    doc = record(rollout(envelope("brand_new_kind", {})))
    assert doc.counters.unrecognised_events == 1


# --- codex-exec --------------------------------------------------------------------------------


def exec_item(kind: str, item_id: str, status: str, exit_code: Any = None) -> str:
    item = {
        "id": item_id,
        "type": "command_execution",
        "command": "/bin/bash -lc 'cat src/a.py'",
        "aggregated_output": "",
        "exit_code": exit_code,
        "status": status,
    }
    return line({"type": kind, "item": item})


def exec_stream(*lines: str, complete: bool = True) -> bytes:
    head = [line({"type": "thread.started", "thread_id": "t"}), line({"type": "turn.started"})]
    tail = [line({"type": "turn.completed", "usage": {}})] if complete else []
    return ("\n".join([*head, *lines, *tail]) + "\n").encode()


def test_exec_json_without_the_files_at_the_revision_can_show_nothing() -> None:
    """Its evidence is only what commands printed, compared with the files at the revision (a
    command's string is never parsed): without those files, capability none (claims unknown,
    never unsupported); with them, per file."""
    data = exec_stream(
        exec_item("item.started", "item_1", "in_progress"),
        exec_item("item.completed", "item_1", "completed", 0),
    )
    doc = record(data, EXEC)
    assert doc.capability is Capability.NONE
    assert doc.files == []
    judged = record_bytes(data, EXEC, diff=DIFF, content=revision_content())
    assert judged.capability is Capability.PER_FILE
    assert judged.files == []  # it printed nothing
    assert doc.counters.calls == 1
    assert doc.counters.succeeded == 1


def test_exec_json_success_needs_completed_and_exit_code_zero() -> None:
    data = exec_stream(
        exec_item("item.started", "item_1", "in_progress"),
        exec_item("item.completed", "item_1", "failed", 1),
        exec_item("item.started", "item_2", "in_progress"),
        exec_item("item.completed", "item_2", "completed", None),
    )
    doc = record(data, EXEC)
    assert doc.counters.failed == 2


def test_exec_json_without_turn_completed_is_incomplete() -> None:
    data = exec_stream(exec_item("item.started", "item_1", "in_progress"), complete=False)
    doc = record(data, EXEC)
    assert not doc.stream_complete
    assert issue_kinds(doc) == [IssueKind.MISSING_END]


def test_exec_json_turn_started_after_completion_reopens() -> None:
    data = exec_stream() + (line({"type": "turn.started"}) + "\n").encode()
    assert not record(data, EXEC).stream_complete


def test_exec_json_error_item_and_messages_are_not_tool_calls() -> None:
    error = line(
        {"type": "item.completed", "item": {"id": "item_0", "type": "error", "message": "x"}}
    )
    message = line(
        {"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": "{}"}}
    )
    doc = record(exec_stream(error, message), EXEC)
    assert doc.counters.calls == 0
    assert doc.counters.malformed_lines == 0


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type": "item.started"}',
        b'{"type": "item.completed", "item": {"type": "command_execution"}}',
        b"{]",
    ],
    ids=["no-item", "no-id", "not-json"],
)
def test_exec_json_wrong_shapes_are_malformed(raw: bytes) -> None:
    doc = record(exec_stream(complete=False) + raw + b"\n", EXEC)
    assert doc.counters.malformed_lines == 1


# --- real captures and golden files ------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "truth_path"),
    [(ROLLOUT, p) for p in stream_truths(DATA / ROLLOUT)]
    + [(EXEC, p) for p in stream_truths(DATA / EXEC)],
    ids=lambda value: value.name.removesuffix(".truth.json") if isinstance(value, Path) else value,
)
def test_capture_reproduces_its_truth(source: str, truth_path: Path) -> None:
    """Rollout: the truth's reads exactly. exec --json: no parsed reads, so without the pinned
    diff and the files at the revision no files at all (its truth lists what a shell parser
    would find, for information only; tests/record/test_content_captures.py judges its outputs)."""
    truth = json.loads(truth_path.read_text())
    doc = record((truth_path.parent / truth["capture"]).read_bytes(), source)
    assert doc.stream_complete is truth["stream_complete"]
    if source == EXEC:
        assert doc.capability is Capability.NONE  # no files at the revision given here
        assert doc.files == []
        assert doc.counters.calls == 5
        return
    assert_capture_reproduces_truth(doc, truth)


def test_capture_heads_are_sniffed_as_their_format() -> None:
    rollout_head = (
        (DATA / ROLLOUT / "codex_b_overclaim.rollout.jsonl").read_bytes().splitlines()[:2]
    )
    exec_head = (DATA / EXEC / "codex_b_overclaim.exec.jsonl").read_bytes().splitlines()[:2]
    assert ROLLOUT_ADAPTER.sniff([raw[:256] for raw in rollout_head])
    assert EXEC_ADAPTER.sniff(exec_head)
    assert not ROLLOUT_ADAPTER.sniff(exec_head)
    assert not EXEC_ADAPTER.sniff(rollout_head)


STREAMS = [(fmt, p) for fmt in (ROLLOUT, EXEC) for p in sorted((DATA / fmt).glob("*.jsonl"))]


@pytest.mark.parametrize(("source", "path"), STREAMS, ids=[f"{f}-{p.stem}" for f, p in STREAMS])
def test_golden_evidence(source: str, path: Path) -> None:
    doc = record(path.read_bytes(), source)
    check_golden_evidence(GOLDEN / source / f"{path.stem}.evidence.json", doc)


# --- unreadable lines and bounds ---------------------------------------------------------------


def test_unreadable_call_start_of_a_successful_command_makes_claims_without_evidence_unknown() -> (
    None
):
    """The function_call line naming call_1 cannot be read; its command completed: what it read
    is not known, so it is one unattributed call, not silence."""
    bad = call("call_1").encode().replace(b'"name"', b'"na\xffme"')
    data = rollout("@", completed("call_1", "a.py")).replace(b"@", bad)
    doc = record(data)
    assert doc.unattributed_calls == 1
    assert reads(doc) == {}


def test_long_call_ids_are_kept_bounded_and_still_pair() -> None:
    long_id, other = "call_" + "x" * 100_000, "call_" + "y" * 100_000
    doc = record(rollout(call(long_id), completed(long_id, "a.py"), call(other)))
    assert reads(doc) == {"a.py": (1, 0)}
    assert {issue.kind for issue in doc.issues} == {
        IssueKind.MISSING_END,
        IssueKind.VALUE_TRUNCATED,
    }
    assert len(doc.model_dump_json()) < 10_000


def test_more_open_calls_than_are_followed_make_the_rollout_incomplete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the bound, a command's start is not held: what it read is not known, so the rollout
    cannot prove an absence."""
    monkeypatch.setattr(codex_rollout, "MAX_CALLS", 3)
    calls = [call(f"c{n}") for n in range(5)]
    done = [completed(f"c{n}", f"f{n}.py") for n in range(5)]
    doc = record(rollout(*calls, *done))
    assert not doc.stream_complete
    assert reads(doc) == {f"f{n}.py": (1, 0) for n in range(3)}


def test_golden_evidence_of_the_capture_with_its_pinned_diff() -> None:
    """The captured review with its diff: each file's seen lines and depth (``sed -n '1,60p'``
    of models.py covers every changed line of that 46-line file)."""
    path = DATA / ROLLOUT / "codex_b_overclaim.rollout.jsonl"
    doc = record(path.read_bytes(), ROLLOUT, diff=DIFF, content=revision_content())
    check_golden_evidence(GOLDEN / ROLLOUT / f"{path.stem}.diff.evidence.json", doc)


def test_a_command_record_too_large_to_hold_keeps_its_range_and_emptiness() -> None:
    """A CommandExecution line past --max-line-bytes is read as it flows, keeping only what
    decoding needs: the parsed read's ``cmd`` (its range) and whether the output was empty."""
    big = json.loads(completed("c1", parsed=read_of("a.py", "sed -n '1,60p' a.py")))
    big["payload"]["item"]["aggregated_output"] = "x\n" * 50_000
    empty = json.loads(completed("c2", parsed=read_of("b.py", "head -n 5 b.py")))
    empty["payload"]["item"]["aggregated_output"] = ""
    empty["payload"]["item"]["padding"] = "y" * 100_000
    data = rollout(call("c1"), line(big), call("c2"), line(empty))
    doc = record(data, max_line_bytes=4096)
    a, b = doc.files
    assert (a.path, a.reads_succeeded, a.lines_seen) == ("a.py", 1, [LineRange(start=1, end=60)])
    assert (b.path, b.reads_succeeded, b.reads_empty) == ("b.py", 0, 1)


def test_the_same_completion_record_twice_is_one_outcome() -> None:
    """A completion record repeated to the letter is one outcome, not a second end."""
    doc = record(rollout(call("c1"), completed("c1", "a.py"), completed("c1", "a.py")))
    assert reads(doc) == {"a.py": (1, 0)}
    assert issue_kinds(doc) == []
