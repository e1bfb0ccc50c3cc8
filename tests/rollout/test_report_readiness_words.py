"""Readiness judges the interval, not the point: a rate check passes only when the upper bound of
the rate's 95% Wilson interval is at most its limit, and the line says so, with the counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from coverage_gate.contracts.model import Capability, DepthPolicy, Verdict
from coverage_gate.rollout.report import (
    READINESS_RULE,
    Criteria,
    build,
    build_report,
    checks,
    load_folder,
    render_text,
    to_json,
)
from coverage_gate.rollout.simulation import ReviewerSpec, decide
from tests.rollout.test_report import HONEST, LIAR, SCOPE, _depth_decisions, spread, write


def check_line(text: str) -> str:
    return next(line for line in text.splitlines() if "audit with --list" in line)


def _rate_check_ok(folder: Path, criteria: Criteria) -> bool:
    (repo,) = build_report(load_folder(folder), criteria).repositories
    (check,) = [c for c in repo.checks if c.name == "would_downgrade_rate"]
    return check.ok


def test_a_low_point_rate_on_little_data_is_not_ready(tmp_path: Path) -> None:
    """1 liar in 20 approvals: the point rate 5.0% is under 10%, but the interval reaches 23.6%,
    so the check fails; the line names the counts, the interval and the bound compared."""
    decisions = [decide("acme/api", scope=SCOPE, reviewers=[HONEST])] * 19 + [
        decide("acme/api", scope=SCOPE, reviewers=[LIAR])
    ]
    write(tmp_path, spread(decisions, days=1))
    assert not _rate_check_ok(tmp_path, Criteria())
    line = check_line(render_text(build_report(load_folder(tmp_path), Criteria())))
    assert line == (
        "  [FAIL] would downgrade 5.0% of approvals (1 of 20; 95% CI 0.9%-23.6%: ready needs its "
        "upper bound 23.6% at most 10.0%; audit with --list would_downgrade)"
    )


def test_enough_clean_approvals_bound_the_rate_under_the_limit(tmp_path: Path) -> None:
    """0 of 40 approvals: the upper bound 8.8% is under 10%: the check passes."""
    write(tmp_path, spread([decide("acme/api", scope=SCOPE, reviewers=[HONEST])] * 40, days=1))
    assert _rate_check_ok(tmp_path, Criteria())
    line = check_line(render_text(build_report(load_folder(tmp_path), Criteria())))
    assert line.startswith("  [ok] would downgrade 0.0% of approvals (0 of 40; 95% CI 0.0%-8.8%")


def test_the_text_and_json_state_the_rule(tmp_path: Path) -> None:
    write(tmp_path, spread([decide("acme/api", scope=SCOPE, reviewers=[HONEST])] * 3, days=1))
    report = build_report(load_folder(tmp_path), Criteria())
    assert READINESS_RULE in render_text(report)
    assert "upper bound" in READINESS_RULE


def test_readiness_line_under_a_depth_policy_counts_that_policys_approvals(
    tmp_path: Path,
) -> None:
    write(tmp_path, spread(_depth_decisions(), days=1))
    criteria = Criteria(depth_policy=DepthPolicy.ALL_HUNKS)
    line = check_line(render_text(build_report(load_folder(tmp_path), criteria)))
    assert "under depth policy all-hunks (4 of 10; 95% CI 16.8%-68.7%: ready needs" in line


def test_without_approvals_nothing_bounds_the_rate_and_the_check_fails(tmp_path: Path) -> None:
    """No approvals: no interval, so no bound under the limit; the check fails and says why."""
    write(
        tmp_path,
        spread([decide("acme/api", scope=SCOPE, reviewers=[HONEST], verdict=Verdict.COMMENT)], 1),
    )
    line = check_line(render_text(build_report(load_folder(tmp_path), Criteria(min_approvals=0))))
    assert "[FAIL] would downgrade n/a of approvals (no approvals: nothing bounds the rate" in line


def test_a_new_rate_is_one_more_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rate added to RATES, with its counts and its limit, is shown with its interval in the
    text and the JSON, and judged by the same upper-bound rule."""
    spec = checks.RateSpec(
        name="unknown_file_rate",
        counts=lambda counts, _criteria: (counts.unknown_files, counts.claimed_files),
        sentence=lambda _criteria: "unknown {rate} of claimed files",
        unit="claimed files",
        limit=lambda _criteria: 0.05,
    )
    # RATES is read where the checks are made and where the report shows its rates.
    monkeypatch.setattr(checks, "RATES", (*checks.RATES, spec))
    monkeypatch.setattr(build, "RATES", checks.RATES)
    blind = ReviewerSpec(
        "style", claimed=SCOPE, read=(), source="codex-exec", capability=Capability.NONE
    )
    write(tmp_path, spread([decide("acme/api", scope=SCOPE, reviewers=[HONEST, blind])] * 4, 1))
    built = build_report(load_folder(tmp_path), Criteria())
    (check,) = [c for c in built.repositories[0].checks if c.name == "unknown_file_rate"]
    assert not check.ok
    assert check.detail.startswith("unknown 50.0% of claimed files (12 of 24; 95% CI")
    assert "unknown file rate 12 of 24 = 50.0% (95% CI" in render_text(built)
    rates = to_json(built)["repositories"][0]["rates"]
    assert rates["unknown_file_rate"]["limit"] == 0.05
    assert set(rates) == {"would_downgrade_rate", "error_rate", "unknown_file_rate"}
