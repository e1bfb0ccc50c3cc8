"""OTLP JSON adapter: GenAI tool spans as evidence, completion by ``invoke_agent``, bad input, and
the round trip: the spans coverage-gate exports for a review, read back, give the same evidence."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from coverage_gate.adapters import ADAPTERS
from coverage_gate.adapters.otlp_json import ADAPTER, attributes
from coverage_gate.contracts.model import Depth, EvidenceDocument, IssueKind, LineRange
from coverage_gate.contracts.spans import CAPABILITY, STREAM_COMPLETE
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.events import LineClass
from coverage_gate.record.recording import RecordSettings, record_stream
from coverage_gate.telemetry.otel_sdk import otlp_json
from tests.conftest import (
    DATA,
    GOLDEN,
    REPO_ROOT,
    REVISION_FILES,
    check_golden_evidence,
    record_bytes,
    revision_content,
)

FORMAT = "otlp-json"


def attr(key: str, value: str | int | bool) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def span(
    name: str, span_id: str = "00f067aa0ba902b7", status: Any = None, **attrs: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
        "spanId": span_id,
        "name": name,
        "kind": 1,
        "attributes": [attr(key.replace("__", "."), value) for key, value in attrs.items()],
    }
    if status is not None:
        out["status"] = {"code": status}
    return out


def tool(
    name: str,
    call_id: str | None = "c1",
    arguments: dict[str, Any] | str | None = None,
    status: Any = None,
    **attrs: Any,
) -> dict[str, Any]:
    """An execute_tool span as a GenAI-instrumented agent records it."""
    extra: dict[str, Any] = {"gen_ai__operation__name": "execute_tool", "gen_ai__tool__name": name}
    if call_id is not None:
        extra["gen_ai__tool__call__id"] = call_id
    if arguments is not None:
        extra["gen_ai__tool__call__arguments"] = (
            arguments if isinstance(arguments, str) else json.dumps(arguments)
        )
    return span(f"execute_tool {name}", status=status, **extra, **attrs)


AGENT = span(
    "invoke_agent reviewer", span_id="1111111111111111", gen_ai__operation__name="invoke_agent"
)


def request(*spans: dict[str, Any]) -> str:
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [attr("service.name", "agent")]},
                "scopeSpans": [{"scope": {"name": "agent"}, "spans": list(spans)}],
            }
        ]
    }
    return json.dumps(body, separators=(",", ":"))


def otlp(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def issue_kinds(document: EvidenceDocument) -> list[IssueKind]:
    return sorted(issue.kind for issue in document.issues)


def record(data: bytes, **kwargs: Any) -> EvidenceDocument:
    return record_bytes(data, FORMAT, **kwargs)


# --- GenAI tool spans --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read", {"path": "src/a.py"}),
        ("Read", {"file_path": f"{REPO_ROOT}/src/a.py"}),
        ("cr_read", {"path": "@src/a.py", "offset": 0, "limit": 4096}),
        ("read_file", {"path": "./src/a.py"}),
    ],
)
def test_read_tool_span_with_a_path_in_its_arguments_is_a_read(
    name: str, arguments: dict[str, Any]
) -> None:
    doc = record(otlp(request(tool(name, arguments=arguments), AGENT)))
    assert reads(doc) == {"src/a.py": (1, 0)}
    assert doc.stream_complete


@pytest.mark.parametrize(
    ("status", "attrs"),
    [
        (2, {}),
        ("STATUS_CODE_ERROR", {}),
        (None, {"error__type": "ENOENT"}),
        (0, {"error__type": "x"}),
    ],
    ids=["code-2", "code-name", "error-type", "unset-with-error-type"],
)
def test_error_status_or_error_type_is_a_failed_call(status: Any, attrs: dict[str, Any]) -> None:
    data = otlp(request(tool("read", arguments={"path": "a.py"}, status=status, **attrs), AGENT))
    assert reads(record(data)) == {"a.py": (0, 1)}


@pytest.mark.parametrize("status", [None, 0, 1, "STATUS_CODE_OK"])
def test_unset_or_ok_status_without_error_type_is_success(status: Any) -> None:
    data = otlp(request(tool("read", arguments={"path": "a.py"}, status=status), AGENT))
    assert reads(record(data)) == {"a.py": (1, 0)}


@pytest.mark.parametrize("arguments", [None, "not json", json.dumps(["a.py"]), {"name": "a.py"}])
def test_read_span_without_usable_arguments_is_arguments_unavailable(arguments: Any) -> None:
    doc = record(otlp(request(tool("read", arguments=arguments), AGENT)))
    assert reads(doc) == {}
    assert issue_kinds(doc) == [IssueKind.ARGUMENTS_UNAVAILABLE]


def test_other_tools_are_ignored_and_diff_pages_feed_the_diff_status() -> None:
    data = otlp(
        request(
            tool("bash", "b1", arguments={"command": "cat a.py"}),
            tool("cr_diff", "d1", arguments={"offset": 0, "limit": 100}),
            AGENT,
        )
    )
    doc = record(data)
    assert reads(doc) == {}
    assert doc.counters.ignored == 1
    assert doc.diff.pages_succeeded == 1


def test_execute_tool_is_recognised_by_operation_name_whatever_the_span_name() -> None:
    renamed = tool("read", arguments={"path": "a.py"}) | {"name": "tool call"}
    assert reads(record(otlp(request(renamed, AGENT)))) == {"a.py": (1, 0)}


def test_span_id_is_the_call_id_when_the_span_has_none() -> None:
    first = tool("read", call_id=None, arguments={"path": "a.py"}) | {"spanId": "aaaaaaaaaaaaaaaa"}
    second = tool("read", call_id=None, arguments={"path": "b.py"}) | {"spanId": "bbbbbbbbbbbbbbbb"}
    assert reads(record(otlp(request(first, second, AGENT)))) == {"a.py": (1, 0), "b.py": (1, 0)}


def test_spans_that_are_not_tools_or_agents_are_passed_over() -> None:
    chat = span("chat mock-model", gen_ai__operation__name="chat", gen_ai__request__model="m")
    doc = record(otlp(request(chat), request(tool("read", arguments={"path": "a.py"}), AGENT)))
    assert reads(doc) == {"a.py": (1, 0)}
    assert doc.counters.unrecognised_events == 1


def test_attribute_values_accept_int_as_string_and_skip_unknown_kinds() -> None:
    raw = [
        attr("n", 12),
        {"key": "i", "value": {"intValue": 7}},
        {"key": "bad", "value": {"intValue": "x"}},
        {"key": "array", "value": {"arrayValue": {"values": []}}},
        {"key": "flag", "value": {"boolValue": False}},
        {"value": {"stringValue": "no key"}},
    ]
    assert attributes(raw) == {"n": 12, "i": 7, "flag": False}


# --- completion --------------------------------------------------------------------------------


def test_without_an_invoke_agent_span_the_stream_is_incomplete() -> None:
    doc = record(otlp(request(tool("read", arguments={"path": "a.py"}))))
    assert not doc.stream_complete
    assert reads(doc) == {"a.py": (1, 0)}


@pytest.mark.parametrize(
    "attrs",
    [{STREAM_COMPLETE: False}, {CAPABILITY: "none", STREAM_COMPLETE: True}],
    ids=["recorded-incomplete", "capability-none"],
)
def test_agent_span_that_recorded_unavailable_evidence_never_completes(
    attrs: dict[str, Any],
) -> None:
    """Evidence that was unavailable when recorded never turns into evidence of absence, even
    when another invoke_agent span in the file completed."""
    own = span(
        "invoke_agent pi-rpc",
        span_id="2222222222222222",
        **{k.replace(".", "__"): v for k, v in attrs.items()},
    )
    assert not record(otlp(request(own))).stream_complete
    assert not record(otlp(request(AGENT), request(own), request(AGENT))).stream_complete


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ('{"resourceSpans": {}}', "'resourceSpans'"),
        ('{"resourceSpans": [{"scopeSpans": 3}]}', "resourceSpans[0].scopeSpans"),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [5]}]}]}', "spans[0] is not an object"),
        (request(span("execute_tool read") | {"attributes": {"a": 1}}), "not a list"),
        (request(tool("")), "gen_ai.tool.name"),
        (request(tool("read", call_id=None) | {"spanId": None}), "spanId"),
        ('{"resourceSpans": [', "not JSON"),
        ('"a string"', "not an object"),
    ],
    ids=[
        "resource-spans",
        "scope-spans",
        "span",
        "attributes",
        "tool-name",
        "call-id",
        "cut",
        "string",
    ],
)
def test_wrong_shapes_are_one_malformed_line_naming_the_field(raw: str, detail: str) -> None:
    """A line of the wrong shape is one malformed line; if it is an object, it could have held
    calls of any file: one call whose file is unknown (a JSON string could hold none)."""
    doc = record(otlp(request(AGENT), raw))
    (issue,) = [issue for issue in doc.issues if issue.kind is IssueKind.MALFORMED_LINE]
    assert issue.line == 2
    assert detail in issue.detail
    assert doc.unattributed_calls == (0 if raw.startswith('"') else 1)


def test_good_spans_on_a_line_with_a_bad_span_still_count() -> None:
    doc = record(otlp(request(tool("read", arguments={"path": "a.py"}), tool(""), AGENT)))
    assert reads(doc) == {"a.py": (1, 0)}
    assert doc.counters.malformed_lines == 1


def test_metric_lines_are_passed_over_and_log_lines_without_tool_records_are_unrecognised() -> None:
    decoder = ADAPTER.decoder()
    assert decoder.classify(b'{"resourceMetrics":[]}') is LineClass.SKIP
    assert decoder.classify(b'{"resourceLogs":[]}') is LineClass.PARSE  # agents log tool calls
    doc = record(
        otlp('{"other": 1, "resourceMetrics": []}', '{"resourceLogs": []}', request(AGENT))
    )
    assert doc.counters.unrecognised_events == 2
    assert doc.counters.malformed_lines == 0


def test_non_utf8_line_is_malformed_and_the_rest_still_counts() -> None:
    data = (
        otlp(request(tool("read", arguments={"path": "a.py"})))
        + b"\xff\xfe\n"
        + otlp(request(AGENT))
    )
    doc = record(data)
    assert reads(doc) == {"a.py": (1, 0)}
    assert doc.counters.malformed_lines == 1


# --- round trip --------------------------------------------------------------------------------


def export(data: bytes, source: str, diff: bytes | None = None) -> tuple[EvidenceDocument, bytes]:
    """Record a stream as coverage-gate does, keep the spans, and write them as OTLP JSON."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = RecordSettings(
        revision="rev1",
        repo_root=REPO_ROOT,
        diff=DiffIndex.parse(diff) if diff is not None else None,
    )
    document = record_stream(io.BytesIO(data), ADAPTERS[source], settings, provider)
    spans = exporter.get_finished_spans()
    return document, (otlp_json(encode_spans(spans)) + "\n").encode()


def comparable(document: EvidenceDocument) -> dict[str, Any]:
    """The document minus what is about the file read, not the review: the format name and
    the number of lines of the file; and the wording of an ambiguous call id's detail (the span
    keeps that the id was ambiguous, not which later line made it so)."""
    dumped = document.model_dump(mode="json", by_alias=True)
    dumped.pop("source")
    dumped["counters"].pop("lines")
    for issue in dumped["issues"]:
        if issue["kind"] == IssueKind.AMBIGUOUS_CALL_ID.value:
            issue.pop("detail")
    return dumped


DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
ROUND_TRIP = [
    ("pi-rpc", DATA / "pi-rpc" / "pi_a_honest.jsonl", DIFF),
    ("pi-rpc", DATA / "pi-rpc" / "pi_b_overclaim.jsonl", DIFF),
    ("pi-rpc", DATA / "pi-rpc" / "pi_b_overclaim.jsonl", None),
    ("claude-code", DATA / "claude-code" / "claude_b_overclaim.jsonl", None),
    ("claude-code", DATA / "claude-code" / "crafted_unmatched.jsonl", None),
    ("claude-code", DATA / "claude-code" / "crafted_non_utf8.jsonl", None),
    ("claude-code", DATA / "claude-code" / "crafted_truncated.jsonl", None),
    ("claude-code", DATA / "claude-code" / "crafted_transcript.jsonl", None),
    ("codex-rollout", DATA / "codex-rollout" / "codex_b_overclaim.rollout.jsonl", None),
    ("codex-exec", DATA / "codex-exec" / "codex_b_overclaim.exec.jsonl", None),
]


@pytest.mark.parametrize(
    ("source", "path", "diff"),
    ROUND_TRIP,
    ids=[f"{s}-{p.stem}{'-diff' if d else ''}" for s, p, d in ROUND_TRIP],
)
def test_round_trip_exported_spans_give_the_same_evidence(
    source: str, path: Path, diff: bytes | None
) -> None:
    original, exported = export(path.read_bytes(), source, diff)
    again = record_bytes(exported, FORMAT, diff=diff)
    if original.capability.value == "none":
        assert again.files == []
        assert not again.stream_complete
        return
    assert comparable(again) == comparable(original)


def test_own_span_with_status_error_is_a_failure_whatever_its_outcome_attribute() -> None:
    """coverage-gate's own span says the read succeeded, but its status is ERROR: a failure."""
    _, exported = export((DATA / "pi-rpc" / "pi_a_honest.jsonl").read_bytes(), "pi-rpc")
    lines = []
    for raw in exported.splitlines():
        request = json.loads(raw)
        for resource in request["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for each in scope["spans"]:
                    values = [a["value"].get("stringValue") for a in each["attributes"]]
                    if "README.md" in values:
                        each["status"] = {"code": 2}
        lines.append(json.dumps(request))
    doc = record(otlp(*lines))
    assert reads(doc)["README.md"] == (0, 1)
    assert reads(doc)["docs/guide.md"] == (1, 0)


def test_round_trip_keeps_the_lines_each_read_showed_without_the_files_content() -> None:
    """Byte-ranged reads are told in lines with the content when recorded; the spans carry those
    lines, so reading them back gives the same depth with no content at hand."""
    total = len((REVISION_FILES / "src/api/handlers.py").read_bytes())

    def pi(kind: str, call_id: str, tool: str, **fields: Any) -> str:
        return json.dumps({"type": kind, "toolCallId": call_id, "toolName": tool, **fields})

    def text(header: str, path: str = "src/api/handlers.py") -> dict[str, Any]:
        """An honest ``cr_read`` result: the header, then those bytes of the file."""
        found = re.match(r"\[cr-range offset=(\d+) end=(\d+)", header)
        assert found is not None
        start, end = int(found.group(1)), int(found.group(2))
        body = (REVISION_FILES / path).read_bytes()[start:end].decode()
        return {"content": [{"type": "text", "text": header + "\n" + body}]}

    lines = [
        '{"type":"agent_start"}',
        pi(
            "tool_execution_start",
            "a",
            "cr_read",
            args={"path": "src/api/handlers.py", "offset": 0, "limit": 90},
        ),
        pi(
            "tool_execution_end",
            "a",
            "cr_read",
            isError=False,
            result=text(f"[cr-range offset=0 end=90 total={total} next_offset=90]"),
        ),
        pi("tool_execution_start", "b", "cr_diff", args={"offset": 0, "limit": 500}),
        pi(
            "tool_execution_end",
            "b",
            "cr_diff",
            isError=False,
            result=text(f"[cr-range offset=0 end=500 total={len(DIFF)} next_offset=500]"),
        ),
        '{"type":"agent_end","messages":[]}',
    ]
    data = ("\n".join(lines) + "\n").encode()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = RecordSettings(
        revision="rev1",
        repo_root=REPO_ROOT,
        diff=DiffIndex.parse(DIFF),
        content=lambda _root: revision_content(),
    )
    original = record_stream(io.BytesIO(data), ADAPTERS["pi-rpc"], settings, provider)
    exported = (otlp_json(encode_spans(exporter.get_finished_spans())) + "\n").encode()
    again = record_bytes(exported, FORMAT, diff=DIFF)
    handlers = again.file("src/api/handlers.py")
    assert handlers is not None
    assert handlers.lines_seen == [LineRange(start=1, end=4)]
    assert handlers.depth is not None
    assert handlers.depth.depth is Depth.NONE
    assert comparable(again) == comparable(original)


def test_round_trip_of_a_rejected_path_stays_no_evidence_but_is_relabelled() -> None:
    """The span keeps the rejection's detail but not the raw path: read back, the call is still
    no evidence and still labelled, as arguments_unavailable."""
    data = (DATA / "claude-code" / "claude_b_overclaim.jsonl").read_bytes()
    data = data.replace(b'"file_path":"src/api/models.py"', b'"file_path":"/etc/passwd"')
    original, exported = export(data, "claude-code")
    again = record_bytes(exported, FORMAT)
    assert again.files == original.files
    assert [i.kind for i in original.issues] == [IssueKind.PATH_REJECTED]
    assert [i.kind for i in again.issues] == [IssueKind.ARGUMENTS_UNAVAILABLE]
    assert again.issues[0].detail == original.issues[0].detail


# --- golden files ------------------------------------------------------------------------------

STREAMS = sorted((DATA / FORMAT).glob("*.jsonl"))


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.stem)
def test_golden_evidence(path: Path) -> None:
    doc = record(path.read_bytes())
    check_golden_evidence(GOLDEN / FORMAT / f"{path.stem}.evidence.json", doc)
