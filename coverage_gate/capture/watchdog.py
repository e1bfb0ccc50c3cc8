"""The reviewer's watchdog: ends the reviewer's process group when ``coverage-gate run`` dies.

``coverage-gate run`` starts the reviewer in a process group of its own and ends that whole group
on a timeout or a signal. Killed itself (SIGKILL, the OOM killer), it can do nothing: the reviewer
and everything it started would run on, orphaned. So ``run`` also starts this small process for
each reviewer:

- in a session of its own, so that a signal to ``run``'s process group (a CI job being cancelled,
  Ctrl-C) does not take it too;
- reading a pipe whose only writer is ``run``. ``run`` writes one byte when the reviewer's group has
  ended and it needs no watching any more; the watchdog then exits. End of file with nothing read
  means ``run`` is gone, however it died: the watchdog ends the reviewer's group (SIGTERM, then
  SIGKILL after the grace period) and exits.

It is started as ``python -I -S -c`` with this module's folder put on ``sys.path``, and imports the
standard library alone, so it starts in milliseconds and needs nothing from the environment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence

__all__ = ["KILL_WAIT_SECONDS", "command", "end_group", "group_alive", "main", "watch"]

#: After SIGKILL, how long to wait for the group to be gone before giving up on it.
KILL_WAIT_SECONDS = 5.0
_POLL_SECONDS = 0.02


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count: a reparented
    grandchild may stay a zombie for as long as nobody reaps it)."""
    try:
        entries = [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()]
    except OSError:  # no /proc: ask the kernel, counting zombies as alive
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for name in entries:
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:  # the process ended while we looked
            continue
        fields = stat.rpartition(b")")[2].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _wait_gone(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)
    return True


def end_group(pgid: int, grace: float) -> None:
    """SIGTERM the group; SIGKILL whatever is left after ``grace``; wait a bounded time more."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    if not _wait_gone(pgid, grace):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        _wait_gone(pgid, KILL_WAIT_SECONDS)


def watch(lifeline: int, pgid: int, grace: float) -> bool:
    """Block on ``lifeline`` until ``run`` stands the watchdog down (a byte) or dies (end of file);
    on the latter, end the group. Returns whether the group was ended."""
    try:
        data = os.read(lifeline, 1)
    except OSError:
        data = b""
    if data:
        return False
    end_group(pgid, grace)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """``watchdog PGID GRACE``, with the lifeline on standard input."""
    args = sys.argv[1:] if argv is None else list(argv)
    pgid, grace = int(args[0]), float(args[1])
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_IGN)
    watch(sys.stdin.fileno(), pgid, grace)
    return 0


def command(pgid: int, grace: float) -> list[str]:
    """The argument list that starts a watchdog for ``pgid`` with this interpreter."""
    # coverage_gate/capture/watchdog.py → the folder holding coverage_gate/ (-I -S: no site)
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (
        f"import sys; sys.path.insert(0, {package_parent!r}); "
        "from coverage_gate.capture.watchdog import main; sys.exit(main())"
    )
    return [sys.executable, "-I", "-S", "-c", code, str(pgid), repr(float(grace))]


if __name__ == "__main__":  # pragma: no cover - started through ``command``
    sys.exit(main())
