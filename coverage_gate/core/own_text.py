"""The model's own text, in every spelling a shell undoes (DESIGN §6 rule 25). Pure.

What the model wrote into a call never credits a file: a command that prints text the model
already had (``echo``, ``printf``, a heredoc, a ``Write`` then ``cat``) shows the model nothing
of the revision. A line of a call's output is the model's own when it is a line of what the
model wrote into this call or any earlier call of the stream, as written or after what a shell
does to it:

- quoting undone (``'L'``, ``"L"``, ``L\\ M``), commands split at ``;``, ``&&``, ``|``;
- escapes undone, as ``echo -e``, ``printf`` and ``$'...'`` undo them (``\\n`` a line break);
- an argument that is base64 or hex, decoded (``echo BASE64 | base64 -d``, ``xxd -r -p``);
- a line made of a few pieces of all that text (``OwnPieces``, rule 29), however the command
  put them together: ``python3 -c``, ``awk``, shell variables and their expansions, ``printf``
  halves, a patch prefix.

What is left (an encoding not undone here, text the model had from its prompt) is said in the
docs/concepts/trust-model.md.
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Final

__all__ = ["MAX_OWN_LINES", "MAX_PIECES", "OwnPieces", "own_lines", "piece_count", "pieces_allowed"]

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


#: A line is the model's own when it is made of at most this many pieces of the model's text, or
#: of one piece per ``CHARS_PER_PIECE`` characters of a longer line (DESIGN §6 rule 29).
MAX_PIECES: Final = 4
CHARS_PER_PIECE: Final = 10
#: Characters of the model's text kept to assemble lines from (the rest is not told apart, as
#: with ``MAX_OWN_LINES``: a stated bound, docs/concepts/trust-model.md).
MAX_PIECE_CHARS: Final = 1_000_000
_GRAM: Final = 4  # the length of the substrings the quick test looks up


def pieces_allowed(line: str) -> int:
    """How many pieces of the model's text may make ``line`` for it to be the model's own."""
    return max(MAX_PIECES, len(line) // CHARS_PER_PIECE)


def piece_count(line: str, text: str, limit: int) -> int:
    """The fewest substrings of ``text`` whose concatenation is ``line``, or ``limit + 1`` when
    it takes more (or a character of ``line`` is not in ``text``). The longest piece at each
    place is the best choice: every part of a piece is a piece too."""
    at, pieces, end = 0, 0, len(line)
    while at < end:
        if pieces == limit:
            return limit + 1
        if line[at:] in text:
            return pieces + 1
        low, high = 0, end - at - 1  # line[at:at + low] is in text, line[at:] is not
        while low < high:
            middle = (low + high + 1) // 2
            if line[at : at + middle] in text:
                low = middle
            else:
                high = middle - 1
        if low == 0:
            return limit + 1
        at += low
        pieces += 1
    return pieces


class OwnPieces:
    """The model's text so far, as pieces to assemble a result's lines from (rule 29).

    A line that is a few pieces of what the model wrote before the result came back shows it
    nothing it did not have: ``python3 -c "print('ret' 'urn')"``, a shell variable and its
    expansion (``"${L%#}"``), two ``printf`` halves, a patch's ``+`` before a heredoc's line,
    ``awk 'BEGIN{print "L"}'``. The test is made on what was printed against what the model
    wrote, whatever the command that printed it; what it cannot see is an encoding it does not
    undo (``rev``, a cipher, one character per piece), said in docs/concepts/trust-model.md."""

    def __init__(self) -> None:
        self._known: set[str] = set()
        self._parts: list[str] = []
        self._grams: set[str] = set()
        self._chars = 0
        self._text = ""
        self._stale = False
        self._assembled: set[str] = set()  # lines made of pieces: they stay so as text is added
        self._not: set[str] = set()  # lines not made of pieces of the text as last joined
        self._passed: set[str] = set()  # lines not worth the test (not an in-scope file's)

    def add(self, strings: Iterable[str]) -> None:
        """More of the model's text: each string a line of a call's arguments, as written or
        as a shell undoes it (``own_lines``), in the presentation's keys."""
        for string in strings:
            if string and string not in self._known and self._chars < MAX_PIECE_CHARS:
                self._known.add(string)
                self._parts.append(string)
                self._grams.update(string[at : at + _GRAM] for at in range(len(string) - _GRAM + 1))
                self._chars += len(string) + 1
                self._stale = True

    def __bool__(self) -> bool:
        return bool(self._parts)

    def among(self, lines: Iterable[str], worth: Callable[[str], object]) -> set[str]:
        """Those of ``lines`` that are ``worth`` the test (an in-scope file's informative line)
        and are the model's own, made of pieces of its text."""
        if not self._parts:
            return set()
        if self._stale:
            self._text = "\n".join(self._parts)  # a line holds no line break: no piece spans two
            self._not.clear()
            self._stale = False
        present = set(lines)
        found = present & self._assembled
        for line in present - found - self._not - self._passed:
            if not worth(line):
                self._passed.add(line)
            elif self._made_of_pieces(line):
                self._assembled.add(line)
                found.add(line)
            else:
                self._not.add(line)
        return found

    def _made_of_pieces(self, line: str) -> bool:
        limit = pieces_allowed(line)
        longest = -(-len(line) // limit)  # one of ``limit`` pieces is at least this long
        if longest >= _GRAM:
            # that piece holds a substring of ``_GRAM`` characters at a multiple of ``step``
            step = longest - _GRAM + 1
            grams = self._grams
            if not any(
                line[at : at + _GRAM] in grams for at in range(0, len(line) - _GRAM + 1, step)
            ):
                return False
        return piece_count(line, self._text, limit) <= limit
