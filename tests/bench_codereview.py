"""Benchmark: `reconcile --codereview-run` over a 50-task run with 256-call traces.

Not part of the default run: ``python -m pytest -m bench -s tests/bench_codereview.py``.
The run is tests/codereview_run.py's (one trace truncated, one task unfinished). The command runs
in this process (interpreter start-up and imports are not counted), and is reported with the time
of a plain ``json.load`` of the same files (every ``metadata.json`` and ``validated-output.json``)
measured alongside, and their ratio: this machine is shared and noisy. The target: under 1 s.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from tests.codereview_run import reconcile_args, write_run

RUNS = 5
TARGET_S = 1.0


def _json_load_all(files: list[Path]) -> float:
    began = time.perf_counter()
    for path in files:
        with path.open("rb") as handle:
            json.load(handle)
    return time.perf_counter() - began


@pytest.mark.bench
def test_bench_reconcile_a_fifty_task_run(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    files = run.metadata_files()
    size = sum(path.stat().st_size for path in files)
    runner = CliRunner()
    args = reconcile_args(run)
    runner.invoke(app, args)  # warm: imports, first git lookups
    timings: list[float] = []
    for _ in range(RUNS):
        began = time.perf_counter()
        result = runner.invoke(app, args)
        timings.append(time.perf_counter() - began)
        assert result.exit_code == 0, result.output
    plain = statistics.median(_json_load_all(files) for _ in range(RUNS))
    took = statistics.median(timings)
    print(
        f"\nreconcile --codereview-run: {len(run.agents)} tasks, {len(files)} files, "
        f"{size / 1e6:.1f} MB: median {took * 1000:.0f} ms over {RUNS} runs "
        f"(min {min(timings) * 1000:.0f} ms); json.load of the same files {plain * 1000:.1f} ms; "
        f"ratio {took / plain:.1f}x"
    )
    assert took < TARGET_S, f"{took:.2f} s, over the {TARGET_S:.0f} s target"
