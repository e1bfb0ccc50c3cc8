"""Folding: call records into the bounded evidence document (DESIGN §6 rules 5-14).

``EvidenceFolder`` takes one ``CallRecord`` at a time, as pairing made it or as the telemetry
edge read it back from spans, and keeps per file what was read, what failed, which lines and
bytes were shown and how deep into the change that went, and per review the diff pages, the
issues and the changes a reviewer made; ``document`` then writes the ``EvidenceDocument``. No
clock, environment, files or telemetry here; the records and their bounds are
``coverage_gate.core.calls``, making them from a stream is ``coverage_gate.core.pairing``.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

import msgspec

from coverage_gate.contracts.defaults import EVIDENCE_VERSION
from coverage_gate.contracts.enums import (
    CallKind,
    Capability,
    ContentCheck,
    DiffStatus,
    IssueKind,
    MismatchKind,
)
from coverage_gate.contracts.evidence_doc import (
    Bounds,
    ByteRange,
    CallIssue,
    ContentSummary,
    Counters,
    DiffSummary,
    EvidenceDocument,
    FileEvidence,
    Mutation,
)
from coverage_gate.core.calls import (
    MAX_MUTATIONS,
    MAX_RANGES_PER_FILE,
    CallOutcome,
    CallRecord,
    StreamSummary,
)
from coverage_gate.core.depth import ChangeMarks, LineSet, as_asked, file_depth, simplified
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.events import UNKNOWN_SHOWN, ContentSeen, Shown, ShownKind

__all__ = ["EvidenceFolder"]

# Calls whose output reached the model: a failed one's too (DESIGN §6 rule 25; the content
# checks give a failed read tool's error message no content).
_PRINTED = frozenset({CallOutcome.SUCCEEDED, CallOutcome.FAILED})

# Issues of a call that read a file we cannot name.
_FILE_NOT_TOLD = frozenset({IssueKind.PATH_WITHOUT_ROOT, IssueKind.ARGUMENTS_UNAVAILABLE})


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
    mismatch_kinds: dict[str, int] = msgspec.field(default_factory=dict)
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


def _count_content(acc: _FileAcc, record: CallRecord, shown: Shown) -> None:
    """A successful read whose text matched the file at the revision, or was not checked."""
    content = record.content
    if content is not None and content.check is ContentCheck.MATCHED:
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


def _the_empty_file(content: ContentSeen | None) -> bool:
    """Whether the content check found the read to be a whole read of a file that is empty at
    the revision (DESIGN §6 rule 24): then returning nothing is what showed it."""
    return (
        content is not None
        and content.check is ContentCheck.MATCHED
        and content.shown is not None
        and content.shown.kind is ShownKind.WHOLE
        and content.shown.total == 0
    )


def _add_read_range(acc: _FileAcc, record: CallRecord) -> None:
    """The bytes a successful read returned, or, when it does not tell, the range it asked
    for; a read of the whole file adds no range."""
    span = record.result_range
    if span is not None:
        acc.total = span.total
        if not (span.offset == 0 and span.end >= span.total):
            acc.add_range(span.offset, span.end)
    elif record.offset is not None or record.limit is not None:
        start = record.offset or 0
        acc.add_range(start, None if record.limit is None else start + record.limit)


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
            self._add_labelled(record, record.issue)
        if record.outcome is CallOutcome.INCOMPLETE or record.issue is not None:
            return
        if record.content is not None and record.outcome in _PRINTED:
            self._add_content(record, record.content)
        match record.kind:
            case CallKind.IGNORED:
                self._ignored += 1
            case CallKind.WRITE:
                self._add_mutation(record)
            case CallKind.DIFF_PAGE:
                self._add_diff_page(record)
            case _ if record.path is not None:
                self._add_read(record, record.path)

    def _add_labelled(self, record: CallRecord, issue: IssueKind) -> None:
        """A call with an issue: labelled in the sample, and counted where it leaves evidence
        unavailable (a rejected path, a file that cannot be told, an outcome not read)."""
        if issue is IssueKind.PATH_REJECTED:
            self._rejected += 1
        elif (
            issue in _FILE_NOT_TOLD
            and record.kind is CallKind.READ
            and record.outcome is CallOutcome.SUCCEEDED
        ):
            # It read some file, which one cannot be told (no root to place it under, or
            # arguments the tool took but we could not read): no claim's lack of evidence
            # proves anything now. A failed call read nothing.
            self._unattributed += 1
        self.add_call_issue(record, issue, record.detail)
        if issue is IssueKind.OUTCOME_UNREADABLE:
            self._add_unreadable(record)

    def _add_mutation(self, record: CallRecord) -> None:
        if record.outcome is not CallOutcome.SUCCEEDED:
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
        if record.outcome is CallOutcome.FAILED:
            acc.reads_failed += 1
            return
        content = record.content
        if content is not None and content.check is ContentCheck.MISMATCH:
            acc.content_mismatched += 1
            kind = (content.mismatch or MismatchKind.OTHER).value
            acc.mismatch_kinds[kind] = acc.mismatch_kinds.get(kind, 0) + 1
            self._add_mismatch(record, path, content)
            return
        shown = _shown_of(record)
        if shown.kind is ShownKind.EMPTY and _the_empty_file(content):
            shown = Shown.whole(0)  # nothing came back, and nothing is what the file holds
        _count_content(acc, record, shown)
        if shown.kind is ShownKind.EMPTY:
            acc.reads_empty += 1
            detail = f"the read of {path} returned nothing: not evidence"
            self.add_call_issue(record, IssueKind.EMPTY_RESULT, detail)
            return
        acc.reads_succeeded += 1
        hidden: set[int] = set()
        if content is not None and content.cuts and acc.marks is not None and self.diff is not None:
            hidden = acc.marks.hidden_by_cuts(self.diff.data, content.cuts)
            acc.marks.mark_cut(hidden)
        if content is not None and content.folded:
            hidden |= {number for name, number in content.folded if name == path}
        self._see(acc, path, shown, hidden)
        _add_read_range(acc, record)

    def _add_mismatch(self, record: CallRecord, path: str, content: ContentSeen) -> None:
        """A read whose text is not the file at the revision: labelled, and no evidence."""
        where = (
            f" (first difference at line {content.first_difference})"
            if content and content.first_difference
            else ""
        )
        detail = (
            f"what the read of {path} returned is not {path} at the revision{where}: not evidence"
        )
        self.add_call_issue(record, IssueKind.CONTENT_MISMATCH, detail)

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
            if credit.end < credit.start:
                continue  # the whole of a file that is empty: no line to add
            acc.lines.add(credit.start, credit.end)
            if acc.marks is not None:
                folded = {number for name, number in content.folded if name == credit.path}
                acc.marks.see_lines(credit.start, credit.end, folded)
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

    def _see(
        self, acc: _FileAcc, path: str, shown: Shown, hidden: AbstractSet[int] = frozenset()
    ) -> None:
        """Record the lines a successful read showed (module notes of
        ``coverage_gate.core.depth``)."""
        match shown.kind:
            case ShownKind.WHOLE:
                acc.whole = True
                if shown.total is not None:
                    acc.total_lines = shown.total
                    if shown.total:
                        acc.lines.add(1, shown.total)
                if acc.marks is not None:
                    acc.marks.see_whole(hidden)
            case ShownKind.LINES if shown.start > 0 and shown.end is not None:
                acc.lines.add(shown.start, shown.end)
                if acc.marks is not None:
                    acc.marks.see_lines(shown.start, shown.end, hidden)
            case ShownKind.UNKNOWN:
                acc.reads_lines_unknown += 1  # lines not told: an unknown range
            case _ if self.diff is not None and path in self.diff:
                acc.reads_lines_unknown += 1  # a range left unresolved for a file in the diff

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
        if record.outcome is CallOutcome.FAILED:
            self._diff_failed += 1
            return
        self._diff_ok += 1
        page = self._page_bounds(record)
        if page is None:
            return
        start, end, total, _ = page
        if total is not None:
            self._diff_total = total
        self._diff_seen = _merged([*self._diff_seen, (start, end)])
        if self.diff is not None:
            self._add_pinned_page(record, self.diff, page)

    def _add_pinned_page(
        self, record: CallRecord, diff: DiffIndex, page: tuple[int, int, int | None, bool]
    ) -> None:
        """A page held against the pinned diff: of another diff, or past its end, it is no page
        of it; else the files it shows have a page each."""
        start, end, total, returned = page
        if total is not None and total != diff.total:
            detail = f"page of a {total}-byte diff; the pinned diff has {diff.total}"
            self.add_call_issue(record, IssueKind.DIFF_MISMATCH, detail)
            return
        if returned and end > diff.total:
            detail = (
                f"page returned bytes {start}-{end}, past the end of the pinned diff "
                f"({diff.total} bytes): not a page of it"
            )
            self.add_call_issue(record, IssueKind.DIFF_MISMATCH, detail)
            return
        if end <= start:
            return
        self._pinned_seen = _merged([*self._pinned_seen, (start, end)])
        for shown in diff.files_shown(start, end):
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
                mismatch_kinds=dict(sorted(acc.mismatch_kinds.items())),
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
