"""The speed guard CI runs on every submission: a slowdown of ``record`` or of start-up fails it.

    .venv/bin/python -m pytest -s tests/bench/test_speed_guard.py         (what .ci/run runs)
    .venv/bin/python -m tests.bench.test_speed_guard [--runs N] [--mb N]   (the figures, nothing asserted)

Whole processes, measured from outside, interleaved (each round runs every case once, so load on
this shared machine falls on all alike), ``--runs`` rounds (5), medians of wall seconds. Each
figure is a ratio against a baseline measured in the same rounds:

- ``record --diff`` with content checks of a generated pi stream whose reads return the
  repository's real text, honestly (``tests/bench/bench_content.py``'s ``honest-reads``: whole and
  ranged reads, ``cat`` and ``git diff -- PATH`` through ``bash``, failed calls,
  ``message_update`` chatter, ``turn_end`` repeats, one ``agent_end``; no mismatch), against the
  bare ``json.loads`` loop over the same file (bench_speed's definition: the loop's time over
  record's, so "2x" is twice as fast as the loop). Target 2x;
- plain ``record`` of the benchmark stream (``tests/_support/gen_pi_stream.py``, 50 MB), no
  repository, against the loop over it. Target 2.5x;
- ``coverage-gate --help`` against ``python -c pass`` (start-up: the interpreter's share of it).
  Target: at most 4x ``pass``'s time.

Noise on such ratios here is about ±20% at worst; a real slowdown of 2x is not noise. The guard
fails when a figure falls to half of what this code measured (``MEASURED``: ``record`` at under
half its ratio, ``--help`` at over twice its multiple), and prints every figure either way, with
the targets above as met or NOT MET, so that CI's log holds them. The targets are not met yet
(``MEASURED`` says by how much); the guard holds the code to what it does now. It runs the
checkout's own code (the editable install, as the tests do). A planted slowdown (a millisecond's
sleep in every call's content check, through ``sitecustomize``) fails it: the second test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.bench.bench_content import git, write
from tests.bench.bench_speed import BARE_LOOP, clean_env, generate

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("GUARD_RUNS", "5"))
MB = int(os.environ.get("GUARD_MB", "100"))

#: The figures this code has, measured by this guard at 100 MB on a two-core machine here (5
#: interleaved runs, medians; two runs gave checked 0.55x and 0.68x, plain 1.31x and 1.51x,
#: --help 2.15x and 2.73x: the machine is shared): ratios of the loop's time over record's, and
#: for --help a multiple of ``python -c pass``'s time. The guard fails at half of one (twice, for
#: --help): a real 2x slowdown, never noise. "checked" is of the honest stream.
MEASURED: dict[str, float] = {"checked": 0.6, "plain": 1.4, "help": 2.5}
#: The targets the project set itself (issue "Fast again"): printed as met or not, not enforced
#: while they are not met.
TARGETS: dict[str, float] = {"checked": 2.0, "plain": 2.5, "help": 4.0}


@dataclass
class Timed:
    name: str
    command: list[str]
    cwd: Path | None = None
    walls: list[float] = field(default_factory=list)

    def run(self, env: dict[str, str]) -> None:
        began = time.perf_counter()
        done = subprocess.run(self.command, env=env, cwd=self.cwd, capture_output=True, check=False)
        self.walls.append(time.perf_counter() - began)
        if done.returncode != 0:
            raise RuntimeError(f"{self.name} exited {done.returncode}: {done.stderr[-400:]!r}")

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)


@dataclass(frozen=True)
class Figure:
    case: str
    ratio: float
    line: str

    @property
    def failed(self) -> bool:
        measured = MEASURED[self.case]
        if self.case == "help":
            return self.ratio > 2 * measured
        return self.ratio < measured / 2


PLANTED = """
import time
from coverage_gate.core import content_check

_end = content_check.CallChecker.end


def _slow_end(self, event):
    time.sleep(0.001)
    return _end(self, event)


content_check.CallChecker.end = _slow_end
"""


@dataclass(frozen=True)
class Streams:
    """The guard's inputs, made in ``folder``: a repository whose revision holds the stream's
    files, the benchmark stream (``generated``), the same stream with its reads returning the
    repository's real text honestly, some through the shell (``checked``), and a folder no
    repository holds (``plain``)."""

    folder: Path
    repo: Path
    revision: str
    generated: Path
    checked: Path
    plain: Path

    @classmethod
    def make(cls, folder: Path, mb: int) -> Streams:
        repo = folder / "repo"
        write("repository", repo, "stream")
        generated, checked = folder / "generated.jsonl", folder / "checked.jsonl"
        generate(mb, generated)
        write("honest-reads", generated, checked, repo)
        (folder / "plain").mkdir()
        revision = git(repo, "rev-parse", "HEAD").strip()
        return cls(folder, repo, revision, generated, checked, folder / "plain")

    def checked_record(self, cli: list[str], out: str) -> list[str]:
        """``record --diff`` of the real-text stream with content checks, under the repo."""
        return [*cli, "record", str(self.checked), "--format", "pi-rpc", "--revision",
                self.revision, "--repo-root", str(self.repo), "--diff",
                str(self.repo.with_suffix(".diff")), "-o", str(self.folder / out)]  # fmt: skip

    def plain_record(self, cli: list[str], out: str) -> list[str]:
        """Plain ``record`` of the benchmark stream (run it in ``plain``: no repository)."""
        return [*cli, "record", str(self.generated), "--format", "pi-rpc", "--revision",
                self.revision, "-o", str(self.folder / out)]  # fmt: skip


def figures(
    runs: int = RUNS, mb: int = MB, say: Callable[[str], None] = print, *, planted: bool = False
) -> list[Figure]:
    """Build the streams, run every case ``runs`` times interleaved, and say each figure.
    ``planted``: every call's content check sleeps a millisecond (the guard must fail)."""
    cli = [sys.executable, "-m", "coverage_gate"]
    with tempfile.TemporaryDirectory(prefix="cg-guard-") as name:
        folder = Path(name)
        env = clean_env(folder / "telemetry")
        if planted:
            (folder / "planted").mkdir()
            (folder / "planted" / "sitecustomize.py").write_text(PLANTED)
            env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(folder / "planted"), env.get("PYTHONPATH")])
            )
        made = Streams.make(folder, mb)
        checked, generated = made.checked, made.generated
        cases = {
            "checked": Timed(
                f"record --diff, content checked ({mb} MB)", made.checked_record(cli, "c.json")
            ),
            "checked_loop": Timed(
                f"bare json.loads loop ({mb} MB, real reads)",
                [sys.executable, "-c", BARE_LOOP, str(checked)],
            ),
            "plain": Timed(
                f"record, no repository ({mb} MB)",
                made.plain_record(cli, "p.json"),
                cwd=made.plain,
            ),
            "plain_loop": Timed(
                f"bare json.loads loop ({mb} MB)", [sys.executable, "-c", BARE_LOOP, str(generated)]
            ),
            "help": Timed("coverage-gate --help", [*cli, "--help"]),
            "pass": Timed("python -c pass", [sys.executable, "-c", "pass"]),
        }
        for _ in range(runs):
            for case in cases.values():
                case.run(env)
    for case in cases.values():
        say(
            f"  {case.name:<48} median {case.wall:7.3f} s  ({', '.join(f'{w:.3f}' for w in case.walls)})"
        )
    found = [
        _figure("checked", cases["checked_loop"].wall / cases["checked"].wall),
        _figure("plain", cases["plain_loop"].wall / cases["plain"].wall),
        _figure("help", cases["help"].wall / cases["pass"].wall),
    ]
    for figure in found:
        say(figure.line)
    return found


def _figure(case: str, ratio: float) -> Figure:
    measured, target = MEASURED[case], TARGETS[case]
    if case == "help":
        met = "met" if ratio <= target else "NOT MET"
        line = (
            f"--help takes {ratio:.2f}x python -c pass (this code measured {measured:g}x, fails "
            f"over {2 * measured:g}x; target at most {target:g}x: {met})"
        )
    else:
        what = "content checked" if case == "checked" else "plain"
        met = "met" if ratio >= target else "NOT MET"
        line = (
            f"record {what}: {ratio:.2f}x the bare loop (this code measured {measured:g}x, "
            f"fails under {measured / 2:g}x; target {target:g}x: {met})"
        )
    return Figure(case, ratio, line)


@pytest.mark.slow
def test_no_slowdown_of_record_or_start_up(capsys: pytest.CaptureFixture[str]) -> None:
    """CI's guard (module notes): every figure to the log, a failure below half a target."""
    lines: list[str] = []
    found = figures(say=lines.append)
    with capsys.disabled():
        sys.stdout.write("\nspeed guard, " + f"{RUNS} interleaved runs, medians:\n")
        sys.stdout.write("\n".join(lines) + "\n")
    failed = [figure.line for figure in found if figure.failed]
    assert not failed, failed


@pytest.mark.slow
def test_a_planted_slowdown_fails_the_guard() -> None:
    """A millisecond's sleep in every call's content check (about 1,500 calls in the 100 MB
    stream): the content-checked figure falls under its floor."""
    found = {figure.case: figure for figure in figures(runs=3, planted=True, say=lambda _l: None)}
    assert found["checked"].failed, found["checked"].line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--mb", type=int, default=MB)
    args = parser.parse_args(argv)
    found = figures(args.runs, args.mb)
    return 1 if any(figure.failed for figure in found) else 0


if __name__ == "__main__":
    sys.exit(main())
