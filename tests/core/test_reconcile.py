"""The pure reconciler: DESIGN §7 as a table, and the properties that must always hold."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate.contracts.model import (
    Capability,
    Claim,
    Coverage,
    Depth,
    DepthPolicy,
    EvidenceDocument,
    FileDepth,
    FileEvidence,
    FileStatus,
    LineRange,
    Mode,
    ModeSource,
    PathRejection,
    PolicySource,
    Reason,
    ReviewerOutput,
    UnknownPolicy,
    UnknownReason,
    Verdict,
)
from coverage_gate.core.paths import StaticTree
from coverage_gate.core.reconcile import NO_DEPTH_RECORDED, ReviewerInput, ReviewInput, reconcile
from coverage_gate.outputs import render

REV = "a" * 40
SCOPE = ["a.py", "b.py", "c.py"]


def claims(
    inspected: list[str], skipped: list[str] | None = None, agent: str = "r1"
) -> ReviewerOutput:
    return ReviewerOutput(
        schema_version=1, agent_id=agent, inspected_files=inspected, skipped_files=skipped or []
    )


def evidence(
    reads: dict[str, tuple[int, int]] | None = None,
    *,
    revision: str = REV,
    capability: Capability = Capability.PER_FILE,
    complete: bool = True,
    truncated: bool = False,
    diff_pages: dict[str, int] | None = None,
    depths: dict[str, Depth] | None = None,
) -> EvidenceDocument:
    paths = sorted(set(reads or {}) | set(diff_pages or {}))
    files = [
        FileEvidence(
            path=p,
            reads_succeeded=(reads or {}).get(p, (0, 0))[0],
            reads_failed=(reads or {}).get(p, (0, 0))[1],
            diff_pages_succeeded=(diff_pages or {}).get(p, 0),
            depth=depth_of((depths or {})[p]) if p in (depths or {}) else None,
        )
        for p in paths
    ]
    return EvidenceDocument(
        source="pi-rpc",
        revision=revision,
        stream_complete=complete,
        capability=capability,
        truncated=truncated,
        files=files,
    )


def depth_of(depth: Depth) -> FileDepth:
    """A plausible depth record: 10 changed lines in 2 hunks (1-5 and 20-24)."""
    seen = {Depth.FULL: (10, 2, []), Depth.PARTIAL: (5, 1, [LineRange(start=20, end=24)])}.get(
        depth, (0, 0, [LineRange(start=1, end=5), LineRange(start=20, end=24)])
    )
    if depth is Depth.UNKNOWN:
        return FileDepth(depth=depth, detail="content at the revision not obtainable")
    return FileDepth(
        depth=depth,
        changed_lines=10,
        changed_lines_seen=seen[0],
        hunks=2,
        hunks_seen=seen[1],
        unseen=seen[2],
    )


def review(
    *reviewers: ReviewerInput,
    verdict: Verdict = Verdict.APPROVE,
    mode: Mode = Mode.ENFORCE,
    policy: UnknownPolicy = UnknownPolicy.ACCEPT,
    depth_policy: DepthPolicy = DepthPolicy.ACCEPT,
) -> ReviewInput:
    return ReviewInput(
        repo="o/r",
        revision=REV,
        verdict_in=verdict,
        mode=mode,
        mode_source=ModeSource.OVERRIDE,
        scope=SCOPE,
        reviewers=list(reviewers),
        unknown_policy=policy,
        repo_root="/repo",
        depth_policy=depth_policy,
    )


def one(
    output: ReviewerOutput | None, ev: EvidenceDocument | None, failed: bool = False
) -> ReviewerInput:
    return ReviewerInput("r1", output, ev, failed)


def statuses(decision_files: list[object]) -> dict[str, FileStatus]:
    return {f.path: f.status for f in decision_files}  # type: ignore[attr-defined]


ALL_READ = {"a.py": (1, 0), "b.py": (1, 0), "c.py": (1, 0)}


def test_every_claim_with_a_successful_read_is_verified_and_approve_is_kept() -> None:
    decision = reconcile(review(one(claims(SCOPE), evidence(ALL_READ))))
    assert decision.verdict_out is Verdict.APPROVE
    assert not decision.downgraded
    assert set(statuses(decision.reviewers[0].files).values()) == {FileStatus.VERIFIED}
    assert decision.reviewers[0].coverage is Coverage.COMPLETE


def test_claim_without_successful_evidence_is_unsupported_and_enforce_downgrades() -> None:
    decision = reconcile(review(one(claims(SCOPE), evidence({"a.py": (1, 0), "b.py": (0, 2)}))))
    assert statuses(decision.reviewers[0].files) == {
        "a.py": FileStatus.VERIFIED,
        "b.py": FileStatus.UNSUPPORTED,
        "c.py": FileStatus.UNSUPPORTED,
    }
    assert decision.verdict_out is Verdict.COMMENT
    assert decision.downgraded
    assert decision.reasons == [Reason.CLAIMS_UNSUPPORTED]
    assert (
        "`b.py`: claimed inspected by `r1`; no successful read or diff recorded at aaaaaaaaaaaa"
        in decision.note
    )
    assert "`c.py`" in decision.note


def test_diff_page_evidence_verifies_a_claim() -> None:
    decision = reconcile(
        review(one(claims(SCOPE), evidence(diff_pages={"a.py": 1, "b.py": 1, "c.py": 2})))
    )
    assert decision.verdict_out is Verdict.APPROVE


def test_shadow_records_the_would_be_downgrade_but_keeps_the_verdict() -> None:
    decision = reconcile(review(one(claims(SCOPE), evidence({})), mode=Mode.SHADOW))
    assert decision.verdict_out is Verdict.APPROVE
    assert decision.would_downgrade
    assert "Shadow mode" in decision.note


@pytest.mark.parametrize(
    ("ev", "reason"),
    [
        (None, UnknownReason.NO_EVIDENCE_DOCUMENT),
        (evidence({}, capability=Capability.NONE), UnknownReason.CAPABILITY_NONE),
        (evidence({}, complete=False), UnknownReason.STREAM_INCOMPLETE),
        (evidence(ALL_READ, revision="b" * 40), UnknownReason.STALE),
        (evidence({}, truncated=True), UnknownReason.TRUNCATED),
    ],
    ids=["no-document", "capability-none", "incomplete", "stale", "truncated"],
)
def test_unavailable_evidence_makes_claims_unknown_and_never_downgrades_by_default(
    ev: EvidenceDocument | None, reason: UnknownReason
) -> None:
    decision = reconcile(review(one(claims(SCOPE), ev)))
    files = decision.reviewers[0].files
    assert {f.status for f in files} == {FileStatus.UNKNOWN}
    assert {f.unknown_reason for f in files} == {reason}
    assert decision.verdict_out is Verdict.APPROVE


def test_stricter_policy_downgrades_unknown_claims() -> None:
    decision = reconcile(review(one(claims(SCOPE), None), policy=UnknownPolicy.DOWNGRADE))
    assert decision.verdict_out is Verdict.COMMENT
    assert decision.reasons == [Reason.CLAIMS_UNVERIFIABLE]


def test_incomplete_stream_still_verifies_what_was_read() -> None:
    decision = reconcile(
        review(one(claims(["a.py"], ["b.py", "c.py"]), evidence({"a.py": (1, 0)}, complete=False)))
    )
    assert statuses(decision.reviewers[0].files)["a.py"] is FileStatus.VERIFIED


def test_stale_evidence_verifies_nothing() -> None:
    decision = reconcile(review(one(claims(SCOPE), evidence(ALL_READ, revision="old"))))
    assert {f.status for f in decision.reviewers[0].files} == {FileStatus.UNKNOWN}


@pytest.mark.parametrize("mode", list(Mode))
def test_legacy_gate_is_kept_in_every_mode(mode: Mode) -> None:
    """Skipped or missing files, or a failed reviewer, make coverage incomplete even when off."""
    skipped = reconcile(
        review(one(claims(["a.py", "b.py"], ["c.py"]), evidence(ALL_READ)), mode=mode)
    )
    missing = reconcile(review(one(claims(["a.py"]), evidence(ALL_READ)), mode=mode))
    failed = reconcile(review(one(None, None, failed=True), mode=mode))
    assert skipped.verdict_out is Verdict.COMMENT
    assert skipped.reasons == [Reason.FILES_SKIPPED]
    assert missing.verdict_out is Verdict.COMMENT
    assert missing.reasons == [Reason.FILES_MISSING]
    assert failed.verdict_out is Verdict.COMMENT
    assert failed.reasons == [Reason.REVIEWER_FAILED]
    assert not skipped.would_downgrade


def test_off_mode_never_applies_the_evidence_check() -> None:
    decision = reconcile(review(one(claims(SCOPE), evidence({})), mode=Mode.OFF))
    assert decision.verdict_out is Verdict.APPROVE


@pytest.mark.parametrize("verdict", [Verdict.COMMENT, Verdict.REQUEST_CHANGES])
def test_non_approve_verdicts_are_never_touched(verdict: Verdict) -> None:
    decision = reconcile(review(one(claims(SCOPE), evidence({})), verdict=verdict))
    assert decision.verdict_out is verdict
    assert not decision.downgraded


def test_several_reviewers_one_liar_downgrades_and_is_named() -> None:
    honest = ReviewerInput("honest", claims(SCOPE, agent="honest"), evidence(ALL_READ))
    liar = ReviewerInput("liar", claims(SCOPE, agent="liar"), evidence({"a.py": (1, 0)}))
    decision = reconcile(review(honest, liar))
    assert decision.verdict_out is Verdict.COMMENT
    assert [r.coverage for r in decision.reviewers] == [
        Coverage.COMPLETE,
        Coverage.INCOMPLETE_UNSUPPORTED,
    ]
    assert "by `liar`" in decision.note
    assert "by `honest`" not in decision.note


def test_claims_are_normalised_with_the_same_rules_as_evidence() -> None:
    decision = reconcile(review(one(claims(["./a.py", "b.py", "/repo/c.py"]), evidence(ALL_READ))))
    assert decision.verdict_out is Verdict.APPROVE


def test_a_claim_never_drops_a_leading_at() -> None:
    """A claim of ``@b.py`` is the file literally named so, not ``b.py``."""
    decision = reconcile(review(one(claims(["a.py", "@b.py", "c.py"]), evidence(ALL_READ))))
    reviewer = decision.reviewers[0]
    assert statuses(reviewer.files)["b.py"] is FileStatus.MISSING
    assert reviewer.claims_outside_scope == ["@b.py"]
    assert decision.verdict_out is Verdict.COMMENT


def test_claims_outside_scope_are_listed_not_counted() -> None:
    decision = reconcile(review(one(claims([*SCOPE, "other.py"]), evidence(ALL_READ))))
    assert decision.reviewers[0].claims_outside_scope == ["other.py"]
    assert decision.verdict_out is Verdict.APPROVE


def test_same_inputs_same_decision_regardless_of_scope_order() -> None:
    first = reconcile(review(one(claims(SCOPE), evidence({"a.py": (1, 0)}))))
    again = reconcile(
        replace(
            review(one(claims(list(reversed(SCOPE))), evidence({"a.py": (1, 0)}))),
            scope=list(reversed(SCOPE)),
        )
    )
    assert first == again


# --- properties --------------------------------------------------------------------------------

_files = st.sampled_from(SCOPE)
_reads = st.dictionaries(_files, st.tuples(st.integers(0, 2), st.integers(0, 2)), max_size=3)
_depths = st.dictionaries(_files, st.sampled_from(list(Depth)), max_size=3)
_ev = st.one_of(
    st.none(),
    st.builds(
        evidence,
        _reads,
        revision=st.sampled_from([REV, "other"]),
        capability=st.sampled_from(list(Capability)),
        complete=st.booleans(),
        truncated=st.booleans(),
        depths=_depths,
    ),
)


@st.composite
def _reviewer(draw: st.DrawFn) -> ReviewerInput:
    inspected = draw(st.lists(_files, unique=True))
    skipped = draw(
        st.lists(st.sampled_from([f for f in SCOPE if f not in inspected] or ["x.py"]), unique=True)
    )
    failed = draw(st.booleans())
    output = None if failed and draw(st.booleans()) else claims(inspected, skipped)
    return ReviewerInput("r", output, draw(_ev), failed)


_reviews = st.builds(
    review,
    _reviewer(),
    verdict=st.sampled_from(list(Verdict)),
    mode=st.sampled_from(list(Mode)),
    policy=st.sampled_from(list(UnknownPolicy)),
    depth_policy=st.sampled_from(list(DepthPolicy)),
)

_PERMISSIVENESS = {Verdict.REQUEST_CHANGES: 0, Verdict.COMMENT: 1, Verdict.APPROVE: 2}


@settings(max_examples=300)
@given(_reviews)
def test_verdict_out_is_never_more_permissive_than_verdict_in(item: ReviewInput) -> None:
    decision = reconcile(item)
    assert _PERMISSIVENESS[decision.verdict_out] <= _PERMISSIVENESS[decision.verdict_in]
    if decision.verdict_in is not Verdict.APPROVE:
        assert decision.verdict_out is decision.verdict_in


@settings(max_examples=300)
@given(_reviews)
def test_shadow_never_changes_a_verdict_beyond_the_legacy_gate(item: ReviewInput) -> None:
    shadow = reconcile(replace(item, mode=Mode.SHADOW))
    off = reconcile(replace(item, mode=Mode.OFF))
    assert shadow.verdict_out is off.verdict_out


@settings(max_examples=300)
@given(_reviews, st.lists(_files, min_size=1))
def test_more_successful_evidence_never_causes_a_downgrade(
    item: ReviewInput, extra: list[str]
) -> None:
    before = reconcile(item)
    reviewer = item.reviewers[0]
    if reviewer.evidence is None:
        return
    files = {f.path: f for f in reviewer.evidence.files}
    for path in extra:
        old = files.get(path, FileEvidence(path=path))
        files[path] = old.model_copy(update={"reads_succeeded": old.reads_succeeded + 1})
    richer = reviewer.evidence.model_copy(
        update={"files": sorted(files.values(), key=lambda f: f.path)}
    )
    after = reconcile(replace(item, reviewers=[replace(reviewer, evidence=richer)]))
    assert _PERMISSIVENESS[after.verdict_out] >= _PERMISSIVENESS[before.verdict_out]


def test_a_call_whose_outcome_could_not_be_read_makes_its_file_unknown_not_unsupported() -> None:
    """An end line that could not be decoded may have been a success: that file is unknown."""
    files = [
        FileEvidence(path="a.py", reads_succeeded=1),
        FileEvidence(path="b.py", reads_succeeded=1),
        FileEvidence(path="c.py", reads_unknown=1),
    ]
    ev = evidence(ALL_READ).model_copy(update={"files": files})
    decision = reconcile(review(one(claims(SCOPE), ev)))
    c_py = {f.path: f for f in decision.reviewers[0].files}["c.py"]
    assert c_py.status is FileStatus.UNKNOWN
    assert c_py.unknown_reason is UnknownReason.OUTCOME_UNREADABLE
    assert decision.verdict_out is Verdict.APPROVE


def test_unattributed_calls_make_claims_without_evidence_unknown_and_keep_verified_ones() -> None:
    """A call whose file could not be told may have read any claimed file."""
    ev = evidence({"a.py": (1, 0)}).model_copy(update={"unattributed_calls": 2})
    decision = reconcile(review(one(claims(SCOPE), ev)))
    found = {f.path: (f.status, f.unknown_reason) for f in decision.reviewers[0].files}
    assert found == {
        "a.py": (FileStatus.VERIFIED, None),
        "b.py": (FileStatus.UNKNOWN, UnknownReason.UNATTRIBUTED_CALLS),
        "c.py": (FileStatus.UNKNOWN, UnknownReason.UNATTRIBUTED_CALLS),
    }
    assert decision.verdict_out is Verdict.APPROVE


# --- claims that name no file of the repository ------------------------------------------------


def test_rejected_claims_are_listed_per_reviewer_with_their_reason() -> None:
    """``/etc/passwd``, ``../x`` and ``.git/config`` count for nothing, and the decision says so
    (a claim never drops ``@``, so ``@a.py`` is a file, outside the scope)."""
    output = claims(["a.py", "/etc/passwd", "../x", "@a.py"], skipped=[".git/config", "./../y"])
    decision = reconcile(review(one(output, evidence(ALL_READ))))
    rejected = [(c.path, c.claim, c.reason) for c in decision.reviewers[0].claims_rejected]
    assert rejected == [
        ("../x", Claim.INSPECTED, PathRejection.ESCAPES_ROOT),
        ("./../y", Claim.SKIPPED, PathRejection.ESCAPES_ROOT),
        (".git/config", Claim.SKIPPED, PathRejection.VCS_METADATA),
        ("/etc/passwd", Claim.INSPECTED, PathRejection.OUTSIDE_ROOT),
    ]
    assert decision.reviewers[0].claims_outside_scope == ["@a.py"]
    text, markdown = render.text(decision), render.markdown(decision)
    for path, claim, reason in rejected:
        assert (
            f"rejected    {path}  [claimed {claim.value}; names no file here: {reason.value}]"
            in text
        )
        assert f"- `{path}` ({claim.value}): {reason.value}" in markdown


def test_claims_with_dotdot_use_the_tree_like_evidence_does() -> None:
    """A claim of ``sub/../a.py`` is ``a.py`` when ``sub`` is a folder, and names no file when
    ``sub`` links elsewhere (the OS and a lexical reading disagree)."""
    plain = reconcile(
        replace(
            review(one(claims(["sub/../a.py", "b.py", "c.py"]), evidence(ALL_READ))),
            tree=StaticTree(),
        )
    )
    assert plain.verdict_out is Verdict.APPROVE
    linked = reconcile(
        replace(
            review(one(claims(["sub/../a.py", "b.py", "c.py"]), evidence(ALL_READ))),
            tree=StaticTree({"sub": "deep/er"}),
        )
    )
    assert [c.reason for c in linked.reviewers[0].claims_rejected] == [
        PathRejection.PARENT_THROUGH_SYMLINK
    ]
    assert statuses(linked.reviewers[0].files)["a.py"] is FileStatus.MISSING
    no_tree = reconcile(review(one(claims(["sub/../a.py", "b.py", "c.py"]), evidence(ALL_READ))))
    assert [c.reason for c in no_tree.reviewers[0].claims_rejected] == [
        PathRejection.PARENT_UNRESOLVED
    ]


# --- depth policy (DESIGN §7 rule 8) -----------------------------------------------------------

TAX = "src/tax.py"


def tax_evidence(depth: FileDepth | None, **update: object) -> EvidenceDocument:
    entry = FileEvidence(path=TAX, reads_succeeded=1, depth=depth)
    return evidence({}).model_copy(update={"files": [entry], **update})


def tax_review(
    ev: EvidenceDocument | None,
    depth_policy: DepthPolicy,
    *,
    mode: Mode = Mode.ENFORCE,
    verdict: Verdict = Verdict.APPROVE,
) -> ReviewInput:
    return replace(
        review(one(claims([TAX]), ev), mode=mode, verdict=verdict, depth_policy=depth_policy),
        scope=[TAX],
    )


PARTIAL_TAX = FileDepth(
    depth=Depth.PARTIAL,
    changed_lines=40,
    changed_lines_seen=27,
    hunks=2,
    hunks_seen=1,
    unseen=[LineRange(start=480, end=492)],
)

_SHALLOW = FileStatus.SHALLOW
_OK = FileStatus.VERIFIED


@pytest.mark.parametrize(
    ("policy", "depth", "status"),
    [
        (DepthPolicy.ACCEPT, Depth.FULL, _OK),
        (DepthPolicy.ACCEPT, Depth.PARTIAL, _OK),
        (DepthPolicy.ACCEPT, Depth.NONE, _OK),
        (DepthPolicy.ACCEPT, Depth.UNKNOWN, _OK),
        (DepthPolicy.ACCEPT, None, _OK),
        (DepthPolicy.ANY_HUNK, Depth.FULL, _OK),
        (DepthPolicy.ANY_HUNK, Depth.PARTIAL, _OK),
        (DepthPolicy.ANY_HUNK, Depth.NONE, _SHALLOW),
        (DepthPolicy.ANY_HUNK, Depth.UNKNOWN, _OK),
        (DepthPolicy.ANY_HUNK, None, _OK),
        (DepthPolicy.ALL_HUNKS, Depth.FULL, _OK),
        (DepthPolicy.ALL_HUNKS, Depth.PARTIAL, _SHALLOW),
        (DepthPolicy.ALL_HUNKS, Depth.NONE, _SHALLOW),
        (DepthPolicy.ALL_HUNKS, Depth.UNKNOWN, _OK),
        (DepthPolicy.ALL_HUNKS, None, _OK),
    ],
)
def test_depth_policy_decides_which_claimed_files_are_shallow(
    policy: DepthPolicy, depth: Depth | None, status: FileStatus
) -> None:
    """accept: never; any-hunk: depth none; all-hunks: depth not full. Unknown depth, or no
    pinned diff at all (no depth recorded), is never shallow; a shallow file downgrades under
    enforce with its own reason and coverage value."""
    ev = tax_evidence(None if depth is None else depth_of(depth))
    decision = reconcile(tax_review(ev, policy))
    (file,) = decision.reviewers[0].files
    assert file.status is status
    if status is FileStatus.SHALLOW:
        assert decision.verdict_out is Verdict.COMMENT
        assert decision.reasons == [Reason.CLAIMS_SHALLOW]
        assert decision.reviewers[0].coverage is Coverage.INCOMPLETE_SHALLOW
    else:
        assert decision.verdict_out is Verdict.APPROVE
        assert decision.reasons == []


def test_enforced_shallow_downgrade_names_the_file_and_its_unseen_changed_lines() -> None:
    decision = reconcile(tax_review(tax_evidence(PARTIAL_TAX), DepthPolicy.ALL_HUNKS))
    assert decision.verdict_out is Verdict.COMMENT
    assert decision.note.startswith(
        "Approve became Comment: claimed files were read, but not all of their changed lines "
        "were seen (depth policy all-hunks)."
    )
    assert (
        "- `src/tax.py`: changed lines 480-492 not seen by `r1` at aaaaaaaaaaaa (claimed "
        "inspected; depth partial: 27 of 40 changed lines, 1 of 2 hunks)"
    ) in decision.note


def test_shadow_records_a_shallow_would_downgrade_and_keeps_the_verdict() -> None:
    decision = reconcile(
        tax_review(tax_evidence(PARTIAL_TAX), DepthPolicy.ALL_HUNKS, mode=Mode.SHADOW)
    )
    assert decision.verdict_out is Verdict.APPROVE
    assert decision.would_downgrade and not decision.downgraded
    assert decision.note.startswith("Shadow mode, verdict unchanged")
    assert "changed lines 480-492 not seen" in decision.note


@pytest.mark.parametrize("verdict", [Verdict.COMMENT, Verdict.REQUEST_CHANGES])
def test_a_shallow_file_never_touches_a_verdict_other_than_approve(verdict: Verdict) -> None:
    decision = reconcile(
        tax_review(tax_evidence(PARTIAL_TAX), DepthPolicy.ALL_HUNKS, verdict=verdict)
    )
    assert decision.verdict_out is verdict
    assert not decision.would_downgrade
    assert decision.reviewers[0].files[0].status is FileStatus.SHALLOW
    assert (
        "Claimed files were read, but not all of their changed lines were seen (depth policy "
        "all-hunks) (verdict not affected):\n- `src/tax.py`: changed lines 480-492 not seen"
    ) in decision.note


def test_a_shallow_file_without_recorded_unseen_ranges_is_still_named() -> None:
    depth = FileDepth(depth=Depth.NONE, changed_lines=3, hunks=1)
    decision = reconcile(tax_review(tax_evidence(depth), DepthPolicy.ANY_HUNK))
    assert "- `src/tax.py`: changed lines not seen by `r1` at aaaaaaaaaaaa" in decision.note


def test_note_names_single_lines_and_bounds_the_unseen_ranges() -> None:
    ranges = [LineRange(start=n, end=n + (n % 2)) for n in range(10, 80, 10)]
    depth = FileDepth(
        depth=Depth.NONE, changed_lines=12, hunks=7, unseen=ranges, detail="header only"
    )
    decision = reconcile(tax_review(tax_evidence(depth), DepthPolicy.ANY_HUNK))
    assert "changed lines 10, 20, 30, 40, 50 and 2 more range(s) not seen" in decision.note
    assert decision.note.startswith(
        "Approve became Comment: claimed files were read, but none of their changed lines were "
        "seen (depth policy any-hunk)."
    )


def test_accept_records_depth_per_file_and_what_every_policy_would_do() -> None:
    """Under accept depth never changes a verdict, yet the decision carries each file's depth and
    counts and, per reviewer and overall, what any-hunk and all-hunks would have done."""
    decision = reconcile(tax_review(tax_evidence(PARTIAL_TAX), DepthPolicy.ACCEPT))
    (reviewer,) = decision.reviewers
    (file,) = reviewer.files
    assert decision.verdict_out is Verdict.APPROVE and not decision.would_downgrade
    assert file.status is FileStatus.VERIFIED
    assert file.depth == PARTIAL_TAX
    assert decision.note.startswith("Coverage verified")
    assert [(o.depth_policy, o.would_downgrade) for o in decision.depth_policies] == [
        (DepthPolicy.ACCEPT, False),
        (DepthPolicy.ANY_HUNK, False),
        (DepthPolicy.ALL_HUNKS, True),
    ]
    assert [
        (o.depth_policy, o.shallow_files, o.would_downgrade) for o in reviewer.depth_policies
    ] == [
        (DepthPolicy.ACCEPT, 0, False),
        (DepthPolicy.ANY_HUNK, 0, False),
        (DepthPolicy.ALL_HUNKS, 1, True),
    ]


def test_every_policy_outcome_includes_the_claims_held_against_the_reviewer_anyway() -> None:
    """An unsupported claim downgrades under every depth policy; only shallowness varies."""
    ev = evidence({"a.py": (1, 0), "b.py": (1, 0)}, depths={"a.py": Depth.NONE, "b.py": Depth.FULL})
    decision = reconcile(review(one(claims(SCOPE), ev), depth_policy=DepthPolicy.ACCEPT))
    assert [o.would_downgrade for o in decision.depth_policies] == [True, True, True]
    assert [o.shallow_files for o in decision.reviewers[0].depth_policies] == [0, 1, 1]


def test_policy_outcomes_do_not_count_a_review_the_legacy_gate_already_downgraded() -> None:
    ev = evidence({"a.py": (1, 0)}, depths={"a.py": Depth.NONE})
    decision = reconcile(
        review(one(claims(["a.py"], ["b.py", "c.py"]), ev), depth_policy=DepthPolicy.ALL_HUNKS)
    )
    assert decision.reasons == [Reason.FILES_SKIPPED, Reason.CLAIMS_SHALLOW]
    assert not decision.would_downgrade
    assert [o.would_downgrade for o in decision.depth_policies] == [False, False, False]


@pytest.mark.parametrize(
    ("update", "entry_update", "why"),
    [
        ({"stream_complete": False}, {}, "evidence unavailable (stream_incomplete)"),
        ({"unattributed_calls": 1}, {}, "1 call(s) whose file could not be told"),
        ({}, {"reads_unknown": 1}, "1 call(s) on this file whose outcome could not be read"),
    ],
    ids=["stream-incomplete", "unattributed-calls", "outcome-unreadable"],
)
def test_depth_is_unknown_when_unseen_calls_may_have_shown_the_rest(
    update: dict[str, object], entry_update: dict[str, object], why: str
) -> None:
    """What the evidence saw is then a lower bound: the file is verified, never shallow, and
    the decision says why its depth is unknown while keeping the recorded counts."""
    entry = FileEvidence(path=TAX, reads_succeeded=1, depth=PARTIAL_TAX).model_copy(
        update=entry_update
    )
    ev = tax_evidence(None).model_copy(update={"files": [entry], **update})
    decision = reconcile(tax_review(ev, DepthPolicy.ALL_HUNKS))
    (file,) = decision.reviewers[0].files
    assert file.status is FileStatus.VERIFIED
    assert decision.verdict_out is Verdict.APPROVE
    assert file.depth is not None and file.depth.depth is Depth.UNKNOWN
    assert file.depth.changed_lines_seen == PARTIAL_TAX.changed_lines_seen
    assert file.depth.detail == f"recorded partial, but {why} may have shown the rest"


def test_depth_is_recorded_only_for_claimed_files_with_successful_evidence() -> None:
    ev = evidence(
        {"a.py": (1, 0), "b.py": (0, 1), "c.py": (1, 0)},
        depths={"a.py": Depth.FULL, "b.py": Depth.NONE, "c.py": Depth.NONE},
    )
    decision = reconcile(review(one(claims(["a.py", "b.py"], ["c.py"]), ev)))
    depths = {f.path: f.depth.depth if f.depth else None for f in decision.reviewers[0].files}
    assert depths == {"a.py": Depth.FULL, "b.py": None, "c.py": None}


def test_no_pinned_diff_is_recorded_as_unknown_depth() -> None:
    decision = reconcile(tax_review(tax_evidence(None), DepthPolicy.ALL_HUNKS))
    depth = decision.reviewers[0].files[0].depth
    assert depth == FileDepth(depth=Depth.UNKNOWN, detail=NO_DEPTH_RECORDED)


def test_policies_and_their_sources_are_recorded_in_the_decision() -> None:
    item = replace(
        tax_review(tax_evidence(PARTIAL_TAX), DepthPolicy.ANY_HUNK),
        unknown_policy=UnknownPolicy.DOWNGRADE,
        unknown_policy_source=PolicySource.ENV,
        depth_policy_source=PolicySource.PAYLOAD,
    )
    decision = reconcile(item)
    assert (decision.depth_policy, decision.depth_policy_source) == (
        DepthPolicy.ANY_HUNK,
        PolicySource.PAYLOAD,
    )
    assert (decision.unknown_policy, decision.unknown_policy_source) == (
        UnknownPolicy.DOWNGRADE,
        PolicySource.ENV,
    )


_STRICTNESS = list(DepthPolicy)


@settings(max_examples=300)
@given(_reviews)
def test_a_stricter_depth_policy_never_yields_a_more_permissive_verdict(item: ReviewInput) -> None:
    outcomes = [reconcile(replace(item, depth_policy=policy)) for policy in _STRICTNESS]
    for looser, stricter in pairwise(outcomes):
        assert _PERMISSIVENESS[stricter.verdict_out] <= _PERMISSIVENESS[looser.verdict_out]
        assert stricter.would_downgrade >= looser.would_downgrade


@settings(max_examples=300)
@given(_reviews)
def test_unknown_depth_never_downgrades(item: ReviewInput) -> None:
    """With every recorded depth unknown, each policy decides exactly what accept decides."""
    unknown_item = replace(
        item,
        reviewers=[
            replace(
                reviewer,
                evidence=reviewer.evidence.model_copy(
                    update={
                        "files": [
                            f.model_copy(update={"depth": FileDepth(depth=Depth.UNKNOWN)})
                            for f in reviewer.evidence.files
                        ]
                    }
                ),
            )
            if reviewer.evidence is not None
            else reviewer
            for reviewer in item.reviewers
        ],
    )
    accepted = reconcile(replace(unknown_item, depth_policy=DepthPolicy.ACCEPT))
    for policy in DepthPolicy:
        decision = reconcile(replace(unknown_item, depth_policy=policy))
        assert decision.verdict_out is accepted.verdict_out
        assert decision.would_downgrade is accepted.would_downgrade
        assert FileStatus.SHALLOW not in {f.status for r in decision.reviewers for f in r.files}


@settings(max_examples=300)
@given(_reviews)
def test_the_policy_in_force_agrees_with_its_own_row_of_the_comparison(item: ReviewInput) -> None:
    """The comparison is computed on the same review: its row for the policy in force is the
    decision's own would_downgrade, and each reviewer's row is that reviewer's."""
    decision = reconcile(item)
    rows = {o.depth_policy: o.would_downgrade for o in decision.depth_policies}
    assert list(rows) == list(DepthPolicy)
    assert rows[item.depth_policy] is decision.would_downgrade
    for reviewer in decision.reviewers:
        mine = {o.depth_policy: o.would_downgrade for o in reviewer.depth_policies}
        assert mine[item.depth_policy] is reviewer.would_downgrade


@settings(max_examples=300)
@given(_reviews)
def test_shadow_never_changes_a_verdict_under_any_depth_policy(item: ReviewInput) -> None:
    """Whatever the depth policy, shadow returns the verdict the legacy gate alone gives."""
    legacy = reconcile(replace(item, mode=Mode.OFF, depth_policy=DepthPolicy.ACCEPT))
    for policy in DepthPolicy:
        shadow = reconcile(replace(item, mode=Mode.SHADOW, depth_policy=policy))
        assert shadow.verdict_out is legacy.verdict_out
