"""Benchmark: `record` throughput and peak memory on generated pi RPC streams.

Not part of the default run: ``python -m pytest -m bench -s tests/bench_record.py``.
Everything is measured in one run on the same file, and reported as ratios against baselines
measured alongside (this machine is shared and noisy): ``jq`` selecting tool events, and a bare
Python loop that JSON-parses every line. Sizes: ``BENCH_THROUGHPUT_MB`` (default 200) and
``BENCH_RSS_MB`` (default "50,500").
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
RUNS = 3
BARE_LOOP = "import json,sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"


def generate(size_mb: int, folder: Path) -> Path:
    path = folder / f"pi-{size_mb}mb.jsonl"
    subprocess.run(
        [sys.executable, str(HERE / "gen_pi_stream.py"), str(size_mb), str(path)],
        check=True,
        capture_output=True,
    )
    return path


def record_command(path: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "coverage_gate",
        "record",
        str(path),
        "--format",
        "pi-rpc",
        "--revision",
        "bench",
        "-o",
        os.devnull,
    ]


def run_measured(command: list[str], stdout: int | None = subprocess.DEVNULL) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one child process."""
    began = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - began
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, command
    return elapsed, usage.ru_maxrss


def median_seconds(command: list[str]) -> float:
    return statistics.median(run_measured(command)[0] for _ in range(RUNS))


@pytest.mark.bench
def test_record_throughput_and_memory(tmp_path: Path) -> None:
    size_mb = int(os.environ.get("BENCH_THROUGHPUT_MB", "200"))
    stream = generate(size_mb, tmp_path)
    megabytes = stream.stat().st_size / 1e6
    record_s = median_seconds(record_command(stream))
    loop_s = median_seconds([sys.executable, "-c", BARE_LOOP, str(stream)])
    print(f"\ninput: {megabytes:.0f} MB generated pi RPC stream; medians of {RUNS} runs")
    print(f"record (whole CLI process)       {megabytes / record_s:8.0f} MB/s")
    print(
        f"bare Python loop, json per line  {megabytes / loop_s:8.0f} MB/s   record/loop = {loop_s / record_s:.1f}x"
    )
    if shutil.which("jq"):
        jq_s = median_seconds(
            ["jq", "-c", 'select(.type|startswith("tool_execution"))', str(stream)]
        )
        print(
            f"jq select tool_execution*        {megabytes / jq_s:8.0f} MB/s   record/jq   = {jq_s / record_s:.1f}x"
        )
    else:
        print("jq not installed: that baseline was not measured")
    stream.unlink()
    for rss_mb in (int(part) for part in os.environ.get("BENCH_RSS_MB", "50,500").split(",")):
        path = generate(rss_mb, tmp_path)
        seconds, peak_kib = run_measured(record_command(path))
        _, baseline_kib = run_measured([sys.executable, "-c", "import coverage_gate.cli"])
        print(
            f"record peak RSS at {path.stat().st_size / 1e6:5.0f} MB input: {peak_kib / 1024:6.1f} MiB "
            f"(interpreter + imports alone: {baseline_kib / 1024:.1f} MiB; {seconds:.2f} s)"
        )
        path.unlink()
