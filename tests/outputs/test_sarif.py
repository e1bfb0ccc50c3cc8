"""SARIF 2.1.0: each finding is a result on its file, and the log is valid against the published
SARIF schema (vendored in tests/data/schemas, with its source)."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.contracts.model import DepthPolicy, Mode
from coverage_gate.core.reconcile import reconcile
from coverage_gate.outputs.findings import RULES
from coverage_gate.outputs.sarif import sarif_log
from tests._support.examples import example_decision, renamed_scope_decision
from tests.conftest import DATA, lying_reconcile_args
from tests.core.test_citation_decisions import FABRICATED, claims, decide
from tests.core.test_reconcile import PARTIAL_TAX, tax_evidence, tax_review

SCHEMA = json.loads((DATA / "schemas" / "sarif-2.1.0.json").read_text())


def check_sarif(log: dict[str, Any]) -> None:
    """Valid against the SARIF 2.1.0 schema, formats checked where a checker is installed."""
    jsonschema.Draft7Validator(
        SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    ).validate(log)


def test_the_vendored_schema_is_the_sarif_2_1_0_schema() -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert SCHEMA["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]


def test_the_lying_reviewers_log_is_valid_and_shows_each_unsupported_claim_on_its_file() -> None:
    log = sarif_log(example_decision("lying", Mode.ENFORCE), tool_version="1.2.3")
    check_sarif(log)
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "coverage-gate"
    assert run["tool"]["driver"]["version"] == "1.2.3"
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == [r.rule_id for r in RULES]
    results = run["results"]
    assert [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"],
        )
        for r in results
    ] == [
        ("claim-unsupported", "error", "src/util/strings.py", {"startLine": 1}),
        ("claim-unsupported", "error", "tests/test_handlers.py", {"startLine": 1}),
    ]
    assert results[0]["message"]["text"].startswith(
        "lying-reviewer claimed `src/util/strings.py` inspected; no successful read"
    )
    assert run["properties"]["verdict_out"] == "comment"
    assert run["properties"]["downgraded"] is True


def test_findings_are_warnings_when_the_mode_does_not_enforce() -> None:
    log = sarif_log(example_decision("lying", Mode.SHADOW), tool_version="0")
    check_sarif(log)
    assert {r["level"] for r in log["runs"][0]["results"]} == {"warning"}


def test_an_honest_review_is_a_valid_log_with_no_results() -> None:
    log = sarif_log(example_decision("honest", Mode.ENFORCE), tool_version="0")
    check_sarif(log)
    assert log["runs"][0]["results"] == []


def test_a_shallow_claim_is_a_result_on_its_unseen_lines() -> None:
    log = sarif_log(
        reconcile(tax_review(tax_evidence(PARTIAL_TAX), DepthPolicy.ALL_HUNKS)),
        tool_version="0",
    )
    check_sarif(log)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "claim-shallow"
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 480,
        "endLine": 492,
    }


@pytest.mark.parametrize("name", ["docs/a guide, part 1.md", "src/100%#?.py", "src/naïve.py"])
def test_a_path_of_any_spelling_is_a_uri_reference_that_decodes_back_to_it(name: str) -> None:
    decision = renamed_scope_decision({"tests/test_handlers.py": name})
    log = sarif_log(decision, tool_version="0")
    check_sarif(log)
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
    ]
    assert name in [unquote(uri) for uri in uris]
    assert not any(char in uri for uri in uris for char in " #?")


def test_a_finding_keeps_its_fingerprint_across_runs_and_modes() -> None:
    """The same claim of the same reviewer on the same file is the same alert next push."""

    def prints(mode: Mode) -> list[str]:
        log = sarif_log(example_decision("lying", mode), tool_version="0")
        return [
            r["partialFingerprints"]["coverageGateFinding/v1"] for r in log["runs"][0]["results"]
        ]

    assert prints(Mode.ENFORCE) == prints(Mode.SHADOW)
    assert len(set(prints(Mode.ENFORCE))) == 2


def test_the_schema_check_refuses_what_sarif_does_not_allow() -> None:
    """The check has teeth: a level SARIF does not know, or a result without a message, fails."""
    log = sarif_log(example_decision("lying", Mode.ENFORCE), tool_version="0")
    result = log["runs"][0]["results"][0]
    for broken in (
        {**result, "level": "fatal"},
        {k: v for k, v in result.items() if k != "message"},
    ):
        log["runs"][0]["results"][0] = broken
        with pytest.raises(jsonschema.ValidationError):
            check_sarif(log)


def test_reconcile_format_sarif_prints_a_valid_log_of_the_unsupported_claims(
    tmp_path: Path,
) -> None:
    """`reconcile --format sarif`: stdout is the SARIF log, the decision JSON goes to
    --decision-json."""
    result = CliRunner().invoke(
        app,
        lying_reconcile_args(
            tmp_path, "--format", "sarif", "--decision-json", str(tmp_path / "d.json")
        ),
    )
    assert result.exit_code == 0, result.output
    log = json.loads(result.stdout)
    check_sarif(log)
    (run,) = log["runs"]
    assert run["tool"]["driver"]["version"] == importlib.metadata.version("coverage-gate")
    assert [
        (r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in run["results"]
    ] == [("claim-unsupported", "warning", "src/db.py")]
    assert json.loads((tmp_path / "d.json").read_text())["schema"] == "coverage-gate/decision"


def test_reconcile_o_writes_the_sarif_log_the_format_asks_for(tmp_path: Path) -> None:
    """`-o FILE` holds the output in --format (the SARIF log an upload step takes), nothing on
    stdout; the decision JSON only where --decision-json says."""
    sarif, decision = tmp_path / "out.sarif", tmp_path / "decision.json"
    result = CliRunner().invoke(
        app,
        lying_reconcile_args(
            tmp_path, "--format", "sarif", "-o", str(sarif), "--decision-json", str(decision)
        ),
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    check_sarif(json.loads(sarif.read_text()))
    assert json.loads(decision.read_text())["schema"] == "coverage-gate/decision"


def test_a_failed_citation_is_a_result_on_the_cited_line() -> None:
    log = sarif_log(decide(claims(FABRICATED)), tool_version="0")
    check_sarif(log)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "citation-failed"
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 3, "endLine": 3}
