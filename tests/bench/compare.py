"""A change's cost as a ratio in one run: this checkout's ``record`` against a named older commit.

    .venv/bin/python -m tests.bench.compare --against COMMIT [--runs N] [--mb N] [--shell-mb N]

The older commit is checked out (``git worktree``) into a scratch folder and installed into a
virtual environment of its own; this checkout is installed as a wheel (``bench_speed.install_wheel``:
not editable, so that both start alike); the streams are
``tests/bench/test_speed_guard.py``'s (a pi stream whose reads return a repository's real text,
recorded with ``--diff`` and content checks; the benchmark stream recorded plain, no
repository), made once; with ``--shell-mb``, bench_content's shell output case too (and this
checkout's record of it with no content source). Every case runs as a whole process, interleaved, ``--runs`` rounds;
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

from tests.bench.bench_content import git, write
from tests.bench.bench_speed import BARE_LOOP, clean_env, install_wheel
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


def _shell_cases(
    folder: Path, mb: int, ours: list[str], older: list[str], commit: str
) -> dict[str, Timed]:
    """bench_content's benchmark 2: ``mb`` MB of shell output over 40 changed files, recorded
    with content checks by both, and by this checkout with ``--repo-root`` a folder no
    repository holds (no content source)."""
    repo, stream = folder / "shell-repo", folder / f"bash-{mb}mb.jsonl"
    write("repository", repo, "shell")
    write("shell", stream, repo, mb)
    revision = git(repo, "rev-parse", "HEAD").strip()
    (folder / "nowhere").mkdir()

    def record(cli: list[str], root: Path, out: str) -> list[str]:
        return [*cli, "record", str(stream), "--format", "pi-rpc", "--revision", revision,
                "--repo-root", str(root), "--diff", str(repo.with_suffix(".diff")),
                "-o", str(folder / out)]  # fmt: skip

    return {
        "loop_shell": Timed(f"loop ({mb} MB shell)", [sys.executable, "-c", BARE_LOOP, str(stream)]),
        "ours_shell": Timed("this checkout, shell, checked", record(ours, repo, "e.json")),
        "older_shell": Timed(f"{commit}, shell, checked", record(older, repo, "f.json")),
        "source_shell": Timed("this checkout, shell, no content source",
                              record(ours, folder / "nowhere", "g.json")),
    }  # fmt: skip


def compare(commit: str, runs: int, mb: int, shell_mb: int = 0) -> None:
    with tempfile.TemporaryDirectory(prefix="cg-compare-") as name:
        folder = Path(name)
        try:
            older = installed(commit, folder / "older")
            # this checkout as a wheel, as bench_speed installs it: not editable, so that both
            # sides start alike
            ours = [str(install_wheel(folder / "ours").parent / "coverage-gate")]
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
            if shell_mb:
                cases.update(_shell_cases(folder, shell_mb, ours, older, commit))
            for _ in range(runs):
                for case in cases.values():
                    case.run(env)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder / "older" / "tree")],
                check=False, capture_output=True,
            )  # fmt: skip
    print(f"this checkout: {_described('HEAD')}; {commit}: {_described(commit)}")
    print(f"{mb} MB streams, {runs} interleaved runs, medians")
    for case in cases.values():
        print(f"  {case.name:<44} {case.wall:7.3f} s")
    for kind in ("checked", "plain", "shell")[: 3 if shell_mb else 2]:
        loop, ours_t, older_t = (cases[f"{who}_{kind}"].wall for who in ("loop", "ours", "older"))
        print(
            f"{kind}: this checkout {loop / ours_t:.2f}x the loop, {commit} {loop / older_t:.2f}x; "
            f"this checkout takes {ours_t / older_t:.2f}x {commit}'s time"
        )
    if shell_mb:
        ratio = cases["ours_shell"].wall / cases["source_shell"].wall
        print(f"shell: content checked takes {ratio:.2f}x the time with no content source")


def _described(revision: str) -> str:
    """A revision's commit, and for this checkout whether its files differ from it."""
    commit = git(ROOT, "rev-parse", "--short=12", revision).strip()
    if revision == "HEAD" and git(ROOT, "status", "--porcelain", "--untracked-files=no").strip():
        return f"{commit} with uncommitted changes"
    return commit


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="the older commit (any git revision)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument(
        "--shell-mb", type=int, default=0, help="also the shell output case, of this size"
    )
    args = parser.parse_args(argv)
    compare(args.against, args.runs, args.mb, args.shell_mb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
