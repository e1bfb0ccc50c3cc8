"""``coverage-gate run``: launch a reviewer, pass its stream through, record evidence live.

Registered by the CLI with
``app.command("run", context_settings=RUN_CONTEXT_SETTINGS)(run_command)``. The reviewer's
command follows our options (``--`` before it is allowed); our options are ``record``'s plus
``--timeout`` and ``--grace``, and ``--telemetry-intake``/``--telemetry-output`` (the reviewer's
own OpenTelemetry as evidence: ``coverage_gate.capture.intake``).
Our own messages go to stderr: stdout belongs to the reviewer.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer

from coverage_gate.capture.intake_clients import IntakeClient
from coverage_gate.commands._common import error_line, info
from coverage_gate.commands._options import (
    DEFAULT_LINE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_ISSUES,
    AgentOption,
    DiffOption,
    MaxFilesOption,
    MaxIssuesOption,
    MaxLineBytesOption,
    RepoRootOption,
    RunRevisionOption,
    SnapshotOption,
    checkout_notes,
    record_settings,
    root_note,
    snapshot_revision,
)
from coverage_gate.contracts import defaults
from coverage_gate.edges.stdio import require_stdout
from coverage_gate.errors import BadInputError, CoverageGateError, UsageError

if TYPE_CHECKING:
    from coverage_gate.capture.intake import TelemetryCapture, TelemetryResult
    from coverage_gate.capture.live import LiveResult
    from coverage_gate.contracts.model import EvidenceDocument
    from coverage_gate.core.calls import CallRecord
    from coverage_gate.core.events import Adapter
    from coverage_gate.record.recording import Recorder, RecordSettings, RootChoice

__all__ = ["DRAIN_SECONDS", "RUN_CONTEXT_SETTINGS", "run_command"]

# Options are parsed only up to the reviewer's command: everything from its first word on is the
# reviewer's, so its own -o/--format/--timeout are never taken for ours ('--' stays optional).
RUN_CONTEXT_SETTINGS: dict[str, object] = {"allow_interspersed_args": False}
# After the reviewer ends: how long the telemetry receiver may still read requests in flight.
DRAIN_SECONDS = 5.0


def _say(message: str) -> None:
    typer.echo(message, err=True)


def _our_stdin() -> IO[bytes] | None:
    stream = sys.stdin
    return None if stream is None else stream.buffer


def run_command(
    *,
    command: Annotated[
        list[str],
        typer.Argument(
            help="The reviewer command and its arguments, after '--'.",
            show_default=False,
        ),
    ],
    source_format: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="The input stream's format: the reviewer's stdout (see `coverage-gate formats`); "
            "'subprocess' only runs it and records capability none.",
        ),
    ] = "pi-rpc",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the evidence document here (atomically) when the reviewer ends. Required: "
            "stdout carries the reviewer's own output.",
        ),
    ] = None,
    revision: RunRevisionOption = "",
    snapshot: SnapshotOption = False,
    repo_root: RepoRootOption = None,
    diff: DiffOption = None,
    agent: AgentOption = None,
    max_files: MaxFilesOption = DEFAULT_MAX_FILES,
    max_issues: MaxIssuesOption = DEFAULT_MAX_ISSUES,
    max_line_bytes: MaxLineBytesOption = DEFAULT_LINE_BYTES,
    timeout: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            metavar="<seconds>",
            help="Seconds before the reviewer's process group is ended (exit code 124); "
            "the evidence is then marked incomplete.",
        ),
    ] = None,
    grace: Annotated[
        float,
        typer.Option(
            min=0.0,
            metavar="<seconds>",
            help="Seconds between SIGTERM and SIGKILL when ending the reviewer.",
        ),
    ] = defaults.GRACE_SECONDS,
    telemetry_intake: Annotated[
        IntakeClient | None,
        typer.Option(
            "--telemetry-intake",
            help="Also record the reviewer's own OpenTelemetry: start a loopback OTLP/HTTP "
            "receiver and point this client's exporter at it (environment; Codex: -c options "
            "after the 'codex' word). With --format subprocess its evidence goes to --output.",
            show_default=False,
        ),
    ] = None,
    telemetry_output: Annotated[
        Path | None,
        typer.Option(
            "--telemetry-output",
            help="Write the telemetry's evidence document here (needed when --output holds the "
            "stdout stream's); where the two disagree on a call, it is said on stderr.",
        ),
    ] = None,
) -> None:
    """Run a reviewer, pass its stdin and stdout through, and record evidence as it flows.

    Exits with the reviewer's exit code (128+N if it died of signal N; 124 on --timeout; 128+N
    when we are interrupted by SIGINT, SIGTERM or SIGHUP)."""
    # What only a run needs (start-up: see commands._common)
    from coverage_gate.adapters import placeholder  # noqa: PLC0415
    from coverage_gate.capture.live import Ending, LiveError  # noqa: PLC0415
    from coverage_gate.outputs import render  # noqa: PLC0415

    try:
        adapter, settings, evidence_path = _prepare(
            source_format=source_format,
            output=output,
            revision=revision,
            snapshot=snapshot,
            repo_root=repo_root,
            diff=diff,
            agent=agent,
            max_files=max_files,
            max_issues=max_issues,
            max_line_bytes=max_line_bytes,
        )
        telemetry = _telemetry_plan(
            telemetry_intake, telemetry_output, evidence_path, adapter, command
        )
        ran = _run(command, adapter, settings, evidence_path, timeout, grace, telemetry)
        result, head, root, received = ran.result, ran.head, ran.root, ran.telemetry
    except LiveError as error:
        _say(error_line(str(error)))
        raise typer.Exit(int(BadInputError.exit_code)) from None
    except CoverageGateError as error:
        _say(error_line(str(error)))
        raise typer.Exit(int(error.exit_code)) from None
    outcome = result.outcome
    if outcome.ending is Ending.TIMED_OUT:
        _say(f"coverage-gate: reviewer timed out after {timeout:g}s; its process group was ended")
    elif outcome.ending is Ending.INTERRUPTED:
        _say(f"coverage-gate: interrupted (signal {outcome.signal}); the reviewer was ended")
    if outcome.descendants_ended:
        _say(
            f"coverage-gate: ended {outcome.descendants_ended} process(es) the reviewer had "
            "started and left running"
        )
    (info if root.path is not None else _say)(root_note(root))  # no root: said even under -q
    for note in checkout_notes(result.evidence.checkout, result.evidence.revision, root.path):
        _say(note)
    if telemetry is None or not telemetry.alone:
        info(render.evidence_summary(result.evidence))
    if telemetry is not None and received is not None:
        _telemetry_notes(telemetry, received, result, ran.stream_records)
    if adapter.name != placeholder.NAME:  # the placeholder recognises no calls by design
        for warning in _stream_warnings(adapter, result.evidence, head):
            _say(warning)
    if outcome.stdout_error is not None:
        _say(
            f"coverage-gate: warning: stdout: cannot write the reviewer's output "
            f"({outcome.stdout_error}); the rest of it was recorded, not passed on"
        )
    if telemetry is None or not telemetry.alone:
        info(f"coverage-gate: evidence written to {evidence_path}")
    raise typer.Exit(outcome.exit_code)


def _stream_warnings(adapter: Adapter, evidence: EvidenceDocument, head: bytes) -> list[str]:
    """What the recorded stream suggests is wrong: a wrong format, or drift."""
    from coverage_gate.core.drift import drift_warning  # noqa: PLC0415
    from coverage_gate.record.sniff import head_lines, wrong_format_hint  # noqa: PLC0415

    found: list[str] = []
    hint = wrong_format_hint(adapter.name, evidence.counters, head_lines(head))
    if hint is not None:
        found.append(f"coverage-gate: warning: {hint}")
    drifted = drift_warning(evidence, getattr(adapter, "knows", None))
    if drifted is not None:
        found.append(drifted)
    return found


@dataclass(frozen=True)
class _TelemetryPlan:
    """What to do with the reviewer's own telemetry: which client, where its evidence goes, and
    whether it is the run's only evidence (``--format subprocess``)."""

    client: IntakeClient
    output: Path
    alone: bool


def _telemetry_plan(
    client: IntakeClient | None,
    output: Path | None,
    evidence_path: Path,
    adapter: Adapter,
    command: list[str],
) -> _TelemetryPlan | None:
    from coverage_gate.adapters import placeholder  # noqa: PLC0415 - start-up

    if client is None:
        if output is not None:
            raise BadInputError("--telemetry-output needs --telemetry-intake")
        return None
    alone = adapter.name == placeholder.NAME
    if output is None and not alone:
        raise BadInputError(
            "--telemetry-output is required with --telemetry-intake when --format records the "
            "stdout stream (--output holds that stream's evidence)"
        )
    target = output if output is not None else evidence_path
    if output is not None:
        _check_output(output)
        if output.absolute() == evidence_path.absolute():
            raise BadInputError("--telemetry-output must differ from --output")
    if client is IntakeClient.CODEX and (not command or Path(command[0]).name != "codex"):
        raise BadInputError(
            "--telemetry-intake codex places its -c options after the 'codex' program word; "
            f"the command starts with {command[0] if command else 'nothing'!r}: give Codex "
            "the [otel] exporter config yourself and use --telemetry-intake otlp"
        )
    return _TelemetryPlan(client, target, alone=alone and output is None)


def _telemetry_notes(
    plan: _TelemetryPlan,
    received: TelemetryResult,
    result: LiveResult,
    stream_records: list[CallRecord],
) -> None:
    from coverage_gate.capture.intake import disagreements, why_incomplete  # noqa: PLC0415
    from coverage_gate.outputs import render  # noqa: PLC0415 - start-up

    info(f"coverage-gate: telemetry: {render.evidence_summary(received.evidence)}")
    why = why_incomplete(received, result.outcome)
    if why is not None:
        _say(f"coverage-gate: telemetry: {why}")
    if not plan.alone:
        found = disagreements(stream_records, result.evidence, received)
        if found is None:
            _say(
                "coverage-gate: telemetry: not compared with the stream call by call "
                "(one of them cannot show per-file reads)"
            )
        elif found:
            _say("coverage-gate: warning: the stream and the telemetry disagree:")
            for line in found:
                _say(f"coverage-gate:   {line}")
        else:
            info("coverage-gate: telemetry: the stream and the telemetry agree on every call")
    info(f"coverage-gate: telemetry evidence written to {plan.output}")


class _KeepingHead:
    """Passes chunks to the recorder and keeps the stream's first bytes for the format hint."""

    def __init__(self, recorder: Recorder, limit: int) -> None:
        self._recorder = recorder
        self._limit = limit
        self.head = bytearray()

    def feed(self, chunk: bytes) -> None:
        if len(self.head) < self._limit:
            self.head += chunk[: self._limit - len(self.head)]
        self._recorder.feed(chunk)

    def finish(self, interrupted: bool = False) -> EvidenceDocument:
        return self._recorder.finish(interrupted)


@dataclass(frozen=True)
class _Ran:
    result: LiveResult
    head: bytes
    root: RootChoice
    stream_records: list[CallRecord]
    telemetry: TelemetryResult | None


def _run(
    command: list[str],
    adapter: Adapter,
    settings: RecordSettings,
    evidence_path: Path,
    timeout: float | None,
    grace: float,
    plan: _TelemetryPlan | None,
) -> _Ran:
    """The live run, with the run's telemetry (spans exported like `record`'s) and SIGINT,
    SIGTERM and SIGHUP routed to ending the reviewer; with a telemetry plan, the reviewer's own
    telemetry received and recorded beside its stdout."""
    # start-up: see commands._common
    from coverage_gate.capture import reaper  # noqa: PLC0415
    from coverage_gate.capture.live import (  # noqa: PLC0415
        Interrupter,
        LiveError,
        forwarding_signals,
        run_recorded,
        with_descendants_ended,
    )
    from coverage_gate.edges.files import dump_model, write_atomic  # noqa: PLC0415
    from coverage_gate.edges.gittree import GitTrees  # noqa: PLC0415
    from coverage_gate.record.recording import Recorder  # noqa: PLC0415
    from coverage_gate.record.sniff import PEEK_BYTES  # noqa: PLC0415
    from coverage_gate.telemetry import otel_setup  # noqa: PLC0415

    telemetry = otel_setup.setup(os.environ)
    interrupter = Interrupter()
    repository = settings.repository
    trees = GitTrees(settings.revision, resolve=repository.resolve if repository else None)
    capture: TelemetryCapture | None = None
    try:
        provider, spans = telemetry.for_recording()
        located_settings = replace(settings, trees=trees)
        alone = plan is not None and plan.alone
        located = Recorder(
            adapter,
            located_settings,
            None if alone else provider,
            spans=None if alone else spans,
        )
        recorder = _KeepingHead(located, PEEK_BYTES)
        env: dict[str, str] | None = None
        if plan is not None:
            from coverage_gate.capture.intake import TelemetryCapture  # noqa: PLC0415 - start-up

            capture = TelemetryCapture(
                plan.client,
                located_settings,
                provider if plan.alone else None,
                spans=spans if plan.alone else None,
            ).start()
            env = capture.environment(os.environ)
            command = capture.command(command) or command
        if not reaper.available():
            _say(
                "coverage-gate: warning: descendants that leave the reviewer's process group "
                "cannot be contained here (no Linux child subreaper): only its group is ended"
            )
        with forwarding_signals(interrupter):
            result = run_recorded(
                command,
                recorder=recorder,
                output=None if plan and plan.alone else evidence_path,
                stdin=_our_stdin(),
                stdout=sys.stdout.buffer,
                timeout=timeout,
                grace=grace,
                interrupter=interrupter,
                env=env,
            )
        received = None
        if capture is not None and plan is not None:
            received = capture.finish(result.outcome, DRAIN_SECONDS)
            received = replace(
                received, evidence=with_descendants_ended(received.evidence, result.outcome)
            )
            capture = None
            try:
                write_atomic(plan.output, dump_model(received.evidence))
            except OSError as exc:
                raise LiveError(
                    f"evidence {plan.output}: cannot be written ({exc.strerror})"
                ) from exc
        return _Ran(result, bytes(recorder.head), located.root, located.records, received)
    finally:
        if capture is not None:
            capture.close()
        trees.close()
        interrupter.close()
        telemetry.shutdown()


def _check_output(output: Path) -> None:
    from coverage_gate.edges.files import check_writable  # noqa: PLC0415 - start-up

    if not output.absolute().parent.is_dir():
        raise BadInputError(f"output {output}: folder {output.absolute().parent} does not exist")
    if output.is_dir():
        raise BadInputError(f"output {output}: is a directory")
    try:
        check_writable(output)
    except OSError as error:
        raise BadInputError(
            f"output {output}: cannot be written ({error.strerror or error})"
        ) from None


def _prepare(
    *,
    source_format: str,
    output: Path | None,
    revision: str,
    snapshot: bool,
    repo_root: Path | None,
    diff: Path | None,
    agent: str | None,
    max_files: int,
    max_issues: int,
    max_line_bytes: int,
) -> tuple[Adapter, RecordSettings, Path]:
    """Check everything before the reviewer starts: a run is never wasted on a bad option."""
    from coverage_gate.adapters import ADAPTERS  # noqa: PLC0415 - start-up: see commands._common

    if output is None:
        raise UsageError("--output is required: stdout carries the reviewer's own output")
    require_stdout("reviewer's output")
    _check_output(output)
    adapter = ADAPTERS.get(source_format)
    if adapter is None:
        known = ", ".join(sorted(ADAPTERS))
        raise UsageError(f"--format {source_format!r} is unknown; known: {known}")
    if snapshot and revision:
        raise UsageError("--snapshot writes the revision: give it or --revision, not both")
    if snapshot:
        revision = snapshot_revision(repo_root)
        _say(
            f"coverage-gate: revision {revision}: the working tree, written as a tree before the "
            "reviewer starts"
        )
    settings = record_settings(
        revision=revision,
        repo_root=repo_root,
        diff=diff,
        agent=agent,
        max_files=max_files,
        max_issues=max_issues,
        max_line_bytes=max_line_bytes,
        started=False,
    )
    return adapter, settings, output
