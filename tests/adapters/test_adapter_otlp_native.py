"""The agents' own OpenTelemetry as evidence (``otlp-json``): Claude Code's tool_result logs and
tool spans, Codex's tool_result logs, GenAI execute_tool spans; one call however many records
describe it; capability and completeness told honestly.

The streams are real captures (tests/data/otlp-json/claude-code_otel_*.jsonl, made by Claude Code
2.1.328 and Codex 0.169.0 against the scripted model with their telemetry sent to coverage-gate's
receiver, beside their stdout streams in tests/data/claude-code and tests/data/codex-exec),
mutated the way real exports go wrong.
"""

from __future__ import annotations

import codecs
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from coverage_gate.adapters import ADAPTERS
from coverage_gate.cli import app
from coverage_gate.contracts.model import Capability, Depth, EvidenceDocument, IssueKind, LineRange
from coverage_gate.core.agreement import compare
from coverage_gate.edges.content import MappingContent
from coverage_gate.record.recording import Recorder, RecordSettings
from coverage_gate.telemetry.otlp_wire import looks_like_proto_file, proto_file_lines
from tests.conftest import CHANGED_FILES, DATA, REPO_ROOT, record_bytes, revision_content

OTLP = DATA / "otlp-json"
HONEST = OTLP / "claude-code_otel_honest.jsonl"
MIXED = OTLP / "claude-code_otel_mixed.jsonl"
SHARED = OTLP / "claude-code_2.1.328_otel_shared.jsonl"
CHANGED = CHANGED_FILES
Json = dict[str, Any]


def record(data: bytes) -> EvidenceDocument:
    return record_bytes(data, "otlp-json")


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def requests(path: Path) -> list[Json]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def lines(bodies: list[Json]) -> bytes:
    return b"".join(json.dumps(body, separators=(",", ":")).encode() + b"\n" for body in bodies)


def records_of(body: Json) -> list[Json]:
    """Every log record and span of one request (mutable, in place)."""
    out: list[Json] = []
    for resource in body.get("resourceLogs", []):
        for scope in resource["scopeLogs"]:
            out += scope["logRecords"]
    for resource in body.get("resourceSpans", []):
        for scope in resource["scopeSpans"]:
            out += scope["spans"]
    return out


def attr(item: Json, key: str) -> Any:
    for entry in item.get("attributes", []):
        if entry["key"] == key:
            return next(iter(entry["value"].values()))
    return None


def set_attr(item: Json, key: str, value: Any) -> None:
    kind = "boolValue" if isinstance(value, bool) else "stringValue"
    item["attributes"] = [entry for entry in item["attributes"] if entry["key"] != key]
    item["attributes"].append({"key": key, "value": {kind: value}})


def drop_attr(item: Json, key: str) -> None:
    item["attributes"] = [entry for entry in item["attributes"] if entry["key"] != key]


def mutate(path: Path, change: Callable[[Json], None]) -> bytes:
    """The capture with ``change`` applied to every log record and span."""
    bodies = requests(path)
    for body in bodies:
        for item in records_of(body):
            change(item)
    return lines(bodies)


def tool_results(bodies: list[Json]) -> list[Json]:
    return [
        item
        for body in bodies
        for item in records_of(body)
        if (item.get("body") or {}).get("stringValue") == "claude_code.tool_result"
    ]


def call_id_of_read(path: Path, file: str) -> str:
    for item in tool_results(requests(path)):
        if file in (attr(item, "tool_input") or ""):
            return str(attr(item, "tool_use_id"))
    raise AssertionError(f"no Read of {file}")


# --- the same run through the stream and through the telemetry ---------------------------------


def record_both(name: str) -> tuple[Recorder, EvidenceDocument, Recorder, EvidenceDocument]:
    settings = RecordSettings(revision="rev1", repo_root=REPO_ROOT)
    stream = Recorder(ADAPTERS["claude-code"], settings)
    stream.feed((DATA / "claude-code" / f"{name}.stream-json.jsonl").read_bytes())
    telemetry = Recorder(ADAPTERS["otlp-json"], settings)
    telemetry.feed((OTLP / f"{name}.jsonl").read_bytes())
    return stream, stream.finish(), telemetry, telemetry.finish()


@pytest.mark.parametrize(
    "name", ["claude-code_otel_honest", "claude-code_otel_no_details", "claude-code_otel_killed"]
)
def test_stream_and_telemetry_of_one_run_record_the_same_reads_where_both_see_them(
    name: str,
) -> None:
    """Where both can see the calls, Claude Code's stream-json and its own telemetry give the
    same calls (same ids, tools, files, outcomes), the same per-file counts and the same
    completeness; the killed run is incomplete in both."""
    stream, from_stream, telemetry, from_telemetry = record_both(name)
    assert from_stream.stream_complete == from_telemetry.stream_complete
    if from_telemetry.capability is Capability.PER_FILE:
        assert reads(from_stream) == reads(from_telemetry)
    if name == "claude-code_otel_killed":
        assert not from_telemetry.stream_complete
        incomplete = [r.call_id for r in stream.records if r.outcome.value == "incomplete"]
        assert incomplete  # the command running when it was killed: its start in the stream only
        assert {d.call_id for d in compare(stream.records, telemetry.records)} == set(incomplete)
    elif from_telemetry.capability is Capability.PER_FILE:
        assert compare(stream.records, telemetry.records) == []


def test_where_the_telemetry_cannot_see_what_the_stream_shows_the_two_disagree() -> None:
    """What Claude Code's telemetry cannot show (a run with a failed read, a ranged read, an
    unknown tool, a shell read and a read past the end of a file):

    - a call to a tool that does not exist has no telemetry record (the stream has its error);
    - a read past the end of a file says success in both, but only the stream says it returned
      no line: from the telemetry alone (without the file's length) it is a successful read of
      the lines it asked for;
    - a read's result (its lines, the file's length) is never in the telemetry: a read with no
      range asked for Claude Code's first 2000 lines, which stand as asked without the file's
      length.

    Everything else agrees: the failed read, the ranged read, the shell commands."""
    stream, from_stream, telemetry, from_telemetry = record_both("claude-code_otel_mixed")
    found = {d.call_id: d.detail for d in compare(stream.records, telemetry.records)}
    unknown = next(r for r in stream.records if r.tool == "Frobnicate")
    assert found.pop(unknown.call_id).startswith("only in the stream: Frobnicate")
    assert found == {}  # the read past the end agrees as a call...
    by_path = {f.path: f for f in from_stream.files}
    seen = {f.path: f for f in from_telemetry.files}
    assert (by_path["README.md"].reads_succeeded, by_path["README.md"].reads_empty) == (0, 1)
    assert (seen["README.md"].reads_succeeded, seen["README.md"].reads_empty) == (1, 0)
    assert seen["src/api/handler.py"].reads_failed == by_path["src/api/handler.py"].reads_failed
    # the stream also shows the diff's hunks (its Bash `git diff`, credited by content)
    read_lines = seen["src/api/models.py"].lines_seen
    assert set(read_lines) <= set(by_path["src/api/models.py"].lines_seen)
    assert by_path["src/api/handlers.py"].lines_seen_whole  # the stream tells its length
    assert not seen["src/api/handlers.py"].lines_seen_whole
    assert seen["src/api/handlers.py"].lines_seen == [LineRange(start=1, end=2000)]
    assert "src/util/strings.py" not in seen  # `cat` through Bash: never evidence


def test_a_telemetry_read_past_the_end_is_no_evidence_once_the_files_length_is_known() -> None:
    """The telemetry tells only the range a read asked for. With the pinned diff and the files at
    the revision, that range is clipped to the file: README.md asked from line 500 of 17 showed
    nothing (no evidence, as the stream says), and models.py's lines 1-10 stand as the stream
    has them."""
    diff = (DATA / "pi-rpc" / "review.diff").read_bytes()
    telemetry = (OTLP / "claude-code_otel_mixed.jsonl").read_bytes()
    stream = (DATA / "claude-code" / "claude-code_otel_mixed.stream-json.jsonl").read_bytes()
    known = record_bytes(telemetry, "otlp-json", diff=diff, content=revision_content())
    from_stream = record_bytes(stream, "claude-code", diff=diff, content=revision_content())
    seen = {f.path: f for f in known.files}
    by_path = {f.path: f for f in from_stream.files}
    assert (seen["README.md"].reads_succeeded, seen["README.md"].reads_empty) == (0, 1)
    assert seen["README.md"].depth is None
    assert IssueKind.EMPTY_RESULT in {i.kind for i in known.issues}
    # the stream also shows the diff's hunks (its Bash `git diff`, credited by content)
    read_lines = seen["src/api/models.py"].lines_seen
    assert set(read_lines) <= set(by_path["src/api/models.py"].lines_seen)
    assert seen["src/api/models.py"].lines_seen  # a range within the file still counts
    unknown = record_bytes(telemetry, "otlp-json", diff=diff)  # no content: the range stands
    assert {f.path: f for f in unknown.files}["README.md"].reads_succeeded == 1


#: A file longer than Claude Code's 2000-line default read, changed at line 2100.
LONG_FILE = "src/long.py"
LONG_CONTENT = "".join(f"value_{n} = {n}\n" for n in range(1, 2501)).encode()
LONG_DIFF = (
    f"diff --git a/{LONG_FILE} b/{LONG_FILE}\n"
    "index 1111111..2222222 100644\n"
    f"--- a/{LONG_FILE}\n"
    f"+++ b/{LONG_FILE}\n"
    "@@ -2100,1 +2100,1 @@\n"
    "-value_2100 = 0\n"
    "+value_2100 = 2100\n"
).encode()


def test_a_telemetry_read_with_no_range_showed_only_claude_codes_first_2000_lines() -> None:
    """Claude Code's Read with no offset or limit returns the first 2000 lines of a file, and its
    telemetry never says what came back. The real capture's whole read of handlers.py, pointed at
    a 2,500-line file changed at line 2100, showed none of that change: lines 1-2000, depth
    ``none`` (a lazy reviewer's one Read of a long file is not a full read of it), with or
    without the file's content. The read of a file no longer than 2000 lines is still every line
    of it once its length is known: depth ``full``, as the stream says."""
    diff = (DATA / "pi-rpc" / "review.diff").read_bytes() + LONG_DIFF
    mixed = MIXED.read_bytes()
    pointed = mixed.replace(b"/src/api/handlers.py", f"/{LONG_FILE}".encode())
    assert pointed != mixed
    content = MappingContent({**revision_content().files, LONG_FILE: LONG_CONTENT})
    for source in (content, None):
        document = record_bytes(pointed, "otlp-json", diff=diff, content=source)
        long = next(f for f in document.files if f.path == LONG_FILE)
        assert (long.reads_succeeded, long.lines_seen_whole) == (1, False)
        assert long.lines_seen == [LineRange(start=1, end=2000)]
        assert long.depth is not None and long.depth.depth is Depth.NONE
        assert long.depth.unseen == [LineRange(start=2100, end=2100)]
    honest = record_bytes(mixed, "otlp-json", diff=diff, content=revision_content())
    handlers = next(f for f in honest.files if f.path == "src/api/handlers.py")
    assert handlers.lines_seen_whole
    # every one of its 15 added lines (its 3 deleted ones show only in a diff)
    assert handlers.depth is not None and handlers.depth.changed_lines_seen == 15


def test_the_shared_claude_code_capture_agrees_with_its_stream() -> None:
    """The shared probe's logs and traces (one run) give the reads of its stream-json."""
    telemetry = record(SHARED.read_bytes())
    stream = DATA / "hostile" / "claude-code_2.1.328_same_run.stream-json.jsonl"
    from_stream = record_bytes(stream.read_bytes(), "claude-code")
    assert reads(telemetry) == reads(from_stream)
    assert telemetry.counters.calls == from_stream.counters.calls == 5


# --- one call, however many records -------------------------------------------------------------


def test_log_and_spans_of_one_call_are_one_call() -> None:
    """Each Claude Code call has a tool_result log, a claude_code.tool span and its execution
    child, under one tool_use_id: seven calls, not twenty-one."""
    document = record(HONEST.read_bytes())
    assert document.counters.calls == 7
    assert set(reads(document)) == set(CHANGED)
    assert all(counts == (1, 0) for counts in reads(document).values())


def test_logs_alone_and_spans_alone_each_give_the_call() -> None:
    bodies = requests(HONEST)
    logs = [b for b in bodies if "resourceLogs" in b]
    spans = [b for b in bodies if "resourceSpans" in b]
    assert (
        reads(record(lines(logs))) == reads(record(lines(spans))) == dict.fromkeys(CHANGED, (1, 0))
    )


def test_a_span_alone_is_a_read_of_unknown_lines_and_a_log_gives_the_range() -> None:
    """claude_code.tool spans carry the path but no offset/limit: which lines a read showed is
    unknown from them; the log's tool_input says the range. Both together: the log's range."""
    bodies = requests(HONEST)
    spans = record(lines([b for b in bodies if "resourceSpans" in b]))
    ranged = next(f for f in spans.files if f.path == "src/util/strings.py")
    assert ranged.reads_lines_unknown == 1
    assert ranged.lines_seen == []
    both = record(lines(bodies))
    ranged = next(f for f in both.files if f.path == "src/util/strings.py")
    assert [(r.start, r.end) for r in ranged.lines_seen] == [(1, 8)]
    assert ranged.partial


def test_an_export_sent_twice_is_the_same_calls_once() -> None:
    """An exporter that retries sends the same batch again: the calls are counted once."""
    data = HONEST.read_bytes()
    again = record(data + data)
    assert again.counters.calls == 7
    assert reads(again) == reads(record(data))
    assert not again.issues


def test_a_call_id_used_for_two_different_reads_is_ambiguous_and_no_evidence() -> None:
    """Two tool_result records of one id naming different files: the id is ambiguous and
    neither file gets evidence from it (the golden crafted_claude_code_duplicated_call_id)."""
    bodies = requests(MIXED)
    duplicate = copy.deepcopy(next(b for b in bodies if "resourceLogs" in b))
    handlers = call_id_of_read(MIXED, "src/api/handlers.py")
    for item in tool_results([duplicate]):
        if attr(item, "tool_use_id") == handlers:
            set_attr(item, "tool_input", json.dumps({"file_path": f"{REPO_ROOT}/docs/guide.md"}))
    document = record(lines([*bodies, duplicate]))
    assert "src/api/handlers.py" not in reads(document)
    assert "docs/guide.md" not in reads(document)
    ambiguous = [i for i in document.issues if i.kind is IssueKind.AMBIGUOUS_CALL_ID]
    assert [i.call_id for i in ambiguous] == [handlers]


def test_a_log_that_says_success_and_a_span_that_says_failure_is_ambiguous() -> None:
    handlers = call_id_of_read(MIXED, "src/api/handlers.py")

    def fail_the_execution(item: Json) -> None:
        if item.get("name") == "claude_code.tool.execution" and attr(item, "tool_use_id") == (
            handlers
        ):
            set_attr(item, "success", False)

    document = record(mutate(MIXED, fail_the_execution))
    assert "src/api/handlers.py" not in reads(document)
    assert IssueKind.AMBIGUOUS_CALL_ID in {i.kind for i in document.issues}


def test_a_failed_call_whose_records_name_its_error_differently_is_one_failure() -> None:
    """The log says error_type TelemetrySafeError, the span error.type tool_error: one failed
    call, not a contradiction."""
    document = record(MIXED.read_bytes())
    assert reads(document)["src/api/handler.py"] == (0, 1)
    assert not [i for i in document.issues if i.kind is IssueKind.AMBIGUOUS_CALL_ID]


def test_an_execution_span_without_its_call_is_an_end_without_a_start() -> None:
    bodies = requests(HONEST)
    executions = [
        item for item in records_of(bodies[-1]) if item.get("name") == "claude_code.tool.execution"
    ]
    body = {"resourceSpans": [{"scopeSpans": [{"spans": executions[:1]}]}]}
    document = record(lines([body]))
    assert [i.kind for i in document.issues] == [IssueKind.MISSING_START]
    assert document.files == []


def test_a_tool_span_without_its_outcome_is_a_start_without_an_end() -> None:
    """The claude_code.tool span stays unset when its call fails: it never says success."""
    bodies = requests(HONEST)
    tools = [item for item in records_of(bodies[-1]) if item.get("name") == "claude_code.tool"]
    body = {"resourceSpans": [{"scopeSpans": [{"spans": tools}]}]}
    document = record(lines([body]))
    assert document.counters.succeeded == 0
    assert IssueKind.MISSING_END in {i.kind for i in document.issues}
    assert all(f.reads_succeeded == 0 for f in document.files)


def test_a_success_flag_that_is_neither_true_nor_false_is_an_unreadable_outcome() -> None:
    handlers = call_id_of_read(MIXED, "src/api/handlers.py")

    def damage(item: Json) -> None:
        if attr(item, "tool_use_id") == handlers:
            if item.get("name") == "claude_code.tool.execution":
                drop_attr(item, "success")
            elif "body" in item:
                set_attr(item, "success", "maybe")

    document = record(mutate(MIXED, damage))
    handlers_file = next(f for f in document.files if f.path == "src/api/handlers.py")
    assert (handlers_file.reads_succeeded, handlers_file.reads_unknown) == (0, 1)


# --- what each source can and cannot show ------------------------------------------------------


def test_claude_code_telemetry_without_tool_details_has_capability_none() -> None:
    """Without OTEL_LOG_TOOL_DETAILS=1 no record names a file: capability none (evidence
    unavailable, never evidence of absence), from the real capture and from the honest one
    with its tool_input and file_path removed."""
    real = record((OTLP / "claude-code_otel_no_details.jsonl").read_bytes())
    assert real.capability is Capability.NONE
    assert real.files == []

    def strip(item: Json) -> None:
        drop_attr(item, "tool_input")
        drop_attr(item, "file_path")

    stripped = record(mutate(HONEST, strip))
    assert stripped.capability is Capability.NONE
    assert record(HONEST.read_bytes()).capability is Capability.PER_FILE


@pytest.mark.parametrize(
    "path", [OTLP / "codex_otel_overclaim.jsonl", OTLP / "codex_0.169.0_otel_shared.jsonl"]
)
def test_codex_telemetry_names_shell_commands_only_so_capability_is_none(path: Path) -> None:
    """`cat src/api/handlers.py` through Codex's exec_command is not a read: no file, capability
    none; `success` is Codex's own, true even for `cat` of a missing file (exit code 1)."""
    document = record(path.read_bytes())
    assert document.capability is Capability.NONE
    assert document.files == []
    assert document.counters.calls == document.counters.ignored > 0


def test_a_shell_read_is_not_evidence_in_claude_code_telemetry_either() -> None:
    document = record(MIXED.read_bytes())
    assert "src/util/strings.py" not in reads(document)  # `cat src/util/strings.py` via Bash
    assert document.counters.ignored == 2  # git diff, cat


def test_a_partial_read_is_recorded_with_its_lines() -> None:
    models = next(f for f in record(MIXED.read_bytes()).files if f.path == "src/api/models.py")
    assert models.partial
    assert [(r.start, r.end) for r in models.lines_seen] == [(1, 10)]


# --- completeness ------------------------------------------------------------------------------


def test_claude_code_traces_end_with_the_interaction_span_logs_alone_never_complete() -> None:
    """OTLP marks no final flush. The claude_code.interaction span (an invoke_agent span) ends the
    turn: with it the
    telemetry is complete; logs alone carry no such mark and stay incomplete (``run`` knows
    more: see test_run_telemetry)."""
    bodies = requests(HONEST)
    assert record(lines(bodies)).stream_complete
    assert not record(lines([b for b in bodies if "resourceLogs" in b])).stream_complete

    def no_interaction(item: Json) -> None:
        if item.get("name") == "claude_code.interaction":  # its operation is invoke_agent
            item["name"] = "claude_code.something_else"
            drop_attr(item, "gen_ai.operation.name")

    assert not record(mutate(HONEST, no_interaction)).stream_complete


def test_an_export_cut_off_by_a_kill_is_incomplete() -> None:
    """A killed Claude Code loses its last interval: no interaction span, so incomplete, and
    its reads so far still verify their files."""
    document = record((OTLP / "claude-code_otel_killed.jsonl").read_bytes())
    assert not document.stream_complete
    assert reads(document) == {"src/api/handlers.py": (1, 0), "src/api/models.py": (1, 0)}


# --- GenAI execute_tool spans with a path attribute ---------------------------------------------


def genai_span(**attrs: Any) -> Json:
    return {
        "name": "execute_tool view",
        "spanId": "00f067aa0ba902b7",
        "attributes": [
            {
                "key": key,
                "value": {"intValue": str(value)}
                if isinstance(value, int)
                else {"stringValue": value},
            }
            for key, value in attrs.items()
        ],
    }


def test_a_genai_read_span_with_a_known_path_attribute_is_a_read_of_unknown_lines() -> None:
    span = genai_span(**{"gen_ai.tool.name": "read", "gen_ai.tool.call.id": "c1"})
    span["attributes"].append({"key": "file_path", "value": {"stringValue": "src/a.py"}})
    document = record(lines([{"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}]))
    assert reads(document) == {"src/a.py": (1, 0)}
    assert document.files[0].reads_lines_unknown == 1


def test_a_genai_tool_span_with_a_non_zero_exit_code_is_a_failed_call() -> None:
    """Copilot's spans keep the shell's exit code in process.exit.code."""
    span = genai_span(
        **{
            "gen_ai.tool.name": "read",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": '{"path": "src/a.py"}',
            "process.exit.code": 1,
        }
    )
    document = record(lines([{"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}]))
    assert reads(document) == {"src/a.py": (0, 1)}


# --- protobuf files ------------------------------------------------------------------------------


def test_a_collector_protobuf_file_gives_the_evidence_of_the_same_export_in_json() -> None:
    """The Collector's `format: proto` file (length-prefixed messages) of a real protobuf export
    of Claude Code reads as the OTLP/JSON of the same messages."""
    data = (DATA / "otlp-protobuf" / "claude-code_otel_honest.collector.proto").read_bytes()
    converted = list(proto_file_lines(data))
    assert len(converted) == 2
    assert all(isinstance(line, bytes) for line in converted)
    document = record(b"".join(line + b"\n" for line in converted if isinstance(line, bytes)))
    assert document.stream_complete
    assert reads(document) == dict.fromkeys(CHANGED, (1, 0))


# --- fuzz: random records of the shapes the decoder reads --------------------------------------

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=20),
    st.sampled_from(["true", "false", "Read", "Bash", '{"file_path": "a.py", "offset": 1}']),
)
_KEYS = st.sampled_from(
    ["tool_use_id", "tool_name", "tool_input", "success", "file_path", "gen_ai.tool.call.id",
     "gen_ai.tool.name", "gen_ai.operation.name", "error.type", "call_id", "event.name",
     "process.exit.code", "gen_ai.tool.call.arguments"]
)  # fmt: skip


def _attribute(key: str, value: Any) -> Json:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {} if value is None else {"stringValue": value}}


_ATTRIBUTES = st.lists(st.builds(_attribute, _KEYS, _VALUES), max_size=8)
_LOG = st.fixed_dictionaries(
    {
        "body": st.sampled_from(
            [{"stringValue": "claude_code.tool_result"}, {}, {"stringValue": "other"}]
        ),
        "attributes": st.one_of(_ATTRIBUTES, st.just(3)),
    }
)
_SPAN = st.fixed_dictionaries(
    {
        "name": st.sampled_from(
            [
                "claude_code.tool",
                "claude_code.tool.execution",
                "claude_code.interaction",
                "execute_tool read",
                "other",
            ]
        ),
        "spanId": st.text(max_size=4),
        "status": st.fixed_dictionaries({"code": st.sampled_from([0, 1, 2, "x"])}),
        "attributes": st.one_of(_ATTRIBUTES, st.just("x")),
    }
)
_REQUEST = st.one_of(
    st.builds(lambda logs: {"resourceLogs": [{"scopeLogs": [{"logRecords": logs}]}]},
              st.lists(st.one_of(_LOG, st.integers()), max_size=4)),
    st.builds(lambda spans: {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]},
              st.lists(st.one_of(_SPAN, st.integers()), max_size=4)),
    st.builds(lambda junk: {"resourceLogs": junk}, _VALUES),
)  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(st.lists(_REQUEST, min_size=1, max_size=4))
def test_random_records_of_the_native_shapes_record_without_an_exception(
    bodies: list[Json],
) -> None:
    """Whatever the records say, recording gives a document: every call counted once, every
    line that could not be read counted as malformed."""
    document = record(lines(bodies))
    assert document.counters.lines == len(bodies)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_in_place_of_an_export_are_a_counted_malformed_line(data: bytes) -> None:
    line = data.replace(b"\n", b" ")
    document = record(line + b"\n" + HONEST.read_bytes())
    # a byte-order mark opening the stream marks its encoding: it is not part of the first line
    content = line.removeprefix(codecs.BOM_UTF8)
    assert document.counters.malformed_lines + document.counters.unrecognised_events >= (
        1 if content.strip() else 0
    )


def test_record_reads_a_collector_protobuf_file_and_names_a_cut_off_message(
    tmp_path: Path,
) -> None:
    """`record` detects a Collector proto file; one cut off is bad input (exit 3) naming the
    byte where the message stops, never a traceback."""
    source = DATA / "otlp-protobuf" / "claude-code_otel_honest.collector.proto"
    out = tmp_path / "ev.json"
    args = ["record", "--revision", "rev1", "--repo-root", REPO_ROOT, "-o", str(out)]
    result = CliRunner().invoke(app, [*args, str(source)])
    assert result.exit_code == 0, result.stderr
    document = EvidenceDocument.model_validate_json(out.read_text())
    assert reads(document) == dict.fromkeys(CHANGED, (1, 0))
    cut = tmp_path / "cut.proto"
    cut.write_bytes(source.read_bytes()[:100])
    result = CliRunner().invoke(app, [*args, str(cut)])
    assert result.exit_code == 3
    assert "OTLP protobuf file: a message of" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_json_lines_file_opening_with_a_nul_line_is_read_as_json_lines(tmp_path: Path) -> None:
    """A stray NUL line before OTLP JSON lines is a malformed line, skipped as every format
    skips one; it does not make the file a Collector proto file (whose messages open with
    field 1 after their length)."""
    source = DATA / "otlp-json" / "claude-code_otel_honest.jsonl"
    stream = tmp_path / "nul.jsonl"
    stream.write_bytes(b"\x00\n" + source.read_bytes())
    args = ["record", "--format", "otlp-json", "--revision", "rev1", "--repo-root", REPO_ROOT]
    nul = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "a.json"), str(stream)])
    plain = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "b.json"), str(source)])
    assert nul.exit_code == plain.exit_code == 0, nul.stderr
    a, b = (json.loads((tmp_path / name).read_text()) for name in ("a.json", "b.json"))
    assert a["files"] == b["files"]
    assert a["counters"]["malformed_lines"] == b["counters"]["malformed_lines"] + 1
    proto = (DATA / "otlp-protobuf" / "claude-code_otel_honest.collector.proto").read_bytes()
    assert looks_like_proto_file(proto) and not looks_like_proto_file(stream.read_bytes())
