"""Usage errors exit 2, bad input exits 3: each with one line naming what is wrong, never a
traceback or an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.errors import ExitCode
from tests.conftest import CHANGED_FILES, DATA

runner = CliRunner()
REV = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
PI = DATA / "pi-rpc"


def claims(folder: Path, agent: str = "claims") -> Path:
    path = folder / "claims.json"
    body = {
        "schema_version": 1,
        "agent_id": agent,
        "inspected_files": list(CHANGED_FILES),
        "skipped_files": [],
        "findings": [],
    }
    path.write_text(json.dumps(body))
    return path


def changed(folder: Path) -> Path:
    path = folder / "changed.txt"
    path.write_text("\n".join(CHANGED_FILES) + "\n")
    return path


def reconcile(*extra: str, repo: str = "o/r") -> list[str]:
    return ["reconcile", "--repo", repo, "--revision", REV, "--verdict", "approve", *extra]


def only_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("coverage-gate: error:")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_demo_keep_naming_a_file_is_bad_input(tmp_path: Path) -> None:
    """`demo --keep FILE` where FILE exists and is no folder: exit 3, one line naming it."""
    existing = tmp_path / "existing"
    existing.write_text("mine\n")
    result = runner.invoke(app, ["demo", "--keep", str(existing)])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    line = only_error_line(result.stderr)
    assert str(existing) in line and "not a folder" in line
    assert "internal error" not in result.stderr
    assert existing.read_text() == "mine\n"
    assert result.stdout == ""


def test_demo_keep_under_a_file_is_bad_input(tmp_path: Path) -> None:
    """A --keep folder that cannot be made (its parent is a file) is bad input, not a bug."""
    parent = tmp_path / "file"
    parent.write_text("")
    result = runner.invoke(app, ["demo", "--keep", str(parent / "sub")])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "cannot be made" in only_error_line(result.stderr)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--claims", "CLAIMS"], "the changed files are needed"),
        (["--claims", "CLAIMS", "--base", "HEAD"], "the changed files are needed"),
        (["--changed", "CHANGED"], "exactly one of --claims"),
        (["--changed", "CHANGED", "--claims", "CLAIMS", "--bundle", "CLAIMS"], "exactly one of"),
        (["--claims", "CLAIMS", "--changed", "CHANGED", "--base", "a", "--head", "b"], "not both"),
    ],
)
def test_reconcile_missing_or_conflicting_options_are_usage_errors(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """A reconcile without its scope or without claims is a usage error: exit 2, one line."""
    places = {"CLAIMS": str(claims(tmp_path)), "CHANGED": str(changed(tmp_path))}
    result = runner.invoke(app, reconcile(*[places.get(arg, arg) for arg in args]))
    assert result.exit_code == ExitCode.USAGE, result.output
    assert message in only_error_line(result.stderr)
    assert result.stdout == ""


def test_record_without_revision_is_a_usage_error() -> None:
    """`record` without --revision: exit 2, and the message names --revision."""
    result = runner.invoke(app, ["record", str(PI / "pi_a_honest.jsonl")])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "--revision" in result.stderr
    assert result.stdout == ""


def test_record_with_an_empty_revision_is_a_usage_error() -> None:
    result = runner.invoke(app, ["record", str(PI / "pi_a_honest.jsonl"), "--revision", ""])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "--revision is required" in only_error_line(result.stderr)


@pytest.mark.parametrize("command", ["record", "run"])
def test_help_marks_revision_as_required(command: str) -> None:
    """`record --help` and `run --help` (which share the option) say --revision is required."""
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    line = next(line for line in result.stdout.splitlines() if "--revision" in line)
    assert "required" in line


def test_unknown_schema_is_a_usage_error() -> None:
    result = runner.invoke(app, ["schema", "nope"])
    assert result.exit_code == ExitCode.USAGE
    assert "unknown schema 'nope'" in only_error_line(result.stderr)
