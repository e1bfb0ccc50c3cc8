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

from coverage_gate.enums import Capability
from coverage_gate.events import (
    EMPTY_SHOWN,
    UNKNOWN_SHOWN,
    Action,
    Event,
    IgnoredAction,
    LineClass,
    Malformed,
    ReadAction,
    Returned,
    Shown,
    ToolEnd,
    ToolStart,
    Unreadable,
    UnreadableArguments,
    Unrecognised,
    WorkingDirectory,
)
from coverage_gate.evidence import MAX_CALLS

from ._decoder import JsonLinesAdapter, JsonLinesDecoder, single_id
from ._json import (
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
        "output": {"success": None},  # a command's output is text: kept bounded, its head is read
        "item": {
            "type": None,
            "id": None,
            "cwd": None,
            "status": None,
            "exit_code": None,
            "parsed_cmd": Items({"type": None, "path": None, "cmd": None}),
            "aggregated_output": None,  # kept bounded: only whether it is empty is used
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
    },
}

_EXEC_TOOL_ITEMS = frozenset({"command_execution", "mcp_tool_call"})
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


def _succeeded(item: JsonObject) -> bool:
    """Explicit success only: status completed and exit code 0 (DESIGN §6 rule 2)."""
    return get_str(item, "status") == "completed" and get_int(item, "exit_code") == 0


def _odd_outcome(item: JsonObject) -> str | None:
    """Why a record's outcome cannot be read, or ``None``. Codex writes a string ``status`` and,
    for a completed command, an integer ``exit_code``: anything else is damage, which is neither a
    success nor a proven failure."""
    status = item.get("status")
    if not isinstance(status, str):
        return "field 'status' is not a string"
    code = item.get("exit_code")
    if status == "completed" and (not isinstance(code, int) or isinstance(code, bool)):
        return "a completed command without an integer 'exit_code'"
    return None


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


@dataclass(frozen=True, slots=True)
class _Pending:
    tool: str
    line: int


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
            payload = get_obj(obj, "payload")
            if payload is None or not {"call_id", "item"} & payload.keys():
                return [Malformed(lineno, detail)]  # no call could be named in it
            return [Unreadable(lineno, detail, None, None)]
        handler = self._handlers.get(kind)
        if handler is None:
            return [] if kind in _ROLLOUT_QUIET else [Unrecognised(lineno)]
        payload = get_obj(obj, "payload")
        if payload is None:
            detail = "field 'payload' is missing or not an object"
            if kind == "response_item":
                return [Unreadable(lineno, detail, None, None)]
            if kind == "event_msg":
                return [Unreadable(lineno, detail, (), None)]
            return [Malformed(lineno, detail)]
        return handler(payload, lineno)

    def finish(self) -> Sequence[Event]:
        """Starts that never ended, passed on so the core labels them ``missing_end``; if any,
        the rollout did not record what those commands read, so it is not complete."""
        events: list[Event] = [
            ToolStart(call_id, pending.tool, IgnoredAction(), pending.line)
            for call_id, pending in self._pending.items()
        ]
        if events or self._overflow:
            events.extend(self._mark_reopened(self._last_line))
        self._pending.clear()
        return [*self._release(everything=True), *events]

    # --- line kinds ----------------------------------------------------------------------------

    def _session(self, payload: JsonObject, lineno: int) -> list[Event]:
        """The session's own working directory: the repository root when none is given."""
        cwd = _cwd_path(get_str(payload, "cwd"))
        self._context(payload, lineno)
        return [WorkingDirectory(cwd, lineno)] if cwd is not None else []

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
        return []

    def _call_start(self, payload: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(payload, "call_id")
        if call_id is None:
            detail = "field 'payload.call_id' is missing or not a string"
            return [Unreadable(lineno, detail, None, ())]
        call_id = key(call_id)
        tool = key(get_str(payload, "name") or get_str(payload, "type") or "tool")
        said = hash(json.dumps(payload, sort_keys=True, default=str))
        if self._seen.get(call_id) == said:
            return []  # the same start line again, to the letter: one call
        if call_id in self._seen:
            # Started again: pass both starts on now, so the core labels the id ambiguous.
            first = self._pending.pop(call_id, None)
            again = ToolStart(call_id, tool, UnreadableArguments("call id started again"), lineno)
            if first is None:
                return [again]
            return [ToolStart(call_id, first.tool, IgnoredAction(), first.line), again]
        if len(self._seen) >= MAX_CALLS:
            self._overflow = True  # its end will come alone; the rollout counts as incomplete
            return []
        self._seen[call_id] = said
        self._pending[call_id] = _Pending(tool, lineno)
        return []

    def _call_output(self, payload: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(payload, "call_id")
        if call_id is None:
            detail = "field 'payload.call_id' is missing or not a string"
            return [Unreadable(lineno, detail, (), None)]
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
            ToolStart(call_id, pending.tool, IgnoredAction(), pending.line),
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
                return [Unreadable(lineno, detail, (), None)]
            if get_str(item, "type") == "CommandExecution":
                return self._command(item, lineno)
            if get_str(item, "type") == "FileChange":
                return self._file_change(item, lineno)
            return []
        if kind == "task_complete":
            return self._mark_complete(lineno)
        if kind == "task_started":
            return self._mark_reopened(lineno)
        return []

    def _file_change(self, item: JsonObject, lineno: int) -> list[Event]:
        """An ``apply_patch`` the harness ran (its heredoc through ``exec_command`` included):
        its ``FileChange`` record ends the call, and no ``CommandExecution`` follows. A change,
        not a read: ignored here."""
        call_id = get_str(item, "id")
        if call_id is None:
            return [
                Unreadable(lineno, "field 'payload.item.id' is missing or not a string", (), None)
            ]
        pending = self._pending.pop(key(call_id), None)
        if pending is None:
            return []  # an unknown call, or its record again
        succeeded = get_str(item, "status") == "completed"
        error = None if succeeded else COMMAND_FAILED
        return [
            ToolStart(key(call_id), pending.tool, IgnoredAction(), pending.line),
            ToolEnd(key(call_id), pending.tool, succeeded, lineno, error_type=error),
        ]

    def _command(self, item: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(item, "id")
        if call_id is None:
            return [
                Unreadable(lineno, "field 'payload.item.id' is missing or not a string", (), None)
            ]
        succeeded = _succeeded(item)
        error = None if succeeded else COMMAND_FAILED
        call_id = key(call_id)
        said = hash(json.dumps(item, sort_keys=True, default=str))
        if self._completed.get(call_id) == said:
            return []  # the same record again, to the letter: one outcome
        if len(self._completed) < MAX_CALLS:
            self._completed[call_id] = said
        pending = self._pending.pop(call_id, None)
        if pending is None:
            return [ToolEnd(call_id, None, succeeded, lineno, error_type=error)]
        cwd = _cwd_path(get_str(item, "cwd")) or self._cwd
        actions = _read_actions(get_list(item, "parsed_cmd"), cwd)
        if not actions:
            actions = [IgnoredAction()]
        # a command that printed nothing showed nothing of any file it read
        shown = EMPTY_SHOWN if succeeded and item.get("aggregated_output") == "" else None
        odd = _odd_outcome(item)
        events: list[Event] = []
        for n, action in enumerate(actions, start=1):
            read_id = call_id if len(actions) == 1 else f"{call_id}#{n}"
            events.append(ToolStart(read_id, pending.tool, action, pending.line))
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
            return [Malformed(lineno, "field 'type' is missing or not a string")]
        if kind in ("item.started", "item.completed"):
            return self._item(obj, kind, lineno)
        if kind == "turn.completed":
            return self._mark_complete(lineno)
        if kind == "turn.started":
            return self._mark_reopened(lineno)
        return [] if kind in _EXEC_KINDS else [Unrecognised(lineno)]

    def _item(self, obj: JsonObject, kind: str, lineno: int) -> list[Event]:
        item = get_obj(obj, "item")
        if item is None:
            return [Malformed(lineno, "field 'item' is missing or not an object")]
        item_type = get_str(item, "type")
        if item_type not in _EXEC_TOOL_ITEMS:
            return []
        call_id = get_str(item, "id")
        if call_id is None:
            return [Malformed(lineno, "field 'item.id' is missing or not a string")]
        command = get_str(item, "command")
        if kind == "item.started":
            return [ToolStart(call_id, item_type, IgnoredAction(), lineno, said=command)]
        given = None
        if item_type == "command_execution":
            succeeded = _succeeded(item)
            given = _exec_output(item) if succeeded else None
        else:
            succeeded = get_str(item, "status") == "completed" and item.get("error") is None
        error = None if succeeded else COMMAND_FAILED
        return [ToolEnd(call_id, item_type, succeeded, lineno, error_type=error, returned=given)]


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
    by_content=True,
)
