"""The citation contract (DESIGN §5): optional ``citations`` on findings and at the top level of
reviewer output version 1, free findings still accepted, common finding shapes read as citations,
and the published JSON Schemas saying so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.contracts.model import (
    DECISION_VERSION,
    Citation,
    CitationPolicy,
    DecisionDocument,
    FileDecision,
    FileDepth,
    Finding,
    ReviewerDecision,
    ReviewerOutput,
)
from coverage_gate.errors import ExitCode
from tests.conftest import reconcile_claims

runner = CliRunner()


def _output(**fields: object) -> ReviewerOutput:
    return ReviewerOutput.model_validate_json(
        json.dumps({"schema_version": 1, "agent_id": "r", **fields})
    )


def test_todays_reviewer_output_without_citations_is_still_accepted() -> None:
    """Backward compatible: free findings (text, objects of any shape) are kept as given."""
    output = _output(
        findings=["plain text", {"severity": "high", "body": {"nested": [1, 2]}, "line": "7"}]
    )
    assert output.citations == []
    assert output.findings[0] == "plain text"
    finding = output.findings[1]
    assert isinstance(finding, Finding)
    assert finding.model_extra == {"severity": "high", "body": {"nested": [1, 2]}, "line": "7"}
    assert finding.cited() == []


def test_citations_at_the_top_level_and_on_findings_are_read() -> None:
    output = _output(
        citations=[{"path": "a.py", "line": 3, "content": "x = 1"}],
        findings=[{"body": "bug", "citations": [{"path": "b.py", "line": 1, "content": "y"}]}],
    )
    assert output.citations == [Citation(path="a.py", line=3, content="x = 1")]
    finding = output.findings[0]
    assert isinstance(finding, Finding)
    assert finding.cited() == [Citation(path="b.py", line=1, content="y")]


@pytest.mark.parametrize(
    ("finding", "expected"),
    [
        (
            {"path": "a.py", "line": 4, "snippet": "x = 1"},
            Citation(path="a.py", line=4, content="x = 1"),
        ),
        (
            {"file": "a.py", "start_line": 4, "quote": "x"},
            Citation(path="a.py", line=4, content="x"),
        ),
        # start_line wins over line: a quoted snippet begins where the range does
        (
            {"path": "a.py", "start_line": 4, "line": 9, "snippet": "x"},
            Citation(path="a.py", line=4, content="x"),
        ),
        # path wins over file
        (
            {"path": "a.py", "file": "b.py", "line": 1, "snippet": "x"},
            Citation(path="a.py", line=1, content="x"),
        ),
    ],
)
def test_common_finding_shapes_with_a_quoted_snippet_are_read_as_citations(
    finding: dict[str, object], expected: Citation
) -> None:
    (read,) = _output(findings=[finding]).findings
    assert isinstance(read, Finding)
    assert read.cited() == [expected]


@pytest.mark.parametrize(
    "finding",
    [
        {"path": "a.py", "line": 4},  # no quote: a location is no claim about content
        {"path": "a.py", "line": 4, "body": "x = 1"},  # a body is the reviewer's words, no quote
        {"path": "a.py", "line": 4, "content": "x = 1"},  # 'content' is too often the message
        {"path": "a.py", "line": "4", "snippet": "x"},
        {"path": "a.py", "line": True, "snippet": "x"},
        {"path": "a.py", "line": 0, "snippet": "x"},
        {"path": 3, "line": 4, "snippet": "x"},
        {"path": "a.py", "line": 4, "snippet": ["x"]},
    ],
)
def test_other_finding_shapes_are_not_citations(finding: dict[str, object]) -> None:
    """Only the documented keys with well-typed values make a citation; anything else stays a
    free finding, accepted as before."""
    (read,) = _output(findings=[finding]).findings
    assert isinstance(read, Finding)
    assert read.cited() == []


def test_explicit_citations_win_over_the_common_shape() -> None:
    (read,) = _output(
        findings=[
            {
                "path": "a.py",
                "line": 4,
                "snippet": "x",
                "citations": [{"path": "b.py", "line": 2, "content": "y"}],
            }
        ]
    ).findings
    assert isinstance(read, Finding)
    assert read.cited() == [Citation(path="b.py", line=2, content="y")]


@pytest.mark.parametrize(
    ("citation", "field"),
    [
        ({"path": "a.py", "line": 0, "content": "x"}, "line"),
        ({"path": "a.py", "line": "3", "content": "x"}, "line"),
        ({"path": "a.py", "line": 3.0, "content": "x"}, "line"),
        ({"path": "a.py", "line": 3}, "content"),
        ({"line": 3, "content": "x"}, "path"),
        ({"path": "a.py", "line": 3, "content": "x", "column": 2}, "column"),
    ],
)
def test_a_malformed_citation_is_refused_naming_its_field(
    citation: dict[str, object], field: str
) -> None:
    with pytest.raises(ValidationError, match=rf"citations\.0\.{field}"):
        _output(citations=[citation])
    with pytest.raises(ValidationError, match=rf"findings\.0\.finding\.citations\.0\.{field}"):
        _output(findings=[{"citations": [citation]}])


def test_a_finding_that_is_neither_text_nor_an_object_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"findings\.0"):
        _output(findings=[3])


def test_reconcile_refuses_a_malformed_citation_with_exit_3_naming_the_field(
    tmp_path: Path,
) -> None:
    claims = {
        "schema_version": 1,
        "agent_id": "r",
        "findings": [{"citations": [{"path": "a.py", "line": 0, "content": "x"}]}],
    }
    result = reconcile_claims(tmp_path, claims, "--repo-root", tmp_path)
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.stdout == ""
    assert "field 'findings.0.finding.citations.0.line'" in result.stderr


def test_schema_publishes_citations_on_findings_and_at_the_top_level() -> None:
    schema = json.loads(runner.invoke(app, ["schema", "reviewer-output"]).stdout)
    citation = schema["$defs"]["Citation"]
    assert set(citation["required"]) == {"path", "line", "content"}
    assert citation["properties"]["line"]["minimum"] == 1
    assert citation["additionalProperties"] is False
    assert schema["properties"]["citations"]["items"] == {"$ref": "#/$defs/Citation"}
    finding = schema["$defs"]["Finding"]
    assert finding["additionalProperties"] is True
    assert finding["properties"]["citations"]["items"] == {"$ref": "#/$defs/Citation"}


def test_the_decision_schema_carries_the_citation_results_and_policy() -> None:
    schema = json.loads(runner.invoke(app, ["schema", "decision"]).stdout)
    assert {"citation_policy", "citation_policy_source", "citations_would_downgrade"} <= set(
        schema["properties"]
    )
    outcome = schema["$defs"]["CitationOutcome"]["enum"]
    assert outcome == ["matched", "matched_nearby", "failed", "unavailable", "rejected"]
    assert "incomplete_citations" in schema["$defs"]["Coverage"]["enum"]
    assert "citations_failed" in schema["$defs"]["Reason"]["enum"]


def test_the_decision_version_says_the_contract_grew() -> None:
    """Citation results were new fields of the decision (1.2); how each claimed file's evidence
    was checked against its content, and why an unsupported one holds nothing, are newer ones
    (1.3); each reviewer's changes and drift, and the mutation policy, newer still (1.4); what a
    mismatched file's reads showed instead (``mismatch_kind``, 1.5); why a reviewer's evidence
    cannot verify (``evidence_cannot_verify``, 1.6); the changed lines a client's cut hid
    (``changed_lines_cut``, 1.7): minor versions up."""
    assert DECISION_VERSION == "1.7"
    assert DecisionDocument.model_fields["version"].default == "1.7"
    assert "changed_lines_cut" in FileDepth.model_fields
    assert "mismatch_kind" in FileDecision.model_fields
    assert "evidence_cannot_verify" in ReviewerDecision.model_fields
    assert DecisionDocument.model_fields["citation_policy"].default is CitationPolicy.DOWNGRADE
