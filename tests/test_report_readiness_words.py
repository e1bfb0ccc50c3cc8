"""The readiness line of `report` says exactly what its would-downgrade check compares: the
point rate (would-downgrades over approvals) with the limit, not its 95% interval."""

from __future__ import annotations

from pathlib import Path

from coverage_gate.model import DepthPolicy, Verdict
from coverage_gate.report import Criteria, build_report, load_folder, render_text
from tests.simulate_rollout import decide
from tests.test_report import HONEST, LIAR, SCOPE, _depth_decisions, spread, write


def check_line(text: str) -> str:
    return next(line for line in text.splitlines() if "audit with --list" in line)


def test_readiness_line_names_the_point_rate_its_counts_and_the_interval_not_judged(
    tmp_path: Path,
) -> None:
    """1 liar in 8 approvals: 12.5% is the point rate compared with 10%; the interval is
    named as not judged."""
    decisions = [decide("acme/api", scope=SCOPE, reviewers=[HONEST])] * 7 + [
        decide("acme/api", scope=SCOPE, reviewers=[LIAR])
    ]
    write(tmp_path, spread(decisions, days=1))
    line = check_line(render_text(build_report(load_folder(tmp_path), Criteria())))
    assert line == (
        "  [FAIL] would downgrade 12.5% of approvals (1 of 8: this point rate is compared with "
        "at most 10.0%, not its 95% interval 2.2%-47.1%; audit with --list would_downgrade)"
    )


def test_readiness_line_under_a_depth_policy_counts_that_policys_approvals(
    tmp_path: Path,
) -> None:
    write(tmp_path, spread(_depth_decisions(), days=1))
    criteria = Criteria(depth_policy=DepthPolicy.ALL_HUNKS)
    line = check_line(render_text(build_report(load_folder(tmp_path), criteria)))
    assert "under depth policy all-hunks (4 of 10: this point rate is compared" in line


def test_readiness_line_without_approvals_says_the_rate_counts_as_zero(tmp_path: Path) -> None:
    write(
        tmp_path,
        spread([decide("acme/api", scope=SCOPE, reviewers=[HONEST], verdict=Verdict.COMMENT)], 1),
    )
    line = check_line(render_text(build_report(load_folder(tmp_path), Criteria())))
    assert "[ok] would downgrade n/a of approvals (no approvals: the rate counts as 0" in line
