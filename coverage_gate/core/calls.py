"""The call records that pairing makes and folding reads, and the bounds both keep.

``CallRecord`` is one tool call after pairing and path normalisation; ``StreamSummary`` is what
the stream as a whole said beyond its calls; ``CallOutcome`` is how a call ended. ``bounded``
cuts a kept string to its bound (the ``MAX_*`` figures here are those bounds), and
``resolve_shown`` tells in lines what byte-ranged reads of files in the pinned diff showed, with
their content passed in through a port. No clock, environment, files or telemetry here; pairing
events into records is ``coverage_gate.core.pairing``, folding records into the evidence
document is ``coverage_gate.core.folding``.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum

import msgspec
from msgspec.structs import replace

from coverage_gate.contracts.enums import CallKind, Capability, IssueKind
from coverage_gate.contracts.evidence_doc import CallIssue, DriftEntry
from coverage_gate.core.depth import (
    ContentSource,
    LineTable,
    as_asked,
    needs_content,
    resolve,
    simplified,
)
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.events import ByteSpan, ContentSeen, Shown, ShownKind

__all__ = [
    "MAX_CALLS",
    "MAX_DETAIL_CHARS",
    "MAX_DRIFT",
    "MAX_ID_CHARS",
    "MAX_LINE_ISSUES",
    "MAX_MUTATIONS",
    "MAX_PATH_CHARS",
    "MAX_RANGES_PER_FILE",
    "MAX_UNREADABLE_IDS",
    "CallOutcome",
    "CallRecord",
    "StreamSummary",
    "bounded",
    "resolve_shown",
]

MAX_RANGES_PER_FILE = 32
MAX_CALLS = 20_000  # call ids followed at once; real reviews make hundreds
MAX_LINE_ISSUES = 256
MAX_UNREADABLE_IDS = 4096
MAX_ID_CHARS = 256  # call ids, tool names, error types
MAX_PATH_CHARS = 4096  # PATH_MAX: no longer path names a real file
MAX_DETAIL_CHARS = 512
MAX_DRIFT = 64  # distinct (kind, name) drift entries kept; the rest counted
MAX_MUTATIONS = 64


class CallOutcome(StrEnum):
    """How a call ended: succeeded, failed, or not known to have ended (incomplete)."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INCOMPLETE = "incomplete"


class CallRecord(msgspec.Struct, frozen=True):
    """One tool call as the evidence core sees it, after pairing and path normalisation."""

    call_id: str
    tool: str
    kind: CallKind
    outcome: CallOutcome
    line: int
    path: str | None = None
    offset: int | None = None
    limit: int | None = None
    error_type: str | None = None
    result_range: ByteSpan | None = None
    issue: IssueKind | None = None
    detail: str = ""
    shown: Shown | None = None  # what a successful read returned (the end's word, else the start's)
    content: ContentSeen | None = None  # what its returned text showed (successful calls only)


class StreamSummary(msgspec.Struct, frozen=True):
    """What the stream as a whole said, beyond its calls."""

    source: str
    revision: str
    capability: Capability
    stream_complete: bool
    lines: int = 0
    malformed_lines: int = 0
    unrecognised_events: int = 0
    agent: str | None = None
    line_issues: tuple[CallIssue, ...] = ()
    line_issue_total: int = 0
    dropped_calls: int = 0  # calls past the pairer's bound: their evidence is unavailable
    client_version: str | None = None
    drift: tuple[DriftEntry, ...] = ()
    drift_dropped: int = 0


def bounded(text: str, limit: int) -> tuple[str, bool]:
    """``text`` as it is kept: at most ``limit`` characters, then (when longer) a marker with its
    length and a hash, so that two long values never read as one; lone surrogates (which no
    encoder can write) replaced. The flag says it was cut."""
    if len(text) <= limit and text.isascii():
        return text, False
    raw = text.encode("utf-8", "surrogatepass")
    clean = raw.decode("utf-8", "replace") if _has_surrogates(text) else text
    if len(clean) <= limit:
        return clean, False
    digest = hashlib.sha256(raw).hexdigest()[:16]
    return f"{clean[:limit]}\u2026[{len(text)} chars, sha256 {digest}]", True


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _lines_known(diff: DiffIndex, path: str) -> bool:
    """Whether ``path`` is in the pinned diff with changed lines that can be told."""
    changed = diff.file(path)
    return changed is not None and changed.lines_known


def resolve_shown(
    records: list[CallRecord], diff: DiffIndex | None, content: ContentSource | None
) -> list[CallRecord]:
    """Tell in lines what successful reads of files in the pinned diff showed, where that needs
    the file's content (a byte range, a range counted from the end). Each such file's content is
    asked for once; without it those reads' lines are unknown, and a range known only as asked
    for stands as asked. Other records pass unchanged."""
    if diff is None:
        return [
            replace(r, shown=as_asked(r.shown))
            if r.shown is not None and r.shown.kind is ShownKind.ASKED
            else r
            for r in records
        ]
    tables: dict[str, LineTable | None] = {}
    out: list[CallRecord] = []
    for record in records:
        shown = simplified(record.shown) if record.shown is not None else None
        path = record.path
        if (
            shown is None
            or path is None
            or record.outcome is not CallOutcome.SUCCEEDED
            or not needs_content(shown)
            or not _lines_known(diff, path)
        ):
            if shown is not None:
                shown = as_asked(shown)
            out.append(record if shown == record.shown else replace(record, shown=shown))
            continue
        if path not in tables:
            raw = content.content(path) if content is not None else None
            tables[path] = LineTable(raw) if raw is not None else None
        out.append(replace(record, shown=resolve(shown, tables[path])))
    return out
