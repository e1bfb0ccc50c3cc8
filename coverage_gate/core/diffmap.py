"""The pinned unified diff, parsed once: per-file byte sections, hunks and changed lines.

``cr_diff`` pages through one fixed diff by byte offset, and a depth measure needs each file's
changed lines; both come from this one parse, so what a page showed and what a file changed can
never disagree.

What the parse records, per file section (a ``diff --git`` header to the next one; a diff without
any, plain ``diff -u`` output, is split at each ``---``/``+++`` pair outside a hunk):

- its bytes ``[start, end)`` and where its header lines end (``body``): ``diff --git``, ``index``,
  ``---``, ``+++``, mode, rename, copy and similarity lines show nothing of the file's content;
- its hunks, each ``@@ -a,b +c,d @@`` with the byte range it spans. A hunk's lines are counted
  off against its header's counts, so a deleted line that reads ``--- x`` or an added ``+++ y`` is
  never taken for the next file's header; a hunk cut short ends at the first line that cannot
  belong to it;
- its diff lines: context, added and deleted, each with its *visible* bytes in the diff (after
  its ``+``/``-``/`` `` marker, without its line terminator; the marker itself for an empty line),
  and a new-side line number. ``\\ No newline at end of file`` lines are not lines of the file;
  ``\\r\\n`` terminators (CRLF files) are terminators, not content.

New-side numbers: context and added lines carry their line number in the file at the revision.
A deleted line has none; it is *anchored* to the new-side line that took its place: the first
new-side line after it in its hunk, or, when none follows in the hunk (a deletion at the end of
the file, or a zero-context hunk), the last new-side line before it. A deletion with neither (the
file was emptied or deleted) has anchor 0: only a diff page can show it. A read shows a deleted
line when it shows that line's anchor.

A page shows a diff line when it returned at least one of the line's visible bytes. A page shows
a *file* (earns it a diff-page credit) when it shows at least one of its context, added or deleted
lines; a page that held only a file's header lines, or only a ``@@`` line, showed nothing of it.
A section without hunks: a binary file (``Binary files ... differ``, ``GIT binary patch``) or a
combined diff is shown by any byte after its header, and its changed lines cannot be told; a
rename, mode change or empty file has no body at all and is shown by a page that holds the whole
section.

Paths: ``+++`` names the file (``---`` for a deleted file, the ``diff --git`` header when neither
names one), C-quoted paths (``"a/caf\\303\\251.txt"``) are unquoted, and the ``a/``/``b/`` prefixes
dropped. Lines are split at ``\\n`` only.
"""

from __future__ import annotations

import bisect
import codecs
import re
from array import array
from dataclasses import dataclass, field
from enum import Enum

__all__ = ["DiffIndex", "FileDiff", "Hunk", "LineKind"]

_HUNK = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_HEADER_PREFIXES = (
    b"index ",
    b"--- ",
    b"+++ ",
    b"old mode ",
    b"new mode ",
    b"deleted file mode ",
    b"new file mode ",
    b"similarity index ",
    b"dissimilarity index ",
    b"rename from ",
    b"rename to ",
    b"copy from ",
    b"copy to ",
)
_BINARY_PREFIXES = (b"Binary files ", b"GIT binary patch")


class LineKind(Enum):
    CONTEXT = " "
    ADDED = "+"
    DELETED = "-"


@dataclass(frozen=True, slots=True)
class Hunk:
    start: int  # byte offset of its ``@@`` line
    end: int
    new_start: int
    new_count: int
    first: int  # index of its first diff line in the file's line arrays
    last: int  # one past its last


def _ints() -> array[int]:
    return array("q")


@dataclass(slots=True)
class FileDiff:
    """One file's section of the diff. Line arrays are parallel, in diff order (compact arrays:
    a large diff costs a few dozen bytes per line)."""

    path: str
    start: int
    end: int
    body: int
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)
    visible_start: array[int] = field(default_factory=_ints)
    visible_end: array[int] = field(default_factory=_ints)
    kinds: list[LineKind] = field(default_factory=list)
    numbers: array[int] = field(default_factory=_ints)  # new-side number, or a deletion's anchor
    hunk_of: array[int] = field(default_factory=_ints)
    changed: array[int] = field(default_factory=_ints)  # indices of added and deleted lines
    change_of: array[int] = field(default_factory=_ints)  # per line: its index in changed, or -1
    # numbers (or anchors) of the changed lines, sorted, and which changed line each is (``None``:
    # already in diff order, as hunks in order always are)
    _sorted_numbers: array[int] = field(default_factory=_ints)
    _order: list[int] | None = None

    @property
    def lines_known(self) -> bool:
        """Whether its changed lines can be told (not binary, not a combined diff)."""
        return not self.binary

    def changed_between(self, first: int, last: int) -> range:
        """Positions (by number) of the changed lines whose number or anchor is in
        ``[first, last]``; ``changed_at`` tells which changed line each is."""
        low = bisect.bisect_left(self._sorted_numbers, first)
        high = bisect.bisect_right(self._sorted_numbers, last)
        return range(low, high)

    def changed_at(self, position: int) -> int:
        """The index into ``changed`` of the ``position``-th changed line by number."""
        return position if self._order is None else self._order[position]

    def lines_overlapping(self, start: int, end: int) -> range:
        """Indices of the diff lines whose visible bytes share a byte with ``[start, end)``."""
        if end <= start:
            return range(0)
        low = bisect.bisect_right(self.visible_end, start)
        high = bisect.bisect_left(self.visible_start, end)
        return range(low, max(low, high))

    def shown_by(self, start: int, end: int) -> bool:
        """Whether a page ``[start, end)`` showed anything of this file (see the module notes)."""
        if end <= self.start or start >= self.end:
            return False
        if self.hunks:
            return len(self.lines_overlapping(start, end)) > 0
        if self.body < self.end:
            return start < self.end and end > self.body
        return start <= self.start and end >= self.end


def _unquote(path: bytes) -> str:
    """Git quotes unusual paths C-style (``"a/caf\\303\\251.txt"``)."""
    if len(path) >= 2 and path[:1] == b'"' and path[-1:] == b'"':
        inner = codecs.escape_decode(path[1:-1])[0]
        assert isinstance(inner, bytes)  # noqa: S101 - escape_decode always returns bytes
        path = inner
    return path.decode("utf-8", "surrogateescape")


def _strip_prefix(path: str) -> str:
    for prefix in ("a/", "b/"):
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


def _path_from_header(header: bytes) -> str | None:
    """``diff --git a/X b/Y`` → ``Y`` (only used when no ``---``/``+++`` lines name the file)."""
    rest = header[len(b"diff --git ") :].rstrip(b"\r\n")
    if rest.startswith(b'"'):
        close = rest.find(b'"', 1)
        rest = rest[close + 2 :] if close > 0 else rest
    else:
        mark = rest.rfind(b" b/")
        rest = rest[mark + 1 :] if mark >= 0 else rest
    return _strip_prefix(_unquote(rest)) if rest else None


def _file_name(line: bytes) -> bytes:
    return line[4:].rstrip(b"\r\n").split(b"\t")[0]


class _Builder:
    """Builds one file's section as its lines go by."""

    def __init__(self, start: int, first_line: bytes) -> None:
        self.start = start
        self.first_line = first_line
        self.old: bytes | None = None
        self.new: bytes | None = None
        self.body: int | None = None
        self.binary = False
        self.hunks: list[Hunk] = []
        self.visible_start = _ints()
        self.visible_end = _ints()
        self.kinds: list[LineKind] = []
        self.numbers = _ints()
        self.hunk_of = _ints()

    def header_line(self, line: bytes, offset: int) -> None:
        if line.startswith(b"--- ") and self.old is None:
            self.old = _file_name(line)
        elif line.startswith(b"+++ ") and self.new is None:
            self.new = _file_name(line)
        elif line.startswith(_BINARY_PREFIXES) or not line.startswith(_HEADER_PREFIXES):
            self.mark_body(offset)
            if line.startswith(_BINARY_PREFIXES):
                self.binary = True

    def mark_body(self, offset: int) -> None:
        if self.body is None:
            self.body = offset

    def path(self) -> str | None:
        for candidate in (self.new, self.old):
            if candidate and candidate != b"/dev/null":
                return _strip_prefix(_unquote(candidate))
        if self.first_line.startswith(b"diff --git "):
            return _path_from_header(self.first_line)
        return None

    def build(self, end: int) -> FileDiff | None:
        path = self.path()
        if path is None:
            return None
        result = FileDiff(
            path=path,
            start=self.start,
            end=end,
            body=self.body if self.body is not None else end,
            binary=self.binary or self.first_line.startswith(b"diff --cc "),
            hunks=self.hunks,
            visible_start=self.visible_start,
            visible_end=self.visible_end,
            kinds=self.kinds,
            numbers=self.numbers,
            hunk_of=self.hunk_of,
        )
        _anchor_deletions(result)
        return result


def _anchor_deletions(diff: FileDiff) -> None:
    """Give each deleted line its anchor (module notes), then index changed lines by number."""
    for hunk in diff.hunks:
        following = 0  # the next new-side number after the current position, 0 = none
        for index in range(hunk.last - 1, hunk.first - 1, -1):
            if diff.kinds[index] is LineKind.DELETED:
                before = diff.numbers[index]  # new-side lines before it, set while parsing
                diff.numbers[index] = following or before
            else:
                following = diff.numbers[index]
    context = LineKind.CONTEXT
    diff.changed = array("q", (i for i, kind in enumerate(diff.kinds) if kind is not context))
    diff.change_of = array("q", [-1]) * len(diff.kinds)
    numbers = array("q")
    for n, i in enumerate(diff.changed):
        diff.change_of[i] = n
        numbers.append(diff.numbers[i])
    if all(numbers[k] <= numbers[k + 1] for k in range(len(numbers) - 1)):
        diff._sorted_numbers = numbers
    else:  # hunks out of order (a hand-made diff): index them by number
        diff._order = sorted(range(len(numbers)), key=numbers.__getitem__)
        diff._sorted_numbers = array("q", (numbers[n] for n in diff._order))


class DiffIndex:
    """The files of one unified diff, in diff order, by path."""

    def __init__(self, files: list[FileDiff], total: int, data: bytes = b"") -> None:
        self.files = files
        self.total = total
        self.data = data  # the diff itself: what a shell's `git diff` output is compared with
        self._starts = [entry.start for entry in files]
        self._by_path: dict[str, FileDiff] = {}
        for entry in files:
            self._by_path.setdefault(entry.path, entry)

    @classmethod
    def parse(cls, diff: bytes) -> DiffIndex:
        lines = diff.split(b"\n")  # without their newline: each is len + 1 bytes of the diff
        if lines and not lines[-1]:
            lines.pop()
        git = any(line.startswith(b"diff --git ") for line in lines)
        files: list[FileDiff] = []
        current: _Builder | None = None
        offset = 0
        index = 0
        while index < len(lines):
            line = lines[index]
            if _starts_section(lines, index, git):
                if current is not None and (built := current.build(offset)) is not None:
                    files.append(built)
                current = _Builder(offset, line)
            elif current is not None:
                match = _HUNK.match(line)
                if match is not None:
                    index, offset = _read_hunk(current, lines, index, offset, match)
                    continue
                current.header_line(line, offset)
            offset += len(line) + 1
            index += 1
        if current is not None and (built := current.build(len(diff))) is not None:
            files.append(built)
        return cls(files, len(diff), diff)

    def file(self, path: str) -> FileDiff | None:
        return self._by_path.get(path)

    def __contains__(self, path: object) -> bool:
        return path in self._by_path

    def files_shown(self, offset: int, end: int) -> list[FileDiff]:
        """Files a page ``[offset, end)`` showed something of (module notes)."""
        if end <= offset:
            return []
        first = max(bisect.bisect_right(self._starts, offset) - 1, 0)
        found: list[FileDiff] = []
        for entry in self.files[first:]:
            if entry.start >= end:
                break
            if entry.shown_by(offset, end):
                found.append(entry)
        return found

    @property
    def paths(self) -> list[str]:
        return sorted(self._by_path)


def _starts_section(lines: list[bytes], index: int, git: bool) -> bool:
    line = lines[index]
    if git:
        return line.startswith((b"diff --git ", b"diff --cc ", b"diff --combined "))
    return (
        line.startswith(b"--- ") and index + 1 < len(lines) and lines[index + 1].startswith(b"+++ ")
    )


def _read_hunk(
    builder: _Builder, lines: list[bytes], index: int, offset: int, match: re.Match[bytes]
) -> tuple[int, int]:
    """Read one hunk from its ``@@`` line; returns the index and offset of the line after it.

    Each line's visible bytes follow its marker, without a CR before its newline (CRLF files);
    a line with none (an empty line) shows as its marker, or as its newline when the context
    space was stripped. Written for speed: a large diff has a great many lines."""
    builder.mark_body(offset)
    hunk_start = offset
    old_left = int(match.group(2)) if match.group(2) is not None else 1
    new_left = int(match.group(4)) if match.group(4) is not None else 1
    new_start = int(match.group(3))
    new_count = new_left
    number = new_start if new_left else new_start + 1  # ``+c,0``: the deletion follows line c
    first = len(builder.kinds)
    hunk_number = len(builder.hunks)
    starts, ends, kinds = builder.visible_start, builder.visible_end, builder.kinds
    numbers, hunk_of = builder.numbers, builder.hunk_of
    context, added, deleted = LineKind.CONTEXT, LineKind.ADDED, LineKind.DELETED
    offset += len(lines[index]) + 1
    index += 1
    while index < len(lines):
        line = lines[index]
        marker = line[:1]
        if marker == b"\\":
            pass  # "\\ No newline at end of file": about the line before it, not a line
        elif old_left <= 0 and new_left <= 0:
            break
        else:
            if marker == b"+" and new_left > 0:
                kind, line_number = added, number
                number += 1
                new_left -= 1
            elif marker == b"-" and old_left > 0:
                kind, line_number = deleted, number - 1  # anchored once the hunk is read
                old_left -= 1
            elif marker in (b" ", b"", b"\r") and old_left > 0 and new_left > 0:
                kind, line_number = context, number  # b"", b"\r": context with its space stripped
                number += 1
                old_left -= 1
                new_left -= 1
            else:
                break
            visible_end = offset + len(line) - (1 if line.endswith(b"\r") else 0)
            visible_start = offset + 1 if marker in (b" ", b"+", b"-") else offset
            if visible_end <= visible_start:
                visible_start, visible_end = offset, offset + 1
            starts.append(visible_start)
            ends.append(visible_end)
            kinds.append(kind)
            numbers.append(line_number)
            hunk_of.append(hunk_number)
        offset += len(line) + 1
        index += 1
    builder.hunks.append(
        Hunk(
            start=hunk_start,
            end=offset,
            new_start=new_start,
            new_count=new_count,
            first=first,
            last=len(builder.kinds),
        )
    )
    return index, offset
