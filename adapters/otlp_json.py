"""OTLP JSON trace files: one ``ExportTraceServiceRequest`` per line.

This is what the OpenTelemetry Collector's file exporter writes, and what coverage-gate's own
local telemetry sink writes: ``resourceSpans[].scopeSpans[].spans[]``, each span with ``name``,
``spanId``, ``status {code}`` and ``attributes: [{key, value: {stringValue|intValue|boolValue|
doubleValue}}]`` (``intValue`` may be a string, enums may be numbers or names).

Which spans count:

- An ``execute_tool`` span (its name starts with ``execute_tool`` or its
  ``gen_ai.operation.name`` is ``execute_tool``) is one tool call: a start and an end on the same
  line, under ``gen_ai.tool.call.id`` (the span id when absent), for tool ``gen_ai.tool.name``.
- coverage-gate's own spans (they carry ``coverage_gate.call.kind``/``coverage_gate.call.outcome``)
  are read back exactly as they were recorded: the normalised path, the requested offset and
  limit, the reported range, the outcome, and the original line number. A call recorded as
  incomplete is replayed so that the core labels it the same way (a start alone for
  ``missing_end``, an end alone for ``missing_start``, two starts for ``ambiguous_call_id``, whose
  detail then names the replayed line rather than the one that made the id ambiguous). A
  call whose path was rejected is replayed with unreadable arguments: no evidence either way, but
  labelled ``arguments_unavailable`` (the span does not keep the raw path); one whose absolute
  path had no root to be placed under is replayed as such, so it still counts as unattributed
  (evidence unavailable, not absent). Malformed-line issues
  recorded on the ``invoke_agent`` span are replayed as malformed lines.
- Spans of agents instrumented with the GenAI conventions count when they record their arguments
  in ``gen_ai.tool.call.arguments`` (a JSON object string): ``read``/``Read``/``cr_read``/
  ``read_file`` with a string ``path`` or ``file_path`` are reads (``offset``/``limit`` passed on as
  the tool gave them), ``cr_diff`` is a diff page, every other tool is ignored. Success is a span
  status other than ERROR and no ``error.type`` attribute. Their paths carry no cwd: relative paths
  are relative to the repository root. A leading ``@`` is part of the name, except for
  ``cr_read``, the review tool that drops one (a file mention).
- Every other span (model calls, HTTP, ...) is passed over; a line with no tool or agent span is
  counted as unrecognised.

Success (both kinds of span): a span whose status is ERROR, or that carries ``error.type``, is a
failed call, whatever its other attributes say.

Numbers: ``intValue`` is a 64-bit integer; a larger one is out of range. A call whose requested or
reported range is out of range has an unreadable outcome. A line that cannot be read (not UTF-8,
cut off, not JSON, a part of the wrong shape) could have held whole calls of any file: each such
line counts as one call whose file is unknown.

Completion: an ``invoke_agent`` span (by name or ``gen_ai.operation.name``). Exported spans have
ended. When coverage-gate's own ``invoke_agent`` span says the recorded stream was incomplete
(``coverage_gate.stream.complete`` false), had capability ``none`` or dropped calls past its
bound (``coverage_gate.stream.dropped_calls``), it does not complete this
stream, and it keeps any other ``invoke_agent`` span in the file from completing it: evidence that
was unavailable when recorded does not become evidence of absence by being read back.

What this adapter does not know is drift (DESIGN §6 rule 19): a span or log event named for
Claude Code (``claude_code.*``) or Codex (``codex.*``) that it does not know (``unknown_event``:
a renamed tool record hides calls); a tool that is none of the known ones (an MCP tool, a renamed
one: judged by what came back, drift when it names a file in scope). The client's version is the
resource's ``service.name`` and ``service.version`` (``claude-code 2.1.328``), checked against
the versions of that client CI ran; one outside them is drift (``client_version``). Writing tools
(Claude Code's ``Edit``/``Write``/``MultiEdit``/``NotebookEdit``, Codex's ``apply_patch``, a
shell command that changes files, coverage-gate's own recorded writes) are recorded as
mutations, never as reads.

Spans from several traces in one file are all read; a call id used in two of them is ambiguous and
gives no evidence. Keep one review per file.

The module stays whole past 800 lines: its kinds of record (coverage-gate's own spans, GenAI
agents' ``execute_tool`` spans, Claude Code's and Codex's own spans and logs) share the attribute
decoding, the call id and failure rules, Claude Code's tool rules and the one ``KNOWS`` that
unknown tools are judged by, and one decoder walks each request for all of them: a cut by client
would leave the parts importing one another.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Final

import msgspec.structs

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import CallKind, Capability, DriftKind, IssueKind
from coverage_gate.contracts.spans import (
    CAPABILITY,
    CLIENT_VERSION,
    DRIFT_COUNTS,
    DRIFT_KINDS,
    DRIFT_LINES,
    DRIFT_NAMES,
    ERROR_TYPE,
    EXECUTE_TOOL,
    INVOKE_AGENT,
    LINE_ISSUE_EVENT,
    OPERATION,
    RANGE_END,
    RANGE_OFFSET,
    RANGE_TOTAL,
    REQ_LIMIT,
    REQ_OFFSET,
    STREAM_COMPLETE,
    STREAM_DROPPED_CALLS,
    TOOL_CALL_ID,
    TOOL_NAME,
)
from coverage_gate.core.calls import CallOutcome, CallRecord
from coverage_gate.core.events import (
    NO_CALLS,
    UNKNOWN_SHOWN,
    Action,
    ClientSeen,
    DiffPageAction,
    Drift,
    Event,
    FilesNotShown,
    FormatKnowledge,
    IgnoredAction,
    Malformed,
    ReadAction,
    Shown,
    ShownKind,
    ToolEnd,
    ToolStart,
    UnplacedRead,
    Unreadable,
    UnreadableArguments,
    Unrecognised,
    WriteAction,
)
from coverage_gate.core.versions import outside
from coverage_gate.telemetry.evidence_attributes import issue_from_event, record_from_attributes

from ._decoder import JsonLinesAdapter, JsonLinesDecoder
from ._json import (
    OUT_OF_RANGE,
    JsonObject,
    OutOfRange,
    as_int64,
    get_int,
    get_list,
    get_obj,
    get_str,
    loads_object,
    opens_object,
)
from ._mutations import apply_patch_paths, argv_write, shell_write
from ._otel_native import TOOL_ERROR, Calls, Part, path_only
from ._stream import Items, Spec
from .claude_code import NOT_READ_TOOLS as CLAUDE_NOT_READS
from .claude_code import READ_TOOL as CLAUDE_READ
from .claude_code import SHELL_TOOL as CLAUDE_SHELL
from .claude_code import WRITE_TOOLS as CLAUDE_WRITES
from .claude_code import _read_action as claude_read_action

__all__ = [
    "ADAPTER",
    "CLAUDE_CALL_ID",
    "CLAUDE_EXECUTION_SPAN",
    "CLAUDE_INPUT",
    "CLAUDE_INTERACTION_SPAN",
    "CLAUDE_LOGS",
    "CLAUDE_NO_DETAILS",
    "CLAUDE_PREFIX",
    "CLAUDE_RESULT_LOG",
    "CLAUDE_SPANS",
    "CLAUDE_TOOL",
    "CLAUDE_TOOL_SPAN",
    "CODEX_CALL_ID",
    "CODEX_LOGS",
    "CODEX_NOT_READS",
    "CODEX_NO_FILES",
    "CODEX_PREFIX",
    "CODEX_RESULT_LOG",
    "CODEX_SHELLS",
    "CODEX_WRITES",
    "DIFF_TOOLS",
    "EVENT_NAME",
    "EXIT_CODE",
    "FILE_PATH",
    "GENAI_NOT_READS",
    "KNOWS",
    "MAX_REPLAYED_DRIFT",
    "MENTION_TOOLS",
    "NAME",
    "READ_TOOLS",
    "SERVICES",
    "SERVICE_NAME",
    "SERVICE_VERSION",
    "SPAN_ERROR",
    "SPEC",
    "TOOL_ARGUMENTS",
    "AttributeValue",
    "Attributes",
    "OtlpJsonDecoder",
    "attributes",
]

NAME: Final = "otlp-json"
TOOL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"  # GenAI semantic conventions
READ_TOOLS: Final = frozenset({"read", "Read", "cr_read", "read_file"})
MENTION_TOOLS: Final = frozenset({"cr_read"})  # the review tool drops one leading "@"
DIFF_TOOLS: Final = frozenset({"cr_diff"})
SPAN_ERROR: Final = "span_error"
FILE_PATH: Final = "file_path"  # the path attribute of Claude Code's tool spans
EXIT_CODE: Final = "process.exit.code"  # a shell tool's exit code (Copilot's spans)
EVENT_NAME: Final = "event.name"
_PATH_KEYS: Final = ("path", "file_path", "filePath", "absolute_path")
# Claude Code (CLAUDE_CODE_ENABLE_TELEMETRY=1; spans with CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1)
CLAUDE_RESULT_LOG: Final = "claude_code.tool_result"
CLAUDE_TOOL_SPAN: Final = "claude_code.tool"
CLAUDE_EXECUTION_SPAN: Final = "claude_code.tool.execution"
CLAUDE_INTERACTION_SPAN: Final = "claude_code.interaction"
CLAUDE_CALL_ID: Final = "tool_use_id"
CLAUDE_TOOL: Final = "tool_name"
CLAUDE_INPUT: Final = "tool_input"
CLAUDE_NO_DETAILS: Final = (
    "Claude Code telemetry without OTEL_LOG_TOOL_DETAILS=1 does not say which file a call read"
)
# Codex ([otel] exporter): tool results name a shell command, not the files it read
CODEX_RESULT_LOG: Final = "codex.tool_result"
CODEX_CALL_ID: Final = "call_id"
CODEX_NO_FILES: Final = (
    "Codex telemetry records shell commands, not the files they read (shell commands are not "
    "parsed)"
)
_STATUS_ERROR: Final = frozenset({2, "2", "STATUS_CODE_ERROR"})
# The spans and log events of Claude Code's and Codex's own telemetry (2.1.328, 0.169.0), used or
# not: another of their names is drift
CLAUDE_PREFIX: Final = "claude_code."
CODEX_PREFIX: Final = "codex."
CLAUDE_SPANS: Final = frozenset(
    {
        CLAUDE_TOOL_SPAN,
        CLAUDE_EXECUTION_SPAN,
        CLAUDE_INTERACTION_SPAN,
        "claude_code.tool.blocked_on_user",
        "claude_code.llm_request",
        "claude_code.hook",
    }
)
CLAUDE_LOGS: Final = frozenset(
    {
        CLAUDE_RESULT_LOG,
        "claude_code.tool_decision",
        "claude_code.user_prompt",
        "claude_code.api_request",
        "claude_code.api_error",
        "claude_code.assistant_response",
        "claude_code.managed_settings_resolved",
        "claude_code.plugin_loaded",
    }
)
CODEX_LOGS: Final = frozenset(
    {
        CODEX_RESULT_LOG,
        "codex.conversation_starts",
        "codex.startup_phase",
        "codex.user_prompt",
        "codex.api_request",
        "codex.sse_event",
        "codex.turn_ttft",
        "codex.tool_decision",
        "codex.websocket_request",
        "codex.websocket_event",
    }
)
# Codex's tools, as its ``codex.tool_result`` logs name them
CODEX_WRITES: Final = frozenset({"apply_patch"})
CODEX_SHELLS: Final = frozenset({"exec_command", "shell", "shell_command", "local_shell"})
CODEX_NOT_READS: Final[dict[str, str]] = {
    **dict.fromkeys(CODEX_SHELLS, "shell: commands are not parsed (a write when it changes files)"),
    "write_stdin": "sends input to a running command",
    "update_plan": "the agent's plan",
    "view_image": "an image, not a file's text",
    "web_search": "web: not the repository",
}
# The reads and diff pages of GenAI-instrumented agents and coverage-gate's own spans
GENAI_NOT_READS: Final[dict[str, str]] = {
    "bash": "shell: commands are not parsed",
    "grep": "search: matching lines, not a file's text as a read",
}
# ``service.name`` of a resource → the client whose checked versions apply
SERVICES: Final[dict[str, str]] = {
    "claude-code": "claude-code",
    "codex_exec": "codex-rollout",
    "codex_cli_rs": "codex-rollout",
    "codex-tui": "codex-rollout",
}
SERVICE_NAME: Final = "service.name"
SERVICE_VERSION: Final = "service.version"

AttributeValue = str | int | float | bool | OutOfRange
Attributes = dict[str, AttributeValue]
# Attributes whose value must be a usable number for the call to say what it showed.
_RANGE_KEYS: Final = (REQ_OFFSET, REQ_LIMIT, RANGE_OFFSET, RANGE_END, RANGE_TOTAL)
_SCALAR: Final[dict[str, Spec]] = {
    "stringValue": None,
    "boolValue": None,
    "doubleValue": None,
    "intValue": None,
}
_ATTRIBUTE: Final[Spec] = Items(
    {"key": None, "value": {**_SCALAR, "arrayValue": {"values": Items(_SCALAR)}}}
)
# What decoding a line needs; a line read as it flows keeps only this.
SPEC: Final[Spec] = {
    "resourceSpans": Items(
        {
            "resource": {"attributes": _ATTRIBUTE},
            "scopeSpans": Items(
                {
                    "spans": Items(
                        {
                            "name": None,
                            "spanId": None,
                            "status": {"code": None},
                            "attributes": _ATTRIBUTE,
                            "events": Items({"name": None, "attributes": _ATTRIBUTE}),
                        }
                    )
                }
            ),
        }
    ),
    "resourceMetrics": None,
    "resourceLogs": Items(
        {
            "resource": {"attributes": _ATTRIBUTE},
            "scopeLogs": Items(
                {"logRecords": Items({"body": {"stringValue": None}, "attributes": _ATTRIBUTE})}
            ),
        }
    ),
}

_OTHER_SIGNAL_HEAD = re.compile(rb'\s*\{\s*"resourceMetrics"\s*:')
_SNIFF_HEAD = re.compile(rb'\s*\{\s*"resource(?:Spans|Logs)"\s*:')


def _value(value: object) -> AttributeValue | None:
    """One OTLP ``AnyValue`` as a plain value; arrays, maps and bytes are not used here."""
    if not isinstance(value, dict):
        return None
    for key in ("stringValue", "boolValue", "doubleValue", "intValue"):
        found = value.get(key)
        if isinstance(found, str) and key == "intValue":
            if not re.fullmatch(r"-?[0-9]+", found):
                return None
            return OUT_OF_RANGE if len(found) > 20 else as_int64(int(found))
        if isinstance(found, str | bool | float):
            return found
        number = as_int64(found)
        if number is not None:
            return number
    return None


def attributes(raw: object) -> Attributes | None:
    """OTLP's ``[{key, value}]`` list as a mapping; ``None`` when it is not a list."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        return None
    out: Attributes = {}
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            value = _value(item.get("value"))
            if value is not None:
                out[item["key"]] = value
    return out


def _items(request: JsonObject, top: str, scopes: str, items: str) -> Iterator[JsonObject | str]:
    """Every span (or log record) of one export request, or a description of each part that is
    malformed: ``top[].scopes[].items[]``."""
    resources = get_list(request, top)
    if resources is None:
        yield f"field {top!r} is missing or not a list"
        return
    for r, resource in enumerate(resources):
        found = get_list(resource, scopes) if isinstance(resource, dict) else None
        if found is None:
            yield f"{top}[{r}].{scopes} is missing or not a list"
            continue
        for s, scope in enumerate(found):
            entries = get_list(scope, items) if isinstance(scope, dict) else None
            if entries is None:
                yield f"{top}[{r}].{scopes}[{s}].{items} is missing or not a list"
                continue
            for n, entry in enumerate(entries):
                if isinstance(entry, dict):
                    yield entry
                else:
                    yield f"{top}[{r}].{scopes}[{s}].{items}[{n}] is not an object"


def _spans(request: JsonObject) -> Iterator[JsonObject | str]:
    return _items(request, "resourceSpans", "scopeSpans", "spans")


def _log_records(request: JsonObject) -> Iterator[JsonObject | str]:
    return _items(request, "resourceLogs", "scopeLogs", "logRecords")


def _unreadable(lineno: int, detail: str) -> Unreadable:
    """A line (or part of one) that could have held whole calls of any file."""
    tag = f"(unreadable line {lineno})"
    return Unreadable(line=lineno, detail=detail, starts=(tag,), ends=(tag,))


def _is_operation(name: str, attrs: Attributes, operation: str) -> bool:
    return attrs.get(OPERATION) == operation or name.startswith(operation)


def _failed(span: JsonObject, attrs: Attributes) -> bool:
    status = get_obj(span, "status")
    code = status.get("code") if status is not None else None
    return code in _STATUS_ERROR or ERROR_TYPE in attrs


# --- coverage-gate's own spans -----------------------------------------------------------------


def _own_action(record: CallRecord) -> Action:
    if record.kind is CallKind.DIFF_PAGE:
        return DiffPageAction(offset=record.offset, limit=record.limit)
    if record.kind is CallKind.IGNORED:
        return IgnoredAction()
    if record.kind is CallKind.WRITE:
        return WriteAction(path=record.path)
    if record.path is not None:
        return ReadAction(path=record.path, offset=record.offset, limit=record.limit)
    if record.issue is IssueKind.PATH_WITHOUT_ROOT:
        return UnplacedRead(detail=record.detail)
    return UnreadableArguments(detail=record.detail or "read recorded without a path")


def _own_events(record: CallRecord, lineno: int) -> list[Event]:
    """Replay one recorded call so that pairing it again gives the same record."""
    line = record.line or lineno
    succeeded = record.outcome is CallOutcome.SUCCEEDED
    start = ToolStart(
        call_id=record.call_id, tool=record.tool, action=_own_action(record), line=line
    )
    if record.issue is IssueKind.OUTCOME_UNREADABLE:
        ids = (record.call_id,)
        if record.path is not None or record.kind is CallKind.DIFF_PAGE:
            return [
                start,
                Unreadable(
                    line=line, detail=record.detail, starts=NO_CALLS, ends=ids, replayed=True
                ),
            ]
        return [Unreadable(line=line, detail=record.detail, starts=ids, ends=ids, replayed=True)]
    if record.outcome is not CallOutcome.INCOMPLETE:
        error = None if succeeded else record.error_type
        end = ToolEnd(
            call_id=record.call_id,
            tool=record.tool,
            succeeded=succeeded,
            line=line,
            error_type=error,
            result_range=record.result_range,
            shown=record.shown,
            content=record.content if succeeded else None,  # what its text showed, as recorded
        )
        return [start, end]
    if record.issue is IssueKind.MISSING_START:
        return [
            ToolEnd(call_id=record.call_id, tool=record.tool or None, succeeded=False, line=line)
        ]
    if record.issue is IssueKind.AMBIGUOUS_CALL_ID:
        # A second start that differs from the first, so the pairer labels the id ambiguous
        # again (an identical repeat would be one call).
        again = ToolStart(
            call_id=record.call_id,
            tool=record.tool,
            action=UnreadableArguments(detail=record.detail),
            line=line,
        )
        return [start, again]
    return [start]


# --- spans of GenAI-instrumented agents --------------------------------------------------------


def _foreign_action(tool: str, arguments: AttributeValue | None, attrs: Attributes) -> Action:
    if tool not in READ_TOOLS and tool not in DIFF_TOOLS:
        if tool in CLAUDE_WRITES or tool in CLAUDE_NOT_READS:
            parsed = loads_object(arguments) if isinstance(arguments, str) else None
            return _claude_other(tool, parsed, attrs)
        return IgnoredAction(known=tool in GENAI_NOT_READS or tool in CODEX_NOT_READS)
    parsed = loads_object(arguments) if isinstance(arguments, str) else None
    if parsed is None:
        known = attrs.get(FILE_PATH)
        if tool in READ_TOOLS and isinstance(known, str) and known:
            return path_only(known)
        return UnreadableArguments(detail=f"{tool} span has no JSON object in {TOOL_ARGUMENTS}")
    offset, limit = get_int(parsed, "offset"), get_int(parsed, "limit")
    if isinstance(offset, OutOfRange) or isinstance(limit, OutOfRange):
        return UnreadableArguments(detail=f"{tool} offset/limit out of the 64-bit range")
    if tool in DIFF_TOOLS:
        return DiffPageAction(offset=offset, limit=limit)
    path = next((found for name in _PATH_KEYS if (found := get_str(parsed, name))), None)
    if path is None:
        return UnreadableArguments(detail=f"{tool} arguments have no string 'path' or 'file_path'")
    return ReadAction(path=path, offset=offset, limit=limit, mention=tool in MENTION_TOOLS)


def _call_id(span: JsonObject, attrs: Attributes, *keys: str) -> str | None:
    for name in keys:
        found = attrs.get(name)
        if isinstance(found, str) and found:
            return found
    return get_str(span, "spanId") or None


def _foreign_part(span: JsonObject, attrs: Attributes, lineno: int) -> Part | Event:
    """An ``execute_tool`` span of a GenAI-instrumented agent: a whole call."""
    tool = attrs.get(TOOL_NAME)
    if not isinstance(tool, str) or not tool:
        return _unreadable(lineno, f"execute_tool span without a string {TOOL_NAME}")
    call_id = _call_id(span, attrs, TOOL_CALL_ID)
    if call_id is None:
        return _unreadable(lineno, f"execute_tool span without {TOOL_CALL_ID} or spanId")
    exit_code = attrs.get(EXIT_CODE)
    failed = _failed(span, attrs) or (
        isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0
    )
    error = str(attrs.get(ERROR_TYPE, SPAN_ERROR)) if failed else None
    arguments = attrs.get(TOOL_ARGUMENTS)
    action = _foreign_action(tool, arguments, attrs)
    exact = not (isinstance(action, ReadAction) and action.shown is UNKNOWN_SHOWN)
    said = _said(tool, arguments)
    return Part(call_id, lineno, tool, action, exact, not failed, error, said=said)


def _said(tool: str, arguments: AttributeValue | None) -> str | None:
    """A call's arguments as the model wrote them, for a tool this adapter does not know (a path
    it names is drift when it is in scope)."""
    if not isinstance(arguments, str) or _known_tool(tool):
        return None
    return arguments


def _known_tool(tool: str) -> bool:
    return KNOWS.knows_tool(tool)


def _claude_other(tool: str, given: JsonObject | None, attrs: Attributes) -> Action:
    """A Claude Code tool that is no read: a write (an edit, or a shell command that changes
    files), or a known tool. ``given``: its input, when the record carries it."""
    if tool in CLAUDE_WRITES:
        field = CLAUDE_WRITES[tool]
        path = get_str(given, field) if given is not None and field is not None else None
        known = attrs.get(FILE_PATH)
        if path is None and isinstance(known, str) and known and field is not None:
            path = known
        return WriteAction(path=path)
    if tool == CLAUDE_SHELL and given is not None:
        write = shell_write(get_str(given, "command") or "")
        return IgnoredAction() if write is None else WriteAction(path=write.path)
    return IgnoredAction(known=tool in CLAUDE_NOT_READS)


# --- Claude Code's and Codex's own records -----------------------------------------------------


def _flag(value: AttributeValue | None) -> bool | None:
    """A success flag as Claude Code and Codex write it: a boolean or "true"/"false"."""
    if value is True or value == "true":
        return True
    if value is False or value == "false":
        return False
    return None


def _claude_action(tool: str, attrs: Attributes) -> tuple[Action, bool]:
    """What a ``claude_code.tool_result`` log says the call asked for, and whether that is the
    call's own request (its ``tool_input``)."""
    raw = attrs.get(CLAUDE_INPUT)
    if tool != CLAUDE_READ:
        given = loads_object(raw) if isinstance(raw, str) else None
        return _claude_other(tool, given, attrs), given is not None or raw is None
    if raw is None:
        return UnreadableArguments(detail=CLAUDE_NO_DETAILS), False
    parsed = loads_object(raw) if isinstance(raw, str) else None
    if parsed is None:
        return UnreadableArguments(detail=f"{CLAUDE_INPUT} is not a JSON object"), False
    action = claude_read_action({"name": tool, "input": parsed}, None)
    if not isinstance(action, ReadAction):
        return action, True
    shown = action.shown
    if shown is not None and shown.kind is ShownKind.LINES and shown.end is not None:
        # The log tells the range asked for, never what came back (a range past the file's
        # end returns nothing): lines seen only as far as the file reaches.
        action = msgspec.structs.replace(action, shown=Shown.asked(shown.start, shown.end))
    return action, True


def _claude_result(attrs: Attributes, lineno: int) -> list[Part | Event]:
    """A ``claude_code.tool_result`` log: a whole call."""
    call_id, tool = attrs.get(CLAUDE_CALL_ID), attrs.get(CLAUDE_TOOL)
    if not isinstance(call_id, str) or not call_id or not isinstance(tool, str) or not tool:
        return [_unreadable(lineno, f"tool_result without string {CLAUDE_CALL_ID}, {CLAUDE_TOOL}")]
    out: list[Part | Event] = []
    if CLAUDE_INPUT not in attrs:
        out.append(FilesNotShown(line=lineno, detail=CLAUDE_NO_DETAILS))
    action, exact = _claude_action(tool, attrs)
    succeeded = _flag(attrs.get("success"))
    error = str(attrs.get("error_type") or TOOL_ERROR)
    said = _said(tool, attrs.get(CLAUDE_INPUT))
    out.append(Part(call_id, lineno, tool, action, exact, succeeded, error, said=said))
    if succeeded is None:
        detail = f"tool_result 'success' is {attrs.get('success')!r}, not true or false"
        out.append(Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=(call_id,)))
    return out


def _claude_tool_span(span: JsonObject, attrs: Attributes, lineno: int) -> list[Part | Event]:
    """A ``claude_code.tool`` span: the call's tool and path (no range), never its success (the
    span stays unset when the call fails; its ``claude_code.tool.execution`` child says)."""
    tool = attrs.get(TOOL_NAME, attrs.get(CLAUDE_TOOL))
    call_id = _call_id(span, attrs, TOOL_CALL_ID, CLAUDE_CALL_ID)
    if not isinstance(tool, str) or not tool or call_id is None:
        return [_unreadable(lineno, f"{CLAUDE_TOOL_SPAN} span without a tool name or call id")]
    out: list[Part | Event] = []
    action: Action = _claude_other(tool, None, attrs)
    exact = not isinstance(action, WriteAction)
    if tool == CLAUDE_READ:
        path = attrs.get(FILE_PATH)
        if isinstance(path, str) and path:
            action, exact = path_only(path), False
        else:
            action, exact = UnreadableArguments(detail=CLAUDE_NO_DETAILS), False
            out.append(FilesNotShown(line=lineno, detail=CLAUDE_NO_DETAILS))
    failed = True if _failed(span, attrs) else None
    error = str(attrs.get(ERROR_TYPE, SPAN_ERROR))
    out.append(Part(call_id, lineno, tool, action, exact, None if failed is None else False, error))
    return out


def _claude_execution_span(span: JsonObject, attrs: Attributes, lineno: int) -> list[Part | Event]:
    """A ``claude_code.tool.execution`` span: how the call ended."""
    call_id = _call_id(span, attrs, TOOL_CALL_ID, CLAUDE_CALL_ID)
    if call_id is None:
        return [_unreadable(lineno, f"{CLAUDE_EXECUTION_SPAN} span without a call id")]
    succeeded = False if _failed(span, attrs) else _flag(attrs.get("success"))
    error = str(attrs.get(ERROR_TYPE, SPAN_ERROR))
    return [Part(call_id, lineno, succeeded=succeeded, error_type=error)]


def _codex_result(attrs: Attributes, lineno: int) -> list[Part | Event]:
    """A ``codex.tool_result`` log: a shell command (or another tool), never a file read."""
    call_id, tool = attrs.get(CODEX_CALL_ID), attrs.get(CLAUDE_TOOL)
    out: list[Part | Event] = [FilesNotShown(line=lineno, detail=CODEX_NO_FILES)]
    if not isinstance(call_id, str) or not call_id or not isinstance(tool, str) or not tool:
        out.append(
            Malformed(line=lineno, detail=f"codex.tool_result without string {CODEX_CALL_ID}")
        )
        return out
    succeeded = _flag(attrs.get("success"))
    arguments = attrs.get("arguments")
    action = _codex_action(tool, loads_object(arguments) if isinstance(arguments, str) else None)
    said = _said(tool, arguments)
    out.append(Part(call_id, lineno, tool, action, True, succeeded, TOOL_ERROR, said=said))
    return out


def _codex_action(tool: str, given: JsonObject | None) -> Action:
    """A Codex tool: a write (a patch, a command that changes files), a known tool, or one this
    adapter does not know."""
    if tool in CODEX_WRITES:
        text = (get_str(given, "input") or get_str(given, "patch")) if given is not None else None
        paths = apply_patch_paths(text or "")
        return WriteAction(path=paths[0] if len(paths) == 1 else None)
    if tool in CODEX_SHELLS and given is not None:
        command = given.get("cmd", given.get("command"))
        write = shell_write(command) if isinstance(command, str) else None
        if isinstance(command, list) and all(isinstance(word, str) for word in command):
            write = argv_write(command)
        return IgnoredAction() if write is None else WriteAction(path=write.path)
    return IgnoredAction(known=tool in CODEX_NOT_READS)


def _log_parts(record: JsonObject, lineno: int) -> list[Part | Event] | str | None:
    """The parts of one log record, what is wrong with it, or ``None`` (not a tool record)."""
    attrs = attributes(record.get("attributes"))
    if attrs is None:
        return "attributes of a log record are not a list"
    body = get_obj(record, "body")
    event = (get_str(body, "stringValue") if body is not None else None) or attrs.get(EVENT_NAME)
    if event == CLAUDE_RESULT_LOG:
        return _claude_result(attrs, lineno)
    if event == CODEX_RESULT_LOG or attrs.get(EVENT_NAME) == CODEX_RESULT_LOG:
        return _codex_result(attrs, lineno)
    if isinstance(event, str) and _unknown_name(event, CLAUDE_LOGS | CODEX_LOGS):
        return [Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=event)]
    return None


def _unknown_name(name: object, known: frozenset[str]) -> bool:
    """A span or log event named for Claude Code or Codex that this adapter does not know."""
    return (
        isinstance(name, str)
        and name.startswith((CLAUDE_PREFIX, CODEX_PREFIX))
        and name not in known
    )


def _without_usable_ends(events: list[Event], keys: list[str]) -> list[Event]:
    """A call whose range is out of range: its start stands, its outcome is unreadable."""
    detail = f"{', '.join(keys)} out of the 64-bit range"
    return [
        Unreadable(line=event.line, detail=detail, starts=NO_CALLS, ends=(event.call_id,))
        if isinstance(event, ToolEnd)
        else event
        for event in events
    ]


class OtlpJsonDecoder(JsonLinesDecoder):
    spec = SPEC
    skip_head = _OTHER_SIGNAL_HEAD

    def __init__(self) -> None:
        super().__init__()
        self._held_open = False  # an invoke_agent span said its evidence was incomplete
        self._calls = Calls()  # the agents' own records, merged per call id
        self._client: str | None = None  # the first client (and version) a resource names

    def _decoded(
        self, request: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        if isinstance(request, Malformed):
            if not opens_object(seen) or _OTHER_SIGNAL_HEAD.match(seen):
                return [request]  # not an object, or metrics: it cannot hold a call
            return [_unreadable(lineno, request.detail)]
        has_spans, has_logs = "resourceSpans" in request, "resourceLogs" in request
        if not has_spans and not has_logs and "resourceMetrics" in request:
            return [Unrecognised(line=lineno)]
        events: list[Event] = [] if self._client is not None else self._client_seen(request, lineno)
        problem: str | None = None
        used = False
        walks: list[tuple[Iterator[JsonObject | str], bool]] = []
        if has_spans or not has_logs:
            walks.append((_spans(request), True))
        if has_logs:
            walks.append((_log_records(request), False))
        for walk, are_spans in walks:
            for item in walk:
                if isinstance(item, str):
                    problem = problem or item
                    continue
                found = self._span(item, lineno) if are_spans else _log_parts(item, lineno)
                if isinstance(found, str):
                    problem = problem or found
                elif found is not None:
                    used = True
                    events.extend(self._held(found))
        if problem is not None:
            events.append(_unreadable(lineno, problem))
        elif not used:
            events.append(Unrecognised(line=lineno))
        return events

    def _client_seen(self, request: JsonObject, lineno: int) -> list[Event]:
        """The client a resource of the request names by ``service.name`` and
        ``service.version``, once per stream; drift when its version is outside those checked."""
        for top in ("resourceSpans", "resourceLogs"):
            for resource in get_list(request, top) or []:
                about = get_obj(resource, "resource") if isinstance(resource, dict) else None
                attrs = attributes(about.get("attributes")) if about is not None else None
                version = attrs.get(SERVICE_VERSION) if attrs else None
                if attrs is None or not isinstance(version, str) or not version:
                    continue
                service = attrs.get(SERVICE_NAME)
                client = f"{service} {version}" if isinstance(service, str) else version
                self._client = client
                events: list[Event] = [ClientSeen(line=lineno, version=client)]
                checked = CHECKED.get(SERVICES.get(str(service), ""))
                why = outside(version, checked) if checked is not None else None
                if why is not None:
                    name = f"{client} ({why})"
                    events.append(Drift(line=lineno, kind=DriftKind.CLIENT_VERSION, name=name))
                return events
        return []

    def _held(self, found: Sequence[Part | Event]) -> list[Event]:
        """Events pass on; parts of a call wait for the rest of it."""
        out: list[Event] = []
        for item in found:
            if isinstance(item, Part):
                out.extend(self._calls.add(item))
            else:
                out.append(item)
        return out

    def _span(self, span: JsonObject, lineno: int) -> Sequence[Part | Event] | str | None:
        """The events of one span, a description of what is wrong with it, or ``None``."""
        name = get_str(span, "name") or ""
        attrs = attributes(span.get("attributes"))
        if attrs is None:
            return f"attributes of span {name!r} are not a list"
        if name == CLAUDE_TOOL_SPAN:
            return _claude_tool_span(span, attrs, lineno)
        if name == CLAUDE_EXECUTION_SPAN:
            return _claude_execution_span(span, attrs, lineno)
        if _is_operation(name, attrs, EXECUTE_TOOL):
            record = record_from_attributes(attrs)
            unusable = [key for key in _RANGE_KEYS if attrs.get(key) is OUT_OF_RANGE]
            if record is None:
                part = _foreign_part(span, attrs, lineno)
                if not isinstance(part, Part) or not unusable:
                    return [part]
                detail = f"{', '.join(unusable)} out of the 64-bit range"
                start = replace(part, succeeded=None)
                return [
                    start,
                    Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=(part.call_id,)),
                ]
            if record.outcome is CallOutcome.SUCCEEDED and _failed(span, attrs):
                error = str(attrs.get(ERROR_TYPE, SPAN_ERROR))
                record = msgspec.structs.replace(
                    record, outcome=CallOutcome.FAILED, error_type=error
                )
            events = _own_events(record, lineno)
            return _without_usable_ends(events, unusable) if unusable else events
        if name == CLAUDE_INTERACTION_SPAN or _is_operation(name, attrs, INVOKE_AGENT):
            return self._agent(span, attrs, lineno)
        if _unknown_name(name, CLAUDE_SPANS):
            return [Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=name)]
        return None

    def _agent(self, span: JsonObject, attrs: Attributes, lineno: int) -> list[Event]:
        dropped = attrs.get(STREAM_DROPPED_CALLS)
        events: list[Event] = _recorded_watch(span, attrs)
        for raw in get_list(span, "events") or []:
            if not isinstance(raw, dict) or get_str(raw, "name") != LINE_ISSUE_EVENT:
                continue
            issue = issue_from_event(attributes(raw.get("attributes")) or {})
            if issue is not None and issue.kind is IssueKind.MALFORMED_LINE:
                events.append(Malformed(line=issue.line or lineno, detail=issue.detail))
        unavailable = (
            attrs.get(STREAM_COMPLETE) is False
            or attrs.get(CAPABILITY) == Capability.NONE.value
            or dropped is OUT_OF_RANGE
            or (isinstance(dropped, int) and dropped > 0)
        )
        if unavailable:
            self._held_open = True
            events.extend(self._mark_reopened(lineno))
        elif not self._held_open and not self._complete:
            events.extend(self._mark_complete(lineno))
        return events

    def finish(self) -> Sequence[Event]:
        return self._calls.finish()


# drift the core finds again in the calls replayed: not replayed itself
_FOUND_AGAIN: Final = frozenset({DriftKind.UNPAIRED})
MAX_REPLAYED_DRIFT: Final = 4096  # events replayed per recorded entry (its count, bounded)


def _arrays(span: JsonObject, keys: tuple[str, ...]) -> list[list[object]] | None:
    """The ``arrayValue`` attributes ``keys`` of a span, as plain lists (``None`` if any is
    missing or not an array)."""
    found: dict[str, list[object]] = {}
    for item in get_list(span, "attributes") or []:
        if not isinstance(item, dict) or item.get("key") not in keys:
            continue
        value = get_obj(item, "value")
        array = get_obj(value, "arrayValue") if value is not None else None
        values = get_list(array, "values") if array is not None else []
        found[str(item["key"])] = [_value(entry) for entry in values or []]
    return [found[key] for key in keys] if all(key in found for key in keys) else None


def _recorded_watch(span: JsonObject, attrs: Attributes) -> list[Event]:
    """What coverage-gate's own ``invoke_agent`` span recorded of the stream's client and drift,
    replayed so that reading it back gives the same evidence."""
    line = 0
    events: list[Event] = []
    version = attrs.get(CLIENT_VERSION)
    if isinstance(version, str) and version:
        events.append(ClientSeen(line=line, version=version))
    columns = _arrays(span, (DRIFT_KINDS, DRIFT_NAMES, DRIFT_COUNTS, DRIFT_LINES))
    for kind, name, count, first in zip(*(columns or ()), strict=False):
        try:
            known = DriftKind(kind)
        except ValueError:
            continue
        if known in _FOUND_AGAIN or not isinstance(name, str):
            continue
        at = first if isinstance(first, int) and not isinstance(first, bool) else 0
        times = count if isinstance(count, int) and 0 < count <= MAX_REPLAYED_DRIFT else 1
        events.extend(Drift(line=at, kind=known, name=name) for _ in range(times))
    return events


def _looks_like(obj: JsonObject) -> bool:
    return isinstance(obj.get("resourceSpans"), list) or isinstance(obj.get("resourceLogs"), list)


KNOWS: Final = FormatKnowledge(
    client="OpenTelemetry (Claude Code, Codex, GenAI agents, coverage-gate)",
    events=CLAUDE_SPANS | CLAUDE_LOGS | CODEX_LOGS | {EXECUTE_TOOL, INVOKE_AGENT},
    reads=READ_TOOLS | DIFF_TOOLS,
    not_reads={**CLAUDE_NOT_READS, **CODEX_NOT_READS, **GENAI_NOT_READS},
    writes=frozenset(CLAUDE_WRITES) | CODEX_WRITES,
    fields=(
        TOOL_NAME,
        TOOL_CALL_ID,
        TOOL_ARGUMENTS,
        ERROR_TYPE,
        "status.code",
        CLAUDE_CALL_ID,
        CLAUDE_TOOL,
        CLAUDE_INPUT,
        FILE_PATH,
        "success",
        CODEX_CALL_ID,
        "resource.service.name",
        "resource.service.version",
    ),
    # each client's own range applies (``SERVICES``): the adapter compares them itself
    versions=None,
    notes=("client versions: those of claude-code and codex-rollout, by service.name",),
    trust=(
        "spans that run --telemetry-intake receives come through a loopback port the",
        "reviewer's environment names, which its own commands can reach: alone they verify",
        "no claim (unknown, telemetry_intake, said); beside the stream they corroborate it,",
        "and a disagreement is said and counted. A file given to record is the pipeline's",
        "record: keep it out of the reviewer's reach",
    ),
)

ADAPTER: Final = JsonLinesAdapter(
    name=NAME,
    capability=Capability.PER_FILE,
    description=(
        "OTLP JSON trace lines (Collector file exporter, coverage-gate's local telemetry): "
        "execute_tool spans with a known tool and path"
    ),
    decoder=OtlpJsonDecoder,
    sniff_head=_SNIFF_HEAD,
    looks_like=_looks_like,
    knows=KNOWS,
)
