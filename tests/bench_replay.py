"""Benchmark: `coverage-gate replay` over 100,000 receipts, in bounded memory.

Receipts are generated from the simulated rollout's (350 real decisions over five
repositories): each generated one is a copy of one of them, given its own repository (one of 50)
and its own repository root, so that every file is a distinct receipt whose decision still
follows from its inputs. The replay runs as a child process; its time and peak RSS (from
``os.wait4``, measured from outside) are printed at 1, 10 and 100 % of the input, with how each
grows. Targets: under 60 s and under 200 MB at 100,000 receipts.

    .venv/bin/python -m pytest -m bench -s tests/bench_replay.py
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from coverage_gate.receipts import SUFFIX, canonical
from tests.simulate_rollout import write_receipts

pytestmark = pytest.mark.bench

RECEIPTS = int(os.environ.get("CG_BENCH_RECEIPTS", "100000"))
SHARES = (0.01, 0.10, 1.00)
MAX_SECONDS = 60.0
MAX_RSS_MB = 200.0


def generate(folder: Path, count: int, templates: Path) -> None:
    """``count`` distinct receipts made from the rollout's, written straight to ``folder``."""
    sources = [json.loads(gzip.decompress(p.read_bytes())) for p in sorted(templates.iterdir())]
    folder.mkdir(parents=True)
    for index in range(count):
        document = sources[index % len(sources)]
        repo = f"acme/repo-{index % 50:02d}"
        document["inputs"]["repo"] = document["decision"]["repo"] = repo
        document["inputs"]["repo_root"] = f"/work/checkout-{index}"
        data = canonical(document)
        name = hashlib.sha256(data).hexdigest() + SUFFIX
        (folder / name).write_bytes(gzip.compress(data, compresslevel=6, mtime=0))


def measure(folder: Path) -> tuple[float, float, float, dict[str, object]]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one `replay --mode enforce --format json`
    child, the CPU and RSS from the kernel's account of that child alone (``os.wait4``)."""
    command = [sys.executable, "-m", "coverage_gate", "replay", str(folder), "--mode", "enforce"]
    env = {**os.environ, "OTEL_SDK_DISABLED": "true"}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        began = time.perf_counter()
        proc = subprocess.Popen([*command, "--format", "json"], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - began
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        assert proc.returncode == 0, err.read().decode()
        document: dict[str, object] = json.loads(out.read())
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, document


def test_replay_of_100000_receipts_streams(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    write_receipts(templates, reviews=70)
    whole = tmp_path / "all"
    began = time.perf_counter()
    generate(whole, RECEIPTS, templates)
    print(f"\ngenerated {RECEIPTS} receipts in {time.perf_counter() - began:.1f} s")
    names = sorted(os.listdir(whole))
    rows = []
    for share in SHARES:
        count = max(1, int(RECEIPTS * share))
        folder = whole if share == 1.0 else tmp_path / f"share-{count}"
        if folder != whole:
            folder.mkdir()
            for name in names[:count]:
                os.link(whole / name, folder / name)
        took, cpu, rss, document = measure(folder)
        assert document["receipts"] == count
        rows.append((count, cpu, rss))
        print(
            f"replay {count:>7} receipts: CPU {cpu:6.1f} s ({cpu / count * 1e6:5.0f} µs/receipt), "
            f"wall {took:6.1f} s, peak RSS {rss:6.1f} MB, changes {len(document['changes'])}"
        )
    (small, small_s, small_rss), (_, _, _), (big, big_s, big_rss) = rows
    print(
        f"growth from {small} to {big} receipts (x{big // small}): CPU time x{big_s / small_s:.1f}"
        f", peak RSS x{big_rss / small_rss:.2f}"
    )
    # Held to CPU time: on a machine whose two cores serve several test runs at once, wall time
    # measures the others too (it is printed beside it).
    if RECEIPTS >= 100_000:
        assert big_s < MAX_SECONDS, f"{big_s:.1f} s"
        assert big_rss < MAX_RSS_MB, f"{big_rss:.1f} MB"
