"""pi RPC mode (``pi --mode rpc``): ``tool_execution_start``/``tool_execution_end`` events.

Which tools count: ``cr_read {path, offset, limit}`` and the built-in ``read {path, offset,
limit}`` are reads (ranged when offset or limit is given; ``cr_read`` offsets are bytes, ``read``
offsets are lines); ``cr_diff {offset, limit}`` is a page of the pinned diff. Every other tool is
ignored and counted. Both read tools drop one leading ``@`` from a path (a file mention), so for
this format, and only here, ``@x`` is read as ``x`` (``@@x`` as the file ``@x``).

Success needs an explicit success: the end's top-level ``isError`` is ``false`` and
``result.isError`` is absent or ``false`` (pi reports a tool that *returns* an error with top-level
``isError:false`` and ``result.isError:true``); any other value (``"true"``, ``1``, ``null``) is a
failure.

Completion: ``agent_end`` or ``agent_settled``. pi emits ``agent_end`` before an auto-retry, so an
``agent_start`` after it reopens the stream; completion is judged at the end of the stream.

Lines are judged from their head: pi writes ``{"type":...`` first, so only tool execution events
are decoded whole. A line whose head does not name its type is decoded whole (bounded by the
scanner's line limit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from coverage_gate.events import (
    Action,
    ByteSpan,
    DiffPageAction,
    Event,
    IgnoredAction,
    LineClass,
    Malformed,
    ReadAction,
    StreamComplete,
    StreamReopened,
    ToolEnd,
    ToolStart,
    UnreadableArguments,
    Unrecognised,
)
from coverage_gate.model import Capability

NAME = "pi-rpc"
READ_TOOLS = frozenset({"cr_read", "read"})
DIFF_TOOLS = frozenset({"cr_diff"})
RANGE_HEADER_TOOLS = frozenset({"cr_read", "cr_diff"})

_TYPE_AT_HEAD = re.compile(rb'\s*\{\s*"type"\s*:\s*"([A-Za-z0-9_]+)"')
_CR_RANGE = re.compile(r"^\[cr-range offset=(\d+) end=(\d+) total=(\d+)")

_TOOL_EVENTS = frozenset({"tool_execution_start", "tool_execution_end"})
_DONE = frozenset({"agent_end", "agent_settled"})
_KNOWN_SKIPPED = frozenset(
    {
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
    """``None`` for absent, the int for a non-negative int, else an error text."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"not a non-negative integer: {value!r}"
    return value


def action_for(tool: str, args: object) -> Action:
    if tool not in READ_TOOLS and tool not in DIFF_TOOLS:
        return IgnoredAction()
    if not isinstance(args, Mapping):
        return UnreadableArguments(f"{tool} arguments are not an object")
    offset = _int_or_none(args.get("offset"))
    limit = _int_or_none(args.get("limit"))
    if isinstance(offset, str) or isinstance(limit, str):
        return UnreadableArguments(
            f"{tool} offset/limit {offset if isinstance(offset, str) else limit}"
        )
    if tool in DIFF_TOOLS:
        return DiffPageAction(offset=offset, limit=limit)
    path = args.get("path")
    if not isinstance(path, str):
        return UnreadableArguments(f"{tool} has no string 'path' argument")
    # Both pi's own read and the cr_read review tool drop one leading "@" (a file mention).
    return ReadAction(path=path, offset=offset, limit=limit, mention=True)


def result_range(result: object) -> ByteSpan | None:
    """The ``[cr-range offset=.. end=.. total=..]`` header of a cr_* tool result, if present."""
    if not isinstance(result, Mapping):
        return None
    content = result.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], Mapping):
        return None
    text = content[0].get("text")
    if not isinstance(text, str):
        return None
    match = _CR_RANGE.match(text)
    if match is None:
        return None
    offset, end, total = (int(group) for group in match.groups())
    return ByteSpan(offset, end, total)


def _end_outcome(obj: Mapping[str, object]) -> tuple[bool, str | None]:
    top = obj.get("isError")
    result = obj.get("result")
    inner = result.get("isError", False) if isinstance(result, Mapping) else False
    if top is True:
        return False, "tool_error"
    if inner is not False:
        return False, "result_error"
    if top is not False:
        return False, "no_explicit_success"
    return True, None


def _prefixes(kinds: frozenset[str]) -> tuple[bytes, ...]:
    """How pi (compact) and re-serialised captures (``": "``) start lines of these kinds."""
    return tuple(f'{{"type"{sep}"{kind}"'.encode() for kind in sorted(kinds) for sep in (":", ": "))


class PiRpcDecoder:
    skip_prefixes = _prefixes(_KNOWN_SKIPPED)

    def __init__(self) -> None:
        self._done = False

    def classify(self, head: bytes) -> LineClass:
        match = _TYPE_AT_HEAD.match(head)
        if match is None:
            return LineClass.PARSE if head.strip() else LineClass.SKIP
        kind = match.group(1).decode("ascii")
        if kind in _TOOL_EVENTS:
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
                return [Malformed(lineno, f"{kind} line is cut off")]
            self._done = True
            return [StreamComplete(lineno)]
        if kind == "agent_start":
            if self._done:
                self._done = False
                return [StreamReopened(lineno)]
            return []
        if kind in _KNOWN_SKIPPED:
            return []
        return [Unrecognised(lineno)]

    def decode(self, line: bytes, lineno: int) -> Sequence[Event]:
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as error:
            return [Malformed(lineno, f"not JSON: {str(error)[:120]}")]
        if not isinstance(obj, dict):
            return [Malformed(lineno, "not a JSON object")]
        kind = obj.get("type")
        if not isinstance(kind, str):
            return [Malformed(lineno, "no string 'type' field")]
        if kind == "tool_execution_start":
            return self._start(obj, lineno)
        if kind == "tool_execution_end":
            return self._end(obj, lineno)
        return self._by_type(kind, lineno, intact=True)

    def _ids(self, obj: Mapping[str, object], lineno: int) -> tuple[str, str] | Malformed:
        call_id, tool = obj.get("toolCallId"), obj.get("toolName")
        if not isinstance(call_id, str) or not call_id:
            return Malformed(lineno, f"{obj.get('type')} without a string 'toolCallId'")
        if not isinstance(tool, str) or not tool:
            return Malformed(lineno, f"{obj.get('type')} without a string 'toolName'")
        return call_id, tool

    def _start(self, obj: Mapping[str, object], lineno: int) -> Sequence[Event]:
        ids = self._ids(obj, lineno)
        if isinstance(ids, Malformed):
            return [ids]
        call_id, tool = ids
        return [ToolStart(call_id, tool, action_for(tool, obj.get("args")), lineno)]

    def _end(self, obj: Mapping[str, object], lineno: int) -> Sequence[Event]:
        ids = self._ids(obj, lineno)
        if isinstance(ids, Malformed):
            return [ids]
        call_id, tool = ids
        succeeded, error_type = _end_outcome(obj)
        span = result_range(obj.get("result")) if succeeded and tool in RANGE_HEADER_TOOLS else None
        return [ToolEnd(call_id, tool, succeeded, lineno, error_type, span)]

    def finish(self) -> Sequence[Event]:
        return []


class PiRpcAdapter:
    name = NAME
    capability = Capability.PER_FILE
    description = "pi --mode rpc event stream (cr_read, cr_diff, read)"

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
