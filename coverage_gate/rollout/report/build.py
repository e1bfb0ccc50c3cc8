"""Building the report: per repository (``repo_report`` → ``RepoReport``) from its counts and
the criteria, with its checks, rates, depth policies, content checks and client drift; and the
whole ``Report``, on a telemetry folder's contents (``build_report``) or on counts read over a
Prometheus ``Window`` (``build_window_report``).

Pure: the figures and the checks' words come from ``counts`` and ``checks``; how the report
is written out is ``document``'s and ``text``'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from coverage_gate.contracts.model import Depth, DepthPolicy, FileContent
from coverage_gate.core.reconcile import is_shallow
from coverage_gate.rollout.report._format import _iso_s
from coverage_gate.rollout.report.checks import (
    RATES,
    WOULD_DOWNGRADE_RATE,
    Check,
    Criteria,
    Rate,
    rate,
    readiness,
)
from coverage_gate.rollout.report.counts import CitationReport, Day, RepoCounts
from coverage_gate.rollout.report.flagged import Flagged, _sorted_flagged, flagged_decisions
from coverage_gate.rollout.report.folder import FolderInput, Loaded, Tallied, count_folder
from coverage_gate.rollout.report.stats import _share, wilson

__all__ = [
    "CONTENT_CREDIT_RATE",
    "MISMATCH_RATE",
    "ClientContent",
    "ClientDrift",
    "ContentReport",
    "DepthReport",
    "Evidence",
    "MismatchRow",
    "PolicyRow",
    "RepoReport",
    "Report",
    "Window",
    "build_report",
    "build_window_report",
    "repo_report",
]


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
class MismatchRow:
    """Claimed files of one client version whose content was ``mismatch``, by what their reads
    showed instead (``kind``: ``edit``, the reviewer's own change; ``older``, a text the change
    replaced; ``other``): many ``other`` on one client version and few elsewhere points at a
    presentation the adapter does not model (a false accusation), not at reviewers."""

    format: str
    client_version: str
    kind: str
    files: int


@dataclass(frozen=True, slots=True)
class ContentReport:
    """A repository's claimed files whose content was checked (every claimed file of a reviewer
    that ran with an evidence document), over all its clients and per client, by format."""

    claimed: int
    outcomes: dict[str, int]
    mismatch_rate: Rate
    content_credit_rate: Rate
    clients: list[ClientContent]
    #: Mismatched claimed files by client version and kind (from the spans only).
    mismatches: list[MismatchRow] = field(default_factory=list)


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
    error_kinds: dict[str, int] | None
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
        mismatches=[
            MismatchRow(format=fmt, client_version=version, kind=kind, files=n)
            for (fmt, version, kind), n in (counts.mismatches or {}).items()
        ],
    )


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
        error_kinds=None if counts.error_kinds is None else dict(counts.error_kinds),
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
