"""What coverage-gate measures about each decision: the instruments, as data, and their recorders.

``INSTRUMENTS`` is the single list of metric names, kinds, units and attribute keys. The docs'
metric table, the dashboard tests and the report read it; nothing else names a metric.

Metric attributes are low-cardinality only: owner, repository, mode, mode source, outcome,
agent, stream format and a few closed enums. Paths, revisions and call ids never go on a metric;
they go on the ``reconcile {repo}`` span (bounded), which the report reads for per-review detail.

Telemetry providers are passed in (a ``Meter``, a ``Tracer``); nothing here touches globals, the
environment or the clock, except that a span ends now (wall clock) when no end time is given.
``Meter`` and ``Tracer`` are the parts of OpenTelemetry's this module uses: the SDK's, and the
direct ones of the local files (``otlp_direct``), are such; no OpenTelemetry package is imported.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from coverage_gate.contracts import review_span as span_names
from coverage_gate.contracts.model import (
    Capability,
    CitationOutcome,
    Claim,
    Coverage,
    DecisionDocument,
    Depth,
    DriftEntry,
    FileContent,
    FileStatus,
    MismatchKind,
    Reason,
    ReviewerDecision,
    UnknownReason,
    Verdict,
)
from coverage_gate.telemetry.ports import AttributeValue, Counter, Histogram, Meter, Tracer

__all__ = [
    "CAPABILITY_ABSENT",
    "CITATIONS",
    "CITATION_NOT_REPLAYED",
    "CITATION_NO_REASON",
    "CITATION_OVER_LIMIT",
    "CLAIMED_FILES",
    "CONTENT_FILES",
    "DEPTH_FILES",
    "DEPTH_POLICY_APPROVALS",
    "DRIFT",
    "DURATION_BUCKETS_S",
    "ERRORS",
    "EVIDENCE_RECORDS",
    "FORMAT_UNKNOWN",
    "INSTRUMENTS",
    "LEGACY_REASONS",
    "MAX_SPAN_CITATIONS",
    "MAX_SPAN_FILES",
    "MODE_FALLBACKS",
    "RECONCILE_DURATION",
    "REVIEWS",
    "STREAMS",
    "UNKNOWN_FILES",
    "UNSUPPORTED_FILES",
    "VERSION_NONE",
    "VERSION_OTHER",
    "ErrorKind",
    "InstrumentSpec",
    "Instruments",
    "Kind",
    "ReviewOutcome",
    "ReviewerFacts",
    "depth_counts",
    "drift_label",
    "evidence_available",
    "instruments",
    "record_decision",
    "record_error",
    "record_reconcile_span",
    "review_evidence_available",
    "review_outcome",
    "reviewer_facts",
    "split_repo",
    "version_label",
]

#: Unsupported paths put on one reconcile span, across its reviewers; the rest are counted.
MAX_SPAN_FILES = 50

#: Bucket bounds for the reconcile duration, in seconds (the SDK default suits milliseconds).
DURATION_BUCKETS_S: tuple[float, ...] = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)

#: Reasons the legacy gate downgrades for, in every mode; the new check adds the others.
LEGACY_REASONS = frozenset({Reason.REVIEWER_FAILED, Reason.FILES_SKIPPED, Reason.FILES_MISSING})


class Kind(StrEnum):
    COUNTER = "counter"
    HISTOGRAM = "histogram"


class ReviewOutcome(StrEnum):
    """What happened to one review's verdict, as far as the coverage check is concerned."""

    KEPT = "kept"  # an approve, fully verified, left as it was
    DOWNGRADED = "downgraded"  # enforce: the new check turned the approve into a comment
    WOULD_DOWNGRADE = "would_downgrade"  # shadow (or off): it would have, but did not
    UNVERIFIABLE = "unverifiable"  # an approve kept although some claims could not be checked
    NOT_APPLICABLE = "not_applicable"  # the verdict was not an approve: nothing to downgrade
    LEGACY_DOWNGRADED = "legacy_downgraded"  # the legacy gate downgraded it, whatever the mode
    NOTHING_TO_REVIEW = "nothing_to_review"  # an approve kept with no reviewable file in scope


class ErrorKind(StrEnum):
    """Why a reconcile run produced no decision (the exit-code classes of the CLI)."""

    BAD_INPUT = "bad_input"
    BAD_CONFIGURATION = "bad_configuration"
    INTERNAL = "internal"


@dataclass(frozen=True, slots=True)
class InstrumentSpec:
    name: str
    kind: Kind
    unit: str
    description: str
    attributes: tuple[str, ...]

    @property
    def prometheus_name(self) -> str:
        """The name Prometheus holds after the OTLP translation (Collector ``prometheus``
        exporter, ``prometheusremotewrite``, the SDK's Prometheus reader): dots become
        underscores, the unit becomes a suffix (``{...}`` annotations are dropped, ``s`` is
        ``seconds``), counters end in ``_total``. Histograms add ``_bucket``/``_sum``/``_count``."""
        name = self.name.replace(".", "_")
        suffix = _PROMETHEUS_UNITS.get(self.unit, "" if self.unit.startswith("{") else self.unit)
        if suffix and not name.endswith(f"_{suffix}"):
            name = f"{name}_{suffix}"
        if self.kind is Kind.COUNTER:
            name = f"{name}_total"
        return name

    @property
    def prometheus_series(self) -> tuple[str, ...]:
        """Every series name this instrument produces in Prometheus."""
        if self.kind is Kind.HISTOGRAM:
            base = self.prometheus_name
            return (f"{base}_bucket", f"{base}_sum", f"{base}_count")
        return (self.prometheus_name,)


_PROMETHEUS_UNITS = {"s": "seconds", "ms": "milliseconds", "By": "bytes", "1": ""}

# evidence_available: whether every reviewer that ran had evidence able to speak for its claims
# (``review_evidence_available``), so that evidence availability per review, a readiness check,
# can be counted from the metrics as the report counts it from the spans.
_REVIEW = ("owner", "repository", "mode", "mode_source", "outcome", "evidence_available")
_FILES = ("owner", "repository", "mode", "agent")

REVIEWS = InstrumentSpec(
    "coverage_gate.reviews",
    Kind.COUNTER,
    "{review}",
    "Reviews reconciled, by what happened to their verdict.",
    _REVIEW,
)
CLAIMED_FILES = InstrumentSpec(
    "coverage_gate.claimed_files",
    Kind.COUNTER,
    "{file}",
    "In-scope files reviewers claimed to have inspected.",
    _FILES,
)
UNSUPPORTED_FILES = InstrumentSpec(
    "coverage_gate.unsupported_files",
    Kind.COUNTER,
    "{file}",
    "Claimed files with complete evidence and no successful read or covering diff page.",
    _FILES,
)
UNKNOWN_FILES = InstrumentSpec(
    "coverage_gate.unknown_files",
    Kind.COUNTER,
    "{file}",
    "Claimed files the evidence cannot speak for (unavailable, incomplete, truncated, stale).",
    (*_FILES, "unknown_reason"),
)
EVIDENCE_RECORDS = InstrumentSpec(
    "coverage_gate.evidence.records",
    Kind.COUNTER,
    "{record}",
    "Evidence records reconciled, one per reviewer, by capability, completeness, truncation.",
    ("owner", "repository", "agent", "format", "capability", "complete", "truncated"),
)
RECONCILE_DURATION = InstrumentSpec(
    "coverage_gate.reconcile.duration",
    Kind.HISTOGRAM,
    "s",
    "Time taken to reconcile one review.",
    ("owner", "repository", "mode"),
)
MODE_FALLBACKS = InstrumentSpec(
    "coverage_gate.mode.fallbacks",
    Kind.COUNTER,
    "{fallback}",
    "Runs whose mode came from the configured fallback because no flag source answered.",
    ("owner", "repository", "mode"),
)
ERRORS = InstrumentSpec(
    "coverage_gate.errors",
    Kind.COUNTER,
    "{error}",
    "Reconcile runs that ended without a decision, by error kind.",
    ("owner", "repository", "kind"),
)
DEPTH_FILES = InstrumentSpec(
    "coverage_gate.depth.files",
    Kind.COUNTER,
    "{file}",
    "Claimed files with successful evidence, by how much of their change it showed and their "
    "status under the depth policy in force.",
    (*_FILES, "depth", "depth_policy", "status"),
)
DEPTH_POLICY_APPROVALS = InstrumentSpec(
    "coverage_gate.depth_policy.approvals",
    Kind.COUNTER,
    "{review}",
    "Approvals counted once under each depth policy, by whether that policy would downgrade them.",
    ("owner", "repository", "mode", "depth_policy", "would_downgrade"),
)

CONTENT_FILES = InstrumentSpec(
    "coverage_gate.content.files",
    Kind.COUNTER,
    "{file}",
    "Claimed files by how their evidence was checked against their content at the revision "
    "(matched, via_content, mismatch, unchecked, none), by stream format.",
    (*_FILES, "format", "content"),
)

STREAMS = InstrumentSpec(
    "coverage_gate.streams",
    Kind.COUNTER,
    "{stream}",
    "Reviewer streams reconciled, by format, client version and whether the adapter understood "
    "them: drift none, said (understood enough: an unknown tool, a version or a commit), "
    "hides_reads (its claims without evidence were unknown).",
    (*_FILES, "format", "client_version", "drift"),
)
DRIFT = InstrumentSpec(
    "coverage_gate.drift",
    Kind.COUNTER,
    "{stream}",
    "Reviewer streams that held drift of one kind (DESIGN §6 rule 19), by format and client "
    "version: one per stream and kind.",
    (*_FILES, "format", "client_version", "kind"),
)

CITATIONS = InstrumentSpec(
    "coverage_gate.citations",
    Kind.COUNTER,
    "{citation}",
    "Citations reviewers gave, by what replaying them against the file at the revision found "
    "(citation_outcome, citation_reason) and whether the reviewer has evidence of reading the "
    "file; those past the per-reviewer limit as not_replayed.",
    (*_FILES, "citation_outcome", "citation_reason", "uncorroborated"),
)

#: ``citation_outcome`` of citations past the per-reviewer limit, and their ``citation_reason``.
CITATION_NOT_REPLAYED = "not_replayed"
CITATION_OVER_LIMIT = "over_limit"
#: ``citation_reason`` of a citation that matched (it has no reason).
CITATION_NO_REASON = "none"

INSTRUMENTS: tuple[InstrumentSpec, ...] = (
    REVIEWS,
    CLAIMED_FILES,
    UNSUPPORTED_FILES,
    UNKNOWN_FILES,
    EVIDENCE_RECORDS,
    RECONCILE_DURATION,
    MODE_FALLBACKS,
    ERRORS,
    DEPTH_FILES,
    DEPTH_POLICY_APPROVALS,
    CITATIONS,
    CONTENT_FILES,
    STREAMS,
    DRIFT,
)

#: ``client_version`` label when the stream names none, or names one that is not a version.
VERSION_NONE = "none"
VERSION_OTHER = "other"
_VERSION_LABEL = re.compile(r"\d{1,6}(?:\.\d{1,9}){0,3}(?:[-+][0-9A-Za-z.]{1,24})?")


def version_label(version: str | None) -> str:
    """A client version as a metric label: bounded to what a version looks like."""
    if version is None:
        return VERSION_NONE
    return version if _VERSION_LABEL.fullmatch(version) else VERSION_OTHER


def drift_label(drift: Sequence[DriftEntry]) -> str:
    if not drift:
        return "none"
    return "hides_reads" if any(entry.hides_reads for entry in drift) else "said"


#: Evidence capability label when a reviewer had no evidence document at all.
CAPABILITY_ABSENT = "absent"
#: Format label when neither the caller nor the decision names the stream format.
FORMAT_UNKNOWN = "unknown"


# --- derived facts ----------------------------------------------------------------------------


def split_repo(repo: str) -> tuple[str, str]:
    """``owner/name`` → (owner, repository); the repository label keeps the full ``owner/name``
    so two owners' ``api`` repositories never share a series."""
    owner, sep, _ = repo.partition("/")
    return (owner if sep else "", repo)


def review_outcome(decision: DecisionDocument) -> ReviewOutcome:
    """Classify a decision. The legacy gate wins: a review it downgraded is ``legacy_downgraded``
    in every mode, since flipping the new check on or off changes nothing for it."""
    if decision.verdict_in is not Verdict.APPROVE:
        return ReviewOutcome.NOT_APPLICABLE
    if decision.verdict_out is not Verdict.APPROVE:
        if LEGACY_REASONS.intersection(decision.reasons):
            return ReviewOutcome.LEGACY_DOWNGRADED
        return ReviewOutcome.DOWNGRADED
    if not decision.scope:
        return ReviewOutcome.NOTHING_TO_REVIEW
    if decision.would_downgrade:
        return ReviewOutcome.WOULD_DOWNGRADE
    if any(f.status is FileStatus.UNKNOWN for r in decision.reviewers for f in r.files):
        return ReviewOutcome.UNVERIFIABLE
    return ReviewOutcome.KEPT


@dataclass(frozen=True, slots=True)
class ReviewerFacts:
    """The per-reviewer numbers both the metrics and the span carry."""

    agent: str
    format: str
    capability: str
    complete: bool
    truncated: bool
    stale: bool
    failed: bool
    claimed: int
    unsupported: tuple[str, ...]
    unknown: Mapping[UnknownReason, int]
    # Claimed files with successful evidence by depth, and the status each has (verified or
    # shallow) under the policy in force; the shallow ones' paths.
    depths: Mapping[tuple[Depth, FileStatus], int]
    shallow: tuple[str, ...]
    # Citations by (citation_outcome, citation_reason, uncorroborated) label values; the failed
    # ones as ``path:line``.
    citations: Mapping[tuple[str, str, bool], int] = field(default_factory=dict)
    failed_citations: tuple[str, ...] = ()
    # Claimed files by how their evidence was checked against their content.
    content: Mapping[FileContent, int] = field(default_factory=dict)
    # Claimed files whose content is ``mismatch``, by what their reads showed instead.
    mismatches: Mapping[MismatchKind, int] = field(default_factory=dict)
    evidence: bool = False  # it brought an evidence document
    client_version: str = VERSION_NONE
    drift: str = "none"  # drift_label of its stream
    drift_kinds: tuple[str, ...] = ()
    mutations: int = 0

    @property
    def citations_replayed(self) -> int:
        return sum(
            n for (outcome, _, _), n in self.citations.items() if outcome != CITATION_NOT_REPLAYED
        )

    @property
    def unknown_total(self) -> int:
        return sum(self.unknown.values())


def reviewer_facts(reviewer: ReviewerDecision, fmt: str | None) -> ReviewerFacts:
    """Completeness and truncation are read from the decision: a reviewer's evidence is
    incomplete (or truncated) when some claimed file is unknown for that reason."""
    unknown: dict[UnknownReason, int] = {}
    for entry in reviewer.files:
        if entry.status is FileStatus.UNKNOWN:
            why = entry.unknown_reason or UnknownReason.NO_EVIDENCE_DOCUMENT
            unknown[why] = unknown.get(why, 0) + 1
    depths: dict[tuple[Depth, FileStatus], int] = {}
    for entry in reviewer.files:
        if entry.depth is not None:
            key = (entry.depth.depth, entry.status)
            depths[key] = depths.get(key, 0) + 1
    citations: dict[tuple[str, str, bool], int] = {}
    failed: list[str] = []
    if reviewer.citations is not None:
        for check in reviewer.citations.checks:
            cause = check.reason.value if check.reason else CITATION_NO_REASON
            label = (check.outcome.value, cause, check.uncorroborated)
            citations[label] = citations.get(label, 0) + 1
            if check.outcome is CitationOutcome.FAILED:
                failed.append(f"{check.file or check.path}:{check.line}")
        if reviewer.citations.over_limit:
            label = (CITATION_NOT_REPLAYED, CITATION_OVER_LIMIT, False)
            citations[label] = reviewer.citations.over_limit
    content: dict[FileContent, int] = {}
    mismatches: dict[MismatchKind, int] = {}
    for entry in reviewer.files:
        if entry.content is not None:
            content[entry.content] = content.get(entry.content, 0) + 1
        if entry.mismatch_kind is not None:
            mismatches[entry.mismatch_kind] = mismatches.get(entry.mismatch_kind, 0) + 1
    capability = reviewer.evidence_capability
    return ReviewerFacts(
        agent=reviewer.agent_id,
        format=fmt or reviewer.evidence_source or FORMAT_UNKNOWN,
        capability=capability.value if capability is not None else CAPABILITY_ABSENT,
        complete=UnknownReason.STREAM_INCOMPLETE not in unknown,
        truncated=UnknownReason.TRUNCATED in unknown,
        stale=UnknownReason.STALE in unknown,
        failed=reviewer.coverage is Coverage.INCOMPLETE_FAILED,
        claimed=sum(1 for f in reviewer.files if f.claim is Claim.INSPECTED),
        unsupported=tuple(f.path for f in reviewer.files if f.status is FileStatus.UNSUPPORTED),
        unknown=unknown,
        depths=depths,
        shallow=tuple(f.path for f in reviewer.files if f.status is FileStatus.SHALLOW),
        citations=citations,
        failed_citations=tuple(failed),
        content=content,
        mismatches=mismatches,
        evidence=capability is not None,
        client_version=version_label(reviewer.evidence_client_version),
        drift=drift_label(reviewer.drift),
        drift_kinds=tuple(sorted({entry.kind.value for entry in reviewer.drift})),
        mutations=len(reviewer.mutations),
    )


def depth_counts(facts: Sequence[ReviewerFacts]) -> dict[Depth, int]:
    """Claimed files with successful evidence, by depth, over several reviewers."""
    counts = dict.fromkeys(Depth, 0)
    for fact in facts:
        for (depth, _), count in fact.depths.items():
            counts[depth] += count
    return counts


def evidence_available(facts: ReviewerFacts) -> bool:
    """Evidence that can speak for every claim: per-file, complete, not truncated, not stale."""
    return (
        facts.capability == Capability.PER_FILE.value
        and facts.complete
        and not facts.truncated
        and not facts.stale
    )


def review_evidence_available(facts: Sequence[ReviewerFacts]) -> bool:
    """A review's evidence is available when every reviewer that ran (failed reviewers claim
    nothing) had evidence able to speak for its claims."""
    return all(evidence_available(f) for f in facts if not f.failed)


def _bool(value: bool) -> str:
    # Label values are strings in Prometheus; spelling them here keeps every exporter alike.
    return "true" if value else "false"


# --- metrics ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Instruments:
    reviews: Counter
    claimed_files: Counter
    unsupported_files: Counter
    unknown_files: Counter
    evidence_records: Counter
    reconcile_duration: Histogram
    mode_fallbacks: Counter
    errors: Counter
    depth_files: Counter
    depth_policy_approvals: Counter
    citations: Counter
    content_files: Counter
    streams: Counter
    drift: Counter


def instruments(meter: Meter) -> Instruments:
    """Create (or fetch: the SDK returns the same instrument for the same name) every
    instrument on ``meter``."""

    def counter(spec: InstrumentSpec) -> Counter:
        return meter.create_counter(spec.name, unit=spec.unit, description=spec.description)

    spec = RECONCILE_DURATION
    return Instruments(
        reviews=counter(REVIEWS),
        claimed_files=counter(CLAIMED_FILES),
        unsupported_files=counter(UNSUPPORTED_FILES),
        unknown_files=counter(UNKNOWN_FILES),
        evidence_records=counter(EVIDENCE_RECORDS),
        reconcile_duration=meter.create_histogram(
            spec.name,
            unit=spec.unit,
            description=spec.description,
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS_S),
        ),
        mode_fallbacks=counter(MODE_FALLBACKS),
        errors=counter(ERRORS),
        depth_files=counter(DEPTH_FILES),
        depth_policy_approvals=counter(DEPTH_POLICY_APPROVALS),
        citations=counter(CITATIONS),
        content_files=counter(CONTENT_FILES),
        streams=counter(STREAMS),
        drift=counter(DRIFT),
    )


def record_decision(
    meter: Meter,
    decision: DecisionDocument,
    *,
    duration_s: float,
    formats: Mapping[str, str] | None = None,
) -> ReviewOutcome:
    """Record one decision on every instrument; returns the outcome it was counted under.

    ``formats`` maps an agent id to the stream format its evidence came from; without it the
    decision's ``evidence_source`` is used. Failed reviewers claim nothing and bring no
    evidence record.
    """
    inst = instruments(meter)
    owner, repository = split_repo(decision.repo)
    outcome = review_outcome(decision)
    mode = decision.mode.value
    facts = [reviewer_facts(r, (formats or {}).get(r.agent_id)) for r in decision.reviewers]
    inst.reviews.add(
        1,
        {
            "owner": owner,
            "repository": repository,
            "mode": mode,
            "mode_source": decision.mode_source.value,
            "outcome": outcome.value,
            "evidence_available": _bool(review_evidence_available(facts)),
        },
    )
    inst.reconcile_duration.record(
        max(duration_s, 0.0), {"owner": owner, "repository": repository, "mode": mode}
    )
    if decision.mode_source.value == "fallback":
        inst.mode_fallbacks.add(1, {"owner": owner, "repository": repository, "mode": mode})
    if decision.verdict_in is Verdict.APPROVE:
        for row in decision.depth_policies:
            inst.depth_policy_approvals.add(
                1,
                {
                    "owner": owner,
                    "repository": repository,
                    "mode": mode,
                    "depth_policy": row.depth_policy.value,
                    "would_downgrade": _bool(row.would_downgrade),
                },
            )
    for fact in facts:
        if fact.failed:
            continue
        files = {"owner": owner, "repository": repository, "mode": mode, "agent": fact.agent}
        inst.claimed_files.add(fact.claimed, files)
        inst.unsupported_files.add(len(fact.unsupported), files)
        for why, count in sorted(fact.unknown.items()):
            inst.unknown_files.add(count, {**files, "unknown_reason": why.value})
        for (depth, status), count in sorted(fact.depths.items()):
            inst.depth_files.add(
                count,
                {
                    **files,
                    "depth": depth.value,
                    "depth_policy": decision.depth_policy.value,
                    "status": status.value,
                },
            )
        for (cited, cited_why, unread), count in sorted(fact.citations.items()):
            inst.citations.add(
                count,
                {
                    **files,
                    "citation_outcome": cited,
                    "citation_reason": cited_why,
                    "uncorroborated": _bool(unread),
                },
            )
        for checked, count in sorted(fact.content.items()):
            inst.content_files.add(
                count, {**files, "format": fact.format, "content": checked.value}
            )
        if fact.evidence:
            stream = {**files, "format": fact.format, "client_version": fact.client_version}
            inst.streams.add(1, {**stream, "drift": fact.drift})
            for kind in fact.drift_kinds:
                inst.drift.add(1, {**stream, "kind": kind})
        inst.evidence_records.add(
            1,
            {
                "owner": owner,
                "repository": repository,
                "agent": fact.agent,
                "format": fact.format,
                "capability": fact.capability,
                "complete": _bool(fact.complete),
                "truncated": _bool(fact.truncated),
            },
        )
    return outcome


def record_error(meter: Meter, *, repo: str, kind: ErrorKind) -> None:
    """Count a reconcile run that ended without a decision."""
    owner, repository = split_repo(repo)
    instruments(meter).errors.add(1, {"owner": owner, "repository": repository, "kind": kind.value})


# --- spans ------------------------------------------------------------------------------------

#: Failed citations named on one reviewer event; the rest are in the count.
MAX_SPAN_CITATIONS = 10


def _bounded(paths: Sequence[str], budget: int) -> tuple[list[str], int]:
    kept = list(paths[: max(budget, 0)])
    return kept, len(paths) - len(kept)


def record_reconcile_span(
    tracer: Tracer,
    decision: DecisionDocument,
    *,
    duration_s: float,
    formats: Mapping[str, str] | None = None,
    end_time_ns: int | None = None,
    max_files: int = MAX_SPAN_FILES,
) -> None:
    """Emit one ``reconcile {repo}`` span for a decision already made.

    The span ends at ``end_time_ns`` (now, by the tracer's clock, when omitted) and starts
    ``duration_s`` earlier. It carries the outcome, counts, and at most ``max_files``
    unsupported paths (the rest counted in ``…unsupported_files.dropped``); each reviewer is a
    ``coverage_gate.reviewer`` event with its own share of that budget. Shallow paths (under the
    depth policy in force) go on each reviewer's event from what budget is left.
    """
    owner, repository = split_repo(decision.repo)
    facts = [reviewer_facts(r, (formats or {}).get(r.agent_id)) for r in decision.reviewers]
    unsupported = [path for f in facts for path in f.unsupported]
    kept, dropped = _bounded(unsupported, max_files)
    attributes: dict[str, AttributeValue] = {
        span_names.A_REPOSITORY: repository,
        span_names.A_OWNER: owner,
        span_names.A_REVISION: decision.revision,
        span_names.A_MODE: decision.mode.value,
        span_names.A_MODE_SOURCE: decision.mode_source.value,
        span_names.A_UNKNOWN_POLICY: decision.unknown_policy.value,
        span_names.A_VERDICT_IN: decision.verdict_in.value,
        span_names.A_VERDICT_OUT: decision.verdict_out.value,
        span_names.A_OUTCOME: review_outcome(decision).value,
        span_names.A_REASONS: [r.value for r in decision.reasons],
        span_names.A_DOWNGRADED: decision.downgraded,
        span_names.A_WOULD_DOWNGRADE: decision.would_downgrade,
        span_names.A_REVIEWERS: len(decision.reviewers),
        span_names.A_CLAIMED: sum(f.claimed for f in facts),
        span_names.A_UNSUPPORTED: len(unsupported),
        span_names.A_UNKNOWN: sum(f.unknown_total for f in facts),
        span_names.A_UNSUPPORTED_PATHS: kept,
        span_names.A_UNSUPPORTED_DROPPED: dropped,
        span_names.A_DURATION: max(duration_s, 0.0),
        span_names.A_UNKNOWN_POLICY_SOURCE: decision.unknown_policy_source.value,
        span_names.A_DEPTH_POLICY: decision.depth_policy.value,
        span_names.A_DEPTH_POLICY_SOURCE: decision.depth_policy_source.value,
        span_names.A_WOULD_DOWNGRADE_UNDER: [
            row.depth_policy.value for row in decision.depth_policies if row.would_downgrade
        ],
        span_names.A_SHALLOW: sum(len(f.shallow) for f in facts),
        span_names.A_CITATION_POLICY: decision.citation_policy.value,
        span_names.A_CITATION_POLICY_SOURCE: decision.citation_policy_source.value,
        span_names.A_CITATIONS: sum(f.citations_replayed for f in facts),
        span_names.A_CITATIONS_FAILED: sum(len(f.failed_citations) for f in facts),
        span_names.A_CITATIONS_WOULD_DOWNGRADE: decision.citations_would_downgrade,
        span_names.A_MUTATION_POLICY: decision.mutation_policy.value,
        span_names.A_MUTATION_POLICY_SOURCE: decision.mutation_policy_source.value,
        span_names.A_MUTATIONS_WOULD_DOWNGRADE: decision.mutations_would_downgrade,
        **{
            f"{span_names.A_DEPTH_PREFIX}{depth.value}": count
            for depth, count in depth_counts(facts).items()
        },
    }
    end = end_time_ns if end_time_ns is not None else time.time_ns()
    span = tracer.start_span(
        f"{span_names.SPAN_PREFIX}{decision.repo}",  # kind internal, the default
        attributes=attributes,
        start_time=end - int(max(duration_s, 0.0) * 1e9),
    )
    budget = max_files
    shallow_budget = max(max_files - len(kept), 0)
    for reviewer, fact in zip(decision.reviewers, facts, strict=True):
        paths, rest = _bounded(fact.unsupported, budget)
        budget -= len(paths)
        shallow, _ = _bounded(fact.shallow, shallow_budget)
        shallow_budget -= len(shallow)
        span.add_event(
            span_names.REVIEWER_EVENT,
            {
                span_names.A_AGENT: fact.agent,
                span_names.A_FORMAT: fact.format,
                span_names.A_CAPABILITY: fact.capability,
                span_names.A_COMPLETE: fact.complete,
                span_names.A_TRUNCATED: fact.truncated,
                span_names.A_STALE: fact.stale,
                span_names.A_FAILED: fact.failed,
                span_names.A_COVERAGE: reviewer.coverage.value,
                span_names.A_WOULD_DOWNGRADE: reviewer.would_downgrade,
                span_names.A_CLAIMED: fact.claimed,
                span_names.A_UNSUPPORTED: len(fact.unsupported),
                span_names.A_UNKNOWN: fact.unknown_total,
                span_names.A_UNSUPPORTED_PATHS: paths,
                span_names.A_UNSUPPORTED_DROPPED: rest,
                span_names.A_SHALLOW: len(fact.shallow),
                span_names.A_SHALLOW_PATHS: shallow,
                span_names.A_CITATIONS: fact.citations_replayed,
                span_names.A_CITATIONS_FAILED: len(fact.failed_citations),
                span_names.A_FAILED_CITATIONS: list(fact.failed_citations[:MAX_SPAN_CITATIONS]),
                **{
                    f"{span_names.A_CONTENT_PREFIX}{checked.value}": fact.content.get(checked, 0)
                    for checked in FileContent
                },
                **{
                    f"{span_names.A_MISMATCH_PREFIX}{kind.value}": n
                    for kind, n in sorted(fact.mismatches.items())
                },
                span_names.A_MUTATIONS: fact.mutations,
                # a reviewer without an evidence document has no stream to have understood
                **(
                    {
                        span_names.A_CLIENT_VERSION: fact.client_version,
                        span_names.A_DRIFT: fact.drift,
                        span_names.A_DRIFT_KINDS: list(fact.drift_kinds),
                    }
                    if fact.evidence
                    else {}
                ),
            },
            timestamp=end,
        )
    span.end(end_time=end)
