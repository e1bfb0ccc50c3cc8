"""Pairing: adapter events into call records, by call id and tool, never by order.

``Pairer`` follows every call a stream names, pairs its start with its end (DESIGN §6 rules
1-4), places its path in the repository, and turns what the stream told into one
``CallRecord`` per call when the stream ends; it counts what the stream held besides calls
(malformed and unreadable lines, unknown events, drift, the client's version). ``DriftTally``
keeps the drift, bounded. No clock, environment, files or telemetry here; the records and their
bounds are ``coverage_gate.core.calls``, folding them is ``coverage_gate.core.folding``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import msgspec
from msgspec.structs import replace

from coverage_gate.contracts.enums import CallKind, ContentCheck, DriftKind, IssueKind
from coverage_gate.contracts.evidence_doc import CallIssue, DriftEntry
from coverage_gate.core.calls import (
    MAX_CALLS,
    MAX_DETAIL_CHARS,
    MAX_DRIFT,
    MAX_ID_CHARS,
    MAX_LINE_ISSUES,
    MAX_PATH_CHARS,
    MAX_UNREADABLE_IDS,
    CallOutcome,
    CallRecord,
    bounded,
)
from coverage_gate.core.events import (
    Action,
    ClientSeen,
    DiffPageAction,
    Drift,
    Event,
    FilesNotShown,
    IgnoredAction,
    Malformed,
    ReadAction,
    Shown,
    StreamCommit,
    StreamComplete,
    StreamReopened,
    TooLarge,
    ToolEnd,
    ToolStart,
    UnplacedRead,
    Unreadable,
    UnreadableArguments,
    Unrecognised,
    WorkingDirectory,
    WriteAction,
)
from coverage_gate.core.paths import Rejected, Rejection, RepoTree, normalise

__all__ = ["DriftTally", "Pairer"]


def _kind(action: Action) -> CallKind:
    if isinstance(action, ReadAction | UnreadableArguments | UnplacedRead):
        return CallKind.READ
    if isinstance(action, DiffPageAction):
        return CallKind.DIFF_PAGE
    if isinstance(action, WriteAction):
        return CallKind.WRITE
    return CallKind.IGNORED


class DriftTally:
    """Drift counted by kind and name, bounded (DESIGN §6 rule 19): at most ``MAX_DRIFT``
    distinct entries, the rest counted in ``dropped``."""

    def __init__(self) -> None:
        self._entries: dict[tuple[DriftKind, str], list[int]] = {}
        self.dropped = 0

    def add(self, kind: DriftKind, name: str, line: int, count: int = 1) -> None:
        name = bounded(name, MAX_ID_CHARS)[0]
        entry = self._entries.get((kind, name))
        if entry is not None:
            entry[0] += count
            entry[1] = min(entry[1], line)
        elif len(self._entries) < MAX_DRIFT:
            self._entries[(kind, name)] = [count, line]
        else:
            self.dropped += count

    def entries(self) -> tuple[DriftEntry, ...]:
        return tuple(
            DriftEntry(
                kind=kind, name=name, count=count, first_line=line, hides_reads=kind.hides_reads
            )
            for (kind, name), (count, line) in sorted(
                self._entries.items(), key=lambda item: (item[1][1], item[0])
            )
        )


class _Open(msgspec.Struct):
    start: ToolStart | None
    end: ToolEnd | None = None
    ambiguous: str = ""


class _Unread(msgspec.Struct):
    """What unreadable lines could have carried, bounded: the call ids recovered from them, and
    the lines (two at most: enough to tell "one line" from "several") that could have started
    or ended any call."""

    starts: dict[str, int] = msgspec.field(default_factory=dict)
    ends: dict[str, int] = msgspec.field(default_factory=dict)
    any_start: list[int] = msgspec.field(default_factory=list)
    any_end: list[int] = msgspec.field(default_factory=list)

    def add(
        self, ids: tuple[str, ...] | None, known: dict[str, int], anyone: list[int], line: int
    ) -> None:
        if ids is None or len(known) + len(ids) > MAX_UNREADABLE_IDS:
            if len(anyone) < 2 and line not in anyone:
                anyone.append(line)
            return
        for call_id in ids:
            known.setdefault(call_id, line)


class _Asked(NamedTuple):
    """What a call's start asked for: the file (placed in the repository), the range, what the
    request says it shows, and why its file cannot be named (``issue``, ``detail``)."""

    path: str | None = None
    offset: int | None = None
    limit: int | None = None
    shown: Shown | None = None
    issue: IssueKind | None = None
    detail: str = ""


class Pairer:
    """Pairs starts and ends by call id and tool, never by order (DESIGN §6 rules 1-3).

    Records are produced when the stream ends: a call id that is reused later in the stream makes
    every call under it ambiguous, so no call is final before then. State is bounded: every string
    kept is bounded (``bounded``), at most ``max_calls`` call ids are followed (a call past that is
    dropped and counted, and makes evidence unavailable rather than absent), at most
    ``max_line_issues`` line issues are kept (the rest counted).

    A line that could have carried tool events but could not be read (``Unreadable``) makes the
    evidence of the calls it could have affected unavailable, never absent: a call whose end it
    could be becomes ``outcome_unreadable`` (its file: ``reads_unknown``); a call whose start it
    could be, and so whose file is not known, is unattributed.
    """

    def __init__(
        self,
        root: str | None,
        tree: RepoTree | None = None,
        *,
        max_calls: int = MAX_CALLS,
        max_line_issues: int = MAX_LINE_ISSUES,
    ) -> None:
        self._root = root
        self._tree = tree
        self.stream_cwd: str | None = None
        self._max_calls = max_calls
        self._max_line_issues = max_line_issues
        self._calls: dict[str, _Open] = {}
        self._unread = _Unread()
        self._recorded: dict[str, str] = {}  # details of calls read back as outcome_unreadable
        self.complete = False
        self.files_not_shown: str | None = None  # why the source cannot show per-file reads
        self.malformed = 0
        self.unrecognised = 0
        self.dropped_calls = 0
        self.lines_with_issues: list[CallIssue] = []
        self.line_issue_total = 0
        self.drift = DriftTally()
        self.client_version: str | None = None
        self.stream_commit: tuple[str, int] | None = None

    def locate(self, root: str | None, tree: RepoTree | None) -> None:
        """Set the repository root and tree that paths are placed with (before ``records``)."""
        self._root, self._tree = root, tree

    def feed(self, events: Iterable[Event]) -> None:
        for event in events:
            self._feed_one(event)

    def _feed_one(self, event: Event) -> None:
        # calls first: they are nearly every event of a long stream
        if isinstance(event, ToolStart):
            self._start(self._bound_start(event))
        elif isinstance(event, ToolEnd):
            self._end(self._bound_end(event))
        else:
            self._feed_stream_event(event)

    def _feed_stream_event(self, event: Event) -> None:
        match event:
            case StreamComplete():
                self.complete = True
            case StreamReopened():
                self.complete = False
            case WorkingDirectory(path=path):
                self.stream_cwd = self.stream_cwd or path
            case FilesNotShown(detail=detail):
                self.files_not_shown = self.files_not_shown or bounded(detail, MAX_DETAIL_CHARS)[0]
            case Malformed(line=line, detail=detail):
                self.malformed += 1
                self._line_issue(IssueKind.MALFORMED_LINE, line, detail)
            case Unreadable(replayed=True):
                self._replayed(event)
            case Unreadable(line=line, detail=detail, starts=starts, ends=ends):
                self._unreadable(line, detail, starts, ends)
            case TooLarge(line=line, limit=limit):
                detail = f"longer than {limit} bytes; not decoded"
                self._unreadable(line, detail, None, None, kind=IssueKind.LINE_TOO_LARGE)
            case Unrecognised():
                self.unrecognised += 1
            case Drift(kind=kind, name=name, line=line):
                self.drift.add(kind, name, line)
            case ClientSeen(version=version) if self.client_version is None:
                self.client_version = bounded(version, MAX_ID_CHARS)[0]
            case StreamCommit(commit=commit, line=line) if self.stream_commit is None:
                self.stream_commit = (bounded(commit, MAX_ID_CHARS)[0], line)

    # --- bounds --------------------------------------------------------------------------------

    def _line_issue(self, kind: IssueKind, line: int, detail: str) -> None:
        self.line_issue_total += 1
        if len(self.lines_with_issues) < self._max_line_issues:
            kept, _ = bounded(detail, MAX_DETAIL_CHARS)
            self.lines_with_issues.append(CallIssue(kind=kind, line=line, detail=kept))

    def _keep(self, text: str, limit: int, what: str, line: int) -> str:
        if len(text) <= limit and text.isascii():
            return text
        kept, cut = bounded(text, limit)
        if cut:
            self._line_issue(
                IssueKind.VALUE_TRUNCATED,
                line,
                f"{what} of {len(text)} characters kept as its first {limit} and a hash",
            )
        return kept

    def _bound_action(self, action: Action, line: int) -> Action:
        match action:
            case ReadAction():
                return self._bound_read(action, line)
            case WriteAction(path=str(path), cwd=cwd):
                too_long = len(path) > MAX_PATH_CHARS or len(cwd or "") > MAX_PATH_CHARS
                return WriteAction() if too_long else action
            case UnreadableArguments() | UnplacedRead():
                detail = self._keep(action.detail, MAX_DETAIL_CHARS, "detail", line)
                return action if detail is action.detail else replace(action, detail=detail)
            case _:
                return action

    def _bound_read(self, action: ReadAction, line: int) -> Action:
        """A read's path and directory kept; one longer than any real path names no file."""
        for what, value in (("path", action.path), ("cwd", action.cwd or "")):
            if len(value) > MAX_PATH_CHARS:
                return UnreadableArguments(
                    detail=f"{what} of {len(value)} characters: longer than any real path "
                    f"({MAX_PATH_CHARS} at most)"
                )
        path = self._keep(action.path, MAX_PATH_CHARS, "path", line)
        cwd = None if action.cwd is None else self._keep(action.cwd, MAX_PATH_CHARS, "cwd", line)
        if path is action.path and cwd is action.cwd:
            return action
        return replace(action, path=path, cwd=cwd)

    def _bound_start(self, event: ToolStart) -> ToolStart:
        call_id = self._keep(event.call_id, MAX_ID_CHARS, "call id", event.line)
        tool = self._keep(event.tool, MAX_ID_CHARS, "tool name", event.line)
        action = self._bound_action(event.action, event.line)
        if call_id is event.call_id and tool is event.tool and action is event.action:
            return event
        return ToolStart(
            call_id=call_id, tool=tool, action=action, line=event.line, said=event.said
        )

    def _bound_end(self, event: ToolEnd) -> ToolEnd:
        call_id = self._keep(event.call_id, MAX_ID_CHARS, "call id", event.line)
        tool = (
            None
            if event.tool is None
            else self._keep(event.tool, MAX_ID_CHARS, "tool name", event.line)
        )
        error = (
            None
            if event.error_type is None
            else self._keep(event.error_type, MAX_ID_CHARS, "error type", event.line)
        )
        if call_id is event.call_id and tool is event.tool and error is event.error_type:
            return event
        # everything else the end told (what a read returned, its range) goes with it
        return replace(event, call_id=call_id, tool=tool, error_type=error)

    def _admit(self, call_id: str) -> bool:
        """Whether a call id not seen before can be followed; past the bound it is dropped."""
        if len(self._calls) < self._max_calls:
            return True
        self.dropped_calls += 1
        return False

    # --- pairing -------------------------------------------------------------------------------

    def _unreadable(
        self,
        line: int,
        detail: str,
        starts: tuple[str, ...] | None,
        ends: tuple[str, ...] | None,
        kind: IssueKind = IssueKind.MALFORMED_LINE,
    ) -> None:
        self.malformed += 1
        self._line_issue(kind, line, detail)
        unread = self._unread
        if starts is None or starts:
            kept = None if starts is None else tuple(self._ids(starts, line))
            unread.add(kept, unread.starts, unread.any_start, line)
        if ends is None or ends:
            kept = None if ends is None else tuple(self._ids(ends, line))
            unread.add(kept, unread.ends, unread.any_end, line)

    def _replayed(self, event: Unreadable) -> None:
        unread = self._unread
        for ids, known, anyone in (
            (event.starts, unread.starts, unread.any_start),
            (event.ends, unread.ends, unread.any_end),
        ):
            if ids is None or ids:
                kept = None if ids is None else tuple(self._ids(ids, event.line))
                unread.add(kept, known, anyone, event.line)
                for call_id in kept or ():
                    if len(self._recorded) < MAX_UNREADABLE_IDS:
                        self._recorded[call_id] = bounded(event.detail, MAX_DETAIL_CHARS)[0]

    def _ids(self, ids: tuple[str, ...], line: int) -> Iterable[str]:
        return (self._keep(call_id, MAX_ID_CHARS, "call id", line) for call_id in ids)

    def _start(self, event: ToolStart) -> None:
        known = self._calls.get(event.call_id)
        if known is None:
            if self._admit(event.call_id):
                self._calls[event.call_id] = _Open(start=event)
        elif known.start is not None and replace(event, line=known.start.line) == known.start:
            return  # the same start again, to the byte: a repeated line, not a second call
        elif not known.ambiguous:
            known.ambiguous = f"call id started again at line {event.line}"

    def _end(self, event: ToolEnd) -> None:
        known = self._calls.get(event.call_id)
        if known is None:
            if self._admit(event.call_id):
                self._calls[event.call_id] = _Open(start=None, end=event)
        elif known.ambiguous:
            return
        elif known.end is not None and replace(event, line=known.end.line) == known.end:
            return  # the same end again: a repeated line, not a second outcome
        elif known.end is not None:
            known.ambiguous = f"call id ended again at line {event.line}"
        elif known.start is not None and event.tool not in (None, known.start.tool):
            known.end = event
            known.ambiguous = (
                f"started as {known.start.tool!r}, ended as {event.tool!r} at line {event.line}"
            )
        else:
            known.end = event

    def unknown_tools(self) -> list[tuple[str, str, int]]:
        """The successful calls of tools the adapter does not know: tool, arguments as the model
        wrote them (bounded; empty when the stream does not carry them), line."""
        return [
            (state.start.tool, state.start.said or "", state.start.line)
            for state in self._calls.values()
            if state.start is not None
            and isinstance(state.start.action, IgnoredAction)
            and not state.start.action.known
            and state.end is not None
            and state.end.succeeded
            and not state.ambiguous
        ]

    def unpaired(self, records: Iterable[CallRecord]) -> None:
        """Starts without ends and ends without starts in a stream that says it completed: the
        adapter no longer sees how this client ends (or starts) a call (DESIGN §6 rule 19)."""
        if not self.complete:
            return
        for record in records:
            if record.issue in (IssueKind.MISSING_END, IssueKind.MISSING_START):
                side = "end" if record.issue is IssueKind.MISSING_END else "start"
                self.drift.add(
                    DriftKind.UNPAIRED, f"{record.tool or 'a call'} without its {side}", record.line
                )

    def records(self) -> list[CallRecord]:
        """Every call, in the order of the line that first named it."""
        self._check_recovered_ids()
        out = [self._resolved(call_id, state) for call_id, state in self._calls.items()]
        out.extend(self._unseen_calls())
        if self._recorded:
            out = [
                replace(record, detail=self._recorded[record.call_id])
                if record.issue is IssueKind.OUTCOME_UNREADABLE and record.call_id in self._recorded
                else record
                for record in out
            ]
        out.sort(key=lambda record: (record.line, record.call_id))
        return out

    def _check_recovered_ids(self) -> None:
        """An id recovered from an unreadable line that names no call may have been garbled:
        that line could then be any call's start or end."""
        unread = self._unread
        for call_id, line in unread.ends.items():
            if call_id not in self._calls and call_id not in unread.starts:
                unread.add(None, unread.ends, unread.any_end, line)
        for call_id, line in unread.starts.items():
            if call_id not in self._calls and call_id not in unread.ends:
                unread.add(None, unread.starts, unread.any_start, line)

    def _unseen_calls(self) -> list[CallRecord]:
        """Calls whose start and end both lie on unreadable lines: their file is not known."""
        unread = self._unread
        out: list[CallRecord] = []
        for call_id, line in unread.starts.items():
            if call_id in self._calls:
                continue
            end_line = unread.ends.get(call_id, unread.any_end[0] if unread.any_end else None)
            if end_line is not None:
                out.append(_unattributed(call_id, "", line, _lines(line, end_line)))
        if unread.any_start:
            for call_id, line in unread.ends.items():
                if call_id not in self._calls and call_id not in unread.starts:
                    out.append(_unattributed(call_id, "", line, f"line {line} and another"))
        lines = sorted({*unread.any_start, *unread.any_end})
        if unread.any_start and unread.any_end and len(lines) > 1:
            out.append(
                _unattributed(
                    f"(unreadable line {lines[0]})",
                    "",
                    lines[0],
                    _lines(lines[0], lines[1]),
                )
            )
        return out

    def _resolved(self, call_id: str, state: _Open) -> CallRecord:
        """The call's record, made unavailable where an unreadable line could have been part of
        it and could have changed what it showed."""
        record = self._record(call_id, state)
        if len(record.detail) > MAX_DETAIL_CHARS:
            record = replace(record, detail=bounded(record.detail, MAX_DETAIL_CHARS)[0])
        if state.ambiguous:
            return record
        start_line, end_line = self._unread_lines(call_id, state)
        if start_line is None and end_line is None:
            return record
        if state.start is None:
            return _start_unread(call_id, record, state.end, start_line, end_line)
        return _outcome_unread(record, state.start, state.end, start_line, end_line)

    def _unread_lines(self, call_id: str, state: _Open) -> tuple[int | None, int | None]:
        """The unreadable lines that could have started and ended the call, when any could."""
        unread = self._unread
        start_line = unread.starts.get(call_id)
        if start_line is None and state.start is None and unread.any_start:
            start_line = unread.any_start[0]
        end_line = unread.ends.get(call_id)
        if end_line is None and state.end is None and unread.any_end:
            end_line = unread.any_end[0]
        return start_line, end_line

    def _record(self, call_id: str, state: _Open) -> CallRecord:
        start, end = state.start, state.end
        if start is None:
            assert end is not None  # noqa: S101 - an entry exists only after a start or an end
            return _without_start(call_id, end)
        action = start.action
        asked = self._asked(action)
        issue, detail = asked.issue, asked.detail
        outcome = CallOutcome.INCOMPLETE
        if state.ambiguous:
            issue, detail = IssueKind.AMBIGUOUS_CALL_ID, state.ambiguous
        elif end is None:
            issue = issue or IssueKind.MISSING_END
            detail = detail or f"start at line {start.line} has no end"
        else:
            outcome = CallOutcome.SUCCEEDED if end.succeeded else CallOutcome.FAILED
        return CallRecord(
            call_id=call_id,
            tool=start.tool,
            kind=_kind(action),
            outcome=outcome,
            line=start.line,
            path=asked.path,
            offset=asked.offset,
            limit=asked.limit,
            error_type=end.error_type
            if end is not None and outcome is not CallOutcome.INCOMPLETE
            else None,
            result_range=end.result_range
            if end is not None and outcome is not CallOutcome.INCOMPLETE
            else None,
            issue=issue,
            detail=detail,
            shown=_shown_by(end, asked.shown)
            if end is not None and outcome is CallOutcome.SUCCEEDED
            else None,
            # a failed call's output reached the model too (DESIGN §6 rule 25); the content
            # checks give a failed read tool none
            content=end.content
            if end is not None and outcome in (CallOutcome.SUCCEEDED, CallOutcome.FAILED)
            else None,
        )

    def _asked(self, action: Action) -> _Asked:
        """What a call's start asked for, its file placed in the repository."""
        match action:
            case ReadAction():
                return self._placed_read(action)
            case WriteAction(path=str(path), cwd=cwd):
                written = normalise(path, self._root, cwd, tree=self._tree)
                return _Asked(path=written if isinstance(written, str) else None)
            case UnplacedRead(detail=detail):
                return _Asked(issue=IssueKind.PATH_WITHOUT_ROOT, detail=detail)
            case DiffPageAction(offset=offset, limit=limit):
                return _Asked(offset=offset, limit=limit)
            case UnreadableArguments(detail=detail):
                return _Asked(issue=IssueKind.ARGUMENTS_UNAVAILABLE, detail=detail)
            case _:
                return _Asked()

    def _placed_read(self, action: ReadAction) -> _Asked:
        """A read's file placed in the repository, or why it names none."""
        normalised = normalise(
            action.path, self._root, action.cwd, mention=action.mention, tree=self._tree
        )
        if isinstance(normalised, Rejected):
            issue = (
                IssueKind.PATH_WITHOUT_ROOT
                if normalised.reason is Rejection.ABSOLUTE_WITHOUT_ROOT
                else IssueKind.PATH_REJECTED
            )
            return _Asked(
                offset=action.offset,
                limit=action.limit,
                shown=action.shown,
                issue=issue,
                detail=normalised.describe(),
            )
        return _Asked(path=normalised, offset=action.offset, limit=action.limit, shown=action.shown)


def _without_start(call_id: str, end: ToolEnd) -> CallRecord:
    """An end whose start the stream never showed."""
    return CallRecord(
        call_id=call_id,
        tool=end.tool or "",
        kind=CallKind.IGNORED,
        outcome=CallOutcome.INCOMPLETE,
        line=end.line,
        issue=IssueKind.MISSING_START,
        detail=f"end at line {end.line} has no start",
    )


def _start_unread(
    call_id: str,
    record: CallRecord,
    end: ToolEnd | None,
    start_line: int | None,
    end_line: int | None,
) -> CallRecord:
    """A call whose start was not read: an unreadable line that could have started it makes it
    a call that could have read any file."""
    if start_line is None or (end is not None and end_line is None and not end.succeeded):
        return record  # no start could be read: whatever ended it, it showed nothing
    where = _lines(start_line, end_line if end_line is not None else start_line)
    return _unattributed(call_id, record.tool, record.line, where)


def _outcome_unread(
    record: CallRecord,
    start: ToolStart,
    end: ToolEnd | None,
    start_line: int | None,
    end_line: int | None,
) -> CallRecord:
    """A started call that an unreadable line could have started again or ended: its outcome is
    unavailable when it could have shown a file (its own, or any file)."""
    if end_line is None and (end is None or not end.succeeded):
        return record  # its outcome is known (failed), or it never ended
    line, role = (end_line, "ended") if end_line is not None else (start_line, "started")
    detail = f"line {line}, which could have {role} it, could not be read"
    if isinstance(start.action, ReadAction) and record.path is not None:
        return replace(
            record,
            outcome=CallOutcome.INCOMPLETE,
            error_type=None,
            result_range=None,
            issue=IssueKind.OUTCOME_UNREADABLE,
            detail=detail,
        )
    unplaced = isinstance(start.action, UnplacedRead) or (
        isinstance(start.action, ReadAction) and record.issue is IssueKind.PATH_WITHOUT_ROOT
    )
    if isinstance(start.action, DiffPageAction) or unplaced:
        what = "a diff page" if isinstance(start.action, DiffPageAction) else "a read not placed"
        return replace(
            record,
            outcome=CallOutcome.INCOMPLETE,
            error_type=None,
            result_range=None,
            issue=IssueKind.OUTCOME_UNREADABLE,
            detail=f"{detail} ({what}: any file)",
        )
    return record


def _shown_by(end: ToolEnd, asked: Shown | None) -> Shown | None:
    """What a successful call showed: what its text showed when that matched the revision, else
    what its end reports, else what it asked for."""
    content = end.content
    if content is not None and content.check is ContentCheck.MATCHED and content.shown is not None:
        return content.shown
    return end.shown or asked


def _lines(first: int, second: int) -> str:
    return f"line {first}" if first == second else f"lines {first} and {second}"


def _unattributed(call_id: str, tool: str, line: int, where: str) -> CallRecord:
    """A call that could have read any file: its start could not be read."""
    return CallRecord(
        call_id=call_id,
        tool=tool,
        kind=CallKind.READ,
        outcome=CallOutcome.INCOMPLETE,
        line=line,
        issue=IssueKind.OUTCOME_UNREADABLE,
        detail=f"could have read any file: its start could not be read ({where})",
    )
