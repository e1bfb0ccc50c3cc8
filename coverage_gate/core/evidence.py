"""Pure evidence core: pair tool starts with ends, then fold calls into the bounded record.

No clock, environment, files or telemetry here. ``Pairer`` turns adapter events into
``CallRecord`` values (DESIGN §6 rules 1-4); ``resolve_shown`` tells in lines what byte-ranged
reads of files in the pinned diff showed, with their content passed in through a port;
``EvidenceFolder`` folds records into the ``EvidenceDocument`` (rules 5-14). The telemetry edge
carries records through spans between the two, so the document is what the spans say.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from enum import StrEnum

import msgspec
from msgspec.structs import replace

from coverage_gate.contracts.defaults import EVIDENCE_VERSION
from coverage_gate.contracts.enums import (
    CallKind,
    Capability,
    ContentCheck,
    DiffStatus,
    DriftKind,
    IssueKind,
)
from coverage_gate.contracts.evidence_doc import (
    Bounds,
    ByteRange,
    CallIssue,
    ContentSummary,
    Counters,
    DiffSummary,
    DriftEntry,
    EvidenceDocument,
    FileEvidence,
    Mutation,
)
from coverage_gate.core.depth import (
    ChangeMarks,
    ContentSource,
    LineSet,
    LineTable,
    as_asked,
    file_depth,
    needs_content,
    resolve,
    simplified,
)
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.events import (
    UNKNOWN_SHOWN,
    Action,
    ByteSpan,
    ClientSeen,
    ContentSeen,
    DiffPageAction,
    Drift,
    Event,
    FilesNotShown,
    IgnoredAction,
    Malformed,
    ReadAction,
    Shown,
    ShownKind,
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

MAX_RANGES_PER_FILE = 32
MAX_CALLS = 20_000  # call ids followed at once; real reviews make hundreds
MAX_LINE_ISSUES = 256
MAX_UNREADABLE_IDS = 4096
MAX_ID_CHARS = 256  # call ids, tool names, error types
MAX_PATH_CHARS = 4096  # PATH_MAX: no longer path names a real file
MAX_DETAIL_CHARS = 512
MAX_DRIFT = 64  # distinct (kind, name) drift entries kept; the rest counted
MAX_MUTATIONS = 64


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INCOMPLETE = "incomplete"


class CallRecord(msgspec.Struct, frozen=True):
    """One tool call as the evidence core sees it, after pairing and path normalisation."""

    call_id: str
    tool: str
    kind: CallKind
    outcome: Outcome
    line: int
    path: str | None = None
    offset: int | None = None
    limit: int | None = None
    error_type: str | None = None
    result_range: ByteSpan | None = None
    issue: IssueKind | None = None
    detail: str = ""
    shown: Shown | None = None  # what a successful read returned (the end's word, else the start's)
    content: ContentSeen | None = None  # what its returned text showed (successful calls only)


class StreamSummary(msgspec.Struct, frozen=True):
    """What the stream as a whole said, beyond its calls."""

    source: str
    revision: str
    capability: Capability
    stream_complete: bool
    lines: int = 0
    malformed_lines: int = 0
    unrecognised_events: int = 0
    agent: str | None = None
    line_issues: tuple[CallIssue, ...] = ()
    line_issue_total: int = 0
    dropped_calls: int = 0  # calls past the pairer's bound: their evidence is unavailable
    client_version: str | None = None
    drift: tuple[DriftEntry, ...] = ()
    drift_dropped: int = 0


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


def bounded(text: str, limit: int) -> tuple[str, bool]:
    """``text`` as it is kept: at most ``limit`` characters, then (when longer) a marker with its
    length and a hash, so that two long values never read as one; lone surrogates (which no
    encoder can write) replaced. The flag says it was cut."""
    if len(text) <= limit and text.isascii():
        return text, False
    raw = text.encode("utf-8", "surrogatepass")
    clean = raw.decode("utf-8", "replace") if _has_surrogates(text) else text
    if len(clean) <= limit:
        return clean, False
    digest = hashlib.sha256(raw).hexdigest()[:16]
    return f"{clean[:limit]}\u2026[{len(text)} chars, sha256 {digest}]", True


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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
        if isinstance(action, ReadAction):
            for what, value in (("path", action.path), ("cwd", action.cwd or "")):
                if len(value) > MAX_PATH_CHARS:
                    return UnreadableArguments(
                        f"{what} of {len(value)} characters: longer than any real path "
                        f"({MAX_PATH_CHARS} at most)"
                    )
            path = self._keep(action.path, MAX_PATH_CHARS, "path", line)
            cwd = (
                None if action.cwd is None else self._keep(action.cwd, MAX_PATH_CHARS, "cwd", line)
            )
            if path is action.path and cwd is action.cwd:
                return action
            return replace(action, path=path, cwd=cwd)
        if isinstance(action, WriteAction) and action.path is not None:
            if len(action.path) > MAX_PATH_CHARS or len(action.cwd or "") > MAX_PATH_CHARS:
                return WriteAction()
            return action
        if isinstance(action, UnreadableArguments | UnplacedRead):
            detail = self._keep(action.detail, MAX_DETAIL_CHARS, "detail", line)
            return action if detail is action.detail else replace(action, detail=detail)
        return action

    def _bound_start(self, event: ToolStart) -> ToolStart:
        call_id = self._keep(event.call_id, MAX_ID_CHARS, "call id", event.line)
        tool = self._keep(event.tool, MAX_ID_CHARS, "tool name", event.line)
        action = self._bound_action(event.action, event.line)
        if call_id is event.call_id and tool is event.tool and action is event.action:
            return event
        return ToolStart(call_id, tool, action, event.line, event.said)

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
                self._calls[event.call_id] = _Open(event)
        elif known.start is not None and replace(event, line=known.start.line) == known.start:
            return  # the same start again, to the byte: a repeated line, not a second call
        elif not known.ambiguous:
            known.ambiguous = f"call id started again at line {event.line}"

    def _end(self, event: ToolEnd) -> None:
        known = self._calls.get(event.call_id)
        if known is None:
            if self._admit(event.call_id):
                self._calls[event.call_id] = _Open(None, event)
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
        unread = self._unread
        start_line = unread.starts.get(call_id)
        if start_line is None and state.start is None and unread.any_start:
            start_line = unread.any_start[0]
        end_line = unread.ends.get(call_id)
        if end_line is None and state.end is None and unread.any_end:
            end_line = unread.any_end[0]
        start, end = state.start, state.end
        if start_line is None and end_line is None:
            return record
        if start is None:
            if start_line is None or (end is not None and end_line is None and not end.succeeded):
                return record  # no start could be read: whatever ended it, it showed nothing
            where = _lines(start_line, end_line if end_line is not None else start_line)
            return _unattributed(call_id, record.tool, record.line, where)
        if end_line is None and (end is None or not end.succeeded):
            return record  # its outcome is known (failed), or it never ended
        line, role = (end_line, "ended") if end_line is not None else (start_line, "started")
        detail = f"line {line}, which could have {role} it, could not be read"
        if isinstance(start.action, ReadAction) and record.path is not None:
            return replace(
                record,
                outcome=Outcome.INCOMPLETE,
                error_type=None,
                result_range=None,
                issue=IssueKind.OUTCOME_UNREADABLE,
                detail=detail,
            )
        unplaced = isinstance(start.action, UnplacedRead) or (
            isinstance(start.action, ReadAction) and record.issue is IssueKind.PATH_WITHOUT_ROOT
        )
        if isinstance(start.action, DiffPageAction) or unplaced:
            what = (
                "a diff page" if isinstance(start.action, DiffPageAction) else "a read not placed"
            )
            return replace(
                record,
                outcome=Outcome.INCOMPLETE,
                error_type=None,
                result_range=None,
                issue=IssueKind.OUTCOME_UNREADABLE,
                detail=f"{detail} ({what}: any file)",
            )
        return record

    def _record(self, call_id: str, state: _Open) -> CallRecord:
        start, end = state.start, state.end
        if start is None:
            assert end is not None  # noqa: S101 - an entry exists only after a start or an end
            return CallRecord(
                call_id=call_id,
                tool=end.tool or "",
                kind=CallKind.IGNORED,
                outcome=Outcome.INCOMPLETE,
                line=end.line,
                issue=IssueKind.MISSING_START,
                detail=f"end at line {end.line} has no start",
            )
        action = start.action
        path: str | None = None
        offset = limit = None
        shown: Shown | None = None
        issue: IssueKind | None = None
        detail = ""
        if isinstance(action, ReadAction):
            offset, limit, shown = action.offset, action.limit, action.shown
            normalised = normalise(
                action.path, self._root, action.cwd, mention=action.mention, tree=self._tree
            )
            if isinstance(normalised, Rejected):
                issue = (
                    IssueKind.PATH_WITHOUT_ROOT
                    if normalised.reason is Rejection.ABSOLUTE_WITHOUT_ROOT
                    else IssueKind.PATH_REJECTED
                )
                detail = normalised.describe()
            else:
                path = normalised
        elif isinstance(action, WriteAction) and action.path is not None:
            written = normalise(action.path, self._root, action.cwd, tree=self._tree)
            path = written if isinstance(written, str) else None
        elif isinstance(action, UnplacedRead):
            issue, detail = IssueKind.PATH_WITHOUT_ROOT, action.detail
        elif isinstance(action, DiffPageAction):
            offset, limit = action.offset, action.limit
        elif isinstance(action, UnreadableArguments):
            issue, detail = IssueKind.ARGUMENTS_UNAVAILABLE, action.detail
        outcome = Outcome.INCOMPLETE
        if state.ambiguous:
            issue, detail = IssueKind.AMBIGUOUS_CALL_ID, state.ambiguous
        elif end is None:
            issue = issue or IssueKind.MISSING_END
            detail = detail or f"start at line {start.line} has no end"
        else:
            outcome = Outcome.SUCCEEDED if end.succeeded else Outcome.FAILED
        return CallRecord(
            call_id=call_id,
            tool=start.tool,
            kind=_kind(action),
            outcome=outcome,
            line=start.line,
            path=path,
            offset=offset,
            limit=limit,
            error_type=end.error_type
            if end is not None and outcome is not Outcome.INCOMPLETE
            else None,
            result_range=end.result_range
            if end is not None and outcome is not Outcome.INCOMPLETE
            else None,
            issue=issue,
            detail=detail,
            shown=_shown_by(end, shown)
            if end is not None and outcome is Outcome.SUCCEEDED
            else None,
            content=end.content if end is not None and outcome is Outcome.SUCCEEDED else None,
        )


def _shown_by(end: ToolEnd, asked: Shown | None) -> Shown | None:
    """What a successful call showed: what its text showed when that matched the revision, else
    what its end reports, else what it asked for."""
    content = end.content
    if content is not None and content.check is ContentCheck.MATCHED and content.shown is not None:
        return content.shown
    return end.shown or asked


# Issues of a call that read a file we cannot name.
_FILE_NOT_TOLD = frozenset({IssueKind.PATH_WITHOUT_ROOT, IssueKind.ARGUMENTS_UNAVAILABLE})


def _lines(first: int, second: int) -> str:
    return f"line {first}" if first == second else f"lines {first} and {second}"


def _unattributed(call_id: str, tool: str, line: int, where: str) -> CallRecord:
    """A call that could have read any file: its start could not be read."""
    return CallRecord(
        call_id=call_id,
        tool=tool,
        kind=CallKind.READ,
        outcome=Outcome.INCOMPLETE,
        line=line,
        issue=IssueKind.OUTCOME_UNREADABLE,
        detail=f"could have read any file: its start could not be read ({where})",
    )


def _lines_known(diff: DiffIndex, path: str) -> bool:
    """Whether ``path`` is in the pinned diff with changed lines that can be told."""
    changed = diff.file(path)
    return changed is not None and changed.lines_known


def resolve_shown(
    records: list[CallRecord], diff: DiffIndex | None, content: ContentSource | None
) -> list[CallRecord]:
    """Tell in lines what successful reads of files in the pinned diff showed, where that needs
    the file's content (a byte range, a range counted from the end). Each such file's content is
    asked for once; without it those reads' lines are unknown, and a range known only as asked
    for stands as asked. Other records pass unchanged."""
    if diff is None:
        return [
            replace(r, shown=as_asked(r.shown))
            if r.shown is not None and r.shown.kind is ShownKind.ASKED
            else r
            for r in records
        ]
    tables: dict[str, LineTable | None] = {}
    out: list[CallRecord] = []
    for record in records:
        shown = simplified(record.shown) if record.shown is not None else None
        path = record.path
        if (
            shown is None
            or path is None
            or record.outcome is not Outcome.SUCCEEDED
            or not needs_content(shown)
            or not _lines_known(diff, path)
        ):
            if shown is not None:
                shown = as_asked(shown)
            out.append(record if shown == record.shown else replace(record, shown=shown))
            continue
        if path not in tables:
            raw = content.content(path) if content is not None else None
            tables[path] = LineTable(raw) if raw is not None else None
        out.append(replace(record, shown=resolve(shown, tables[path])))
    return out


# --- folding -----------------------------------------------------------------------------------


class _FileAcc(msgspec.Struct):
    reads_succeeded: int = 0
    reads_failed: int = 0
    reads_unknown: int = 0
    reads_empty: int = 0
    reads_lines_unknown: int = 0
    diff_pages_succeeded: int = 0
    whole: bool = False
    total: int | None = None
    total_lines: int | None = None
    ranges: list[tuple[int, int | None]] = msgspec.field(default_factory=list)
    lines: LineSet = msgspec.field(default_factory=LineSet)
    marks: ChangeMarks | None = None
    content_matched: int = 0
    content_mismatched: int = 0
    content_unchecked: int = 0
    content_credited: int = 0
    blob: str | None = None
    # a matched read showed less than the size its stream reported: that size is not the file's
    total_distrusted: bool = False

    def add_range(self, start: int, end: int | None) -> None:
        if len(self.ranges) < MAX_RANGES_PER_FILE:
            self.ranges.append((start, end))


def _merged(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _shown_of(record: CallRecord) -> Shown:
    """What a successful read showed; a read that said nothing of it: a whole read when it asked
    for no range, else unknown."""
    if record.shown is not None:
        return simplified(as_asked(record.shown))
    if record.offset is None and record.limit is None:
        return Shown.whole()
    return UNKNOWN_SHOWN


class EvidenceFolder:
    """Folds call records into the bounded evidence document (DESIGN §6 rules 5-14)."""

    def __init__(self, bounds: Bounds, diff: DiffIndex | None = None) -> None:
        self.bounds = bounds
        self.diff = diff
        self._files: dict[str, _FileAcc] = {}
        self._issues: list[CallIssue] = []
        self._issues_dropped = 0
        self._truncated = False
        self._dropped_calls = 0
        self._counts = {"calls": 0, "succeeded": 0, "failed": 0, "incomplete": 0}
        self._ignored = 0
        self._rejected = 0
        self._unattributed = 0
        self._diff_ok = 0
        self._diff_failed = 0
        self._diff_seen: list[tuple[int, int]] = []
        self._pinned_seen: list[tuple[int, int]] = []  # pages of the pinned diff itself
        self._diff_total: int | None = None
        self._mutations: list[Mutation] = []
        self._mutations_dropped = 0

    def add_issue(self, issue: CallIssue) -> None:
        if len(self._issues) < self.bounds.max_issues:
            self._issues.append(issue)
        else:
            self._issues_dropped += 1

    def add_call_issue(self, record: CallRecord, kind: IssueKind, detail: str) -> None:
        """Label one call in the issue sample."""
        self.add_issue(
            CallIssue(
                kind=kind, line=record.line, call_id=record.call_id, tool=record.tool, detail=detail
            )
        )

    def add(self, record: CallRecord) -> None:
        self._counts["calls"] += 1
        self._counts[record.outcome.value] += 1
        if record.issue is not None:
            if record.issue is IssueKind.PATH_REJECTED:
                self._rejected += 1
            elif (
                record.issue in _FILE_NOT_TOLD
                and record.kind is CallKind.READ
                and record.outcome is Outcome.SUCCEEDED
            ):
                # It read some file, which one cannot be told (no root to place it under, or
                # arguments the tool took but we could not read): no claim's lack of evidence
                # proves anything now. A failed call read nothing.
                self._unattributed += 1
            self.add_call_issue(record, record.issue, record.detail)
        if record.issue is IssueKind.OUTCOME_UNREADABLE:
            self._add_unreadable(record)
        if record.outcome is Outcome.INCOMPLETE or record.issue is not None:
            return
        if record.content is not None and record.outcome is Outcome.SUCCEEDED:
            self._add_content(record, record.content)
        if record.kind is CallKind.IGNORED:
            self._ignored += 1
        elif record.kind is CallKind.WRITE:
            self._add_mutation(record)
        elif record.kind is CallKind.DIFF_PAGE:
            self._add_diff_page(record)
        elif record.path is not None:
            self._add_read(record, record.path)

    def _add_mutation(self, record: CallRecord) -> None:
        if record.outcome is not Outcome.SUCCEEDED:
            return
        if len(self._mutations) < MAX_MUTATIONS:
            self._mutations.append(Mutation(tool=record.tool, path=record.path, line=record.line))
        else:
            self._mutations_dropped += 1

    def _file(self, path: str) -> _FileAcc | None:
        acc = self._files.get(path)
        if acc is None:
            if len(self._files) >= self.bounds.max_files:
                self._truncated = True
                self._dropped_calls += 1
                return None
            acc = self._files[path] = _FileAcc()
            changed = self.diff.file(path) if self.diff is not None else None
            if changed is not None and changed.lines_known:
                acc.marks = ChangeMarks(changed)
        return acc

    def _add_unreadable(self, record: CallRecord) -> None:
        """A call whose outcome could not be read: unknown for its file, or, when its file is
        not known, for every file that lacks evidence."""
        acc = self._file(record.path) if record.path is not None else None
        if acc is not None:
            acc.reads_unknown += 1
        elif record.path is None:
            self._unattributed += 1

    def _add_read(self, record: CallRecord, path: str) -> None:
        acc = self._file(path)
        if acc is None:
            return
        if record.outcome is Outcome.FAILED:
            acc.reads_failed += 1
            return
        content = record.content
        check = content.check if content is not None else None
        if check is ContentCheck.MISMATCH:
            acc.content_mismatched += 1
            where = (
                f" (first difference at line {content.first_difference})"
                if content and content.first_difference
                else ""
            )
            detail = (
                f"what the read of {path} returned is not {path} at the revision{where}: "
                "not evidence"
            )
            self.add_call_issue(record, IssueKind.CONTENT_MISMATCH, detail)
            return
        shown = _shown_of(record)
        if check is ContentCheck.MATCHED and content is not None:
            acc.content_matched += 1
            acc.blob = content.blob or acc.blob
            span = record.result_range
            if (
                shown.kind is not ShownKind.WHOLE
                and span is not None
                and span.offset == 0
                and span.end >= span.total
            ):
                acc.total_distrusted = True
        elif shown.kind is not ShownKind.EMPTY:
            acc.content_unchecked += 1
        if shown.kind is ShownKind.EMPTY:
            acc.reads_empty += 1
            detail = f"the read of {path} returned nothing: not evidence"
            self.add_call_issue(record, IssueKind.EMPTY_RESULT, detail)
            return
        acc.reads_succeeded += 1
        self._see(acc, path, shown)
        span = record.result_range
        if span is not None:
            acc.total = span.total
            if not (span.offset == 0 and span.end >= span.total):
                acc.add_range(span.offset, span.end)
        elif record.offset is not None or record.limit is not None:
            start = record.offset or 0
            acc.add_range(start, None if record.limit is None else start + record.limit)

    def _add_content(self, record: CallRecord, content: ContentSeen) -> None:
        """Lines of in-scope files, and pages of the pinned diff, that a call's text showed,
        whatever the tool (DESIGN §6 rule 17); files whose lines lay only where the model may
        not have seen them are unknown, never unseen."""
        credited: set[str] = set()
        for credit in content.credits:
            acc = self._file(credit.path)
            if acc is None:
                continue
            if credit.path not in credited:
                credited.add(credit.path)
                acc.content_credited += 1
            acc.blob = credit.blob or acc.blob
            acc.lines.add(credit.start, credit.end)
            if acc.marks is not None:
                acc.marks.see_lines(credit.start, credit.end)
        for path in content.uncertain:
            acc = self._file(path)
            if acc is not None:
                acc.reads_unknown += 1
        if content.diff and self.diff is not None:
            # a `git diff` that printed the pinned diff's bytes is a page of it, here too
            self._diff_ok += 1
            self._diff_total = self.diff.total
            for start, end in content.diff:
                self._diff_seen = _merged([*self._diff_seen, (start, end)])
                self._pinned_seen = _merged([*self._pinned_seen, (start, end)])
                for shown in self.diff.files_shown(start, end):
                    acc = self._file(shown.path)
                    if acc is not None and shown.path not in credited:
                        credited.add(shown.path)
                        acc.content_credited += 1

    def _see(self, acc: _FileAcc, path: str, shown: Shown) -> None:
        """Record the lines a successful read showed (module notes of
        ``coverage_gate.core.depth``)."""
        if shown.kind is ShownKind.WHOLE:
            acc.whole = True
            if shown.total is not None:
                acc.total_lines = shown.total
                if shown.total:
                    acc.lines.add(1, shown.total)
            if acc.marks is not None:
                acc.marks.see_whole()
        elif shown.kind is ShownKind.LINES and shown.start > 0 and shown.end is not None:
            acc.lines.add(shown.start, shown.end)
            if acc.marks is not None:
                acc.marks.see_lines(shown.start, shown.end)
        elif shown.kind is ShownKind.UNKNOWN or (self.diff is not None and path in self.diff):
            # lines not told: an unknown range, or a range left unresolved for a file in the diff
            acc.reads_lines_unknown += 1

    def _page_bounds(self, record: CallRecord) -> tuple[int, int, int | None, bool] | None:
        """A page's bytes ``[start, end)``, the size of the diff it came from when told, and
        whether those bytes are what it returned (not only what it asked for)."""
        span = record.result_range
        if span is not None:
            return span.offset, span.end, span.total, True
        shown = record.shown
        if shown is not None:
            # What the page returned, as its call reported it (a harness's trace): nothing, or
            # bytes it cannot place, shows no file.
            if shown.kind is ShownKind.BYTES and shown.end is not None:
                return shown.start, shown.end, shown.total, True
            return None
        if record.limit is not None:
            start = record.offset or 0
            return start, start + record.limit, None, False
        return None

    def _add_diff_page(self, record: CallRecord) -> None:
        if record.outcome is Outcome.FAILED:
            self._diff_failed += 1
            return
        self._diff_ok += 1
        page = self._page_bounds(record)
        if page is None:
            return
        start, end, total, returned = page
        if total is not None:
            self._diff_total = total
        self._diff_seen = _merged([*self._diff_seen, (start, end)])
        if self.diff is None:
            return
        if total is not None and total != self.diff.total:
            detail = f"page of a {total}-byte diff; the pinned diff has {self.diff.total}"
            self.add_call_issue(record, IssueKind.DIFF_MISMATCH, detail)
            return
        if returned and end > self.diff.total:
            detail = (
                f"page returned bytes {start}-{end}, past the end of the pinned diff "
                f"({self.diff.total} bytes): not a page of it"
            )
            self.add_call_issue(record, IssueKind.DIFF_MISMATCH, detail)
            return
        if end <= start:
            return
        self._pinned_seen = _merged([*self._pinned_seen, (start, end)])
        for shown in self.diff.files_shown(start, end):
            acc = self._file(shown.path)
            if acc is not None:
                acc.diff_pages_succeeded += 1

    def _diff_status(self) -> DiffStatus:
        if self._diff_ok == 0:
            return DiffStatus.FAILED if self._diff_failed else DiffStatus.NOT_REQUESTED
        total = self.diff.total if self.diff is not None else self._diff_total
        seen = self._diff_seen
        if total is not None and seen and seen[0][0] == 0 and seen[0][1] >= total:
            return DiffStatus.COMPLETE
        return DiffStatus.PARTIAL

    def _file_evidence(self, path: str, acc: _FileAcc) -> FileEvidence:
        closed = [(start, end) for start, end in acc.ranges if end is not None]
        covered = _merged(closed)
        whole_by_ranges = (
            acc.total is not None
            and not acc.total_distrusted
            and bool(covered)
            and covered[0][0] == 0
            and covered[0][1] >= acc.total
        )
        partial = acc.reads_succeeded > 0 and not acc.whole and not whole_by_ranges
        depth = None
        evidenced = (
            acc.reads_succeeded > 0 or acc.diff_pages_succeeded > 0 or acc.content_credited > 0
        )
        changed = self.diff.file(path) if self.diff is not None else None
        if changed is not None and evidenced:
            marks = acc.marks or ChangeMarks(changed)
            if changed.lines_known:
                for start, end in self._pinned_seen:
                    if start < changed.end and end > changed.start:
                        marks.see_page(start, end, acc.lines)
            depth = file_depth(marks, acc.reads_lines_unknown)
        return FileEvidence(
            path=path,
            reads_succeeded=acc.reads_succeeded,
            reads_failed=acc.reads_failed,
            reads_unknown=acc.reads_unknown,
            diff_pages_succeeded=acc.diff_pages_succeeded,
            ranges=[
                ByteRange(offset=start, end=end, total=acc.total)
                for start, end in sorted(acc.ranges, key=lambda r: (r[0], r[1] or -1))
            ],
            partial=partial,
            lines_seen=acc.lines.ranges(),
            lines_seen_whole=acc.whole,
            lines_seen_truncated=acc.lines.truncated,
            reads_empty=acc.reads_empty,
            reads_lines_unknown=acc.reads_lines_unknown,
            depth=depth,
            content=ContentSummary(
                matched=acc.content_matched,
                mismatched=acc.content_mismatched,
                unchecked=acc.content_unchecked,
                credited=acc.content_credited,
                blob=acc.blob,
            )
            if acc.content_matched
            or acc.content_mismatched
            or acc.content_credited
            or acc.content_unchecked
            else None,
        )

    def document(self, summary: StreamSummary) -> EvidenceDocument:
        for issue in summary.line_issues:
            self.add_issue(issue)
        # Line issues that did not travel (span event limits) are counted, never silently lost.
        self._issues_dropped += max(summary.line_issue_total - len(summary.line_issues), 0)
        files = [self._file_evidence(path, acc) for path, acc in sorted(self._files.items())]
        seen = sum(end - start for start, end in self._diff_seen)
        return EvidenceDocument(
            version=EVIDENCE_VERSION,
            source=summary.source,
            agent=summary.agent,
            revision=summary.revision,
            stream_complete=summary.stream_complete,
            capability=summary.capability,
            truncated=self._truncated or summary.dropped_calls > 0,
            dropped_calls=self._dropped_calls + summary.dropped_calls,
            unattributed_calls=self._unattributed + summary.dropped_calls,
            counters=Counters(
                lines=summary.lines,
                calls=self._counts["calls"],
                succeeded=self._counts["succeeded"],
                failed=self._counts["failed"],
                incomplete=self._counts["incomplete"],
                ignored=self._ignored,
                rejected=self._rejected,
                malformed_lines=summary.malformed_lines,
                unrecognised_events=summary.unrecognised_events,
            ),
            diff_status=self._diff_status(),
            diff=DiffSummary(
                pages_succeeded=self._diff_ok,
                pages_failed=self._diff_failed,
                bytes_seen=seen,
                total_bytes=self.diff.total if self.diff is not None else self._diff_total,
                pinned=self.diff is not None,
            ),
            files=files if summary.capability is Capability.PER_FILE else [],
            issues=self._issues,
            issues_dropped=self._issues_dropped,
            bounds=self.bounds,
            client_version=summary.client_version,
            drift=list(summary.drift),
            drift_dropped=summary.drift_dropped,
            mutations=self._mutations,
            mutations_dropped=self._mutations_dropped,
        )
