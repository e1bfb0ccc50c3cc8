"""A shell command as Codex's rollout records it (``adapters/codex_rollout.py``): what its
``CommandExecution`` record makes of the call (a write, its parsed reads, an ignored or an
unknown tool's call), which lines each read showed, what of the record is drift, and what the
text the model got of its output says. No decoding state: the rollout's decoder holds the
calls and their records.

Which lines a read showed (DESIGN §6 rule 11): Codex's parser keeps no line range (``sed -n
'1,60p' f`` and ``head -n 5 f`` are plain ``read`` entries), so the entry's own ``cmd`` text is
read, and only for an entry the harness already classified as a read of that file. Exactly
the shapes ``adapters/_line_reads.printed_lines`` recognises, with the entry's ``path`` as their
one file operand (the last lines of ``tail`` told with the file's length, from its content at
the revision). Anything else (a
pipe, a redirection, other options or operands, another spelling of the path) is a read of an
unknown range: its depth is unknown, never whole. A command that succeeded with an empty
``aggregated_output`` returned nothing: its reads are not evidence.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Final

import msgspec

from coverage_gate.contracts.enums import DriftKind
from coverage_gate.core.events import (
    EMPTY_SHOWN,
    UNKNOWN_SHOWN,
    Action,
    Drift,
    Event,
    IgnoredAction,
    ReadAction,
    Returned,
    Shown,
    ToolEnd,
    ToolStart,
    UnplacedRead,
    UnreadableArguments,
    WriteAction,
)

from ._codex import field_drift, odd_outcome_field, unknown_event
from ._codex_known import COMMAND_TOOLS, PARSED_TYPES
from ._json import JsonObject, get_list, get_str, objects
from ._line_reads import printed_lines
from ._mutations import ShellWrite, apply_patch_paths, argv_write, shell_write
from ._returned import returned

__all__ = [
    "KNOWN_TOOL",
    "command_actions",
    "lines_unknown",
    "model_got_a_cut_output",
    "model_text",
    "parsed_damage",
    "patch_write",
    "record_drift",
    "shown_by_command",
    "with_text",
]


# How Codex opens the text it gives the model for a command whose output it cut (its head and
# tail kept, the middle replaced by "…N chars truncated…"), after the header ending "Output:".
_CUT_NOTICE: Final = "Warning: truncated output (original token count: "
_OUTPUT_HEADER_END: Final = "Output:\n"


def model_got_a_cut_output(output: object) -> bool:
    """Whether a command's ``function_call_output`` (the text the model got) says Codex cut it."""
    if not isinstance(output, str):
        return False  # not text: it says nothing of a cut
    header, found, body = output.partition(_OUTPUT_HEADER_END)
    if found and (header == "" or header.endswith("\n")):
        return body.startswith(_CUT_NOTICE)
    return output.startswith(_CUT_NOTICE)


def model_text(output: object) -> Returned | None:
    """The text a command's ``function_call_output`` gave the model: after its header's
    ``Output:`` line, the cut notice taken off (the text is then cut: a head and a tail)."""
    if not isinstance(output, str):
        return None
    header, found, body = output.partition(_OUTPUT_HEADER_END)
    text = body if found and (header == "" or header.endswith("\n")) else output
    cut = text.startswith(_CUT_NOTICE)
    if cut:
        text = text[text.find("\n") + 1 :] if "\n" in text else ""
    if not text and (cut or not found):
        return None
    if not text:
        # the header says the command printed nothing: the model got nothing, which a whole
        # read of a file that is empty at the revision shows (DESIGN §6 rule 24)
        return returned("", empty=True)
    given = returned(text, command_numbers=True)
    return msgspec.structs.replace(given, cut=True) if cut else given


def with_text(events: list[Event], given: Returned | None) -> list[Event]:
    """A command's ends with what it gave the model: one read's own text; a command that read
    several files (or none) gave one output for all, credited by content alone. A command that
    failed gave the model its output all the same (DESIGN §6 rule 25)."""
    if given is None:
        return events
    ends = [i for i, event in enumerate(events) if isinstance(event, ToolEnd)]
    if not ends:
        return events
    reads = [e for e in events if isinstance(e, ToolStart) and isinstance(e.action, ReadAction)]
    own = given if len(reads) == 1 else msgspec.structs.replace(given, own=False)
    out = list(events)
    end = out[ends[0]]
    assert isinstance(end, ToolEnd)  # noqa: S101 - picked as one above
    out[ends[0]] = msgspec.structs.replace(end, returned=own)
    return out


def lines_unknown(event: Event) -> Event:
    """A successful read's end, once the output the model got was cut: which lines it showed
    cannot be told (a read's lines are one range; the model got a head and a tail)."""
    if isinstance(event, ToolEnd) and event.succeeded and event.shown is not EMPTY_SHOWN:
        return msgspec.structs.replace(event, shown=UNKNOWN_SHOWN)
    return event


def shown_by_command(command: str | None, path: str) -> Shown:
    """Which lines of ``path`` a command the harness parsed as a read of it shows (module notes:
    the recognised shapes). Anything else: an unknown range."""
    try:
        words = shlex.split(command or "")
    except ValueError:
        return UNKNOWN_SHOWN
    if len(words) < 2 or words[-1] != path:
        return UNKNOWN_SHOWN
    printed = printed_lines(words[0], words[1:-1])
    return UNKNOWN_SHOWN if printed is None else printed[0]


def parsed_damage(item: JsonObject) -> tuple[str, str] | None:
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
    return list(dict.fromkeys(kind for kind in found if kind and kind not in PARSED_TYPES))


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


def command_actions(
    item: JsonObject, tool: str, cwd: str | None, damage: tuple[str, str] | None
) -> list[Action]:
    """What a command the harness recorded is: a write (never also a read), an unknown tool's
    call (judged by what it returned), a read of files that cannot be told (its ``parsed_cmd``
    damaged: ``damage``), or its parsed reads (none: an ignored command)."""
    write = _command_write(item)
    if write is not None:
        return [WriteAction(path=write.path, cwd=cwd)]
    if tool not in COMMAND_TOOLS:
        return [IgnoredAction(known=False)]
    if damage is not None:
        return [UnplacedRead(detail=f"its record could not be read: {damage[0]}")]
    return _read_actions(get_list(item, "parsed_cmd"), cwd) or [KNOWN_TOOL]


def record_drift(item: JsonObject, lineno: int) -> list[Event]:
    """What of a ``CommandExecution`` record the adapter does not understand: ``parsed_cmd``
    entry types Codex is not known to write (drift ``unknown_event``: the harness, not the
    model, chose them, and a read may hide under one), an outcome or a ``parsed_cmd`` of a type
    the format never uses (``field_type``), a ``parsed_cmd`` gone (``missing_field``)."""
    drift: list[Event] = [
        unknown_event(f"parsed_cmd/{kind}", lineno)
        for kind in _unknown_parsed(get_list(item, "parsed_cmd"))
    ]
    odd, odd_field = odd_outcome_field(item)
    if odd is not None:
        drift.append(field_drift(item, odd_field, f"payload.item.{odd_field}", lineno))
    damage = parsed_damage(item)
    if damage is not None:
        gone = damage[1] == "parsed_cmd" and "parsed_cmd" not in item
        kind = DriftKind.MISSING_FIELD if gone else DriftKind.FIELD_TYPE
        drift.append(Drift(line=lineno, kind=kind, name=f"payload.item.{damage[1]}"))
    return drift


def patch_write(text: object, cwd: str | None) -> WriteAction:
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
            actions.append(UnreadableArguments(detail="parsed read has no string 'path'"))
        else:
            shown = shown_by_command(get_str(entry, "cmd"), path)
            actions.append(ReadAction(path=path, cwd=cwd, shown=shown))
    return actions


KNOWN_TOOL: Final = IgnoredAction()
