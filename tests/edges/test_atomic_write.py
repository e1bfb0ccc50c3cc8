"""The one atomic writer: temporary files of our own name next to the target, and the ones a
writer killed mid-write (``kill -9``) left behind are removed by the next write in that folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.edges.files import (
    STALE_TEMP_SECONDS,
    remove_stale_temps,
    temp_path_for,
    write_atomic,
)
from tests.conftest import DATA

STREAM = DATA / "pi-rpc" / "pi_a_honest.jsonl"
OURS = re.compile(r"\.evidence\.json\.coverage-gate\.(\d+)\.[0-9a-f]{8}\.tmp")

# `record` killed by SIGKILL between writing its temporary file and renaming it into place.
KILLED_MID_WRITE = """
import os, signal, sys
def killed(fd):
    os.kill(os.getpid(), signal.SIGKILL)
os.fsync = killed
from coverage_gate.cli import main
sys.argv = ["coverage-gate", "record", sys.argv[1], "-f", "pi-rpc", "--revision", "abc",
            "-o", sys.argv[2]]
main()
"""


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _record(target: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["record", str(STREAM), "-f", "pi-rpc", "--revision", "abc", "-o", str(target)],
        env={"OTEL_SDK_DISABLED": "true"},
    )
    assert result.exit_code == 0, result.output


def test_record_killed_mid_write_leaves_a_temp_of_ours_that_the_next_write_removes(
    tmp_path: Path,
) -> None:
    """kill -9 during the atomic write leaves the target untouched and one temporary file named
    after the target, our mark and the dead writer's pid; the next `record -o` removes it."""
    target = tmp_path / "evidence.json"
    child = subprocess.run(
        [sys.executable, "-c", KILLED_MID_WRITE, str(STREAM), str(target)],
        cwd=tmp_path,  # in no repository: the revision is a name with nothing to resolve it in
        env={**os.environ, "OTEL_SDK_DISABLED": "true"},
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert child.returncode == -9, child.stderr
    left = [p.name for p in tmp_path.iterdir()]
    assert not target.exists()
    assert len(left) == 1, left
    match = OURS.fullmatch(left[0])
    assert match is not None, left
    _record(target)
    assert [p.name for p in tmp_path.iterdir()] == ["evidence.json"]


def test_only_stale_temps_of_ours_are_removed(tmp_path: Path) -> None:
    """Removed: ours whose writer is gone, ours older than the stale age. Kept: ours of a running
    writer, anything not named like ours (another tool's temp, a user's file), a folder."""
    target = tmp_path / "evidence.json"
    running = temp_path_for(target)  # this process is alive
    dead = target.with_name(f".evidence.json.coverage-gate.{_dead_pid()}.0123abcd.tmp")
    old = target.with_name(f".evidence.json.coverage-gate.{os.getppid()}.89abcdef.tmp")
    foreign = [tmp_path / ".evidence.json.k3j4h5.tmp", tmp_path / "notes.tmp"]
    for path in (running, dead, old, *foreign):
        path.write_text("partial")
    folder_like_ours = tmp_path / ".x.coverage-gate.1.00000000.tmp"
    folder_like_ours.mkdir()
    long_ago = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(old, (long_ago, long_ago))

    removed = remove_stale_temps(tmp_path)

    assert sorted(p.name for p in removed) == sorted([dead.name, old.name])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [running.name, *(p.name for p in foreign), folder_like_ours.name]
    )


def test_temp_names_stay_short_for_long_target_names(tmp_path: Path) -> None:
    """A target name near the file system's limit still gets a usable temporary name."""
    target = tmp_path / ("e" * 240 + ".json")
    write_atomic(target, "{}")
    assert target.read_text() == "{}"
    assert len(temp_path_for(target).name) < 200


def test_the_written_file_has_ordinary_permissions(tmp_path: Path) -> None:
    """The target gets the mode any new file gets (0666 less the umask), not a private 0600."""
    umask = os.umask(0o022)
    try:
        target = tmp_path / "evidence.json"
        write_atomic(target, "{}")
    finally:
        os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o644
