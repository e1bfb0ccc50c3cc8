"""Containing everything a reviewer starts (DESIGN §6 rule 21): nothing it left outlives ``run``.

Ending the reviewer's process group ends what stayed in the group, but a descendant can leave it
(``setsid``, ``setpgid``), and one whose parent exits (a double fork) is re-parented away from
the reviewer's tree, out of reach of anything that walks it. So, while a reviewer runs, the
process running it is a Linux *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): every
descendant orphaned meanwhile is re-parented to it instead of to init, where it can still be
found. When the reviewer ends (it exited, it timed out, or ``run`` was signalled), and before the
evidence is written, every descendant still there is ended (``Tree.end``): SIGTERM (and SIGCONT,
so that a stopped one gets it), up to the grace period (``--grace``) for all to go, SIGKILL for
whatever is left, and the adopted ones are reaped, so that no zombie stays behind. How many were
signalled is the evidence's ``descendants_ended``.

Why a subreaper and not a cgroup: a subreaper needs no privilege and nothing from the system on
any Linux since 3.4. A cgroup would hold the tree more tightly (no process can leave one on its
own), but creating one needs a delegated cgroup v2 subtree, which CI runners and containers
mostly do not give; a mechanism that works only sometimes would make rule 21 hold only
sometimes.

Which processes are the reviewer's, read from ``/proc`` each time (``Tree.descendants``):

- the processes of the reviewer's own process group;
- every process under the reviewer in the parent tree;
- every child the subreaper adopted: a child of this process that was not one before the
  reviewer started (``children``, read just before), started after it, is outside this
  process's own process group, and is not one this process started itself (its watchdogs and
  reviewers: ``own``), with everything under it.

The helpers this process starts (``git cat-file``) stay in its own process group, so they are
never taken for the reviewer's; its children from before the reviewer never are either. The
limits: a descendant that joins this process's own group on purpose is taken for a helper, and
while two reviewers run in one process, the orphans adopted (and a child another thread starts
in a session of its own) cannot be told apart: the first run to end ends them.

A process is signalled through a pidfd opened after checking that its pid still names the
process that was found (same start time), so a pid reused meanwhile is never signalled.

Elsewhere (not Linux, no ``/proc``, or a kernel that refuses the prctl) ``available()`` is False:
``run`` says so once on stderr and ends the reviewer's process group alone, as it always has.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import cache

__all__ = [
    "KILL_WAIT_SECONDS",
    "Proc",
    "Tree",
    "adopting",
    "available",
    "children",
    "processes",
]

#: After SIGKILL, how long to wait for the descendants to be gone before giving up on them.
KILL_WAIT_SECONDS = 5.0
_POLL_SECONDS = 0.02
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_STAT_STARTTIME = 19  # field 22 of /proc/PID/stat, counted from the state (field 3)


@dataclass(frozen=True, slots=True)
class Proc:
    """One process as ``/proc/PID/stat`` showed it. ``start`` is in clock ticks since boot:
    with ``pid`` it names one process, whatever later reuses the pid."""

    pid: int
    ppid: int
    pgid: int
    start: int
    zombie: bool


def _read_stat(pid: int | str) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:  # gone while we looked
        return None
    fields = stat.rpartition(b")")[2].split()
    try:
        return Proc(
            pid=int(pid),
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            start=int(fields[_STAT_STARTTIME]),
            zombie=fields[0] in (b"Z", b"X"),
        )
    except (IndexError, ValueError):
        return None


def processes() -> dict[int, Proc] | None:
    """Every process this one can see, by pid; ``None`` without ``/proc``."""
    try:
        names = [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()]
    except OSError:
        return None
    found = {}
    for name in names:
        proc = _read_stat(name)
        if proc is not None:
            found[proc.pid] = proc
    return found


# --- the subreaper flag ------------------------------------------------------------------------


@cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library is loaded in every process
    except OSError:
        return None
    function: Callable[..., int] | None = getattr(libc, "prctl", None)
    return function


# prctl takes unsigned longs after the option: passed as such, never as C ints whose upper bits
# the kernel would read as whatever the register held.
_ZERO = ctypes.c_ulong(0)


def _get_subreaper() -> int | None:
    prctl = _prctl()
    if prctl is None:
        return None
    value = ctypes.c_int(0)
    if prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(value), _ZERO, _ZERO, _ZERO) != 0:
        return None
    return value.value


def _set_subreaper(value: int) -> bool:
    prctl = _prctl()
    if prctl is None:
        return False
    flag = ctypes.c_ulong(value)
    return bool(prctl(_PR_SET_CHILD_SUBREAPER, flag, _ZERO, _ZERO, _ZERO) == 0)


@cache
def available() -> bool:
    """Whether descendants that left the reviewer's group can be contained here: Linux, a
    kernel that takes the prctl, and ``/proc`` to find them in."""
    return _get_subreaper() is not None and os.path.exists(f"/proc/{os.getpid()}/stat")


class _Flag:
    """The subreaper flag, which is the whole process's: held by every ``adopting`` block at
    once, set by the first in and put back as it was found by the last out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._found = 0

    def hold(self) -> bool:
        with self._lock:
            if self._holders == 0:
                found = _get_subreaper() if available() else None
                if found is None or not _set_subreaper(1):
                    return False
                self._found = found
            self._holders += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and not self._found:
                _set_subreaper(0)


_FLAG = _Flag()


@contextlib.contextmanager
def adopting() -> Iterator[bool]:
    """While the block runs, this process adopts its descendants' orphans; yields whether it
    does. Nested and concurrent blocks share the one flag of the process."""
    held = _FLAG.hold()
    try:
        yield held
    finally:
        if held:
            _FLAG.release()


# --- signalling one process safely --------------------------------------------------------------


def _signal(proc: Proc, signum: int) -> bool:
    """Send ``signum`` to ``proc`` unless its pid now names another process; whether it was
    sent."""
    if sys.platform != "linux":  # pragma: no cover - available() is False there
        return False
    try:
        fd = os.pidfd_open(proc.pid)
    except ProcessLookupError:
        return False
    except OSError:  # a kernel without pidfds (before 5.3): check, then signal by pid
        return _signal_by_pid(proc, signum)
    try:
        current = _read_stat(proc.pid)
        if current is None or current.start != proc.start:
            return False
        signal.pidfd_send_signal(fd, signum)
    except (ProcessLookupError, PermissionError):
        return False
    finally:
        os.close(fd)
    return True


def _signal_by_pid(proc: Proc, signum: int) -> bool:
    current = _read_stat(proc.pid)
    if current is None or current.start != proc.start:
        return False
    try:
        os.kill(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


# --- one reviewer's tree -----------------------------------------------------------------------


def children() -> frozenset[tuple[int, int]]:
    """This process's children now, as (pid, start time): read before a reviewer starts, none
    of them is ever taken for one of its descendants."""
    me = os.getpid()
    return frozenset((p.pid, p.start) for p in (processes() or {}).values() if p.ppid == me)


class Tree:
    """The descendants of one reviewer (``leader``: its pid, which leads its process group),
    found and ended by the rules in the module docstring. Build it right after the reviewer
    starts, inside ``adopting()``; ``own`` gives the pids of the processes this process started
    itself and that are not the reviewer's (read after each look at ``/proc``), ``before`` its
    ``children()`` just before the reviewer started."""

    def __init__(
        self,
        leader: int,
        own: Callable[[], Collection[int]],
        before: Collection[tuple[int, int]] = frozenset(),
    ) -> None:
        self.leader = leader
        self._own = own
        self._before = frozenset(before)
        self._me = os.getpid()
        self._my_group = os.getpgrp()
        started = _read_stat(leader)
        # The reviewer was just started and is not reaped yet, so it is there; should /proc fail
        # us, nothing is taken for adopted.
        self._since = started.start if started is not None else None

    def descendants(self, procs: dict[int, Proc], *, leader_reaped: bool) -> list[Proc]:
        """The reviewer's descendants among ``procs`` (zombies included; the reviewer not).

        Once the reviewer is reaped its pid may be reused, but not while a process of its group
        is left (the group's number stays taken): so a process holding that pid then means the
        group's number now names a stranger's group."""
        own = set(self._own())
        group = not leader_reaped or self.leader not in procs
        children: dict[int, list[Proc]] = {}
        for proc in procs.values():
            children.setdefault(proc.ppid, []).append(proc)
        roots = [proc for proc in procs.values() if self._is_root(proc, own, group=group)]
        if not leader_reaped and self.leader in procs:
            roots.append(procs[self.leader])
        found: dict[int, Proc] = {}
        while roots:
            proc = roots.pop()
            if proc.pid in found or proc.pid == self._me:
                continue
            found[proc.pid] = proc
            roots.extend(children.get(proc.pid, ()))
        if not leader_reaped:
            found.pop(self.leader, None)
        return list(found.values())

    def _is_root(self, proc: Proc, own: set[int], *, group: bool) -> bool:
        if group and proc.pgid == self.leader:
            return True
        return (
            self._since is not None
            and proc.ppid == self._me
            and proc.pid not in own
            and proc.pgid != self._my_group
            and proc.start >= self._since  # clock ticks: one started just before may tie
            and (proc.pid, proc.start) not in self._before
        )

    def end(self, grace: float, leader_done: Callable[[], bool]) -> int:
        """End the reviewer and every descendant: SIGTERM, SIGKILL after ``grace`` seconds for
        what is left, then a bounded wait; reap the adopted ones. ``leader_done`` reaps the
        reviewer when it has exited and says whether it has (``Popen.poll``).

        Returns how many descendants (the reviewer not counted) were signalled."""
        ended: set[tuple[int, int]] = set()
        if not self._phase(signal.SIGTERM, grace, leader_done, ended):
            self._phase(signal.SIGKILL, KILL_WAIT_SECONDS, leader_done, ended)
        return len(ended)

    def _phase(
        self,
        signum: int,
        seconds: float,
        leader_done: Callable[[], bool],
        ended: set[tuple[int, int]],
    ) -> bool:
        """Signal the reviewer's group and descendants until all are gone (True) or ``seconds``
        have passed (False). SIGTERM goes once to each process; SIGKILL on every round."""
        deadline = time.monotonic() + seconds
        told: set[tuple[int, int]] = set()
        while True:
            reaped = leader_done()
            if not reaped:  # its pid, and so its group's number, cannot be reused meanwhile
                for send in (os.killpg, os.kill):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        send(self.leader, signum)
            procs = processes() or {}
            alive = []
            for proc in self.descendants(procs, leader_reaped=reaped):
                if proc.zombie:
                    self._reap(proc)
                    continue
                alive.append(proc)
                key = (proc.pid, proc.start)
                if (signum == signal.SIGKILL or key not in told) and _signal(proc, signum):
                    told.add(key)
                    ended.add(key)
                    if signum == signal.SIGTERM:
                        _signal(proc, signal.SIGCONT)
            if not alive and (reaped or leader_done()):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_SECONDS)

    def _reap(self, proc: Proc) -> None:
        """Collect a zombie this process adopted (others are their own parent's to collect; once
        that parent is ended they are adopted and collected here)."""
        if proc.ppid == self._me:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(proc.pid, os.WNOHANG)
