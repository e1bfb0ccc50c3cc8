"""OTLP export to an endpoint: the protocol and timeout the standard variables name, and one line
on stderr (never the SDK's retry lines) when the export fails.

Each case runs the real CLI in a subprocess against an in-test HTTP server (or a port nothing
listens on), as a pipeline runs it.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from coverage_gate.telemetry import otel_setup
from coverage_gate.telemetry._export import OtlpProtocol
from coverage_gate.telemetry.otel_sdk import HttpSpanExporter
from coverage_gate.telemetry.otel_setup import (
    SHUTDOWN_BUDGET_S,
    export_timeout,
    otlp_protocol,
)

EXAMPLE = Path(otel_setup.__file__).parents[1] / "examples" / "honest.pi-rpc.jsonl"
SPANS = 9  # the example's 8 tool calls and its invoke_agent span


@dataclass
class Received:
    requests: list[tuple[str, str, bytes]] = field(default_factory=list)  # path, type, body


@pytest.fixture
def collector() -> Iterator[tuple[str, Received, list[int]]]:
    """An OTLP/HTTP endpoint that keeps every request; ``status[0]`` is what it answers."""
    received = Received()
    status = [200]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.requests.append((self.path, self.headers.get("Content-Type", ""), body))
            self.send_response(status[0])
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received, status
    finally:
        server.shutdown()
        server.server_close()


def _dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _record(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OTEL_", "COVERAGE_GATE_"))
    }
    environ.update({"COVERAGE_GATE_TELEMETRY_DIR": str(tmp_path / "telemetry"), **env})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "coverage_gate",
            "record",
            str(EXAMPLE),
            "--revision",
            "HEAD",
            "--repo-root",
            "/home/user/repo",
            "-o",
            str(tmp_path / "evidence.json"),
        ],
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
        check=False,
    )


def _telemetry_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "telemetry" in line.lower()]


def _hex_to_b64(node: object) -> object:
    if isinstance(node, dict):
        return {
            key: base64.b64encode(bytes.fromhex(value)).decode()
            if key in {"traceId", "spanId", "parentSpanId"} and isinstance(value, str)
            else _hex_to_b64(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_to_b64(item) for item in node]
    return node


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json"])
def test_a_dead_collector_costs_one_line_naming_the_reason_and_the_lost_spans(
    tmp_path: Path, protocol: str
) -> None:
    """No SDK retry or 'Failed to export' lines: one warning, with where, why and how many."""
    result = _record(
        tmp_path,
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{_dead_port()}",
        OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
    )
    assert result.returncode == 0, result.stderr
    assert "Transient error" not in result.stderr and "Failed to export" not in result.stderr
    assert "Traceback" not in result.stderr
    (line,) = _telemetry_lines(result.stderr)
    assert line.startswith("coverage-gate: warning: telemetry not exported")
    assert "connection refused" in line and f"{SPANS} of {SPANS} span(s) not exported" in line
    assert json.loads((tmp_path / "evidence.json").read_text())["counters"]["calls"] == 8


def test_http_json_sends_otlp_json_a_collector_can_parse(
    tmp_path: Path, collector: tuple[str, Received, list[int]]
) -> None:
    """http/json: application/json bodies on /v1/traces and /v1/metrics, each a valid OTLP
    export request once the hex ids are read back (OTLP/JSON's id encoding); every span there."""
    url, received, _ = collector
    result = _record(
        tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_EXPORTER_OTLP_PROTOCOL="http/json"
    )
    assert result.returncode == 0, result.stderr
    assert _telemetry_lines(result.stderr) == []
    # `record` measures with spans only; a metrics request, when one is made, is checked too
    assert "/v1/traces" in [path for path, _, _ in received.requests]
    assert {kind for _, kind, _ in received.requests} == {"application/json"}
    for path, _, body in received.requests:
        document = _hex_to_b64(json.loads(body))
        if path == "/v1/traces":
            traces = ParseDict(document, ExportTraceServiceRequest())
            names = [
                span.name
                for resource in traces.resource_spans
                for scope in resource.scope_spans
                for span in scope.spans
            ]
            assert len(names) == SPANS and names[-1].startswith("invoke_agent")
        else:
            metrics = ParseDict(document, ExportMetricsServiceRequest())
            assert metrics.resource_metrics


def test_a_refusing_collector_is_named_by_its_status(
    tmp_path: Path, collector: tuple[str, Received, list[int]]
) -> None:
    url, _, status = collector
    status[0] = 401
    result = _record(
        tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_EXPORTER_OTLP_PROTOCOL="http/json"
    )
    (line,) = _telemetry_lines(result.stderr)
    assert "HTTP 401" in line and f"{SPANS} of {SPANS} span(s) not exported" in line


def test_grpc_is_said_once_and_nothing_is_lost(tmp_path: Path) -> None:
    """A protocol this project does not speak: the local files get the telemetry, one line says
    so for both signals."""
    result = _record(
        tmp_path,
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{_dead_port()}",
        OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
    )
    assert result.returncode == 0, result.stderr
    (line,) = _telemetry_lines(result.stderr)
    assert "'grpc' is not supported" in line and str(tmp_path / "telemetry") in line
    traces = list((tmp_path / "telemetry").glob("traces-*.jsonl"))
    assert len(traces) == 1 and traces[0].read_text().count('"spanId"') == SPANS


def test_the_protocol_is_read_per_signal_then_shared() -> None:
    assert otlp_protocol({}, "traces") is OtlpProtocol.PROTOBUF
    assert (
        otlp_protocol({"OTEL_EXPORTER_OTLP_PROTOCOL": "HTTP/JSON"}, "traces") is OtlpProtocol.JSON
    )
    env = {
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf",
    }
    assert otlp_protocol(env, "metrics") is OtlpProtocol.PROTOBUF
    assert otlp_protocol(env, "traces") is OtlpProtocol.JSON
    assert otlp_protocol({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "traces") == "grpc"


def test_the_timeout_is_milliseconds_within_the_exit_budget() -> None:
    said: list[str] = []
    assert export_timeout({}, "traces", 1.0, said.append) == 1.0
    assert export_timeout({"OTEL_EXPORTER_OTLP_TIMEOUT": "200"}, "traces", 1.0) == 0.2
    specific = {"OTEL_EXPORTER_OTLP_TIMEOUT": "200", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "500"}
    assert export_timeout(specific, "traces", 1.0) == 0.5
    assert export_timeout(specific, "metrics", 1.0) == 0.2
    # the specification's default (10 s) would outlast the exit budget: capped
    assert export_timeout({"OTEL_EXPORTER_OTLP_TIMEOUT": "10000"}, "traces", 1.0) == (
        SHUTDOWN_BUDGET_S
    )
    for bad in ("abc", "0", "-5", "inf", "nan"):
        assert (
            export_timeout({"OTEL_EXPORTER_OTLP_TIMEOUT": bad}, "traces", 1.0, said.append) == 1.0
        )
    assert len(said) == 5 and "OTEL_EXPORTER_OTLP_TIMEOUT='abc'" in said[0]


def test_the_timeout_reaches_both_exporters() -> None:
    for protocol in ("http/protobuf", "http/json"):
        telemetry = otel_setup.setup(
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
                "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
                "OTEL_EXPORTER_OTLP_TIMEOUT": "300",
            }
        )
        try:
            assert telemetry.tracer_provider is not None  # built when first asked for
            assert telemetry.span_export is not None
            exporter = telemetry.span_export._exporter
            assert isinstance(exporter, HttpSpanExporter)
            assert (exporter.poster.protocol, exporter.poster.timeout_s) == (protocol, 0.3)
        finally:
            telemetry.shutdown(budget_s=0.5)
