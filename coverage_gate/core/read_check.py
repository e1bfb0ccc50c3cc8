"""The read check (DESIGN §6 rules 16, 23-24). Pure.

A read names its file and the range it claims to show. What it returned, as the model received
it with the client's wrapping taken off (``Returned``), is compared with that file at the
revision over that range, **in the client's declared presentation**
(``coverage_gate.core.presentation``): both sides are brought to the client's form and compared
line by line, a whole text that is the whole file by one string comparison first.

- ``matched``: every line is the revision's. What the read showed is then told by the text, not
  by the stream's own report of it: a size the stream reports (``totalLines``, ``total=``) never
  makes a read whole unless the revision's file ends where the text does. A whole read of a file
  that is empty at the revision (nothing came back, or the client's placeholder for nothing)
  shows it.
- ``mismatch``: positive evidence of other content: a line differs where the text is in a
  presentation the adapter recognised as its client's own (numbered lines, a client's wrapper:
  ``Returned.recognised``), whatever its line count, or where the rest of the text aligns with
  the file (an alignment, so lines inserted or removed, as in an older text, still align). The
  read is no evidence for that file, and the first line that differs is kept.
- ``unchecked``: the text is not carried, was cut, is a client placeholder, the file at the
  revision cannot be had, or too little of the text aligns with the file to say what it is
  (a presentation not known: its ``first_difference`` is kept so that the caller can count it,
  and call it a mismatch when the stream itself wrote the file). Rules 1-14 decide, as before.

U+FFFD matches only where the revision's bytes are not UTF-8, at that place; a line the client
shortened matches only when the read's own tool cuts lines and the line ends with its marker
right after its cut length (DESIGN §6 rule 28).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

import msgspec

from coverage_gate.contracts.enums import ContentCheck
from coverage_gate.core.events import Returned, Shown, ShownKind
from coverage_gate.core.presentation import (
    BASELINE,
    LineCut,
    Presentation,
    cut_at,
    line_keys,
    rendered,
    text_lines,
    utf16_units,
)

__all__ = [
    "MAX_ALIGNED_LINES",
    "UNCHECKED",
    "FileText",
    "ReadCheck",
    "check_read",
    "file_lines",
    "text_lines",
]


def file_lines(data: bytes) -> list[str]:
    """A file's lines as a client shows them: UTF-8, undecodable bytes as U+FFFD."""
    return text_lines(data.decode("utf-8", "replace"))


class FileText:
    """A file at the revision in one client's presentation (``core.presentation``): each line's
    key, the keys of its legacy decodings where its bytes are not UTF-8, and, where the client
    breaks lines at a lone CR, which line of the file each presented line is."""

    __slots__ = ("alternates", "keys", "lines", "origin", "presentation", "raw_lines", "text")

    def __init__(self, data: bytes, presentation: Presentation, *, lone_cr: bool = False) -> None:
        self.presentation = presentation
        utf8 = True
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            utf8 = False
            text = data.decode("utf-8", "replace")
        lines = text_lines(text)
        self.raw_lines = len(lines)
        self.origin: list[int] | None = None
        breaks = _line_breaks(presentation, text, lone_cr=lone_cr)
        if breaks is not None:
            split: list[str] = []
            origin: list[int] = []
            for number, line in enumerate(lines, 1):
                parts = breaks.split(line)
                split.extend(parts)
                origin.extend([number] * len(parts))
            lines, self.origin = split, origin
        self.text = text
        self.lines = lines  # as presented, before keys (the same list when keys are the lines)
        self.keys = presentation.keys(lines, text)
        self.alternates: dict[int, list[str]] = {}
        if not utf8 and presentation.legacy and self.origin is None:
            raw = data.split(b"\n")
            for index, raw_line in enumerate(raw[: len(lines)]):
                try:
                    raw_line.decode("utf-8")
                except UnicodeDecodeError:
                    self.alternates[index] = line_keys(presentation, raw_line.rstrip(b"\r"))[1:]
        if presentation.terminal_breaks and "\r" in text:
            for index, line in enumerate(lines):
                if "\r" in line:  # a CR inside it: also as a terminal renders it
                    self.alternates.setdefault(index, []).append(presentation.key(rendered(line)))

    def __len__(self) -> int:
        return len(self.keys)

    def same(self, shown: str, number: int, cut: LineCut | None = None) -> bool:
        """Whether ``shown`` (a key) is presented line ``number`` (1-based); ``cut``: how the
        tool that returned it cuts a long line, when it does."""
        if shown == self.keys[number - 1]:
            return True
        alternates = self.alternates.get(number - 1)
        if alternates is not None and shown in alternates:
            return True
        return cut is not None and cut_at(self.presentation, cut, shown, self.keys[number - 1])

    def kept(self, shown: str, number: int, cut: LineCut) -> int | None:
        """When ``shown`` (a key) is presented line ``number`` only as ``cut``'s cut of it: the
        characters the cut kept; ``None`` when it is the whole line."""
        if shown == self.keys[number - 1] or shown in self.alternates.get(number - 1, ()):
            return None
        kept = cut.kept(shown)
        if kept is None:
            return None
        line = self.lines[number - 1]
        if line is self.keys[number - 1] or line == self.keys[number - 1]:
            return len(kept)
        # the key is another text (blanks folded, escapes gone): the line's own characters up
        # to where its key reaches what the cut kept, so that the rest is what was not shown
        key = self.presentation.key
        low, high = 0, len(line)
        while low < high:
            middle = (low + high) // 2
            if len(key(line[:middle])) >= len(kept):
                high = middle
            else:
                low = middle + 1
        return low

    def chars_in_units(self, number: int, units: int) -> int:
        """How many of line ``number``'s own characters a cut at ``units`` UTF-16 units of its
        key keeps (the client's units are the key's; depth counts the line's characters)."""
        line, key = self.lines[number - 1], self.keys[number - 1]
        if line.isascii() and (line is key or line == key):
            return min(units, len(line))
        low, high = 0, len(line)
        while low < high:  # the longest start whose key is within the units
            middle = (low + high + 1) // 2
            if utf16_units(self.presentation.key(line[:middle])) <= units:
                low = middle
            else:
                high = middle - 1
        return low

    def file_line(self, number: int) -> int:
        """The file's own line number of presented line ``number``."""
        return number if self.origin is None else self.origin[number - 1]


def _line_breaks(presentation: Presentation, text: str, *, lone_cr: bool) -> re.Pattern[str] | None:
    """Where this client breaks a file's lines besides LF (a lone CR, a form feed or a
    vertical tab), when the text holds one."""
    found = ""
    if lone_cr and "\r" in text:
        found += "\r"
    if presentation.terminal_breaks and ("\f" in text or "\v" in text):
        found += "\f\v"
    return re.compile(f"[{re.escape(found)}]") if found else None


class ReadCheck(msgspec.Struct, frozen=True):
    check: ContentCheck
    first_difference: int | None = None
    shown: Shown | None = None
    # lines the client cut with its own marker: (the file's line, characters kept)
    cuts: tuple[tuple[int, int], ...] = ()


UNCHECKED = ReadCheck(ContentCheck.UNCHECKED)


def check_read(
    returned: Returned,
    data: bytes | None,
    asked: Shown | None,
    presentation: Presentation = BASELINE,
    text: FileText | None = None,
    cut: LineCut | None = None,
) -> ReadCheck:
    """Whether ``returned`` is the file ``data`` over the range it claims, in the client's
    ``presentation`` (module notes).

    ``asked``: the range the call's request or end reports (lines), used for where the text
    starts when the presentation does not say; ``text``: ``data`` as a ``FileText`` already
    made (a file read many times is decoded once); ``cut``: how the tool that returned the
    text cuts a long line, when it does (``Presentation.cut_of``)."""
    if returned.placeholder or returned.cut or data is None or not returned.text:
        return _without_text(returned, data, asked)
    if returned.byte_offset is not None:
        return _check_bytes(returned, data)
    lines = text or FileText(data, presentation, lone_cr=presentation.lone_cr_breaks)
    start = returned.first_line
    if start is None and asked is not None and asked.start < 0:
        start = max(len(lines) + asked.start + 1, 1)  # the last lines (``tail -n N``)
    if start is None:
        start = asked.start if asked is not None and asked.start > 0 else 1
    if start == 1 and returned.text in (lines.text, lines.text.rstrip("\n")) and lines.keys:
        # the whole file as it is, compared at memory speed before any line is looked at
        return ReadCheck(ContentCheck.MATCHED, shown=Shown.whole(lines.raw_lines))
    shown = presentation.keys(presentation.lines(returned.text), returned.text)
    cuts: list[tuple[int, int]] = []
    if start < 1 or shown != lines.keys[start - 1 : start - 1 + len(shown)]:
        # some line is not the revision's key itself (when every one is, one list comparison
        # at memory speed says so): line by line, through the presentation's alternates and cuts
        found = _line_by_line(lines, shown, start, cut, recognised=returned.recognised)
        if isinstance(found, ReadCheck):
            return found
        cuts = found
    end = min(start + len(shown) - 1, len(lines))
    if end < start:
        return UNCHECKED
    first, last = lines.file_line(start), lines.file_line(end)
    if start == 1 and end == len(lines):
        whole = Shown.whole(lines.raw_lines)
        return ReadCheck(ContentCheck.MATCHED, shown=whole, cuts=tuple(cuts))
    ranged = Shown.lines(first, last, lines.raw_lines)
    return ReadCheck(ContentCheck.MATCHED, shown=ranged, cuts=tuple(cuts))


def _line_by_line(
    lines: FileText, shown: list[str], start: int, cut: LineCut | None, *, recognised: bool
) -> ReadCheck | list[tuple[int, int]]:
    """Each line of ``shown`` against the file's from ``start``: where one differs, what that
    says (``_differs``); else the lines the tool cut with its own marker (``cut``)."""
    cuts: list[tuple[int, int]] = []
    for index, line in enumerate(shown):
        number = start + index
        if number > len(lines):
            if all(not rest for rest in shown[index:]):
                break  # the empty "line" after a final newline, as some clients count it
            return _differs(lines, shown, number, recognised=recognised)
        if not lines.same(line, number, cut):
            return _differs(lines, shown, number, recognised=recognised)
        if cut is not None and (kept := lines.kept(line, number, cut)) is not None:
            cuts.append((lines.file_line(number), kept))
    return cuts


def _without_text(returned: Returned, data: bytes | None, asked: Shown | None) -> ReadCheck:
    """A read with no text to compare: a whole read of a file that is empty at the revision
    shows it (nothing came back, or the client's placeholder for nothing); of any other file,
    nothing can be told."""
    if data != b"" or returned.cut:
        return UNCHECKED
    if returned.placeholder and not returned.empty:
        return UNCHECKED
    if returned.empty or asked is None or asked.kind is ShownKind.WHOLE:
        return ReadCheck(ContentCheck.MATCHED, shown=Shown.whole(0))
    return UNCHECKED


#: Lines of a text that differs from its file aligned with the file to tell another content
#: from an unknown presentation; a longer text is judged by its first difference alone.
MAX_ALIGNED_LINES = 5000


def _differs(lines: FileText, shown: list[str], number: int, *, recognised: bool) -> ReadCheck:
    """A line differs from the file's at ``number``: positive evidence of other content where
    the text is in a presentation the adapter recognised as its client's own (``recognised``:
    numbered lines, a client's wrapper), whatever its line count, or where the rest of the text
    aligns with the file (DESIGN §6 rule 24), lines inserted or removed (an older text)
    included. Any other text of which too little is the file's says nothing of what it is (a
    presentation not known, a notice): unchecked, never a mismatch."""
    where = lines.file_line(min(number, len(lines)) or 1) if len(lines) else 1
    if recognised:
        return ReadCheck(ContentCheck.MISMATCH, where)
    informative = [line for line in shown if line.strip()]
    if not informative:
        return UNCHECKED
    if len(shown) + len(lines) > 2 * MAX_ALIGNED_LINES:
        aligned = sum(
            1
            for index, line in enumerate(shown[: max(number - 1, 0)])
            if line.strip() and lines.same(line, index + 1)
        )
    else:
        matcher = SequenceMatcher(None, shown, lines.keys, autojunk=False)
        aligned = sum(
            1
            for block in matcher.get_matching_blocks()
            for line in shown[block.a : block.a + block.size]
            if line.strip()
        )
    if 2 * aligned < len(informative):
        # not the file, nor evidently other content: unchecked, with where it differs (a file
        # the stream itself wrote is other content by that alone: ``CallChecker``)
        return ReadCheck(ContentCheck.UNCHECKED, first_difference=where)
    return ReadCheck(ContentCheck.MISMATCH, where)


def _check_bytes(returned: Returned, data: bytes) -> ReadCheck:
    """A byte-ranged read: its text must be the file's bytes from its offset on."""
    offset = returned.byte_offset or 0
    got = returned.text.encode("utf-8", "surrogatepass")
    want = data[offset : offset + len(got)]
    if got == want or got == want.decode("utf-8", "replace").encode("utf-8"):
        # the bytes it showed, of the file's own size: told in lines with the file, as before
        return ReadCheck(
            ContentCheck.MATCHED, shown=Shown.bytes(offset, offset + len(want), len(data))
        )
    # the first line that differs, counted in the file
    same = 0
    for a, b in zip(got, want, strict=False):
        if a != b:
            break
        same += 1
    return ReadCheck(ContentCheck.MISMATCH, data.count(b"\n", 0, offset + same) + 1)
