"""Spans encoded directly (no SDK span per call) are the spans the SDK exports, and the evidence
folded from them is the evidence folded from the SDK's, whatever telemetry is on.

``record`` on the local files encodes each call's span straight into OTLP JSON; an OTLP endpoint,
or an environment that sets something the SDK applies to spans (a sampler, span limits), gets SDK
spans. Both must write the same spans and the same evidence.
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common._internal import _encode_attributes
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    set_span_in_context,
)

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.evidence_doc import dump
from coverage_gate.record.recording import Recorder, RecordSettings, feed_all
from coverage_gate.rollout import metrics
from coverage_gate.rollout.simulation import two_decisions
from coverage_gate.telemetry import otel_setup, otlp_encode
from coverage_gate.telemetry._export import SpanLines
from coverage_gate.telemetry.otel_sdk import (
    DELTA,
    build_resource_from,
    metrics_line,
    otlp_json,
    span_line,
)
from tests.conftest import DATA, REPO_ROOT
from tests.record.test_record_unchanged import _canonical_spans
from tests.record.test_span_export import pi_stream

ROOT = Path(__file__).resolve().parents[2]
DECISIONS = two_decisions()
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()


def busy_stream() -> bytes:
    """Every kind of span content: 700 calls (two lines of the local files), failed and
    unfinished calls, ranged reads, a non-ASCII path, and 300 unreadable tool lines (more line
    issues than a span keeps as events)."""
    lines = pi_stream(700, seed=3).splitlines()
    extra = [
        b'{"type":"tool_execution_start","toolCallId":"u1","toolName":"read",'
        b'"args":{"path":"src/caf\xc3\xa9.py","offset":3,"limit":4}}',
        b'{"type":"tool_execution_end","toolCallId":"u1","toolName":"read",'
        b'"result":{"content":[{"type":"text","text":"x"}]},"isError":false}',
        *(
            b'{"type":"tool_execution_start","toolCallId":"m%d","toolName":"cr_read","args":{' % n
            for n in range(300)
        ),
    ]
    return b"\n".join([*lines[:-1], *extra, lines[-1]]) + b"\n"


def record(data: bytes, environ: dict[str, str]) -> tuple[str, int, Any]:
    """The evidence JSON, how many span lines were written, and the spans, as `record` makes
    them under ``environ``."""
    telemetry = otel_setup.setup(environ)
    provider, spans = telemetry.for_recording()
    settings = RecordSettings(revision="rev1", repo_root=REPO_ROOT, agent="security")
    recorder = Recorder(ADAPTERS["pi-rpc"], settings, provider, spans=spans)
    document = feed_all(io.BytesIO(data), recorder)
    assert telemetry.shutdown() is True
    folder = otel_setup.default_telemetry_dir(environ)
    found, _ = _canonical_spans(folder) if folder.exists() else ([], 0)
    lines = sum(len(p.read_text().splitlines()) for p in folder.glob("traces-*.jsonl"))
    return dump(document), lines, found


def test_direct_spans_and_evidence_are_the_sdks(tmp_path: Path) -> None:
    """The same stream recorded with spans encoded directly and with SDK spans (forced by an
    SDK span setting, given its default value): the same evidence, the same spans, span for
    span, in the same lines."""
    data = busy_stream()
    direct = record(data, {otel_setup.TELEMETRY_DIR_ENV: str(tmp_path / "direct")})
    sdk = record(
        data,
        {otel_setup.TELEMETRY_DIR_ENV: str(tmp_path / "sdk"), "OTEL_SPAN_EVENT_COUNT_LIMIT": "128"},
    )
    assert direct[1] == sdk[1] == 2  # 1,002 spans: 512 per line
    assert direct == sdk
    (agent,) = [s["span"] for s in direct[2] if s["span"]["name"] == "invoke_agent security"]
    assert len(agent["events"]) == 128
    assert agent["droppedEventsCount"] == 128  # 256 line issues sent, the last 128 kept


def test_evidence_does_not_depend_on_telemetry_being_on(tmp_path: Path) -> None:
    """With more line issues than a span keeps as events, the evidence with telemetry off is the
    evidence with it on (telemetry off used to keep 256 issues where on kept 128)."""
    data = busy_stream()
    on, _, spans = record(data, {otel_setup.TELEMETRY_DIR_ENV: str(tmp_path / "on")})
    off, _, none = record(
        data, {"OTEL_SDK_DISABLED": "true", otel_setup.TELEMETRY_DIR_ENV: str(tmp_path / "off")}
    )
    quiet, _, _ = record(
        data, {"OTEL_TRACES_EXPORTER": "none", otel_setup.TELEMETRY_DIR_ENV: str(tmp_path / "q")}
    )
    assert spans and not none
    assert on == off == quiet
    issues = json.loads(on)["issues"]
    assert sum(issue["kind"] == "malformed_line" for issue in issues) == 128


def test_a_provider_that_records_nothing_gives_the_same_evidence(tmp_path: Path) -> None:
    """An SDK provider whose sampler drops every span: the evidence is folded without spans."""
    data = busy_stream()
    on, _, _ = record(data, {otel_setup.TELEMETRY_DIR_ENV: str(tmp_path)})
    settings = RecordSettings(revision="rev1", repo_root=REPO_ROOT, agent="security")
    recorder = Recorder(ADAPTERS["pi-rpc"], settings, TracerProvider(sampler=ALWAYS_OFF))
    assert dump(feed_all(io.BytesIO(data), recorder)) == on


@pytest.mark.parametrize(
    ("environ", "direct", "sdk"),
    [
        ({}, True, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, False, True),
        ({"OTEL_TRACES_SAMPLER": "always_on"}, False, True),
        ({"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "64"}, False, True),
        ({"OTEL_TRACES_EXPORTER": "none"}, False, False),
        ({"OTEL_SDK_DISABLED": "true"}, False, False),
    ],
)
def test_where_a_recorders_spans_go(
    tmp_path: Path, environ: dict[str, str], direct: bool, sdk: bool
) -> None:
    """Encoded directly for the local files; SDK spans for an endpoint or settings the SDK
    applies to spans; none when traces are off."""
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(tmp_path), **environ})
    provider, spans = telemetry.for_recording()
    assert isinstance(spans, SpanLines) is direct
    assert isinstance(provider, TracerProvider) is sdk
    telemetry.shutdown(budget_s=0.5)


def test_recording_on_the_local_files_loads_no_opentelemetry(tmp_path: Path) -> None:
    """The direct path imports no OpenTelemetry package (the SDK and its encoders cost a
    tenth of a second at start-up), and still writes its spans."""
    code = f"""
import io, os, sys
from coverage_gate.telemetry import otel_setup
from coverage_gate.adapters import ADAPTERS
from coverage_gate.record.recording import Recorder, RecordSettings, feed_all
telemetry = otel_setup.setup({{"{otel_setup.TELEMETRY_DIR_ENV}": sys.argv[1]}})
provider, spans = telemetry.for_recording()
recorder = Recorder(ADAPTERS["pi-rpc"], RecordSettings("r", "/r"), provider, spans=spans)
feed_all(open(sys.argv[2], "rb"), recorder)
telemetry.shutdown()
print(sorted(name for name in sys.modules if name.startswith(("opentelemetry", "google"))))
"""
    stream = DATA / "pi-rpc" / "pi_a_honest.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(stream)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert done.stdout.strip() == "[]"
    assert list(tmp_path.glob("traces-*.jsonl"))


# --- the encoding, value by value, against protobuf's -------------------------------------------

VALUES: dict[str, object] = {
    "text": "a",
    "empty": "",
    "accented": "caf\u00e9 \u2026",
    "lone surrogate": "a\ud800b",
    "zero": 0,
    "negative": -(2**63),
    "largest": 2**63 - 1,
    "too large": 2**63,
    "too small": -(2**63) - 1,
    "true": True,
    "false": False,
    "double": 1.5,
    "whole double": 2.0,
    "nan": math.nan,
    "infinity": -math.inf,
    "strings": ["a", "b"],
    "empty list": [],
    "integers": (1, 2),
    "": "no key",
}


def test_attributes_encode_as_protobufs_json_mapping_does() -> None:
    """Each value as protobuf encodes it and its JSON mapping prints it; a value protobuf
    refuses (an integer past 64 bits, a lone surrogate) is left out, as the SDK's encoder
    leaves it out."""
    expected = [MessageToDict(pair) for pair in _encode_attributes(VALUES)]
    encoded = f"[{otlp_encode.key_values(VALUES)}]"
    assert json.loads(encoded) == expected
    assert encoded == json.dumps(expected, separators=(",", ":"))
    assert len(expected) == len(VALUES) - 3


def test_a_line_of_spans_is_the_sdk_encoders_line() -> None:
    """One request of two scopes, a root span with an event and an error child."""
    exporter = InMemorySpanExporter()
    resource = {"service.name": "coverage-gate", "team": "a b"}
    provider = TracerProvider(resource=build_resource_from(resource))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    root = provider.get_tracer("one").start_span("root", attributes={"n": 1})
    child = provider.get_tracer("two").start_span(
        "child", context=set_span_in_context(root), attributes={"s": "x", "b": False}
    )
    child.set_status(Status(StatusCode.ERROR))
    child.end()
    root.add_event("e", {"k": "v"})
    root.end()
    sdk_line = otlp_json(encode_spans(exporter.get_finished_spans()))

    def direct(span: Any, error: bool, events: list[Any]) -> Any:
        parent = span.parent.span_id if span.parent else None
        return otlp_encode.span(
            trace_id=span.context.trace_id,
            span_id=span.context.span_id,
            parent_id=parent,
            name=span.name,
            start_ns=span.start_time,
            end_ns=span.end_time,
            attributes=dict(span.attributes),
            events=events,
            error=error,
        )

    first, second = exporter.get_finished_spans()
    (event,) = second.events
    request = otlp_encode.trace_request(
        otlp_encode.resource(resource),
        [
            (otlp_encode.scope("two"), [direct(first, True, [])]),
            (
                otlp_encode.scope("one"),
                [direct(second, False, [otlp_encode.event("e", event.timestamp, {"k": "v"})])],
            ),
        ],
    )
    assert request == sdk_line


# --- the SDK's spans and metrics, written without protobuf ---------------------------------------


def sdk_spans() -> list[ReadableSpan]:
    """Spans of two resources and three scopes: every kind, a remote and a local parent, unset,
    ok and error statuses (with a message), events, list attributes, and attributes and events
    past the span limits (dropped and counted)."""
    exporter = InMemorySpanExporter()
    limits = SpanLimits(max_span_attributes=3, max_events=2, max_event_attributes=1)
    for name in ("coverage-gate", "other"):
        provider = TracerProvider(
            resource=build_resource_from({"service.name": name}), span_limits=limits
        )
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        remote = NonRecordingSpan(
            SpanContext(0x1234, 0x5678, is_remote=True, trace_flags=TraceFlags(1))
        )
        for scope, version in (("one", None), ("two", "1.2")):
            tracer = provider.get_tracer(scope, version)
            root = tracer.start_span(
                "root", context=set_span_in_context(remote), kind=SpanKind.SERVER
            )
            for kind in SpanKind:
                child = tracer.start_span(
                    f"child {kind.name} é",
                    context=set_span_in_context(root),
                    kind=kind,
                    attributes={"s": "x", "n": -1, "b": True, "l": ["a", "b"], "f": 0.5},
                )
                child.set_status(Status(StatusCode.ERROR, "it broke"))
                child.end()
            root.add_event("e1", {"k": "v", "dropped": 1})
            root.add_event("e2", {})
            root.add_event("e3", {"k": "v"})
            root.set_status(Status(StatusCode.OK))
            root.end()
    return list(exporter.get_finished_spans())


def test_sdk_spans_are_written_as_protobuf_writes_them() -> None:
    spans = sdk_spans()
    assert span_line(spans) == otlp_json(encode_spans(spans))


def test_spans_with_links_are_left_to_protobuf() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    link = Link(SpanContext(1, 2, is_remote=False))
    provider.get_tracer("t").start_span("linked", links=[link]).end()
    assert span_line(exporter.get_finished_spans()) is None


def test_sdk_metrics_are_written_as_protobuf_writes_them() -> None:
    """Every instrument a decision records (counters and the duration histogram, as deltas),
    and a float counter, an up-down counter and a gauge."""
    reader = InMemoryMetricReader(preferred_temporality=DELTA)
    provider = MeterProvider(
        metric_readers=[reader], resource=build_resource_from({"service.name": "coverage-gate"})
    )
    meter = provider.get_meter("coverage_gate", "9.9")
    for decision in DECISIONS:
        metrics.record_decision(meter, decision, duration_s=0.0123)
    metrics.record_error(meter, repo="acme/api", kind=metrics.ErrorKind.BAD_INPUT)
    meter.create_counter("floats").add(0.25, {"a": "b"})
    meter.create_up_down_counter("updown").add(-3)
    meter.create_gauge("gauge").set(1.5, {"l": [1, 2]})
    data = reader.get_metrics_data()
    assert data is not None
    assert metrics_line(data) == otlp_json(encode_metrics(data))
