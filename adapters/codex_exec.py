"""Codex CLI: ``codex exec --json`` (``codex-exec``).

``codex-exec`` (``codex exec --json``): ``item.started``/``item.completed`` of ``command_execution``
(and ``mcp_tool_call``) items are calls, paired by ``item.id`` and counted, with the same success
rule as ``codex-rollout``'s (``adapters/codex_rollout.py``). The path of a read exists only inside
the command string, which is never parsed; what a command printed is its ``aggregated_output``, and
that is evidence by content (DESIGN §6 rule 17), at best unknown (rule 26):
``aggregated_output`` holds a command's whole output, while the model may set its own output
budget per call (``exec_command``'s ``max_output_tokens``) and received a cut of it that this
file does not show. A file whose revision text (or pinned-diff hunks) appears there is therefore
unknown, never verified; one no output shows stays unsupported (``EXEC_KEPT_BYTES`` is 0:
nothing is surely seen). The session rollout of the same thread holds what the model received:
record it as ``codex-rollout`` where it can be had. A line that cannot be read and names an item
could have been any command's end: its evidence is unknown.
Completion: ``turn.completed``; a ``turn.started`` after it reopens the stream.

Drift and mutations (DESIGN §6 rules 19-20): ``adapters/_codex.py``, shared with
``codex-rollout``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

import msgspec

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import Capability
from coverage_gate.core.events import (
    ANY_CALL,
    NO_CALLS,
    Action,
    Event,
    FormatKnowledge,
    IgnoredAction,
    Malformed,
    Returned,
    ToolEnd,
    ToolStart,
    Unreadable,
    Unrecognised,
    WriteAction,
)

from ._codex import COMMAND_FAILED, command_succeeded, field_drift, odd_outcome_field, unknown_event
from ._decoder import JsonLinesAdapter, JsonLinesDecoder
from ._json import JsonObject, get_list, get_obj, get_str, key, objects
from ._mutations import shell_write
from ._returned import returned
from ._stream import Items, Spec

__all__ = [
    "EXEC",
    "EXEC_ADAPTER",
    "EXEC_KEPT_BYTES",
    "EXEC_KNOWS",
    "EXEC_SPEC",
    "CodexExecDecoder",
]


EXEC: Final = "codex-exec"

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

#: What surely reached the model of a command's output, at each end: nothing, since the model
#: may set its own budget per call (20 tokens, about 160 bytes, in a real run) and this file
#: does not say it (DESIGN §6 rule 26).
EXEC_KEPT_BYTES: Final = 0


class CodexExecDecoder(JsonLinesDecoder):
    """``codex exec --json``: calls are counted; what they printed is evidence by content."""

    spec = EXEC_SPEC

    def _decoded(
        self, obj: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        del whole
        if isinstance(obj, Malformed):
            if b'"item' in seen:  # it could have been any command's end
                return [Unreadable(line=lineno, detail=obj.detail, starts=ANY_CALL, ends=ANY_CALL)]
            return [obj]
        kind = get_str(obj, "type")
        if kind is None:
            drift = field_drift(obj, "type", "type", lineno)
            return [drift, Malformed(line=lineno, detail="field 'type' is missing or not a string")]
        if kind in ("item.started", "item.completed"):
            return self._item(obj, kind, lineno)
        if kind == "turn.completed":
            return self._mark_complete(lineno)
        if kind == "turn.started":
            return self._mark_reopened(lineno)
        if kind in _EXEC_KINDS:
            return []
        return [Unrecognised(line=lineno), unknown_event(kind, lineno)]

    def _item(self, obj: JsonObject, kind: str, lineno: int) -> list[Event]:
        starting = kind == "item.started"
        item = get_obj(obj, "item")
        if item is None:  # it could start or end any call
            detail = "field 'item' is missing or not an object"
            ids = ANY_CALL if starting else NO_CALLS
            return [
                field_drift(obj, "item", "item", lineno),
                Unreadable(
                    line=lineno, detail=detail, starts=ids, ends=NO_CALLS if starting else ANY_CALL
                ),
            ]
        item_type = get_str(item, "type")
        if item_type is None:
            detail = "field 'item.type' is missing or not a string"
            return [
                field_drift(item, "type", "item.type", lineno),
                Unreadable(
                    line=lineno,
                    detail=detail,
                    starts=ANY_CALL if starting else NO_CALLS,
                    ends=NO_CALLS if starting else ANY_CALL,
                ),
            ]
        if item_type not in _EXEC_TOOL_ITEMS:
            return [] if item_type in _EXEC_ITEMS else [unknown_event(f"item/{item_type}", lineno)]
        call_id = get_str(item, "id")
        if call_id is None:
            detail = "field 'item.id' is missing or not a string"
            return [
                field_drift(item, "id", "item.id", lineno),
                Unreadable(
                    line=lineno,
                    detail=detail,
                    starts=ANY_CALL if starting else NO_CALLS,
                    ends=NO_CALLS if starting else ANY_CALL,
                ),
            ]
        tool = _exec_tool(item, item_type)
        if starting:
            return [
                ToolStart(
                    call_id=call_id,
                    tool=tool,
                    action=_exec_action(item, item_type),
                    line=lineno,
                    said=_said(item),
                )
            ]
        given = None
        if item_type == "command_execution":
            # a completed command without an exit code is a failure here, as it always was
            odd, odd_field = odd_outcome_field(item)
            if odd is not None and (odd_field == "status" or item.get("exit_code") is not None):
                return [
                    field_drift(item, odd_field, f"item.{odd_field}", lineno),
                    Unreadable(line=lineno, detail=odd, starts=NO_CALLS, ends=(call_id,)),
                ]
            succeeded = command_succeeded(item)
            given = _exec_output(item) if succeeded else None
        else:
            succeeded = get_str(item, "status") == "completed" and item.get("error") is None
        error = None if succeeded else COMMAND_FAILED
        return [
            ToolEnd(
                call_id=call_id,
                tool=tool,
                succeeded=succeeded,
                line=lineno,
                error_type=error,
                returned=given,
            )
        ]


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
    """What a command printed, as ``codex exec --json`` keeps it: never surely seen by the model
    (module notes)."""
    output = get_str(item, "aggregated_output")
    if not output:
        return None
    return msgspec.structs.replace(returned(output), kept=EXEC_KEPT_BYTES, own=False)


def _looks_like_exec(obj: JsonObject) -> bool:
    return get_str(obj, "type") in _EXEC_KINDS - {"error"}


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
    trust=(
        "Codex's own stdout, which no command of the run writes; it cannot show what the model",
        "received, so a file its commands name or its outputs show is unknown at best",
        "record takes the thread's rollout in its place only when it is the one regular file",
        "for the thread (no link, no second candidate), its session_meta names the thread, it",
        "tells this stream's story (the same commands in order, each output this one's or",
        "Codex's cut of it), and the run's sandbox let no command write it (read-only, or",
        "CODEX_HOME outside every writable root); otherwise its claims are unknown, for",
        "rollout_missing, rollout_rejected or rollout_writable, said in the note",
    ),
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
