"""Retention of the local telemetry folder (``coverage_gate.telemetry.retention``): report
merges the run files of each past day into one file per signal and day, and reads the same
report from the merged folder; a run file still being written, or of today, is left alone; a
merge cut short is healed without counting anything twice."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from typer.testing import CliRunner

from coverage_gate.commands.report import report_app
from coverage_gate.telemetry.retention import QUIET_S, compact
from tests.rollout.test_report import HONEST, SCOPE, decide, spread, write

runner = CliRunner()
DAY_S = 86_400


def _runs(folder: Path, runs: int) -> None:
    """``runs`` runs' files, each moved to a day of the past week (2 runs a day), unwritten for
    longer than ``QUIET_S``; each run reconciles two reviews and fails once."""
    now = time.time()
    for run in range(runs):
        before = set(folder.iterdir()) if folder.exists() else set()
        decisions = [decide("acme/api", scope=SCOPE, reviewers=[HONEST]) for _ in range(2)]
        write(folder, spread(decisions, days=0.01), errors={"acme/api": 1})
        when = now - (1 + run // 2) * DAY_S
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when))
        for path in set(folder.iterdir()) - before:
            moved = path.with_name(re.sub(r"-\d{8}T\d{6}Z-", f"-{stamp}-", path.name))
            path.rename(moved)
            os.utime(moved, (when, when))


def _report(folder: Path, *extra: str) -> dict[str, object]:
    done = runner.invoke(report_app, ["--telemetry-dir", str(folder), "--format", "json", *extra])
    assert done.exit_code == 0, done.output
    document: dict[str, object] = json.loads(done.stdout)
    document.pop("input")  # files and lines read differ: that is the point
    return document


def test_report_compacts_past_days_and_reads_the_same(tmp_path: Path) -> None:
    folder = tmp_path / "telemetry"
    _runs(folder, 8)
    run_files = sorted(p.name for p in folder.glob("*.jsonl"))
    assert len(run_files) == 16  # metrics and traces, per run
    before = _report(folder, "--no-compact")
    assert sorted(p.name for p in folder.glob("*.jsonl")) == run_files  # --no-compact: untouched
    after = _report(folder)
    assert after == before
    day_files = sorted(p.name for p in folder.glob("*.jsonl"))
    assert len(day_files) == 8  # 4 days, metrics and traces
    assert all(re.fullmatch(r"(metrics|traces)-\d{8}\.jsonl", name) for name in day_files)
    (repo,) = after["repositories"]  # type: ignore[misc]
    assert (repo["reviews"], repo["errors"]) == (16, 8)


def test_a_merge_cut_short_counts_nothing_twice(tmp_path: Path) -> None:
    folder = tmp_path / "telemetry"
    _runs(folder, 2)
    kept = tmp_path / "kept"
    kept.mkdir()
    for path in folder.glob("*.jsonl"):
        shutil.copy2(path, kept / path.name)
    expected = _report(folder, "--no-compact")
    assert compact(folder).merged == 4
    for path in kept.iterdir():  # as if the run files had not been removed after the rename
        shutil.copy2(path, folder / path.name)
    assert _report(folder) == expected
    assert len(list(folder.glob("*.jsonl"))) == 2


def test_todays_and_recently_written_files_are_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "telemetry"
    _runs(folder, 1)
    (recent,) = folder.glob("traces-*.jsonl")
    os.utime(recent, None)  # written just now: a run begun before midnight may still be writing
    write(folder, spread([decide("acme/api", scope=SCOPE, reviewers=[HONEST])], days=0.01))
    result = compact(folder)
    assert result.merged == 1  # yesterday's metrics file only
    assert recent.exists()
    assert len(list(folder.glob("*.jsonl"))) == 4
    assert compact(folder, now_s=time.time() + QUIET_S + DAY_S).merged == 3
