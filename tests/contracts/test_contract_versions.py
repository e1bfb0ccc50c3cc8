"""``schema_version`` of the reviewer output and the review bundle is the integer 1, exactly.

JSON ``true`` and ``1.0`` equal 1 in Python, so a plain literal check lets them through; a contract
that says "version 1" must not accept a boolean or a float for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from coverage_gate.contracts.model import ReviewBundle, ReviewerOutput
from coverage_gate.errors import ExitCode
from tests.conftest import reconcile_claims

runner = CliRunner()
NOT_INTEGER_ONE = ["true", "1.0", '"1"', "false", "0", "2", "null"]


@pytest.mark.parametrize("version", NOT_INTEGER_ONE)
def test_reviewer_output_schema_version_must_be_the_integer_1(version: str) -> None:
    with pytest.raises(ValidationError, match="schema_version"):
        ReviewerOutput.model_validate_json(f'{{"schema_version": {version}, "agent_id": "r"}}')
    assert ReviewerOutput.model_validate_json('{"schema_version": 1, "agent_id": "r"}')


@pytest.mark.parametrize("version", NOT_INTEGER_ONE)
def test_review_bundle_schema_version_must_be_the_integer_1(version: str) -> None:
    reviewers = '[{"claims": "c.json"}]'
    with pytest.raises(ValidationError, match="schema_version"):
        ReviewBundle.model_validate_json(
            f'{{"schema_version": {version}, "reviewers": {reviewers}}}'
        )
    assert ReviewBundle.model_validate_json(f'{{"schema_version": 1, "reviewers": {reviewers}}}')


def test_python_callers_still_pass_the_integer() -> None:
    assert ReviewerOutput(schema_version=1, agent_id="r").schema_version == 1
    with pytest.raises(ValidationError):
        ReviewerOutput(schema_version=True, agent_id="r")  # type: ignore[arg-type]


def test_published_schema_still_says_const_1() -> None:
    for model in (ReviewerOutput, ReviewBundle):
        field = model.model_json_schema()["properties"]["schema_version"]
        assert field == {"const": 1, "title": "Schema Version", "type": "integer"}


@pytest.mark.parametrize("version", [True, 1.0])
def test_reconcile_refuses_claims_with_a_non_integer_version(
    tmp_path: Path, version: object
) -> None:
    """Exit 3, nothing on stdout, and the message names the file and the field."""
    result = reconcile_claims(tmp_path, {"schema_version": version, "agent_id": "r"})
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.stdout == ""
    assert "claims.json" in result.stderr
    assert "field 'schema_version'" in result.stderr
    assert "must be the integer 1" in result.stderr
