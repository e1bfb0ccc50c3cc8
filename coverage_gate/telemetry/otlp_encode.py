"""OTLP JSON, encoded directly: the text the OTLP protobuf encoder, protobuf's JSON mapping
(``MessageToDict(..., use_integers_for_enums=True)``, trace and span ids in hex) and
``json.dumps(..., separators=(",", ":"))`` make of the same data, written as text without building
protobuf messages, SDK spans or dictionaries. No I/O, no clock.

Each function names the OTLP message it encodes. What the protobuf mapping does is followed to
the letter, because the local files must read the same either way:

- only fields that are set appear, in field-number order; a message field that is set but empty
  is ``{}``; a ``oneof`` member (an ``AnyValue``) appears even when it holds its default;
- 64-bit integers are strings, 32-bit ones numbers; enums are their numbers;
- an attribute value protobuf refuses (an integer outside 64 bits, a string that is not valid
  UTF-8, a type OTLP has no value for) is left out with a warning, as the SDK's encoder does.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring_ascii

__all__ = [
    "FLAGS_LOCAL_PARENT",
    "FLAGS_REMOTE_PARENT",
    "INT64_MAX",
    "INT64_MIN",
    "KIND_INTERNAL",
    "STATUS_ERROR",
    "UnencodableError",
    "any_value",
    "double",
    "event",
    "histogram_point",
    "key_values",
    "metric",
    "metrics_request",
    "number_point",
    "points",
    "resource",
    "resourced",
    "scope",
    "scoped",
    "span",
    "string",
    "trace_request",
]

_log = logging.getLogger(__name__)

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

#: ``Span.SpanKind.SPAN_KIND_INTERNAL``
KIND_INTERNAL = 1
#: ``Status.StatusCode.STATUS_CODE_ERROR``
STATUS_ERROR = 2
#: ``SpanFlags.SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK``: whether the parent is remote is known.
FLAGS_LOCAL_PARENT = 0x100
#: ``SpanFlags.SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK``: the parent is remote.
FLAGS_REMOTE_PARENT = 0x200

_TAIL = {False: f'"status":{{}},"flags":{FLAGS_LOCAL_PARENT}}}',
         True: f'"status":{{"code":{STATUS_ERROR}}},"flags":{FLAGS_LOCAL_PARENT}}}'}  # fmt: skip


class UnencodableError(ValueError):
    """A value protobuf would refuse."""


def string(value: str) -> str:
    """A JSON string, as ``json.dumps`` writes it (non-ASCII escaped); a string that is not
    valid UTF-8 (a lone surrogate) is refused, as protobuf refuses it."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise UnencodableError("not valid UTF-8") from None
    return encode_basestring_ascii(value)


def double(value: float) -> str:
    """A ``double`` field."""
    if math.isnan(value):
        return '"NaN"'
    if math.isinf(value):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    return float.__repr__(value)


def any_value(value: object) -> str:
    """``AnyValue``."""
    if value is None:
        return "{}"
    if isinstance(value, bool):
        return '{"boolValue":true}' if value else '{"boolValue":false}'
    if isinstance(value, str):
        return f'{{"stringValue":{string(value)}}}'
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise UnencodableError(f"Value out of range: {value}")
        return f'{{"intValue":"{int(value)}"}}'
    if isinstance(value, float):
        return f'{{"doubleValue":{double(value)}}}'
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        values = ",".join(any_value(item) for item in value)
        return f'{{"arrayValue":{{"values":[{values}]}}}}' if values else '{"arrayValue":{}}'
    raise UnencodableError(f"Invalid type {type(value)} of value {value}")


_KEYS: dict[str, str] = {}


def _key(key: str) -> str:
    """The opening of a ``KeyValue`` up to its value (attribute names repeat: kept)."""
    found = _KEYS.get(key)
    if found is None:
        found = f'{{"key":{string(key)},"value":' if key else '{"value":'
        if len(_KEYS) < 1024:
            _KEYS[key] = found
    return found


def key_values(attributes: Mapping[str, object] | None) -> str:
    """A repeated ``KeyValue`` (attributes), without its brackets; a value that cannot be
    encoded is left out."""
    out: list[str] = []
    keys = _KEYS
    for key, value in (attributes or {}).items():
        opening = keys.get(key) or _key(key)
        # the common cases first (a call's span holds little else), then every case
        if value.__class__ is str and value.isascii():
            out.append(f'{opening}{{"stringValue":{encode_basestring_ascii(value)}}}}}')
        elif value.__class__ is int and INT64_MIN <= value <= INT64_MAX:
            out.append(f'{opening}{{"intValue":"{value}"}}}}')
        else:
            try:
                out.append(f"{opening}{any_value(value)}}}")
            except UnencodableError as error:
                _log.warning("telemetry: attribute %s not exported: %s", key, error)
    return ",".join(out)


def event(
    name: str, time_ns: int, attributes: Mapping[str, object] | None, dropped_attributes: int = 0
) -> str:
    """``Span.Event``."""
    out = f'{{"timeUnixNano":"{time_ns}"'
    if name:
        out += f',"name":{string(name)}'
    encoded = key_values(attributes)
    if encoded:
        out += f',"attributes":[{encoded}]'
    if dropped_attributes:
        out += f',"droppedAttributesCount":{dropped_attributes}'
    return out + "}"


def span(
    *,
    trace_id: int,
    span_id: int,
    parent_id: int | None,
    name: str,
    start_ns: int,
    end_ns: int,
    attributes: Mapping[str, object] | None,
    events: Sequence[str] = (),
    dropped_events: int = 0,
    error: bool = False,
    kind: int = KIND_INTERNAL,
    dropped_attributes: int = 0,
    status: tuple[int, str | None] | None = None,
    remote_parent: bool = False,
) -> str:
    """``Span``: ``kind`` as OTLP numbers it; status unset, or error, or ``status`` (code and
    message) as given."""
    parts = [f'{{"traceId":"{trace_id:032x}","spanId":"{span_id:016x}",']
    if parent_id is not None:
        parts.append(f'"parentSpanId":"{parent_id:016x}",')
    if name:
        parts.append(f'"name":{string(name)},')
    if kind:
        parts.append(f'"kind":{kind},')
    parts.append(f'"startTimeUnixNano":"{start_ns}","endTimeUnixNano":"{end_ns}",')
    encoded = key_values(attributes)
    if encoded:
        parts.append(f'"attributes":[{encoded}],')
    if dropped_attributes:
        parts.append(f'"droppedAttributesCount":{dropped_attributes},')
    if events:
        parts.append(f'"events":[{",".join(events)}],')
    if dropped_events:
        parts.append(f'"droppedEventsCount":{dropped_events},')
    if status is None:
        parts.append(_TAIL[error])
        return "".join(parts)
    code, message = status
    fields = ([f'"message":{string(message)}'] if message else []) + (
        [f'"code":{code}'] if code else []
    )
    flags = FLAGS_LOCAL_PARENT | (FLAGS_REMOTE_PARENT if remote_parent else 0)
    parts.append(f'"status":{{{",".join(fields)}}},"flags":{flags}}}')
    return "".join(parts)


def resource(attributes: Mapping[str, object] | None) -> str:
    """``Resource``."""
    encoded = key_values(attributes)
    return f'{{"attributes":[{encoded}]}}' if encoded else "{}"


def scope(name: str, version: str | None = None) -> str:
    """``InstrumentationScope`` with a name and a version, no attributes."""
    fields = ([f'"name":{string(name)}'] if name else []) + (
        [f'"version":{string(version)}'] if version else []
    )
    return f"{{{','.join(fields)}}}"


def scoped(scope_json: str, key: str, items: Sequence[str]) -> str:
    """``ScopeSpans`` (``key`` "spans") or ``ScopeMetrics`` (``key`` "metrics")."""
    inner = f',"{key}":[{",".join(items)}]' if items else ""
    return f'{{"scope":{scope_json}{inner}}}'


def resourced(resource_json: str, key: str, items: Sequence[str]) -> str:
    """``ResourceSpans`` (``key`` "scopeSpans") or ``ResourceMetrics`` ("scopeMetrics")."""
    inner = f',"{key}":[{",".join(items)}]' if items else ""
    return f'{{"resource":{resource_json}{inner}}}'


def trace_request(resource_json: str, groups: Sequence[tuple[str, Sequence[str]]]) -> str:
    """``ExportTraceServiceRequest`` of one resource (``resource``'s text): spans grouped by
    scope (``scope``'s text), in order."""
    scopes = [scoped(scope_json, "spans", spans) for scope_json, spans in groups]
    return f'{{"resourceSpans":[{resourced(resource_json, "scopeSpans", scopes)}]}}'


# --- metrics -------------------------------------------------------------------------------------


def number_point(
    *, start_ns: int | None, time_ns: int, value: int | float, attributes: Mapping[str, object]
) -> str:
    """``NumberDataPoint`` (a sum's, with a start time, or a gauge's, without)."""
    out = f'{{"startTimeUnixNano":"{start_ns}",' if start_ns else "{"
    out += f'"timeUnixNano":"{time_ns}"'
    if isinstance(value, int) and not isinstance(value, bool):
        out += f',"asInt":"{value}"'
    else:
        out += f',"asDouble":{double(float(value))}'
    encoded = key_values(attributes)
    if encoded:
        out += f',"attributes":[{encoded}]'
    return out + "}"


def histogram_point(
    *,
    start_ns: int,
    time_ns: int,
    count: int,
    total: float,
    bucket_counts: Sequence[int],
    bounds: Sequence[float],
    attributes: Mapping[str, object],
    low: float,
    high: float,
) -> str:
    """``HistogramDataPoint`` with its sum, min and max."""
    out = f'{{"startTimeUnixNano":"{start_ns}","timeUnixNano":"{time_ns}"'
    if count:
        out += f',"count":"{count}"'
    out += f',"sum":{double(float(total))}'
    if bucket_counts:
        out += ',"bucketCounts":[' + ",".join(f'"{n}"' for n in bucket_counts) + "]"
    if bounds:
        out += ',"explicitBounds":[' + ",".join(double(float(b)) for b in bounds) + "]"
    encoded = key_values(attributes)
    if encoded:
        out += f',"attributes":[{encoded}]'
    return out + f',"min":{double(float(low))},"max":{double(float(high))}}}'


def metric(name: str, description: str, unit: str, data: str) -> str:
    """``Metric``: ``data`` is the text of its ``"gauge"``, ``"sum"`` or ``"histogram"`` field."""
    fields = [f'"name":{string(name)}'] if name else []
    if description:
        fields.append(f'"description":{string(description)}')
    if unit:
        fields.append(f'"unit":{string(unit)}')
    fields.append(data)
    return f"{{{','.join(fields)}}}"


def points(points_json: Sequence[str], temporality: int = 0, monotonic: bool = False) -> str:
    """The body of a ``Sum``, ``Gauge`` or ``Histogram``: its points, temporality, monotonicity."""
    fields = [f'"dataPoints":[{",".join(points_json)}]'] if points_json else []
    if temporality:
        fields.append(f'"aggregationTemporality":{temporality}')
    if monotonic:
        fields.append('"isMonotonic":true')
    return f"{{{','.join(fields)}}}"


def metrics_request(resources: Sequence[str]) -> str:
    """``ExportMetricsServiceRequest`` of ``resourced(..., "scopeMetrics", ...)`` texts."""
    return f'{{"resourceMetrics":[{",".join(resources)}]}}'
