"""The OpenTelemetry SDK side of a run's telemetry: its providers, exporters and span queue.

Imported by ``otel_setup`` only when a run first asks for a tracer or meter provider: a command
that records no metric and encodes its spans directly (``record`` on the local files) never
loads the SDK. See ``otel_setup`` for where each signal goes.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import (  # type: ignore[import-untyped, unused-ignore]
    MessageToDict,
)
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import (
    Counter,
    Histogram,
    MeterProvider,
    ObservableCounter,
    ObservableGauge,
    ObservableUpDownCounter,
    UpDownCounter,
)
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from coverage_gate.otel_setup import (
    EXPORT_CHUNK_SPANS,
    METRIC_INTERVAL_MS,
    ChunkedExport,
    JsonLinesFile,
    Protocol,
    _Endpoint,
    resource_attributes,
)

_log = logging.getLogger("coverage_gate.otel_setup")
#: Where a failed export request is reported (collected by ``otel_setup.ExportTrouble``).
_export_log = logging.getLogger("opentelemetry.coverage_gate.export")

#: The OTLP "delta" temporality preference: monotonic sums and histograms as deltas.
DELTA: dict[type, AggregationTemporality] = {
    Counter: AggregationTemporality.DELTA,
    Histogram: AggregationTemporality.DELTA,
    ObservableCounter: AggregationTemporality.DELTA,
    UpDownCounter: AggregationTemporality.CUMULATIVE,
    ObservableUpDownCounter: AggregationTemporality.CUMULATIVE,
    ObservableGauge: AggregationTemporality.CUMULATIVE,
}

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def build_resource(environ: Mapping[str, str], service_version: str | None = None) -> Resource:
    return build_resource_from(resource_attributes(environ, service_version))


def build_resource_from(attributes: Mapping[str, str]) -> Resource:
    return Resource(dict(attributes))


# --- the local OTLP JSON lines sink -----------------------------------------------------------


def otlp_json(message: ExportTraceServiceRequest | ExportMetricsServiceRequest) -> str:
    """One OTLP JSON line: protobuf JSON mapping, enums as integers, trace and span ids as hex
    (OTLP/JSON's one departure from the standard mapping, which would use base64)."""
    as_dict: dict[str, Any] = MessageToDict(message, use_integers_for_enums=True)
    return json.dumps(_hex_ids(as_dict), separators=(",", ":"), sort_keys=False)


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex()
            if key in _ID_KEYS and isinstance(value, str)
            else _hex_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


class JsonLinesSpanExporter(SpanExporter):
    def __init__(self, sink: JsonLinesFile) -> None:
        self.sink = sink

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            self.sink.write_line(otlp_json(encode_spans(spans)))
        except OSError as error:
            _log.warning("telemetry: cannot write spans to %s: %s", self.sink.folder, error)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.sink.close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


class JsonLinesMetricExporter(MetricExporter):
    def __init__(self, sink: JsonLinesFile) -> None:
        super().__init__(preferred_temporality=DELTA)
        self.sink = sink

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        request = encode_metrics(metrics_data)
        if not request.resource_metrics:
            return MetricExportResult.SUCCESS
        try:
            self.sink.write_line(otlp_json(request))
        except OSError as error:
            _log.warning("telemetry: cannot write metrics to %s: %s", self.sink.folder, error)
            return MetricExportResult.FAILURE
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.sink.close()


# --- OTLP/HTTP ---------------------------------------------------------------------------------


class OtlpPoster:
    """POSTs one OTLP export request per call, protobuf or JSON (the local files' encoding, sent
    as ``application/json``). One attempt per request within ``timeout_s``: the exit budget, not
    a retry loop, bounds the wait, and a failure is logged once with its reason (the OS error or
    the HTTP status), which ``Telemetry.shutdown`` turns into its one line."""

    def __init__(
        self,
        endpoint: str,
        protocol: Protocol,
        headers: Mapping[str, str],
        timeout_s: float,
        gzip: bool,
    ) -> None:
        import requests  # noqa: PLC0415 - only an endpoint needs the HTTP stack

        self.endpoint = endpoint
        self.protocol = protocol
        self.timeout_s = timeout_s
        self.gzip = gzip
        self._session = requests.Session()
        kind = "application/json" if protocol is Protocol.JSON else "application/x-protobuf"
        self._session.headers.update({"Content-Type": kind, **headers})
        if gzip:
            self._session.headers["Content-Encoding"] = "gzip"

    def send(self, request: ExportTraceServiceRequest | ExportMetricsServiceRequest) -> bool:
        import gzip  # noqa: PLC0415 - only when compressing

        import requests  # noqa: PLC0415 - imported by __init__ already

        data = (
            otlp_json(request).encode("utf-8")
            if self.protocol is Protocol.JSON
            else request.SerializeToString()
        )
        try:
            response = self._session.post(
                self.endpoint,
                data=gzip.compress(data) if self.gzip else data,
                timeout=self.timeout_s,
            )
        except requests.RequestException as error:
            _export_log.warning("Failed to export to %s: %s", self.endpoint, error)
            return False
        if not response.ok:
            _export_log.warning(
                "Failed to export to %s code: %s, reason: %s",
                self.endpoint,
                response.status_code,
                response.reason,
            )
        return bool(response.ok)

    def close(self) -> None:
        self._session.close()


class HttpSpanExporter(SpanExporter):
    def __init__(self, poster: OtlpPoster) -> None:
        self.poster = poster

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        ok = self.poster.send(encode_spans(spans))
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self.poster.close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


class HttpMetricExporter(MetricExporter):
    def __init__(self, poster: OtlpPoster) -> None:
        super().__init__(preferred_temporality=DELTA)
        self.poster = poster

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        request = encode_metrics(metrics_data)
        if not request.resource_metrics:
            return MetricExportResult.SUCCESS
        ok = self.poster.send(request)
        return MetricExportResult.SUCCESS if ok else MetricExportResult.FAILURE

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.poster.close()


# --- exporting every span ----------------------------------------------------------------------


class SpanExport(ChunkedExport[ReadableSpan], SpanProcessor):
    """Keeps every ended (sampled) span of the run and exports them on ``force_flush`` or
    ``shutdown``, in the order they ended, in requests of at most ``chunk`` spans
    (``ChunkedExport``). The queue holds what the run made (one span per call, as many as the
    records the recorder holds anyway), so no span is dropped for lack of room."""

    def __init__(
        self, exporter: SpanExporter, chunk: int = EXPORT_CHUNK_SPANS, *, warn: bool = True
    ) -> None:
        super().__init__(chunk, warn=warn)
        self._exporter = exporter

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        del span, parent_context

    def on_end(self, span: ReadableSpan) -> None:
        if span.context and span.context.trace_flags.sampled:
            self.keep(span)

    def _send(self, chunk: list[ReadableSpan]) -> bool:
        return self._exporter.export(chunk) is SpanExportResult.SUCCESS

    def _close(self) -> None:
        self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        del timeout_millis  # bounded by the exporter's own timeout per request
        return self.flush()

    def shutdown(self) -> None:
        self.close()


# --- providers --------------------------------------------------------------------------------


def _poster(endpoint: _Endpoint) -> OtlpPoster:
    return OtlpPoster(
        endpoint.url, endpoint.protocol, endpoint.headers, endpoint.timeout_s, endpoint.gzip
    )


def tracer_provider(
    resource: Resource, folder: Path, endpoint: _Endpoint | None, export_timeout_s: float
) -> tuple[TracerProvider, SpanExport]:
    """An SDK tracer provider exporting every span to ``endpoint`` (OTLP/HTTP) or, without one,
    to the local files in ``folder``."""
    del export_timeout_s  # spans go out at exit, each request within the endpoint's own timeout
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    exporter: SpanExporter
    if endpoint:
        exporter = HttpSpanExporter(_poster(endpoint))
    else:
        exporter = JsonLinesSpanExporter(JsonLinesFile(folder, "traces"))
    # Chunked on both sinks: a run with many tool-call spans writes a few lines (or requests),
    # never one per span, ending a span never waits on I/O, and none is dropped.
    export = SpanExport(exporter, warn=False)
    provider.add_span_processor(export)
    return provider, export


def meter_provider(
    resource: Resource, folder: Path, endpoint: _Endpoint | None, export_timeout_s: float
) -> MeterProvider:
    """An SDK meter provider with delta temporality, exporting to ``endpoint`` (OTLP/HTTP) or,
    without one, to the local files in ``folder``; once a minute and at shutdown."""
    exporter: MetricExporter
    if endpoint:
        exporter = HttpMetricExporter(_poster(endpoint))
    else:
        exporter = JsonLinesMetricExporter(JsonLinesFile(folder, "metrics"))
    reader = PeriodicExportingMetricReader(
        exporter,
        export_interval_millis=METRIC_INTERVAL_MS,
        export_timeout_millis=(endpoint.timeout_s if endpoint else export_timeout_s) * 1000,
    )
    return MeterProvider(metric_readers=[reader], resource=resource, shutdown_on_exit=False)
