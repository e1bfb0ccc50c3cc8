"""Operator mistakes the reconciler must make visible, never turn into "verified".

Evidence recorded at an abbreviated SHA of the review's commit is that commit's evidence; evidence
recorded at another commit is stale, its claims unknown (DESIGN §7.1) and the decision says so
with its own reason. A review with nothing in scope is "nothing to review", never "verified".
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from coverage_gate.cli import app
from coverage_gate.contracts.model import (
    Coverage,
    FileStatus,
    Mode,
    Reason,
    UnknownPolicy,
    UnknownReason,
    Verdict,
)
from coverage_gate.core.reconcile import reconcile, same_revision
from coverage_gate.rollout.metrics import ReviewOutcome, review_outcome
from tests.conftest import CHANGED_FILES, DATA, UNREACHABLE_ROOT, hermetic_capture
from tests.core.test_reconcile import ALL_READ, REV, SCOPE, claims, evidence, one, review

FULL = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (FULL, FULL),
        ("4b825dc", FULL),
        (FULL, "4b825dc"),
        ("4B825DC", FULL),
        (FULL.upper(), FULL),
        ("4b825dc642cb", "4b825dc"),
        ("rev1", "rev1"),
    ],
)
def test_an_abbreviated_sha_of_seven_or_more_digits_is_the_same_commit(
    first: str, second: str
) -> None:
    assert same_revision(first, second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("4b825d", FULL),  # six digits: too short to name a commit
        ("4b825dd", FULL),
        (FULL[:-1] + "5", FULL),
        ("rev1", "REV1"),  # not hexadecimal: only the same name is the same revision
        ("main", "main2"),
        ("", FULL),
        ("4b825dc-dirty", FULL),
    ],
)
def test_other_revisions_are_not_the_same_commit(first: str, second: str) -> None:
    assert not same_revision(first, second)


def test_evidence_at_an_abbreviated_sha_verifies_claims_at_the_full_one() -> None:
    """``record --revision 4b825dc`` then ``reconcile --revision <full SHA>`` is one commit."""
    short_rev = REV[:7].upper()
    lying = evidence({"a.py": (1, 0)}, revision=short_rev)
    decision = reconcile(review(one(claims(SCOPE), lying)))
    reviewer = decision.reviewers[0]
    assert {f.path: f.status for f in reviewer.files} == {
        "a.py": FileStatus.VERIFIED,
        "b.py": FileStatus.UNSUPPORTED,
        "c.py": FileStatus.UNSUPPORTED,
    }
    assert Reason.EVIDENCE_STALE not in decision.reasons
    assert decision.verdict_out is Verdict.COMMENT


def test_stale_evidence_is_its_own_reason_naming_both_revisions() -> None:
    """Claims stay unknown (not held against the reviewer by default), but the decision's
    reasons and note say that the evidence belongs to another commit, and which."""
    other = "b" * 40
    decision = reconcile(review(one(claims(SCOPE), evidence({}, revision=other))))
    reviewer = decision.reviewers[0]
    assert {f.unknown_reason for f in reviewer.files} == {UnknownReason.STALE}
    assert decision.reasons == [Reason.EVIDENCE_STALE]
    assert reviewer.reasons == [Reason.EVIDENCE_STALE]
    assert reviewer.evidence_revision == other
    assert reviewer.coverage is Coverage.COMPLETE
    assert not decision.would_downgrade
    assert decision.verdict_out is Verdict.APPROVE
    assert other in decision.note
    assert REV in decision.note
    assert "another revision" in decision.note
    assert "Coverage verified" not in decision.note


def test_stale_evidence_under_the_downgrade_policy_is_unverifiable_and_still_named() -> None:
    decision = reconcile(
        review(
            one(claims(SCOPE), evidence(ALL_READ, revision="c" * 40)),
            policy=UnknownPolicy.DOWNGRADE,
        )
    )
    assert decision.reasons == [Reason.CLAIMS_UNVERIFIABLE, Reason.EVIDENCE_STALE]
    assert decision.reviewers[0].coverage is Coverage.INCOMPLETE_UNVERIFIABLE
    assert decision.verdict_out is Verdict.COMMENT


@pytest.mark.parametrize("mode", list(Mode))
def test_an_empty_scope_is_nothing_to_review_never_verified(mode: Mode) -> None:
    """A lying reviewer (claims, no evidence of reading) with nothing in scope: the verdict is
    untouched, and nothing says its coverage was verified or complete."""
    decision = reconcile(replace(review(one(claims(SCOPE), evidence({})), mode=mode), scope=[]))
    reviewer = decision.reviewers[0]
    assert decision.verdict_out is Verdict.APPROVE
    assert not decision.downgraded
    assert not decision.would_downgrade
    assert decision.reasons == [Reason.NOTHING_TO_REVIEW]
    assert reviewer.coverage is Coverage.NOTHING_TO_REVIEW
    assert decision.note.startswith("Nothing to review")
    assert "verified" not in decision.note.lower()
    assert "complete" not in decision.note.lower()
    assert review_outcome(decision) is ReviewOutcome.NOTHING_TO_REVIEW


def test_an_empty_scope_keeps_the_legacy_gate_for_a_failed_reviewer() -> None:
    decision = reconcile(replace(review(one(None, None, failed=True)), scope=[]))
    assert decision.verdict_out is Verdict.COMMENT
    assert decision.reasons == [Reason.REVIEWER_FAILED, Reason.NOTHING_TO_REVIEW]
    assert decision.reviewers[0].coverage is Coverage.INCOMPLETE_FAILED
    assert review_outcome(decision) is ReviewOutcome.LEGACY_DOWNGRADED


# --- through the command line -------------------------------------------------------------------

runner = CliRunner()
CHANGED = "\n".join(CHANGED_FILES) + "\n"


def _record(folder: Path, revision: str) -> Path:
    """The lying pi reviewer's real capture, recorded at ``revision``."""
    out = folder / "lying.evidence.json"
    stream = hermetic_capture(DATA / "pi-rpc" / "pi_b_overclaim.jsonl", folder)
    args = ["record", str(stream), "--repo-root", UNREACHABLE_ROOT, "--revision", revision]
    args += ["-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


def _reconcile(
    folder: Path, evidence: Path, *scope: str, revision: str = FULL, root: str = UNREACHABLE_ROOT
) -> Result:
    claims = folder / "claims.json"
    body = {"schema_version": 1, "agent_id": "lying", "inspected_files": CHANGED_FILES}
    claims.write_text(json.dumps(body))
    args = [
        "reconcile",
        "--repo",
        "o/r",
        "--revision",
        revision,
        "--verdict",
        "approve",
        *scope,
        "--claims",
        str(claims),
        "--evidence",
        str(evidence),
        "--mode",
        "enforce",
        "--format",
        "json",
        "--repo-root",
        root,
    ]
    return runner.invoke(app, args)


def test_cli_evidence_recorded_at_the_abbreviated_sha_convicts_the_liar(tmp_path: Path) -> None:
    (tmp_path / "changed.txt").write_text(CHANGED)
    evidence = _record(tmp_path, FULL[:7])
    result = _reconcile(tmp_path, evidence, "--changed", str(tmp_path / "changed.txt"))
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["verdict_out"] == "comment"
    assert decision["reasons"] == ["claims_unsupported"]
    assert "warning" not in result.stderr


def test_cli_stale_evidence_is_said_on_stderr_naming_both_revisions(tmp_path: Path) -> None:
    (tmp_path / "changed.txt").write_text(CHANGED)
    evidence = _record(tmp_path, "0123456")
    result = _reconcile(tmp_path, evidence, "--changed", str(tmp_path / "changed.txt"))
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["verdict_out"] == "approve"
    assert "evidence_stale" in decision["reasons"]
    warning = [line for line in result.stderr.splitlines() if "evidence_stale" in line]
    assert len(warning) == 1
    assert "0123456" in warning[0]
    assert FULL in warning[0]
    assert "lying" in warning[0]


def test_cli_an_empty_changed_list_is_nothing_to_review(tmp_path: Path) -> None:
    (tmp_path / "changed.txt").write_text("# no files\n\n")
    evidence = _record(tmp_path, FULL)
    result = _reconcile(tmp_path, evidence, "--changed", str(tmp_path / "changed.txt"))
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["verdict_out"] == "approve"
    assert decision["reasons"] == ["nothing_to_review"]
    assert decision["reviewers"][0]["coverage"] == "nothing_to_review"
    assert "Coverage verified" not in decision["note"]
    assert "nothing to review: the changed-file list" in result.stderr


def test_cli_a_filter_that_excludes_every_file_is_nothing_to_review(tmp_path: Path) -> None:
    (tmp_path / "changed.txt").write_text("poetry.lock\nvendor/x.go\n")
    evidence = _record(tmp_path, FULL)
    result = _reconcile(tmp_path, evidence, "--changed", str(tmp_path / "changed.txt"))
    assert json.loads(result.stdout)["reasons"] == ["nothing_to_review"]
    assert "filter excluded all 2 changed file(s)" in result.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_cli_base_equal_to_head_is_nothing_to_review(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(tmp_path), *args], check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    git("init", "-q")
    git(
        "-c",
        "user.email=t@example.com",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "one",
    )
    head = git("rev-parse", "HEAD")
    evidence = _record(tmp_path, head)
    scope = ("--base", head, "--head", head)
    result = _reconcile(tmp_path, evidence, *scope, revision=head, root=str(tmp_path))
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["verdict_out"] == "approve"
    assert decision["reasons"] == ["nothing_to_review"]
    assert "Coverage verified" not in decision["note"]
    assert "--base and --head are the same" in result.stderr
