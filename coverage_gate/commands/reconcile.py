"""`coverage-gate reconcile`: claims, evidence and scope in; the decision out."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from coverage_gate.commands._choice import FLAG, choice
from coverage_gate.commands._common import (
    DECISION,
    emit_document,
    errors_to_exit,
    info,
    say,
)
from coverage_gate.commands._options import (
    DEFAULT_LINE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_ISSUES,
    record_settings,
    resolved_revision,
)
from coverage_gate.commands.flags import (
    FallbackChoice,
    FlagNameOption,
    FlagsFileOption,
    ModeChoice,
    OnErrorChoice,
)
from coverage_gate.contracts.enums import (
    CitationPolicy,
    DepthPolicy,
    ModeSource,
    MutationPolicy,
    Reason,
    UnknownPolicy,
    Verdict,
)
from coverage_gate.edges.stdio import require_stdout, stdin_bytes
from coverage_gate.errors import ExitCode, UsageError, check_repo
from coverage_gate.outputs.formats import OutputFormat, render_decision

if TYPE_CHECKING:
    from coverage_gate.contracts.model import DecisionDocument
    from coverage_gate.contracts.receipt import FlagRecord
    from coverage_gate.core.reconcile import ReviewerInput, ReviewInput
    from coverage_gate.edges.gittree import GitTree
    from coverage_gate.rollout.flags import FlagSettings, ModeResolution
    from coverage_gate.rollout.receipts import RecordingFiles, RecordingTree
    from coverage_gate.telemetry.otel_setup import Telemetry

__all__ = ["decide", "reconcile_command"]


def _scope(
    changed: Path | None,
    base: str | None,
    head: str | None,
    root: Path,
    excludes: list[str],
    default_excludes: bool,
) -> tuple[list[str], str]:
    """The review's scope, and what an empty scope is to be blamed on."""
    from coverage_gate.edges.files import read_bytes  # noqa: PLC0415 - start-up: see commands._common
    from coverage_gate.edges.scope import (  # noqa: PLC0415
        build_filter,
        changed_from_git,
        decode_changed,
        parse_changed,
        reviewable,
    )

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
        origin = f"git diff {base}...{head} shows no changed file{same}"
    else:
        raise UsageError("the changed files are needed: --changed FILE, or --base and --head")
    if paths:
        origin = f"the reviewable-path filter excluded all {len(paths)} changed file(s)"
    return reviewable(paths, build_filter(excludes, default_excludes)), origin


def _warn_about(decision: DecisionDocument, empty_scope: str) -> None:
    """Say on stderr what the decision says of an operator's likely mistake."""
    if not decision.scope:
        say(f"coverage-gate: warning: nothing to review: {empty_scope}")
    for reviewer in decision.reviewers:
        if Reason.EVIDENCE_STALE in reviewer.reasons:
            say(
                f"coverage-gate: warning: evidence of reviewer {reviewer.agent_id} was recorded "
                f"at {reviewer.evidence_revision}, not at {decision.revision}: its claims are "
                "unknown (evidence_stale)"
            )


def _one_reviewer(claims: Path, evidence: Path | None) -> list[ReviewerInput]:
    from coverage_gate.contracts.model import ReviewerOutput  # noqa: PLC0415
    from coverage_gate.core.reconcile import ReviewerInput  # noqa: PLC0415
    from coverage_gate.edges.files import load_evidence, load_model, validate_json  # noqa: PLC0415 - start-up

    if str(claims) == "-":  # the reviewer's output piped in, as --changed - and record's stream
        data = stdin_bytes("reviewer output").read().removeprefix(b"\xef\xbb\xbf")
        output = validate_json(ReviewerOutput, data, "(stdin)", "reviewer output")
    else:
        output = load_model(claims, ReviewerOutput, "reviewer output")
    return [ReviewerInput(output.agent_id, output, load_evidence(evidence) if evidence else None)]


def _reviewers_from_bundle(bundle_path: Path) -> list[ReviewerInput]:
    from coverage_gate.contracts.model import ReviewBundle, ReviewerOutput  # noqa: PLC0415
    from coverage_gate.core.reconcile import ReviewerInput  # noqa: PLC0415
    from coverage_gate.edges.files import load_evidence, load_model  # noqa: PLC0415 - start-up

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


def _reviewers_from_run(
    run: Path, revision: str, root: Path, diff: Path | None
) -> list[ReviewerInput]:
    """A codereview-cli run's reviewer tasks; what was made of them is said on stderr."""
    from coverage_gate.edges.gittree import GitTrees  # noqa: PLC0415
    from coverage_gate.record.codereview import load_run  # noqa: PLC0415 - start-up time

    settings = record_settings(
        revision=revision,
        repo_root=root,
        diff=diff,
        agent=None,
        max_files=DEFAULT_MAX_FILES,
        max_issues=DEFAULT_MAX_ISSUES,
        max_line_bytes=DEFAULT_LINE_BYTES,
    )
    with GitTrees(revision) as trees:
        loaded = load_run(run, revision, lambda head: replace(settings, revision=head, trees=trees))
    for note in loaded.notes:
        say(f"coverage-gate: {note}")
    return loaded.reviewers


def _resolve_mode(
    repo: str,
    mode: ModeChoice,
    settings: FlagSettings,
    reviewers: list[ReviewerInput],
) -> ModeResolution:
    """Explicit --mode, else COVERAGE_GATE_MODE, else the flag sources (DESIGN §8)."""
    from coverage_gate.rollout.flags import override_from_env, parse_mode, resolve_mode  # noqa: PLC0415

    override = parse_mode(mode.value, what="--mode") or override_from_env(os.environ)
    agents = sorted({reviewer.agent_id for reviewer in reviewers})
    formats = sorted({r.evidence.source for r in reviewers if r.evidence is not None})
    properties = {"agent": ",".join(agents), "format": ",".join(formats)}
    return resolve_mode(repo, settings, override=override, properties=properties)


def _check_sources(
    claims: Path | None,
    bundle: Path | None,
    codereview_run: Path | None,
    *,
    diff: Path | None,
    evidence: Path | None,
) -> None:
    """Exactly one source of reviewers, and only the options that go with it."""
    if [claims, bundle, codereview_run].count(None) != 2:
        raise UsageError(
            "give exactly one of --claims (one reviewer), --bundle or --codereview-run (several)"
        )
    if codereview_run is None and diff is not None:
        raise UsageError("--diff goes with --codereview-run")
    if codereview_run is not None and evidence is not None:
        raise UsageError("--evidence goes with --claims; a run's tasks hold their own")


def _say_fallback(resolution: ModeResolution) -> None:
    """A fallback mode is said once, then why no flag answered."""
    if resolution.source is ModeSource.FALLBACK:
        mode_name = resolution.mode.value
        # the detail begins "fallback <mode>: "
        why = resolution.detail.removeprefix(f"fallback {mode_name}: ")
        say(f"coverage-gate: mode {mode_name} (fallback): {why}")


def decide(review: ReviewInput) -> DecisionDocument:
    """How ``reconcile`` decides a review; ``receipts verify`` and ``replay`` decide again this
    way (the shadow guard included)."""
    from coverage_gate.api import guarded_reconcile  # noqa: PLC0415 - start-up

    return guarded_reconcile(review)


def _recorder(tree: GitTree) -> tuple[RecordingTree, RecordingFiles]:
    """Recorders of what the repository answers, for a receipt: the tree and the files port."""
    from coverage_gate.rollout.receipts import RecordingFiles, RecordingTree  # noqa: PLC0415 - --receipt

    return RecordingTree(tree), RecordingFiles(tree)


def _flag_record(resolution: ModeResolution, settings: FlagSettings) -> FlagRecord | None:
    """The flag that answered, for a receipt; a snapshot's own definition of it goes along."""
    import hashlib  # noqa: PLC0415 - only with --receipt (OpenSSL costs start-up)

    from coverage_gate.contracts.receipt import FlagRecord  # noqa: PLC0415
    from coverage_gate.edges.files import read_bytes  # noqa: PLC0415 - only with --receipt
    from coverage_gate.rollout.receipts import reduce_snapshot  # noqa: PLC0415

    if not resolution.flag_found:
        return None
    snapshot_sha256 = snapshot_flag = None
    if resolution.source is ModeSource.SNAPSHOT and settings.snapshot is not None:
        data = read_bytes(settings.snapshot, "flags snapshot")
        snapshot_sha256 = hashlib.sha256(data).hexdigest()
        snapshot_flag = reduce_snapshot(json.loads(data), settings.flag_name)
    return FlagRecord(
        name=settings.flag_name,
        variant=resolution.variant,
        payload=dict(resolution.payload) if resolution.payload is not None else None,
        snapshot_sha256=snapshot_sha256,
        snapshot_flag=snapshot_flag,
    )


def _write_receipt(
    folder: Path,
    review: ReviewInput,
    decision: DecisionDocument,
    recorder: tuple[RecordingTree, RecordingFiles],
    resolution: ModeResolution,
    settings: FlagSettings,
) -> None:
    from coverage_gate.rollout import receipt_store, receipts  # noqa: PLC0415 - only with --receipt

    ports = receipts.recorded_ports(*recorder)
    receipt = receipts.build(review, decision, ports, _flag_record(resolution, settings))
    path = receipt_store.write(folder, receipt)
    info(f"coverage-gate: receipt {path}")


def _record_telemetry(telemetry: Telemetry, decision: DecisionDocument, duration_s: float) -> None:
    from coverage_gate.rollout.metrics import record_decision, record_reconcile_span  # noqa: PLC0415

    formats = {
        reviewer.agent_id: reviewer.evidence_source or "none" for reviewer in decision.reviewers
    }
    try:
        record_decision(telemetry.meter(), decision, duration_s=duration_s, formats=formats)
        record_reconcile_span(telemetry.tracer(), decision, duration_s=duration_s, formats=formats)
    # Telemetry export boundary: recording metrics must never change a decision or an exit code.
    except Exception as error:  # noqa: BLE001
        say(f"coverage-gate: warning: telemetry not recorded: {error}")


def reconcile_command(
    repo: Annotated[str, typer.Option(help="Repository as OWNER/NAME.")],
    revision: Annotated[str, typer.Option(help="The commit (head SHA) the review is about.")],
    verdict: Annotated[
        Verdict,
        typer.Option(**choice(Verdict), help="The review's verdict before reconciliation."),
    ],
    claims: Annotated[
        Path | None,
        typer.Option(help="One reviewer's output (JSON, schema_version 1; '-' reads stdin)."),
    ] = None,
    evidence: Annotated[
        Path | None,
        typer.Option(help="That reviewer's evidence document; without it claims are unknown."),
    ] = None,
    bundle: Annotated[
        Path | None,
        typer.Option(help="Review bundle JSON listing several reviewers (instead of --claims)."),
    ] = None,
    codereview_run: Annotated[
        Path | None,
        typer.Option(
            help="A codereview-cli run folder (or its llm-tasks/): each reviewer task is one "
            "reviewer, its claims validated-output.json, its evidence metadata.json (instead of "
            "--claims)."
        ),
    ] = None,
    diff: Annotated[
        Path | None,
        typer.Option(
            help="With --codereview-run: the pinned diff its cr_diff calls paged through "
            "(per-file diff evidence and depth)."
        ),
    ] = None,
    changed: Annotated[
        Path | None,
        typer.Option(help="Newline-separated changed-file list ('-' reads stdin)."),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option(
            help="Base commit: scope from git diff base...head (the changes since the merge base)."
        ),
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
    citation_policy: Annotated[
        CitationPolicy | None,
        typer.Option(
            **choice(CitationPolicy),
            help="Whether a citation that does not match the file at the revision downgrades an "
            "Approve: downgrade (the mode decides: shadow measures, enforce applies) or accept "
            "(env COVERAGE_GATE_CITATION_POLICY, else the flag variant's payload; default "
            "downgrade).",
            show_default=False,
        ),
    ] = None,
    mutation_policy: Annotated[
        MutationPolicy | None,
        typer.Option(
            **choice(MutationPolicy),
            help="What a reviewer that changed files during its review does to its coverage: "
            "accept (recorded and said) or downgrade (coverage incomplete, reviewer_mutated) "
            "(env COVERAGE_GATE_MUTATION_POLICY, else the flag variant's payload; default "
            "accept).",
            show_default=False,
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            metavar="<glob>", help="Glob of changed paths that are not reviewable (repeatable)."
        ),
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
            "--format",
            **choice(OutputFormat),
            help="Output format: text, json (the decision), markdown (a PR comment) or sarif "
            "(SARIF 2.1.0: "
            "each unsupported, shallow or unverifiable claim on its file).",
        ),
    ] = OutputFormat.TEXT,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="<file>",
            help="Write the output, in --format, to this file instead of standard output.",
        ),
    ] = None,
    decision_json: Annotated[
        Path | None,
        typer.Option(
            metavar="<file>",
            help="Also write the decision document (JSON) to this file, whatever --format is: for "
            "a pipeline that wants both a SARIF log or a comment and the decision.",
        ),
    ] = None,
    exit_code: Annotated[
        bool,
        typer.Option("--exit-code", **FLAG, help="Exit 1 when the decision changed the verdict."),
    ] = False,
    receipt: Annotated[
        Path | None,
        typer.Option(
            help="Also write the decision's receipt (its inputs, what the repository answered, "
            "the decision; content-addressed, gzipped) into this folder."
        ),
    ] = None,
) -> None:
    """Reconcile claims with evidence over the changed files and print the decision."""
    # What only a run needs (start-up: see commands._common)
    from coverage_gate.api import guarded_reconcile  # noqa: PLC0415
    from coverage_gate.core.note import agent_mismatches  # noqa: PLC0415
    from coverage_gate.core.reconcile import ReviewInput  # noqa: PLC0415
    from coverage_gate.edges.gittree import GitTree, git_toplevel  # noqa: PLC0415
    from coverage_gate.rollout.flags import effective_policies, parse_mode, settings_from_env  # noqa: PLC0415
    from coverage_gate.telemetry import otel_setup  # noqa: PLC0415

    with errors_to_exit():  # not counted: a malformed --repo is no repository to count for
        check_repo(repo)
    telemetry = otel_setup.setup(os.environ)
    try:
        with errors_to_exit(telemetry, repo):
            began = time.perf_counter()
            # resolved where `record` resolves it with no --repo-root: the Git top level of the
            # current directory, so that evidence recorded at a name is current at that name
            top = git_toplevel(Path.cwd()) if repo_root is None else None
            revision = resolved_revision(
                revision, repo_root if top is None else Path(top), quiet=True
            )
            root = repo_root or Path.cwd()
            _check_sources(claims, bundle, codereview_run, diff=diff, evidence=evidence)
            if output is None:
                require_stdout(DECISION)
            scope, empty_scope = _scope(changed, base, head, root, exclude or [], default_excludes)
            if claims is not None:
                reviewers = _one_reviewer(claims, evidence)
            elif bundle is not None:
                reviewers = _reviewers_from_bundle(bundle)
            else:
                assert codereview_run is not None  # noqa: S101 - checked above
                reviewers = _reviewers_from_run(codereview_run, revision, root, diff)
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
                say(f"coverage-gate: warning: {mismatch}")
            resolution = _resolve_mode(repo, mode, settings, reviewers)
            _say_fallback(resolution)
            policies = effective_policies(
                resolution,
                os.environ,
                depth_policy=depth_policy,
                unknown_policy=unknown_policy,
                citation_policy=citation_policy,
                mutation_policy=mutation_policy,
            )
            with GitTree(root.absolute(), revision) as git_tree:
                recorder = _recorder(git_tree) if receipt is not None else None
                review = ReviewInput(
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
                    citation_policy=policies.citation_policy,
                    citation_policy_source=policies.citation_policy_source,
                    mutation_policy=policies.mutation_policy,
                    mutation_policy_source=policies.mutation_policy_source,
                    repo_root=str(root.absolute()),
                    tree=recorder[0] if recorder else git_tree,
                    files=recorder[1] if recorder else git_tree,
                )
                decision = guarded_reconcile(review)
            duration_s = time.perf_counter() - began
            if receipt is not None and recorder is not None:
                _write_receipt(receipt, review, decision, recorder, resolution, settings)
            _warn_about(decision, empty_scope)
            if decision_json is not None:
                emit_document(render_decision(decision, OutputFormat.JSON), decision_json, DECISION)
            emit_document(render_decision(decision, output_format), output, DECISION)
            # Recorded once it is out: a decision nobody received is counted as an error only.
            _record_telemetry(telemetry, decision, duration_s)
    finally:
        telemetry.shutdown()
    if exit_code and decision.downgraded:
        raise typer.Exit(int(ExitCode.DOWNGRADED))
