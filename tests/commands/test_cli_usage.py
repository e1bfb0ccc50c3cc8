"""Usage errors exit 2, bad input exits 3: each with one line naming what is wrong, never a
traceback or an internal error."""

from __future__ import annotations

import json
import subprocess
import sys
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
    result = runner.invoke(app, [command, "--help"], terminal_width=200)
    assert result.exit_code == 0
    line = next(line for line in result.stdout.splitlines() if "--revision" in line)
    assert "required" in line


def test_unknown_schema_is_a_usage_error() -> None:
    result = runner.invoke(app, ["schema", "nope"])
    assert result.exit_code == ExitCode.USAGE
    assert "unknown schema 'nope'" in only_error_line(result.stderr)


@pytest.mark.parametrize("repo", ["shop", "/shop", "acme/", "acme shop/api"])
def test_flags_repo_not_owner_slash_name_is_a_usage_error(repo: str) -> None:
    """`flags --repo` names a repository as reconcile does: a flag's targeting may match on it,
    and a mode shown for `shop` would be a mode no reconcile ever resolves."""
    snapshot = Path(__file__).parents[2] / "coverage_gate" / "examples" / "flags.snapshot.json"
    result = runner.invoke(app, ["flags", "--repo", repo, "--flags", str(snapshot)])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert f"--repo {repo!r}: expected OWNER/NAME" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("command", [["--help"], ["record", "--help"], ["flags", "--help"]])
def test_help_to_a_full_stdout_is_one_line_not_an_internal_error(command: list[str]) -> None:
    """Help goes to stdout through click itself; a full disk there is the caller's output gone
    wrong (exit 3, one line), as for every document the commands write."""
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "coverage_gate", *command],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == ExitCode.BAD_INPUT, result.stderr
    named = " ".join(["coverage-gate", *command[:-1]])  # the command, in the one error style
    assert result.stderr.strip().splitlines() == [
        f"{named}: error: stdout: cannot write (No space left on device)"
    ]


@pytest.mark.parametrize("repo", ["shop", "/shop", "acme/", "acme shop/api", ""])
def test_repo_not_owner_slash_name_is_a_usage_error(tmp_path: Path, repo: str) -> None:
    """--repo must be OWNER/NAME (the owner is a metric label): exit 2 naming the value, and no
    error is counted under an empty owner."""
    telemetry = tmp_path / "telemetry"
    result = runner.invoke(
        app,
        reconcile(
            "--claims", str(claims(tmp_path)), "--changed", str(changed(tmp_path)), repo=repo
        ),
        env={"COVERAGE_GATE_TELEMETRY_DIR": str(telemetry)},
    )
    assert result.exit_code == ExitCode.USAGE, result.output
    assert f"--repo {repo!r}: expected OWNER/NAME" in only_error_line(result.stderr)
    assert result.stdout == ""
    assert not telemetry.exists() or not any(path.is_file() for path in telemetry.rglob("*"))


def record_with_diff(diff: Path, out: Path) -> list[str]:
    return [
        "record", str(PI / "pi_a_honest.jsonl"), "-f", "pi-rpc", "--revision", REV,
        "--repo-root", "/home/user/repo", "--diff", str(diff), "-o", str(out),
    ]  # fmt: skip


@pytest.mark.parametrize(
    "body", [b"hello, this is not a diff\n", b"\x00\x01binary", json.dumps({"a": 1}).encode()]
)
def test_diff_that_is_not_a_diff_is_bad_input(tmp_path: Path, body: bytes) -> None:
    """A non-empty --diff with no line of a unified diff: exit 3 naming the file, nothing written."""
    diff = tmp_path / "notes.txt"
    diff.write_bytes(body)
    out = tmp_path / "e.json"
    result = runner.invoke(app, record_with_diff(diff, out))
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    line = only_error_line(result.stderr)
    assert str(diff) in line and "not a unified diff" in line
    assert not out.exists()


@pytest.mark.parametrize("body", [b"", b"\n", (PI / "review.diff").read_bytes()])
def test_empty_or_real_diff_is_accepted(tmp_path: Path, body: bytes) -> None:
    """An empty diff (no change) and a real one are read as before."""
    diff = tmp_path / "review.diff"
    diff.write_bytes(body)
    result = runner.invoke(app, record_with_diff(diff, tmp_path / "e.json"))
    assert result.exit_code == 0, result.output


def evidence_for(folder: Path, agent: str | None) -> Path:
    out = folder / "e.json"
    args = ["record", str(PI / "pi_a_honest.jsonl"), "-f", "pi-rpc", "--revision", REV,
            "--repo-root", "/home/user/repo", "-o", str(out)]  # fmt: skip
    result = runner.invoke(app, [*args, *(["--agent", agent] if agent else [])])
    assert result.exit_code == 0, result.output
    return out


def test_claims_checked_against_another_agents_evidence_are_flagged(tmp_path: Path) -> None:
    """Evidence recorded for agent B checked against agent A's claims: a warning on stderr and a
    sentence in the decision's note."""
    args = reconcile(
        "--claims", str(claims(tmp_path, agent="alice")), "--changed", str(changed(tmp_path)),
        "--evidence", str(evidence_for(tmp_path, "bob")), "--format", "json",
    )  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    sentence = "The claims of alice were checked against evidence recorded for agent bob."
    assert f"coverage-gate: warning: {sentence}" in result.stderr
    assert sentence in json.loads(result.stdout)["note"]


@pytest.mark.parametrize("agent", [None, "alice"])
def test_evidence_of_the_same_or_an_unnamed_agent_is_not_flagged(
    tmp_path: Path, agent: str | None
) -> None:
    args = reconcile(
        "--claims", str(claims(tmp_path, agent="alice")), "--changed", str(changed(tmp_path)),
        "--evidence", str(evidence_for(tmp_path, agent)), "--format", "json",
    )  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "checked against evidence recorded for" not in result.stderr + result.stdout


def test_bundle_reviewer_with_another_agents_evidence_is_flagged(tmp_path: Path) -> None:
    """The same check holds for each reviewer of a bundle."""
    claims(tmp_path, agent="alice")
    evidence_for(tmp_path, "bob")
    bundle = tmp_path / "bundle.json"
    bundle.write_text(
        json.dumps(
            {"schema_version": 1, "reviewers": [{"claims": "claims.json", "evidence": "e.json"}]}
        )
    )
    args = reconcile(
        "--bundle", str(bundle), "--changed", str(changed(tmp_path)), "--format", "json"
    )
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    sentence = "The claims of alice were checked against evidence recorded for agent bob."
    assert f"coverage-gate: warning: {sentence}" in result.stderr
    assert sentence in json.loads(result.stdout)["note"]
