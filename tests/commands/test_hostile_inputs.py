"""Nothing a reviewer or an unlucky operator does to an input may turn the gate.

A generated, seeded suite (``tests/_support/hostile.py``) damages every input file coverage-gate reads:
the streams of every adapter, reviewer claims, evidence documents, review bundles, the flags
snapshot and its disk copy, the changed-files list and the telemetry lines ``report`` reads.
Every case must:

(a) end with a documented exit code (0, 1 only with ``--exit-code``, 2, 3, 4; never 5) and
    no traceback on stderr;
(b) leave no partial output: a file named with ``-o`` is absent or a complete, valid document
    (and is there when the command succeeded), no stray temporary files sit beside it, and a
    document printed on stdout is whole;
(c) for damage to an honest reviewer's real captured stream (not a change of what happened):
    keep each claimed file ``verified`` or make it ``unknown``, never ``unsupported``, and keep
    its Approve under ``--mode enforce``.

The bulk runs in-process through typer's CliRunner; a small sample runs as real processes, for
real exit codes and stderr. A failure names the seed and each failing case's id, grouped by
cause; ``python -m tests._support.hostile CASE_ID DIR`` rebuilds one case and prints its commands, and
``COVERAGE_GATE_HOSTILE_CASE=CASE_ID`` runs only that case.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import typer.main
import typer.testing
from pydantic import ValidationError
from typer.testing import CliRunner

from coverage_gate.adapters import ADAPTERS
from coverage_gate.cli import app
from coverage_gate.contracts.model import DecisionDocument, EvidenceDocument, FileStatus, Verdict
from coverage_gate.edges.files import load_evidence
from coverage_gate.errors import CoverageGateError
from tests._support import hostile

DOCUMENTED = frozenset({0, 2, 3, 4})
ONLY = os.environ.get("COVERAGE_GATE_HOSTILE_CASE")
TRACEBACK = "Traceback (most recent call last)"
EXAMPLES_PER_CAUSE = 2


# --- running one case --------------------------------------------------------------------------


@dataclass
class Ran:
    """What one command did."""

    code: int
    stdout: bytes
    stderr: str
    crash: str | None = None  # an exception that escaped: the real process exits 5
    logged: list[str] = field(default_factory=list)  # tracebacks logging would print


@dataclass
class Failure:
    case_id: str
    cause: str
    detail: str
    mutations: list[str]
    commands: list[str]


class _LoggedTracebacks(logging.Handler):
    """Log records with a traceback that a real process would print on stderr: nothing below
    the root logger handles them, so Python's last-resort handler would."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info is None or _handled_below_root(record.name):
            return
        error = record.exc_info[1]
        self.found.append(
            f"{record.name}: {record.getMessage()[:120]} ({type(error).__name__}: {error})"
        )


def _handled_below_root(name: str) -> bool:
    logger: logging.Logger | None = logging.getLogger(name)
    while logger is not None and logger is not logging.getLogger():
        if logger.handlers or not logger.propagate:
            return True
        logger = logger.parent
    return False


@pytest.fixture
def logged() -> Iterator[_LoggedTracebacks]:
    handler = _LoggedTracebacks()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Where cases write their files. Outputs are written atomically, each with an fsync: a
    memory-backed folder, where the system has one, keeps thousands of cases fast."""
    shm = Path("/dev/shm")
    memory = shm.is_dir() and os.access(shm, os.W_OK)
    folder = (
        Path(tempfile.mkdtemp(prefix="coverage-gate-hostile-", dir=shm)) if memory else tmp_path
    )
    monkeypatch.setenv("COVERAGE_GATE_TELEMETRY_DIR", str(folder / "telemetry"))
    try:
        yield folder
    finally:
        if memory:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    # Building the click command from the typer app takes most of an in-process run's time; the
    # app does not change between cases, so it is built once.
    monkeypatch.setattr(
        typer.testing, "_get_command", functools.cache(typer.main.get_command), raising=False
    )
    return CliRunner()


def _where(error: BaseException) -> str:
    """The innermost frame of coverage-gate's own code the exception passed through."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if "/coverage_gate/" in f.filename or "/adapters/" in f.filename]
    if not frames:
        return "?"
    frame = (ours or frames)[-1]
    return f"{Path(frame.filename).parent.name}/{Path(frame.filename).name}:{frame.lineno}"


def invoke(runner: CliRunner, step: hostile.Step, logged: _LoggedTracebacks) -> Ran:
    logged.found.clear()
    result = runner.invoke(app, step.args, input=step.stdin, env=step.env)
    crash = None
    error = result.exception
    if error is not None and not isinstance(error, SystemExit):
        crash = f"{type(error).__name__} at {_where(error)}: {str(error)[:160]}"
    return Ran(
        code=5 if crash else result.exit_code,
        stdout=result.stdout_bytes,
        stderr=result.stderr,
        crash=crash,
        logged=list(logged.found),
    )


def check_step(step: hostile.Step, ran: Ran) -> list[tuple[str, str]]:
    """(a) and (b) for one command: (cause, detail) pairs."""
    problems: list[tuple[str, str]] = []
    command = step.args[0]
    if ran.crash:
        cause = ran.crash.split(":")[0]
        problems.append((f"{command}: exit 5, uncaught {cause}", ran.crash))
    elif ran.code not in DOCUMENTED | ({1} if step.exit_code_flag else set()):
        problems.append((f"{command}: undocumented exit {ran.code}", ran.stderr[-300:]))
    if TRACEBACK in ran.stderr:
        last = ran.stderr.strip().splitlines()[-1][:160]
        problems.append((f"{command}: traceback on stderr", last))
    for entry in ran.logged:
        problems.append((f"{command}: traceback logged to stderr ({entry.split(':')[0]})", entry))
    for path, contract in step.outputs.items():
        problem = _invalid_output(Path(path), contract)
        if problem is not None:
            problems.append((f"{command}: partial or invalid -o output", problem))
        elif ran.code == 0 and not Path(path).exists():
            problems.append((f"{command}: exit 0 without its -o output", path))
    if step.stdout_contract and ran.code in (0, 1) and not ran.crash:
        problem = _invalid_text(ran.stdout, step.stdout_contract)
        if problem is not None:
            problems.append((f"{command}: stdout is not a whole {step.stdout_contract}", problem))
    return problems


def _invalid_output(path: Path, contract: str) -> str | None:
    if not path.exists():
        return None
    if contract == "evidence":
        try:
            load_evidence(path)
        except CoverageGateError as error:
            return str(error)[:200]
        return None
    return _invalid_text(path.read_bytes(), contract)


def _invalid_text(data: bytes, contract: str) -> str | None:
    model = EvidenceDocument if contract == "evidence" else DecisionDocument
    try:
        model.model_validate_json(data)
    except ValidationError as error:
        return f"{len(data)} bytes: {str(error).splitlines()[0][:160]}"
    return None


def check_honest(built: hostile.Built, ran: Ran) -> list[tuple[str, str]]:
    """(c): every claimed file verified or unknown, and the Approve stands in enforce mode."""
    assert built.out_dir is not None
    decision_path = built.out_dir / "decision.json"
    if ran.crash or ran.code not in (0, 1) or not decision_path.exists():
        return [(f"honest: reconcile gave no decision (exit {ran.code})", ran.stderr[-200:])]
    decision = DecisionDocument.model_validate_json(decision_path.read_bytes())
    statuses = {f.path: f.status for r in decision.reviewers for f in r.files}
    evidence_path = built.out_dir / "evidence.json"
    evidence = load_evidence(evidence_path) if evidence_path.exists() else None
    unsupported = [
        f"{path}: {statuses.get(path)}"
        for path in built.honest
        if statuses.get(path) not in (FileStatus.VERIFIED, FileStatus.UNKNOWN)
    ]
    if unsupported:
        why = _why(evidence, unsupported[0].split(":")[0])
        return [(f"honest: a claim became unsupported, {why}", "; ".join(unsupported))]
    if decision.verdict_out is not Verdict.APPROVE:
        return [("honest: the Approve did not stand", f"verdict_out {decision.verdict_out}")]
    return []


def _why(evidence: EvidenceDocument | None, path: str) -> str:
    """What the evidence says about a file found unsupported: the cause to look for."""
    if evidence is None:
        return "no evidence document"
    entry = evidence.file(path)
    if entry is not None and entry.reads_failed and not entry.reads_succeeded:
        return "its read counted as failed"
    kinds = sorted({issue.kind.value for issue in evidence.issues})
    return "no read recorded; issues: " + (", ".join(kinds) or "none")


def run_case(
    runner: CliRunner, logged: _LoggedTracebacks, case_id: str, folder: Path
) -> list[Failure]:
    built = hostile.build(case_id, folder)
    problems: list[tuple[str, str]] = []
    ran: Ran | None = None
    for step in built.steps:
        if step.optional_evidence and not Path(step.optional_evidence).exists():
            at = step.args.index("--evidence")
            del step.args[at : at + 2]
        ran = invoke(runner, step, logged)
        problems += check_step(step, ran)
    assert ran is not None
    if built.out_dir is not None:
        expected = {Path(path).name for step in built.steps for path in step.outputs}
        stray = sorted(p.name for p in built.out_dir.iterdir() if p.name not in expected)
        if stray:
            problems.append(("stray files beside the output", ", ".join(stray)))
    if built.honest and not ran.crash:
        problems += check_honest(built, ran)
    commands = [hostile.command_line(step, folder) for step in built.steps]
    return [
        Failure(case_id, _cause(cause, built), detail, built.mutations, commands)
        for cause, detail in problems
    ]


def _cause(cause: str, built: hostile.Built) -> str:
    """Group by what went wrong and which kind of damage or change led there."""
    kinds = sorted(
        {m.split(" ")[0] for m in built.mutations if not m.startswith(("from ", "with "))}
    )
    return f"{cause} [after {', '.join(kinds) or 'nothing'}]"


def summary(group: str, failures: list[Failure], total: int) -> str:
    by_cause: dict[str, list[Failure]] = defaultdict(list)
    for failure in failures:
        by_cause[failure.cause].append(failure)
    cases = len({f.case_id for f in failures})
    lines = [
        f"{cases} of {total} hostile cases of group {group} failed (seed {hostile.SEED}).",
        "Rebuild one: python -m tests._support.hostile CASE_ID DIR; run one: "
        "COVERAGE_GATE_HOSTILE_CASE=CASE_ID pytest tests/commands/test_hostile_inputs.py",
    ]
    for cause, found in sorted(by_cause.items(), key=lambda item: (-len(item[1]), item[0])):
        lines.append(f"\n* {cause}: {len({f.case_id for f in found})} case(s)")
        for failure in found[:EXAMPLES_PER_CAUSE]:
            lines.append(f"  - {failure.case_id}: {'; '.join(failure.mutations)[:300]}")
            lines.append(f"    what happened: {failure.detail[:300]}")
            lines += [f"    $ {command[:400]}" for command in failure.commands]
    return "\n".join(lines)


def run_group(
    runner: CliRunner, logged: _LoggedTracebacks, group: hostile.Group, tmp_path: Path
) -> None:
    ids = [case for case in hostile.case_ids(group) if ONLY in (None, case)]
    failures: list[Failure] = []
    for case_id in ids:
        folder = tmp_path / case_id.replace("/", "_")
        try:
            failures += run_case(runner, logged, case_id, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    assert not failures, summary(group.name, failures, len(ids))


HONEST_GROUPS = [group for group in hostile.GROUPS if group.honest]
OTHER_GROUPS = [group for group in hostile.GROUPS if not group.honest]


# --- the suite ---------------------------------------------------------------------------------


@pytest.mark.parametrize("group", HONEST_GROUPS, ids=lambda g: g.name.split("/")[1])
def test_damaged_honest_capture_keeps_every_claim_verified_or_unknown_and_the_approve(
    group: hostile.Group, runner: CliRunner, logged: _LoggedTracebacks, scratch: Path
) -> None:
    """(a), (b) and (c) for damage to a real honest capture, recorded and reconciled."""
    run_group(runner, logged, group, scratch)


@pytest.mark.parametrize("group", OTHER_GROUPS, ids=lambda g: g.name)
def test_hostile_input_gives_a_documented_exit_code_and_no_partial_output(
    group: hostile.Group, runner: CliRunner, logged: _LoggedTracebacks, scratch: Path
) -> None:
    """(a) and (b) for every other input file, damaged or changed."""
    run_group(runner, logged, group, scratch)


def test_the_suite_covers_every_adapter_and_input_file() -> None:
    """At least 2,000 cases; every registered adapter is exercised, with an honest capture of
    its own; every input file has its group."""
    assert sum(group.count for group in hostile.GROUPS) >= 2000
    assert set(hostile.ADAPTERS) == set(ADAPTERS)
    assert {capture.adapter for capture in hostile.HONEST} == set(ADAPTERS)
    assert {f"stream/{adapter}" for adapter in ADAPTERS} <= set(hostile.GROUPS_BY_NAME)
    inputs = {"claims", "evidence", "bundle", "changed", "flags-snapshot", "disk-copy", "report"}
    assert inputs <= set(hostile.GROUPS_BY_NAME)


def test_a_case_is_rebuilt_byte_for_byte_from_its_id(tmp_path: Path) -> None:
    """Seeded: the same id gives the same files and commands, wherever it is built."""
    for group in hostile.GROUPS:
        case_id = hostile.case_ids(group)[min(7, group.count - 1)]
        first, second = tmp_path / "a" / case_id, tmp_path / "b" / case_id
        one, two = hostile.build(case_id, first), hostile.build(case_id, second)
        assert one.mutations == two.mutations
        assert [hostile.command_line(s, first) for s in one.steps] == [
            hostile.command_line(s, second) for s in two.steps
        ]
        files_one = {p.relative_to(first): p.read_bytes() for p in first.rglob("*") if p.is_file()}
        files_two = {
            p.relative_to(second): p.read_bytes() for p in second.rglob("*") if p.is_file()
        }
        assert files_one == files_two


# --- real processes ----------------------------------------------------------------------------

SAMPLE_GROUPS = (
    "honest/pi_a_honest",
    "stream/claude-code",
    "claims",
    "bundle",
    "changed",
    "flags-snapshot",
    "report",
)
HARD = ("digits", "deep", "big_int", "bad_utf8", "nul")


def sample_ids(folder: Path) -> list[str]:
    """Per sampled group, its first case with a hard kind of damage (a huge number, deep
    nesting, bytes that are not UTF-8, NUL): the ones most likely to reach a real exit code
    other than 0."""
    chosen = []
    for name in SAMPLE_GROUPS:
        ids = hostile.case_ids(hostile.GROUPS_BY_NAME[name])[1:]
        for case_id in ids:
            where = folder / case_id.replace("/", "_")
            built = hostile.build(case_id, where)
            shutil.rmtree(where)
            if any(kind in m for kind in HARD for m in built.mutations):
                chosen.append(case_id)
                break
        else:
            chosen.append(ids[0])
    return chosen


def _process(step: hostile.Step, *, stdout: int | None = subprocess.PIPE) -> Ran:
    env = {**os.environ, **step.env}
    process = subprocess.Popen(
        [sys.executable, "-m", "coverage_gate", *step.args],
        stdin=subprocess.PIPE,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
    )
    out, err = process.communicate(step.stdin or b"", timeout=120)
    return Ran(process.returncode, out or b"", err.decode("utf-8", "replace"))


def _run_sample(case_id: str, folder: Path) -> list[Failure]:
    built = hostile.build(case_id, folder)
    problems: list[tuple[str, str]] = []
    for step in built.steps:
        if step.optional_evidence and not Path(step.optional_evidence).exists():
            at = step.args.index("--evidence")
            del step.args[at : at + 2]
        problems += check_step(step, _process(step))
    commands = [hostile.command_line(step, folder) for step in built.steps]
    return [
        Failure(case_id, f"process: {cause}", detail, built.mutations, commands)
        for cause, detail in problems
    ]


def _operator_cases(folder: Path) -> list[tuple[str, Ran, hostile.Step]]:
    """What an unlucky operator does to the process itself."""
    folder.mkdir(parents=True, exist_ok=True)
    stream = str(hostile.DATA / "pi-rpc" / "pi_a_honest.jsonl")
    record = hostile.Step(["record", stream, "--revision", "r", "--format", "pi-rpc"])
    ran: list[tuple[str, Ran, hostile.Step]] = []
    closed = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" >&-', sys.executable, "-m", "coverage_gate", *record.args],
        capture_output=False,
        stderr=subprocess.PIPE,
        check=False,
        timeout=120,
    )
    ran.append(("stdout closed", Ran(closed.returncode, b"", closed.stderr.decode()), record))
    env = {**os.environ}
    process = subprocess.Popen(
        [sys.executable, "-m", "coverage_gate", *record.args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader went away (`| head -c0`)
    err = process.stderr.read()
    process.stderr.close()
    process.wait(timeout=120)
    ran.append(("stdout reader gone", Ran(process.returncode, b"", err.decode()), record))
    if Path("/dev/full").exists():
        full = hostile.Step([*record.args, "-o", "/dev/full"])
        ran.append(("output device full", _process(full), full))
    return ran


def test_real_processes_exit_with_documented_codes_and_no_traceback(tmp_path: Path) -> None:
    """A sample of the cases, and what an operator does to the process (stdout closed, its
    reader gone, the output device full), as real processes: their true exit codes and
    stderr."""
    sample = [case for case in sample_ids(tmp_path / "pick") if ONLY in (None, case)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        found = list(pool.map(lambda c: _run_sample(c, tmp_path / c.replace("/", "_")), sample))
        operators = pool.submit(_operator_cases, tmp_path / "operator")
        failures = [failure for case in found for failure in case]
        if ONLY is None:
            for what, ran, step in operators.result():
                failures += [
                    Failure(
                        what, f"process, {what}: {cause}", detail, [what], [" ".join(step.args)]
                    )
                    for cause, detail in check_step(step, ran)
                ]
    assert not failures, summary("real processes", failures, len(sample) + 3)
