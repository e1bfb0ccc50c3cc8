"""Telemetry providers for one CLI run, built from the environment it is handed.

Where the data goes, per signal (traces, metrics):

1. ``OTEL_SDK_DISABLED=true``, or ``OTEL_TRACES_EXPORTER``/``OTEL_METRICS_EXPORTER`` set to
   ``none``: no-op providers, nothing recorded.
2. ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``/``..._METRICS_ENDPOINT`` (used as given) or
   ``OTEL_EXPORTER_OTLP_ENDPOINT`` (``/v1/traces``, ``/v1/metrics`` appended): OTLP/HTTP
   protobuf, or OTLP/HTTP JSON when ``OTEL_EXPORTER_OTLP[_SIGNAL]_PROTOCOL`` is ``http/json``;
   headers from ``OTEL_EXPORTER_OTLP[_SIGNAL]_HEADERS``, compression from
   ``OTEL_EXPORTER_OTLP[_SIGNAL]_COMPRESSION``, the per-request timeout from
   ``OTEL_EXPORTER_OTLP[_SIGNAL]_TIMEOUT`` (milliseconds; capped at the exit budget, default
   ``EXPORT_TIMEOUT_S``). ``grpc`` is not supported: that signal goes to the local files instead
   (nothing is lost) and one line says so.
3. Otherwise (the embedded default): OTLP JSON lines in a local folder,
   ``COVERAGE_GATE_TELEMETRY_DIR`` or ``$XDG_STATE_HOME/coverage-gate/telemetry`` or
   ``~/.local/state/coverage-gate/telemetry``. Each run writes its own files,
   ``<signal>-<utc time>-<pid>-<random>.jsonl``, created exclusively and appended to a whole
   line per ``write``, so concurrent runs never share or interleave a file. Each line is one
   ``ExportTraceServiceRequest``/``ExportMetricsServiceRequest`` in OTLP JSON (ids in hex,
   enums as integers, 64-bit integers as strings): the shape the Collector's file exporter
   writes, which ``coverage-gate report`` reads.

Counters and histograms use DELTA temporality on both sinks: a short-lived CLI keeps no
cumulative state, each run's points add up across runs, and the Collector's
``deltatocumulative`` processor rebuilds the cumulative series Prometheus wants
(``dashboards/otelcol.yaml``).

Resource: ``service.name`` (``OTEL_SERVICE_NAME``, default ``coverage-gate``) and
``OTEL_RESOURCE_ATTRIBUTES``. No per-run ``service.instance.id`` is added: with delta
temporality every run of the same service adds to the same series, where a per-run id would make
one series per run.

Spans: every span a run ends is kept and exported when the run ends, in the order they ended, in
requests (or lines) of at most ``EXPORT_CHUNK_SPANS`` (``SpanExport``). None is dropped for lack
of room: a ``record`` of 10,000 calls ends 10,001 spans at once, which the SDK's batch processor
(a queue of 2,048 that drops the oldest) would cut to its last 2,048. After a failed request the
rest is not sent, and counted: the ``invoke_agent`` span ends last, so an export cut short never
carries the completion marker of calls it lost.

Exit: ``Telemetry.shutdown(budget_s)`` flushes and shuts both providers down in daemon threads.
It waits while the export makes progress, and stops waiting once ``budget_s`` has passed with no
request completed: that is the deadline of each request, whatever its per-read timeout
(``EXPORT_TIMEOUT_S``) lets a trickling collector do. Providers register no exit hook. A dead,
hanging or trickling collector therefore holds the process about ``budget_s`` at most, a
collector that answers gets every span, and an export failure never raises into the caller.

What an export to an endpoint says on stderr: one line at exit, when something was not exported
(where to, the reason: the OS error or the HTTP status, how many spans). Log lines of the
exporters and the SDK are collected for that line, never printed one by one.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import json
import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from google.protobuf.json_format import (  # type: ignore[import-untyped, unused-ignore]
    MessageToDict,
)
from opentelemetry import metrics as metrics_api
from opentelemetry import trace as trace_api
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

from coverage_gate.metrics import METER_NAME, TRACER_NAME

_log = logging.getLogger(__name__)
#: Where a failed export request is reported (collected by ``ExportTrouble``).
_export_log = logging.getLogger("opentelemetry.coverage_gate.export")

#: The most the process waits at exit for telemetry, in seconds.
SHUTDOWN_BUDGET_S = 2.5
#: One OTLP/HTTP export request (one attempt), in seconds.
EXPORT_TIMEOUT_S = 1.0
#: Periodic metric export for long runs; a short run exports once, at shutdown.
METRIC_INTERVAL_MS = 60_000
#: Spans per OTLP request, and per line of the local files.
EXPORT_CHUNK_SPANS = 512
#: How often the exit wait looks at the export's progress, in seconds.
_PROGRESS_POLL_S = 0.05

TELEMETRY_DIR_ENV = "COVERAGE_GATE_TELEMETRY_DIR"
SERVICE_NAME = "coverage-gate"

#: The OTLP "delta" temporality preference: monotonic sums and histograms as deltas.
DELTA: dict[type, AggregationTemporality] = {
    Counter: AggregationTemporality.DELTA,
    Histogram: AggregationTemporality.DELTA,
    ObservableCounter: AggregationTemporality.DELTA,
    UpDownCounter: AggregationTemporality.CUMULATIVE,
    ObservableUpDownCounter: AggregationTemporality.CUMULATIVE,
    ObservableGauge: AggregationTemporality.CUMULATIVE,
}

_SIGNAL_PATHS = {"traces": "v1/traces", "metrics": "v1/metrics"}
_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


# --- environment ------------------------------------------------------------------------------


def _get(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name, "").strip()
    return value or None


def sdk_disabled(environ: Mapping[str, str]) -> bool:
    return (_get(environ, "OTEL_SDK_DISABLED") or "").lower() == "true"


def default_telemetry_dir(environ: Mapping[str, str]) -> Path:
    """Where the embedded default writes and ``report`` reads."""
    explicit = _get(environ, TELEMETRY_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state = _get(environ, "XDG_STATE_HOME")
    base = (
        Path(state) if state else Path(_get(environ, "HOME") or "~").expanduser() / ".local/state"
    )
    return base / "coverage-gate" / "telemetry"


def otlp_endpoint(environ: Mapping[str, str], signal: str) -> str | None:
    """The OTLP/HTTP URL for ``signal`` (``traces`` or ``metrics``), or None."""
    specific = _get(environ, f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
    if specific:
        return specific
    base = _get(environ, "OTEL_EXPORTER_OTLP_ENDPOINT")
    if base is None:
        return None
    return f"{base.rstrip('/')}/{_SIGNAL_PATHS[signal]}"


def _parse_pairs(raw: str | None) -> dict[str, str]:
    """``k=v,k2=v2`` with percent-encoding, as ``OTEL_*_HEADERS`` and
    ``OTEL_RESOURCE_ATTRIBUTES`` spell it; malformed pairs are skipped."""
    pairs: dict[str, str] = {}
    for item in (raw or "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            pairs[unquote(key.strip())] = unquote(value.strip())
    return pairs


def _headers(environ: Mapping[str, str], signal: str) -> dict[str, str]:
    specific = _get(environ, f"OTEL_EXPORTER_OTLP_{signal.upper()}_HEADERS")
    return _parse_pairs(specific or _get(environ, "OTEL_EXPORTER_OTLP_HEADERS"))


class Protocol(StrEnum):
    """OTLP/HTTP encodings this project exports with (``OTEL_EXPORTER_OTLP_PROTOCOL``)."""

    PROTOBUF = "http/protobuf"
    JSON = "http/json"


def otlp_protocol(environ: Mapping[str, str], signal: str) -> Protocol | str:
    """The protocol for ``signal``: a ``Protocol``, or the unsupported value as given."""
    raw = _get(environ, f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL") or _get(
        environ, "OTEL_EXPORTER_OTLP_PROTOCOL"
    )
    if raw is None:
        return Protocol.PROTOBUF
    try:
        return Protocol(raw.lower())
    except ValueError:
        return raw


def export_timeout(
    environ: Mapping[str, str],
    signal: str,
    default_s: float,
    warn: Callable[[str], None] = _log.warning,
) -> float:
    """Seconds per export request: ``OTEL_EXPORTER_OTLP[_SIGNAL]_TIMEOUT`` (milliseconds, as the
    specification says), never more than the exit budget; ``default_s`` when unset or unusable."""
    name = f"OTEL_EXPORTER_OTLP_{signal.upper()}_TIMEOUT"
    raw = _get(environ, name)
    if raw is None:
        name, raw = "OTEL_EXPORTER_OTLP_TIMEOUT", _get(environ, "OTEL_EXPORTER_OTLP_TIMEOUT")
    if raw is None:
        return default_s
    try:
        millis = float(raw)
    except ValueError:
        millis = -1.0
    if not 0 < millis < float("inf"):
        warn(
            f"coverage-gate: warning: {name}={raw!r} is not a positive number of "
            f"milliseconds; using {default_s:.1f} s"
        )
        return default_s
    return min(millis / 1000.0, SHUTDOWN_BUDGET_S)


def build_resource(environ: Mapping[str, str], service_version: str | None = None) -> Resource:
    attributes: dict[str, str] = _parse_pairs(_get(environ, "OTEL_RESOURCE_ATTRIBUTES"))
    attributes["service.name"] = _get(environ, "OTEL_SERVICE_NAME") or attributes.get(
        "service.name", SERVICE_NAME
    )
    if service_version:
        attributes.setdefault("service.version", service_version)
    attributes.update({"telemetry.sdk.language": "python", "telemetry.sdk.name": "opentelemetry"})
    return Resource(attributes)


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


class JsonLinesFile:
    """A file of this run alone, created on first write (no empty files for silent runs).

    Each line goes out in one ``write`` on an ``O_APPEND`` descriptor under a lock, so a line is
    never split by another thread of this run, and no other run ever holds this file.
    """

    def __init__(self, folder: Path, signal: str, *, clock: Callable[[], float] = time.time):
        self.folder = folder
        self.signal = signal
        self._clock = clock
        self._fd: int | None = None
        self.path: Path | None = None
        self._lock = threading.Lock()

    def _open(self) -> int:
        self.folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self._clock()))
        for _ in range(8):
            name = f"{self.signal}-{stamp}-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
            path = self.folder / name
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
            except FileExistsError:
                continue
            self.path = path
            return fd
        raise FileExistsError(f"no unused file name in {self.folder}")

    def write_line(self, line: str) -> None:
        data = (line + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                self._fd = self._open()
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


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


# --- what an export to an endpoint says --------------------------------------------------------


class ExportTrouble(logging.Handler):
    """Collects the SDK's export log lines (each retry, each refused connection) instead of
    printing them, so that a failed export says one line at exit (``Telemetry.shutdown``)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.reasons: list[str] = []
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        if len(self.reasons) < _MAX_REASONS:
            with contextlib.suppress(Exception):  # a malformed record must not cost the run
                self.reasons.append(_reason(record.getMessage()))

    @property
    def first(self) -> str | None:
        """The most telling reason: an OS error or HTTP status before a generic line."""
        telling = [r for r in self.reasons if r not in _GENERIC]
        found = telling or self.reasons
        return found[0] if found else None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        logger = logging.getLogger("opentelemetry")
        propagate = logger.propagate
        logger.addHandler(self)
        logger.propagate = False
        try:
            yield
        finally:
            logger.removeHandler(self)
            logger.propagate = propagate


_MAX_REASONS = 32
_GENERIC = frozenset({"timed out", "unknown error"})
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^\"')]+)")
_STATUS = re.compile(r"code: ?(\d+), reason: ?(.*)")


def _reason(message: str) -> str:
    """The useful part of an export log line: the OS error, or the HTTP status and reason."""
    if found := _ERRNO.search(message):
        return found.group(1).strip().lower()
    if found := _STATUS.search(message):
        return f"HTTP {found.group(1)} {found.group(2).strip()}"[:160]
    if "timeout" in message.lower() or "timed out" in message.lower():
        return "timed out"
    return message.strip().splitlines()[0][:160] if message.strip() else "unknown error"


# --- exporting every span ----------------------------------------------------------------------


class SpanExport(SpanProcessor):
    """Keeps every ended span of the run; exports them on ``force_flush`` or ``shutdown``, in the
    order they ended, in requests of at most ``chunk`` spans.

    The queue holds what the run made (one span per call, as many as the records the recorder
    holds anyway), so no span is dropped for lack of room. Once a request fails, later spans are
    not sent: they are counted in ``not_exported`` and never wait out a deadline of their own.
    ``progress_at`` (monotonic seconds) moves on each completed request, for the exit wait.
    """

    def __init__(
        self, exporter: SpanExporter, chunk: int = EXPORT_CHUNK_SPANS, *, warn: bool = True
    ) -> None:
        self._exporter = exporter
        self._warn = warn  # False when ``Telemetry.shutdown`` says it in its one line
        self._chunk = max(chunk, 1)
        self._pending: collections.deque[ReadableSpan] = collections.deque()
        self._lock = threading.Lock()
        self._export_lock = threading.Lock()
        self._closed = False
        self.ended = 0
        self.exported = 0
        self.not_exported = 0
        self.failed = False
        self.progress_at = time.monotonic()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        del span, parent_context

    def on_end(self, span: ReadableSpan) -> None:
        if not (span.context and span.context.trace_flags.sampled):
            return
        with self._lock:
            self.ended += 1
            if self._closed:
                self.not_exported += 1
            else:
                self._pending.append(span)

    def _next_chunk(self) -> list[ReadableSpan]:
        with self._lock:
            return [self._pending.popleft() for _ in range(min(self._chunk, len(self._pending)))]

    def _export_pending(self) -> bool:
        with self._export_lock:
            while chunk := self._next_chunk():
                if self.failed:
                    self.not_exported += len(chunk)
                    continue
                try:
                    result = self._exporter.export(chunk)
                # The telemetry export boundary: an exporter may raise anything (encoding, network,
                # a full disk); it must end this export, never the run.
                except Exception as error:  # noqa: BLE001
                    _log.warning("telemetry: span export failed: %s", error)
                    result = SpanExportResult.FAILURE
                if result is SpanExportResult.SUCCESS:
                    self.exported += len(chunk)
                    self.progress_at = time.monotonic()
                else:
                    self.failed = True
                    self.not_exported += len(chunk)
            return not self.failed

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        del timeout_millis  # bounded by the exporter's own timeout per request
        return self._export_pending()

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
        self._export_pending()
        if self.not_exported and self._warn:
            _log.warning(
                "telemetry: %d of %d span(s) not exported (an export request failed)",
                self.not_exported,
                self.ended,
            )
        self._exporter.shutdown()


# --- providers --------------------------------------------------------------------------------


@dataclass
class Telemetry:
    """The providers of one run and how to end them. ``sinks`` says where each signal goes
    (``otlp <url>``, ``files <folder>``, ``disabled``), for logs and tests."""

    tracer_provider: trace_api.TracerProvider
    meter_provider: metrics_api.MeterProvider
    sinks: dict[str, str] = field(default_factory=dict)
    span_export: SpanExport | None = None
    #: Collects the SDK's export lines while an endpoint is used; None for files only.
    trouble: ExportTrouble | None = None
    _done: bool = False

    def tracer(self) -> trace_api.Tracer:
        return self.tracer_provider.get_tracer(TRACER_NAME)

    def meter(self) -> metrics_api.Meter:
        return self.meter_provider.get_meter(METER_NAME)

    def shutdown(self, budget_s: float = SHUTDOWN_BUDGET_S) -> bool:
        """Flush and shut down both providers, waiting while the span export makes progress and
        at most ``budget_s`` past the start or the last completed request.

        Returns whether both finished in time and without error. Never raises: a telemetry
        failure must not change a decision or an exit code.
        """
        if self._done:
            return True
        self._done = True
        budget = max(budget_s, 0.0)
        began = time.monotonic()
        results: dict[str, bool] = {}
        threads = [
            threading.Thread(
                target=_quietly,
                args=(name, stop, results),
                name=f"coverage-gate-telemetry-{name}",
                daemon=True,  # a hanging collector must not keep the interpreter alive
            )
            for name, stop in self._stoppers()
        ]
        with self.trouble.installed() if self.trouble else contextlib.nullcontext():
            for thread in threads:
                thread.start()
            while alive := [t for t in threads if t.is_alive()]:
                last = max(began, self.span_export.progress_at if self.span_export else began)
                left = last + budget - time.monotonic()
                if left <= 0:
                    break
                alive[0].join(min(left, _PROGRESS_POLL_S))
        finished = not any(t.is_alive() for t in threads)
        self._say_trouble(finished, budget_s)
        return finished and all(results.values())

    def _say_trouble(self, finished: bool, budget_s: float) -> None:
        """One line for whatever went wrong with the export, or nothing."""
        parts: list[str] = []
        if self.trouble is not None and self.trouble.first is not None:
            parts.append(self.trouble.first)
        if not finished:
            parts.append(f"no export progress for {budget_s:.1f} s, not waiting")
        unsent = self._unsent()
        if unsent:
            parts.append(unsent)
        if not parts:
            return
        where = ", ".join(
            f"{name} to {sink.removeprefix('otlp ')}"
            for name, sink in sorted(self.sinks.items())
            if sink.startswith("otlp ")
        )
        _log.warning(
            "coverage-gate: warning: telemetry not exported%s: %s",
            f" ({where})" if where else "",
            "; ".join(parts),
        )

    def _unsent(self) -> str:
        export = self.span_export
        if export is None or export.exported >= export.ended:
            return ""
        return f"{export.ended - export.exported} of {export.ended} span(s) not exported"

    def _stoppers(self) -> list[tuple[str, Callable[[], object]]]:
        stoppers: list[tuple[str, Callable[[], object]]] = []
        for name, provider in (("traces", self.tracer_provider), ("metrics", self.meter_provider)):
            stop = getattr(provider, "shutdown", None)
            if callable(stop):
                stoppers.append((name, stop))
        return stoppers


def _quietly(name: str, stop: Callable[[], object], results: dict[str, bool]) -> None:
    try:
        stop()
    # The telemetry export boundary: exporters and SDK internals may raise anything (encoding,
    # network, a full disk). None of it may reach the decision or the exit code; log and go on.
    except Exception as error:  # noqa: BLE001
        _log.warning("telemetry: %s shutdown failed: %s", name, error)
        results[name] = False
    else:
        results[name] = True


def _signal_disabled(environ: Mapping[str, str], signal: str) -> bool:
    return (_get(environ, f"OTEL_{signal.upper()}_EXPORTER") or "").lower() == "none"


@dataclass(frozen=True)
class _Endpoint:
    """Where one signal goes over OTLP/HTTP, and how."""

    url: str
    protocol: Protocol
    headers: dict[str, str]
    timeout_s: float
    gzip: bool


def _endpoint(
    environ: Mapping[str, str],
    signal: str,
    default_timeout_s: float,
    folder: Path,
    warn: Callable[[str], None],
) -> _Endpoint | None:
    """The signal's OTLP/HTTP endpoint, or None for the local files (also when the configured
    protocol is one this project does not speak: said in one line, nothing lost)."""
    url = otlp_endpoint(environ, signal)
    if url is None:
        return None
    protocol = otlp_protocol(environ, signal)
    if not isinstance(protocol, Protocol):
        warn(
            f"coverage-gate: warning: OTLP protocol {protocol!r} is not supported "
            f"(http/protobuf, http/json); its telemetry goes to the local files in {folder}"
        )
        return None
    return _Endpoint(
        url=url,
        protocol=protocol,
        headers=_headers(environ, signal),
        timeout_s=export_timeout(environ, signal, default_timeout_s, warn),
        gzip=_compression_name(environ, signal) == "gzip",
    )


def _compression_name(environ: Mapping[str, str], signal: str) -> str:
    raw = _get(environ, f"OTEL_EXPORTER_OTLP_{signal.upper()}_COMPRESSION") or _get(
        environ, "OTEL_EXPORTER_OTLP_COMPRESSION"
    )
    return (raw or "").lower()


def _poster(endpoint: _Endpoint) -> OtlpPoster:
    return OtlpPoster(
        endpoint.url, endpoint.protocol, endpoint.headers, endpoint.timeout_s, endpoint.gzip
    )


def setup(
    environ: Mapping[str, str],
    *,
    service_version: str | None = None,
    export_timeout_s: float = EXPORT_TIMEOUT_S,
) -> Telemetry:
    """Build the providers for one run from ``environ`` (see the module docstring). Sets no
    global provider and registers no exit hook; call ``Telemetry.shutdown`` at the end."""
    if sdk_disabled(environ):
        return Telemetry(
            trace_api.NoOpTracerProvider(),
            metrics_api.NoOpMeterProvider(),
            {"traces": "disabled", "metrics": "disabled"},
        )
    resource = build_resource(environ, service_version)
    sinks: dict[str, str] = {}
    span_export: SpanExport | None = None
    tracer_provider: trace_api.TracerProvider = trace_api.NoOpTracerProvider()
    meter_provider: metrics_api.MeterProvider = metrics_api.NoOpMeterProvider()
    folder = default_telemetry_dir(environ)
    remote = False
    said: set[str] = set()

    def warn(message: str) -> None:  # the two signals share most settings: say each once
        if message not in said:
            said.add(message)
            _log.warning(message)

    if _signal_disabled(environ, "traces"):
        sinks["traces"] = "disabled"
    else:
        sdk_tracer = TracerProvider(resource=resource, shutdown_on_exit=False)
        endpoint = _endpoint(environ, "traces", export_timeout_s, folder, warn)
        exporter: SpanExporter
        if endpoint:
            exporter = HttpSpanExporter(_poster(endpoint))
            sinks["traces"] = f"otlp {endpoint.url}"
            remote = True
        else:
            exporter = JsonLinesSpanExporter(JsonLinesFile(folder, "traces"))
            sinks["traces"] = f"files {folder}"
        # Chunked on both sinks: a run with many tool-call spans writes a few lines (or
        # requests), never one per span, ending a span never waits on I/O, and none is dropped.
        span_export = SpanExport(exporter, warn=False)
        sdk_tracer.add_span_processor(span_export)
        tracer_provider = sdk_tracer

    if _signal_disabled(environ, "metrics"):
        sinks["metrics"] = "disabled"
    else:
        metric_endpoint = _endpoint(environ, "metrics", export_timeout_s, folder, warn)
        metric_exporter: MetricExporter
        if metric_endpoint:
            metric_exporter = HttpMetricExporter(_poster(metric_endpoint))
            sinks["metrics"] = f"otlp {metric_endpoint.url}"
            remote = True
        else:
            metric_exporter = JsonLinesMetricExporter(JsonLinesFile(folder, "metrics"))
            sinks["metrics"] = f"files {folder}"
        reader = PeriodicExportingMetricReader(
            metric_exporter,
            export_interval_millis=METRIC_INTERVAL_MS,
            export_timeout_millis=(
                metric_endpoint.timeout_s if metric_endpoint else export_timeout_s
            )
            * 1000,
        )
        meter_provider = MeterProvider(
            metric_readers=[reader], resource=resource, shutdown_on_exit=False
        )
    trouble = ExportTrouble() if remote else None
    return Telemetry(tracer_provider, meter_provider, sinks, span_export, trouble)
