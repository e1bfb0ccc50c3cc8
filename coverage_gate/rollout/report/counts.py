"""One repository's counts, what its readiness is judged on (``RepoCounts``), and the tally
that folds reviews into them one at a time (``ReviewTally``, ``count_reviews``).

``RepoCounts`` is a small per-repository aggregate that the spans of a folder fill here and that
``coverage_gate.rollout.prometheus`` fills from the counters Prometheus holds: one definition,
whichever source counted. Figures only the spans carry are ``None`` from Prometheus and are never
judged. Pure: no reading (``otlp``, ``scan``), no judging (``checks``).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from coverage_gate.contracts.model import Depth, DepthPolicy, DriftKind, FileContent
from coverage_gate.rollout.metrics import ReviewOutcome
from coverage_gate.rollout.report._format import _iso
from coverage_gate.rollout.report.records import ReviewerRecord, ReviewRecord
from coverage_gate.rollout.report.stats import _share, percentile, wilson

__all__ = [
    "DAY_FIELDS",
    "TOP_REASONS",
    "CitationReport",
    "Day",
    "EvidenceDetail",
    "RepoCounts",
    "ReviewTally",
    "blocks_readiness",
    "content_by_format",
    "count_reviews",
]


TOP_REASONS = 5
_NS_PER_DAY = 86_400 * 10**9


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
_FLAGGED_OUTCOMES = frozenset({ReviewOutcome.WOULD_DOWNGRADE.value, ReviewOutcome.DOWNGRADED.value})


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
class RepoCounts:
    """One repository's figures over the report's input: everything its readiness is judged on.

    Two sources fill it, and readiness is computed from it alone, so a verdict means the same
    whichever source counted: ``count_reviews`` from the ``reconcile`` spans and error points of
    a telemetry folder, ``coverage_gate.rollout.prometheus`` from the counters Prometheus holds (the
    metrics the docs list). Figures only the spans carry are ``None`` from Prometheus and are
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
    #: The errors by kind (``bad_input``, ``bad_configuration``, ``internal``), where the source
    #: tells them (the telemetry folder); ``None`` where it does not.
    error_kinds: dict[str, int] | None = None
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
    #: Claimed files whose content is ``mismatch``, by (format, client version, what their reads
    #: showed instead: ``MismatchKind``), from the spans only; None where there are none.
    mismatches: Mapping[tuple[str, str, str], int] | None = None
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


#: Drift kinds that block readiness by themselves, beside drift that hides reads: the client
#: runs a version this coverage-gate was not checked against.
_BLOCKING_KINDS = frozenset({DriftKind.CLIENT_VERSION.value})


def blocks_readiness(drift: str, kinds: Iterable[str]) -> bool:
    """Whether a stream's drift keeps its repository from ready: it could hide reads, or its
    client is outside the checked range (a model's unknown tool or a commit alone does not)."""
    return drift == "hides_reads" or any(kind in _BLOCKING_KINDS for kind in kinds)


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
    #: Mismatched claimed files by (format, client version, kind).
    mismatches: Counter[tuple[str, str, str]] = field(default_factory=Counter)
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
        content, mismatches = self.content, self.mismatches
        for reviewer in reviewers:
            if not reviewer.failed:
                for outcome, n in reviewer.content:
                    content[reviewer.format, outcome] += n
                for kind, n in reviewer.mismatches:
                    mismatches[reviewer.format, reviewer.client_version, kind] += n

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

    def counts(
        self, repository: str, errors: int, error_kinds: dict[str, int] | None = None
    ) -> RepoCounts:
        outcomes = self.outcomes
        first, last = self.first_end_ns, self.last_end_ns
        ordered = sorted(self.durations)  # once for both percentiles
        return RepoCounts(
            repository=repository,
            reviews=self.reviews,
            approvals=self.approvals,
            flagged=outcomes[ReviewOutcome.WOULD_DOWNGRADE] + outcomes[ReviewOutcome.DOWNGRADED],
            evidence_available=self.evidence_available,
            errors=errors,
            error_kinds=error_kinds,
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
            mismatches=dict(sorted(self.mismatches.items())) or None,
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
    "mismatches",
)


def count_reviews(repository: str, reviews: Iterable[ReviewRecord], errors: int) -> RepoCounts:
    """A repository's counts from its ``reconcile`` spans (one per review) and its errors."""
    tally = ReviewTally()
    for review in reviews:
        tally.add(review)
    return tally.counts(repository, errors)
