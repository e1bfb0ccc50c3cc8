"""The shadow report: per repository, what the coverage check did or would do, and whether the
repository is ready to enforce.

Input is a folder of OTLP JSON lines (what ``otel_setup`` writes by default, and what the
Collector's file exporter writes). Reviews are read from the ``reconcile {repo}`` spans; errors
from the ``coverage_gate.errors`` metric.

Why spans for reviews: a span is one review, carrying what metrics may not (revision, reviewer,
the unsupported paths, needed by ``--list would_downgrade`` to audit a sample for precision),
its own time (the observation window for "at least N days"), and its exact duration (p50/p95
without histogram buckets). Counting from one source also avoids adding a review twice. Why the
metric for errors: a run that failed made no decision and so has no reconcile span; the error
counter is the only record of it. Both are written by the same run, so they agree.

Malformed lines (not JSON, not an OTLP request, fields of the wrong type) are counted, with a
short sample of file and line numbers, and never stop the report.

Readiness is judged on ``RepoCounts`` alone, a small per-repository aggregate that the spans of
a folder fill here and that ``coverage_gate.rollout.prometheus`` fills from the counters Prometheus
holds: one definition, whichever source counted. A rate check passes only when the upper bound of
the rate's 95% Wilson interval is at most its limit; the rates are entries of ``RATES``.

Reading a folder keeps either every review (``load_folder`` → ``Loaded``) or, for the report
command, only per-repository ``ReviewTally``s folded one review at a time (``Tallied``, filled by
``coverage_gate.rollout.report_scan.scan_folder``, which reads big folders typed and in parallel):
the same counts either way. Pure apart from ``load_folder``, which reads files.
"""

from __future__ import annotations

import json
import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from hashlib import blake2b
from pathlib import Path
from typing import Any

from coverage_gate.contracts import defaults
from coverage_gate.contracts.model import Depth, DepthPolicy, DriftKind, FileContent
from coverage_gate.core.reconcile import is_shallow
from coverage_gate.rollout import metrics as m
from coverage_gate.rollout.metrics import Outcome

REPORT_SCHEMA = "coverage-gate/report"
REPORT_VERSION = "1.3"
MALFORMED_SAMPLE = 10
TOP_REASONS = 5
Z_95 = 1.959963984540054
#: What the report says of its rate checks, in the text and in the JSON.
READINESS_RULE = (
    "A rate check passes only when the upper bound of the rate's 95% Wilson interval is at "
    "most its limit: the point rate alone is not judged."
)

_NS_PER_DAY = 86_400 * 10**9
_DELTA = 1
_CUMULATIVE = 2


# --- input records ----------------------------------------------------------------------------


# The two records are not frozen: a frozen dataclass is built through object.__setattr__, field
# by field, three times slower, and a report builds and drops one of each per review read (a
# million for a big folder). Nothing changes one once built.
@dataclass(slots=True)
class ReviewerRecord:
    agent: str
    format: str
    capability: str
    complete: bool
    truncated: bool
    stale: bool
    failed: bool
    would_downgrade: bool
    unsupported_files: tuple[str, ...]
    unsupported_dropped: int
    shallow_files: tuple[str, ...] = ()
    failed_citations: tuple[str, ...] = ()
    #: Claimed files by how their evidence was checked against their content at the revision,
    #: as (``FileContent`` value, count) pairs, the outcomes counted only; empty when none was
    #: (or the event predates content checks).
    content: tuple[tuple[str, int], ...] = ()
    #: The client version its stream named (``none``), whether its adapter understood the stream
    #: (``metrics.drift_label``) and the kinds of drift it held.
    client_version: str = m.VERSION_NONE
    drift: str = ""  # empty: the event predates the drift watch
    drift_kinds: tuple[str, ...] = ()

    @property
    def evidence_available(self) -> bool:
        return (
            self.capability == "per_file"
            and self.complete
            and not self.truncated
            and not self.stale
        )


@dataclass(slots=True)
class ReviewRecord:
    repository: str
    revision: str
    mode: str
    mode_source: str
    outcome: str
    verdict_in: str
    reasons: tuple[str, ...]
    claimed: int
    unsupported: int
    unknown: int
    duration_s: float
    end_ns: int
    reviewers: tuple[ReviewerRecord, ...]
    depth_policy: str = DepthPolicy.ACCEPT.value
    # Claimed files with successful evidence, by depth.
    depths: Mapping[str, int] = field(default_factory=dict)
    # The depth policies that would have downgraded this review; None when the span predates
    # the comparison (such a review is left out of it).
    would_downgrade_under: tuple[str, ...] | None = None
    citations_replayed: int = 0
    citations_failed: int = 0
    # Whether failed citations alone would downgrade this approval; None when the span predates
    # citations (such a review is left out of that rate).
    citations_would_downgrade: bool | None = None


@dataclass(frozen=True, slots=True)
class MalformedLine:
    file: str
    line: int
    detail: str


class SpanKeys:
    """The review spans read so far, each by a 64-bit key of its trace and span ids: a compact
    open-addressing set (8 bytes a key in one array, not a tuple of two strings in a set), so
    that a million reviews cost megabytes. Two different spans share a key with a chance of
    about n²/2⁶⁵ (3·10⁻⁸ for a million reviews)."""

    __slots__ = ("_count", "_table")

    def __init__(self) -> None:
        self._table = array("Q", bytes(8 * 1024))
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: int) -> bool:
        table = self._table
        mask = len(table) - 1
        index = key & mask
        while True:
            held = table[index]
            if held == key:
                return True
            if not held:
                return False
            index = (index + 1) & mask

    def add(self, key: int) -> None:
        table = self._table
        mask = len(table) - 1
        index = key & mask
        while True:
            held = table[index]
            if held == key:
                return
            if not held:
                break
            index = (index + 1) & mask
        table[index] = key
        self._count += 1
        if 2 * self._count > len(table):
            self._grow()

    def add_if_new(self, keys: Sequence[int]) -> bool:
        """Add every one of ``keys`` (distinct, non-zero) if none is held yet, and say so; add
        none of them otherwise."""
        table = self._table
        mask = len(table) - 1
        for key in keys:
            index = key & mask
            while held := table[index]:
                if held == key:
                    return False
                index = (index + 1) & mask
        while 2 * (self._count + len(keys)) > len(table):
            self._grow()
            table = self._table
        mask = len(table) - 1
        for key in keys:
            index = key & mask
            while table[index]:
                index = (index + 1) & mask
            table[index] = key
        self._count += len(keys)
        return True

    def held(self) -> array[int]:
        """Every key held, compactly."""
        return array("Q", filter(None, self._table))

    def __iter__(self) -> Iterator[int]:
        return iter(self.held())

    def _grow(self) -> None:
        held = self.held()
        self._table = array("Q", bytes(16 * len(self._table)))
        self._count = 0
        self.add_if_new(held)


def span_key(trace_id: str, span_id: str) -> int:
    """A span's key for ``SpanKeys``: 64 bits of a hash of its ids, never 0; 0 for a span with
    neither id (such spans are never taken for one another)."""
    if not trace_id and not span_id:
        return 0
    ids = f"{len(trace_id)}:{trace_id}{span_id}".encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(ids, digest_size=8).digest(), "little") or 1


@dataclass
class FolderInput:
    """What reading a telemetry folder gathered besides the reviews themselves."""

    errors: Counter[str] = field(default_factory=Counter)
    files: int = 0
    lines: int = 0
    malformed_lines: int = 0
    malformed_sample: list[MalformedLine] = field(default_factory=list)
    unreadable_files: list[str] = field(default_factory=list)
    #: The review spans read so far (the same span in two files is one review).
    seen_spans: SpanKeys = field(default_factory=SpanKeys)

    def malformed(self, file: str, line: int, detail: str) -> None:
        self.malformed_lines += 1
        if len(self.malformed_sample) < MALFORMED_SAMPLE:
            self.malformed_sample.append(MalformedLine(file, line, detail))

    def add_review(self, review: ReviewRecord) -> None:
        raise NotImplementedError

    @property
    def reviews_read(self) -> int:
        raise NotImplementedError


@dataclass
class Loaded(FolderInput):
    """Everything read from a telemetry folder, every review kept (for callers that want the
    records; the report command streams into a ``Tallied`` instead)."""

    reviews: list[ReviewRecord] = field(default_factory=list)

    def add_review(self, review: ReviewRecord) -> None:
        self.reviews.append(review)

    @property
    def reviews_read(self) -> int:
        return len(self.reviews)


@dataclass
class Tallied(FolderInput):
    """A telemetry folder folded one review at a time into per-repository tallies: memory grows
    with the repositories and by some 30 bytes a review (its key, its duration), not with the
    reviews' records. The flagged decisions are kept only when asked for (``--list``)."""

    tallies: dict[str, ReviewTally] = field(default_factory=dict)
    count: int = 0
    #: (end time, decision) of each flagged reviewer decision, in reading order; None when not
    #: asked for.
    flagged: list[tuple[int, Flagged]] | None = None

    def add_review(self, review: ReviewRecord) -> None:
        self.count += 1
        tally = self.tallies.get(review.repository)
        if tally is None:
            tally = self.tallies[review.repository] = ReviewTally()
        tally.add(review)
        if self.flagged is not None:
            # Its time is written when listed, as for a Loaded.
            self.flagged.extend((review.end_ns, item) for item in _flagged_of(review, timed=False))

    @property
    def reviews_read(self) -> int:
        return self.count

    def absorb(self, part: Tallied) -> None:
        """Fold in what another ``Tallied`` read after this one, whose review keys (not taken
        from it) were none of this one's: ``seen_spans.add_if_new``."""
        self.errors.update(part.errors)
        self.files += part.files
        self.lines += part.lines
        self.malformed_lines += part.malformed_lines
        room = MALFORMED_SAMPLE - len(self.malformed_sample)
        self.malformed_sample.extend(part.malformed_sample[: max(room, 0)])
        self.unreadable_files.extend(part.unreadable_files)
        self.count += part.count
        for repository, tally in part.tallies.items():
            mine = self.tallies.get(repository)
            if mine is None:
                self.tallies[repository] = tally
            else:
                mine.merge(tally)
        if self.flagged is not None and part.flagged is not None:
            self.flagged.extend(part.flagged)


class _BadLineError(ValueError):
    """A line that is JSON but not the OTLP shape expected."""


# --- OTLP JSON decoding -----------------------------------------------------------------------


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
CONTENT_KEYS = tuple((c.value, f"{m.A_CONTENT_PREFIX}{c.value}") for c in FileContent)


def _content_outcomes(attributes: Mapping[str, object]) -> tuple[tuple[str, int], ...]:
    found = ((outcome, _count(attributes, key)) for outcome, key in CONTENT_KEYS)
    return tuple((outcome, n) for outcome, n in found if n > 0)


def _reviewer(event: Mapping[str, object]) -> ReviewerRecord:
    a = _attributes(event.get("attributes"))
    return ReviewerRecord(
        agent=_str(a, m.A_AGENT),
        format=_str(a, m.A_FORMAT, m.FORMAT_UNKNOWN),
        capability=_str(a, m.A_CAPABILITY, m.CAPABILITY_ABSENT),
        complete=_flag(a, m.A_COMPLETE),
        truncated=_flag(a, m.A_TRUNCATED),
        stale=_flag(a, m.A_STALE),
        failed=_flag(a, m.A_FAILED),
        would_downgrade=_flag(a, m.A_WOULD_DOWNGRADE),
        unsupported_files=_strings(a, m.A_UNSUPPORTED_PATHS),
        unsupported_dropped=_count(a, m.A_UNSUPPORTED_DROPPED),
        shallow_files=_strings(a, m.A_SHALLOW_PATHS),
        failed_citations=_strings(a, m.A_FAILED_CITATIONS),
        content=_content_outcomes(a),
        client_version=_str(a, m.A_CLIENT_VERSION, m.VERSION_NONE),
        drift=_str(a, m.A_DRIFT),
        drift_kinds=_strings(a, m.A_DRIFT_KINDS),
    )


def _review(span: Mapping[str, object]) -> ReviewRecord | None:
    name = span.get("name")
    if not isinstance(name, str) or not name.startswith(m.SPAN_PREFIX):
        return None
    a = _attributes(span.get("attributes"))
    if m.A_OUTCOME not in a:
        return None
    start = _int(span.get("startTimeUnixNano", 0), "startTimeUnixNano")
    end = _int(span.get("endTimeUnixNano", 0), "endTimeUnixNano")
    duration = a.get(m.A_DURATION)
    events = [_obj(e, "event") for e in _list(span.get("events"), "events")]
    return ReviewRecord(
        repository=_str(a, m.A_REPOSITORY, name.removeprefix(m.SPAN_PREFIX)),
        revision=_str(a, m.A_REVISION),
        mode=_str(a, m.A_MODE),
        mode_source=_str(a, m.A_MODE_SOURCE),
        outcome=_str(a, m.A_OUTCOME),
        verdict_in=_str(a, m.A_VERDICT_IN),
        reasons=_strings(a, m.A_REASONS),
        claimed=_count(a, m.A_CLAIMED),
        unsupported=_count(a, m.A_UNSUPPORTED),
        unknown=_count(a, m.A_UNKNOWN),
        duration_s=float(duration)
        if isinstance(duration, int | float) and not isinstance(duration, bool)
        else max(end - start, 0) / 1e9,
        end_ns=end,
        reviewers=tuple(_reviewer(e) for e in events if e.get("name") == m.REVIEWER_EVENT),
        depth_policy=_str(a, m.A_DEPTH_POLICY, DepthPolicy.ACCEPT.value),
        depths={d.value: _count(a, f"{m.A_DEPTH_PREFIX}{d.value}") for d in Depth},
        would_downgrade_under=_strings(a, m.A_WOULD_DOWNGRADE_UNDER)
        if m.A_WOULD_DOWNGRADE_UNDER in a
        else None,
        citations_replayed=_count(a, m.A_CITATIONS),
        citations_failed=_count(a, m.A_CITATIONS_FAILED),
        citations_would_downgrade=_flag(a, m.A_CITATIONS_WOULD_DOWNGRADE)
        if m.A_CITATIONS_WOULD_DOWNGRADE in a
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
    for (repo, _, _), value in cumulative.items():
        loaded.errors[repo] += value


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
    every review (``coverage_gate.rollout.report_scan.scan_folder`` streams the same into
    tallies)."""
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


# --- statistics -------------------------------------------------------------------------------


def wilson(successes: int, trials: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval for a proportion; None without trials."""
    if trials <= 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..1); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(math.ceil(q * len(ordered)), 1)
    return ordered[rank - 1]


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


# --- criteria -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Criteria:
    """When a repository is ready to move from shadow to enforce. Every check must pass."""

    min_approvals: int = defaults.MIN_APPROVALS
    min_days: float = defaults.MIN_DAYS
    min_evidence_availability: float = defaults.MIN_EVIDENCE_AVAILABILITY
    max_errors: int = defaults.MAX_ERRORS
    max_fallbacks: int = defaults.MAX_FALLBACKS
    # The upper bound of the would-downgrade rate's 95% Wilson interval must be at most this.
    max_would_downgrade_rate: float = defaults.MAX_WOULD_DOWNGRADE_RATE
    # Judge the would-downgrade rate under this depth policy instead of the one in force: is
    # the repository ready to enforce it?
    depth_policy: DepthPolicy | None = None

    def problems(self) -> list[str]:
        """What is wrong with these criteria (empty when they are usable)."""
        found: list[str] = []
        if self.min_approvals < 0:
            found.append("min approvals must be at least 0")
        if self.min_days < 0:
            found.append("min days must be at least 0")
        if not 0 <= self.min_evidence_availability <= 1:
            found.append("min evidence availability must be between 0 and 1")
        if self.max_errors < 0 or self.max_fallbacks < 0:
            found.append("max errors and max fallbacks must be at least 0")
        if not 0 <= self.max_would_downgrade_rate <= 1:
            found.append("max would-downgrade rate must be between 0 and 1")
        return found


# --- per-repository counts: what readiness is judged on ---------------------------------------


@dataclass(frozen=True, slots=True)
class EvidenceDetail:
    """Reviews whose evidence could not speak for every claim, by why (a review may count under
    several). Only the spans say this per review; Prometheus counts evidence records instead."""

    capability_none: int
    incomplete: int
    truncated: int
    stale: int


@dataclass(frozen=True, slots=True)
class Day:
    """One UTC day of a repository's reviews (by their end times): what the report counts over
    the whole input, on that day alone (the days add up to the totals)."""

    day: str  # YYYY-MM-DD
    reviews: int
    approvals: int
    #: Reviews the check downgraded or would have (the repository's ``would_downgrade``).
    would_downgrade: int
    claimed_files: int
    unsupported_files: int
    unknown_files: int


#: ``Day``'s counts, in the order ``ReviewTally.daily`` holds them.
DAY_FIELDS = (
    "reviews",
    "approvals",
    "would_downgrade",
    "claimed_files",
    "unsupported_files",
    "unknown_files",
)
_FLAGGED_OUTCOMES = frozenset({Outcome.WOULD_DOWNGRADE.value, Outcome.DOWNGRADED.value})


@dataclass(frozen=True, slots=True)
class RepoCounts:
    """One repository's figures over the report's input: everything its readiness is judged on.

    Two sources fill it, and readiness is computed from it alone, so a verdict means the same
    whichever source counted: ``count_reviews`` from the ``reconcile`` spans and error points of
    a telemetry folder, ``coverage_gate.rollout.prometheus`` from the counters Prometheus holds (the
    metrics the README lists). Figures only the spans carry are ``None`` from Prometheus and are
    never judged.
    """

    repository: str
    reviews: int = 0
    #: Reviews whose incoming verdict was an approve.
    approvals: int = 0
    #: Approvals the check downgraded (enforce) or would have (shadow, off), under the depth
    #: policy in force.
    flagged: int = 0
    #: Reviews in which every reviewer that ran had evidence able to speak for its claims
    #: (per-file capability, complete stream, not truncated, not stale).
    evidence_available: int = 0
    errors: int = 0
    fallbacks: int = 0
    #: When the first and the last review were observed (seconds since the epoch). Where they
    #: are only known to bracket the reviews, ``resolution_s`` says by how much at most (both
    #: ends together): days observed count that much less, so as never to overstate the span.
    first_seen_s: float | None = None
    last_seen_s: float | None = None
    resolution_s: float = 0.0
    #: Counter series whose counts are estimates (Prometheus: reset within the window).
    reset_series: int = 0
    outcomes: Mapping[str, int] = field(default_factory=dict)
    modes: Mapping[str, int] = field(default_factory=dict)
    mode_sources: Mapping[str, int] = field(default_factory=dict)
    claimed_files: int = 0
    unsupported_files: int = 0
    unknown_files: int = 0
    #: Claimed files with successful evidence, by depth.
    depth_files: Mapping[str, int] = field(default_factory=dict)
    #: Approvals whose decision recorded what each depth policy would do, and per depth policy
    #: how many of them it would downgrade.
    approvals_compared: int = 0
    flagged_under: Mapping[str, int] = field(default_factory=dict)
    # --- shown, never judged; None where the source cannot say
    evidence_detail: EvidenceDetail | None = None
    depth_in_force: Mapping[str, int] | None = None
    duration_p50_s: float | None = None
    duration_p95_s: float | None = None
    top_reasons: tuple[tuple[str, int], ...] | None = None
    #: What replaying the reviewers' citations found (from the spans only).
    citations: CitationReport | None = None
    #: Claimed files by evidence format, then by how their evidence was checked against their
    #: content (``content_by_format``); None where no claimed file's content was checked.
    content: Mapping[str, Mapping[str, int]] | None = None
    #: Per UTC day with reviews, in order (from the spans only).
    daily: tuple[Day, ...] | None = None
    #: Reviewer streams by (format, client version, ``drift`` label), and by (format, client
    #: version, drift kind); None where the source holds no stream count.
    streams: Mapping[tuple[str, str, str], int] | None = None
    drift_kinds: Mapping[tuple[str, str, str], int] | None = None
    #: When the first stream whose drift blocks readiness was observed (from the spans only).
    drift_first_s: float | None = None

    @property
    def days(self) -> float:
        if self.first_seen_s is None or self.last_seen_s is None:
            return 0.0
        span = self.last_seen_s - self.first_seen_s - self.resolution_s
        return max(span, 0.0) / 86_400


_DEPTHS = tuple(d.value for d in Depth)
_POLICIES = tuple(p.value for p in DepthPolicy)
_CONTENT_ORDER = {c.value: index for index, c in enumerate(FileContent)}


def content_by_format(
    counted: Iterable[tuple[tuple[str, str], int]],
) -> dict[str, dict[str, int]] | None:
    """((format, outcome), claimed files) counts → per format (by name), its claimed files by
    outcome (every ``FileContent`` value, in its order; any other after, by name). Formats
    without a counted file are left out; None when none is left. Both sources of
    ``RepoCounts.content`` (the spans, the metric) are shaped here, so they compare equal."""
    by_format: dict[str, dict[str, int]] = {}
    for (fmt, outcome), n in counted:
        if n > 0:
            outcomes = by_format.setdefault(fmt, {})
            outcomes[outcome] = outcomes.get(outcome, 0) + n
    shaped: dict[str, dict[str, int]] = {}
    for fmt in sorted(by_format):
        outcomes = by_format[fmt]
        names = sorted(
            set(_CONTENT_ORDER) | set(outcomes),
            key=lambda name: (_CONTENT_ORDER.get(name, len(_CONTENT_ORDER)), name),
        )
        shaped[fmt] = {name: outcomes.get(name, 0) for name in names}
    return shaped or None


@dataclass(slots=True)
class ReviewTally:
    """One repository's reviews folded one at a time into everything ``count_reviews`` reports,
    without keeping the reviews: counts, counters, the first and last end times, and each
    review's duration as an 8-byte double (the percentiles are exact). Two tallies of
    consecutive runs of reviews ``merge`` into the tally of the whole run, in that order."""

    reviews: int = 0
    approvals: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    modes: Counter[str] = field(default_factory=Counter)
    mode_sources: Counter[str] = field(default_factory=Counter)
    depth_in_force: Counter[str] = field(default_factory=Counter)
    #: In order of first appearance, which breaks ties among the top reasons.
    reasons: Counter[str] = field(default_factory=Counter)
    evidence_available: int = 0
    capability_none: int = 0
    incomplete: int = 0
    truncated: int = 0
    stale: int = 0
    claimed_files: int = 0
    unsupported_files: int = 0
    unknown_files: int = 0
    depth_files: Counter[str] = field(default_factory=Counter)
    approvals_compared: int = 0
    flagged_under: Counter[str] = field(default_factory=Counter)
    durations: array[float] = field(default_factory=lambda: array("d"))
    first_end_ns: int | None = None
    last_end_ns: int | None = None
    # Citations, over the reviews whose span records them.
    cited_reviews: int = 0
    cited_citing: int = 0
    cited_replayed: int = 0
    cited_failed: int = 0
    cited_reviews_failed: int = 0
    cited_approvals: int = 0
    cited_would_downgrade: int = 0
    #: Claimed files by (evidence format, how their content was checked).
    content: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Reviewer streams by (format, client version, drift label) and by (..., drift kind).
    streams: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    drift_kinds: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    drift_first_ns: int | None = None
    #: Per UTC day of the reviews' end times (days since the epoch): the ``DAY_FIELDS`` counts.
    daily: dict[int, list[int]] = field(default_factory=dict)

    def add(self, review: ReviewRecord) -> None:
        self.reviews += 1
        approve = review.verdict_in == "approve"
        self.approvals += approve
        self.outcomes[review.outcome] += 1
        self.modes[review.mode] += 1
        self.mode_sources[review.mode_source] += 1
        self.depth_in_force[review.depth_policy] += 1
        if review.reasons:
            self.reasons.update(review.reasons)
        available = True
        none = incomplete = truncated = stale = False
        for reviewer in review.reviewers:
            if reviewer.failed:
                continue
            available = available and reviewer.evidence_available
            none = none or reviewer.capability != "per_file"
            incomplete = incomplete or not reviewer.complete
            truncated = truncated or reviewer.truncated
            stale = stale or reviewer.stale
        self.evidence_available += available
        self._add_content(review.reviewers)
        self._add_streams(review)
        self.capability_none += none
        self.incomplete += incomplete
        self.truncated += truncated
        self.stale += stale
        self.claimed_files += review.claimed
        self.unsupported_files += review.unsupported
        self.unknown_files += review.unknown
        depths = review.depths
        files = self.depth_files
        for depth in _DEPTHS:
            files[depth] += depths.get(depth, 0)
        under = review.would_downgrade_under
        if approve and under is not None:
            self.approvals_compared += 1
            if under:
                for policy in _POLICIES:
                    if policy in under:
                        self.flagged_under[policy] += 1
        self.durations.append(review.duration_s)
        end = review.end_ns
        if self.first_end_ns is None or end < self.first_end_ns:
            self.first_end_ns = end
        if self.last_end_ns is None or end > self.last_end_ns:
            self.last_end_ns = end
        if review.citations_would_downgrade is not None:
            self._add_citations(review, approve)
        self._add_day(review, end // _NS_PER_DAY, approve)

    def _add_day(self, review: ReviewRecord, day: int, approve: bool) -> None:
        """The review's counts on its day, in ``DAY_FIELDS``' order."""
        counts = self.daily.get(day)
        if counts is None:
            counts = self.daily[day] = [0] * len(DAY_FIELDS)
        counts[0] += 1
        counts[1] += approve
        counts[2] += review.outcome in _FLAGGED_OUTCOMES
        counts[3] += review.claimed
        counts[4] += review.unsupported
        counts[5] += review.unknown

    def _add_citations(self, review: ReviewRecord, approve: bool) -> None:
        """A review whose span records citations."""
        self.cited_reviews += 1
        self.cited_citing += bool(review.citations_replayed)
        self.cited_replayed += review.citations_replayed
        self.cited_failed += review.citations_failed
        self.cited_reviews_failed += bool(review.citations_failed)
        if approve:
            self.cited_approvals += 1
            self.cited_would_downgrade += bool(review.citations_would_downgrade)

    def _add_content(self, reviewers: Sequence[ReviewerRecord]) -> None:
        """Claimed files by (format, how their content was checked), of the reviewers that ran,
        as the metric counts them."""
        content = self.content
        for reviewer in reviewers:
            if not reviewer.failed:
                for outcome, n in reviewer.content:
                    content[reviewer.format, outcome] += n

    def _add_streams(self, review: ReviewRecord) -> None:
        """The reviewers' streams by client version and what their adapter understood, as the
        metrics count them (reviewers with an evidence document)."""
        for reviewer in review.reviewers:
            if reviewer.failed or not reviewer.drift:
                continue
            client = (reviewer.format, reviewer.client_version)
            self.streams[(*client, reviewer.drift)] += 1
            for kind in reviewer.drift_kinds:
                self.drift_kinds[(*client, kind)] += 1
            if blocks_readiness(reviewer.drift, reviewer.drift_kinds) and (
                self.drift_first_ns is None or review.end_ns < self.drift_first_ns
            ):
                self.drift_first_ns = review.end_ns

    def merge(self, later: ReviewTally) -> None:
        """Fold in the tally of reviews read after this one's."""
        for name in _TALLY_COUNTS:
            setattr(self, name, getattr(self, name) + getattr(later, name))
        for name in _TALLY_COUNTERS:
            getattr(self, name).update(getattr(later, name))
        self.durations.extend(later.durations)
        ends = [e for e in (self.first_end_ns, later.first_end_ns) if e is not None]
        self.first_end_ns = min(ends) if ends else None
        ends = [e for e in (self.last_end_ns, later.last_end_ns) if e is not None]
        self.last_end_ns = max(ends) if ends else None
        ends = [e for e in (self.drift_first_ns, later.drift_first_ns) if e is not None]
        self.drift_first_ns = min(ends) if ends else None
        for day, counts in later.daily.items():
            mine = self.daily.get(day)
            if mine is None:
                self.daily[day] = list(counts)
            else:
                mine[:] = [a + b for a, b in zip(mine, counts, strict=True)]

    def counts(self, repository: str, errors: int) -> RepoCounts:
        outcomes = self.outcomes
        first, last = self.first_end_ns, self.last_end_ns
        ordered = sorted(self.durations)  # once for both percentiles
        return RepoCounts(
            repository=repository,
            reviews=self.reviews,
            approvals=self.approvals,
            flagged=outcomes[Outcome.WOULD_DOWNGRADE] + outcomes[Outcome.DOWNGRADED],
            evidence_available=self.evidence_available,
            errors=errors,
            fallbacks=self.mode_sources.get("fallback", 0),
            first_seen_s=None if first is None else first / 1e9,
            last_seen_s=None if last is None else last / 1e9,
            outcomes=dict(sorted(outcomes.items())),
            modes=dict(sorted(self.modes.items())),
            mode_sources=dict(sorted(self.mode_sources.items())),
            claimed_files=self.claimed_files,
            unsupported_files=self.unsupported_files,
            unknown_files=self.unknown_files,
            depth_files={d: self.depth_files[d] for d in _DEPTHS},
            approvals_compared=self.approvals_compared,
            flagged_under={p: self.flagged_under[p] for p in _POLICIES},
            evidence_detail=EvidenceDetail(
                self.capability_none, self.incomplete, self.truncated, self.stale
            ),
            depth_in_force=dict(sorted(self.depth_in_force.items())),
            duration_p50_s=percentile(ordered, 0.50),
            duration_p95_s=percentile(ordered, 0.95),
            top_reasons=tuple(self.reasons.most_common(TOP_REASONS)),
            citations=self._citations(),
            content=content_by_format(self.content.items()),
            streams=dict(sorted(self.streams.items())) if self.streams else None,
            drift_kinds=dict(sorted(self.drift_kinds.items())) if self.streams else None,
            drift_first_s=None if self.drift_first_ns is None else self.drift_first_ns / 1e9,
            daily=tuple(
                Day(_iso(day * _NS_PER_DAY)[:10], *self.daily[day]) for day in sorted(self.daily)
            ),
        )

    def _citations(self) -> CitationReport:
        recorded, failed = self.cited_reviews, self.cited_failed
        reviews_failed = self.cited_reviews_failed
        approvals, flagged = self.cited_approvals, self.cited_would_downgrade
        return CitationReport(
            reviews=recorded,
            reviews_citing=self.cited_citing,
            replayed=self.cited_replayed,
            failed=failed,
            failed_per_100_reviews=None if not recorded else 100 * failed / recorded,
            reviews_failed=reviews_failed,
            reviews_failed_rate=_share(reviews_failed, recorded),
            reviews_failed_interval=wilson(reviews_failed, recorded),
            approvals=approvals,
            would_downgrade=flagged,
            would_downgrade_rate=_share(flagged, approvals),
            would_downgrade_interval=wilson(flagged, approvals),
        )


_TALLY_COUNTS = (
    "reviews",
    "approvals",
    "evidence_available",
    "capability_none",
    "incomplete",
    "truncated",
    "stale",
    "claimed_files",
    "unsupported_files",
    "unknown_files",
    "approvals_compared",
    "cited_reviews",
    "cited_citing",
    "cited_replayed",
    "cited_failed",
    "cited_reviews_failed",
    "cited_approvals",
    "cited_would_downgrade",
)
_TALLY_COUNTERS = (
    "streams",
    "drift_kinds",
    "outcomes",
    "modes",
    "mode_sources",
    "depth_in_force",
    "reasons",
    "depth_files",
    "flagged_under",
    "content",
)


def count_reviews(repository: str, reviews: Iterable[ReviewRecord], errors: int) -> RepoCounts:
    """A repository's counts from its ``reconcile`` spans (one per review) and its errors."""
    tally = ReviewTally()
    for review in reviews:
        tally.add(review)
    return tally.counts(repository, errors)


def count_folder(loaded: FolderInput) -> list[RepoCounts]:
    """Every repository with a review or an error in ``loaded``, by name."""
    if isinstance(loaded, Tallied):
        tallies = loaded.tallies
    else:
        assert isinstance(loaded, Loaded)  # noqa: S101 - the two kinds of folder input
        tallies = {}
        for review in loaded.reviews:
            tally = tallies.get(review.repository)
            if tally is None:
                tally = tallies[review.repository] = ReviewTally()
            tally.add(review)
    names = sorted(set(tallies) | {repo for repo, n in loaded.errors.items() if n})
    return [
        (tallies.get(name) or ReviewTally()).counts(name, loaded.errors.get(name, 0))
        for name in names
    ]


# --- rates and readiness ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RateSpec:
    """A share of one repository's counts, shown with its 95% Wilson interval.

    With a ``limit``, the rate is a readiness check: it passes only when the interval's upper
    bound is at most the limit, so a handful of clean reviews cannot pass for a low rate. A new
    rate is one more entry in ``RATES``: its counts (from ``RepoCounts``) and its limit (from
    ``Criteria``).
    """

    #: The check's name and the rate's key in the JSON output.
    name: str
    #: ``(count, of)`` for a repository under the given criteria.
    counts: Callable[[RepoCounts, Criteria], tuple[int, int]]
    #: What the text says of the rate: ``"{rate}"`` is replaced by the percentage.
    sentence: Callable[[Criteria], str]
    #: What ``of`` counts, in the plural ("approvals").
    unit: str
    #: The most the upper bound may be, or ``None`` for a rate shown and not judged.
    limit: Callable[[Criteria], float | None] = lambda _criteria: None
    #: Does a repository with nothing to count pass the check? (Nothing bounds its rate.)
    passes_when_empty: bool = False
    #: A hint appended to the check's line.
    hint: str = ""


def _would_downgrade_counts(counts: RepoCounts, criteria: Criteria) -> tuple[int, int]:
    if criteria.depth_policy is None:
        return counts.flagged, counts.approvals
    return counts.flagged_under.get(criteria.depth_policy.value, 0), counts.approvals_compared


def _would_downgrade_sentence(criteria: Criteria) -> str:
    policy = criteria.depth_policy
    return "would downgrade {rate} of approvals" + (
        f" under depth policy {policy.value}" if policy is not None else ""
    )


WOULD_DOWNGRADE_RATE = RateSpec(
    name="would_downgrade_rate",
    counts=_would_downgrade_counts,
    sentence=_would_downgrade_sentence,
    unit="approvals",
    limit=lambda criteria: criteria.max_would_downgrade_rate,
    hint="audit with --list would_downgrade",
)

#: Every rate the report shows per repository; those with a limit are readiness checks.
RATES: tuple[RateSpec, ...] = (WOULD_DOWNGRADE_RATE,)


@dataclass(frozen=True, slots=True)
class Rate:
    name: str
    count: int
    of: int
    rate: float | None
    interval: tuple[float, float] | None
    limit: float | None


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


def rate(spec: RateSpec, counts: RepoCounts, criteria: Criteria) -> Rate:
    count, of = spec.counts(counts, criteria)
    return Rate(spec.name, count, of, _share(count, of), wilson(count, of), spec.limit(criteria))


def rate_check(spec: RateSpec, figure: Rate, criteria: Criteria) -> Check:
    """The Wilson-bound rule: ready only when the upper bound of the 95% interval is at most
    the limit (the point rate alone would pass 1 flagged in 12 against 10%, on little data)."""
    limit = figure.limit
    assert limit is not None  # noqa: S101 - only rates with a limit are checked
    said = spec.sentence(criteria).format(rate=_pct(figure.rate))
    hint = f"; {spec.hint}" if spec.hint else ""
    if figure.interval is None:
        return Check(
            spec.name,
            spec.passes_when_empty,
            f"{said} (no {spec.unit}: nothing bounds the rate; ready needs its 95% upper bound "
            f"at most {_pct(limit)}{hint})",
        )
    high = figure.interval[1]
    return Check(
        spec.name,
        high <= limit,
        f"{said} ({figure.count} of {figure.of}; 95% CI {_ci_range(figure.interval)}: ready "
        f"needs its upper bound {high:.1%} at most {_pct(limit)}{hint})",
    )


def readiness(counts: RepoCounts, criteria: Criteria) -> list[Check]:
    """Every readiness check on one repository's counts; it is ready when all pass."""
    availability = _share(counts.evidence_available, counts.reviews)
    checks = [
        Check(
            "approvals",
            counts.approvals >= criteria.min_approvals,
            f"{counts.approvals} approvals (need at least {criteria.min_approvals})",
        ),
        Check(
            "days",
            counts.days >= criteria.min_days,
            f"{counts.days:.1f} days observed (need at least {criteria.min_days:g})",
        ),
        Check(
            "evidence",
            availability is not None and availability >= criteria.min_evidence_availability,
            f"evidence available in {_pct(availability)} of reviews "
            f"(need at least {_pct(criteria.min_evidence_availability)})",
        ),
        Check(
            "errors",
            counts.errors <= criteria.max_errors,
            f"{counts.errors} errors (at most {criteria.max_errors})",
        ),
        Check(
            "fallbacks",
            counts.fallbacks <= criteria.max_fallbacks,
            f"{counts.fallbacks} mode fallbacks (at most {criteria.max_fallbacks})",
        ),
    ]
    for spec in RATES:
        figure = rate(spec, counts, criteria)
        if figure.limit is not None:
            checks.append(rate_check(spec, figure, criteria))
    understood = _streams_check(counts)
    if understood is not None:
        checks.append(understood)
    return checks


#: Drift kinds that block readiness by themselves, beside drift that hides reads: the client
#: runs a version this coverage-gate was not checked against.
_BLOCKING_KINDS = frozenset({DriftKind.CLIENT_VERSION.value})


def blocks_readiness(drift: str, kinds: Iterable[str]) -> bool:
    """Whether a stream's drift keeps its repository from ready: it could hide reads, or its
    client is outside the checked range (a model's unknown tool or a commit alone does not)."""
    return drift == "hides_reads" or any(kind in _BLOCKING_KINDS for kind in kinds)


def _streams_check(counts: RepoCounts) -> Check | None:
    """Ready needs streams the adapters understand: none whose drift could hide reads, no client
    outside the checked range. None where the source holds no stream count."""
    if counts.streams is None:
        return None
    total = sum(counts.streams.values())
    hiding = sum(n for (_, _, drift), n in counts.streams.items() if drift == "hides_reads")
    versions = sum(
        n for (_, _, kind), n in (counts.drift_kinds or {}).items() if kind in _BLOCKING_KINDS
    )
    clients = sorted(
        {
            f"{fmt} {version}"
            for (fmt, version, drift), n in counts.streams.items()
            if n and drift == "hides_reads"
        }
        | {
            f"{fmt} {version}"
            for (fmt, version, kind), n in (counts.drift_kinds or {}).items()
            if n and kind in _BLOCKING_KINDS
        }
    )
    since = f" since {_iso_s(counts.drift_first_s)}" if counts.drift_first_s is not None else ""
    if not clients:
        return Check("streams", True, f"all {total} reviewer streams understood")
    return Check(
        "streams",
        False,
        f"{hiding} of {total} reviewer streams held drift that could hide reads and {versions} "
        f"came from a client outside the checked range{since} ({', '.join(clients)}): upgrade "
        "coverage-gate or pin the client, then observe again",
    )


# --- the per-repository report ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Evidence:
    reviews_available: int
    availability: float | None
    capability_none: int | None
    incomplete: int | None
    truncated: int | None
    stale: int | None


@dataclass(frozen=True, slots=True)
class PolicyRow:
    """One depth policy on a repository's reviews: the claimed files it would find shallow,
    of those with successful evidence, and the approvals it would downgrade."""

    depth_policy: str
    shallow_files: int
    shallow_rate: float | None
    shallow_interval: tuple[float, float] | None
    would_downgrade: int
    would_downgrade_rate: float | None
    would_downgrade_interval: tuple[float, float] | None


@dataclass(frozen=True, slots=True)
class DepthReport:
    files: dict[str, int]  # claimed files with successful evidence, by depth
    in_force: dict[str, int] | None  # reviews by the depth policy they ran under
    approvals_compared: int  # approvals whose span carries the policy comparison
    policies: list[PolicyRow]


@dataclass(frozen=True, slots=True)
class CitationReport:
    """What replaying reviewers' citations found on a repository's reviews.

    ``failed_per_100_reviews`` is a count rate (a review may fail several citations), so it has
    no interval; the two shares do: reviews with at least one failed citation, of the reviews
    whose span records citations, and approvals that failed citations alone would turn into a
    Comment (citation policy ``downgrade``, whatever the policy in force), of those approvals."""

    reviews: int  # reviews whose span records citations (replayed or not)
    reviews_citing: int  # of them, reviews in which some reviewer cited anything
    replayed: int
    failed: int
    failed_per_100_reviews: float | None
    reviews_failed: int
    reviews_failed_rate: float | None
    reviews_failed_interval: tuple[float, float] | None
    approvals: int
    would_downgrade: int
    would_downgrade_rate: float | None
    would_downgrade_interval: tuple[float, float] | None


@dataclass(frozen=True, slots=True)
class ClientContent:
    """One client's (evidence format's) claimed files in a repository, by how their evidence was
    checked against their content at the revision, and two shares of them, each a ``Rate`` with
    its 95% Wilson interval: ``mismatch`` (only reads whose text was not the file: no evidence)
    and ``via_content`` (credited by content through another call)."""

    format: str
    claimed: int
    outcomes: dict[str, int]
    mismatch_rate: Rate
    content_credit_rate: Rate


@dataclass(frozen=True, slots=True)
class ContentReport:
    """A repository's claimed files whose content was checked (every claimed file of a reviewer
    that ran with an evidence document), over all its clients and per client, by format."""

    claimed: int
    outcomes: dict[str, int]
    mismatch_rate: Rate
    content_credit_rate: Rate
    clients: list[ClientContent]


#: The two content rates' names (their keys in the JSON), and the outcomes they count.
MISMATCH_RATE = "mismatch_rate"
CONTENT_CREDIT_RATE = "content_credit_rate"
_MISMATCH = FileContent.MISMATCH.value
_VIA_CONTENT = FileContent.VIA_CONTENT.value


@dataclass(frozen=True, slots=True)
class RepoReport:
    repository: str
    reviews: int
    approvals: int
    outcomes: dict[str, int]
    would_downgrade: int
    would_downgrade_rate: float | None
    would_downgrade_interval: tuple[float, float] | None
    claimed_files: int
    unsupported_files: int
    unknown_files: int
    unsupported_share: float | None
    unknown_share: float | None
    evidence: Evidence
    modes: dict[str, int]
    mode_sources: dict[str, int]
    fallbacks: int
    errors: int
    duration_p50_s: float | None
    duration_p95_s: float | None
    top_reasons: list[tuple[str, int]] | None
    first_seen: str | None
    last_seen: str | None
    days: float
    ready: bool
    checks: list[Check]
    depth: DepthReport
    citations: CitationReport | None
    rates: list[Rate] = field(default_factory=list)
    #: Counter series whose counts are estimates (reset within a Prometheus window).
    reset_series: int = 0
    #: How claimed files' evidence was checked against their content; None without such files.
    content: ContentReport | None = None
    #: Per UTC day with reviews (from the spans only; None from Prometheus).
    daily: list[Day] | None = None
    #: Reviewer streams per client version and what their adapters understood of them; None
    #: where the source holds no stream count (telemetry from before the drift watch).
    drift: list[ClientDrift] | None = None


@dataclass(frozen=True, slots=True)
class ClientDrift:
    """One client version's reviewer streams in a repository: how many, how many held drift
    that could hide reads (``hides_reads``) or only drift that is said (``said``), and streams
    per drift kind."""

    format: str
    client_version: str
    streams: int
    hides_reads: int
    said: int
    kinds: dict[str, int]


def _drift_report(counts: RepoCounts) -> list[ClientDrift] | None:
    if counts.streams is None:
        return None
    clients: dict[tuple[str, str], dict[str, int]] = {}
    for (fmt, version, drift), n in counts.streams.items():
        row = clients.setdefault((fmt, version), {"none": 0, "said": 0, "hides_reads": 0})
        row[drift] = row.get(drift, 0) + n
    kinds: dict[tuple[str, str], dict[str, int]] = {}
    for (fmt, version, kind), n in (counts.drift_kinds or {}).items():
        kinds.setdefault((fmt, version), {})[kind] = n
    return [
        ClientDrift(
            format=fmt,
            client_version=version,
            streams=sum(row.values()),
            hides_reads=row.get("hides_reads", 0),
            said=row.get("said", 0),
            kinds=dict(sorted(kinds.get((fmt, version), {}).items())),
        )
        for (fmt, version), row in sorted(clients.items())
    ]


def _drift_lines(drift: list[ClientDrift] | None) -> list[str]:
    if not drift:
        return []
    lines = ["  streams by client version (drift: what the adapter did not understand):"]
    for row in drift:
        kinds = ", ".join(f"{kind} {n}" for kind, n in row.kinds.items()) or "no drift"
        lines.append(
            f"    {row.format} {row.client_version}: {row.streams} streams, "
            f"{row.hides_reads} could hide reads, {row.said} said only ({kinds})"
        )
    return lines


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat(timespec="seconds")


def _iso_s(seconds: float | None) -> str | None:
    return None if seconds is None else _iso(int(seconds * 1e9))


def _depth(counts: RepoCounts) -> DepthReport:
    files = {d.value: counts.depth_files.get(d.value, 0) for d in Depth}
    with_evidence = sum(files.values())
    compared = counts.approvals_compared
    rows: list[PolicyRow] = []
    for policy in DepthPolicy:
        shallow = sum(n for d, n in files.items() if is_shallow(Depth(d), policy))
        flagged = counts.flagged_under.get(policy.value, 0)
        rows.append(
            PolicyRow(
                depth_policy=policy.value,
                shallow_files=shallow,
                shallow_rate=_share(shallow, with_evidence),
                shallow_interval=wilson(shallow, with_evidence),
                would_downgrade=flagged,
                would_downgrade_rate=_share(flagged, compared),
                would_downgrade_interval=wilson(flagged, compared),
            )
        )
    in_force = counts.depth_in_force
    return DepthReport(
        files=files,
        in_force=None if in_force is None else dict(in_force),
        approvals_compared=compared,
        policies=rows,
    )


def _shown(name: str, count: int, of: int) -> Rate:
    """A rate shown, never judged: its share and its 95% Wilson interval, as ``rate`` gives."""
    return Rate(name, count, of, _share(count, of), wilson(count, of), None)


def _content_report(counts: RepoCounts) -> ContentReport | None:
    if counts.content is None:
        return None
    clients: list[ClientContent] = []
    outcomes: Counter[str] = Counter()
    for fmt, counted in counts.content.items():
        claimed = sum(counted.values())
        outcomes.update(counted)
        clients.append(
            ClientContent(
                format=fmt,
                claimed=claimed,
                outcomes=dict(counted),
                mismatch_rate=_shown(MISMATCH_RATE, counted.get(_MISMATCH, 0), claimed),
                content_credit_rate=_shown(
                    CONTENT_CREDIT_RATE, counted.get(_VIA_CONTENT, 0), claimed
                ),
            )
        )
    claimed = sum(outcomes.values())
    return ContentReport(
        claimed=claimed,
        # every format's outcomes come in FileContent's order: so do their sums
        outcomes=dict(outcomes),
        mismatch_rate=_shown(MISMATCH_RATE, outcomes[_MISMATCH], claimed),
        content_credit_rate=_shown(CONTENT_CREDIT_RATE, outcomes[_VIA_CONTENT], claimed),
        clients=clients,
    )


def _ci_range(interval: tuple[float, float]) -> str:
    return f"{interval[0]:.1%}-{interval[1]:.1%}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def repo_report(counts: RepoCounts, criteria: Criteria) -> RepoReport:
    checks = readiness(counts, criteria)
    judged = rate(WOULD_DOWNGRADE_RATE, counts, criteria)
    detail = counts.evidence_detail
    return RepoReport(
        repository=counts.repository,
        reviews=counts.reviews,
        approvals=counts.approvals,
        outcomes=dict(counts.outcomes),
        would_downgrade=counts.flagged,
        would_downgrade_rate=judged.rate,
        would_downgrade_interval=wilson(counts.flagged, counts.approvals),
        claimed_files=counts.claimed_files,
        unsupported_files=counts.unsupported_files,
        unknown_files=counts.unknown_files,
        unsupported_share=_share(counts.unsupported_files, counts.claimed_files),
        unknown_share=_share(counts.unknown_files, counts.claimed_files),
        evidence=Evidence(
            counts.evidence_available,
            _share(counts.evidence_available, counts.reviews),
            None if detail is None else detail.capability_none,
            None if detail is None else detail.incomplete,
            None if detail is None else detail.truncated,
            None if detail is None else detail.stale,
        ),
        modes=dict(counts.modes),
        mode_sources=dict(counts.mode_sources),
        fallbacks=counts.fallbacks,
        errors=counts.errors,
        duration_p50_s=counts.duration_p50_s,
        duration_p95_s=counts.duration_p95_s,
        top_reasons=None if counts.top_reasons is None else list(counts.top_reasons),
        first_seen=_iso_s(counts.first_seen_s),
        last_seen=_iso_s(counts.last_seen_s),
        days=counts.days,
        ready=all(c.ok for c in checks),
        checks=checks,
        depth=_depth(counts),
        citations=counts.citations,
        rates=[rate(spec, counts, criteria) for spec in RATES],
        reset_series=counts.reset_series,
        content=_content_report(counts),
        daily=None if counts.daily is None else list(counts.daily),
        drift=_drift_report(counts),
    )


@dataclass(frozen=True, slots=True)
class Flagged:
    """One reviewer's unsupported claims in a review the check downgraded or would have."""

    repository: str
    revision: str
    reviewer: str
    mode: str
    outcome: str
    time: str
    files: tuple[str, ...]
    files_dropped: int
    shallow_files: tuple[str, ...] = ()
    failed_citations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Window:
    """Where a Prometheus-backed report read its counts, and over what time."""

    prometheus: str
    since_s: float
    start: str
    end: str
    #: The resolution of "days observed" (the counts themselves are not stepped).
    step_s: float
    queries: int


@dataclass(frozen=True, slots=True)
class Report:
    criteria: Criteria
    repositories: list[RepoReport]
    #: What a telemetry folder held, for a report read from one.
    loaded: FolderInput | None = None
    would_downgrade: list[Flagged] | None = None
    #: The Prometheus window, for a report read from Prometheus.
    window: Window | None = None


def _flagged_of(review: ReviewRecord, *, timed: bool = True) -> list[Flagged]:
    """The reviewer decisions of one review that ``--list would_downgrade`` lists."""
    if review.outcome not in {Outcome.WOULD_DOWNGRADE, Outcome.DOWNGRADED}:
        return []
    return [
        Flagged(
            repository=review.repository,
            revision=review.revision,
            reviewer=reviewer.agent,
            mode=review.mode,
            outcome=review.outcome,
            time=_iso(review.end_ns) if timed else "",
            files=reviewer.unsupported_files,
            files_dropped=reviewer.unsupported_dropped,
            shallow_files=reviewer.shallow_files,
            failed_citations=reviewer.failed_citations,
        )
        for reviewer in review.reviewers
        if reviewer.would_downgrade or reviewer.unsupported_files or reviewer.failed_citations
    ]


def flagged_decisions(reviews: Iterable[ReviewRecord]) -> list[Flagged]:
    listed: list[Flagged] = []
    for review in sorted(reviews, key=lambda r: (r.repository, r.end_ns, r.revision)):
        listed.extend(_flagged_of(review))
    return listed


def _sorted_flagged(flagged: Iterable[tuple[int, Flagged]]) -> list[Flagged]:
    """``flagged_decisions``' order for decisions kept as they were read: by repository, end
    time and revision, ties in reading order."""
    ordered = sorted(flagged, key=lambda pair: (pair[1].repository, pair[0], pair[1].revision))
    return [replace(item, time=_iso(end)) for end, item in ordered]


def build_report(loaded: FolderInput, criteria: Criteria, *, list_flagged: bool = False) -> Report:
    """The report on a telemetry folder's contents (a ``Tallied`` lists flagged decisions only
    when it kept them)."""
    flagged: list[Flagged] | None = None
    if list_flagged:
        if isinstance(loaded, Tallied):
            if loaded.flagged is None:
                raise ValueError("the flagged decisions were not kept: scan with list_flagged")
            flagged = _sorted_flagged(loaded.flagged)
        else:
            assert isinstance(loaded, Loaded)  # noqa: S101 - the two kinds of folder input
            flagged = flagged_decisions(loaded.reviews)
    return Report(
        criteria=criteria,
        repositories=[repo_report(counts, criteria) for counts in count_folder(loaded)],
        loaded=loaded,
        would_downgrade=flagged,
    )


def build_window_report(counts: Iterable[RepoCounts], criteria: Criteria, window: Window) -> Report:
    """The report on counts read over a Prometheus window."""
    return Report(
        criteria=criteria,
        repositories=[repo_report(c, criteria) for c in sorted(counts, key=lambda c: c.repository)],
        window=window,
    )


# --- output -----------------------------------------------------------------------------------


def _input_json(report: Report) -> dict[str, Any]:
    if report.window is not None:
        return {"source": "prometheus", **asdict(report.window)}
    loaded = report.loaded or Loaded()
    return {
        "source": "telemetry_dir",
        "files": loaded.files,
        "lines": loaded.lines,
        "reviews": loaded.reviews_read,
        "malformed_lines": loaded.malformed_lines,
        "malformed_sample": [asdict(x) for x in loaded.malformed_sample],
        "unreadable_files": list(loaded.unreadable_files),
    }


def to_json(report: Report) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "version": REPORT_VERSION,
        "criteria": asdict(report.criteria),
        "readiness_rule": READINESS_RULE,
        "input": _input_json(report),
        "repositories": [_repo_json(r) for r in report.repositories],
    }
    if report.would_downgrade is not None:
        document["would_downgrade"] = [asdict(f) for f in report.would_downgrade]
    return document


def _interval_json(pair: tuple[float, float] | None) -> dict[str, float] | None:
    return None if pair is None else {"low": pair[0], "high": pair[1]}


def _repo_json(repo: RepoReport) -> dict[str, Any]:
    body = asdict(repo)
    body["would_downgrade_interval"] = _interval_json(repo.would_downgrade_interval)
    body["top_reasons"] = (
        None
        if repo.top_reasons is None
        else [{"reason": r, "count": n} for r, n in repo.top_reasons]
    )
    for row in body["depth"]["policies"]:
        for key in ("shallow_interval", "would_downgrade_interval"):
            row[key] = _interval_json(row[key])
    body["rates"] = {figure.name: _rate_json(figure) for figure in repo.rates}
    if body["citations"] is not None:
        for key in ("reviews_failed_interval", "would_downgrade_interval"):
            body["citations"][key] = _interval_json(body["citations"][key])
    # Only where claimed files' content was checked: the report of older telemetry is unchanged.
    if repo.content is None:
        del body["content"]
    else:
        body["content"] = _content_json(repo.content)
    if repo.daily is None:  # Prometheus is read over its window as a whole
        del body["daily"]
    if repo.drift is None:  # telemetry from before the drift watch: unchanged
        del body["drift"]
    body["readiness"] = "ready" if repo.ready else "not_ready"
    return body


def _rate_json(figure: Rate) -> dict[str, Any]:
    return {
        "count": figure.count,
        "of": figure.of,
        "rate": figure.rate,
        "interval": _interval_json(figure.interval),
        "limit": figure.limit,
    }


def _content_json(content: ContentReport) -> dict[str, Any]:
    def rates(item: ContentReport | ClientContent) -> dict[str, Any]:
        return {
            "claimed": item.claimed,
            "outcomes": dict(item.outcomes),
            MISMATCH_RATE: _rate_json(item.mismatch_rate),
            CONTENT_CREDIT_RATE: _rate_json(item.content_credit_rate),
        }

    return {
        **rates(content),
        "clients": [{"format": client.format, **rates(client)} for client in content.clients],
    }


def _ci(interval: tuple[float, float] | None) -> str:
    return "" if interval is None else f" (95% CI {interval[0]:.1%}-{interval[1]:.1%})"


def _counted(values: Mapping[str, int] | None) -> str:
    if values is None:
        return "n/a"
    return ", ".join(f"{name} {count}" for name, count in values.items()) or "-"


def _depth_lines(depth: DepthReport) -> list[str]:
    lines = [
        f"  depth of claimed files with evidence: {_counted(depth.files)}; "
        f"policy in force: {_counted(depth.in_force)}",
        f"  {'depth policy':<13} {'shallow files':<34} would downgrade "
        f"(of {depth.approvals_compared} approvals)",
    ]
    for row in depth.policies:
        shallow = f"{row.shallow_files} = {_pct(row.shallow_rate)}{_ci(row.shallow_interval)}"
        flagged = (
            f"{row.would_downgrade} = {_pct(row.would_downgrade_rate)}"
            f"{_ci(row.would_downgrade_interval)}"
        )
        lines.append(f"  {row.depth_policy:<13} {shallow:<34} {flagged}")
    return lines


def _citation_lines(cited: CitationReport | None) -> list[str]:
    if cited is None:
        return ["  citations: n/a (only the local spans carry them)"]
    if not cited.reviews:
        return ["  citations: not recorded"]
    if not cited.reviews_citing:
        return [f"  citations: none given in {cited.reviews} reviews"]
    per_100 = (
        "n/a" if cited.failed_per_100_reviews is None else f"{cited.failed_per_100_reviews:.1f}"
    )
    return [
        f"  citations: {cited.replayed} replayed in {cited.reviews_citing} of {cited.reviews} "
        f"reviews; {cited.failed} failed = {per_100} per 100 reviews",
        f"  reviews with a failed citation {cited.reviews_failed} = "
        f"{_pct(cited.reviews_failed_rate)}{_ci(cited.reviews_failed_interval)}; approvals "
        f"failed citations would downgrade {cited.would_downgrade} of {cited.approvals} = "
        f"{_pct(cited.would_downgrade_rate)}{_ci(cited.would_downgrade_interval)}",
    ]


def _figure(figure: Rate) -> str:
    return f"{figure.count} of {figure.of} = {_pct(figure.rate)}{_ci(figure.interval)}"


def _content_lines(content: ContentReport | None) -> list[str]:
    if content is None:
        return []
    lines = [
        f"  content checks of {content.claimed} claimed files: {_counted(content.outcomes)}",
        f"  mismatch rate {_figure(content.mismatch_rate)}; "
        f"content-credit rate {_figure(content.content_credit_rate)}",
    ]
    lines.extend(
        f"    client {client.format}, {client.claimed} claimed files: mismatch rate "
        f"{_figure(client.mismatch_rate)}; content-credit rate "
        f"{_figure(client.content_credit_rate)}"
        for client in content.clients
    )
    return lines


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:.1f} ms"


def _header(report: Report) -> list[str]:
    window = report.window
    if window is not None:
        return [
            f"Prometheus {window.prometheus}: {window.start} .. {window.end} "
            f"(--since {_span(window.since_s)}; {window.queries} queries; reviews placed in "
            f"steps of {_span(window.step_s)})"
        ]
    loaded = report.loaded or Loaded()
    out = [
        f"{loaded.files} files, {loaded.lines} lines, {loaded.reviews_read} reviews, "
        f"{loaded.malformed_lines} malformed lines"
    ]
    out.extend(f"  malformed: {x.file}:{x.line}: {x.detail}" for x in loaded.malformed_sample)
    out.extend(f"  unreadable: {name}" for name in loaded.unreadable_files)
    return out


def _span(seconds: float) -> str:
    """``1209600`` → ``14d``: the largest unit that divides it."""
    whole = int(seconds)
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if whole and whole % size == 0:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def _evidence_line(ev: Evidence) -> str:
    if ev.capability_none is None:
        why = "per review: not in the metrics"
    else:
        why = (
            f"capability none {ev.capability_none}, incomplete {ev.incomplete}, "
            f"truncated {ev.truncated}, stale {ev.stale}"
        )
    return f"  evidence available {_pct(ev.availability)}: {why}"


def render_text(report: Report) -> str:
    out = _header(report)
    if not report.repositories:
        out.append("no reviews recorded")
    for repo in report.repositories:
        reasons = (
            "n/a"
            if repo.top_reasons is None
            else ", ".join(f"{r} {n}" for r, n in repo.top_reasons) or "-"
        )
        out += [
            "",
            f"{repo.repository}: {'READY' if repo.ready else 'NOT READY'} to enforce",
            f"  reviews {repo.reviews}, approvals {repo.approvals}, "
            f"observed {repo.days:.1f} days ({repo.first_seen or '-'} .. {repo.last_seen or '-'})",
            f"  would downgrade {repo.would_downgrade} = {_pct(repo.would_downgrade_rate)}"
            f"{_ci(repo.would_downgrade_interval)}",
            *(
                f"  {figure.name.replace('_', ' ')} {figure.count} of {figure.of} = "
                f"{_pct(figure.rate)}{_ci(figure.interval)}"
                for figure in repo.rates
                if figure.name != WOULD_DOWNGRADE_RATE.name
            ),
            "  outcomes " + ", ".join(f"{k} {v}" for k, v in repo.outcomes.items()),
            f"  claimed files {repo.claimed_files}: unsupported {_pct(repo.unsupported_share)}, "
            f"unknown {_pct(repo.unknown_share)}",
            _evidence_line(repo.evidence),
            "  mode sources "
            + (", ".join(f"{k} {v}" for k, v in repo.mode_sources.items()) or "-")
            + f"; fallbacks {repo.fallbacks}; errors {repo.errors}",
            f"  duration p50 {_seconds(repo.duration_p50_s)}, p95 {_seconds(repo.duration_p95_s)}",
            f"  top reasons {reasons}",
            *_depth_lines(repo.depth),
            *_citation_lines(repo.citations),
            *_content_lines(repo.content),
            *_drift_lines(repo.drift),
        ]
        if repo.reset_series:
            out.append(
                f"  estimated: {repo.reset_series} counter series were reset within the window "
                "(the Collector restarted) and are counted with Prometheus' increase()"
            )
        out.extend(f"  [{'ok' if c.ok else 'FAIL'}] {c.detail}" for c in repo.checks)
    if report.repositories:
        out += ["", READINESS_RULE]
    if report.would_downgrade is not None:
        out += ["", f"would downgrade: {len(report.would_downgrade)} reviewer decisions"]
        for item in report.would_downgrade:
            more = f" (+{item.files_dropped} more)" if item.files_dropped else ""
            shallow = f"; shallow: {', '.join(item.shallow_files)}" if item.shallow_files else ""
            cited = (
                f"; failed citations: {', '.join(item.failed_citations)}"
                if item.failed_citations
                else ""
            )
            out.append(
                f"  {item.repository} {item.revision} {item.reviewer} [{item.mode}] "
                f"{item.time}: {', '.join(item.files) or '-'}{more}{shallow}{cited}"
            )
    return "\n".join(out) + "\n"
