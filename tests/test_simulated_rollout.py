"""The simulated rollout: the report marks each repository's readiness for the reason planted."""

from __future__ import annotations

from pathlib import Path

from coverage_gate.model import DepthPolicy
from coverage_gate.report import Criteria, build_report, load_folder
from tests.simulate_rollout import (
    ALL_HUNKS_FAILURES,
    PLANS,
    expected_readiness,
    failures,
    main,
    simulate,
)


def test_report_marks_each_repository_ready_or_not_for_the_planted_reason(tmp_path: Path) -> None:
    """Honest reviewers with evidence are ready; liars, blind formats, fallbacks and errors, and
    too short a window each fail exactly their own check."""
    simulate(tmp_path, reviews=70)
    loaded = load_folder(tmp_path)
    report = build_report(loaded, Criteria())

    assert failures(report) == expected_readiness()
    ready = {repo.repository for repo in report.repositories if repo.ready}
    assert ready == {"acme/payments"}
    assert len(report.repositories) == len(PLANS)
    # Many runs wrote many files; the one garbage line was counted, not fatal.
    assert loaded.files > 20
    assert loaded.malformed_lines == 1
    assert len(loaded.reviews) == 70 * len(PLANS)


def test_a_repository_ready_under_one_depth_policy_can_be_unready_under_a_stricter_one(
    tmp_path: Path,
) -> None:
    """acme/payments' style reviewer often sees part of a file's change: ready to enforce
    accept and any-hunk, not all-hunks, judged on the same reviews."""
    simulate(tmp_path, reviews=70)
    loaded = load_folder(tmp_path)
    want = expected_readiness()
    assert failures(build_report(loaded, Criteria(depth_policy=DepthPolicy.ANY_HUNK))) == want
    strict = failures(build_report(loaded, Criteria(depth_policy=DepthPolicy.ALL_HUNKS)))
    assert strict == {**want, **{r: want[r] | f for r, f in ALL_HUNKS_FAILURES.items()}}


def test_rollout_script_exits_zero_when_readiness_matches(tmp_path: Path) -> None:
    """The script's own exit code says whether the report agreed with the plan."""
    assert main(["--reviews", "70", "--folder", str(tmp_path / "telemetry")]) == 0
