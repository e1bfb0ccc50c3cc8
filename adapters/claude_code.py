"""Claude Code: ``claude -p --output-format stream-json --verbose`` output and session transcripts.

One adapter reads both shapes, line by line, and tells them apart per line (stream-json lines
carry ``session_id``/``parent_tool_use_id``; transcript lines carry ``sessionId``/``parentUuid``/
``isSidechain``/``cwd``).

What counts (DESIGN §6):

- A call is an ``assistant`` line's ``tool_use {id, name, input}`` block (the start) and a ``user``
  line's ``tool_result {tool_use_id, is_error?, content}`` block (the end). The core pairs them by
  id; the end does not name its tool.
- ``Read {file_path, offset?, limit?}`` is a read of ``file_path``. Every other tool (``Bash``,
  ``Grep``, ``Glob``, ``Task``/``Agent``, MCP tools, ...) is ignored: shell commands are never
  parsed as reads, and a sub-agent's answer is model text. ``Edit``/``Write``/``MultiEdit``
  (``file_path``), ``NotebookEdit`` (``notebook_path``) and ``EnterWorktree`` change files, and
  so does a ``Bash`` command that redirects into a file or runs ``git stash``/``checkout``/...
  (``adapters/_mutations.py``): these are mutations, never reads.
- What the adapter knows (``KNOWS``) is watched (DESIGN §6 rule 19): a line or content-block type
  Claude Code does not write is drift (``unknown_event``); a built-in tool the ``system/init``
  line lists that ``KNOWS`` lacks is drift (``unlisted_tool``; MCP tools ``mcp__*`` are the
  model's to call and never are); a call of a tool it does not know (MCP tools included) is an
  unknown tool, judged by what came back. A tool line whose ``message``, ``message.content``, a
  content block, ``tool_use.id``/``name``, ``tool_result.tool_use_id``/``is_error``/``content``
  or the result's line range is missing or of a type Claude Code never writes (an empty content,
  a block that is not an object) is unreadable for the calls it could start or end, and drift
  (``missing_field``, ``field_type``). The ``system/init`` line's ``claude_code_version`` is the
  client version.
- Success is ``is_error`` absent or ``false`` *and* no sign of a permission denial: a
  ``tool_result`` whose text is a denial or a user rejection, a ``tool_result_meta`` decision of
  deny/reject, or the id listed in the final ``result`` line's ``permission_denials``. A denied
  call was never executed. If a call was already reported as a success when the ``result`` line
  lists it as denied, a second, failed end is emitted for it: the core then labels the call id
  ambiguous and the call gives no evidence.
- ``stream_event`` lines (``--include-partial-messages``) are streamed model output, never
  evidence; they are passed over from their first bytes.
- A line that cannot be read (not UTF-8, cut off, not JSON, a field of the wrong type) and could
  hold tool calls is ``Unreadable``: a ``user`` line could end calls, an ``assistant`` line could
  start them, a line whose head does not name its type (transcripts) could do either. The
  ``tool_result``/``tool_use`` ids are recovered from the bytes seen where they can be, so that
  only those calls' evidence becomes unavailable; a line whose head names another type is plain
  malformed. A line longer than the scanner holds whole (a large read result) is read as it flows,
  keeping only the fields used here.
- Numbers must fit a 64-bit integer: a ``Read`` ``offset``/``limit`` outside that range is an
  unusable argument; a result's ``startLine``/``numLines``/``totalLines`` outside it makes the
  call's outcome unreadable.

Line ranges, not bytes: Claude Code's ``Read`` works in lines. ``offset`` is a 1-based line
number and ``limit`` a line count; a successful result's ``tool_use_result.file`` says
``{startLine, numLines, totalLines}``. Both are recorded as zero-based, end-exclusive *line*
ranges: ``ReadAction(offset=offset - 1, limit=limit)`` and ``ByteSpan(offset=startLine - 1,
end=startLine - 1 + numLines, total=totalLines)``. For this format the evidence document's
``ranges`` therefore count lines; a range covering ``0..totalLines`` is a whole read.

What a successful ``Read`` showed (DESIGN §6 rules 11-12) is its result's own line range:
lines ``startLine`` to ``startLine + numLines - 1`` of ``totalLines``. A result of zero lines
(an ``offset`` past the end, an empty file) returned nothing and is not evidence, though Claude
Code reports it without ``is_error``. Without that detail the request says it: ``offset``/``limit``
as lines (``offset`` alone reads Claude Code's default of 2000 lines), and no range at all the
first 2000 lines: the whole file only when it is no longer, told with the file at the revision
(``adapters/_line_reads.py``). Claude Code counts the empty string after a file's last newline as
one more line (a 16-line file reads as 17); the range is recorded as reported.

Paths: ``file_path`` is passed through raw with the ``cwd`` the line carries (transcripts) or the
``cwd`` of the stream's ``system/init`` line (stream-json); the core resolves and normalises it.
That ``cwd`` is also passed on as the session's working directory: the repository root when none
is given. ``@`` and backslashes are part of a file name here (``Read`` opens the path as given).

Sub-agents (``Task``/``Agent``): the sub-agent's own tool calls appear in the same stream
(stream-json: ``parent_tool_use_id`` set to the ``Task`` call's id; transcripts: ``isSidechain``
true). They are executions the harness performed for this review, against the same tree, so a
sub-agent's ``Read`` counts exactly like the main agent's, under the same success rules, paired
by its own ``tool_use`` id (interleaved sub-agents cannot mix up their calls). The ``Task`` call
itself is ignored, and its result text (the sub-agent's summary) is never evidence. Sub-agent
lines never complete or reopen the stream. Newer Claude Code versions write a sub-agent's
transcript to its own file (``<session>/subagents/agent-*.jsonl``); record the main transcript
followed by those files (``cat``) to include the sub-agents' reads.

Completion:

- stream-json: the ``result`` line is the completion marker (whatever its ``subtype``: the run
  is over and everything it did is in the stream). A main-agent ``assistant`` line after it
  reopens the stream.
- transcripts have no ``result`` line. A transcript counts as complete when a main-chain
  (``isSidechain`` false) ``assistant`` line records ``message.stop_reason`` ``"end_turn"`` and
  asks for no tool: the model itself ended its turn there. A later main-chain ``assistant`` line
  reopens it. A transcript whose last assistant message did not record ``end_turn`` (cut off,
  still running, or written by a version that leaves ``stop_reason`` null) is incomplete, so its
  absence of evidence proves nothing; its reads still verify the files they name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import Capability, DriftKind
from coverage_gate.core.calls import MAX_CALLS
from coverage_gate.core.events import (
    ANY_CALL,
    NO_CALLS,
    Action,
    ByteSpan,
    ClientSeen,
    Drift,
    Event,
    FormatKnowledge,
    IgnoredAction,
    Malformed,
    Returned,
    ToolEnd,
    ToolStart,
    Unreadable,
    Unrecognised,
    WorkingDirectory,
    WriteAction,
)

from ._claude_results import (
    LINE_RANGE,
    PRESENTATION,
    RESULT_SHAPES,
    ResultShape,
    denied_by_meta,
    line_span,
    reported_lines,
    result_text,
    returned_text,
    span_drift,
)
from ._decoder import JsonLinesAdapter, JsonLinesDecoder, model_text_blocks, sniff_lines
from ._json import (
    JsonObject,
    OutOfRange,
    get_list,
    get_obj,
    get_str,
    key,
    objects,
    opens_object,
)
from ._line_reads import line_read
from ._shell import shell_action
from ._stream import Items, Spec

__all__ = [
    "ADAPTER",
    "BLOCK_TYPES",
    "DEFAULT_READ_LINES",
    "DENIAL_PREFIXES",
    "FIELDS",
    "KNOWS",
    "LINE_TYPES",
    "MCP_PREFIX",
    "NAME",
    "NOT_READ_TEXT_TOOLS",
    "NOT_READ_TOOLS",
    "OTHER_CLIENT_INIT_HEAD",
    "OTHER_CLIENT_VERSIONS",
    "PERMISSION_DENIED",
    "READ_TOOL",
    "SHELL_TOOL",
    "SPEC",
    "TOOL_ERROR",
    "WRITE_TOOLS",
    "ClaudeCodeAdapter",
    "ClaudeCodeDecoder",
    "other_action",
    "unlisted_tools",
]

NAME: Final = "claude-code"
READ_TOOL: Final = "Read"
DEFAULT_READ_LINES: Final = 2000  # what Read returns when given an offset and no limit
PERMISSION_DENIED: Final = "permission_denied"
TOOL_ERROR: Final = "tool_error"

# How Claude Code words a tool call it did not run (the whole tool_result text starts so).
DENIAL_PREFIXES: Final = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action right now",
    "Permission to use ",
    "Claude requested permissions to ",
    "Permission denied by ",
)
# Tools whose result text is not what the tool read of the revision: a sub-agent's answer (model
# text) and the writing tools' view of the reviewer's own change.
NOT_READ_TEXT_TOOLS: Final = frozenset(
    {"Task", "Agent", "Edit", "Write", "MultiEdit", "NotebookEdit", "TodoWrite"}
)

SHELL_TOOL: Final = "Bash"
# The tools that change files, and the input field naming the file each changes.
WRITE_TOOLS: Final = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "EnterWorktree": None,  # a git worktree made for the session
}
# Claude Code's built-in tools that are not reads, and why (its own ``system/init`` lists them).
NOT_READ_TOOLS: Final = {
    SHELL_TOOL: "shell: commands are not parsed (a write when it changes files)",
    "BashOutput": "a background shell's output",
    "KillShell": "ends a background shell",
    "KillBash": "ends a background shell",
    "Monitor": "watches a background process's output",
    "TaskStop": "ends a background task",
    "TaskOutput": "a background task's output",
    "Glob": "file search: names, not contents",
    "Grep": "search: matching lines, not a file's text as a read",
    "LS": "directory listing: names, not contents",
    "LSP": "language server queries: symbols, not a file's text as a read",
    "NotebookRead": "notebook cells: credited by content only",
    "Task": "sub-agent: its answer is model text (its own calls are in the stream)",
    "Agent": "sub-agent: its answer is model text (its own calls are in the stream)",
    "ListAgents": "lists sub-agents",
    "SendMessage": "a message to another agent",
    "Workflow": "runs a workflow of sub-agents (their calls are in the stream)",
    "TodoWrite": "the model's todo list",
    "TaskCreate": "the model's task list",
    "TaskUpdate": "the model's task list",
    "TaskList": "the model's task list",
    "TaskGet": "the model's task list",
    "WebFetch": "web: not the repository",
    "WebSearch": "web: not the repository",
    "ToolSearch": "tool discovery",
    "Skill": "a skill's instructions, not a file of the revision",
    "SlashCommand": "a command's instructions, not a file of the revision",
    "AskUserQuestion": "a question to the user",
    "EnterPlanMode": "plan mode",
    "ExitPlanMode": "plan mode",
    "ExitWorktree": "leaves the session's worktree",
    "CronCreate": "scheduling",
    "CronDelete": "scheduling",
    "CronList": "scheduling",
    "ScheduleWakeup": "scheduling",
    "ReportFindings": "the reviewer's findings: model text",
    "DesignSync": "design documents, not files of the revision",
    "ListMcpResourcesTool": "MCP resources, not files of the revision",
    "ReadMcpResourceTool": "MCP resources, not files of the revision",
}
# MCP tools (``mcp__<server>__<tool>``) are the model's to call: never known, never unlisted.
MCP_PREFIX: Final = "mcp__"
# Every line type and content-block type Claude Code writes, used here or not.
LINE_TYPES: Final = frozenset(
    {
        "system", "assistant", "user", "result", "stream_event",
        "rate_limit_event", "tool_progress", "tool_use_summary", "auth_status", "keep_alive",
        "control_request", "control_response", "control_cancel_request", "prompt_suggestion",
        "streamlined_text", "streamlined_tool_use_summary", "audit_event",
        # transcripts
        "summary", "file-history-snapshot", "queue-operation", "progress", "attachment",
        "custom-title",
    }
)  # fmt: skip
BLOCK_TYPES: Final = frozenset(
    {
        "text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document",
        "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
        "code_execution_tool_result", "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result", "mcp_tool_use", "mcp_tool_result",
        "container_upload", "search_result", "tool_reference",
    }
)  # fmt: skip
# The fields of a tool line this adapter relies on (dotted; ``[]`` is any item of a list).
FIELDS: Final = (
    "type",
    "message",
    "message.content",
    "message.content[].type",
    "tool_use.id",
    "tool_use.name",
    "tool_result.tool_use_id",
    "tool_result.is_error",
    "tool_result.content",
    "tool_use_result.file.startLine",
    "tool_use_result.file.numLines",
    "tool_use_result.file.totalLines",
    "system.tools",
    "claude_code_version",
)
KNOWS: Final = FormatKnowledge(
    client="Claude Code",
    events=LINE_TYPES | BLOCK_TYPES,
    reads=frozenset({READ_TOOL}),
    not_reads=NOT_READ_TOOLS,
    writes=frozenset(WRITE_TOOLS),
    fields=FIELDS,
    versions=CHECKED.get(NAME),
    presentation=PRESENTATION,
    notes=(
        "MCP tools (mcp__*) are unknown tools: the model can call them with any path",
        "a Bash command that redirects into a file or runs git stash/checkout/... is a write",
    ),
)

# Lines known from their first bytes to carry no tool events.
_SKIP_HEAD = re.compile(
    rb'\s*\{\s*"type"\s*:\s*"(?:stream_event|file-history-snapshot|summary|queue-operation)"'
)
_QUIET_KINDS = frozenset(
    {"stream_event", "summary", "file-history-snapshot", "queue-operation", "progress"}
)
_SNIFF_STREAM_KINDS = frozenset({"system", "assistant", "user", "result", "stream_event"})
_SNIFF_TRANSCRIPT_KINDS = frozenset(
    {"user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation"}
)
_TYPE_HEAD = re.compile(rb'\s*\{\s*"type"\s*:\s*"([A-Za-z_-]+)"')
_RESULT_ID = re.compile(rb'"tool_use_id"\s*:\s*"([^"\\]{1,256})"')
_RESULT_KEY = re.compile(rb'"tool_use_id"\s*:')
_USE_ID = re.compile(rb'"type"\s*:\s*"tool_use"\s*,\s*"id"\s*:\s*"([^"\\]{1,256})"')
_USE_KEY = re.compile(rb'"type"\s*:\s*"tool_use"')
# What decoding needs of a line; a line read as it flows keeps only this.
SPEC: Final[Spec] = {
    "type": None,
    "subtype": None,
    "cwd": None,
    "tools": Items(None),
    "claude_code_version": None,
    "qwen_code_version": None,
    "parent_tool_use_id": None,
    "isSidechain": None,
    "parentUuid": None,
    "message": {
        "stop_reason": None,
        "content": Items(
            {
                "type": None,
                "id": None,
                "name": None,
                "input": {
                    "file_path": None,
                    "offset": None,
                    "limit": None,
                    "command": None,
                    "notebook_path": None,
                },
                "tool_use_id": None,
                "is_error": None,
                "content": Items({"text": None}),
                # the model's own text (an assistant line's text and thinking blocks)
                "text": None,
                "thinking": None,
            }
        ),
    },
    "tool_use_result": {"file": LINE_RANGE},
    "toolUseResult": {"file": LINE_RANGE},
    "tool_result_meta": Items({"id": None, "permission_decision": {"decision": None}}),
    "permission_denials": Items({"tool_use_id": None}),
}
# The init line of another client that writes Claude Code's stream-json shapes (Qwen Code) names
# its own version, at its end; a line cut before it is told by its first keys (Qwen Code writes
# ``uuid`` right after ``subtype``, Claude Code ``cwd``).
OTHER_CLIENT_VERSIONS: Final = ("qwen_code_version",)
OTHER_CLIENT_INIT_HEAD = re.compile(
    rb'\s*\{\s*"type"\s*:\s*"system"\s*,\s*"subtype"\s*:\s*"init"\s*,'
    rb'(?:\s*"uuid"\s*:|.*"qwen_code_version"\s*:)'
)
_SNIFF_HEAD = re.compile(
    rb'\s*\{\s*(?:"type"\s*:\s*"(?:system"\s*,\s*"subtype"\s*:\s*"init"|stream_event")'
    rb'|"parentUuid"\s*:)'
)


def _read_action(block: JsonObject, cwd: str | None) -> Action:
    """What a ``tool_use`` block asks for: a read for ``Read``, a write for a writing tool (or a
    ``Bash`` command that changes files), nothing for any other tool."""
    tool = get_str(block, "name")
    if tool == READ_TOOL:
        return line_read(block, READ_TOOL, "file_path", cwd=cwd, default_lines=DEFAULT_READ_LINES)
    return other_action(block, cwd, tool, KNOWS, shell=SHELL_TOOL, writes=WRITE_TOOLS)


def other_action(
    block: JsonObject,
    cwd: str | None,
    tool: str | None,
    knows: FormatKnowledge,
    *,
    shell: str,
    writes: Mapping[str, str | None],
) -> Action:
    """A tool that is no read: a write (a writing tool, or a ``shell`` command that changes
    files, ``adapters/_mutations.py``), a tool ``knows`` knows, or one it does not."""
    arguments = get_obj(block, "input") or {}
    if tool is not None and tool in writes:
        field = writes[tool]
        path = get_str(arguments, field) if field is not None else None
        return WriteAction(path=path, cwd=cwd)
    if tool == shell:
        return shell_action(get_str(arguments, "command"), cwd)
    return IgnoredAction(known=tool is not None and knows.knows_tool(tool))


def unlisted_tools(line: JsonObject, lineno: int, knows: FormatKnowledge) -> list[Event]:
    """Drift for each built-in tool the ``system/init`` line lists that ``knows`` does not know
    (MCP tools aside: those are the model's to call)."""
    listed = get_list(line, "tools") or []
    return [
        Drift(line=lineno, kind=DriftKind.UNLISTED_TOOL, name=tool)
        for tool in dict.fromkeys(item for item in listed if isinstance(item, str))
        if not tool.startswith(MCP_PREFIX) and not knows.knows_tool(tool)
    ]


def _said(block: JsonObject, knows: FormatKnowledge) -> str | None:
    """The text the model wrote into a call: its input's string values; for a tool ``knows``
    does not know, all of its input (a path it names is drift when it is in scope)."""
    found = block.get("input")
    if not isinstance(found, dict):
        return None
    tool = get_str(block, "name")
    if tool is None or not knows.knows_tool(tool):
        return json.dumps(found, ensure_ascii=False, default=str) if found else None
    said = "\n".join(value for value in found.values() if isinstance(value, str))
    return said or None


def _main_chain(line: JsonObject) -> bool:
    """The main agent's line, not a sub-agent's."""
    return line.get("parent_tool_use_id") is None and line.get("isSidechain") is not True


class ClaudeCodeDecoder(JsonLinesDecoder):
    """Per-stream state: the stream's cwd, completion, and which calls already ended."""

    spec = SPEC
    skip_head = _SKIP_HEAD
    no_text_tools: frozenset[str] = NOT_READ_TEXT_TOOLS
    # what the client wraps around each tool's result (DESIGN §6 rule 28)
    result_shapes: Mapping[str, ResultShape] = RESULT_SHAPES
    knows: FormatKnowledge = KNOWS
    version_field: str = "claude_code_version"

    def __init__(self) -> None:
        super().__init__()
        self._cwd: str | None = None
        self._ended: set[str] = set()
        self._succeeded: set[str] = set()
        self._no_text: set[str] = set()  # calls of NOT_READ_TEXT_TOOLS
        # the result shape of each call whose tool has one (``result_shapes``); a call not
        # here (another tool, or past ``MAX_CALLS``) has its result's text taken as it is
        self._shapes: dict[str, ResultShape] = {}
        self._handlers: dict[str, Callable[[JsonObject, int], list[Event]]] = {
            "system": self._system,
            "assistant": self._assistant,
            "user": self._user,
            "result": self._result,
        }

    def _decoded(
        self, obj: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        if isinstance(obj, Malformed):
            return [_unreadable(seen, lineno, obj.detail, whole=whole)]
        kind = get_str(obj, "type")
        if kind is None:
            detail = "field 'type' is missing or not a string"
            if "message" not in obj:
                return [Malformed(line=lineno, detail=detail)]  # tool calls live in a message
            return [
                Unreadable(line=lineno, detail=detail, starts=ANY_CALL, ends=ANY_CALL),
                _odd(obj, "type", lineno),
            ]
        handler = self._handlers.get(kind)
        if handler is not None:
            return handler(obj, lineno)
        if kind in _QUIET_KINDS:
            return []
        if kind in self.knows.events:
            return [Unrecognised(line=lineno)]
        # a type this client does not write: a renamed line type hides its calls
        return [
            Unrecognised(line=lineno),
            Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=kind),
        ]

    def _action(self, block: JsonObject, cwd: str | None) -> Action:
        """What a ``tool_use`` block asks for (a client with other tools overrides it)."""
        return _read_action(block, cwd)

    # --- line kinds ----------------------------------------------------------------------------

    def _system(self, line: JsonObject, lineno: int) -> list[Event]:
        if get_str(line, "subtype") != "init":
            return []
        events: list[Event] = []
        cwd = get_str(line, "cwd")
        if cwd is not None:
            self._cwd = cwd
            events.append(WorkingDirectory(path=cwd, line=lineno))
        version = get_str(line, self.version_field)
        if version is not None:
            events.append(ClientSeen(line=lineno, version=version))
        events.extend(unlisted_tools(line, lineno, self.knows))
        return events

    def _blocks(
        self, line: JsonObject, lineno: int, *, starts: bool
    ) -> tuple[JsonObject | None, list[JsonObject], list[Event]]:
        """A tool line's message, its content blocks, and what in them cannot be read: fields
        of a type Claude Code never writes make the line (or the block) unreadable for the calls
        it could start (``starts``) or end, and are drift, as are block types it does not know."""

        def unread(detail: str, ids: tuple[str, ...] | None, drift: Drift) -> list[Event]:
            if starts:
                return [Unreadable(line=lineno, detail=detail, starts=ids, ends=NO_CALLS), drift]
            return [Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ids), drift]

        message = get_obj(line, "message")
        if message is None:
            detail = "field 'message' is missing or not an object"
            return None, [], unread(detail, None, _odd(line, "message", lineno))
        content = message.get("content")
        if isinstance(content, str) and content and not starts:
            return message, [], []  # a prompt
        if not isinstance(content, list) or not content:
            detail = (
                "field 'message.content' is neither text nor a list"
                if not isinstance(content, str | list)
                else "field 'message.content' is empty"
            )
            drift = _odd(message, "content", lineno, "message.content")
            return message, [], unread(detail, None, drift)
        blocks: list[JsonObject] = []
        events: list[Event] = []
        for block in content:
            if not isinstance(block, dict):
                drift = Drift(line=lineno, kind=DriftKind.FIELD_TYPE, name="message.content[]")
                events.extend(unread("a content block is not an object", None, drift))
                continue
            kind = block.get("type")
            if not isinstance(kind, str):
                # A block whose kind cannot be read could be any call's start (or end).
                call_id = get_str(block, "id" if starts else "tool_use_id")
                ids = ANY_CALL if call_id is None else (call_id,)
                drift = _odd(block, "type", lineno, "message.content[].type")
                events.extend(unread("content block 'type' is not a string", ids, drift))
                continue
            if kind not in self.knows.events:
                events.append(Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=kind))
            blocks.append(block)
        return message, blocks, events

    def _assistant(self, line: JsonObject, lineno: int) -> list[Event]:
        message, blocks, events = self._blocks(line, lineno, starts=True)
        if message is None:
            return events
        cwd = get_str(line, "cwd") or self._cwd
        events.extend(model_text_blocks(blocks, lineno))
        uses = [block for block in blocks if block.get("type") == "tool_use"]
        for block in uses:
            call_id, tool = get_str(block, "id"), get_str(block, "name")
            if call_id is None or tool is None:
                detail = "tool_use block without string 'id' and 'name'"
                ids = ANY_CALL if call_id is None else (call_id,)
                field = "id" if call_id is None else "name"
                events.append(Unreadable(line=lineno, detail=detail, starts=ids))
                events.append(_odd(block, field, lineno, f"tool_use.{field}"))
                continue
            if tool in self.no_text_tools:
                self._remember(self._no_text, call_id)
            shape = self.result_shapes.get(tool)
            if shape is not None and len(self._shapes) < MAX_CALLS:
                self._shapes[key(call_id)] = shape
            said = _said(block, self.knows)
            events.append(
                ToolStart(
                    call_id=call_id,
                    tool=tool,
                    action=self._action(block, cwd),
                    line=lineno,
                    said=said,
                )
            )
        if _main_chain(line):
            events.extend(self._turn_state(line, message, lineno, asks_for_tools=bool(uses)))
        return events

    def _turn_state(
        self, line: JsonObject, message: JsonObject, lineno: int, *, asks_for_tools: bool
    ) -> list[Event]:
        ends_turn = (
            "parentUuid" in line
            and get_str(message, "stop_reason") == "end_turn"
            and not asks_for_tools
        )
        if ends_turn and not self._complete:
            return self._mark_complete(lineno)
        if not ends_turn:
            return self._mark_reopened(lineno)
        return []

    def _user(self, line: JsonObject, lineno: int) -> list[Event]:
        message, blocks, events = self._blocks(line, lineno, starts=False)
        if message is None:
            return events
        results = [block for block in blocks if block.get("type") == "tool_result"]
        detail = line.get("tool_use_result", line.get("toolUseResult"))
        denied = denied_by_meta(line)
        for block in results:
            call_id = get_str(block, "tool_use_id")
            if call_id is None:
                missing = "tool_result block without string 'tool_use_id'"
                events.append(
                    Unreadable(line=lineno, detail=missing, starts=NO_CALLS, ends=ANY_CALL)
                )
                events.append(_odd(block, "tool_use_id", lineno, "tool_result.tool_use_id"))
                continue
            span = line_span(detail) if len(results) == 1 else None
            flag = block.get("is_error", False)
            if not isinstance(flag, bool) and call_id not in denied:
                # Claude Code writes a boolean; anything else is damage, not a failure.
                events.append(
                    Unreadable(
                        line=lineno,
                        detail="field 'is_error' is not a boolean",
                        starts=NO_CALLS,
                        ends=(call_id,),
                    )
                )
                events.append(_odd(block, "is_error", lineno, "tool_result.is_error"))
                continue
            if not isinstance(block.get("content", ""), str | list):
                wrong = "field 'content' of a tool_result is neither text nor a list"
                events.append(
                    Unreadable(line=lineno, detail=wrong, starts=NO_CALLS, ends=(call_id,))
                )
                events.append(_odd(block, "content", lineno, "tool_result.content"))
                continue
            end = self._end(block, call_id, lineno, denied=call_id in denied, span=span)
            odd_span = span_drift(detail, lineno) if len(results) == 1 else None
            if end.succeeded and (isinstance(span, OutOfRange) or odd_span is not None):
                text = (
                    "Read result line range out of the 64-bit range"
                    if odd_span is None
                    else "Read result line range of a type Claude Code never writes"
                )
                events.append(
                    Unreadable(line=lineno, detail=text, starts=NO_CALLS, ends=(call_id,))
                )
                events.extend(() if odd_span is None else (odd_span,))
                continue
            events.append(end)
        return events

    def _end(
        self,
        block: JsonObject,
        call_id: str,
        lineno: int,
        *,
        denied: bool,
        span: ByteSpan | OutOfRange | None,
    ) -> ToolEnd:
        """The end of one call; ``span`` is the line range the line's result detail reports."""
        denied = denied or result_text(block).startswith(DENIAL_PREFIXES)
        no_error = "is_error" not in block or block["is_error"] is False
        succeeded = no_error and not denied
        self._remember(self._ended, call_id)
        if not succeeded:
            kind = PERMISSION_DENIED if denied else TOOL_ERROR
            # a failed call's output reached the model all the same (``cat F; exit 1``): its
            # text is credited by content, never as a read (DESIGN §6 rule 25); a denial ran
            # nothing
            given = None if denied or key(call_id) in self._no_text else self._given(block, call_id)
            return ToolEnd.failed(call_id, lineno, kind, given)
        self._remember(self._succeeded, call_id)
        reported = span if isinstance(span, ByteSpan) else None
        return ToolEnd(
            call_id=call_id,
            tool=None,
            succeeded=True,
            line=lineno,
            result_range=reported,
            shown=reported_lines(reported),
            returned=None if key(call_id) in self._no_text else self._given(block, call_id),
        )

    def _given(self, block: JsonObject, call_id: str) -> Returned | None:
        """What the result gave the model, in its own tool's shape (``result_shapes``)."""
        shape = self._shapes.get(key(call_id))
        return returned_text(block) if shape is None else returned_text(block, shape)

    @staticmethod
    def _remember(calls: set[str], call_id: str) -> None:
        """Bounded: past ``MAX_CALLS`` a call is not remembered as ended, so a later denial of
        it is passed on as a failed end (the core then gives it no evidence either way)."""
        if len(calls) < MAX_CALLS:
            calls.add(key(call_id))

    def _result(self, line: JsonObject, lineno: int) -> list[Event]:
        events: list[Event] = []
        for denial in objects(get_list(line, "permission_denials") or []):
            call_id = get_str(denial, "tool_use_id")
            if call_id is None:
                continue
            if key(call_id) in self._succeeded or key(call_id) not in self._ended:
                self._succeeded.discard(key(call_id))
                self._remember(self._ended, call_id)
                events.append(ToolEnd.failed(call_id, lineno, PERMISSION_DENIED))
        events.extend(self._mark_complete(lineno))
        return events


def _odd(holder: JsonObject, field: str, lineno: int, name: str | None = None) -> Drift:
    """Drift for ``holder``'s ``field`` (named ``name``): missing, or of a type never written."""
    kind = DriftKind.MISSING_FIELD if field not in holder else DriftKind.FIELD_TYPE
    return Drift(line=lineno, kind=kind, name=name or field)


def _unreadable(seen: bytes, lineno: int, detail: str, *, whole: bool) -> Event:
    """A line that could not be read, with the calls it could start or end as far as the bytes
    seen tell (all of them only when the whole line was seen, intact, and every id was read)."""
    head = _TYPE_HEAD.match(seen)
    kind = head.group(1) if head else None
    if not opens_object(seen) or (kind is not None and kind not in (b"user", b"assistant")):
        # not an object, or a line that carries no tool call
        return Malformed(line=lineno, detail=detail)
    complete = whole and seen.rstrip().endswith(b"}")
    starts = NO_CALLS if kind == b"user" else _recovered(seen, _USE_ID, _USE_KEY, complete=complete)
    ends = (
        NO_CALLS
        if kind == b"assistant"
        else _recovered(seen, _RESULT_ID, _RESULT_KEY, complete=complete)
    )
    if starts == NO_CALLS and ends == NO_CALLS:
        return Malformed(line=lineno, detail=detail)
    return Unreadable(line=lineno, detail=detail, starts=starts, ends=ends)


def _recovered(
    seen: bytes, ids: re.Pattern[bytes], keys: re.Pattern[bytes], *, complete: bool
) -> tuple[str, ...] | None:
    """The ids found; ``None`` (any call) unless they are known to be all of them."""
    found: list[str] = []
    for raw in ids.findall(seen):
        try:
            found.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return None
    if not complete or len(found) != len(keys.findall(seen)):
        return None
    return tuple(found)


def _other_client_init(obj: JsonObject) -> bool:
    """Whether a line is the ``system/init`` line of another client writing these shapes."""
    return (
        get_str(obj, "type") == "system"
        and get_str(obj, "subtype") == "init"
        and any(name in obj for name in OTHER_CLIENT_VERSIONS)
    )


def _looks_like(obj: JsonObject) -> bool:
    kind = get_str(obj, "type")
    if kind in _SNIFF_STREAM_KINDS and "session_id" in obj:
        return True
    transcript_keys = ("sessionId", "parentUuid", "leafUuid")
    return kind in _SNIFF_TRANSCRIPT_KINDS and any(key in obj for key in transcript_keys)


class ClaudeCodeAdapter(JsonLinesAdapter[ClaudeCodeDecoder]):
    """Claude Code's shapes, unless another client writes them under its own name."""

    def sniff(self, head_lines: Sequence[bytes]) -> bool:
        if sniff_lines(head_lines, OTHER_CLIENT_INIT_HEAD, _other_client_init):
            return False  # a client writing Claude Code's shapes under its own name
        return super().sniff(head_lines)


ADAPTER: Final = ClaudeCodeAdapter(
    name=NAME,
    capability=Capability.PER_FILE,
    description=(
        "Claude Code: `claude -p --output-format stream-json --verbose` output (with or without "
        "--include-partial-messages) or a session transcript (~/.claude/projects/.../*.jsonl)"
    ),
    decoder=ClaudeCodeDecoder,
    sniff_head=_SNIFF_HEAD,
    looks_like=_looks_like,
    knows=KNOWS,
)
