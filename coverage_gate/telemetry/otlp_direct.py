"""A run's metrics and its spans on the local files, made without the OpenTelemetry SDK.

``DirectMeter`` aggregates as the SDK's meter provider does with the delta temporality this
project exports (``otel_setup``): a counter's amounts summed, a histogram's values counted in
its explicit buckets with their sum, min and max, one point per attribute set, each starting
when its set was first measured; instruments in the order they were first measured, points in
the order their sets were. ``MetricLines.close`` writes that as one ``ExportMetricsServiceRequest``
line, the line the SDK's collection at shutdown writes (``otel_sdk.metrics_line``), with no
periodic export before it: the runs that record metrics (``reconcile``) are short.

``DirectTracer`` makes spans as the SDK's tracer does under its default limits (a new trace
each, kind internal, at most ``SPAN_EVENT_LIMIT`` events, the oldest dropped and counted; the
``reconcile`` span's few dozen attributes are far within the SDK's 128) and hands them,
encoded (``otlp_encode.span``), to the run's ``SpanLines``, which writes them at exit as it
writes ``record``'s.

``otel_setup.Telemetry`` uses these for the local files unless the environment sets what only
the SDK applies (``SDK_SPAN_SETTINGS``, ``SDK_METRIC_SETTINGS``). No I/O here but through the
sink handed in; no OpenTelemetry package is imported.
"""

from __future__ import annotations

import bisect
import logging
import math
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from coverage_gate.telemetry import otlp_encode
from coverage_gate.telemetry.ports import SpanSink

__all__ = [
    "CARDINALITY_LIMIT",
    "DEFAULT_BOUNDS",
    "DELTA",
    "OVERFLOW_ATTRIBUTES",
    "SPAN_EVENT_LIMIT",
    "Clock",
    "DirectCounter",
    "DirectHistogram",
    "DirectMeter",
    "DirectSpan",
    "DirectTracer",
    "LineSink",
    "MetricLines",
]

_log = logging.getLogger(__name__)

#: The SDK's ``AggregationTemporality.DELTA``.
DELTA = 1
#: The SDK's bound on distinct attribute sets per instrument; past it, one overflow point.
CARDINALITY_LIMIT = 2000
OVERFLOW_ATTRIBUTES: Mapping[str, object] = {"otel.metric.overflow": True}
#: The SDK's default bounds of a histogram without advice, in its units.
DEFAULT_BOUNDS: tuple[float, ...] = (
    0.0, 5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0,
    7500.0, 10000.0,
)  # fmt: skip
#: The SDK's default bound on events per span (``OTEL_SPAN_EVENT_COUNT_LIMIT``).
SPAN_EVENT_LIMIT = 128

Clock = Callable[[], int]


class LineSink(Protocol):
    """Where a line goes (``_export.JsonLinesFile``), in ``folder``."""

    @property
    def folder(self) -> Path: ...

    def write_line(self, line: str) -> None: ...

    def close(self) -> None: ...


def _key(attributes: Mapping[str, object]) -> frozenset[tuple[str, object]]:
    return frozenset(
        (key, tuple(value) if isinstance(value, list) else value)
        for key, value in attributes.items()
    )


class _Point:
    """One attribute set's aggregation."""

    def __init__(self, attributes: Mapping[str, object], start_ns: int, buckets: int) -> None:
        self.attributes = dict(attributes)
        self.start_ns = start_ns
        self.value: int | float = 0
        self.count = 0
        self.total: int | float = 0
        self.low = math.inf
        self.high = -math.inf
        self.buckets = [0] * buckets


class _Instrument:
    def __init__(
        self,
        lines: MetricLines,
        scope: str,
        name: str,
        unit: str,
        description: str,
        bounds: Sequence[float] | None = None,
    ) -> None:
        self._lines = lines
        self.scope = scope
        self.name = name
        self.unit = unit
        self.description = description
        self.bounds = tuple(bounds) if bounds is not None else None
        self.points: dict[frozenset[tuple[str, object]], _Point] = {}

    def _point(self, attributes: Mapping[str, object] | None, at_ns: int) -> _Point:
        """The point of ``attributes``, made now if it is new (the caller holds the lock)."""
        given = attributes or {}
        key = _key(given)
        found = self.points.get(key)
        if found is None:
            if len(self.points) >= CARDINALITY_LIMIT:
                given, key = OVERFLOW_ATTRIBUTES, _key(OVERFLOW_ATTRIBUTES)
                found = self.points.get(key)
            if found is None:
                found = _Point(given, at_ns, len(self.bounds) + 1 if self.bounds else 0)
                self.points[key] = found
                self._lines.measured(self)
        return found

    def _accepts(self, amount: float, verb: str, kind: str) -> bool:
        if not math.isfinite(amount):
            _log.warning(
                "%s amount %s is not finite on %s %s, ignoring measurement.",
                verb,
                amount,
                kind,
                self.name,
            )
            return False
        if amount < 0:
            _log.warning("%s amount must be non-negative on %s %s.", verb, kind, self.name)
            return False
        return True


class DirectCounter(_Instrument):
    def add(
        self, amount: float, attributes: Mapping[str, object] | None = None, *_: object
    ) -> None:
        if not self._accepts(amount, "Add", "Counter"):
            return
        with self._lines.lock:
            point = self._point(attributes, self._lines.clock())
            point.value = point.value + amount

    def data(self, time_ns: int) -> str:
        points = [
            otlp_encode.number_point(
                start_ns=p.start_ns, time_ns=time_ns, value=p.value, attributes=p.attributes
            )
            for p in self.points.values()
        ]
        return f'"sum":{otlp_encode.points(points, DELTA, monotonic=True)}'


class DirectHistogram(_Instrument):
    def record(
        self, amount: float, attributes: Mapping[str, object] | None = None, *_: object
    ) -> None:
        if not self._accepts(amount, "Record", "Histogram"):
            return
        with self._lines.lock:
            point = self._point(attributes, self._lines.clock())
            point.count += 1
            point.total = point.total + amount
            point.low = min(point.low, amount)
            point.high = max(point.high, amount)
            point.buckets[bisect.bisect_left(self.bounds or (), amount)] += 1

    def data(self, time_ns: int) -> str:
        points = [
            otlp_encode.histogram_point(
                start_ns=p.start_ns,
                time_ns=time_ns,
                count=p.count,
                total=p.total,
                bucket_counts=p.buckets,
                bounds=self.bounds or (),
                attributes=p.attributes,
                low=p.low,
                high=p.high,
            )
            for p in self.points.values()
        ]
        return f'"histogram":{otlp_encode.points(points, DELTA)}'


class DirectMeter:
    """The instruments of one scope (``MetricLines.meter``); an instrument asked for again by
    name is the one made first, as the SDK's meter returns it."""

    def __init__(self, lines: MetricLines, scope: str) -> None:
        self._lines = lines
        self._scope = scope
        self._instruments: dict[tuple[str, str], _Instrument] = {}

    def create_counter(self, name: str, unit: str = "", description: str = "") -> DirectCounter:
        key = ("counter", name.strip().lower())
        found = self._instruments.get(key)
        if not isinstance(found, DirectCounter):
            found = DirectCounter(self._lines, self._scope, name, unit, description)
            self._instruments[key] = found
        return found

    def create_histogram(
        self,
        name: str,
        unit: str = "",
        description: str = "",
        *,
        explicit_bucket_boundaries_advisory: Sequence[float] | None = None,
    ) -> DirectHistogram:
        key = ("histogram", name.strip().lower())
        found = self._instruments.get(key)
        if not isinstance(found, DirectHistogram):
            bounds = explicit_bucket_boundaries_advisory
            found = DirectHistogram(
                self._lines,
                self._scope,
                name,
                unit,
                description,
                DEFAULT_BOUNDS if bounds is None else bounds,
            )
            self._instruments[key] = found
        return found


class MetricLines:
    """The run's metrics, written as one line to ``sink`` on ``close`` (nothing when nothing
    was measured)."""

    def __init__(
        self, sink: LineSink, resource: Mapping[str, str], *, clock: Clock = time.time_ns
    ) -> None:
        self.sink = sink
        self.clock = clock
        self.lock = threading.Lock()
        self._resource = otlp_encode.resource(resource)
        self._meters: dict[str, DirectMeter] = {}
        self._measured: list[_Instrument] = []
        self._closed = False

    def meter(self, scope: str) -> DirectMeter:
        if scope not in self._meters:
            self._meters[scope] = DirectMeter(self, scope)
        return self._meters[scope]

    def measured(self, instrument: _Instrument) -> None:
        """Called (under the lock) when ``instrument`` gets a new point."""
        if instrument not in self._measured:
            self._measured.append(instrument)

    def line(self) -> str | None:
        """The ``ExportMetricsServiceRequest`` of what was measured, collected now; ``None``
        when nothing was."""
        with self.lock:
            if not self._measured:
                return None
            now = self.clock()
            scopes: dict[str, list[str]] = {}
            for instrument in self._measured:
                assert isinstance(instrument, DirectCounter | DirectHistogram)  # noqa: S101
                scopes.setdefault(instrument.scope, []).append(
                    otlp_encode.metric(
                        instrument.name,
                        instrument.description,
                        instrument.unit,
                        instrument.data(now),
                    )
                )
        scoped = [
            otlp_encode.scoped(otlp_encode.scope(name), "metrics", metrics)
            for name, metrics in scopes.items()
        ]
        return otlp_encode.metrics_request(
            [otlp_encode.resourced(self._resource, "scopeMetrics", scoped)]
        )

    def close(self) -> None:
        """Write the line (once) and close the sink; a write that fails is logged, as the SDK's
        exporter logs it."""
        if self._closed:
            return
        self._closed = True
        line = self.line()
        try:
            if line is not None:
                self.sink.write_line(line)
        except OSError as error:
            _log.warning("telemetry: cannot write metrics to %s: %s", self.sink.folder, error)
        finally:
            self.sink.close()


# --- spans -----------------------------------------------------------------------------------


def _nonzero_bits(bits: int) -> int:
    while not (found := random.getrandbits(bits)):
        pass
    return found


class DirectSpan:
    """A span of its own trace, encoded and handed on when it ends (once)."""

    def __init__(
        self,
        tracer: DirectTracer,
        name: str,
        attributes: Mapping[str, object] | None,
        start_ns: int,
    ) -> None:
        self._tracer = tracer
        self._name = name
        self._attributes = dict(attributes or {})
        self._start_ns = start_ns
        self._events: list[str] = []
        self._dropped_events = 0
        self._ended = False

    def add_event(
        self,
        name: str,
        attributes: Mapping[str, object] | None = None,
        timestamp: int | None = None,
    ) -> None:
        if self._ended:
            return
        at = timestamp if timestamp is not None else self._tracer.clock()
        self._events.append(otlp_encode.event(name, at, attributes))
        if len(self._events) > SPAN_EVENT_LIMIT:
            del self._events[0]
            self._dropped_events += 1

    def end(self, end_time: int | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        self._tracer.sink.add(
            self._tracer.scope,
            otlp_encode.span(
                trace_id=_nonzero_bits(128),
                span_id=_nonzero_bits(64),
                parent_id=None,
                name=self._name,
                start_ns=self._start_ns,
                end_ns=end_time if end_time is not None else self._tracer.clock(),
                attributes=self._attributes,
                events=self._events,
                dropped_events=self._dropped_events,
            ),
        )


class DirectTracer:
    """Starts ``DirectSpan``s of scope ``scope`` (kind internal) into ``sink``."""

    def __init__(self, sink: SpanSink, scope: str, *, clock: Clock = time.time_ns) -> None:
        self.sink = sink
        self.scope = scope
        self.clock = clock

    def start_span(
        self,
        name: str,
        *,
        attributes: Mapping[str, object] | None = None,
        start_time: int | None = None,
    ) -> DirectSpan:
        start = start_time if start_time is not None else self.clock()
        return DirectSpan(self, name, attributes, start)
