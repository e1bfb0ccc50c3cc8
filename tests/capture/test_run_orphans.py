"""`coverage-gate run` leaves nothing behind: killed with SIGKILL it still takes the reviewer's whole
process group with it, and an output it could not write stops it before the reviewer starts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.capture import watchdog
from tests.capture.test_live import GRANDCHILD, child, pid_alive, pids, run_app, wait_for_file

ROOT = Path(__file__).resolve().parents[2]
GONE_WITHIN_S = 15.0  # grace 0.5 s, SIGKILL, then polling: generous for a loaded machine

__all__ = ["pids"]  # the fixture, used by name below


def _wait_gone(pid_list: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := [pid for pid in pid_list if pid_alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


@pytest.mark.slow
def test_sigkill_of_run_ends_the_reviewer_and_its_grandchild(
    tmp_path: Path, pids: list[int]
) -> None:
    """kill -9 of `coverage-gate run`: the reviewer and the grandchild it started (which ignores
    SIGTERM) are both gone within a few seconds, ended by the watchdog through the group."""
    pidfile = tmp_path / "pids"
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "coverage_gate",
            "run",
            "-f",
            "subprocess",
            "--revision",
            "r",
            "--grace",
            "0.5",
            "-o",
            str(tmp_path / "ev.json"),
            "--",
            *child(GRANDCHILD),
            str(pidfile),
        ],
        cwd=tmp_path,  # outside any repository: "r" is no commit of one
        env={**os.environ, "OTEL_SDK_DISABLED": "true"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        reviewer, grandchild = (int(pid) for pid in wait_for_file(pidfile).split())
        pids.extend([reviewer, grandchild])
        assert pid_alive(reviewer)
        assert pid_alive(grandchild)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
    assert run.returncode == -signal.SIGKILL
    assert _wait_gone([reviewer, grandchild], GONE_WITHIN_S) == []


def test_a_run_that_ends_normally_stands_its_watchdog_down(tmp_path: Path) -> None:
    """The watchdog of a finished run exits without touching anything: a reviewer that ended on
    its own leaves no watchdog process running. Only this process's own watchdogs are counted:
    other runs on the machine may start theirs meanwhile."""
    before = _watchdogs()
    args = ["run", "-f", "subprocess", "--revision", "r", "-o", str(tmp_path / "ev.json")]
    result = CliRunner().invoke(run_app(), [*args, "--", *child("print('done')")])
    assert result.exit_code == 0, result.output
    assert _watchdogs() - before == set()


def _watchdogs() -> set[int]:
    """Live watchdog processes started by this process (an exited one, not yet reaped, has no
    command line)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                # the parent pid is the field after the parenthesised command name
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if b"coverage_gate.capture.watchdog" in cmdline and parent == os.getpid():
                found.add(int(entry.name))
    return found


def test_watchdog_ends_the_group_on_end_of_file_and_not_on_a_byte(pids: list[int]) -> None:
    """The lifeline protocol: a byte stands the watchdog down, end of file ends the group."""
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], process_group=0
    )
    pids.append(sleeper.pid)
    try:
        read_end, write_end = os.pipe()
        os.write(write_end, b".")
        assert watchdog.watch(read_end, sleeper.pid, grace=0.5) is False
        assert sleeper.poll() is None
        os.close(write_end)
        os.close(read_end)

        read_end, write_end = os.pipe()
        os.close(write_end)
        assert watchdog.watch(read_end, sleeper.pid, grace=0.5) is True
        os.close(read_end)
        assert sleeper.wait(timeout=10) == -signal.SIGTERM
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()


# --- the output location is checked before the reviewer starts ---------------------------------


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder this process cannot create files in (root ignores mode bits: use /sys there)."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    sys_folder = Path("/sys")
    try:
        fd = os.open(sys_folder / "coverage-gate-probe", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except OSError:
        return sys_folder
    os.close(fd)
    pytest.skip("no folder here refuses root's writes")


def test_run_refuses_an_unwritable_output_folder_before_starting(tmp_path: Path) -> None:
    """An `-o` in a folder where no file can be created: exit 3 with a one-line reason, and the
    reviewer never runs (before, it ran to the end and only then failed to write)."""
    marker = tmp_path / "started"
    output = _unwritable_folder(tmp_path) / "ev.json"
    reviewer = child(f"open({str(marker)!r}, 'w').close()")
    result = CliRunner().invoke(
        run_app(), ["run", "--revision", "r", "-o", str(output), "--", *reviewer]
    )
    assert result.exit_code == 3, result.output
    assert f"output {output}: cannot be written" in result.stderr
    assert "Traceback" not in result.stderr
    assert not marker.exists()
    assert not output.exists()
