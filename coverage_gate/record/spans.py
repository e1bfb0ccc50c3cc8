"""Evidence as OpenTelemetry spans, and the evidence document folded back from what they say.

Each tool call becomes an ``execute_tool {tool}`` span (GenAI semantic conventions) under one
``invoke_agent {reviewer}`` span. The document is folded from the spans' own attributes and
events, never from the records beside them, so the document is exactly what the spans say, and a
reader of exported spans (the ``otlp-json`` adapter) can rebuild it.

Two ways make the spans. ``record_calls`` (here) encodes each span directly as OTLP JSON into a
``SpanSink`` (the local files), or makes none when no sink is given, and folds the same attribute
mappings it encodes: no SDK span object is built per call. ``coverage_gate.record.sdk_spans`` starts
SDK spans on a tracer provider the caller passes in (an OTLP endpoint, an in-memory exporter) and
folds them in a span processor as they end. Both give the same spans and the same document under the
SDK's default span limits (the event bound below); this module imports no OpenTelemetry package.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from coverage_gate.contracts.enums import CallKind, Capability, ContentCheck, DriftKind, IssueKind
from coverage_gate.contracts.evidence_doc import CallIssue, DriftEntry, EvidenceDocument
from coverage_gate.core.events import WHOLE_SHOWN, ByteSpan, ContentSeen, Credit, Shown, ShownKind
from coverage_gate.core.evidence import CallRecord, EvidenceFolder, Outcome, StreamSummary
from coverage_gate.telemetry import otlp_encode

# GenAI semantic conventions
OPERATION = "gen_ai.operation.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
AGENT_NAME = "gen_ai.agent.name"
ERROR_TYPE = "error.type"

# coverage-gate's own attributes
PREFIX = "coverage_gate."
CALL_KIND = "coverage_gate.call.kind"
CALL_OUTCOME = "coverage_gate.call.outcome"
CALL_LINE = "coverage_gate.call.line"
CALL_ISSUE = "coverage_gate.call.issue"
CALL_DETAIL = "coverage_gate.call.detail"
PATH = "coverage_gate.path"
REQ_OFFSET = "coverage_gate.request.offset"
REQ_LIMIT = "coverage_gate.request.limit"
RANGE_OFFSET = "coverage_gate.range.offset"
RANGE_END = "coverage_gate.range.end"
RANGE_TOTAL = "coverage_gate.range.total"
# What a successful read showed (DESIGN §6 rule 11): lines of the file at the revision once told
SHOWN_KIND = "coverage_gate.shown.kind"
SHOWN_START = "coverage_gate.shown.start"
SHOWN_END = "coverage_gate.shown.end"
SHOWN_TOTAL = "coverage_gate.shown.total"
# What a successful call's returned text showed (DESIGN §6 rules 16-17): the read check, the
# blob it was checked against, lines of in-scope files found in the text ("path\tstart-end\tblob"
# per line), files found only where the model may not have seen them, pinned-diff byte ranges
CONTENT_CHECK = "coverage_gate.content.check"
CONTENT_DIFFERENCE = "coverage_gate.content.first_difference"
CONTENT_BLOB = "coverage_gate.content.blob"
CONTENT_LINES = "coverage_gate.content.lines"
CONTENT_UNCERTAIN = "coverage_gate.content.uncertain"
CONTENT_DIFF = "coverage_gate.content.diff"

SOURCE = "coverage_gate.source"
REVISION = "coverage_gate.revision"
CAPABILITY = "coverage_gate.capability"
STREAM_COMPLETE = "coverage_gate.stream.complete"
STREAM_LINES = "coverage_gate.stream.lines"
STREAM_MALFORMED = "coverage_gate.stream.malformed_lines"
STREAM_UNRECOGNISED = "coverage_gate.stream.unrecognised_events"
STREAM_LINE_ISSUES = "coverage_gate.stream.line_issues"
STREAM_DROPPED_CALLS = "coverage_gate.stream.dropped_calls"
LINE_ISSUE_EVENT = "coverage_gate.line_issue"
CLIENT_VERSION = "coverage_gate.client.version"
# What the stream held that its adapter did not understand (DESIGN §6 rule 19): parallel arrays,
# one item per (kind, name), in the evidence's order
DRIFT_KINDS = "coverage_gate.drift.kinds"
DRIFT_NAMES = "coverage_gate.drift.names"
DRIFT_COUNTS = "coverage_gate.drift.counts"
DRIFT_LINES = "coverage_gate.drift.lines"
DRIFT_DROPPED = "coverage_gate.drift.dropped"

INVOKE_AGENT = "invoke_agent"
EXECUTE_TOOL = "execute_tool"

#: The SDK's default bound on events per span (``OTEL_SPAN_EVENT_COUNT_LIMIT``): past it the
#: oldest are dropped and counted. Line issues travel as events of the ``invoke_agent`` span, so
#: the document keeps the ones the span kept, and counts the rest as dropped.
SPAN_EVENT_LIMIT = 128


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
    if record.outcome is not Outcome.SUCCEEDED:
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
    }


def _pair(text: str) -> tuple[int, int] | None:
    first, _, second = text.partition("-")
    if not (first.isdigit() and second.isdigit()):
        return None
    return int(first), int(second)


def _content(attrs: Mapping[str, Any]) -> ContentSeen | None:
    """What a span says a call's text showed (``None``: it says nothing of it)."""
    if not any(key.startswith("coverage_gate.content.") for key in attrs):
        return None
    try:
        check = ContentCheck(attrs[CONTENT_CHECK]) if CONTENT_CHECK in attrs else None
    except ValueError:
        check = None
    found_credits: list[Credit] = []
    for line in str(attrs.get(CONTENT_LINES, "")).split("\n"):
        head, _, line_blob = line.rpartition("\t")
        path, _, numbers = head.rpartition("\t")
        pair = _pair(numbers)
        if path and pair is not None and 1 <= pair[0] <= pair[1]:
            found_credits.append(Credit(path, *pair, line_blob or None))
    diff = [
        pair
        for part in str(attrs.get(CONTENT_DIFF, "")).split(",")
        if (pair := _pair(part)) is not None and pair[0] < pair[1]
    ]
    blob = attrs.get(CONTENT_BLOB)
    uncertain = str(attrs.get(CONTENT_UNCERTAIN, ""))
    return ContentSeen(
        check=check,
        first_difference=_int(attrs, CONTENT_DIFFERENCE),
        blob=blob if isinstance(blob, str) else None,
        credits=tuple(found_credits),
        uncertain=tuple(path for path in uncertain.split("\n") if path),
        diff=tuple(diff),
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
    return Shown(kind, start, _int(attrs, SHOWN_END), _int(attrs, SHOWN_TOTAL))


def record_from_attributes(attrs: Mapping[str, Any]) -> CallRecord | None:
    """The call an ``execute_tool`` span describes, or ``None`` if it is not one of ours."""
    try:
        kind = CallKind(attrs[CALL_KIND])
        outcome = Outcome(attrs[CALL_OUTCOME])
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
            span = ByteSpan(offset, end, total)
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


class SpanSink(Protocol):
    """Where spans encoded directly (OTLP JSON text, ``otlp_encode.span``) go, with the name of
    their instrumentation scope."""

    def add(self, scope: str, span: str) -> None: ...


def _span_id() -> int:
    """A random, valid (non-zero) 64-bit span id, as the SDK's id generator makes them."""
    while not (found := random.getrandbits(64)):
        pass
    return found


def _trace_id() -> int:
    while not (found := random.getrandbits(128)):
        pass
    return found


def record_calls(
    folder: EvidenceFolder,
    summary: StreamSummary,
    records: list[CallRecord],
    max_line_issues: int,
    spans: SpanSink | None = None,
    *,
    scope: str = "",
    clock: Callable[[], int] = time.time_ns,
) -> EvidenceDocument:
    """The evidence document of ``records``, folded from the attributes of their spans; with
    ``spans``, those spans too (scope ``scope``), encoded directly.

    One ``execute_tool`` span per call (status error unless it succeeded), then the
    ``invoke_agent`` span with the stream's summary and at most ``max_line_issues`` line issues
    as events, of which it keeps the last ``SPAN_EVENT_LIMIT``, as an SDK span would.
    """
    trace_id, agent_id, agent_start = _trace_id(), _span_id(), clock()
    for record in records:
        attributes = call_attributes(record)
        told = record_from_attributes(attributes)
        if told is not None:
            folder.add(told)
        if spans is not None:
            start = clock()
            spans.add(
                scope,
                otlp_encode.span(
                    trace_id=trace_id,
                    span_id=_span_id(),
                    parent_id=agent_id,
                    name=f"{EXECUTE_TOOL} {record.tool}",
                    start_ns=start,
                    end_ns=clock(),
                    attributes=attributes,
                    error=record.outcome is not Outcome.SUCCEEDED,
                ),
            )
    sent = summary.line_issues[:max_line_issues]
    kept = sent[max(len(sent) - SPAN_EVENT_LIMIT, 0) :]
    events = [(issue_attributes(issue), clock()) for issue in kept]
    issues = tuple(
        issue for attrs, _ in events for issue in [issue_from_event(attrs)] if issue is not None
    )
    agent_attributes = summary_attributes(summary)
    document = folder.document(summary_from_attributes(agent_attributes, issues))
    if spans is not None:
        spans.add(
            scope,
            otlp_encode.span(
                trace_id=trace_id,
                span_id=agent_id,
                parent_id=None,
                name=f"{INVOKE_AGENT} {summary.agent or summary.source}",
                start_ns=agent_start,
                end_ns=clock(),
                attributes=agent_attributes,
                events=[otlp_encode.event(LINE_ISSUE_EVENT, at, attrs) for attrs, at in events],
                dropped_events=len(sent) - len(kept),
            ),
        )
    return document
