"""`coverage-gate run` contains the reviewer's whole process tree (DESIGN §6 rule 21).

A reviewer here leaves a grandchild behind that has left its process group: started in a session
of its own (``setsid``), or double-forked (its parent exits, so it is re-parented to `run`, the
subreaper). The grandchild holds none of the reviewer's streams; it waits for a "go" file the
test writes once `run` has returned, then writes a marker: a leftover process writing to the
checkout or the evidence after the verdict. Whether the reviewer exits, times out, or `run` is
sent SIGTERM, the grandchild is gone (not even a zombie) when `run` returns, the marker never
appears, and the evidence counts it in ``descendants_ended``. A control runs the same reviewer
without `run` and sees the marker written, so the setup does produce what the tests rule out.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.capture import live, reaper
from coverage_gate.capture.live import EXIT_TIMEOUT, Ending, run_and_tee
from coverage_gate.contracts.model import EvidenceDocument
from tests.capture.test_live import PY, RUN_ENTRY, child, pid_alive, pids, run_app, wait_for_file

ROOT = Path(__file__).resolve().parents[2]
START_WITHIN_S = 30.0  # generous: Python start-up on a loaded machine
RUN_WITHIN_S = 60.0
MARKER_WITHIN_S = 2.0  # a live grandchild writes its marker within milliseconds of "go"
HOW = ["setsid", "double-fork"]

__all__ = ["pids"]  # the fixture, used by name below

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not reaper.available(), reason="needs a Linux child subreaper"),
]

# argv: pidfile marker ignore-sigterm(0|1). Waits for "<marker>.go" (at most a minute), then
# writes the marker.
LEFTOVER = textwrap.dedent(
    """
    import os, signal, sys, time
    pidfile, marker, ignore_term = sys.argv[1:4]
    if ignore_term == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(pidfile + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(pidfile + ".tmp", pidfile)
    deadline = time.monotonic() + 60
    while not os.path.exists(marker + ".go") and time.monotonic() < deadline:
        time.sleep(0.01)
    with open(marker, "w") as f:
        f.write("written after the run")
    """
)

# argv: pidfile marker how(setsid|double-fork) linger-seconds ignore-sigterm(0|1)
REVIEWER = f"""
    import os, subprocess, sys, time
    pidfile, marker, how, linger, ignore_term = sys.argv[1:6]
    leftover = [sys.executable, "-c", {LEFTOVER!r}, pidfile, marker, ignore_term]
    if how == "setsid":
        subprocess.Popen(
            leftover, start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    else:
        if os.fork() == 0:  # the intermediate: leaves the session, forks, exits at once
            os.setsid()
            if os.fork() == 0:  # the grandchild, re-parented when the intermediate exits
                fd = os.open(os.devnull, os.O_RDWR)
                for n in (0, 1, 2):
                    os.dup2(fd, n)
                os.execv(sys.executable, leftover)
            os._exit(0)
        os.wait()
    while not os.path.exists(pidfile):
        time.sleep(0.01)
    print("started", flush=True)
    time.sleep(float(linger))
"""


@dataclass(frozen=True)
class Leftover:
    """Where one reviewer's grandchild says who it is and writes after the run."""

    pidfile: Path
    marker: Path

    @classmethod
    def under(cls, tmp_path: Path) -> Leftover:
        return cls(tmp_path / "grandchild.pid", tmp_path / "marker")

    def reviewer(self, how: str, *, linger: float = 0.0, ignore_term: bool = False) -> list[str]:
        flag = "1" if ignore_term else "0"
        return [*child(REVIEWER), str(self.pidfile), str(self.marker), how, str(linger), flag]

    def pid(self) -> int:
        return int(wait_for_file(self.pidfile, START_WITHIN_S))

    def writes_after_go(self) -> bool:
        """Tell the grandchild to write; whether its marker appears."""
        Path(f"{self.marker}.go").touch()
        deadline = time.monotonic() + MARKER_WITHIN_S
        while time.monotonic() < deadline:
            if self.marker.exists():
                return True
            time.sleep(0.02)
        return self.marker.exists()


def exists(pid: int) -> bool:
    """The process exists at all, zombie included (a zombie left unreaped counts)."""
    return Path(f"/proc/{pid}").exists()


@dataclass(frozen=True)
class Ran:
    returncode: int
    stderr: str
    evidence: EvidenceDocument


def run_cli(
    tmp_path: Path,
    reviewer: list[str],
    *,
    options: tuple[str, ...] = (),
    sigterm_after: Path | None = None,
) -> Ran:
    """`coverage-gate run` in a process of its own (it is the subreaper); with
    ``sigterm_after``, sent SIGTERM once that file is written."""
    evidence = tmp_path / "ev.json"
    proc = subprocess.Popen(
        [*RUN_ENTRY, "-f", "subprocess", "--revision", "r", "--grace", "0.5",
         "-o", str(evidence), *options, "--", *reviewer],
        cwd=tmp_path, env={**os.environ, "OTEL_SDK_DISABLED": "true"},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        process_group=0,
    )  # fmt: skip
    try:
        if sigterm_after is not None:
            wait_for_file(sigterm_after, START_WITHIN_S)
            proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=RUN_WITHIN_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return Ran(
        proc.returncode,
        stderr.decode(errors="replace"),
        EvidenceDocument.model_validate_json(evidence.read_text()),
    )


@pytest.mark.parametrize("how", HOW)
def test_control_without_run_the_grandchild_outlives_the_reviewer_and_writes(
    tmp_path: Path, pids: list[int], how: str
) -> None:
    """The same reviewer run directly: it exits 0, its grandchild lives on and writes the
    marker when told. This is what `run` must prevent."""
    leftover = Leftover.under(tmp_path)
    done = subprocess.run(
        leftover.reviewer(how), check=False, capture_output=True, timeout=RUN_WITHIN_S
    )
    assert done.returncode == 0, done.stderr
    grandchild = leftover.pid()
    pids.append(grandchild)
    assert pid_alive(grandchild)
    assert leftover.writes_after_go()
    deadline = time.monotonic() + RUN_WITHIN_S
    while pid_alive(grandchild) and time.monotonic() < deadline:  # it exits once it has written
        time.sleep(0.02)


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("ignore_term", [False, True], ids=["terminable", "ignores-sigterm"])
def test_a_leftover_grandchild_is_ended_before_run_returns(
    tmp_path: Path, pids: list[int], how: str, ignore_term: bool
) -> None:
    """The reviewer exits 0 and leaves a grandchild outside its group: `run` ends it (SIGKILL
    after the grace period when it ignores SIGTERM), exits 0, counts it in the evidence, and
    nothing writes after."""
    leftover = Leftover.under(tmp_path)
    ran = run_cli(tmp_path, leftover.reviewer(how, ignore_term=ignore_term))
    grandchild = leftover.pid()
    pids.append(grandchild)
    assert not exists(grandchild)
    assert ran.returncode == 0, ran.stderr
    assert ran.evidence.descendants_ended == 1
    assert "ended 1 process(es) the reviewer had started" in ran.stderr
    assert not leftover.writes_after_go()


@pytest.mark.parametrize("how", HOW)
def test_on_timeout_the_grandchild_is_ended_with_the_reviewer(
    tmp_path: Path, pids: list[int], how: str
) -> None:
    """`run --timeout` ends the reviewer and the grandchild that left its group: exit 124,
    both gone when `run` returns, the grandchild counted, nothing written after."""
    leftover = Leftover.under(tmp_path)
    ran = run_cli(tmp_path, leftover.reviewer(how, linger=60), options=("--timeout", "4"))
    grandchild = leftover.pid()
    pids.append(grandchild)
    assert not exists(grandchild)
    assert ran.returncode == EXIT_TIMEOUT, ran.stderr
    assert ran.evidence.descendants_ended == 1
    assert not ran.evidence.stream_complete
    assert not leftover.writes_after_go()


@pytest.mark.parametrize("how", HOW)
def test_sigterm_to_run_ends_the_grandchild_before_the_evidence_is_written(
    tmp_path: Path, pids: list[int], how: str
) -> None:
    """SIGTERM to `run` (a CI job cancelled): the reviewer and its grandchild outside the group
    are ended, the evidence counts the grandchild, `run` exits 143."""
    leftover = Leftover.under(tmp_path)
    ran = run_cli(tmp_path, leftover.reviewer(how, linger=60), sigterm_after=leftover.pidfile)
    grandchild = leftover.pid()
    pids.append(grandchild)
    assert not exists(grandchild)
    assert ran.returncode == 128 + signal.SIGTERM, ran.stderr
    assert ran.evidence.descendants_ended == 1
    assert not leftover.writes_after_go()


# --- in this process: adopted leftovers are reaped, other processes are left alone -------------


@pytest.fixture
def sleeper() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes of this test's own that no run may touch; killed at the end."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _sleep(**how: bool) -> subprocess.Popen[bytes]:
    return subprocess.Popen([PY, "-c", "import time; time.sleep(60)"], **how)


@pytest.mark.parametrize("how", HOW)
def test_in_process_the_adopted_grandchild_is_reaped_and_others_are_left_alone(
    tmp_path: Path, pids: list[int], sleeper: list[subprocess.Popen[bytes]], how: str
) -> None:
    """Run from a process with children of its own: the reviewer's grandchild, adopted by this
    process, is ended and reaped (no zombie left); a child of ours in a session of its own that
    predates the reviewer, and one started during the run in our own group (the shape of run's
    own ``git cat-file``), both live on."""
    leftover = Leftover.under(tmp_path)
    sleeper.append(_sleep(start_new_session=True))  # before the reviewer, in a session of its own

    def sink(_chunk: bytes) -> None:
        if len(sleeper) == 1:  # during the run, in our own process group
            sleeper.append(_sleep())

    outcome = run_and_tee(
        leftover.reviewer(how),
        sink=sink,
        stdin=None,
        stdout=io.BytesIO(),
        timeout=RUN_WITHIN_S,
        grace=0.5,
    )
    grandchild = leftover.pid()
    pids.append(grandchild)
    assert outcome.ending is Ending.EXITED
    assert outcome.exit_code == 0
    assert outcome.descendants_ended == 1
    assert not exists(grandchild)
    assert len(sleeper) == 2
    assert [proc.poll() for proc in sleeper] == [None, None]
    assert not leftover.writes_after_go()


def test_a_reviewer_that_leaves_nothing_ends_nothing(tmp_path: Path) -> None:
    """A reviewer whose child ended before it did: nothing is left, so nothing is counted."""
    outcome = run_and_tee(
        child("import subprocess, sys; subprocess.run([sys.executable, '-c', 'pass'])"),
        sink=lambda _c: None,
        stdin=None,
        stdout=io.BytesIO(),
        timeout=RUN_WITHIN_S,
    )
    assert outcome.exit_code == 0
    assert outcome.descendants_ended == 0


def test_adopting_sets_the_subreaper_flag_and_puts_back_the_one_found() -> None:
    """The flag is on inside the block (nested blocks included) and off again after, as found."""
    assert reaper._get_subreaper() == 0
    with reaper.adopting() as outer:
        assert outer
        with reaper.adopting() as inner:
            assert inner
            assert reaper._get_subreaper() == 1
        assert reaper._get_subreaper() == 1
    assert reaper._get_subreaper() == 0


# --- which processes are the reviewer's ---------------------------------------------------------


def test_the_rules_that_say_which_processes_are_the_reviewers(
    sleeper: list[subprocess.Popen[bytes]],
) -> None:
    """Table of the attribution rules over a made-up process table, with a real reviewer pid
    (so that its start time is read): its group and everything under it; children this process
    adopted that started after it, outside our group, not our own; not older children, not our
    group's, not our watchdogs, not strangers; and once the reviewer is reaped and its pid taken
    by a stranger, not that stranger's group."""
    leader_proc = _sleep(process_group=0)
    sleeper.append(leader_proc)
    leader, me, group = leader_proc.pid, os.getpid(), os.getpgrp()
    own = {90_001}
    now = reaper.processes()
    assert now is not None
    since = now[leader].start
    tree = reaper.Tree(leader, lambda: own, before={(80_105, since)})

    def proc(pid: int, ppid: int, pgid: int, start: int = 0, zombie: bool = False) -> reaper.Proc:
        return reaper.Proc(pid=pid, ppid=ppid, pgid=pgid, start=since + start, zombie=zombie)

    table = {
        "leader": proc(leader, me, leader),
        "in the group": proc(80_001, 1, leader, 1),
        "child of the leader, own session": proc(80_002, leader, 80_002, 1),
        "under that child": proc(80_003, 80_002, 80_003, 2),
        "adopted": proc(80_004, me, 80_004, 3),
        "under the adopted": proc(80_005, 80_004, 80_005, 4),
        "adopted zombie": proc(80_006, me, 80_006, 3, zombie=True),
        "our helper, our group": proc(80_101, me, group, 1),
        "our child from before": proc(80_102, me, 80_102, -1),
        "our watchdog": proc(90_001, me, 90_001, 1),
        "a stranger": proc(80_103, 1, 80_103, 1),
        "under our helper": proc(80_104, 80_101, 80_104, 2),
        "our child from before, same clock tick": proc(80_105, me, 80_105, 0),
    }
    reviewers = {
        "in the group",
        "child of the leader, own session",
        "under that child",
        "adopted",
        "under the adopted",
        "adopted zombie",
    }
    procs = {p.pid: p for p in table.values()}
    found = {p.pid for p in tree.descendants(procs, leader_reaped=False)}
    assert found == {table[name].pid for name in reviewers}

    # reaped: its pid now names a stranger leading its own group; that group is not the reviewer's
    stranger = proc(leader, 1, leader, 10)
    reused = {**procs, leader: stranger, 80_001: proc(80_001, leader, leader, 11)}
    found = {p.pid for p in tree.descendants(reused, leader_reaped=True)}
    assert table["in the group"].pid not in found
    assert {table["adopted"].pid, table["under the adopted"].pid} <= found
    # reaped and its pid free: what is left of its group still is the reviewer's
    del procs[leader]
    found = {p.pid for p in tree.descendants(procs, leader_reaped=True)}
    assert table["in the group"].pid in found


# --- where there is no subreaper ----------------------------------------------------------------


def test_without_a_subreaper_run_says_so_once_and_ends_the_group_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the prctl is missing (not Linux): one warning on stderr, no descendant counted,
    and a timeout still ends the reviewer's process group (exit 124)."""
    monkeypatch.setattr(reaper, "available", lambda: False)
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    out = tmp_path / "ev.json"
    result = CliRunner().invoke(
        run_app(),
        ["run", "-f", "subprocess", "--revision", "r", "-o", str(out), "--timeout", "1",
         "--grace", "0.5", "--", *child("import time; print('up', flush=True); time.sleep(60)")],
    )  # fmt: skip
    assert result.exit_code == EXIT_TIMEOUT, result.stderr
    assert result.stderr.count("cannot be contained here") == 1
    assert EvidenceDocument.model_validate_json(out.read_text()).descendants_ended == 0
    assert live._own() == frozenset()
