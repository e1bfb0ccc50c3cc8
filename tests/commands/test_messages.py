"""Messages a person reads once: each says what is wrong in the user's terms, not a tool's
(git's own words, a Python value, advice for another problem). Whole processes, in folders the
tests made."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import DATA, run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "coverage_gate" / "examples"


def test_base_and_head_outside_a_repository_say_so(tmp_path: Path) -> None:
    args = ["reconcile", "--repo", "a/b", "--revision", "r", "--verdict", "approve",
            "--base", "X", "--head", "Y", "--claims", EXAMPLES / "honest.claims.json"]  # fmt: skip
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 3
    assert f"{tmp_path} is not in a git work tree" in done.stderr
    assert "Could not access" not in done.stderr  # git's own words
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 3
    assert "--revision 'r': the repository at" in done.stderr  # resolved where it is found
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "c"], check=True)
    args[args.index("r")] = "HEAD"
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 3
    assert "holds no commit 'X'" in done.stderr


def test_snapshot_tells_a_missing_folder_from_a_file_from_a_folder_outside_git(
    tmp_path: Path,
) -> None:
    (tmp_path / "file").write_text("x")
    said = {
        name: run_cli("snapshot", "--repo-root", tmp_path / name).stderr
        for name in ("none", "file", ".")
    }
    assert said["none"].rstrip().endswith("no such folder")
    assert "a file, not a folder" in said["file"]
    assert said["."].rstrip().endswith("not in a git work tree")


def test_claims_dash_reads_the_reviewers_output_from_stdin(tmp_path: Path) -> None:
    args = ["reconcile", "--repo", "a/b", "--revision", "r", "--verdict", "approve",
            "--changed", str(EXAMPLES / "changed.txt"), "--mode", "shadow", "--format", "json"]  # fmt: skip
    piped = subprocess.run(
        [sys.executable, "-m", "coverage_gate", *args, "--claims", "-"],
        input=(EXAMPLES / "honest.claims.json").read_bytes(),
        capture_output=True,
        check=False,
    )
    named = run_cli(*args, "--claims", EXAMPLES / "honest.claims.json")
    assert piped.returncode == named.returncode == 0, piped.stderr
    assert piped.stdout.decode() == named.stdout


def test_another_formats_stream_is_named_without_advice_for_drift(tmp_path: Path) -> None:
    """A pi stream read as claude-code: the warning asks whether it is pi-rpc, and gives no
    advice to upgrade or pin a client (which would be for drift of a claude-code stream)."""
    done = run_cli("record", DATA / "pi-rpc" / "pi_a_honest.jsonl", "--format", "claude-code",
                   "--revision", "abc", "-o", tmp_path / "e.json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "is this a pi-rpc stream?" in done.stderr
    assert "upgrade coverage-gate" not in done.stderr
