"""Every registered format is listed by `coverage-gate formats` and named by the published
evidence JSON Schema, OpenCode's and Copilot CLI's included."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from coverage_gate.adapters import ADAPTERS, DOCUMENT_FORMATS
from coverage_gate.cli import app

runner = CliRunner()
FORMATS = sorted({*ADAPTERS, *DOCUMENT_FORMATS})


def test_formats_lists_opencode_and_copilot_cli_with_per_file_capability() -> None:
    result = runner.invoke(app, ["formats"])
    assert result.exit_code == 0
    listed = {line.split()[0]: line.split()[2] for line in result.stdout.splitlines()}
    assert listed["opencode"] == "per_file"
    assert listed["copilot-cli"] == "per_file"
    assert sorted(listed) == FORMATS


def test_the_evidence_schema_names_every_format_its_source_takes() -> None:
    for args in (["schema", "evidence"], ["schema"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0
        document = json.loads(result.stdout)
        schema = document if args[1:] else document["evidence"]
        source = schema["properties"]["source"]
        assert source["examples"] == FORMATS
        assert {"opencode", "copilot-cli"} <= set(source["examples"])
        assert "coverage-gate formats" in source["description"]
