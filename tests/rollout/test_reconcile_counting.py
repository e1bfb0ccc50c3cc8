"""What one reconcile run counts in telemetry: a decision, or an error, never both."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.report import load_folder
from coverage_gate.telemetry.otel_setup import TELEMETRY_DIR_ENV
from tests.conftest import lying_reconcile_args

runner = CliRunner()
SCOPE = ["src/api.py", "src/db.py"]


def test_a_decision_that_cannot_be_written_counts_one_error_and_no_decision(
    tmp_path: Path,
) -> None:
    """`-o` into a folder that does not exist: exit 3, and telemetry holds the error alone (no
    review counted, no reconcile span), so the report's rates see a run that gave no decision."""
    telemetry = tmp_path / "telemetry"
    result = runner.invoke(
        app,
        lying_reconcile_args(tmp_path, "-o", str(tmp_path / "missing" / "decision.json")),
        env={TELEMETRY_DIR_ENV: str(telemetry)},
    )
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "cannot be written" in result.stderr
    loaded = load_folder(telemetry)
    assert dict(loaded.errors) == {"acme/api": 1}
    assert loaded.reviews == []


def test_a_written_decision_counts_one_decision_and_no_error(tmp_path: Path) -> None:
    """The same run with a writable `-o`: one review, no error (the counting is not lost)."""
    telemetry = tmp_path / "telemetry"
    result = runner.invoke(
        app,
        lying_reconcile_args(tmp_path, "-o", str(tmp_path / "decision.json")),
        env={TELEMETRY_DIR_ENV: str(telemetry)},
    )
    assert result.exit_code == 0, result.output
    loaded = load_folder(telemetry)
    assert dict(loaded.errors) == {}
    assert [review.repository for review in loaded.reviews] == ["acme/api"]
