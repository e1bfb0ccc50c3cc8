"""The model's own text, in every spelling a shell undoes (DESIGN §6 rule 25). Pure.

What the model wrote into a call never credits a file: a command that prints text the model
already had (``echo``, ``printf``, a heredoc, a ``Write`` then ``cat``) shows the model nothing
of the revision. A line of a call's output is the model's own when it is a line of what the
model wrote into this call or any earlier call of the stream, as written or after what a shell
does to it:

- quoting undone (``'L'``, ``"L"``, ``L\\ M``), commands split at ``;``, ``&&``, ``|``;
- escapes undone, as ``echo -e``, ``printf`` and ``$'...'`` undo them (``\\n`` a line break);
- an argument that is base64 or hex, decoded (``echo BASE64 | base64 -d``, ``xxd -r -p``).

What is left (an encoding not undone here, text the model had from its prompt) is said in the
docs/concepts/trust-model.md.
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
from collections.abc import Iterator
from functools import lru_cache
from typing import Final

__all__ = ["MAX_OWN_LINES", "own_lines"]

#: Lines of the model's own text kept for a stream (the rest are not told apart: their output
#: then credits as any other call's would).
MAX_OWN_LINES: Final = 200_000

_BASE64: Final = re.compile(r"[A-Za-z0-9+/]{8,}={0,2}")
_HEX: Final = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
# what only ``shlex`` itself reads right: double quotes, escapes, comments
_SHLEX_ONLY: Final = ('"', "\\", "#")
# a word: characters other than shlex's white space, quotes and punctuation, and single-quoted
# stretches; or a run of punctuation
_WORD: Final = re.compile(r"(?:[^ \t\r\n'();<>|&]|'[^']*')+|[();<>|&]+")
_ESCAPE: Final = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|[abefnrtv\\'\"])")
_SIMPLE: Final = {
    "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "'": "'", '"': '"',
}  # fmt: skip


def _unescaped(token: str) -> str:
    """``token`` with the escapes ``echo -e``, ``printf`` and ``$'...'`` undo, undone."""

    def one(found: re.Match[str]) -> str:
        code = found.group(1)
        if code[0] == "x":
            return chr(int(code[1:], 16))
        if code[0].isdigit():
            return chr(int(code, 8) & 0xFF)
        return _SIMPLE[code]

    return _ESCAPE.sub(one, token)


def _decoded(token: str) -> str | None:
    """The text an argument that is base64 or hex stands for, when it decodes to text."""
    raw: bytes | None = None
    if _HEX.fullmatch(token):
        raw = bytes.fromhex(token)
    elif _BASE64.fullmatch(token) and len(token) % 4 == 0:
        try:
            raw = base64.b64decode(token, validate=True)
        except (binascii.Error, ValueError):
            raw = None
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _tokens(line: str) -> list[str]:
    """A line's words as ``shlex`` (POSIX, punctuation as words of its own, split at white
    space) makes them; a line without a double quote, a backslash or a ``#`` by one pattern
    (what ``shlex`` does there is only that: single quotes join and come off)."""
    if not any(mark in line for mark in _SHLEX_ONLY):
        if line.count("'") % 2:
            return [line]  # an unclosed quote: the line as it is
        return [word.replace("'", "") for word in _WORD.findall(line)]
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: the line as it is
        return [line]


def own_lines(said: str) -> Iterator[str]:
    """Every line the model's text ``said`` stands for (module notes), as written first."""
    yield from said.split("\n")
    if not any(mark in said for mark in ("'", '"', "\\", "$", ";", "&", "|")) and not (
        _BASE64.search(said) or _HEX.search(said)
    ):
        return  # nothing a shell would undo: the lines as written are all there is
    for line in said.split("\n"):
        for raw in _tokens(line):
            yield from _known_word(raw) if len(raw) <= _KNOWN_WORD_CHARS else _word_lines(raw)


def _word_lines(raw: str) -> tuple[str, ...]:
    """The lines one word of a command stands for: as it is, its escapes undone, and what it
    decodes to."""
    token = raw[1:] if raw.startswith("$") else raw  # ``$'...'``, its quotes off
    found = token.split("\n")
    if "\\" in token:
        found += _unescaped(token).split("\n")
    decoded = _decoded(token)
    if decoded is not None:
        found += decoded.split("\n")
    return tuple(found)


#: A command's short words repeat from call to call (``cat``, ``&&``, a path): each is worked out
#: once, the last ``maxsize`` of them kept (a few MB at most).
_KNOWN_WORD_CHARS: Final = 256
_known_word = lru_cache(maxsize=4096)(_word_lines)
