"""Live: a real Prometheus (Debian's) holds what the project's own instruments record, under the
names the dashboards and rules query, and every panel's query returns series with the labels the
panel shows.

How the data gets there: Prometheus scrapes an in-test endpoint served by the OpenTelemetry SDK's
Prometheus reader (``opentelemetry-exporter-prometheus``) attached to a local MeterProvider on
which ``coverage_gate.rollout.metrics.record_decision`` records real decisions. Why this way:

- Pull is how production data reaches Prometheus through ``dashboards/otelcol.yaml`` (the
  Collector's ``prometheus`` exporter is scraped), and the reader holds cumulative state just as
  ``deltatocumulative`` does there.
- The reader applies the OpenTelemetry-to-Prometheus name translation itself (dots to
  underscores, unit suffixes, ``_total``): the names Prometheus ends up with are checked against
  a translation this project did not write, not against our own ``prometheus_name``.
- Debian 12's Prometheus 2.42 has no OTLP receiver (that came in 2.47); remote write would need
  our own translation and snappy framing; an OpenMetrics backfill would leave the recording rules
  unevaluated.

Prometheus runs on 127.0.0.1 on a free port with a temporary storage folder, scraping every
second and evaluating the project's rules (their group interval shortened to 1 s); it is stopped
and its folder removed at the end. Without ``prometheus``/``promtool`` (``.ci/setup-prometheus.sh``
installs them) or the reader package, the test skips, or fails under CG_REQUIRE_INTEGRATION=1.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider

from coverage_gate.contracts.model import (
    Capability,
    Depth,
    DepthPolicy,
    FileContent,
    Mode,
    ModeSource,
    Verdict,
)
from coverage_gate.rollout import metrics as m
from coverage_gate.rollout.metrics import INSTRUMENTS
from coverage_gate.rollout.simulation import (
    CLIENT_VERSION,
    FABRICATED_CITATION,
    REAL_CITATION,
    UPGRADE_DRIFT,
    UPGRADED_VERSION,
    ReviewerSpec,
    decide,
)
from tests.rollout.test_dashboards import (
    RULES,
    content_panel,
    dashboard,
    drift_panel,
    grouping_labels,
    panel_targets,
    read_rules,
    recorded_labels,
)

pytestmark = pytest.mark.slow

REQUIRE = os.environ.get("CG_REQUIRE_INTEGRATION") == "1"
SUBSTITUTIONS = {"$repository": ".*", "$window": "5m", "$__rate_interval": "1m"}
_LEGEND_LABEL = r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}"


def _missing(reason: str) -> None:
    if REQUIRE:
        pytest.fail(f"{reason} (required: CG_REQUIRE_INTEGRATION=1)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --- the project's instruments, scraped ---------------------------------------------------------


@dataclass
class Exposition:
    provider: MeterProvider
    port: int


@pytest.fixture
def exposition() -> Iterator[Exposition]:
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

    registry = CollectorRegistry()
    reader = PrometheusMetricReader(registry=registry)
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = generate_latest(registry)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Exposition(provider, server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        provider.shutdown()


def feed(provider: MeterProvider, batch: int) -> None:
    """Real decisions covering every outcome, mode, several sources, formats and agents, and
    every way a claimed file's content can be checked (``CONTENT_RATES``)."""
    meter = provider.get_meter("coverage_gate")
    scope = ["src/api.py", "src/db.py", "README.md"]
    matched = FileContent.MATCHED
    honest = ReviewerSpec("security", claimed=scope, read=scope, depth=Depth.FULL, content=matched)
    # It read src/db.py too, but what came back was not the file at the revision: no evidence.
    liar = ReviewerSpec(
        "security",
        claimed=scope,
        read=scope[:2],
        content=matched,
        contents={"src/db.py": FileContent.MISMATCH},
    )
    skimmer = ReviewerSpec(
        "style",
        claimed=scope,
        read=scope,
        depth=Depth.FULL,
        depths={"src/api.py": Depth.PARTIAL, "src/db.py": Depth.NONE},
    )
    partial = ReviewerSpec(
        "tests", claimed=scope, read=scope, depth=Depth.FULL, depths={"README.md": Depth.PARTIAL}
    )
    blind = ReviewerSpec(
        "style", claimed=scope, read=(), source="codex-exec", capability=Capability.NONE
    )
    claude = ReviewerSpec(
        "tests",
        claimed=scope,
        read=scope,
        source="claude-code",
        content=matched,
        contents={"README.md": FileContent.VIA_CONTENT},
    )
    citing = ReviewerSpec(
        "security",
        claimed=scope,
        read=scope,
        citations=[REAL_CITATION, FABRICATED_CITATION, ("src/api.py", 1, "   ")],
    )
    # One OpenCode reviewer at the checked version, one at a version whose stream its adapter no
    # longer fully reads (``UPGRADE_DRIFT``): its claims are unknown. Neither is an approval, so
    # the other panels' figures are those of the cases before.
    pinned = replace(honest, source="opencode", client_version=CLIENT_VERSION)
    upgraded = ReviewerSpec(
        "style",
        claimed=scope,
        read=(),
        source="opencode",
        client_version=UPGRADED_VERSION,
        drift=UPGRADE_DRIFT,
    )
    cases = [
        ("acme/api", [honest, claude], Mode.SHADOW, ModeSource.SNAPSHOT, Verdict.APPROVE),
        ("acme/api", [liar], Mode.SHADOW, ModeSource.SNAPSHOT, Verdict.APPROVE),
        ("acme/api", [honest, blind], Mode.SHADOW, ModeSource.LIVE, Verdict.APPROVE),
        ("acme/api", [honest, skimmer], Mode.SHADOW, ModeSource.SNAPSHOT, Verdict.APPROVE),
        ("acme/api", [honest, partial], Mode.SHADOW, ModeSource.SNAPSHOT, Verdict.APPROVE),
        ("acme/api", [honest], Mode.SHADOW, ModeSource.FALLBACK, Verdict.REQUEST_CHANGES),
        ("acme/web", [liar], Mode.ENFORCE, ModeSource.LIVE, Verdict.APPROVE),
        ("acme/web", [honest], Mode.ENFORCE, ModeSource.DISK_COPY, Verdict.APPROVE),
        ("acme/web", [citing], Mode.ENFORCE, ModeSource.LIVE, Verdict.APPROVE),
        ("acme/web", [pinned], Mode.ENFORCE, ModeSource.LIVE, Verdict.REQUEST_CHANGES),
        ("acme/web", [upgraded], Mode.ENFORCE, ModeSource.LIVE, Verdict.COMMENT),
    ]
    for i in range(batch):
        for repo, reviewers, mode, source, verdict in cases:
            decision = decide(
                repo,
                scope=scope,
                reviewers=reviewers,
                mode=mode,
                mode_source=source,
                verdict=verdict,
                revision=f"{i:040x}",
                depth_policy=DepthPolicy.ANY_HUNK if repo == "acme/web" else DepthPolicy.ACCEPT,
            )
            m.record_decision(meter, decision, duration_s=0.002 * (1 + i % 5))
    m.record_error(meter, repo="acme/web", kind=m.ErrorKind.BAD_INPUT)


#: What the content panel plots for ``feed``'s claimed files, each batch alike (target A: the
#: mismatch rate, B: the content-credit rate), by (repository, format):
#: * acme/api, pi-rpc, 24 files a batch: the honest reviewer's 3 matched in each of 6 reviews,
#:   the liar's 3 (1 matched, 1 mismatch, 1 none), the skimmer's and the partial reader's 6
#:   (unchecked): 1 mismatch of 24, nothing credited;
#: * acme/api, claude-code: 3 files, README.md credited by content: 1 of 3;
#: * acme/api, codex-exec: the blind reviewer's 3 (none): neither;
#: * acme/web, pi-rpc: the liar's 3, the honest reviewer's 3, the citing one's 3 (unchecked):
#:   1 mismatch of 9.
CONTENT_RATES = {
    ("A", "acme/api", "pi-rpc"): 1 / 24,
    ("A", "acme/api", "claude-code"): 0.0,
    ("A", "acme/api", "codex-exec"): 0.0,
    ("A", "acme/web", "pi-rpc"): 1 / 9,
    ("B", "acme/api", "pi-rpc"): 0.0,
    ("B", "acme/api", "claude-code"): 1 / 3,
    ("B", "acme/api", "codex-exec"): 0.0,
    ("B", "acme/web", "pi-rpc"): 0.0,
    # the pinned OpenCode reviewer's 3 matched, the upgraded one's 3 unknown (none)
    ("A", "acme/web", "opencode"): 0.0,
    ("B", "acme/web", "opencode"): 0.0,
}

#: What the drift panel plots for ``feed``'s streams (target A: the share that held drift that
#: could hide reads; B: any drift), by (format, client version): only the upgraded OpenCode
#: client's streams drift, all of them.
DRIFT_RATES = {
    (target, fmt, version): share
    for target in ("A", "B")
    for fmt, version, share in (
        ("pi-rpc", "none", 0.0),
        ("claude-code", "none", 0.0),
        ("codex-exec", "none", 0.0),
        ("opencode", CLIENT_VERSION, 0.0),
        ("opencode", UPGRADED_VERSION, 1.0),
    )
}


# --- Prometheus ---------------------------------------------------------------------------------


@dataclass
class Prometheus:
    url: str
    log: Path

    def get(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as response:  # noqa: S310 - our loopback Prometheus
            body: dict[str, Any] = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.get("/api/v1/query", query=expr)["result"]
        return result

    def wait_for(self, expr: str, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            result = self.query(expr)
            if result:
                return result
            time.sleep(0.5)
        raise AssertionError(f"no series for {expr!r}; log:\n{self.log.read_text()[-3000:]}")


def _binaries() -> tuple[str, str]:
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if prometheus is None or promtool is None:
        _missing("prometheus/promtool not installed; .ci/setup-prometheus.sh installs them")
    assert prometheus is not None
    assert promtool is not None
    return prometheus, promtool


def _config(folder: Path, target_port: int) -> Path:
    rules = RULES.read_text()
    fast = rules.replace("    interval: 1m\n", "    interval: 1s\n")
    assert fast != rules, "the recording group's interval line moved; update this test"
    (folder / "rules.yml").write_text(fast)
    config = folder / "prometheus.yml"
    config.write_text(
        "global:\n"
        "  scrape_interval: 1s\n"
        "  evaluation_interval: 1s\n"
        "rule_files: [rules.yml]\n"
        "scrape_configs:\n"
        "  - job_name: coverage-gate\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{target_port}']}}]\n"
    )
    return config


@pytest.fixture
def prometheus(tmp_path: Path, exposition: Exposition) -> Iterator[Prometheus]:
    binary, promtool = _binaries()
    config = _config(tmp_path, exposition.port)
    checked = subprocess.run(
        [promtool, "check", "config", str(config)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with running_prometheus(binary, config, tmp_path) as server:
        yield server


@contextlib.contextmanager
def running_prometheus(binary: str, config: Path, folder: Path) -> Iterator[Prometheus]:
    """Prometheus with ``config`` on a free loopback port, its storage and log in ``folder``,
    once it says it is ready; stopped on the way out."""
    port = _free_port()
    log = folder / "prometheus.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=folder,
        )
    server = Prometheus(f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as r:  # noqa: S310 - loopback
                    if r.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"Prometheus did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield server
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def _substitute(expr: str) -> str:
    for variable, value in SUBSTITUTIONS.items():
        expr = expr.replace(variable, value)
    assert "$" not in expr, expr
    return expr


def test_every_panel_query_returns_series_with_the_labels_it_shows(
    prometheus: Prometheus, exposition: Exposition
) -> None:
    """Scraped names match the instrument list; the rules Prometheus loaded are the ones the
    static checks read; every recording rule and every panel target returns series carrying
    the labels its legend and grouping use."""
    feed(exposition.provider, batch=5)
    prometheus.wait_for('count(up{job="coverage-gate"} == 1)')
    time.sleep(3)  # a few scrapes of the first batch, so rates have two samples
    feed(exposition.provider, batch=5)
    time.sleep(3)

    names = set(prometheus.get("/api/v1/label/__name__/values"))
    expected = {series for spec in INSTRUMENTS for series in spec.prometheus_series}
    assert expected <= names, sorted(expected - names)

    repositories = prometheus.get(
        "/api/v1/label/repository/values", **{"match[]": "coverage_gate_reviews_total"}
    )
    assert set(repositories) == {"acme/api", "acme/web"}

    ours = read_rules(RULES.read_text())
    groups = prometheus.get("/api/v1/rules")["groups"]
    loaded = {(r["type"], r["name"], r["query"]) for g in groups for r in g["rules"]}
    assert {(t, n) for t, n, _ in loaded} == {
        ("recording" if r.kind == "record" else "alerting", r.name) for r in ours
    }
    assert all(r["health"] == "ok" for g in groups for r in g["rules"]), groups

    for name, labels in recorded_labels(ours).items():
        for series in prometheus.wait_for(name):
            assert labels <= set(series["metric"]), (name, series)

    for title, expr, legend in panel_targets(dashboard()):
        result = prometheus.wait_for(_substitute(expr), timeout_s=10)
        wanted = set(re.findall(_LEGEND_LABEL, legend)) | (grouping_labels(expr) - {"le"})
        for series in result:
            assert wanted <= set(series["metric"]), (title, series["metric"])

    # acme/api's five approvals per batch: the liar is downgraded under every depth policy, the
    # reviewer who saw none of a file's change under any-hunk too, the one who saw part of it
    # under all-hunks as well.
    compared = prometheus.wait_for(
        'repository_depth_policy:coverage_gate_would_downgrade:ratio_1h{repository="acme/api"}'
    )
    ratios = {s["metric"]["depth_policy"]: float(s["value"][1]) for s in compared}
    assert ratios == pytest.approx({"accept": 0.2, "any-hunk": 0.4, "all-hunks": 0.6}, abs=0.02)

    # The content panel's two rates, per repository and format, are those of the files fed.
    plotted: dict[tuple[str, str, str], float] = {}
    for target in content_panel()["targets"]:
        for series in prometheus.wait_for(_substitute(target["expr"]), timeout_s=10):
            labels = series["metric"]
            key = (target["refId"], labels["repository"], labels["format"])
            plotted[key] = float(series["value"][1])
    assert plotted == pytest.approx(CONTENT_RATES, abs=0.01)

    # The drift panel's two shares, per format and client version, are those of the streams fed.
    shares: dict[tuple[str, str, str], float] = {}
    for target in drift_panel()["targets"]:
        for series in prometheus.wait_for(_substitute(target["expr"]), timeout_s=10):
            labels = series["metric"]
            key = (target["refId"], labels["format"], labels["client_version"])
            shares[key] = float(series["value"][1])
    assert shares == pytest.approx(DRIFT_RATES, abs=0.01)
