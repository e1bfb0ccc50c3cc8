"""Depth: which lines the successful calls showed, and how much of a file's change that was.

DESIGN §6 rules 11-13. Pure: a file's content, when a byte range needs it, comes in through the
``ContentSource`` port (``coverage_gate.edges.content`` is the edge behind it).

What each call showed, in lines of the file at the revision (1-based, new side):

- a read's byte range (``[cr-range offset= end= total=]``) shows every line it returned at least
  one visible byte of (a line's content without its terminator; an empty line's terminator), so
  byte pages that split a line between them leave no line unseen. Mapping needs the file's
  content; content whose size differs from the range's ``total`` is another version of the file,
  so that read's lines are unknown, as they are when the content cannot be had;
- a range that counts from the end (``tail -n N``) or runs to it needs the file's length the same
  way; a plain line range (``offset``/``limit`` in lines, ``sed -n A,Bp``, ``head -n N``) does not;
- a read that returned nothing (zero bytes, zero lines, a range past the end) shows nothing and
  is not evidence;
- a range a source knows only as asked for (an agent's own telemetry, which never says what came
  back) is clipped to the file's length when the content is had: asked past the end, it showed
  nothing. Without the content the asked lines stand, as a stream's start would have them;
- a diff page: see ``coverage_gate.core.diffmap``.

A changed line is seen when a call showed it: an added line by its number in a read of the new
file, any changed line (a deleted one included) by a diff page that showed its bytes. A read of
the new file cannot show what was removed, so a deleted line is seen only in a view that shows
the removal (DESIGN §6 rule 25).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from itertools import accumulate
from operator import add
from typing import Protocol

from coverage_gate.contracts.enums import Depth
from coverage_gate.contracts.evidence_doc import FileDepth, LineRange
from coverage_gate.core.diffmap import FileDiff, LineKind
from coverage_gate.core.events import EMPTY_SHOWN, UNKNOWN_SHOWN, Shown, ShownKind

__all__ = [
    "MAX_LINE_RANGES_PER_FILE",
    "MAX_UNSEEN_RANGES",
    "ChangeMarks",
    "ContentSource",
    "LineSet",
    "LineTable",
    "as_asked",
    "file_depth",
    "needs_content",
    "resolve",
    "simplified",
]

MAX_LINE_RANGES_PER_FILE = 64
MAX_UNSEEN_RANGES = 16


class ContentSource(Protocol):
    """The content of files at the revision under review."""

    def content(self, path: str) -> bytes | None:
        """The bytes of repo-relative ``path`` at the revision; ``None`` when not obtainable."""
        ...


class LineTable:
    """Where each line of one file's content lies: enough to map byte ranges to lines, without
    keeping the content."""

    def __init__(self, content: bytes) -> None:
        self.size = len(content)
        lines = content.split(b"\n")
        if not lines[-1]:
            lines.pop()  # after the last newline (or an empty file): no line
        sizes = list(map(len, lines))
        # each line's first byte, and the end of what it shows: a CRLF's CR is part of the
        # terminator (a last line with no newline keeps its CR), an empty line shows one byte
        self._starts = array(
            "q", accumulate(map((1).__add__, sizes[:-1]), initial=0) if sizes else ()
        )
        if b"\r" in content:
            ended = len(lines) - (not content.endswith(b"\n"))
            sizes = [
                size - 1 if index < ended and line.endswith(b"\r") else size
                for index, (line, size) in enumerate(zip(lines, sizes, strict=True))
            ]
        self._visible_ends = array("q", map(add, self._starts, sizes))
        if 0 in sizes:
            for index in [index for index, size in enumerate(sizes) if not size]:
                self._visible_ends[index] += 1

    @property
    def count(self) -> int:
        return len(self._starts)

    def lines_of(self, start: int, end: int) -> tuple[int, int] | None:
        """The first and last line a byte range ``[start, end)`` returned a visible byte of."""
        low = bisect.bisect_right(self._visible_ends, start)
        high = bisect.bisect_left(self._starts, end)
        return (low + 1, high) if low < high else None


def simplified(shown: Shown) -> Shown:
    """A range that covers the whole file, as far as the stream tells, is a whole read."""
    if shown.kind is ShownKind.BYTES:
        if shown.end is not None and shown.end <= shown.start:
            return EMPTY_SHOWN
        if shown.start == 0 and shown.total is not None and (shown.end or 0) >= shown.total:
            return Shown.whole()
    elif shown.kind is ShownKind.LINES:
        if shown.end is not None and shown.start > 0 and shown.end < shown.start:
            return EMPTY_SHOWN
        if (
            shown.start == 1
            and shown.total is not None
            and shown.end is not None
            and shown.end >= shown.total
        ):
            return Shown.whole(shown.total)
    return shown


def needs_content(shown: Shown) -> bool:
    """Whether telling the lines of ``shown`` needs the file's content."""
    if shown.kind is ShownKind.BYTES or shown.kind is ShownKind.ASKED:
        return True
    return shown.kind is ShownKind.LINES and (shown.start <= 0 or shown.end is None)


def as_asked(shown: Shown) -> Shown:
    """The lines an asked-for range stands for when the file's length cannot be had."""
    if shown.kind is ShownKind.ASKED:
        return Shown.lines(shown.start, shown.end)
    return shown


def resolve(shown: Shown, table: LineTable | None) -> Shown:
    """``shown`` in plain lines, with the file's line table; unknown without it."""
    if not needs_content(shown):
        return shown
    if table is None:
        return as_asked(shown) if shown.kind is ShownKind.ASKED else UNKNOWN_SHOWN
    count = table.count
    if shown.kind is ShownKind.BYTES:
        if shown.total is not None and shown.total != table.size:
            return UNKNOWN_SHOWN  # the range was of another version of the file
        found = table.lines_of(shown.start, shown.end if shown.end is not None else table.size)
        if found is None:
            return EMPTY_SHOWN
        first, last = found
    else:
        first = shown.start if shown.start > 0 else max(1, count + shown.start + 1)
        last = count if shown.end is None else min(shown.end, count)
        if first > last and count == 0 and shown.start == 1:
            return Shown.whole(0)  # from its first line on: the whole of an empty file
        if first > last:
            return EMPTY_SHOWN
    if first == 1 and last >= count:
        return Shown.whole(count)
    return Shown.lines(first, last, count)


class LineSet:
    """Merged inclusive line ranges, at most ``cap`` of them: a range that would need one more
    is left out, and ``truncated`` says so."""

    def __init__(self, cap: int = MAX_LINE_RANGES_PER_FILE) -> None:
        self.cap = cap
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.truncated = False

    def add(self, start: int, end: int) -> None:
        low = bisect.bisect_left(self.ends, start - 1)  # first range ending at or after start-1
        high = bisect.bisect_right(self.starts, end + 1)  # ranges starting at or before end+1
        if low >= high:
            if len(self.starts) >= self.cap:
                self.truncated = True
                return
            self.starts.insert(low, start)
            self.ends.insert(low, end)
            return
        start = min(start, self.starts[low])
        end = max(end, self.ends[high - 1])
        self.starts[low:high] = [start]
        self.ends[low:high] = [end]

    def add_numbers(self, numbers: Iterable[int]) -> None:
        """Add single line numbers, runs of consecutive ones as one range."""
        run_start = run_end = None
        for number in numbers:
            if run_end is not None and number == run_end + 1:
                run_end = number
                continue
            if run_start is not None and run_end is not None:
                self.add(run_start, run_end)
            run_start = run_end = number
        if run_start is not None and run_end is not None:
            self.add(run_start, run_end)

    def ranges(self) -> list[LineRange]:
        return [LineRange(start=s, end=e) for s, e in zip(self.starts, self.ends, strict=True)]


class ChangeMarks:
    """Which changed lines of one file in the pinned diff the calls showed."""

    def __init__(self, diff: FileDiff) -> None:
        self.diff = diff
        self.seen = bytearray(len(diff.changed))
        # changed lines a read reached only up to its client's cut, before their change
        self.cut = bytearray(len(diff.changed))
        self.whole = False

    def see_lines(self, first: int, last: int, hidden: AbstractSet[int] = frozenset()) -> None:
        """A read showed lines ``first..last`` of the new file: its added lines, but those in
        ``hidden`` (cut before their change). A deleted line is not in the new file: only a view
        that shows the removal (a diff page, a `git diff` section) sees it (DESIGN §6 rule 25)."""
        if self.whole:
            return
        diff = self.diff
        for position in diff.changed_between(first, last):
            change = diff.changed_at(position)
            index = diff.changed[change]
            if diff.kinds[index] is LineKind.ADDED and diff.numbers[index] not in hidden:
                self.seen[change] = 1

    def see_whole(self, hidden: AbstractSet[int] = frozenset()) -> None:
        """A whole read: every added line but those in ``hidden`` (a deleted line is in no read
        of the new file)."""
        if not self.whole:
            self.see_lines(1, 1 << 62, hidden)
            self.whole = not hidden

    def mark_cut(self, numbers: AbstractSet[int]) -> None:
        """The added lines ``numbers`` reached the model only up to a cut before their change:
        unseen, and named so, since a cut line alone verifies nothing (DESIGN §6 rule 29)."""
        for number in numbers:
            added = self._added_at(number)
            if added is not None:
                self.cut[added[0]] = 1

    def _added_at(self, number: int) -> tuple[int, int] | None:
        """The added line the new file's line ``number`` is: its change's position among the
        changed lines, and its index among the diff's lines; ``None`` when it is no added line."""
        diff = self.diff
        for position in diff.changed_between(number, number):
            change = diff.changed_at(position)
            index = diff.changed[change]
            if diff.kinds[index] is LineKind.ADDED and diff.numbers[index] == number:
                return change, index
        return None

    def hidden_by_cuts(self, data: bytes, cuts: Iterable[tuple[int, int]]) -> set[int]:
        """Of the lines a read's client cut (line, characters of it kept), the added ones the
        cut leaves unseen (DESIGN §6 rule 29): a cut line proves only what it kept. It shows
        its change only when no line the change removed in the same hunk starts as it was
        kept (the model could not have told them apart), and what it did not show is how such
        a line ends, after a start that differs (what was cut is then no part of the change).
        A new line with no such counterpart is unseen past the cut, however it starts."""
        return {line for line, kept in cuts if self._unseen_past_cut(data, line, kept)}

    def _unseen_past_cut(self, data: bytes, number: int, kept: int) -> bool:
        diff = self.diff
        added = self._added_at(number)
        if added is None:
            return False
        index = added[1]
        text = self._line_text(data, index)
        shown, rest = text[:kept], text[kept:]
        hunk = diff.hunk_of[index]
        first = last = index
        while first > 0 and diff.hunk_of[first - 1] == hunk:
            first -= 1
        while last + 1 < len(diff.kinds) and diff.hunk_of[last + 1] == hunk:
            last += 1
        removed = [
            self._line_text(data, other)
            for other in range(first, last + 1)
            if diff.kinds[other] is LineKind.DELETED
        ]
        if any(old.startswith(shown) for old in removed):
            return True
        return not any(
            len(old) >= len(rest) and old.endswith(rest) and old[: len(old) - len(rest)] != shown
            for old in removed
        )

    def _line_text(self, data: bytes, index: int) -> str:
        diff = self.diff
        return data[diff.visible_start[index] : diff.visible_end[index]].decode("utf-8", "replace")

    def see_page(self, start: int, end: int, lines: LineSet) -> None:
        """Union of pinned pages ``[start, end)``: the changed lines whose bytes it showed, and
        the new-side numbers of every line it showed into ``lines``."""
        diff = self.diff
        shown = diff.lines_overlapping(start, end)
        numbers: list[int] = []
        for index in shown:
            if diff.kinds[index] is LineKind.CONTEXT:
                numbers.append(diff.numbers[index])
            else:
                self.seen[diff.change_of[index]] = 1
                if diff.kinds[index] is LineKind.ADDED:
                    numbers.append(diff.numbers[index])
        lines.add_numbers(numbers)


def file_depth(marks: ChangeMarks, reads_lines_unknown: int) -> FileDepth:
    """The depth of one evidenced file (DESIGN §6 rule 13)."""
    diff = marks.diff
    changed_hunks = sorted({diff.hunk_of[i] for i in diff.changed})
    if not diff.lines_known:
        return FileDepth(
            depth=Depth.UNKNOWN,
            hunks=len(diff.hunks),
            detail="binary or combined diff: its changed lines cannot be told",
        )
    changed = len(diff.changed)
    if changed == 0:
        return FileDepth(
            depth=Depth.FULL, detail="no changed lines (a rename, a mode change or an empty file)"
        )
    seen = sum(marks.seen)
    cut = sum(1 for n in range(changed) if marks.cut[n] and not marks.seen[n])
    hunks_seen = len({diff.hunk_of[i] for n, i in enumerate(diff.changed) if marks.seen[n]})
    unseen = LineSet(MAX_UNSEEN_RANGES)
    unseen.add_numbers(
        sorted({diff.numbers[i] for n, i in enumerate(diff.changed) if not marks.seen[n]} - {0})
    )
    summary = (
        f"{seen} of {changed} changed lines seen, in {hunks_seen} of {len(changed_hunks)} hunks"
    )
    if seen == changed:
        depth, detail = Depth.FULL, summary
    elif reads_lines_unknown:
        depth = Depth.UNKNOWN
        detail = (
            f"{summary}; {reads_lines_unknown} successful read(s) showed lines that cannot be "
            "told (a byte range without the file's content at the revision, or a command whose "
            "range was not recognised)"
        )
    elif seen == 0 and cut:
        depth = Depth.NONE
        detail = (
            f"{summary}; {cut} reached the model only up to the client's cut of the line, "
            "before the change: a cut line alone verifies nothing"
        )
    elif seen == 0:
        depth, detail = Depth.NONE, summary
    else:
        depth, detail = Depth.PARTIAL, summary
    return FileDepth(
        depth=depth,
        changed_lines=changed,
        changed_lines_seen=seen,
        changed_lines_cut=cut,
        hunks=len(changed_hunks),
        hunks_seen=hunks_seen,
        unseen=unseen.ranges(),
        unseen_truncated=unseen.truncated,
        detail=detail,
    )
