"""The pure reconciler: claims + evidence + scope + mode → decision (DESIGN §7).

No clock, environment, files, flags or telemetry. Same inputs, same decision: every list in the
output is sorted, and nothing here depends on the order reviewers or files were given in, beyond
the reviewers' own order in the output. The note's sentences are worded in
``coverage_gate.core.note``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coverage_gate.contracts.model import (
    Capability,
    CitationPolicy,
    Claim,
    Coverage,
    DecisionDocument,
    Depth,
    DepthPolicy,
    EvidenceDocument,
    FileContent,
    FileDecision,
    FileDepth,
    FileEvidence,
    FileStatus,
    MismatchKind,
    Mode,
    ModeSource,
    MutationPolicy,
    PolicyOutcome,
    PolicySource,
    Reason,
    RejectedClaim,
    ReviewerCitations,
    ReviewerDecision,
    ReviewerOutput,
    ReviewerPolicyOutcome,
    UnknownPolicy,
    UnknownReason,
    UnsupportedReason,
    Verdict,
)
from coverage_gate.core.citations import MAX_CITATIONS, FileCache, citations_of, replay
from coverage_gate.core.note import decision_note, short
from coverage_gate.core.paths import RepoTree, normalise_claims
from coverage_gate.core.revision_files import Presence, RevisionFiles, blob_id

__all__ = [
    "MIN_ABBREVIATED_SHA",
    "NO_DEPTH_RECORDED",
    "Freshness",
    "ReviewInput",
    "ReviewerInput",
    "content_outcome",
    "freshness",
    "held_shallow",
    "hides_reads",
    "is_shallow",
    "is_stale",
    "reconcile",
    "same_revision",
    "supported_by",
]

_REASON_ORDER = list(Reason)
#: Why a claimed file has unknown depth when its evidence carries none (evidence 1.1: no depth
#: is recorded without the pinned diff).
NO_DEPTH_RECORDED = "no depth recorded (it needs the pinned diff)"


@dataclass(frozen=True)
class ReviewerInput:
    agent_id: str
    claims: ReviewerOutput | None
    evidence: EvidenceDocument | None
    failed: bool = False


@dataclass(frozen=True)
class ReviewInput:
    repo: str
    revision: str
    verdict_in: Verdict
    mode: Mode
    mode_source: ModeSource
    scope: Sequence[str]
    reviewers: Sequence[ReviewerInput]
    unknown_policy: UnknownPolicy = UnknownPolicy.ACCEPT
    repo_root: str | None = None
    # The repository at the revision, for claimed paths with '..' (DESIGN §6 rule 4).
    tree: RepoTree | None = None
    depth_policy: DepthPolicy = DepthPolicy.ACCEPT
    # Where each policy came from; recorded in the decision, never read by the rules.
    unknown_policy_source: PolicySource = PolicySource.DEFAULT
    depth_policy_source: PolicySource = PolicySource.DEFAULT
    citation_policy: CitationPolicy = CitationPolicy.DOWNGRADE
    citation_policy_source: PolicySource = PolicySource.DEFAULT
    mutation_policy: MutationPolicy = MutationPolicy.ACCEPT
    mutation_policy_source: PolicySource = PolicySource.DEFAULT
    # The files at the revision that citations are replayed against (DESIGN §7.9); ``None``:
    # no repository to read, every citation that needs a read is unavailable.
    files: RevisionFiles | None = None
    max_citations: int = MAX_CITATIONS
    # False: citations are not replayed at all (the legacy-only decision of a failed shadow check).
    replay_citations: bool = True


MIN_ABBREVIATED_SHA = 7
"""The shortest abbreviated commit SHA taken for the full one (git's own default length)."""
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def same_revision(first: str, second: str) -> bool:
    """Whether two revision names name the same commit.

    Equal names do. Two hexadecimal SHAs do, in any letter case, when the shorter one has at
    least ``MIN_ABBREVIATED_SHA`` digits and begins the longer one: ``4b825dc`` is
    ``4b825dc642cb6eb9a060e54bf8d69288fbee4904`` abbreviated. Anything else is another revision.
    """
    if first == second:
        return True
    if not (set(first) <= _HEX_DIGITS and set(second) <= _HEX_DIGITS):
        return False
    shorter, longer = sorted((first.lower(), second.lower()), key=len)
    return len(shorter) >= MIN_ABBREVIATED_SHA and longer.startswith(shorter)


def is_stale(evidence: EvidenceDocument | None, revision: str) -> bool:
    """Evidence recorded at another revision than the review's (DESIGN §6.8)."""
    return evidence is not None and not same_revision(evidence.revision, revision)


def _unavailable(evidence: EvidenceDocument | None, revision: str) -> UnknownReason | None:
    if evidence is None:
        return UnknownReason.NO_EVIDENCE_DOCUMENT
    if is_stale(evidence, revision):
        return UnknownReason.STALE
    return _unavailable_here(evidence)


def _unavailable_here(evidence: EvidenceDocument) -> UnknownReason | None:
    """Why the evidence cannot speak at all, its revision aside."""
    if evidence.capability is Capability.NONE:
        return UnknownReason.CAPABILITY_NONE
    if not evidence.stream_complete:
        return UnknownReason.STREAM_INCOMPLETE
    return None


def hides_reads(evidence: EvidenceDocument) -> bool:
    """Whether the stream held drift the model cannot cause that could hide reads (DESIGN §6
    rule 19): its claims without evidence are unknown."""
    return any(entry.hides_reads for entry in evidence.drift)


def _describe(entry: FileEvidence | None) -> str:
    if entry is None:
        return "no read or diff recorded"
    parts: list[str] = []
    if entry.reads_succeeded:
        partial = " (partial)" if entry.partial else ""
        parts.append(f"{entry.reads_succeeded} successful read(s){partial}")
    if entry.diff_pages_succeeded:
        parts.append(f"{entry.diff_pages_succeeded} diff page(s)")
    content = entry.content
    if content is not None and content.credited:
        parts.append(f"shown by content in {content.credited} call(s)")
    if content is not None and content.mismatched:
        parts.append(f"{content.mismatched} read(s) whose text is not the file at the revision")
    if entry.reads_failed:
        parts.append(f"{entry.reads_failed} failed read(s)")
    return ", ".join(parts) if parts else "no read or diff recorded"


@dataclass(frozen=True)
class _Claims:
    inspected: set[str]
    skipped: set[str]
    rejected: list[RejectedClaim]


def _claims(output: ReviewerOutput | None, root: str | None, tree: RepoTree | None) -> _Claims:
    """The claimed paths through the one normaliser (a claim never drops ``@``); those that name
    no file of the repository count for nothing and are listed with the reason."""
    if output is None:
        return _Claims(set(), set(), [])
    inspected, rejected_inspected = normalise_claims(output.inspected_files, root, tree)
    skipped, rejected_skipped = normalise_claims(output.skipped_files, root, tree)
    rejected = {
        (r.raw, claim): RejectedClaim(path=r.raw, claim=claim, reason=r.reason)
        for claim, rejections in (
            (Claim.INSPECTED, rejected_inspected),
            (Claim.SKIPPED, rejected_skipped),
        )
        for r in rejections
    }
    return _Claims(set(inspected), set(skipped), [rejected[key] for key in sorted(rejected)])


def supported_by(entry: FileEvidence | None) -> bool:
    """Whether a file's evidence holds something of it: a successful read whose text was not
    another (a mismatch is no read), a covering diff page, or its lines shown by content."""
    if entry is None:
        return False
    credited = entry.content.credited if entry.content is not None else 0
    return entry.reads_succeeded > 0 or entry.diff_pages_succeeded > 0 or credited > 0


def content_outcome(entry: FileEvidence | None) -> FileContent:
    """One word for how a file's evidence was checked (``FileContent``)."""
    content = entry.content if entry is not None else None
    if content is None:
        return FileContent.UNCHECKED if supported_by(entry) else FileContent.NONE
    if content.matched:
        return FileContent.MATCHED
    if content.credited:
        return FileContent.VIA_CONTENT
    if content.mismatched and not supported_by(entry):
        return FileContent.MISMATCH
    return FileContent.UNCHECKED if supported_by(entry) else FileContent.NONE


def _mismatched(entry: FileEvidence | None) -> bool:
    return entry is not None and entry.content is not None and entry.content.mismatched > 0


def _file_decision(
    path: str,
    inspected: set[str],
    skipped: set[str],
    evidence: EvidenceDocument | None,
    unavailable: UnknownReason | None,
    fresh: Freshness | None = None,
) -> FileDecision:
    """One file's status. Evidence that cannot verify (DESIGN §6 rule 27: the record that
    decides is missing, or one the reviewer could write) leaves a claim it would verify, or
    leave unknown, unknown for that reason, and so a file one of its commands names (rule 26:
    what reached the model of that command's output is not shown, empty or binary included);
    what it shows nothing of stays unsupported."""
    decided = _file_status(path, inspected, skipped, evidence, unavailable, fresh)
    doubt = evidence.cannot_verify if evidence is not None else None
    if doubt is None:
        return decided
    named = decided.status is FileStatus.UNSUPPORTED and path in doubt.named
    if decided.status not in (FileStatus.VERIFIED, FileStatus.UNKNOWN) and not named:
        return decided
    return decided.model_copy(
        update={
            "status": FileStatus.UNKNOWN,
            "unknown_reason": doubt.reason,
            "evidence": f"evidence cannot verify ({doubt.reason.value}: {doubt.detail}); "
            f"{_describe(evidence.file(path) if evidence is not None else None)}",
        }
    )


def _file_status(
    path: str,
    inspected: set[str],
    skipped: set[str],
    evidence: EvidenceDocument | None,
    unavailable: UnknownReason | None,
    fresh: Freshness | None = None,
) -> FileDecision:
    """One file's status from what its evidence holds. ``fresh`` tells, for evidence recorded at
    another revision, whether the file is the very content that evidence saw (DESIGN §6 rule
    18)."""
    entry = evidence.file(path) if evidence is not None else None
    summary = _describe(entry)
    if unavailable is UnknownReason.STALE and evidence is not None and fresh is not None:
        carried = fresh(path, entry)
        if carried is True:
            unavailable = _unavailable_here(evidence)  # the same blob: what it saw holds
        elif carried is False and _unavailable_here(evidence) is None and path in inspected:
            return FileDecision(
                path=path,
                claim=Claim.INSPECTED,
                evidence=f"recorded at {short(evidence.revision)}, of other content; {summary}",
                status=FileStatus.UNSUPPORTED,
                unsupported_reason=UnsupportedReason.EVIDENCE_STALE,
            )
    if path in skipped:
        return FileDecision(
            path=path, claim=Claim.SKIPPED, evidence=summary, status=FileStatus.SKIPPED
        )
    if path not in inspected:
        return FileDecision(
            path=path, claim=Claim.NONE, evidence=summary, status=FileStatus.MISSING
        )
    if unavailable is not UnknownReason.STALE and supported_by(entry):
        return FileDecision(
            path=path, claim=Claim.INSPECTED, evidence=summary, status=FileStatus.VERIFIED
        )
    reason = unavailable or _absence_unproven(evidence, entry)
    if reason is not None:
        return FileDecision(
            path=path,
            claim=Claim.INSPECTED,
            evidence=f"evidence unavailable ({reason.value}); {summary}",
            status=FileStatus.UNKNOWN,
            unknown_reason=reason,
        )
    why = (
        UnsupportedReason.CONTENT_MISMATCH if _mismatched(entry) else UnsupportedReason.NO_EVIDENCE
    )
    return FileDecision(
        path=path,
        claim=Claim.INSPECTED,
        evidence=summary,
        status=FileStatus.UNSUPPORTED,
        unsupported_reason=why,
    )


def _absence_unproven(
    evidence: EvidenceDocument | None, entry: FileEvidence | None
) -> UnknownReason | None:
    """Why available, complete evidence without a read of a claimed file still cannot show it
    was not read; ``None`` when it can."""
    if evidence is None:
        return None
    if evidence.truncated and entry is None:
        return UnknownReason.TRUNCATED
    if entry is not None and entry.reads_unknown:
        return UnknownReason.OUTCOME_UNREADABLE
    if evidence.unattributed_calls:
        return UnknownReason.UNATTRIBUTED_CALLS
    if hides_reads(evidence) and not _mismatched(entry):
        # the classifier cannot vouch for an absence in a stream it did not fully understand; a
        # read whose text was not the file is still no evidence of it
        return UnknownReason.FORMAT_DRIFT
    return None


#: Whether a file at the review's revision is the content evidence recorded elsewhere saw:
#: ``True`` (the same blob), ``False`` (another), ``None`` (cannot be told).
Freshness = Callable[[str, FileEvidence | None], bool | None]


def freshness(files: RevisionFiles | None) -> Freshness | None:
    """Compare a file's blob at the review's revision with the blob its evidence recorded."""
    if files is None:
        return None

    def fresh(path: str, entry: FileEvidence | None) -> bool | None:
        found = files.file_at_revision(path)
        if found.presence is Presence.MISSING:
            return False
        if found.presence is not Presence.FOUND or found.lines is not None:
            return None
        if not supported_by(entry):
            return False  # it showed nothing of the file, then or now
        blob = entry.content.blob if entry is not None and entry.content is not None else None
        if blob is None:
            return None  # what it saw is not known by its content (an unchecked read)
        return (found.blob or blob_id(found.data)) == blob

    return fresh


# A reviewer's coverage is named after its first reason that has one. A stale evidence document
# has none of its own: its claimed files are unknown, which the unknown policy judges.
_COVERAGE = {
    Reason.REVIEWER_FAILED: Coverage.INCOMPLETE_FAILED,
    Reason.NOTHING_TO_REVIEW: Coverage.NOTHING_TO_REVIEW,
    Reason.FILES_SKIPPED: Coverage.INCOMPLETE_SKIPPED,
    Reason.FILES_MISSING: Coverage.INCOMPLETE_MISSING,
    Reason.CLAIMS_UNSUPPORTED: Coverage.INCOMPLETE_UNSUPPORTED,
    Reason.CLAIMS_SHALLOW: Coverage.INCOMPLETE_SHALLOW,
    Reason.CLAIMS_UNVERIFIABLE: Coverage.INCOMPLETE_UNVERIFIABLE,
    Reason.CITATIONS_FAILED: Coverage.INCOMPLETE_CITATIONS,
    Reason.REVIEWER_MUTATED: Coverage.INCOMPLETE_MUTATED,
}


def held_shallow(depth: FileDepth, policy: DepthPolicy) -> bool:
    """Whether ``policy`` holds a claimed file of this recorded depth to be shallow: as its
    depth says, and under every policy when the only changed lines its reads reached were cut
    by the client before their change (DESIGN §6 rule 29: a cut line alone verifies nothing)."""
    cut_alone = depth.depth is Depth.NONE and depth.changed_lines_cut > 0
    return cut_alone or is_shallow(depth.depth, policy)


def is_shallow(depth: Depth, policy: DepthPolicy) -> bool:
    """Whether ``policy`` holds a claimed file of this depth to be shallow. Unknown never is."""
    if policy is DepthPolicy.ANY_HUNK:
        return depth is Depth.NONE
    if policy is DepthPolicy.ALL_HUNKS:
        return depth in {Depth.PARTIAL, Depth.NONE}
    return False


def _blind_spot(
    entry: FileEvidence, evidence: EvidenceDocument, unavailable: UnknownReason | None
) -> str | None:
    """Why calls the evidence did not see may have shown the rest of this file's change: then
    what it did see is a lower bound, and its depth cannot be held against the reviewer."""
    if unavailable is not None:
        return f"evidence unavailable ({unavailable.value})"
    if entry.reads_unknown:
        return f"{entry.reads_unknown} call(s) on this file whose outcome could not be read"
    if evidence.unattributed_calls:
        return f"{evidence.unattributed_calls} call(s) whose file could not be told"
    return None


def _depth(
    entry: FileEvidence, evidence: EvidenceDocument, unavailable: UnknownReason | None
) -> FileDepth:
    recorded = entry.depth or FileDepth(depth=Depth.UNKNOWN, detail=NO_DEPTH_RECORDED)
    blind = _blind_spot(entry, evidence, unavailable)
    if blind is None or recorded.depth is Depth.UNKNOWN:
        return recorded
    return recorded.model_copy(
        update={
            "depth": Depth.UNKNOWN,
            "detail": f"recorded {recorded.depth.value}, but {blind} may have shown the rest",
        }
    )


def _with_depth(
    decision: FileDecision,
    evidence: EvidenceDocument | None,
    unavailable: UnknownReason | None,
    policy: DepthPolicy,
) -> FileDecision:
    """A verified claim gets its depth, and is shallow when the policy asks for more."""
    entry = evidence.file(decision.path) if evidence is not None else None
    if decision.status is not FileStatus.VERIFIED or evidence is None or entry is None:
        return decision
    depth = _depth(entry, evidence, unavailable)
    status = FileStatus.SHALLOW if held_shallow(depth, policy) else FileStatus.VERIFIED
    return decision.model_copy(update={"depth": depth, "status": status})


def _with_content(decision: FileDecision, evidence: EvidenceDocument | None) -> FileDecision:
    """A claimed file with how its evidence was checked (none without an evidence document)."""
    if decision.claim is not Claim.INSPECTED or evidence is None:
        return decision
    entry = evidence.file(decision.path)
    content = content_outcome(entry)
    if content is not FileContent.MISMATCH or entry is None or entry.content is None:
        return decision.model_copy(update={"content": content})
    kinds = entry.content.mismatch_kinds
    if not kinds:  # evidence written before the kinds (1.4 and older) does not say
        return decision.model_copy(update={"content": content})
    kind = max(MismatchKind, key=lambda k: (kinds.get(k, 0), -list(MismatchKind).index(k)))
    return decision.model_copy(update={"content": content, "mismatch_kind": kind})


def _policy_outcomes(
    files: Sequence[FileDecision], reasons: Sequence[Reason]
) -> list[ReviewerPolicyOutcome]:
    """What each depth policy would make of this reviewer, on the same evidence: the claims
    it holds against the reviewer besides depth, plus the files it would find shallow."""
    otherwise = bool(
        {Reason.CLAIMS_UNSUPPORTED, Reason.CLAIMS_UNVERIFIABLE, Reason.CITATIONS_FAILED}
        & set(reasons)
    )
    depths = [f.depth for f in files if f.depth is not None]
    outcomes: list[ReviewerPolicyOutcome] = []
    for policy in DepthPolicy:
        shallow = sum(1 for depth in depths if held_shallow(depth, policy))
        outcomes.append(
            ReviewerPolicyOutcome(
                depth_policy=policy, shallow_files=shallow, would_downgrade=otherwise or shallow > 0
            )
        )
    return outcomes


def _citations(
    review: ReviewInput,
    reviewer: ReviewerInput,
    unavailable: UnknownReason | None,
    files: FileCache | None,
) -> ReviewerCitations | None:
    """The reviewer's citations replayed (``None``: it cited nothing). A cited file is
    uncorroborated when the reviewer's evidence could show a read of it and shows none: what
    would make a claim of it unsupported."""
    if not review.replay_citations or reviewer.claims is None:
        return None
    cited = citations_of(reviewer.claims)
    if not cited:
        return None

    def uncorroborated(path: str) -> bool:
        claimed = _file_decision(path, {path}, set(), reviewer.evidence, unavailable)
        return claimed.status is FileStatus.UNSUPPORTED

    return replay(
        cited,
        root=review.repo_root,
        tree=review.tree,
        files=files,
        uncorroborated=uncorroborated,
        limit=review.max_citations,
    )


def _reviewer(
    review: ReviewInput, reviewer: ReviewerInput, cache: FileCache | None
) -> ReviewerDecision:
    failed = reviewer.failed or reviewer.claims is None
    claims = _claims(reviewer.claims, review.repo_root, review.tree)
    inspected, skipped = claims.inspected, claims.skipped
    unavailable = _unavailable(reviewer.evidence, review.revision)
    citations = _citations(review, reviewer, unavailable, cache)
    fresh = freshness(review.files)
    files = [
        _with_content(
            _with_depth(
                _file_decision(path, inspected, skipped, reviewer.evidence, unavailable, fresh),
                reviewer.evidence,
                unavailable,
                review.depth_policy,
            ),
            reviewer.evidence,
        )
        for path in sorted(set(review.scope))
    ]
    statuses = {decision.status for decision in files}
    reasons: list[Reason] = []
    if failed:
        reasons.append(Reason.REVIEWER_FAILED)
    if not files:
        reasons.append(Reason.NOTHING_TO_REVIEW)
    if FileStatus.SKIPPED in statuses:
        reasons.append(Reason.FILES_SKIPPED)
    if FileStatus.MISSING in statuses and not failed:
        reasons.append(Reason.FILES_MISSING)
    if FileStatus.UNSUPPORTED in statuses:
        reasons.append(Reason.CLAIMS_UNSUPPORTED)
    if FileStatus.SHALLOW in statuses:
        reasons.append(Reason.CLAIMS_SHALLOW)
    if FileStatus.UNKNOWN in statuses and review.unknown_policy is UnknownPolicy.DOWNGRADE:
        reasons.append(Reason.CLAIMS_UNVERIFIABLE)
    if citations and citations.failed and review.citation_policy is CitationPolicy.DOWNGRADE:
        reasons.append(Reason.CITATIONS_FAILED)
    mutations = list(reviewer.evidence.mutations) if reviewer.evidence is not None else []
    if mutations and review.mutation_policy is MutationPolicy.DOWNGRADE:
        reasons.append(Reason.REVIEWER_MUTATED)
    if is_stale(reviewer.evidence, review.revision):
        reasons.append(Reason.EVIDENCE_STALE)
    coverage = next(
        (_COVERAGE[reason] for reason in reasons if reason in _COVERAGE), Coverage.COMPLETE
    )
    evidence = reviewer.evidence
    return ReviewerDecision(
        agent_id=reviewer.agent_id,
        coverage=coverage,
        reasons=reasons,
        would_downgrade=bool(_NEW & set(reasons)),
        evidence_source=evidence.source if evidence else None,
        evidence_capability=evidence.capability if evidence else None,
        evidence_revision=evidence.revision if evidence else None,
        evidence_client_version=evidence.client_version if evidence else None,
        claims_outside_scope=sorted(inspected - set(review.scope)),
        claims_rejected=claims.rejected,
        files=files,
        depth_policies=_policy_outcomes(files, reasons),
        citations=citations,
        mutations=mutations,
        drift=list(evidence.drift) if evidence else [],
        evidence_cannot_verify=evidence.cannot_verify if evidence else None,
    )


_LEGACY = {Reason.REVIEWER_FAILED, Reason.FILES_SKIPPED, Reason.FILES_MISSING}
_NEW = {
    Reason.CLAIMS_UNSUPPORTED,
    Reason.CLAIMS_SHALLOW,
    Reason.CLAIMS_UNVERIFIABLE,
    Reason.CITATIONS_FAILED,
    Reason.REVIEWER_MUTATED,
}


def reconcile(review: ReviewInput) -> DecisionDocument:
    # One cache for the review: each cited file is read once, whichever reviewers cite it.
    cache = FileCache(review.files) if review.files is not None else None
    reviewers = [_reviewer(review, reviewer, cache) for reviewer in review.reviewers]
    reasons = sorted(
        {reason for decision in reviewers for reason in decision.reasons},
        key=_REASON_ORDER.index,
    )
    legacy_incomplete = bool(_LEGACY & set(reasons))
    new_incomplete = any(decision.would_downgrade for decision in reviewers)
    approve = review.verdict_in is Verdict.APPROVE
    legacy_out = Verdict.COMMENT if approve and legacy_incomplete else review.verdict_in
    would_downgrade = approve and new_incomplete and not legacy_incomplete
    verdict_out = legacy_out
    if review.mode is Mode.ENFORCE and would_downgrade:
        verdict_out = Verdict.COMMENT
    depth_policies = [
        PolicyOutcome(
            depth_policy=policy,
            would_downgrade=approve
            and not legacy_incomplete
            and any(
                outcome.would_downgrade
                for decision in reviewers
                for outcome in decision.depth_policies
                if outcome.depth_policy is policy
            ),
        )
        for policy in DepthPolicy
    ]
    cited_wrong = any(d.citations is not None and d.citations.failed for d in reviewers)
    return DecisionDocument(
        repo=review.repo,
        revision=review.revision,
        verdict_in=review.verdict_in,
        verdict_out=verdict_out,
        mode=review.mode,
        mode_source=review.mode_source,
        unknown_policy=review.unknown_policy,
        unknown_policy_source=review.unknown_policy_source,
        depth_policy=review.depth_policy,
        depth_policy_source=review.depth_policy_source,
        downgraded=verdict_out is not review.verdict_in,
        would_downgrade=would_downgrade,
        reasons=reasons,
        note=decision_note(review, reviewers, verdict_out, would_downgrade, legacy_incomplete),
        scope=sorted(set(review.scope)),
        reviewers=reviewers,
        depth_policies=depth_policies,
        citation_policy=review.citation_policy,
        citation_policy_source=review.citation_policy_source,
        citations_would_downgrade=approve and not legacy_incomplete and cited_wrong,
        mutation_policy=review.mutation_policy,
        mutation_policy_source=review.mutation_policy_source,
        mutations_would_downgrade=approve
        and not legacy_incomplete
        and any(decision.mutations for decision in reviewers),
    )
