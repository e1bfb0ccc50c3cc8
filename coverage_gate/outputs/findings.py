"""What a decision holds against a reviewer, file by file: the findings that code-review surfaces
(GitHub annotations, SARIF results) show on the file they are about.

One table, ``RULES``: a rule per reason a claim can count against a reviewer, saying which of the
reviewer's entries it flags and how a finding reads. A new reason needs one row here, and every
surface that shows findings shows it. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from coverage_gate.contracts.model import (
    CitationCheck,
    CitationReason,
    DecisionDocument,
    FileDecision,
    FileStatus,
    Mode,
    Reason,
    ReviewerDecision,
    UnsupportedReason,
)
from coverage_gate.core.citations import WINDOW
from coverage_gate.core.note import line_ranges, quoted

__all__ = ["RULES", "Finding", "Rule", "Spot", "findings"]


@dataclass(frozen=True)
class Spot:
    """One flagged place: a file (repository-relative), the lines concerned when known, and what
    the reviewer said there and what stands against it, as a sentence that follows the
    reviewer's name."""

    path: str
    detail: str
    start_line: int | None = None
    end_line: int | None = None


@dataclass(frozen=True)
class Rule:
    """A reason a claim counts against a reviewer, as code review shows it."""

    reason: Reason
    #: Stable identifier (a SARIF rule id): never reworded, or alerts lose their history.
    rule_id: str
    #: PascalCase name (SARIF ``name``).
    name: str
    #: A few words (annotation title, SARIF short description).
    title: str
    #: What the rule means (SARIF full description and help).
    description: str
    #: The reviewer's entries this rule flags in this decision.
    spots: Callable[[ReviewerDecision, DecisionDocument], Iterator[Spot]]


@dataclass(frozen=True)
class Finding:
    rule: Rule
    agent_id: str
    spot: Spot
    #: Whether the mode in force lets findings change the verdict (enforce): shown as errors.
    enforced: bool

    @property
    def message(self) -> str:
        return f"{self.agent_id} {self.spot.detail}"


def _unsupported(reviewer: ReviewerDecision, decision: DecisionDocument) -> Iterator[Spot]:
    at = decision.revision[:12]
    for file in _with_status(reviewer, FileStatus.UNSUPPORTED):
        if file.unsupported_reason is UnsupportedReason.CONTENT_MISMATCH:
            why = (
                f"what the read of {file.path} returned is not {file.path} at {at} (the "
                f"reviewer's own edit, an older version or another file: {file.evidence})"
            )
        elif file.unsupported_reason is UnsupportedReason.EVIDENCE_STALE:
            recorded = (reviewer.evidence_revision or "")[:12]
            why = (
                f"its evidence was recorded at {recorded} and {file.path} changed since: "
                f"nothing showed it as it is at {at}"
            )
        else:
            why = f"no successful read or diff of it was recorded at {at} ({file.evidence})"
        yield Spot(file.path, f"{_claimed(file)} {why}")


def _shallow(reviewer: ReviewerDecision, decision: DecisionDocument) -> Iterator[Spot]:
    for file in _with_status(reviewer, FileStatus.SHALLOW):
        depth = file.depth
        if depth is None:  # a shallow file always has its depth; kept total all the same
            yield Spot(file.path, f"{_claimed(file)} too little of its change was seen")
            continue
        unseen = f"; not seen: lines {line_ranges(depth.unseen)}" if depth.unseen else ""
        first = depth.unseen[0] if depth.unseen else None
        yield Spot(
            file.path,
            f"{_claimed(file)} its evidence showed {depth.changed_lines_seen} of its "
            f"{depth.changed_lines} "
            f"changed lines ({depth.hunks_seen}/{depth.hunks} hunks), too few for depth policy "
            f"{decision.depth_policy.value}{unseen}",
            first.start if first else None,
            first.end if first else None,
        )


def _unverifiable(reviewer: ReviewerDecision, decision: DecisionDocument) -> Iterator[Spot]:
    for file in _with_status(reviewer, FileStatus.UNKNOWN):
        why = file.unknown_reason.value if file.unknown_reason else "evidence unavailable"
        yield Spot(
            file.path,
            f"{_claimed(file)} its evidence is unavailable ({why}), which unknown policy "
            f"{decision.unknown_policy.value} holds against the reviewer",
        )


def _failed_citations(reviewer: ReviewerDecision, decision: DecisionDocument) -> Iterator[Spot]:
    for check in reviewer.citations.failed if reviewer.citations is not None else []:
        path = check.file or check.path
        yield Spot(
            path,
            f"cited `{path}` line {check.line}{_contradiction(check, decision.revision[:12])}",
            check.line,
            check.line,
        )


def _contradiction(check: CitationCheck, revision: str) -> str:
    """What a failed citation said, and what the file at the revision says instead."""
    if check.reason is CitationReason.EMPTY_CONTENT:
        return " with empty content, which says nothing that can be checked"
    said = f" as {quoted(check.content)}"
    if check.reason is CitationReason.MISSING_AT_REVISION:
        return f"{said}; no such file at {revision}"
    if check.reason is CitationReason.LINE_OUT_OF_RANGE:
        return f"{said}; the file has {check.file_lines or 0} line(s) at {revision}"
    there = quoted(check.found) if check.found and check.found.strip() else "nothing (a blank line)"
    return (
        f"{said}; line {check.line} reads {there} at {revision}, and no line within {WINDOW} "
        "of it holds the cited content"
    )


def _claimed(file: FileDecision) -> str:
    return f"claimed `{file.path}` inspected;"


def _with_status(reviewer: ReviewerDecision, status: FileStatus) -> Iterator[FileDecision]:
    return (file for file in reviewer.files if file.status is status)


RULES: tuple[Rule, ...] = (
    Rule(
        Reason.CLAIMS_UNSUPPORTED,
        "claim-unsupported",
        "ClaimUnsupported",
        "claimed inspected, no read recorded",
        "The reviewer claimed this changed file inspected, and its recorded tool calls hold no "
        "successful read of the file and no diff page covering it.",
        _unsupported,
    ),
    Rule(
        Reason.CLAIMS_SHALLOW,
        "claim-shallow",
        "ClaimShallow",
        "claimed inspected, too little of the change seen",
        "The reviewer claimed this changed file inspected, and what its successful calls showed "
        "of the file's changed lines is too little for the repository's depth policy.",
        _shallow,
    ),
    Rule(
        Reason.CLAIMS_UNVERIFIABLE,
        "claim-unverifiable",
        "ClaimUnverifiable",
        "claimed inspected, evidence unavailable",
        "The reviewer claimed this changed file inspected, its evidence cannot speak for the file, "
        "and the repository's unknown policy holds that against the reviewer.",
        _unverifiable,
    ),
    Rule(
        Reason.CITATIONS_FAILED,
        "citation-failed",
        "CitationFailed",
        "cited line does not hold the cited content",
        "The reviewer cited this line of the file at the revision as holding content that neither "
        f"it nor any line within {WINDOW} of it holds (or the file or line does not exist there).",
        _failed_citations,
    ),
)


def findings(decision: DecisionDocument) -> list[Finding]:
    """Every finding of the decision, reviewer by reviewer, rule by rule, in file order. A rule
    flags a reviewer's entries only when its reason is among that reviewer's reasons."""
    enforced = decision.mode is Mode.ENFORCE
    found: list[Finding] = []
    for reviewer in decision.reviewers:
        for rule in RULES:
            if rule.reason in reviewer.reasons:
                found += [
                    Finding(rule, reviewer.agent_id, spot, enforced)
                    for spot in rule.spots(reviewer, decision)
                ]
    return found
