"""Evidence through SDK spans: for a tracer provider the caller passes in (an OTLP endpoint, an
in-memory exporter in tests). ``spans.record_calls`` makes the same spans and document without
the SDK; this module is imported only when a provider is given.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from coverage_gate.contracts.evidence_doc import EvidenceDocument
from coverage_gate.contracts.spans import EXECUTE_TOOL, INVOKE_AGENT, LINE_ISSUE_EVENT, OPERATION
from coverage_gate.core.calls import CallOutcome, CallRecord, StreamSummary
from coverage_gate.core.folding import EvidenceFolder
from coverage_gate.telemetry.evidence_attributes import (
    call_attributes,
    issue_attributes,
    issue_from_event,
    record_from_attributes,
    summary_attributes,
    summary_from_attributes,
)

__all__ = ["EvidenceSpanProcessor", "emit_spans", "record_through"]


class EvidenceSpanProcessor(SpanProcessor):
    """Folds the ended spans of one ``invoke_agent`` trace into an evidence document."""

    def __init__(self, folder: EvidenceFolder) -> None:
        self._folder = folder
        self._trace_id: int | None = None
        self.document: EvidenceDocument | None = None

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        del parent_context
        if self._trace_id is None and span.name.startswith(INVOKE_AGENT):
            self._trace_id = span.context.trace_id

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is None or span.context.trace_id != self._trace_id:
            return
        attrs = span.attributes or {}
        if attrs.get(OPERATION) == EXECUTE_TOOL:
            record = record_from_attributes(attrs)
            if record is not None:
                self._folder.add(record)
        elif attrs.get(OPERATION) == INVOKE_AGENT:
            issues = tuple(
                issue
                for event in span.events
                if event.name == LINE_ISSUE_EVENT
                for issue in [issue_from_event(event.attributes or {})]
                if issue is not None
            )
            self.document = self._folder.document(summary_from_attributes(attrs, issues))

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        del timeout_millis
        return True


def emit_spans(
    tracer: Tracer,
    summary: StreamSummary,
    records: list[CallRecord],
    max_line_issues: int,
) -> None:
    """One ``invoke_agent`` span with an ``execute_tool`` child per call.

    Children are started with an explicit parent context rather than made current: nothing runs
    inside them, and this keeps thousands of calls cheap.
    """
    name = f"{INVOKE_AGENT} {summary.agent or summary.source}"
    agent_span = tracer.start_span(name, kind=SpanKind.INTERNAL)
    parent = trace.set_span_in_context(agent_span)
    error = Status(StatusCode.ERROR)
    for record in records:
        tool_span = tracer.start_span(
            f"{EXECUTE_TOOL} {record.tool}",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=call_attributes(record),
        )
        if record.outcome is not CallOutcome.SUCCEEDED:
            tool_span.set_status(error)
        tool_span.end()
    for issue in summary.line_issues[:max_line_issues]:
        agent_span.add_event(LINE_ISSUE_EVENT, issue_attributes(issue))
    agent_span.set_attributes(summary_attributes(summary))
    agent_span.end()


def record_through(
    provider: TracerProvider,
    tracer_name: str,
    folder: EvidenceFolder,
    summary: StreamSummary,
    records: list[CallRecord],
    max_line_issues: int,
) -> EvidenceDocument | None:
    """Emit the spans on ``provider`` and fold them as they end; ``None`` when the provider
    recorded none of them (the SDK disabled, a sampler that dropped the trace)."""
    processor = EvidenceSpanProcessor(folder)
    provider.add_span_processor(processor)
    emit_spans(provider.get_tracer(tracer_name), summary, records, max_line_issues)
    return processor.document
