"""Gemini CLI: ``gemini -p PROMPT --output-format stream-json`` output.

One JSON object per line, ``type`` first: ``init``, ``message`` (the prompt and the model's text,
``delta`` chunks), ``tool_use``, ``tool_result``, ``error`` and, last, ``result``.

What counts (DESIGN §6):

- A call is a ``tool_use {tool_name, tool_id, parameters}`` line (the start) and a
  ``tool_result {tool_id, status, output?, error?}`` line (the end). The core pairs them by the
  whole ``tool_id``; the end does not name its tool. Gemini CLI spells the id
  ``<tool_name>__<model's call id>``: that prefix is never read as the tool, so an end without its
  start is no evidence whatever its id says (``missing_start``).
- ``read_file {file_path, start_line?, end_line?}`` is a read of ``file_path``. Every other tool
  is ignored as a read: ``run_shell_command`` is never parsed (its result says ``success`` even
  when the command failed: ``cat missing-file`` succeeds), but its ``output`` is the text the
  model received (inside Gemini CLI's ``<untrusted_context>`` wrapper): it is passed on, and
  credits the files and diff hunks it holds by content (DESIGN §6 rules 17 and 25); ``glob``,
  ``grep_search``, ``list_directory`` show names or matches, not files.
- ``read_many_files {include, exclude?}`` reads the files its glob patterns match, and only the
  files its result names count: each path in the ``files`` array of its display object (what
  Gemini CLI's ReadManyFiles returns, when a result carries it as JSON) is a read of that file,
  recorded as a call of its own (``<tool_id>#<n>``, n from 1) with its lines unknown (each file
  may have been cut at 2000 lines). An ``include`` pattern, even a plain file name, is not a read:
  a pattern that matched nothing, a file the ignore files excluded and a file that could not be
  read all still give ``success``. The display's Markdown summary is text for a person and is
  never searched for file names (a file named with a backtick and a newline could forge a line of
  it). Gemini CLI 0.61 writes no ``output`` for this tool (its display is not text) and does not
  even register it (the call fails ``tool_not_registered``): with it, ``read_many_files`` is never
  evidence.
- ``write_file`` and ``replace`` (``file_path``) change files, and so does a
  ``run_shell_command`` command that redirects into a file or runs ``git stash``/``checkout``/...
  (``adapters/_mutations.py``): mutations, never reads.
- What the adapter knows (``KNOWS``) is watched (DESIGN §6 rule 19): a line type Gemini CLI does
  not write is drift (``unknown_event``); a call of a tool it does not know is an unknown tool,
  judged by what came back (its parameters are kept to tell whether they name a file in scope).
  A tool line whose ``type``, ``tool_id``, ``tool_name``, ``status`` or ``output`` is missing or
  of a type Gemini CLI never writes is unreadable for its call, and drift (``missing_field``,
  ``field_type``). The stream names no client version and lists no tools.
- Success is ``status`` ``"success"``; ``"error"`` is a failed call (its ``error.type`` kept);
  any other value, or none, is an outcome that cannot be read (the call's file is ``unknown``).
- ``message`` lines are model text (passed over from their first bytes); ``init`` and ``error``
  lines carry no call.
- A line that cannot be read (not UTF-8, cut off, not JSON, a field of the wrong type) and could
  hold a call is ``Unreadable``: a ``tool_use`` line could start, a ``tool_result`` line could end
  the call whose ``tool_id`` is recovered from the bytes seen; a line whose head names another
  type is plain malformed. A line longer than the scanner holds whole (a shell result holding a
  large diff) is read as it flows, keeping only the fields used here.

Which lines a successful ``read_file`` showed (DESIGN §6 rules 11-12), from its ``output``, which
is Gemini CLI's display text, not what the model received:

- ``Read lines A-B of T from P`` (a range was asked for, or the file was cut at 2000 lines):
  lines A to B of T. Past the end Gemini CLI reports ``Read lines T+1-T of T``: nothing was
  returned, and the read is not evidence.
- ``Read all T lines from P (some lines were shortened)``: every line.
- ``""`` (the usual whole read): Gemini CLI returned lines 1 to the last one (it names the range
  whenever it cut one), but how many lines that was is not in the stream. It is recorded as
  "line 1 to the end", told in lines with the file's content at the revision for files in the
  pinned diff (an empty file then showed nothing), and unknown otherwise: never empty.
- anything else, or no ``output``: the range asked for (``start_line``/``end_line`` are 1-based
  and inclusive; without ``end_line`` Gemini CLI reads at most 2000 lines).

``ranges`` record the same lines zero-based and end-exclusive (``offset`` = ``start_line`` - 1),
as for Claude Code; Gemini CLI counts the empty string after a file's last newline as a line.

Paths: ``file_path`` as the model wrote it, relative to the working directory Gemini CLI ran in
(the stream does not record it: give ``--repo-root``), or absolute. ``@`` and backslashes are part
of the name: Gemini CLI opens a leading-``@`` path literally when that file exists and only
otherwise drops the ``@``, which the stream cannot tell, so a read of ``@x`` is credited to the
file literally named ``@x``, never to ``x``.

Completion: the ``result`` line (whatever its ``status``); a ``tool_use`` after it reopens the
stream.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Final

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import Capability, DriftKind
from coverage_gate.core.calls import MAX_CALLS
from coverage_gate.core.events import (
    ANY_CALL,
    EMPTY_SHOWN,
    NO_CALLS,
    UNKNOWN_SHOWN,
    Action,
    ByteSpan,
    Drift,
    Event,
    FormatKnowledge,
    IgnoredAction,
    Malformed,
    ModelText,
    ReadAction,
    Shown,
    ToolEnd,
    ToolStart,
    Unreadable,
    UnreadableArguments,
    Unrecognised,
    WriteAction,
)
from coverage_gate.core.presentation import LineCut, Presentation, Transform

from ._decoder import JsonLinesAdapter, JsonLinesDecoder
from ._json import (
    JsonObject,
    OutOfRange,
    get_int,
    get_list,
    get_obj,
    get_str,
    key,
    opens_object,
)
from ._returned import returned
from ._shell import shell_action
from ._stream import Spec

__all__ = [
    "ADAPTER",
    "DEFAULT_READ_LINES",
    "EVENTS",
    "KNOWS",
    "NAME",
    "NOT_READ_TOOLS",
    "READ_MANY_TOOL",
    "READ_TOOL",
    "SHELL_TOOL",
    "SPEC",
    "TOOL_ERROR",
    "WRITE_TOOLS",
    "GeminiCliDecoder",
]

NAME: Final = "gemini-cli"
READ_TOOL: Final = "read_file"
READ_MANY_TOOL: Final = "read_many_files"
SHELL_TOOL: Final = "run_shell_command"
# The tools that change files; each names the file in ``file_path``.
WRITE_TOOLS: Final = frozenset({"write_file", "replace"})
_SUB_AGENT = "sub-agent: its answer is model text"
_TRACKER = "the model's task tracker"
# Gemini CLI's built-in tools that are not reads, and why.
NOT_READ_TOOLS: Final = {
    SHELL_TOOL: "shell: commands are not parsed (a write when it changes files)",
    "glob": "file search: names, not contents",
    "grep_search": "search: matching lines, not a file's text as a read",
    "search_file_content": "search (grep_search's earlier name): matching lines",
    "list_directory": "directory listing: names, not contents",
    "google_web_search": "web: not the repository",
    "web_fetch": "web: not the repository",
    "write_todos": "the model's todo list",
    "save_memory": "the model's memory file, outside the repository",
    "activate_skill": "a skill's instructions, not a file of the revision",
    "ask_user": "a question to the user",
    "complete_task": "the model's answer: model text",
    "enter_plan_mode": "plan mode",
    "exit_plan_mode": "plan mode",
    "get_internal_docs": "Gemini CLI's own documentation",
    "invoke_agent": _SUB_AGENT,
    "codebase_investigator": _SUB_AGENT,
    "cli_help": _SUB_AGENT,
    "generalist": _SUB_AGENT,
    "list_mcp_resources": "MCP resources, not files of the revision",
    "read_mcp_resource": "MCP resources, not files of the revision",
    "take_snapshot": "a browser snapshot",
    "tracker_add_dependency": _TRACKER,
    "tracker_create_task": _TRACKER,
    "tracker_get_task": _TRACKER,
    "tracker_list_tasks": _TRACKER,
    "tracker_update_task": _TRACKER,
    "tracker_visualize": _TRACKER,
    "update_topic": "the session's topic",
}
# Every line type Gemini CLI's stream-json writes, used here or not.
EVENTS: Final = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})
PRESENTATION: Final = Presentation(
    terminal=True,
    line_cuts=(LineCut(tool=READ_TOOL, marker="... [truncated]", length=2000),),
    transforms=(
        Transform(name="byte-order mark dropped", shown_by="gemini-*/read.jsonl bom.py"),
        Transform(
            name="read_file: a long line cut at 2,000 characters, marked ... [truncated], under an "
            "IMPORTANT notice; the stream says only (some lines were shortened)",
            shown_by="gemini-*/read.jsonl long_line.js",
        ),
        Transform(
            name="files that are not UTF-8 are refused as binary (Cannot display content of "
            "binary file)",
            shown_by="gemini-*/read.jsonl latin1.txt sjis.txt blob.bin",
        ),
        Transform(
            name="shell output inside <untrusted_context> as Output: ..., escape sequences gone",
            shown_by="gemini-*/cat.jsonl",
        ),
    ),
)


KNOWS: Final = FormatKnowledge(
    client="Gemini CLI",
    events=EVENTS,
    reads=frozenset({READ_TOOL, READ_MANY_TOOL}),
    not_reads=NOT_READ_TOOLS,
    writes=WRITE_TOOLS,
    fields=(
        "type",
        "tool_use.tool_id",
        "tool_use.tool_name",
        "tool_result.tool_id",
        "tool_result.status",
        "tool_result.output",
        "tool_result.error.type",
    ),
    versions=CHECKED.get(NAME),
    presentation=PRESENTATION,
    notes=(
        "the stream names no client version",
        "a run_shell_command command that redirects into a file or runs git stash/checkout/... "
        "is a write",
    ),
)
DEFAULT_READ_LINES: Final = 2000  # what read_file returns from start_line when no end_line
TOOL_ERROR: Final = "tool_error"

SPEC: Final[Spec] = {
    "type": None,
    "tool_name": None,
    "tool_id": None,
    "parameters": {"file_path": None, "start_line": None, "end_line": None, "command": None},
    "status": None,
    "output": None,
    "error": {"type": None},
    # a message line: the model's own text when its role is the assistant's
    "role": None,
    "content": None,
}
#: Characters of one message of the model's kept as its own text.
MAX_MESSAGE_CHARS: Final = 1 << 16
_TYPE_HEAD = re.compile(rb'\s*\{\s*"type"\s*:\s*"([A-Za-z_-]+)"')
_ID = re.compile(rb'"tool_id"\s*:\s*"([^"\\]{1,256})"')
_ID_KEY = re.compile(rb'"tool_id"\s*:')
_QUIET_KINDS = frozenset({"init", "message", "error"})
_SNIFF_HEAD = re.compile(
    rb'\s*\{\s*"type"\s*:\s*"(?:init|tool_use|tool_result)"\s*,\s*"timestamp"\s*:\s*"[^"]*"\s*,'
    rb'\s*"(?:session_id|tool_name|tool_id)"\s*:'
)

# The display text of a successful read_file (Gemini CLI's processSingleFileContent).
_LINES_READ = re.compile(
    r"Read lines (\d{1,18})-(\d{1,18}) of (\d{1,18}) from .+?(?: \(some lines were shortened\))?"
)
_ALL_READ = re.compile(r"Read all (\d{1,18}) lines from .+? \(some lines were shortened\)")
_SHORTENED: Final = " (some lines were shortened)"


def _line_number(parameters: JsonObject, name: str) -> int | OutOfRange | None:
    """A 1-based line number argument; anything else is left out."""
    value = get_int(parameters, name)
    if isinstance(value, OutOfRange):
        return value
    return value if value is not None and value >= 1 else None


def _asked(start: int | None, end: int | None) -> Shown:
    """The lines a ``read_file`` asks for (1-based, inclusive; without ``end_line``, 2000 lines
    from ``start_line`` or from the first line)."""
    first = start or 1
    return Shown.lines(first, end if end is not None else first + DEFAULT_READ_LINES - 1)


def _other_action(tool: str, parameters: JsonObject | None) -> Action:
    """A tool that is no read: a write (a writing tool, or a shell command that changes files,
    ``adapters/_mutations.py``), a tool this adapter knows, or one it does not."""
    given = parameters or {}
    if tool in WRITE_TOOLS:
        return WriteAction(path=get_str(given, "file_path"))
    if tool == SHELL_TOOL:
        return shell_action(get_str(given, "command"))
    # read_many_files too: what it read is only known from its result
    return IgnoredAction(known=KNOWS.knows_tool(tool))


def _said(tool: str, parameters: object) -> str | None:
    """The text the model wrote into a call other than a read: its parameters' string values;
    for a tool this adapter does not know, all of them (a path it names is drift when it is in
    scope)."""
    if tool == READ_TOOL or not isinstance(parameters, dict) or not parameters:
        return None
    if not KNOWS.knows_tool(tool):
        return json.dumps(parameters, ensure_ascii=False, default=str)
    said = "\n".join(value for value in parameters.values() if isinstance(value, str))
    return said or None


def _read_action(tool: str, parameters: JsonObject | None) -> Action:
    if tool != READ_TOOL:
        return _other_action(tool, parameters)
    if parameters is None:
        return UnreadableArguments(detail="read_file parameters are missing or not an object")
    path = get_str(parameters, "file_path")
    if path is None:
        return UnreadableArguments(detail="read_file parameters have no string 'file_path'")
    start, end = _line_number(parameters, "start_line"), _line_number(parameters, "end_line")
    if isinstance(start, OutOfRange) or isinstance(end, OutOfRange):
        # The file is clear, the range is not: a read of that file whose lines cannot be told.
        return ReadAction(path=path, shown=UNKNOWN_SHOWN)
    asked = _asked(start, end)
    if start is None and end is None:
        return ReadAction(path=path, shown=asked)
    last = asked.end or asked.start
    return ReadAction(
        path=path, offset=asked.start - 1, limit=max(last - asked.start + 1, 0), shown=asked
    )


# what read_file reports for a file it takes for binary, or that is not UTF-8 (0.58.0, 0.61.0)
_SKIPPED: Final = "Skipped binary file: "


def _returned(output: str) -> tuple[Shown, ByteSpan | None] | None:
    """What a successful ``read_file`` says it returned, from its display text; ``None`` when the
    text says nothing of it."""
    if output == "":
        return Shown.lines(1, None), None
    found = _LINES_READ.fullmatch(output)
    if found is not None:
        first, last, total = (int(group) for group in found.groups())
        if first < 1 or last < first or first > total:  # past the end: nothing
            return EMPTY_SHOWN, None
        return Shown.lines(first, last, total), ByteSpan(offset=first - 1, end=last, total=total)
    if output.startswith(_SKIPPED):
        return EMPTY_SHOWN, None  # a file it takes for binary: the model got nothing of it
    whole = _ALL_READ.fullmatch(output)
    if whole is not None:
        total = int(whole.group(1))
        return (Shown.whole(total), None) if total else (EMPTY_SHOWN, None)
    return None


def _listed_files(output: str) -> list[str]:
    """The files a successful ``read_many_files`` display object names as read, in order."""
    if not output.lstrip().startswith("{"):
        return []  # text for a person (the Markdown summary), never searched for names
    try:
        display = json.loads(output)
    except (RecursionError, ValueError):
        return []
    files = get_list(display, "files") if isinstance(display, dict) else None
    return [item for item in files or [] if isinstance(item, str) and item]


class GeminiCliDecoder(JsonLinesDecoder):
    """Per-stream state: completion, and which calls are ``read_many_files`` calls."""

    spec = SPEC

    def __init__(self) -> None:
        super().__init__()
        # the model's message so far: its deltas, one after the other, until another line
        self._message: list[str] = []
        self._message_chars = 0
        self._many: set[str] = set()
        # shell calls, whose output is the text the model received (credited by content)
        self._shell: set[str] = set()
        self._handlers: dict[str, Callable[[JsonObject, int], list[Event]]] = {
            "tool_use": self._use,
            "tool_result": self._result,
            "result": self._done,
        }

    def _decoded(
        self, obj: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        if not isinstance(obj, Malformed) and obj.get("type") == "message":
            content = obj.get("content")
            if obj.get("role") == "assistant" and isinstance(content, str):
                self._say(content)
            return []
        said = self._said(lineno)
        found = self._line(obj, seen, lineno, whole=whole)
        return [*said, *found] if said else found

    def _say(self, text: str) -> None:
        """A delta of the model's message, kept (bounded) until the message ends."""
        if self._message_chars < MAX_MESSAGE_CHARS:
            self._message.append(text)
            self._message_chars += len(text)

    def _said(self, lineno: int) -> list[Event]:
        """The model's message that the line at ``lineno`` ends, whole: its own text (never
        evidence, DESIGN §6 rule 29)."""
        if not self._message:
            return []
        text = "".join(self._message)
        self._message.clear()
        self._message_chars = 0
        return [ModelText(line=lineno, text=text)]

    def _line(
        self, obj: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        if isinstance(obj, Malformed):
            return [_unreadable(seen, lineno, obj.detail, whole=whole)]
        kind = get_str(obj, "type")
        if kind is None:
            detail = "field 'type' is missing or not a string"
            if "tool_id" not in obj:
                return [Malformed(line=lineno, detail=detail)]
            call_id = get_str(obj, "tool_id")
            ids = ANY_CALL if call_id is None else (call_id,)
            return [
                Unreadable(line=lineno, detail=detail, starts=ids, ends=ids),
                _odd(obj, "type", lineno),
            ]
        handler = self._handlers.get(kind)
        if handler is not None:
            return handler(obj, lineno)
        if kind in _QUIET_KINDS:
            return []
        if kind in EVENTS:
            return [Unrecognised(line=lineno)]
        # a type Gemini CLI does not write: a renamed tool line hides its calls
        return [
            Unrecognised(line=lineno),
            Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=kind),
        ]

    # --- line kinds ----------------------------------------------------------------------------

    def _use(self, line: JsonObject, lineno: int) -> list[Event]:
        call_id, tool = get_str(line, "tool_id"), get_str(line, "tool_name")
        if call_id is None or tool is None:
            ids = ANY_CALL if call_id is None else (call_id,)
            field = "tool_id" if call_id is None else "tool_name"
            return [
                Unreadable(
                    line=lineno,
                    detail="tool_use without string 'tool_id' and 'tool_name'",
                    starts=ids,
                ),
                _odd(line, field, lineno, f"tool_use.{field}"),
            ]
        if tool == READ_MANY_TOOL and len(self._many) < MAX_CALLS:
            self._many.add(key(call_id))
        if tool == SHELL_TOOL and len(self._shell) < MAX_CALLS:
            self._shell.add(key(call_id))
        events = self._mark_reopened(lineno)
        parameters = get_obj(line, "parameters")
        action = _read_action(tool, parameters)
        events.append(
            ToolStart(
                call_id=call_id, tool=tool, action=action, line=lineno, said=_said(tool, parameters)
            )
        )
        return events

    def _result(self, line: JsonObject, lineno: int) -> list[Event]:
        call_id = get_str(line, "tool_id")
        if call_id is None:
            return [
                Unreadable(
                    line=lineno,
                    detail="tool_result without a string 'tool_id'",
                    starts=NO_CALLS,
                    ends=ANY_CALL,
                ),
                _odd(line, "tool_id", lineno, "tool_result.tool_id"),
            ]
        status = line.get("status")
        if status == "error":
            error = get_obj(line, "error")
            kind = (get_str(error, "type") if error is not None else None) or TOOL_ERROR
            return [
                ToolEnd(call_id=call_id, tool=None, succeeded=False, line=lineno, error_type=kind)
            ]
        if status != "success":
            detail = "field 'status' is neither 'success' nor 'error'"
            return [
                Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=(call_id,)),
                _odd(line, "status", lineno, "tool_result.status"),
            ]
        output = line.get("output")
        if output is not None and not isinstance(output, str):
            return [
                Unreadable(
                    line=lineno,
                    detail="field 'output' is not a string",
                    starts=NO_CALLS,
                    ends=(call_id,),
                ),
                _odd(line, "output", lineno, "tool_result.output"),
            ]
        if key(call_id) in self._many:
            return self._many_end(call_id, output or "", lineno)
        if key(call_id) in self._shell:
            self._shell.discard(key(call_id))
            # an empty output reached the model as "Output: (empty)": it printed nothing
            given = returned(output) if output else returned("", empty=True)
            return [
                ToolEnd(call_id=call_id, tool=None, succeeded=True, line=lineno, returned=given)
            ]
        told = _returned(output) if output is not None else None
        shown, span = told if told is not None else (None, None)
        # the text is not carried; where the display says lines were shortened, which ones is
        # told by the revision's lines longer than the presentation's limit
        shortened = output is not None and output.endswith(_SHORTENED)
        return [
            ToolEnd(
                call_id=call_id,
                tool=None,
                succeeded=True,
                line=lineno,
                result_range=span,
                shown=shown,
                returned=returned("", placeholder=True, shortened=True) if shortened else None,
            )
        ]

    def _many_end(self, call_id: str, output: str, lineno: int) -> list[Event]:
        """A successful ``read_many_files``: the call itself, and a read of each file its result
        names (``<tool_id>#<n>``), whose lines are unknown."""
        events: list[Event] = [ToolEnd(call_id=call_id, tool=None, succeeded=True, line=lineno)]
        for number, path in enumerate(_listed_files(output), start=1):
            part = f"{call_id}#{number}"
            read = ReadAction(path=path, shown=UNKNOWN_SHOWN)
            events.append(ToolStart(call_id=part, tool=READ_MANY_TOOL, action=read, line=lineno))
            events.append(
                ToolEnd(
                    call_id=part,
                    tool=READ_MANY_TOOL,
                    succeeded=True,
                    line=lineno,
                    shown=UNKNOWN_SHOWN,
                )
            )
        return events

    def _done(self, line: JsonObject, lineno: int) -> list[Event]:
        return self._mark_complete(lineno)


def _odd(line: JsonObject, field: str, lineno: int, name: str | None = None) -> Drift:
    """Drift for a line's ``field`` (named ``name``): missing, or of a type never written."""
    kind = DriftKind.MISSING_FIELD if field not in line else DriftKind.FIELD_TYPE
    return Drift(line=lineno, kind=kind, name=name or field)


def _unreadable(seen: bytes, lineno: int, detail: str, *, whole: bool) -> Event:
    """A line that could not be read, with the call it could start or end as far as the bytes
    seen tell (its ``tool_id``, when the whole line was seen, intact, with exactly one)."""
    head = _TYPE_HEAD.match(seen)
    kind = head.group(1) if head else None
    if not opens_object(seen) or (kind is not None and kind not in (b"tool_use", b"tool_result")):
        # not an object, or a line that carries no call
        return Malformed(line=lineno, detail=detail)
    if kind is None and _ID_KEY.search(seen) is None:
        return Malformed(line=lineno, detail=detail)
    ids: tuple[str, ...] | None = ANY_CALL
    found = _ID.findall(seen)
    if whole and seen.rstrip().endswith(b"}") and len(found) == len(_ID_KEY.findall(seen)) == 1:
        try:
            ids = (found[0].decode("utf-8"),)
        except UnicodeDecodeError:
            ids = ANY_CALL
    starts = NO_CALLS if kind == b"tool_result" else ids
    ends = NO_CALLS if kind == b"tool_use" else ids
    return Unreadable(line=lineno, detail=detail, starts=starts, ends=ends)


def _looks_like(obj: JsonObject) -> bool:
    kind = get_str(obj, "type")
    if kind == "init":
        return "session_id" in obj and "model" in obj and "subtype" not in obj
    if kind == "tool_use":
        return "tool_id" in obj and "tool_name" in obj
    if kind == "tool_result":
        return "tool_id" in obj and "status" in obj
    return False


ADAPTER: Final = JsonLinesAdapter(
    name=NAME,
    capability=Capability.PER_FILE,
    description=(
        "Gemini CLI: `gemini -p PROMPT --output-format stream-json` output (read_file, and the "
        "files a read_many_files result names)"
    ),
    decoder=GeminiCliDecoder,
    sniff_head=_SNIFF_HEAD,
    looks_like=_looks_like,
    knows=KNOWS,
)
