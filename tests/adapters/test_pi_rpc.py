"""pi RPC adapter: every evidence rule of DESIGN §6, one stream per rule, plus golden files."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.evidence_doc import Bounds
from coverage_gate.contracts.model import DiffStatus, EvidenceDocument, IssueKind
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.record.recording import RecordSettings, record_stream
from tests.conftest import DATA, GOLDEN, REPO_ROOT, check_golden, record_bytes, stream_truths

DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def start(call_id: str, tool: str = "cr_read", **args: Any) -> str:
    return line(
        {"type": "tool_execution_start", "toolCallId": call_id, "toolName": tool, "args": args}
    )


def end(
    call_id: str,
    tool: str = "cr_read",
    *,
    is_error: Any = False,
    result_error: bool | None = None,
    text: str = "content",
) -> str:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "details": {}}
    if result_error is not None:
        result["isError"] = result_error
    obj: dict[str, Any] = {
        "type": "tool_execution_end",
        "toolCallId": call_id,
        "toolName": tool,
        "result": result,
    }
    if is_error is not None:
        obj["isError"] = is_error
    return line(obj)


AGENT_START = line({"type": "agent_start"})
AGENT_END = line({"type": "agent_end", "messages": []})


def stream(*lines: str, complete: bool = True) -> bytes:
    body = [AGENT_START, *lines]
    if complete:
        body.append(AGENT_END)
    return ("\n".join(body) + "\n").encode()


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def issue_kinds(document: EvidenceDocument) -> list[IssueKind]:
    return [issue.kind for issue in document.issues]


# --- rule 1: only executions count -------------------------------------------------------------


def test_start_and_end_with_same_id_and_tool_is_a_read() -> None:
    doc = record_bytes(stream(start("a", path="src/x.py"), end("a")))
    assert reads(doc) == {"src/x.py": (1, 0)}
    assert doc.counters.calls == 1
    assert doc.counters.succeeded == 1


def test_model_output_lines_never_create_evidence() -> None:
    """message_update/message_end carry requested calls (model text), not executions."""
    update = line(
        {
            "type": "message_update",
            "assistantMessageEvent": {
                "type": "toolcall_end",
                "toolCall": {"name": "cr_read", "arguments": {"path": "a.py"}},
            },
        }
    )
    message_end = line(
        {
            "type": "message_end",
            "message": {
                "content": [
                    {
                        "type": "toolCall",
                        "id": "t1",
                        "name": "cr_read",
                        "arguments": {"path": "a.py"},
                    }
                ]
            },
        }
    )
    turn_end = line(
        {
            "type": "turn_end",
            "toolResults": [{"toolCallId": "t1", "toolName": "cr_read", "isError": False}],
        }
    )
    doc = record_bytes(stream(update, message_end, turn_end))
    assert doc.files == []
    assert doc.counters.calls == 0


def test_parallel_calls_pair_by_id_not_by_order() -> None:
    doc = record_bytes(
        stream(
            start("a", path="a.py"),
            start("b", path="b.py"),
            end("b", is_error=True),
            end("a"),
        )
    )
    assert reads(doc) == {"a.py": (1, 0), "b.py": (0, 1)}


# --- rule 2: success needs an explicit success -------------------------------------------------


@pytest.mark.parametrize(
    ("is_error", "result_error", "expected"),
    [
        (False, None, (1, 0)),
        (False, False, (1, 0)),
        (True, None, (0, 1)),
        (False, True, (0, 1)),
        (True, True, (0, 1)),
        (None, None, (0, 1)),
        ("false", None, (0, 0)),
    ],
    ids=[
        "explicit-false",
        "both-false",
        "thrown",
        "returned-error",
        "both-true",
        "absent",
        "string",
    ],
)
def test_success_only_on_explicit_is_error_false(
    is_error: Any, result_error: bool | None, expected: tuple[int, int]
) -> None:
    doc = record_bytes(
        stream(start("a", path="a.py"), end("a", is_error=is_error, result_error=result_error))
    )
    assert reads(doc) == {"a.py": expected}


@pytest.mark.parametrize("inner", ["true", 1, None, "yes", "false", 0])
def test_result_is_error_other_than_a_boolean_is_no_success_and_its_outcome_unknown(
    inner: Any,
) -> None:
    """Only an explicit boolean false, or no result.isError at all, lets a call succeed. A flag
    that is not a boolean is damage: no success, and no proven failure either (unknown)."""
    obj = json.loads(end("a"))
    obj["result"]["isError"] = inner
    doc = record_bytes(stream(start("a", path="a.py"), line(obj)))
    assert [(f.path, f.reads_succeeded, f.reads_failed, f.reads_unknown) for f in doc.files] == [
        ("a.py", 0, 0, 1)
    ]


# --- rule 3: unmatched or ambiguous calls ------------------------------------------------------


def test_start_without_end_is_no_evidence_and_labelled() -> None:
    doc = record_bytes(stream(start("a", path="a.py")))
    assert doc.files == []
    assert issue_kinds(doc) == [IssueKind.MISSING_END]
    assert doc.counters.incomplete == 1


def test_end_without_start_is_no_evidence_and_labelled() -> None:
    doc = record_bytes(stream(end("zz")))
    assert doc.files == []
    assert issue_kinds(doc) == [IssueKind.MISSING_START]


def test_reused_call_id_makes_every_call_under_it_ambiguous() -> None:
    doc = record_bytes(stream(start("a", path="a.py"), end("a"), start("a", path="b.py"), end("a")))
    assert doc.files == []
    assert issue_kinds(doc) == [IssueKind.AMBIGUOUS_CALL_ID]


def test_end_with_another_tool_name_is_ambiguous() -> None:
    doc = record_bytes(stream(start("a", path="a.py"), end("a", tool="bash")))
    assert doc.files == []
    assert issue_kinds(doc) == [IssueKind.AMBIGUOUS_CALL_ID]


def test_duplicate_end_is_ambiguous() -> None:
    doc = record_bytes(stream(start("a", path="a.py"), end("a"), end("a", is_error=True)))
    assert doc.files == []
    assert issue_kinds(doc) == [IssueKind.AMBIGUOUS_CALL_ID]


# --- rule 4: one path normaliser ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("@src/x.py", "src/x.py"),
        ("./src//x.py", "src/x.py"),
        ("/home/user/repo/src/x.py", "src/x.py"),
    ],
)
def test_paths_are_normalised_to_repo_relative(raw: str, expected: str) -> None:
    doc = record_bytes(stream(start("a", path=raw), end("a")))
    assert reads(doc) == {expected: (1, 0)}


@pytest.mark.parametrize(
    "raw",
    [
        "../etc/passwd",
        "/etc/passwd",
        ".git/config",
        "src/.git/HEAD",
        "a\x00b",
        "a\nb",
        "",
        "/home/user/repository/x",
    ],
)
def test_rejected_paths_give_no_evidence_and_are_labelled(raw: str) -> None:
    doc = record_bytes(stream(start("a", path=raw), end("a")))
    assert doc.files == []
    assert issue_kinds(doc) == [IssueKind.PATH_REJECTED]
    assert doc.counters.rejected == 1


def test_no_suffix_matching_notapi_never_covers_api() -> None:
    doc = record_bytes(stream(start("a", path="notapi.py"), end("a")))
    assert [f.path for f in doc.files] == ["notapi.py"]


# --- rule 5: which tools count -----------------------------------------------------------------


def test_builtin_read_counts_and_other_tools_are_ignored() -> None:
    doc = record_bytes(
        stream(
            start("a", "read", path="a.py"),
            end("a", "read"),
            start("b", "bash", command="cat b.py"),
            end("b", "bash"),
        )
    )
    assert reads(doc) == {"a.py": (1, 0)}
    assert doc.counters.ignored == 1


def test_read_without_a_path_is_arguments_unavailable() -> None:
    doc = record_bytes(stream(start("a", offset=3), end("a")))
    assert doc.files == []
    assert issue_kinds(doc) == [IssueKind.ARGUMENTS_UNAVAILABLE]


def _diff_page(
    call_id: str, offset: int, end_: int, total: int, *, header: bool = True
) -> list[str]:
    text = (
        f"[cr-range offset={offset} end={end_} total={total} next_offset=-1]\n..."
        if header
        else "..."
    )
    return [
        start(call_id, "cr_diff", offset=offset, limit=end_ - offset),
        end(call_id, "cr_diff", text=text),
    ]


def test_diff_page_is_per_file_evidence_only_for_overlapped_sections() -> None:
    doc = record_bytes(stream(*_diff_page("d", 0, 2400, len(DIFF))), diff=DIFF)
    assert {f.path: f.diff_pages_succeeded for f in doc.files} == {
        "README.md": 1,
        "docs/guide.md": 1,
        "src/api/handlers.py": 1,
        "src/api/models.py": 1,
    }
    assert doc.diff_status is DiffStatus.PARTIAL


def test_diff_page_uses_requested_range_when_the_header_is_absent() -> None:
    doc = record_bytes(stream(*_diff_page("d", 3600, 3700, len(DIFF), header=False)), diff=DIFF)
    assert [f.path for f in doc.files] == ["src/util/strings.py"]


def test_without_the_diff_pages_feed_only_the_legacy_status() -> None:
    doc = record_bytes(stream(*_diff_page("d", 0, len(DIFF), len(DIFF))))
    assert doc.files == []
    assert doc.diff_status is DiffStatus.COMPLETE
    assert doc.diff.pages_succeeded == 1


def test_page_of_another_diff_is_no_per_file_evidence() -> None:
    doc = record_bytes(stream(*_diff_page("d", 0, 100, 9999)), diff=DIFF)
    assert doc.files == []
    assert issue_kinds(doc) == [IssueKind.DIFF_MISMATCH]


def test_failed_diff_page_is_no_evidence() -> None:
    doc = record_bytes(
        stream(start("d", "cr_diff", offset=0, limit=10), end("d", "cr_diff", is_error=True)),
        diff=DIFF,
    )
    assert doc.files == []
    assert doc.diff_status is DiffStatus.FAILED


# --- rule 6: ranged reads ----------------------------------------------------------------------


def test_ranged_read_is_evidence_marked_partial_with_its_range() -> None:
    doc = record_bytes(
        stream(
            start("a", path="a.py", offset=100, limit=50),
            end("a", text="[cr-range offset=100 end=150 total=900 next_offset=150]\nxx"),
        )
    )
    (entry,) = doc.files
    assert entry.reads_succeeded == 1
    assert entry.partial
    assert [(r.offset, r.end, r.total) for r in entry.ranges] == [(100, 150, 900)]


def test_ranged_reads_that_cover_the_file_are_not_partial() -> None:
    doc = record_bytes(
        stream(
            start("a", path="a.py", offset=0, limit=500),
            end("a", text="[cr-range offset=0 end=500 total=900 next_offset=500]\n"),
            start("b", path="a.py", offset=500, limit=500),
            end("b", text="[cr-range offset=500 end=900 total=900 next_offset=-1]\n"),
        )
    )
    (entry,) = doc.files
    assert entry.reads_succeeded == 2
    assert not entry.partial


# --- rule 7: bounded, never silently -----------------------------------------------------------


def test_distinct_files_past_the_bound_are_dropped_and_counted() -> None:
    calls = [part for n in range(5) for part in (start(f"c{n}", path=f"f{n}.py"), end(f"c{n}"))]
    doc = record_bytes(stream(*calls), bounds=Bounds(max_files=3, max_issues=10))
    assert [f.path for f in doc.files] == ["f0.py", "f1.py", "f2.py"]
    assert doc.truncated
    assert doc.dropped_calls == 2


def test_issue_sample_is_bounded_and_the_rest_counted() -> None:
    doc = record_bytes(
        stream(*[start(f"c{n}", path="a.py") for n in range(7)]), bounds=Bounds(max_issues=4)
    )
    assert len(doc.issues) == 4
    assert doc.issues_dropped == 3
    assert doc.counters.incomplete == 7


# --- rule 8: bound to a revision ---------------------------------------------------------------


def test_evidence_records_its_revision() -> None:
    assert record_bytes(stream(), revision="abc123").revision == "abc123"


# --- rule 9: completion ------------------------------------------------------------------------


def test_stream_without_completion_marker_is_incomplete() -> None:
    doc = record_bytes(stream(start("a", path="a.py"), end("a"), complete=False))
    assert not doc.stream_complete
    assert reads(doc) == {"a.py": (1, 0)}


def test_agent_settled_also_completes() -> None:
    data = stream(complete=False) + (line({"type": "agent_settled"}) + "\n").encode()
    assert record_bytes(data).stream_complete


def test_auto_retry_reopens_the_stream_until_the_next_agent_end() -> None:
    """pi emits agent_end before an auto-retry; completion is judged at the end of the stream."""
    retried = stream() + (AGENT_START + "\n").encode()
    assert not record_bytes(retried).stream_complete
    assert record_bytes(retried + (AGENT_END + "\n").encode()).stream_complete


def test_cut_off_agent_end_line_does_not_complete_the_stream() -> None:
    data = stream(complete=False) + b'{"type":"agent_end","messages":[{"role":"user","content":"aaa'
    doc = record_bytes(data)
    assert not doc.stream_complete
    assert IssueKind.MALFORMED_LINE in issue_kinds(doc)


# --- bad input ---------------------------------------------------------------------------------


def test_malformed_and_unknown_lines_are_counted_with_line_numbers() -> None:
    data = stream(
        "not json at all",
        '{"type":"tool_execution_start","toolCallId":',
        line({"type": "brand_new_event"}),
        "[1,2,3]",
        b"\xff\xfe{}".decode("latin-1"),
    )
    doc = record_bytes(data)
    assert doc.counters.malformed_lines == 4
    assert doc.counters.unrecognised_events == 1
    assert [i.line for i in doc.issues] == [2, 3, 5, 6]


def test_non_utf8_bytes_in_a_tool_event_are_a_malformed_line() -> None:
    data = stream().replace(
        b"\n",
        b"\n"
        + b'{"type":"tool_execution_start","toolCallId":"a","toolName":"cr_read","args":{"path":"\xff"}}\n',
        1,
    )
    doc = record_bytes(data)
    assert doc.counters.malformed_lines == 1
    assert doc.files == []


def test_deeply_nested_json_is_malformed_not_a_crash() -> None:
    doc = record_bytes(stream('{"type":"tool_execution_end","x":' + "[" * 100_000))
    assert doc.counters.malformed_lines == 1


def test_tool_line_longer_than_the_limit_is_read_as_it_flows_not_held() -> None:
    big = (
        '{"type":"tool_execution_end","toolCallId":"a","toolName":"cr_read",'
        '"result":{"content":[{"type":"text","text":"' + "x" * 300_000 + '"}]},"isError":false}'
    )
    doc = record_bytes(stream(start("a", path="a.py"), big), max_line_bytes=100_000)
    assert issue_kinds(doc) == []
    assert reads(doc) == {"a.py": (1, 0)}


def test_huge_non_tool_lines_are_passed_over() -> None:
    huge = '{"type":"message_update","partial":"' + "y" * 3_000_000 + '"}'
    doc = record_bytes(stream(huge, start("a", path="a.py"), end("a")), max_line_bytes=100_000)
    assert reads(doc) == {"a.py": (1, 0)}
    assert doc.counters.malformed_lines == 0


def test_type_not_first_is_still_decoded() -> None:
    obj = {
        "toolCallId": "a",
        "toolName": "cr_read",
        "args": {"path": "a.py"},
        "type": "tool_execution_start",
    }
    doc = record_bytes(stream(json.dumps(obj), end("a")))
    assert reads(doc) == {"a.py": (1, 0)}


def test_crlf_line_endings_and_blank_lines() -> None:
    data = stream(start("a", path="a.py"), "", end("a")).replace(b"\n", b"\r\n")
    assert reads(record_bytes(data)) == {"a.py": (1, 0)}


# --- real captures: golden files and truth -----------------------------------------------------

CAPTURES = stream_truths(DATA / "pi-rpc")


@pytest.mark.parametrize("truth_path", CAPTURES, ids=lambda p: p.name.split(".")[0])
def test_capture_reproduces_its_truth(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    data = (truth_path.parent / truth["capture"]).read_bytes()
    doc = record_bytes(data)
    expected = {path: (v["read_succeeded"], v["read_failed"]) for path, v in truth["files"].items()}
    assert reads(doc) == expected
    assert doc.stream_complete is truth["stream_complete"]
    assert doc.diff.pages_succeeded == truth["diff_pages_succeeded"]
    assert doc.diff.pages_failed == truth["diff_pages_failed"]
    read_ok = {f.path for f in doc.files if f.reads_succeeded}
    assert sorted(set(truth["claimed_inspected"]) - read_ok) == sorted(
        truth["claimed_but_not_read"]
    )


@pytest.mark.parametrize("truth_path", CAPTURES, ids=lambda p: p.name.split(".")[0])
@pytest.mark.parametrize("with_diff", [False, True], ids=["no-diff", "pinned-diff"])
def test_capture_golden_evidence(truth_path: Path, with_diff: bool) -> None:
    name = truth_path.name.split(".")[0]
    data = (truth_path.parent / f"{name}.jsonl").read_bytes()
    doc = record_bytes(data, diff=DIFF if with_diff else None)
    suffix = ".diff" if with_diff else ""
    check_golden(
        GOLDEN / "pi-rpc" / f"{name}{suffix}.evidence.json",
        doc.model_dump(mode="json", by_alias=True),
    )


@pytest.mark.parametrize("sdk_disabled", [False, True], ids=["sdk-spans", "sdk-disabled"])
def test_evidence_does_not_depend_on_the_spans_being_made(
    monkeypatch: pytest.MonkeyPatch, sdk_disabled: bool
) -> None:
    """The evidence document is the same whether each call becomes an SDK span (a tracer
    provider whose in-memory exporter receives them), the SDK is disabled (OTEL_SDK_DISABLED=true
    when the provider is made: it records nothing, and the document is folded without spans), or
    no provider is given at all."""
    data = (DATA / "pi-rpc" / "pi_b_overclaim.jsonl").read_bytes()
    without_provider = record_bytes(data, diff=DIFF)
    if sdk_disabled:
        monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = RecordSettings(
        revision="rev1",
        repo_root=REPO_ROOT,
        bounds=Bounds(),
        diff=DiffIndex.parse(DIFF),
        max_line_bytes=64 * 1024 * 1024,
    )
    stream = io.BytesIO(data)
    with_provider = record_stream(stream, ADAPTERS["pi-rpc"], settings, tracer_provider=provider)
    names = [span.name for span in exporter.get_finished_spans()]
    if sdk_disabled:
        assert names == []
    else:
        assert sum(name.startswith("execute_tool ") for name in names) == len(names) - 1 > 0
    assert with_provider == without_provider


def test_skipped_kinds_are_passed_over_by_prefix_most_common_first() -> None:
    """Every kind pi's decoder skips is passed over by its line prefix, in both spellings (pi's
    compact one and a re-serialised capture's), and ``message_update``, most lines of a stream,
    is tried first; a ``message_end`` is passed over unless it is the assistant's (the model's
    own text, DESIGN §6 rule 29)."""
    from coverage_gate.adapters.pi_rpc import _KNOWN_SKIPPED, PiRpcDecoder  # noqa: PLC0415
    from coverage_gate.core.events import LineClass  # noqa: PLC0415

    prefixes = PiRpcDecoder.skip_prefixes
    assert prefixes[:2] == (b'{"type":"message_update"', b'{"type": "message_update"')
    kinds = _KNOWN_SKIPPED - {"message_end"}
    expected = {f'{{"type"{sep}"{kind}"'.encode() for kind in kinds for sep in (":", ": ")}
    expected |= {
        f'{{"type"{sep}"message_end"{comma}"message"{sep}{{"role"{sep}"{role}"'.encode()
        for role in ("toolResult", "user")
        for sep, comma in ((":", ","), (": ", ", "))
    }
    assert set(prefixes) == expected
    assert len(prefixes) == len(expected)
    decoder = PiRpcDecoder()
    said = b'{"type":"message_end","message":{"role":"assistant","content":[{"type":"text",'
    assert decoder.classify(said + b'"text":"x"}]}}') is LineClass.PARSE
    assert [event.text for event in decoder.decode(said + b'"text":"x"}]}}', 3)] == ["x"]
