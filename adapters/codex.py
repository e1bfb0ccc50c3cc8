"""Codex CLI: the session rollout file (``codex-rollout``) and ``codex exec --json``
(``codex-exec``).

Codex has no read tool: it reads files with shell commands. We never parse shell commands
(DESIGN §6 rule 5), so the only per-file evidence Codex offers is its harness's *own* parse of a
command, recorded in the rollout file.

``codex-rollout`` (``$CODEX_HOME/sessions/.../rollout-*.jsonl``):

- A call starts with a ``response_item`` ``function_call`` (or ``custom_tool_call``/
  ``local_shell_call``) ``{call_id, name}``.
- A shell command ends with an ``event_msg`` ``item_completed`` whose item is a
  ``CommandExecution {id: call_id, cwd: "file://...", parsed_cmd: [...], status, exit_code}``.
  Each ``parsed_cmd`` entry of type ``read`` is a read of its ``path``, relative to ``cwd``
  (``@`` and backslashes are part of the name the harness parsed). The ``session_meta``
  ``cwd`` is passed on as the session's working directory (the root when none is given). One
  command may parse into several reads: one start/end pair each, under the call id itself when
  there is one read and ``<call_id>#<n>`` (n from 1, in ``parsed_cmd`` order) when there are
  several. A command with no ``read`` entry is one ignored call.
- Success needs ``status`` ``"completed"`` *and* ``exit_code`` 0 (Codex still parses
  ``cat src/util`` as a read when ``src/util`` is a directory; only the exit code says it failed).
- Any other tool ends with its ``function_call_output``/``custom_tool_call_output`` and is ignored.
- The start of a call is held until its end arrives, because the reads are only known then. A
  completion with no start before it is passed on as an end alone (the core labels it
  ``missing_start``); a start that never ends is passed on when the stream ends (``missing_end``).
  A call id started twice is passed on at once, both starts (``ambiguous_call_id``).
- A call line that cannot be read (not UTF-8, cut off, not JSON, a field of the wrong type) is
  ``Unreadable``: a ``response_item`` call (or call output) line could start (or end) the call
  whose ``call_id`` is recovered from it, an ``item_completed`` line could end any call, a line
  whose head does not say its kind could do either; a line whose head names another kind is plain
  malformed. A line longer than the scanner holds whole is read as it flows.
- Bounds: at most as many calls are held open as the core follows; past that a rollout counts
  as incomplete (what those commands read is not known). Long call ids are kept bounded.
- Completion: ``event_msg`` ``task_complete``; a ``task_started`` after it reopens the stream. A
  rollout in which a started call never got its end (a command without its ``CommandExecution``
  record, as older Codex versions write them) is not complete either: what that command read is
  unknown, so the absence of a read proves nothing.
- Which lines a read showed (DESIGN §6 rule 11): Codex's parser keeps no line range (``sed -n
  '1,60p' f`` and ``head -n 5 f`` are plain ``read`` entries), so the entry's own ``cmd`` text is
  read, and only for an entry the harness already classified as a read of that file. Exactly
  these shapes are recognised, with the entry's ``path`` as their one file operand: ``cat [-n]
  F`` and ``nl [-ba] F`` (the whole file), ``sed -n 'Ap' F``/``'A,Bp'``/``'A,$p'``, ``head [-n N |
  -N] F`` (lines 1 to N, 10 by default), ``tail [-n N | -N | -n +K] F`` (the last N lines, or
  from line K: told with the file's length, from its content at the revision). Anything else (a
  pipe, a redirection, other options or operands, another spelling of the path) is a read of an
  unknown range: its depth is unknown, never whole. A command that succeeded with an empty
  ``aggregated_output`` returned nothing: its reads are not evidence.
- What the model got of a command's output is its ``function_call_output`` (the same
  ``call_id``), not the record's ``aggregated_output`` (which keeps the whole output up to 64
  KiB). Codex 0.169.0 cuts a long output for the model to a head and a tail (5000 bytes each
  in ``codex_cut_output.rollout.jsonl``, a model it has no metadata for), the middle replaced
  by ``…N chars truncated…``, and opens that text, after its header's ``Output:`` line, with
  ``Warning: truncated output (original token count: N)``. A read whose output opens so
  showed lines that cannot be told (one read is one range; the model got two): unknown, never
  the whole file nor the whole range the command asked for. The same words further in are the
  file's own text. So a command's record is held until its output is read (an output written
  before its record is remembered), or until another line has events of its own or the stream
  ends: then it is passed on as it is, since nothing said the model's copy was cut. Events
  keep the order of the lines.

Drift and mutations (DESIGN §6 rules 19-20), both formats: a line, ``response_item``,
``event_msg``, ``item_completed`` item or ``exec --json`` item type Codex 0.169.0 does not write
is drift ``unknown_event`` (named ``response_item/<type>``, ``event_msg/<type>``,
``item_completed/<Type>``, ``item/<type>``); so is a ``parsed_cmd`` entry type other than
``read``/``list_files``/``search``/``unknown`` (``parsed_cmd/<type>``): Codex's own parser chose
it, not the model, and a read may hide under it, so it is drift that hides reads. A record field
of a type Codex never writes (``parsed_cmd`` not a list of objects with string types, an
``exit_code`` outside 32 bits, a ``status`` that is not text, a ``payload`` without its ``type``)
is drift ``field_type`` (``missing_field`` when gone) and makes the calls it could end unknown: a
damaged ``parsed_cmd`` is a read of a file that cannot be told. A call of a tool Codex does not
offer is an unknown tool (judged by what it returned, never by a parsed read), MCP tools in
``exec --json`` included (``mcp__<server>__<tool>``). A command whose argv or parsed commands
change files (``adapters/_mutations.py``), an ``apply_patch`` (its ``FileChange`` record's
``changes``, or the patch's headers) and an ``exec --json`` ``file_change`` are writes, never
reads. The rollout's ``session_meta`` names the Codex version (``cli_version``) and the commit
the session started at (``git.commit_hash``); ``exec --json`` names neither. A call without its
end still makes a rollout incomplete (above); in a stream that completed, the core also counts
such calls as drift ``unpaired``.

``codex-exec`` (``codex exec --json``): ``item.started``/``item.completed`` of
``command_execution`` (and ``mcp_tool_call``) items are calls, paired by ``item.id`` and counted,
with the same success rule. The path of a read exists only inside the command string, which is
never parsed; what a command printed is its ``aggregated_output``, and that is evidence by content
(DESIGN §6 rule 17): lines of an in-scope file, or hunks of the pinned diff, found in it. But
``aggregated_output`` holds more than the model received when Codex cut a long output for it (a
head and a tail), and from this file alone the cut is not knowable (it depends on the model's
token budget): only what every cut keeps, the first and last ``EXEC_KEPT_BYTES``, is credited;
lines found only between them make their file unknown, never unseen. An output of
``EXEC_OUTPUT_CAP`` bytes or more is itself cut short by Codex, so only its head is credited. A
line that cannot be read and names an item could have been any command's end: its evidence is
unknown. Completion: ``turn.completed``; a ``turn.started`` after it reopens the stream.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote, urlsplit

import msgspec

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import Capability, DriftKind
from coverage_gate.core.events import (
    EMPTY_SHOWN,
    UNKNOWN_SHOWN,
    Action,
    ClientSeen,
    Drift,
    Event,
    FormatKnowledge,
    IgnoredAction,
    LineClass,
    Malformed,
    ReadAction,
    Returned,
    Shown,
    StreamCommit,
    ToolEnd,
    ToolStart,
    UnplacedRead,
    Unreadable,
    UnreadableArguments,
    Unrecognised,
    WorkingDirectory,
    WriteAction,
)
from coverage_gate.core.evidence import MAX_CALLS

from ._decoder import JsonLinesAdapter, JsonLinesDecoder, single_id
from ._json import (
    OUT_OF_RANGE,
    JsonObject,
    get_int,
    get_list,
    get_obj,
    get_str,
    is_blank,
    key,
    objects,
    opens_object,
)
from ._mutations import ShellWrite, apply_patch_paths, argv_write, shell_write
from ._returned import returned
from ._stream import Items, Spec

ROLLOUT: Final = "codex-rollout"
EXEC: Final = "codex-exec"
COMMAND_FAILED: Final = "command_failed"

_CALL_STARTS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_CALL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
# Calls whose end (and parsed reads) is the harness's CommandExecution record, not the output.
_COMMAND_TOOLS = frozenset(
    {"exec_command", "shell", "shell_command", "local_shell", "container.exec"}
)
_ROLLOUT_KINDS = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state"}
)
_ROLLOUT_QUIET = frozenset({"compacted", "world_state", "token_usage_record"})
# Every rollout line type Codex 0.169.0 writes (its ``RolloutItem``), used or not.
_ROLLOUT_LINES = _ROLLOUT_KINDS | {
    "token_usage_record",
    "dynamic_tools_updated",
    "inter_agent_communication",
    "realtime_item",
}
# ``response_item`` payload types (Codex's ``ResponseItem``).
_RESPONSE_ITEMS = (
    _CALL_STARTS
    | _CALL_OUTPUTS
    | {
        "message",
        "reasoning",
        "agent_message",
        "local_shell_call_output",
        "tool_search_call",
        "tool_search_output",
        "web_search_call",
        "image_generation_call",
        "ghost_snapshot",
        "compaction",
        "compaction_trigger",
        "context_compaction",
        "configuration_update",
        "other",
    }
)
# ``event_msg`` payload types (Codex's ``EventMsg``).
_EVENT_MSGS = frozenset(
    {
        "error",
        "warning",
        "agent_message",
        "user_message",
        "agent_message_delta",
        "agent_message_content_delta",
        "agent_reasoning",
        "agent_reasoning_delta",
        "agent_reasoning_raw_content",
        "agent_reasoning_raw_content_delta",
        "agent_reasoning_section_break",
        "reasoning_content_delta",
        "reasoning_raw_content_delta",
        "auth_recovery_started",
        "auth_recovery_completed",
        "guardian_warning",
        "guardian_assessment",
        "realtime_conversation_started",
        "realtime_conversation_realtime",
        "realtime_conversation_closed",
        "realtime_conversation_sdp",
        "realtime_conversation_list_voices_response",
        "model_reroute",
        "model_verification",
        "turn_moderation_metadata",
        "safety_buffering",
        "context_compacted",
        "thread_rolled_back",
        "task_started",
        "task_complete",
        "thread_settings_applied",
        "token_count",
        "session_configured",
        "environment_connected",
        "environment_disconnected",
        "thread_goal_updated",
        "thread_queue_changed",
        "mcp_startup_update",
        "mcp_startup_complete",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "web_search_begin",
        "web_search_end",
        "image_generation_begin",
        "image_generation_end",
        "exec_command_begin",
        "exec_command_output_delta",
        "exec_command_end",
        "terminal_interaction",
        "view_image_tool_call",
        "exec_approval_request",
        "network_approval_resolved",
        "request_permissions",
        "request_user_input",
        "dynamic_tool_call_request",
        "dynamic_tool_call_response",
        "elicitation_request",
        "elicitation_abandoned",
        "apply_patch_approval_request",
        "deprecation_notice",
        "stream_error",
        "background_event",
        "patch_apply_begin",
        "patch_apply_updated",
        "patch_apply_end",
        "turn_diff",
        "plan_update",
        "plan_delta",
        "turn_aborted",
        "shutdown_complete",
        "entered_review_mode",
        "exited_review_mode",
        "raw_response_item",
        "raw_response_completed",
        "item_started",
        "item_completed",
        "hook_started",
        "hook_completed",
        "collab_agent_spawn_begin",
        "collab_agent_spawn_end",
        "collab_agent_interaction_begin",
        "collab_agent_interaction_end",
        "collab_waiting_begin",
        "collab_waiting_end",
        "collab_close_begin",
        "collab_close_end",
        "collab_resume_begin",
        "collab_resume_end",
        "sub_agent_activity",
    }
)
# ``item_completed`` item types (Codex's thread items).
_THREAD_ITEMS = frozenset(
    {
        "CommandExecution",
        "FileChange",
        "AgentMessage",
        "UserMessage",
        "Reasoning",
        "Plan",
        "McpToolCall",
        "DynamicToolCall",
        "CollabAgentToolCall",
        "WebSearch",
        "ImageView",
        "ImageGeneration",
        "ContextCompaction",
        "EnteredReviewMode",
        "ExitedReviewMode",
        "FunctionCallOutput",
        "HookPrompt",
        "SubAgentActivity",
    }
)
# ``parsed_cmd`` entry types (Codex's ``ParsedCommand``): only ``read`` names a file read.
_PARSED_TYPES = frozenset({"read", "list_files", "search", "unknown"})
# Codex's built-in tools that are not reads (its function and custom tools).
_CODEX_NOT_READS: Final = {
    "write_stdin": "input to a running command: its output is that command's, no parsed read",
    "local_shell_call": "a local shell action without Codex's parsed reads",
    "update_plan": "the plan (a to-do list), no file",
    "view_image": "shows an image to the model, not a file's text",
    "web_search": "a web search",
    "image_generation": "makes an image",
    "tool_search": "finds tools, not files",
    "js_repl": "runs JavaScript: what it read cannot be told",
    "list_mcp_resources": "lists an MCP server's resources, not the repository's files",
    "list_mcp_resource_templates": "lists an MCP server's resource templates",
    "read_mcp_resource": "an MCP server's resource, not a file of the repository",
    "spawn_agent": "a sub-agent: its reads are not in this stream",
    "send_input": "input to a sub-agent",
    "resume_agent": "resumes a sub-agent",
    "wait_agent": "waits for a sub-agent",
    "close_agent": "ends a sub-agent",
    "request_user_input": "asks the user",
    "request_permissions": "asks for permissions",
}
_CODEX_WRITES = frozenset({"apply_patch"})

# {"timestamp":"...","ordinal":N,"type":"<kind>","payload":{"type":"<inner>"  (ordinal optional)
_ROLLOUT_HEAD = re.compile(
    rb'\s*\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*(?:"ordinal"\s*:\s*\d+\s*,\s*)?'
    rb'"type"\s*:\s*"([a-z_]+)"(?:\s*,\s*"payload"\s*:\s*\{\s*"type"\s*:\s*"([A-Za-z_]+)")?'
)
_ROLLOUT_SKIP = frozenset(
    {
        (b"world_state", None),
        (b"token_usage_record", None),
        (b"response_item", b"message"),
        (b"response_item", b"reasoning"),
        (b"event_msg", b"token_count"),
        (b"event_msg", b"agent_message"),
        (b"event_msg", b"agent_reasoning"),
        (b"event_msg", b"user_message"),
    }
)

_CALL_ID = re.compile(rb'"call_id"\s*:\s*"([^"\\]{1,256})"')
# What decoding a rollout line needs; a line read as it flows keeps only this.
ROLLOUT_SPEC: Final[Spec] = {
    "type": None,
    "payload": {
        "type": None,
        "call_id": None,
        "name": None,
        "cwd": None,
        "cli_version": None,
        "git": {"commit_hash": None},
        "input": None,  # a custom tool's input (``apply_patch``'s patch): kept bounded
        "output": {"success": None},  # a command's output is text: kept bounded, its head is read
        "item": {
            "type": None,
            "id": None,
            "cwd": None,
            "status": None,
            "exit_code": None,
            "command": Items(None),
            "parsed_cmd": Items({"type": None, "path": None, "cmd": None}),
            "aggregated_output": None,  # kept bounded: only whether it is empty is used
            # ``FileChange``: its paths are keys, which a line read as it flows does not keep
            "changes": None,
        },
    },
}
EXEC_SPEC: Final[Spec] = {
    "type": None,
    "item": {
        "type": None,
        "id": None,
        "status": None,
        "exit_code": None,
        "error": None,
        "command": None,
        "aggregated_output": None,
        "server": None,
        "tool": None,
        "arguments": None,
        "changes": Items({"path": None}),
    },
}

_EXEC_TOOL_ITEMS = frozenset({"command_execution", "mcp_tool_call", "file_change"})
# ``codex exec --json`` item types (its ``ThreadItem``), used or not.
_EXEC_ITEMS = _EXEC_TOOL_ITEMS | {
    "agent_message",
    "reasoning",
    "web_search",
    "todo_list",
    "collab_tool_call",
    "error",
}
_EXEC_KINDS = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)
_EXEC_HEAD = re.compile(
    rb'\s*\{\s*"type"\s*:\s*"(?:thread\.started|turn\.(?:started|completed|failed)'
    rb'|item\.(?:started|updated|completed))"'
)


def _field_drift(holder: JsonObject, field: str, name: str, lineno: int) -> Drift:
    """A field the adapter relies on, gone (``missing_field``) or of a type the format never
    uses (``field_type``); ``name`` is its dotted path."""
    kind = DriftKind.MISSING_FIELD if field not in holder else DriftKind.FIELD_TYPE
    return Drift(line=lineno, kind=kind, name=name)


def _unknown(name: str, lineno: int) -> Drift:
    return Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=name)


_INT32 = (-(2**31), 2**31 - 1)


def _succeeded(item: JsonObject) -> bool:
    """Explicit success only: status completed and exit code 0 (DESIGN §6 rule 2)."""
    return get_str(item, "status") == "completed" and get_int(item, "exit_code") == 0


def _odd_outcome(item: JsonObject) -> str | None:
    """Why a record's outcome cannot be read, or ``None``. Codex writes a string ``status`` and,
    for a completed command, an integer ``exit_code``: anything else is damage, which is neither a
    success nor a proven failure."""
    return _odd_outcome_field(item)[0]


def _odd_outcome_field(item: JsonObject) -> tuple[str | None, str]:
    """``_odd_outcome`` and the field at fault (``status`` or ``exit_code``). An ``exit_code``
    is Codex's 32-bit integer: a larger one (``10**30``) is of a type the format never uses."""
    status = item.get("status")
    if not isinstance(status, str):
        return "field 'status' is not a string", "status"
    code = item.get("exit_code")
    if code is None and status != "completed":
        return None, ""
    if code is OUT_OF_RANGE or (
        isinstance(code, int) and not isinstance(code, bool) and not _INT32[0] <= code <= _INT32[1]
    ):
        return "field 'exit_code' is out of the range of an exit code", "exit_code"
    if not isinstance(code, int) or isinstance(code, bool):
        if status == "completed":
            return "a completed command without an integer 'exit_code'", "exit_code"
        return "field 'exit_code' is not an integer", "exit_code"
    return None, ""


def _cwd_path(value: str | None) -> str | None:
    """The directory a ``file://`` URI (or a plain absolute path) names."""
    if value is None:
        return None
    if value.startswith("/"):
        return value
    parts = urlsplit(value)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return unquote(parts.path) or None


# How Codex opens the text it gives the model for a command whose output it cut (its head and
# tail kept, the middle replaced by "…N chars truncated…"), after the header ending "Output:".
_CUT_NOTICE: Final = "Warning: truncated output (original token count: "
_OUTPUT_HEADER_END: Final = "Output:\n"


def _model_got_a_cut_output(output: object) -> bool:
    """Whether a command's ``function_call_output`` (the text the model got) says Codex cut it."""
    if not isinstance(output, str):
        return False  # not text: it says nothing of a cut
    header, found, body = output.partition(_OUTPUT_HEADER_END)
    if found and (header == "" or header.endswith("\n")):
        return body.startswith(_CUT_NOTICE)
    return output.startswith(_CUT_NOTICE)


def _model_text(output: object) -> Returned | None:
    """The text a command's ``function_call_output`` gave the model: after its header's
    ``Output:`` line, the cut notice taken off (the text is then cut: a head and a tail)."""
    if not isinstance(output, str):
        return None
    header, found, body = output.partition(_OUTPUT_HEADER_END)
    text = body if found and (header == "" or header.endswith("\n")) else output
    cut = text.startswith(_CUT_NOTICE)
    if cut:
        text = text[text.find("\n") + 1 :] if "\n" in text else ""
    if not text:
        return None
    given = returned(text, numbers=True)
    return msgspec.structs.replace(given, cut=True) if cut else given


def _with_text(events: list[Event], given: Returned | None) -> list[Event]:
    """A command's ends with what it gave the model: one read's own text; a command that read
    several files (or none) gave one output for all, credited by content alone."""
    if given is None:
        return events
    ends = [i for i, event in enumerate(events) if isinstance(event, ToolEnd) and event.succeeded]
    if not ends:
        return events
    reads = [e for e in events if isinstance(e, ToolStart) and isinstance(e.action, ReadAction)]
    own = given if len(reads) == 1 else msgspec.structs.replace(given, own=False)
    out = list(events)
    end = out[ends[0]]
    assert isinstance(end, ToolEnd)  # noqa: S101 - picked as one above
    out[ends[0]] = msgspec.structs.replace(end, returned=own)
    return out


def _lines_unknown(event: Event) -> Event:
    """A successful read's end, once the output the model got was cut: which lines it showed
    cannot be told (a read's lines are one range; the model got a head and a tail)."""
    if isinstance(event, ToolEnd) and event.succeeded and event.shown is not EMPTY_SHOWN:
        return msgspec.structs.replace(event, shown=UNKNOWN_SHOWN)
    return event


_SED_PRINT = re.compile(r"([1-9]\d*)(?:,([1-9]\d*|\$))?p")
_COUNT = re.compile(r"\d+")
DEFAULT_HEAD_LINES: Final = 10


def _line_count(words: list[str], tool: str) -> tuple[int, bool] | None:
    """``head``/``tail`` options before the file: (N, from line N) or ``None`` if unrecognised.
    ``-n N``, ``-nN``, ``-N``, ``--lines=N``; ``tail`` also ``-n +K``; none: 10 lines."""
    if not words:
        return DEFAULT_HEAD_LINES, False
    if len(words) == 2 and words[0] == "-n":
        value = words[1]
    elif len(words) == 1 and words[0].startswith("--lines="):
        value = words[0].removeprefix("--lines=")
    elif len(words) == 1 and words[0].startswith("-n"):
        value = words[0][2:]
    elif len(words) == 1 and words[0].startswith("-"):
        value = words[0][1:]
    else:
        return None
    plus = tool == "tail" and value.startswith("+")
    value = value.removeprefix("+") if plus else value
    if not _COUNT.fullmatch(value):
        return None
    return int(value), plus


def shown_by_command(command: str | None, path: str) -> Shown:
    """Which lines of ``path`` a command the harness parsed as a read of it shows (module notes:
    the recognised shapes). Anything else: an unknown range."""
    try:
        words = shlex.split(command or "")
    except ValueError:
        return UNKNOWN_SHOWN
    if len(words) < 2 or words[-1] != path:
        return UNKNOWN_SHOWN
    tool, options = words[0], words[1:-1]
    if (tool == "cat" and options in ([], ["-n"], ["--"])) or (
        tool == "nl" and options in ([], ["-ba"], ["-b", "a"])
    ):
        return Shown.whole()
    if tool == "sed" and len(options) == 2 and options[0] == "-n":
        match = _SED_PRINT.fullmatch(options[1])
        if match is None:
            return UNKNOWN_SHOWN
        first, last = int(match.group(1)), match.group(2)
        if last is None:
            return Shown.lines(first, first)
        return Shown.lines(first, None if last == "$" else max(first, int(last)))
    if tool in ("head", "tail"):
        count = _line_count(options, tool)
        if count is None:
            return UNKNOWN_SHOWN
        number, from_line = count
        if from_line:
            return Shown.lines(max(number, 1), None)
        if number == 0:
            return EMPTY_SHOWN
        return Shown.lines(1, number) if tool == "head" else Shown.lines(-number, None)
    return UNKNOWN_SHOWN


def _parsed_damage(item: JsonObject) -> tuple[str, str] | None:
    """Why a record's ``parsed_cmd`` cannot be read (and the field at fault), or ``None``:
    Codex writes a list of objects, each with a string ``type``."""
    parsed = item.get("parsed_cmd")
    if not isinstance(parsed, list):
        return "field 'parsed_cmd' is missing or not a list", "parsed_cmd"
    for entry in parsed:
        if not isinstance(entry, dict):
            return "an entry of 'parsed_cmd' is not an object", "parsed_cmd[]"
        if not isinstance(entry.get("type"), str):
            return "an entry of 'parsed_cmd' has no string 'type'", "parsed_cmd[].type"
    return None


def _unknown_parsed(parsed: Sequence[object] | None) -> list[str]:
    """The ``parsed_cmd`` entry types Codex's parser is not known to write, in order, once."""
    found = (get_str(entry, "type") for entry in objects(parsed or []))
    return list(dict.fromkeys(kind for kind in found if kind and kind not in _PARSED_TYPES))


def _command_write(item: JsonObject) -> ShellWrite | None:
    """Whether a command record changes files: its ``command`` (Codex's argv, or a string) or
    one of the commands Codex parsed out of it (``adapters/_mutations.py``)."""
    command = item.get("command")
    write = None
    if isinstance(command, list):
        write = argv_write(command)
    elif isinstance(command, str):
        write = shell_write(command)
    if write is not None:
        return write
    for entry in objects(get_list(item, "parsed_cmd") or []):
        cmd = get_str(entry, "cmd")
        write = shell_write(cmd) if cmd is not None else None
        if write is not None:
            return write
    return None


def _command_actions(
    item: JsonObject, tool: str, cwd: str | None, damage: tuple[str, str] | None
) -> list[Action]:
    """What a command the harness recorded is: a write (never also a read), an unknown tool's
    call (judged by what it returned), a read of files that cannot be told (its ``parsed_cmd``
    damaged: ``damage``), or its parsed reads (none: an ignored command)."""
    write = _command_write(item)
    if write is not None:
        return [WriteAction(path=write.path, cwd=cwd)]
    if tool not in _COMMAND_TOOLS:
        return [IgnoredAction(known=False)]
    if damage is not None:
        return [UnplacedRead(f"its record could not be read: {damage[0]}")]
    return _read_actions(get_list(item, "parsed_cmd"), cwd) or [KNOWN_TOOL]


def _record_drift(item: JsonObject, lineno: int) -> list[Event]:
    """What of a ``CommandExecution`` record the adapter does not understand: ``parsed_cmd``
    entry types Codex is not known to write (drift ``unknown_event``: the harness, not the
    model, chose them, and a read may hide under one), an outcome or a ``parsed_cmd`` of a type
    the format never uses (``field_type``), a ``parsed_cmd`` gone (``missing_field``)."""
    drift: list[Event] = [
        _unknown(f"parsed_cmd/{kind}", lineno)
        for kind in _unknown_parsed(get_list(item, "parsed_cmd"))
    ]
    odd, odd_field = _odd_outcome_field(item)
    if odd is not None:
        drift.append(_field_drift(item, odd_field, f"payload.item.{odd_field}", lineno))
    damage = _parsed_damage(item)
    if damage is not None:
        gone = damage[1] == "parsed_cmd" and "parsed_cmd" not in item
        kind = DriftKind.MISSING_FIELD if gone else DriftKind.FIELD_TYPE
        drift.append(Drift(line=lineno, kind=kind, name=f"payload.item.{damage[1]}"))
    return drift


def _patch_write(text: object, cwd: str | None) -> WriteAction:
    """An ``apply_patch`` call, from its patch text: the file it changes when it names one."""
    paths = apply_patch_paths(text) if isinstance(text, str) else ()
    return WriteAction(path=paths[0] if len(paths) == 1 else None, cwd=cwd)


def _read_actions(parsed: Sequence[object] | None, cwd: str | None) -> list[Action]:
    """One action per ``read`` entry the harness parsed out of the command."""
    actions: list[Action] = []
    for entry in objects(parsed or []):
        if get_str(entry, "type") != "read":
            continue
        path = get_str(entry, "path")
        if path is None:
            actions.append(UnreadableArguments("parsed read has no string 'path'"))
        else:
            shown = shown_by_command(get_str(entry, "cmd"), path)
            actions.append(ReadAction(path=path, cwd=cwd, shown=shown))
    return actions


KNOWN_TOOL: Final = IgnoredAction()


@dataclass(frozen=True, slots=True)
class _Pending:
    tool: str
    line: int
    # what the call is when its own end (not a command record) ends it
    action: Action = KNOWN_TOOL
    said: str | None = None  # its arguments as the model wrote them


@dataclass(slots=True)
class _Held:
    """A command's events, held until its output says whether the model got all of it."""

    events: list[Event]
    answered: bool = False


class CodexRolloutDecoder(JsonLinesDecoder):
    """Holds each started call until its end says what it read."""

    spec = ROLLOUT_SPEC

    def __init__(self) -> None:
        super().__init__()
        self._cwd: str | None = None
        self._pending: dict[str, _Pending] = {}
        # Each started call id, with what its start line said (a repeat of the same line is one
        # call; the same id with other arguments is ambiguous).
        self._seen: dict[str, int] = {}
        self._completed: dict[str, int] = {}  # the same for completion records
        # Command records waiting for their output, in the order they came; and, for a command
        # whose output came before its record, whether that output was cut.
        self._held: dict[str, _Held] = {}
        self._early_outputs: dict[str, tuple[bool, Returned | None]] = {}
        self._overflow = False  # more calls than are followed: what they read is not known
        self._last_line = 0
        self._handlers: dict[str, Callable[[JsonObject, int], list[Event]]] = {
            "session_meta": self._session,
            "turn_context": self._context,
            "response_item": self._response_item,
            "event_msg": self._event_msg,
        }

    def classify(self, head: bytes) -> LineClass:
        if is_blank(head):
            return LineClass.SKIP
        match = _ROLLOUT_HEAD.match(head)
        if match is not None and (match.group(1), match.group(2)) in _ROLLOUT_SKIP:
            return LineClass.SKIP
        return LineClass.PARSE

    def _decoded(
        self, obj: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        """A line's events, after every held command record: a record is passed on once its
        output is read, or as it is before any other line's events (so the order of events is
        the order of the lines)."""
        self._last_line = lineno
        events = self._line_events(obj, seen, lineno)
        if events:
            return [*self._release(everything=True), *events]
        return self._release(everything=False)

    def _release(self, *, everything: bool) -> list[Event]:
        """The held records from the first on, up to the first still waiting for its output
        (``everything``: all of them, as they are)."""
        released: list[Event] = []
        done: list[str] = []
        for call_id, held in self._held.items():
            if not (everything or held.answered):
                break
            released.extend(held.events)
            done.append(call_id)
        for call_id in done:
            del self._held[call_id]
        return released

    def _line_events(self, obj: JsonObject | Malformed, seen: bytes, lineno: int) -> list[Event]:
        if isinstance(obj, Malformed):
            return [_rollout_unreadable(seen, lineno, obj.detail)]
        kind = get_str(obj, "type")
        if kind is None:
            detail = "field 'type' is missing or not a string"
            drift = _field_drift(obj, "type", "type", lineno)
            payload = get_obj(obj, "payload")
            if payload is None or not {"call_id", "item"} & payload.keys():
                return [drift, Malformed(lineno, detail)]  # no call could be named in it
            return [drift, Unreadable(lineno, detail, None, None)]
        handler = self._handlers.get(kind)
        if handler is None:
            if kind in _ROLLOUT_QUIET:
                return []
            if kind in _ROLLOUT_LINES:
                return [Unrecognised(lineno)]
            return [Unrecognised(lineno), _unknown(kind, lineno)]
        payload = get_obj(obj, "payload")
        if payload is None:
            detail = "field 'payload' is missing or not an object"
            drift = _field_drift(obj, "payload", "payload", lineno)
            if kind == "response_item":
                return [drift, Unreadable(lineno, detail, None, None)]
            if kind == "event_msg":
                return [drift, Unreadable(lineno, detail, (), None)]
            return [drift, Malformed(lineno, detail)]
        return handler(payload, lineno)

    def finish(self) -> Sequence[Event]:
        """Starts that never ended, passed on so the core labels them ``missing_end``; if any,
        the rollout did not record what those commands read, so it is not complete."""
        events: list[Event] = [
            ToolStart(call_id, pending.tool, pending.action, pending.line, said=pending.said)
            for call_id, pending in self._pending.items()
        ]
        if events or self._overflow:
            events.extend(self._mark_reopened(self._last_line))
        self._pending.clear()
        return [*self._release(everything=True), *events]

    # --- line kinds ----------------------------------------------------------------------------

    def _session(self, payload: JsonObject, lineno: int) -> list[Event]:
        """The session's own working directory (the repository root when none is given), the
        Codex version that wrote it and the commit it started at."""
        cwd = _cwd_path(get_str(payload, "cwd"))
        self._context(payload, lineno)
        events: list[Event] = [WorkingDirectory(cwd, lineno)] if cwd is not None else []
        version = get_str(payload, "cli_version")
        if version:
            events.append(ClientSeen(line=lineno, version=version))
        commit = get_str(get_obj(payload, "git") or {}, "commit_hash")
        if commit:
            events.append(StreamCommit(line=lineno, commit=commit))
        return events

    def _context(self, payload: JsonObject, lineno: int) -> list[Event]:
        cwd = _cwd_path(get_str(payload, "cwd"))
        if cwd is not None:
            self._cwd = cwd
        return []

    def _response_item(self, payload: JsonObject, lineno: int) -> list[Event]:
        kind = get_str(payload, "type")
        if kind in _CALL_STARTS:
            return self._call_start(payload, lineno)
        if kind in _CALL_OUTPUTS:
            return self._call_output(payload, lineno)
        if kind is None:  # it could start or end any call (or the one it names)
            call_id = get_str(payload, "call_id")
            ids = None if call_id is None else (key(call_id),)
            detail = "field 'payload.type' is missing or not a string"
            drift = _field_drift(payload, "type", "payload.type", lineno)
            return [drift, Unreadable(lineno, detail, ids, ids)]
        if kind not in _RESPONSE_ITEMS:
            return [Unrecognised(lineno), _unknown(f"response_item/{kind}", lineno)]
        return []

    def _call_start(self, payload: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(payload, "call_id")
        if call_id is None:
            detail = "field 'payload.call_id' is missing or not a string"
            drift = _field_drift(payload, "call_id", "payload.call_id", lineno)
            return [drift, Unreadable(lineno, detail, None, ())]
        call_id = key(call_id)
        tool = key(get_str(payload, "name") or get_str(payload, "type") or "tool")
        action = self._tool_action(tool, payload)
        said = hash(json.dumps(payload, sort_keys=True, default=str))
        if self._seen.get(call_id) == said:
            return []  # the same start line again, to the letter: one call
        if call_id in self._seen:
            # Started again: pass both starts on now, so the core labels the id ambiguous.
            first = self._pending.pop(call_id, None)
            again = ToolStart(call_id, tool, UnreadableArguments("call id started again"), lineno)
            if first is None:
                return [again]
            return [ToolStart(call_id, first.tool, first.action, first.line), again]
        if len(self._seen) >= MAX_CALLS:
            self._overflow = True  # its end will come alone; the rollout counts as incomplete
            return []
        self._seen[call_id] = said
        said_text = payload.get("arguments", payload.get("input"))
        said_text = said_text if isinstance(said_text, str) else None
        self._pending[call_id] = _Pending(tool, lineno, action, said_text)
        return []

    def _tool_action(self, tool: str, payload: JsonObject) -> Action:
        """What a call is when its own output ends it: a command's reads come with its record."""
        if tool in _CODEX_WRITES:
            return _patch_write(payload.get("input", payload.get("arguments")), self._cwd)
        return IgnoredAction(known=tool in _COMMAND_TOOLS or tool in _CODEX_NOT_READS)

    def _call_output(self, payload: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(payload, "call_id")
        if call_id is None:
            detail = "field 'payload.call_id' is missing or not a string"
            drift = _field_drift(payload, "call_id", "payload.call_id", lineno)
            return [drift, Unreadable(lineno, detail, (), None)]
        call_id = key(call_id)
        pending = self._pending.get(call_id)
        if pending is None:
            self._answer(call_id, payload.get("output"))
            return []  # a command's end is its CommandExecution record; an unknown id: no call
        if pending.tool in _COMMAND_TOOLS:
            if len(self._early_outputs) < MAX_CALLS:  # its record is yet to come
                output = payload.get("output")
                self._early_outputs[call_id] = (
                    _model_got_a_cut_output(output),
                    _model_text(output),
                )
            return []
        del self._pending[call_id]
        output = get_obj(payload, "output")
        succeeded = output is None or output.get("success") is not False
        return [
            ToolStart(call_id, pending.tool, pending.action, pending.line, said=pending.said),
            ToolEnd(call_id, pending.tool, succeeded, lineno),
        ]

    def _answer(self, call_id: str, output: object) -> None:
        """A held command's output: what the model got of it. Cut, its reads showed lines that
        cannot be told (never the whole file, nor the range the command asked for)."""
        held = self._held.get(call_id)
        if held is None or held.answered:
            return  # an unknown call, or an output again
        if _model_got_a_cut_output(output):
            held.events = [_lines_unknown(event) for event in held.events]
        held.events = _with_text(held.events, _model_text(output))
        held.answered = True

    def _event_msg(self, payload: JsonObject, lineno: int) -> list[Event]:
        kind = get_str(payload, "type")
        if kind == "item_completed":
            item = get_obj(payload, "item")
            if item is None:
                detail = "field 'payload.item' is missing or not an object"
                drift = _field_drift(payload, "item", "payload.item", lineno)
                return [drift, Unreadable(lineno, detail, (), None)]
            item_type = get_str(item, "type")
            if item_type == "CommandExecution":
                return self._command(item, lineno)
            if item_type == "FileChange":
                return self._file_change(item, lineno)
            if item_type is None:  # it could end any call
                detail = "field 'payload.item.type' is missing or not a string"
                drift = _field_drift(item, "type", "payload.item.type", lineno)
                return [drift, Unreadable(lineno, detail, (), None)]
            if item_type not in _THREAD_ITEMS:
                return [Unrecognised(lineno), _unknown(f"item_completed/{item_type}", lineno)]
            return []
        if kind == "task_complete":
            return self._mark_complete(lineno)
        if kind == "task_started":
            return self._mark_reopened(lineno)
        if kind is None:  # it could end any call
            detail = "field 'payload.type' is missing or not a string"
            drift = _field_drift(payload, "type", "payload.type", lineno)
            return [drift, Unreadable(lineno, detail, (), None)]
        if kind not in _EVENT_MSGS:
            return [Unrecognised(lineno), _unknown(f"event_msg/{kind}", lineno)]
        return []

    def _file_change(self, item: JsonObject, lineno: int) -> list[Event]:
        """An ``apply_patch`` the harness ran (its heredoc through ``exec_command`` included):
        its ``FileChange`` record ends the call, and no ``CommandExecution`` follows. A change,
        not a read: a write of the one file its ``changes`` name (their keys), if one."""
        call_id = get_str(item, "id")
        if call_id is None:
            detail = "field 'payload.item.id' is missing or not a string"
            drift = _field_drift(item, "id", "payload.item.id", lineno)
            return [drift, Unreadable(lineno, detail, (), None)]
        pending = self._pending.pop(key(call_id), None)
        if pending is None:
            return []  # an unknown call, or its record again
        succeeded = get_str(item, "status") == "completed"
        error = None if succeeded else COMMAND_FAILED
        changes = get_obj(item, "changes") or {}
        paths = [path for path in changes if isinstance(path, str)]
        write = WriteAction(path=paths[0] if len(paths) == 1 else None, cwd=self._cwd)
        return [
            ToolStart(key(call_id), pending.tool, write, pending.line),
            ToolEnd(key(call_id), pending.tool, succeeded, lineno, error_type=error),
        ]

    def _command(self, item: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(item, "id")
        if call_id is None:
            detail = "field 'payload.item.id' is missing or not a string"
            no_id = _field_drift(item, "id", "payload.item.id", lineno)
            return [no_id, Unreadable(lineno, detail, (), None)]
        succeeded = _succeeded(item)
        error = None if succeeded else COMMAND_FAILED
        call_id = key(call_id)
        said = hash(json.dumps(item, sort_keys=True, default=str))
        if self._completed.get(call_id) == said:
            return []  # the same record again, to the letter: one outcome
        if len(self._completed) < MAX_CALLS:
            self._completed[call_id] = said
        odd = _odd_outcome(item)
        damage = _parsed_damage(item)
        drift = _record_drift(item, lineno)
        pending = self._pending.pop(call_id, None)
        if pending is None:
            if odd is not None or damage is not None:
                detail = odd or (damage[0] if damage else "")
                return [*drift, Unreadable(lineno, detail, (), (call_id,))]
            return [*drift, ToolEnd(call_id, None, succeeded, lineno, error_type=error)]
        cwd = _cwd_path(get_str(item, "cwd")) or self._cwd
        actions = _command_actions(item, pending.tool, cwd, damage)
        if damage is not None and isinstance(actions[0], UnplacedRead):
            odd = odd or damage[0]
        # a command that printed nothing showed nothing of any file it read
        shown = EMPTY_SHOWN if succeeded and item.get("aggregated_output") == "" else None
        events: list[Event] = list(drift)
        for n, action in enumerate(actions, start=1):
            read_id = call_id if len(actions) == 1 else f"{call_id}#{n}"
            events.append(ToolStart(read_id, pending.tool, action, pending.line, said=pending.said))
            if odd is not None:
                events.append(Unreadable(lineno, odd, (), (read_id,)))
                continue
            events.append(
                ToolEnd(read_id, pending.tool, succeeded, lineno, error_type=error, shown=shown)
            )
        early = self._early_outputs.pop(call_id, None)  # its output came first
        if early is not None:
            cut, given = early
            if cut:
                events = [_lines_unknown(event) for event in events]
            events = _with_text(events, given)
        self._held[call_id] = _Held(events, answered=early is not None)
        return []


#: What every cut Codex makes of a command's output for the model keeps at each end (5000 bytes
#: each in ``codex_cut_output.rollout.jsonl``; the cut depends on the model's token budget).
EXEC_KEPT_BYTES: Final = 5000
#: ``aggregated_output`` keeps a command's output up to about this much (64 KiB).
EXEC_OUTPUT_CAP: Final = 64 * 1024 - 1024


class CodexExecDecoder(JsonLinesDecoder):
    """``codex exec --json``: calls are counted; what they printed is evidence by content."""

    spec = EXEC_SPEC

    def _decoded(
        self, obj: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        del whole
        if isinstance(obj, Malformed):
            if b'"item' in seen:  # it could have been any command's end
                return [Unreadable(lineno, obj.detail, None, None)]
            return [obj]
        kind = get_str(obj, "type")
        if kind is None:
            drift = _field_drift(obj, "type", "type", lineno)
            return [drift, Malformed(lineno, "field 'type' is missing or not a string")]
        if kind in ("item.started", "item.completed"):
            return self._item(obj, kind, lineno)
        if kind == "turn.completed":
            return self._mark_complete(lineno)
        if kind == "turn.started":
            return self._mark_reopened(lineno)
        if kind in _EXEC_KINDS:
            return []
        return [Unrecognised(lineno), _unknown(kind, lineno)]

    def _item(self, obj: JsonObject, kind: str, lineno: int) -> list[Event]:
        starting = kind == "item.started"
        item = get_obj(obj, "item")
        if item is None:  # it could start or end any call
            detail = "field 'item' is missing or not an object"
            ids = None if starting else ()
            return [
                _field_drift(obj, "item", "item", lineno),
                Unreadable(lineno, detail, ids, () if starting else None),
            ]
        item_type = get_str(item, "type")
        if item_type is None:
            detail = "field 'item.type' is missing or not a string"
            return [
                _field_drift(item, "type", "item.type", lineno),
                Unreadable(lineno, detail, None if starting else (), () if starting else None),
            ]
        if item_type not in _EXEC_TOOL_ITEMS:
            return [] if item_type in _EXEC_ITEMS else [_unknown(f"item/{item_type}", lineno)]
        call_id = get_str(item, "id")
        if call_id is None:
            detail = "field 'item.id' is missing or not a string"
            return [
                _field_drift(item, "id", "item.id", lineno),
                Unreadable(lineno, detail, None if starting else (), () if starting else None),
            ]
        tool = _exec_tool(item, item_type)
        if starting:
            return [
                ToolStart(call_id, tool, _exec_action(item, item_type), lineno, said=_said(item))
            ]
        given = None
        if item_type == "command_execution":
            # a completed command without an exit code is a failure here, as it always was
            odd, odd_field = _odd_outcome_field(item)
            if odd is not None and (odd_field == "status" or item.get("exit_code") is not None):
                return [
                    _field_drift(item, odd_field, f"item.{odd_field}", lineno),
                    Unreadable(lineno, odd, (), (call_id,)),
                ]
            succeeded = _succeeded(item)
            given = _exec_output(item) if succeeded else None
        else:
            succeeded = get_str(item, "status") == "completed" and item.get("error") is None
        error = None if succeeded else COMMAND_FAILED
        return [ToolEnd(call_id, tool, succeeded, lineno, error_type=error, returned=given)]


def _exec_tool(item: JsonObject, item_type: str) -> str:
    """A call's tool: the item type, or an MCP server's tool by its name (``mcp__S__T``)."""
    server, tool = get_str(item, "server"), get_str(item, "tool")
    if item_type == "mcp_tool_call" and server and tool:
        return key(f"mcp__{server}__{tool}")
    return item_type


def _exec_action(item: JsonObject, item_type: str) -> Action:
    """What an ``exec --json`` call is: a command (a write when it changes files), a patch (a
    write of the one file its ``changes`` name, if one) or an MCP tool (unknown: any tool a
    server offers can be called)."""
    if item_type == "file_change":
        paths = [get_str(change, "path") for change in objects(get_list(item, "changes") or [])]
        named = [path for path in paths if path is not None]
        return WriteAction(path=named[0] if len(named) == 1 else None)
    if item_type == "command_execution":
        command = get_str(item, "command")
        write = shell_write(command) if command is not None else None
        return IgnoredAction() if write is None else WriteAction(path=write.path)
    return IgnoredAction(known=False)


def _said(item: JsonObject) -> str | None:
    command = get_str(item, "command")
    if command is not None:
        return command
    arguments = item.get("arguments")
    if arguments is None:
        return None
    return arguments if isinstance(arguments, str) else json.dumps(arguments, default=str)


def _exec_output(item: JsonObject) -> Returned | None:
    """What a command printed, as ``codex exec --json`` keeps it: surely seen by the model only
    at its ends (module notes)."""
    output = get_str(item, "aggregated_output")
    if not output:
        return None
    given = msgspec.structs.replace(returned(output), kept=EXEC_KEPT_BYTES, own=False)
    if len(output.encode("utf-8", "surrogatepass")) >= EXEC_OUTPUT_CAP:
        return msgspec.structs.replace(given, cut=True)  # its end is not the command's
    return given


def _rollout_unreadable(seen: bytes, lineno: int, detail: str) -> Event:
    """A rollout line that could not be read, with what its head tells of the call it holds."""
    head = _ROLLOUT_HEAD.match(seen)
    kind, inner = (head.group(1), head.group(2)) if head else (None, None)
    if not opens_object(seen):
        return Malformed(lineno, detail)  # not an object: it cannot hold a call
    if kind is None or (kind in (b"response_item", b"event_msg") and inner is None):
        return Unreadable(lineno, detail, None, None)
    name = inner.decode("ascii") if inner is not None else ""
    if kind == b"response_item" and name in _CALL_STARTS | _CALL_OUTPUTS:
        call_id = single_id(seen, _CALL_ID)
        ids = None if call_id is None else (call_id,)
        return (
            Unreadable(lineno, detail, ids, ())
            if name in _CALL_STARTS
            else Unreadable(lineno, detail, (), ids)
        )
    if kind == b"event_msg" and name == "item_completed":
        return Unreadable(lineno, detail, (), None)
    return Malformed(lineno, detail)  # its head names a line that carries no tool call


def _looks_like_rollout(obj: JsonObject) -> bool:
    return get_str(obj, "type") in _ROLLOUT_KINDS and isinstance(obj.get("payload"), dict)


def _looks_like_exec(obj: JsonObject) -> bool:
    return get_str(obj, "type") in _EXEC_KINDS - {"error"}


ROLLOUT_KNOWS: Final = FormatKnowledge(
    client="codex",
    events=frozenset(
        {
            *_ROLLOUT_LINES,
            *(f"response_item/{kind}" for kind in _RESPONSE_ITEMS),
            *(f"event_msg/{kind}" for kind in _EVENT_MSGS),
            *(f"item_completed/{kind}" for kind in _THREAD_ITEMS),
            *(f"parsed_cmd/{kind}" for kind in _PARSED_TYPES),
        }
    ),
    reads=_COMMAND_TOOLS,
    not_reads=_CODEX_NOT_READS,
    writes=_CODEX_WRITES,
    fields=(
        "payload.type",
        "payload.call_id",
        "payload.name",
        "payload.output",
        "payload.item.type",
        "payload.item.id",
        "payload.item.status",
        "payload.item.exit_code",
        "payload.item.command",
        "payload.item.parsed_cmd",
        "payload.item.parsed_cmd[].type",
        "payload.item.parsed_cmd[].path",
        "payload.item.parsed_cmd[].cmd",
        "payload.item.aggregated_output",
        "payload.item.changes",
    ),
    versions=CHECKED[ROLLOUT],
    notes=(
        "reads are Codex's own parse of a shell command (parsed_cmd entries of type read)",
        "a command whose argv or parsed commands redirect to a file, or run sed -i, tee, "
        "git stash/checkout/switch/restore/worktree/..., is a write, never a read",
    ),
)

EXEC_KNOWS: Final = FormatKnowledge(
    client="codex",
    events=frozenset({*_EXEC_KINDS, *(f"item/{kind}" for kind in _EXEC_ITEMS)}),
    reads=frozenset(),
    not_reads={
        "command_execution": "a shell command: no parsed reads; what it printed is evidence "
        "by content",
    },
    writes=frozenset({"file_change"}),
    fields=(
        "type",
        "item.type",
        "item.id",
        "item.status",
        "item.exit_code",
        "item.command",
        "item.aggregated_output",
        "item.changes[].path",
    ),
    versions=CHECKED[EXEC],
    notes=("the stream names no client version; MCP tools are unknown tools (mcp__server__tool)",),
)


ROLLOUT_ADAPTER: Final = JsonLinesAdapter(
    name=ROLLOUT,
    capability=Capability.PER_FILE,
    description=(
        "Codex session rollout file ($CODEX_HOME/sessions/.../rollout-*.jsonl): reads from "
        "Codex's own parsed commands"
    ),
    decoder=CodexRolloutDecoder,
    sniff_head=_ROLLOUT_HEAD,
    looks_like=_looks_like_rollout,
    knows=ROLLOUT_KNOWS,
)


EXEC_ADAPTER: Final = JsonLinesAdapter(
    name=EXEC,
    capability=Capability.PER_FILE,
    description=(
        "`codex exec --json` events: commands and what they printed (evidence by content, only "
        "the ends every cut for the model keeps); no parsed reads"
    ),
    decoder=CodexExecDecoder,
    sniff_head=_EXEC_HEAD,
    looks_like=_looks_like_exec,
    knows=EXEC_KNOWS,
    by_content=True,
)
