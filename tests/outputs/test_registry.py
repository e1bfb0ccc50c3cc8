"""One registry of decision output formats: every ``OutputFormat`` has a renderer, each renderer
gives what ``reconcile --format`` printed before the registry (the output module it stands for),
and the command prints exactly what the registry renders."""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.contracts.model import DecisionDocument, Mode
from coverage_gate.edges.files import dump_model, load_model
from coverage_gate.outputs import render
from coverage_gate.outputs.formats import RENDERERS, OutputFormat, render_decision
from coverage_gate.outputs.sarif import sarif_text
from tests._support.examples import example_decision
from tests.conftest import lying_reconcile_args
from tests.outputs.test_sarif import check_sarif

VERSION = importlib.metadata.version("coverage-gate")

#: What `reconcile --format` printed for each format before the registry: the output functions
#: its own dispatch called.
BEFORE: dict[OutputFormat, Callable[[DecisionDocument], str]] = {
    OutputFormat.TEXT: render.text,
    OutputFormat.JSON: dump_model,
    OutputFormat.MARKDOWN: render.markdown,
    OutputFormat.SARIF: lambda decision: sarif_text(decision, tool_version=VERSION),
}

#: A line the command's output holds for the lying reviewer, as the CLI tests expect it.
SHOWS = {
    OutputFormat.TEXT: "    UNSUPPORTED src/db.py  [no read or diff recorded]\n",
    OutputFormat.JSON: '"verdict_out": "approve"',
    OutputFormat.MARKDOWN: "| `src/db.py` | inspected | unsupported | no read or diff recorded | - |",
    OutputFormat.SARIF: '"uri": "src/db.py"',
}


def test_every_output_format_has_a_renderer() -> None:
    assert list(RENDERERS) == list(OutputFormat)
    assert all(callable(renderer) for renderer in RENDERERS.values())
    assert set(BEFORE) == set(SHOWS) == set(OutputFormat)


@pytest.mark.parametrize("output_format", list(OutputFormat), ids=str)
@pytest.mark.parametrize("reviewer", ["honest", "lying"])
def test_each_renderer_gives_what_the_command_printed_before(
    output_format: OutputFormat, reviewer: str
) -> None:
    """Byte for byte the output function the command called for that format."""
    decision = example_decision(reviewer, Mode.ENFORCE)
    assert RENDERERS[output_format](decision) == BEFORE[output_format](decision)
    assert render_decision(decision, output_format) == BEFORE[output_format](decision)


@pytest.mark.parametrize("output_format", list(OutputFormat), ids=str)
def test_reconcile_prints_the_registry_rendering_of_its_decision(
    output_format: OutputFormat, tmp_path: Path
) -> None:
    """stdout is the format's renderer applied to the decision; the --decision-json document is
    the JSON renderer's; each holds what the CLI tests look for."""
    decision_path = tmp_path / "d.json"
    result = CliRunner().invoke(
        app,
        lying_reconcile_args(
            tmp_path, "--format", output_format.value, "--decision-json", str(decision_path)
        ),
    )
    assert result.exit_code == 0, result.output
    decision = load_model(decision_path, DecisionDocument, "decision")
    assert result.stdout == RENDERERS[output_format](decision)
    assert decision_path.read_text() == RENDERERS[OutputFormat.JSON](decision)
    assert SHOWS[output_format] in result.stdout
    if output_format is OutputFormat.SARIF:
        check_sarif(json.loads(result.stdout))
