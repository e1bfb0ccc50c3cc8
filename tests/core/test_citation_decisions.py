"""What failed citations do to a decision (DESIGN §7.10): the reviewer's coverage, the verdict
under each mode and citation policy, the note a person reads, and what citations never do."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate.contracts.model import (
    Capability,
    CitationOutcome,
    CitationPolicy,
    CitationReason,
    Coverage,
    DecisionDocument,
    EvidenceDocument,
    FileEvidence,
    FileStatus,
    Mode,
    ModeSource,
    Reason,
    ReviewerOutput,
    Verdict,
)
from coverage_gate.core.note import NOTE_CITATIONS
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.core.revision_files import FileAtRevision, Presence
from coverage_gate.outputs import render

REV = "0123456789abcdef0123456789abcdef01234567"
FILES = {
    "src/tax.py": "import math\n\nRATE = 0.2\n\n\ndef tax(amount):\n    return amount * RATE\n",
    "src/other.py": "def helper():\n    return 42\n",
}


class Files:
    """``RevisionFiles`` over a mapping; counts what was asked for."""

    def __init__(self, files: Mapping[str, str] = FILES, unavailable: Sequence[str] = ()) -> None:
        self.files = dict(files)
        self.unavailable = set(unavailable)
        self.asked: list[str] = []

    def file_at_revision(self, path: str) -> FileAtRevision:
        self.asked.append(path)
        if path in self.unavailable:
            return FileAtRevision(Presence.UNAVAILABLE, detail="not obtainable")
        if path not in self.files:
            return FileAtRevision(Presence.MISSING)
        return FileAtRevision(Presence.FOUND, self.files[path].encode())


def evidence(
    *read: str, capability: Capability = Capability.PER_FILE, complete: bool = True
) -> EvidenceDocument:
    return EvidenceDocument(
        source="pi-rpc",
        revision=REV,
        stream_complete=complete,
        capability=capability,
        files=[FileEvidence(path=path, reads_succeeded=1) for path in sorted(read)],
    )


def claims(
    *citations: tuple[str, int, str],
    inspected: Sequence[str] = ("src/tax.py",),
    findings: Sequence[object] = (),
) -> ReviewerOutput:
    return ReviewerOutput.model_validate(
        {
            "schema_version": 1,
            "agent_id": "reviewer",
            "inspected_files": list(inspected),
            "findings": list(findings),
            "citations": [{"path": p, "line": n, "content": c} for p, n, c in citations],
        }
    )


def decide(
    output: ReviewerOutput,
    *,
    mode: Mode = Mode.ENFORCE,
    verdict: Verdict = Verdict.APPROVE,
    policy: CitationPolicy = CitationPolicy.DOWNGRADE,
    proof: EvidenceDocument | None = None,
    files: Files | None = None,
    scope: Sequence[str] = ("src/tax.py",),
    max_citations: int = 500,
) -> DecisionDocument:
    return reconcile(
        ReviewInput(
            repo="o/r",
            revision=REV,
            verdict_in=verdict,
            mode=mode,
            mode_source=ModeSource.OVERRIDE,
            scope=scope,
            reviewers=[
                ReviewerInput(
                    "reviewer", output, proof if proof is not None else evidence("src/tax.py")
                )
            ],
            citation_policy=policy,
            files=files if files is not None else Files(),
            max_citations=max_citations,
        )
    )


FABRICATED = ("src/tax.py", 3, "RATE = 0.3")
REAL = ("src/tax.py", 3, "RATE = 0.2")


def test_a_failed_citation_turns_an_approve_into_a_comment_under_enforce() -> None:
    decision = decide(claims(REAL, FABRICATED))
    (reviewer,) = decision.reviewers
    assert reviewer.coverage is Coverage.INCOMPLETE_CITATIONS
    assert reviewer.reasons == [Reason.CITATIONS_FAILED]
    assert reviewer.would_downgrade
    assert decision.verdict_out is Verdict.COMMENT
    assert decision.downgraded
    assert decision.citations_would_downgrade
    assert decision.reasons == [Reason.CITATIONS_FAILED]


def test_the_note_names_the_failed_citation_its_line_what_is_there_and_why() -> None:
    note = decide(claims(REAL, FABRICATED)).note
    assert note.startswith(
        "Approve became Comment: cited lines do not hold what the reviewer quoted."
    )
    assert (
        "- `src/tax.py` line 3, cited by `reviewer` as `RATE = 0.3`: line 3 reads `RATE = 0.2` "
        f"at {REV[:12]}, and no line within 3 of it holds the cited content"
    ) in note
    assert "RATE = 0.2`, cited" not in note  # the citation that matched is not named


@pytest.mark.parametrize(
    ("citation", "said"),
    [
        (
            ("src/gone.py", 1, "x = 1"),
            f"`src/gone.py` line 1, cited by `reviewer` as `x = 1`: no such file at {REV[:12]}",
        ),
        (
            ("src/tax.py", 99, "x = 1"),
            f"`src/tax.py` line 99, cited by `reviewer` as `x = 1`: the file has 7 line(s) at {REV[:12]}",
        ),
        (
            ("src/tax.py", 2, "   "),
            "`src/tax.py` line 2, cited by `reviewer`: the cited content is empty",
        ),
        (("src/tax.py", 2, "RATE = 0.5"), "line 2 reads nothing (a blank line)"),
    ],
)
def test_the_note_says_why_each_kind_of_failure_failed(
    citation: tuple[str, int, str], said: str
) -> None:
    assert said in decide(claims(citation)).note


def test_shadow_records_would_downgrade_and_keeps_the_verdict() -> None:
    decision = decide(claims(FABRICATED), mode=Mode.SHADOW)
    assert decision.verdict_out is Verdict.APPROVE
    assert decision.would_downgrade
    assert decision.note.startswith(
        "Shadow mode, verdict unchanged: in enforce mode this Approve would become a Comment, "
        "because cited lines do not hold what the reviewer quoted."
    )
    assert "`RATE = 0.3`" in decision.note


def test_off_replays_citations_but_changes_nothing_and_says_nothing_of_them() -> None:
    decision = decide(claims(FABRICATED), mode=Mode.OFF)
    assert decision.verdict_out is Verdict.APPROVE
    assert decision.reviewers[0].citations is not None
    assert "RATE = 0.3" not in decision.note


@pytest.mark.parametrize("verdict", [Verdict.REQUEST_CHANGES, Verdict.COMMENT])
def test_citations_never_touch_a_verdict_that_is_not_an_approve(verdict: Verdict) -> None:
    decision = decide(claims(FABRICATED), verdict=verdict)
    assert decision.verdict_out is verdict
    assert not decision.would_downgrade
    assert not decision.citations_would_downgrade
    assert "(verdict not affected)" in decision.note


def test_under_policy_accept_failures_are_recorded_and_said_but_never_held() -> None:
    decision = decide(claims(FABRICATED), policy=CitationPolicy.ACCEPT)
    (reviewer,) = decision.reviewers
    assert decision.verdict_out is Verdict.APPROVE
    assert reviewer.coverage is Coverage.COMPLETE
    assert Reason.CITATIONS_FAILED not in reviewer.reasons
    assert decision.citation_policy is CitationPolicy.ACCEPT
    assert decision.citations_would_downgrade  # what downgrade would have done, measured
    assert "citation policy accept: not held against the reviewer" in decision.note
    assert "`RATE = 0.3`" in decision.note


@pytest.mark.parametrize(
    ("citation", "outcome"),
    [
        (REAL, CitationOutcome.MATCHED),
        (("src/tax.py", 5, "RATE = 0.2"), CitationOutcome.MATCHED_NEARBY),
        (("../etc/passwd", 1, "root:x:0:0"), CitationOutcome.REJECTED),
        (("src/vendor.bin", 1, "anything"), CitationOutcome.UNAVAILABLE),
    ],
)
def test_citations_that_did_not_fail_never_downgrade(
    citation: tuple[str, int, str], outcome: CitationOutcome
) -> None:
    decision = decide(claims(citation), files=Files(unavailable=["src/vendor.bin"]))
    (reviewer,) = decision.reviewers
    assert reviewer.citations is not None
    assert [c.outcome for c in reviewer.citations.checks] == [outcome]
    assert decision.verdict_out is Verdict.APPROVE
    assert reviewer.coverage is Coverage.COMPLETE
    assert not decision.citations_would_downgrade


def test_without_a_repository_citations_are_unavailable_and_never_held() -> None:
    output = claims(FABRICATED)
    decision = reconcile(
        ReviewInput(
            repo="o/r",
            revision=REV,
            verdict_in=Verdict.APPROVE,
            mode=Mode.ENFORCE,
            mode_source=ModeSource.OVERRIDE,
            scope=["src/tax.py"],
            reviewers=[ReviewerInput("reviewer", output, evidence("src/tax.py"))],
        )
    )
    (reviewer,) = decision.reviewers
    assert reviewer.citations is not None
    assert reviewer.citations.checks[0].reason is CitationReason.NO_REPOSITORY
    assert decision.verdict_out is Verdict.APPROVE


def test_passed_citations_never_verify_an_unsupported_file() -> None:
    """Only tool evidence verifies: a reviewer quoting a file right has still not read it."""
    decision = decide(claims(REAL), proof=evidence())
    (reviewer,) = decision.reviewers
    assert reviewer.citations is not None
    assert reviewer.citations.checks[0].outcome is CitationOutcome.MATCHED
    assert reviewer.files[0].status is FileStatus.UNSUPPORTED
    assert decision.verdict_out is Verdict.COMMENT
    assert reviewer.reasons == [Reason.CLAIMS_UNSUPPORTED]


def test_passed_citations_never_verify_an_unknown_file() -> None:
    decision = decide(claims(REAL), proof=evidence(capability=Capability.NONE))
    (reviewer,) = decision.reviewers
    assert reviewer.files[0].status is FileStatus.UNKNOWN
    assert reviewer.citations is not None
    assert reviewer.citations.checks[0].outcome is CitationOutcome.MATCHED


def test_a_failed_citation_downgrades_a_reviewer_whose_evidence_is_unavailable() -> None:
    """capability none (Codex exec, the subprocess placeholder): the claims are unknown, but
    the citations are a check of their own."""
    decision = decide(claims(FABRICATED), proof=evidence(capability=Capability.NONE))
    (reviewer,) = decision.reviewers
    assert reviewer.files[0].status is FileStatus.UNKNOWN
    assert reviewer.coverage is Coverage.INCOMPLETE_CITATIONS
    assert decision.verdict_out is Verdict.COMMENT


@pytest.mark.parametrize(
    ("proof", "uncorroborated"),
    [
        (evidence("src/tax.py"), True),  # complete per-file evidence, no read of src/other.py
        (evidence("src/tax.py", "src/other.py"), False),
        (evidence("src/tax.py", capability=Capability.NONE), False),  # cannot tell
        (evidence("src/tax.py", complete=False), False),  # cannot tell
    ],
)
def test_a_citation_of_a_file_outside_the_changed_set_is_replayed_and_marked_when_unread(
    proof: EvidenceDocument, uncorroborated: bool
) -> None:
    decision = decide(claims(("src/other.py", 2, "return 42")), proof=proof)
    (reviewer,) = decision.reviewers
    assert reviewer.citations is not None
    (check,) = reviewer.citations.checks
    assert check.outcome is CitationOutcome.MATCHED
    assert check.uncorroborated is uncorroborated


def test_the_legacy_gate_wins_and_citations_are_not_counted_as_the_cause() -> None:
    output = claims(FABRICATED, inspected=[])
    decision = decide(output, mode=Mode.SHADOW)
    assert Reason.FILES_MISSING in decision.reasons
    assert decision.verdict_out is Verdict.COMMENT
    assert not decision.would_downgrade
    assert not decision.citations_would_downgrade


def test_the_note_names_at_most_ten_failed_citations_and_counts_the_rest() -> None:
    many = [("src/tax.py", 1, f"fabricated {n}") for n in range(NOTE_CITATIONS + 5)]
    note = decide(claims(*many)).note
    assert note.count("cited by `reviewer` as") == NOTE_CITATIONS
    assert "- and 5 more failed citation(s) by `reviewer` (listed in the decision)" in note


def test_citations_past_the_limit_are_counted_and_said() -> None:
    decision = decide(claims(*[REAL] * 7), max_citations=5)
    cited = decision.reviewers[0].citations
    assert cited is not None
    assert (len(cited.checks), cited.over_limit) == (5, 2)
    assert (
        "reviewer `reviewer` gave 7 citations; 2 past the first 5 were not replayed"
        in decision.note
    )


def test_a_huge_quote_is_shown_as_a_short_excerpt() -> None:
    huge = "x" * 50_000
    decision = decide(claims(("src/tax.py", 3, huge)))
    assert decision.verdict_out is Verdict.COMMENT
    assert len(decision.note) < 1_000
    check = decision.reviewers[0].citations.checks[0]  # type: ignore[union-attr]
    assert len(check.content) == 160
    assert check.content_chars == 50_000


def test_backticks_in_a_quote_cannot_break_out_of_its_code_span() -> None:
    note = decide(claims(("src/tax.py", 3, "a ` b ``c``"))).note
    assert "as ``` a ` b ``c`` ```:" in note


def test_findings_in_common_shapes_are_replayed_with_their_index() -> None:
    output = claims(
        findings=[
            "free text",
            {"path": "src/tax.py", "line": 3, "snippet": "RATE = 0.9", "body": "rate is wrong"},
        ]
    )
    decision = decide(output)
    check = decision.reviewers[0].citations.checks[0]  # type: ignore[union-attr]
    assert (check.finding, check.outcome) == (1, CitationOutcome.FAILED)
    assert decision.verdict_out is Verdict.COMMENT


def test_each_cited_file_is_read_once_across_reviewers() -> None:
    files = Files()
    output = claims(REAL, ("src/tax.py", 6, "def tax"), ("src/other.py", 1, "def helper"))
    reconcile(
        ReviewInput(
            repo="o/r",
            revision=REV,
            verdict_in=Verdict.APPROVE,
            mode=Mode.ENFORCE,
            mode_source=ModeSource.OVERRIDE,
            scope=["src/tax.py"],
            reviewers=[
                ReviewerInput("one", output, evidence("src/tax.py")),
                ReviewerInput("two", output, evidence("src/tax.py")),
            ],
            files=files,
        )
    )
    assert sorted(files.asked) == ["src/other.py", "src/tax.py"]


def test_text_and_markdown_show_the_citations_and_the_policy() -> None:
    decision = decide(claims(REAL, FABRICATED, ("src/tax.py", 5, "RATE = 0.2")))
    text = render.text(decision)
    assert "citation policy downgrade (default)" in text
    assert "3 citation(s) replayed: 1 matched, 1 nearby, 1 FAILED" in text
    assert (
        "FAILED      src/tax.py:3  cited `RATE = 0.3`: content_mismatch; the line reads `RATE = 0.2`"
        in text
    )
    assert "nearby      src/tax.py:5  cited `RATE = 0.2`: found 2 line(s) above" in text
    assert "incomplete_citations (cited lines that do not hold what the reviewer quoted)" in text
    markdown = render.markdown(decision)
    assert "citation policy `downgrade` (default)" in markdown
    assert (
        "| `src/tax.py:3` | failed | `RATE = 0.3` | content_mismatch; the line reads `RATE = 0.2` |"
        in markdown
    )


_CITATION = st.tuples(
    st.sampled_from(["src/tax.py", "src/other.py", "src/gone.py", "../x.py", "src/vendor.bin"]),
    st.integers(min_value=1, max_value=9),
    st.sampled_from(["RATE = 0.2", "RATE = 0.3", "", "}", "return", "def tax(amount):"]),
)


@settings(max_examples=150, deadline=None)
@given(
    citations=st.lists(_CITATION, max_size=6),
    verdict=st.sampled_from(list(Verdict)),
    mode=st.sampled_from(list(Mode)),
    policy=st.sampled_from(list(CitationPolicy)),
)
def test_citations_only_ever_turn_an_approve_into_a_comment(
    citations: list[tuple[str, int, str]], verdict: Verdict, mode: Mode, policy: CitationPolicy
) -> None:
    """Monotonic: never an upgrade, never a change to Request changes or Comment; shadow and off
    never change the verdict; the same citations without their failures decide the same."""
    files = Files(unavailable=["src/vendor.bin"])
    decision = decide(claims(*citations), verdict=verdict, mode=mode, policy=policy, files=files)
    if verdict is not Verdict.APPROVE or mode is not Mode.ENFORCE:
        assert decision.verdict_out is verdict
    else:
        assert decision.verdict_out in {Verdict.APPROVE, Verdict.COMMENT}
    failed = bool(decision.reviewers[0].citations and decision.reviewers[0].citations.failed)
    assert decision.citations_would_downgrade is (verdict is Verdict.APPROVE and failed)
    if not failed or policy is CitationPolicy.ACCEPT:
        baseline = decide(claims(), verdict=verdict, mode=mode, policy=policy, files=files)
        assert decision.verdict_out is baseline.verdict_out
        assert decision.reviewers[0].coverage is baseline.reviewers[0].coverage


def test_a_quote_of_several_lines_is_shown_on_one_line() -> None:
    decision = decide(claims(("src/tax.py", 6, "def tax(amount):\n    return amount * 0.3")))
    text = render.text(decision)
    (row,) = [line for line in text.splitlines() if line.startswith("    FAILED")]
    assert "cited `def tax(amount): return amount * 0.3`" in row
    assert "as `def tax(amount): return amount * 0.3`" in decision.note


def test_a_pipe_in_a_quote_cannot_split_a_markdown_table_row() -> None:
    markdown = render.markdown(decide(claims(("src/tax.py", 3, "a | b"))))
    (row,) = [line for line in markdown.splitlines() if line.startswith("| `src/tax.py:3`")]
    assert "`a \\| b`" in row
    assert row.count(" | ") == 3


def test_control_characters_in_a_citation_never_reach_a_terminal_or_a_pr_raw() -> None:
    """A reviewer's text is shown escaped: no terminal escape, no line break, in any output."""
    decision = decide(
        claims(("src/tax.py", 3, "RATE \x1b[2J= 0.9\u2028x"), ("src/\x1b]0;x\x07.py", 1, "abc"))
    )
    for shown in (decision.note, render.text(decision), render.markdown(decision)):
        assert "\x1b" not in shown
        assert "\x07" not in shown
        assert "\u2028" not in shown
    assert "as `RATE \\u001b[2J= 0.9 x`" in decision.note
    assert "src/\\u001b]0;x\\u0007.py:1" in render.text(decision)
