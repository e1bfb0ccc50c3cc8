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

The span and attribute names are the published contract (``coverage_gate.contracts.spans``); the
attribute mappings, and reading them back, are ``coverage_gate.telemetry.evidence_attributes``
(which the ``otlp-json`` adapter reads exported spans with); ``SpanSink`` is a telemetry port
(``coverage_gate.telemetry.ports``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from coverage_gate.contracts.evidence_doc import EvidenceDocument
from coverage_gate.contracts.spans import EXECUTE_TOOL, INVOKE_AGENT, LINE_ISSUE_EVENT
from coverage_gate.core.calls import CallOutcome, CallRecord, StreamSummary
from coverage_gate.core.folding import EvidenceFolder
from coverage_gate.telemetry import otlp_encode
from coverage_gate.telemetry.evidence_attributes import (
    call_attributes,
    issue_attributes,
    issue_from_event,
    record_from_attributes,
    summary_attributes,
    summary_from_attributes,
)
from coverage_gate.telemetry.ports import SpanSink

__all__ = ["SPAN_EVENT_LIMIT", "record_calls"]

#: The SDK's default bound on events per span (``OTEL_SPAN_EVENT_COUNT_LIMIT``): past it the
#: oldest are dropped and counted. Line issues travel as events of the ``invoke_agent`` span, so
#: the document keeps the ones the span kept, and counts the rest as dropped.
SPAN_EVENT_LIMIT = 128


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
                    error=record.outcome is not CallOutcome.SUCCEEDED,
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
