"""Evidence as span attributes, and back: what ``record``'s spans say, and reading it again.

``call_attributes`` is the attributes of one call's ``execute_tool`` span, ``summary_attributes``
those of the ``invoke_agent`` span (the stream's summary), ``issue_attributes`` those of one
``coverage_gate.line_issue`` event; ``record_from_attributes``, ``summary_from_attributes`` and
``issue_from_event`` read them back (``None``, or the value left out, for what is not one of
ours). The evidence document is folded from what these read back, so it is exactly what the spans
say, whether they were made directly (``coverage_gate.record.spans``), by the SDK
(``coverage_gate.record.sdk_spans``), or read from exported spans (the ``otlp-json`` adapter).
The names are the published contract (``coverage_gate.contracts.spans``). Plain mappings only:
no span is made here, nothing is read or written, and no OpenTelemetry package is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import methodcaller
from typing import Any

from coverage_gate.contracts.enums import (
    CallKind,
    Capability,
    ContentCheck,
    DriftKind,
    IssueKind,
    MismatchKind,
)
from coverage_gate.contracts.evidence_doc import CallIssue, DriftEntry
from coverage_gate.contracts.spans import (
    AGENT_NAME,
    CALL_DETAIL,
    CALL_ISSUE,
    CALL_KIND,
    CALL_LINE,
    CALL_OUTCOME,
    CAPABILITY,
    CLIENT_VERSION,
    CONTENT_BLOB,
    CONTENT_CHECK,
    CONTENT_CUTS,
    CONTENT_DIFF,
    CONTENT_DIFFERENCE,
    CONTENT_FOLDED,
    CONTENT_LINES,
    CONTENT_MISMATCH,
    CONTENT_UNCERTAIN,
    DRIFT_COUNTS,
    DRIFT_DROPPED,
    DRIFT_KINDS,
    DRIFT_LINES,
    DRIFT_NAMES,
    ERROR_TYPE,
    EXECUTE_TOOL,
    INVOKE_AGENT,
    OPERATION,
    PATH,
    RANGE_END,
    RANGE_OFFSET,
    RANGE_TOTAL,
    REQ_LIMIT,
    REQ_OFFSET,
    REVISION,
    SHOWN_END,
    SHOWN_KIND,
    SHOWN_START,
    SHOWN_TOTAL,
    SOURCE,
    STREAM_COMPLETE,
    STREAM_DROPPED_CALLS,
    STREAM_LINE_ISSUES,
    STREAM_LINES,
    STREAM_MALFORMED,
    STREAM_UNRECOGNISED,
    TOOL_CALL_ID,
    TOOL_NAME,
)
from coverage_gate.core.calls import CallOutcome, CallRecord, StreamSummary
from coverage_gate.core.events import WHOLE_SHOWN, ByteSpan, ContentSeen, Credit, Shown, ShownKind

__all__ = [
    "SummaryValue",
    "call_attributes",
    "issue_attributes",
    "issue_from_event",
    "record_from_attributes",
    "summary_attributes",
    "summary_from_attributes",
]


def call_attributes(record: CallRecord) -> dict[str, str | int | bool]:
    attrs: dict[str, str | int | bool] = {
        OPERATION: EXECUTE_TOOL,
        TOOL_NAME: record.tool,
        TOOL_CALL_ID: record.call_id,
        CALL_KIND: record.kind.value,
        CALL_OUTCOME: record.outcome.value,
        CALL_LINE: record.line,
    }
    optional: dict[str, str | int | None] = {
        PATH: record.path,
        REQ_OFFSET: record.offset,
        REQ_LIMIT: record.limit,
        CALL_ISSUE: record.issue.value if record.issue else None,
        CALL_DETAIL: record.detail or None,
    }
    if record.result_range is not None:
        optional |= {
            RANGE_OFFSET: record.result_range.offset,
            RANGE_END: record.result_range.end,
            RANGE_TOTAL: record.result_range.total,
        }
    # A whole read that asked for no range is what a span without these attributes reads back as:
    # the most common call carries none of them.
    plain_whole = record.shown is WHOLE_SHOWN and record.offset is None and record.limit is None
    if record.shown is not None and not plain_whole:
        optional |= {
            SHOWN_KIND: record.shown.kind.value,
            SHOWN_START: record.shown.start or None,
            SHOWN_END: record.shown.end,
            SHOWN_TOTAL: record.shown.total,
        }
    if record.content is not None:
        optional |= _content_attributes(record.content)
    if record.outcome is not CallOutcome.SUCCEEDED:
        optional[ERROR_TYPE] = record.issue.value if record.issue else record.error_type or "error"
    attrs.update({key: value for key, value in optional.items() if value is not None})
    return attrs


def _content_attributes(content: ContentSeen) -> dict[str, str | int | None]:
    return {
        CONTENT_CHECK: content.check.value if content.check is not None else None,
        CONTENT_DIFFERENCE: content.first_difference,
        CONTENT_BLOB: content.blob,
        CONTENT_LINES: "\n".join(
            f"{c.path}\t{c.start}-{c.end}\t{c.blob or ''}" for c in content.credits
        )
        or None,
        CONTENT_UNCERTAIN: "\n".join(content.uncertain) or None,
        CONTENT_DIFF: ",".join(f"{start}-{end}" for start, end in content.diff) or None,
        CONTENT_CUTS: ",".join(f"{line}:{kept}" for line, kept in content.cuts) or None,
        CONTENT_FOLDED: "\n".join(f"{path}\t{line}" for path, line in content.folded) or None,
        CONTENT_MISMATCH: content.mismatch.value if content.mismatch is not None else None,
    }


def _pair(text: str) -> tuple[int, int] | None:
    first, _, second = text.partition("-")
    if not (first.isdigit() and second.isdigit()):
        return None
    return int(first), int(second)


_CONTENT_ATTRIBUTE = methodcaller("startswith", "coverage_gate.content.")


def _content(attrs: Mapping[str, Any]) -> ContentSeen | None:
    """What a span says a call's text showed (``None``: it says nothing of it)."""
    if not any(map(_CONTENT_ATTRIBUTE, attrs)):
        return None
    try:
        check = ContentCheck(attrs[CONTENT_CHECK]) if CONTENT_CHECK in attrs else None
    except ValueError:
        check = None
    try:
        mismatch = MismatchKind(attrs[CONTENT_MISMATCH]) if CONTENT_MISMATCH in attrs else None
    except ValueError:
        mismatch = None
    found_credits: list[Credit] = []
    for line in str(attrs.get(CONTENT_LINES, "")).split("\n"):
        head, _, line_blob = line.rpartition("\t")
        path, _, numbers = head.rpartition("\t")
        pair = _pair(numbers)
        # ``1-0``: the whole of a file that is empty (a credit of no lines)
        if path and pair is not None and (pair == (1, 0) or 1 <= pair[0] <= pair[1]):
            found_credits.append(
                Credit(path=path, start=pair[0], end=pair[1], blob=line_blob or None)
            )
    diff = [
        pair
        for part in str(attrs.get(CONTENT_DIFF, "")).split(",")
        if (pair := _pair(part)) is not None and pair[0] < pair[1]
    ]
    cuts = [
        (int(line), int(kept))
        for part in str(attrs.get(CONTENT_CUTS, "")).split(",")
        for line, _, kept in (part.partition(":"),)
        if line.isdigit() and kept.isdigit()
    ]
    folded = [
        (path, int(line))
        for part in str(attrs.get(CONTENT_FOLDED, "")).split("\n")
        for path, _, line in (part.rpartition("\t"),)
        if path and line.isdigit()
    ]
    blob = attrs.get(CONTENT_BLOB)
    uncertain = str(attrs.get(CONTENT_UNCERTAIN, ""))
    return ContentSeen(
        check=check,
        first_difference=_int(attrs, CONTENT_DIFFERENCE),
        mismatch=mismatch,
        blob=blob if isinstance(blob, str) else None,
        credits=tuple(found_credits),
        uncertain=tuple(path for path in uncertain.split("\n") if path),
        diff=tuple(diff),
        cuts=tuple(cuts),
        folded=tuple(folded),
    )


def _int(attrs: Mapping[str, Any], key: str) -> int | None:
    value = attrs.get(key)
    return value if isinstance(value, int) and value.__class__ is not bool else None


def _shown(attrs: Mapping[str, Any]) -> Shown | None:
    value = attrs.get(SHOWN_KIND)
    if value is None:
        return None
    try:
        kind = ShownKind(value)
    except ValueError:
        return None
    start = _int(attrs, SHOWN_START) or 0
    return Shown(kind=kind, start=start, end=_int(attrs, SHOWN_END), total=_int(attrs, SHOWN_TOTAL))


def record_from_attributes(attrs: Mapping[str, Any]) -> CallRecord | None:
    """The call an ``execute_tool`` span describes, or ``None`` if it is not one of ours."""
    try:
        kind = CallKind(attrs[CALL_KIND])
        outcome = CallOutcome(attrs[CALL_OUTCOME])
        issue = IssueKind(attrs[CALL_ISSUE]) if CALL_ISSUE in attrs else None
    except (KeyError, ValueError):
        return None
    # a call's span carries a range only when its result reported one (most have none)
    span = None
    if RANGE_OFFSET in attrs:
        offset, end, total = (
            _int(attrs, RANGE_OFFSET),
            _int(attrs, RANGE_END),
            _int(attrs, RANGE_TOTAL),
        )
        if offset is not None and end is not None and total is not None:
            span = ByteSpan(offset=offset, end=end, total=total)
    path = attrs.get(PATH)
    return CallRecord(
        call_id=str(attrs.get(TOOL_CALL_ID, "")),
        tool=str(attrs.get(TOOL_NAME, "")),
        kind=kind,
        outcome=outcome,
        line=_int(attrs, CALL_LINE) or 0,
        path=path if isinstance(path, str) else None,
        offset=_int(attrs, REQ_OFFSET),
        limit=_int(attrs, REQ_LIMIT),
        error_type=str(attrs[ERROR_TYPE]) if ERROR_TYPE in attrs else None,
        result_range=span,
        issue=issue,
        detail=str(attrs.get(CALL_DETAIL, "")),
        shown=_shown(attrs),
        content=_content(attrs),
    )


SummaryValue = str | int | bool | list[str] | list[int]


def summary_attributes(summary: StreamSummary) -> dict[str, SummaryValue]:
    attrs: dict[str, SummaryValue] = {
        OPERATION: INVOKE_AGENT,
        SOURCE: summary.source,
        REVISION: summary.revision,
        CAPABILITY: summary.capability.value,
        STREAM_COMPLETE: summary.stream_complete,
        STREAM_LINES: summary.lines,
        STREAM_MALFORMED: summary.malformed_lines,
        STREAM_UNRECOGNISED: summary.unrecognised_events,
        STREAM_LINE_ISSUES: summary.line_issue_total,
    }
    if summary.dropped_calls:
        attrs[STREAM_DROPPED_CALLS] = summary.dropped_calls
    if summary.agent:
        attrs[AGENT_NAME] = summary.agent
    if summary.client_version:
        attrs[CLIENT_VERSION] = summary.client_version
    if summary.drift:
        attrs[DRIFT_KINDS] = [entry.kind.value for entry in summary.drift]
        attrs[DRIFT_NAMES] = [entry.name for entry in summary.drift]
        attrs[DRIFT_COUNTS] = [entry.count for entry in summary.drift]
        attrs[DRIFT_LINES] = [entry.first_line or 0 for entry in summary.drift]
    if summary.drift_dropped:
        attrs[DRIFT_DROPPED] = summary.drift_dropped
    return attrs


def _drift(attrs: Mapping[str, Any]) -> tuple[DriftEntry, ...]:
    """The drift entries an ``invoke_agent`` span carries (items of an unknown kind dropped)."""
    columns = [attrs.get(key) for key in (DRIFT_KINDS, DRIFT_NAMES, DRIFT_COUNTS, DRIFT_LINES)]
    if not all(isinstance(column, list | tuple) for column in columns):
        return ()
    out: list[DriftEntry] = []
    for kind, name, count, line in zip(*columns, strict=False):
        try:
            known = DriftKind(kind)
        except ValueError:
            continue
        out.append(
            DriftEntry(
                kind=known,
                name=str(name),
                count=int(count),
                first_line=int(line) or None,
                hides_reads=known.hides_reads,
            )
        )
    return tuple(out)


def summary_from_attributes(
    attrs: Mapping[str, Any], line_issues: tuple[CallIssue, ...]
) -> StreamSummary:
    agent = attrs.get(AGENT_NAME)
    return StreamSummary(
        source=str(attrs.get(SOURCE, "")),
        revision=str(attrs.get(REVISION, "")),
        capability=Capability(attrs.get(CAPABILITY, Capability.NONE.value)),
        stream_complete=bool(attrs.get(STREAM_COMPLETE, False)),
        lines=_int(attrs, STREAM_LINES) or 0,
        malformed_lines=_int(attrs, STREAM_MALFORMED) or 0,
        unrecognised_events=_int(attrs, STREAM_UNRECOGNISED) or 0,
        agent=agent if isinstance(agent, str) else None,
        line_issues=line_issues,
        line_issue_total=_int(attrs, STREAM_LINE_ISSUES) or len(line_issues),
        dropped_calls=_int(attrs, STREAM_DROPPED_CALLS) or 0,
        client_version=str(attrs[CLIENT_VERSION]) if CLIENT_VERSION in attrs else None,
        drift=_drift(attrs),
        drift_dropped=_int(attrs, DRIFT_DROPPED) or 0,
    )


def issue_from_event(attrs: Mapping[str, Any]) -> CallIssue | None:
    try:
        kind = IssueKind(attrs["kind"])
    except (KeyError, ValueError):
        return None
    return CallIssue(kind=kind, line=_int(attrs, "line"), detail=str(attrs.get("detail", "")))


def issue_attributes(issue: CallIssue) -> dict[str, str | int]:
    """The attributes of the ``coverage_gate.line_issue`` event that carries a line issue."""
    return {"kind": issue.kind.value, "line": issue.line or 0, "detail": issue.detail}
