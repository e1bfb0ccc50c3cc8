"""Benchmark: `coverage-gate replay` over 100,000 receipts, in bounded memory and time.

Receipts are generated from the simulated rollout's (350 real decisions over five
repositories): each generated one is a copy of one of them, given its own repository (one of 50)
and its own repository root, so that every file is a distinct receipt whose decision still
follows from its inputs. Generating is not what is measured: each rollout receipt's canonical
JSON is made once with markers where the repository and the root go, and each copy is the
markers replaced (a sample is checked against copying the document the slow way), hashed and
gzipped, by two processes.

Each replay runs as a child process (`--mode enforce --format json`), measured from outside:
wall seconds; CPU seconds from ``os.wait4`` (the child and the worker processes it waited
for); the peak RSS of the largest process of the tree (the kernel's high-water mark,
``VmHWM``: ``os.wait4``'s ``ru_maxrss`` would count the pytest process the child was forked
from); and the peak of the memory of the whole tree, the sum of each process's proportional set
size (shared pages split among those sharing them). Both are sampled every 50 ms. The baseline,
measured in the same run the same way, is the least any replay must do: a bare loop that reads,
gunzips and JSON-parses every receipt. Figures are printed at 1, 10 and 100 % of the input,
with how each grows, and at 100 % also with ``--jobs 1`` (one process), for the speed-up.

Targets at 100,000 receipts: under 60 s and under 200 MB. Memory is asserted as measured (the
largest process, and the sampled tree). Of time, CPU seconds are asserted: the machine's two
cores serve several test runs at once, so wall time measures the others too; CPU seconds of all
processes are what the replay costs, and under 60 of them it finishes in under 60 s wall on two
idle cores, whatever it runs on. Wall time is printed beside them, with the load average, and is
asserted too when the load stayed below the number of cores.

    .venv/bin/python -m pytest -m bench -s tests/bench/bench_replay.py
"""

from __future__ import annotations

import gzip
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from coverage_gate.rollout.receipts import SUFFIX, canonical, compress
from coverage_gate.rollout.simulation import write_receipts

pytestmark = pytest.mark.bench

RECEIPTS = int(os.environ.get("CG_BENCH_RECEIPTS", "100000"))
SHARES = (0.01, 0.10, 1.00)
MAX_SECONDS = 60.0
MAX_MB = 200.0
REPOS = 50
SAMPLE_EVERY = 0.05
#: Where the repository and the root go in a template (JSON-escaped NULs: in no real value).
REPO_MARK = "\0repo\0"
ROOT_MARK = "\0root\0"

#: The baseline: read, gunzip and JSON-parse every receipt of the folder, in name order.
BARE_LOOP = """
import gzip, json, os, sys
folder = sys.argv[1]
for name in sorted(n for n in os.listdir(folder) if n.endswith(".receipt.json.gz")):
    with open(os.path.join(folder, name), "rb") as file:
        json.loads(gzip.decompress(file.read()))
"""


# --- generating --------------------------------------------------------------------------------


def copy_of(document: dict[str, object], index: int) -> dict[str, object]:
    """The ``index``-th receipt made from ``document``, the slow way (the reference)."""
    copy = json.loads(json.dumps(document))
    repo = f"acme/repo-{index % REPOS:02d}"
    copy["inputs"]["repo"] = copy["decision"]["repo"] = repo  # type: ignore[index]
    copy["inputs"]["repo_root"] = f"/work/checkout-{index}"  # type: ignore[index]
    return copy


def templates(folder: Path) -> tuple[list[dict[str, object]], list[bytes]]:
    """The rollout's receipts as documents, and as canonical JSON with markers."""
    documents = [json.loads(gzip.decompress(p.read_bytes())) for p in sorted(folder.iterdir())]
    marked = []
    for document in documents:
        copy = copy_of(document, 0)
        copy["inputs"]["repo"] = copy["decision"]["repo"] = REPO_MARK  # type: ignore[index]
        copy["inputs"]["repo_root"] = ROOT_MARK  # type: ignore[index]
        data = canonical(copy)
        assert data.count(canonical(REPO_MARK)[1:-1]) == 2
        assert data.count(canonical(ROOT_MARK)[1:-1]) == 1
        marked.append(data)
    return documents, marked


def content(marked: list[bytes], index: int) -> bytes:
    """The ``index``-th receipt's content: its template's markers replaced."""
    repo = f"acme/repo-{index % REPOS:02d}".encode()
    root = f"/work/checkout-{index}".encode()
    return (
        marked[index % len(marked)]
        .replace(canonical(REPO_MARK)[1:-1], repo)
        .replace(canonical(ROOT_MARK)[1:-1], root)
    )


def write_range(folder: Path, marked: list[bytes], start: int, stop: int) -> None:
    for index in range(start, stop):
        data = content(marked, index)
        (folder / (hashlib.sha256(data).hexdigest() + SUFFIX)).write_bytes(compress(data))


def generate(folder: Path, count: int, rollout: Path) -> None:
    """``count`` distinct receipts made from the rollout's, written straight to ``folder``."""
    documents, marked = templates(rollout)
    for index in [*range(len(marked)), count - 1]:  # the fast way makes what the slow way does
        assert content(marked, index) == canonical(copy_of(documents[index % len(marked)], index))
    folder.mkdir(parents=True)
    step = -(-count // 16)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        ranges = [(start, min(start + step, count)) for start in range(0, count, step)]
        for done in [pool.submit(write_range, folder, marked, *r) for r in ranges]:
            done.result()


# --- measuring ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    #: Peak RSS of the largest single process of the tree (its last sampled ``VmHWM``), MB.
    rss: float
    #: Peak of the process tree's summed proportional set size, sampled, MB.
    tree: float
    #: Highest one-minute load average seen during the run.
    load: float
    stdout: bytes


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            except OSError:
                continue
            todo.extend(int(child) for child in children)
    return found


def _memory_kb(pid: int) -> int:
    """A process's proportional set size (its RSS where the kernel does not tell it), kB."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def _high_water_kb(pid: int) -> int:
    """A process's peak RSS since it began running its program, kB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(command: list[str]) -> Run:
    """Run ``command`` as a child process and measure it from outside."""
    env = {**os.environ, "OTEL_SDK_DISABLED": "true"}
    peaks = {"tree": 0, "rss": 0, "load": os.getloadavg()[0]}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        began = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        finished = threading.Event()

        def sample() -> None:
            while True:
                tree = _descendants(proc.pid)
                peaks["tree"] = max(peaks["tree"], sum(_memory_kb(pid) for pid in tree))
                peaks["rss"] = max([peaks["rss"], *(_high_water_kb(pid) for pid in tree)])
                peaks["load"] = max(peaks["load"], os.getloadavg()[0])
                if finished.wait(SAMPLE_EVERY):
                    return

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - began
        finished.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        assert proc.returncode == 0, err.read().decode()
        stdout = out.read()
    return Run(
        wall=took,
        cpu=usage.ru_utime + usage.ru_stime,
        rss=peaks["rss"] / 1024,
        tree=peaks["tree"] / 1024,
        load=peaks["load"],
        stdout=stdout,
    )


def replay(folder: Path, *options: str) -> Run:
    return run(
        [
            *(sys.executable, "-m", "coverage_gate", "replay", str(folder)),
            *("--mode", "enforce", "--format", "json", *options),
        ]
    )


def ratio(one: float, other: float) -> str:
    return f"x{one / other:.1f}" if other else "n/a (too short to sample)"


def describe(name: str, count: int, measured: Run) -> str:
    return (
        f"{name:<22} {count:>7}: wall {measured.wall:6.1f} s, CPU {measured.cpu:6.1f} s "
        f"({measured.cpu / count * 1e6:4.0f} µs/receipt), peak RSS {measured.rss:5.1f} MB, "
        f"tree {measured.tree:5.1f} MB, load ≤ {measured.load:4.1f}"
    )


def test_replay_of_100000_receipts_streams(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout"
    write_receipts(rollout, reviews=70)
    whole = tmp_path / "all"
    began = time.perf_counter()
    generate(whole, RECEIPTS, rollout)
    cores = os.cpu_count() or 1
    print(f"\ngenerated {RECEIPTS} receipts in {time.perf_counter() - began:.1f} s ({cores} cores)")
    names = sorted(os.listdir(whole))
    rows: list[tuple[int, Run, Run]] = []
    for share in SHARES:
        count = max(1, int(RECEIPTS * share))
        folder = whole if share == 1.0 else tmp_path / f"share-{count}"
        if folder != whole:
            folder.mkdir()
            for name in names[:count]:
                os.link(whole / name, folder / name)
        bare = run([sys.executable, "-c", BARE_LOOP, str(folder)])
        measured = replay(folder)
        document = json.loads(measured.stdout)
        assert document["receipts"] == count
        rows.append((count, bare, measured))
        print(describe("baseline (gunzip+json)", count, bare))
        print(describe("replay", count, measured) + f", changes {len(document['changes'])}")
        print(
            f"{'':<22} {'':>7}  replay/baseline: wall x{measured.wall / bare.wall:.1f}, "
            f"CPU x{measured.cpu / bare.cpu:.1f}, peak RSS x{measured.rss / bare.rss:.1f}"
        )
    (small, _, small_run), _, (big, big_bare, big_run) = rows
    serial = replay(whole, "--jobs", "1")
    assert serial.stdout == big_run.stdout, "one process and several give other bytes"
    print(describe("replay --jobs 1", big, serial))
    print(
        f"{'':<22} {'':>7}  default/--jobs 1: wall x{big_run.wall / serial.wall:.2f}, "
        f"CPU x{big_run.cpu / serial.cpu:.2f}; --jobs 1/baseline CPU x{serial.cpu / big_bare.cpu:.1f}"
    )
    print(
        f"growth from {small} to {big} receipts (x{big // small}): CPU x{big_run.cpu / small_run.cpu:.1f}"
        f", peak RSS {ratio(big_run.rss, small_run.rss)}, tree {ratio(big_run.tree, small_run.tree)}"
    )
    if RECEIPTS >= 100_000:
        assert big_run.cpu < MAX_SECONDS, f"{big_run.cpu:.1f} s CPU"
        assert big_run.rss < MAX_MB, f"{big_run.rss:.1f} MB (largest process)"
        assert big_run.tree < MAX_MB, f"{big_run.tree:.1f} MB (process tree)"
        if big_run.load < cores:
            assert big_run.wall < MAX_SECONDS, f"{big_run.wall:.1f} s wall"
        else:
            print(f"wall not asserted: load average reached {big_run.load:.1f} on {cores} cores")
