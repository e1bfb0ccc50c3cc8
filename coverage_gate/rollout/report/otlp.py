"""Reading a folder of OTLP JSON lines (what ``otel_setup`` writes by default, and what the
Collector's file exporter writes) into a ``FolderInput``, line by line with the json module.

Reviews are read from the ``reconcile {repo}`` spans; errors from the ``coverage_gate.errors``
metric. Why spans for reviews: a span is one review, carrying what metrics may not (revision,
reviewer, the unsupported paths, needed by ``--list would_downgrade`` to audit a sample for
precision), its own time (the observation window for "at least N days"), and its exact duration
(p50/p95 without histogram buckets). Counting from one source also avoids adding a review twice.
Why the metric for errors: a run that failed made no decision and so has no reconcile span; the
error counter is the only record of it. Both are written by the same run, so they agree.

Malformed lines (not JSON, not an OTLP request, fields of the wrong type) are counted, with a
short sample of file and line numbers, and never stop the report. This is the reader whose
judgement of a line is the report's: ``scan`` reads big folders faster and hands it every line
it does not read exactly the same. Pure apart from ``load_folder``, which reads files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from coverage_gate.contracts import review_span as span_names
from coverage_gate.contracts.model import Depth, DepthPolicy, FileContent, MismatchKind
from coverage_gate.rollout import metrics as m
from coverage_gate.rollout.report.folder import FolderInput, Loaded
from coverage_gate.rollout.report.records import ReviewerRecord, ReviewRecord, span_key

__all__ = [
    "CONTENT_KEYS",
    "MISMATCH_KEYS",
    "end_file",
    "fold_error_point",
    "folder_files",
    "load_folder",
    "read_line",
    "read_lines",
]


_DELTA = 1
_CUMULATIVE = 2


class _BadLineError(ValueError):
    """A line that is JSON but not the OTLP shape expected."""


def _obj(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _BadLineError(f"{what} is not an object")
    return value


def _list(value: object, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _BadLineError(f"{what} is not a list")
    return value


def _int(value: object, what: str) -> int:
    # OTLP JSON writes 64-bit integers as strings; accept numbers too.
    if isinstance(value, bool):
        raise _BadLineError(f"{what} is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise _BadLineError(f"{what} is not an integer") from None
    raise _BadLineError(f"{what} is not an integer")


def _float(value: object, what: str) -> float:
    # OTLP JSON may write doubles as strings ("NaN", "Infinity"); accept numbers too.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _BadLineError(f"{what} is not a number")
    try:
        return float(value)
    except ValueError:
        raise _BadLineError(f"{what} is not a number") from None


def _any_value(value: object) -> object:
    body = _obj(value, "attribute value")
    if "stringValue" in body:
        return str(body["stringValue"])
    if "boolValue" in body:
        return bool(body["boolValue"])
    if "intValue" in body:
        return _int(body["intValue"], "intValue")
    if "doubleValue" in body:
        return _float(body["doubleValue"], "doubleValue")
    if "arrayValue" in body:
        values = _obj(body["arrayValue"], "arrayValue").get("values")
        return [_any_value(v) for v in _list(values, "arrayValue.values")]
    return None


def _attributes(raw: object) -> dict[str, object]:
    attributes: dict[str, object] = {}
    for item in _list(raw, "attributes"):
        entry = _obj(item, "attribute")
        attributes[str(entry.get("key", ""))] = _any_value(entry.get("value", {}))
    return attributes


def _str(attributes: Mapping[str, object], key: str, default: str = "") -> str:
    value = attributes.get(key, default)
    return value if isinstance(value, str) else default


def _count(attributes: Mapping[str, object], key: str) -> int:
    value = attributes.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _flag(attributes: Mapping[str, object], key: str, default: bool = False) -> bool:
    value = attributes.get(key, default)
    return value if isinstance(value, bool) else default


def _strings(attributes: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = attributes.get(key, [])
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


#: (outcome, event attribute key) of each way a claimed file's content can be checked.
CONTENT_KEYS = tuple((c.value, f"{span_names.A_CONTENT_PREFIX}{c.value}") for c in FileContent)


def _content_outcomes(attributes: Mapping[str, object]) -> tuple[tuple[str, int], ...]:
    found = ((outcome, _count(attributes, key)) for outcome, key in CONTENT_KEYS)
    return tuple((outcome, n) for outcome, n in found if n > 0)


#: (kind, event attribute key) of each thing a mismatched read can have shown instead.
MISMATCH_KEYS = tuple((k.value, f"{span_names.A_MISMATCH_PREFIX}{k.value}") for k in MismatchKind)


def _mismatches(attributes: Mapping[str, object]) -> tuple[tuple[str, int], ...]:
    found = ((kind, _count(attributes, key)) for kind, key in MISMATCH_KEYS)
    return tuple((kind, n) for kind, n in found if n > 0)


def _reviewer(event: Mapping[str, object]) -> ReviewerRecord:
    a = _attributes(event.get("attributes"))
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
        content=_content_outcomes(a),
        mismatches=_mismatches(a),
        client_version=_str(a, span_names.A_CLIENT_VERSION, m.VERSION_NONE),
        drift=_str(a, span_names.A_DRIFT),
        drift_kinds=_strings(a, span_names.A_DRIFT_KINDS),
    )


def _review(span: Mapping[str, object]) -> ReviewRecord | None:
    name = span.get("name")
    if not isinstance(name, str) or not name.startswith(span_names.SPAN_PREFIX):
        return None
    a = _attributes(span.get("attributes"))
    if span_names.A_OUTCOME not in a:
        return None
    start = _int(span.get("startTimeUnixNano", 0), "startTimeUnixNano")
    end = _int(span.get("endTimeUnixNano", 0), "endTimeUnixNano")
    duration = a.get(span_names.A_DURATION)
    events = [_obj(e, "event") for e in _list(span.get("events"), "events")]
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
        duration_s=float(duration)
        if isinstance(duration, int | float) and not isinstance(duration, bool)
        else max(end - start, 0) / 1e9,
        end_ns=end,
        reviewers=tuple(_reviewer(e) for e in events if e.get("name") == span_names.REVIEWER_EVENT),
        depth_policy=_str(a, span_names.A_DEPTH_POLICY, DepthPolicy.ACCEPT.value),
        depths={d.value: _count(a, f"{span_names.A_DEPTH_PREFIX}{d.value}") for d in Depth},
        would_downgrade_under=_strings(a, span_names.A_WOULD_DOWNGRADE_UNDER)
        if span_names.A_WOULD_DOWNGRADE_UNDER in a
        else None,
        citations_replayed=_count(a, span_names.A_CITATIONS),
        citations_failed=_count(a, span_names.A_CITATIONS_FAILED),
        citations_would_downgrade=_flag(a, span_names.A_CITATIONS_WOULD_DOWNGRADE)
        if span_names.A_CITATIONS_WOULD_DOWNGRADE in a
        else None,
    )


def _spans(request: Mapping[str, object]) -> Iterator[dict[str, Any]]:
    for resource in _list(request.get("resourceSpans"), "resourceSpans"):
        for scope in _list(_obj(resource, "resourceSpans[]").get("scopeSpans"), "scopeSpans"):
            for span in _list(_obj(scope, "scopeSpans[]").get("spans"), "spans"):
                yield _obj(span, "span")


def _error_points(request: Mapping[str, object]) -> Iterator[tuple[str, str, int, int, int]]:
    """(repository, kind, temporality, start, value) of each ``coverage_gate.errors`` point."""
    for resource in _list(request.get("resourceMetrics"), "resourceMetrics"):
        scopes = _obj(resource, "resourceMetrics[]").get("scopeMetrics")
        for scope in _list(scopes, "scopeMetrics"):
            for metric in _list(_obj(scope, "scopeMetrics[]").get("metrics"), "metrics"):
                body = _obj(metric, "metric")
                if body.get("name") != m.ERRORS.name:
                    continue
                total = _obj(body.get("sum", {}), "sum")
                temporality = _int(total.get("aggregationTemporality", _DELTA), "temporality")
                for point in _list(total.get("dataPoints"), "dataPoints"):
                    p = _obj(point, "dataPoint")
                    a = _attributes(p.get("attributes"))
                    raw = p.get("asInt", p.get("asDouble", 0))
                    if isinstance(raw, float) and not math.isfinite(raw):
                        raise _BadLineError("asDouble is not a finite number")
                    value = int(raw) if isinstance(raw, float) else _int(raw, "asInt")
                    start = _int(p.get("startTimeUnixNano", 0), "startTimeUnixNano")
                    yield _str(a, "repository"), _str(a, "kind"), temporality, start, value


def _fold(
    loaded: FolderInput,
    request: Mapping[str, object],
    cumulative: dict[tuple[str, str, int], int],
) -> None:
    if "resourceSpans" in request:
        for span in _spans(request):
            # The same span in two files (a copy, or a Collector's file beside a run's) is
            # one review. Only review spans are keyed: the others count nothing.
            key = span_key(str(span.get("traceId", "")), str(span.get("spanId", "")))
            if key and key in loaded.seen_spans:
                continue
            review = _review(span)
            if review is not None:
                if key:
                    loaded.seen_spans.add(key)
                loaded.add_review(review)
    elif "resourceMetrics" in request:
        for repo, kind, temporality, start, value in _error_points(request):
            fold_error_point(loaded, cumulative, repo, kind, temporality, start, value)
    else:
        raise _BadLineError("neither resourceSpans nor resourceMetrics")


def fold_error_point(
    loaded: FolderInput,
    cumulative: dict[tuple[str, str, int], int],
    repo: str,
    kind: str,
    temporality: int,
    start: int,
    value: int,
) -> None:
    if temporality == _CUMULATIVE:
        # A cumulative point repeats what came before: keep the latest per series.
        series = (repo, kind, start)
        cumulative[series] = max(cumulative.get(series, 0), value)
    else:
        loaded.errors[repo] += value
        loaded.error_kinds[(repo, kind)] += value


_TOO_DEEP = "JSON nested too deeply to read"
_TOO_LONG = "a number too long to read (over 4,300 digits)"
_TOO_LARGE = "a number too large to read"


def read_line(
    loaded: FolderInput,
    name: str,
    number: int,
    text: str,
    cumulative: dict[tuple[str, str, int], int],
) -> None:
    """Fold one non-blank line into ``loaded``; a bad line is counted and skipped."""
    try:
        request = json.loads(text)
    except json.JSONDecodeError as error:
        loaded.malformed(name, number, f"not JSON: {error.msg}")
        return
    except RecursionError:
        loaded.malformed(name, number, _TOO_DEEP)
        return
    except ValueError:  # past Python's limit on the digits of an integer
        loaded.malformed(name, number, _TOO_LONG)
        return
    try:
        _fold(loaded, _obj(request, "line"), cumulative)
    except _BadLineError as error:
        loaded.malformed(name, number, str(error))
    except OverflowError:  # an integer duration or time past what a float holds
        loaded.malformed(name, number, _TOO_LARGE)


def end_file(loaded: FolderInput, cumulative: dict[tuple[str, str, int], int]) -> None:
    """Count the latest cumulative error points of a file read to its end."""
    for (repo, kind, _), value in cumulative.items():
        loaded.errors[repo] += value
        loaded.error_kinds[(repo, kind)] += value


def read_lines(loaded: FolderInput, name: str, lines: Iterable[str]) -> None:
    """Fold one file's lines into ``loaded``; a bad line is counted and skipped."""
    cumulative: dict[tuple[str, str, int], int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        loaded.lines += 1
        read_line(loaded, name, number, text, cumulative)
    end_file(loaded, cumulative)


def folder_files(folder: Path) -> list[Path]:
    """The files of a telemetry folder the report reads: ``*.jsonl``/``*.json`` directly in it,
    in name order."""
    return [
        path
        for path in sorted(folder.iterdir())
        if path.suffix in {".jsonl", ".json"} and path.is_file()
    ]


def load_folder(folder: Path) -> Loaded:
    """Read every ``*.jsonl``/``*.json`` file directly in ``folder``, in name order, keeping
    every review (``scan.scan_folder`` streams the same into tallies)."""
    loaded = Loaded()
    for path in folder_files(folder):
        loaded.files += 1
        try:
            # utf-8-sig: a byte-order mark opening a file is not part of its first line
            with path.open(encoding="utf-8-sig", errors="replace") as handle:
                read_lines(loaded, path.name, handle)
        except OSError:
            loaded.unreadable_files.append(path.name)
    return loaded
