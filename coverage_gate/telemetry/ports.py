"""The telemetry ports: what record and rollout write their signals to, and the scope names.

``Meter`` and ``Tracer`` (with their ``Counter``, ``Histogram`` and ``Span``) are the parts of
OpenTelemetry's API that ``coverage_gate.rollout.metrics`` uses; ``SpanSink`` is where
``coverage_gate.record.spans`` puts the spans it encodes directly as OTLP JSON. The SDK's meter and
tracer, and the direct ones of the local files (``otlp_direct``, ``_export.SpanLines``), are
such. ``METER_NAME`` and ``TRACER_NAME`` name the instrumentation scope of everything the run
records. Protocols and names only: no OpenTelemetry package is imported, nothing is built here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeAlias

__all__ = [
    "METER_NAME",
    "TRACER_NAME",
    "AttributeValue",
    "Attributes",
    "Counter",
    "Histogram",
    "Meter",
    "Span",
    "SpanSink",
    "Tracer",
]

METER_NAME = "coverage_gate"
TRACER_NAME = "coverage_gate"

#: The attribute values the run records.
AttributeValue: TypeAlias = str | bool | int | float | Sequence[str]
Attributes: TypeAlias = Mapping[str, AttributeValue]


class Counter(Protocol):
    def add(self, amount: int | float, attributes: Attributes | None = None) -> None: ...


class Histogram(Protocol):
    def record(self, amount: int | float, attributes: Attributes | None = None) -> None: ...


class Meter(Protocol):
    def create_counter(self, name: str, unit: str = "", description: str = "") -> Counter: ...

    def create_histogram(
        self,
        name: str,
        unit: str = "",
        description: str = "",
        *,
        explicit_bucket_boundaries_advisory: Sequence[float] | None = None,
    ) -> Histogram: ...


class Span(Protocol):
    def add_event(
        self, name: str, attributes: Attributes | None = None, timestamp: int | None = None
    ) -> None: ...

    def end(self, end_time: int | None = None) -> None: ...


class Tracer(Protocol):
    def start_span(
        self, name: str, *, attributes: Attributes | None = None, start_time: int | None = None
    ) -> Span: ...


class SpanSink(Protocol):
    """Where spans encoded directly (OTLP JSON text, ``otlp_encode.span``) go, with the name of
    their instrumentation scope."""

    def add(self, scope: str, span: str) -> None: ...
