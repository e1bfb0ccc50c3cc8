"""A harness's trace of paired calls becomes call records under our rules (coverage_gate.tracecalls).

Table-driven over one call each: what counts, what is labelled, what is unknown. The trace's own
word (``succeeded``) never makes evidence by itself.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from coverage_gate.contracts.evidence_doc import Bounds
from coverage_gate.contracts.model import CallKind, Capability, IssueKind, PathRejection
from coverage_gate.core.calls import CallOutcome, StreamSummary
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.events import EMPTY_SHOWN, UNKNOWN_SHOWN, Shown
from coverage_gate.core.folding import EvidenceFolder
from coverage_gate.core.paths import StaticTree
from coverage_gate.core.tracecalls import ReadView, TraceCall, TraceStatus, trace_records
from tests.conftest import DATA

ROOT = "/home/user/repo"
READ = TraceCall(
    tool="cr_read",
    status=TraceStatus.SUCCEEDED,
    start_observed=True,
    end_observed=True,
    call_id="c1",
    path="src/api/handlers.py",
    view=ReadView.FILE,
    output_bytes=979,
)
DIFF = TraceCall(
    tool="cr_diff",
    status=TraceStatus.SUCCEEDED,
    start_observed=True,
    end_observed=True,
    call_id="d1",
    limit=2400,
    output_bytes=2400,
)


def one(
    call: TraceCall, tree: StaticTree | None = None
) -> tuple[CallOutcome, IssueKind | None, str]:
    (record,) = trace_records([call], ROOT, tree).records
    return record.outcome, record.issue, record.detail


# (what the rule is, the call, its outcome, its issue)
RULES = [
    ("an observed succeeded read is a read", READ, CallOutcome.SUCCEEDED, None),
    ("a failed read is failed", replace(READ, status=TraceStatus.FAILED), CallOutcome.FAILED, None),
    (
        "the trace's own label wins over its 'succeeded'",
        replace(READ, label=IssueKind.PATH_UNAVAILABLE, label_name="path_unavailable"),
        CallOutcome.INCOMPLETE,
        IssueKind.PATH_UNAVAILABLE,
    ),
    (
        "'succeeded' without an observed end is missing_end",
        replace(READ, end_observed=False),
        CallOutcome.INCOMPLETE,
        IssueKind.MISSING_END,
    ),
    (
        "'succeeded' without an observed start is missing_start",
        replace(READ, start_observed=False),
        CallOutcome.INCOMPLETE,
        IssueKind.MISSING_START,
    ),
    (
        "a call without an id cannot be paired",
        replace(READ, call_id=None),
        CallOutcome.INCOMPLETE,
        IssueKind.CALL_ID_UNAVAILABLE,
    ),
    (
        "incomplete with both ends seen: the outcome is unknown",
        replace(READ, status=TraceStatus.INCOMPLETE),
        CallOutcome.INCOMPLETE,
        IssueKind.OUTCOME_UNREADABLE,
    ),
    (
        "a read without a path is path_omitted",
        replace(READ, path=None),
        CallOutcome.SUCCEEDED,
        IssueKind.PATH_OMITTED,
    ),
    (
        "a read whose view is not said is read_view_unavailable",
        replace(READ, view=None),
        CallOutcome.SUCCEEDED,
        IssueKind.READ_VIEW_UNAVAILABLE,
    ),
    (
        "a symlink view is no read of a file",
        replace(READ, view=ReadView.SYMLINK),
        CallOutcome.SUCCEEDED,
        None,
    ),
    ("a diff page is a diff page", DIFF, CallOutcome.SUCCEEDED, None),
    (
        "another tool is ignored, whatever its outcome",
        replace(READ, tool="bash", status=TraceStatus.INCOMPLETE),
        CallOutcome.INCOMPLETE,
        None,
    ),
]


@pytest.mark.parametrize(("rule", "call", "outcome", "issue"), RULES, ids=[r[0] for r in RULES])
def test_each_call_of_a_trace_is_judged_by_our_rules(
    rule: str, call: TraceCall, outcome: CallOutcome, issue: IssueKind | None
) -> None:
    del rule
    assert one(call)[:2] == (outcome, issue)


def test_a_label_the_harness_gives_is_kept_by_name_in_the_detail() -> None:
    """outcome_unavailable is our outcome_unreadable; the harness's word stays readable."""
    call = replace(READ, label=IssueKind.OUTCOME_UNREADABLE, label_name="outcome_unavailable")
    assert one(call)[1:] == (
        IssueKind.OUTCOME_UNREADABLE,
        "the trace labels it outcome_unavailable: its provenance was not established",
    )


def test_a_call_id_shared_by_two_calls_makes_both_ambiguous() -> None:
    records = trace_records([READ, replace(READ, path="src/api/models.py")], ROOT).records
    assert [r.issue for r in records] == [IssueKind.AMBIGUOUS_CALL_ID] * 2
    assert all(r.outcome is CallOutcome.INCOMPLETE for r in records)


DECOYS = [
    ("../repo/src/api/handlers.py", PathRejection.ESCAPES_ROOT),
    ("/home/user/repo/src/api/handlers.py", PathRejection.OUTSIDE_ROOT),
    ("/etc/passwd", PathRejection.OUTSIDE_ROOT),
    (".git/config", PathRejection.VCS_METADATA),
    ("src/api/x/../handlers.py", PathRejection.PARENT_THROUGH_SYMLINK),
    ("src/api/out/../handlers.py", PathRejection.SYMLINK_OUTSIDE_ROOT),
    ("src/api/handlers.py\n", PathRejection.CONTROL_CHARACTER),
]
TREE = StaticTree({"src/api/x": "../../decoy/inner", "src/api/out": "/etc"})


@pytest.mark.parametrize(("path", "reason"), DECOYS)
def test_success_on_a_decoy_path_is_a_rejection_never_unknown(
    path: str, reason: PathRejection
) -> None:
    """Even with 'succeeded' or an unknown outcome: a spelling that names no file of the
    repository counts for nothing, and makes no file unknown."""
    for status in (TraceStatus.SUCCEEDED, TraceStatus.INCOMPLETE):
        (record,) = trace_records([replace(READ, path=path, status=status)], ROOT, TREE).records
        assert record.issue is IssueKind.PATH_REJECTED
        assert record.path is None
        assert reason.value in record.detail


def test_a_path_with_dot_dot_and_no_tree_to_check_it_is_rejected() -> None:
    (record,) = trace_records([replace(READ, path="src/x/../api/handlers.py")], ROOT).records
    assert record.issue is IssueKind.PATH_REJECTED
    assert PathRejection.PARENT_UNRESOLVED.value in record.detail


@pytest.mark.parametrize(
    ("offset", "limit", "returned", "shown", "requested"),
    [
        (0, 0, 979, Shown.bytes(0, 979), (None, None)),  # the tool's default: not "whole"
        (200, 400, 400, Shown.bytes(200, 600), (200, 400)),
        (0, 0, 0, EMPTY_SHOWN, (None, None)),  # nothing returned: not evidence
        (0, 0, None, UNKNOWN_SHOWN, (None, None)),  # no output reported: lines unknown
    ],
)
def test_what_a_read_showed_is_what_its_output_reports(
    offset: int,
    limit: int,
    returned: int | None,
    shown: Shown,
    requested: tuple[int | None, int | None],
) -> None:
    call = replace(READ, offset=offset, limit=limit, output_bytes=returned)
    (record,) = trace_records([call], ROOT).records
    assert record.shown == shown
    assert (record.offset, record.limit) == requested


def test_calls_past_the_bound_are_dropped_and_counted() -> None:
    calls = [replace(READ, call_id=f"c{n}") for n in range(5)]
    traced = trace_records(calls, ROOT, max_calls=3)
    assert (len(traced.records), traced.dropped) == (3, 2)


def fold(calls: list[TraceCall], diff: DiffIndex | None = None) -> EvidenceFolder:
    folder = EvidenceFolder(Bounds(), diff)
    for record in trace_records(calls, ROOT).records:
        folder.add(record)
    return folder


PINNED = DiffIndex.parse((DATA / "pi-rpc" / "review.diff").read_bytes())  # 4570 bytes


def test_a_diff_page_returning_bytes_past_the_pinned_diff_is_no_page_of_it() -> None:
    """A page that returned bytes 4000-6400 of a 4570-byte diff came from another diff: no
    file is credited, and the call is labelled diff_mismatch."""
    page = replace(DIFF, offset=4000, output_bytes=2400)
    summary = StreamSummary("codereview-cli", "r", Capability.PER_FILE, stream_complete=True)
    document = fold([page], PINNED).document(summary)
    assert [f.path for f in document.files if f.diff_pages_succeeded] == []
    (issue,) = document.issues
    assert issue.kind is IssueKind.DIFF_MISMATCH
    assert "4000-6400" in issue.detail
    assert "4570" in issue.detail


def test_a_diff_page_inside_the_pinned_diff_credits_the_files_it_showed() -> None:
    summary = StreamSummary("codereview-cli", "r", Capability.PER_FILE, stream_complete=True)
    document = fold([DIFF], PINNED).document(summary)
    assert [f.path for f in document.files if f.diff_pages_succeeded] == [
        "README.md",
        "docs/guide.md",
        "src/api/handlers.py",
        "src/api/models.py",
    ]


def test_a_diff_page_without_a_reported_output_shows_no_file() -> None:
    """No output: which bytes it returned is unknown, so it shows nothing (its request is no
    proof of what came back)."""
    summary = StreamSummary("codereview-cli", "r", Capability.PER_FILE, stream_complete=True)
    document = fold([replace(DIFF, output_bytes=None)], PINNED).document(summary)
    assert document.files == []
    assert document.diff.pages_succeeded == 1


def test_an_unknown_outcome_makes_its_file_unknown_and_a_diff_page_any_file() -> None:
    read = replace(READ, status=TraceStatus.INCOMPLETE)
    page = replace(DIFF, call_id="d2", status=TraceStatus.INCOMPLETE)
    summary = StreamSummary("codereview-cli", "r", Capability.PER_FILE, stream_complete=True)
    document = fold([read, page], PINNED).document(summary)
    (entry,) = document.files
    assert (entry.path, entry.reads_unknown, entry.reads_succeeded) == ("src/api/handlers.py", 1, 0)
    assert document.unattributed_calls == 1


def test_a_symlink_view_counts_as_an_ignored_call() -> None:
    summary = StreamSummary("codereview-cli", "r", Capability.PER_FILE, stream_complete=True)
    (record,) = trace_records([replace(READ, view=ReadView.SYMLINK)], ROOT).records
    assert record.kind is CallKind.IGNORED
    document = fold([replace(READ, view=ReadView.SYMLINK)]).document(summary)
    assert (document.files, document.counters.ignored) == ([], 1)
