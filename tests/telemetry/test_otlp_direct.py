"""Metrics and the reconcile span written directly (no OpenTelemetry SDK) are what the SDK writes.

On the local files a run's meter and tracer are ``otlp_direct``'s; an OTLP endpoint, or an
environment that sets what only the SDK applies, gets the SDK's. Both must write the same lines:
``coverage-gate report`` and the dashboards read them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.metrics import Meter as SdkMeter
from opentelemetry.metrics import NoOpMeter

from coverage_gate.rollout import metrics
from coverage_gate.rollout.simulation import two_decisions
from coverage_gate.telemetry import otel_setup
from coverage_gate.telemetry.otlp_direct import DirectMeter, DirectTracer
from tests.record.test_record_unchanged import _canonical_spans

DECISIONS = two_decisions()
#: Forces the SDK with what it does by default anyway.
SDK_METRICS = {"OTEL_METRICS_EXEMPLAR_FILTER": "trace_based"}
SDK_SPANS = {"OTEL_SPAN_EVENT_COUNT_LIMIT": "128"}
_TIMES = re.compile(r'"(startTimeUnixNano|timeUnixNano)":"\d+"')


def _record(telemetry: otel_setup.Telemetry) -> None:
    """Every instrument, several attribute sets, a set measured twice, histogram values on and
    past its bounds, amounts the SDK refuses, and more attribute sets than it keeps."""
    meter = telemetry.meter()
    for decision, duration_s in zip([*DECISIONS, DECISIONS[0]], [0.01, 0.0123, 20.0], strict=True):
        metrics.record_decision(meter, decision, duration_s=duration_s)
        metrics.record_reconcile_span(telemetry.tracer(), decision, duration_s=duration_s)
    metrics.record_error(meter, repo="acme/api", kind=metrics.ErrorKind.BAD_INPUT)
    refused = meter.create_counter("coverage_gate.test.refused")
    refused.add(-1, {"a": "b"})
    refused.add(float("nan"))
    many = meter.create_counter("coverage_gate.test.many", unit="{x}", description="d")
    for n in range(2002):
        many.add(1, {"n": str(n % 2001)})
    span = telemetry.tracer().start_span("invoke_agent many events")
    for n in range(130):
        span.add_event("e", {"n": n}, timestamp=n + 1)
    span.end()


def _lines(folder: Path, signal: str) -> list[str]:
    return [
        line
        for path in sorted(folder.glob(f"{signal}-*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def _written(folder: Path, environ: dict[str, str]) -> tuple[list[str], list[Any], int]:
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(folder), **environ})
    _record(telemetry)
    assert telemetry.shutdown() is True
    spans, _ = _canonical_spans(folder)
    return _lines(folder, "metrics"), spans, len(_lines(folder, "traces"))


def test_direct_metrics_and_spans_are_the_sdks(tmp_path: Path) -> None:
    """The same measurements and spans, directly and through the SDK (forced by a setting given
    its default value): the same metrics line, byte for byte but for the times, and the same
    spans, span for span, in the same lines."""
    direct = _written(tmp_path / "direct", {})
    sdk = _written(tmp_path / "sdk", {**SDK_METRICS, **SDK_SPANS})
    (direct_line,) = direct[0]
    (sdk_line,) = sdk[0]
    assert _TIMES.sub("t", direct_line) == _TIMES.sub("t", sdk_line)
    assert direct[1:] == sdk[1:]
    assert direct[2] == 1
    (many,) = [s["span"] for s in direct[1] if s["span"]["name"] == "invoke_agent many events"]
    assert (len(many["events"]), many["droppedEventsCount"]) == (128, 2)


def test_direct_points_start_when_first_measured_and_end_at_collection(tmp_path: Path) -> None:
    """Each point starts when its attribute set was first measured; all end at the one
    collection, at exit; amounts the SDK refuses are not counted."""
    (line,), _, _ = _written(tmp_path, {})
    scope = json.loads(line)["resourceMetrics"][0]["scopeMetrics"][0]
    points = [
        point
        for metric in scope["metrics"]
        for data in (metric.get("sum") or metric.get("histogram"),)
        for point in data["dataPoints"]
    ]
    ends = {point["timeUnixNano"] for point in points}
    assert len(ends) == 1
    assert all(int(point["startTimeUnixNano"]) <= int(next(iter(ends))) for point in points)
    names = [metric["name"] for metric in scope["metrics"]]
    assert "coverage_gate.test.refused" not in names
    (many,) = [m for m in scope["metrics"] if m["name"] == "coverage_gate.test.many"]
    assert len(many["sum"]["dataPoints"]) == 2001  # 2,000 sets, and the overflow point
    (duration,) = [m for m in scope["metrics"] if m["name"] == metrics.RECONCILE_DURATION.name]
    first = duration["histogram"]["dataPoints"][0]
    assert (first["count"], first["min"], first["max"]) == ("2", 0.01, 20.0)


@pytest.mark.parametrize(
    ("environ", "kind"),
    [
        ({}, DirectMeter),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, SdkMeter),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9"}, DirectMeter),
        (SDK_METRICS, SdkMeter),
        ({"OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED": "true"}, SdkMeter),
        ({"OTEL_METRICS_EXPORTER": "none"}, NoOpMeter),
        ({"OTEL_SDK_DISABLED": "true"}, NoOpMeter),
    ],
)
def test_where_a_runs_metrics_go(tmp_path: Path, environ: dict[str, str], kind: type) -> None:
    """Directly for the local files; the SDK for an endpoint or settings only it applies;
    nowhere when metrics are off."""
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(tmp_path), **environ})
    assert isinstance(telemetry.meter(), kind)
    telemetry.shutdown(budget_s=0.5)


@pytest.mark.parametrize(
    ("environ", "direct"),
    [
        ({}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, False),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:9"}, True),
        ({"OTEL_TRACES_SAMPLER": "always_on"}, False),
        ({"OTEL_TRACES_EXPORTER": "none"}, False),
    ],
)
def test_where_a_runs_spans_go(tmp_path: Path, environ: dict[str, str], direct: bool) -> None:
    """The reconcile span is encoded directly where ``record``'s spans are."""
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(tmp_path), **environ})
    assert isinstance(telemetry.tracer(), DirectTracer) is direct
    telemetry.shutdown(budget_s=0.5)


def test_nothing_measured_writes_no_metrics_file(tmp_path: Path) -> None:
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(tmp_path)})
    telemetry.meter().create_counter("coverage_gate.test.unused")
    assert telemetry.shutdown() is True
    assert list(tmp_path.glob("metrics-*")) == []
