"""Findings: what a decision holds against each reviewer, file by file, from one rule table."""

from __future__ import annotations

import pytest

from coverage_gate.contracts.model import CitationPolicy, DepthPolicy, Mode, Reason, UnknownPolicy
from coverage_gate.core.reconcile import reconcile
from coverage_gate.outputs.findings import RULES, findings
from tests._support.examples import example_decision, unverifiable_decision
from tests.core.test_citation_decisions import FABRICATED, REAL, claims, decide
from tests.core.test_citation_decisions import REV as CITE_REV
from tests.core.test_reconcile import PARTIAL_TAX, TAX, tax_evidence, tax_review


def test_the_lying_reviewers_unsupported_claims_are_its_findings_and_errors_under_enforce() -> None:
    found = findings(example_decision("lying", Mode.ENFORCE))
    assert [(f.rule.rule_id, f.agent_id, f.spot.path, f.enforced) for f in found] == [
        ("claim-unsupported", "lying-reviewer", "src/util/strings.py", True),
        ("claim-unsupported", "lying-reviewer", "tests/test_handlers.py", True),
    ]
    assert found[0].message == (
        "lying-reviewer claimed `src/util/strings.py` inspected; no successful read or diff of "
        "it was recorded at 4b825dc642cb (1 failed read(s))"
    )
    assert found[0].spot.start_line is None


def test_shadow_and_off_show_the_same_findings_but_not_as_enforced() -> None:
    for mode in (Mode.SHADOW, Mode.OFF):
        found = findings(example_decision("lying", mode))
        assert [f.spot.path for f in found] == ["src/util/strings.py", "tests/test_handlers.py"]
        assert not any(f.enforced for f in found)


def test_an_honest_reviewer_has_no_findings() -> None:
    assert findings(example_decision("honest", Mode.ENFORCE)) == []


def test_a_shallow_claim_points_at_its_first_unseen_changed_lines() -> None:
    decision = reconcile(tax_review(tax_evidence(PARTIAL_TAX), DepthPolicy.ALL_HUNKS))
    (finding,) = findings(decision)
    assert finding.rule.rule_id == "claim-shallow"
    assert (finding.spot.path, finding.spot.start_line, finding.spot.end_line) == (TAX, 480, 492)
    assert "27 of its 40 changed lines (1/2 hunks), too few for depth policy all-hunks" in (
        finding.message
    )
    assert finding.message.endswith("not seen: lines 480-492")


def test_unknown_claims_are_findings_only_when_the_unknown_policy_holds_them_against_it() -> None:
    assert findings(unverifiable_decision(UnknownPolicy.ACCEPT)) == []
    found = findings(unverifiable_decision(UnknownPolicy.DOWNGRADE))
    assert len(found) == 6
    assert {f.rule.rule_id for f in found} == {"claim-unverifiable"}
    assert "(no_evidence_document)" in found[0].message


def test_every_reason_that_counts_a_claim_against_a_reviewer_has_one_rule() -> None:
    """One row per reason, stable unique rule ids: a new reason is one new row."""
    reasons = [rule.reason for rule in RULES]
    assert len(set(reasons)) == len(reasons)
    assert set(reasons) == {
        Reason.CLAIMS_UNSUPPORTED,
        Reason.CLAIMS_SHALLOW,
        Reason.CLAIMS_UNVERIFIABLE,
        Reason.CITATIONS_FAILED,
    }
    ids = [rule.rule_id for rule in RULES]
    assert len(set(ids)) == len(ids)


# --- failed citations (DESIGN §7.10) ------------------------------------------------------------


def test_a_failed_citation_is_a_finding_on_its_line_saying_what_stands_there() -> None:
    found = findings(decide(claims(REAL, FABRICATED)))
    assert [(f.rule.rule_id, f.spot.path, f.spot.start_line, f.enforced) for f in found] == [
        ("citation-failed", "src/tax.py", 3, True)
    ]
    assert found[0].message == (
        "reviewer cited `src/tax.py` line 3 as `RATE = 0.3`; line 3 reads `RATE = 0.2` at "
        f"{CITE_REV[:12]}, and no line within 3 of it holds the cited content"
    )


@pytest.mark.parametrize(
    ("citation", "said"),
    [
        (("src/gone.py", 1, "x = 1"), "as `x = 1`; no such file at"),
        (("src/tax.py", 99, "RATE"), "as `RATE`; the file has 7 line(s) at"),
        (("src/tax.py", 3, "  "), "with empty content, which says nothing that can be checked"),
    ],
)
def test_each_way_a_citation_fails_is_said_in_its_finding(
    citation: tuple[str, int, str], said: str
) -> None:
    (finding,) = findings(decide(claims(citation)))
    assert said in finding.message
    assert finding.spot.start_line == citation[1]


def test_failed_citations_are_findings_only_when_the_citation_policy_holds_them() -> None:
    """Under citation policy accept they are replayed and recorded, never held against anyone;
    under shadow they are findings that do not enforce."""
    assert findings(decide(claims(FABRICATED), policy=CitationPolicy.ACCEPT)) == []
    (shadow,) = findings(decide(claims(FABRICATED), mode=Mode.SHADOW))
    assert not shadow.enforced
    assert findings(decide(claims(REAL))) == []
