"""What a shell command is, for the adapters that see one as a string: a write (it changes files,
``adapters/_mutations.py``), or a tool that is no read; and, when it prints files from their
first line, which files (``whole_printer``).

A plain ``cat`` is ``cat [--] FILE...`` and nothing else: no option, operator, redirection,
expansion, glob, escape or second line (quotes around a name are fine). Its output is the files'
bytes one after the other, so an output that is nothing shows each of them to be empty, which is
how a reviewer sees a file the change emptied (DESIGN §6 rule 24).

A few other commands of one file print it from its first line, so that an output that is the
whole file, or nothing, shows it as a plain ``cat`` would (DESIGN §6 rule 30): those of
``adapters/_line_reads.printed_lines`` whose lines start at the first, such as ``head [-n N] F``,
``sed -n p F``, ``sed -n 1p F``, ``sed -n 1,Np F``, ``tail -n +1 F``, and, each line numbered,
``cat -n F``, ``nl F`` and ``nl -ba F`` (``numbered``: the content check takes the numbers off
before it compares). Anything else prints nothing this module can tell: it stays a tool that is
no read, credited by what its output holds.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from coverage_gate.core.events import Action, IgnoredAction, ShownKind, WriteAction

from ._line_reads import printed_lines
from ._mutations import shell_write

__all__ = ["MAX_PLAIN_CAT_CHARS", "plain_cat", "shell_action", "whole_printer"]

#: A longer command is never a plain ``cat`` (a bound on work).
MAX_PLAIN_CAT_CHARS: Final = 4096
# what a shell would expand, redirect, join or escape: a command holding one is not plain
_NOT_PLAIN: Final = re.compile(r"[$`*?\[\]{}~!#;&|<>()\\\n\r]")


def _words(command: str) -> list[str]:
    """A command's words, when it is one simple command with nothing a shell would expand."""
    if len(command) > MAX_PLAIN_CAT_CHARS or _NOT_PLAIN.search(command) is not None:
        return []
    try:
        return shlex.split(command)
    except ValueError:
        return []


def plain_cat(command: str) -> tuple[str, ...]:
    """The files a plain ``cat`` command prints whole, in order (module notes); none otherwise."""
    words = _words(command)
    if len(words) < 2 or words[0] != "cat":
        return ()
    files = words[2:] if words[1] == "--" else words[1:]
    if not files or any(not word or word.startswith("-") for word in files):
        return ()
    return tuple(files)


def whole_printer(command: str) -> tuple[tuple[str, ...], bool]:
    """The files a command prints from their first line, in order, and whether it numbers
    their lines (module notes); no file otherwise."""
    files = plain_cat(command)
    if files:
        return files, False
    words = _words(command)
    if len(words) < 2 or not words[-1] or words[-1].startswith("-"):
        return (), False
    printed = printed_lines(words[0], words[1:-1])
    if printed is None:
        return (), False
    shown, numbered = printed
    from_the_start = shown.kind is ShownKind.WHOLE or (
        shown.kind is ShownKind.LINES and shown.start == 1
    )
    return ((words[-1],), numbered) if from_the_start else ((), False)


def shell_action(command: str | None, cwd: str | None = None) -> Action:
    """A shell command's action: a write when it changes files, else a known tool that is no
    read, with the files it prints from their first line (``whole_printer``)."""
    if command is None:
        return IgnoredAction()
    write = shell_write(command)
    if write is not None:
        return WriteAction(path=write.path, cwd=cwd)
    files, numbered = whole_printer(command)
    return IgnoredAction(prints=files, numbered=numbered, cwd=cwd)
