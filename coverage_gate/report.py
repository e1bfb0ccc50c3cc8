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

Pure apart from ``load_folder``, which reads files.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from coverage_gate import defaults
from coverage_gate import metrics as m
from coverage_gate.metrics import Outcome
from coverage_gate.model import Depth, DepthPolicy
from coverage_gate.reconcile import is_shallow

REPORT_SCHEMA = "coverage-gate/report"
REPORT_VERSION = "1.1"
MALFORMED_SAMPLE = 10
TOP_REASONS = 5
Z_95 = 1.959963984540054

_NS_PER_DAY = 86_400 * 10**9
_DELTA = 1
_CUMULATIVE = 2


# --- input records ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
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

    @property
    def evidence_available(self) -> bool:
        return (
            self.capability == "per_file"
            and self.complete
            and not self.truncated
            and not self.stale
        )


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class MalformedLine:
    file: str
    line: int
    detail: str


@dataclass
class Loaded:
    """Everything read from a telemetry folder."""

    reviews: list[ReviewRecord] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    files: int = 0
    lines: int = 0
    malformed_lines: int = 0
    malformed_sample: list[MalformedLine] = field(default_factory=list)
    unreadable_files: list[str] = field(default_factory=list)
    seen_spans: set[tuple[str, str]] = field(default_factory=set)

    def malformed(self, file: str, line: int, detail: str) -> None:
        self.malformed_lines += 1
        if len(self.malformed_sample) < MALFORMED_SAMPLE:
            self.malformed_sample.append(MalformedLine(file, line, detail))


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
    loaded: Loaded,
    request: Mapping[str, object],
    cumulative: dict[tuple[str, str, int], int],
) -> None:
    if "resourceSpans" in request:
        for span in _spans(request):
            # The same span in two files (a copy, or a Collector's file beside a run's) is
            # one review.
            key = (str(span.get("traceId", "")), str(span.get("spanId", "")))
            if key in loaded.seen_spans and key != ("", ""):
                continue
            loaded.seen_spans.add(key)
            review = _review(span)
            if review is not None:
                loaded.reviews.append(review)
    elif "resourceMetrics" in request:
        for repo, kind, temporality, start, value in _error_points(request):
            if temporality == _CUMULATIVE:
                # A cumulative point repeats what came before: keep the latest per series.
                series = (repo, kind, start)
                cumulative[series] = max(cumulative.get(series, 0), value)
            else:
                loaded.errors[repo] += value
    else:
        raise _BadLineError("neither resourceSpans nor resourceMetrics")


_TOO_DEEP = "JSON nested too deeply to read"


def read_lines(loaded: Loaded, name: str, lines: Iterable[str]) -> None:
    """Fold one file's lines into ``loaded``; a bad line is counted and skipped."""
    cumulative: dict[tuple[str, str, int], int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        loaded.lines += 1
        try:
            request = json.loads(text)
        except json.JSONDecodeError as error:
            loaded.malformed(name, number, f"not JSON: {error.msg}")
            continue
        except RecursionError:
            loaded.malformed(name, number, _TOO_DEEP)
            continue
        except ValueError:  # past Python's limit on the digits of an integer
            loaded.malformed(name, number, "a number too long to read (over 4,300 digits)")
            continue
        try:
            _fold(loaded, _obj(request, "line"), cumulative)
        except _BadLineError as error:
            loaded.malformed(name, number, str(error))
    for (repo, _, _), value in cumulative.items():
        loaded.errors[repo] += value


def load_folder(folder: Path) -> Loaded:
    """Read every ``*.jsonl``/``*.json`` file directly in ``folder``, in name order."""
    loaded = Loaded()
    for path in sorted(folder.iterdir()):
        if path.suffix not in {".jsonl", ".json"} or not path.is_file():
            continue
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


# --- criteria and the per-repository report ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Criteria:
    """When a repository is ready to move from shadow to enforce. Every check must pass."""

    min_approvals: int = defaults.MIN_APPROVALS
    min_days: float = defaults.MIN_DAYS
    min_evidence_availability: float = defaults.MIN_EVIDENCE_AVAILABILITY
    max_errors: int = defaults.MAX_ERRORS
    max_fallbacks: int = defaults.MAX_FALLBACKS
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


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True, slots=True)
class Evidence:
    reviews_available: int
    availability: float | None
    capability_none: int
    incomplete: int
    truncated: int
    stale: int


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
    in_force: dict[str, int]  # reviews by the depth policy they ran under
    approvals_compared: int  # approvals whose span carries the policy comparison
    policies: list[PolicyRow]


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
    top_reasons: list[tuple[str, int]]
    first_seen: str | None
    last_seen: str | None
    days: float
    ready: bool
    checks: list[Check]
    depth: DepthReport


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat(timespec="seconds")


def _evidence(reviews: Sequence[ReviewRecord]) -> Evidence:
    available = none = incomplete = truncated = stale = 0
    for review in reviews:
        working = [r for r in review.reviewers if not r.failed]
        available += all(r.evidence_available for r in working)
        none += any(r.capability != "per_file" for r in working)
        incomplete += any(not r.complete for r in working)
        truncated += any(r.truncated for r in working)
        stale += any(r.stale for r in working)
    return Evidence(available, _share(available, len(reviews)), none, incomplete, truncated, stale)


def _depth(reviews: Sequence[ReviewRecord]) -> DepthReport:
    files = {d.value: sum(r.depths.get(d.value, 0) for r in reviews) for d in Depth}
    with_evidence = sum(files.values())
    compared = [
        r for r in reviews if r.verdict_in == "approve" and r.would_downgrade_under is not None
    ]
    rows: list[PolicyRow] = []
    for policy in DepthPolicy:
        shallow = sum(n for d, n in files.items() if is_shallow(Depth(d), policy))
        flagged = sum(1 for r in compared if policy.value in (r.would_downgrade_under or ()))
        rows.append(
            PolicyRow(
                depth_policy=policy.value,
                shallow_files=shallow,
                shallow_rate=_share(shallow, with_evidence),
                shallow_interval=wilson(shallow, with_evidence),
                would_downgrade=flagged,
                would_downgrade_rate=_share(flagged, len(compared)),
                would_downgrade_interval=wilson(flagged, len(compared)),
            )
        )
    return DepthReport(
        files=files,
        in_force=dict(sorted(Counter(r.depth_policy for r in reviews).items())),
        approvals_compared=len(compared),
        policies=rows,
    )


def _checks(
    criteria: Criteria,
    *,
    approvals: int,
    days: float,
    evidence: Evidence,
    errors: int,
    fallbacks: int,
    flagged: tuple[int, int],
) -> list[Check]:
    availability = evidence.availability
    count, of = flagged
    rate = _share(count, of)
    return [
        Check(
            "approvals",
            approvals >= criteria.min_approvals,
            f"{approvals} approvals (need at least {criteria.min_approvals})",
        ),
        Check(
            "days",
            days >= criteria.min_days,
            f"{days:.1f} days observed (need at least {criteria.min_days:g})",
        ),
        Check(
            "evidence",
            availability is not None and availability >= criteria.min_evidence_availability,
            f"evidence available in {_pct(availability)} of reviews "
            f"(need at least {_pct(criteria.min_evidence_availability)})",
        ),
        Check(
            "errors",
            errors <= criteria.max_errors,
            f"{errors} errors (at most {criteria.max_errors})",
        ),
        Check(
            "fallbacks",
            fallbacks <= criteria.max_fallbacks,
            f"{fallbacks} mode fallbacks (at most {criteria.max_fallbacks})",
        ),
        Check(
            "would_downgrade_rate",
            (rate or 0.0) <= criteria.max_would_downgrade_rate,
            f"would downgrade {_pct(rate)} of approvals"
            + (
                f" under depth policy {criteria.depth_policy.value}"
                if criteria.depth_policy
                else ""
            )
            + f" ({_rate_compared(count, of, criteria.max_would_downgrade_rate)}; "
            "audit with --list would_downgrade)",
        ),
    ]


def _rate_compared(count: int, of: int, limit: float) -> str:
    """What the would-downgrade check compares: the point rate, count over approvals, with the
    limit; the 95% interval is shown beside it and not judged."""
    if not of:
        return f"no approvals: the rate counts as 0 against at most {_pct(limit)}"
    interval = wilson(count, of)
    shown = "" if interval is None else f", not its 95% interval {_ci_range(interval)}"
    return f"{count} of {of}: this point rate is compared with at most {_pct(limit)}{shown}"


def _ci_range(interval: tuple[float, float]) -> str:
    return f"{interval[0]:.1%}-{interval[1]:.1%}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def repo_report(
    repository: str, reviews: Sequence[ReviewRecord], errors: int, criteria: Criteria
) -> RepoReport:
    outcomes = Counter(r.outcome for r in reviews)
    approvals = sum(1 for r in reviews if r.verdict_in == "approve")
    flagged = outcomes[Outcome.WOULD_DOWNGRADE] + outcomes[Outcome.DOWNGRADED]
    claimed = sum(r.claimed for r in reviews)
    unsupported = sum(r.unsupported for r in reviews)
    unknown = sum(r.unknown for r in reviews)
    evidence = _evidence(reviews)
    sources = Counter(r.mode_source for r in reviews)
    fallbacks = sources.get("fallback", 0)
    durations = [r.duration_s for r in reviews]
    ends = sorted(r.end_ns for r in reviews)
    days = (ends[-1] - ends[0]) / _NS_PER_DAY if ends else 0.0
    rate = _share(flagged, approvals)
    judged = (flagged, approvals)
    depth = _depth(reviews)
    if criteria.depth_policy is not None:
        (row,) = [p for p in depth.policies if p.depth_policy == criteria.depth_policy.value]
        rate = row.would_downgrade_rate
        judged = (row.would_downgrade, depth.approvals_compared)
    checks = _checks(
        criteria,
        approvals=approvals,
        days=days,
        evidence=evidence,
        errors=errors,
        fallbacks=fallbacks,
        flagged=judged,
    )
    return RepoReport(
        repository=repository,
        reviews=len(reviews),
        approvals=approvals,
        outcomes=dict(sorted(outcomes.items())),
        would_downgrade=flagged,
        would_downgrade_rate=rate,
        would_downgrade_interval=wilson(flagged, approvals),
        claimed_files=claimed,
        unsupported_files=unsupported,
        unknown_files=unknown,
        unsupported_share=_share(unsupported, claimed),
        unknown_share=_share(unknown, claimed),
        evidence=evidence,
        modes=dict(sorted(Counter(r.mode for r in reviews).items())),
        mode_sources=dict(sorted(sources.items())),
        fallbacks=fallbacks,
        errors=errors,
        duration_p50_s=percentile(durations, 0.50),
        duration_p95_s=percentile(durations, 0.95),
        top_reasons=Counter(x for r in reviews for x in r.reasons).most_common(TOP_REASONS),
        first_seen=_iso(ends[0]) if ends else None,
        last_seen=_iso(ends[-1]) if ends else None,
        days=days,
        ready=all(c.ok for c in checks),
        checks=checks,
        depth=depth,
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


@dataclass(frozen=True, slots=True)
class Report:
    criteria: Criteria
    repositories: list[RepoReport]
    loaded: Loaded
    would_downgrade: list[Flagged] | None = None


def flagged_decisions(reviews: Iterable[ReviewRecord]) -> list[Flagged]:
    listed: list[Flagged] = []
    for review in sorted(reviews, key=lambda r: (r.repository, r.end_ns, r.revision)):
        if review.outcome not in {Outcome.WOULD_DOWNGRADE, Outcome.DOWNGRADED}:
            continue
        for reviewer in review.reviewers:
            if reviewer.would_downgrade or reviewer.unsupported_files:
                listed.append(
                    Flagged(
                        repository=review.repository,
                        revision=review.revision,
                        reviewer=reviewer.agent,
                        mode=review.mode,
                        outcome=review.outcome,
                        time=_iso(review.end_ns),
                        files=reviewer.unsupported_files,
                        files_dropped=reviewer.unsupported_dropped,
                        shallow_files=reviewer.shallow_files,
                    )
                )
    return listed


def build_report(loaded: Loaded, criteria: Criteria, *, list_flagged: bool = False) -> Report:
    by_repo: dict[str, list[ReviewRecord]] = {}
    for review in loaded.reviews:
        by_repo.setdefault(review.repository, []).append(review)
    names = sorted(set(by_repo) | {repo for repo, n in loaded.errors.items() if n})
    return Report(
        criteria=criteria,
        repositories=[
            repo_report(name, by_repo.get(name, []), loaded.errors.get(name, 0), criteria)
            for name in names
        ],
        loaded=loaded,
        would_downgrade=flagged_decisions(loaded.reviews) if list_flagged else None,
    )


# --- output -----------------------------------------------------------------------------------


def to_json(report: Report) -> dict[str, Any]:
    loaded = report.loaded
    document: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "version": REPORT_VERSION,
        "criteria": asdict(report.criteria),
        "input": {
            "files": loaded.files,
            "lines": loaded.lines,
            "reviews": len(loaded.reviews),
            "malformed_lines": loaded.malformed_lines,
            "malformed_sample": [asdict(x) for x in loaded.malformed_sample],
            "unreadable_files": list(loaded.unreadable_files),
        },
        "repositories": [_repo_json(r) for r in report.repositories],
    }
    if report.would_downgrade is not None:
        document["would_downgrade"] = [asdict(f) for f in report.would_downgrade]
    return document


def _repo_json(repo: RepoReport) -> dict[str, Any]:
    body = asdict(repo)
    interval = repo.would_downgrade_interval
    body["would_downgrade_interval"] = (
        None if interval is None else {"low": interval[0], "high": interval[1]}
    )
    body["top_reasons"] = [{"reason": r, "count": n} for r, n in repo.top_reasons]
    for row in body["depth"]["policies"]:
        for key in ("shallow_interval", "would_downgrade_interval"):
            pair = row[key]
            row[key] = None if pair is None else {"low": pair[0], "high": pair[1]}
    body["readiness"] = "ready" if repo.ready else "not_ready"
    return body


def _ci(interval: tuple[float, float] | None) -> str:
    return "" if interval is None else f" (95% CI {interval[0]:.1%}-{interval[1]:.1%})"


def _depth_lines(depth: DepthReport) -> list[str]:
    files = ", ".join(f"{name} {count}" for name, count in depth.files.items())
    in_force = ", ".join(f"{name} {count}" for name, count in depth.in_force.items()) or "-"
    lines = [
        f"  depth of claimed files with evidence: {files}; policy in force: {in_force}",
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


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:.1f} ms"


def render_text(report: Report) -> str:
    loaded = report.loaded
    out: list[str] = [
        f"{loaded.files} files, {loaded.lines} lines, {len(loaded.reviews)} reviews, "
        f"{loaded.malformed_lines} malformed lines"
    ]
    out.extend(f"  malformed: {x.file}:{x.line}: {x.detail}" for x in loaded.malformed_sample)
    out.extend(f"  unreadable: {name}" for name in loaded.unreadable_files)
    if not report.repositories:
        out.append("no reviews recorded")
    for repo in report.repositories:
        interval = repo.would_downgrade_interval
        ci = "" if interval is None else f" (95% CI {interval[0]:.1%}-{interval[1]:.1%})"
        ev = repo.evidence
        out += [
            "",
            f"{repo.repository}: {'READY' if repo.ready else 'NOT READY'} to enforce",
            f"  reviews {repo.reviews}, approvals {repo.approvals}, "
            f"observed {repo.days:.1f} days ({repo.first_seen or '-'} .. {repo.last_seen or '-'})",
            f"  would downgrade {repo.would_downgrade} = {_pct(repo.would_downgrade_rate)}{ci}",
            "  outcomes " + ", ".join(f"{k} {v}" for k, v in repo.outcomes.items()),
            f"  claimed files {repo.claimed_files}: unsupported {_pct(repo.unsupported_share)}, "
            f"unknown {_pct(repo.unknown_share)}",
            f"  evidence available {_pct(ev.availability)}: capability none {ev.capability_none},"
            f" incomplete {ev.incomplete}, truncated {ev.truncated}, stale {ev.stale}",
            "  mode sources "
            + (", ".join(f"{k} {v}" for k, v in repo.mode_sources.items()) or "-")
            + f"; fallbacks {repo.fallbacks}; errors {repo.errors}",
            f"  duration p50 {_seconds(repo.duration_p50_s)}, p95 {_seconds(repo.duration_p95_s)}",
            "  top reasons " + (", ".join(f"{r} {n}" for r, n in repo.top_reasons) or "-"),
            *_depth_lines(repo.depth),
        ]
        out.extend(f"  [{'ok' if c.ok else 'FAIL'}] {c.detail}" for c in repo.checks)
    if report.would_downgrade is not None:
        out += ["", f"would downgrade: {len(report.would_downgrade)} reviewer decisions"]
        for item in report.would_downgrade:
            more = f" (+{item.files_dropped} more)" if item.files_dropped else ""
            shallow = f"; shallow: {', '.join(item.shallow_files)}" if item.shallow_files else ""
            out.append(
                f"  {item.repository} {item.revision} {item.reviewer} [{item.mode}] "
                f"{item.time}: {', '.join(item.files) or '-'}{more}{shallow}"
            )
    return "\n".join(out) + "\n"
