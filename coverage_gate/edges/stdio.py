"""The process's standard input and output, as the commands use them.

A command started with stdin or stdout closed (``0<&-``, ``>&-``) finds ``sys.stdin`` or
``sys.stdout`` set to ``None``; a stdout on a full disk or a pipe whose reader left fails when it
is written. Each is the caller's input gone wrong, not a bug: a ``BadInputError`` whose message
names the stream, never a traceback, and never a document silently dropped (click's ``echo``
writes nothing, and says nothing, to a closed stdout).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import BinaryIO, TextIO

from coverage_gate.errors import BadInputError

__all__ = ["discard_stdout", "require_stdout", "stdin_bytes", "write_stdout"]


def stdin_bytes(what: str) -> BinaryIO:
    """Our stdin, as bytes, for reading ``what``; a closed stdin is bad input."""
    stream = sys.stdin
    if stream is None:
        raise BadInputError(f"stdin is closed: cannot read the {what} from '-'")
    return stream.buffer


def require_stdout(what: str) -> None:
    """Fail before any work when ``what`` is to go to stdout and stdout is closed."""
    if sys.stdout is None:
        raise BadInputError(f"stdout is closed: nowhere to write the {what}")


def write_stdout(text: str, what: str) -> None:
    """Write ``text`` (``what``, for the message) to stdout and flush it.

    When stdout cannot take it, the text still buffered is discarded, so the interpreter's own
    flush at exit does not fail a second time with a traceback of its own.
    """
    require_stdout(what)
    stream = sys.stdout
    try:
        stream.write(text)
        stream.flush()
    except OSError as error:
        _discard(stream)
        reason = error.strerror or str(error)
        raise BadInputError(f"stdout: cannot write the {what} ({reason})") from None


def _discard(stream: TextIO) -> None:
    """Point stdout's file descriptor at the null device: whatever is still buffered goes there.

    A stream without a descriptor (an in-memory one) has nothing to flush at exit.
    """
    with contextlib.suppress(OSError, ValueError):
        fileno = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, fileno)
        finally:
            os.close(null)


def discard_stdout() -> None:
    """After a failed write to stdout: drop what is still buffered (see ``_discard``)."""
    if sys.stdout is not None:
        _discard(sys.stdout)
