"""The reviewer decisions ``--list would_downgrade`` lists (``Flagged``): each reviewer's
unsupported claims, shallow files and failed citations in a review the check downgraded or would
have, in order of repository, end time and revision.

Pure: taken from ``ReviewRecord``s, whether kept (``Loaded``) or as they were read (``Tallied``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from coverage_gate.rollout.metrics import ReviewOutcome
from coverage_gate.rollout.report._format import _iso
from coverage_gate.rollout.report.records import ReviewRecord

__all__ = ["Flagged", "flagged_decisions"]


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


def _flagged_of(review: ReviewRecord, *, timed: bool = True) -> list[Flagged]:
    """The reviewer decisions of one review that ``--list would_downgrade`` lists."""
    if review.outcome not in {ReviewOutcome.WOULD_DOWNGRADE, ReviewOutcome.DOWNGRADED}:
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
