"""Codex CLI: the session rollout file (``codex-rollout``).

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
- Which lines a read showed (DESIGN §6 rule 11): read from the entry's own ``cmd`` text, in
  the shapes ``adapters/_codex_commands.py`` lists; anything else is a read of an unknown range.
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

Drift and mutations (DESIGN §6 rules 19-20): ``adapters/_codex.py``, shared with
``codex-exec`` (``adapters/codex_exec.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote, urlsplit

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import Capability
from coverage_gate.core.calls import MAX_CALLS
from coverage_gate.core.events import (
    ANY_CALL,
    EMPTY_SHOWN,
    NO_CALLS,
    Action,
    ClientSeen,
    Event,
    FormatKnowledge,
    IgnoredAction,
    LineClass,
    Malformed,
    ModelText,
    Returned,
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

from ._codex import COMMAND_FAILED, command_succeeded, field_drift, odd_outcome, unknown_event
from ._codex_commands import (
    KNOWN_TOOL,
    command_actions,
    lines_unknown,
    model_got_a_cut_output,
    model_text,
    parsed_damage,
    patch_write,
    record_drift,
    with_text,
)
from ._codex_known import (
    CALL_OUTPUTS,
    CALL_STARTS,
    CODEX_NOT_READS,
    CODEX_WRITES,
    COMMAND_TOOLS,
    EVENT_MSGS,
    PARSED_TYPES,
    RESPONSE_ITEMS,
    ROLLOUT_KINDS,
    ROLLOUT_LINES,
    ROLLOUT_QUIET,
    THREAD_ITEMS,
)
from ._decoder import JsonLinesAdapter, JsonLinesDecoder, single_id
from ._json import JsonObject, get_obj, get_str, is_blank, key, opens_object
from ._stream import Items, Spec

__all__ = [
    "ROLLOUT",
    "ROLLOUT_ADAPTER",
    "ROLLOUT_KNOWS",
    "ROLLOUT_SPEC",
    "CodexRolloutDecoder",
]


ROLLOUT: Final = "codex-rollout"

# {"timestamp":"...","ordinal":N,"type":"<kind>","payload":{"type":"<inner>"  (ordinal optional)
_ROLLOUT_HEAD = re.compile(
    rb'\s*\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*(?:"ordinal"\s*:\s*\d+\s*,\s*)?'
    rb'"type"\s*:\s*"([a-z_]+)"(?:\s*,\s*"payload"\s*:\s*\{\s*"type"\s*:\s*"([A-Za-z_]+)")?'
)
_ROLLOUT_SKIP = frozenset(
    {
        (b"world_state", None),
        (b"token_usage_record", None),
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
        # a message: the model's own text when its role is the assistant's
        "role": None,
        "content": Items({"type": None, "text": None}),
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
        the order of the lines). The model's own text holds no record back."""
        self._last_line = lineno
        events = self._line_events(obj, seen, lineno)
        if events and all(isinstance(event, ModelText) for event in events):
            return [*events, *self._release(everything=False)]
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
            drift = field_drift(obj, "type", "type", lineno)
            payload = get_obj(obj, "payload")
            if payload is None or not {"call_id", "item"} & payload.keys():
                # no call could be named in it
                return [drift, Malformed(line=lineno, detail=detail)]
            return [drift, Unreadable(line=lineno, detail=detail, starts=ANY_CALL, ends=ANY_CALL)]
        handler = self._handlers.get(kind)
        if handler is None:
            if kind in ROLLOUT_QUIET:
                return []
            if kind in ROLLOUT_LINES:
                return [Unrecognised(line=lineno)]
            return [Unrecognised(line=lineno), unknown_event(kind, lineno)]
        payload = get_obj(obj, "payload")
        if payload is None:
            detail = "field 'payload' is missing or not an object"
            drift = field_drift(obj, "payload", "payload", lineno)
            if kind == "response_item":
                return [
                    drift,
                    Unreadable(line=lineno, detail=detail, starts=ANY_CALL, ends=ANY_CALL),
                ]
            if kind == "event_msg":
                return [
                    drift,
                    Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ANY_CALL),
                ]
            return [drift, Malformed(line=lineno, detail=detail)]
        return handler(payload, lineno)

    def finish(self) -> Sequence[Event]:
        """Starts that never ended, passed on so the core labels them ``missing_end``; if any,
        the rollout did not record what those commands read, so it is not complete."""
        events: list[Event] = [
            ToolStart(
                call_id=call_id,
                tool=pending.tool,
                action=pending.action,
                line=pending.line,
                said=pending.said,
            )
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
        events: list[Event] = [WorkingDirectory(path=cwd, line=lineno)] if cwd is not None else []
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
        if kind in CALL_STARTS:
            return self._call_start(payload, lineno)
        if kind in CALL_OUTPUTS:
            return self._call_output(payload, lineno)
        if kind is None:  # it could start or end any call (or the one it names)
            call_id = get_str(payload, "call_id")
            ids = ANY_CALL if call_id is None else (key(call_id),)
            detail = "field 'payload.type' is missing or not a string"
            drift = field_drift(payload, "type", "payload.type", lineno)
            return [drift, Unreadable(line=lineno, detail=detail, starts=ids, ends=ids)]
        if kind not in RESPONSE_ITEMS:
            return [Unrecognised(line=lineno), unknown_event(f"response_item/{kind}", lineno)]
        if kind == "message" and payload.get("role") == "assistant":
            return _model_text(payload, lineno)
        return []

    def _call_start(self, payload: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(payload, "call_id")
        if call_id is None:
            detail = "field 'payload.call_id' is missing or not a string"
            drift = field_drift(payload, "call_id", "payload.call_id", lineno)
            return [drift, Unreadable(line=lineno, detail=detail, starts=ANY_CALL, ends=NO_CALLS)]
        call_id = key(call_id)
        tool = key(get_str(payload, "name") or get_str(payload, "type") or "tool")
        action = self._tool_action(tool, payload)
        said = hash(json.dumps(payload, sort_keys=True, default=str))
        if self._seen.get(call_id) == said:
            return []  # the same start line again, to the letter: one call
        if call_id in self._seen:
            # Started again: pass both starts on now, so the core labels the id ambiguous.
            first = self._pending.pop(call_id, None)
            again = ToolStart(
                call_id=call_id,
                tool=tool,
                action=UnreadableArguments(detail="call id started again"),
                line=lineno,
            )
            if first is None:
                return [again]
            return [
                ToolStart(call_id=call_id, tool=first.tool, action=first.action, line=first.line),
                again,
            ]
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
        if tool in CODEX_WRITES:
            return patch_write(payload.get("input", payload.get("arguments")), self._cwd)
        return IgnoredAction(known=tool in COMMAND_TOOLS or tool in CODEX_NOT_READS)

    def _call_output(self, payload: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(payload, "call_id")
        if call_id is None:
            detail = "field 'payload.call_id' is missing or not a string"
            drift = field_drift(payload, "call_id", "payload.call_id", lineno)
            return [drift, Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ANY_CALL)]
        call_id = key(call_id)
        pending = self._pending.get(call_id)
        if pending is None:
            self._answer(call_id, payload.get("output"))
            return []  # a command's end is its CommandExecution record; an unknown id: no call
        if pending.tool in COMMAND_TOOLS:
            if len(self._early_outputs) < MAX_CALLS:  # its record is yet to come
                output = payload.get("output")
                self._early_outputs[call_id] = (
                    model_got_a_cut_output(output),
                    model_text(output),
                )
            return []
        del self._pending[call_id]
        output = get_obj(payload, "output")
        succeeded = output is None or output.get("success") is not False
        return [
            ToolStart(
                call_id=call_id,
                tool=pending.tool,
                action=pending.action,
                line=pending.line,
                said=pending.said,
            ),
            ToolEnd(call_id=call_id, tool=pending.tool, succeeded=succeeded, line=lineno),
        ]

    def _answer(self, call_id: str, output: object) -> None:
        """A held command's output: what the model got of it. Cut, its reads showed lines that
        cannot be told (never the whole file, nor the range the command asked for)."""
        held = self._held.get(call_id)
        if held is None or held.answered:
            return  # an unknown call, or an output again
        if model_got_a_cut_output(output):
            held.events = [lines_unknown(event) for event in held.events]
        held.events = with_text(held.events, model_text(output))
        held.answered = True

    def _event_msg(self, payload: JsonObject, lineno: int) -> list[Event]:
        kind = get_str(payload, "type")
        if kind == "item_completed":
            item = get_obj(payload, "item")
            if item is None:
                detail = "field 'payload.item' is missing or not an object"
                drift = field_drift(payload, "item", "payload.item", lineno)
                return [
                    drift,
                    Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ANY_CALL),
                ]
            item_type = get_str(item, "type")
            if item_type == "CommandExecution":
                return self._command(item, lineno)
            if item_type == "FileChange":
                return self._file_change(item, lineno)
            if item_type is None:  # it could end any call
                detail = "field 'payload.item.type' is missing or not a string"
                drift = field_drift(item, "type", "payload.item.type", lineno)
                return [
                    drift,
                    Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ANY_CALL),
                ]
            if item_type not in THREAD_ITEMS:
                return [
                    Unrecognised(line=lineno),
                    unknown_event(f"item_completed/{item_type}", lineno),
                ]
            return []
        if kind == "task_complete":
            return self._mark_complete(lineno)
        if kind == "task_started":
            return self._mark_reopened(lineno)
        if kind is None:  # it could end any call
            detail = "field 'payload.type' is missing or not a string"
            drift = field_drift(payload, "type", "payload.type", lineno)
            return [drift, Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ANY_CALL)]
        if kind not in EVENT_MSGS:
            return [Unrecognised(line=lineno), unknown_event(f"event_msg/{kind}", lineno)]
        return []

    def _file_change(self, item: JsonObject, lineno: int) -> list[Event]:
        """An ``apply_patch`` the harness ran (its heredoc through ``exec_command`` included):
        its ``FileChange`` record ends the call, and no ``CommandExecution`` follows. A change,
        not a read: a write of the one file its ``changes`` name (their keys), if one."""
        call_id = get_str(item, "id")
        if call_id is None:
            detail = "field 'payload.item.id' is missing or not a string"
            drift = field_drift(item, "id", "payload.item.id", lineno)
            return [drift, Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ANY_CALL)]
        pending = self._pending.pop(key(call_id), None)
        if pending is None:
            return []  # an unknown call, or its record again
        succeeded = get_str(item, "status") == "completed"
        error = None if succeeded else COMMAND_FAILED
        changes = get_obj(item, "changes") or {}
        paths = [path for path in changes if isinstance(path, str)]
        write = WriteAction(path=paths[0] if len(paths) == 1 else None, cwd=self._cwd)
        return [
            ToolStart(call_id=key(call_id), tool=pending.tool, action=write, line=pending.line),
            ToolEnd(
                call_id=key(call_id),
                tool=pending.tool,
                succeeded=succeeded,
                line=lineno,
                error_type=error,
            ),
        ]

    def _command(self, item: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(item, "id")
        if call_id is None:
            detail = "field 'payload.item.id' is missing or not a string"
            no_id = field_drift(item, "id", "payload.item.id", lineno)
            return [no_id, Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ANY_CALL)]
        succeeded = command_succeeded(item)
        error = None if succeeded else COMMAND_FAILED
        call_id = key(call_id)
        said = hash(json.dumps(item, sort_keys=True, default=str))
        if self._completed.get(call_id) == said:
            return []  # the same record again, to the letter: one outcome
        if len(self._completed) < MAX_CALLS:
            self._completed[call_id] = said
        odd = odd_outcome(item)
        damage = parsed_damage(item)
        drift = record_drift(item, lineno)
        pending = self._pending.pop(call_id, None)
        if pending is None:
            if odd is not None or damage is not None:
                detail = odd or (damage[0] if damage else "")
                return [
                    *drift,
                    Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=(call_id,)),
                ]
            return [
                *drift,
                ToolEnd(
                    call_id=call_id, tool=None, succeeded=succeeded, line=lineno, error_type=error
                ),
            ]
        cwd = _cwd_path(get_str(item, "cwd")) or self._cwd
        actions = command_actions(item, pending.tool, cwd, damage)
        if damage is not None and isinstance(actions[0], UnplacedRead):
            odd = odd or damage[0]
        # a command that printed nothing showed nothing of any file it read
        shown = EMPTY_SHOWN if succeeded and item.get("aggregated_output") == "" else None
        events: list[Event] = list(drift)
        for n, action in enumerate(actions, start=1):
            read_id = call_id if len(actions) == 1 else f"{call_id}#{n}"
            events.append(
                ToolStart(
                    call_id=read_id,
                    tool=pending.tool,
                    action=action,
                    line=pending.line,
                    said=pending.said,
                )
            )
            if odd is not None:
                events.append(Unreadable(line=lineno, detail=odd, starts=NO_CALLS, ends=(read_id,)))
                continue
            events.append(
                ToolEnd(
                    call_id=read_id,
                    tool=pending.tool,
                    succeeded=succeeded,
                    line=lineno,
                    error_type=error,
                    shown=shown,
                )
            )
        early = self._early_outputs.pop(call_id, None)  # its output came first
        if early is not None:
            cut, given = early
            if cut:
                events = [lines_unknown(event) for event in events]
            events = with_text(events, given)
        self._held[call_id] = _Held(events, answered=early is not None)
        return []


def _rollout_unreadable(seen: bytes, lineno: int, detail: str) -> Event:
    """A rollout line that could not be read, with what its head tells of the call it holds."""
    head = _ROLLOUT_HEAD.match(seen)
    kind, inner = (head.group(1), head.group(2)) if head else (None, None)
    if not opens_object(seen):
        return Malformed(line=lineno, detail=detail)  # not an object: it cannot hold a call
    if kind is None or (kind in (b"response_item", b"event_msg") and inner is None):
        return Unreadable(line=lineno, detail=detail, starts=ANY_CALL, ends=ANY_CALL)
    name = inner.decode("ascii") if inner is not None else ""
    if kind == b"response_item" and name in CALL_STARTS | CALL_OUTPUTS:
        call_id = single_id(seen, _CALL_ID)
        ids = ANY_CALL if call_id is None else (call_id,)
        return (
            Unreadable(line=lineno, detail=detail, starts=ids, ends=NO_CALLS)
            if name in CALL_STARTS
            else Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ids)
        )
    if kind == b"event_msg" and name == "item_completed":
        return Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ANY_CALL)
    return Malformed(line=lineno, detail=detail)  # its head names a line that carries no tool call


def _looks_like_rollout(obj: JsonObject) -> bool:
    return get_str(obj, "type") in ROLLOUT_KINDS and isinstance(obj.get("payload"), dict)


ROLLOUT_KNOWS: Final = FormatKnowledge(
    client="codex",
    events=frozenset(
        {
            *ROLLOUT_LINES,
            *(f"response_item/{kind}" for kind in RESPONSE_ITEMS),
            *(f"event_msg/{kind}" for kind in EVENT_MSGS),
            *(f"item_completed/{kind}" for kind in THREAD_ITEMS),
            *(f"parsed_cmd/{kind}" for kind in PARSED_TYPES),
        }
    ),
    reads=COMMAND_TOOLS,
    not_reads=CODEX_NOT_READS,
    writes=CODEX_WRITES,
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
    trust=(
        "a file under CODEX_HOME, which a command of the run can write wherever its sandbox",
        "lets it: recorded with -f codex-rollout, it is the pipeline's word that the reviewer",
        "could not reach it; in a codex-exec stream's place it must also tell that stream's",
        "story (see codex-exec). Keep CODEX_HOME outside every root the sandbox can write",
    ),
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


def _model_text(payload: JsonObject, lineno: int) -> list[Event]:
    """The model's own text in an assistant message (never evidence, DESIGN §6 rule 29)."""
    content = payload.get("content")
    return [
        ModelText(line=lineno, text=text)
        for item in (content if isinstance(content, list) else ())
        if isinstance(item, dict) and isinstance(text := item.get("text"), str) and text
    ]
