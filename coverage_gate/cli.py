"""The command line: the composition root. Parse, build dependencies, call one function, map the
outcome to an exit code. Only this layer touches argv, the environment, files, the clock and exit
codes. Machine output goes to stdout; people and logs to stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, BinaryIO

import typer
from opentelemetry.sdk.trace import TracerProvider

from coverage_gate import otel_setup, render
from coverage_gate.adapters import ADAPTERS
from coverage_gate.cli_choice import FLAG, Command, Group, choice
from coverage_gate.cli_flags import (
    FallbackChoice,
    FlagNameOption,
    FlagsFileOption,
    ModeChoice,
    OnErrorChoice,
    flags_app,
)
from coverage_gate.cli_options import (
    DEFAULT_LINE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_ISSUES,
    AgentOption,
    DiffOption,
    MaxFilesOption,
    MaxIssuesOption,
    MaxLineBytesOption,
    RepoRootOption,
    RevisionOption,
    record_settings,
    root_note,
)
from coverage_gate.cli_report import report as report_command
from coverage_gate.cli_run import RUN_CONTEXT_SETTINGS, run_command
from coverage_gate.errors import BadInputError, CoverageGateError, ExitCode, UsageError
from coverage_gate.files import (
    dump_model,
    load_evidence,
    load_model,
    read_bytes,
    write_atomic,
)
from coverage_gate.flags import (
    FlagSettings,
    ModeResolution,
    effective_policies,
    override_from_env,
    parse_mode,
    resolve_mode,
    settings_from_env,
)
from coverage_gate.gittree import GitTree, GitTrees
from coverage_gate.metrics import ErrorKind, record_decision, record_error, record_reconcile_span
from coverage_gate.model import (
    DecisionDocument,
    DepthPolicy,
    Mode,
    ModeSource,
    Reason,
    ReviewBundle,
    ReviewerOutput,
    UnknownPolicy,
    Verdict,
)
from coverage_gate.otel_setup import Telemetry
from coverage_gate.reconcile import ReviewerInput, ReviewInput, agent_mismatches, reconcile
from coverage_gate.recording import Recorder, feed_all
from coverage_gate.schemas import SCHEMAS
from coverage_gate.scope import (
    build_filter,
    changed_from_git,
    decode_changed,
    parse_changed,
    reviewable,
)
from coverage_gate.sniff import head_lines, peek, sniff, wrong_format_hint
from coverage_gate.stdio import require_stdout, stdin_bytes, write_stdout

app = typer.Typer(
    cls=Group,
    name="coverage-gate",
    help=(
        "Reconcile an AI code reviewer's claimed coverage with the reads and diffs it really "
        "performed. Exit codes: 0 decision produced, 1 enforced downgrade (only with "
        "--exit-code), 2 usage, 3 bad input, 4 bad configuration, 5 internal error."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


app.add_typer(flags_app, name="flags")
app.command("report", cls=Command)(report_command)  # one command, no subcommands
app.command("run", cls=Command, context_settings=RUN_CONTEXT_SETTINGS)(run_command)


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


def _say(message: str) -> None:
    typer.echo(message, err=True)


@contextlib.contextmanager
def _errors_to_exit(telemetry: Telemetry | None = None, repo: str = "") -> Iterator[None]:
    """Known errors become a one-line message and their exit code, never a traceback; with
    ``telemetry``, they are also counted."""
    try:
        yield
    except CoverageGateError as error:
        _say(f"coverage-gate: error: {error}")
        if telemetry is not None:
            kind = (
                ErrorKind.BAD_CONFIGURATION
                if error.exit_code is ExitCode.BAD_CONFIG
                else ErrorKind.BAD_INPUT
            )
            with contextlib.suppress(Exception):  # counting an error must not add another
                record_error(telemetry.meter(), repo=repo, kind=kind)
        raise typer.Exit(int(error.exit_code)) from None


def _format_names() -> str:
    return ", ".join(sorted(ADAPTERS))


# --- record ------------------------------------------------------------------------------------


@app.command(cls=Command)
def record(
    *,
    stream: Annotated[
        str, typer.Argument(help="Stream file to read; '-' (the default) reads stdin.")
    ] = "-",
    source_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="Stream format (see `coverage-gate formats`); detected when omitted.",
        ),
    ] = None,
    revision: RevisionOption,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the evidence document here (atomically)."),
    ] = None,
    repo_root: RepoRootOption = None,
    diff: DiffOption = None,
    agent: AgentOption = None,
    max_files: MaxFilesOption = DEFAULT_MAX_FILES,
    max_issues: MaxIssuesOption = DEFAULT_MAX_ISSUES,
    max_line_bytes: MaxLineBytesOption = DEFAULT_LINE_BYTES,
) -> None:
    """Read an agent's event stream and write the evidence document (JSON)."""
    with _errors_to_exit():
        if source_format is not None and source_format not in ADAPTERS:
            raise BadInputError(f"--format {source_format!r} is unknown; known: {_format_names()}")
        settings = record_settings(
            revision=revision,
            repo_root=repo_root,
            diff=diff,
            agent=agent,
            max_files=max_files,
            max_issues=max_issues,
            max_line_bytes=max_line_bytes,
        )
        if output is None:
            require_stdout(_EVIDENCE)
        with (
            _open_stream(stream) as raw,
            _telemetry() as telemetry,
            GitTrees(settings.revision) as trees,
        ):
            prefix, handle = peek(raw)
            lines = head_lines(prefix)
            chosen = source_format or sniff(lines)
            if chosen is None:
                raise BadInputError(
                    "cannot tell the stream's format from its first lines; "
                    f"pass --format (known: {_format_names()})"
                )
            if source_format is None:
                _say(f"coverage-gate: format {chosen} (detected from the first lines)")
            provider = telemetry.tracer_provider
            recorder = Recorder(
                ADAPTERS[chosen],
                replace(settings, trees=trees),
                provider if isinstance(provider, TracerProvider) else None,
            )
            document = feed_all(handle, recorder)
        _say(root_note(recorder.root))
        _emit_document(dump_model(document), output, _EVIDENCE)
        _say(render.evidence_summary(document))
        hint = wrong_format_hint(chosen, document.counters, lines)
        if hint is not None:
            _say(f"coverage-gate: warning: {hint}")


@contextlib.contextmanager
def _telemetry() -> Iterator[Telemetry]:
    """The run's providers (OTLP when configured, else local OTLP JSON files), always shut down
    within their short budget."""
    telemetry = otel_setup.setup(os.environ)
    try:
        yield telemetry
    finally:
        telemetry.shutdown()


@contextlib.contextmanager
def _open_stream(name: str) -> Iterator[BinaryIO]:
    if name == "-":
        yield stdin_bytes("stream")
        return
    try:
        handle = Path(name).open("rb")  # noqa: SIM115 - closed by the with below
    except FileNotFoundError:
        raise BadInputError(f"stream {name}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"stream {name}: is a directory") from None
    except OSError as error:
        raise BadInputError(f"stream {name}: cannot be read ({error.strerror})") from None
    with handle:
        yield handle


_EVIDENCE = "evidence document"
_DECISION = "decision"


def _emit_document(text: str, output: Path | None, what: str) -> None:
    if output is None:
        write_stdout(text, what)
        return
    try:
        write_atomic(output, text)
    except OSError as error:
        raise BadInputError(f"output {output}: cannot be written ({error.strerror})") from None


# --- reconcile ---------------------------------------------------------------------------------


def _scope(
    changed: Path | None,
    base: str | None,
    head: str | None,
    root: Path,
    excludes: list[str],
    default_excludes: bool,
) -> tuple[list[str], str]:
    """The review's scope, and what an empty scope is to be blamed on."""
    if changed is not None and (base or head):
        raise UsageError("give either --changed or --base/--head, not both")
    if changed is not None:
        stdin = str(changed) == "-"
        source = "(stdin)" if stdin else str(changed)
        data = (
            stdin_bytes("changed-file list").read()
            if stdin
            else read_bytes(changed, "changed-file list")
        )
        paths = parse_changed(decode_changed(data, source), source, str(root.absolute()))
        origin = f"the changed-file list {source} names no file"
    elif base and head:
        paths = changed_from_git(root, base, head)
        same = " (--base and --head are the same)" if base == head else ""
        origin = f"git diff {base} {head} shows no changed file{same}"
    else:
        raise UsageError("the changed files are needed: --changed FILE, or --base and --head")
    if paths:
        origin = f"the reviewable-path filter excluded all {len(paths)} changed file(s)"
    return reviewable(paths, build_filter(excludes, default_excludes)), origin


def _check_repo(repo: str) -> None:
    """--repo names a repository as OWNER/NAME: its owner is a metric label."""
    owner, slash, name = repo.partition("/")
    if not (owner and slash and name) or any(char.isspace() for char in repo):
        raise UsageError(f"--repo {repo!r}: expected OWNER/NAME, e.g. acme/api")


def _warn_about(decision: DecisionDocument, empty_scope: str) -> None:
    """Say on stderr what the decision says of an operator's likely mistake."""
    if not decision.scope:
        _say(f"coverage-gate: warning: nothing to review: {empty_scope}")
    for reviewer in decision.reviewers:
        if Reason.EVIDENCE_STALE in reviewer.reasons:
            _say(
                f"coverage-gate: warning: evidence of reviewer {reviewer.agent_id} was recorded "
                f"at {reviewer.evidence_revision}, not at {decision.revision}: its claims are "
                "unknown (evidence_stale)"
            )


def _reviewers_from_bundle(bundle_path: Path) -> list[ReviewerInput]:
    bundle = load_model(bundle_path, ReviewBundle, "review bundle")
    base = bundle_path.parent
    reviewers: list[ReviewerInput] = []
    for entry in bundle.reviewers:
        claims = (
            load_model(base / entry.claims, ReviewerOutput, "reviewer output")
            if entry.claims
            else None
        )
        evidence = load_evidence(base / entry.evidence) if entry.evidence else None
        agent_id = entry.agent_id or (claims.agent_id if claims else "reviewer")
        reviewers.append(ReviewerInput(agent_id, claims, evidence, failed=entry.failed))
    return reviewers


def _render(decision: DecisionDocument, fmt: OutputFormat) -> str:
    if fmt is OutputFormat.JSON:
        return dump_model(decision)
    if fmt is OutputFormat.MARKDOWN:
        return render.markdown(decision)
    return render.text(decision)


def _resolve_mode(
    repo: str,
    mode: ModeChoice,
    settings: FlagSettings,
    reviewers: list[ReviewerInput],
) -> ModeResolution:
    """Explicit --mode, else COVERAGE_GATE_MODE, else the flag sources (DESIGN §8)."""
    override = parse_mode(mode.value, what="--mode") or override_from_env(os.environ)
    agents = sorted({reviewer.agent_id for reviewer in reviewers})
    formats = sorted({r.evidence.source for r in reviewers if r.evidence is not None})
    properties = {"agent": ",".join(agents), "format": ",".join(formats)}
    return resolve_mode(repo, settings, override=override, properties=properties)


def _reconcile_guarded(review: ReviewInput) -> DecisionDocument:
    """Reconcile; in shadow mode a failure of the new check must not change the review.

    Like a scientist experiment, shadow returns the control value: if the evidence check itself
    fails, the legacy gate alone decides, and the note says the check failed.
    """
    if review.mode is not Mode.SHADOW:
        return reconcile(review)
    try:
        return reconcile(review)
    # Shadow boundary: the experimental check may fail in ways no test foresaw; in shadow mode
    # that must never cost the review its verdict. The legacy-only decision stands instead.
    except Exception as error:  # noqa: BLE001
        legacy = [replace(reviewer, evidence=None) for reviewer in review.reviewers]
        fallback = reconcile(
            replace(review, mode=Mode.OFF, reviewers=legacy, unknown_policy=UnknownPolicy.ACCEPT)
        )
        note = f"The shadow evidence check failed ({type(error).__name__}); legacy gate only."
        return fallback.model_copy(
            update={
                "mode": Mode.SHADOW,
                "would_downgrade": False,
                "note": f"{note}\n\n{fallback.note}",
            }
        )


def _record_telemetry(telemetry: Telemetry, decision: DecisionDocument, duration_s: float) -> None:
    formats = {
        reviewer.agent_id: reviewer.evidence_source or "none" for reviewer in decision.reviewers
    }
    try:
        record_decision(telemetry.meter(), decision, duration_s=duration_s, formats=formats)
        record_reconcile_span(telemetry.tracer(), decision, duration_s=duration_s, formats=formats)
    # Telemetry export boundary: recording metrics must never change a decision or an exit code.
    except Exception as error:  # noqa: BLE001
        _say(f"coverage-gate: warning: telemetry not recorded: {error}")


@app.command("reconcile", cls=Command)
def reconcile_command(
    repo: Annotated[str, typer.Option(help="Repository as OWNER/NAME.")],
    revision: Annotated[str, typer.Option(help="The commit (head SHA) the review is about.")],
    verdict: Annotated[
        Verdict,
        typer.Option(**choice(Verdict), help="The review's verdict before reconciliation."),
    ],
    claims: Annotated[
        Path | None, typer.Option(help="One reviewer's output (JSON, schema_version 1).")
    ] = None,
    evidence: Annotated[
        Path | None,
        typer.Option(help="That reviewer's evidence document; without it claims are unknown."),
    ] = None,
    bundle: Annotated[
        Path | None,
        typer.Option(help="Review bundle JSON listing several reviewers (instead of --claims)."),
    ] = None,
    changed: Annotated[
        Path | None,
        typer.Option(help="Newline-separated changed-file list ('-' reads stdin)."),
    ] = None,
    base: Annotated[
        str | None, typer.Option(help="Base commit: scope from git diff base head.")
    ] = None,
    head: Annotated[str | None, typer.Option(help="Head commit for --base.")] = None,
    mode: Annotated[
        ModeChoice,
        typer.Option(
            **choice(ModeChoice),
            help="auto: ask the feature flag (override env COVERAGE_GATE_MODE); off: legacy "
            "gate only; shadow: record, never change; enforce.",
        ),
    ] = ModeChoice.AUTO,
    flags_file: FlagsFileOption = None,
    flags_on_error: Annotated[
        OnErrorChoice | None,
        typer.Option(
            "--flags-on-error",
            **choice(OnErrorChoice),
            help="On a corrupt snapshot or variant payload: fail (exit 4) or use the fallback mode "
            "(env COVERAGE_GATE_FLAGS_ON_ERROR).",
        ),
    ] = None,
    fallback_mode: Annotated[
        FallbackChoice | None,
        typer.Option(
            "--fallback-mode",
            **choice(FallbackChoice),
            help="Mode when no flag answers: off or shadow, never enforce "
            "(env COVERAGE_GATE_FALLBACK_MODE; default shadow).",
        ),
    ] = None,
    flag_name: FlagNameOption = None,
    unknown_policy: Annotated[
        UnknownPolicy | None,
        typer.Option(
            **choice(UnknownPolicy),
            help="Whether claims whose evidence is unavailable downgrade an Approve "
            "(env COVERAGE_GATE_UNKNOWN_POLICY, else the flag variant's payload; default accept).",
            show_default=False,
        ),
    ] = None,
    depth_policy: Annotated[
        DepthPolicy | None,
        typer.Option(
            **choice(DepthPolicy),
            help="How much of a claimed file's change its evidence must show: accept (any "
            "successful read or diff), any-hunk, all-hunks (env COVERAGE_GATE_DEPTH_POLICY, else "
            "the flag variant's payload; default accept).",
            show_default=False,
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(help="Glob of changed paths that are not reviewable (repeatable)."),
    ] = None,
    default_excludes: Annotated[
        bool,
        typer.Option(**FLAG, help="Exclude lock files, vendored and generated code by default."),
    ] = True,
    repo_root: Annotated[
        Path | None,
        typer.Option(help="Repository root for paths and git (default: the current directory)."),
    ] = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "--format", **choice(OutputFormat), help="text, json (the decision) or markdown."
        ),
    ] = OutputFormat.TEXT,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Also write the decision JSON here.")
    ] = None,
    exit_code: Annotated[
        bool,
        typer.Option("--exit-code", **FLAG, help="Exit 1 when the decision changed the verdict."),
    ] = False,
) -> None:
    """Reconcile claims with evidence over the changed files and print the decision."""
    with _errors_to_exit():  # not counted: a malformed --repo is no repository to count for
        _check_repo(repo)
    telemetry = otel_setup.setup(os.environ)
    try:
        with _errors_to_exit(telemetry, repo):
            began = time.perf_counter()
            root = repo_root or Path.cwd()
            if (claims is None) == (bundle is None):
                raise UsageError(
                    "give exactly one of --claims (one reviewer) or --bundle (several)"
                )
            require_stdout(_DECISION)
            scope, empty_scope = _scope(changed, base, head, root, exclude or [], default_excludes)
            if claims is not None:
                output_model = load_model(claims, ReviewerOutput, "reviewer output")
                evidence_doc = load_evidence(evidence) if evidence else None
                reviewers = [ReviewerInput(output_model.agent_id, output_model, evidence_doc)]
            else:
                assert bundle is not None  # noqa: S101 - checked above
                reviewers = _reviewers_from_bundle(bundle)
            settings = settings_from_env(
                os.environ,
                snapshot=flags_file,
                flag_name=flag_name,
                fallback=parse_mode(
                    fallback_mode.value if fallback_mode else None, what="fallback"
                ),
                on_error=flags_on_error.value if flags_on_error else None,
            )
            for mismatch in agent_mismatches(reviewers):
                _say(f"coverage-gate: warning: {mismatch}")
            resolution = _resolve_mode(repo, mode, settings, reviewers)
            if resolution.source is ModeSource.FALLBACK:
                mode_name = resolution.mode.value
                # the detail begins "fallback <mode>: "; said once, then why no flag answered
                why = resolution.detail.removeprefix(f"fallback {mode_name}: ")
                _say(f"coverage-gate: mode {mode_name} (fallback): {why}")
            policies = effective_policies(
                resolution, os.environ, depth_policy=depth_policy, unknown_policy=unknown_policy
            )
            with GitTree(root.absolute(), revision) as tree:
                decision = _reconcile_guarded(
                    ReviewInput(
                        repo=repo,
                        revision=revision,
                        verdict_in=verdict,
                        mode=resolution.mode,
                        mode_source=resolution.source,
                        scope=scope,
                        reviewers=reviewers,
                        unknown_policy=policies.unknown_policy,
                        unknown_policy_source=policies.unknown_policy_source,
                        depth_policy=policies.depth_policy,
                        depth_policy_source=policies.depth_policy_source,
                        repo_root=str(root.absolute()),
                        tree=tree,
                    )
                )
            duration_s = time.perf_counter() - began
            _warn_about(decision, empty_scope)
            if output is not None:
                _emit_document(dump_model(decision), output, _DECISION)
            write_stdout(_render(decision, output_format), _DECISION)
            # Recorded once it is out: a decision nobody received is counted as an error only.
            _record_telemetry(telemetry, decision, duration_s)
    finally:
        telemetry.shutdown()
    if exit_code and decision.downgraded:
        raise typer.Exit(int(ExitCode.DOWNGRADED))


# --- schema, formats, demo ---------------------------------------------------------------------


@app.command(cls=Command)
def schema(
    name: Annotated[
        str | None,
        typer.Argument(help=f"One of: {', '.join(SCHEMAS)}. Without it, all of them."),
    ] = None,
) -> None:
    """Print the JSON Schemas of the contracts."""
    with _errors_to_exit():
        if name is None:
            document = {
                key: model.model_json_schema(by_alias=True) for key, model in SCHEMAS.items()
            }
        elif name in SCHEMAS:
            document = SCHEMAS[name].model_json_schema(by_alias=True)
        else:
            raise UsageError(f"unknown schema {name!r}; known: {', '.join(SCHEMAS)}")
        write_stdout(json.dumps(document, indent=2, sort_keys=True) + "\n", "schema")


@app.command(cls=Command)
def formats() -> None:
    """List the stream formats `record` reads."""
    lines = [
        f"{name:<16} capability {ADAPTERS[name].capability.value:<9} {ADAPTERS[name].description}\n"
        for name in sorted(ADAPTERS)
    ]
    with _errors_to_exit():
        write_stdout("".join(lines), "list of formats")


@app.command(cls=Command)
def demo(
    keep: Annotated[Path | None, typer.Option(help="Keep the demo's files in this folder.")] = None,
) -> None:
    """Record and reconcile the bundled example: an honest and a lying pi reviewer."""
    from coverage_gate.demo import run_demo  # noqa: PLC0415 - only the demo needs it

    def out(text: str) -> None:
        write_stdout(text + "\n", "demo decisions")

    with _errors_to_exit():
        require_stdout("demo decisions")
        if keep is not None:
            _make_folder(keep)
            run_demo(keep, _say, out)
            _say(f"the demo's streams, evidence and decisions are in {keep}")
        else:
            with tempfile.TemporaryDirectory(prefix="coverage-gate-demo-") as folder:
                run_demo(Path(folder), _say, out)


def _make_folder(folder: Path) -> None:
    """The folder --keep names, made when missing; a file or an unwritable place is bad input."""
    if folder.exists() and not folder.is_dir():
        raise BadInputError(f"--keep {folder}: exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInputError(
            f"--keep {folder}: cannot be made ({error.strerror or error})"
        ) from None


def main() -> None:
    """Console entry point: known errors are handled in the commands; anything else is a bug."""
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        _say("coverage-gate: interrupted")
        sys.exit(130)
    except Exception as error:
        if os.environ.get("COVERAGE_GATE_DEBUG"):
            raise
        _say(f"coverage-gate: internal error: {type(error).__name__}: {error}")
        _say("set COVERAGE_GATE_DEBUG=1 for a traceback, and please report it")
        sys.exit(int(ExitCode.INTERNAL))
