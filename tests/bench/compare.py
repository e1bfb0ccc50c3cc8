"""A change's cost as a ratio in one run: this checkout's ``record`` against a named older commit.

    .venv/bin/python -m tests.bench.compare --against COMMIT [--runs N] [--mb N]

The older commit is checked out (``git worktree``) into a scratch folder and installed into a
virtual environment of its own (its dependencies this environment's); the streams are
``tests/bench/test_speed_guard.py``'s (a pi stream whose reads return a repository's real text,
recorded with ``--diff`` and content checks; the benchmark stream recorded plain, no
repository), made once. Every case runs as a whole process, interleaved, ``--runs`` rounds;
medians of wall seconds. Printed: each figure, the bare ``json.loads`` loop's over record's (as
bench_speed defines "N x loop"), and this checkout's time over the older commit's. Nothing is
asserted: the guard does that, against targets.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import venv
from collections.abc import Sequence
from pathlib import Path

from tests.bench.bench_speed import BARE_LOOP, clean_env
from tests.bench.test_speed_guard import Streams, Timed

ROOT = Path(__file__).resolve().parents[2]


def installed(commit: str, folder: Path) -> list[str]:
    """``commit`` checked out and installed in its own environment: its command line."""
    tree = folder / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), commit],
        check=True,
    )
    env_dir = folder / "venv"
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(tree)], check=True, capture_output=True
    )
    return [str(env_dir / "bin" / "coverage-gate")]  # not ``-m``: the cwd would come first


def compare(commit: str, runs: int, mb: int) -> None:
    with tempfile.TemporaryDirectory(prefix="cg-compare-") as name:
        folder = Path(name)
        try:
            older = installed(commit, folder / "older")
            ours = [sys.executable, "-m", "coverage_gate"]
            env = clean_env(folder / "telemetry")
            made = Streams.make(folder, mb)
            checked, generated, plain = made.checked, made.generated, made.plain
            checked_record, plain_record = made.checked_record, made.plain_record
            cases = {
                "loop_checked": Timed("loop (real reads)", [sys.executable, "-c", BARE_LOOP, str(checked)]),
                "ours_checked": Timed("this checkout, content checked", checked_record(ours, "a.json"), cwd=folder),
                "older_checked": Timed(f"{commit}, content checked", checked_record(older, "b.json"), cwd=folder),
                "loop_plain": Timed("loop (benchmark stream)", [sys.executable, "-c", BARE_LOOP, str(generated)]),
                "ours_plain": Timed("this checkout, plain", plain_record(ours, "c.json"), cwd=plain),
                "older_plain": Timed(f"{commit}, plain", plain_record(older, "d.json"), cwd=plain),
            }  # fmt: skip
            for _ in range(runs):
                for case in cases.values():
                    case.run(env)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder / "older" / "tree")],
                check=False, capture_output=True,
            )  # fmt: skip
    print(f"{mb} MB streams, {runs} interleaved runs, medians")
    for case in cases.values():
        print(f"  {case.name:<44} {case.wall:7.3f} s")
    for kind in ("checked", "plain"):
        loop, ours_t, older_t = (cases[f"{who}_{kind}"].wall for who in ("loop", "ours", "older"))
        print(
            f"{kind}: this checkout {loop / ours_t:.2f}x the loop, {commit} {loop / older_t:.2f}x; "
            f"this checkout takes {ours_t / older_t:.2f}x {commit}'s time"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="the older commit (any git revision)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mb", type=int, default=50)
    args = parser.parse_args(argv)
    compare(args.against, args.runs, args.mb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
