"""Reading a big telemetry folder for the report: streamed, typed, and on every core.

``scan_folder`` reads what ``otlp.load_folder`` reads and counts it the same, byte for byte in the
report, but folds each review into its repository's ``ReviewTally`` as it is read instead of keeping
it (a ``Tallied``), so memory grows with the repositories (and by some 30 bytes a review: its key in
a half-empty table, its duration), not with the reviews' records.

Each line is decoded by msgspec into structs holding only the fields the report reads, their
kinds checked as they are decoded and the integer text of the attributes read checked after. A
line those types do not fit exactly (not JSON, not the OTLP shape, an integer written in a way
Python reads and the types do not, a value of the wrong kind, a number past Python's limits) is
read again, whole, by the report's own reader (``otlp``), which decides what it is and says why it
is malformed in the same words as ever: this fast path only ever takes lines whose meaning is the
same under both, and folds nothing of a line it gives up.

Files are read in parallel, one per worker process. Each returns its own tally and the keys of
its review spans; the parent folds the files' tallies in name order, and a file holding a span
some earlier file held (a copy, a Collector's file beside a run's) is read again in the parent
against every key seen so far, so that the same span counts once, the first time it is read.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import re
from array import array
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from operator import attrgetter
from pathlib import Path
from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from coverage_gate.contracts import review_span as span_names
from coverage_gate.contracts.model import Depth, DepthPolicy
from coverage_gate.rollout import metrics as m
from coverage_gate.rollout.report.folder import FolderInput, Tallied
from coverage_gate.rollout.report.otlp import (
    _DELTA,
    CONTENT_KEYS,
    MISMATCH_KEYS,
    end_file,
    fold_error_point,
    folder_files,
    read_line,
)
from coverage_gate.rollout.report.records import ReviewerRecord, ReviewRecord, SpanKeys, span_key

__all__ = ["PARALLEL_BYTES", "read_file", "scan_folder"]

#: Below this many bytes in all, a folder is read in this process (workers cost more to start).
PARALLEL_BYTES = 64 * 1024 * 1024
_BOM = b"\xef\xbb\xbf"

# An integer written as a string that Python's int() reads to the same number, and only those:
# a sign, leading blanks, underscores or digits other than ASCII go to the report's own reader.
_INT_TEXT = r"^-?[0-9]{1,4000}\Z"
_IntText = Annotated[str, msgspec.Meta(pattern=_INT_TEXT)]


class _Array(msgspec.Struct, gc=False):
    values: list[_Item] | None = None


class _Item(msgspec.Struct, gc=False):
    """A value in an array (rare and small: its integer text is checked as it is decoded)."""

    stringValue: str | UnsetType = UNSET  # noqa: N815 - OTLP's names
    boolValue: bool | UnsetType = UNSET  # noqa: N815
    intValue: int | _IntText | UnsetType = UNSET  # noqa: N815
    doubleValue: int | float | UnsetType = UNSET  # noqa: N815
    arrayValue: _Array | UnsetType = UNSET  # noqa: N815


class _Value(msgspec.Struct, gc=False):
    """An attribute's value. Its integer text is checked by ``_attributes``, for the attributes
    the report's reader reads (checking each as it is decoded costs as much as the decoding)."""

    stringValue: str | UnsetType = UNSET  # noqa: N815 - OTLP's names
    boolValue: bool | UnsetType = UNSET  # noqa: N815
    intValue: int | str | UnsetType = UNSET  # noqa: N815
    doubleValue: int | float | UnsetType = UNSET  # noqa: N815
    arrayValue: _Array | UnsetType = UNSET  # noqa: N815


class _KeyValue(msgspec.Struct, gc=False):
    key: str = ""
    # A missing value is no value (otlp: ``entry.get("value", {})``).
    value: _Value = msgspec.field(default_factory=_Value)


class _Event(msgspec.Struct, gc=False):
    name: str | None = None
    attributes: list[_KeyValue] | None = None


class _Span(msgspec.Struct, gc=False):
    name: str | None = None
    traceId: str = ""  # noqa: N815
    spanId: str = ""  # noqa: N815
    startTimeUnixNano: int | _IntText = 0  # noqa: N815
    endTimeUnixNano: int | _IntText = 0  # noqa: N815
    attributes: list[_KeyValue] | None = None
    events: list[_Event] | None = None


class _ScopeSpans(msgspec.Struct, gc=False):
    spans: list[_Span] | None = None


class _ResourceSpans(msgspec.Struct, gc=False):
    scopeSpans: list[_ScopeSpans] | None = None  # noqa: N815


class _Point(msgspec.Struct, gc=False):
    attributes: list[_KeyValue] | None = None
    asInt: int | _IntText | UnsetType = UNSET  # noqa: N815
    asDouble: int | float | UnsetType = UNSET  # noqa: N815
    startTimeUnixNano: int | _IntText = 0  # noqa: N815


class _Sum(msgspec.Struct, gc=False):
    aggregationTemporality: int | _IntText = _DELTA  # noqa: N815
    dataPoints: list[_Point] | None = None  # noqa: N815


class _Metric(msgspec.Struct, gc=False):
    name: str | None = None
    # Only the errors metric's is read: the others' are skipped, as the report's reader does.
    sum: msgspec.Raw | UnsetType = UNSET


class _ScopeMetrics(msgspec.Struct, gc=False):
    metrics: list[_Metric] | None = None


class _ResourceMetrics(msgspec.Struct, gc=False):
    scopeMetrics: list[_ScopeMetrics] | None = None  # noqa: N815


class _Request(msgspec.Struct, gc=False):
    resourceSpans: list[_ResourceSpans] | UnsetType | None = UNSET  # noqa: N815
    resourceMetrics: list[_ResourceMetrics] | UnsetType | None = UNSET  # noqa: N815


_REQUEST = msgspec.json.Decoder(_Request)
_SUM = msgspec.json.Decoder(_Sum)


class _NotPlainError(Exception):
    """A line the typed path does not read exactly as the report's reader: read it with that."""


# --- a span's attributes, as the report's reader sees them ----------------------------------


_NOTHING = _Value()  # what a missing attribute reads as: no value of any kind
_Attributes = dict[str, _Value]


_INT_OF = attrgetter("value.intValue")
_INT_MATCH = re.compile(_INT_TEXT).match
# Integer values (and integer text int() reads as the types do) already met, to check each
# distinct one once; bounded in number and in length (a 64-bit integer has at most 20 digits).
_CHECKED: set[object] = {UNSET}
_CHECKED_MAX = 65_536
_CHECKED_DIGITS = 21


def _attributes(raw: list[_KeyValue] | None) -> _Attributes:
    """The attributes by key (the last of a key wins), each integer text checked as the report's
    reader would read it: ``_NotPlainError`` for one it reads otherwise or refuses."""
    if raw is None:
        return {}
    numbers = set(map(_INT_OF, raw))
    if not numbers <= _CHECKED:
        for number in numbers - _CHECKED:
            if isinstance(number, str) and not _INT_MATCH(number):
                raise _NotPlainError
            if len(_CHECKED) < _CHECKED_MAX and len(str(number)) <= _CHECKED_DIGITS:
                _CHECKED.add(number)
    return {kv.key: kv.value for kv in raw}


# Each accessor is otlp's of the same name, on the value otlp's ``_any_value`` reads: the
# first kind of value set, in the order stringValue, boolValue, intValue, doubleValue,
# arrayValue (the types guarantee that it reads each without fail).


def _str(a: _Attributes, key: str, default: str = "") -> str:
    text = a.get(key, _NOTHING).stringValue
    return default if text is UNSET else text


def _count(a: _Attributes, key: str) -> int:
    value = a.get(key, _NOTHING)
    number = value.intValue
    if number is UNSET or value.stringValue is not UNSET or value.boolValue is not UNSET:
        return 0
    return number if number.__class__ is int else int(number)


def _flag(a: _Attributes, key: str, default: bool = False) -> bool:
    value = a.get(key, _NOTHING)
    flag = value.boolValue
    return default if flag is UNSET or value.stringValue is not UNSET else flag


def _strings(a: _Attributes, key: str) -> tuple[str, ...]:
    value = a.get(key, _NOTHING)
    array = value.arrayValue
    if (
        array is UNSET
        or not array.values
        or value.stringValue is not UNSET
        or value.boolValue is not UNSET
        or value.intValue is not UNSET
        or value.doubleValue is not UNSET
    ):
        return ()
    return tuple(v.stringValue for v in array.values if v.stringValue is not UNSET)


def _number(a: _Attributes, key: str) -> float | None:
    """A number attribute as a float (otlp: ``float(v)`` of an int or float, not a bool)."""
    value = a.get(key, _NOTHING)
    if value.stringValue is not UNSET or value.boolValue is not UNSET:
        return None
    number = value.intValue
    if number is not UNSET:
        return float(number if number.__class__ is int else int(number))
    double = value.doubleValue
    return None if double is UNSET else float(double)


def _counted(a: _Attributes, keys: tuple[tuple[str, str], ...]) -> tuple[tuple[str, int], ...]:
    """``otlp._content_outcomes`` and ``otlp._mismatches`` of typed attributes."""
    found = ((name, _count(a, key)) for name, key in keys)
    return tuple((name, n) for name, n in found if n > 0)


def _reviewer(event: _Event) -> ReviewerRecord:
    a = _attributes(event.attributes)
    return ReviewerRecord(
        agent=_str(a, span_names.A_AGENT),
        format=_str(a, span_names.A_FORMAT, m.FORMAT_UNKNOWN),
        capability=_str(a, span_names.A_CAPABILITY, m.CAPABILITY_ABSENT),
        complete=_flag(a, span_names.A_COMPLETE),
        truncated=_flag(a, span_names.A_TRUNCATED),
        stale=_flag(a, span_names.A_STALE),
        failed=_flag(a, span_names.A_FAILED),
        would_downgrade=_flag(a, span_names.A_WOULD_DOWNGRADE),
        unsupported_files=_strings(a, span_names.A_UNSUPPORTED_PATHS),
        unsupported_dropped=_count(a, span_names.A_UNSUPPORTED_DROPPED),
        shallow_files=_strings(a, span_names.A_SHALLOW_PATHS),
        failed_citations=_strings(a, span_names.A_FAILED_CITATIONS),
        content=_counted(a, CONTENT_KEYS),
        mismatches=_counted(a, MISMATCH_KEYS),
        client_version=_str(a, span_names.A_CLIENT_VERSION, m.VERSION_NONE),
        drift=_str(a, span_names.A_DRIFT),
        drift_kinds=_strings(a, span_names.A_DRIFT_KINDS),
    )


_ACCEPT = DepthPolicy.ACCEPT.value
_DEPTH_KEYS = tuple((d.value, f"{span_names.A_DEPTH_PREFIX}{d.value}") for d in Depth)


def _review(span: _Span) -> ReviewRecord | None:
    """``otlp._review`` of a typed span."""
    name = span.name
    if name is None or not name.startswith(span_names.SPAN_PREFIX):
        return None
    a = _attributes(span.attributes)
    if span_names.A_OUTCOME not in a:
        return None
    end = span.endTimeUnixNano
    end = end if end.__class__ is int else int(end)
    duration = _number(a, span_names.A_DURATION)
    if duration is None:
        start = span.startTimeUnixNano
        start = start if start.__class__ is int else int(start)
        duration = max(end - start, 0) / 1e9
    events = span.events
    return ReviewRecord(
        repository=_str(a, span_names.A_REPOSITORY, name.removeprefix(span_names.SPAN_PREFIX)),
        revision=_str(a, span_names.A_REVISION),
        mode=_str(a, span_names.A_MODE),
        mode_source=_str(a, span_names.A_MODE_SOURCE),
        outcome=_str(a, span_names.A_OUTCOME),
        verdict_in=_str(a, span_names.A_VERDICT_IN),
        reasons=_strings(a, span_names.A_REASONS),
        claimed=_count(a, span_names.A_CLAIMED),
        unsupported=_count(a, span_names.A_UNSUPPORTED),
        unknown=_count(a, span_names.A_UNKNOWN),
        duration_s=duration,
        end_ns=end,
        reviewers=()
        if events is None
        else tuple(_reviewer(e) for e in events if e.name == span_names.REVIEWER_EVENT),
        depth_policy=_str(a, span_names.A_DEPTH_POLICY, _ACCEPT),
        depths={depth: _count(a, key) for depth, key in _DEPTH_KEYS},
        would_downgrade_under=_strings(a, span_names.A_WOULD_DOWNGRADE_UNDER)
        if span_names.A_WOULD_DOWNGRADE_UNDER in a
        else None,
        citations_replayed=_count(a, span_names.A_CITATIONS),
        citations_failed=_count(a, span_names.A_CITATIONS_FAILED),
        citations_would_downgrade=_flag(a, span_names.A_CITATIONS_WOULD_DOWNGRADE)
        if span_names.A_CITATIONS_WOULD_DOWNGRADE in a
        else None,
    )


# --- one line -------------------------------------------------------------------------------


def _spans_line(loaded: FolderInput, request: list[_ResourceSpans]) -> None:
    seen = loaded.seen_spans
    found: list[tuple[int, ReviewRecord]] = []
    here: set[int] = set()
    for resource in request:
        for scope in resource.scopeSpans or ():
            for span in scope.spans or ():
                key = span_key(span.traceId, span.spanId)
                if key and (key in here or key in seen):
                    continue
                review = _review(span)
                if review is not None:
                    if key:
                        here.add(key)
                    found.append((key, review))
    # Only a line read whole is folded (a line read in part is the report reader's to judge).
    for key, review in found:
        if key:
            seen.add(key)
        loaded.add_review(review)


def _metrics_line(
    loaded: FolderInput,
    request: list[_ResourceMetrics],
    cumulative: dict[tuple[str, str, int], int],
) -> None:
    points: list[tuple[str, str, int, int, int]] = []
    for resource in request:
        for scope in resource.scopeMetrics or ():
            for metric in scope.metrics or ():
                if metric.name != m.ERRORS.name:
                    continue
                total = _Sum() if metric.sum is UNSET else _SUM.decode(metric.sum)
                temporality = total.aggregationTemporality
                temporality = temporality if isinstance(temporality, int) else int(temporality)
                for point in total.dataPoints or ():
                    a = _attributes(point.attributes)
                    if point.asInt is not UNSET:
                        raw = point.asInt
                        value = raw if isinstance(raw, int) else int(raw)
                    elif point.asDouble is not UNSET:
                        value = int(point.asDouble)
                    else:
                        value = 0
                    start = point.startTimeUnixNano
                    start = start if isinstance(start, int) else int(start)
                    points.append(
                        (_str(a, "repository"), _str(a, "kind"), temporality, start, value)
                    )
    for repo, kind, temporality, start, value in points:
        fold_error_point(loaded, cumulative, repo, kind, temporality, start, value)


# Python's json refuses an integer of more than 4,300 digits anywhere in a line; msgspec skips
# one in a field not read. Such a run holds the stretch between two multiples of half that, so
# a look at every such multiple finds any candidate line, which the report's reader then judges.
_HALF_LIMIT = 2150
_HALF_RUN = re.compile(rb"[0-9]{%d}" % _HALF_LIMIT)
_LONG_RUN = re.compile(rb"[0-9]{4301}")


def _maybe_too_long(data: bytes) -> bool:
    for at in range(0, len(data), _HALF_LIMIT):
        if 48 <= data[at] <= 57 and _HALF_RUN.match(data, at):
            return _LONG_RUN.search(data) is not None
    return False


def _read_plain(
    loaded: FolderInput, data: bytes, cumulative: dict[tuple[str, str, int], int]
) -> None:
    """Fold one line of the shapes the types read exactly; raise ``_NotPlainError`` before
    folding anything otherwise."""
    if _maybe_too_long(data):
        raise _NotPlainError
    try:
        request = _REQUEST.decode(data)
        if request.resourceSpans is not UNSET:
            _spans_line(loaded, request.resourceSpans or [])
        elif request.resourceMetrics is not UNSET:
            _metrics_line(loaded, request.resourceMetrics or [], cumulative)
        else:
            raise _NotPlainError
    except (msgspec.MsgspecError, RecursionError, OverflowError):
        # OverflowError: an integer too large for a float, before anything was folded
        raise _NotPlainError from None


# --- one file -------------------------------------------------------------------------------


def _universal_lines(data: bytes) -> Iterator[str]:
    """A line holding a carriage return, split as a text file opened by the report's reader
    splits it (\\r, \\r\\n and \\n all end a line)."""
    return iter(io.StringIO(data.decode("utf-8", "replace"), newline=None))


def _read_data(
    loaded: FolderInput,
    name: str,
    number: int,
    data: bytes,
    cumulative: dict[tuple[str, str, int], int],
) -> int:
    """Fold one line of a file as read in binary (its end included); the number of the last
    line it held (a carriage return inside ends a line too, as it does in the report's reader)."""
    if data.endswith(b"\r\n") and data.count(b"\r") == 1:
        data = data[:-2]  # a line of a file written with CRLF
    elif b"\r" in data:
        for text in _universal_lines(data):
            number += 1
            if text.strip():
                loaded.lines += 1
                read_line(loaded, name, number, text, cumulative)
        return number
    number += 1
    if not data.strip():
        return number
    try:
        _read_plain(loaded, data, cumulative)
    except _NotPlainError:
        text = data.decode("utf-8", "replace")
        if text.strip():
            loaded.lines += 1
            read_line(loaded, name, number, text, cumulative)
    else:
        loaded.lines += 1
    return number


def read_file(loaded: FolderInput, path: Path) -> None:
    """Fold one file into ``loaded`` as ``otlp.load_folder`` does, line for line."""
    loaded.files += 1
    cumulative: dict[tuple[str, str, int], int] = {}
    number = 0
    try:
        with path.open("rb") as handle:
            first = handle.readline()
            # A byte-order mark opening a file is not part of its first line.
            if first:
                number = _read_data(loaded, path.name, number, first.removeprefix(_BOM), cumulative)
            for data in handle:
                number = _read_data(loaded, path.name, number, data, cumulative)
    except OSError:
        loaded.unreadable_files.append(path.name)
        return
    end_file(loaded, cumulative)


def _read_apart(job: tuple[Path, bool]) -> tuple[Tallied, array[int]]:
    """A worker's reading of one file, on its own: what it counted, and the keys of its review
    spans (compact, for the parent to check against every file before it)."""
    path, list_flagged = job
    part = Tallied(flagged=[] if list_flagged else None)
    read_file(part, path)
    keys = part.seen_spans.held()
    part.seen_spans = SpanKeys()
    return part, keys


def _workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def scan_folder(folder: Path, *, list_flagged: bool = False, workers: int | None = None) -> Tallied:
    """Fold every ``*.jsonl``/``*.json`` file directly in ``folder`` into per-repository tallies,
    counted as ``otlp.load_folder`` counts them. ``workers``: processes reading files at once
    (default: one per available core, for a folder of at least ``PARALLEL_BYTES``; 1 reads in
    this process)."""
    paths = folder_files(folder)
    total = Tallied(flagged=[] if list_flagged else None)
    if workers is None:
        size = 0
        for path in paths:
            try:
                size += path.stat().st_size
            except OSError:
                continue
        workers = _workers() if size >= PARALLEL_BYTES else 1
    workers = min(workers, len(paths))
    if workers <= 1:
        for path in paths:
            read_file(total, path)
        return total
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        parts = pool.map(_read_apart, [(path, list_flagged) for path in paths])
        for path, (part, keys) in zip(paths, parts, strict=True):
            if total.seen_spans.add_if_new(keys):
                total.absorb(part)
            else:
                # A span some earlier file held: read the file again against every key seen.
                read_file(total, path)
    return total
