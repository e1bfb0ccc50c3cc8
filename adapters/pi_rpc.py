"""pi RPC mode (``pi --mode rpc``): ``tool_execution_start``/``tool_execution_end`` events.

Which tools count: ``cr_read {path, offset, limit}`` and the built-in ``read {path, offset,
limit}`` are reads (ranged when offset or limit is given; ``cr_read`` offsets are bytes, ``read``
offsets are lines); ``cr_diff {offset, limit}`` is a page of the pinned diff. Every other tool is
ignored and counted: ``bash``, ``grep``, ``find`` and ``ls`` are known not to be reads, a tool
pi does not have (an extension's, or a renamed one) is unknown (drift when it names a file in
scope). ``edit {path}`` and ``write {path}`` change files, and so does a ``bash`` command that
redirects into a file or runs ``git stash``/``checkout``/... (``adapters/_mutations.py``): these
are recorded as mutations, never as reads. Both read tools drop one leading ``@`` from a path (a
file mention), so for this format, and only here, ``@x`` is read as ``x`` (``@@x`` as the file
``@x``).

What a successful read showed (DESIGN §6 rules 11-12): ``cr_read`` reports its bytes in a
``[cr-range offset= end= total=]`` header (whenever a range was asked for or the file was cut);
without one, the result is the whole file. ``read`` shows the lines asked for (``offset`` is
1-based), the whole file when none were, and when pi cut the output, the lines its ``[Showing
lines A-B of T ...]`` notice names. A result with no text, a header with ``end`` equal to
``offset``, or a ``read`` whose first line alone was over pi's limit returned nothing: not
evidence.

Success needs an explicit success: the end's top-level ``isError`` is ``false`` and
``result.isError`` is absent or ``false`` (pi reports a tool that *returns* an error with top-level
``isError:false`` and ``result.isError:true``). A ``true`` is a failure. A flag that is present
but not a boolean (``"true"``, ``1``, ``null``) is not a success either, nor a proven failure: pi
writes booleans, so the line is damaged and the call's outcome is unreadable (its file unknown).

Numbers: ``offset``/``limit`` and the ``[cr-range ...]`` values must fit a 64-bit integer; an
argument outside that range is unusable (``arguments_unavailable``), a header value outside it
makes the call's outcome unreadable.

An event type pi does not write (one this adapter does not know) is drift (``unknown_event``):
a renamed tool event means calls are no longer seen. A tool line whose success flags or result
are of a type pi never writes, or that lacks its call id or tool, is unreadable and drift
(``field_type``, ``missing_field``). pi names no version in its stream.

Completion: ``agent_end`` or ``agent_settled``. pi emits ``agent_end`` before an auto-retry, so an
``agent_start`` after it reopens the stream; completion is judged at the end of the stream.

Lines are judged from their head: pi writes ``{"type":...`` first, so only tool execution events
are decoded. A line whose head does not name its type is decoded too. A line longer than the
scanner holds whole (a large read result) is read as it flows, keeping only the fields used here.

A tool line that cannot be read (not UTF-8, cut off, not JSON, a field of the wrong type) is
``Unreadable``: its call id and tool are recovered from its head where pi wrote them
(``{"type":"tool_execution_end","toolCallId":..,"toolName":..``), so only that call's evidence
becomes unavailable; a tool that never counts makes it plain malformed; a line whose head names
no type but that names a ``toolCallId`` could be that call's (or, with no id, any call's) start or
end; any other unreadable line is plain malformed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

import msgspec

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import Capability, DriftKind
from coverage_gate.core.events import (
    ANY_CALL,
    EMPTY_SHOWN,
    NO_CALLS,
    UNKNOWN_SHOWN,
    WHOLE_SHOWN,
    Action,
    ByteSpan,
    DiffPageAction,
    Drift,
    Event,
    FormatKnowledge,
    IgnoredAction,
    LineClass,
    Malformed,
    ReadAction,
    Returned,
    Shown,
    StreamComplete,
    StreamReopened,
    ToolEnd,
    ToolStart,
    Unreadable,
    UnreadableArguments,
    Unrecognised,
    WriteAction,
)
from coverage_gate.core.presentation import Presentation, Transform

from ._decoder import model_text_blocks
from ._json import INT64_MAX, OUT_OF_RANGE, JsonObject, OutOfRange, as_int64, opens_object
from ._returned import returned
from ._shell import shell_action
from ._stream import Items, ObjectLineReader, Spec, load_line

__all__ = [
    "ADAPTER",
    "COUNTED_TOOLS",
    "DIFF_TOOLS",
    "KNOWS",
    "NAME",
    "NOT_READ_TEXT_TOOLS",
    "NOT_READ_TOOLS",
    "RANGE_HEADER_TOOLS",
    "READ_TOOLS",
    "SHELL_TOOL",
    "SPEC",
    "WRITE_TOOLS",
    "PiRpcAdapter",
    "PiRpcDecoder",
    "action_for",
    "result_range",
]

NAME = "pi-rpc"
READ_TOOLS = frozenset({"cr_read", "read"})
DIFF_TOOLS = frozenset({"cr_diff"})
RANGE_HEADER_TOOLS = frozenset({"cr_read", "cr_diff"})

_TYPE_AT_HEAD = re.compile(rb'\s*\{\s*"type"\s*:\s*"([A-Za-z0-9_]+)"')
_TOOL_HEAD = re.compile(
    rb'\s*\{\s*"type"\s*:\s*"tool_execution_(start|end)"'
    rb'(?:\s*,\s*"toolCallId"\s*:\s*"([^"\\]{1,256})"'
    rb'(?:\s*,\s*"toolName"\s*:\s*"([^"\\]{1,256})")?)?'
)
_ANY_ID = re.compile(rb'"toolCallId"\s*:\s*"([^"\\]{1,256})"')
_CR_RANGE = re.compile(r"^\[cr-range offset=(\d+) end=(\d+) total=(\d+)")
# pi's notice under a cut read or bash output: "[Showing lines 1-2000 of 5000. Use offset=...]"
_NOTICE = re.compile(
    r"\n*\[(?:Showing lines|Showing last|Output truncated|\d+ more lines in file)[^\]]*\]\s*\Z"
)
# the notices stand at the end of the text: only its tail is searched
_NOTICE_TAIL = 512
# Tools whose result is not what they read of the revision: the reviewer's own change
NOT_READ_TEXT_TOOLS = frozenset({"edit", "write"})
_SHOWING = re.compile(r"\[Showing lines (\d+)-(\d+) of (\d+)[^\]]*\]\s*$")
COUNTED_TOOLS = READ_TOOLS | DIFF_TOOLS
SHELL_TOOL = "bash"
# what ``bash`` returns for a command that printed nothing (0.67.4 and 0.73.1)
NO_SHELL_OUTPUT: Final = "(no output)"
# what ``bash`` appends to a command's output when it exits with another code than 0
_EXIT_NOTICE: Final = re.compile(r"\n*Command exited with code -?\d+\Z")
WRITE_TOOLS = frozenset({"edit", "write"})
# pi's built-in tools that are not reads, and why
NOT_READ_TOOLS: dict[str, str] = {
    SHELL_TOOL: "shell: commands are not parsed (a write when it redirects into a file)",
    "grep": "search: matching lines, not a file's text as a read",
    "find": "file search: names, not contents",
    "ls": "directory listing: names, not contents",
}
# What a tool line's decoding needs; a line read as it flows keeps only this.
SPEC: Spec = {
    "type": None,
    "toolCallId": None,
    "toolName": None,
    "isError": None,
    "args": {"path": None, "offset": None, "limit": None, "command": None},
    # an assistant message_end: the model's own text
    "message": {"role": None, "content": Items({"type": None, "text": None, "thinking": None})},
    "result": {
        "isError": None,
        "content": Items({"text": None}, first=1),
        "details": {"truncation": {"truncated": None, "firstLineExceedsLimit": None}},
    },
}

_TOOL_EVENTS = frozenset({"tool_execution_start", "tool_execution_end"})
_DONE = frozenset({"agent_end", "agent_settled"})
_REOPEN = "agent_start"
_KNOWN_SKIPPED = frozenset(
    {
        "compaction_start",
        "compaction_end",
        "session_info_changed",
        "thinking_level_changed",
        "message_start",
        "message_update",
        "message_end",
        "turn_start",
        "turn_end",
        "tool_execution_update",
        "response",
        "auto_compaction_start",
        "auto_compaction_end",
        "auto_retry_start",
        "auto_retry_end",
        "queue_update",
        "extension_ui_request",
        "extension_error",
        "hook_error",
    }
)


def _int_or_none(value: object) -> int | str | None:
    """``None`` for absent, the int for a non-negative 64-bit int, else an error text."""
    if value is None:
        return None
    number = as_int64(value)
    if number is OUT_OF_RANGE:
        return "out of the 64-bit range"
    if not isinstance(number, int) or number < 0:
        return f"not a non-negative integer: {_short(value)}"
    return number


def _short(value: object) -> str:
    """A value as a detail names it, without writing out a large one."""
    if isinstance(value, str):
        return repr(value[:40]) + ("..." if len(value) > 40 else "")
    if isinstance(value, dict | list):
        return f"a JSON {'object' if isinstance(value, dict) else 'array'}"
    return repr(value)[:40]


def action_for(tool: str, args: object) -> Action:
    if tool not in COUNTED_TOOLS:
        return _other_action(tool, args)
    # A JSON object is read as a dict (by msgspec, json.loads and the bounded reader alike).
    if not isinstance(args, dict):
        return UnreadableArguments(detail=f"{tool} arguments are not an object")
    offset = _int_or_none(args.get("offset"))
    limit = _int_or_none(args.get("limit"))
    path = args.get("path")
    unusable = isinstance(offset, str) or isinstance(limit, str)
    if unusable and tool in READ_TOOLS and isinstance(path, str):
        # The file is clear, the range is not: a read of that file whose lines cannot be told.
        return ReadAction(path=path, mention=True, shown=UNKNOWN_SHOWN)
    if isinstance(offset, str) or isinstance(limit, str):
        return UnreadableArguments(
            detail=f"{tool} offset/limit {offset if isinstance(offset, str) else limit}"
        )
    if tool in DIFF_TOOLS:
        return DiffPageAction(offset=offset, limit=limit)
    if not isinstance(path, str):
        return UnreadableArguments(detail=f"{tool} has no string 'path' argument")
    # Both pi's own read and the cr_read review tool drop one leading "@" (a file mention).
    return ReadAction(
        path=path,
        offset=offset,
        limit=limit,
        cwd=None,
        mention=True,
        shown=_asked(tool, offset, limit),
    )


def _other_action(tool: str, args: object) -> Action:
    """A tool that is no read: a write (an edit, or a shell command that changes files), a known
    tool, or one pi does not have."""
    given = args if isinstance(args, dict) else {}
    if tool in WRITE_TOOLS:
        path = given.get("path")
        return WriteAction(path=path if isinstance(path, str) else None)
    if tool == SHELL_TOOL:
        command = given.get("command")
        return shell_action(command if isinstance(command, str) else None)
    return IgnoredAction(known=tool in NOT_READ_TOOLS)


def _asked(tool: str, offset: int | None, limit: int | None) -> Shown:
    """What a read asks for: ``cr_read`` ranges are told by the result's header alone."""
    if offset is None and limit is None:
        return WHOLE_SHOWN
    if tool != "read":
        return UNKNOWN_SHOWN
    first = max(offset or 1, 1)
    return Shown.lines(first, None if limit is None else first + limit - 1)


def _result_text(result: object) -> str | None:
    """The text of a tool result's first content block; ``""`` when it has no content."""
    if not isinstance(result, dict):
        return None
    content = result.get("content")
    if not isinstance(content, list):
        return None
    if not content:
        return ""
    first = content[0]
    if not isinstance(first, dict):
        return None
    text = first.get("text")
    return text if isinstance(text, str) else None


def _returned(tool: str, result: object, text: str | None, span: ByteSpan | None) -> Shown | None:
    """What a successful read's result (whose first text is ``text``) says it returned;
    ``None`` when it says nothing."""
    if tool == "cr_read":
        if span is not None:
            return Shown.bytes(span.offset, span.end, span.total)
        return EMPTY_SHOWN if text == "" else None
    if text == "":
        return EMPTY_SHOWN
    details = result.get("details") if isinstance(result, dict) else None
    truncation = details.get("truncation") if isinstance(details, dict) else None
    if not isinstance(truncation, dict) or truncation.get("truncated") is not True:
        return None
    if truncation.get("firstLineExceedsLimit") is True:
        return EMPTY_SHOWN  # only a notice that the first line is too long
    showing = _SHOWING.search(text or "")
    if showing is None:
        return UNKNOWN_SHOWN
    first, last, total = (int(group) for group in showing.groups())
    return Shown.lines(first, last, total)


def _failed_output(tool: str, result: object) -> Returned | None:
    """What a failed ``bash`` command gave the model: its output, pi's closing ``Command exited
    with code N`` taken off (0.67.4 and 0.73.1); another tool's failure is its error message."""
    if tool != SHELL_TOOL or not isinstance(result, dict):
        return None
    text = _result_text(result)
    if not text:
        return None
    return _other_text(tool, _EXIT_NOTICE.sub("", text))


def _other_text(tool: str, text: str | None) -> Returned | None:
    """What a tool that is no read gave the model: none for a tool whose text is the model's
    own; ``bash``'s placeholder for a command that printed nothing is that nothing."""
    if tool in NOT_READ_TEXT_TOOLS or not text:
        return None
    if tool == SHELL_TOOL and text == NO_SHELL_OUTPUT:
        return returned("", empty=True)
    return _returned_text(text, None)


def _notice_at(text: str, tail: int) -> re.Match[str] | None:
    """The notice that ends ``text``, looked for from ``tail`` on: a text that does not end
    with a closing bracket (and white space), as most do not, is told at once."""
    if not text[tail:].rstrip().endswith("]"):
        return None
    return _NOTICE.search(text, tail)


def _returned_text(text: str, span: ByteSpan | None, tool: str = "") -> Returned:
    """What a read or another tool gave the model: a ``cr_read`` header taken off (its offset is
    where the text starts in the file), a cut ``read``'s notice or a cut ``bash`` output's notice
    taken off (the text is then cut)."""
    if span is not None:
        body = text[text.find("\n") + 1 :] if "\n" in text else ""
        return returned(body, byte_offset=span.offset)
    tail = max(len(text) - _NOTICE_TAIL, 0)
    found = _notice_at(text, tail)
    if found is not None:
        kept = returned(text[: found.start()])
        showing = _SHOWING.search(text, tail)
        if tool == "read" and showing is not None:
            return msgspec.structs.replace(kept, first_line=int(showing.group(1)))
        if tool == "read" and text[found.start() :].lstrip("\n")[1:2].isdigit():
            # "[N more lines in file. Use offset=M to continue.]": a ranged read, whole as asked
            return kept
        return msgspec.structs.replace(kept, cut=True)
    if tool == "cr_read":
        return returned(text, byte_offset=0)
    return returned(text)


def result_range(text: str | None) -> ByteSpan | OutOfRange | None:
    """The ``[cr-range offset=.. end=.. total=..]`` header a cr_* tool result's first text
    starts with, if present; ``OUT_OF_RANGE`` when one of its values does not fit a 64-bit
    integer."""
    if not text:
        return None
    match = _CR_RANGE.match(text)
    if match is None:
        return None
    if any(len(group) > 19 for group in match.groups()):
        return OUT_OF_RANGE
    offset, end, total = (int(group) for group in match.groups())
    if max(offset, end, total) > INT64_MAX:
        return OUT_OF_RANGE
    return ByteSpan(offset=offset, end=end, total=total)


def _end_flags(obj: JsonObject) -> tuple[bool | None, bool] | str:
    """The end's success flags: its ``isError`` (``None`` when absent) and ``result.isError``
    (``False`` when absent); or why they cannot be read. A flag that is present but not a boolean
    (``"false"``, ``0``, ``null``) is neither a success nor a proven failure: pi writes booleans,
    so the line was damaged, and the call's outcome is unknown."""
    top = obj.get("isError")
    if not isinstance(top, bool) and (top is not None or "isError" in obj):
        return "field 'isError' is not a boolean"
    result = obj.get("result")
    inner = result.get("isError", False) if isinstance(result, dict) else False
    if not isinstance(inner, bool):
        return "field 'result.isError' is not a boolean"
    return top, inner


def _end_outcome(top: bool | None, inner: bool) -> tuple[bool, str | None]:
    if top is True:
        return False, "tool_error"
    if inner:
        return False, "result_error"
    if top is None:
        return False, "no_explicit_success"
    return True, None


def _prefixes(kinds: frozenset[str], first: str) -> tuple[bytes, ...]:
    """How pi (compact) and re-serialised captures (``": "``) start lines of these kinds;
    ``first`` (the kind most lines of a stream are) is tried first."""
    ordered = [first, *sorted(kinds - {first})]
    return tuple(f'{{"type"{sep}"{kind}"'.encode() for kind in ordered for sep in (":", ": "))


# How pi starts the lines of tool executions, the lines decoded: told apart before the type regex.
_TOOL_PREFIXES = _prefixes(_TOOL_EVENTS, first="tool_execution_end")


# An assistant's message_end holds the model's own text (DESIGN §6 rule 29); pi writes the role
# first, so any other message_end (a tool result's, the prompt's) is told by its first bytes.
_MESSAGE_END: Final = "message_end"
_OTHER_MESSAGE_ENDS = tuple(
    f'{{"type"{sep}"{_MESSAGE_END}"{comma}"message"{sep}{{"role"{sep}"{role}"'.encode()
    for role in ("toolResult", "user")
    for sep, comma in ((":", ","), (": ", ", "))
)


class PiRpcDecoder:
    # message_update: most lines of a stream (each streamed token repeats the message so far)
    skip_prefixes = (
        _prefixes(_KNOWN_SKIPPED - {_MESSAGE_END}, first="message_update") + _OTHER_MESSAGE_ENDS
    )

    def __init__(self) -> None:
        self._done = False

    def classify(self, head: bytes) -> LineClass:
        if head.startswith(_TOOL_PREFIXES):
            return LineClass.PARSE
        match = _TYPE_AT_HEAD.match(head)
        if match is None:
            return LineClass.PARSE if head.strip() else LineClass.SKIP
        kind = match.group(1).decode("ascii")
        if kind in _TOOL_EVENTS or kind == _MESSAGE_END:
            return LineClass.PARSE
        if kind in _KNOWN_SKIPPED:
            return LineClass.SKIP
        return LineClass.HEAD_ONLY

    def decode_head(self, head: bytes, lineno: int, intact: bool) -> Sequence[Event]:
        match = _TYPE_AT_HEAD.match(head)
        kind = match.group(1).decode("ascii") if match else ""
        return self._by_type(kind, lineno, intact)

    def _by_type(self, kind: str, lineno: int, intact: bool) -> Sequence[Event]:
        if kind in _DONE:
            if not intact:
                return [Malformed(line=lineno, detail=f"{kind} line is cut off")]
            self._done = True
            return [StreamComplete(line=lineno)]
        if kind == _REOPEN:
            if self._done:
                self._done = False
                return [StreamReopened(line=lineno)]
            return []
        if kind in _KNOWN_SKIPPED:
            return []
        # a type pi does not write: counted, and drift (a renamed tool event hides calls)
        return [
            Unrecognised(line=lineno),
            Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=kind),
        ]

    def decode(self, line: bytes, lineno: int) -> Sequence[Event]:
        return self._decoded(load_line(line, lineno, SPEC), line, lineno)

    def reader(self, max_string_bytes: int) -> ObjectLineReader:
        return ObjectLineReader(SPEC, max_string_bytes, self._decoded)

    def _decoded(self, obj: JsonObject | Malformed, seen: bytes, lineno: int) -> Sequence[Event]:
        if isinstance(obj, Malformed):
            return [_unreadable(seen, lineno, obj.detail)]
        kind = obj.get("type")
        if not isinstance(kind, str):
            return [_untyped(obj, lineno)]
        if kind == "tool_execution_start":
            return self._start(obj, lineno)
        if kind == "tool_execution_end":
            return self._end(obj, lineno)
        if kind == _MESSAGE_END:
            return _model_text(obj, lineno)
        return self._by_type(kind, lineno, intact=True)

    def _ids(self, obj: JsonObject, lineno: int) -> tuple[str, str] | list[Event]:
        call_id, tool = obj.get("toolCallId"), obj.get("toolName")
        if isinstance(call_id, str) and call_id and isinstance(tool, str) and tool:
            return call_id, tool  # what pi writes
        kind = obj.get("type")
        if isinstance(tool, str) and tool and tool not in COUNTED_TOOLS:
            if not isinstance(call_id, str) or not call_id:
                detail = f"{kind} of tool {tool!r} without a string 'toolCallId'"
                return [
                    Malformed(line=lineno, detail=detail),
                    _field_drift(obj, "toolCallId", lineno),
                ]
            return call_id, tool
        if not isinstance(call_id, str) or not call_id:
            unreadable = _side(kind, lineno, f"{kind} without a string 'toolCallId'", ANY_CALL)
            return [unreadable, _field_drift(obj, "toolCallId", lineno)]
        if not isinstance(tool, str) or not tool:
            unreadable = _side(kind, lineno, f"{kind} without a string 'toolName'", (call_id,))
            return [unreadable, _field_drift(obj, "toolName", lineno)]
        return call_id, tool

    def _start(self, obj: JsonObject, lineno: int) -> Sequence[Event]:
        ids = self._ids(obj, lineno)
        if not isinstance(ids, tuple):
            return ids
        call_id, tool = ids
        args = obj.get("args")
        said = _said(tool, args)
        return [
            ToolStart(
                call_id=call_id,
                tool=tool,
                action=action_for(tool, args),
                line=lineno,
                said=said if isinstance(said, str) else None,
            )
        ]

    def _end(self, obj: JsonObject, lineno: int) -> Sequence[Event]:
        ids = self._ids(obj, lineno)
        if not isinstance(ids, tuple):
            return ids
        call_id, tool = ids
        flags = _end_flags(obj)
        if isinstance(flags, str):
            field = "result.isError" if "result.isError" in flags else "isError"
            drift = Drift(line=lineno, kind=DriftKind.FIELD_TYPE, name=field)
            return [Unreadable(line=lineno, detail=flags, starts=NO_CALLS, ends=(call_id,)), drift]
        succeeded, error_type = _end_outcome(*flags)
        if not succeeded:
            # what a failed command printed reached the model all the same (DESIGN §6 rule 25)
            given = _failed_output(tool, obj.get("result"))
            return [
                ToolEnd(
                    call_id=call_id,
                    tool=tool,
                    succeeded=succeeded,
                    line=lineno,
                    error_type=error_type,
                    returned=given,
                )
            ]
        result = obj.get("result")
        odd = _odd_result(obj) if tool in COUNTED_TOOLS else None
        if odd is not None:
            kind, field = odd
            gone = kind is DriftKind.MISSING_FIELD
            detail = f"field {field!r} is {'missing' if gone else 'of a type pi never writes'}"
            drift = Drift(line=lineno, kind=kind, name=field)
            return [Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=(call_id,)), drift]
        text = _result_text(result)
        if tool not in COUNTED_TOOLS:
            given = _other_text(tool, text)
            return [
                ToolEnd(
                    call_id=call_id,
                    tool=tool,
                    succeeded=True,
                    line=lineno,
                    error_type=error_type,
                    returned=given,
                )
            ]
        span = result_range(text) if tool in RANGE_HEADER_TOOLS else None
        if isinstance(span, OutOfRange):
            detail = "[cr-range] header value out of the 64-bit range"
            return [Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=(call_id,))]
        shown = _returned(tool, result, text, span) if tool in READ_TOOLS else None
        # an empty text is returned too: a whole read of a file empty at the revision shows it
        given = _returned_text(text or "", span, tool) if tool in READ_TOOLS else None
        return [
            ToolEnd(
                call_id=call_id,
                tool=tool,
                succeeded=True,
                line=lineno,
                error_type=None,
                result_range=span,
                shown=shown,
                returned=given,
            )
        ]

    def finish(self) -> Sequence[Event]:
        return []


def _said(tool: str, args: object) -> str | None:
    """The call's arguments as the model wrote them: a shell's command; for a tool this adapter
    does not know, all of them (a path it names is drift when it is in scope)."""
    if not isinstance(args, dict):
        return None
    if tool in COUNTED_TOOLS or tool in WRITE_TOOLS or tool in NOT_READ_TOOLS:
        command = args.get("command")
        return command if isinstance(command, str) else None
    return json.dumps(args, ensure_ascii=False, default=str)


def _odd_result(obj: JsonObject) -> tuple[DriftKind, str] | None:
    """A successful counted call's result as pi never writes it: gone, or a field of another
    type (``result`` not an object, ``result.content`` not a list, its first block not an
    object, that block's ``text`` not a string)."""
    if "result" not in obj:
        return DriftKind.MISSING_FIELD, "result"
    result = obj["result"]
    if not isinstance(result, dict):
        return DriftKind.FIELD_TYPE, "result"
    content = result.get("content", [])
    if not isinstance(content, list):
        return DriftKind.FIELD_TYPE, "result.content"
    if not content:
        return None
    first = content[0]
    if not isinstance(first, dict):
        return DriftKind.FIELD_TYPE, "result.content[0]"
    if "text" in first and not isinstance(first["text"], str):
        return DriftKind.FIELD_TYPE, "result.content[0].text"
    return None


def _field_drift(obj: JsonObject, field: str, lineno: int) -> Drift:
    """A field pi always writes gone, or of another type."""
    kind = DriftKind.MISSING_FIELD if field not in obj else DriftKind.FIELD_TYPE
    return Drift(line=lineno, kind=kind, name=field)


def _side(kind: object, lineno: int, detail: str, ids: tuple[str, ...] | None) -> Unreadable:
    """An unreadable tool line: the start or end of the calls ``ids`` (``ANY_CALL``: any call)."""
    if kind == "tool_execution_start":
        return Unreadable(line=lineno, detail=detail, starts=ids, ends=NO_CALLS)
    return Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ids)


def _unreadable(seen: bytes, lineno: int, detail: str) -> Event:
    """A line that could not be read, with what its head still tells: which call and tool."""
    head = _TOOL_HEAD.match(seen)
    if head is None:
        if (
            _TYPE_AT_HEAD.match(seen) is not None
            or not opens_object(seen)
            or b'"toolCallId"' not in seen
        ):
            # another event's line, or no tool event at all
            return Malformed(line=lineno, detail=detail)
        found = _ANY_ID.search(seen)
        call_id = _text(found.group(1)) if found else None
        ids = ANY_CALL if call_id is None else (call_id,)
        return Unreadable(line=lineno, detail=detail, starts=ids, ends=ids)
    kind = f"tool_execution_{head.group(1).decode('ascii')}"
    call_id, tool = (_text(head.group(n)) for n in (2, 3))
    if tool is not None and tool not in COUNTED_TOOLS:
        # a tool that never counts: no evidence either way
        return Malformed(line=lineno, detail=detail)
    return _side(kind, lineno, detail, ANY_CALL if call_id is None else (call_id,))


def _untyped(obj: JsonObject, lineno: int) -> Event:
    """A line without a string type: a tool event's if it names a call id, else nothing."""
    detail = "no string 'type' field"
    if "toolCallId" not in obj:
        return Malformed(line=lineno, detail=detail)
    call_id = obj["toolCallId"]
    ids = (call_id,) if isinstance(call_id, str) and call_id else None
    return Unreadable(line=lineno, detail=detail, starts=ids, ends=ids)


def _text(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


PRESENTATION: Final = Presentation(
    transforms=(
        Transform(
            name="read: a ranged read ends with [N more lines in file. Use offset=M to "
            "continue.], a cut one with [Showing lines A-B of T ...]",
            shown_by="pi-*/read.jsonl big.py",
        ),
        Transform(
            name="read and bash: the text as the file's bytes decode (U+FFFD), a leading "
            "byte-order mark dropped from bash output",
            shown_by="pi-*/read.jsonl latin1.txt, pi-newest/cat.jsonl bom.py",
        ),
    ),
)


KNOWS = FormatKnowledge(
    client="pi",
    events=_TOOL_EVENTS | _DONE | _KNOWN_SKIPPED | {_REOPEN},
    reads=COUNTED_TOOLS,
    not_reads=NOT_READ_TOOLS,
    writes=WRITE_TOOLS,
    fields=(
        "toolCallId",
        "toolName",
        "isError",
        "result.isError",
        "result.content[0].text",
        "result.details.truncation.truncated",
        "result.details.truncation.firstLineExceedsLimit",
    ),
    versions=CHECKED.get(NAME),
    presentation=PRESENTATION,
)


class PiRpcAdapter:
    name = NAME
    capability = Capability.PER_FILE
    description = "pi --mode rpc event stream (cr_read, cr_diff, read)"
    knows = KNOWS

    def decoder(self) -> PiRpcDecoder:
        return PiRpcDecoder()

    def sniff(self, head_lines: Sequence[bytes]) -> bool:
        kinds = set()
        for line in head_lines:
            match = _TYPE_AT_HEAD.match(line[:256])
            if match:
                kinds.add(match.group(1).decode("ascii"))
        return bool(kinds & {"agent_start", "turn_start", "tool_execution_start", "message_update"})


ADAPTER = PiRpcAdapter()


def _model_text(obj: JsonObject, lineno: int) -> list[Event]:
    """The model's own text in an assistant's message_end (``model_text_blocks``); any other
    message is not the model's."""
    message = obj.get("message")
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    return model_text_blocks(message.get("content"), lineno)
