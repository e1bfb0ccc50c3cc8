"""Live capture (``coverage_gate.capture.live``) with small Python child processes.

Each test names the rule it pins: pass-through is byte-exact both ways, the exit code is the
reviewer's, a timeout or an interrupt ends the whole process group (grandchildren included),
and evidence already seen survives a cut-off stream, marked incomplete.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from coverage_gate.adapters import ADAPTERS
from coverage_gate.capture.live import (
    EXIT_TIMEOUT,
    Ending,
    Interrupter,
    LiveError,
    forwarding_signals,
    run_and_tee,
    run_recorded,
)
from coverage_gate.commands.run import RUN_CONTEXT_SETTINGS, run_command
from coverage_gate.contracts.model import Capability, EvidenceDocument
from coverage_gate.record.recording import Recorder, RecordSettings, record_stream

PY = sys.executable
REVISION = "0123456789abcdef0123456789abcdef01234567"


def child(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


def pi_lines(*, complete: bool) -> bytes:
    """A small pi RPC stream: one successful read of ``src/a.py``, one failed read."""
    events: list[dict[str, object]] = [
        {"type": "agent_start"},
        {
            "type": "tool_execution_start",
            "toolCallId": "c1",
            "toolName": "cr_read",
            "args": {"path": "src/a.py"},
        },
        {
            "type": "tool_execution_end",
            "toolCallId": "c1",
            "toolName": "cr_read",
            "result": {"content": [{"type": "text", "text": "x = 1\n"}]},
            "isError": False,
        },
        {
            "type": "tool_execution_start",
            "toolCallId": "c2",
            "toolName": "cr_read",
            "args": {"path": "src/b.py"},
        },
        {
            "type": "tool_execution_end",
            "toolCallId": "c2",
            "toolName": "cr_read",
            "result": {"content": [{"type": "text", "text": "no such file"}]},
            "isError": True,
        },
    ]
    if complete:
        events.append({"type": "agent_end", "messages": []})
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


def settings(tmp_path: Path) -> RecordSettings:
    return RecordSettings(revision=REVISION, repo_root=str(tmp_path))


def pid_alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for_file(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} was not written within {timeout}s")


@pytest.fixture
def pids() -> Iterator[list[int]]:
    """Processes a test learned about; any still alive at the end are killed (and fail it)."""
    found: list[int] = []
    yield found
    leftovers = [pid for pid in found if pid_alive(pid)]
    for pid in leftovers:
        os.kill(pid, signal.SIGKILL)
    assert not leftovers, f"processes left running: {leftovers}"


GRANDCHILD = """
    import os, signal, subprocess, sys, time
    pidfile = sys.argv[1]
    grandchild = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"])
    with open(pidfile + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {grandchild.pid}")
    os.rename(pidfile + ".tmp", pidfile)
    sys.stdout.write("started\\n"); sys.stdout.flush()
    time.sleep(60)
"""


# --- pass-through ------------------------------------------------------------------------------


def test_stdout_passes_through_byte_for_byte_and_reaches_the_recorder(tmp_path: Path) -> None:
    """Every byte the reviewer writes reaches our stdout unchanged and in order, including
    invalid UTF-8, NUL, CR and a last line without a newline, across many chunks."""
    payload = bytes(range(256)) * 4096 + b"\r\n\x00tail without newline"
    source = tmp_path / "payload"
    source.write_bytes(payload)
    out, seen = io.BytesIO(), bytearray()
    outcome = run_and_tee(
        [
            *child(
                """
                import sys
                data = open(sys.argv[1], "rb").read()
                for i in range(0, len(data), 7919):
                    sys.stdout.buffer.write(data[i:i + 7919]); sys.stdout.buffer.flush()
                """
            ),
            str(source),
        ],
        sink=seen.extend,
        stdin=None,
        stdout=out,
    )
    assert outcome.ending is Ending.EXITED
    assert out.getvalue() == payload
    assert bytes(seen) == payload
    assert outcome.bytes_out == len(payload)


def test_stdin_passes_through_byte_for_byte_from_a_descriptor() -> None:
    """Our stdin (a real pipe) reaches the reviewer unchanged; end of input closes its stdin."""
    payload = os.urandom(300_000)
    read_fd, write_fd = os.pipe()

    def feed() -> None:
        with os.fdopen(write_fd, "wb") as writer:
            for i in range(0, len(payload), 10_000):
                writer.write(payload[i : i + 10_000])
                writer.flush()

    feeder = threading.Thread(target=feed)
    feeder.start()
    out = io.BytesIO()
    with os.fdopen(read_fd, "rb", buffering=0) as reader:
        outcome = run_and_tee(
            child("import sys, shutil; shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)"),
            sink=lambda _chunk: None,
            stdin=reader,
            stdout=out,
            timeout=30,
        )
    feeder.join()
    assert outcome.exit_code == 0
    assert out.getvalue() == payload


def test_stdin_passes_through_from_an_in_memory_stream() -> None:
    """A stream without a descriptor is copied too (the CLI test runner gives one)."""
    out = io.BytesIO()
    outcome = run_and_tee(
        child("import sys; sys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])"),
        sink=lambda _chunk: None,
        stdin=io.BytesIO(b"abc\xff\n"),
        stdout=out,
        timeout=30,
    )
    assert outcome.exit_code == 0
    assert out.getvalue() == b"\n\xffcba"


def test_interactive_rpc_round_trips_flow_before_stdin_ends() -> None:
    """A reply is passed through as soon as it is written, so a driver can wait for it before
    sending its next command (pi RPC works this way)."""
    to_child_r, to_child_w = os.pipe()
    from_us_r, from_us_w = os.pipe()
    echo = child(
        """
        import sys
        for line in sys.stdin.buffer:
            sys.stdout.buffer.write(b"got " + line); sys.stdout.buffer.flush()
        """
    )
    with (
        os.fdopen(to_child_r, "rb", buffering=0) as stdin,
        os.fdopen(from_us_w, "wb", buffering=0) as stdout,
        os.fdopen(to_child_w, "wb", buffering=0) as send,
        os.fdopen(from_us_r, "rb", buffering=0) as receive,
    ):
        result: dict[str, object] = {}
        runner = threading.Thread(
            target=lambda: result.update(
                outcome=run_and_tee(
                    echo, sink=lambda _c: None, stdin=stdin, stdout=stdout, timeout=30
                )
            )
        )
        runner.start()
        for word in (b"one\n", b"two\n"):
            send.write(word)
            assert receive.readline() == b"got " + word
        send.close()
        runner.join(timeout=30)
    assert not runner.is_alive()
    outcome = result["outcome"]
    assert getattr(outcome, "exit_code", None) == 0


def test_a_reader_that_goes_away_does_not_stop_recording() -> None:
    """When our stdout's reader closes it, the reviewer's output is still recorded in full."""

    class Closed(io.BytesIO):
        def write(self, _data: object) -> int:
            raise BrokenPipeError

    seen = bytearray()
    outcome = run_and_tee(
        child("import sys; sys.stdout.write('a' * 100000)"),
        sink=seen.extend,
        stdin=None,
        stdout=Closed(),
    )
    assert outcome.exit_code == 0
    assert bytes(seen) == b"a" * 100000


# --- exit codes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("raise SystemExit(0)", 0),
        ("raise SystemExit(3)", 3),
        ("raise SystemExit(255)", 255),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 128 + signal.SIGKILL),
    ],
)
def test_exit_code_is_the_reviewers(code: str, expected: int) -> None:
    """The run exits with the reviewer's code; a reviewer killed by signal N gives 128 + N."""
    outcome = run_and_tee(child(code), sink=lambda _c: None, stdin=None, stdout=io.BytesIO())
    assert outcome.ending is Ending.EXITED
    assert outcome.exit_code == expected


def test_a_command_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    """A missing or non-executable command raises LiveError naming it, not a traceback."""
    with pytest.raises(LiveError, match="no-such-reviewer"):
        run_and_tee(
            [str(tmp_path / "no-such-reviewer")],
            sink=lambda _c: None,
            stdin=None,
            stdout=io.BytesIO(),
        )
    with pytest.raises(LiveError, match="no command"):
        run_and_tee([], sink=lambda _c: None, stdin=None, stdout=io.BytesIO())


# --- ending the process group ------------------------------------------------------------------


def test_timeout_ends_the_whole_process_group(tmp_path: Path, pids: list[int]) -> None:
    """On timeout the reviewer and its grandchild are ended, even one that ignores SIGTERM
    (SIGKILL after the grace period); the exit code is 124."""
    pidfile = tmp_path / "pids"
    out = io.BytesIO()
    started = time.monotonic()
    outcome = run_and_tee(
        [*child(GRANDCHILD), str(pidfile)],
        sink=lambda _c: None,
        stdin=None,
        stdout=out,
        timeout=1.5,
        grace=0.5,
    )
    elapsed = time.monotonic() - started
    pids.extend(int(pid) for pid in wait_for_file(pidfile).split())
    assert outcome.ending is Ending.TIMED_OUT
    assert outcome.exit_code == EXIT_TIMEOUT
    assert outcome.group_ended
    assert out.getvalue() == b"started\n"
    assert elapsed < 10
    assert not [pid for pid in pids if pid_alive(pid)]


def test_interrupt_ends_the_whole_process_group(tmp_path: Path, pids: list[int]) -> None:
    """An interrupt (SIGTERM routed to us) ends reviewer and grandchild; exit code 128 + 15."""
    pidfile = tmp_path / "pids"
    interrupter = Interrupter()

    def interrupt_when_started() -> None:
        wait_for_file(pidfile)
        interrupter.interrupt(signal.SIGTERM)

    trigger = threading.Thread(target=interrupt_when_started)
    trigger.start()
    try:
        outcome = run_and_tee(
            [*child(GRANDCHILD), str(pidfile)],
            sink=lambda _c: None,
            stdin=None,
            stdout=io.BytesIO(),
            timeout=30,
            grace=0.5,
            interrupter=interrupter,
        )
    finally:
        trigger.join()
        interrupter.close()
    pids.extend(int(pid) for pid in wait_for_file(pidfile).split())
    assert outcome.ending is Ending.INTERRUPTED
    assert outcome.exit_code == 128 + signal.SIGTERM
    assert not [pid for pid in pids if pid_alive(pid)]


def test_a_grandchild_holding_stdout_open_does_not_hang_the_run(
    tmp_path: Path, pids: list[int]
) -> None:
    """When the reviewer exits but something it started keeps stdout open, the run waits the
    grace period, ends the group, and returns the reviewer's exit code."""
    pidfile = tmp_path / "pid"
    code = """
        import os, subprocess, sys
        g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(sys.argv[1], "w").write(str(g.pid))
        print("bye", flush=True)
        raise SystemExit(4)
    """
    started = time.monotonic()
    outcome = run_and_tee(
        [*child(code), str(pidfile)],
        sink=lambda _c: None,
        stdin=None,
        stdout=io.BytesIO(),
        grace=0.5,
    )
    pids.append(int(wait_for_file(pidfile)))
    assert time.monotonic() - started < 10
    assert outcome.exit_code == 4
    assert outcome.group_ended
    assert not pid_alive(pids[0])


# --- evidence ----------------------------------------------------------------------------------


def test_live_recording_equals_recording_the_saved_stream(tmp_path: Path) -> None:
    """``run`` records exactly what ``record`` records from the bytes it passed through."""
    stream = pi_lines(complete=True)
    out = io.BytesIO()
    result = run_recorded(
        child(f"import sys; sys.stdout.buffer.write({stream!r})"),
        recorder=Recorder(ADAPTERS["pi-rpc"], settings(tmp_path)),
        output=tmp_path / "evidence.json",
        stdin=None,
        stdout=out,
    )
    assert out.getvalue() == stream
    saved = record_stream(io.BytesIO(out.getvalue()), ADAPTERS["pi-rpc"], settings(tmp_path))
    written = EvidenceDocument.model_validate_json((tmp_path / "evidence.json").read_text())
    assert written == saved == result.evidence
    assert written.stream_complete
    entry = written.file("src/a.py")
    assert entry is not None
    assert entry.reads_succeeded == 1


def test_timeout_keeps_what_was_seen_and_marks_evidence_incomplete(tmp_path: Path) -> None:
    """A stream cut off by the timeout keeps every call already seen, and is incomplete even
    though its completion marker had arrived (we cut it; nothing after is known)."""
    stream = pi_lines(complete=True)
    result = run_recorded(
        child(
            f"""
            import sys, time
            sys.stdout.buffer.write({stream!r}); sys.stdout.buffer.flush()
            time.sleep(60)
            """
        ),
        recorder=Recorder(ADAPTERS["pi-rpc"], settings(tmp_path)),
        output=tmp_path / "evidence.json",
        stdin=None,
        stdout=io.BytesIO(),
        timeout=1.5,
        grace=0.5,
    )
    assert result.outcome.exit_code == EXIT_TIMEOUT
    written = EvidenceDocument.model_validate_json((tmp_path / "evidence.json").read_text())
    assert written == result.evidence
    assert not written.stream_complete
    a_py, b_py = written.file("src/a.py"), written.file("src/b.py")
    assert a_py is not None
    assert a_py.reads_succeeded == 1
    assert b_py is not None
    assert b_py.reads_failed == 1


def test_interrupt_keeps_what_was_seen_and_marks_evidence_incomplete(tmp_path: Path) -> None:
    """An interrupt arriving mid-stream keeps the calls already seen; evidence is incomplete."""
    stream = pi_lines(complete=False)
    interrupter = Interrupter()
    recorder = Recorder(ADAPTERS["pi-rpc"], settings(tmp_path))
    seen = bytearray()

    class InterruptAfterStream:
        def feed(self, chunk: bytes) -> None:
            recorder.feed(chunk)
            seen.extend(chunk)
            if bytes(seen) == stream:
                interrupter.interrupt(signal.SIGINT)

        def finish(self, interrupted: bool = False) -> EvidenceDocument:
            return recorder.finish(interrupted)

    try:
        result = run_recorded(
            child(
                f"""
                import sys, time
                sys.stdout.buffer.write({stream!r}); sys.stdout.buffer.flush()
                time.sleep(60)
                """
            ),
            recorder=InterruptAfterStream(),
            output=tmp_path / "evidence.json",
            stdin=None,
            stdout=io.BytesIO(),
            timeout=30,
            grace=0.5,
            interrupter=interrupter,
        )
    finally:
        interrupter.close()
    assert result.outcome.ending is Ending.INTERRUPTED
    assert result.outcome.exit_code == 128 + signal.SIGINT
    written = EvidenceDocument.model_validate_json((tmp_path / "evidence.json").read_text())
    assert not written.stream_complete
    a_py = written.file("src/a.py")
    assert a_py is not None
    assert a_py.reads_succeeded == 1


def test_subprocess_format_records_capability_none(tmp_path: Path) -> None:
    """``--format subprocess`` only runs the command: evidence unavailable, not absent."""
    result = run_recorded(
        child("print('anything at all')"),
        recorder=Recorder(ADAPTERS["subprocess"], settings(tmp_path)),
        output=tmp_path / "evidence.json",
        stdin=None,
        stdout=io.BytesIO(),
    )
    written = EvidenceDocument.model_validate_json((tmp_path / "evidence.json").read_text())
    assert written.capability is Capability.NONE
    assert written.files == []
    assert result.outcome.exit_code == 0


def test_forwarding_signals_routes_sigterm_and_restores_handlers() -> None:
    """While a run is live, SIGINT/SIGTERM wake it instead of killing us; afterwards the
    previous handlers are back."""
    before = signal.getsignal(signal.SIGTERM)
    interrupter = Interrupter()
    try:
        with forwarding_signals(interrupter):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            assert interrupter.signum == signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) is before
    finally:
        interrupter.close()


def test_reviewer_runs_in_its_own_process_group() -> None:
    """The reviewer leads a process group of its own, so ending it never signals us."""
    out = io.BytesIO()
    run_and_tee(
        child("import os; print(os.getpgrp() == os.getpid())"),
        sink=lambda _c: None,
        stdin=None,
        stdout=out,
    )
    assert out.getvalue() == b"True\n"


# --- the `run` command -------------------------------------------------------------------------


def run_app() -> typer.Typer:
    """The CLI, which registers `run`."""
    from coverage_gate.cli import app  # noqa: PLC0415 - imported where the command is needed

    return app


RUN_ENTRY = [PY, "-m", "coverage_gate", "run"]


def test_run_command_passes_through_and_writes_evidence(tmp_path: Path) -> None:
    """`run` copies stdin to the reviewer and its stdout to ours, writes the evidence document
    it recorded, and exits with the reviewer's code."""
    stream = pi_lines(complete=True)
    out = tmp_path / "evidence.json"
    reviewer = child(
        f"""
        import sys
        sys.stdin.buffer.read()
        sys.stdout.buffer.write({stream!r}); sys.stdout.buffer.flush()
        raise SystemExit(6)
        """
    )
    result = CliRunner().invoke(
        run_app(),
        ["run", "--format", "pi-rpc", "-o", str(out), "--revision", REVISION,
         "--repo-root", str(tmp_path), "--", *reviewer],
        input=b"command\n",
    )  # fmt: skip
    assert result.exit_code == 6, result.stderr
    assert result.stdout_bytes == stream
    written = EvidenceDocument.model_validate_json(out.read_text())
    assert written == record_stream(io.BytesIO(stream), ADAPTERS["pi-rpc"], settings(tmp_path))
    assert "evidence written to" in result.stderr


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (
            ["--format", "no-such-format", "-o", "EV", "--revision", "r"],
            "--format 'no-such-format'",
            2,
        ),
        (["--revision", "r"], "--output is required", 2),
        (["--revision", "r", "-o", "/no/such/folder/ev.json"], "does not exist", 3),
        (["--revision", "r", "-o", "HERE"], "is a directory", 3),
        (["--revision", "r", "-o", "EV", "--diff", "no-such.diff"], "no such file", 3),
    ],
)
def test_run_command_refuses_bad_options_before_starting(
    tmp_path: Path, args: list[str], message: str, code: int
) -> None:
    """Bad options are a one-line error, the reviewer is never started: a missing or unknown
    option value is a usage error (exit 2), a file that cannot be used bad input (exit 3)."""
    marker = tmp_path / "started"
    places = {"EV": str(tmp_path / "ev.json"), "HERE": str(tmp_path)}
    args = [places.get(arg, arg) for arg in args]
    result = CliRunner().invoke(
        run_app(),
        ["run", *args, "--", *child(f"open({str(marker)!r}, 'w')")],
    )
    assert result.exit_code == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not marker.exists()


def test_run_command_without_revision_is_a_usage_error(tmp_path: Path) -> None:
    """A run without --revision is a usage error (exit 2), and the reviewer is never started."""
    marker = tmp_path / "started"
    result = CliRunner().invoke(
        run_app(),
        ["run", "-o", str(tmp_path / "ev.json"), "--", *child(f"open({str(marker)!r}, 'w')")],
    )
    assert result.exit_code == 2
    assert "--revision" in result.stderr
    assert not marker.exists()


def test_run_command_reports_a_command_that_cannot_start(tmp_path: Path) -> None:
    """A reviewer that cannot be started is bad input (exit 3) with a clear message."""
    result = CliRunner().invoke(
        run_app(),
        ["run", "-o", str(tmp_path / "ev.json"), "--revision", "r", "--", "/no/such/reviewer"],
    )
    assert result.exit_code == 3
    assert "cannot start '/no/such/reviewer'" in result.stderr


def test_sigint_to_run_ends_the_reviewer_and_keeps_its_evidence(
    tmp_path: Path, pids: list[int]
) -> None:
    """SIGINT to `coverage-gate run` ends the reviewer's process group, writes the evidence seen
    so far marked incomplete, and exits 130."""
    stream = pi_lines(complete=False)
    pidfile = tmp_path / "pid"
    out = tmp_path / "evidence.json"
    reviewer = child(
        f"""
        import os, sys, time
        sys.stdout.buffer.write({stream!r}); sys.stdout.buffer.flush()
        open({str(pidfile)!r}, "w").write(str(os.getpid()))
        time.sleep(60)
        """
    )
    proc = subprocess.Popen(
        [*RUN_ENTRY, "-o", str(out), "--revision", REVISION, "--repo-root", str(tmp_path),
         "--grace", "1", "--", *reviewer],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        process_group=0,
    )  # fmt: skip
    try:
        pids.append(int(wait_for_file(pidfile)))
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, stderr
    assert stdout == stream
    assert b"interrupted" in stderr
    written = EvidenceDocument.model_validate_json(out.read_text())
    assert not written.stream_complete
    a_py = written.file("src/a.py")
    assert a_py is not None
    assert a_py.reads_succeeded == 1
    assert not pid_alive(pids[0])


def test_evidence_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    """If the evidence file cannot be written when the reviewer ends, the run says so (and the
    caller maps it to bad input) instead of failing with a traceback."""
    folder = tmp_path / "gone"
    folder.mkdir()
    with pytest.raises(LiveError, match="cannot be written"):
        run_recorded(
            child(f"import shutil; shutil.rmtree({str(folder)!r})"),
            recorder=Recorder(ADAPTERS["subprocess"], settings(tmp_path)),
            output=folder / "evidence.json",
            stdin=None,
            stdout=io.BytesIO(),
        )


def test_sighup_is_forwarded_too() -> None:
    """A hang-up (the terminal went away) ends the reviewer like SIGINT and SIGTERM do."""
    interrupter = Interrupter()
    try:
        with forwarding_signals(interrupter):
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(0.05)
        assert interrupter.signum == signal.SIGHUP
    finally:
        interrupter.close()


@pytest.mark.parametrize("separator", [["--"], []])
def test_the_reviewers_own_options_are_never_taken_for_ours(
    tmp_path: Path, separator: list[str]
) -> None:
    """With RUN_CONTEXT_SETTINGS, options after the reviewer's command are the reviewer's, with
    or without '--': its -o and --timeout reach it, and our evidence goes where we said."""
    local = typer.Typer()
    local.command("run", context_settings=RUN_CONTEXT_SETTINGS)(run_command)
    local.command("formats")(lambda: None)
    out = tmp_path / "evidence.json"
    echo = child("import sys; print(' '.join(sys.argv[1:]))")
    result = CliRunner().invoke(
        local,
        ["run", "--format", "subprocess", "-o", str(out), "--revision", "r",
         *separator, *echo, "-o", "elsewhere", "--timeout", "5"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "-o elsewhere --timeout 5\n"
    assert out.exists()
    assert not (tmp_path / "elsewhere").exists()


def test_run_exports_its_spans_like_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` exports the invoke_agent/execute_tool spans of what it recorded, as `record` does:
    read back with the otlp-json format they give the same per-file evidence."""
    folder = tmp_path / "telemetry"
    monkeypatch.setenv("COVERAGE_GATE_TELEMETRY_DIR", str(folder))
    stream = pi_lines(complete=True)
    out = tmp_path / "evidence.json"
    result = CliRunner().invoke(
        run_app(),
        ["run", "-o", str(out), "--revision", REVISION, "--repo-root", str(tmp_path), "--",
         *child(f"import sys; sys.stdout.buffer.write({stream!r})")],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (traces,) = folder.glob("traces-*.jsonl")
    assert "execute_tool cr_read" in traces.read_text()
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    back = CliRunner().invoke(
        run_app(),
        ["record", str(traces), "-f", "otlp-json", "--revision", REVISION,
         "--repo-root", str(tmp_path), "-o", str(tmp_path / "back.json")],
    )  # fmt: skip
    assert back.exit_code == 0, back.stderr
    run_doc = json.loads(out.read_text())
    back_doc = json.loads((tmp_path / "back.json").read_text())
    assert back_doc["files"] == run_doc["files"]
    assert run_doc["files"]


def test_run_warns_when_the_stream_looks_like_another_format(tmp_path: Path) -> None:
    """A pi stream run with --format claude-code records no calls, and `run` says what the
    stream looks like instead of leaving a silently empty evidence document."""
    stream = pi_lines(complete=True)
    result = CliRunner().invoke(
        run_app(),
        ["run", "-f", "claude-code", "-o", str(tmp_path / "ev.json"), "--revision", REVISION,
         "--", *child(f"import sys; sys.stdout.buffer.write({stream!r})")],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "warning: 0 tool calls recognised in 6 lines: is this a pi-rpc stream?" in result.stderr


def test_run_timeout_exits_124_with_incomplete_evidence(tmp_path: Path) -> None:
    """`run --timeout` ends a reviewer that never finishes: exit 124, a message on stderr, and
    the evidence written with what was seen, marked incomplete."""
    stream = pi_lines(complete=True)
    out = tmp_path / "evidence.json"
    reviewer = child(
        f"""
        import sys, time
        sys.stdout.buffer.write({stream!r}); sys.stdout.buffer.flush()
        time.sleep(60)
        """
    )
    result = CliRunner().invoke(
        run_app(),
        ["run", "-o", str(out), "--revision", REVISION, "--repo-root", str(tmp_path),
         "--timeout", "1", "--grace", "0.5", "--", *reviewer],
    )  # fmt: skip
    assert result.exit_code == EXIT_TIMEOUT
    assert "timed out after 1s" in result.stderr
    assert result.stdout_bytes == stream
    written = EvidenceDocument.model_validate_json(out.read_text())
    assert not written.stream_complete
    a_py = written.file("src/a.py")
    assert a_py is not None
    assert a_py.reads_succeeded == 1
