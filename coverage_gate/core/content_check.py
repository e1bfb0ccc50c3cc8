"""What a call returned, compared with the revision (DESIGN §6 rules 16-18, 23-26). Pure.

Adapters hand over what a call returned as the model received it, with the client's wrapping
taken off (``Returned``: line-number prefixes, ``<file>`` wrappers, reminders appended at the
end, notices and placeholders). Two checks use it, both in the client's declared presentation
(``coverage_gate.core.presentation``):

**The read check** (rules 16, 23-24): ``coverage_gate.core.read_check``. A read of a file the
stream itself wrote whose text does not align with the revision is a mismatch here.

**Credit by content** (rules 17, 25): ``coverage_gate.core.content_index``. Any call's text
(shell output, ``git diff``, a tool no adapter knows; a failed command's too, not a read tool's
error) that holds runs of an in-scope file's lines is evidence of those lines for that file.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final

from msgspec.structs import replace

from coverage_gate.contracts.enums import ContentCheck, MismatchKind
from coverage_gate.core.content_index import ContentIndex, informative, own_and_piece_keys
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
from coverage_gate.core.own_text import MAX_OWN_LINES, OwnPieces
from coverage_gate.core.presentation import BASELINE, LineCut, Presentation, utf16_units
from coverage_gate.core.read_check import (
    UNCHECKED,
    FileText,
    ReadCheck,
    check_read,
    file_lines,
)
from coverage_gate.core.revision_files import blob_id

__all__ = [
    "MAX_CALLS",
    "MAX_OTHER_BYTES",
    "MAX_OTHER_FILES",
    "MAX_REMEMBERED_ENDS",
    "MAX_SAID_CHARS",
    "UNCHECKED",
    "CallChecker",
    "ContentIndex",
    "ReadCheck",
    "check_read",
    "file_lines",
]

#: Calls followed at once (the pairer's own bound).
MAX_CALLS = 20_000
# --- credit by content -------------------------------------------------------------------------


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
        # each open call's request, its words and its tool (whose presentation its text is in)
        self._open: dict[str, tuple[Action, str | None, str]] = {}
        # files the stream's own calls wrote: a read of one that is not the revision's text is
        # the reviewer's text (DESIGN §6 rule 20), aligned or not
        self._written: set[str] = set()
        self._texts: OrderedDict[str, FileText] = OrderedDict()
        self._blob_ids: OrderedDict[str, str] = OrderedDict()
        # reads whose text no declared presentation explains (tool, line): presentation drift
        self.unexplained: list[tuple[str, int]] = []
        # the model's own text so far, every call's: a line of it never credits (rule 25)
        self._own: set[str] = set()
        # and as pieces: a line made of a few of them never credits either (rule 29)
        self._pieces = OwnPieces()
        # the last ends checked, so that a line repeated to the byte is checked the same
        self._ended: OrderedDict[str, tuple[Returned, ContentSeen]] = OrderedDict()
        # per file of the pinned diff, its change in this presentation (made when a text first
        # needs it), and where its sections lie in the diff
        self._changed: dict[str, _Change] = {}
        self._sections: dict[str, list[tuple[int, int]]] | None = None
        # per file of the pinned diff, the lines only the file before the change has, and only
        # the revision has (made when a text first credits the file)
        self._only_lines: dict[str, tuple[set[str], set[str], set[str]]] = {}

    def said(self, text: str) -> None:
        """The model's own text outside a call (a message): never evidence, as a call's
        arguments are not (DESIGN §6 rule 29)."""
        self._take_own(text[:MAX_SAID_CHARS])

    def _take_own(self, said: str) -> None:
        own, keys = own_and_piece_keys(self._presentation, said)
        if len(self._own) < MAX_OWN_LINES:
            self._own |= own
        self._pieces.add(keys)

    def start(self, event: ToolStart) -> ToolStart:
        """Remember what the call asked for and said, and which file a write names; pass the
        start on without its words."""
        if isinstance(event.action, WriteAction) and event.action.path is not None:
            written = self._place(ReadAction(path=event.action.path, cwd=event.action.cwd))
            if written is not None and len(self._written) < MAX_CALLS:
                self._written.add(written)
        if len(self._open) < MAX_CALLS or event.call_id in self._open:
            said = event.said[:MAX_SAID_CHARS] if event.said else None
            self._open[event.call_id] = (event.action, said, event.tool)
            if said:
                self._take_own(said)
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
        action, _said, tool = self._open.pop(event.call_id, (None, None, event.tool))
        if isinstance(action, IgnoredAction) and action.prints and not returned.text:
            seen = self._printed_nothing(action)
            return replace(event, returned=None, content=seen)
        # a cut marker counts only in the output of the tool that writes it (DESIGN §6 rule 28)
        cut = self._presentation.cut_of(tool)
        path, checked = (
            self._read(action, returned, event, cut)
            if isinstance(action, ReadAction)
            else (None, None)
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
                    pieces=self._pieces,
                    kept=returned.kept,
                    tail_kept=not (returned.cut and returned.kept is not None),
                    cut=cut,
                )
                if not returned.placeholder
                else ContentSeen()
            )
            seen = self._not_older(seen, returned.text)
            if checked is not None:
                seen = self._joined(checked, seen, path)
            if isinstance(action, IgnoredAction) and action.prints:
                seen = self._printed_whole(action, returned, seen)
        seen = self._with_folded(seen, returned.text, path)
        self._ended[event.call_id] = (returned, seen)
        if len(self._ended) > MAX_REMEMBERED_ENDS:
            self._ended.popitem(last=False)
        return replace(event, returned=None, content=seen)

    def _read(
        self, action: ReadAction, returned: Returned, event: ToolEnd, cut: LineCut | None
    ) -> tuple[str | None, ContentSeen]:
        """The read check of one read (module notes), with the file it read; ``cut``: how its
        tool cuts a long line, when it does."""
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
            return path, self._shortened(path, data, asked, cut)
        text = self._text_of(path, data)
        result = check_read(returned, data, asked, self._presentation, text, cut)
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
            blob=self._blob_of(path, data),
        )

    def _shortened(
        self, path: str, data: bytes | None, asked: Shown | None, cut: LineCut | None
    ) -> ContentSeen:
        """A read whose text the stream does not carry, of which the client says it shortened
        the lines longer than its tool's cut length: unchecked, with those lines of the range
        it showed as cut at that length (a change past it is unseen, DESIGN §6 rule 25)."""
        text = self._text_of(path, data)
        if cut is None or text is None:
            return ContentSeen(check=ContentCheck.UNCHECKED)
        limit = cut.length
        first, last = 1, len(text)
        if asked is not None and asked.kind is ShownKind.LINES and asked.start > 0:
            first, last = asked.start, min(asked.end or last, last)
        cuts = tuple(
            (text.file_line(number), text.chars_in_units(number, limit))
            for number in range(first, last + 1)
            if utf16_units(text.keys[number - 1]) > limit
        )
        return ContentSeen(check=ContentCheck.UNCHECKED, cuts=cuts)

    def _mismatch_kind(self, path: str, returned: Returned) -> MismatchKind:
        """What a mismatched read of ``path`` showed instead: the stream's own change of it, an
        older text (a line of it is one the change removed and not the revision's), or other."""
        if path in self._written:
            return MismatchKind.EDIT
        removed = self._removed_lines(path)
        if removed:
            text = returned.text
            shown = set(self._presentation.keys(self._presentation.lines(text), text))
            revision = self._text_of(path, self._file(path))
            kept = set(revision.keys) if revision is not None else set()
            if (shown - kept) & removed:
                return MismatchKind.OLDER
        return MismatchKind.OTHER

    def _removed_lines(self, path: str) -> set[str]:
        """The keys of the informative lines the pinned diff's change of ``path`` removed."""
        return self._changed_lines(path).removed

    def _changed_lines(self, path: str) -> _Change:
        """The pinned diff's change of ``path`` in this presentation (``_Change``); its section
        alone is read, once."""
        found = self._changed.get(path)
        if found is None:
            if self._sections is None:
                self._sections = _sections(self._diff or b"")
            sections = [
                self._diff[start:end].decode("utf-8", "replace") if self._diff else ""
                for start, end in self._sections.get(path, ())
            ]
            found = self._changed[path] = _Change(sections, self._presentation)
        return found

    def _with_folded(self, seen: ContentSeen, text: str, path: str | None) -> ContentSeen:
        """``seen`` with the changed lines it showed only in a form that does not tell them
        from the lines they replaced (``_Change.folded``): white space or a CR the presentation
        folds, a line a CR overwrote. Such a line is seen only where the text holds it as it
        is, character for character (DESIGN §6 rule 29)."""
        if not self._diff:
            return seen
        ranges: list[tuple[str, int, int]] = [
            (credit.path, credit.start, credit.end) for credit in seen.credits
        ]
        shown = seen.shown
        if path is not None and seen.check is ContentCheck.MATCHED and shown is not None:
            # a byte range is compared byte for byte: nothing of it is folded
            if shown.kind is ShownKind.WHOLE:
                ranges.append((path, 1, 1 << 62))
            elif shown.kind is ShownKind.LINES:
                ranges.append((path, max(shown.start, 1), shown.end or 1 << 62))
        found: list[tuple[str, int]] = []
        lines: set[str] | None = None
        for name, first, last in ranges:
            folded = self._changed_lines(name).folded if name in self._in_scope else {}
            for number, line in folded.items():
                if first <= number <= last:
                    if lines is None:
                        lines = set(text.split("\n"))
                    if line is None or line not in lines:
                        found.append((name, number))
        return replace(seen, folded=tuple(found)) if found else seen

    def _not_older(self, seen: ContentSeen, text: str) -> ContentSeen:
        """``seen`` without the credits of a file whose lines here are its text before the
        change (DESIGN §6 rule 29, whatever the tool: ``git show HEAD~1:F``, a saved copy): the
        text holds a line the change removed that the revision does not hold, and no line only
        the revision has. It matches the older file at least as well, so it tells nothing of
        the change apart."""
        if not seen.credits or not self._diff:
            return seen
        paths = {
            credit.path
            for credit in seen.credits
            if self._removed_lines(credit.path) or self._changed_lines(credit.path).folded_before
        }
        if not paths:
            return seen
        shown = set(self._index_of().keys_of(text))  # the text as scan keyed it
        older = {path for path in paths if self._is_older(path, shown, text)}
        if not older:
            return seen
        return replace(seen, credits=tuple(c for c in seen.credits if c.path not in older))

    def _is_older(self, path: str, shown: set[str], text: str) -> bool:
        """Whether the lines ``shown`` (keys of ``text``) hold one only the file before the
        change had, and none only the revision has; where the presentation folds the change
        (white space, a CR), the lines of ``text`` as they are tell the two apart."""
        only = self._only_lines.get(path)
        change = self._changed_lines(path)
        if only is None:
            revision = self._text_of(path, self._file(path))
            kept = set(revision.keys) if revision is not None else set()
            # a removed line's own text (its CR too) that the revision holds elsewhere, as it
            # is, tells nothing apart
            held = set(revision.text.split("\n")) if revision is not None else set()
            only = self._only_lines[path] = (
                change.removed - kept,
                change.added - change.removed,
                change.folded_before - held,
            )
        before, after, folded_before = only
        if any(map(informative, after & shown)):
            return False
        if not before.isdisjoint(shown):
            return True
        if not folded_before:
            return False
        lines = set(text.split("\n"))
        after_as_is = {line for line in change.folded.values() if line is not None}
        return not folded_before.isdisjoint(lines) and after_as_is.isdisjoint(lines)

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

    def _printed_whole(
        self, action: IgnoredAction, returned: Returned, seen: ContentSeen
    ) -> ContentSeen:
        """A command that prints files from their first line (a plain ``cat``, ``head F``,
        ``nl F``) whose whole output reached the model and is exactly those files' whole texts,
        in order, numbers taken off (DESIGN §6 rule 30): each file it names is credited whole,
        whatever its length (``cat VERSION``) and whichever other file holds the same bytes (a
        twin ``.env``), unless a line of it is the model's own text. Text with no file named
        still needs a run that is one file's alone (``ContentIndex.scan``)."""
        if returned.placeholder or returned.cut or returned.kept is not None:
            return seen
        presentation = self._presentation
        lines = presentation.lines(returned.text)
        if action.numbered:
            found = _unnumbered(lines)
            if found is None:
                return seen
            lines = found
        out = presentation.keys(lines, returned.text)
        if self._own and not self._own.isdisjoint(out):
            return seen
        if self._pieces.among(out, informative):
            return seen
        named: list[tuple[str, int, bytes]] = []
        expected: list[str] = []
        for name in action.prints:
            path = self._place(ReadAction(path=name, cwd=action.cwd))
            data = self._file(path) if path is not None else None
            text = self._text_of(path, data) if path is not None else None
            if path is None or data is None or text is None:
                return seen
            named.append((path, len(text.keys), data))
            expected += text.keys
        if out != expected:
            return seen
        credited = {credit.path for credit in seen.credits}
        added = tuple(
            Credit(path=path, start=1, end=lines, blob=blob_id(data))
            for path, lines, data in named
            if path not in credited
        )
        if not added:
            return seen
        now = credited | {credit.path for credit in added}
        return replace(
            seen,
            credits=seen.credits + added,
            uncertain=tuple(path for path in seen.uncertain if path not in now),
        )

    def _failed(self, event: ToolEnd, returned: Returned) -> ToolEnd:
        """A failed call: what it printed reached the model all the same (``cat F; exit 1``)
        and credits by content (DESIGN §6 rule 25); a read tool's failure is its error message
        and shows nothing."""
        action, _said, tool = self._open.pop(event.call_id, (None, None, event.tool))
        if isinstance(action, ReadAction) or returned.placeholder or not returned.text:
            return replace(event, returned=None)
        seen = self._index_of().scan(
            returned.text,
            own=self._own,
            pieces=self._pieces,
            kept=returned.kept,
            tail_kept=not (returned.cut and returned.kept is not None),
            cut=self._presentation.cut_of(tool),
        )
        seen = self._with_folded(self._not_older(seen, returned.text), returned.text, None)
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

    def _blob_of(self, path: str, data: bytes | None) -> str | None:
        """The blob id of the file at the revision, worked out once per file (the last
        ``MAX_OTHER_FILES`` kept)."""
        if data is None:
            return None
        found = self._blob_ids.get(path)
        if found is None:
            found = self._blob_ids[path] = blob_id(data)
            if len(self._blob_ids) > MAX_OTHER_FILES:
                self._blob_ids.popitem(last=False)
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


_HUNK: Final = re.compile(r"@@ -[0-9]+(?:,[0-9]+)? \+([0-9]+)")


class _Change:
    """One file's change in the pinned diff, in a client's presentation: the keys of the
    informative lines it removed (``removed``) and of the lines it added (``added``); and the
    lines that presentation folds into the lines they replaced (``folded``: each added line's
    number, with its text as it is, or ``None`` where no text of this client can show it apart,
    a change of trailing blanks a client trims), with the removed lines' own texts that no
    added line of this change is (``folded_before``; the check of older text also drops those
    the rest of the revision's file holds). An added line is folded when its key is a
    removed line's key but its text is not (white space or a CR is all that changed), or when a
    CR inside it makes a terminal overwrite its start (DESIGN §6 rule 29)."""

    __slots__ = ("added", "folded", "folded_before", "removed")

    def __init__(self, sections: list[str], presentation: Presentation) -> None:
        key = presentation.key
        self.removed: set[str] = set()
        self.added: set[str] = set()
        removed_as_is: dict[str, list[str]] = {}
        added_at: list[tuple[int, str]] = []
        for section in sections:
            number = 0
            for raw in section.split("\n"):
                head = raw[:1]
                if head == "@":
                    hunk = _HUNK.match(raw)
                    number = int(hunk.group(1)) if hunk is not None else number
                elif head == " ":
                    number += 1
                elif head == "-" and raw[:3] != "---":
                    line = key(raw[1:])
                    removed_as_is.setdefault(line, []).append(raw[1:])
                    if informative(line):
                        self.removed.add(line)
                elif head == "+" and raw[:3] != "+++":
                    self.added.add(key(raw[1:]))
                    added_at.append((number, raw[1:]))
                    number += 1
        self.folded: dict[int, str | None] = {}
        before: set[str] = set()
        added_as_is = {line for _number, line in added_at}
        trims = presentation.trims_trailing_space or presentation.terminal
        for number, line in added_at:
            olds = removed_as_is.get(key(line), ())
            others = [old for old in olds if old != line]
            if others:
                trimmed = all(old.rstrip(" \t") == line.rstrip(" \t") for old in others)
                self.folded[number] = None if trims and trimmed else line
                before.update(old for old in others if old not in added_as_is)
            elif presentation.terminal_breaks and "\r" in line.rstrip("\r"):
                self.folded[number] = line  # a terminal shows what the CR left of it
        self.folded_before = before


# a numbered line (``cat -n``, ``nl``): the number, right-aligned, then a tab (or the blanks a
# terminal shows for it); ``nl`` leaves a blank line unnumbered, as blanks
_NUMBERED: Final = re.compile(r" *([0-9]+)(?:\t| )")


def _unnumbered(lines: list[str]) -> list[str] | None:
    """The lines of a numbered print without their numbers, counted from 1 with none skipped;
    ``None`` when a line is not so numbered."""
    found: list[str] = []
    expected = 1
    for line in lines:
        match = _NUMBERED.match(line)
        if match is None:
            if line.strip(" \t"):
                return None
            found.append("")  # a blank line ``nl`` did not number
            continue
        if int(match.group(1)) != expected:
            return None
        expected += 1
        found.append(line[match.end() :])
    return found


_SECTION_START: Final = re.compile(rb"^diff --git |^\+\+\+ b/(.*)$", re.MULTILINE)


def _sections(diff: bytes) -> dict[str, list[tuple[int, int]]]:
    """Where each file's sections lie in the pinned diff: from its ``+++ b/`` line to the next
    ``diff --git`` line (or the end), by byte offsets."""
    found: dict[str, list[tuple[int, int]]] = {}
    path, start = "", 0
    for match in _SECTION_START.finditer(diff):
        if path:
            found.setdefault(path, []).append((start, match.start()))
        named = match.group(1)
        path = named.decode("utf-8", "replace") if named is not None else ""
        start = match.end()
    if path:
        found.setdefault(path, []).append((start, len(diff)))
    return found
