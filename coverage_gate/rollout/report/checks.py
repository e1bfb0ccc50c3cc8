"""When a repository is ready to move from shadow to enforce: the ``Criteria``, the rates shown
per repository (``RATES``, each a ``RateSpec``), and the checks on one repository's counts
(``readiness``), every one of which must pass.

A rate check passes only when the upper bound of the rate's 95% Wilson interval is at most its
limit (``READINESS_RULE``): a handful of clean reviews cannot pass for a low rate. Judged on
``RepoCounts`` alone, whichever source counted. Pure; the report that shows the checks is
``build``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from coverage_gate.contracts import defaults
from coverage_gate.contracts.model import DepthPolicy
from coverage_gate.rollout.report._format import _ci_range, _iso_s, _pct
from coverage_gate.rollout.report.counts import _BLOCKING_KINDS, RepoCounts
from coverage_gate.rollout.report.stats import _share, wilson

__all__ = [
    "ERROR_RATE",
    "RATES",
    "READINESS_RULE",
    "WOULD_DOWNGRADE_RATE",
    "Check",
    "Criteria",
    "Rate",
    "RateSpec",
    "rate",
    "rate_check",
    "readiness",
]


#: What the report says of its rate checks, in the text and in the JSON.
READINESS_RULE = (
    "A rate check passes only when the upper bound of the rate's 95% Wilson interval is at "
    "most its limit: the point rate alone is not judged."
)


@dataclass(frozen=True, slots=True)
class Criteria:
    """When a repository is ready to move from shadow to enforce. Every check must pass."""

    min_approvals: int = defaults.MIN_APPROVALS
    min_days: float = defaults.MIN_DAYS
    min_evidence_availability: float = defaults.MIN_EVIDENCE_AVAILABILITY
    # The upper bound of the error rate's 95% Wilson interval (runs without a decision among
    # all runs) must be at most this.
    max_error_rate: float = defaults.MAX_ERROR_RATE
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
        if self.max_fallbacks < 0:
            found.append("max fallbacks must be at least 0")
        if not 0 <= self.max_error_rate <= 1:
            found.append("max error rate must be between 0 and 1")
        if not 0 <= self.max_would_downgrade_rate <= 1:
            found.append("max would-downgrade rate must be between 0 and 1")
        return found


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

ERROR_RATE = RateSpec(
    name="error_rate",
    # runs that ended without a decision, among all runs: the reviews and the errors
    counts=lambda counts, _criteria: (counts.errors, counts.reviews + counts.errors),
    sentence=lambda _criteria: "{rate} of reconcile runs ended without a decision",
    unit="runs",
    limit=lambda criteria: criteria.max_error_rate,
    hint="by kind on the errors line",
)

#: Every rate the report shows per repository; those with a limit are readiness checks.
RATES: tuple[RateSpec, ...] = (WOULD_DOWNGRADE_RATE, ERROR_RATE)


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
