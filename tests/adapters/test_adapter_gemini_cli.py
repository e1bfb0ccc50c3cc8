"""Gemini CLI adapter (``--output-format stream-json``): one stream per rule, the real captures'
truth, and golden files for the captures and the crafted streams in ``tests/data/gemini-cli``.

The captures were written by Gemini CLI 0.61.0 against the scripted mock model
(``tests/integration/realclients``): ``gemini_a_honest`` reads the six changed files,
``gemini_b_overclaim`` reads two, fails two, reads one past its end and one partly, ``cat``s one
through the shell, calls the unregistered ``read_many_files``, and claims all six. The crafted
streams are those captures changed: ``crafted_cut_off`` (the honest run cut inside a result
line, no ``result`` line), ``crafted_duplicate_id`` (a ``tool_id`` started twice, another ended
twice), ``crafted_unmatched`` (a result without its ``tool_use``, a ``tool_use`` without its
result, a result whose id differs from its start's only in the ``<tool>__`` prefix) and
``crafted_read_many_files`` (results in the shapes Gemini CLI's ReadManyFiles builds).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.adapters.gemini_cli import ADAPTER
from coverage_gate.cli import app
from coverage_gate.contracts.model import Depth, EvidenceDocument, IssueKind, LineRange
from coverage_gate.core.events import (
    LineClass,
    ModelText,
    ReadAction,
    Shown,
    ToolEnd,
    ToolStart,
)
from coverage_gate.edges.content import MappingContent
from tests.conftest import (
    DATA,
    GOLDEN,
    REPO_ROOT,
    assert_capture_reproduces_truth,
    check_golden_evidence,
    record_bytes,
    revision_content,
    stream_truths,
)

FORMAT = "gemini-cli"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
PROBE = DATA / "hostile" / "gemini-cli_0.61.0_probe.stream-json.jsonl"
TS = "2026-12-01T02:29:49.700Z"


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


INIT = line({"type": "init", "timestamp": TS, "session_id": "s1", "model": "gemini-2.5-pro"})
DONE = line({"type": "result", "timestamp": TS, "status": "success", "stats": {}})


def use(call_id: str, tool: str = "read_file", **parameters: Any) -> str:
    return line(
        {
            "type": "tool_use",
            "timestamp": TS,
            "tool_name": tool,
            "tool_id": call_id,
            "parameters": parameters,
        }
    )


def result(call_id: str, status: Any = "success", output: Any = "", **extra: Any) -> str:
    obj: dict[str, Any] = {"type": "tool_result", "timestamp": TS, "tool_id": call_id}
    if status is not None:
        obj["status"] = status
    if output is not None:
        obj["output"] = output
    return line({**obj, **extra})


def failed(call_id: str, kind: str = "file_not_found") -> str:
    error = {"type": kind, "message": "File not found."}
    return result(call_id, "error", "File not found.", error=error)


def stream(*lines: str, complete: bool = True) -> bytes:
    return ("\n".join([INIT, *lines, *([DONE] if complete else [])]) + "\n").encode()


def record(data: bytes, **kwargs: Any) -> EvidenceDocument:
    return record_bytes(data, FORMAT, **kwargs)


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def issue_kinds(document: EvidenceDocument) -> list[IssueKind]:
    return [issue.kind for issue in document.issues]


# --- what a call is ----------------------------------------------------------------------------


def test_tool_use_and_tool_result_pair_by_tool_id_not_by_order() -> None:
    data = stream(
        use("read_file__a", file_path="src/a.py"),
        use("read_file__b", file_path="src/b.py"),
        failed("read_file__b"),
        result("read_file__a"),
    )
    assert reads(record(data)) == {"src/a.py": (1, 0), "src/b.py": (0, 1)}


@pytest.mark.parametrize(
    ("status", "expected"),
    [("success", (1, 0, 0)), ("error", (0, 1, 0)), ("ok", (0, 0, 1)), (None, (0, 0, 1))],
    ids=["success", "error", "other", "missing"],
)
def test_success_only_on_status_success_and_an_unreadable_status_is_unknown(
    status: str | None, expected: tuple[int, int, int]
) -> None:
    """``error`` is a failed call; any other status, or none, is an outcome that cannot be read:
    the file is unknown, never failed and never read."""
    doc = record(stream(use("read_file__a", file_path="a.py"), result("read_file__a", status)))
    (entry,) = doc.files
    assert (entry.reads_succeeded, entry.reads_failed, entry.reads_unknown) == expected


def test_an_error_result_keeps_its_error_type() -> None:
    data = stream(
        use("read_file__a", file_path="src/util"), failed("read_file__a", "target_is_directory")
    )
    doc = record(data)
    assert reads(doc) == {"src/util": (0, 1)}


def test_a_shell_command_is_never_a_read_even_when_it_printed_the_file() -> None:
    """``run_shell_command`` says ``success`` even when the command failed, and its command is
    never parsed: ``cat src/a.py`` is no read of ``src/a.py``."""
    data = stream(
        use("run_shell_command__s", "run_shell_command", command="cat src/a.py"),
        result("run_shell_command__s", output="print('a')\n"),
        use("run_shell_command__t", "run_shell_command", command="cat missing.py"),
        result("run_shell_command__t", output="cat: missing.py: No such file or directory"),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert doc.counters.ignored == 2


def test_other_tools_and_an_unknown_tool_are_ignored() -> None:
    data = stream(
        use("glob__g", "glob", pattern="src/*.py"),
        result("glob__g", output="Found 2 files"),
        use("nope__n", "no_such_tool", file_path="src/a.py"),
        failed("nope__n", "tool_not_registered"),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert doc.counters.ignored == 2


def test_read_file_without_a_string_file_path_is_arguments_unavailable() -> None:
    no_parameters = json.loads(use("read_file__c"))
    no_parameters["parameters"] = "a.py"
    data = stream(
        use("read_file__a", path="a.py"),
        result("read_file__a"),
        use("read_file__b", file_path=5),
        result("read_file__b"),
        line(no_parameters),
        result("read_file__c"),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.ARGUMENTS_UNAVAILABLE] * 3
    assert doc.unattributed_calls == 3  # it read some file, which one cannot be told


def test_relative_paths_resolve_against_the_root_and_absolute_ones_are_placed_in_it() -> None:
    data = stream(
        use("read_file__a", file_path="src/a.py"),
        result("read_file__a"),
        use("read_file__b", file_path=f"{REPO_ROOT}/src/b.py"),
        result("read_file__b"),
        use("read_file__c", file_path="/etc/passwd"),
        failed("read_file__c", "path_not_in_workspace"),
    )
    doc = record(data)
    assert reads(doc) == {"src/a.py": (1, 0), "src/b.py": (1, 0)}
    assert issue_kinds(doc) == [IssueKind.PATH_REJECTED]


def test_a_leading_at_is_part_of_the_name() -> None:
    """Gemini CLI opens ``@x`` literally when that file exists and otherwise drops the ``@``;
    the stream cannot tell which, so the read is credited to the literal name only."""
    data = stream(use("read_file__a", file_path="@src/a.py"), result("read_file__a"))
    assert reads(record(data)) == {"@src/a.py": (1, 0)}


# --- what a read showed ------------------------------------------------------------------------


def test_a_reported_line_range_is_the_lines_seen_and_a_zero_based_range() -> None:
    data = stream(
        use("read_file__a", file_path="README.md", start_line=1, end_line=5),
        result("read_file__a", output="Read lines 1-5 of 18 from README.md"),
    )
    (entry,) = record(data, diff=DIFF).files
    assert entry.partial
    assert [(r.offset, r.end, r.total) for r in entry.ranges] == [(0, 5, 18)]
    assert entry.lines_seen == [LineRange(start=1, end=5)]
    assert entry.depth is not None
    assert entry.depth.depth is Depth.NONE  # README.md changes at lines 13-17


def test_a_read_past_the_end_returned_nothing_and_is_not_evidence() -> None:
    """Gemini CLI reports ``start_line`` past the end as success, ``Read lines 19-18 of 18``."""
    data = stream(
        use("read_file__a", file_path="README.md", start_line=500, end_line=520),
        result("read_file__a", output="Read lines 19-18 of 18 from README.md"),
    )
    doc = record(data, diff=DIFF)
    (entry,) = doc.files
    assert (entry.reads_succeeded, entry.reads_failed, entry.reads_empty) == (0, 0, 1)
    assert issue_kinds(doc) == [IssueKind.EMPTY_RESULT]


def test_lines_shortened_in_a_whole_read_are_still_every_line() -> None:
    output = "Read all 18 lines from README.md (some lines were shortened)"
    data = stream(use("read_file__a", file_path="README.md"), result("read_file__a", output=output))
    (entry,) = record(data).files
    assert entry.lines_seen_whole
    assert not entry.partial


def test_an_empty_output_is_line_one_to_the_end_told_with_the_file_not_empty() -> None:
    """Gemini CLI shows ``""`` for a whole read (it names a range whenever it cut one): with the
    file's content at the revision that is every line, a full read of the change; without it the
    lines are unknown (depth unknown), never nothing."""
    data = stream(use("read_file__a", file_path="README.md"), result("read_file__a", output=""))
    (told,) = record(data, diff=DIFF, content=revision_content()).files
    assert told.reads_succeeded == 1
    assert told.lines_seen_whole
    assert told.depth is not None
    assert told.depth.depth is Depth.FULL
    (untold,) = record(data, diff=DIFF).files
    assert (untold.reads_succeeded, untold.reads_empty, untold.reads_lines_unknown) == (1, 0, 1)
    assert untold.depth is not None
    assert untold.depth.depth is Depth.UNKNOWN


def test_an_empty_file_read_whole_is_evidence_of_it() -> None:
    """Told with the file's content, a whole read of a file empty at the revision showed all of
    it (DESIGN §6 rule 24): nothing is what the file holds."""
    empty_diff = (
        b"diff --git a/e.py b/e.py\nnew file mode 100644\nindex 0000000..e69de29\n"
        b"--- /dev/null\n+++ b/e.py\n@@ -0,0 +1 @@\n+x\n"
    )
    data = stream(use("read_file__a", file_path="e.py"), result("read_file__a", output=""))
    doc = record(data, diff=empty_diff, content=MappingContent({"e.py": b""}))
    (entry,) = doc.files
    assert (entry.reads_succeeded, entry.reads_empty) == (1, 0)


def test_without_an_output_the_request_says_which_lines() -> None:
    """``start_line``/``end_line`` are 1-based and inclusive; ``start_line`` alone reads 2000
    lines."""
    decoder = ADAPTER.decoder()
    (event,) = decoder.decode(
        use("read_file__a", file_path="a.py", start_line=3, end_line=8).encode(), 1
    )
    assert isinstance(event, ToolStart)
    assert event.action == ReadAction(path="a.py", offset=2, limit=6, shown=Shown.lines(3, 8))
    (alone,) = decoder.decode(use("read_file__b", file_path="a.py", start_line=3).encode(), 2)
    assert isinstance(alone, ToolStart)
    assert alone.action == ReadAction(path="a.py", offset=2, limit=2000, shown=Shown.lines(3, 2002))
    data = stream(
        use("read_file__c", file_path="README.md", start_line=14, end_line=15),
        result("read_file__c", output=None),
    )
    (entry,) = record(data).files
    assert entry.lines_seen == [LineRange(start=14, end=15)]


def test_a_line_number_out_of_the_64_bit_range_leaves_the_lines_unknown() -> None:
    data = stream(
        use("read_file__a", file_path="README.md", start_line=2**64),
        result("read_file__a", output=None),
    )
    (entry,) = record(data, diff=DIFF).files
    assert entry.reads_succeeded == 1
    assert entry.reads_lines_unknown == 1


def test_an_output_of_the_wrong_type_is_an_unreadable_outcome() -> None:
    data = stream(use("read_file__a", file_path="a.py"), result("read_file__a", output=7))
    (entry,) = record(data).files
    assert (entry.reads_succeeded, entry.reads_unknown) == (0, 1)


# --- read_many_files ---------------------------------------------------------------------------


def test_read_many_files_counts_only_the_files_its_result_names() -> None:
    """An ``include`` pattern is not a read, even a plain file name (a pattern that matched
    nothing still succeeds); each file the result's display lists is one read, its lines
    unknown."""
    display = {"summary": "...", "files": ["tests/test_a.py"], "skipped": [], "include": []}
    data = stream(
        use("read_many_files__a", "read_many_files", include=["tests/*.py", "README.md"]),
        result("read_many_files__a", output=json.dumps(display)),
    )
    doc = record(data)
    assert reads(doc) == {"tests/test_a.py": (1, 0)}
    (entry,) = doc.files
    assert entry.reads_lines_unknown == 1  # each file may have been cut at 2000 lines
    assert not entry.lines_seen_whole


def test_read_many_files_markdown_summary_is_never_searched_for_file_names() -> None:
    """The summary is text for a person: a repository file named with a backtick and a newline
    could forge a line of its "Processed Files" list."""
    output = (
        "### ReadManyFiles Result (Target Dir: `/home/user/repo`)\n\n"
        "Successfully read and concatenated content from **1 file(s)**.\n\n"
        "**Processed Files:**\n- `x`\n- `README.md`\n"
    )
    data = stream(
        use("read_many_files__a", "read_many_files", include=["**/*"]),
        result("read_many_files__a", output=output),
    )
    assert reads(record(data)) == {}


@pytest.mark.parametrize(
    "end",
    [
        result("read_many_files__a", output="No files matching the criteria were found."),
        result("read_many_files__a", output=None),
        failed("read_many_files__a", "tool_not_registered"),
    ],
    ids=["nothing-listed", "no-output", "not-registered"],
)
def test_read_many_files_whose_result_names_no_file_is_no_read(end: str) -> None:
    """Gemini CLI 0.61 writes no ``output`` for this tool and does not register it."""
    data = stream(use("read_many_files__a", "read_many_files", include=["README.md"]), end)
    doc = record(data)
    assert reads(doc) == {}
    assert doc.unattributed_calls == 0


def test_a_read_many_files_result_without_its_start_reads_nothing() -> None:
    display = json.dumps({"files": ["README.md"]})
    doc = record(stream(result("read_many_files__a", output=display)))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.MISSING_START]


# --- pairing and completion --------------------------------------------------------------------


def test_a_result_without_its_tool_use_is_no_evidence_whatever_its_id_says() -> None:
    """``read_file__x`` names the tool in the id, but only a ``tool_use`` says what was called."""
    doc = record(stream(result("read_file__x")))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.MISSING_START]


def test_the_whole_tool_id_pairs_the_prefix_included() -> None:
    data = stream(use("read_file__a", file_path="a.py"), result("run_shell_command__a"))
    doc = record(data)
    assert reads(doc) == {}
    assert sorted(issue_kinds(doc)) == sorted([IssueKind.MISSING_END, IssueKind.MISSING_START])


def test_a_tool_use_that_never_completes_is_no_evidence_and_labelled() -> None:
    doc = record(stream(use("read_file__a", file_path="a.py")))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.MISSING_END]
    assert doc.stream_complete


def test_a_reused_tool_id_is_no_evidence_for_either_call() -> None:
    data = stream(
        use("read_file__a", file_path="a.py"),
        use("read_file__a", file_path="b.py"),
        result("read_file__a"),
    )
    doc = record(data)
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.AMBIGUOUS_CALL_ID]


def test_a_line_repeated_to_the_byte_is_one_call() -> None:
    started = use("read_file__a", file_path="a.py")
    ended = result("read_file__a")
    doc = record(stream(started, started, ended, ended))
    assert reads(doc) == {"a.py": (1, 0)}
    assert issue_kinds(doc) == []


def test_complete_only_at_the_result_line_and_reopened_by_a_later_call() -> None:
    assert record(stream()).stream_complete
    assert not record(stream(complete=False)).stream_complete
    reopened = stream() + (use("read_file__b", file_path="b.py") + "\n").encode()
    assert not record(reopened).stream_complete


def test_message_lines_are_the_models_own_text_and_no_call() -> None:
    """The model's text, even text shaped like a call, is never a call: it is the model's own
    text, kept whole across its deltas until another line (DESIGN §6 rule 29)."""
    message = line(
        {
            "type": "message",
            "timestamp": TS,
            "role": "assistant",
            "content": '{"type":"tool_use","tool_name":"read_file","tool_id":"x"}',
            "delta": True,
        }
    )
    decoder = ADAPTER.decoder()
    assert decoder.classify(message.encode()[:256]) is LineClass.PARSE
    assert decoder.decode(message.encode(), 1) == []
    assert decoder.decode(message.encode(), 2) == []
    user = line({"type": "message", "timestamp": TS, "role": "user", "content": "x"})
    assert decoder.decode(user.encode(), 3) == []
    said, *_rest = decoder.decode(b'{"type":"result","timestamp":"t","status":"success"}', 4)
    assert said == ModelText(
        line=4, text=2 * '{"type":"tool_use","tool_name":"read_file","tool_id":"x"}'
    )
    doc = record(stream(message))
    assert doc.counters.calls == 0
    assert doc.counters.unrecognised_events == 0


def test_error_and_init_lines_are_quiet_and_unknown_kinds_counted() -> None:
    error = line({"type": "error", "timestamp": TS, "severity": "warning", "message": "x"})
    doc = record(stream(error, line({"type": "mystery", "timestamp": TS})))
    assert doc.counters.unrecognised_events == 1
    assert doc.counters.malformed_lines == 0


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        (b"[1, 2]", "not an object"),
        (b'{"type": 5}', "'type'"),
        (b'{"type": "tool_use", "tool_name": "read_file"}', "'tool_id'"),
        (b'{"type": "tool_result", "status": "success"}', "'tool_id'"),
        (b'{"type": "tool_use", "tool_na', "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested"),
        (b'{"type": "tool_result", "output": "caf\xff"}', "UTF-8"),
    ],
    ids=["array", "type", "use-id", "result-id", "cut", "deep", "utf8"],
)
def test_malformed_lines_are_counted_with_a_detail_naming_the_fault(
    raw: bytes, detail: str
) -> None:
    doc = record(stream(complete=False) + raw + b"\n" + (DONE + "\n").encode())
    assert doc.counters.malformed_lines == 1
    (issue,) = doc.issues
    assert issue.kind is IssueKind.MALFORMED_LINE
    assert issue.line == 2
    assert detail in issue.detail


def test_an_unreadable_result_line_makes_only_that_calls_outcome_unknown() -> None:
    bad = result("read_file__b").encode().replace(b"success", b"succ\xffess")
    data = stream(
        use("read_file__a", file_path="a.py"),
        result("read_file__a"),
        use("read_file__b", file_path="b.py"),
        complete=False,
    )
    doc = record(data + bad + b"\n" + (DONE + "\n").encode())
    assert [(f.path, f.reads_succeeded, f.reads_unknown) for f in doc.files] == [
        ("a.py", 1, 0),
        ("b.py", 0, 1),
    ]
    assert doc.unattributed_calls == 0


def test_an_unreadable_tool_use_line_could_have_read_any_file() -> None:
    bad = use("read_file__b", file_path="b.py").encode().replace(b"b.py", b"b\xff.py")
    data = (
        stream(complete=False)
        + bad
        + b"\n"
        + (result("read_file__b") + "\n" + DONE + "\n").encode()
    )
    doc = record(data)
    assert reads(doc) == {}
    assert doc.unattributed_calls == 1


def test_a_result_line_over_the_line_limit_is_read_as_it_flows() -> None:
    data = stream(
        use("run_shell_command__s", "run_shell_command", command="git diff"),
        result("run_shell_command__s", output="x" * 10_000),
        use("read_file__a", file_path="a.py", start_line=1, end_line=2),
        result("read_file__a", output="Read lines 1-2 of 9 from a.py", pad="y" * 10_000),
    )
    doc = record(data, max_line_bytes=4096)
    assert reads(doc) == {"a.py": (1, 0)}
    assert doc.files[0].lines_seen == [LineRange(start=1, end=2)]
    assert issue_kinds(doc) == []


def test_the_decoder_never_reads_a_tool_name_out_of_the_id() -> None:
    (end,) = ADAPTER.decoder().decode(result("read_file__a").encode(), 1)
    assert isinstance(end, ToolEnd)
    assert end.tool is None


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


@pytest.mark.parametrize("name", ["gemini_a_honest", "gemini_b_overclaim"])
def test_golden_evidence_of_the_captures_with_the_pinned_diff_and_files(name: str) -> None:
    """With the files at the revision, every whole read is told in lines: the honest run sees
    every changed line of every file."""
    doc = record(
        (DATA / FORMAT / f"{name}.jsonl").read_bytes(), diff=DIFF, content=revision_content()
    )
    check_golden_evidence(GOLDEN / FORMAT / f"{name}.diff.evidence.json", doc)
    if name == "gemini_a_honest":
        assert all(f.depth is not None and f.depth.depth is Depth.FULL for f in doc.files)


def test_the_honest_capture_is_sniffed_as_this_format() -> None:
    data = (DATA / FORMAT / "gemini_a_honest.jsonl").read_bytes()
    assert ADAPTER.sniff([raw[:256] for raw in data.splitlines()[:3]])


def test_formats_lists_gemini_cli_with_per_file_capability() -> None:
    result = CliRunner().invoke(app, ["formats"])
    assert result.exit_code == 0
    listed = {row.split()[0]: row.split()[2] for row in result.stdout.splitlines()}
    assert listed[FORMAT] == "per_file"
