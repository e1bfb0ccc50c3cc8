"""Live capture: run a reviewer command, pass its stdin and stdout through, record as it flows.

``coverage-gate run`` starts the reviewer in a process group of its own. Our stdin is copied to
its stdin (pi RPC takes its commands there) and its stdout is copied to our stdout byte for byte,
chunk by chunk as it arrives, while every chunk is also handed to a recorder. Its stderr is
inherited untouched. When the reviewer ends, the evidence document is written atomically and the
exit code is the reviewer's.

On a timeout, or when we receive SIGINT/SIGTERM, the whole process group is ended: SIGTERM, then
SIGKILL after a grace period. What the stream already carried is kept (the remaining output is
drained and recorded), and the evidence is marked incomplete: a stream that was cut off proves
nothing by what it lacks (DESIGN §6 rule 9). Should we be killed ourselves (SIGKILL), a watchdog
process (``coverage_gate.capture.watchdog``) ends the group the same way: no reviewer outlives us.

Descendants that left the group (``setsid``, a double fork) are contained too (DESIGN §6 rule 21,
``coverage_gate.capture.reaper``): while the reviewer runs we are a child subreaper, and however its
run ends (it exited, it timed out, we were interrupted) every descendant still there is ended the
same way (SIGTERM, SIGKILL after the grace period) and reaped before the evidence is written; the
evidence counts them (``descendants_ended``). Where that is not available (not Linux), the process
group alone is ended, as above.

This module is an edge: it touches processes, file descriptors and signals, and nothing of the
pure core beyond handing bytes to a recorder.
"""

from __future__ import annotations

import contextlib
import enum
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Protocol

from coverage_gate.capture import reaper, watchdog
from coverage_gate.capture.watchdog import group_alive
from coverage_gate.contracts import defaults

if TYPE_CHECKING:
    from coverage_gate.contracts.model import EvidenceDocument

__all__ = [
    "CHUNK",
    "DEFAULT_GRACE_SECONDS",
    "EXIT_TIMEOUT",
    "FORWARDED_SIGNALS",
    "ChunkRecorder",
    "Ending",
    "Interrupter",
    "LiveError",
    "LiveResult",
    "RunOutcome",
    "end_process_group",
    "forwarding_signals",
    "run_and_tee",
    "run_recorded",
    "with_descendants_ended",
]

CHUNK = 64 * 1024
DEFAULT_GRACE_SECONDS = defaults.GRACE_SECONDS
EXIT_TIMEOUT = 124  # what GNU timeout(1) returns; documented in docs/pipeline/index.md
_SIGNAL_EXIT_BASE = 128  # the shell's convention: 128 + signal number
_KILL_WAIT_SECONDS = 5.0
_DRAIN_QUIET_SECONDS = 1.0  # after the group is ended: stop draining after this much silence
_DRAIN_MAX_SECONDS = 10.0  # ... or after this long in all (a writer outside the group)
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class LiveError(Exception):
    """The reviewer command could not be started."""


class Ending(enum.StrEnum):
    EXITED = "exited"
    TIMED_OUT = "timed_out"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How the reviewer's run ended.

    ``exit_code`` is what ``coverage-gate run`` exits with: the reviewer's own code when it
    exited; 128 + N when it was killed by signal N; 124 on our timeout; 128 + N when we were
    interrupted by signal N.
    """

    ending: Ending
    exit_code: int
    returncode: int | None
    signal: int | None = None
    bytes_out: int = 0
    group_ended: bool = False
    stdout_error: str | None = None  # why our stdout stopped taking the reviewer's output
    descendants_ended: int = 0  # descendants (not the reviewer) signalled when it ended

    @property
    def cut_off(self) -> bool:
        """The stream was cut off by us, so its evidence is incomplete whatever it says."""
        return self.ending is not Ending.EXITED


class ChunkRecorder(Protocol):
    """Takes the reviewer's stdout as it flows; ``finish`` builds the evidence document
    (``interrupted`` marks a stream we cut short). ``recording.Recorder`` satisfies it."""

    def feed(self, chunk: bytes) -> None: ...

    def finish(self, interrupted: bool = False) -> EvidenceDocument: ...


class Interrupter:
    """Wakes a running capture from any thread or from a signal handler.

    ``interrupt`` only writes one byte to a pipe, which is safe inside a signal handler.
    """

    def __init__(self) -> None:
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)
        self.signum: int | None = None

    @property
    def fileno(self) -> int:
        return self._read_fd

    def interrupt(self, signum: int = signal.SIGINT) -> None:
        if self.signum is None:
            self.signum = signum
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._write_fd, b"!")

    def close(self) -> None:
        for fd in (self._read_fd, self._write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


@contextlib.contextmanager
def forwarding_signals(interrupter: Interrupter) -> Iterator[None]:
    """Route SIGINT, SIGTERM and SIGHUP to ``interrupter`` while the block runs (main thread
    only): the reviewer is ended and its evidence written instead of us dying mid-stream."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        interrupter.interrupt(signum)

    previous = {sig: signal.signal(sig, handler) for sig in FORWARDED_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _stdin_fd(stream: IO[bytes] | None) -> int | None:
    if stream is None:
        return None
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):  # in-memory streams have no descriptor
        return None


class _StdinPump:
    """Copies our stdin to the reviewer's stdin in a thread; closes it on end of input.

    With a real descriptor the thread waits on it together with a stop pipe, so it never stays
    blocked in a read after the reviewer has gone.
    """

    def __init__(self, source: IO[bytes] | None, target: IO[bytes]) -> None:
        self._source = source
        self._fd = _stdin_fd(source)
        self._target = target
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="coverage-gate-stdin", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"!")
        self._thread.join(timeout=5)
        for fd in (self._stop_r, self._stop_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _read(self) -> bytes | None:
        """The next chunk; ``b""`` at end of input; ``None`` when asked to stop."""
        if self._fd is None:
            assert self._source is not None  # noqa: S101 - a pump without a source is not started
            return self._source.read(CHUNK)
        with selectors.DefaultSelector() as sel:
            sel.register(self._fd, selectors.EVENT_READ)
            sel.register(self._stop_r, selectors.EVENT_READ)
            while True:
                ready = {key.fd for key, _ in sel.select()}
                if self._stop_r in ready:
                    return None
                if self._fd in ready:
                    return os.read(self._fd, CHUNK)

    def _run(self) -> None:
        try:
            while True:
                chunk = self._read()
                if chunk is None:
                    return
                if not chunk:
                    break
                self._target.write(chunk)
                self._target.flush()
        except (BrokenPipeError, ValueError, OSError):
            # The reviewer closed its stdin or exited; its stdout still decides how the run ends.
            return
        finally:
            with contextlib.suppress(BrokenPipeError, ValueError, OSError):
                self._target.close()


# The reviewers and watchdogs this process started and that still run: never taken for a
# reviewer's adopted descendants (``reaper.Tree``), whichever run in this process looks.
_started_lock = threading.Lock()
_started: set[int] = set()


def _own() -> frozenset[int]:
    with _started_lock:
        return frozenset(_started)


def _forget(pid: int) -> None:
    with _started_lock:
        _started.discard(pid)


class _Watchdog:
    """The reviewer's watchdog process (see ``coverage_gate.capture.watchdog``): started once the
    reviewer runs, stood down once its group has ended. One that cannot be started leaves the run as
    it was before watchdogs, never fails it."""

    def __init__(self, pgid: int, grace: float) -> None:
        try:
            with _started_lock:
                self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                    watchdog.command(pgid, grace),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                _started.add(self._proc.pid)
        except OSError:
            self._proc = None

    def stand_down(self) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, ValueError, OSError):
            proc.stdin.write(b".")
            proc.stdin.close()
        try:
            proc.wait(timeout=_KILL_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        _forget(proc.pid)


def _exit_code_of(returncode: int) -> int:
    return _SIGNAL_EXIT_BASE - returncode if returncode < 0 else returncode


def end_process_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM the reviewer's whole process group; SIGKILL whatever is left after ``grace``.

    Returns once the reviewer is reaped and no process of its group is running (or, should one
    survive SIGKILL, after a further bounded wait).
    """
    pgid = proc.pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    if not _wait_group(proc, pgid, grace):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        _wait_group(proc, pgid, _KILL_WAIT_SECONDS)
    proc.wait()


class _Ender:
    """Ends one reviewer's run, once: its process group, and with a ``reaper.Tree`` every
    descendant left (which alone also covers a reviewer that exited by itself)."""

    def __init__(
        self, proc: subprocess.Popen[bytes], tree: reaper.Tree | None, grace: float
    ) -> None:
        self._proc = proc
        self._tree = tree
        self.grace = grace
        self.done = False
        self.group_ended = False
        self.descendants = 0

    def __call__(self, *, cut: bool = True) -> None:
        """``cut``: the run is cut short (timeout, interrupt, a held stdout, an error of ours),
        the reviewer perhaps still running. Otherwise it has exited, and what it left is ended."""
        self.done = True
        if cut:
            self.group_ended = True
        if self._tree is None:
            if cut:
                end_process_group(self._proc, self.grace)
            return
        proc = self._proc
        self.descendants += self._tree.end(self.grace, lambda: proc.poll() is not None)
        proc.wait()


def _wait_group(proc: subprocess.Popen[bytes], pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        proc.poll()
        if proc.returncode is not None and not group_alive(pgid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


class _Tee:
    """Writes each chunk to our stdout as it arrives and hands it to the recorder."""

    def __init__(self, out: IO[bytes], sink: Callable[[bytes], None]) -> None:
        self._out: IO[bytes] | None = out
        self._sink = sink
        self.bytes = 0
        self.error: str | None = None

    def __call__(self, chunk: bytes) -> None:
        self.bytes += len(chunk)
        if self._out is not None:
            try:
                self._out.write(chunk)
                self._out.flush()
            except BrokenPipeError:
                # Whoever read our stdout went away; the evidence is still recorded in full.
                self._out = None
            except (OSError, ValueError) as error:
                # Our stdout cannot take more (a full disk, a closed descriptor): the same, but
                # the run says so when it ends.
                self._out = None
                self.error = getattr(error, "strerror", None) or str(error)
        self._sink(chunk)


def run_and_tee(
    command: Sequence[str],
    *,
    sink: Callable[[bytes], None],
    stdin: IO[bytes] | None,
    stdout: IO[bytes],
    timeout: float | None = None,
    grace: float = DEFAULT_GRACE_SECONDS,
    interrupter: Interrupter | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> RunOutcome:
    """Run ``command`` in its own process group, copying stdin in and stdout out through ``sink``.

    ``stdin=None`` gives the reviewer an empty stdin. Returns when the reviewer has ended and
    its stdout is drained, or when the timeout or an interrupt ended its process group.
    """
    if not command:
        raise LiveError("no command to run: give it after '--'")
    with reaper.adopting() as adopts:
        before = reaper.children() if adopts else frozenset()
        try:
            with _started_lock:
                proc = subprocess.Popen(
                    list(command),
                    stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    cwd=cwd,
                    env=env,
                    process_group=0,
                )
                _started.add(proc.pid)
        except OSError as exc:  # not found, not executable, argument list too long, ...
            raise LiveError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from exc
        try:
            tree = reaper.Tree(proc.pid, _own, before) if adopts else None
            guard = _Watchdog(proc.pid, grace)
            try:
                return _capture(
                    proc, _Ender(proc, tree, grace), stdin, stdout, sink, timeout, interrupter
                )
            finally:
                guard.stand_down()
        finally:
            _forget(proc.pid)


def _capture(
    proc: subprocess.Popen[bytes],
    end: _Ender,
    stdin: IO[bytes] | None,
    stdout: IO[bytes],
    sink: Callable[[bytes], None],
    timeout: float | None,
    interrupter: Interrupter | None,
) -> RunOutcome:
    """Copy the running reviewer's streams until it has ended; end its group when it must, and
    whatever it left when it has ended."""
    assert proc.stdout is not None  # noqa: S101 - requested with stdout=PIPE
    pump = _StdinPump(stdin, proc.stdin) if proc.stdin is not None else None
    tee = _Tee(stdout, sink)
    own_interrupter = interrupter is None
    wake = Interrupter() if interrupter is None else interrupter
    deadline = None if timeout is None else time.monotonic() + timeout
    ending = Ending.EXITED
    try:
        if pump is not None:
            pump.start()
        ending = _copy_out(proc, tee, wake, deadline, end)
        if ending is Ending.EXITED and proc.poll() is None:
            # stdout closed but the reviewer lingers: wait for it, within the deadline
            ending = _wait_leader(proc, wake, deadline)
        if ending is not Ending.EXITED:
            end()
            _drain(proc.stdout, tee)
    finally:
        if proc.poll() is None:  # an error on our side: never leave the reviewer running
            end()
        elif not end.done:  # it exited by itself: end what it left (DESIGN §6 rule 21)
            end(cut=False)
        if pump is not None:
            pump.stop()
        proc.stdout.close()
        if own_interrupter:
            wake.close()
    returncode = proc.wait()
    if ending is Ending.TIMED_OUT:
        code, sig = EXIT_TIMEOUT, None
    elif ending is Ending.INTERRUPTED:
        sig = wake.signum or signal.SIGINT
        code = _SIGNAL_EXIT_BASE + sig
    else:
        code, sig = _exit_code_of(returncode), None
    return RunOutcome(
        ending=ending,
        exit_code=code,
        returncode=returncode,
        signal=sig,
        bytes_out=tee.bytes,
        group_ended=end.group_ended,
        stdout_error=tee.error,
        descendants_ended=end.descendants,
    )


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _copy_out(
    proc: subprocess.Popen[bytes],
    tee: _Tee,
    wake: Interrupter,
    deadline: float | None,
    end: _Ender,
) -> Ending:
    """Copy stdout until end of file, a timeout or an interrupt.

    When the reviewer itself has exited but something it started still holds stdout open, we
    wait the grace period for end of file and then end the group (there is nobody left to
    finish the stream).
    """
    assert proc.stdout is not None  # noqa: S101 - requested with stdout=PIPE
    fd = proc.stdout.fileno()
    leader_gone_at: float | None = None
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        sel.register(wake.fileno, selectors.EVENT_READ)
        while True:
            if wake.signum is not None:
                return Ending.INTERRUPTED
            left = _remaining(deadline)
            if left == 0.0:
                return Ending.TIMED_OUT
            wait = 0.2 if left is None else min(left, 0.2)
            ready = {key.fd for key, _ in sel.select(wait)}
            if fd in ready:
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    return Ending.EXITED
                tee(chunk)
            if proc.poll() is not None:
                now = time.monotonic()
                leader_gone_at = leader_gone_at or now
                if now - leader_gone_at > end.grace:
                    end()
                    _drain(proc.stdout, tee)
                    return Ending.EXITED


def _wait_leader(
    proc: subprocess.Popen[bytes], wake: Interrupter, deadline: float | None
) -> Ending:
    """stdout is closed; wait for the reviewer to exit, within the deadline."""
    while proc.poll() is None:
        if wake.signum is not None:
            return Ending.INTERRUPTED
        left = _remaining(deadline)
        if left == 0.0:
            return Ending.TIMED_OUT
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.1 if left is None else min(left, 0.1))
    return Ending.EXITED


def _drain(stream: IO[bytes], tee: _Tee) -> None:
    """After the group was ended: keep whatever it had already written, within bounds."""
    fd = stream.fileno()
    deadline = time.monotonic() + _DRAIN_MAX_SECONDS
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while time.monotonic() < deadline and sel.select(_DRAIN_QUIET_SECONDS):
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return
            tee(chunk)


@dataclass(frozen=True, slots=True)
class LiveResult:
    outcome: RunOutcome
    evidence: EvidenceDocument


def with_descendants_ended(evidence: EvidenceDocument, outcome: RunOutcome) -> EvidenceDocument:
    """``evidence`` saying how many of the reviewer's descendants the run ended."""
    if not outcome.descendants_ended:
        return evidence
    return evidence.model_copy(update={"descendants_ended": outcome.descendants_ended})


def run_recorded(
    command: Sequence[str],
    *,
    recorder: ChunkRecorder,
    output: Path | None,
    stdin: IO[bytes] | None,
    stdout: IO[bytes],
    timeout: float | None = None,
    grace: float = DEFAULT_GRACE_SECONDS,
    interrupter: Interrupter | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> LiveResult:
    """Run the reviewer, record its stdout, and write the evidence document when it has ended.

    A run we cut short (timeout, interrupt) yields evidence marked incomplete that still holds
    every call already seen. The document is written atomically even then, and only once
    nothing the reviewer started is left running (DESIGN §6 rule 21).
    """
    outcome = run_and_tee(
        command,
        sink=recorder.feed,
        stdin=stdin,
        stdout=stdout,
        timeout=timeout,
        grace=grace,
        interrupter=interrupter,
        cwd=cwd,
        env=env,
    )
    evidence = with_descendants_ended(recorder.finish(interrupted=outcome.cut_off), outcome)
    if output is not None:
        from coverage_gate.edges.files import dump_model, write_atomic  # noqa: PLC0415 - start-up

        try:
            write_atomic(output, dump_model(evidence))
        except OSError as exc:
            raise LiveError(f"evidence {output}: cannot be written ({exc.strerror})") from exc
    return LiveResult(outcome=outcome, evidence=evidence)
