"""Bad input is exit 3 (or 4 for configuration) with one line naming what is wrong, never exit 5.

Run as real processes: a closed stdin or stdout (``0<&-``, ``>&-``) and a stdout on a full disk
(``>/dev/full``) exist only for a real process. Each case checks the exit code, that the error is
one line naming the file and the field or line, that no traceback (or the interpreter's own
"Exception ignored" at exit) is printed, and that nothing was half-written.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from coverage_gate.edges.files import dump_model
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.flags import disk_copy_path, settings_from_env
from coverage_gate.rollout.report import Loaded
from coverage_gate.rollout.report.otlp import read_lines
from tests.conftest import CHANGED_FILES, DATA, record_bytes

pytestmark = pytest.mark.slow

PI = DATA / "pi-rpc" / "pi_b_overclaim.jsonl"
SNAPSHOT = Path(__file__).parents[2] / "coverage_gate" / "examples" / "flags.snapshot.json"
FULL_DISK = Path("/dev/full")
BIG = "7" * 5000  # past Python's 4,300-digit limit on reading an integer
DEEP = "[" * 100_000 + "]" * 100_000  # past any parser's recursion limit
LOCATED = re.compile(r"at line \d+ column \d+")


def run(
    args: Sequence[str],
    cwd: Path,
    *,
    close: str | None = None,
    full: bool = False,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """``coverage-gate ARGS`` in a process of its own; ``close`` is "stdin" or "stdout"."""
    command = [sys.executable, "-m", "coverage_gate", *args]
    if close is not None:
        redirect = {"stdin": "0<&-", "stdout": ">&-"}[close]
        command = ["sh", "-c", f'exec "$@" {redirect}', "sh", *command]
    environ = {**os.environ, "OTEL_SDK_DISABLED": "true", **(env or {})}
    with contextlib.ExitStack() as stack:
        stdout = stack.enter_context(FULL_DISK.open("wb")) if full else subprocess.PIPE
        return subprocess.run(
            command,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=environ,
            timeout=120,
            check=False,
        )


def error_line(
    done: subprocess.CompletedProcess[bytes], code: int, *names: str, located: bool = False
) -> str:
    """The one error line; it names each of ``names`` (and, ``located``, a line and column).
    Nothing else went wrong on stderr."""
    stderr = done.stderr.decode()
    assert done.returncode == code, stderr
    assert "Traceback" not in stderr
    assert "Exception ignored" not in stderr
    notes = ("coverage-gate: repository root ", "coverage-gate: no repository root ")
    errors = [
        line
        for line in stderr.splitlines()
        if line.startswith("coverage-gate") and not line.startswith(notes)
    ]
    assert len(errors) == 1, stderr
    for name in names:
        assert name in errors[0], errors[0]
    assert not located or LOCATED.search(errors[0]), errors[0]
    return errors[0]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "changed.txt").write_text("\n".join(CHANGED_FILES) + "\n")
    claims = {"schema_version": 1, "agent_id": "b", "inspected_files": CHANGED_FILES}
    (tmp_path / "claims.json").write_text(json.dumps(claims))
    (tmp_path / "e.json").write_text(dump_model(record_bytes(PI.read_bytes(), revision="r")))
    (tmp_path / "telemetry").mkdir()
    return tmp_path


def reconcile(*extra: str) -> list[str]:
    return [
        "reconcile",
        "--repo",
        "o/r",
        "--revision",
        "r",
        "--verdict",
        "approve",
        "--mode",
        "enforce",
        "--repo-root",
        "/home/user/repo",
        *extra,
    ]


RECONCILE = reconcile("--changed", "changed.txt", "--claims", "claims.json", "--evidence", "e.json")

# Every command that writes to stdout, with what it writes.
WRITERS: dict[str, list[str]] = {
    "record": ["record", str(PI), "-f", "pi-rpc", "--revision", "r"],
    "reconcile": RECONCILE,
    "schema": ["schema"],
    "formats": ["formats"],
    "demo": ["demo"],
    "flags": ["flags", "--repo", "o/r"],
    "report": ["report", "--telemetry-dir", "telemetry"],
}


def leftovers(folder: Path, before: set[str]) -> set[str]:
    return {path.name for path in folder.iterdir()} - before


# --- closed stdin, closed stdout, full disk -------------------------------------------------


@pytest.mark.parametrize("command", list(WRITERS))
def test_a_closed_stdout_is_bad_input_before_any_work(work: Path, command: str) -> None:
    before = {path.name for path in work.iterdir()}
    done = run(WRITERS[command], work, close="stdout")
    error_line(done, ExitCode.BAD_INPUT, "stdout is closed")
    assert leftovers(work, before) == set()


def test_a_closed_stdout_writes_no_decision_file(work: Path) -> None:
    """``reconcile --decision-json`` with stdout closed fails before the decision exists
    anywhere; with ``-o`` the output goes to the file, and stdout is not needed."""
    before = {path.name for path in work.iterdir()}
    done = run([*RECONCILE, "--decision-json", "decision.json"], work, close="stdout")
    error_line(done, ExitCode.BAD_INPUT, "stdout is closed", "decision")
    assert leftovers(work, before) == set()
    done = run([*RECONCILE, "--format", "json", "-o", "decision.json"], work, close="stdout")
    assert done.returncode == 0, done.stderr
    assert b'"schema": "coverage-gate/decision"' in (work / "decision.json").read_bytes()


def test_run_with_a_closed_stdout_starts_nothing(work: Path) -> None:
    args = ["run", "-o", "run.json", "--revision", "r", "--", "touch", "started"]
    done = run(args, work, close="stdout")
    error_line(done, ExitCode.BAD_INPUT, "stdout is closed", "reviewer's output")
    assert not (work / "run.json").exists()
    assert not (work / "started").exists()


@pytest.mark.skipif(not FULL_DISK.exists(), reason="no /dev/full here")
@pytest.mark.parametrize("command", list(WRITERS))
def test_stdout_on_a_full_disk_is_bad_input(work: Path, command: str) -> None:
    before = {path.name for path in work.iterdir()}
    done = run(WRITERS[command], work, full=True)
    error_line(done, ExitCode.BAD_INPUT, "stdout: cannot write", "No space left on device")
    assert leftovers(work, before) == set()


@pytest.mark.skipif(not FULL_DISK.exists(), reason="no /dev/full here")
def test_run_on_a_full_disk_keeps_recording_and_says_so(work: Path) -> None:
    """``run``'s exit code is the reviewer's; its evidence is still written, and stderr says the
    reviewer's output could not be passed on."""
    args = ["run", "-o", "run.json", "--revision", "r", "--", "cat", str(PI)]
    done = run(args, work, full=True)
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert "stdout: cannot write the reviewer's output (No space left on device)" in stderr
    assert json.loads((work / "run.json").read_text())["counters"]["calls"] == 5


def test_record_from_a_closed_stdin_is_bad_input(work: Path) -> None:
    done = run(["record", "-f", "pi-rpc", "--revision", "r", "-o", "x.json"], work, close="stdin")
    error_line(done, ExitCode.BAD_INPUT, "stdin is closed", "stream")
    assert not (work / "x.json").exists()


def test_changed_list_from_a_closed_stdin_is_bad_input(work: Path) -> None:
    args = reconcile("--changed", "-", "--claims", "claims.json")
    done = run(args, work, close="stdin")
    error_line(done, ExitCode.BAD_INPUT, "stdin is closed", "changed-file list")
    assert done.stdout == b""


def test_closed_streams_a_command_does_not_use_are_no_error(work: Path) -> None:
    """``record FILE -o OUT`` needs neither stdin nor stdout."""
    args = ["record", str(PI), "-f", "pi-rpc", "--revision", "r", "-o", "y.json"]
    assert run(args, work, close="stdout").returncode == 0
    assert json.loads((work / "y.json").read_text())["revision"] == "r"
    assert run(RECONCILE, work, close="stdin").returncode == 0


# --- numbers past 4,300 digits, nesting 100,000 deep -----------------------------------------


def _with(document: str, extra: str) -> str:
    """``document`` (a JSON object) with one more member."""
    return document.rstrip().removesuffix("}") + f', "extra": {extra}}}'


@pytest.mark.parametrize(("value", "problem"), [(BIG, "number too long"), (DEEP, "too deeply")])
@pytest.mark.parametrize("role", ["claims", "evidence", "bundle"])
def test_json_inputs_past_the_parsers_limits_are_bad_input(
    work: Path, role: str, value: str, problem: str
) -> None:
    name = f"{role}.bad.json"
    if role == "claims":
        (work / name).write_text(_with((work / "claims.json").read_text(), value))
        args = reconcile("--changed", "changed.txt", "--claims", name)
    elif role == "evidence":
        (work / name).write_text(_with((work / "e.json").read_text(), value))
        args = reconcile("--changed", "changed.txt", "--claims", "claims.json", "--evidence", name)
    else:
        bundle = json.dumps({"schema_version": 1, "reviewers": [{"claims": "claims.json"}]})
        (work / name).write_text(_with(bundle, value))
        args = reconcile("--changed", "changed.txt", "--bundle", name)
    done = run(args, work)
    error_line(done, ExitCode.BAD_INPUT, name, problem, located=True)
    assert done.stdout == b""


@pytest.mark.parametrize(("value", "problem"), [(BIG, "number too long"), (DEEP, "too deeply")])
def test_a_flags_snapshot_past_the_limits_is_bad_configuration(
    work: Path, value: str, problem: str
) -> None:
    (work / "flags.json").write_text(_with(SNAPSHOT.read_text(), value))
    args = reconcile("--changed", "changed.txt", "--claims", "claims.json", "--flags", "flags.json")
    args.remove("--mode")
    args.remove("enforce")
    done = run(args, work)
    error_line(done, ExitCode.BAD_CONFIG, "flags snapshot flags.json", problem, located=True)
    assert done.stdout == b""
    flags = run(["flags", "--repo", "o/r", "--flags", "flags.json"], work)
    error_line(flags, ExitCode.BAD_CONFIG, "flags snapshot flags.json", problem)
    fallback = run([*args, "--flags-on-error", "fallback", "--format", "json"], work)
    assert fallback.returncode == 0, fallback.stderr
    assert json.loads(fallback.stdout)["mode_source"] == "fallback"
    said = fallback.stderr.decode()
    assert "snapshot unusable" in said
    assert problem in said


@pytest.mark.parametrize(("value", "problem"), [(BIG, "number too long"), (DEEP, "too deeply")])
def test_a_disk_copy_past_the_limits_falls_back_and_says_why(
    work: Path, value: str, problem: str
) -> None:
    """The server is down, and its last good answer on disk cannot be read: the fallback mode
    answers, and says why."""
    env = {
        "UNLEASH_URL": "http://127.0.0.1:9/api",
        "COVERAGE_GATE_FLAGS_DISK_COPY": str(work / "copy.json"),
    }
    kept = disk_copy_path(settings_from_env(env))
    assert kept is not None
    kept.write_text(_with(SNAPSHOT.read_text(), value))
    done = run(["flags", "--repo", "o/r", "--format", "json"], work, env=env)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["source"] == "fallback"
    assert "disk copy unusable" in answer["detail"]
    assert problem in answer["detail"]


def test_report_skips_and_counts_telemetry_lines_past_the_limits(work: Path) -> None:
    lines = [_with('{"resourceSpans": []}', BIG), _with('{"resourceSpans": []}', DEEP)]
    (work / "telemetry" / "t.jsonl").write_text("\n".join(lines) + "\n")
    done = run(["report", "--telemetry-dir", "telemetry", "--format", "json"], work)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["input"]["malformed_lines"] == 2
    assert [(x["line"], x["detail"]) for x in report["input"]["malformed_sample"]] == [
        (1, "a number too long to read (over 4,300 digits)"),
        (2, "JSON nested too deeply to read"),
    ]
    text = run(["report", "--telemetry-dir", "telemetry"], work).stdout.decode()
    assert "2 malformed lines" in text
    assert "t.jsonl:1: a number too long" in text


# --- a changed-file list that is not UTF-8 ---------------------------------------------------


def test_a_changed_list_that_is_not_utf8_names_its_line(work: Path) -> None:
    (work / "latin1.txt").write_bytes("README.md\nsrc/caf\xe9.py\n".encode("latin-1"))
    done = run(reconcile("--changed", "latin1.txt", "--claims", "claims.json"), work)
    error_line(done, ExitCode.BAD_INPUT, "latin1.txt", "line 2", "not UTF-8")
    assert done.stdout == b""
    piped = run(
        reconcile("--changed", "-", "--claims", "claims.json"),
        work,
        stdin=(work / "latin1.txt").read_bytes(),
    )
    error_line(piped, ExitCode.BAD_INPUT, "(stdin)", "line 2", "not UTF-8")


def test_report_counts_telemetry_values_of_the_wrong_kind_as_malformed() -> None:
    """A double that is no number, or not finite where an integer is needed, is a bad line."""

    def span(value: str) -> str:
        attribute = f'{{"key": "d", "value": {{"doubleValue": {value}}}}}'
        body = f'{{"name": "reconcile o/r", "attributes": [{attribute}]}}'
        return f'{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{body}]}}]}}]}}'

    def error_point(value: str) -> str:
        point = f'{{"asDouble": {value}}}'
        metric = f'{{"name": "coverage_gate.errors", "sum": {{"dataPoints": [{point}]}}}}'
        return f'{{"resourceMetrics": [{{"scopeMetrics": [{{"metrics": [{metric}]}}]}}]}}'

    lines = [span('"abc"'), span("{}"), error_point("NaN"), error_point("Infinity"), span("1.5")]
    loaded = Loaded()
    read_lines(loaded, "t.jsonl", lines)
    assert [x.line for x in loaded.malformed_sample] == [1, 2, 3, 4]
    assert loaded.lines == 5


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_changed_file_name_from_git_that_is_not_utf8_is_bad_input(tmp_path: Path) -> None:
    """No decision can name it (JSON is UTF-8), so it is said, never a crash at output."""
    identity = ["-c", "user.email=t@example.com", "-c", "user.name=t"]

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(tmp_path), *identity, *args], check=True, capture_output=True
        )
        return done.stdout.decode().strip()

    git("init", "-q")
    git("commit", "-q", "--allow-empty", "-m", "one")
    base = git("rev-parse", "HEAD")
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.py"), "wb") as handle:
        handle.write(b"x\n")
    git("add", "-A")
    git("commit", "-q", "-m", "two")
    head = git("rev-parse", "HEAD")
    (tmp_path / "claims.json").write_text('{"schema_version": 1, "agent_id": "b"}')
    args = reconcile("--base", base, "--head", head, "--claims", "claims.json", "--format", "json")
    args[args.index("--repo-root") + 1] = str(tmp_path)
    args[args.index("--revision") + 1] = head  # the repository holds it (DESIGN §6 rule 22)
    done = run(args, tmp_path)
    error_line(done, ExitCode.BAD_INPUT, "git diff", "caf\ufffd.py", "not UTF-8")
    assert done.stdout == b""
