"""Replay: what candidate settings would have decided on reviews already decided, from receipts.

Each receipt is decided again, offline (``receipts.redecide``), under the candidate setting for
its repository, and the new decision is compared with the recorded one:

* ``newly_downgraded``: the recorded verdict stood, the candidate turns it into a Comment;
* ``no_longer_downgraded``: the recorded decision turned it into a Comment, the candidate would not;
* ``would_downgrade_changed``: the verdict is the same, but whether the evidence check would
  downgrade it changed (a stricter policy in shadow, say);
* ``unchanged``.

The first two are the verdicts that change. Each changed receipt is an audit entry: its id,
repository, revision, reviewers, old and new verdict, and why (the settings that differ and the
evidence check's reasons under the candidate).

The candidate setting of a receipt (``Candidate.setting``): each of mode, unknown policy, depth
policy and citation policy is the option's when one was given; else, with a candidate flags
snapshot, what that snapshot's flag says for the receipt's repository, as ``reconcile`` would
(its variant's mode, its payload's policies, else the default policy); else the recorded one.

Pure: receipts come in decoded; the flag evaluation is passed in; nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum

from coverage_gate.contracts.model import (
    CitationPolicy,
    DecisionDocument,
    DepthPolicy,
    Mode,
    ModeSource,
    MutationPolicy,
    PolicySource,
    Reason,
    UnknownPolicy,
    Verdict,
)
from coverage_gate.contracts.receipt import Receipt
from coverage_gate.rollout.receipts import Decide, redecide

__all__ = [
    "CHECK_REASONS",
    "AuditEntry",
    "Candidate",
    "Change",
    "FlagAnswer",
    "FlagLookup",
    "Replayed",
    "RepoTally",
    "Setting",
    "Tally",
    "classify",
    "replay_one",
]


class Change(StrEnum):
    NEWLY_DOWNGRADED = "newly_downgraded"
    NO_LONGER_DOWNGRADED = "no_longer_downgraded"
    WOULD_DOWNGRADE_CHANGED = "would_downgrade_changed"
    UNCHANGED = "unchanged"


#: The evidence check's reasons: what a candidate can add to or take from a review.
CHECK_REASONS = (
    Reason.CLAIMS_UNSUPPORTED,
    Reason.CLAIMS_SHALLOW,
    Reason.CLAIMS_UNVERIFIABLE,
    Reason.CITATIONS_FAILED,
)


@dataclass(frozen=True)
class Setting:
    """What a review is decided under: the mode and each policy, with where each came from."""

    mode: Mode
    mode_source: ModeSource
    unknown_policy: UnknownPolicy
    unknown_policy_source: PolicySource
    depth_policy: DepthPolicy
    depth_policy_source: PolicySource
    citation_policy: CitationPolicy = CitationPolicy.DOWNGRADE
    citation_policy_source: PolicySource = PolicySource.DEFAULT
    mutation_policy: MutationPolicy = MutationPolicy.ACCEPT
    mutation_policy_source: PolicySource = PolicySource.DEFAULT

    @classmethod
    def recorded(cls, receipt: Receipt) -> Setting:
        inputs = receipt.inputs
        return cls(
            mode=inputs.mode,
            mode_source=inputs.mode_source,
            unknown_policy=inputs.unknown_policy,
            unknown_policy_source=inputs.unknown_policy_source,
            depth_policy=inputs.depth_policy,
            depth_policy_source=inputs.depth_policy_source,
            citation_policy=inputs.citation_policy,
            citation_policy_source=inputs.citation_policy_source,
            mutation_policy=inputs.mutation_policy,
            mutation_policy_source=inputs.mutation_policy_source,
        )

    def rules(self) -> tuple[Mode, UnknownPolicy, DepthPolicy, CitationPolicy, MutationPolicy]:
        """What decides (where each came from does not change a verdict)."""
        return (
            self.mode,
            self.unknown_policy,
            self.depth_policy,
            self.citation_policy,
            self.mutation_policy,
        )


@dataclass(frozen=True)
class FlagAnswer:
    """What a candidate flags snapshot says for one repository (policies ``None``: not set)."""

    mode: Mode
    mode_source: ModeSource
    unknown_policy: UnknownPolicy | None = None
    depth_policy: DepthPolicy | None = None
    citation_policy: CitationPolicy | None = None
    mutation_policy: MutationPolicy | None = None


#: The candidate flag for a repository, given its reviewers' agent ids and evidence formats.
FlagLookup = Callable[[str, tuple[str, ...], tuple[str, ...]], FlagAnswer]


@dataclass(frozen=True)
class Candidate:
    """The settings a replay asks about (``None``: not part of the candidate)."""

    mode: Mode | None = None
    unknown_policy: UnknownPolicy | None = None
    depth_policy: DepthPolicy | None = None
    citation_policy: CitationPolicy | None = None
    flags: FlagLookup | None = None

    def setting(self, receipt: Receipt) -> Setting:
        chosen = Setting.recorded(receipt)
        if self.flags is not None:
            inputs = receipt.inputs
            agents = tuple(sorted({r.agent_id for r in inputs.reviewers}))
            formats = tuple(
                sorted({r.evidence.source for r in inputs.reviewers if r.evidence is not None})
            )
            answer = self.flags(inputs.repo, agents, formats)
            chosen = replace(
                chosen,
                mode=answer.mode,
                mode_source=answer.mode_source,
                unknown_policy=answer.unknown_policy or UnknownPolicy.ACCEPT,
                unknown_policy_source=PolicySource.PAYLOAD
                if answer.unknown_policy
                else PolicySource.DEFAULT,
                depth_policy=answer.depth_policy or DepthPolicy.ACCEPT,
                depth_policy_source=PolicySource.PAYLOAD
                if answer.depth_policy
                else PolicySource.DEFAULT,
                citation_policy=answer.citation_policy or CitationPolicy.DOWNGRADE,
                citation_policy_source=PolicySource.PAYLOAD
                if answer.citation_policy
                else PolicySource.DEFAULT,
                mutation_policy=answer.mutation_policy or MutationPolicy.ACCEPT,
                mutation_policy_source=PolicySource.PAYLOAD
                if answer.mutation_policy
                else PolicySource.DEFAULT,
            )
        if self.mode is not None:
            chosen = replace(chosen, mode=self.mode, mode_source=ModeSource.OVERRIDE)
        if self.unknown_policy is not None:
            chosen = replace(
                chosen, unknown_policy=self.unknown_policy, unknown_policy_source=PolicySource.CLI
            )
        if self.depth_policy is not None:
            chosen = replace(
                chosen, depth_policy=self.depth_policy, depth_policy_source=PolicySource.CLI
            )
        if self.citation_policy is not None:
            chosen = replace(
                chosen,
                citation_policy=self.citation_policy,
                citation_policy_source=PolicySource.CLI,
            )
        return chosen

    def describe(self) -> str:
        parts = [
            f"{name.replace('_', ' ')} {value}"
            for name, value in (
                ("mode", self.mode),
                ("unknown_policy", self.unknown_policy),
                ("depth_policy", self.depth_policy),
                ("citation_policy", self.citation_policy),
            )
            if value is not None
        ]
        if self.flags is not None:
            parts.append("the candidate flags snapshot")
        return ", ".join(parts) or "the recorded settings"


@dataclass(frozen=True)
class Replayed:
    """One receipt replayed: how it changed, and its audit entry when it did."""

    repo: str
    change: Change
    entry: AuditEntry | None = None


@dataclass(frozen=True)
class AuditEntry:
    receipt: str
    repo: str
    revision: str
    agents: list[str]
    verdict_in: Verdict
    verdict_before: Verdict
    verdict_after: Verdict
    would_downgrade_before: bool
    would_downgrade_after: bool
    change: Change
    why: str

    def as_json(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def classify(before: DecisionDocument, after: DecisionDocument) -> Change:
    if before.verdict_out is not after.verdict_out:
        if after.verdict_out is Verdict.COMMENT:
            return Change.NEWLY_DOWNGRADED
        return Change.NO_LONGER_DOWNGRADED
    if before.would_downgrade != after.would_downgrade:
        return Change.WOULD_DOWNGRADE_CHANGED
    return Change.UNCHANGED


def _why(recorded: Setting, candidate: Setting, after: DecisionDocument) -> str:
    parts = [
        f"{name.replace('_', ' ')} {getattr(recorded, name).value} → "
        f"{getattr(candidate, name).value}"
        for name in ("mode", "unknown_policy", "depth_policy", "citation_policy", "mutation_policy")
        if getattr(recorded, name) is not getattr(candidate, name)
    ]
    reasons = [reason.value for reason in after.reasons if reason in CHECK_REASONS]
    parts.append(f"evidence check: {', '.join(reasons)}" if reasons else "evidence check passes")
    return "; ".join(parts)


def replay_one(receipt_id: str, receipt: Receipt, candidate: Candidate, decide: Decide) -> Replayed:
    """Decide one receipt again under the candidate and compare with its recorded decision."""
    repo = receipt.inputs.repo
    recorded = Setting.recorded(receipt)
    chosen = candidate.setting(receipt)
    if chosen.rules() == recorded.rules():
        return Replayed(repo, Change.UNCHANGED)  # the same rules decide the same way
    before = receipt.decision
    after = redecide(
        receipt,
        decide,
        mode=chosen.mode,
        mode_source=chosen.mode_source,
        unknown_policy=chosen.unknown_policy,
        unknown_policy_source=chosen.unknown_policy_source,
        depth_policy=chosen.depth_policy,
        depth_policy_source=chosen.depth_policy_source,
        citation_policy=chosen.citation_policy,
        citation_policy_source=chosen.citation_policy_source,
        mutation_policy=chosen.mutation_policy,
        mutation_policy_source=chosen.mutation_policy_source,
    ).decision
    change = classify(before, after)
    if change is Change.UNCHANGED:
        return Replayed(repo, change)
    entry = AuditEntry(
        receipt=receipt_id,
        repo=repo,
        revision=receipt.inputs.revision,
        agents=[r.agent_id for r in receipt.inputs.reviewers],
        verdict_in=receipt.inputs.verdict_in,
        verdict_before=before.verdict_out,
        verdict_after=after.verdict_out,
        would_downgrade_before=before.would_downgrade,
        would_downgrade_after=after.would_downgrade,
        change=change,
        why=_why(recorded, chosen, after),
    )
    return Replayed(repo, change, entry)


@dataclass
class RepoTally:
    receipts: int = 0
    counts: dict[Change, int] = field(default_factory=lambda: dict.fromkeys(Change, 0))

    @property
    def verdict_changed(self) -> int:
        return self.counts[Change.NEWLY_DOWNGRADED] + self.counts[Change.NO_LONGER_DOWNGRADED]

    def as_json(self, repo: str) -> dict[str, object]:
        return {
            "repo": repo,
            "receipts": self.receipts,
            "verdict_changed": self.verdict_changed,
            **{change.value: self.counts[change] for change in Change},
        }


@dataclass
class Tally:
    """Per repository counts; bounded by the number of repositories, not of receipts."""

    repos: dict[str, RepoTally] = field(default_factory=dict)

    def add(self, outcome: Replayed) -> None:
        tally = self.repos.setdefault(outcome.repo, RepoTally())
        tally.receipts += 1
        tally.counts[outcome.change] += 1

    def rows(self) -> list[dict[str, object]]:
        return [self.repos[repo].as_json(repo) for repo in sorted(self.repos)]
