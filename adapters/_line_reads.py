"""Read tools that take their arguments in an ``input`` object and count in lines.

Claude Code's ``Read {file_path, offset?, limit?}`` and OpenCode's ``read {filePath, offset?,
limit?}`` ask alike: ``offset`` is a 1-based line number, ``limit`` a line count, and without a
``limit`` either tool returns a default number of lines (2000) from ``offset`` or from the first
line. A read with no range at all therefore asks for that many lines from the top, not for the
whole file: it shows the whole file only when the file is no longer (``Shown.asked``: told once the
file's length at the revision is known, and standing as those lines when it is not). What the
result itself reports, when it does, wins over this. Qwen Code's ``read_file`` takes the same
``input`` but counts its ``offset`` from 0 (its module reads the range itself).

Everything here is pure: no I/O.
"""

from __future__ import annotations

from coverage_gate.core.events import (
    EMPTY_SHOWN,
    UNKNOWN_SHOWN,
    ReadAction,
    Shown,
    UnreadableArguments,
)

from ._json import JsonObject, OutOfRange, get_int, get_obj, get_str

__all__ = ["count_argument", "line_read", "read_input"]


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
