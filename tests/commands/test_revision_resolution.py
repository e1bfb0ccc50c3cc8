"""``--revision`` is resolved once, at the edge, to the object id it names (DESIGN §6 rule 22):
``record`` and ``reconcile`` with ``--repo-root`` store the id and the name as given; a
revision the repository does not hold exits 3 naming it; with no repository under the root the
name stands as given and stderr says so. Whole processes, as a pipeline runs them."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import (
    CHANGED_FILES,
    GIT_ENV,
    REVISION_FILES,
    enforced_decision,
    git_in,
    run_cli,
)

PI_HONEST = Path(__file__).resolve().parents[1] / "data" / "pi-rpc" / "pi_a_honest.jsonl"
CAPTURED_ROOT = b"/home/user/repo"


def _git(repo: Path, *args: str) -> str:
    return git_in(repo, *args)


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
    changed = tmp_path / "changed.txt"
    changed.write_text("\n".join(CHANGED_FILES) + "\n")
    decision = enforced_decision(
        evidence, revision="main", root=repo, changed=changed, claimed=CHANGED_FILES,
        folder=tmp_path, repo="acme/x",
    )  # fmt: skip
    assert decision["revision"] == commit
    assert {file["status"] for file in decision["reviewers"][0]["files"]} == {"verified"}


# --- the root found any way: --revision is resolved wherever a repository is at hand ------------

CLAUDE_READS = PI_HONEST.parents[1] / "claude-code" / "content_claude_reread.jsonl"

#: How the root is found, and the stream, working directory and options that find it that way:
#: ``--repo-root``; the Git top level of the current directory (a stream with no working
#: directory, run from a sub-folder of the repository); the stream's own working directory, run
#: from outside any repository; the same, run from inside the repository it names.
ROOT_WAYS = {
    "given": ("pi-rpc", "outside", True),
    "current directory": ("pi-rpc", "sub-folder", False),
    "the stream's working directory": ("claude-code", "outside", False),
    "the stream's, in the current directory's": ("claude-code", "sub-folder", False),
}


def _record_found(
    committed: tuple[Path, str, Path], tmp_path: Path, way: str, revision: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    repo, _commit, pi_stream = committed
    fmt, where, given = ROOT_WAYS[way]
    if fmt == "claude-code":
        stream = tmp_path / "claude.jsonl"
        stream.write_bytes(CLAUDE_READS.read_bytes().replace(CAPTURED_ROOT, str(repo).encode()))
    else:
        stream = pi_stream
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    cwd = outside if where == "outside" else repo / "src"
    out = tmp_path / "evidence.json"
    args: list[str | Path] = ["record", stream, "--format", fmt, "--revision", revision, "-o", out]
    done = run_cli(*args, *(["--repo-root", repo] if given else []), cwd=cwd)
    return done, out


@pytest.mark.parametrize("way", ROOT_WAYS)
def test_a_name_is_resolved_however_the_root_was_found(
    committed: tuple[Path, str, Path], tmp_path: Path, way: str
) -> None:
    """``--revision HEAD`` is stored as the commit it names, beside the name, and the content
    checks read that commit: no read is left unchecked for want of the revision."""
    repo, commit, _stream = committed
    done, out = _record_found(committed, tmp_path, way, "HEAD")
    assert done.returncode == 0, done.stderr
    evidence = json.loads(out.read_text())
    assert (evidence["revision"], evidence["revision_name"]) == (commit, "HEAD")
    assert f"--revision HEAD is {commit}" in done.stderr
    assert f"repository root {repo}" in done.stderr
    content = {file["path"]: file["content"] for file in evidence["files"]}
    for path in CHANGED_FILES:
        assert content[path]["matched"] + content[path]["credited"] >= 1, path
        assert content[path]["unchecked"] == 0, path


@pytest.mark.parametrize("way", ROOT_WAYS)
def test_a_revision_the_found_repository_does_not_hold_exits_3_naming_it(
    committed: tuple[Path, str, Path], tmp_path: Path, way: str
) -> None:
    repo, _commit, _stream = committed
    done, out = _record_found(committed, tmp_path, way, "deadbeef1234")
    assert done.returncode == 3, done.stderr
    assert f"--revision 'deadbeef1234': the repository at {repo} holds no such" in done.stderr
    assert done.stdout == ""
    assert not out.exists()
    assert "Traceback" not in done.stderr


def test_with_no_repository_found_at_all_the_name_stands_and_stderr_says_so(
    tmp_path: Path,
) -> None:
    """No --repo-root, a stream with no working directory, a current directory in no work tree:
    nothing to resolve in, said as before."""
    stream = tmp_path / "stream.jsonl"
    stream.write_bytes(PI_HONEST.read_bytes())
    out = tmp_path / "evidence.json"
    done = run_cli(
        "record", stream, "--format", "pi-rpc", "--revision", "HEAD", "-o", out, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["revision"] == "HEAD"
    assert "no repository root" in done.stderr


# --- the checkout the reviewer saw --------------------------------------------------------------


def _pull_request(repo: Path) -> tuple[str, str]:
    """``repo`` made a pull request's repository: the pull request's head adds a file the stream
    never reads, ``main`` moves on by a commit touching another file, and the merge of the
    two (GitHub's ``refs/pull/N/merge``) is checked out. (head, merge)"""
    _git(repo, "checkout", "-q", "-b", "pr")
    (repo / "CHANGELOG").write_text("the pull request's change\n")
    _git(repo, "add", "CHANGELOG")
    _git(repo, "commit", "-q", "-m", "the pull request")
    head = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "main")
    (repo / "NOTICE").write_text("moved on\n")
    _git(repo, "add", "NOTICE")
    _git(repo, "commit", "-q", "-m", "the base branch moves on")
    _git(repo, "merge", "-q", "--no-ff", "-m", "merge", "pr")
    return head, _git(repo, "rev-parse", "HEAD")


@pytest.mark.parametrize("command", ["record", "run"])
def test_a_checkout_that_is_a_merge_of_the_revision_is_said_and_recorded(
    committed: tuple[Path, str, Path], tmp_path: Path, command: str
) -> None:
    repo, _commit, stream = committed
    commit, merge = _pull_request(repo)
    out = tmp_path / "evidence.json"
    common = ["--format", "pi-rpc", "--revision", commit, "--repo-root", repo, "-o", out]
    if command == "record":
        done = run_cli("record", stream, *common)
    else:
        done = run_cli("run", *common, "--", "cat", stream)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["checkout"] == {
        "head": merge,
        "relation": "merge_of_revision",
    }
    assert f"(HEAD {merge}) is a merge commit of it" in done.stderr
    assert f"not --revision {commit}" in done.stderr


@pytest.mark.parametrize("command", ["record", "run"])
def test_a_checkout_of_another_commit_is_said_and_recorded(
    committed: tuple[Path, str, Path], tmp_path: Path, command: str
) -> None:
    """The revision is the pull request's head; the checkout is the base branch's tip, which
    does not hold it."""
    repo, _commit, stream = committed
    commit, _merge = _pull_request(repo)
    _git(repo, "checkout", "-q", "HEAD~1")
    other = _git(repo, "rev-parse", "HEAD")
    out = tmp_path / "evidence.json"
    common = ["--format", "pi-rpc", "--revision", commit, "--repo-root", repo, "-o", out]
    if command == "record":
        done = run_cli("record", stream, *common)
    else:
        done = run_cli("run", *common, "--", "cat", stream)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["checkout"] == {"head": other, "relation": "other_commit"}
    assert f"(HEAD {other}) is another commit" in done.stderr


def test_a_checkout_of_the_revision_is_recorded_and_not_warned_about(
    committed: tuple[Path, str, Path], tmp_path: Path
) -> None:
    repo, commit, stream = committed
    out = tmp_path / "evidence.json"
    done = run_cli(
        "record", stream, "--format", "pi-rpc", "--revision", "main", "--repo-root", repo,
        "-o", out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["checkout"] == {"head": commit, "relation": "revision"}
    assert "checkout under" not in done.stderr


def test_run_reads_the_checkout_before_the_reviewer_starts(
    committed: tuple[Path, str, Path], tmp_path: Path
) -> None:
    """A reviewer that checks out another commit does not change which checkout it was given:
    the one it started in, the revision here."""
    repo, _commit, stream = committed
    commit, _merge = _pull_request(repo)
    _git(repo, "checkout", "-q", commit)
    out = tmp_path / "evidence.json"
    reviewer = f"git checkout -q main && cat {shlex.quote(str(stream))}"
    done = run_cli(
        "run", "--format", "pi-rpc", "--revision", "HEAD", "-o", out, "--", "sh", "-c", reviewer,
        cwd=repo,
        env=GIT_ENV,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    evidence = json.loads(out.read_text())
    assert (evidence["revision"], evidence["revision_name"]) == (commit, "HEAD")
    assert evidence["checkout"] == {"head": commit, "relation": "revision"}
    assert "checkout under" not in done.stderr


def test_a_name_resolved_from_the_current_directory_is_current_for_a_reconcile_there(
    committed: tuple[Path, str, Path], tmp_path: Path
) -> None:
    """No --repo-root at either end: both resolve ``HEAD`` in the current directory's
    repository, so the evidence is not stale and the honest claims are verified."""
    repo, commit, stream = committed
    evidence = tmp_path / "evidence.json"
    done = run_cli(
        "record", stream, "--format", "pi-rpc", "--revision", "HEAD", "-o", evidence, cwd=repo
    )
    assert done.returncode == 0, done.stderr
    changed = tmp_path / "changed.txt"
    changed.write_text("\n".join(CHANGED_FILES) + "\n")
    decision = enforced_decision(
        evidence, revision="HEAD", root=None, changed=changed, claimed=CHANGED_FILES,
        folder=tmp_path, repo="acme/x", cwd=repo,
    )  # fmt: skip
    assert decision["revision"] == commit
    assert {file["status"] for file in decision["reviewers"][0]["files"]} == {"verified"}
