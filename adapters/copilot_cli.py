"""GitHub Copilot CLI: ``copilot -p PROMPT --output-format json`` output.

Every line is a session event ``{"type", "data", "id", "timestamp", "parentId", "agentId"?}``,
and the run ends with a ``result`` line ``{"type": "result", "sessionId", "exitCode", ...}``.

What counts (DESIGN §6):

- A call is a ``tool.execution_start {toolCallId, toolName, arguments}`` (the start) and a
  ``tool.execution_complete {toolCallId, success, result, error?, shellExecution?}`` (the end),
  paired by ``toolCallId`` in the core; the end does not name its tool. A complete without a
  start (``missing_start``), a start never completed (``missing_end``) and an id started or
  completed twice with different content (``ambiguous_call_id``) are no evidence. A line
  repeated to the letter is one call.
- ``view {path, view_range?}`` is a read of ``path``. Every other tool (``bash``, ``grep``,
  ``glob``, ``task``, MCP tools, a tool the model made up, ...) is ignored: shell commands are
  never parsed for reads, so a ``cat`` in ``bash`` is no read, and a shell call's
  ``shellToolInfo.possiblePaths`` is Copilot's guess for its permission prompt, not a read. A
  tool that is not one of Copilot's own (an MCP server's ``server/tool``, a renamed one) is
  unknown: drift when it names a file in scope. A built-in tool a ``subagent.selected`` line
  lists that this adapter does not know is drift (``unlisted_tool``).
- ``edit``/``create``/``str_replace``/``insert``/``write {path}`` and ``apply_patch`` change
  files, and so does a ``bash`` command that redirects into a file or runs ``git stash``/
  ``checkout``/... (``adapters/_mutations.py``): recorded as mutations, never as reads.
- An event type Copilot does not write is drift (``unknown_event``); so is a tool line without
  its ``toolCallId``/``toolName`` (``missing_field``), or with a ``success`` or exit code of a
  type Copilot never writes (``field_type``; the line is unreadable). Copilot names no version
  in this output.
- Success needs ``success: true`` and, for a shell command, ``shellExecution.exitCode`` 0:
  Copilot reports a command that exited non-zero as ``success: true`` with its exit code there,
  and that is a failed call. A ``success`` that is not a boolean, or an exit code that is not an
  integer, is an unreadable outcome (unknown), not a failure.
- Sub-agents (``task``): the sub-agent's own calls are in the same stream (with ``agentId`` and
  ``parentToolCallId``), executed against the same tree, so they count like the main agent's,
  paired by their own ids. The ``task`` call itself is ignored; its result text (the sub-agent's
  answer) is never evidence.
- ``assistant.*`` lines (``toolRequests``, ``tool_call_delta``: what the model asked for) and the
  progress lines ``tool.execution_partial_result``/``tool.shell_output`` are model output or
  partial output, never evidence; they are passed over from their first bytes.

What a successful ``view`` showed (DESIGN §6 rules 11-12): its ``view_range [start, end]``
(1-based, inclusive; ``end`` -1 runs to the last line; Copilot also takes ``view_range[0]``/
``view_range[1]``); no range is the whole file. Recorded as the zero-based line range
``start - 1`` with ``end - start + 1`` lines. It showed nothing, and is not evidence, when the
model got nothing of it (``toolTelemetry.metrics.resultForLlmLength`` 0, or an empty
``result.content``: an empty file, whose ``content`` is then a diff-like placeholder), when
Copilot declined a file over its size limit (``toolTelemetry.properties.largeOutputAvoided``,
or the content that says so, ``File too large to read at once (...)``, with ``success: true``),
and for a directory listing (``viewType: directory``). When Copilot cut the result it gave the
model (``metrics.resultForLlmLength`` below ``resultLength``), which lines it kept cannot be
told. ``result.detailedContent`` (a diff-like rendering for display) is never read.

Paths: ``path`` as the model wrote it (Copilot asks for absolute paths and resolves a relative one
against the directory it runs in, which the stream does not record: the repository root). ``@``
and backslashes are part of a name.

Completion: the ``result`` line (whatever its ``exitCode``: the run is over and everything it did
is in the stream). An ``assistant.turn_start`` after it reopens the stream.

A ``tool.execution_start``/``_complete`` line that cannot be read (not UTF-8, cut off, not JSON, a
field of the wrong type) is ``Unreadable``: it could start (or end) the call whose
``toolCallId`` is recovered from its bytes, or any call when none can be; a line whose head does
not say its type could do either; a line whose head names another type is plain malformed. A line
longer than the scanner holds whole (a large view) is read as it flows, keeping only the fields
used here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Final

import msgspec

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import Capability, DriftKind
from coverage_gate.core.calls import MAX_CALLS
from coverage_gate.core.events import (
    ANY_CALL,
    EMPTY_SHOWN,
    NO_CALLS,
    UNKNOWN_SHOWN,
    Action,
    Drift,
    Event,
    FormatKnowledge,
    IgnoredAction,
    Malformed,
    ModelText,
    ReadAction,
    Returned,
    Shown,
    ShownKind,
    ToolEnd,
    ToolStart,
    Unreadable,
    UnreadableArguments,
    Unrecognised,
    WriteAction,
)
from coverage_gate.core.presentation import Presentation, Transform

from ._decoder import JsonLinesAdapter, JsonLinesDecoder, single_id
from ._json import (
    OUT_OF_RANGE,
    JsonObject,
    as_int64,
    get_int,
    get_obj,
    get_str,
    opens_object,
)
from ._mutations import apply_patch_paths
from ._returned import returned
from ._shell import shell_action
from ._stream import Items, Spec

__all__ = [
    "ADAPTER",
    "COMMAND_FAILED",
    "COMPLETE",
    "EVENTS",
    "KNOWS",
    "NAME",
    "NOT_READ_TEXT_TOOLS",
    "NOT_READ_TOOLS",
    "READ_TOOL",
    "RESULT",
    "SHELL_TOOL",
    "SPEC",
    "START",
    "SUBAGENT_SELECTED",
    "TOOL_ERROR",
    "TURN_START",
    "WRITE_TOOLS",
    "CopilotDecoder",
]

NAME: Final = "copilot-cli"
READ_TOOL: Final = "view"
TOOL_ERROR: Final = "tool_error"
COMMAND_FAILED: Final = "command_failed"
START: Final = "tool.execution_start"
COMPLETE: Final = "tool.execution_complete"

_HEAD = re.compile(rb'\s*\{\s*"type"\s*:\s*"([A-Za-z_.]+)"')
# Lines known from their first bytes to carry no tool events (progress, chatter, the deltas of
# model text whose whole message a later line holds).
_SKIP_HEAD = re.compile(
    rb'\s*\{\s*"type"\s*:\s*"(?:assistant\.(?:message_delta|message_start|tool_call_delta'
    rb"|reasoning_delta|streaming_delta|usage|intent)|tool\.(?:execution_partial_result"
    rb'|shell_output|execution_progress)|session\.background_tasks_changed|user\.message)"'
)
_SNIFF_HEAD = re.compile(
    rb'\s*\{\s*"type"\s*:\s*"(?:session|assistant|tool|user|model|subagent)\.[a-z_.]+"\s*,'
    rb'\s*"(?:data|ephemeral)"\s*:'
)
_CALL_ID = re.compile(rb'"toolCallId"\s*:\s*"([^"\\]{1,256})"')
_TOO_LARGE = re.compile(r"File too large to read at once \([0-9.,]+ ?[KMGT]?i?B\)\.")
_EVENT_PREFIXES = ("session.", "assistant.", "tool.", "user.", "model.", "subagent.")
SUBAGENT_SELECTED: Final = "subagent.selected"  # lists the tools the sub-agent has
RESULT: Final = "result"
TURN_START: Final = "assistant.turn_start"
# the lines of the model's own text (never evidence, DESIGN §6 rule 29)
_MODEL_TEXT: Final = frozenset({"assistant.message", "assistant.reasoning"})
# The event types Copilot CLI writes (those in the real captures, and its other session events)
EVENTS: Final = frozenset(
    {
        START,
        COMPLETE,
        RESULT,
        TURN_START,
        SUBAGENT_SELECTED,
        "abort",
        "assistant.idle",
        "assistant.intent",
        "assistant.message",
        "assistant.message_delta",
        "assistant.message_start",
        "assistant.reasoning",
        "assistant.reasoning_delta",
        "assistant.streaming_delta",
        "assistant.tool_call_delta",
        "assistant.turn_end",
        "assistant.usage",
        "hook.end",
        "hook.start",
        "model.call_final_result",
        "model.call_finished",
        "model.call_start",
        # 1.0.82 also logs its model calls and turns as session events
        "model.log",
        "model.message",
        "model.messages_snapshot",
        "model.model_call_started",
        "model.model_call_success",
        "model.response",
        "model.tool_execution",
        "model.turn_ended",
        "model.turn_started",
        "pending_messages.modified",
        "session.background_tasks_changed",
        "session.compaction_complete",
        "session.compaction_start",
        "session.error",
        "session.handoff",
        "session.idle",
        "session.info",
        "session.mcp_servers_loaded",
        "session.model_change",
        "session.resume",
        "session.skills_loaded",
        "session.snapshot_rewind",
        "session.start",
        "session.tools_updated",
        "session.truncation",
        "session.usage_info",
        "session.warning",
        "subagent.completed",
        "subagent.configured",
        "subagent.failed",
        "subagent.started",
        "system.message",
        "tool.execution_partial_result",
        "tool.execution_progress",
        "tool.shell_output",
        "tool.user_requested",
        "user.message",
    }
)
SHELL_TOOL: Final = "bash"
WRITE_TOOLS: Final = frozenset({"edit", "create", "str_replace", "insert", "write", "apply_patch"})
# Copilot CLI's built-in tools that are not reads, and why
NOT_READ_TOOLS: Final[dict[str, str]] = {
    SHELL_TOOL: "shell: commands are not parsed (a write when it redirects into a file)",
    "read_bash": "reads a running shell's output",
    "write_bash": "sends input to a running shell",
    "stop_bash": "stops a running shell",
    "list_bash": "lists running shells",
    "powershell": "shell: commands are not parsed",
    "read_powershell": "reads a running shell's output",
    "write_powershell": "sends input to a running shell",
    "stop_powershell": "stops a running shell",
    "list_powershell": "lists running shells",
    "grep": "search: matching lines, not a file's text as a read",
    "glob": "file search: names, not contents",
    "lsp": "language server queries: symbols, not a file's text",
    "task": "sub-agent: its own calls are in this stream and count there",
    "read_agent": "reads a sub-agent's answer (model text)",
    "list_agents": "lists sub-agents",
    "web_fetch": "web: not the repository",
    "web_search": "web: not the repository",
    "report_intent": "the agent's note of what it is doing",
    "think": "the agent's own reasoning",
    "update_todo": "the agent's todo list",
    "skill": "loads a skill's instructions",
    "store_memory": "the agent's memory",
    "fetch_copilot_cli_documentation": "Copilot's own documentation",
}
# What decoding needs of a line; a line read as it flows keeps only this.
SPEC: Final[Spec] = {
    "type": None,
    "sessionId": None,
    "data": {
        "toolCallId": None,
        "toolName": None,
        "tools": Items(None),
        "arguments": {
            "path": None,
            "command": None,
            "patch": None,
            "input": None,
            "view_range": Items(None, first=3),
            "view_range[0]": None,
            "view_range[1]": None,
        },
        "success": None,
        # the model's own text: an assistant.message's or assistant.reasoning's
        "content": None,
        "shellExecution": {"exitCode": None},
        "result": {"content": None},
        "toolTelemetry": {
            "properties": {"largeOutputAvoided": None, "viewType": None},
            "metrics": {"resultLength": None, "resultForLlmLength": None},
        },
    },
}


def _asked(arguments: JsonObject) -> Shown:
    """The lines a ``view`` asks for: its ``view_range`` ``[start, end]`` (``end`` -1: to the last
    line), the whole file without one, unknown when the range given cannot be read."""
    given = arguments.get("view_range")
    if given is None and ("view_range[0]" in arguments or "view_range[1]" in arguments):
        given = [arguments.get("view_range[0]"), arguments.get("view_range[1]")]
    if given is None:
        return Shown.whole()
    if not isinstance(given, list) or len(given) != 2:
        return UNKNOWN_SHOWN
    start, end = (as_int64(value) for value in given)
    if not isinstance(start, int) or not isinstance(end, int) or start < 1:
        return UNKNOWN_SHOWN
    if end == -1:
        return Shown.lines(start, None)
    return Shown.lines(start, end) if end >= start else UNKNOWN_SHOWN


def _action(tool: str, data: JsonObject) -> Action:
    """What a call is: a read for ``view``, nothing for any other tool."""
    if tool != READ_TOOL:
        return _other_action(tool, data)
    arguments = get_obj(data, "arguments")
    if arguments is None:
        return UnreadableArguments(detail="view arguments are missing or not an object")
    path = get_str(arguments, "path")
    if path is None:
        return UnreadableArguments(detail="view arguments have no string 'path'")
    shown = _asked(arguments)
    if shown.kind is not ShownKind.LINES:
        return ReadAction(path=path, shown=shown)
    return ReadAction(
        path=path,
        offset=shown.start - 1,
        limit=None if shown.end is None else shown.end - shown.start + 1,
        shown=shown,
    )


def _other_action(tool: str, data: JsonObject) -> Action:
    """A tool that is no read: a write (an edit, a patch, a shell command that changes files), a
    known tool, or one that is not Copilot's own."""
    given = get_obj(data, "arguments") or {}
    if tool == "apply_patch":
        patch = get_str(given, "patch") or get_str(given, "input") or ""
        paths = apply_patch_paths(patch)
        return WriteAction(path=paths[0] if len(paths) == 1 else None)
    if tool in WRITE_TOOLS:
        return WriteAction(path=get_str(given, "path"))
    if tool == SHELL_TOOL:
        return shell_action(get_str(given, "command"))
    return IgnoredAction(known=tool in NOT_READ_TOOLS)


def _shown(data: JsonObject) -> Shown | None:
    """What a successful call's result says it showed, beyond what was asked: nothing, unknown,
    or ``None`` (what was asked)."""
    telemetry = get_obj(data, "toolTelemetry")
    properties = get_obj(telemetry, "properties") if telemetry is not None else None
    metrics = get_obj(telemetry, "metrics") if telemetry is not None else None
    if properties is not None and (
        properties.get("largeOutputAvoided") in ("true", True)
        or get_str(properties, "viewType") == "directory"
    ):
        return EMPTY_SHOWN
    result = get_obj(data, "result")
    content = get_str(result, "content") if result is not None else None
    if content == "" or (content is not None and _TOO_LARGE.match(content)):
        return EMPTY_SHOWN
    if metrics is not None:
        full, given = get_int(metrics, "resultLength"), get_int(metrics, "resultForLlmLength")
        if given == 0:
            return EMPTY_SHOWN  # the model got nothing (an empty file's view says so only here)
        if isinstance(full, int) and isinstance(given, int) and given < full:
            return UNKNOWN_SHOWN  # the model got part of the result: which lines is not told
    return None


# Tools whose result is not what they read of the revision: the reviewer's own change, a
# sub-agent's answer (model text).
NOT_READ_TEXT_TOOLS: Final = frozenset({"edit", "create", "str_replace", "write", "task"})
# Copilot CLI's line under a shell command's output: ``<shellId: 1 completed with exit code 0>``
_SHELL_TRAILER = re.compile(r"\n?<shellId: [^>\n]*>\s*\Z")


def _said(tool: str, data: JsonObject) -> str | None:
    """The call's arguments as the model wrote them: a shell's command; for a tool this adapter
    does not know, all of them (a path it names is drift when it is in scope)."""
    arguments = get_obj(data, "arguments")
    if arguments is None:
        return None
    if tool == READ_TOOL or tool in WRITE_TOOLS or tool in NOT_READ_TOOLS:
        return get_str(arguments, "command")
    return json.dumps(arguments, ensure_ascii=False, default=str)


def _model_got_nothing(data: JsonObject) -> bool:
    """Whether a result's metrics say the model got none of it (``resultForLlmLength`` 0), and
    its properties do not say it was a directory or a file too large to show."""
    telemetry = get_obj(data, "toolTelemetry")
    properties = get_obj(telemetry, "properties") if telemetry is not None else None
    metrics = get_obj(telemetry, "metrics") if telemetry is not None else None
    if metrics is None or get_int(metrics, "resultForLlmLength") != 0:
        return False
    return properties is None or (
        properties.get("largeOutputAvoided") not in ("true", True)
        and get_str(properties, "viewType") != "directory"
    )


def _given(data: JsonObject, shown: Shown | None) -> Returned | None:
    """What a successful call gave the model: ``result.content``, a shell command's trailer
    taken off; part of it only (the metrics say so) is cut; a notice instead of a file's text
    (too large, a directory) is no file's text; a view whose metrics say the model got nothing
    gave it nothing (the view of an empty file: its ``content`` is a diff header for the user)."""
    result = get_obj(data, "result")
    content = get_str(result, "content") if result is not None else None
    if not content:
        return None
    if _model_got_nothing(data):
        return returned("")
    if shown is not None and shown.kind is ShownKind.EMPTY:
        return returned(content, placeholder=True)
    given = returned(_SHELL_TRAILER.sub("", content))
    if shown is not None and shown.kind is ShownKind.UNKNOWN:
        return msgspec.structs.replace(given, cut=True)
    return given


def _outcome(data: JsonObject) -> tuple[bool, str | None] | tuple[str, str]:
    """(succeeded, error type), or why the outcome cannot be read and the field that says it."""
    success = data.get("success")
    if not isinstance(success, bool):
        return "field 'data.success' is not a boolean", "data.success"
    if not success:
        return False, TOOL_ERROR
    shell = data.get("shellExecution")
    if shell is None:
        # Releases before 1.0.102 write no shellExecution: a shell command's exit code is only in
        # the trailer of its output, ``<shellId: 2 completed with exit code 1>``
        code = _trailer_exit_code(data)
        return (True, None) if code in (None, 0) else (False, COMMAND_FAILED)
    if not isinstance(shell, dict):
        return "field 'data.shellExecution' is not an object", "data.shellExecution"
    code = shell.get("exitCode")
    if as_int64(code) is OUT_OF_RANGE:
        detail = "field 'data.shellExecution.exitCode' is out of the 64-bit range"
        return detail, "data.shellExecution.exitCode"
    if not isinstance(code, int) or isinstance(code, bool):
        detail = "field 'data.shellExecution.exitCode' is not an integer"
        return detail, "data.shellExecution.exitCode"
    return (True, None) if code == 0 else (False, COMMAND_FAILED)


_TRAILER_EXIT = re.compile(r"<shellId: [^>\n]* exit code (-?\d{1,9})>\s*\Z")


def _trailer_exit_code(data: JsonObject) -> int | None:
    """The exit code a shell command's output trailer names, when it names one."""
    result = get_obj(data, "result")
    content = get_str(result, "content") if result is not None else None
    found = _TRAILER_EXIT.search(content[-200:]) if content else None
    return int(found.group(1)) if found else None


class CopilotDecoder(JsonLinesDecoder):
    """Per-stream state: completion only; the core pairs starts with ends."""

    spec = SPEC
    skip_head = _SKIP_HEAD

    def __init__(self) -> None:
        super().__init__()
        self._no_text: set[str] = set()  # calls of NOT_READ_TEXT_TOOLS
        self._handlers: dict[str, Callable[[JsonObject, int], list[Event]]] = {
            START: self._start,
            COMPLETE: self._end,
        }

    def _decoded(
        self, obj: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        if isinstance(obj, Malformed):
            return [_unreadable(seen, lineno, obj.detail)]
        kind = get_str(obj, "type")
        if kind is None:
            detail = "field 'type' is missing or not a string"
            if "data" not in obj:
                return [Malformed(line=lineno, detail=detail)]  # a tool call lives in its data
            return [Unreadable(line=lineno, detail=detail, starts=ANY_CALL, ends=ANY_CALL)]
        handler = self._handlers.get(kind)
        if handler is not None:
            data = get_obj(obj, "data")
            if data is None:
                detail = "field 'data' is missing or not an object"
                return [_unreadable_kind(kind, lineno, detail, None)]
            return handler(data, lineno)
        if kind == RESULT:
            return self._mark_complete(lineno)
        if kind == TURN_START:
            return self._mark_reopened(lineno)
        if kind in _MODEL_TEXT:
            data = get_obj(obj, "data")
            text = get_str(data, "content") if data is not None else None
            return [ModelText(line=lineno, text=text)] if text else []
        if kind == SUBAGENT_SELECTED:
            return _unlisted(obj, lineno)
        if kind in EVENTS:
            return []
        # a type Copilot does not write: drift (a renamed tool event hides calls); counted as
        # unrecognised when it is not even of Copilot's kinds
        drift = Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=kind)
        return [drift] if kind.startswith(_EVENT_PREFIXES) else [Unrecognised(line=lineno), drift]

    def _start(self, data: JsonObject, lineno: int) -> list[Event]:
        call_id, tool = get_str(data, "toolCallId"), get_str(data, "toolName")
        if call_id is None or tool is None:
            detail = "tool.execution_start without string 'toolCallId' and 'toolName'"
            field = "toolCallId" if call_id is None else "toolName"
            drift = _field_drift(data, field, lineno)
            return [
                Unreadable(
                    line=lineno,
                    detail=detail,
                    starts=ANY_CALL if call_id is None else (call_id,),
                    ends=NO_CALLS,
                ),
                drift,
            ]
        if tool in NOT_READ_TEXT_TOOLS and len(self._no_text) < MAX_CALLS:
            self._no_text.add(call_id)
        return [
            ToolStart(
                call_id=call_id,
                tool=tool,
                action=_action(tool, data),
                line=lineno,
                said=_said(tool, data),
            )
        ]

    def _end(self, data: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(data, "toolCallId")
        if call_id is None:
            detail = "tool.execution_complete without a string 'toolCallId'"
            return [
                Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ANY_CALL),
                _field_drift(data, "toolCallId", lineno),
            ]
        outcome = _outcome(data)
        if isinstance(outcome[0], str):
            detail, field = outcome
            drift = _field_drift(data, field, lineno)
            return [Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=(call_id,)), drift]
        succeeded, error = outcome
        if not succeeded:
            # a command that ran and exited with another code: its output reached the model all
            # the same (DESIGN §6 rule 25); a tool's failure is its error message
            given = (
                _given(data, None)
                if error == COMMAND_FAILED and call_id not in self._no_text
                else None
            )
            return [ToolEnd.failed(call_id, lineno, error, given)]
        shown = _shown(data)
        given = None if call_id in self._no_text else _given(data, shown)
        return [
            ToolEnd(
                call_id=call_id, tool=None, succeeded=True, line=lineno, shown=shown, returned=given
            )
        ]


def _field_drift(data: JsonObject, field: str, lineno: int) -> Drift:
    """A field Copilot always writes gone (``missing_field``), or of another type."""
    name = field.removeprefix("data.").split(".", 1)[0]
    kind = DriftKind.MISSING_FIELD if name not in data else DriftKind.FIELD_TYPE
    return Drift(line=lineno, kind=kind, name=field)


def _unlisted(obj: JsonObject, lineno: int) -> list[Event]:
    """The built-in tools a sub-agent is given that this adapter does not know (an MCP server's
    tools are named ``server/tool``: any tool of theirs is judged as an unknown one)."""
    data = get_obj(obj, "data")
    tools = data.get("tools") if data is not None else None
    if not isinstance(tools, list):
        return []
    return [
        Drift(line=lineno, kind=DriftKind.UNLISTED_TOOL, name=tool)
        for tool in dict.fromkeys(tools)
        if isinstance(tool, str) and "/" not in tool and not KNOWS.knows_tool(tool)
    ]


def _unreadable_kind(kind: str, lineno: int, detail: str, call_id: str | None) -> Event:
    ids = ANY_CALL if call_id is None else (call_id,)
    if kind == START:
        return Unreadable(line=lineno, detail=detail, starts=ids, ends=NO_CALLS)
    return Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ids)


def _unreadable(seen: bytes, lineno: int, detail: str) -> Event:
    """A line that could not be read, with the call it could start or end as far as its bytes
    tell."""
    head = _HEAD.match(seen)
    kind = head.group(1).decode("ascii") if head else None
    if not opens_object(seen) or (kind is not None and kind not in (START, COMPLETE)):
        # not an object, or a line that carries no tool call
        return Malformed(line=lineno, detail=detail)
    call_id = single_id(seen, _CALL_ID)
    if kind is None:
        ids = ANY_CALL if call_id is None else (call_id,)
        return Unreadable(line=lineno, detail=detail, starts=ids, ends=ids)
    return _unreadable_kind(kind, lineno, detail, call_id)


def _looks_like(obj: JsonObject) -> bool:
    kind = get_str(obj, "type")
    if kind == "result":
        return isinstance(obj.get("sessionId"), str) and "exitCode" in obj
    return (
        kind is not None
        and kind.startswith(_EVENT_PREFIXES)
        and isinstance(obj.get("data"), dict)
        and isinstance(obj.get("id"), str)
    )


PRESENTATION: Final = Presentation(
    terminal=True,
    transforms=(
        Transform(
            name="shell output without escape sequences, and a <shellId: N completed with exit "
            "code C> trailer",
            shown_by="copilot-*/cat.jsonl control.txt",
        ),
        Transform(
            name="view of an empty file returns nothing (the stream holds a header-only diff)",
            shown_by="copilot-*/read.jsonl emptied.txt",
        ),
    ),
)


KNOWS: Final = FormatKnowledge(
    client="GitHub Copilot CLI",
    events=EVENTS,
    reads=frozenset({READ_TOOL}),
    not_reads=NOT_READ_TOOLS,
    writes=WRITE_TOOLS,
    fields=(
        "data.toolCallId",
        "data.toolName",
        "data.success",
        "data.shellExecution.exitCode",
        "data.result.content",
        "data.toolTelemetry.properties.largeOutputAvoided",
        "data.toolTelemetry.properties.viewType",
        "data.toolTelemetry.metrics.resultLength",
        "data.toolTelemetry.metrics.resultForLlmLength",
    ),
    versions=CHECKED.get(NAME),
    presentation=PRESENTATION,
)

ADAPTER: Final = JsonLinesAdapter(
    name=NAME,
    capability=Capability.PER_FILE,
    description=(
        "GitHub Copilot CLI: `copilot -p PROMPT --output-format json` output; `view` calls are "
        "reads"
    ),
    decoder=CopilotDecoder,
    sniff_head=_SNIFF_HEAD,
    looks_like=_looks_like,
    knows=KNOWS,
)
