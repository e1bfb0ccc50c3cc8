"""Decoding robustness: a line that cannot be read never turns an honest claim into an unsupported
one; numbers outside the 64-bit range are labelled, never a crash; every string and the pairer's
state are bounded.

The streams are the real captures in tests/data, mutated the way real streams break.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from coverage_gate.adapters import ADAPTERS
from coverage_gate.adapters._json import OUT_OF_RANGE
from coverage_gate.adapters._stream import Items, ObjectReader
from coverage_gate.contracts.model import (
    EvidenceDocument,
    FileStatus,
    IssueKind,
    Mode,
    ModeSource,
    ReviewerOutput,
    UnknownReason,
    Verdict,
)
from coverage_gate.core.events import (
    ANY_CALL,
    NO_CALLS,
    Malformed,
    ReadAction,
    ToolEnd,
    ToolStart,
    Unreadable,
)
from coverage_gate.core.pairing import Pairer
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.edges.files import read_bytes
from coverage_gate.errors import BadInputError
from coverage_gate.record.recording import RecordSettings, record_stream
from coverage_gate.telemetry.otel_sdk import otlp_json
from tests.conftest import CHANGED_FILES, DATA, REPO_ROOT, record_bytes

PI_HONEST = (DATA / "pi-rpc" / "pi_a_honest.jsonl").read_bytes()
PI_LIAR = (DATA / "pi-rpc" / "pi_b_overclaim.jsonl").read_bytes()
CLAUDE_LIAR = (DATA / "claude-code" / "claude_b_overclaim.jsonl").read_bytes()
BIG = 2**63


def lines_of(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def tool_line(data: bytes, kind: str, marker: str) -> int:
    """The index of the first line of event ``kind`` that mentions ``marker``."""
    for index, line in enumerate(lines_of(data)):
        if line.startswith(f'{{"type":"{kind}"'.encode()) and marker.encode() in line:
            return index
    raise AssertionError(f"no {kind} line with {marker}")


def with_line(data: bytes, index: int, new: bytes) -> bytes:
    lines = lines_of(data)
    lines[index] = new
    return b"\n".join(lines)


def call_id_of(data: bytes, path: str) -> str:
    start = lines_of(data)[tool_line(data, "tool_execution_start", f'"path":"{path}"')]
    return str(json.loads(start)["toolCallId"])


def end_of(data: bytes, path: str) -> int:
    return tool_line(data, "tool_execution_end", call_id_of(data, path))


def decide(
    document: EvidenceDocument, claimed: list[str], scope: list[str] | None = None
) -> dict[str, Any]:
    """Reconcile an Approve claiming ``claimed`` in enforce mode: file statuses and verdict."""
    output = ReviewerOutput(schema_version=1, agent_id="r1", inspected_files=claimed)
    decision = reconcile(
        ReviewInput(
            repo="o/r",
            revision=document.revision,
            verdict_in=Verdict.APPROVE,
            mode=Mode.ENFORCE,
            mode_source=ModeSource.OVERRIDE,
            scope=scope or CHANGED_FILES,
            reviewers=[ReviewerInput("r1", output, document)],
            repo_root=REPO_ROOT,
        )
    )
    (reviewer,) = decision.reviewers
    return {
        "verdict": decision.verdict_out,
        "status": {f.path: f.status for f in reviewer.files},
        "reason": {f.path: f.unknown_reason for f in reviewer.files},
    }


def mutate_end(data: bytes, path: str, how: str) -> bytes:
    index = end_of(data, path)
    line = lines_of(data)[index]
    if how == "invalid_utf8":
        new = line.replace(b'"text":"', b'"text":"\xff\xfe', 1)
    elif how == "cut_off":
        new = line[: len(line) // 2]
    elif how == "nul":
        new = line.replace(b'"text":"', b'"text":"\x00', 1)
    elif how == "huge_number":
        new = line[:-1] + b',"unrelated":' + b"9" * 5000 + b"}"
    elif how == "nested_deep":
        new = line[:-1] + b',"unrelated":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    else:
        raise AssertionError(how)
    assert new != line
    return with_line(data, index, new)


# --- item 2: an unreadable tool line makes evidence unavailable, never absent ------------------


@pytest.mark.parametrize("how", ["invalid_utf8", "cut_off", "nul"])
def test_an_unreadable_tool_end_line_makes_only_its_file_unknown_and_the_approve_stands(
    how: str,
) -> None:
    """The end of the honest reviewer's read of src/api/models.py cannot be read: that file is
    unknown (its outcome could not be read), never unsupported, and the Approve stands."""
    document = record_bytes(mutate_end(PI_HONEST, "src/api/models.py", how))
    assert document.stream_complete
    entry = document.file("src/api/models.py")
    assert entry is not None
    assert (entry.reads_succeeded, entry.reads_unknown) == (0, 1)
    assert document.unattributed_calls == 0
    decided = decide(document, CHANGED_FILES)
    assert decided["status"]["src/api/models.py"] is FileStatus.UNKNOWN
    assert decided["reason"]["src/api/models.py"] is UnknownReason.OUTCOME_UNREADABLE
    others = {p: s for p, s in decided["status"].items() if p != "src/api/models.py"}
    assert set(others.values()) == {FileStatus.VERIFIED}
    assert decided["verdict"] is Verdict.APPROVE


@pytest.mark.parametrize("how", ["huge_number", "nested_deep"])
def test_an_odd_value_in_an_unrelated_field_leaves_the_line_readable(how: str) -> None:
    """A 5,000-digit number (past Python's int parsing limit) or nesting too deep for json in a
    field the decoder does not use: the read is still a read."""
    document = record_bytes(mutate_end(PI_HONEST, "src/api/models.py", how))
    decided = decide(document, CHANGED_FILES)
    assert set(decided["status"].values()) == {FileStatus.VERIFIED}
    assert document.counters.malformed_lines == 0


def test_a_tool_line_far_over_the_line_limit_is_read_as_it_flows() -> None:
    """A read result larger than the line limit (here 64 KiB, a real one 150 MB) is simply a
    read: its fields are read as the line flows, with its [cr-range] header."""
    index = end_of(PI_HONEST, "README.md")
    line = lines_of(PI_HONEST)[index]
    big = line.replace(b"next_offset=-1]\\n", b"next_offset=-1]\\n" + b"x\\n" * 400_000, 1)
    assert len(big) > 800_000
    document = record_bytes(with_line(PI_HONEST, index, big), max_line_bytes=64 * 1024)
    original = record_bytes(PI_HONEST)
    assert document.files == original.files
    assert document.counters.malformed_lines == 0


def test_an_unreadable_start_of_a_successful_call_makes_every_claim_without_evidence_unknown() -> (
    None
):
    """The start (with its path) of a read that succeeded cannot be read: which file it read is
    unknown, so no claim lacking evidence can be called unsupported."""
    index = tool_line(PI_LIAR, "tool_execution_start", '"path":"src/api/models.py"')
    line = lines_of(PI_LIAR)[index]
    document = record_bytes(with_line(PI_LIAR, index, line[:-10] + b"\xff" + line[-10:]))
    assert document.unattributed_calls == 1
    truth = json.loads((DATA / "pi-rpc" / "pi_b_overclaim.truth.json").read_text())
    decided = decide(document, truth["claimed_inspected"])
    for path in truth["claimed_but_not_read"]:
        assert decided["reason"][path] is UnknownReason.UNATTRIBUTED_CALLS


def test_a_liar_gains_nothing_from_an_unreadable_line_of_another_call() -> None:
    """The overclaiming reviewer's unread file stays unsupported when the end of one of its real
    reads cannot be read: the call id recovered from the line names which file is affected."""
    truth = json.loads((DATA / "pi-rpc" / "pi_b_overclaim.truth.json").read_text())
    document = record_bytes(mutate_end(PI_LIAR, "src/api/models.py", "invalid_utf8"))
    decided = decide(document, truth["claimed_inspected"])
    assert decided["status"]["src/api/models.py"] is FileStatus.UNKNOWN
    for path in truth["claimed_but_not_read"]:
        assert decided["status"][path] is FileStatus.UNSUPPORTED
    assert decided["verdict"] is Verdict.COMMENT


def test_an_unreadable_line_of_a_tool_that_never_counts_affects_nothing() -> None:
    """A bash call's line (its head names the tool) cannot be evidence either way."""
    data = PI_LIAR + (
        b'{"type":"tool_execution_end","toolCallId":"x9","toolName":"bash","result":\xff}\n'
    )
    document = record_bytes(data)
    assert document.counters.malformed_lines == 1
    assert document.unattributed_calls == 0
    assert all(entry.reads_unknown == 0 for entry in document.files)


def test_a_broken_line_whose_head_names_another_event_affects_nothing() -> None:
    """A Claude Code `result`-less system line, or a line that is not an object at all, could
    never have carried a tool call."""
    data = CLAUDE_LIAR.replace(b'{"type":"system"', b'{"type":"system","x":\xff', 1)
    data += b"[1,2,3]\nplain text\n"
    document = record_bytes(data, "claude-code")
    assert document.counters.malformed_lines == 3
    assert document.unattributed_calls == 0
    assert all(entry.reads_unknown == 0 for entry in document.files)


def test_an_unreadable_claude_tool_result_line_makes_only_its_file_unknown() -> None:
    lines = lines_of(CLAUDE_LIAR)
    index = next(
        i
        for i, line in enumerate(lines)
        if line.startswith(b'{"type":"user"') and b'"tool_result","content":"1\\t' in line
    )
    original = record_bytes(CLAUDE_LIAR, "claude-code")
    document = record_bytes(
        with_line(CLAUDE_LIAR, index, lines[index].replace(b"content", b"cont\xffent", 1)),
        "claude-code",
    )
    changed = [
        (entry.path, entry.reads_succeeded, entry.reads_unknown)
        for entry in document.files
        if entry not in original.files
    ]
    assert len(changed) == 1
    assert changed[0][1:] == (0, 1)
    assert document.unattributed_calls == 0


def test_a_claude_tool_result_line_far_over_the_line_limit_is_read() -> None:
    use = {
        "type": "assistant",
        "message": {
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}
            ]
        },
        "parent_tool_use_id": None,
        "session_id": "s",
    }
    text = "".join(f'{n}\tline é \\ " {n}\n' for n in range(1, 200_001))
    result = {
        "type": "user",
        "message": {"content": [{"tool_use_id": "t1", "type": "tool_result", "content": text}]},
        "parent_tool_use_id": None,
        "session_id": "s",
        "tool_use_result": {
            "file": {"startLine": 1, "numLines": 200_000, "totalLines": 200_000, "content": text}
        },
    }
    done = {"type": "result", "subtype": "success", "session_id": "s", "permission_denials": []}
    data = "\n".join(json.dumps(x) for x in (use, result, done)).encode() + b"\n"
    document = record_bytes(data, "claude-code", max_line_bytes=64 * 1024)
    (entry,) = document.files
    assert (entry.path, entry.reads_succeeded, entry.partial) == ("a.py", 1, False)
    assert document.counters.malformed_lines == 0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=30_000), min_size=1, max_size=12),
    st.sampled_from([1 << 20, 1000, 7]),
)
def test_how_the_bytes_of_a_streamed_line_are_cut_does_not_change_what_is_read(
    cuts: list[int], bound: int
) -> None:
    """Escapes, escaped quotes, multi-byte characters and long numbers split anywhere between
    feeds, with and without strings past the bound."""
    text = ('é\\"\\u00e9€𝄞 \\\\' * 3000)[:20_000]
    obj = {
        "type": "tool_execution_end",
        "toolCallId": "c" + "é" * 10,
        "n": 1,
        "big": 10**80,
        "result": {"content": [{"type": "text", "text": text}], "isError": False},
        "isError": False,
    }
    raw = json.dumps(obj, ensure_ascii=False).encode()
    spec = {
        "toolCallId": None,
        "big": None,
        "n": None,
        "result": {"content": Items({"text": None})},
    }
    whole = ObjectReader(spec, bound)
    whole.feed(raw)
    reader = ObjectReader(spec, bound)
    start = 0
    for cut in sorted(set(cuts)):
        reader.feed(raw[start : min(cut, len(raw))])
        start = min(cut, len(raw))
    reader.feed(raw[start:])
    found = whole.result()
    assert reader.result() == found
    assert isinstance(found, dict)
    assert found["big"] is OUT_OF_RANGE
    assert found["n"] == 1
    if bound > len(raw):
        assert found["toolCallId"] == obj["toolCallId"]
        assert found["result"] == {"content": [{"text": text}]}
    else:
        (kept,) = found["result"]["content"]
        assert kept["text"].startswith(text[: bound // 8])
        assert "bytes, blake2b" in kept["text"]


def test_long_strings_in_a_streamed_line_keep_a_prefix_and_a_hash_of_the_rest() -> None:
    def read(text: str) -> object:
        reader = ObjectReader({"a": None}, 1000)
        reader.feed(json.dumps({"a": text}, ensure_ascii=False).encode())
        found = reader.result()
        assert isinstance(found, dict)
        return found["a"]

    one, two = read("é" * 2000), read("é" * 1999 + "e")
    assert isinstance(one, str) and isinstance(two, str)
    assert one.startswith("é" * 500)
    assert "é" * 501 not in one
    assert len(one) < 600 and one != two


def test_unreadable_lines_resolve_against_the_calls_they_could_belong_to() -> None:
    """A table of what an unreadable line can do: only calls it could be part of are touched."""

    def start(call_id: str, path: str = "a.py") -> ToolStart:
        return ToolStart(call_id=call_id, tool="read", action=ReadAction(path=path), line=1)

    def end(call_id: str, ok: bool = True) -> ToolEnd:
        return ToolEnd(call_id=call_id, tool="read", succeeded=ok, line=2)

    def run(*events: Any) -> tuple[list[tuple[str | None, IssueKind | None]], int]:
        pairer = Pairer("/r")
        pairer.feed(events)
        records = pairer.records()
        return [(r.path, r.issue) for r in records], sum(
            1 for r in records if r.issue is IssueKind.OUTCOME_UNREADABLE and r.path is None
        )

    unread = IssueKind.OUTCOME_UNREADABLE
    # its end, by id: that file's outcome is unknown
    assert run(start("a"), Unreadable(line=3, detail="x", starts=NO_CALLS, ends=("a",))) == (
        [("a.py", unread)],
        0,
    )
    # an end of any call: the open call is affected, the paired one is not
    assert run(
        start("a"),
        start("b", "b.py"),
        end("b"),
        Unreadable(line=3, detail="x", starts=NO_CALLS, ends=ANY_CALL),
    ) == (
        [("a.py", unread), ("b.py", None)],
        0,
    )
    # a start, by id, of a call that failed: nothing
    assert run(
        end("a", ok=False), Unreadable(line=3, detail="x", starts=("a",), ends=NO_CALLS)
    ) == (
        [(None, IssueKind.MISSING_START)],
        0,
    )
    # a start, by id, of a call that succeeded: its file is not known
    assert run(end("a"), Unreadable(line=3, detail="x", starts=("a",), ends=NO_CALLS)) == (
        [(None, unread)],
        1,
    )
    # a start and an end on two unreadable lines: a whole call unseen
    assert (
        run(
            Unreadable(line=3, detail="x", starts=ANY_CALL, ends=NO_CALLS),
            Unreadable(line=4, detail="y", starts=NO_CALLS, ends=ANY_CALL),
        )[1]
        == 1
    )
    # one unreadable line of unknown role: it cannot hold both halves of one call
    assert run(Unreadable(line=3, detail="x", starts=ANY_CALL, ends=ANY_CALL)) == ([], 0)


# --- item 7: numbers outside the 64-bit range --------------------------------------------------


def exported(data: bytes, source: str) -> tuple[EvidenceDocument, bytes]:
    """Record as coverage-gate does, and encode the spans the way the OTLP exporters do."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    settings_ = RecordSettings(revision="rev1", repo_root=REPO_ROOT)
    document = record_stream(io.BytesIO(data), ADAPTERS[source], settings_, provider)
    encoded = (otlp_json(encode_spans(memory.get_finished_spans())) + "\n").encode()
    return document, encoded


def pi_call(args: dict[str, Any], text: str = "content") -> bytes:
    start = {"type": "tool_execution_start", "toolCallId": "a", "toolName": "cr_read", "args": args}
    end = {
        "type": "tool_execution_end",
        "toolCallId": "a",
        "toolName": "cr_read",
        "result": {"content": [{"type": "text", "text": text}]},
        "isError": False,
    }
    body = [{"type": "agent_start"}, start, end, {"type": "agent_end", "messages": []}]
    return "\n".join(json.dumps(x) for x in body).encode() + b"\n"


@pytest.mark.parametrize(
    ("args", "text", "kind"),
    [
        ({"path": "a.py", "offset": BIG}, "content", None),
        ({"path": "a.py", "limit": "LIMIT"}, "content", None),
        (
            {"path": "a.py"},
            f"[cr-range offset=0 end={BIG} total={BIG}]",
            IssueKind.OUTCOME_UNREADABLE,
        ),
        (
            {"path": "a.py"},
            f"[cr-range offset=0 end={'9' * 5000} total=1]",
            IssueKind.OUTCOME_UNREADABLE,
        ),
    ],
    ids=["offset", "limit-5000-digits", "cr-range", "cr-range-5000-digits"],
)
def test_pi_numbers_past_the_64_bit_range_are_labelled_and_export(
    args: dict[str, Any], text: str, kind: IssueKind | None
) -> None:
    """An offset or limit past 64 bits on a clear path: a read of that file whose lines cannot
    be told. A header value past 64 bits: the outcome is unreadable. Either way spans encode."""
    data = pi_call(args, text).replace(b'"LIMIT"', b"9" * 5000)
    document, encoded = exported(data, "pi-rpc")
    assert encoded
    if kind is None:
        assert [(f.path, f.reads_succeeded, f.reads_lines_unknown) for f in document.files] == [
            ("a.py", 1, 1)
        ]
        return
    assert kind in [issue.kind for issue in document.issues]
    assert not any(entry.reads_succeeded for entry in document.files)


def test_claude_numbers_past_the_64_bit_range_are_labelled_and_export() -> None:
    lines = lines_of(CLAUDE_LIAR)
    data = CLAUDE_LIAR.replace(b'"numLines":', f'"numLines":{BIG},"x":'.encode(), 1)
    assert data != CLAUDE_LIAR
    document, encoded = exported(data, "claude-code")
    assert IssueKind.OUTCOME_UNREADABLE in [issue.kind for issue in document.issues]
    assert encoded and lines
    offset = CLAUDE_LIAR.replace(b'"file_path":', f'"offset":{BIG},"file_path":'.encode(), 1)
    document, encoded = exported(offset, "claude-code")
    assert encoded
    # The file is clear and the result says which lines it showed: still a read of that file.
    before, _ = exported(CLAUDE_LIAR, "claude-code")
    assert [(f.path, f.reads_succeeded) for f in document.files] == [
        (f.path, f.reads_succeeded) for f in before.files
    ]


def spans_of(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span
        for resource in request["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def readme_span_changed(encoded: bytes, change: Any) -> bytes:
    """The exported spans with ``change`` applied to the span of the read of README.md."""
    out = []
    for line in lines_of(encoded):
        if b"README.md" not in line:
            out.append(line)
            continue
        request = json.loads(line)
        for span in spans_of(request):
            if any(a["value"].get("stringValue") == "README.md" for a in span["attributes"]):
                change(span)
        out.append(json.dumps(request).encode())
    return b"\n".join(out)


def test_otlp_int_values_past_the_64_bit_range_are_labelled_and_export() -> None:
    def bump(span: dict[str, Any]) -> None:
        for attribute in span["attributes"]:
            if attribute["key"] == "coverage_gate.request.offset":
                attribute["value"] = {"intValue": str(BIG)}

    _, encoded = exported(PI_HONEST, "pi-rpc")
    bumped = readme_span_changed(encoded, bump)
    assert bumped != encoded
    document, again = exported(bumped, "otlp-json")
    entry = document.file("README.md")
    assert entry is not None and (entry.reads_succeeded, entry.reads_unknown) == (0, 1)
    assert again


# --- item 8: bounded strings and a bounded pairer ----------------------------------------------


def test_huge_call_ids_and_paths_are_kept_bounded_and_still_pair() -> None:
    long_id = "c" * 1_000_000
    start = {
        "type": "tool_execution_start",
        "toolCallId": long_id,
        "toolName": "cr_read",
        "args": {"path": "a.py"},
    }
    end = {
        "type": "tool_execution_end",
        "toolCallId": long_id,
        "toolName": "cr_read",
        "result": {"content": [{"type": "text", "text": "print(1)"}]},
        "isError": False,
    }
    rejected = {
        "type": "tool_execution_start",
        "toolCallId": "r",
        "toolName": "cr_read",
        "args": {"path": "/etc/" + "p" * 1_000_000},
    }
    body = [{"type": "agent_start"}, start, end, rejected, {"type": "agent_end"}]
    data = "\n".join(json.dumps(x) for x in body).encode() + b"\n"
    document = record_bytes(data)
    assert [(f.path, f.reads_succeeded) for f in document.files] == [("a.py", 1)]
    assert len(document.model_dump_json()) < 20_000
    kinds = [issue.kind for issue in document.issues]
    assert IssueKind.VALUE_TRUNCATED in kinds
    assert IssueKind.ARGUMENTS_UNAVAILABLE in kinds


def test_calls_past_the_pairers_bound_make_evidence_unavailable_not_absent() -> None:
    pairer = Pairer("/r", max_calls=3)
    pairer.feed(
        [
            ToolStart(call_id=f"c{n}", tool="read", action=ReadAction(path=f"f{n}.py"), line=n)
            for n in range(5)
        ]
    )
    assert pairer.dropped_calls == 2
    assert len(pairer.records()) == 3
    body = [{"type": "agent_start"}]
    body += [
        {"type": "tool_execution_start", "toolCallId": f"c{n}", "toolName": "bash", "args": {}}
        for n in range(20_001)
    ]
    body += [{"type": "agent_end"}]
    document = record_bytes("\n".join(json.dumps(x) for x in body).encode() + b"\n")
    assert document.truncated and document.dropped_calls == 1
    assert decide(document, ["a.py"], ["a.py"])["status"]["a.py"] is FileStatus.UNKNOWN


def test_line_issues_held_by_the_pairer_are_bounded_and_counted() -> None:
    """A million malformed lines do not make a million issues in memory: the sample is bounded,
    the rest counted, and the document says how many were dropped."""
    pairer = Pairer("/r", max_line_issues=5)
    pairer.feed(Malformed(line=n, detail="not JSON") for n in range(1000))
    assert len(pairer.lines_with_issues) == 5
    assert (pairer.line_issue_total, pairer.malformed) == (1000, 1000)
    data = b'{"type":"agent_start"}\n' + b"[1]\n" * 1000 + b'{"type":"agent_end"}\n'
    document = record_bytes(data)
    assert document.counters.malformed_lines == 1000
    assert len(document.issues) + document.issues_dropped == 1000


@pytest.mark.parametrize("args", [{"path": ["a.py"]}, {"file": "a.py"}, ["a.py"], {"path": None}])
def test_a_successful_read_whose_file_cannot_be_read_from_its_arguments_is_unattributed(
    args: Any,
) -> None:
    """The tool took arguments we cannot read and succeeded: it read some file, which one
    cannot be told, so claims lacking evidence are unknown, never unsupported. The same call
    failing read nothing, and changes nothing."""
    succeeded = record_bytes(pi_call(args))
    assert succeeded.unattributed_calls == 1
    assert IssueKind.ARGUMENTS_UNAVAILABLE in [issue.kind for issue in succeeded.issues]
    failed = record_bytes(pi_call(args).replace(b'"isError": false', b'"isError": true'))
    assert failed.unattributed_calls == 0


def test_a_file_name_holding_a_nul_byte_is_bad_input_not_a_crash() -> None:
    """A bundle may name its evidence file with a NUL in it: exit 3 naming it, never exit 5."""
    with pytest.raises(BadInputError, match="NUL"):
        read_bytes(Path("claims.json\x00.txt"), "evidence")
