"""OpenCode: ``opencode run --format json`` output.

Every line is ``{"type", "timestamp", "sessionID", ...}``. The kinds used here:
``tool_use {part}``, ``step_start {part}``, ``step_finish {part: {reason}}``; ``text`` and
``reasoning`` (model output) are passed over from their first bytes, ``error`` is counted.

There is no start event. OpenCode writes one ``tool_use`` line per call, when the call has
finished: ``part {tool, callID, state {status, input, output | error, metadata, time}}``. What
makes such a line an execution (DESIGN §6 rules 1-3):

- a ``state.status`` of ``completed`` (success) or ``error`` (failure), under a ``callID`` of its
  own: the line is the call's start and its end at once (one ``ToolStart`` and one ``ToolEnd``);
- the same ``callID`` reported again: when the report says the same (tool, input, status,
  outcome, range and ``state.time``) it is the same call written twice (OpenCode re-sends a part
  when it is updated), one call; when it says anything else, two executions share the id: it is
  ambiguous and no evidence (``ambiguous_call_id``);
- any other ``status`` (``pending``, ``running``, or a word OpenCode does not write) is a call
  that had not finished: a start with no end (``missing_end``), no evidence. A later finished
  report of it with the same input is its end.

Which tools count (DESIGN §6 rule 5): ``read {filePath, offset?, limit?}`` is a read of
``filePath``. ``bash``, ``grep``, ``glob``, ``list`` and OpenCode's other built-in tools
(``invalid``, which is how OpenCode answers a tool it does not have, included) are ignored:
shell commands are never parsed for reads, so a ``cat`` in ``bash`` is no read. A tool OpenCode
does not have (an MCP server's, a renamed one) is unknown: drift when it names a file in scope.
``edit``/``write``/``multiedit {filePath}`` and ``patch``/``apply_patch {patchText}`` change files,
and so does a ``bash`` command that redirects into a file or runs ``git stash``/``checkout``/...
(``adapters/_mutations.py``): recorded as mutations, never as reads. ``task`` runs a sub-agent
in a session of its own, whose calls OpenCode does not write to this stream: a successful
``task`` read files that cannot be told, so it counts as a read whose arguments are unavailable
(``unattributed_calls``: every claim lacking evidence is unknown, never unsupported; DESIGN §6
rule 14).

Success is ``status`` ``completed``; ``error`` is a failed call (a missing file, an offset past
the end). A ``status`` that is not a string is an unreadable outcome.

What a successful ``read`` showed (DESIGN §6 rules 11-12) is what its result says:
``state.metadata.display {type: "file", lineStart, lineEnd, totalLines, truncated}``, lines
``lineStart`` to ``lineEnd`` (1-based, inclusive) of ``totalLines``; it is recorded like Claude
Code's ``Read``, as the zero-based, end-exclusive line range ``lineStart - 1 .. lineEnd``. A
result of no lines (an empty file) and a directory listing (``display.type`` ``directory``)
showed no line of a file: not evidence. Without that detail the request says it: ``offset`` is
a 1-based line, ``limit`` a line count (OpenCode reads 2000 lines when no ``limit`` is given);
no range at all is the first 2000 lines: the whole file only when it is no longer, told with the
file at the revision (``adapters/_line_reads.py``).

Paths: ``filePath`` as the model wrote it; OpenCode resolves a relative one against the
directory it runs in, which the stream does not record, so a relative path is relative to the
repository root. ``@`` and backslashes are part of a name.

A line type OpenCode does not write is drift (``unknown_event``): a renamed ``tool_use`` hides
every call. A ``tool_use`` line without its ``part.callID``, ``part.tool`` or ``part.state``, or
with one of another type, is unreadable and drift (``missing_field``, ``field_type``). OpenCode
names no version in this output.

Completion: a ``step_finish`` whose ``part.reason`` is not ``tool-calls`` (``stop``, ``length``,
...): OpenCode's loop only continues after tool calls, so the run ended there. A ``step_start``
after it reopens the stream. An ``error`` line (the session failed) does not complete it.

A ``tool_use`` line that cannot be read (not UTF-8, cut off, not JSON, a field of the wrong type)
could be the start and the end of the call named in it: when its ``callID`` can be recovered from
the bytes, only that call's evidence is unavailable; otherwise the line stands for a call of its
own that could have read any file. A line whose head names another kind is plain malformed. A
line longer than the scanner holds whole (a large read or command output) is read as it flows,
keeping only the fields used here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import Capability, DriftKind
from coverage_gate.core.calls import MAX_CALLS
from coverage_gate.core.events import (
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
    Returned,
    Shown,
    ToolEnd,
    ToolStart,
    Unreadable,
    UnreadableArguments,
    Unrecognised,
    WriteAction,
)
from coverage_gate.core.presentation import LineCut, Presentation, Transform

from ._decoder import JsonLinesAdapter, JsonLinesDecoder, single_id
from ._json import (
    INT64_MAX,
    OUT_OF_RANGE,
    JsonObject,
    OutOfRange,
    get_int,
    get_obj,
    get_str,
    key,
    opens_object,
)
from ._line_reads import line_read
from ._mutations import apply_patch_paths
from ._returned import returned
from ._shell import shell_action
from ._stream import Spec

__all__ = [
    "ADAPTER",
    "COMPLETED",
    "DEFAULT_READ_LINES",
    "ERROR",
    "MORE_STEPS",
    "NAME",
    "NOT_READ_TEXT_TOOLS",
    "NOT_READ_TOOLS",
    "PATCH_TOOLS",
    "READ_TOOL",
    "SHELL_TOOL",
    "SPEC",
    "TASK_TOOL",
    "TOOL_ERROR",
    "WRITE_TOOLS",
    "OpenCodeDecoder",
]

NAME: Final = "opencode"
READ_TOOL: Final = "read"
TASK_TOOL: Final = "task"
DEFAULT_READ_LINES: Final = 2000  # what read returns when given no limit
TOOL_ERROR: Final = "tool_error"
COMPLETED: Final = "completed"
ERROR: Final = "error"
MORE_STEPS: Final = "tool-calls"  # the only step_finish reason after which OpenCode goes on

_KINDS = frozenset({"step_start", "step_finish", "tool_use", "text", "reasoning", "error"})
# the types of the parts the lines carry
_PART_KINDS = frozenset({"step-start", "step-finish", "tool", "text", "reasoning"})
SHELL_TOOL: Final = "bash"
# what ``bash`` returns for a command that printed nothing (1.18.25 and 1.18.33)
NO_SHELL_OUTPUT: Final = "(no output)"
WRITE_TOOLS: Final = frozenset({"edit", "write", "multiedit", "patch", "apply_patch"})
PATCH_TOOLS: Final = frozenset({"patch", "apply_patch"})
# OpenCode's built-in tools that are not reads, and why
NOT_READ_TOOLS: Final[dict[str, str]] = {
    SHELL_TOOL: "shell: commands are not parsed (a write when it redirects into a file)",
    "grep": "search: matching lines, not a file's text as a read",
    "glob": "file search: names, not contents",
    "list": "directory listing: names, not contents",
    "invalid": "OpenCode's answer to a call of a tool it does not have",
    TASK_TOOL: "sub-agent: its own calls are not in this stream (counted as unattributed)",
    "todowrite": "the agent's todo list",
    "todoread": "the agent's todo list",
    "webfetch": "web: not the repository",
    "websearch": "web: not the repository",
    "codesearch": "web code search: not the repository",
    "lsp": "language server queries: symbols, not a file's text",
    "skill": "loads a skill's instructions",
    "question": "asks the user",
    "batch": "runs other tools, which report their own calls",
    "plan_enter": "switches the agent's mode",
    "plan_exit": "switches the agent's mode",
}
_HEAD = re.compile(rb'\s*\{\s*"type"\s*:\s*"([a-z_]+)"')
_SNIFF_HEAD = re.compile(
    rb'\s*\{\s*"type"\s*:\s*"(?:step_start|step_finish|tool_use|text|reasoning|error)"\s*,'
    rb'\s*"timestamp"\s*:\s*\d+\s*,\s*"sessionID"\s*:'
)
_CALL_ID = re.compile(rb'"callID"\s*:\s*"([^"\\]{1,256})"')
_DISPLAY_KEYS: Final = ("type", "lineStart", "lineEnd", "totalLines")
_INPUT_KEYS: Final = ("filePath", "offset", "limit", "command", "patchText")
_TIME_KEYS: Final = ("start", "end")
# What decoding needs of a line; a line read as it flows keeps only this.
SPEC: Final[Spec] = {
    "type": None,
    "sessionID": None,
    "part": {
        "type": None,
        "tool": None,
        "callID": None,
        "reason": None,
        "text": None,  # the model's own text: a text or reasoning part's
        "state": {
            "status": None,
            "output": None,
            "input": dict.fromkeys(_INPUT_KEYS),
            "metadata": {"display": dict.fromkeys(_DISPLAY_KEYS)},
            "time": dict.fromkeys(_TIME_KEYS),
        },
    },
}


def _action(tool: str, state: JsonObject) -> Action:
    """What a call is: a read for ``read``, a read of files that cannot be told for ``task``,
    nothing for any other tool."""
    if tool == TASK_TOOL:
        return UnreadableArguments(
            detail="task: the sub-agent's own calls are not in this stream; "
            "what it read cannot be told"
        )
    if tool != READ_TOOL:
        return _other_action(tool, state)
    return line_read(state, READ_TOOL, "filePath", cwd=None, default_lines=DEFAULT_READ_LINES)


def _other_action(tool: str, state: JsonObject) -> Action:
    """A tool that is no read: a write (an edit, a patch, a shell command that changes files), a
    known tool, or one OpenCode does not have."""
    given = get_obj(state, "input") or {}
    if tool in PATCH_TOOLS:
        paths = apply_patch_paths(get_str(given, "patchText") or "")
        return WriteAction(path=paths[0] if len(paths) == 1 else None)
    if tool in WRITE_TOOLS:
        return WriteAction(path=get_str(given, "filePath"))
    if tool == SHELL_TOOL:
        return shell_action(get_str(given, "command"))
    return IgnoredAction(known=tool in NOT_READ_TOOLS)


def _returned(state: JsonObject) -> ByteSpan | Shown | OutOfRange | None:
    """What a successful ``read`` reports it returned: its zero-based, end-exclusive line range,
    nothing (a directory listing, no lines), unknown (another kind of result), ``OUT_OF_RANGE``
    when a number of it does not fit 64 bits, or ``None`` when the result does not say."""
    metadata = get_obj(state, "metadata")
    display = get_obj(metadata, "display") if metadata is not None else None
    if display is None:
        return None
    kind = get_str(display, "type")
    if kind == "directory":
        return EMPTY_SHOWN
    if kind != "file":
        return UNKNOWN_SHOWN
    start, end, total = (get_int(display, name) for name in ("lineStart", "lineEnd", "totalLines"))
    if OUT_OF_RANGE in (start, end, total):
        return OUT_OF_RANGE
    if not isinstance(start, int) or not isinstance(end, int) or not isinstance(total, int):
        return None
    if start < 1 or total < 0 or end > INT64_MAX:
        return None
    if end < start or total == 0:
        return EMPTY_SHOWN
    return ByteSpan(offset=start - 1, end=end, total=total)


# Tools whose output is not what they read of the revision: the reviewer's own change, a
# sub-agent's answer (model text)
NOT_READ_TEXT_TOOLS: Final = frozenset(
    {"edit", "write", "patch", "multiedit", TASK_TOOL, "todowrite"}
)
# ``read``'s wrapper: ``<path>P</path>\n<type>file</type>\n<content>\n`` ... ``\n</content>``, the
# lines numbered ``N: ``, and a closing notice: ``(End of file - total N lines)`` or ``(Showing
# lines A-B of T. Use offset=N to continue.)``
_READ_WRAPPER: Final = re.compile(
    r"\A<path>[^\n]*</path>\n<type>(?P<type>[a-z]+)</type>\n<(?:content|entries)>\n(?P<body>.*?)"
    r"(?:\n*\((?:End of file - total \d+ lines|Showing lines [^)]*)\))?"
    r"\n*</(?:content|entries)>\s*\Z",
    re.S,
)


def _said(tool: str, state: JsonObject) -> str | None:
    """The call's arguments as the model wrote them: a shell's command; for a tool this adapter
    does not know, all of them (a path it names is drift when it is in scope)."""
    found = get_obj(state, "input")
    if found is None:
        return None
    if tool == READ_TOOL or tool in WRITE_TOOLS or tool in NOT_READ_TOOLS:
        return get_str(found, "command")
    return json.dumps(found, ensure_ascii=False, default=str)


def _given(tool: str, state: JsonObject) -> Returned | None:
    """What a finished call gave the model: its ``output``, ``read``'s wrapper and line numbers
    taken off (a directory listing is no file's text)."""
    output = get_str(state, "output")
    if not output or tool in NOT_READ_TEXT_TOOLS:
        return None
    if tool == SHELL_TOOL and output == NO_SHELL_OUTPUT:
        return returned("", empty=True)
    if tool != READ_TOOL:
        return returned(output)
    wrapped = _READ_WRAPPER.match(output)
    if wrapped is None:
        return returned(output, placeholder=True)  # not the shape a read's text has
    if wrapped.group("type") != "file":
        return None
    return returned(wrapped.group("body"), numbers=True)


def _picked(obj: JsonObject | None, names: tuple[str, ...]) -> dict[str, object]:
    return {} if obj is None else {name: obj[name] for name in names if name in obj}


def _identity(tool: str, state: JsonObject) -> str:
    """What a finished report says about its call (the fields ``SPEC`` keeps, so a line read
    whole and one read as it flows say the same), to tell the same report sent twice from two
    executions under one id."""
    metadata = get_obj(state, "metadata")
    facts = {
        "tool": tool,
        "status": state.get("status"),
        "input": _picked(get_obj(state, "input"), _INPUT_KEYS),
        "display": _picked(get_obj(metadata, "display") if metadata else None, _DISPLAY_KEYS),
        "time": _picked(get_obj(state, "time"), _TIME_KEYS),
    }
    return json.dumps(facts, sort_keys=True, default=repr)


class OpenCodeDecoder(JsonLinesDecoder):
    """Per-stream state: completion, and what each finished call id reported."""

    spec = SPEC

    def __init__(self) -> None:
        super().__init__()
        self._finished: dict[str, str] = {}  # call id -> what its finished report said

    def _decoded(
        self, obj: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        if isinstance(obj, Malformed):
            return [_unreadable(seen, lineno, obj.detail)]
        kind = get_str(obj, "type")
        if kind is None:
            detail = "field 'type' is missing or not a string"
            if "part" not in obj:
                return [Malformed(line=lineno, detail=detail)]  # a tool call lives in a part
            return [_unnamed(seen, lineno, detail)]
        if kind == "tool_use":
            return self._tool_use(obj, seen, lineno)
        if kind == "step_finish":
            return self._step_finish(obj, lineno)
        if kind == "step_start":
            return self._mark_reopened(lineno)
        if kind in ("text", "reasoning"):
            part = get_obj(obj, "part")
            text = get_str(part, "text") if part is not None else None
            return [ModelText(line=lineno, text=text)] if text else []
        if kind in _KINDS:
            return []
        # a type OpenCode does not write: counted, and drift (a renamed tool_use hides calls)
        return [
            Unrecognised(line=lineno),
            Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=kind),
        ]

    def _step_finish(self, obj: JsonObject, lineno: int) -> list[Event]:
        part = get_obj(obj, "part")
        reason = get_str(part, "reason") if part is not None else None
        if reason is None or reason == MORE_STEPS or self._complete:
            return []
        return self._mark_complete(lineno)

    def _tool_use(self, obj: JsonObject, seen: bytes, lineno: int) -> list[Event]:
        part = get_obj(obj, "part")
        if part is None:
            detail = "field 'part' is missing or not an object"
            return [_unnamed(seen, lineno, detail), _field_drift(obj, "part", lineno)]
        call_id = get_str(part, "callID")
        if call_id is None:
            detail = "field 'part.callID' is missing or not a string"
            return [_unnamed(seen, lineno, detail), _field_drift(part, "part.callID", lineno)]
        ids = (call_id,)
        tool = get_str(part, "tool")
        state = get_obj(part, "state")
        if tool is None or state is None:
            what = "part.tool" if tool is None else "part.state"
            unreadable = Unreadable(
                line=lineno,
                detail=f"field '{what}' is missing or of the wrong type",
                starts=ids,
                ends=ids,
            )
            return [unreadable, _field_drift(part, what, lineno)]
        action = _action(tool, state)
        status = state.get("status")
        if not isinstance(status, str):
            detail = "field 'part.state.status' is not a string"
            drift = _field_drift(state, "part.state.status", lineno)
            if isinstance(action, UnreadableArguments):
                # neither its file nor its outcome
                return [Unreadable(line=lineno, detail=detail, starts=ids, ends=ids), drift]
            start = ToolStart(call_id=call_id, tool=tool, action=action, line=lineno)
            return [start, Unreadable(line=lineno, detail=detail, starts=NO_CALLS, ends=ids), drift]
        start = ToolStart(
            call_id=call_id, tool=tool, action=action, line=lineno, said=_said(tool, state)
        )
        if status not in (COMPLETED, ERROR):
            return [start]  # not finished: a start without its end
        said = _identity(tool, state)
        kept = key(call_id)
        earlier = self._finished.get(kept)
        if earlier == said:
            return []  # the same report again: one call
        if earlier is not None:
            # Another report under the same id: two starts, so the core labels it ambiguous.
            again = UnreadableArguments(detail="call id reported again with another outcome")
            return [ToolStart(call_id=call_id, tool=tool, action=again, line=lineno)]
        if len(self._finished) < MAX_CALLS:
            self._finished[kept] = said
        return [start, *self._end(call_id, tool, status, state, action, lineno)]

    @staticmethod
    def _end(
        call_id: str, tool: str, status: str, state: JsonObject, action: Action, lineno: int
    ) -> list[Event]:
        if status == ERROR:
            return [
                ToolEnd(
                    call_id=call_id, tool=tool, succeeded=False, line=lineno, error_type=TOOL_ERROR
                )
            ]
        given = _given(tool, state)
        if not isinstance(action, ReadAction):
            return [
                ToolEnd(call_id=call_id, tool=tool, succeeded=True, line=lineno, returned=given)
            ]
        returned = _returned(state)
        if isinstance(returned, OutOfRange):
            text = "read result line range out of the 64-bit range"
            return [Unreadable(line=lineno, detail=text, starts=NO_CALLS, ends=(call_id,))]
        if isinstance(returned, ByteSpan):
            shown = Shown.lines(returned.offset + 1, returned.end, returned.total)
            return [
                ToolEnd(
                    call_id=call_id,
                    tool=tool,
                    succeeded=True,
                    line=lineno,
                    result_range=returned,
                    shown=shown,
                    returned=given,
                )
            ]
        return [
            ToolEnd(
                call_id=call_id,
                tool=tool,
                succeeded=True,
                line=lineno,
                shown=returned,
                returned=given,
            )
        ]


def _field_drift(obj: JsonObject, field: str, lineno: int) -> Drift:
    """A field OpenCode always writes gone (``missing_field``), or of another type."""
    kind = DriftKind.MISSING_FIELD if field.rsplit(".", 1)[-1] not in obj else DriftKind.FIELD_TYPE
    return Drift(line=lineno, kind=kind, name=field)


def _unreadable(seen: bytes, lineno: int, detail: str) -> Event:
    """A line that could not be read, with the call it could hold as far as its bytes tell."""
    head = _HEAD.match(seen)
    kind = head.group(1) if head else None
    if not opens_object(seen) or (kind is not None and kind != b"tool_use"):
        # not an object, or a line that carries no tool call
        return Malformed(line=lineno, detail=detail)
    return _unnamed(seen, lineno, detail)


def _unnamed(seen: bytes, lineno: int, detail: str) -> Unreadable:
    """A ``tool_use`` line whose call cannot be read: the start and the end of the call whose id
    the bytes name, or, when none can be told, of a call of its own that could have read any
    file."""
    call_id = single_id(seen, _CALL_ID)
    if call_id is not None:
        return Unreadable(line=lineno, detail=detail, starts=(call_id,), ends=(call_id,))
    unnamed = (f"(unreadable line {lineno})",)
    return Unreadable(line=lineno, detail=detail, starts=unnamed, ends=unnamed)


def _looks_like(obj: JsonObject) -> bool:
    return (
        get_str(obj, "type") in _KINDS
        and isinstance(obj.get("sessionID"), str)
        and isinstance(obj.get("part", obj.get("error")), dict)
    )


PRESENTATION: Final = Presentation(
    lone_cr_breaks=True,
    line_cuts=(LineCut(tool=READ_TOOL, marker="... (line truncated to 2000 chars)", length=2000),),
    transforms=(
        Transform(
            name="read: numbered lines (N: ) inside <path>/<type>/<content> and an end-of-file "
            "line",
            shown_by="opencode-*/read.jsonl",
        ),
        Transform(name="byte-order mark dropped", shown_by="opencode-*/read.jsonl bom.py"),
        Transform(
            name="a lone CR breaks the line (read)", shown_by="opencode-*/read.jsonl lone_cr.txt"
        ),
        Transform(
            name="read: a line over 2,000 characters cut, marked ... (line truncated to 2000 "
            "chars) right after its 2,000th character (in no other tool's output)",
            shown_by="opencode-*/read.jsonl long_line.js",
        ),
        Transform(
            name="a binary file is refused (Cannot read binary file)",
            shown_by="opencode-*/read.jsonl blob.bin",
        ),
    ),
)

ADAPTER: Final = JsonLinesAdapter(
    name=NAME,
    capability=Capability.PER_FILE,
    description=(
        "OpenCode: `opencode run --format json` output; `read` calls are reads (one finished "
        "tool_use line per call)"
    ),
    decoder=OpenCodeDecoder,
    sniff_head=_SNIFF_HEAD,
    looks_like=_looks_like,
    knows=FormatKnowledge(
        client="OpenCode",
        events=_KINDS | _PART_KINDS,
        reads=frozenset({READ_TOOL}),
        not_reads=NOT_READ_TOOLS,
        writes=WRITE_TOOLS,
        fields=(
            "part.callID",
            "part.tool",
            "part.state.status",
            "part.state.output",
            "part.state.metadata.display",
            "part.reason",
        ),
        versions=CHECKED.get(NAME),
        presentation=PRESENTATION,
    ),
)
