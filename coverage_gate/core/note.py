"""The wording of a decision's note: the sentences that tell a person what the rules decided.

``decision_note`` writes the whole note of a review from the reviewers' decisions the rules
(``coverage_gate.core.reconcile``) made; the helpers beside it word one part each (a failed
citation, a shallow file, a reviewer's changes, drift) and quote what a person reads safely
(``code_span``, ``printable``, ``quoted``, ``line_ranges``), for the outputs too. Nothing here
decides anything: every status, reason and policy outcome comes in already decided. A review is
read through ``NotedReview`` and ``NotedReviewer`` (what ``ReviewInput`` and ``ReviewerInput``
carry), so that wording never imports the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from coverage_gate.contracts.model import (
    CitationCheck,
    CitationPolicy,
    CitationReason,
    Depth,
    DepthPolicy,
    DriftKind,
    EvidenceDocument,
    FileDecision,
    FileDepth,
    FileStatus,
    LineRange,
    Mode,
    MutationPolicy,
    Reason,
    ReviewerDecision,
    ReviewerOutput,
    UnknownPolicy,
    UnsupportedReason,
    Verdict,
)
from coverage_gate.core.citations import WINDOW, excerpt, flat

__all__ = [
    "NOTE_CITATIONS",
    "NOTE_DRIFT",
    "NOTE_EXCERPT",
    "NOTE_MUTATIONS",
    "NOTE_RANGES",
    "NotedReview",
    "NotedReviewer",
    "agent_mismatches",
    "citation_line",
    "code_span",
    "decision_note",
    "failed_citation_lines",
    "line_ranges",
    "printable",
    "quoted",
    "short",
]

#: Unseen line ranges a note names per shallow file; the rest are counted.
NOTE_RANGES = 5
#: Failed citations a note names per reviewer; the rest are counted.
NOTE_CITATIONS = 10
#: Characters of cited content and of a file's line a note quotes.
NOTE_EXCERPT = 80


class NotedReviewer(Protocol):
    """What the note reads of one reviewer's input (``ReviewerInput``)."""

    @property
    def claims(self) -> ReviewerOutput | None: ...

    @property
    def evidence(self) -> EvidenceDocument | None: ...


class NotedReview(Protocol):
    """What the note reads of the review (``ReviewInput``): its revision, verdict, mode, scope,
    reviewers and the policies that judged them."""

    @property
    def revision(self) -> str: ...

    @property
    def verdict_in(self) -> Verdict: ...

    @property
    def mode(self) -> Mode: ...

    @property
    def scope(self) -> Sequence[str]: ...

    @property
    def reviewers(self) -> Sequence[NotedReviewer]: ...

    @property
    def unknown_policy(self) -> UnknownPolicy: ...

    @property
    def depth_policy(self) -> DepthPolicy: ...

    @property
    def citation_policy(self) -> CitationPolicy: ...

    @property
    def mutation_policy(self) -> MutationPolicy: ...


def short(revision: str) -> str:
    return revision[:12] if revision else "(no revision)"


def _file_lines(reviewers: Sequence[ReviewerDecision], revision: str, legacy: bool) -> list[str]:
    lines: list[str] = []
    for decision in reviewers:
        who = decision.agent_id
        if legacy and Reason.REVIEWER_FAILED in decision.reasons:
            lines.append(f"- reviewer `{who}` failed: its coverage cannot count")
        for file in decision.files:
            if legacy and file.status is FileStatus.SKIPPED:
                lines.append(f"- `{file.path}`: skipped by reviewer `{who}`")
            elif (
                legacy
                and file.status is FileStatus.MISSING
                and Reason.FILES_MISSING in (decision.reasons)
            ):
                lines.append(f"- `{file.path}`: neither inspected nor skipped by reviewer `{who}`")
            elif not legacy and file.status is FileStatus.UNSUPPORTED:
                lines.append(_unsupported_line(file, who, revision, decision.evidence_revision))
            elif not legacy and file.status is FileStatus.SHALLOW:
                lines.append(_shallow_line(file, who, revision))
            elif (
                not legacy
                and file.status is FileStatus.UNKNOWN
                and Reason.CLAIMS_UNVERIFIABLE in decision.reasons
            ):
                lines.append(
                    f"- `{file.path}`: claimed inspected by `{who}`; evidence unavailable "
                    f"({file.unknown_reason.value if file.unknown_reason else 'unknown'}), "
                    "and this repository's policy treats that as unsupported"
                )
        if not legacy and Reason.CITATIONS_FAILED in decision.reasons:
            lines += failed_citation_lines(decision, revision)
    return lines


def _unsupported_line(file: FileDecision, who: str, revision: str, recorded_at: str | None) -> str:
    """Why a claimed file counts as not inspected, in words a person reads at a glance."""
    claimed = f"- `{file.path}`: claimed inspected by `{who}`;"
    if file.unsupported_reason is UnsupportedReason.CONTENT_MISMATCH:
        return (
            f"{claimed} what the read of {file.path} returned is not {file.path} at "
            f"{short(revision)} (the reviewer's own edit, an older version or another file)"
        )
    if file.unsupported_reason is UnsupportedReason.EVIDENCE_STALE:
        return (
            f"{claimed} its evidence was recorded at {short(recorded_at or '')}, and "
            f"{file.path} changed since: nothing showed it as it is at {short(revision)}"
        )
    failed = f" ({file.evidence})" if "failed" in file.evidence else ""
    return f"{claimed} no successful read or diff recorded at {short(revision)}{failed}"


def code_span(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    if not longest:
        return f"`{text}`"
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


def printable(text: str) -> str:
    """``text`` with every character a terminal or a Markdown renderer would act on (control
    characters, escapes, line and paragraph separators) spelled as ``\\uXXXX``."""
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in text)


def quoted(text: str) -> str:
    """Cited or found text for a person: on one line, at most ``NOTE_EXCERPT`` characters, no
    control characters, as a code span."""
    return code_span(printable(excerpt(flat(text), NOTE_EXCERPT)))


def citation_line(check: CitationCheck, who: str, revision: str) -> str:
    """One failed citation for a person: where, what it claimed, what is there, and why."""
    where = f"- {code_span(check.file or check.path)} line {check.line}, cited by {code_span(who)}"
    rev = short(revision)
    if check.reason is CitationReason.EMPTY_CONTENT:
        return f"{where}: the cited content is empty, so it says nothing that can be checked"
    said = f"{where} as {quoted(check.content)}"
    if check.reason is CitationReason.MISSING_AT_REVISION:
        return f"{said}: no such file at {rev}"
    if check.reason is CitationReason.LINE_OUT_OF_RANGE:
        return f"{said}: the file has {check.file_lines or 0} line(s) at {rev}"
    found = check.found or ""
    there = quoted(found) if flat(found) else "nothing (a blank line)"
    return (
        f"{said}: line {check.line} reads {there} at {rev}, and no line within {WINDOW} of it "
        "holds the cited content"
    )


def failed_citation_lines(
    decision: ReviewerDecision, revision: str, limit: int = NOTE_CITATIONS
) -> list[str]:
    """The note's lines for a reviewer's failed citations: at most ``limit``, then a count."""
    failed = decision.citations.failed if decision.citations is not None else []
    who = decision.agent_id
    lines = [citation_line(check, who, revision) for check in failed[:limit]]
    if len(failed) > limit:
        lines.append(
            f"- and {len(failed) - limit} more failed citation(s) by {code_span(who)} (listed in "
            "the decision)"
        )
    return lines


def _nothing_to_review(review: NotedReview) -> list[str]:
    """The note's paragraph for an empty scope: there was nothing to verify, and it says so
    rather than "verified"."""
    if review.scope:
        return []
    return [
        f"Nothing to review: no changed file is in scope at {short(review.revision)} (no file "
        "changed, or the reviewable-path filter excluded every changed file), so no claimed "
        "coverage was checked."
    ]


def _cannot_verify(reviewers: Sequence[ReviewerDecision]) -> list[str]:
    """The note's paragraph for evidence that verifies nothing (DESIGN §6 rule 27), naming the
    record that is missing or that the reviewer could have written."""
    lines = [
        f"- reviewer `{decision.agent_id}` ({doubt.reason.value}): {doubt.detail}"
        for decision in reviewers
        if (doubt := decision.evidence_cannot_verify) is not None
    ]
    if not lines:
        return []
    head = (
        "Evidence from a record the reviewer could have written, or without the record that "
        "shows what the model received, verifies nothing: the claimed files it would verify are "
        "unknown (held against the reviewer only under the unknown policy `downgrade`)."
    )
    return ["\n".join([head, *lines])]


def _stale(review: NotedReview, reviewers: Sequence[ReviewerDecision]) -> list[str]:
    """The note's paragraph for evidence recorded at another revision, naming both."""
    lines = [
        f"- reviewer `{decision.agent_id}`: evidence recorded at `{decision.evidence_revision}`, "
        f"the review is at `{review.revision}`"
        for decision in reviewers
        if Reason.EVIDENCE_STALE in decision.reasons
    ]
    if not lines:
        return []
    head = (
        "Evidence recorded at another revision verifies nothing here: the claimed files it was "
        "given for are unknown (held against the reviewer only under the unknown policy "
        "`downgrade`)."
    )
    return ["\n".join([head, *lines])]


def line_ranges(ranges: Sequence[LineRange], limit: int = NOTE_RANGES) -> str:
    """``480-492, 510`` (at most ``limit`` ranges, then how many more)."""
    shown = [str(r.start) if r.start == r.end else f"{r.start}-{r.end}" for r in ranges[:limit]]
    rest = len(ranges) - len(shown)
    return ", ".join(shown) + (f" and {rest} more range(s)" if rest > 0 else "")


def _shallow_line(file: FileDecision, who: str, revision: str) -> str:
    depth = file.depth or FileDepth(depth=Depth.UNKNOWN)
    unseen = (
        f"changed lines {line_ranges(depth.unseen)} not seen"
        if depth.unseen
        else "changed lines not seen"
    )
    cut = (
        f"; {depth.changed_lines_cut} cut by the client before the change: a cut line alone "
        "verifies nothing"
        if depth.changed_lines_cut and depth.depth is Depth.NONE
        else ""
    )
    return (
        f"- `{file.path}`: {unseen} by `{who}` at {short(revision)} (claimed inspected; depth "
        f"{depth.depth.value}: {depth.changed_lines_seen} of {depth.changed_lines} changed lines, "
        f"{depth.hunks_seen} of {depth.hunks} hunks{cut})"
    )


_NO_EVIDENCE = "claimed coverage has no recorded evidence"
_CITED_WRONG = "cited lines do not hold what the reviewer quoted"


def _cause(reviewers: Sequence[ReviewerDecision], policy: DepthPolicy) -> str:
    """Why the evidence check holds claims against this review, in a few words."""
    causes: list[str] = []
    if any(
        f.status is FileStatus.UNSUPPORTED
        or (f.status is FileStatus.UNKNOWN and Reason.CLAIMS_UNVERIFIABLE in d.reasons)
        for d in reviewers
        for f in d.files
    ):
        causes.append(_NO_EVIDENCE)
    if any(f.status is FileStatus.SHALLOW for d in reviewers for f in d.files):
        seen = "not all" if policy is DepthPolicy.ALL_HUNKS else "none"
        causes.append(
            f"claimed files were read, but {seen} of their changed lines were seen (depth policy "
            f"{policy.value})"
        )
    if any(Reason.CITATIONS_FAILED in d.reasons for d in reviewers):
        causes.append(_CITED_WRONG)
    return " and ".join(causes)


def _citation_notes(review: NotedReview, reviewers: Sequence[ReviewerDecision]) -> list[str]:
    """Failed citations the policy does not hold against the reviewer, and citations past the
    replay limit: said, never silent."""
    if review.mode is Mode.OFF:
        return []
    parts: list[str] = []
    if review.citation_policy is CitationPolicy.ACCEPT:
        lines = [
            line
            for decision in reviewers
            for line in failed_citation_lines(decision, review.revision)
        ]
        if lines:
            head = (
                f"Citations that do not match the code at {short(review.revision)} (citation "
                "policy accept: not held against the reviewer):"
            )
            parts.append("\n".join([head, *lines]))
    over = [
        f"reviewer {code_span(d.agent_id)} gave {len(d.citations.checks) + d.citations.over_limit} "
        f"citations; {d.citations.over_limit} past the first {d.citations.limit} were not replayed"
        for d in reviewers
        if d.citations is not None and d.citations.over_limit
    ]
    if over:
        parts.append("Citations not replayed: " + "; ".join(over) + ".")
    return parts


def agent_mismatches(reviewers: Sequence[NotedReviewer]) -> list[str]:
    """One sentence per reviewer whose evidence was recorded for another agent than the one
    whose claims it is checked against (evidence without an agent name is not judged)."""
    return [
        f"The claims of {reviewer.claims.agent_id} were checked against evidence recorded for "
        f"agent {reviewer.evidence.agent}."
        for reviewer in reviewers
        if reviewer.claims is not None
        and reviewer.evidence is not None
        and reviewer.evidence.agent
        and reviewer.evidence.agent != reviewer.claims.agent_id
    ]


#: Mutations and drift entries a note names per reviewer; the rest are counted.
NOTE_MUTATIONS = 5
NOTE_DRIFT = 5

_DRIFT_WORDS = {
    DriftKind.UNKNOWN_EVENT: "an event type",
    DriftKind.MISSING_FIELD: "a field gone",
    DriftKind.FIELD_TYPE: "a field of a type it never has",
    DriftKind.UNPAIRED: "a call left unpaired",
    DriftKind.UNLISTED_TOOL: "a built-in tool",
    DriftKind.UNKNOWN_TOOL: "a tool naming a file in scope",
    DriftKind.CLIENT_VERSION: "a client version",
    DriftKind.FOREIGN_COMMIT: "a session commit that is not the revision",
    DriftKind.PRESENTATION: "a read's text in a presentation it does not know",
}


def _mutation_notes(
    review: NotedReview, reviewers: Sequence[ReviewerDecision], head_needed: bool
) -> list[str]:
    """What each reviewer changed during the review, and what the policy makes of it."""
    lines: list[str] = []
    for decision in reviewers:
        if not decision.mutations:
            continue
        named = [
            f"`{m.path}` ({m.tool}, line {m.line})"
            if m.path
            else f"files ({m.tool}, line {m.line})"
            for m in decision.mutations[:NOTE_MUTATIONS]
        ]
        more = len(decision.mutations) - len(named)
        tail = f", and {more} more change(s)" if more > 0 else ""
        lines.append(
            f"- the reviewer `{decision.agent_id}` changed {', '.join(named)}{tail} "
            "during the review"
        )
    if not lines:
        return []
    policy = review.mutation_policy
    if policy is MutationPolicy.DOWNGRADE:
        said = "this repository's mutation policy (downgrade) counts that as incomplete coverage"
    else:
        said = (
            "this repository's mutation policy (accept) records it and does not hold it against "
            "the reviewer"
        )
    head = f"A reviewer changed the code it reviewed; {said}:"
    if head_needed and review.mode is Mode.ENFORCE:
        head = "Approve became Comment: a reviewer changed the code it reviewed:"
    elif head_needed and review.mode is Mode.SHADOW:
        head = (
            "Shadow mode, verdict unchanged: in enforce mode this Approve would become a Comment, "
            "because a reviewer changed the code it reviewed:"
        )
    return ["\n".join([head, *lines])]


def _drift_notes(reviewers: Sequence[ReviewerDecision]) -> list[str]:
    """What each reviewer's stream held that this version does not understand (DESIGN §7.11)."""
    parts: list[str] = []
    for decision in reviewers:
        if not decision.drift:
            continue
        named = [
            f"{_DRIFT_WORDS[entry.kind]} `{printable(entry.name)}`"
            + (f" {entry.count} times" if entry.count > 1 else "")
            for entry in decision.drift[:NOTE_DRIFT]
        ]
        more = len(decision.drift) - len(named)
        tail = f", and {more} more" if more > 0 else ""
        hiding = any(entry.hides_reads for entry in decision.drift)
        effect = (
            "claims without evidence are unknown, not unsupported; upgrade coverage-gate, or pin "
            "the client to a version it was checked with"
            if hiding
            else "nothing here could hide a read, so the verdict rules are unchanged"
        )
        parts.append(
            f"The stream of reviewer `{decision.agent_id}` held what this version of "
            f"coverage-gate does not know ({'; '.join(named)}{tail}): {effect}."
        )
    return parts


def decision_note(
    review: NotedReview,
    reviewers: Sequence[ReviewerDecision],
    verdict_out: Verdict,
    would_downgrade: bool,
    legacy_incomplete: bool,
) -> str:
    rev = short(review.revision)
    verdict_in = review.verdict_in
    parts = _nothing_to_review(review)
    if legacy_incomplete:
        head = (
            "Approve became Comment: review coverage is incomplete."
            if verdict_in is Verdict.APPROVE
            else "Review coverage is incomplete."
        )
        parts.append("\n".join([head, *_file_lines(reviewers, review.revision, legacy=True)]))
    new_lines = _file_lines(reviewers, review.revision, legacy=False)
    if new_lines:
        cause = _cause(reviewers, review.depth_policy)
        if review.mode is Mode.ENFORCE and would_downgrade:
            head = f"Approve became Comment: {cause}."
        elif review.mode is Mode.SHADOW and would_downgrade:
            head = (
                "Shadow mode, verdict unchanged: in enforce mode this Approve would become a "
                f"Comment, because {cause}."
            )
        elif review.mode is Mode.OFF:
            head = ""
        elif cause == _NO_EVIDENCE:
            head = "Claimed coverage without recorded evidence (verdict not affected):"
        else:
            head = f"{cause[0].upper()}{cause[1:]} (verdict not affected):"
        if head:
            parts.append("\n".join([head, *new_lines]))
    parts += _mutation_notes(review, reviewers, would_downgrade and not new_lines)
    parts += _drift_notes(reviewers)
    parts += _citation_notes(review, reviewers)
    parts += _stale(review, reviewers)
    parts += _cannot_verify(reviewers)
    parts += agent_mismatches(review.reviewers)
    unknown = sum(1 for d in reviewers for f in d.files if f.status is FileStatus.UNKNOWN)
    if unknown and review.unknown_policy is UnknownPolicy.ACCEPT and review.mode is not Mode.OFF:
        parts.append(
            f"{unknown} claimed file(s) could not be verified (evidence unavailable); "
            "unverifiable claims are accepted by this repository's policy."
        )
    if not parts:
        if review.mode is Mode.OFF:
            parts.append(f"Coverage complete as claimed at {rev} (evidence check off).")
        else:
            parts.append(
                f"Coverage verified: every claimed file has a successful read or diff recorded "
                f"at {rev}."
            )
    parts.append(f"Verdict: {verdict_in.value} → {verdict_out.value} (mode {review.mode.value}).")
    return "\n\n".join(parts)
