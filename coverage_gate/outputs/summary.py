"""The one line a person reads about an evidence document (stderr of `record` and `run`).

Apart from ``coverage_gate.outputs.render`` so that recording does not load the decision's
renderers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coverage_gate.contracts import evidence_doc, model

    #: ``record`` reads the plain document; the other callers hold the contract
    EvidenceDocument = evidence_doc.EvidenceDocument | model.EvidenceDocument

__all__ = ["evidence_summary"]


def _has_evidence(file: model.FileEvidence | evidence_doc.FileEvidence) -> bool:
    credited = file.content.credited if file.content is not None else 0
    return bool(file.reads_succeeded or file.diff_pages_succeeded or credited)


def _files_seen(document: EvidenceDocument) -> str:
    """How many files have evidence (a successful read, diff page or their lines shown by
    content), told apart from files the calls touched without any."""
    evidenced = sum(1 for file in document.files if _has_evidence(file))
    mismatched = sum(
        1
        for file in document.files
        if not _has_evidence(file) and file.content is not None and file.content.mismatched
    )
    failed = sum(1 for file in document.files if not _has_evidence(file) and file.reads_failed)
    other = len(document.files) - evidenced - failed - mismatched
    parts = [f"{evidenced} file(s) with evidence (a successful read or diff page)"]
    if mismatched:
        parts.append(f"{mismatched} whose reads returned text that is not the file at the revision")
    if failed:
        parts.append(f"{failed} with only failed reads")
    if other:
        parts.append(f"{other} with only empty or unfinished reads")
    return ", ".join(parts)


def evidence_summary(document: EvidenceDocument) -> str:
    counters = document.counters
    state = "complete" if document.stream_complete else "INCOMPLETE (no completion marker)"
    parts = [
        f"{document.source}: {counters.calls} tool call(s) in {counters.lines} line(s): "
        f"{counters.succeeded} succeeded, {counters.failed} failed, "
        f"{counters.incomplete} unpaired, {counters.ignored} of ignored tools; "
        f"{_files_seen(document)}; stream {state}",
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
