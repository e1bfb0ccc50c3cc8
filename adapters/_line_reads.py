"""Read tools that take their arguments in an ``input`` object and count in lines.

Claude Code's ``Read {file_path, offset?, limit?}`` and OpenCode's ``read {filePath, offset?,
limit?}`` ask alike: ``offset`` is a 1-based line number, ``limit`` a line count, and without a
``limit`` either tool returns a default number of lines (2000) from ``offset`` or from the first
line. A read with no range at all therefore asks for that many lines from the top, not for the
whole file: it shows the whole file only when the file is no longer (``Shown.asked``: told once the
file's length at the revision is known, and standing as those lines when it is not). What the
result itself reports, when it does, wins over this. Qwen Code's ``read_file`` takes the same
``input`` but counts its ``offset`` from 0 (its module reads the range itself).

Commands that print lines of one file (``printed_lines``), for every adapter that sees a command
as words: ``cat [-n|--] F``, ``nl [-ba|-b a] F`` (these two number the lines), ``sed -n p F``,
``sed -n Np F``, ``sed -n N,Mp F``, ``sed -n N,$p F``, and ``head``/``tail`` with ``-n N``,
``-nN``, ``-N``, ``--lines=N`` or no count (10 lines), ``tail`` also ``-n +K`` (from line K).

Everything here is pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from coverage_gate.core.events import (
    EMPTY_SHOWN,
    UNKNOWN_SHOWN,
    ReadAction,
    Shown,
    UnreadableArguments,
)

from ._json import JsonObject, OutOfRange, get_int, get_obj, get_str

__all__ = ["DEFAULT_HEAD_LINES", "count_argument", "line_read", "printed_lines", "read_input"]

_SED_PRINT: Final = re.compile(r"([1-9]\d*)(?:,([1-9]\d*|\$))?p")
_COUNT: Final = re.compile(r"\d{1,9}")
#: What ``head`` and ``tail`` print without a count.
DEFAULT_HEAD_LINES: Final = 10
# the options of ``cat`` and ``nl`` that print the whole file, each with whether it numbers lines
_WHOLE: Final = {
    ("cat",): False,
    ("cat", "--"): False,
    ("cat", "-n"): True,
    ("nl",): True,
    ("nl", "-ba"): True,
    ("nl", "-b", "a"): True,
    ("sed", "-n", "p"): False,
}


def printed_lines(tool: str, options: Sequence[str]) -> tuple[Shown, bool] | None:
    """Which lines of its one file ``tool options... FILE`` prints (module notes), and whether
    it numbers them; ``None`` for a command not recognised."""
    numbered = _WHOLE.get((tool, *options))
    if numbered is not None:
        return Shown.whole(), numbered
    if tool == "sed" and len(options) == 2 and options[0] == "-n":
        match = _SED_PRINT.fullmatch(options[1])
        if match is None:
            return None
        first, last = int(match.group(1)), match.group(2)
        if last is None:
            return Shown.lines(first, first), False
        return Shown.lines(first, None if last == "$" else max(first, int(last))), False
    if tool not in ("head", "tail"):
        return None
    count = _line_count(options, tool)
    if count is None:
        return None
    number, from_line = count
    if from_line:
        return Shown.lines(max(number, 1), None), False
    if number == 0:
        return EMPTY_SHOWN, False
    return (Shown.lines(1, number) if tool == "head" else Shown.lines(-number, None)), False


def _line_count(words: Sequence[str], tool: str) -> tuple[int, bool] | None:
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


def count_argument(arguments: JsonObject, name: str) -> int | OutOfRange | None:
    """A non-negative integer argument; ``OUT_OF_RANGE`` past the 64-bit range; anything else is
    left out (the result's own line range, when reported, is what is recorded)."""
    value = get_int(arguments, name)
    if isinstance(value, OutOfRange):
        return value
    return value if value is not None and value >= 0 else None


def read_input(
    holder: JsonObject, tool: str, path_key: str
) -> tuple[str, JsonObject] | UnreadableArguments:
    """The path a read tool's ``input`` names, and that ``input``; or why they cannot be read."""
    arguments = get_obj(holder, "input")
    if arguments is None:
        return UnreadableArguments(detail=f"{tool} input is missing or not an object")
    path = get_str(arguments, path_key)
    if path is None:
        return UnreadableArguments(detail=f"{tool} input has no string '{path_key}'")
    return path, arguments


def line_read(
    holder: JsonObject, tool: str, path_key: str, *, cwd: str | None, default_lines: int
) -> ReadAction | UnreadableArguments:
    """A read of the file ``input`` names, of the lines its 1-based ``offset`` and ``limit`` ask
    for (``default_lines`` from ``offset`` when there is no ``limit``)."""
    found = read_input(holder, tool, path_key)
    if isinstance(found, UnreadableArguments):
        return found
    path, arguments = found
    offset, limit = count_argument(arguments, "offset"), count_argument(arguments, "limit")
    if isinstance(offset, OutOfRange) or isinstance(limit, OutOfRange):
        # The file is clear, the range is not: a read of that file whose lines cannot be told.
        return ReadAction(path=path, cwd=cwd, shown=UNKNOWN_SHOWN)
    return ReadAction(
        path=path,
        offset=None if offset is None else max(offset - 1, 0),
        limit=limit,
        cwd=cwd,
        shown=_asked(offset, limit, default_lines),
    )


def _asked(offset: int | None, limit: int | None, default_lines: int) -> Shown:
    """The lines a read asks for (``offset`` is a 1-based line number)."""
    if offset is None and limit is None:
        # the tool's default from the top: the whole file only if it is no longer (module notes)
        return Shown.asked(1, default_lines)
    first = max(offset or 1, 1)
    count = default_lines if limit is None else limit
    return Shown.lines(first, first + count - 1) if count else EMPTY_SHOWN
