"""Live: `coverage-gate report --prometheus` and the report of the local telemetry folder agree,
repository by repository, on the same decisions made by the CLI.

The decisions: real `coverage-gate reconcile` processes (the bundled example's honest and lying
reviewers, in several repositories, modes and mode sources; a reviewer on another client whose
reads were checked against the revision's content, one of them a mismatch and one file credited
by content; one run that fails) export OTLP/HTTP
to a stand-in for the Collector of `dashboards/otelcol.yaml`, which does what that pipeline
does: it writes every request as an OTLP JSON line in a folder (the `file` exporter, what the
local report reads), sums the runs' deltas into cumulative series (`deltatocumulative`) and
exposes them for Prometheus to scrape (the `prometheus` exporter), translated to Prometheus
names by the OpenTelemetry SDK's Prometheus reader, not by this project. A real Prometheus
(Debian's; see test_prometheus.py for why not remote write) scrapes it every second.

Without prometheus (``.ci/setup-prometheus.sh``) or the Prometheus reader package the test skips,
or fails under CG_REQUIRE_INTEGRATION=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.sdk.metrics import MeterProvider

from coverage_gate.telemetry.otel_sdk import otlp_json
from tests.integration.test_prometheus import (
    Prometheus,
    _binaries,
    _free_port,
    _missing,
    running_prometheus,
)

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "coverage_gate" / "examples"
REVISION = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
REPO_ROOT = "/home/user/repo"
CLI = [sys.executable, "-m", "coverage_gate"]
#: Criteria every report of this test uses: small enough that one repository is ready.
CRITERIA = ["--min-approvals", "5", "--min-days", "0", "--max-would-downgrade-rate", "0.5",
            "--max-error-rate", "0.8"]  # fmt: skip


# --- the Collector stand-in ---------------------------------------------------------------------


def _attributes(pairs: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    for pair in pairs:
        assert isinstance(pair, KeyValue)
        found[pair.key] = pair.value.string_value
    return found


class Collector:
    """OTLP/HTTP in; OTLP JSON lines in ``folder`` and a Prometheus exposition out."""

    def __init__(self, folder: Path) -> None:
        try:
            from opentelemetry.exporter.prometheus import (  # noqa: PLC0415 - optional test package
                PrometheusMetricReader,
            )
            from prometheus_client import (  # noqa: PLC0415 - comes with the reader
                CollectorRegistry,
                generate_latest,
            )
        except ImportError:
            _missing("opentelemetry-exporter-prometheus is not installed")
            raise  # unreachable: _missing skips or fails
        self.folder = folder
        self.registry = CollectorRegistry()
        self.provider = MeterProvider(
            metric_readers=[PrometheusMetricReader(registry=self.registry)],
            shutdown_on_exit=False,
        )
        self.meter = self.provider.get_meter("coverage_gate")
        self.instruments: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.exposition = generate_latest
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/metrics":
                    metrics = ExportMetricsServiceRequest.FromString(body)
                    collector.take_metrics(metrics)
                    reply = ExportMetricsServiceResponse().SerializeToString()
                elif self.path == "/v1/traces":
                    traces = ExportTraceServiceRequest.FromString(body)
                    collector.write("traces", otlp_json(traces))
                    reply = ExportTraceServiceResponse().SerializeToString()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def do_GET(self) -> None:
                exposed = collector.exposition(collector.registry)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(exposed)))
                self.end_headers()
                self.wfile.write(exposed)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port: int = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def write(self, signal_name: str, line: str) -> None:
        with self.lock, (self.folder / f"{signal_name}.jsonl").open("a", encoding="utf-8") as out:
            out.write(line + "\n")

    def take_metrics(self, request: ExportMetricsServiceRequest) -> None:
        """The file exporter's line, then each delta point added to a cumulative instrument."""
        self.write("metrics", otlp_json(request))
        for resource in request.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    kind = metric.WhichOneof("data")
                    if kind == "sum":
                        counter = self._instrument(metric, "counter", ())
                        for point in metric.sum.data_points:
                            value = getattr(point, point.WhichOneof("value") or "as_int")
                            counter.add(value, _attributes(point.attributes))
                    elif kind == "histogram":
                        for point in metric.histogram.data_points:
                            bounds = tuple(point.explicit_bounds)
                            histogram = self._instrument(metric, "histogram", bounds)
                            attributes = _attributes(point.attributes)
                            # Each bucket's count, recorded at its upper bound (the last one
                            # past the others): the bucket counts survive, the sum does not.
                            for index, count in enumerate(point.bucket_counts):
                                value = bounds[index] if index < len(bounds) else bounds[-1] * 2
                                for _ in range(count):
                                    histogram.record(value, attributes)

    def _instrument(self, metric: Any, kind: str, bounds: tuple[float, ...]) -> Any:
        if metric.name not in self.instruments:
            if kind == "counter":
                made = self.meter.create_counter(
                    metric.name, unit=metric.unit, description=metric.description
                )
            else:
                made = self.meter.create_histogram(
                    metric.name,
                    unit=metric.unit,
                    description=metric.description,
                    explicit_bucket_boundaries_advisory=list(bounds),
                )
            self.instruments[metric.name] = made
        return self.instruments[metric.name]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        self.provider.shutdown()


# --- the rig --------------------------------------------------------------------------------------


@dataclass
class Rig:
    work: Path
    collector: Collector
    prometheus: Prometheus

    def env(self, **extra: str) -> dict[str, str]:
        keep = {
            k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "COVERAGE_GATE_"))
        }
        keep = {k: v for k, v in keep.items() if not k.startswith("UNLEASH_")}
        return {**keep, "HOME": str(self.work / "home"), **extra}

    def cli(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CLI, *args],
            cwd=self.work,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    binary, _ = _binaries()
    (tmp_path / "telemetry").mkdir()
    (tmp_path / "home").mkdir()
    collector = Collector(tmp_path / "telemetry")
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n"
        "  scrape_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: otelcol\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{collector.port}']}}]\n"
    )
    try:
        with running_prometheus(binary, config, tmp_path) as prometheus:
            yield Rig(tmp_path, collector, prometheus)
    finally:
        collector.close()


# --- the decisions ------------------------------------------------------------------------------

#: (repository, reviewer, verdict, how the mode is chosen): each one `coverage-gate reconcile`.
RUNS: list[tuple[str, str, str, list[str]]] = [
    *[("acme/ready", "honest", "approve", ["--mode", "shadow"])] * 3,
    *[("acme/ready", "honest", "approve", ["--flags", "flags.snapshot.json"])] * 2,
    ("acme/ready", "honest", "comment", ["--mode", "shadow"]),
    ("acme/liar", "honest", "approve", ["--mode", "shadow"]),
    ("acme/liar", "lying", "approve", ["--mode", "shadow"]),
    ("acme/liar", "lying", "approve", ["--mode", "enforce"]),
    ("acme/blind", "no-evidence", "approve", ["--mode", "shadow"]),
    ("acme/fallback", "honest", "approve", []),
    ("acme/errors", "honest", "approve", ["--mode", "shadow"]),
    ("acme/errors", "missing-evidence", "approve", ["--mode", "shadow"]),
    *[("acme/edited", "edited", "approve", ["--mode", "shadow"])] * 2,
]


def write_edited_evidence(work: Path) -> None:
    """``edited.evidence.json``: the honest reviewer's evidence as a Claude Code stream that
    carries what each read returned, checked against the revision: README.md's only read
    returned the reviewer's own edit (a mismatch: no evidence), docs/guide.md and
    tests/test_handlers.py were never read but their lines came back in another call's output
    (credited by content), the other three reads were the files."""
    document = json.loads((work / "honest.evidence.json").read_text())
    document["source"] = "claude-code"
    for entry in document["files"]:
        if entry["path"] == "README.md":
            entry.update(reads_succeeded=0, diff_pages_succeeded=0, lines_seen=[], depth=None)
            entry["content"] = {"mismatched": 1}
        elif entry["path"] in {"docs/guide.md", "tests/test_handlers.py"}:
            entry.update(reads_succeeded=0, diff_pages_succeeded=0)
            entry["content"] = {"credited": 1}
        else:
            entry["content"] = {"matched": 1}
    (work / "edited.evidence.json").write_text(json.dumps(document))


def _reconcile_args(repo: str, reviewer: str, verdict: str, mode: list[str]) -> list[str]:
    claims = "lying" if reviewer == "lying" else "honest"
    evidence = {
        "no-evidence": [],
        "missing-evidence": ["--evidence", "absent.evidence.json"],
    }.get(reviewer, ["--evidence", f"{reviewer}.evidence.json"])
    return [
        "reconcile",
        "--repo",
        repo,
        "--revision",
        REVISION,
        "--verdict",
        verdict,
        "--changed",
        "changed.txt",
        "--claims",
        f"{claims}.claims.json",
        *evidence,
        *mode,
        "--format",
        "json",
    ]


def decide_everything(rig: Rig) -> None:
    for name in os.listdir(EXAMPLES):
        if not name.startswith("__"):
            shutil.copy(EXAMPLES / name, rig.work / name)
    for reviewer in ("honest", "lying"):
        recorded = rig.cli(
            "record",
            f"{reviewer}.pi-rpc.jsonl",
            "--format",
            "pi-rpc",
            "--revision",
            REVISION,
            "--repo-root",
            REPO_ROOT,
            "--diff",
            "review.diff",
            "-o",
            f"{reviewer}.evidence.json",
            OTEL_SDK_DISABLED="true",
        )
        assert recorded.returncode == 0, recorded.stderr
    write_edited_evidence(rig.work)
    endpoint = f"http://127.0.0.1:{rig.collector.port}"
    for repo, reviewer, verdict, mode in RUNS:
        result = rig.cli(
            *_reconcile_args(repo, reviewer, verdict, mode), OTEL_EXPORTER_OTLP_ENDPOINT=endpoint
        )
        expected = 3 if reviewer == "missing-evidence" else 0
        assert result.returncode == expected, (repo, reviewer, result.stderr)


def wait_for_totals(rig: Rig, reviews: int, errors: int) -> None:
    """Until Prometheus has scraped every run's counts."""
    deadline = time.monotonic() + 30
    want = (float(reviews), float(errors))
    got: tuple[float, float] = (0.0, 0.0)
    while time.monotonic() < deadline:
        totals = [
            rig.prometheus.query(f"sum({name})")
            for name in ("coverage_gate_reviews_total", "coverage_gate_errors_total")
        ]
        got = (
            float(totals[0][0]["value"][1]) if totals[0] else 0.0,
            float(totals[1][0]["value"][1]) if totals[1] else 0.0,
        )
        if got == want:
            time.sleep(2)  # a few more scrapes at the final values
            return
        time.sleep(0.5)
    raise AssertionError(f"Prometheus holds {got}, expected {want}")


def _report(rig: Rig, *source: str) -> dict[str, Any]:
    result = rig.cli("report", *source, *CRITERIA, "--format", "json")
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


#: What both sources must agree on, per repository.
AGREED = (
    "reviews",
    "approvals",
    "outcomes",
    "would_downgrade",
    "would_downgrade_rate",
    "would_downgrade_interval",
    "claimed_files",
    "unsupported_files",
    "unknown_files",
    "modes",
    "mode_sources",
    "fallbacks",
    "errors",
    "error_kinds",
    "readiness",
    "rates",
)


def _agreed(repo: dict[str, Any]) -> dict[str, Any]:
    return {
        **{key: repo[key] for key in AGREED},
        "evidence": (repo["evidence"]["reviews_available"], repo["evidence"]["availability"]),
        "checks": [(c["name"], c["ok"]) for c in repo["checks"]],
        # absent where no claimed file's content was checked; what mismatches showed instead
        # comes from the spans only
        "content": (
            {k: v for k, v in repo["content"].items() if k != "mismatches"}
            if "content" in repo
            else None
        ),
        "depth": (
            repo["depth"]["files"],
            repo["depth"]["approvals_compared"],
            repo["depth"]["policies"],
        ),
    }


def test_the_prometheus_report_and_the_local_report_agree(rig: Rig) -> None:
    """Repository by repository, the counts, rates, intervals, checks and verdicts from
    Prometheus are those from the telemetry folder, over the same CLI decisions, the content
    mismatch and content-credit rates per client included; one repository is ready, the others
    fail their own checks."""
    decide_everything(rig)
    wait_for_totals(rig, reviews=len(RUNS) - 1, errors=1)

    local = _report(rig, "--telemetry-dir", str(rig.work / "telemetry"))
    remote = _report(rig, "--prometheus", rig.prometheus.url, "--since", "1d")

    assert remote["input"]["source"] == "prometheus"
    by_name = {r["repository"]: r for r in local["repositories"]}
    assert [r["repository"] for r in remote["repositories"]] == sorted(by_name)
    for repo in remote["repositories"]:
        assert _agreed(repo) == _agreed(by_name[repo["repository"]]), repo["repository"]

    failing = {
        r["repository"]: {c["name"] for c in r["checks"] if not c["ok"]}
        for r in remote["repositories"]
    }
    assert failing == {
        "acme/ready": set(),
        "acme/liar": {"approvals", "would_downgrade_rate"},
        "acme/blind": {"approvals", "evidence", "would_downgrade_rate"},
        "acme/fallback": {"approvals", "fallbacks", "would_downgrade_rate"},
        "acme/errors": {"approvals", "error_rate", "would_downgrade_rate"},
        "acme/edited": {"approvals", "would_downgrade_rate"},
    }

    # The content rates both sources agree on are those of the decisions: acme/edited's two
    # runs of 6 claimed files each, 1 a mismatch and 2 credited by content; acme/ready's pi
    # streams carry no read's text here (no repository to check against): all unchecked.
    remote_by_name = {r["repository"]: r for r in remote["repositories"]}
    edited = remote_by_name["acme/edited"]["content"]
    (client,) = edited["clients"]
    assert (client["format"], client["claimed"]) == ("claude-code", 12)
    assert client["outcomes"] == {
        "matched": 6,
        "via_content": 4,
        "mismatch": 2,
        "unchecked": 0,
        "none": 0,
    }
    # 95% Wilson intervals of 2 and 4 in 12
    for name, count, interval in (
        ("mismatch_rate", 2, (0.0470, 0.4480)),
        ("content_credit_rate", 4, (0.1381, 0.6094)),
    ):
        figure = client[name]
        assert (figure["count"], figure["of"]) == (count, 12), name
        assert figure["rate"] == pytest.approx(count / 12), name
        low, high = figure["interval"]["low"], figure["interval"]["high"]
        assert (low, high) == pytest.approx(interval, abs=5e-4), name
        assert edited[name] == figure, name
    ready = remote_by_name["acme/ready"]["content"]
    assert [c["format"] for c in ready["clients"]] == ["pi-rpc"]
    assert ready["outcomes"]["unchecked"] == ready["claimed"] == 6 * 6
    assert ready["mismatch_rate"]["count"] == ready["content_credit_rate"]["count"] == 0

    # When: Prometheus knows each review to the step (an hour) that holds it; its first and
    # last times bracket the reviews, and its days observed never overstate their span.
    for repo in remote["repositories"]:
        mine = by_name[repo["repository"]]
        assert repo["days"] == 0.0
        assert mine["days"] < 0.01
        if repo["reviews"]:
            assert repo["first_seen"] <= mine["first_seen"] <= mine["last_seen"], repo
            assert mine["last_seen"] <= repo["last_seen"], repo
            assert repo["duration_p50_s"] is not None
            assert repo["reset_series"] == 0


def test_a_prometheus_that_is_gone_is_an_error_not_a_verdict(rig: Rig) -> None:
    """Nothing listening: exit 3, a one-line reason, nothing on stdout."""
    result = rig.cli(
        "report", "--prometheus", f"http://127.0.0.1:{_free_port()}", "--prometheus-timeout", "3"
    )
    assert result.returncode == 3, result.stderr
    assert "cannot connect (connection refused)" in result.stderr
    assert result.stdout == ""
