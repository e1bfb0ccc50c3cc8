"""Benchmark: `record` throughput and peak memory on generated pi RPC streams.

Not part of the default run: ``python -m pytest -m bench -s tests/bench/bench_record.py``.
Everything is measured in one run on the same file, and reported as ratios against baselines
measured alongside (this machine is shared and noisy): ``jq`` selecting tool events, and a bare
Python loop that JSON-parses every line. Sizes: ``BENCH_THROUGHPUT_MB`` (default 200) and
``BENCH_RSS_MB`` (default "50,500").

Three figures for record: the whole CLI process with the default telemetry sink (local OTLP JSON
files: every tool call is an exported span), the whole process with ``OTEL_SDK_DISABLED=true``, and
the stream pass alone (scan, decode, pair), timed inside the process: what grows with input size.
A fourth measures depth: the same default-sink run given a pinned diff of the stream's 400 files
(``--diff``, about 1 MB, so that every ``cr_diff`` page lands in it) and a repository root, against
the run without them; and peak memory with depth on.
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
STREAM_SCAN = """
import sys, time
from coverage_gate.adapters import ADAPTERS
from coverage_gate.record.recording import Recorder, RecordSettings
recorder = Recorder(ADAPTERS["pi-rpc"], RecordSettings(revision="bench", repo_root="/r"))
began = time.perf_counter()
with open(sys.argv[1], "rb") as stream:
    while chunk := stream.read(1 << 22):
        recorder.feed(chunk)
print(time.perf_counter() - began)
"""


def generate(size_mb: int, folder: Path) -> Path:
    path = folder / f"pi-{size_mb}mb.jsonl"
    subprocess.run(
        [
            sys.executable,
            str(HERE.parent / "_support" / "gen_pi_stream.py"),
            str(size_mb),
            str(path),
        ],
        check=True,
        capture_output=True,
    )
    return path


def record_command(path: Path, *extra: str) -> list[str]:
    out = path.with_suffix(".evidence.json")
    return [sys.executable, "-m", "coverage_gate", "record", str(path), "--format", "pi-rpc",
            "--revision", "bench", "-o", str(out), *extra]  # fmt: skip


def generate_diff(folder: Path, files: int = 400, target_bytes: int = 1_040_000) -> Path:
    """A git diff of the generated stream's files (``src/pkg{i // 20}/mod{i}.py``), hunks of
    context, deleted and added lines, sized so that the stream's ``cr_diff`` pages fall in it."""
    per_file = target_bytes // files
    sections: list[str] = []
    for i in range(files):
        path = f"src/pkg{i // 20}/mod{i}.py"
        head = f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n"
        body: list[str] = []
        size, line = len(head), 10
        while size < per_file:
            hunk = [f" context line {line + k} of {path}\n" for k in range(3)]
            hunk += [f"-removed line {line + 3} of {path}\n"]
            hunk += [f"+added line {line + 3 + k} of {path}, rewritten\n" for k in range(2)]
            hunk += [f" context line {line + 5 + k} of {path}\n" for k in range(3)]
            text = f"@@ -{line},7 +{line},8 @@ def f{line}():\n" + "".join(hunk)
            body.append(text)
            size += len(text)
            line += 40
        sections.append(head + "".join(body))
    diff = folder / "bench.diff"
    diff.write_text("".join(sections))
    return diff


def run_measured(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one child process."""
    began = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - began
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, command
    return elapsed, usage.ru_maxrss


def median_wall(command: list[str]) -> float:
    return statistics.median(run_measured(command)[0] for _ in range(RUNS))


def median_stream_pass(path: Path) -> float:
    def once() -> float:
        out = subprocess.run(
            [sys.executable, "-c", STREAM_SCAN, str(path)],
            capture_output=True,
            text=True,
            check=True,
        )
        return float(out.stdout)

    return statistics.median(once() for _ in range(RUNS))


@pytest.mark.bench
def test_record_throughput_and_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COVERAGE_GATE_TELEMETRY_DIR", str(tmp_path / "telemetry"))
    size_mb = int(os.environ.get("BENCH_THROUGHPUT_MB", "200"))
    stream = generate(size_mb, tmp_path)
    megabytes = stream.stat().st_size / 1e6
    loop_s = median_wall([sys.executable, "-c", BARE_LOOP, str(stream)])
    jq = ["jq", "-c", 'select(.type|startswith("tool_execution"))', str(stream)]
    jq_s = median_wall(jq) if shutil.which("jq") else None
    default_s = median_wall(record_command(stream))
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    quiet_s = median_wall(record_command(stream))
    monkeypatch.delenv("OTEL_SDK_DISABLED")
    pass_s = median_stream_pass(stream)
    diff = generate_diff(tmp_path)
    root = tmp_path / "repo"
    root.mkdir()
    depth_args = ("--diff", str(diff), "--repo-root", str(root))
    no_depth_s = median_wall(record_command(stream))
    depth_s = median_wall(record_command(stream, *depth_args))
    print(f"\ninput: {megabytes:.0f} MB generated pi RPC stream; medians of {RUNS} runs")
    print(f"{'bare Python loop, json per line':<38}{megabytes / loop_s:6.0f} MB/s")
    if jq_s is None:
        print("jq not installed: that baseline was not measured")
    else:
        print(f"{'jq select tool_execution*':<38}{megabytes / jq_s:6.0f} MB/s")
    for label, seconds in (
        ("record, whole process, default sink", default_s),
        ("record, whole process, SDK disabled", quiet_s),
        ("record's stream pass, in process", pass_s),
    ):
        ratios = f"vs loop {loop_s / seconds:4.1f}x"
        if jq_s is not None:
            ratios += f"   vs jq {jq_s / seconds:4.1f}x"
        print(f"{label:<38}{megabytes / seconds:6.0f} MB/s   {ratios}")
    print(
        f"{'record with --diff (depth) vs without':<38}{megabytes / depth_s:6.0f} MB/s   "
        f"vs {megabytes / no_depth_s:.0f} MB/s without: {no_depth_s / depth_s:4.2f}x "
        f"({diff.stat().st_size / 1e6:.1f} MB diff)"
    )
    stream.unlink()
    for rss_mb in (int(part) for part in os.environ.get("BENCH_RSS_MB", "50,500").split(",")):
        path = generate(rss_mb, tmp_path)
        seconds, peak_kib = run_measured(record_command(path))
        _, depth_kib = run_measured(record_command(path, *depth_args))
        _, baseline_kib = run_measured([sys.executable, "-c", "import coverage_gate.cli"])
        print(
            f"record peak RSS at {path.stat().st_size / 1e6:5.0f} MB input: "
            f"{peak_kib / 1024:6.1f} MiB, with depth {depth_kib / 1024:6.1f} MiB "
            f"(interpreter + imports alone: {baseline_kib / 1024:.1f} MiB; {seconds:.2f} s)"
        )
        path.unlink()
