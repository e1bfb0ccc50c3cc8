"""A larger codereview-cli run (tests/_support/codereview_run.py): 50 reviewer tasks with 256-call
traces, one truncated and one unfinished, reconciled as one bundle. Its speed is measured in
tests/bench/bench_codereview.py, not here."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from coverage_gate.cli import app
from tests._support.codereview_run import CALLS, FILES, HEAD, reconcile_args, trace_calls, write_run

runner = CliRunner()


def test_every_synthetic_trace_holds_the_full_256_calls() -> None:
    assert len(trace_calls(7, truncated=False)) == CALLS
    assert len(trace_calls(0, truncated=True)) == CALLS


def test_a_fifty_task_run_is_one_bundle_with_each_task_judged_on_its_own(tmp_path: Path) -> None:
    """Honest reviewers are verified in full; the truncated trace leaves the files its kept calls
    never read unknown (truncated), never unsupported; the unfinished task is a failed reviewer,
    which turns the Approve into a Comment."""
    run = write_run(tmp_path)
    result = runner.invoke(app, reconcile_args(run))
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    reviewers = {reviewer["agent_id"]: reviewer for reviewer in decision["reviewers"]}
    assert list(reviewers) == list(run.agents)
    honest = [agent for agent in run.agents if agent not in (run.truncated, run.unfinished)]
    assert len(honest) == 48
    for agent in honest:
        assert reviewers[agent]["coverage"] == "complete", agent
        assert {f["status"] for f in reviewers[agent]["files"]} == {"verified"}
        assert reviewers[agent]["evidence_revision"] == HEAD
    truncated = {f["path"]: f for f in reviewers[run.truncated]["files"]}
    assert {path for path, f in truncated.items() if f["status"] == "unknown"} == set(run.unseen)
    assert {truncated[path]["unknown_reason"] for path in run.unseen} == {"truncated"}
    assert all(truncated[path]["status"] == "verified" for path in FILES[: -len(run.unseen)])
    assert reviewers[run.unfinished]["coverage"] == "incomplete_failed"
    assert decision["verdict_out"] == "comment"
    assert decision["reasons"] == ["reviewer_failed"]
    assert f"reviewer:{run.unfinished}" in result.stderr
    assert "never finished" in result.stderr
