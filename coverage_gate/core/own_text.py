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
#: Lines whose pieces are counted and kept (past it, counted again from the start).
MAX_WAITS: Final = 1_000_000  # lines told apart by substrings, times the substrings they lack
MAX_COUNTED_LINES: Final = 100_000


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
        low = _longest_from(line, at, text, 0, end - at - 1)
        if low == 0:
            return limit + 1
        at += low
        pieces += 1
    return pieces


def _longest_from(line: str, at: int, text: str, low: int, high: int) -> int:
    """The longest piece of ``text`` that ``line`` holds at ``at``, between ``low`` characters
    (known to be one) and ``high``: a part of a piece is a piece, so the lengths that are form
    a range from 0, searched by halves."""
    while low < high:
        middle = (low + high + 1) // 2
        if line[at : at + middle] in text:
            low = middle
        else:
            high = middle - 1
    return low


class OwnPieces:
    """The model's text so far, as pieces to assemble a result's lines from (rule 29).

    A line that is a few pieces of what the model wrote before the result came back shows it
    nothing it did not have: ``python3 -c "print('ret' 'urn')"``, a shell variable and its
    expansion (``"${L%#}"``), two ``printf`` halves, a patch's ``+`` before a heredoc's line,
    ``awk 'BEGIN{print "L"}'``. The test is made on what was printed against what the model
    wrote, whatever the command that printed it; what it cannot see is an encoding it does not
    undo (``rev``, a cipher, one character per piece), said in docs/concepts/trust-model.md.

    Most lines are told apart by the text's substrings of ``_GRAM`` characters alone: a
    character no such substring of the line covers lies in a piece shorter than that, so a line
    with too many of them takes too many pieces. That test depends on those substrings only, so
    its answer stands until the text brings new ones (a stream that repeats its commands asks
    once per line); the exact count (``piece_count``) is made for the rest, again when the text
    grows."""

    def __init__(self) -> None:
        self._known: set[str] = set()
        self._parts: list[str] = []
        self._grams: set[str] = set()
        self._letters: set[str] = set()  # the characters of the text
        self._chars = 0
        self._text = ""
        self._text_stale = False
        self._assembled: set[str] = set()  # lines made of pieces: they stay so as text is added
        self._too_few_grams: set[str] = set()  # not made of pieces, by the substrings' test
        # each substring such a line lacks, with the lines that wait for it: the test can
        # change its answer only when the text brings one of them
        self._waiting: dict[str, set[str]] = {}
        self._waits = 0
        self._too_many_pieces: set[str] = set()  # not made of pieces of the text as last joined
        self._passed: set[str] = set()  # lines not worth the test (not informative)
        # per line the substrings' test let through: how much of the text it was matched with,
        # and the longest piece of that text starting at each of its places
        self._longest: dict[str, tuple[int, list[int]]] = {}

    def add(self, strings: Iterable[str]) -> None:
        """More of the model's text: each string a line of a call's arguments, as written or
        as a shell undoes it (``own_lines``), in the presentation's keys."""
        grams = self._grams
        for string in strings:
            if string and string not in self._known and self._chars < MAX_PIECE_CHARS:
                self._known.add(string)
                self._parts.append(string)
                letters = set(string) - self._letters
                if letters:
                    self._letters |= letters
                    self._arrived(letters)
                fresh = {string[at : at + _GRAM] for at in range(len(string) - _GRAM + 1)}
                fresh -= grams
                if fresh:
                    grams |= fresh
                    self._arrived(fresh)
                self._chars += len(string) + 1
                self._text_stale = True

    def _arrived(self, fresh: set[str]) -> None:
        """New characters or substrings of the text: the lines that waited for one of them are
        tested again."""
        waiting = self._waiting
        for gram in fresh & waiting.keys():
            self._too_few_grams -= waiting.pop(gram)

    def __bool__(self) -> bool:
        return bool(self._parts)

    def among(self, lines: Iterable[str], worth: Callable[[str], object]) -> set[str]:
        """Those of ``lines`` (an in-scope file's, the caller knows) that are ``worth`` the test
        (informative) and are the model's own, made of pieces of its text."""
        if not self._parts:
            return set()
        if self._text_stale:
            self._text = "\n".join(self._parts)  # a line holds no line break: no piece spans two
            self._too_many_pieces.clear()
            self._text_stale = False
        present = lines if isinstance(lines, set) else set(lines)
        found = present & self._assembled
        todo = present - found - self._too_few_grams - self._too_many_pieces - self._passed
        for line in todo:
            if not worth(line):
                self._passed.add(line)
                continue
            limit = pieces_allowed(line)
            lacking = self._grams_lacking(line, limit)
            if lacking is not None:
                self._wait(line, lacking)
            elif self._pieces_in(line, limit) <= limit:
                self._assembled.add(line)
                found.add(line)
            else:
                self._too_many_pieces.add(line)
        return found

    def _pieces_in(self, line: str, limit: int) -> int:
        """``piece_count`` of ``line`` in the text, ``limit + 1`` for more, matched only with
        the text added since the line was last counted: a piece lies in one string of the
        text, so the longest at a place is the longest in the old text or in the new one, and
        taking the longest at each place is the best choice."""
        text = self._text
        done, longest = self._longest.get(line, (0, [0] * len(line)))
        if done < len(text):
            new = text[done:]
            end = len(line)
            for at in range(end):
                low = longest[at]
                if at + low < end and line[at : at + low + 1] in new:
                    longest[at] = _longest_from(line, at, new, low + 1, end - at)
            if len(self._longest) >= MAX_COUNTED_LINES:
                self._longest.clear()
            self._longest[line] = (len(text), longest)
        at, pieces = 0, 0
        while at < len(line):
            if pieces == limit or not longest[at]:
                return limit + 1
            at += longest[at]
            pieces += 1
        return pieces

    def _wait(self, line: str, lacking: list[str]) -> None:
        """``line`` is not made of pieces until the text brings one of the substrings it is
        ``lacking`` (kept for ``MAX_WAITS`` of them; past that, every line is tested again)."""
        if self._waits + len(lacking) > MAX_WAITS:
            self._waiting.clear()
            self._too_few_grams.clear()
            self._waits = 0
        self._too_few_grams.add(line)
        self._waits += len(lacking)
        waiting = self._waiting
        for gram in lacking:
            found = waiting.get(gram)
            if found is None:
                waiting[gram] = {line}
            else:
                found.add(line)

    def _no_long_piece(self, line: str, run: int) -> list[str]:
        """Empty when ``line`` holds ``run`` substrings of ``_GRAM`` characters in a row that
        the text holds, as a piece of the length that makes them does. Otherwise those the text
        lacks of which one must come first: such a row holds one at a multiple of ``run``, so
        they are the ones there it lacks, and the ends of the rows around the ones it holds."""
        has = self._grams.__contains__
        last = len(line) - _GRAM  # the last place a substring starts
        lacking: list[str] = []
        for at in range(0, last + 1, run):
            if not has(line[at : at + _GRAM]):
                lacking.append(line[at : at + _GRAM])
                continue
            start = end = at
            while start > 0 and end - start + 1 < run and has(line[start - 1 : start - 1 + _GRAM]):
                start -= 1
            while end < last and end - start + 1 < run and has(line[end + 1 : end + 1 + _GRAM]):
                end += 1
            if end - start + 1 >= run:
                return []
            if start > 0:
                lacking.append(line[start - 1 : start - 1 + _GRAM])
            if end < last:
                lacking.append(line[end + 1 : end + 1 + _GRAM])
        return lacking

    def _grams_lacking(self, line: str, limit: int) -> list[str] | None:
        """``None`` when ``line`` may be ``limit`` pieces of the text. Otherwise characters or
        substrings of ``_GRAM`` characters of it the text lacks, one of which it must bring
        before the line may be: a character of it the text has nowhere (one of them, since it
        needs them all); one a long piece would
        hold; or, since the characters none of the text's such
        substrings covers lie in pieces shorter than that and each new one covers at most
        ``_GRAM`` more, all of the lacking ones but as many as it takes, less one."""
        unknown = set(line) - self._letters
        if unknown:  # it needs them all: waiting for one of them is enough
            return [min(unknown)]
        grams = self._grams
        longest = -(-len(line) // limit)  # one of ``limit`` pieces is at least this long
        if longest >= _GRAM:
            lacking = self._no_long_piece(line, longest - _GRAM + 1)
            if lacking:
                return lacking
        held = [line[at : at + _GRAM] for at in range(len(line) - _GRAM + 1)]
        hits = list(map(grams.__contains__, held))
        covered, until = 0, 0
        for at, hit in enumerate(hits):
            if hit:
                covered += min(_GRAM, at + _GRAM - until)
                until = at + _GRAM
        bare = len(line) - covered
        if -(-bare // (_GRAM - 1)) <= limit:
            return None
        # it takes this many new substrings, so one of all but that many less one will come
        needed = -(-(bare - (_GRAM - 1) * limit) // _GRAM)
        missing = [gram for gram, hit in zip(held, hits, strict=True) if not hit]
        return missing[: len(missing) - needed + 1]
