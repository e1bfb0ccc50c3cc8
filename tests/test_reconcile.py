"""The pure reconciler: DESIGN §7 as a table, and the properties that must always hold."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate import render
from coverage_gate.model import (
    Capability,
    Claim,
    Coverage,
    EvidenceDocument,
    FileEvidence,
    FileStatus,
    Mode,
    ModeSource,
    PathRejection,
    Reason,
    ReviewerOutput,
    UnknownPolicy,
    UnknownReason,
    Verdict,
)
from coverage_gate.paths import StaticTree
from coverage_gate.reconcile import ReviewerInput, ReviewInput, reconcile

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
) -> EvidenceDocument:
    paths = sorted(set(reads or {}) | set(diff_pages or {}))
    files = [
        FileEvidence(
            path=p,
            reads_succeeded=(reads or {}).get(p, (0, 0))[0],
            reads_failed=(reads or {}).get(p, (0, 0))[1],
            diff_pages_succeeded=(diff_pages or {}).get(p, 0),
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


def review(
    *reviewers: ReviewerInput,
    verdict: Verdict = Verdict.APPROVE,
    mode: Mode = Mode.ENFORCE,
    policy: UnknownPolicy = UnknownPolicy.ACCEPT,
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
_ev = st.one_of(
    st.none(),
    st.builds(
        evidence,
        _reads,
        revision=st.sampled_from([REV, "other"]),
        capability=st.sampled_from(list(Capability)),
        complete=st.booleans(),
        truncated=st.booleans(),
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
