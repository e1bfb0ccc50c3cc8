"""The names of coverage-gate's spans: the span names, the GenAI semantic-convention attributes
they carry, and coverage-gate's own ``coverage_gate.*`` attribute and event names.

These names are the published span contract the docs list (``record``'s spans, read back by
the ``otlp-json`` adapter and by whoever reads exported spans): changing one is a contract
change. Names only; what a span says with them is ``coverage_gate.telemetry.evidence_attributes``.
"""

__all__ = [
    "AGENT_NAME",
    "CALL_DETAIL",
    "CALL_ISSUE",
    "CALL_KIND",
    "CALL_LINE",
    "CALL_OUTCOME",
    "CAPABILITY",
    "CLIENT_VERSION",
    "CONTENT_BLOB",
    "CONTENT_CHECK",
    "CONTENT_CUTS",
    "CONTENT_DIFF",
    "CONTENT_DIFFERENCE",
    "CONTENT_FOLDED",
    "CONTENT_LINES",
    "CONTENT_MISMATCH",
    "CONTENT_UNCERTAIN",
    "DRIFT_COUNTS",
    "DRIFT_DROPPED",
    "DRIFT_KINDS",
    "DRIFT_LINES",
    "DRIFT_NAMES",
    "ERROR_TYPE",
    "EXECUTE_TOOL",
    "INVOKE_AGENT",
    "LINE_ISSUE_EVENT",
    "OPERATION",
    "PATH",
    "PREFIX",
    "RANGE_END",
    "RANGE_OFFSET",
    "RANGE_TOTAL",
    "REQ_LIMIT",
    "REQ_OFFSET",
    "REVISION",
    "SHOWN_END",
    "SHOWN_KIND",
    "SHOWN_START",
    "SHOWN_TOTAL",
    "SOURCE",
    "STREAM_COMPLETE",
    "STREAM_DROPPED_CALLS",
    "STREAM_LINES",
    "STREAM_LINE_ISSUES",
    "STREAM_MALFORMED",
    "STREAM_UNRECOGNISED",
    "TOOL_CALL_ID",
    "TOOL_NAME",
]

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
# lines a matched read's client cut with its own marker: "line:kept" (characters), comma-separated
CONTENT_CUTS = "coverage_gate.content.cuts"
# changed lines the text showed only as the client's presentation folds them (white space, a CR):
# "path\tline" per line, unseen
CONTENT_FOLDED = "coverage_gate.content.folded"
# a mismatched read: what its text was instead (``MismatchKind``)
CONTENT_MISMATCH = "coverage_gate.content.mismatch"

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
