"""A harness's own record of paired tool calls → call records, under our evidence rules.

Some harnesses keep, per reviewer, a bounded trace of the calls they saw, already paired: the
call, whether its start and its end were observed, its outcome, and what its result reported
(codereview-cli's ``metadata.json``, read by the ``codereview-cli`` adapter). Such a trace is not
taken at its word either: each call becomes a ``CallRecord`` here under the same rules as a
stream's calls (DESIGN §6), so that the evidence folder treats it like any other.

Pure: no I/O, clock or environment. The repository tree (for ``..``) comes in as a ``RepoTree``.

The rules, per call (``line`` of a record is the call's 1-based position in the trace):

- Only an observed execution counts: a call whose start or end was not observed, whose id is
  missing or shared with another call of the trace, or that carries a label saying its
  provenance could not be established, is no evidence and keeps that label (``issue``). The
  harness's own labels arrive as ``IssueKind`` values; one the trace does not give is derived
  from the observations (``missing_start``, ``missing_end``, ``call_id_unavailable``,
  ``ambiguous_call_id``).
- A call whose outcome the trace could not establish although both ends were seen may have been
  a successful read: its file's evidence is unknown (``outcome_unreadable``), never absent; a
  diff page with an unknown outcome could have shown any file.
- Success needs the trace's explicit ``succeeded`` and both ends observed; ``failed`` is a failed
  call.
- A read names its file by a repository-relative path, through the one normaliser: ``..``
  through a symbolic link, VCS metadata, control characters and a path leaving the root are
  rejected (``path_rejected``); so is an absolute path, which a trace of repository-relative
  paths never holds. A read without a path is ``path_omitted``.
- A read of a symbolic link's own pinned metadata (``symlink`` view) is not a file body: it is
  no read of any file, and counts as an ignored call. A read whose view is not known is
  ``read_view_unavailable``.
- What a successful call returned is what its output reports: ``bytes`` from the requested
  offset (``0``/``0`` is the tool's default range, which does not establish the whole file).
  Zero bytes is nothing (not evidence); no output at all is an unknown range of the file. For a
  diff page the returned bytes are the page of the pinned diff (checked against it by the
  folder).
- Calls past ``max_calls`` are dropped and counted: their evidence is unavailable, not absent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from coverage_gate.contracts.enums import CallKind, IssueKind, PathRejection
from coverage_gate.core.calls import (
    MAX_CALLS,
    MAX_DETAIL_CHARS,
    MAX_ID_CHARS,
    MAX_PATH_CHARS,
    CallOutcome,
    CallRecord,
    bounded,
)
from coverage_gate.core.events import EMPTY_SHOWN, UNKNOWN_SHOWN, Shown
from coverage_gate.core.paths import Rejected, RepoTree, normalise

__all__ = [
    "DIFF_TOOL",
    "READ_TOOL",
    "ReadView",
    "TraceCall",
    "TraceRecords",
    "TraceStatus",
    "trace_records",
]

READ_TOOL = "cr_read"
DIFF_TOOL = "cr_diff"


class TraceStatus(StrEnum):
    """A call's outcome as the trace records it."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INCOMPLETE = "incomplete"  # the trace cannot establish an outcome


class ReadView(StrEnum):
    FILE = "file"  # an ordinary read of the file's body
    SYMLINK = "symlink"  # the pinned metadata of a symbolic link, not a file body


@dataclass(frozen=True, slots=True)
class TraceCall:
    """One call of a trace. ``offset``/``limit`` are the requested bytes (``0``: the tool's
    default); ``output_bytes`` what the result reported returning (``None``: not reported);
    ``label`` the harness's provenance issue, as our issue kind."""

    tool: str
    status: TraceStatus
    start_observed: bool
    end_observed: bool
    call_id: str | None = None
    path: str | None = None
    view: ReadView | None = None
    label: IssueKind | None = None
    label_name: str | None = None  # the harness's own name for ``label``, when it differs
    offset: int = 0
    limit: int = 0
    output_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class TraceRecords:
    records: list[CallRecord]
    dropped: int  # calls past the bound: unavailable evidence


def _kind(tool: str) -> CallKind:
    if tool == READ_TOOL:
        return CallKind.READ
    if tool == DIFF_TOOL:
        return CallKind.DIFF_PAGE
    return CallKind.IGNORED


def _given_label(call: TraceCall, ambiguous: bool) -> tuple[IssueKind, str] | None:
    """The trace's own label for a call, else the one its observations give, before its path,
    view and outcome are looked at."""
    if call.label is not None:
        name = call.label_name or call.label.value
        return call.label, f"the trace labels it {name}: its provenance was not established"
    if call.call_id is None:
        return IssueKind.CALL_ID_UNAVAILABLE, "the trace has no call id for it"
    if ambiguous:
        return IssueKind.AMBIGUOUS_CALL_ID, "its call id names more than one call of the trace"
    if not call.start_observed:
        return IssueKind.MISSING_START, "the trace did not observe its start"
    if not call.end_observed:
        return IssueKind.MISSING_END, "the trace did not observe its end"
    return None


def _shown(call: TraceCall) -> Shown:
    """What a successful call returned, by its output's report."""
    if call.output_bytes is None:
        return UNKNOWN_SHOWN
    if call.output_bytes == 0:
        return EMPTY_SHOWN
    return Shown.bytes(call.offset, call.offset + call.output_bytes)


def _place(path: str, root: str | None, tree: RepoTree | None) -> str | Rejected:
    if len(path) > MAX_PATH_CHARS:
        return Rejected(PathRejection.NOT_A_FILE, path[:64], f"{len(path)} characters long")
    if path.startswith("/"):
        return Rejected(PathRejection.OUTSIDE_ROOT, path, "the trace records repo-relative paths")
    return normalise(path, root, tree=tree)


@dataclass(frozen=True, slots=True)
class _Place:
    """Where the trace puts a call, as ``trace_records`` passes it on: its paths are placed
    through ``placed`` (one answer per spelling: a trace reads the same files again and again)."""

    position: int
    call_id: str
    ambiguous: bool
    placed: Callable[[str], str | Rejected]


def _record(call: TraceCall, at: _Place) -> CallRecord:
    kind = _kind(call.tool)
    if kind is CallKind.READ and call.view is ReadView.SYMLINK:
        kind = CallKind.IGNORED  # a symbolic link's pinned metadata: no file's body
    given = _given_label(call, at.ambiguous)
    issue, detail = given if given is not None else (None, "")
    # A path's fault outweighs an unknown outcome: a spelling that names no file of the
    # repository can make no file's evidence unknown.
    open_to_path = issue is None or issue is IssueKind.OUTCOME_UNREADABLE
    path: str | None = None
    if kind is CallKind.READ:
        placed = at.placed(call.path) if call.path is not None else None
        if placed is None and open_to_path:
            issue, detail = IssueKind.PATH_OMITTED, "a read without a path"
        elif isinstance(placed, Rejected) and open_to_path:
            issue, detail = IssueKind.PATH_REJECTED, placed.describe()
        elif isinstance(placed, str):
            path = placed
        if issue is None and call.view is None:
            issue, detail = IssueKind.READ_VIEW_UNAVAILABLE, "the trace does not say what it read"
    if issue is None and call.status is TraceStatus.INCOMPLETE:
        issue, detail = IssueKind.OUTCOME_UNREADABLE, "the trace could not establish its outcome"
    if issue is IssueKind.OUTCOME_UNREADABLE and kind is CallKind.IGNORED:
        issue = None  # an ignored call is no evidence whatever its outcome: nothing is unknown
    # The outcome stands when the call was observed whole; a fault of its path or view still
    # makes it no evidence (``issue``), as for a stream's calls.
    outcome = CallOutcome.INCOMPLETE
    observed = given is None and issue is not IssueKind.OUTCOME_UNREADABLE
    if observed and call.status is not TraceStatus.INCOMPLETE:
        outcome = (
            CallOutcome.SUCCEEDED if call.status is TraceStatus.SUCCEEDED else CallOutcome.FAILED
        )
    requested = call.offset != 0 or call.limit != 0
    return CallRecord(
        call_id=at.call_id,
        tool=bounded(call.tool, MAX_ID_CHARS)[0],
        kind=kind,
        outcome=outcome,
        line=at.position,
        path=path,
        offset=call.offset if requested else None,
        limit=call.limit or None,
        error_type="failed" if outcome is CallOutcome.FAILED else None,
        issue=issue,
        detail=bounded(detail, MAX_DETAIL_CHARS)[0],
        shown=_shown(call) if outcome is CallOutcome.SUCCEEDED and issue is None else None,
    )


def trace_records(
    calls: Sequence[TraceCall],
    root: str | None,
    tree: RepoTree | None = None,
    *,
    max_calls: int = MAX_CALLS,
) -> TraceRecords:
    """The call records of a trace's calls, in trace order (module notes)."""
    kept = calls[:max_calls]
    ids = Counter(call.call_id for call in kept if call.call_id is not None)
    places: dict[str, str | Rejected] = {}

    def placed(path: str) -> str | Rejected:
        found = places.get(path)
        if found is None:
            found = places[path] = _place(path, root, tree)
        return found

    records: list[CallRecord] = []
    for position, call in enumerate(kept, start=1):
        raw_id = call.call_id
        call_id = (
            bounded(raw_id, MAX_ID_CHARS)[0] if raw_id is not None else f"(trace call {position})"
        )
        ambiguous = raw_id is not None and ids[raw_id] > 1
        records.append(_record(call, _Place(position, call_id, ambiguous, placed)))
    return TraceRecords(records, max(len(calls) - max_calls, 0))
