"""``--revision`` is resolved once, at the edge, to the object id it names (DESIGN §6 rule 22):
``record`` and ``reconcile`` with ``--repo-root`` store the id and the name as given; a
revision the repository does not hold exits 3 naming it; with no repository under the root the
name stands as given and stderr says so. Whole processes, as a pipeline runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import CHANGED_FILES, REVISION_FILES, run_cli

PI_HONEST = Path(__file__).resolve().parents[1] / "data" / "pi-rpc" / "pi_a_honest.jsonl"
CAPTURED_ROOT = b"/home/user/repo"
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout.strip()


@pytest.fixture
def committed(tmp_path: Path) -> tuple[Path, str, Path]:
    """The example's six changed files committed on ``main``: (root, commit id, the stream)."""
    repo = tmp_path / "repo"
    shutil.copytree(REVISION_FILES, repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the change")
    stream = tmp_path / "stream.jsonl"
    stream.write_bytes(PI_HONEST.read_bytes().replace(CAPTURED_ROOT, str(repo).encode()))
    return repo, _git(repo, "rev-parse", "HEAD"), stream


@pytest.mark.parametrize("name", ["HEAD", "main", "short"])
def test_record_stores_the_id_a_name_resolves_to_and_the_name(
    committed: tuple[Path, str, Path], tmp_path: Path, name: str
) -> None:
    repo, commit, stream = committed
    given = commit[:10] if name == "short" else name
    out = tmp_path / "evidence.json"
    done = run_cli(
        "record", stream, "--format", "pi-rpc", "--revision", given, "--repo-root", repo, "-o", out
    )
    assert done.returncode == 0, done.stderr
    evidence = json.loads(out.read_text())
    assert evidence["revision"] == commit
    assert evidence["revision_name"] == given
    assert f"--revision {given} is {commit}" in done.stderr


def test_an_id_is_stored_as_it_is_with_no_name(
    committed: tuple[Path, str, Path], tmp_path: Path
) -> None:
    repo, commit, stream = committed
    out = tmp_path / "evidence.json"
    done = run_cli(
        "record", stream, "--format", "pi-rpc", "--revision", commit, "--repo-root", repo, "-o", out
    )
    assert done.returncode == 0, done.stderr
    evidence = json.loads(out.read_text())
    assert (evidence["revision"], evidence["revision_name"]) == (commit, None)


@pytest.mark.parametrize("command", ["record", "reconcile"])
def test_a_revision_the_repository_does_not_hold_exits_3_naming_it(
    committed: tuple[Path, str, Path], tmp_path: Path, command: str
) -> None:
    repo, _commit, stream = committed
    if command == "record":
        args: list[str | Path] = ["record", stream, "--format", "pi-rpc", "-o", tmp_path / "e.json"]
    else:
        claims = tmp_path / "claims.json"
        claims.write_text(json.dumps({"schema_version": 1, "agent_id": "r", "inspected_files": []}))
        changed = tmp_path / "changed.txt"
        changed.write_text("\n".join(CHANGED_FILES) + "\n")
        args = ["reconcile", "--repo", "acme/x", "--verdict", "approve", "--claims", claims,
                "--changed", changed, "--mode", "shadow"]  # fmt: skip
    done = run_cli(*args, "--revision", "no-such-branch", "--repo-root", repo)
    assert done.returncode == 3, done.stderr
    assert "no-such-branch" in done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


def test_with_no_repository_the_name_stands_as_given_and_stderr_says_so(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    shutil.copytree(REVISION_FILES, root)
    stream = tmp_path / "stream.jsonl"
    stream.write_bytes(PI_HONEST.read_bytes().replace(CAPTURED_ROOT, str(root).encode()))
    out = tmp_path / "evidence.json"
    done = run_cli(
        "record", stream, "--format", "pi-rpc", "--revision", "HEAD", "--repo-root", root, "-o", out
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["revision"] == "HEAD"
    assert "recorded as given" in done.stderr


def test_evidence_recorded_at_a_name_is_current_for_a_reconcile_at_the_same_name(
    committed: tuple[Path, str, Path], tmp_path: Path
) -> None:
    """Both ends resolve the name, so the evidence and the decision name one commit: the
    honest reviewer's claims are verified, not stale."""
    repo, commit, stream = committed
    evidence = tmp_path / "evidence.json"
    done = run_cli(
        "record",
        stream,
        "--format",
        "pi-rpc",
        "--revision",
        "HEAD",
        "--repo-root",
        repo,
        "-o",
        evidence,
    )
    assert done.returncode == 0, done.stderr
    claims = tmp_path / "claims.json"
    claims.write_text(
        json.dumps({"schema_version": 1, "agent_id": "reviewer", "inspected_files": CHANGED_FILES})
    )
    changed = tmp_path / "changed.txt"
    changed.write_text("\n".join(CHANGED_FILES) + "\n")
    done = run_cli(
        "reconcile", "--repo", "acme/x", "--revision", "main", "--verdict", "approve",
        "--claims", claims, "--evidence", evidence, "--changed", changed, "--mode", "enforce",
        "--repo-root", repo, "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    decision = json.loads(done.stdout)
    assert decision["revision"] == commit
    assert {file["status"] for file in decision["reviewers"][0]["files"]} == {"verified"}
