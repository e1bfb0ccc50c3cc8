"""What a call returned, compared with the revision (DESIGN §6 rules 16-18, 23-26). Pure.

Adapters hand over what a call returned as the model received it, with the client's wrapping
taken off (``Returned``: line-number prefixes, ``<file>`` wrappers, reminders appended at the
end, notices and placeholders). Two checks use it, both in the client's declared presentation
(``coverage_gate.core.presentation``):

**The read check** (rules 16, 23-24): ``coverage_gate.core.read_check``. A read of a file the
stream itself wrote whose text does not align with the revision is a mismatch here.

**Credit by content** (rules 17, 25). Any call's text (shell output, ``git diff``, a tool no
adapter knows; a failed command's too, not a read tool's error) that holds lines of an in-scope
file is evidence of those lines for that file. ``ContentIndex`` holds the in-scope files' lines at
the revision (a dict from each line's key to where it occurs: memory follows the changed files,
not the stream) and the pinned diff's lines. A text is scanned once; a run of consecutive lines
that are consecutive lines of one file counts when

- it holds at least ``MIN_RUN_LINES`` informative lines (``MIN_INFORMATIVE_CHARS`` or more
  characters besides white space, with a letter or digit) and ``MIN_RUN_CHARS`` informative
  characters together, or it is the whole file: blank lines, braces and a short import block,
  which occur in many files, never count alone;
- no other run (of another file, or of the same file elsewhere) covers the same stretch of text
  at least as well: a block two files share (a licence header) credits neither, unless the text
  goes on to be one of them;
- none of its lines is the model's own text: a line of any call's arguments so far in the
  stream, as written or as a shell undoes it (``coverage_gate.core.own_text``).

A run of the pinned diff's lines (a ``git diff`` that printed the pinned diff's section of a file)
is a page of the pinned diff: it shows the hunks it covers, exactly as a ``cr_diff`` page of those
bytes does, and a section cut to its header shows nothing. Only its changed lines (``+``/``-``)
count toward a run's length: a diff of another change shares the pinned diff's headers and
context lines but none of its changes, and is no evidence.

``Returned.kept`` says how many bytes at each end of a text surely reached the model (Codex's
``exec --json``: none, rule 26). Lines credited there count; lines found elsewhere are
*uncertain*: not evidence, yet the file's absence of evidence proves nothing (unknown, never
unsupported), and so are the files of pinned-diff sections found there.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import compress, count, islice

import msgspec
from msgspec.structs import replace

from coverage_gate.contracts.enums import ContentCheck, MismatchKind
from coverage_gate.core.depth import ContentSource
from coverage_gate.core.events import (
    Action,
    ContentSeen,
    Credit,
    IgnoredAction,
    ReadAction,
    Returned,
    Shown,
    ShownKind,
    ToolEnd,
    ToolStart,
    WriteAction,
)
from coverage_gate.core.own_text import MAX_OWN_LINES, own_lines
from coverage_gate.core.presentation import BASELINE, Presentation
from coverage_gate.core.read_check import (
    UNCHECKED,
    FileText,
    ReadCheck,
    check_read,
    file_lines,
)
from coverage_gate.core.revision_files import blob_id

__all__ = [
    "DIFF_KEY",
    "MAX_CALLS",
    "MAX_CREDITS_PER_CALL",
    "MAX_OTHER_BYTES",
    "MAX_OTHER_FILES",
    "MAX_REMEMBERED_ENDS",
    "MAX_SAID_CHARS",
    "MAX_START_OCCURRENCES",
    "MIN_INFORMATIVE_CHARS",
    "MIN_RUN_CHARS",
    "MIN_RUN_LINES",
    "UNCHECKED",
    "CallChecker",
    "ContentIndex",
    "ReadCheck",
    "check_read",
    "file_lines",
]

#: Calls followed at once (the pairer's own bound).
MAX_CALLS = 20_000
#: Credit by content: informative lines and characters a run needs (unless it is the whole file).
MIN_RUN_LINES = 3
MIN_RUN_CHARS = 60
MIN_INFORMATIVE_CHARS = 6
#: A line occurring more often than this in the in-scope files never starts a run (it may still
#: continue one): blank lines, ``}``, ``return None``.
MAX_START_OCCURRENCES = 16
#: Credited runs kept per call; the rest are dropped (the call still counts for those kept).
MAX_CREDITS_PER_CALL = 64
DIFF_KEY = "\0pinned diff"
#: A place in the index of in-scope lines: a file's slot times this, plus the line's number.
_SLOT = 1 << 32


# --- credit by content -------------------------------------------------------------------------


_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


def _informative(line: str) -> int:
    """The characters a line carries besides white space, when it carries enough to tell."""
    body = line.strip()
    if len(body) < MIN_INFORMATIVE_CHARS or _LETTER_OR_DIGIT.search(body) is None:
        return 0
    return len(body)


def _diff_change(line: str) -> bool:
    """Whether a line of the pinned diff is a changed line (not a header or context)."""
    return line[:1] in "+-" and line[:3] not in ("+++", "---")


def _weight(key: str, line: str) -> int:
    """What a line counts for in a run of ``key``'s lines: in the pinned diff, only its changed
    lines count (a diff of another change shares its headers and context lines)."""
    if key == DIFF_KEY and not _diff_change(line):
        return 0
    return _informative(line)


def own_keys(presentation: Presentation, said: Iterable[str]) -> set[str]:
    """The keys of the informative lines the model's text ``said`` stands for, in every
    spelling a shell undoes (``coverage_gate.core.own_text``)."""
    key = presentation.key
    return {key(line) for chunk in said for line in own_lines(chunk) if _informative(line)}


class _Run(msgspec.Struct):
    key: str
    file_start: int  # 1-based line of the file where the run starts
    out_start: int  # index in the text's lines
    out_end: int = 0  # exclusive
    lines_total: int = 0


class ContentIndex:
    """The in-scope files' lines at the revision, and the pinned diff's (module notes)."""

    def __init__(
        self,
        files: Mapping[str, bytes],
        diff: bytes | None = None,
        presentation: Presentation = BASELINE,
    ) -> None:
        self._presentation = presentation
        self._lines: dict[str, FileText] = {}
        self._blobs: dict[str, str] = {}
        # each line's places: a file's slot in ``_keys`` times ``_SLOT`` plus the line's number
        # (one place as it is, several as a list in order)
        self._keys: list[str] = []
        self._where: dict[str, int | list[int]] = {}
        self._common: set[str] = set()  # lines with more places than can start a run
        self._weights: dict[str, int] = {}  # the index's lines' ``_informative``, once worked out
        # each file's whole text by its line count and hash (``None``: more than one file's)
        self._wholes: dict[tuple[int, int], str | None] = {}
        self._diff_offsets: list[int] = []
        self._diff_paths: list[str] = []  # per line of the pinned diff, the file of its section
        for path, data in sorted(files.items()):
            self._add(path, FileText(data, presentation))
            self._blobs[path] = blob_id(data)
        if diff:
            raw = diff.split(b"\n")
            if raw and not raw[-1]:
                raw.pop()
            offset = 0
            path = ""
            for line in raw:
                self._diff_offsets.append(offset)
                offset += len(line) + 1
                if line.startswith(b"+++ b/"):
                    path = line[6:].decode("utf-8", "replace")
                elif line.startswith(b"diff --git "):
                    path = ""
                self._diff_paths.append(path)
            self._diff_offsets.append(offset)
            self._add(DIFF_KEY, FileText(diff, presentation))

    def _add(self, key: str, text: FileText) -> None:
        self._lines[key] = text
        base = len(self._keys) * _SLOT
        self._keys.append(key)
        if key != DIFF_KEY:
            self._add_lines(text.keys, base)
            whole = (len(text.keys), hash("\n".join(text.keys)))
            self._wholes[whole] = None if whole in self._wholes else key  # two alike: neither
        else:
            for number, line in enumerate(text.keys, 1):
                if _diff_change(line):
                    self._place(line, base + number)
        for index, alternates in text.alternates.items():
            for line in alternates:
                if _weight(key, line):
                    self._place(line, base + index + 1)

    def _add_lines(self, keys: list[str], base: int) -> None:
        """Every line of a file, informative or not (a run starts only at an informative one,
        told when a text holds it). A line this file holds once and no file before it holds
        goes in as one place, all of them at once; the others one by one, in order, until a
        line has more places than can start a run (``MAX_START_OCCURRENCES``)."""
        where = self._where
        once = dict(zip(keys, range(base + 1, base + len(keys) + 1), strict=True))
        one_by_one = once.keys() & where.keys()
        if len(once) < len(keys):  # lines the file repeats
            one_by_one |= {line for line, count in Counter(keys).items() if count > 1}
        if one_by_one:
            for line in one_by_one:
                del once[line]
            one_by_one -= self._common
            for place, line in [
                (place, line) for place, line in enumerate(keys, base + 1) if line in one_by_one
            ]:
                self._place(line, place)
        where.update(once)

    def _place(self, line: str, place: int) -> None:
        """One more place of ``line``; past ``MAX_START_OCCURRENCES`` of them the line can
        never start a run, and no more are kept."""
        found = self._where.get(line)
        if found is None:
            self._where[line] = place
        elif isinstance(found, int):
            self._where[line] = [found, place]
        elif len(found) <= MAX_START_OCCURRENCES:
            found.append(place)
            if len(found) > MAX_START_OCCURRENCES:
                self._common.add(line)

    @property
    def paths(self) -> list[str]:
        return [key for key in self._lines if key != DIFF_KEY]

    def __bool__(self) -> bool:
        return bool(self._lines)

    def scan(
        self,
        text: str,
        *,
        said: Iterable[str] = (),
        own: AbstractSet[str] = frozenset(),
        kept: int | None = None,
        tail_kept: bool = True,
    ) -> ContentSeen:
        """What ``text`` showed of the in-scope files and the pinned diff (module notes).
        ``said``: the model's own text in this call; ``own``: the keys of its own text's lines
        so far (``own_keys``), which never credit."""
        if not self._lines or not text:
            return ContentSeen()
        out = self._presentation.keys(self._presentation.lines(text), text)
        if said:
            own = own | own_keys(self._presentation, said)
        runs = self._whole_file(out, own)
        chosen = _uncontested(runs if runs is not None else self._runs(out, own))
        head, tail = _kept_lines(out, kept, tail_kept=tail_kept)
        found_credits: list[Credit] = []
        diff: list[tuple[int, int]] = []
        uncertain: set[str] = set()
        for run in chosen:
            lines = self._lines[run.key]
            whole = run.file_start == 1 and run.lines_total == len(lines)
            if not whole and not self._long_enough(run, out):
                continue
            parts = [
                (run.out_start, min(run.out_end, head)),
                (max(run.out_start, tail), run.out_end),
            ]
            if run.out_start < tail and run.out_end > head:
                # some of it lay where the model may not have seen it: a file's lines, or the
                # pinned diff's sections of files
                if run.key != DIFF_KEY:
                    uncertain.add(run.key)
                else:
                    first = lines.file_line(run.file_start + max(head - run.out_start, 0))
                    last = lines.file_line(
                        run.file_start + min(tail, run.out_end) - run.out_start - 1
                    )
                    uncertain.update(self._diff_paths[first - 1 : last])
            for first, last in parts:
                if last <= first:
                    continue
                # the file's own line numbers (a client may break lines the file does not)
                start = lines.file_line(run.file_start + (first - run.out_start))
                end = lines.file_line(run.file_start + (last - run.out_start) - 1)
                if run.key == DIFF_KEY:
                    diff.append((self._diff_offsets[start - 1], self._diff_offsets[end]))
                elif len(found_credits) < MAX_CREDITS_PER_CALL:
                    found_credits.append(
                        Credit(path=run.key, start=start, end=end, blob=self._blobs.get(run.key))
                    )
        credited = {credit.path for credit in found_credits}
        uncertain.discard("")
        return ContentSeen(
            credits=tuple(found_credits),
            uncertain=tuple(sorted(uncertain - credited)),
            diff=tuple(diff),
        )

    def _runs(self, out: Sequence[str], own: AbstractSet[str]) -> list[_Run]:
        """Every maximal run of the text's lines that is a run of one file's lines. A run starts
        at an informative line, not the model's own, that at most ``MAX_START_OCCURRENCES``
        places hold, at each of those places where no run of the same file on the same diagonal
        (file line minus text line) goes on; it goes on while the text's lines are the file's
        (``FileText.same``), compared a slice at a time (``_extent``). Only the lines the index
        holds are looked at one by one, found at C speed."""
        where, keys_of = self._where, self._keys
        own_at = list(compress(count(), map(own.__contains__, out))) if own else []
        done: list[_Run] = []
        ends: dict[tuple[str, int], int] = {}  # (key, diagonal) -> where its last run ended
        for index in compress(count(), map(where.__contains__, out)):
            line = out[index]
            places = where[line]
            if isinstance(places, int):
                places = [places]
            elif len(places) > MAX_START_OCCURRENCES:
                continue
            if (own and line in own) or not self._weight_of(line):
                continue
            for place in places:
                key, number = keys_of[place // _SLOT], place % _SLOT
                diagonal = (key, number - index)
                if ends.get(diagonal, -1) > index:
                    continue  # a run of this file goes on through this line
                run = _Run(key, number, index, index + 1, 1)
                self._extend_back(run, out, own)
                run.out_end = self._extent(out, index, number, self._lines[key], own_at)
                run.lines_total += run.out_end - index - 1
                ends[diagonal] = run.out_end
                done.append(run)
        return done

    def _whole_file(self, out: Sequence[str], own: AbstractSet[str]) -> list[_Run] | None:
        """When the text is one in-scope file's whole text (``cat FILE``), the one run that
        ``_runs`` would leave uncontested: that file's, from the first line to the last; every
        other run lies within it. ``None`` when that cannot be told at once: the text is no
        file's whole text, holds the model's own lines, starts its informative lines with one
        too common to start a run, or another file's run would cover the same lines (a twin,
        which ``_runs`` and ``_uncontested`` then judge)."""
        if not out or (len(out), hash("\n".join(out))) not in self._wholes:
            return None
        key = self._wholes[(len(out), hash("\n".join(out)))]
        if key is None or out != self._lines[key].keys or (own and not own.isdisjoint(out)):
            return None
        first = next((index for index, line in enumerate(out) if self._weight_of(line)), None)
        if first is None:
            return None
        places = self._where.get(out[first])
        if isinstance(places, int):
            places = [places]
        if places is None or len(places) > MAX_START_OCCURRENCES:
            return None
        found: _Run | None = None
        for place in places:
            other, number = self._keys[place // _SLOT], place % _SLOT
            run = _Run(other, number, first, first + 1, 1)
            self._extend_back(run, out, own)
            run.out_end = self._extent(out, first, number, self._lines[other], [])
            run.lines_total += run.out_end - first - 1
            if run.out_start == 0 and run.out_end == len(out):
                if other != key or found is not None:
                    return None  # another run as long: not this file's alone
                found = run
        return [found] if found is not None else None

    @staticmethod
    def _extent(
        out: Sequence[str], index: int, number: int, lines: FileText, own_at: list[int]
    ) -> int:
        """Where a run that starts at the text's line ``index`` with the file's line ``number``
        ends (exclusive): at the first line after it that is not the file's next, the model's
        own line after it (``own_at``: where they are) or the end of the text or the file. Equal
        lines are found a slice at a time, galloping, then halving to the first that differs,
        which may still be the file's through the presentation (``FileText.same``)."""
        keys = lines.keys
        shift = number - 1 - index  # the text's line ``at`` faces the file's key ``at + shift``
        limit = min(len(out), len(keys) - shift)
        after = bisect.bisect_right(own_at, index)
        if after < len(own_at):
            limit = min(limit, own_at[after])
        at = index + 1
        if at < limit and out[at] != keys[at + shift] and not lines.same(out[at], at + shift + 1):
            return at  # most runs end at their first line
        while at < limit:
            low, size = at, 8
            while low < limit:
                high = min(low + size, limit)
                if out[low:high] != keys[low + shift : high + shift]:
                    break
                low, size = high, size * 2
            else:
                return limit
            while high - low > 1:  # the first line of out[low:high] that differs
                middle = (low + high) // 2
                if out[low:middle] == keys[low + shift : middle + shift]:
                    low = middle
                else:
                    high = middle
            if not lines.same(out[low], low + shift + 1):
                return low
            at = low + 1
        return limit

    def _weight_of(self, line: str) -> int:
        """``_informative`` of a line, kept for the index's lines (each worked out once)."""
        found = self._weights.get(line)
        if found is None:
            found = _informative(line)
            if line in self._where:
                self._weights[line] = found
        return found

    @staticmethod
    def _diff_weight(line: str) -> int:
        return _weight(DIFF_KEY, line)

    def _long_enough(self, run: _Run, out: Sequence[str]) -> bool:
        """Whether a run holds ``MIN_RUN_LINES`` informative lines and ``MIN_RUN_CHARS``
        informative characters (of the pinned diff, only its changed lines count), read until
        it does."""
        lines = chars = 0
        weight = self._weight_of if run.key != DIFF_KEY else self._diff_weight
        for line in islice(out, run.out_start, run.out_end):
            counted = weight(line)
            if counted:
                lines, chars = lines + 1, chars + counted
                if lines >= MIN_RUN_LINES and chars >= MIN_RUN_CHARS:
                    return True
        return False

    def _extend_back(self, run: _Run, out: Sequence[str], own: AbstractSet[str]) -> None:
        """Take in the lines before a run's first informative line that are the file's too."""
        lines = self._lines[run.key]
        weight = self._weight_of if run.key != DIFF_KEY else self._diff_weight
        while run.out_start > 0 and run.file_start > 1:
            before = out[run.out_start - 1]
            if not lines.same(before, run.file_start - 1) or before in own or weight(before):
                return
            run.out_start -= 1
            run.file_start -= 1
            run.lines_total += 1


def _uncontested(runs: list[_Run]) -> list[_Run]:
    """Runs that no other run covers as well: a run whose stretch of text lies within another's
    (or is the same as another's) is not that file's alone."""
    ordered = sorted(runs, key=lambda run: (run.out_start, -run.out_end))
    kept: list[_Run] = []
    furthest = -1
    for position, run in enumerate(ordered):
        if run.out_end <= furthest:
            continue  # inside a run that started earlier (or at the same line, longer)
        twin = position + 1 < len(ordered) and (
            ordered[position + 1].out_start == run.out_start
            and ordered[position + 1].out_end == run.out_end
        )
        furthest = max(furthest, run.out_end)
        if not twin:
            kept.append(run)
    return kept


def _kept_lines(out: Sequence[str], kept: int | None, *, tail_kept: bool = True) -> tuple[int, int]:
    """Line indices ``[0, head)`` and ``[tail, len)`` lie within the first and last ``kept``
    bytes of the text: what surely reached the model (all of it when ``kept`` is ``None``;
    ``tail_kept`` false: the text itself was cut short, so its end is not the model's)."""
    if kept is None:
        return len(out), len(out)
    sizes = [len(line.encode("utf-8", "surrogatepass")) + 1 for line in out]
    if sum(sizes) <= 2 * kept and tail_kept:
        return len(out), len(out)
    head = used = 0
    while head < len(out) and used + sizes[head] <= kept:
        used += sizes[head]
        head += 1
    tail, used = len(out), 0
    while tail_kept and tail > head and used + sizes[tail - 1] <= kept:
        used += sizes[tail - 1]
        tail -= 1
    return head, tail


# --- per call ----------------------------------------------------------------------------------


def _from_the_start(asked: Shown | None) -> bool:
    """Whether a read asked for the whole file or for lines from its first (OpenCode's ``read``
    asks for lines 1 to 2000): of a file that is empty, either is all of it."""
    return (
        asked is None
        or asked.kind is ShownKind.WHOLE
        or (asked.kind in (ShownKind.ASKED, ShownKind.LINES) and asked.start == 1)
    )


#: The files outside the pinned diff whose content is kept for checking reads of them: at most
#: this many, and this many bytes in all.
MAX_OTHER_FILES = 4096
MAX_OTHER_BYTES = 32 * 1024 * 1024
#: Ends remembered to tell a repeated line (their text is kept until then).
MAX_REMEMBERED_ENDS = 8
#: Characters of a call's own arguments kept to tell its output's echo of them.
MAX_SAID_CHARS = 1 << 16


class CallChecker:
    """The content checks of one stream, call by call, as its events flow (module notes).

    ``source`` gives the files at the revision (``None``: none can be had, every read is
    unchecked); ``scope`` the in-scope paths (the pinned diff's) and ``diff`` its bytes. Each
    in-scope file is asked for once; a read's text is checked when its end arrives and then
    dropped, so memory follows the in-scope files and the calls still open, not the stream.
    """

    def __init__(
        self,
        source: ContentSource | None,
        *,
        scope: Sequence[str] = (),
        unchecked: Sequence[str] = (),
        diff: bytes | None = None,
        place: Callable[[ReadAction], str | None] = lambda action: None,
        presentation: Presentation = BASELINE,
    ) -> None:
        self._source = source
        self._presentation = presentation
        self._scope = tuple(scope)
        self._in_scope = frozenset(self._scope)
        # binary files of the diff: compared as the text their bytes decode to, never scanned for
        self._unchecked = frozenset(unchecked)
        self._diff = diff
        self._place = place
        self._index: ContentIndex | None = None
        self._fetched = False  # the in-scope files asked for, in one batch
        self._scoped: dict[str, bytes | None] = {}
        self._others: OrderedDict[str, bytes | None] = OrderedDict()
        self._absent: set[str] = set()  # files outside the diff the revision does not have
        self._other_bytes = 0
        self._open: dict[str, tuple[Action, str | None]] = {}
        # files the stream's own calls wrote: a read of one that is not the revision's text is
        # the reviewer's text (DESIGN §6 rule 20), aligned or not
        self._written: set[str] = set()
        self._texts: OrderedDict[str, FileText] = OrderedDict()
        # reads whose text no declared presentation explains (tool, line): presentation drift
        self.unexplained: list[tuple[str, int]] = []
        # the model's own text so far, every call's: a line of it never credits (rule 25)
        self._own: set[str] = set()
        # the last ends checked, so that a line repeated to the byte is checked the same
        self._ended: OrderedDict[str, tuple[Returned, ContentSeen]] = OrderedDict()
        # per file of the pinned diff, the lines its change removed (made at the first mismatch)
        self._removed: dict[str, set[str]] | None = None

    def start(self, event: ToolStart) -> ToolStart:
        """Remember what the call asked for and said, and which file a write names; pass the
        start on without its words."""
        if isinstance(event.action, WriteAction) and event.action.path is not None:
            written = self._place(ReadAction(path=event.action.path, cwd=event.action.cwd))
            if written is not None and len(self._written) < MAX_CALLS:
                self._written.add(written)
        if len(self._open) < MAX_CALLS or event.call_id in self._open:
            said = event.said[:MAX_SAID_CHARS] if event.said else None
            self._open[event.call_id] = (event.action, said)
            if said and len(self._own) < MAX_OWN_LINES:
                self._own |= own_keys(self._presentation, (said,))
        if event.said is None:
            return event
        action = event.action
        if isinstance(action, IgnoredAction) and not action.known:
            # the drift watch looks for in-scope paths in an unknown tool's arguments
            return replace(event, said=event.said[:MAX_SAID_CHARS])
        return replace(event, said=None)

    def end(self, event: ToolEnd) -> ToolEnd:
        """The end with what its text showed (``content``) in place of the text."""
        returned = event.returned
        if returned is None:
            return event
        if not event.succeeded:
            return self._failed(event, returned)
        again = self._ended.get(event.call_id)
        if again is not None and again[0] == returned:
            return replace(event, returned=None, content=again[1])  # a repeated line: the same
        action, _said = self._open.pop(event.call_id, (None, None))
        if isinstance(action, IgnoredAction) and action.prints and not returned.text:
            seen = self._printed_nothing(action)
            return replace(event, returned=None, content=seen)
        path, checked = (
            self._read(action, returned, event) if isinstance(action, ReadAction) else (None, None)
        )
        if checked is not None and checked.check is ContentCheck.MATCHED:
            # its text is its own file's: no other file's run is longer than that whole text,
            # so scanning it could credit nothing (the rule of uncontested runs)
            seen = checked
        else:
            seen = (
                self._index_of().scan(
                    returned.text,
                    own=self._own,
                    kept=returned.kept,
                    tail_kept=not (returned.cut and returned.kept is not None),
                )
                if not returned.placeholder
                else ContentSeen()
            )
            if checked is not None:
                seen = self._joined(checked, seen, path)
        self._ended[event.call_id] = (returned, seen)
        if len(self._ended) > MAX_REMEMBERED_ENDS:
            self._ended.popitem(last=False)
        return replace(event, returned=None, content=seen)

    def _read(
        self, action: ReadAction, returned: Returned, event: ToolEnd
    ) -> tuple[str | None, ContentSeen]:
        """The read check of one read (module notes), with the file it read."""
        path = self._place(action)
        if path is None:
            return None, ContentSeen(check=ContentCheck.UNCHECKED)
        asked = event.shown or action.shown
        if (
            asked is not None
            and asked.kind is ShownKind.EMPTY
            and action.offset is None
            and action.limit is None
            and _from_the_start(action.shown)
        ):
            asked = None  # a read from the start that returned nothing: the check tells whether
            # the file is empty at the revision, when this is all of it
        told = asked is None or asked.kind is not ShownKind.UNKNOWN
        if not returned.own or not told:
            # one output of several reads; a read whose range is not told (a command of a shape
            # not recognised, an output cut to a head and a tail)
            return path, ContentSeen(check=ContentCheck.UNCHECKED)
        data = self._file(path)
        if returned.shortened:
            return path, self._shortened(path, data, asked)
        result = check_read(returned, data, asked, self._presentation, self._text_of(path, data))
        if result.check is ContentCheck.UNCHECKED and result.first_difference is not None:
            if path in self._written:
                result = ReadCheck(ContentCheck.MISMATCH, result.first_difference)
            elif len(self.unexplained) < MAX_CALLS:
                self.unexplained.append((event.tool or "read", event.line))
        mismatch = result.check is ContentCheck.MISMATCH
        return path, ContentSeen(
            check=result.check,
            first_difference=result.first_difference if mismatch else None,
            mismatch=self._mismatch_kind(path, returned) if mismatch else None,
            shown=result.shown,
            cuts=result.cuts,
            blob=blob_id(data) if data is not None else None,
        )

    def _shortened(self, path: str, data: bytes | None, asked: Shown | None) -> ContentSeen:
        """A read whose text the stream does not carry, of which the client says it shortened
        the lines longer than its ``line_limit``: unchecked, with those lines of the range it
        showed as cut at the limit (a change past it is unseen, DESIGN §6 rule 25)."""
        limit = self._presentation.line_limit
        text = self._text_of(path, data)
        if limit is None or text is None:
            return ContentSeen(check=ContentCheck.UNCHECKED)
        first, last = 1, len(text)
        if asked is not None and asked.kind is ShownKind.LINES and asked.start > 0:
            first, last = asked.start, min(asked.end or last, last)
        cuts = tuple(
            (text.file_line(number), limit)
            for number in range(first, last + 1)
            if len(text.keys[number - 1]) > limit
        )
        return ContentSeen(check=ContentCheck.UNCHECKED, cuts=cuts)

    def _mismatch_kind(self, path: str, returned: Returned) -> MismatchKind:
        """What a mismatched read of ``path`` showed instead: the stream's own change of it, an
        older text (a line of it is one the change removed and not the revision's), or other."""
        if path in self._written:
            return MismatchKind.EDIT
        removed = self._removed_lines().get(path)
        if removed:
            text = returned.text
            shown = set(self._presentation.keys(self._presentation.lines(text), text))
            revision = self._text_of(path, self._file(path))
            kept = set(revision.keys) if revision is not None else set()
            if (shown - kept) & removed:
                return MismatchKind.OLDER
        return MismatchKind.OTHER

    def _removed_lines(self) -> dict[str, set[str]]:
        """Per file of the pinned diff, the keys of the informative lines its change removed."""
        if self._removed is None:
            self._removed = {}
            key = self._presentation.key
            path = ""
            for raw in (self._diff or b"").split(b"\n"):
                if raw.startswith(b"+++ b/"):
                    path = raw[6:].decode("utf-8", "replace")
                elif raw.startswith(b"diff --git "):
                    path = ""
                elif path and raw.startswith(b"-") and not raw.startswith(b"---"):
                    line = key(raw[1:].decode("utf-8", "replace"))
                    if _informative(line):
                        self._removed.setdefault(path, set()).add(line)
        return self._removed

    def _printed_nothing(self, action: IgnoredAction) -> ContentSeen:
        """A plain ``cat`` of files that printed nothing (DESIGN §6 rule 24): each file it names
        that is empty at the revision was shown whole (a credit of no lines); any other file was
        not what it printed, and shows nothing."""
        found: list[Credit] = []
        for name in action.prints:
            path = self._place(ReadAction(path=name, cwd=action.cwd))
            if path is not None and self._file(path) == b"":
                found.append(Credit(path=path, start=1, end=0, blob=blob_id(b"")))
        return ContentSeen(credits=tuple(found))

    def _failed(self, event: ToolEnd, returned: Returned) -> ToolEnd:
        """A failed call: what it printed reached the model all the same (``cat F; exit 1``)
        and credits by content (DESIGN §6 rule 25); a read tool's failure is its error message
        and shows nothing."""
        action, _said = self._open.pop(event.call_id, (None, None))
        if isinstance(action, ReadAction) or returned.placeholder or not returned.text:
            return replace(event, returned=None)
        seen = self._index_of().scan(
            returned.text,
            own=self._own,
            kept=returned.kept,
            tail_kept=not (returned.cut and returned.kept is not None),
        )
        return replace(event, returned=None, content=seen)

    def _text_of(self, path: str, data: bytes | None) -> FileText | None:
        """The file at the revision as a ``FileText`` in this client's presentation, made once
        per file (the last ``MAX_OTHER_FILES`` kept)."""
        if data is None:
            return None
        found = self._texts.get(path)
        if found is None:
            presentation = self._presentation
            found = FileText(data, presentation, lone_cr=presentation.lone_cr_breaks)
            self._texts[path] = found
            if len(self._texts) > MAX_OTHER_FILES:
                self._texts.popitem(last=False)
        return found

    @staticmethod
    def _joined(checked: ContentSeen, seen: ContentSeen, path: str | None) -> ContentSeen:
        """A read's check with what its text showed of other files: its own file is judged by
        the read check alone (a mismatched read of a file is no evidence of it, not even of the
        lines its older text shares)."""
        found_credits = tuple(credit for credit in seen.credits if credit.path != path)
        uncertain = tuple(other for other in seen.uncertain if other != path)
        return replace(checked, credits=found_credits, uncertain=uncertain, diff=seen.diff)

    def can_judge_absence(self) -> bool:
        """Whether every in-scope file's content (or the pinned diff) was had, so that a
        format whose evidence is only what calls printed can say what was not shown."""
        self._prefetched()
        return bool(self._scope) and all(self._scoped.get(path) is not None for path in self._scope)

    def content(self, path: str) -> bytes | None:
        """The file at the revision, fetched once per record (a ``ContentSource`` itself, so
        that depth asks through the same cache)."""
        return self._file(path)

    def _prefetched(self) -> None:
        """Every in-scope file at the revision, in one batch, once per record."""
        if self._fetched:
            return
        self._fetched = True
        prefetch = getattr(self._source, "prefetch", None)
        if prefetch is not None and self._scope:
            found = prefetch(self._scope)  # every in-scope file in one batch
            self._scoped.update({path: found.get(path) for path in self._scope})
        for path in self._scope:
            if path not in self._scoped:
                self._scoped[path] = self._fetch(path)

    def _index_of(self) -> ContentIndex:
        """The index, built when a text first needs scanning (a stream of reads that all match
        their files never builds it)."""
        if self._index is None:
            self._prefetched()
            scoped = self._scoped
            files = {path: data for path in self._scope if (data := scoped[path]) is not None}
            for path in sorted(self._unchecked):  # binary files: their text as their bytes decode
                data = self._file(path)
                if data is not None:
                    files[path] = data
            self._index = ContentIndex(files, self._diff, self._presentation)
        return self._index

    def _file(self, path: str) -> bytes | None:
        if path in self._scoped:
            return self._scoped[path]
        if path in self._in_scope and not self._fetched:
            self._prefetched()  # the in-scope files come in one batch
            return self._scoped.get(path)
        if path in self._in_scope:
            found = self._scoped[path] = self._fetch(path)
            return found
        if path in self._others:
            self._others.move_to_end(path)
            return self._others[path]
        if path in self._absent:
            return None
        found = self._fetch(path)
        if found is None:
            if len(self._absent) < MAX_CALLS:
                self._absent.add(path)  # asked once: the revision has no such file to read
            return None
        self._others[path] = found
        self._other_bytes += len(found)
        while len(self._others) > MAX_OTHER_FILES or self._other_bytes > MAX_OTHER_BYTES:
            _, dropped = self._others.popitem(last=False)
            self._other_bytes -= len(dropped or b"")
        return found

    def _fetch(self, path: str) -> bytes | None:
        return self._source.content(path) if self._source is not None else None
