"""Decision documents for people: terminal text and a Markdown PR comment."""

from __future__ import annotations

import html

from coverage_gate.contracts.model import (
    CitationCheck,
    CitationOutcome,
    Coverage,
    DecisionDocument,
    Depth,
    FileDecision,
    FileDepth,
    FileStatus,
    ReviewerDecision,
)
from coverage_gate.core.note import code_span, line_ranges, printable, quoted
from coverage_gate.outputs.summary import evidence_summary as evidence_summary  # noqa: PLC0414 - re-export

__all__ = [
    "BAR_CELLS",
    "GLOSS",
    "SHOWN_CITATIONS",
    "citation_detail",
    "citation_summary",
    "coverage_label",
    "depth_bar",
    "depth_summary",
    "evidence_summary",
    "markdown",
    "text",
]

#: Citations other than plain matches listed per reviewer in the text and Markdown outputs.
SHOWN_CITATIONS = 20

_MARK = {
    FileStatus.VERIFIED: "ok",
    FileStatus.UNSUPPORTED: "UNSUPPORTED",
    FileStatus.SHALLOW: "SHALLOW",
    FileStatus.UNKNOWN: "unknown",
    FileStatus.SKIPPED: "skipped",
    FileStatus.MISSING: "missing",
}


#: Cells of the bar that shows how much of a file's changed lines were seen.
BAR_CELLS = 10


def depth_bar(depth: FileDepth) -> str:
    """``▰▰▰▰▰▰▱▱▱▱``: the share of changed lines seen. Only a full depth fills it, and only a
    depth of none leaves it empty; unknown depth has no bar."""
    if depth.depth is Depth.UNKNOWN:
        return ""
    share = depth.changed_lines_seen / depth.changed_lines if depth.changed_lines else 1.0
    filled = {Depth.FULL: BAR_CELLS, Depth.NONE: 0}.get(
        depth.depth, min(max(round(share * BAR_CELLS), 1), BAR_CELLS - 1)
    )
    return "▰" * filled + "▱" * (BAR_CELLS - filled)


def depth_summary(depth: FileDepth) -> str:
    """What the evidence showed of one file's change, for a person: the bar, the depth, the
    counts and the changed lines not seen."""
    if depth.depth is Depth.UNKNOWN:
        return f"depth unknown ({depth.detail})" if depth.detail else "depth unknown"
    summary = (
        f"{depth_bar(depth)} {depth.depth.value}: {depth.changed_lines_seen}/"
        f"{depth.changed_lines} changed lines, {depth.hunks_seen}/{depth.hunks} hunks"
    )
    if depth.unseen:
        summary += f"; not seen {line_ranges(depth.unseen)}"
    return summary


def _policies(decision: DecisionDocument) -> str:
    return (
        f"depth policy {decision.depth_policy.value} ({decision.depth_policy_source.value}), "
        f"unknown policy {decision.unknown_policy.value} "
        f"({decision.unknown_policy_source.value}), "
        f"citation policy {decision.citation_policy.value} "
        f"({decision.citation_policy_source.value}), "
        f"mutation policy {decision.mutation_policy.value} "
        f"({decision.mutation_policy_source.value})"
    )


_CITATION_MARK = {
    CitationOutcome.MATCHED: "matched",
    CitationOutcome.MATCHED_NEARBY: "nearby",
    CitationOutcome.FAILED: "FAILED",
    CitationOutcome.UNAVAILABLE: "unavailable",
    CitationOutcome.REJECTED: "rejected",
}


def citation_summary(reviewer: ReviewerDecision) -> str:
    """``4 citation(s): 2 matched, 1 nearby, 1 FAILED; 1 uncorroborated``, or empty."""
    cited = reviewer.citations
    if cited is None:
        return ""
    counts = [
        f"{cited.count(outcome)} {_CITATION_MARK[outcome]}"
        for outcome in CitationOutcome
        if cited.count(outcome)
    ]
    summary = f"{len(cited.checks)} citation(s) replayed: {', '.join(counts) or 'none'}"
    uncorroborated = sum(1 for check in cited.checks if check.uncorroborated)
    if uncorroborated:
        summary += f"; {uncorroborated} of a file it has no read or diff of (uncorroborated)"
    if cited.over_limit:
        summary += f"; {cited.over_limit} more not replayed (limit {cited.limit})"
    return summary


def citation_detail(check: CitationCheck) -> str:
    """What replay found for one citation, in a few words."""
    if check.outcome is CitationOutcome.MATCHED_NEARBY:
        offset = check.offset or 0
        return f"found {abs(offset)} line(s) {'below' if offset > 0 else 'above'}"
    if check.outcome is CitationOutcome.REJECTED:
        rejection = check.path_rejection.value if check.path_rejection else "rejected"
        return f"path names no file here: {rejection}; not read"
    reason = check.reason.value if check.reason else check.outcome.value
    if check.found is not None:
        return f"{reason}; the line reads {quoted(check.found) if check.found else '(blank)'}"
    if check.file_lines is not None:
        return f"{reason}; the file has {check.file_lines} line(s)"
    return reason


def _shown(reviewer: ReviewerDecision) -> tuple[list[CitationCheck], int]:
    """The citations worth a line (all but plain matches), at most ``SHOWN_CITATIONS``."""
    if reviewer.citations is None:
        return [], 0
    notable = [c for c in reviewer.citations.checks if c.outcome is not CitationOutcome.MATCHED]
    return notable[:SHOWN_CITATIONS], max(len(notable) - SHOWN_CITATIONS, 0)


def _citation_text(reviewer: ReviewerDecision) -> list[str]:
    summary = citation_summary(reviewer)
    if not summary:
        return []
    lines = [f"    {summary}"]
    shown, rest = _shown(reviewer)
    for check in shown:
        where = printable(f"{check.file or check.path}:{check.line}")
        flag = " (uncorroborated)" if check.uncorroborated else ""
        lines.append(
            f"    {_CITATION_MARK[check.outcome]:<11} {where}  cited {quoted(check.content)}: "
            f"{citation_detail(check)}{flag}"
        )
    if rest:
        lines.append(f"    and {rest} more citation(s) not matched as cited (in the decision)")
    return lines


def _code(text: str) -> str:
    """A path or name the reviewer wrote, as a code span it cannot break out of: its backticks
    fenced, its line breaks and control characters spelled out."""
    return code_span(printable(text))


def _cell(text: str) -> str:
    """A Markdown table cell: a pipe, even inside a code span, must be escaped."""
    return text.replace("|", "\\|")


def _citation_markdown(reviewer: ReviewerDecision) -> list[str]:
    summary = citation_summary(reviewer)
    if not summary:
        return []
    lines = ["", f"Citations: {summary}."]
    shown, rest = _shown(reviewer)
    if shown:
        lines += ["", "| cited | outcome | content | found |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {_cell(quoted(f'{c.file or c.path}:{c.line}'))} | {c.outcome.value}"
            f"{' (uncorroborated)' if c.uncorroborated else ''} | "
            f"{_cell(quoted(c.content))} | {_cell(citation_detail(c))} |"
            for c in shown
        ]
    if rest:
        lines += ["", f"And {rest} more citation(s) not matched as cited (in the decision)."]
    return lines


def _file_line(file: FileDecision) -> str:
    line = f"    {_MARK[file.status]:<11} {file.path}  [{file.evidence}]"
    return line + (f"  {depth_summary(file.depth)}" if file.depth is not None else "")


#: What each incomplete coverage means, shown beside its name.
GLOSS = {
    Coverage.INCOMPLETE_FAILED: "the reviewer failed",
    Coverage.INCOMPLETE_SKIPPED: "the reviewer skipped changed files",
    Coverage.INCOMPLETE_MISSING: "changed files neither claimed nor skipped",
    Coverage.INCOMPLETE_UNSUPPORTED: "claimed files without a successful read or diff",
    Coverage.INCOMPLETE_SHALLOW: "claimed files whose evidence shows too little of their change "
    "for the depth policy",
    Coverage.INCOMPLETE_UNVERIFIABLE: "claimed files whose evidence is unavailable, held "
    "against the reviewer by the unknown policy",
    Coverage.INCOMPLETE_CITATIONS: "cited lines that do not hold what the reviewer quoted",
    Coverage.NOTHING_TO_REVIEW: "no reviewable changed file",
}


def coverage_label(reviewer: ReviewerDecision) -> str:
    """The reviewer's coverage with what it means, and, when claims could not be checked, how
    many and why: ``complete`` is never shown alone above rows of unknown claims."""
    label = reviewer.coverage.value
    gloss = GLOSS.get(reviewer.coverage)
    notes = [gloss] if gloss else []
    unknown = sum(1 for file in reviewer.files if file.status is FileStatus.UNKNOWN)
    if unknown:
        why = "no evidence document" if reviewer.evidence_source is None else "evidence unavailable"
        # complete all the same: the unknown policy accepted them, which the label says
        accepted = ", accepted as unknown" if reviewer.coverage is Coverage.COMPLETE else ""
        notes.append(f"{unknown} claim(s) unknown{accepted}: {why}")
    return f"{label} ({'; '.join(notes)})" if notes else label


def text(decision: DecisionDocument, *, mode_from: str | None = None) -> str:
    """The decision for a terminal. ``mode_from`` names where the mode came from when that is
    not one of the flag sources (the demo sets its modes itself)."""
    lines = [
        f"{decision.repo} @ {decision.revision[:12]}: "
        f"{decision.verdict_in.value} → {decision.verdict_out.value} "
        f"(mode {decision.mode.value} from {mode_from or decision.mode_source.value})",
        f"  {_policies(decision)}",
    ]
    for reviewer in decision.reviewers:
        lines.append(f"  reviewer {reviewer.agent_id}: {coverage_label(reviewer)}")
        lines.extend(_file_line(file) for file in reviewer.files)
        for claim in reviewer.claims_rejected:
            lines.append(
                f"    {'rejected':<11} {claim.path}  "
                f"[claimed {claim.claim.value}; names no file here: {claim.reason.value}]"
            )
        lines.extend(_citation_text(reviewer))
    lines.append("")
    lines.append(decision.note)
    return "\n".join(lines) + "\n"


def markdown(decision: DecisionDocument) -> str:
    verdict = f"**{decision.verdict_in.value}** → **{decision.verdict_out.value}**"
    lines = [
        "### coverage-gate",
        "",
        f"{verdict} · mode `{decision.mode.value}` ({decision.mode_source.value}) · "
        f"depth policy `{decision.depth_policy.value}` ({decision.depth_policy_source.value}) · "
        f"citation policy `{decision.citation_policy.value}` "
        f"({decision.citation_policy_source.value}) · "
        f"mutation policy `{decision.mutation_policy.value}` "
        f"({decision.mutation_policy_source.value}) · "
        f"revision `{decision.revision[:12]}`",
        "",
        decision.note,
        "",
    ]
    for reviewer in decision.reviewers:
        lines += [
            f"<details><summary>Reviewer <code>{html.escape(printable(reviewer.agent_id))}</code>: "
            f"{coverage_label(reviewer)}</summary>",
            "",
            "| file | claim | status | evidence | changed lines seen |",
            "| --- | --- | --- | --- | --- |",
        ]
        lines += [
            f"| {_cell(_code(f.path))} | {f.claim.value} | {f.status.value} | {f.evidence} | "
            f"{depth_summary(f.depth) if f.depth is not None else '-'} |"
            for f in reviewer.files
        ]
        if reviewer.claims_rejected:
            lines += ["", "Claimed paths that name no file of the repository (not counted):", ""]
            lines += [
                f"- {_code(c.path)} ({c.claim.value}): {c.reason.value}"
                for c in reviewer.claims_rejected
            ]
        lines += _citation_markdown(reviewer)
        lines += ["", "</details>", ""]
    return "\n".join(lines)
