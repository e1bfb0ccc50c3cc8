"""Telemetry export: where each signal goes, the local OTLP JSON lines files, the OTLP/HTTP wire
format (received by an in-test collector), and the bounded exit with a dead or hanging one."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry import metrics as metrics_api
from opentelemetry import trace as trace_api
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.contracts import review_span as span_names
from coverage_gate.contracts.model import Capability
from coverage_gate.rollout import metrics as m
from coverage_gate.rollout.metrics import INSTRUMENTS
from coverage_gate.rollout.simulation import REAL_CITATION, ReviewerSpec, decide
from coverage_gate.telemetry import otel_sdk, otel_setup
from coverage_gate.telemetry._export import JsonLinesFile
from coverage_gate.telemetry.otel_setup import Telemetry
from tests.conftest import lying_reconcile_args

SCOPE = ["src/api.py", "src/db.py"]
DECISION = decide(
    "acme/api",
    scope=SCOPE,
    reviewers=[
        # it cites a line that is there, so that every instrument records a point
        ReviewerSpec("security", claimed=SCOPE, read=SCOPE[:1], citations=[REAL_CITATION]),
        ReviewerSpec("style", claimed=SCOPE, read=(), capability=Capability.NONE),
    ],
)
ROOT = Path(__file__).resolve().parents[2]
FILE_NAME = re.compile(r"(traces|metrics)-\d{8}T\d{6}Z-\d+-[0-9a-f]{8}\.jsonl")
# Slack over the 2.5 s budget for thread scheduling on a loaded CI machine.
EXIT_LIMIT_S = 3.0


def _record_one(telemetry: Telemetry) -> None:
    m.record_decision(telemetry.meter(), DECISION, duration_s=0.01)
    m.record_reconcile_span(telemetry.tracer(), DECISION, duration_s=0.01)
    m.record_error(telemetry.meter(), repo="acme/api", kind=m.ErrorKind.INTERNAL)


# --- choosing sinks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "traces", "metrics"),
    [
        ({}, None, None),
        (
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
            "http://c:4318/v1/traces",
            "http://c:4318/v1/metrics",
        ),
        (
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"},
            "http://c:4318/v1/traces",
            "http://c:4318/v1/metrics",
        ),
        (
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:1/x",
            },
            "http://t:1/x",
            "http://c:4318/v1/metrics",
        ),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://mm:9/m"}, None, "http://mm:9/m"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, None, None),
    ],
)
def test_otlp_endpoint_per_signal(
    environ: dict[str, str], traces: str | None, metrics: str | None
) -> None:
    """Signal-specific endpoints are used as given; the general one gains /v1/<signal>."""
    assert otel_setup.otlp_endpoint(environ, "traces") == traces
    assert otel_setup.otlp_endpoint(environ, "metrics") == metrics


def test_sdk_disabled_gives_no_op_providers_and_writes_nothing(tmp_path: Path) -> None:
    """OTEL_SDK_DISABLED=true is honoured even with an endpoint configured."""
    telemetry = otel_setup.setup(
        {
            "OTEL_SDK_DISABLED": "TRUE",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
            otel_setup.TELEMETRY_DIR_ENV: str(tmp_path),
        }
    )
    assert isinstance(telemetry.tracer_provider, trace_api.NoOpTracerProvider)
    assert isinstance(telemetry.meter_provider, metrics_api.NoOpMeterProvider)
    _record_one(telemetry)
    assert telemetry.shutdown() is True
    assert list(tmp_path.iterdir()) == []


def test_exporter_none_disables_only_that_signal(tmp_path: Path) -> None:
    telemetry = otel_setup.setup(
        {"OTEL_TRACES_EXPORTER": "none", otel_setup.TELEMETRY_DIR_ENV: str(tmp_path)}
    )
    _record_one(telemetry)
    telemetry.shutdown()
    assert telemetry.sinks == {"traces": "disabled", "metrics": f"files {tmp_path}"}
    assert [p.name.split("-")[0] for p in tmp_path.iterdir()] == ["metrics"]


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"COVERAGE_GATE_TELEMETRY_DIR": "/x/t"}, Path("/x/t")),
        ({"XDG_STATE_HOME": "/s", "HOME": "/h"}, Path("/s/coverage-gate/telemetry")),
        ({"HOME": "/h"}, Path("/h/.local/state/coverage-gate/telemetry")),
    ],
)
def test_default_telemetry_dir(environ: dict[str, str], expected: Path) -> None:
    """The folder comes from the environment handed in, never from the process's own."""
    assert otel_setup.default_telemetry_dir(environ) == expected


def test_resource_names_the_service_without_a_per_run_instance_id() -> None:
    """Runs must add to the same series: no service.instance.id unless the operator sets one."""
    resource = otel_sdk.build_resource(
        {"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci,team=a%20b"}
    )
    attributes = dict(resource.attributes)
    assert attributes["service.name"] == "coverage-gate"
    assert attributes["deployment.environment"] == "ci"
    assert attributes["team"] == "a b"
    assert "service.instance.id" not in attributes


# --- the local files --------------------------------------------------------------------------


def test_files_sink_writes_one_otlp_json_request_per_line(tmp_path: Path) -> None:
    """One file per signal per run, uniquely named; each line an OTLP JSON export request with
    hex ids, integer enums and delta temporality."""
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(tmp_path)})
    _record_one(telemetry)
    assert telemetry.shutdown() is True

    files = sorted(tmp_path.iterdir())
    assert [FILE_NAME.fullmatch(p.name) is not None for p in files] == [True, True]
    metrics_file, traces_file = files
    (trace_line,) = traces_file.read_text().splitlines()
    (metric_line,) = metrics_file.read_text().splitlines()

    span = json.loads(trace_line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert span["name"] == "reconcile acme/api"
    assert re.fullmatch(r"[0-9a-f]{32}", span["traceId"])
    assert re.fullmatch(r"[0-9a-f]{16}", span["spanId"])
    assert span["kind"] == 1
    assert isinstance(span["startTimeUnixNano"], str)

    scope = json.loads(metric_line)["resourceMetrics"][0]["scopeMetrics"][0]
    by_name = {metric["name"]: metric for metric in scope["metrics"]}
    # no fallback answered and no stream drifted: those two counters record nothing
    assert set(by_name) == {s.name for s in INSTRUMENTS} - {
        "coverage_gate.mode.fallbacks",
        "coverage_gate.drift",
    }
    assert by_name["coverage_gate.reviews"]["sum"]["aggregationTemporality"] == 1
    assert by_name["coverage_gate.reviews"]["sum"]["isMonotonic"] is True
    assert by_name["coverage_gate.reconcile.duration"]["histogram"]["aggregationTemporality"] == 1


def test_a_run_that_records_nothing_leaves_no_files(tmp_path: Path) -> None:
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(tmp_path / "t")})
    assert telemetry.shutdown() is True
    assert not (tmp_path / "t").exists() or list((tmp_path / "t").iterdir()) == []


def test_lines_from_many_threads_never_interleave(tmp_path: Path) -> None:
    """Each line is written whole: 8 threads x 200 lines of 20 kB all parse."""
    sink = JsonLinesFile(tmp_path, "traces")
    payload = "x" * 20_000

    def write(n: int) -> None:
        for i in range(200):
            sink.write_line(json.dumps({"thread": n, "i": i, "pad": payload}))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sink.close()
    lines = (tmp_path / sink.path.name if sink.path else tmp_path).read_text().splitlines()
    assert len(lines) == 1600
    assert {(d["thread"], d["i"]) for d in map(json.loads, lines)} == {
        (n, i) for n in range(8) for i in range(200)
    }


CHILD = """
import os, sys
from coverage_gate.rollout import metrics
from coverage_gate.telemetry import otel_setup
from coverage_gate.rollout.simulation import ReviewerSpec, decide
scope = ["src/api.py", "src/db.py"]
DECISION = decide("acme/api", scope=scope, reviewers=[ReviewerSpec("a", claimed=scope, read=[])])
for _ in range(int(sys.argv[1])):
    t = otel_setup.setup(os.environ)
    metrics.record_decision(t.meter(), DECISION, duration_s=0.01)
    metrics.record_reconcile_span(t.tracer(), DECISION, duration_s=0.01)
    t.shutdown()
"""


def test_concurrent_runs_write_separate_whole_files(tmp_path: Path) -> None:
    """Six processes writing at once into one folder: every file its own, every line whole."""
    env = {otel_setup.TELEMETRY_DIR_ENV: str(tmp_path), "PATH": "/usr/bin:/bin"}
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD, "5"], env=env, cwd=ROOT) for _ in range(6)
    ]
    assert [child.wait(timeout=120) for child in children] == [0] * 6
    files = list(tmp_path.iterdir())
    assert len(files) == 6 * 5 * 2
    for path in files:
        assert FILE_NAME.fullmatch(path.name)
        for line in path.read_text().splitlines():
            assert set(json.loads(line)) <= {"resourceSpans", "resourceMetrics"}


def test_unwritable_folder_fails_the_export_not_the_run(tmp_path: Path) -> None:
    """A telemetry folder that cannot be created loses the telemetry and nothing else."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(blocker / "telemetry")})
    _record_one(telemetry)
    telemetry.shutdown()  # no exception is the assertion; the files cannot exist
    assert blocker.read_text() == ""


# --- the wire: OTLP/HTTP protobuf to an in-test collector -------------------------------------


@dataclass
class Received:
    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)

    def bodies(self, path: str) -> list[bytes]:
        return [body for p, _, body in self.requests if p == path]


@pytest.fixture
def collector() -> Iterator[tuple[str, Received]]:
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            received.requests.append((self.path, headers, body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_otlp_http_export_decodes_to_the_expected_spans_and_metrics(
    collector: tuple[str, Received],
) -> None:
    """Protobuf over HTTP to /v1/traces and /v1/metrics, with the configured headers; the
    reconcile span and every recorded instrument arrive, counters and histograms as deltas."""
    url, received = collector
    telemetry = otel_setup.setup(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": url, "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=acme"}
    )
    _record_one(telemetry)
    assert telemetry.shutdown() is True

    for path, headers, _ in received.requests:
        assert path in {"/v1/traces", "/v1/metrics"}
        assert headers["content-type"] == "application/x-protobuf"
        assert headers["x-tenant"] == "acme"

    (trace_body,) = received.bodies("/v1/traces")
    traces = ExportTraceServiceRequest.FromString(trace_body)
    resource_spans = traces.resource_spans[0]
    resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
    assert resource["service.name"] == "coverage-gate"
    (span,) = resource_spans.scope_spans[0].spans
    assert span.name == "reconcile acme/api"
    attributes = {a.key: a.value for a in span.attributes}
    assert attributes[span_names.A_OUTCOME].string_value == "would_downgrade"
    assert [
        v.string_value for v in attributes[span_names.A_UNSUPPORTED_PATHS].array_value.values
    ] == ["src/db.py"]
    assert len(span.events) == 2

    (metric_body,) = received.bodies("/v1/metrics")
    request = ExportMetricsServiceRequest.FromString(metric_body)
    by_name = {x.name: x for x in request.resource_metrics[0].scope_metrics[0].metrics}
    # no fallback answered and no stream drifted: those two counters record nothing
    assert set(by_name) == {s.name for s in INSTRUMENTS} - {
        "coverage_gate.mode.fallbacks",
        "coverage_gate.drift",
    }
    delta = AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA
    reviews = by_name["coverage_gate.reviews"]
    assert reviews.unit == "{review}"
    assert reviews.sum.aggregation_temporality == delta
    assert reviews.sum.is_monotonic
    (point,) = reviews.sum.data_points
    labels = {a.key: a.value.string_value for a in point.attributes}
    assert labels == {
        "owner": "acme",
        "repository": "acme/api",
        "mode": "shadow",
        "mode_source": "snapshot",
        "outcome": "would_downgrade",
        "evidence_available": "false",  # the style reviewer's format cannot see reads
    }
    assert point.as_int == 1
    assert by_name["coverage_gate.reconcile.duration"].histogram.aggregation_temporality == delta


# --- bounded exit -----------------------------------------------------------------------------


@pytest.fixture
def dead_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def hanging_port() -> Iterator[int]:
    """A collector that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield sock.getsockname()[1]


@pytest.mark.parametrize("port_fixture", ["dead_port", "hanging_port"])
def test_shutdown_with_an_unreachable_collector_is_bounded(
    port_fixture: str, request: pytest.FixtureRequest
) -> None:
    """A dead or hanging collector costs at most the budget, and never an exception."""
    port = request.getfixturevalue(port_fixture)
    telemetry = otel_setup.setup({"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"})
    _record_one(telemetry)
    started = time.monotonic()
    telemetry.shutdown(budget_s=2.5)
    assert time.monotonic() - started < EXIT_LIMIT_S


EXIT_CHILD = """
import os, sys, time
from coverage_gate.rollout import metrics
from coverage_gate.telemetry import otel_setup
from coverage_gate.rollout.simulation import ReviewerSpec, decide
scope = ["src/api.py", "src/db.py"]
DECISION = decide("acme/api", scope=scope, reviewers=[ReviewerSpec("a", claimed=scope, read=[])])
t = otel_setup.setup(os.environ)
metrics.record_decision(t.meter(), DECISION, duration_s=0.01)
metrics.record_reconcile_span(t.tracer(), DECISION, duration_s=0.01)
print(time.time(), flush=True)
t.shutdown()
"""


def exit_seconds(endpoint: str | None, budget_env: dict[str, str] | None = None) -> float:
    """Seconds from the start of ``shutdown`` to the child process being gone."""
    env = {"PATH": "/usr/bin:/bin", **(budget_env or {})}
    if endpoint:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    child = subprocess.Popen(
        [sys.executable, "-c", EXIT_CHILD], env=env, stdout=subprocess.PIPE, cwd=ROOT
    )
    assert child.stdout is not None
    started = float(child.stdout.readline())
    child.wait(timeout=60)
    gone = time.time()
    child.stdout.close()
    assert child.returncode == 0
    return gone - started


@pytest.mark.slow
@pytest.mark.parametrize("port_fixture", ["dead_port", "hanging_port"])
def test_process_exits_within_budget_with_an_unreachable_collector(
    port_fixture: str, request: pytest.FixtureRequest
) -> None:
    """No exit hook or non-daemon thread keeps the interpreter waiting on the collector: from
    the call to ``shutdown`` to the process being gone stays within the budget."""
    port = request.getfixturevalue(port_fixture)
    assert exit_seconds(f"http://127.0.0.1:{port}") < EXIT_LIMIT_S


class _Raises:
    def shutdown(self) -> None:
        raise RuntimeError("exporter exploded")


class _Hangs:
    def shutdown(self) -> None:
        time.sleep(30)


def test_shutdown_never_raises_and_reports_failure() -> None:
    """The telemetry boundary swallows any exception from a provider (and says so)."""
    telemetry = Telemetry(_Raises(), _Raises())  # type: ignore[arg-type]
    assert telemetry.shutdown() is False


def test_shutdown_does_not_wait_past_the_budget_for_a_stuck_provider() -> None:
    telemetry = Telemetry(_Hangs(), _Hangs())  # type: ignore[arg-type]
    started = time.monotonic()
    assert telemetry.shutdown(budget_s=0.3) is False
    assert time.monotonic() - started < 1.0


def test_shutdown_twice_is_harmless(tmp_path: Path) -> None:
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(tmp_path)})
    assert telemetry.shutdown() is True
    assert telemetry.shutdown() is True


# --- the CLI's export -------------------------------------------------------------------------


def test_cli_reconcile_exports_its_decision_over_otlp_http(
    tmp_path: Path, collector: tuple[str, Received]
) -> None:
    """The reconcile command's own export: the receiver decodes the reconcile span and the
    review counted under the decision's outcome."""
    url, received = collector
    result = CliRunner().invoke(
        app,
        lying_reconcile_args(tmp_path, "--format", "json"),
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": url},
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["would_downgrade"] is True

    spans = [
        span
        for body in received.bodies("/v1/traces")
        for rs in ExportTraceServiceRequest.FromString(body).resource_spans
        for ss in rs.scope_spans
        for span in ss.spans
        if span.name.startswith("reconcile ")
    ]
    assert [s.name for s in spans] == ["reconcile acme/api"]
    reviews = [
        point
        for body in received.bodies("/v1/metrics")
        for rm in ExportMetricsServiceRequest.FromString(body).resource_metrics
        for sm in rm.scope_metrics
        for metric in sm.metrics
        if metric.name == "coverage_gate.reviews"
        for point in metric.sum.data_points
    ]
    (point,) = reviews
    assert {a.key: a.value.string_value for a in point.attributes}["outcome"] == "would_downgrade"


def test_cli_decision_and_exit_code_do_not_depend_on_the_collector(
    tmp_path: Path, hanging_port: int
) -> None:
    """A hanging collector changes neither the decision printed nor the exit code."""
    args = lying_reconcile_args(tmp_path, "--format", "json")
    quiet = CliRunner().invoke(app, args, env={"OTEL_SDK_DISABLED": "true"})
    hanging = CliRunner().invoke(
        app, args, env={"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{hanging_port}"}
    )
    assert (hanging.exit_code, quiet.exit_code) == (0, 0)
    assert json.loads(hanging.stdout) == json.loads(quiet.stdout)
