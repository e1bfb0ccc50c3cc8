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
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, BinaryIO

import typer

from coverage_gate import render
from coverage_gate.adapters import ADAPTERS
from coverage_gate.diffmap import DiffIndex
from coverage_gate.errors import BadInputError, CoverageGateError, ExitCode
from coverage_gate.files import (
    dump_model,
    load_evidence,
    load_model,
    read_bytes,
    write_atomic,
)
from coverage_gate.model import (
    Bounds,
    DecisionDocument,
    Mode,
    ModeSource,
    ReviewBundle,
    ReviewerOutput,
    UnknownPolicy,
    Verdict,
)
from coverage_gate.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.recording import RecordSettings, record_stream
from coverage_gate.schemas import SCHEMAS
from coverage_gate.scope import build_filter, changed_from_git, parse_changed, reviewable
from coverage_gate.sniff import head_lines, peek, sniff, wrong_format_hint

app = typer.Typer(
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


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


def _say(message: str) -> None:
    typer.echo(message, err=True)


@contextlib.contextmanager
def _errors_to_exit() -> Iterator[None]:
    """Known errors become a one-line message and their exit code, never a traceback."""
    try:
        yield
    except CoverageGateError as error:
        _say(f"coverage-gate: error: {error}")
        raise typer.Exit(int(error.exit_code)) from None


def _format_names() -> str:
    return ", ".join(sorted(ADAPTERS))


# --- record ------------------------------------------------------------------------------------


@app.command()
def record(
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
    revision: Annotated[
        str, typer.Option(help="The commit (head SHA) under review; evidence is bound to it.")
    ] = "",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the evidence document here (atomically)."),
    ] = None,
    repo_root: Annotated[
        Path | None,
        typer.Option(
            help="Repository root that absolute paths are made relative to [default: cwd]."
        ),
    ] = None,
    diff: Annotated[
        Path | None,
        typer.Option(
            help="The pinned unified diff cr_diff pages through: enables per-file diff evidence."
        ),
    ] = None,
    agent: Annotated[
        str | None, typer.Option(help="Reviewer name for the invoke_agent span.")
    ] = None,
    max_files: Annotated[int, typer.Option(min=1, help="Bound on distinct files kept.")] = 2000,
    max_issues: Annotated[
        int, typer.Option(min=0, help="Bound on sampled call-level issues.")
    ] = 256,
    max_line_bytes: Annotated[
        int, typer.Option(min=1024, help="Longest line decoded whole (tool events).")
    ] = 64 * 1024 * 1024,
) -> None:
    """Read an agent's event stream and write the evidence document (JSON)."""
    with _errors_to_exit():
        if not revision:
            raise BadInputError(
                "--revision is required: evidence is bound to the commit under review"
            )
        if source_format is not None and source_format not in ADAPTERS:
            raise BadInputError(f"--format {source_format!r} is unknown; known: {_format_names()}")
        settings = RecordSettings(
            revision=revision,
            repo_root=str((repo_root or Path.cwd()).absolute()),
            bounds=Bounds(max_files=max_files, max_issues=max_issues),
            diff=DiffIndex.parse(read_bytes(diff, "diff")) if diff else None,
            agent=agent,
            max_line_bytes=max_line_bytes,
        )
        with _open_stream(stream) as raw:
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
            document = record_stream(handle, ADAPTERS[chosen], settings)
        _emit_document(dump_model(document), output)
        _say(render.evidence_summary(document))
        hint = wrong_format_hint(chosen, document.counters, lines)
        if hint is not None:
            _say(f"coverage-gate: warning: {hint}")


@contextlib.contextmanager
def _open_stream(name: str) -> Iterator[BinaryIO]:
    if name == "-":
        yield sys.stdin.buffer
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


def _emit_document(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
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
) -> list[str]:
    if changed is not None and (base or head):
        raise BadInputError("give either --changed or --base/--head, not both")
    if changed is not None:
        text = (
            sys.stdin.read()
            if str(changed) == "-"
            else read_bytes(changed, "changed-file list").decode("utf-8", "surrogateescape")
        )
        paths = parse_changed(text, str(changed), str(root.absolute()))
    elif base and head:
        paths = changed_from_git(root, base, head)
    else:
        raise BadInputError("the changed files are needed: --changed FILE, or --base and --head")
    return reviewable(paths, build_filter(excludes, default_excludes))


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


@app.command("reconcile")
def reconcile_command(
    repo: Annotated[str, typer.Option(help="Repository as OWNER/NAME.")],
    revision: Annotated[str, typer.Option(help="The commit (head SHA) the review is about.")],
    verdict: Annotated[Verdict, typer.Option(help="The review's verdict before reconciliation.")],
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
        Mode, typer.Option(help="off: legacy gate only; shadow: record, never change; enforce.")
    ] = Mode.SHADOW,
    unknown_policy: Annotated[
        UnknownPolicy,
        typer.Option(help="Whether claims whose evidence is unavailable downgrade an Approve."),
    ] = UnknownPolicy.ACCEPT,
    exclude: Annotated[
        list[str] | None,
        typer.Option(help="Glob of changed paths that are not reviewable (repeatable)."),
    ] = None,
    default_excludes: Annotated[
        bool,
        typer.Option(help="Exclude lock files, vendored and generated code by default."),
    ] = True,
    repo_root: Annotated[
        Path | None, typer.Option(help="Repository root for paths and git [default: cwd].")
    ] = None,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="text, json (the decision) or markdown.")
    ] = OutputFormat.TEXT,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Also write the decision JSON here.")
    ] = None,
    exit_code: Annotated[
        bool,
        typer.Option("--exit-code", help="Exit 1 when the decision changed the verdict."),
    ] = False,
) -> None:
    """Reconcile claims with evidence over the changed files and print the decision."""
    with _errors_to_exit():
        root = repo_root or Path.cwd()
        if (claims is None) == (bundle is None):
            raise BadInputError("give exactly one of --claims (one reviewer) or --bundle (several)")
        scope = _scope(changed, base, head, root, exclude or [], default_excludes)
        if claims is not None:
            output_model = load_model(claims, ReviewerOutput, "reviewer output")
            evidence_doc = load_evidence(evidence) if evidence else None
            reviewers = [ReviewerInput(output_model.agent_id, output_model, evidence_doc)]
        else:
            assert bundle is not None  # noqa: S101 - checked above
            reviewers = _reviewers_from_bundle(bundle)
        decision = reconcile(
            ReviewInput(
                repo=repo,
                revision=revision,
                verdict_in=verdict,
                mode=mode,
                mode_source=ModeSource.OVERRIDE,
                scope=scope,
                reviewers=reviewers,
                unknown_policy=unknown_policy,
                repo_root=str(root.absolute()),
            )
        )
        if output is not None:
            _emit_document(dump_model(decision), output)
        sys.stdout.write(_render(decision, output_format))
        sys.stdout.flush()
    if exit_code and decision.downgraded:
        raise typer.Exit(int(ExitCode.DOWNGRADED))


# --- schema, formats, demo ---------------------------------------------------------------------


@app.command()
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
            raise BadInputError(f"unknown schema {name!r}; known: {', '.join(SCHEMAS)}")
        typer.echo(json.dumps(document, indent=2, sort_keys=True))


@app.command()
def formats() -> None:
    """List the stream formats `record` reads."""
    for name in sorted(ADAPTERS):
        adapter = ADAPTERS[name]
        typer.echo(f"{name:<16} capability {adapter.capability.value:<9} {adapter.description}")


@app.command()
def demo(
    keep: Annotated[Path | None, typer.Option(help="Keep the demo's files in this folder.")] = None,
) -> None:
    """Record and reconcile the bundled example: an honest and a lying pi reviewer."""
    from coverage_gate.demo import run_demo  # noqa: PLC0415 - only the demo needs it

    with _errors_to_exit():
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            run_demo(keep, _say, typer.echo)
            _say(f"the demo's streams, evidence and decisions are in {keep}")
        else:
            with tempfile.TemporaryDirectory(prefix="coverage-gate-demo-") as folder:
                run_demo(Path(folder), _say, typer.echo)


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
