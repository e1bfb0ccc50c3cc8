"""The CLI through typer's CliRunner: exit codes and parsed JSON output, per mode."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.errors import ExitCode
from tests.conftest import CHANGED_FILES, DATA, approve_args

runner = CliRunner()
REV = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
PI = DATA / "pi-rpc"
ALL = CHANGED_FILES


def claims_file(
    folder: Path, inspected: list[str], skipped: list[str] | None = None, name: str = "claims.json"
) -> Path:
    path = folder / name
    body = {
        "schema_version": 1,
        "agent_id": name.split(".", maxsplit=1)[0],
        "inspected_files": inspected,
        "skipped_files": skipped or [],
        "findings": [],
    }
    path.write_text(json.dumps(body))
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "changed.txt").write_text("\n".join(ALL) + "\n")
    for capture in ("pi_a_honest", "pi_b_overclaim"):
        result = runner.invoke(
            app,
            [
                "record",
                str(PI / f"{capture}.jsonl"),
                "--format",
                "pi-rpc",
                "--repo-root",
                "/home/user/repo",
                "--revision",
                REV,
                "-o",
                str(tmp_path / f"{capture}.evidence.json"),
            ],
        )
        assert result.exit_code == 0, result.output
    return tmp_path


def reconcile_args(work: Path, evidence: str, mode: str, *extra: str) -> list[str]:
    return approve_args(
        REV, work / "changed.txt", "--claims", claims_file(work, ALL),
        "--evidence", work / f"{evidence}.evidence.json", "--mode", mode, "--format", "json",
        "--repo-root", "/home/user/repo", *extra,
    )  # fmt: skip


def test_record_writes_the_evidence_document(work: Path) -> None:
    document = json.loads((work / "pi_b_overclaim.evidence.json").read_text())
    assert document["schema"] == "coverage-gate/evidence"
    assert document["revision"] == REV
    assert {f["path"] for f in document["files"] if f["reads_succeeded"]} == {
        "src/api/handlers.py",
        "src/api/models.py",
    }


def test_record_reads_stdin_and_writes_stdout() -> None:
    result = runner.invoke(
        app, ["record", "--revision", "r"], input=(PI / "pi_a_honest.jsonl").read_bytes()
    )
    assert result.exit_code == 0
    assert json.loads(result.stdout)["counters"]["calls"] == 8


@pytest.mark.parametrize(
    ("evidence", "mode", "verdict_out", "would"),
    [
        ("pi_a_honest", "enforce", "approve", False),
        ("pi_b_overclaim", "enforce", "comment", True),
        ("pi_b_overclaim", "shadow", "approve", True),
        ("pi_b_overclaim", "off", "approve", True),
    ],
)
def test_reconcile_json_per_mode(
    work: Path, evidence: str, mode: str, verdict_out: str, would: bool
) -> None:
    result = runner.invoke(app, reconcile_args(work, evidence, mode))
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["verdict_out"] == verdict_out
    assert decision["mode"] == mode
    assert decision["would_downgrade"] is would


def test_exit_code_flag_makes_an_enforced_downgrade_exit_1(work: Path) -> None:
    assert (
        runner.invoke(
            app, reconcile_args(work, "pi_b_overclaim", "enforce", "--exit-code")
        ).exit_code
        == 1
    )
    assert (
        runner.invoke(
            app, reconcile_args(work, "pi_b_overclaim", "shadow", "--exit-code")
        ).exit_code
        == 0
    )
    assert (
        runner.invoke(app, reconcile_args(work, "pi_a_honest", "enforce", "--exit-code")).exit_code
        == 0
    )


def test_markdown_and_text_outputs_name_the_unsupported_files(work: Path) -> None:
    args = reconcile_args(work, "pi_b_overclaim", "enforce")
    at = args.index("json")
    markdown = runner.invoke(app, [*args[:at], "markdown", *args[at + 1 :]])
    text = runner.invoke(app, [*args[:at], "text", *args[at + 1 :]])
    assert "| `README.md` | inspected | unsupported |" in markdown.stdout
    assert "UNSUPPORTED README.md" in text.stdout


def test_bundle_with_several_reviewers(work: Path) -> None:
    claims_file(work, ALL, name="honest.json")
    claims_file(work, ALL, name="liar.json")
    (work / "bundle.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "reviewers": [
                    {"claims": "honest.json", "evidence": "pi_a_honest.evidence.json"},
                    {"claims": "liar.json", "evidence": "pi_b_overclaim.evidence.json"},
                    {"agent_id": "crashed", "failed": True},
                ],
            }
        )
    )
    result = runner.invoke(
        app,
        approve_args(REV, work / "changed.txt", "--bundle", work / "bundle.json",
                     "--mode", "enforce", "--format", "json"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert [r["coverage"] for r in decision["reviewers"]] == [
        "complete",
        "incomplete_unsupported",
        "incomplete_failed",
    ]
    assert decision["reasons"] == ["reviewer_failed", "claims_unsupported"]


def test_default_filter_drops_lock_files_and_vendored_code(work: Path) -> None:
    (work / "changed.txt").write_text(
        "\n".join([*ALL, "poetry.lock", "vendor/x/y.go", "web/app.min.js"])
    )
    result = runner.invoke(app, reconcile_args(work, "pi_a_honest", "enforce"))
    assert json.loads(result.stdout)["scope"] == sorted(ALL)
    excluded = runner.invoke(
        app, [*reconcile_args(work, "pi_a_honest", "enforce"), "--exclude", "docs/**"]
    )
    assert "docs/guide.md" not in json.loads(excluded.stdout)["scope"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_scope_from_git_base_and_head(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args], check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "a.py").write_text("1\n")
    (tmp_path / "gone.py").write_text("1\n")
    git("add", ".")
    git("commit", "-qm", "one")
    base = git("rev-parse", "HEAD")
    (tmp_path / "a.py").write_text("2\n")
    (tmp_path / "b.py").write_text("2\n")
    (tmp_path / "gone.py").unlink()
    git("add", "-A")
    git("commit", "-qm", "two")
    head = git("rev-parse", "HEAD")
    claims = claims_file(tmp_path, ["a.py", "b.py"])
    result = runner.invoke(
        app,
        [
            "reconcile",
            "--repo",
            "o/r",
            "--revision",
            head,
            "--verdict",
            "approve",
            "--base",
            base,
            "--head",
            head,
            "--claims",
            str(claims),
            "--mode",
            "enforce",
            "--format",
            "json",
            "--repo-root",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["scope"] == ["a.py", "b.py"]


# --- bad input: its own exit code, a message naming the file and field, no decision ------------


def test_claims_breaking_the_schema_name_the_field(work: Path) -> None:
    bad = work / "bad.json"
    bad.write_text(
        json.dumps({"schema_version": 1, "agent_id": "x", "inspected_files": ["a", 3], "extra": 1})
    )
    args = reconcile_args(work, "pi_a_honest", "enforce")
    args[args.index("--claims") + 1] = str(bad)
    result = runner.invoke(app, args)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stdout == ""
    assert "bad.json" in result.stderr
    assert "inspected_files.1" in result.stderr
    assert "extra" in result.stderr


def test_file_both_inspected_and_skipped_is_bad_input(work: Path) -> None:
    args = reconcile_args(work, "pi_a_honest", "enforce")
    args[args.index("--claims") + 1] = str(claims_file(work, ["a.py"], ["a.py"], name="both.json"))
    result = runner.invoke(app, args)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "both inspected and skipped: a.py" in result.stderr


def test_newer_evidence_version_is_refused_clearly(work: Path) -> None:
    path = work / "pi_a_honest.evidence.json"
    document = json.loads(path.read_text())
    document["version"] = "2.0"
    path.write_text(json.dumps(document))
    result = runner.invoke(app, reconcile_args(work, "pi_a_honest", "enforce"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stdout == ""
    assert "version 2.0 is newer" in result.stderr


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b"[]"])
def test_unreadable_evidence_is_bad_input(work: Path, content: bytes) -> None:
    (work / "pi_a_honest.evidence.json").write_bytes(content)
    result = runner.invoke(app, reconcile_args(work, "pi_a_honest", "enforce"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stdout == ""
    assert "pi_a_honest.evidence.json" in result.stderr


def test_missing_files_are_bad_input(work: Path) -> None:
    args = reconcile_args(work, "missing", "enforce")
    result = runner.invoke(app, args)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "no such file" in result.stderr
    result = runner.invoke(app, ["record", str(work / "nope.jsonl"), "--revision", "r"])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "nope.jsonl" in result.stderr


def test_record_requires_a_revision_and_a_known_format() -> None:
    assert runner.invoke(app, ["record", str(PI / "pi_a_honest.jsonl")]).exit_code == ExitCode.USAGE
    result = runner.invoke(
        app, ["record", str(PI / "pi_a_honest.jsonl"), "--revision", "r", "--format", "nope"]
    )
    assert result.exit_code == ExitCode.USAGE  # like any unknown choice
    assert "known:" in result.stderr


def test_usage_errors_exit_2() -> None:
    assert runner.invoke(app, ["reconcile", "--repo", "o/r"]).exit_code == ExitCode.USAGE
    assert runner.invoke(app, ["reconcile", "--mode", "sometimes"]).exit_code == ExitCode.USAGE


def test_record_output_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    out = tmp_path / "e.json"
    out.write_text("old")
    result = runner.invoke(
        app, ["record", str(PI / "pi_a_honest.jsonl"), "--revision", "r", "-o", str(out)]
    )
    assert result.exit_code == 0
    assert json.loads(out.read_text())["revision"] == "r"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.json"]


def test_schema_prints_every_contract() -> None:
    result = runner.invoke(app, ["schema"])
    assert set(json.loads(result.stdout)) == {
        "reviewer-output",
        "evidence",
        "bundle",
        "decision",
        "receipt",
    }
    single = json.loads(runner.invoke(app, ["schema", "reviewer-output"]).stdout)
    assert single["additionalProperties"] is False
    assert runner.invoke(app, ["schema", "nope"]).exit_code == ExitCode.USAGE


def test_demo_shows_the_honest_kept_and_the_liar_downgraded(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--keep", str(tmp_path)])
    assert result.exit_code == 0, result.output
    honest = json.loads((tmp_path / "honest.enforce.decision.json").read_text())
    lying = json.loads((tmp_path / "lying.enforce.decision.json").read_text())
    shadow = json.loads((tmp_path / "lying.shadow.decision.json").read_text())
    assert honest["verdict_out"] == "approve"
    assert lying["verdict_out"] == "comment"
    assert "tests/test_handlers.py" in lying["note"]
    assert shadow["verdict_out"] == "approve"
    assert shadow["would_downgrade"]


def test_record_killed_midway_leaves_no_evidence_file(tmp_path: Path) -> None:
    """The document is written only once the stream has ended, through a rename."""
    out = tmp_path / "e.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "coverage_gate", "record", "--revision", "r", "-o", str(out)],
        stdin=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    process.stdin.write((PI / "pi_a_honest.jsonl").read_bytes()[:20_000])
    process.stdin.flush()
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    process.stdin.close()
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_output_to_a_device_writes_through_and_never_replaces_it(tmp_path: Path) -> None:
    """``-o /dev/null`` (or a FIFO) must stay what it is: an atomic rename would replace it."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    result = runner.invoke(
        app, ["record", str(PI / "pi_a_honest.jsonl"), "--revision", "r", "-o", str(fifo)]
    )
    out, _ = reader.communicate(timeout=30)
    assert result.exit_code == 0
    assert json.loads(out)["revision"] == "r"
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_run_never_takes_the_reviewers_options_for_its_own() -> None:
    """Everything from the reviewer's command on belongs to the reviewer."""
    command = get_command(app)
    run = command.commands["run"]  # type: ignore[attr-defined]
    assert run.context_settings.get("allow_interspersed_args") is False
