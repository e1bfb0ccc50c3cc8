"""Credit by content (DESIGN §6 rules 17, 25): the in-scope files' lines, and what a text shows
of them. Pure.

Any call's text (shell output, ``git diff``, a tool no
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import accumulate, compress, count, islice
from operator import add, methodcaller, ne

import msgspec

from coverage_gate.core.events import ContentSeen, Credit
from coverage_gate.core.own_text import OwnPieces, own_lines
from coverage_gate.core.presentation import BASELINE, LineCut, Presentation
from coverage_gate.core.read_check import FileText
from coverage_gate.core.revision_files import blob_id

__all__ = [
    "DIFF_KEY",
    "MAX_CREDITS_PER_CALL",
    "MAX_START_OCCURRENCES",
    "MIN_INFORMATIVE_CHARS",
    "MIN_RUN_CHARS",
    "MIN_RUN_LINES",
    "ContentIndex",
    "informative",
    "own_and_piece_keys",
    "own_keys",
]

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


_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


def informative(line: str) -> int:
    """The characters a line carries besides white space, when it carries enough to tell."""
    body = line.strip()
    if len(body) < MIN_INFORMATIVE_CHARS or _LETTER_OR_DIGIT.search(body) is None:
        return 0
    return len(body)


#: Lines of the pinned diff that name the file of the lines after them (``+++ b/``) or start
#: another file's section (``diff --git``).
_NAMES_SECTION = methodcaller("startswith", (b"+++ b/", b"diff --git "))


#: A changed line of the pinned diff (``+``/``-``, not a ``+++``/``---`` header); an empty line
#: too, as the rule has always read (``"" in "+-"``).
_DIFF_CHANGE = re.compile(r"\+(?!\+\+)|-(?!--)|\Z").match


def _diff_change(line: str) -> bool:
    """Whether a line of the pinned diff is a changed line (not a header or context)."""
    return _DIFF_CHANGE(line) is not None


def _weight(key: str, line: str) -> int:
    """What a line counts for in a run of ``key``'s lines: in the pinned diff, only its changed
    lines count (a diff of another change shares its headers and context lines)."""
    if key == DIFF_KEY and not _diff_change(line):
        return 0
    return informative(line)


def own_keys(presentation: Presentation, said: Iterable[str]) -> set[str]:
    """The keys of the informative lines the model's text ``said`` stands for, in every
    spelling a shell undoes (``coverage_gate.core.own_text``)."""
    key = presentation.key
    return {
        key(line)
        for chunk in said
        for line in own_lines(chunk)
        # a line shorter than an informative one is passed over without a call
        if len(line) >= MIN_INFORMATIVE_CHARS and informative(line)
    }


def own_and_piece_keys(presentation: Presentation, said: str) -> tuple[set[str], list[str]]:
    """``own_keys`` of the model's text ``said``, and the keys of every line it stands for,
    short ones too: the pieces a result's line may be made of (``OwnPieces``)."""
    lines = list(own_lines(said))
    keys = list(map(presentation.key, lines))
    own = {
        key
        for line, key in zip(lines, keys, strict=True)
        if len(line) >= MIN_INFORMATIVE_CHARS and informative(line)
    }
    return own, keys


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
        self._last_keys: tuple[str, list[str]] | None = None
        self._lines: dict[str, FileText] = {}
        self._data = files  # each file's bytes: its blob id is worked out when it is credited
        self._blobs: dict[str, str] = {}
        # each line's places: a file's slot in ``_keys`` times ``_SLOT`` plus the line's number
        # (one place as it is, several as a list in order)
        self._keys: list[str] = []
        self._where: dict[str, int | list[int]] = {}
        self._common: set[str] = set()  # lines with more places than can start a run
        self._weights: dict[str, int] = {}  # the index's lines' ``informative``, once worked out
        # each file's whole text by its line count and hash (``None``: more than one file's)
        self._wholes: dict[tuple[int, int], str | None] = {}
        # the pinned diff: each line's byte offset (and the end's), and where each section's
        # file is named (its ``+++ b/`` line) or the next section starts (its ``diff --git`` line)
        self._diff_offsets: list[int] = []
        self._diff_sections: list[int] = []  # 0-based lines, in order
        self._diff_section_paths: list[str] = []  # the file from each of those lines on
        for path, data in sorted(files.items()):
            self._add(path, FileText(data, presentation))
        if diff:
            raw = diff.split(b"\n")
            if raw and not raw[-1]:
                raw.pop()
            # a line's offset: the lengths of the lines before it, and their newlines
            self._diff_offsets = list(map(add, accumulate(map(len, raw), initial=0), count()))
            for number in compress(count(), map(_NAMES_SECTION, raw)):
                line = raw[number]
                named = line[6:].decode("utf-8", "replace") if line[:1] == b"+" else ""
                self._diff_sections.append(number)
                self._diff_section_paths.append(named)
            self._add(DIFF_KEY, FileText(diff, presentation))
        # A run of one line alone can never count (``MIN_RUN_LINES``) unless it is a whole file
        # of one line, nor contest a run that can: what lies within it is that line alone. So
        # ``_runs`` leaves such runs out, unless some file (or the pinned diff) is one line long.
        self._prune_alone = MIN_RUN_LINES > 1 and all(
            len(text) != 1 for text in self._lines.values()
        )
        # A line too common to start a run is looked up no more once the index is made: a text's
        # lines are sought among the lines that can start one (``_runs``, ``_whole_file``).
        for common in self._common:
            del self._where[common]

    def _add(self, key: str, text: FileText) -> None:
        self._lines[key] = text
        base = len(self._keys) * _SLOT
        self._keys.append(key)
        if key != DIFF_KEY:
            self._add_lines(text.keys, base)
            whole = (len(text.keys), hash("\n".join(text.keys)))
            self._wholes[whole] = None if whole in self._wholes else key  # two alike: neither
        else:
            keys = text.keys
            for number in compress(count(1), map(_DIFF_CHANGE, keys)):
                self._place(keys[number - 1], base + number)
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
        places = range(base + 1, base + len(keys) + 1)
        once = dict(zip(keys, places, strict=True))  # each line's last place
        shared = once.keys() & where.keys()
        repeated: set[str] = set()
        if len(once) < len(keys):  # lines the file repeats: the lines at a place not their last
            repeated = set(compress(keys, map(ne, map(once.__getitem__, keys), places)))
        if shared or repeated:
            common = self._common
            for line in shared - repeated - common:
                self._place(line, once[line])
            many = repeated - common
            for place in compress(places, map(many.__contains__, keys)) if many else ():
                self._place(keys[place - base - 1], place)
            for line in shared | repeated:
                del once[line]
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

    def _blob(self, key: str) -> str | None:
        """The blob id of an in-scope file, worked out once, when one of its lines is credited."""
        found = self._blobs.get(key)
        if found is None and key in self._data:
            found = self._blobs[key] = blob_id(self._data[key])
        return found

    def _diff_paths(self, first: int, last: int) -> set[str]:
        """The files of the pinned diff's sections its lines ``first`` to ``last`` (1-based) lie
        in (``""``: a line before any section names its file)."""
        sections, paths = self._diff_sections, self._diff_section_paths
        at = bisect.bisect_right(sections, first - 1) - 1
        found = {paths[at] if at >= 0 else ""}
        at += 1
        while at < len(sections) and sections[at] <= last - 1:
            found.add(paths[at])
            at += 1
        return found

    @property
    def paths(self) -> list[str]:
        return [key for key in self._lines if key != DIFF_KEY]

    def __bool__(self) -> bool:
        return bool(self._lines)

    def keys_of(self, text: str) -> list[str]:
        """``text``'s lines as keys in the presentation; the last text's kept, for the checks
        that look at it again after ``scan``."""
        last = self._last_keys
        if last is not None and last[0] is text:
            return last[1]
        out = self._presentation.keys(self._presentation.lines(text), text)
        self._last_keys = (text, out)
        return out

    def scan(
        self,
        text: str,
        *,
        said: Iterable[str] = (),
        own: AbstractSet[str] = frozenset(),
        pieces: OwnPieces | None = None,
        kept: int | None = None,
        tail_kept: bool = True,
        cut: LineCut | None = None,
    ) -> ContentSeen:
        """What ``text`` showed of the in-scope files and the pinned diff (module notes).
        ``said``: the model's own text in this call; ``own``: the keys of its own text's lines
        so far (``own_keys``), which never credit, nor do lines made of a few ``pieces`` of
        that text; ``cut``: how the tool that returned ``text``
        cuts a long line, when it does (a marker in any other tool's output is its text)."""
        if not self._lines or not text:
            return ContentSeen()
        out = self.keys_of(text)
        own = self._own_of(out, own, said, pieces)
        runs = self._whole_file(out, own, cut)
        chosen = _uncontested(runs if runs is not None else self._runs(out, own, cut))
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
                    uncertain.update(self._diff_paths(first, last))
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
                        Credit(path=run.key, start=start, end=end, blob=self._blob(run.key))
                    )
        credited = {credit.path for credit in found_credits}
        uncertain.discard("")
        return ContentSeen(
            credits=tuple(found_credits),
            uncertain=tuple(sorted(uncertain - credited)),
            diff=tuple(diff),
        )

    def _own_of(
        self,
        out: Sequence[str],
        own: AbstractSet[str],
        said: Iterable[str],
        pieces: OwnPieces | None,
    ) -> AbstractSet[str]:
        """The lines of the model's own text a text's lines ``out`` may hold: ``own``, this
        call's ``said``, and those of ``out`` made of a few ``pieces`` of its text (rule 29)."""
        if said:
            own = own | own_keys(self._presentation, said)
        if pieces:
            # only a line of an in-scope file (or of the pinned diff) could credit
            shown = set(out)
            held = set(filter(self._where.__contains__, shown))
            if self._common:
                held |= shown & self._common
            assembled = pieces.among(held, informative)
            if assembled:
                own = own | assembled
        return own

    def _runs(
        self, out: Sequence[str], own: AbstractSet[str], cut: LineCut | None = None
    ) -> list[_Run]:
        """Every maximal run of the text's lines that is a run of one file's lines. A run starts
        at an informative line, not the model's own, that at most ``MAX_START_OCCURRENCES``
        places hold, at each of those places where no run of the same file on the same diagonal
        (file line minus text line) goes on; it goes on while the text's lines are the file's
        (``FileText.same``), compared a slice at a time (``_extent``). Only the lines the index
        holds are looked at one by one, found at C speed."""
        where, keys_of, prune = self._where, self._keys, self._prune_alone
        own_at = list(compress(count(), map(own.__contains__, out))) if own else []
        done: list[_Run] = []
        # a diagonal (a file, and its line's distance from the text's line) as one number: its
        # place less the text's line (a file's slot stays apart while files and texts are
        # shorter than 2**31 lines) -> where its last run ended
        ends: dict[int, int] = {}
        for index in compress(count(), map(where.__contains__, out)):
            line = out[index]
            found = where[line]
            places: Sequence[int]
            if isinstance(found, int):
                if ends.get(found - index, -1) > index:
                    continue  # a run of its one file goes on through this line
                places = (found,)
            elif len(found) > MAX_START_OCCURRENCES:
                continue
            else:
                places = found
            if (own and line in own) or not self._weight_of(line):
                continue
            for place in places:
                diagonal = place - index
                if ends.get(diagonal, -1) > index:
                    continue  # a run of this file goes on through this line
                key, number = keys_of[place // _SLOT], place % _SLOT
                if prune and self._alone(out, index, number, key, own, cut):
                    continue
                run = _Run(key, number, index, index + 1, 1)
                self._extend_back(run, out, own, cut)
                run.out_end = self._extent(out, index, number, self._lines[key], own_at, cut)
                run.lines_total += run.out_end - index - 1
                ends[diagonal] = run.out_end
                done.append(run)
        return done

    def _alone(
        self,
        out: Sequence[str],
        index: int,
        number: int,
        key: str,
        own: AbstractSet[str],
        cut: LineCut | None = None,
    ) -> bool:
        """Whether the run that starts at the text's line ``index`` with ``key``'s line
        ``number`` is that line alone: the line after it is not the file's next (or is the
        model's own), nor is the line before it a line ``_extend_back`` takes in (what
        ``_extent`` and ``_extend_back`` find first, told without making the run; a line equal
        to the file's key is the file's, else ``FileText.same`` is asked when the file has
        other spellings of its lines or the tool cuts lines)."""
        lines = self._lines[key]
        keys = lines.keys
        other_spellings = bool(lines.alternates) or cut is not None
        after = index + 1
        if after < len(out) and number < len(keys):
            shown = out[after]
            if (
                shown == keys[number] or (other_spellings and lines.same(shown, number + 1, cut))
            ) and shown not in own:
                return False
        if index > 0 and number > 1:
            before = out[index - 1]
            if (
                (
                    before == keys[number - 2]
                    or (other_spellings and lines.same(before, number - 1, cut))
                )
                and before not in own
                and not self._weigher(key)(before)
            ):
                return False
        return True

    def _whole_file(
        self, out: Sequence[str], own: AbstractSet[str], cut: LineCut | None = None
    ) -> list[_Run] | None:
        """When the text is one in-scope file's whole text (``cat FILE``), the one run that
        ``_runs`` would leave uncontested: that file's, from the first line to the last; every
        other run lies within it. ``None`` when that cannot be told at once: the text is no
        file's whole text, holds the model's own lines, starts its informative lines with one
        too common to start a run, or another file's run would cover the same lines (a twin,
        which ``_runs`` and ``_uncontested`` then judge)."""
        whole = (len(out), hash("\n".join(out))) if out else None
        if whole is None or whole not in self._wholes:
            return None
        key = self._wholes[whole]
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
            self._extend_back(run, out, own, cut)
            run.out_end = self._extent(out, first, number, self._lines[other], [], cut)
            run.lines_total += run.out_end - first - 1
            if run.out_start == 0 and run.out_end == len(out):
                if other != key or found is not None:
                    return None  # another run as long: not this file's alone
                found = run
        return [found] if found is not None else None

    @staticmethod
    def _extent(
        out: Sequence[str],
        index: int,
        number: int,
        lines: FileText,
        own_at: list[int],
        cut: LineCut | None = None,
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
        if (
            at < limit
            and out[at] != keys[at + shift]
            and not lines.same(out[at], at + shift + 1, cut)
        ):
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
            if not lines.same(out[low], low + shift + 1, cut):
                return low
            at = low + 1
        return limit

    def _weight_of(self, line: str) -> int:
        """``informative`` of a line, kept for the index's lines (each worked out once)."""
        found = self._weights.get(line)
        if found is None:
            found = informative(line)
            if line in self._where or line in self._common:
                self._weights[line] = found
        return found

    @staticmethod
    def _diff_weight(line: str) -> int:
        return _weight(DIFF_KEY, line)

    def _weigher(self, key: str) -> Callable[[str], int]:
        """What a line counts for in a run of ``key``'s lines (``_weight``): its ``informative``,
        kept for the index's lines; of the pinned diff, only a changed line's."""
        return self._weight_of if key != DIFF_KEY else self._diff_weight

    def _long_enough(self, run: _Run, out: Sequence[str]) -> bool:
        """Whether a run holds ``MIN_RUN_LINES`` informative lines and ``MIN_RUN_CHARS``
        informative characters (of the pinned diff, only its changed lines count), read until
        it does."""
        lines = chars = 0
        weight = self._weigher(run.key)
        for line in islice(out, run.out_start, run.out_end):
            counted = weight(line)
            if counted:
                lines, chars = lines + 1, chars + counted
                if lines >= MIN_RUN_LINES and chars >= MIN_RUN_CHARS:
                    return True
        return False

    def _extend_back(
        self, run: _Run, out: Sequence[str], own: AbstractSet[str], cut: LineCut | None = None
    ) -> None:
        """Take in the lines before a run's first informative line that are the file's too."""
        lines = self._lines[run.key]
        weight = self._weigher(run.key)
        while run.out_start > 0 and run.file_start > 1:
            before = out[run.out_start - 1]
            if not lines.same(before, run.file_start - 1, cut) or before in own or weight(before):
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
