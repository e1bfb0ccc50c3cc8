"""What a shell command is, for the adapters that see one as a string: a write (it changes files,
``adapters/_mutations.py``), or a tool that is no read; and, when it is a plain ``cat`` of files,
which files it prints whole.

A plain ``cat`` is ``cat [--] FILE...`` and nothing else: no option, operator, redirection,
expansion, glob, escape or second line (quotes around a name are fine). Its output is the files'
bytes one after the other, so an output that is nothing shows each of them to be empty, which is
how a reviewer sees a file the change emptied (DESIGN §6 rule 24). Anything else prints nothing
this module can tell: it stays a tool that is no read, credited by what its output holds.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from coverage_gate.core.events import Action, IgnoredAction, WriteAction

from ._mutations import shell_write

__all__ = ["MAX_PLAIN_CAT_CHARS", "plain_cat", "shell_action"]

#: A longer command is never a plain ``cat`` (a bound on work).
MAX_PLAIN_CAT_CHARS: Final = 4096
# what a shell would expand, redirect, join or escape: a command holding one is not plain
_NOT_PLAIN: Final = re.compile(r"[$`*?\[\]{}~!#;&|<>()\\\n\r]")


def plain_cat(command: str) -> tuple[str, ...]:
    """The files a plain ``cat`` command prints whole, in order (module notes); none otherwise."""
    if len(command) > MAX_PLAIN_CAT_CHARS or _NOT_PLAIN.search(command) is not None:
        return ()
    try:
        words = shlex.split(command)
    except ValueError:
        return ()
    if len(words) < 2 or words[0] != "cat":
        return ()
    files = words[2:] if words[1] == "--" else words[1:]
    if not files or any(not word or word.startswith("-") for word in files):
        return ()
    return tuple(files)


def shell_action(command: str | None, cwd: str | None = None) -> Action:
    """A shell command's action: a write when it changes files, else a known tool that is no
    read, with the files it prints whole when it is a plain ``cat``."""
    if command is None:
        return IgnoredAction()
    write = shell_write(command)
    if write is not None:
        return WriteAction(path=write.path, cwd=cwd)
    return IgnoredAction(prints=plain_cat(command), cwd=cwd)
