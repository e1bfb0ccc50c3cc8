"""Every span a run ends is exported: a record of 10,000 calls read back from its export gives the
evidence the record itself gave. An export cut short never reads back as complete."""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.contracts.spans import INVOKE_AGENT
from coverage_gate.telemetry.otel_sdk import SpanExport, otlp_json
from coverage_gate.telemetry.otel_setup import TELEMETRY_DIR_ENV, Telemetry

CALLS = 10_000
FILES = [f"src/pkg{i // 20}/mod{i}.py" for i in range(400)]


def pi_stream(calls: int, seed: int = 1) -> bytes:
    """A pi RPC stream of ``calls`` tool calls in the shapes of real captures (and of
    tests/_support/gen_pi_stream.py, which sizes its streams in megabytes, not calls): turns of one to three
    calls of cr_read, read and cr_diff, 5% failed, ranged cr_read results, a few calls that never
    end, and the agent_end completion marker."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = [{"type": "agent_start"}]
    made = 0
    while made < calls:
        lines.append({"type": "turn_start"})
        turn = []
        for _ in range(min(rng.randint(1, 3), calls - made)):
            made += 1
            call_id = f"toolu_{made:08d}"
            tool = rng.choice(["cr_read", "cr_read", "cr_diff", "read"])
            args = (
                {"offset": rng.randint(0, 10**6), "limit": 20000}
                if tool == "cr_diff"
                else {"path": rng.choice(FILES)}
            )
            turn.append((call_id, tool))
            lines.append(
                {
                    "type": "tool_execution_start",
                    "toolCallId": call_id,
                    "toolName": tool,
                    "args": args,
                }
            )
        for call_id, tool in turn:
            if rng.random() < 0.002:
                continue  # started, never ended
            size = rng.randint(5, 60)
            text = "z" * size
            if tool == "cr_read":
                text = f"[cr-range offset=0 end={size} total={size * 2} next_offset={size}]\n{text}"
            lines.append(
                {
                    "type": "tool_execution_end",
                    "toolCallId": call_id,
                    "toolName": tool,
                    "result": {"content": [{"type": "text", "text": text}], "details": {}},
                    "isError": rng.random() < 0.05,
                }
            )
        lines.append({"type": "turn_end", "message": {"role": "assistant", "content": []}})
    lines.append({"type": "agent_end", "messages": []})
    return b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)


def record(stream: Path, fmt: str, output: Path, env: dict[str, str]) -> dict[str, Any]:
    result = CliRunner().invoke(
        app,
        # the stream's folder as the root: no repository to resolve the revision's name in
        ["record", str(stream), "-f", fmt, "--revision", "abc", "--repo-root", str(stream.parent),
         "-o", str(output)],
        env=env,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Queue full" not in result.stderr
    document: dict[str, Any] = json.loads(output.read_text("utf-8"))
    return document


def evidence(document: dict[str, Any]) -> dict[str, Any]:
    """What must survive the round trip: the files, the counters (all but the stream's own line
    count), completeness, truncation and the call-level issues."""
    counters = {k: v for k, v in document["counters"].items() if k != "lines"}
    keep = ("files", "stream_complete", "truncated", "dropped_calls", "issues", "revision")
    return {"counters": counters, **{key: document[key] for key in keep}}


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stream") / "calls.jsonl"
    path.write_bytes(pi_stream(CALLS))
    return path


@pytest.fixture(scope="module")
def direct(stream: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The record itself, telemetry off."""
    out = tmp_path_factory.mktemp("direct") / "evidence.json"
    document = record(stream, "pi-rpc", out, {"OTEL_SDK_DISABLED": "true"})
    assert document["counters"]["calls"] == CALLS
    assert document["stream_complete"] is True
    return document


def test_local_sink_export_reads_back_to_the_same_evidence(
    stream: Path, direct: dict[str, Any], tmp_path: Path
) -> None:
    """10,000 calls recorded with the local OTLP JSON sink: the trace file, read back with
    `record -f otlp-json`, gives the same files and counters (the SDK's queue of 2,048 lost
    about half the calls here, and the read-back still said complete)."""
    folder = tmp_path / "telemetry"
    record(stream, "pi-rpc", tmp_path / "recorded.json", {TELEMETRY_DIR_ENV: str(folder)})
    (traces,) = folder.glob("traces-*.jsonl")
    back = record(traces, "otlp-json", tmp_path / "back.json", {"OTEL_SDK_DISABLED": "true"})
    assert evidence(back) == evidence(direct)


class _Receiver:
    """An OTLP/HTTP receiver on loopback that keeps each trace request as it came; ``write``
    turns them into OTLP JSON lines afterwards, as the Collector's file exporter would (not while
    answering: the receiver shares this process with the exporter)."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/traces":
                    receiver.bodies.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def write(self, path: Path) -> Path:
        lines = [otlp_json(ExportTraceServiceRequest.FromString(body)) for body in self.bodies]
        path.write_text("".join(line + "\n" for line in lines), "utf-8")
        return path


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    found = _Receiver()
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        found.server.shutdown()
        found.server.server_close()
        thread.join(timeout=5)


def test_otlp_http_export_reads_back_to_the_same_evidence(
    stream: Path, direct: dict[str, Any], tmp_path: Path, receiver: _Receiver
) -> None:
    """The same 10,000 calls sent over OTLP/HTTP to a real receiver, in requests of at most 512
    spans: read back, the evidence is the record's."""
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_METRICS_EXPORTER": "none"}
    record(stream, "pi-rpc", tmp_path / "recorded.json", env)
    assert len(receiver.bodies) == -(-(CALLS + 1) // 512)
    received = receiver.write(tmp_path / "received.jsonl")
    back = record(received, "otlp-json", tmp_path / "back.json", {"OTEL_SDK_DISABLED": "true"})
    assert evidence(back) == evidence(direct)


# --- the processor --------------------------------------------------------------------------------


class _Exporter(SpanExporter):
    """Accepts requests, failing the ones whose number is in ``fail``; sleeps ``delay_s`` each."""

    def __init__(self, fail: Sequence[int] = (), delay_s: float = 0.0) -> None:
        self.fail = set(fail)
        self.delay_s = delay_s
        self.requests: list[list[str]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        time.sleep(self.delay_s)
        self.requests.append([span.name for span in spans])
        if len(self.requests) in self.fail:
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def _emit(provider: TracerProvider, calls: int) -> None:
    """Like a record: the tool spans end first, the invoke_agent span last."""
    tracer = provider.get_tracer("test")
    agent = tracer.start_span(f"{INVOKE_AGENT} r")
    for n in range(calls):
        tracer.start_span(f"execute_tool {n}").end()
    agent.end()


def test_every_span_is_exported_in_order_in_bounded_requests() -> None:
    exporter = _Exporter()
    processor = SpanExport(exporter, chunk=512)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    _emit(provider, 5000)
    provider.shutdown()
    names = [name for request in exporter.requests for name in request]
    assert names == [f"execute_tool {n}" for n in range(5000)] + [f"{INVOKE_AGENT} r"]
    assert max(len(request) for request in exporter.requests) == 512
    assert (processor.exported, processor.not_exported) == (5001, 0)


def test_after_a_failed_request_the_rest_is_counted_not_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Request 2 fails: requests 3 on are not sent, so the invoke_agent span (last) never goes
    out without the calls before it, and the warning counts what was not exported."""
    exporter = _Exporter(fail=[2])
    processor = SpanExport(exporter, chunk=100)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    _emit(provider, 999)
    with caplog.at_level(logging.WARNING):
        provider.shutdown()
    assert len(exporter.requests) == 2
    assert (processor.exported, processor.not_exported) == (100, 900)
    assert "900 of 1000 span(s) not exported" in caplog.text


def test_exit_waits_while_the_export_makes_progress() -> None:
    """A collector that answers each request, slowly, gets every span even when the whole
    export takes longer than the exit budget: the budget bounds a wait with no progress."""
    exporter = _Exporter(delay_s=0.3)
    processor = SpanExport(exporter, chunk=100)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    _emit(provider, 999)
    telemetry = Telemetry(provider, _NoMeter(), span_export=processor)  # type: ignore[arg-type]
    assert telemetry.shutdown(budget_s=2.0) is True
    assert processor.exported == 1000


def test_exit_stops_waiting_on_an_export_with_no_progress(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A request that never completes holds the exit for the budget and no more, and the warning
    says how many spans were not exported."""
    release = threading.Event()

    class Stuck(_Exporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            release.wait(30)
            return SpanExportResult.FAILURE

    processor = SpanExport(Stuck(), chunk=100)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    _emit(provider, 99)
    telemetry = Telemetry(provider, _NoMeter(), span_export=processor)  # type: ignore[arg-type]
    try:
        with caplog.at_level(logging.WARNING):
            assert telemetry.shutdown(budget_s=0.3) is False
    finally:
        release.set()
    assert "100 of 100 span(s) not exported" in caplog.text


class _NoMeter:
    def shutdown(self) -> None:
        return None
