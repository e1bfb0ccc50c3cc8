"""What a call returned as the model received it, with the client's presentation stripped:
the shared pieces adapters build ``Returned`` from (DESIGN §6 rules 16-17).

Each client dresses what a tool returned before the model sees it: Claude Code numbers a read's
lines (``12\\t`` or, in older versions, ``    12→``) and appends ``<system-reminder>`` blocks;
pi puts a ``[cr-range ...]`` header over a ranged ``cr_read`` and a ``[Showing lines ...]``
notice under a cut ``read``. Stripping follows the client's own words only: a text that does
not have the shape is passed on as it is, and a text the line reader had to shorten (its
``…[+N bytes, blake2b H]`` marker) is passed on as cut.
"""

from __future__ import annotations

import re
from typing import Final

from coverage_gate.core.events import Returned

__all__ = ["numbered", "reader_cut", "returned", "without_reminders"]

_READER_CUT: Final = re.compile(r"\u2026\[\+\d+ bytes, blake2b [0-9a-f]{32}\]\Z")
_OPEN, _CLOSE = "<system-reminder>", "</system-reminder>"
# ``12\tline`` (Claude Code 2.x, ``cat -n``), ``    12→line`` (Claude Code 1.x) or ``12: line``
# (OpenCode)
_NUMBERED: Final = re.compile(r"\A *(\d{1,12})(?:\t|\u2192|: )")


def reader_cut(text: str) -> tuple[str, bool]:
    """``text`` without the marker the line reader puts on a string it shortened; whether it
    was shortened (then its last line may be partial, and is dropped)."""
    found = _READER_CUT.search(text)
    if found is None:
        return text, False
    kept = text[: found.start()]
    return kept[: kept.rfind("\n") + 1], True


def without_reminders(text: str) -> str:
    """``text`` without the ``<system-reminder>`` blocks a client appends for the model: only
    blocks that end the text (after everything else), each starting a line, are the client's;
    one anywhere else is part of what the tool returned (a file may hold that text, and in a
    numbered text a file's own line starts with its number)."""
    end = len(text.rstrip())
    cut = None
    while end > 0 and text.endswith(_CLOSE, 0, end):
        opening = text.rfind(_OPEN, 0, end)
        if opening < 0 or text.find(_CLOSE, opening, end - len(_CLOSE)) >= 0:
            break
        if opening > 0 and text[opening - 1] != "\n":
            break
        cut = opening
        end = len(text[:opening].rstrip())
    if cut is None:
        return text
    kept = text[:cut].rstrip("\n")
    return kept + "\n" if kept else ""


def numbered(text: str) -> tuple[str, int | None]:
    """Lines that each carry their number, consecutive, as the prefix a client or ``cat -n``
    gives them: the text without the numbers and the first number; else the text unchanged."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return text, None
    out: list[str] = []
    first: int | None = None
    for index, line in enumerate(lines):
        match = _NUMBERED.match(line)
        if match is None:
            return text, None
        number = int(match.group(1))
        if first is None:
            first = number
        elif number != first + index:
            return text, None
        out.append(line[match.end() :])
    return "\n".join(out) + "\n", first


def returned(
    text: str,
    *,
    numbers: bool = False,
    command_numbers: bool = False,
    byte_offset: int | None = None,
    placeholder: bool = False,
    empty: bool = False,
    shortened: bool = False,
) -> Returned:
    """A ``Returned`` from a result's text: the reader's cut and line-number prefixes taken off.
    ``numbers``: the client numbers the tool's lines (Claude Code's ``Read``), so a text numbered
    so is in a presentation it recognises (``Returned.recognised``); ``command_numbers``: the
    command may have numbered them (``nl -ba``), which says nothing of whose text it is.
    ``empty``: a placeholder that says the result was empty."""
    text, cut = reader_cut(text)
    first = None
    if numbers or command_numbers:
        text, first = numbered(text)
    return Returned(
        text=text,
        first_line=first,
        byte_offset=byte_offset,
        cut=cut,
        placeholder=placeholder or empty,
        empty=empty,
        shortened=shortened,
        recognised=numbers and first is not None,
    )
