"""Pure evidence core: pair tool starts with ends, then fold calls into the bounded record.

No clock, environment, files or telemetry here. ``Pairer`` turns adapter events into
``CallRecord`` values (DESIGN §6 rules 1-4); ``EvidenceFolder`` folds records into the
``EvidenceDocument`` (rules 5-10). The telemetry edge carries records through spans between the
two, so the document is what the spans say.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from coverage_gate.diffmap import DiffIndex
from coverage_gate.events import (
    Action,
    ByteSpan,
    DiffPageAction,
    Event,
    Malformed,
    ReadAction,
    StreamComplete,
    StreamReopened,
    TooLarge,
    ToolEnd,
    ToolStart,
    UnplacedRead,
    UnreadableArguments,
    Unrecognised,
    WorkingDirectory,
)
from coverage_gate.model import (
    EVIDENCE_VERSION,
    Bounds,
    ByteRange,
    CallIssue,
    CallKind,
    Capability,
    Counters,
    DiffStatus,
    DiffSummary,
    EvidenceDocument,
    FileEvidence,
    IssueKind,
)
from coverage_gate.paths import Rejected, Rejection, RepoTree, normalise

MAX_RANGES_PER_FILE = 32


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INCOMPLETE = "incomplete"


@dataclass(frozen=True, slots=True)
class CallRecord:
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


@dataclass(frozen=True, slots=True)
class StreamSummary:
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


def _kind(action: Action) -> CallKind:
    if isinstance(action, ReadAction | UnreadableArguments | UnplacedRead):
        return CallKind.READ
    if isinstance(action, DiffPageAction):
        return CallKind.DIFF_PAGE
    return CallKind.IGNORED


@dataclass
class _Open:
    start: ToolStart | None
    end: ToolEnd | None = None
    ambiguous: str = ""


class Pairer:
    """Pairs starts and ends by call id and tool, never by order (DESIGN §6 rules 1-3).

    Records are produced when the stream ends: a call id that is reused later in the stream makes
    every call under it ambiguous, so no call is final before then. What is held per call is a
    few small fields, never its payload.
    """

    def __init__(self, root: str | None, tree: RepoTree | None = None) -> None:
        self._root = root
        self._tree = tree
        self.stream_cwd: str | None = None
        self._calls: dict[str, _Open] = {}
        self.complete = False
        self.malformed = 0
        self.unrecognised = 0
        self.lines_with_issues: list[CallIssue] = []

    def locate(self, root: str | None, tree: RepoTree | None) -> None:
        """Set the repository root and tree that paths are placed with (before ``records``)."""
        self._root, self._tree = root, tree

    def feed(self, events: Iterable[Event]) -> None:
        for event in events:
            self._feed_one(event)

    def _feed_one(self, event: Event) -> None:
        if isinstance(event, ToolStart):
            self._start(event)
        elif isinstance(event, ToolEnd):
            self._end(event)
        elif isinstance(event, StreamComplete):
            self.complete = True
        elif isinstance(event, StreamReopened):
            self.complete = False
        elif isinstance(event, WorkingDirectory):
            self.stream_cwd = self.stream_cwd or event.path
        elif isinstance(event, Malformed):
            self.malformed += 1
            self.lines_with_issues.append(
                CallIssue(kind=IssueKind.MALFORMED_LINE, line=event.line, detail=event.detail)
            )
        elif isinstance(event, TooLarge):
            self.malformed += 1
            self.lines_with_issues.append(
                CallIssue(
                    kind=IssueKind.LINE_TOO_LARGE,
                    line=event.line,
                    detail=f"longer than {event.limit} bytes; not decoded",
                )
            )
        elif isinstance(event, Unrecognised):
            self.unrecognised += 1

    def _start(self, event: ToolStart) -> None:
        known = self._calls.get(event.call_id)
        if known is None:
            self._calls[event.call_id] = _Open(event)
        elif not known.ambiguous:
            known.ambiguous = f"call id started again at line {event.line}"

    def _end(self, event: ToolEnd) -> None:
        known = self._calls.get(event.call_id)
        if known is None:
            self._calls[event.call_id] = _Open(None, event)
        elif known.ambiguous:
            return
        elif known.end is not None:
            known.ambiguous = f"call id ended again at line {event.line}"
        elif known.start is not None and event.tool not in (None, known.start.tool):
            known.end = event
            known.ambiguous = (
                f"started as {known.start.tool!r}, ended as {event.tool!r} at line {event.line}"
            )
        else:
            known.end = event

    def records(self) -> list[CallRecord]:
        """Every call, in the order of the line that first named it."""
        out = [self._record(call_id, state) for call_id, state in self._calls.items()]
        out.sort(key=lambda record: (record.line, record.call_id))
        return out

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
        issue: IssueKind | None = None
        detail = ""
        if isinstance(action, ReadAction):
            offset, limit = action.offset, action.limit
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
        )


# --- folding -----------------------------------------------------------------------------------


@dataclass
class _FileAcc:
    reads_succeeded: int = 0
    reads_failed: int = 0
    diff_pages_succeeded: int = 0
    whole: bool = False
    total: int | None = None
    ranges: list[tuple[int, int | None]] = field(default_factory=list)

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


class EvidenceFolder:
    """Folds call records into the bounded evidence document (DESIGN §6 rules 5-10)."""

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
        self._diff_total: int | None = None

    def add_issue(self, issue: CallIssue) -> None:
        if len(self._issues) < self.bounds.max_issues:
            self._issues.append(issue)
        else:
            self._issues_dropped += 1

    def add(self, record: CallRecord) -> None:
        self._counts["calls"] += 1
        self._counts[record.outcome.value] += 1
        if record.issue is not None:
            if record.issue is IssueKind.PATH_REJECTED:
                self._rejected += 1
            elif (
                record.issue is IssueKind.PATH_WITHOUT_ROOT and record.outcome is Outcome.SUCCEEDED
            ):
                # It read some file, which one cannot be told: no claim's lack of evidence
                # proves anything now. A failed call read nothing.
                self._unattributed += 1
            self.add_issue(
                CallIssue(
                    kind=record.issue,
                    line=record.line,
                    call_id=record.call_id,
                    tool=record.tool,
                    detail=record.detail,
                )
            )
        if record.outcome is Outcome.INCOMPLETE or record.issue is not None:
            return
        if record.kind is CallKind.IGNORED:
            self._ignored += 1
        elif record.kind is CallKind.DIFF_PAGE:
            self._add_diff_page(record)
        elif record.path is not None:
            self._add_read(record, record.path)

    def _file(self, path: str) -> _FileAcc | None:
        acc = self._files.get(path)
        if acc is None:
            if len(self._files) >= self.bounds.max_files:
                self._truncated = True
                self._dropped_calls += 1
                return None
            acc = self._files[path] = _FileAcc()
        return acc

    def _add_read(self, record: CallRecord, path: str) -> None:
        acc = self._file(path)
        if acc is None:
            return
        if record.outcome is Outcome.FAILED:
            acc.reads_failed += 1
            return
        acc.reads_succeeded += 1
        span = record.result_range
        if span is not None:
            acc.total = span.total
            if span.offset == 0 and span.end >= span.total:
                acc.whole = True
            else:
                acc.add_range(span.offset, span.end)
        elif record.offset is None and record.limit is None:
            acc.whole = True
        else:
            start = record.offset or 0
            acc.add_range(start, None if record.limit is None else start + record.limit)

    def _page_bounds(self, record: CallRecord) -> tuple[int, int, int | None] | None:
        span = record.result_range
        if span is not None:
            return span.offset, span.end, span.total
        if record.limit is not None:
            start = record.offset or 0
            return start, start + record.limit, None
        return None

    def _add_diff_page(self, record: CallRecord) -> None:
        if record.outcome is Outcome.FAILED:
            self._diff_failed += 1
            return
        self._diff_ok += 1
        page = self._page_bounds(record)
        if page is None:
            return
        start, end, total = page
        if total is not None:
            self._diff_total = total
        self._diff_seen = _merged([*self._diff_seen, (start, end)])
        if self.diff is None:
            return
        if total is not None and total != self.diff.total:
            self.add_issue(
                CallIssue(
                    kind=IssueKind.DIFF_MISMATCH,
                    line=record.line,
                    call_id=record.call_id,
                    tool=record.tool,
                    detail=f"page of a {total}-byte diff; the pinned diff has {self.diff.total}",
                )
            )
            return
        for path in self.diff.files_overlapping(start, end):
            acc = self._file(path)
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

    def document(self, summary: StreamSummary) -> EvidenceDocument:
        for issue in summary.line_issues:
            self.add_issue(issue)
        # Line issues that did not travel (span event limits) are counted, never silently lost.
        self._issues_dropped += max(summary.line_issue_total - len(summary.line_issues), 0)
        files = [_file_evidence(path, acc) for path, acc in sorted(self._files.items())]
        seen = sum(end - start for start, end in self._diff_seen)
        return EvidenceDocument(
            version=EVIDENCE_VERSION,
            source=summary.source,
            agent=summary.agent,
            revision=summary.revision,
            stream_complete=summary.stream_complete,
            capability=summary.capability,
            truncated=self._truncated,
            dropped_calls=self._dropped_calls,
            unattributed_calls=self._unattributed,
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
        )


def _file_evidence(path: str, acc: _FileAcc) -> FileEvidence:
    closed = [(start, end) for start, end in acc.ranges if end is not None]
    covered = _merged(closed)
    whole_by_ranges = (
        acc.total is not None
        and bool(covered)
        and covered[0][0] == 0
        and covered[0][1] >= acc.total
    )
    partial = acc.reads_succeeded > 0 and not acc.whole and not whole_by_ranges
    return FileEvidence(
        path=path,
        reads_succeeded=acc.reads_succeeded,
        reads_failed=acc.reads_failed,
        diff_pages_succeeded=acc.diff_pages_succeeded,
        ranges=[
            ByteRange(offset=start, end=end, total=acc.total)
            for start, end in sorted(acc.ranges, key=lambda r: (r[0], r[1] or -1))
        ],
        partial=partial,
    )
