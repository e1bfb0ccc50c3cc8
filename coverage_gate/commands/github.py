"""`coverage-gate github`: the step of the GitHub Action (``action.yml``).

It reads the action's inputs from ``INPUT_<NAME>`` variables (the composite step passes each one
through), records each reviewer's stream, reconciles as ``coverage-gate reconcile`` does, and
hands the decision to GitHub: step outputs (``GITHUB_OUTPUT``), the job summary
(``GITHUB_STEP_SUMMARY``), one annotation per finding on stdout, the comment body and a SARIF
log next to the decision. Outside a runner (no ``GITHUB_OUTPUT``), outputs and summary are left
out and stderr says so.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer

from coverage_gate.commands._common import error_line, say
from coverage_gate.edges.stdio import write_stdout
from coverage_gate.errors import BadInputError, CoverageGateError, ExitCode, UsageError

if TYPE_CHECKING:
    from coverage_gate.commands.flags import ModeChoice
    from coverage_gate.contracts.enums import CitationPolicy, MutationPolicy
    from coverage_gate.contracts.model import DepthPolicy, UnknownPolicy, Verdict

__all__ = [
    "INPUTS",
    "INPUTS_HELP",
    "ActionInput",
    "ActionInputs",
    "E",
    "github_command",
    "parse_inputs",
]

E = TypeVar("E", bound=StrEnum)


@dataclass(frozen=True)
class ActionInput:
    """One input of the action: its name in ``action.yml`` and what it is."""

    name: str
    help: str

    @property
    def variable(self) -> str:
        return "INPUT_" + self.name.upper().replace("-", "_")


#: The action's inputs, as ``action.yml`` declares them (a test holds the two together).
INPUTS: tuple[ActionInput, ...] = (
    ActionInput("verdict", "the review's verdict before reconciliation (required)"),
    ActionInput("claims", "reviewer output file(s), one per line"),
    ActionInput("stream", "event stream file(s) to record, one per line, one per claims file"),
    ActionInput("evidence", "evidence document(s), one per line, one per claims file"),
    ActionInput("bundle", "a review bundle, instead of claims, stream and evidence"),
    ActionInput("codereview-run", "a codereview-cli run folder, instead of claims or bundle"),
    ActionInput("format", "the streams' format (detected when empty)"),
    ActionInput("diff", "the pinned diff the reviewers paged through (streams, codereview-run)"),
    ActionInput("changed", "the changed-file list"),
    ActionInput("base", "base commit: the changed files from git diff base...head"),
    ActionInput("head", "head commit, with base"),
    ActionInput("exclude", "globs of changed paths that are not reviewable, one per line"),
    ActionInput("mode", "auto (the feature flag), off, shadow or enforce"),
    ActionInput("flags", "a feature-flag snapshot file"),
    ActionInput("depth-policy", "accept, any-hunk or all-hunks"),
    ActionInput("unknown-policy", "accept or downgrade"),
    ActionInput("citation-policy", "downgrade or accept"),
    ActionInput("mutation-policy", "accept or downgrade"),
    ActionInput("receipts", "a folder for the decision's receipt (reconcile --receipt)"),
    ActionInput("repo", "the repository as OWNER/NAME"),
    ActionInput("revision", "the commit the review is about"),
    ActionInput("repo-root", "the repository's checkout"),
    ActionInput("output-dir", "where the decision, comment body, SARIF log and evidence go"),
    ActionInput("fail-on-downgrade", "true: fail the step when the verdict was downgraded"),
)

#: The inputs as `coverage-gate github --help` lists them: one a line (``\b`` keeps click from
#: rewrapping the list into one paragraph).
INPUTS_HELP = "Inputs, each from its variable (INPUT_ and the name in capitals):\n\n\b\n"
INPUTS_HELP += "\n".join(f"{spec.name} ({spec.variable}): {spec.help}" for spec in INPUTS)

_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}


@dataclass(frozen=True)
class ActionInputs:
    repo: str
    revision: str
    verdict: Verdict
    output_dir: Path
    claims: list[Path] = field(default_factory=list)
    streams: list[Path] = field(default_factory=list)
    evidence: list[Path] = field(default_factory=list)
    bundle: Path | None = None
    codereview_run: Path | None = None
    stream_format: str | None = None
    diff: Path | None = None
    changed: Path | None = None
    base: str | None = None
    head: str | None = None
    exclude: list[str] = field(default_factory=list)
    mode: ModeChoice | None = None
    flags: Path | None = None
    depth_policy: DepthPolicy | None = None
    unknown_policy: UnknownPolicy | None = None
    citation_policy: CitationPolicy | None = None
    mutation_policy: MutationPolicy | None = None
    receipts: Path | None = None
    repo_root: Path | None = None
    fail_on_downgrade: bool = False


class _Raw:
    """The inputs as given: trimmed, an empty one counting as not given."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._values = {spec.name: env.get(spec.variable, "").strip() for spec in INPUTS}

    def text(self, name: str) -> str | None:
        return self._values[name] or None

    def required(self, name: str, what: str) -> str:
        value = self.text(name)
        if value is None:
            raise UsageError(f"input '{name}' is required: {what}")
        return value

    def path(self, name: str) -> Path | None:
        value = self.text(name)
        return Path(value) if value else None

    def lines(self, name: str) -> list[str]:
        return [line.strip() for line in self._values[name].splitlines() if line.strip()]

    def choice(self, name: str, kind: type[E], *, required: str = "") -> E | None:
        """The input as a member of ``kind``; ``required`` says what is expected when the input
        must be given."""
        value = self.required(name, required) if required else self.text(name)
        if value is None:
            return None
        try:
            return kind(value)
        except ValueError:
            known = ", ".join(member.value for member in kind)
            raise UsageError(f"input '{name}': {value!r} is not one of: {known}") from None


def parse_inputs(env: Mapping[str, str]) -> ActionInputs:
    """The action's inputs from ``INPUT_*`` variables; a missing, unknown or conflicting one is
    a usage error naming the input."""
    from coverage_gate.commands.flags import ModeChoice  # noqa: PLC0415
    from coverage_gate.contracts.enums import CitationPolicy, MutationPolicy  # noqa: PLC0415
    from coverage_gate.contracts.model import DepthPolicy, UnknownPolicy, Verdict  # noqa: PLC0415

    raw = _Raw(env)
    verdict = raw.choice("verdict", Verdict, required=", ".join(member.value for member in Verdict))
    assert verdict is not None  # noqa: S101 - a required choice is never None
    claims, streams, evidence = raw.lines("claims"), raw.lines("stream"), raw.lines("evidence")
    bundle, codereview_run = raw.path("bundle"), raw.path("codereview-run")
    for name, source in (("bundle", bundle), ("codereview-run", codereview_run)):
        if source is not None and (claims or streams or evidence):
            raise UsageError(
                f"input '{name}' cannot be combined with 'claims', 'stream' or 'evidence'"
            )
    if bundle is not None and codereview_run is not None:
        raise UsageError("give input 'bundle' or 'codereview-run', not both")
    if bundle is None and codereview_run is None and not claims:
        raise UsageError(
            "input 'claims' (one reviewer output per line), 'bundle' or 'codereview-run' is "
            "required"
        )
    if streams and evidence:
        raise UsageError(
            "inputs 'stream' and 'evidence' cannot both be given: a stream is recorded into "
            "evidence"
        )
    for name, given in (("stream", streams), ("evidence", evidence)):
        if given and len(given) != len(claims):
            raise UsageError(
                f"input '{name}' lists {len(given)} file(s) and input 'claims' {len(claims)}: "
                "give one per reviewer, in the same order"
            )
    changed, base, head = raw.path("changed"), raw.text("base"), raw.text("head")
    if changed is not None and (base or head):
        raise UsageError("give input 'changed' or inputs 'base' and 'head', not both")
    if changed is None and not (base and head):
        raise UsageError(
            "input 'changed' (the changed-file list) or inputs 'base' and 'head' are required"
        )
    fail = raw.text("fail-on-downgrade") or "false"
    if fail not in _TRUE | _FALSE:
        raise UsageError(f"input 'fail-on-downgrade': {fail!r} is not true or false")
    return ActionInputs(
        repo=raw.required("repo", "the repository as OWNER/NAME"),
        revision=raw.required("revision", "the commit the review is about"),
        verdict=verdict,
        output_dir=Path(raw.required("output-dir", "a folder for the decision and its files")),
        claims=[Path(line) for line in claims],
        streams=[Path(line) for line in streams],
        evidence=[Path(line) for line in evidence],
        bundle=bundle,
        codereview_run=codereview_run,
        stream_format=raw.text("format"),
        diff=raw.path("diff"),
        changed=changed,
        base=base,
        head=head,
        exclude=raw.lines("exclude"),
        mode=raw.choice("mode", ModeChoice),
        flags=raw.path("flags"),
        depth_policy=raw.choice("depth-policy", DepthPolicy),
        unknown_policy=raw.choice("unknown-policy", UnknownPolicy),
        citation_policy=raw.choice("citation-policy", CitationPolicy),
        mutation_policy=raw.choice("mutation-policy", MutationPolicy),
        receipts=raw.path("receipts"),
        repo_root=raw.path("repo-root"),
        fail_on_downgrade=fail in _TRUE,
    )


def _annotate_error(message: str) -> None:
    from coverage_gate.outputs.github import workflow_command  # noqa: PLC0415 - light, but only here

    with contextlib.suppress(CoverageGateError):  # a closed stdout: stderr has said it already
        write_stdout(workflow_command("error", message, {"title": "coverage-gate"}) + "\n", "error")


@contextlib.contextmanager
def _failures_annotated(stage: list[str]) -> Iterator[None]:
    """An error ends the step with its exit code, a one-line message on stderr and an ``error``
    annotation, so the run's page says why it failed. ``stage`` names the work under way."""
    try:
        yield
    except CoverageGateError as error:
        say(error_line(str(error)))
        _annotate_error(f"coverage-gate: {error}")
        raise typer.Exit(int(error.exit_code)) from None
    except typer.Exit as stop:
        if stop.exit_code:
            _annotate_error(
                f"coverage-gate: {stage[-1]} failed (exit {stop.exit_code}); the step's log says "
                "why"
            )
        raise


@contextlib.contextmanager
def _commands_stopped() -> Iterator[None]:
    """While the reviewer's own words may reach stdout (the text decision repeats its claims),
    the runner obeys no workflow command there: ``::stop-commands::TOKEN`` until ``::TOKEN::``,
    with a token nobody can guess."""
    token = secrets.token_hex(16)
    write_stdout(f"::stop-commands::{token}\n", "log")
    try:
        yield
    finally:
        with contextlib.suppress(CoverageGateError):  # a closed stdout is said on its own
            write_stdout(f"::{token}::\n", "log")


def _path_prefix(repo_root: Path | None, workspace: str | None) -> str:
    """Where the repository lies in the workspace, for annotation paths (``''`` at its top)."""
    if not workspace:
        return ""
    root = (repo_root or Path.cwd()).resolve()
    try:
        inside = root.relative_to(Path(workspace).resolve())
    except ValueError:
        return ""
    return "" if str(inside) == "." else f"{inside.as_posix()}/"


def _append(variable: str, text: str, env: Mapping[str, str]) -> bool:
    """Append ``text`` to the file the runner names in ``variable``; ``False`` when unset."""
    target = env.get(variable)
    if not target:
        return False
    try:
        with Path(target).open("a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise BadInputError(f"{variable} {target}: cannot be written ({error.strerror})") from None
    return True


def _write(path: Path, text: str) -> None:
    from coverage_gate.edges.files import write_atomic  # noqa: PLC0415 - pydantic comes with it

    try:
        write_atomic(path, text)
    except OSError as error:
        raise BadInputError(f"{path}: cannot be written ({error.strerror})") from None


def github_command() -> None:
    """Run as the GitHub Action's step: read the inputs from the INPUT_* variables (see
    action.yml), record each stream, reconcile, and write the step outputs, the job summary,
    one annotation per finding, the PR comment body and a SARIF log."""
    stage = ["reading the inputs"]
    with _failures_annotated(stage):
        inputs = parse_inputs(os.environ)
        downgraded = _run(inputs, stage)
    if inputs.fail_on_downgrade and downgraded:
        say("coverage-gate: the verdict was downgraded and fail-on-downgrade is true")
        raise typer.Exit(int(ExitCode.DOWNGRADED))


def _decide(inputs: ActionInputs, folder: Path, stage: list[str]) -> Path:
    """Record each stream and reconcile, as `record` and `reconcile` do (each prints what it
    prints there); the decision document's path."""
    from coverage_gate.commands._options import (  # noqa: PLC0415
        DEFAULT_LINE_BYTES,
        DEFAULT_MAX_FILES,
        DEFAULT_MAX_ISSUES,
    )
    from coverage_gate.commands.flags import ModeChoice  # noqa: PLC0415
    from coverage_gate.commands.reconcile import reconcile_command  # noqa: PLC0415
    from coverage_gate.commands.record import record  # noqa: PLC0415
    from coverage_gate.contracts.model import BundleReviewer, ReviewBundle  # noqa: PLC0415
    from coverage_gate.edges.files import dump_model  # noqa: PLC0415

    evidence = list(inputs.evidence)
    for index, stream in enumerate(inputs.streams, start=1):
        stage.append(f"recording stream {stream}")
        target = folder / f"reviewer-{index}.evidence.json"
        record(
            stream=str(stream),
            source_format=inputs.stream_format,
            revision=inputs.revision,
            output=target,
            repo_root=inputs.repo_root,
            diff=inputs.diff,
            agent=None,
            max_files=DEFAULT_MAX_FILES,
            max_issues=DEFAULT_MAX_ISSUES,
            max_line_bytes=DEFAULT_LINE_BYTES,
        )
        evidence.append(target)
    bundle = inputs.bundle
    claims = evidence_doc = None
    if len(inputs.claims) == 1:
        claims, evidence_doc = inputs.claims[0], (evidence[0] if evidence else None)
    elif inputs.claims:
        bundle = folder / "bundle.json"
        reviewers = [
            BundleReviewer(
                claims=str(path.absolute()),
                evidence=str(evidence[index].absolute()) if evidence else None,
            )
            for index, path in enumerate(inputs.claims)
        ]
        _write(bundle, dump_model(ReviewBundle(schema_version=1, reviewers=reviewers)))
    decision_path = folder / "decision.json"
    stage.append("reconciling")
    reconcile_command(
        repo=inputs.repo,
        revision=inputs.revision,
        verdict=inputs.verdict,
        claims=claims,
        evidence=evidence_doc,
        bundle=bundle,
        codereview_run=inputs.codereview_run,
        diff=inputs.diff if inputs.codereview_run is not None else None,
        changed=inputs.changed,
        base=inputs.base,
        head=inputs.head,
        mode=inputs.mode or ModeChoice.AUTO,
        flags_file=inputs.flags,
        unknown_policy=inputs.unknown_policy,
        depth_policy=inputs.depth_policy,
        citation_policy=inputs.citation_policy,
        mutation_policy=inputs.mutation_policy,
        receipt=inputs.receipts,
        exclude=inputs.exclude,
        repo_root=inputs.repo_root,
        decision_json=decision_path,
    )
    return decision_path


def _run(inputs: ActionInputs, stage: list[str]) -> bool:
    """Record, reconcile and write what GitHub reads; whether the verdict was downgraded."""
    # Imported here: `--help` and the other commands need none of this.
    from coverage_gate.contracts.model import DecisionDocument  # noqa: PLC0415
    from coverage_gate.edges.files import load_model  # noqa: PLC0415
    from coverage_gate.outputs import github  # noqa: PLC0415
    from coverage_gate.outputs.formats import OutputFormat, render_decision  # noqa: PLC0415

    folder = inputs.output_dir
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInputError(
            f"input 'output-dir' {folder}: cannot be made ({error.strerror})"
        ) from None
    with _commands_stopped():
        decision_path = _decide(inputs, folder, stage)
    stage.append("writing the decision's files for GitHub")
    decision = load_model(decision_path, DecisionDocument, "decision")
    files = {
        "decision": decision_path,
        "comment": folder / "comment.md",
        "sarif": folder / "decision.sarif",
    }
    _write(files["comment"], github.comment_body(decision))
    _write(files["sarif"], render_decision(decision, OutputFormat.SARIF))
    prefix = _path_prefix(inputs.repo_root, os.environ.get("GITHUB_WORKSPACE"))
    lines = github.annotation_lines(decision, path_prefix=prefix)
    write_stdout("".join(line + "\n" for line in lines), "annotations")
    outputs = github.decision_outputs(
        decision, {name: str(path.absolute()) for name, path in files.items()}
    )
    delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
    written = _append("GITHUB_OUTPUT", github.outputs_text(outputs, delimiter), os.environ)
    _append("GITHUB_STEP_SUMMARY", github.summary(decision), os.environ)
    if not written:
        say("coverage-gate: GITHUB_OUTPUT is not set (not in a runner): no step outputs")
    return decision.downgraded
