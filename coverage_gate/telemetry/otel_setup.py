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
requests (or lines) of at most ``EXPORT_CHUNK_SPANS`` (``ChunkedExport``). None is dropped for
lack of room: a ``record`` of 10,000 calls ends 10,001 spans at once, which the SDK's batch
processor (a queue of 2,048 that drops the oldest) would cut to its last 2,048. After a failed
request the rest is not sent, and counted: the ``invoke_agent`` span ends last, so an export cut
short never carries the completion marker of calls it lost.

Start-up: nothing of OpenTelemetry is imported here. The SDK providers (``otel_sdk``) are built
when a run first asks for one. On the local files no command asks for one: spans are encoded
directly as OTLP JSON (``Telemetry.for_recording``, ``Telemetry.tracer``, ``SpanLines``), the
same spans the SDK would export, unless the environment sets something the SDK would apply to
them (a sampler, span limits: ``SDK_SPAN_SETTINGS``), when the SDK makes them; metrics are
aggregated and written directly (``Telemetry.meter``, ``otlp_direct.MetricLines``) as the SDK
would write them at exit, unless the environment sets what only the SDK applies to them
(``SDK_METRIC_SETTINGS``).


Exit: ``Telemetry.shutdown(budget_s)`` writes what was made directly for the local files (in the
calling thread: a local file is no collector), then flushes and shuts the SDK's providers down
in daemon threads.
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

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coverage_gate.edges.urls import redacted
from coverage_gate.telemetry._export import (
    ChunkedExport,
    Endpoint,
    ExportTrouble,
    JsonLinesFile,
    OtlpProtocol,
    SpanLines,
    env_value,
    parse_pairs,
    resource_attributes,
)
from coverage_gate.telemetry.ports import METER_NAME, TRACER_NAME

if TYPE_CHECKING:
    from opentelemetry import metrics as metrics_api
    from opentelemetry import trace as trace_api
    from opentelemetry.sdk.trace import TracerProvider

    from coverage_gate.telemetry.otel_sdk import SpanExport
    from coverage_gate.telemetry.otlp_direct import MetricLines
    from coverage_gate.telemetry.ports import Meter, SpanSink, Tracer

__all__ = [
    "EXPORT_TIMEOUT_S",
    "SDK_METRIC_SETTINGS",
    "SDK_SPAN_SETTINGS",
    "SHUTDOWN_BUDGET_S",
    "TELEMETRY_DIR_ENV",
    "Telemetry",
    "default_telemetry_dir",
    "export_timeout",
    "otlp_endpoint",
    "otlp_protocol",
    "sdk_disabled",
    "setup",
]

_log = logging.getLogger(__name__)

#: The most the process waits at exit for telemetry, in seconds.
SHUTDOWN_BUDGET_S = 2.5
#: One OTLP/HTTP export request (one attempt), in seconds.
EXPORT_TIMEOUT_S = 1.0
#: How often the exit wait looks at the export's progress, in seconds.
_PROGRESS_POLL_S = 0.05

TELEMETRY_DIR_ENV = "COVERAGE_GATE_TELEMETRY_DIR"

#: What the SDK reads from the environment and applies to spans as it makes them (a sampler;
#: bounds on attributes, their values and events). With any of these set, spans are made by the
#: SDK, so that they are what it would make.
SDK_SPAN_SETTINGS = frozenset(
    {
        "OTEL_TRACES_SAMPLER",
        "OTEL_TRACES_SAMPLER_ARG",
        "OTEL_ATTRIBUTE_COUNT_LIMIT",
        "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
        "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT",
        "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
        "OTEL_SPAN_EVENT_COUNT_LIMIT",
        "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT",
    }
)

#: What the SDK reads from the environment and applies to metrics (exemplars; its own metrics
#: beside the run's). With any of these set, metrics are recorded by the SDK.
SDK_METRIC_SETTINGS = frozenset(
    {"OTEL_METRICS_EXEMPLAR_FILTER", "OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED"}
)

_SIGNAL_PATHS = {"traces": "v1/traces", "metrics": "v1/metrics"}


# --- environment ------------------------------------------------------------------------------


def sdk_disabled(environ: Mapping[str, str]) -> bool:
    return (env_value(environ, "OTEL_SDK_DISABLED") or "").lower() == "true"


def default_telemetry_dir(environ: Mapping[str, str]) -> Path:
    """Where the embedded default writes and ``report`` reads."""
    explicit = env_value(environ, TELEMETRY_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state = env_value(environ, "XDG_STATE_HOME")
    base = (
        Path(state)
        if state
        else Path(env_value(environ, "HOME") or "~").expanduser() / ".local/state"
    )
    return base / "coverage-gate" / "telemetry"


def otlp_endpoint(environ: Mapping[str, str], signal: str) -> str | None:
    """The OTLP/HTTP URL for ``signal`` (``traces`` or ``metrics``), or None."""
    specific = env_value(environ, f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
    if specific:
        return specific
    base = env_value(environ, "OTEL_EXPORTER_OTLP_ENDPOINT")
    if base is None:
        return None
    return f"{base.rstrip('/')}/{_SIGNAL_PATHS[signal]}"


def _headers(environ: Mapping[str, str], signal: str) -> dict[str, str]:
    specific = env_value(environ, f"OTEL_EXPORTER_OTLP_{signal.upper()}_HEADERS")
    return parse_pairs(specific or env_value(environ, "OTEL_EXPORTER_OTLP_HEADERS"))


def otlp_protocol(environ: Mapping[str, str], signal: str) -> OtlpProtocol | str:
    """The protocol for ``signal``: an ``OtlpProtocol``, or the unsupported value as given."""
    raw = env_value(environ, f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL") or env_value(
        environ, "OTEL_EXPORTER_OTLP_PROTOCOL"
    )
    if raw is None:
        return OtlpProtocol.PROTOBUF
    try:
        return OtlpProtocol(raw.lower())
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
    raw = env_value(environ, name)
    if raw is None:
        name, raw = "OTEL_EXPORTER_OTLP_TIMEOUT", env_value(environ, "OTEL_EXPORTER_OTLP_TIMEOUT")
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


def _endpoint(
    environ: Mapping[str, str],
    signal: str,
    default_timeout_s: float,
    folder: Path,
    warn: Callable[[str], None],
) -> Endpoint | None:
    """The signal's OTLP/HTTP endpoint, or None for the local files (also when the configured
    protocol is one this project does not speak: said in one line, nothing lost)."""
    url = otlp_endpoint(environ, signal)
    if url is None:
        return None
    protocol = otlp_protocol(environ, signal)
    if not isinstance(protocol, OtlpProtocol):
        warn(
            f"coverage-gate: warning: OTLP protocol {protocol!r} is not supported "
            f"(http/protobuf, http/json); its telemetry goes to the local files in {folder}"
        )
        return None
    return Endpoint(
        url=url,
        protocol=protocol,
        headers=_headers(environ, signal),
        timeout_s=export_timeout(environ, signal, default_timeout_s, warn),
        gzip=_compression_name(environ, signal) == "gzip",
    )


def _compression_name(environ: Mapping[str, str], signal: str) -> str:
    raw = env_value(environ, f"OTEL_EXPORTER_OTLP_{signal.upper()}_COMPRESSION") or env_value(
        environ, "OTEL_EXPORTER_OTLP_COMPRESSION"
    )
    return (raw or "").lower()


# --- providers --------------------------------------------------------------------------------


class _Plan:
    """What ``setup`` read from the environment (said once, there), to build each provider when
    first asked."""

    def __init__(self, environ: Mapping[str, str], service_version: str | None, timeout: float):
        said: set[str] = set()

        def warn(message: str) -> None:  # the two signals share most settings: say each once
            if message not in said:
                said.add(message)
                _log.warning(message)

        self.resource = resource_attributes(environ, service_version)
        self.folder = default_telemetry_dir(environ)
        self.timeout = timeout
        self.enabled = {signal: not _signal_disabled(environ, signal) for signal in _SIGNAL_PATHS}
        self.endpoints = {
            signal: _endpoint(environ, signal, timeout, self.folder, warn) if on else None
            for signal, on in self.enabled.items()
        }
        self.direct_spans = (
            self.enabled["traces"]
            and self.endpoints["traces"] is None
            and not any(name in environ for name in SDK_SPAN_SETTINGS)
        )
        self.direct_metrics = (
            self.enabled["metrics"]
            and self.endpoints["metrics"] is None
            and not any(name in environ for name in SDK_METRIC_SETTINGS)
        )

    @property
    def remote(self) -> bool:
        return any(endpoint is not None for endpoint in self.endpoints.values())

    def sinks(self) -> dict[str, str]:
        sinks: dict[str, str] = {}
        for signal, on in self.enabled.items():
            endpoint = self.endpoints[signal]
            if not on:
                sinks[signal] = "disabled"
            elif endpoint is not None:
                sinks[signal] = f"otlp {redacted(endpoint.url)}"  # said in warnings
            else:
                sinks[signal] = f"files {self.folder}"
        return sinks

    def tracer_provider(self) -> tuple[trace_api.TracerProvider, SpanExport | None]:
        if not self.enabled["traces"]:
            from opentelemetry import trace as trace_api  # noqa: PLC0415 - lazy

            return trace_api.NoOpTracerProvider(), None
        from coverage_gate.telemetry import otel_sdk  # noqa: PLC0415 - the SDK, when first asked for

        return otel_sdk.tracer_provider(
            otel_sdk.build_resource_from(self.resource),
            self.folder,
            self.endpoints["traces"],
            self.timeout,
        )

    def meter_provider(self) -> metrics_api.MeterProvider:
        if not self.enabled["metrics"]:
            from opentelemetry import metrics as metrics_api  # noqa: PLC0415 - lazy

            return metrics_api.NoOpMeterProvider()
        from coverage_gate.telemetry import otel_sdk  # noqa: PLC0415 - the SDK, when first asked for

        return otel_sdk.meter_provider(
            otel_sdk.build_resource_from(self.resource),
            self.folder,
            self.endpoints["metrics"],
            self.timeout,
        )


class Telemetry:
    """The providers of one run, each built when first asked for, and how to end them.
    ``sinks`` says where each signal goes (``otlp <url>``, ``files <folder>``, ``disabled``),
    for logs and tests. Providers passed in are used as they are."""

    def __init__(
        self,
        tracer_provider: trace_api.TracerProvider | None = None,
        meter_provider: metrics_api.MeterProvider | None = None,
        sinks: dict[str, str] | None = None,
        span_export: SpanExport | None = None,
        trouble: ExportTrouble | None = None,
        *,
        plan: _Plan | None = None,
    ) -> None:
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self.sinks = sinks if sinks is not None else (plan.sinks() if plan else {})
        self.span_export = span_export
        #: Collects the SDK's export lines while an endpoint is used; None for files only.
        self.trouble = (
            trouble
            if trouble is not None
            else (ExportTrouble() if plan is not None and plan.remote else None)
        )
        self.span_lines: SpanLines | None = None
        self.metric_lines: MetricLines | None = None
        self._plan = plan
        self._done = False

    @property
    def tracer_provider(self) -> trace_api.TracerProvider:
        if self._tracer_provider is None:
            if self._plan is None:
                from opentelemetry import trace as trace_api  # noqa: PLC0415 - lazy

                self._tracer_provider = trace_api.NoOpTracerProvider()
            else:
                self._tracer_provider, self.span_export = self._plan.tracer_provider()
        return self._tracer_provider

    @property
    def meter_provider(self) -> metrics_api.MeterProvider:
        if self._meter_provider is None:
            if self._plan is None:
                from opentelemetry import metrics as metrics_api  # noqa: PLC0415 - lazy

                self._meter_provider = metrics_api.NoOpMeterProvider()
            else:
                self._meter_provider = self._plan.meter_provider()
        return self._meter_provider

    def tracer(self) -> Tracer:
        """The run's tracer: spans encoded directly into the local files (``DirectTracer``),
        or the SDK's."""
        if self._tracer_provider is None and self._plan is not None and self._plan.direct_spans:
            from coverage_gate.telemetry.otlp_direct import DirectTracer  # noqa: PLC0415 - when used

            return DirectTracer(self._span_lines(self._plan), TRACER_NAME)
        return self.tracer_provider.get_tracer(TRACER_NAME)

    def meter(self) -> Meter:
        """The run's meter: metrics aggregated and written directly into the local files
        (``MetricLines``), or the SDK's."""
        plan = self._plan
        if self._meter_provider is None and plan is not None and plan.direct_metrics:
            if self.metric_lines is None:
                from coverage_gate.telemetry.otlp_direct import MetricLines  # noqa: PLC0415 - when used

                self.metric_lines = MetricLines(
                    JsonLinesFile(plan.folder, "metrics"), plan.resource
                )
            return self.metric_lines.meter(METER_NAME)
        return self.meter_provider.get_meter(METER_NAME)

    def _span_lines(self, plan: _Plan) -> SpanLines:
        if self.span_lines is None:
            self.span_lines = SpanLines(
                JsonLinesFile(plan.folder, "traces"), plan.resource, warn=False
            )
        return self.span_lines

    def for_recording(self) -> tuple[TracerProvider | None, SpanSink | None]:
        """Where a recorder's spans go: a sink that takes them encoded directly (the local
        files), or an SDK tracer provider (an OTLP endpoint, or settings only the SDK applies),
        or neither (traces off)."""
        plan = self._plan
        if self._tracer_provider is None:
            if plan is None or not plan.enabled["traces"]:
                return None, None
            if plan.direct_spans:
                return None, self._span_lines(plan)
        from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415 - the SDK path

        provider = self.tracer_provider
        return (provider if isinstance(provider, TracerProvider) else None), None

    def shutdown(self, budget_s: float = SHUTDOWN_BUDGET_S) -> bool:
        """Flush and shut down what the run built, waiting while the span export makes progress
        and at most ``budget_s`` past the start or the last completed request.

        Returns whether everything finished in time and without error. Never raises: a telemetry
        failure must not change a decision or an exit code.
        """
        if self._done:
            return True
        self._done = True
        budget = max(budget_s, 0.0)
        began = time.monotonic()
        results: dict[str, bool] = {}
        for name, stop in self._local_stoppers():
            _quietly(name, stop, results)
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
                last = max([began, *(export.progress_at for export in self._exports())])
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

    def _exports(self) -> list[ChunkedExport[Any]]:
        return [export for export in (self.span_export, self.span_lines) if export is not None]

    def _unsent(self) -> str:
        ended = sum(export.ended for export in self._exports())
        exported = sum(export.exported for export in self._exports())
        if exported >= ended:
            return ""
        return f"{ended - exported} of {ended} span(s) not exported"

    def _local_stoppers(self) -> list[tuple[str, Callable[[], object]]]:
        """What writes the local files directly: done in the calling thread."""
        stoppers: list[tuple[str, Callable[[], object]]] = []
        if self.span_lines is not None:
            stoppers.append(("spans", self.span_lines.close))
        if self.metric_lines is not None:
            stoppers.append(("metrics", self.metric_lines.close))
        return stoppers

    def _stoppers(self) -> list[tuple[str, Callable[[], object]]]:
        """The SDK's providers: shut down in daemon threads, within the budget."""
        stoppers: list[tuple[str, Callable[[], object]]] = []
        for name, provider in (
            ("traces", self._tracer_provider),
            ("metrics", self._meter_provider),
        ):
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
    return (env_value(environ, f"OTEL_{signal.upper()}_EXPORTER") or "").lower() == "none"


def setup(
    environ: Mapping[str, str],
    *,
    service_version: str | None = None,
    export_timeout_s: float = EXPORT_TIMEOUT_S,
) -> Telemetry:
    """The telemetry of one run, from ``environ`` (see the module docstring). Sets no global
    provider and registers no exit hook; call ``Telemetry.shutdown`` at the end."""
    if sdk_disabled(environ):
        return Telemetry(sinks={"traces": "disabled", "metrics": "disabled"})
    return Telemetry(plan=_Plan(environ, service_version, export_timeout_s))
