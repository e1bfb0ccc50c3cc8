"""Files' content at the revision (the edge behind depth and the content checks), against real
git repositories: the revision is an immutable object (DESIGN §6 rule 15), read from git objects
only; ``record --diff`` tells a byte-ranged read in lines through it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.edges.content import (
    RepositoryContent,
    SnapshotError,
    dirty_checkout,
    snapshot_tree,
)

runner = CliRunner()


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Two commits of ``a.txt`` and an uncommitted third version in the working tree."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    (root / "a.txt").write_bytes(b"one\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "first")
    (root / "a.txt").write_bytes(b"two\n")
    git(root, "commit", "-qam", "second")
    (root / "a.txt").write_bytes(b"three\n")
    return root


def test_the_checked_out_commit_is_read_from_git_never_from_the_working_tree(repo: Path) -> None:
    """A reviewer that edits the checkout does not make its edits the revision."""
    head = git(repo, "rev-parse", "HEAD")
    assert RepositoryContent(str(repo), head).content("a.txt") == b"two\n"
    assert RepositoryContent(str(repo), "HEAD").content("a.txt") == b"two\n"
    assert dirty_checkout(repo, head)
    assert dirty_checkout(repo, "HEAD")
    assert not dirty_checkout(repo, git(repo, "rev-parse", "HEAD~1"))


def test_uncommitted_changes_are_reviewed_as_a_tree_written_before_the_reviewer_starts(
    repo: Path,
) -> None:
    """``snapshot_tree``: the working tree, new files included, as a tree object; the user's own
    index is left alone, the same content gives the same id, and a later edit changes nothing."""
    (repo / "new.txt").write_bytes(b"new\n")
    index_before = (repo / ".git" / "index").read_bytes()
    tree = snapshot_tree(repo)
    assert snapshot_tree(repo) == tree
    assert (repo / ".git" / "index").read_bytes() == index_before
    content = RepositoryContent(str(repo), tree)
    (repo / "a.txt").write_bytes(b"edited by the reviewer\n")
    assert content.content("a.txt") == b"three\n"
    assert content.content("new.txt") == b"new\n"
    assert not dirty_checkout(repo, tree)  # a tree is no checked-out commit


def test_a_snapshot_outside_a_repository_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="not in a git work tree"):
        snapshot_tree(tmp_path)


def test_another_revision_is_read_from_git(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD~1")
    assert RepositoryContent(str(repo), first).content("a.txt") == b"one\n"
    assert RepositoryContent(str(repo), first[:10]).content("a.txt") == b"one\n"


def test_content_not_obtainable_is_none_never_an_error(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = git(repo, "rev-parse", "HEAD~1")
    outside = tmp_path / "secret.txt"
    outside.write_bytes(b"not the repository's\n")
    (repo / "link.txt").symlink_to(outside)
    git(repo, "add", "link.txt")
    git(repo, "commit", "-qm", "a link")
    head = RepositoryContent(str(repo), "HEAD")
    assert head.content("missing.txt") is None
    assert head.content("../secret.txt") is None
    assert head.content("link.txt") is None  # a symbolic link: never followed
    assert head.content("/etc/passwd") is None
    assert head.content(".") is None  # a directory
    assert RepositoryContent(str(repo), first).content("missing.txt") is None
    assert RepositoryContent(str(repo), "no-such-revision").content("a.txt") is None
    assert RepositoryContent(str(tmp_path / "nowhere"), first).content("a.txt") is None
    assert RepositoryContent(str(repo), "HEAD", max_bytes=3).content("a.txt") is None
    assert RepositoryContent(str(repo), "--output=x").content("a.txt") is None
    assert RepositoryContent(str(repo), first, max_bytes=3).content("a.txt") is None
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert RepositoryContent(str(repo), first).content("a.txt") is None


def test_record_tells_a_byte_range_in_lines_with_the_snapshot_tree(
    repo: Path, tmp_path: Path
) -> None:
    """``record --diff --repo-root``: bytes 0-12 of the 4-line file of the revision (the working
    tree written as a tree) are lines 1-2; its change is at line 4, so the read saw none of it
    (depth none, lines 4 unseen)."""
    (repo / "a.txt").write_bytes(b"keep 1\nkeep 2\nkeep 3\nold\n")
    git(repo, "commit", "-qam", "four lines")
    (repo / "a.txt").write_bytes(b"keep 1\nkeep 2\nkeep 3\nchanged\n")
    diff = tmp_path / "pr.diff"
    diff.write_bytes(git(repo, "diff").encode() + b"\n")
    total = len((repo / "a.txt").read_bytes())
    header = f"[cr-range offset=0 end=12 total={total} next_offset=12]\\nkeep 1\\nkeep"
    lines = [
        '{"type":"agent_start"}',
        '{"type":"tool_execution_start","toolCallId":"r","toolName":"cr_read",'
        '"args":{"path":"a.txt","offset":0,"limit":12}}',
        '{"type":"tool_execution_end","toolCallId":"r","toolName":"cr_read","isError":false,'
        f'"result":{{"content":[{{"type":"text","text":"{header}"}}]}}}}',
        '{"type":"agent_end","messages":[]}',
    ]
    stream = tmp_path / "pi.jsonl"
    stream.write_text("\n".join(lines) + "\n")
    head = snapshot_tree(repo)
    env = {"COVERAGE_GATE_TELEMETRY_DIR": os.environ["COVERAGE_GATE_TELEMETRY_DIR"]}
    args = ["record", str(stream), "-f", "pi-rpc", "--revision", head, "--repo-root", str(repo)]
    result = runner.invoke(app, [*args, "--diff", str(diff)], env=env)
    assert result.exit_code == 0, result.stderr
    (entry,) = json.loads(result.stdout)["files"]
    assert entry["lines_seen"] == [{"start": 1, "end": 2}]
    assert entry["depth"]["depth"] == "none"
    assert entry["depth"]["unseen"] == [{"start": 4, "end": 4}]
    without = runner.invoke(app, args, env=env)
    (plain,) = json.loads(without.stdout)["files"]
    assert plain["depth"] is None
    assert plain["lines_seen"] == []  # bytes are told in lines only for files in the diff
