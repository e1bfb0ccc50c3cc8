"""Decision documents for people: terminal text and a Markdown PR comment."""

from __future__ import annotations

from coverage_gate.model import DecisionDocument, EvidenceDocument, FileStatus

_MARK = {
    FileStatus.VERIFIED: "ok",
    FileStatus.UNSUPPORTED: "UNSUPPORTED",
    FileStatus.UNKNOWN: "unknown",
    FileStatus.SKIPPED: "skipped",
    FileStatus.MISSING: "missing",
}


def text(decision: DecisionDocument) -> str:
    lines = [
        f"{decision.repo} @ {decision.revision[:12]}: "
        f"{decision.verdict_in.value} -> {decision.verdict_out.value} "
        f"(mode {decision.mode.value} from {decision.mode_source.value})",
    ]
    for reviewer in decision.reviewers:
        lines.append(f"  reviewer {reviewer.agent_id}: {reviewer.coverage.value}")
        for file in reviewer.files:
            lines.append(f"    {_MARK[file.status]:<11} {file.path}  [{file.evidence}]")
        for claim in reviewer.claims_rejected:
            lines.append(
                f"    {'rejected':<11} {claim.path}  "
                f"[claimed {claim.claim.value}; names no file here: {claim.reason.value}]"
            )
    lines.append("")
    lines.append(decision.note)
    return "\n".join(lines) + "\n"


def markdown(decision: DecisionDocument) -> str:
    verdict = f"**{decision.verdict_in.value}** → **{decision.verdict_out.value}**"
    lines = [
        "### coverage-gate",
        "",
        f"{verdict} · mode `{decision.mode.value}` ({decision.mode_source.value}) · "
        f"revision `{decision.revision[:12]}`",
        "",
        decision.note,
        "",
    ]
    for reviewer in decision.reviewers:
        lines += [
            f"<details><summary>Reviewer <code>{reviewer.agent_id}</code>: "
            f"{reviewer.coverage.value}</summary>",
            "",
            "| file | claim | status | evidence |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| `{f.path}` | {f.claim.value} | {f.status.value} | {f.evidence} |"
            for f in reviewer.files
        ]
        if reviewer.claims_rejected:
            lines += ["", "Claimed paths that name no file of the repository (not counted):", ""]
            lines += [
                f"- `{c.path}` ({c.claim.value}): {c.reason.value}"
                for c in reviewer.claims_rejected
            ]
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def evidence_summary(document: EvidenceDocument) -> str:
    counters = document.counters
    state = "complete" if document.stream_complete else "INCOMPLETE (no completion marker)"
    parts = [
        f"{document.source}: {counters.calls} tool call(s) in {counters.lines} line(s): "
        f"{counters.succeeded} succeeded, {counters.failed} failed, "
        f"{counters.incomplete} unpaired, {counters.ignored} of ignored tools; "
        f"{len(document.files)} file(s) with evidence; stream {state}",
    ]
    if document.capability.value == "none":
        parts.append("capability none: this format cannot show per-file reads")
    if counters.malformed_lines:
        parts.append(f"{counters.malformed_lines} malformed line(s)")
    if counters.rejected:
        parts.append(f"{counters.rejected} call(s) with rejected paths")
    if document.unattributed_calls:
        parts.append(
            f"{document.unattributed_calls} call(s) whose file cannot be told: evidence unavailable"
        )
    if document.truncated:
        parts.append(f"TRUNCATED: {document.dropped_calls} call(s) past the file bound dropped")
    return "; ".join(parts)
