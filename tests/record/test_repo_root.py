"""Which repository root paths are placed under, and what an unplaceable path means.

Without ``--repo-root``, ``record`` takes the working directory the stream records (Claude
Code's ``system/init`` ``cwd``, Codex's ``session_meta`` ``cwd``), else the Git top level of the
current directory, else none, and says on stderr which and why. An absolute path with no root
known read some file nobody can name: evidence is unavailable (``unattributed_calls``), not
absent. An absolute path outside a known root stays a plain rejection, so reading
``/etc/passwd`` cannot turn a review to unknown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from tests.conftest import CHANGED_FILES, DATA, REPO_ROOT, approve_args
from tests.core.test_path_decoys import git, make_repo, respell

runner = CliRunner()
REV = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
CLAIMED = ["src/api/handlers.py", "src/api/models.py", "src/util/strings.py", "README.md"]


def record(stream: Path, *extra: str) -> tuple[dict[str, object], str]:
    result = runner.invoke(app, ["record", str(stream), "--revision", REV, *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def reads(document: dict[str, object]) -> dict[str, int]:
    files = document["files"]
    assert isinstance(files, list)
    return {f["path"]: f["reads_succeeded"] for f in files}


def decide(work: Path, evidence: dict[str, object], *extra: str) -> dict[str, object]:
    (work / "evidence.json").write_text(json.dumps(evidence))
    (work / "changed.txt").write_text("\n".join(CHANGED_FILES) + "\n")
    (work / "claims.json").write_text(
        json.dumps({"schema_version": 1, "agent_id": "reviewer", "inspected_files": CLAIMED})
    )
    args = approve_args(
        REV, work / "changed.txt", "--claims", work / "claims.json",
        "--evidence", work / "evidence.json", "--mode", "enforce", "--format", "json", *extra,
    )  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    decision: dict[str, object] = json.loads(result.stdout)
    return decision


def statuses(decision: dict[str, object]) -> dict[str, str]:
    reviewers = decision["reviewers"]
    assert isinstance(reviewers, list)
    return {f["path"]: f["status"] for f in reviewers[0]["files"]}


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current directory in no Git work tree."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return folder


@pytest.mark.parametrize(
    "capture",
    [
        DATA / "claude-code" / "claude_b_overclaim.jsonl",
        DATA / "codex-rollout" / "codex_b_overclaim.rollout.jsonl",
    ],
)
def test_without_repo_root_the_streams_own_working_directory_is_the_root(
    capture: Path, elsewhere: Path
) -> None:
    """Claude Code reads ``/home/user/repo/src/api/handlers.py``; run from another folder with no
    --repo-root, the stream's recorded cwd places it, and the honest read verifies."""
    document, stderr = record(capture)
    assert reads(document)["src/api/handlers.py"] == 1
    assert document["counters"]["rejected"] == 0
    assert f"repository root {REPO_ROOT} (the working directory the stream records)" in stderr


def test_a_session_started_in_a_sub_folder_keeps_the_repository_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code started in ``repo/src``, recorded from inside the repository: the Git top
    level, which holds the session's folder, is the root, so the read is ``src/api/...``."""
    repo = (tmp_path / "repo").resolve()
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q")
    monkeypatch.chdir(repo)
    capture = DATA / "claude-code" / "claude_b_overclaim.jsonl"
    text = capture.read_text().replace(f'"cwd":"{REPO_ROOT}"', f'"cwd":"{repo}/src"')
    stream = tmp_path / "claude.jsonl"
    stream.write_text(text.replace(REPO_ROOT, str(repo)))
    document, stderr = record(stream)
    assert reads(document)["src/api/handlers.py"] == 1
    assert f"repository root {repo} (the Git top level of the current directory, which" in stderr


def pi_with_absolute_reads(folder: Path, root: str = REPO_ROOT) -> Path:
    """pi's captured overclaiming review with its handlers.py read spelled absolute."""
    capture = DATA / "pi-rpc" / "pi_b_overclaim.jsonl"
    path = folder / "pi.jsonl"
    path.write_bytes(respell(capture, "src/api/handlers.py", f"{root}/src/api/handlers.py"))
    return path


def test_without_repo_root_the_git_top_level_of_the_current_directory_is_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi records no working directory: the Git work tree we run in is the root."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    document, stderr = record(pi_with_absolute_reads(tmp_path, str(repo.resolve())))
    assert reads(document)["src/api/handlers.py"] == 1
    assert f"repository root {repo.resolve()} (the Git top level" in stderr


def test_absolute_reads_with_no_root_known_make_evidence_unavailable_not_absent(
    tmp_path: Path, elsewhere: Path
) -> None:
    """No --repo-root, no cwd in the stream, not in a Git work tree: the absolute read names no
    file that can be told, so it is counted as unattributed and claims without evidence are
    unknown, not unsupported: the honest reviewer is not downgraded."""
    document, stderr = record(pi_with_absolute_reads(tmp_path))
    assert "no repository root" in stderr
    assert document["unattributed_calls"] == 1
    assert "src/api/handlers.py" not in reads(document)
    assert [i["kind"] for i in document["issues"]].count("path_without_root") == 1
    decision = decide(tmp_path, document)
    assert statuses(decision)["src/api/handlers.py"] == "unknown"
    assert "unsupported" not in statuses(decision).values()
    assert "claims_unsupported" not in decision["reasons"]


def test_absolute_reads_outside_a_known_root_stay_plain_rejections(
    tmp_path: Path, elsewhere: Path
) -> None:
    """With a root known, reading ``/etc/passwd`` is a rejection, never unavailable evidence:
    a reviewer cannot turn the gate to unknown with it."""
    capture = DATA / "pi-rpc" / "pi_b_overclaim.jsonl"
    stream = tmp_path / "pi.jsonl"
    stream.write_bytes(respell(capture, "src/api/handlers.py", "/etc/passwd"))
    document, _ = record(stream, "--repo-root", REPO_ROOT)
    assert document["unattributed_calls"] == 0
    assert document["counters"]["rejected"] == 1
    decision = decide(tmp_path, document, "--repo-root", REPO_ROOT)
    assert statuses(decision)["src/api/handlers.py"] == "unsupported"
    assert "claims_unsupported" in decision["reasons"]


def test_unattributed_reads_survive_the_round_trip_through_spans(
    tmp_path: Path, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Evidence recorded as unavailable stays unavailable when read back from our own OTLP
    spans (the local telemetry files): the unplaced read is replayed as unplaced."""
    telemetry = tmp_path / "telemetry"
    monkeypatch.setenv("COVERAGE_GATE_TELEMETRY_DIR", str(telemetry))
    document, _ = record(pi_with_absolute_reads(tmp_path))
    assert document["unattributed_calls"] == 1
    traces = sorted(telemetry.rglob("*trace*"))
    assert traces, list(telemetry.rglob("*"))
    again, _ = record(traces[-1], "--format", "otlp-json", "--repo-root", REPO_ROOT)
    assert again["unattributed_calls"] == 1


def test_record_and_reconcile_ask_git_at_the_revision(tmp_path: Path) -> None:
    """End to end: Claude Code run in a repository whose ``src/api/x`` links to another folder.
    ``record`` (root from the stream) rejects ``x/../handlers.py``; ``reconcile`` lists the same
    spelling among the claims it rejected, with ``/etc/passwd`` and ``.git/config``."""
    repo = make_repo(tmp_path / "repo")
    root = str(repo.path)
    capture = DATA / "claude-code" / "claude_b_overclaim.jsonl"
    text = capture.read_text().replace(REPO_ROOT, root)
    stream = tmp_path / "claude.jsonl"
    stream.write_text(text)
    stream.write_bytes(
        respell(stream, f"{root}/src/api/handlers.py", f"{root}/src/api/x/../handlers.py")
    )
    result = runner.invoke(app, ["record", str(stream), "--revision", repo.with_link])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert "src/api/handlers.py" not in reads(document)
    assert any(i["detail"].startswith("parent_through_symlink") for i in document["issues"]), (
        document["issues"]
    )
    (tmp_path / "changed.txt").write_text("\n".join(CHANGED_FILES) + "\n")
    claims = [*CLAIMED, "src/api/x/../models.py", "/etc/passwd", ".git/config"]
    (tmp_path / "claims.json").write_text(
        json.dumps({"schema_version": 1, "agent_id": "reviewer", "inspected_files": claims})
    )
    (tmp_path / "evidence.json").write_text(result.stdout)
    decided = runner.invoke(
        app,
        [
            "reconcile",
            "--repo",
            "o/r",
            "--revision",
            repo.with_link,
            "--verdict",
            "approve",
            "--changed",
            str(tmp_path / "changed.txt"),
            "--claims",
            str(tmp_path / "claims.json"),
            "--evidence",
            str(tmp_path / "evidence.json"),
            "--mode",
            "enforce",
            "--format",
            "json",
            "--repo-root",
            root,
        ],
    )
    assert decided.exit_code == 0, decided.output
    decision = json.loads(decided.stdout)
    assert statuses(decision)["src/api/handlers.py"] == "unsupported"
    assert decision["reviewers"][0]["claims_rejected"] == [
        {"path": ".git/config", "claim": "inspected", "reason": "vcs_metadata"},
        {"path": "/etc/passwd", "claim": "inspected", "reason": "outside_root"},
        {
            "path": "src/api/x/../models.py",
            "claim": "inspected",
            "reason": "parent_through_symlink",
        },
    ]
