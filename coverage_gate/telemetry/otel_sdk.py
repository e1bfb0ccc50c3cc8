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
from typing import TYPE_CHECKING, Any

from opentelemetry.context import Context
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
    Gauge,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
    Sum,
)
from opentelemetry.sdk.metrics.export import Histogram as HistogramData
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanKind

from coverage_gate.telemetry import otlp_encode
from coverage_gate.telemetry._export import (
    EXPORT_CHUNK_SPANS,
    METRIC_INTERVAL_MS,
    ChunkedExport,
    Endpoint,
    JsonLinesFile,
    OtlpProtocol,
    resource_attributes,
)

if TYPE_CHECKING:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

__all__ = [
    "DELTA",
    "HttpMetricExporter",
    "HttpSpanExporter",
    "JsonLinesMetricExporter",
    "JsonLinesSpanExporter",
    "OtlpPoster",
    "SpanExport",
    "build_resource",
    "build_resource_from",
    "meter_provider",
    "metrics_line",
    "otlp_json",
    "span_line",
    "tracer_provider",
]

_log = logging.getLogger("coverage_gate.telemetry.otel_setup")
#: Where a failed export request is reported (collected by ``_export.ExportTrouble``).
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
    """One OTLP JSON line from a protobuf request: protobuf's JSON mapping, enums as integers,
    trace and span ids as hex (OTLP/JSON's one departure from the standard mapping, which would
    use base64). The local files are written without protobuf (``span_line``, ``metrics_line``);
    this is what they must equal, and what writes what those leave to protobuf."""
    from google.protobuf.json_format import (  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415
        MessageToDict,
    )

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


# OTLP's numbers for the SDK's span kinds
_KINDS = {
    SpanKind.INTERNAL: 1,
    SpanKind.SERVER: 2,
    SpanKind.CLIENT: 3,
    SpanKind.PRODUCER: 4,
    SpanKind.CONSUMER: 5,
}


def _scope_text(scope: InstrumentationScope | None) -> str | None:
    if scope is None:
        return "{}"
    if scope.attributes or scope.schema_url:
        return None
    return otlp_encode.scope(scope.name, scope.version)


def span_line(spans: Sequence[ReadableSpan]) -> str | None:
    """The OTLP JSON line of ``spans`` (``otlp_json(encode_spans(spans))``), written without
    protobuf; ``None`` for what this leaves to protobuf (links, trace state, schema URLs, scope
    attributes)."""
    groups: dict[Resource, dict[InstrumentationScope | None, list[str]]] = {}
    scopes: dict[InstrumentationScope | None, str] = {}
    for span in spans:
        context = span.get_span_context()
        resource = span.resource
        if (
            context is None
            or span.links
            or span.dropped_links
            or context.trace_state
            or resource.schema_url
            or span.start_time is None
            or span.end_time is None
        ):
            return None
        scope = span.instrumentation_scope or None
        if scope not in scopes:
            text = _scope_text(scope)
            if text is None:
                return None
            scopes[scope] = text
        parent = span.parent
        status = span.status
        groups.setdefault(resource, {}).setdefault(scope, []).append(
            otlp_encode.span(
                trace_id=context.trace_id,
                span_id=context.span_id,
                parent_id=parent.span_id if parent else None,
                name=span.name,
                start_ns=span.start_time,
                end_ns=span.end_time,
                attributes=span.attributes,
                events=[
                    otlp_encode.event(e.name, e.timestamp, e.attributes, e.dropped_attributes)
                    for e in span.events
                ],
                dropped_events=span.dropped_events,
                kind=_KINDS[span.kind],
                dropped_attributes=span.dropped_attributes,
                status=(status.status_code.value, status.description),
                remote_parent=bool(parent and parent.is_remote),
            )
        )
    resources = [
        otlp_encode.resourced(
            otlp_encode.resource(resource.attributes),
            "scopeSpans",
            [otlp_encode.scoped(scopes[scope], "spans", texts) for scope, texts in by.items()],
        )
        for resource, by in groups.items()
    ]
    return f'{{"resourceSpans":[{",".join(resources)}]}}'


def _metric_data(data: object) -> str | None:
    """The ``"sum"``, ``"gauge"`` or ``"histogram"`` field of a metric; ``None`` for what this
    leaves to protobuf (exponential histograms, exemplars)."""
    if isinstance(data, Sum):
        if any(point.exemplars for point in data.data_points):
            return None
        points = [
            otlp_encode.number_point(
                start_ns=p.start_time_unix_nano,
                time_ns=p.time_unix_nano,
                value=p.value,
                attributes=p.attributes or {},
            )
            for p in data.data_points
        ]
        body = otlp_encode.points(points, data.aggregation_temporality.value, data.is_monotonic)
        return f'"sum":{body}'
    if isinstance(data, Gauge):
        if any(point.exemplars for point in data.data_points):
            return None
        points = [
            otlp_encode.number_point(
                start_ns=None,
                time_ns=p.time_unix_nano,
                value=p.value,
                attributes=p.attributes or {},
            )
            for p in data.data_points
        ]
        return f'"gauge":{otlp_encode.points(points)}'
    if isinstance(data, HistogramData):
        if any(point.exemplars for point in data.data_points):
            return None
        points = [
            otlp_encode.histogram_point(
                start_ns=p.start_time_unix_nano,
                time_ns=p.time_unix_nano,
                count=p.count,
                total=p.sum,
                bucket_counts=p.bucket_counts,
                bounds=p.explicit_bounds,
                attributes=p.attributes or {},
                low=p.min,
                high=p.max,
            )
            for p in data.data_points
        ]
        return f'"histogram":{otlp_encode.points(points, data.aggregation_temporality.value)}'
    return None


def metrics_line(data: MetricsData) -> str | None:
    """The OTLP JSON line of ``data`` (``otlp_json(encode_metrics(data))``), written without
    protobuf; ``None`` for what this leaves to protobuf."""
    resources: list[str] = []
    for resource_metrics in data.resource_metrics:
        resource = resource_metrics.resource
        if resource.schema_url:
            return None
        scope_texts: list[str] = []
        for scope_metrics in resource_metrics.scope_metrics:
            scope = _scope_text(scope_metrics.scope)
            if scope is None:
                return None
            metric_texts: list[str] = []
            for found in scope_metrics.metrics:
                body = _metric_data(found.data)
                if body is None:
                    return None
                metric_texts.append(
                    otlp_encode.metric(found.name, found.description or "", found.unit or "", body)
                )
            scope_texts.append(otlp_encode.scoped(scope, "metrics", metric_texts))
        resources.append(
            otlp_encode.resourced(
                otlp_encode.resource(resource.attributes), "scopeMetrics", scope_texts
            )
        )
    return otlp_encode.metrics_request(resources)


class JsonLinesSpanExporter(SpanExporter):
    def __init__(self, sink: JsonLinesFile) -> None:
        self.sink = sink

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        line = span_line(spans)
        if line is None:
            from opentelemetry.exporter.otlp.proto.common.trace_encoder import (  # noqa: PLC0415
                encode_spans,
            )

            line = otlp_json(encode_spans(spans))
        try:
            self.sink.write_line(line)
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
        if not metrics_data.resource_metrics:
            return MetricExportResult.SUCCESS
        line = metrics_line(metrics_data)
        if line is None:
            from opentelemetry.exporter.otlp.proto.common.metrics_encoder import (  # noqa: PLC0415
                encode_metrics,
            )

            line = otlp_json(encode_metrics(metrics_data))
        try:
            self.sink.write_line(line)
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
        protocol: OtlpProtocol,
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
        kind = "application/json" if protocol is OtlpProtocol.JSON else "application/x-protobuf"
        self._session.headers.update({"Content-Type": kind, **headers})
        if gzip:
            self._session.headers["Content-Encoding"] = "gzip"

    def send(self, request: ExportTraceServiceRequest | ExportMetricsServiceRequest) -> bool:
        import gzip  # noqa: PLC0415 - only when compressing

        import requests  # noqa: PLC0415 - imported by __init__ already

        data = (
            otlp_json(request).encode("utf-8")
            if self.protocol is OtlpProtocol.JSON
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
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import (  # noqa: PLC0415
            encode_spans,  # an endpoint speaks protobuf (or its JSON mapping): loaded for it
        )

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
        from opentelemetry.exporter.otlp.proto.common.metrics_encoder import (  # noqa: PLC0415
            encode_metrics,  # an endpoint speaks protobuf (or its JSON mapping): loaded for it
        )

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


def _poster(endpoint: Endpoint) -> OtlpPoster:
    return OtlpPoster(
        endpoint.url, endpoint.protocol, endpoint.headers, endpoint.timeout_s, endpoint.gzip
    )


def tracer_provider(
    resource: Resource, folder: Path, endpoint: Endpoint | None, export_timeout_s: float
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
    resource: Resource, folder: Path, endpoint: Endpoint | None, export_timeout_s: float
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
