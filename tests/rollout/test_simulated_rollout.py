"""The simulated rollout: the report marks each repository's readiness for the reason planted."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from coverage_gate.contracts.model import DepthPolicy
from coverage_gate.rollout.report import Criteria, build_report, load_folder
from coverage_gate.rollout.simulation import (
    ALL_HUNKS_FAILURES,
    CLIENT_VERSION,
    PLANS,
    UPGRADED_VERSION,
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


def test_a_client_upgraded_mid_window_shows_drift_from_that_day_and_keeps_the_repository_unready(
    tmp_path: Path,
) -> None:
    """acme/search's style reviewer's client was upgraded on day 6: the report lists its streams
    by client version, the upgraded ones with the drift they held, names the day the drift began
    and marks the repository not ready for it alone; its claims became unknown, not unsupported,
    so no approval would have been downgraded."""
    simulate(tmp_path, reviews=70)
    report = build_report(load_folder(tmp_path), Criteria())
    search = next(repo for repo in report.repositories if repo.repository == "acme/search")
    assert search.drift is not None
    rows = {(row.format, row.client_version): row for row in search.drift}
    before, after = rows["pi-rpc", CLIENT_VERSION], rows["pi-rpc", UPGRADED_VERSION]
    assert before.hides_reads == 0 and before.kinds == {}
    assert after.hides_reads == after.streams > 0
    assert after.kinds == {"client_version": after.streams, "unknown_event": after.streams}
    # every review has one pi-rpc security reviewer and one pi-rpc style reviewer
    assert sum(row.streams for row in search.drift) == 2 * 70
    check = next(c for c in search.checks if c.name == "streams")
    assert not check.ok
    first_day = 1_790_000_000 + 6 * 86_400
    assert f"since {_iso(first_day)[:10]}" in check.detail
    assert f"pi-rpc {UPGRADED_VERSION}" in check.detail
    assert search.would_downgrade == 0
    assert search.unsupported_files == 0 and search.unknown_files > 0
    # a repository whose streams never drifted passes the check, with its count
    payments = next(repo for repo in report.repositories if repo.repository == "acme/payments")
    understood = next(c for c in payments.checks if c.name == "streams")
    assert understood.ok and understood.detail == "all 140 reviewer streams understood"


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).isoformat()
