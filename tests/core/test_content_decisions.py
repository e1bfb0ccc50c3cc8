"""Decisions from evidence checked by content (DESIGN §6 rules 16-18, §7.11), on real captures
recorded in a repository each test builds (``make_repo.sh``'s content), the capture's root
rewritten to it.

- A read whose text is not the file at the revision is no evidence: a claim resting on it alone
  is ``unsupported`` (``content_mismatch``) and the note says what the read returned is not the
  file at the revision.
- Evidence carries across revisions by content: a claim at R2 with evidence recorded at R1 is
  verified where the file's blob is the same at both, and ``unsupported`` (``evidence_stale``)
  where it changed and nothing showed the new content. Without the files at R2 it stays unknown.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.model import (
    DecisionDocument,
    EvidenceDocument,
    FileStatus,
    Mode,
    ModeSource,
    Reason,
    ReviewerOutput,
    UnknownReason,
    UnsupportedReason,
    Verdict,
)
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.edges.content import RepositoryContents, snapshot_tree
from coverage_gate.edges.gittree import GitTree
from coverage_gate.outputs import render
from coverage_gate.outputs.github import annotation_lines
from coverage_gate.outputs.sarif import sarif_text
from coverage_gate.record.recording import RecordSettings, record_stream
from tests.conftest import CHANGED_FILES, DATA, REPO_ROOT

KIT = Path(__file__).resolve().parents[1] / "integration" / "realclients"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, bytes]:
    """``make_repo.sh``'s repository, its revision (the tree of its working tree) and diff."""
    root = tmp_path_factory.mktemp("content-decisions") / "repo"
    subprocess.run(["bash", str(KIT / "make_repo.sh"), str(root)], check=True, capture_output=True)
    diff = subprocess.run(
        ["git", "-C", str(root), "diff", "--no-color", "--no-ext-diff"],
        check=True,
        capture_output=True,
    ).stdout
    return root, snapshot_tree(root), diff


def record(capture: Path, fmt: str, root: Path, revision: str, diff: bytes) -> EvidenceDocument:
    data = capture.read_bytes().replace(REPO_ROOT.encode(), str(root).encode())
    settings = RecordSettings(
        revision=revision,
        repo_root=str(root),
        diff=DiffIndex.parse(diff),
        content=RepositoryContents(revision),
    )
    return record_stream(io.BytesIO(data), ADAPTERS[fmt], settings)


def decision_of(
    evidence: EvidenceDocument, root: Path, revision: str, claimed: list[str], mode: Mode
) -> DecisionDocument:
    claims = ReviewerOutput.model_validate(
        {"schema_version": 1, "agent_id": "r", "inspected_files": claimed}
    )
    with GitTree(root, revision) as files:
        return reconcile(
            ReviewInput(
                repo="example/notes",
                revision=revision,
                verdict_in=Verdict.APPROVE,
                mode=mode,
                mode_source=ModeSource.OVERRIDE,
                scope=CHANGED_FILES,
                reviewers=[ReviewerInput("r", claims, evidence)],
                repo_root=str(root),
                files=files,
            )
        )


def decide(
    evidence: EvidenceDocument, root: Path, revision: str, claimed: list[str], mode: Mode
) -> tuple[Verdict, dict[str, tuple[FileStatus, object]], str]:
    decision = decision_of(evidence, root, revision, claimed, mode)
    (reviewer,) = decision.reviewers
    statuses = {
        f.path: (f.status, f.unsupported_reason or f.unknown_reason) for f in reviewer.files
    }
    return decision.verdict_out, statuses, decision.note


def edited_read(capture: Path, path: str, tmp_path: Path) -> Path:
    """The real capture with what its read of ``path`` returned changed in one line (the
    reviewer's own edit, as a Claude Code stream carries it), and its ``git diff`` left out:
    the diff showed ``path``'s hunks, which is evidence of them by itself."""
    out = tmp_path / capture.name
    lines = [
        line
        for line in capture.read_text().splitlines(keepends=True)
        if '"name":"Bash"' not in line.replace(" ", "") and '"stdout"' not in line
    ]
    for index, line in enumerate(lines):
        obj = json.loads(line)
        detail = obj.get("tool_use_result")
        if obj.get("type") == "user" and isinstance(detail, dict):
            file = detail.get("file") or {}
            if str(file.get("filePath", "")).endswith(path):
                block = obj["message"]["content"][0]
                block["content"] = block["content"].replace("MAX_BODY = 10_000", "MAX_BODY = 1")
                lines[index] = json.dumps(obj) + "\n"
    out.write_text("".join(lines))
    return out


def test_a_claim_resting_on_a_read_of_edited_text_is_unsupported_and_said(
    repo: tuple[Path, str, bytes], tmp_path: Path
) -> None:
    """claude_b_overclaim with its Read of models.py returning one line changed: models.py is
    unsupported (content_mismatch) and the Approve becomes a Comment under enforce."""
    root, revision, diff = repo
    capture = edited_read(DATA / "claude-code" / "claude_b_overclaim.jsonl", "models.py", tmp_path)
    evidence = record(capture, "claude-code", root, revision, diff)
    verdict, statuses, note = decide(
        evidence, root, revision, ["src/api/handlers.py", "src/api/models.py"], Mode.ENFORCE
    )
    assert statuses["src/api/models.py"] == (
        FileStatus.UNSUPPORTED,
        UnsupportedReason.CONTENT_MISMATCH,
    )
    assert statuses["src/api/handlers.py"][0] is FileStatus.VERIFIED
    assert verdict is Verdict.COMMENT
    assert (
        f"what the read of src/api/models.py returned is not src/api/models.py at {revision[:12]}"
        in note
    )


def test_the_same_capture_unedited_verifies_both_files(repo: tuple[Path, str, bytes]) -> None:
    root, revision, diff = repo
    evidence = record(
        DATA / "claude-code" / "claude_b_overclaim.jsonl", "claude-code", root, revision, diff
    )
    verdict, statuses, _ = decide(
        evidence, root, revision, ["src/api/handlers.py", "src/api/models.py"], Mode.ENFORCE
    )
    assert {s for s, _ in statuses.values() if s is not FileStatus.MISSING} == {FileStatus.VERIFIED}
    assert verdict is Verdict.COMMENT  # four files neither claimed nor skipped: the legacy gate


def second_round(root: Path, tmp_path: Path) -> tuple[Path, str]:
    """A copy of the repository where handlers.py changed again after the first round."""
    again = tmp_path / "round2"
    shutil.copytree(root, again)
    target = again / "src" / "api" / "handlers.py"
    target.write_text(target.read_text() + "\n# a second round's change\n")
    return again, snapshot_tree(again)


def test_evidence_of_an_earlier_round_carries_over_where_the_content_is_the_same(
    repo: tuple[Path, str, bytes], tmp_path: Path
) -> None:
    """pi_a_honest recorded at R1 read all six files. At R2 handlers.py changed: its claim is
    unsupported (evidence_stale, the note naming both revisions); the five unchanged files are
    verified by what the reviewer saw at R1; the Approve becomes a Comment under enforce."""
    root, first, diff = repo
    evidence = record(DATA / "pi-rpc" / "pi_a_honest.jsonl", "pi-rpc", root, first, diff)
    again, second = second_round(root, tmp_path)
    verdict, statuses, note = decide(evidence, again, second, CHANGED_FILES, Mode.ENFORCE)
    assert statuses.pop("src/api/handlers.py") == (
        FileStatus.UNSUPPORTED,
        UnsupportedReason.EVIDENCE_STALE,
    )
    assert {status for status, _ in statuses.values()} == {FileStatus.VERIFIED}
    assert verdict is Verdict.COMMENT
    assert first[:12] in note and second[:12] in note and "src/api/handlers.py" in note


def test_without_the_files_at_the_new_revision_stale_evidence_stays_unknown(
    repo: tuple[Path, str, bytes], tmp_path: Path
) -> None:
    root, first, diff = repo
    evidence = record(DATA / "pi-rpc" / "pi_a_honest.jsonl", "pi-rpc", root, first, diff)
    claims = ReviewerOutput.model_validate(
        {"schema_version": 1, "agent_id": "r", "inspected_files": CHANGED_FILES}
    )
    decision = reconcile(
        ReviewInput(
            repo="example/notes",
            revision="0" * 40,
            verdict_in=Verdict.APPROVE,
            mode=Mode.ENFORCE,
            mode_source=ModeSource.OVERRIDE,
            scope=CHANGED_FILES,
            reviewers=[ReviewerInput("r", claims, evidence)],
        )
    )
    (reviewer,) = decision.reviewers
    assert {f.unknown_reason for f in reviewer.files} == {UnknownReason.STALE}
    assert Reason.EVIDENCE_STALE in decision.reasons
    assert decision.verdict_out is Verdict.APPROVE  # unknown is not held against it by default


def test_every_view_of_the_decision_says_the_read_was_not_the_file(
    repo: tuple[Path, str, bytes], tmp_path: Path
) -> None:
    """Text, markdown, SARIF and the GitHub annotations say it in the same words."""
    root, revision, diff = repo
    capture = edited_read(DATA / "claude-code" / "claude_b_overclaim.jsonl", "models.py", tmp_path)
    evidence = record(capture, "claude-code", root, revision, diff)
    decision = decision_of(evidence, root, revision, ["src/api/models.py"], Mode.ENFORCE)
    words = "what the read of src/api/models.py returned is not src/api/models.py at"
    (reviewer,) = decision.reviewers
    (models,) = [f for f in reviewer.files if f.path == "src/api/models.py"]
    assert models.content is not None and models.content.value == "mismatch"
    for view in (
        render.text(decision),
        render.markdown(decision),
        sarif_text(decision, tool_version="0"),
        "\n".join(annotation_lines(decision)),
    ):
        assert words in view
