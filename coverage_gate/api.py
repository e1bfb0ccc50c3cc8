"""coverage-gate as a Python API: record evidence, reconcile claims with it, load and validate the
contracts, resolve a repository's mode. The command line composes these same operations.

    from pathlib import Path
    from coverage_gate import api

    with open("reviewer.jsonl", "rb") as stream:
        evidence = api.record_stream(stream, "pi-rpc", revision=sha, repo_root="/src/shop")
    claims = api.load_claims(Path("reviewer-output.json"))
    decision = api.reconcile(
        repo="acme/shop",
        revision=sha,
        verdict=api.Verdict.APPROVE,
        scope=api.reviewable_scope(["src/api.py", "poetry.lock"]),
        reviewers=[api.Reviewer(claims.agent_id, claims, evidence)],
        mode=api.resolve_mode("acme/shop").mode,
    )
    print(decision.verdict_out, decision.note)

The names in ``__all__`` are the stable API. Nothing here reads the environment, the clock (but
to time a reconcile for its telemetry), or files other than those named to it, and nothing records
telemetry unless a provider is passed in. Bad input raises ``BadInputError`` and bad configuration
``BadConfigError`` (both ``CoverageGateError``), each with a one-line message naming what is at
fault. Importing this module loads the contracts (pydantic) and the reconciler, and no command
line, OpenTelemetry SDK or adapter; each function loads what it uses.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeVar

from pydantic import BaseModel

from coverage_gate.contracts import defaults
from coverage_gate.contracts.enums import (
    Capability,
    CitationPolicy,
    Coverage,
    Depth,
    DepthPolicy,
    FileStatus,
    Mode,
    ModeSource,
    MutationPolicy,
    PolicySource,
    Reason,
    UnknownPolicy,
    Verdict,
)
from coverage_gate.contracts.model import (
    Bounds,
    DecisionDocument,
    EvidenceDocument,
    ReviewBundle,
    ReviewerOutput,
)
from coverage_gate.core import reconcile as _core
from coverage_gate.core.reconcile import ReviewerInput as Reviewer
from coverage_gate.core.reconcile import ReviewInput
from coverage_gate.errors import BadConfigError, BadInputError, CoverageGateError
from coverage_gate.rollout.flags import FlagSettings, ModeResolution, Policies

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.trace import TracerProvider

    from coverage_gate.core.depth import ContentSource
    from coverage_gate.record.recording import Recorder, RecordSettings

__all__ = [
    "BadConfigError",
    "BadInputError",
    "Bounds",
    "Capability",
    "Coverage",
    "CoverageGateError",
    "DecisionDocument",
    "Depth",
    "DepthPolicy",
    "EvidenceDocument",
    "FileStatus",
    "FlagSettings",
    "Mode",
    "ModeResolution",
    "ModeSource",
    "Policies",
    "PolicySource",
    "Reason",
    "ReviewBundle",
    "Reviewer",
    "ReviewerOutput",
    "UnknownPolicy",
    "Verdict",
    "effective_policies",
    "flag_settings_from_env",
    "formats",
    "load_bundle",
    "load_claims",
    "load_decision",
    "load_evidence",
    "reconcile",
    "record_lines",
    "record_stream",
    "resolve_mode",
    "reviewable_scope",
    "to_json",
]

M = TypeVar("M", bound=BaseModel)
_CHUNK_BYTES = 1 << 22


# --- recording -----------------------------------------------------------------------------------


#: A codereview-cli task's ``metadata.json``: a document read whole, not a stream of events
#: (``record_stream`` reads it; ``record_lines`` does not).
CODEREVIEW_CLI = "codereview-cli"


def formats() -> list[str]:
    """The formats ``record_stream`` reads, by name, as the ``formats`` command lists them:
    every event-stream format (``record_lines`` reads those) and ``codereview-cli``."""
    from coverage_gate.adapters import ADAPTERS  # noqa: PLC0415 - only what is used

    return sorted([*ADAPTERS, CODEREVIEW_CLI])


def _recorder(
    source_format: str, settings: RecordSettings, tracer_provider: SdkTracerProvider | None
) -> Recorder:
    from coverage_gate.adapters import ADAPTERS  # noqa: PLC0415 - only what is used
    from coverage_gate.record.recording import Recorder  # noqa: PLC0415

    adapter = ADAPTERS.get(source_format)
    if adapter is None:
        known = ", ".join(formats())
        raise BadInputError(f"format {source_format!r} is unknown; known: {known}")
    return Recorder(adapter, settings, tracer_provider)


def _settings(
    *,
    revision: str,
    repo_root: str | None,
    diff: bytes | None,
    content: Mapping[str, bytes] | ContentSource | None,
    agent: str | None,
    bounds: Bounds | None,
    max_line_bytes: int,
) -> RecordSettings:
    from coverage_gate.contracts import evidence_doc as plain  # noqa: PLC0415
    from coverage_gate.core.diffmap import DiffIndex  # noqa: PLC0415
    from coverage_gate.edges.content import MappingContent  # noqa: PLC0415
    from coverage_gate.record.recording import RecordSettings  # noqa: PLC0415

    if not revision:
        raise BadInputError("revision is required: evidence is bound to the commit under review")
    source = MappingContent(content) if isinstance(content, Mapping) else content
    return RecordSettings(
        revision=revision,
        repo_root=repo_root,
        bounds=plain.Bounds()
        if bounds is None
        else plain.Bounds(max_files=bounds.max_files, max_issues=bounds.max_issues),
        diff=DiffIndex.parse(diff) if diff is not None else None,
        agent=agent,
        max_line_bytes=max_line_bytes,
        content=None if source is None else (lambda _root: source),
    )


def _record_metadata(
    data: bytes, settings: RecordSettings, tracer_provider: SdkTracerProvider | None
) -> EvidenceDocument:
    """A codereview-cli task's metadata, as ``record --format codereview-cli`` reads it from
    standard input."""
    from coverage_gate.record.codereview import MAX_METADATA_BYTES, record_metadata  # noqa: PLC0415

    if len(data) > MAX_METADATA_BYTES:
        raise BadInputError(f"codereview-cli metadata: over {MAX_METADATA_BYTES} bytes")
    return record_metadata(data, None, settings, tracer_provider).document


def record_stream(
    stream: BinaryIO | bytes,
    source_format: str,
    *,
    revision: str,
    repo_root: str | None = None,
    diff: bytes | None = None,
    content: Mapping[str, bytes] | ContentSource | None = None,
    agent: str | None = None,
    bounds: Bounds | None = None,
    max_line_bytes: int = defaults.MAX_LINE_BYTES,
    tracer_provider: SdkTracerProvider | None = None,
) -> EvidenceDocument:
    """The evidence document of an agent's event stream in ``source_format`` (see ``formats``):
    a binary file object, read to its end, or the stream's bytes.

    ``repo_root`` places absolute paths (else the stream's own working directory, where its
    format records one); ``diff`` is the pinned unified diff (per-file diff evidence and depth);
    ``content`` gives files' content at the revision by repository-relative path, to tell
    byte-ranged reads in lines. ``tracer_provider`` (an SDK one) gets an ``execute_tool`` span
    per call under an ``invoke_agent`` span; without it no span is made, and the document is the
    same. ``codereview-cli``: a task's ``metadata.json`` (its per-call trace), read whole.
    """
    settings = _settings(revision=revision, repo_root=repo_root, diff=diff, content=content,
                         agent=agent, bounds=bounds, max_line_bytes=max_line_bytes)  # fmt: skip
    if source_format == CODEREVIEW_CLI:
        data = stream if isinstance(stream, bytes) else stream.read()
        return _record_metadata(data, settings, tracer_provider)
    recorder = _recorder(source_format, settings, tracer_provider)
    if isinstance(stream, bytes):
        for start in range(0, len(stream), _CHUNK_BYTES):
            recorder.feed(stream[start : start + _CHUNK_BYTES])
    else:
        while chunk := stream.read(_CHUNK_BYTES):
            recorder.feed(chunk)
    return recorder.finish()


def record_lines(
    lines: Iterable[str | bytes],
    source_format: str,
    *,
    revision: str,
    repo_root: str | None = None,
    diff: bytes | None = None,
    content: Mapping[str, bytes] | ContentSource | None = None,
    agent: str | None = None,
    bounds: Bounds | None = None,
    max_line_bytes: int = defaults.MAX_LINE_BYTES,
    tracer_provider: SdkTracerProvider | None = None,
) -> EvidenceDocument:
    """As ``record_stream``, for a stream given line by line (text is UTF-8 encoded; a line's
    own newline, if any, is kept, and one is added where it is missing). Lines are recorded as
    they come: a live source can be passed as it produces them."""
    settings = _settings(revision=revision, repo_root=repo_root, diff=diff, content=content,
                         agent=agent, bounds=bounds, max_line_bytes=max_line_bytes)  # fmt: skip
    recorder = _recorder(source_format, settings, tracer_provider)
    for line in lines:
        data = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
        recorder.feed(data if data.endswith(b"\n") else data + b"\n")
    return recorder.finish()


# --- the contracts -------------------------------------------------------------------------------


def _load(source: Path | bytes, model: type[M], what: str) -> M:
    from coverage_gate.edges import files  # noqa: PLC0415 - only what is used

    if isinstance(source, Path):
        return files.load_model(source, model, what)
    return files.validate_json(model, source, "(bytes)", what)


def load_claims(source: Path | bytes) -> ReviewerOutput:
    """A reviewer's output (its claims), from a file or JSON bytes, validated strictly."""
    return _load(source, ReviewerOutput, "reviewer output")


def load_evidence(source: Path | bytes) -> EvidenceDocument:
    """An evidence document, from a file or JSON bytes; one of a newer major version than this
    coverage-gate reads is refused."""
    from coverage_gate.edges import files  # noqa: PLC0415 - only what is used

    if isinstance(source, Path):
        return files.load_evidence(source)
    files.check_evidence_version(files.parse_json(source, "(bytes)", "evidence"), "(bytes)")
    return files.validate_json(EvidenceDocument, source, "(bytes)", "evidence")


def load_bundle(source: Path | bytes) -> ReviewBundle:
    """A review bundle (several reviewers), from a file or JSON bytes."""
    return _load(source, ReviewBundle, "review bundle")


def load_decision(source: Path | bytes) -> DecisionDocument:
    """A decision document, from a file or JSON bytes."""
    return _load(source, DecisionDocument, "decision")


def to_json(document: BaseModel) -> str:
    """A contract as the command line writes it: indented JSON, field aliases, a final
    newline."""
    from coverage_gate.edges.files import dump_model  # noqa: PLC0415 - only what is used

    return dump_model(document)


# --- scope and reconciliation --------------------------------------------------------------------


def reviewable_scope(
    changed: Iterable[str],
    *,
    exclude: Sequence[str] = (),
    default_excludes: bool = True,
    repo_root: str | None = None,
) -> list[str]:
    """The scope of a review: the changed files (repository-relative, or absolute under
    ``repo_root``), normalised, less what the reviewable-path filter excludes (lock files,
    vendored and generated code unless ``default_excludes`` is false; ``exclude``: more
    gitignore-style patterns)."""
    from coverage_gate.edges.scope import build_filter, parse_changed, reviewable  # noqa: PLC0415

    paths = parse_changed("\n".join(changed), "(changed files)", repo_root)
    return reviewable(paths, build_filter(exclude, default_excludes))


def guarded_reconcile(review: ReviewInput) -> DecisionDocument:
    """Reconcile a prepared review (what ``reconcile`` and the command line do); in shadow mode a
    failure of the new check must not change the review.

    Like a scientist experiment, shadow returns the control value: if the evidence check itself
    fails, the legacy gate alone decides, and the note says the check failed.
    """
    if review.mode is not Mode.SHADOW:
        return _core.reconcile(review)
    try:
        return _core.reconcile(review)
    # Shadow boundary: the experimental check may fail in ways no test foresaw; in shadow mode
    # that must never cost the review its verdict. The legacy-only decision stands instead.
    except Exception as error:  # noqa: BLE001
        legacy = [replace(reviewer, evidence=None) for reviewer in review.reviewers]
        fallback = _core.reconcile(
            replace(
                review,
                mode=Mode.OFF,
                reviewers=legacy,
                unknown_policy=UnknownPolicy.ACCEPT,
                citation_policy=CitationPolicy.ACCEPT,
                mutation_policy=MutationPolicy.ACCEPT,
                files=None,
                replay_citations=False,
            )
        )
        note = f"The shadow evidence check failed ({type(error).__name__}); legacy gate only."
        return fallback.model_copy(
            update={
                "mode": Mode.SHADOW,
                "would_downgrade": False,
                "note": f"{note}\n\n{fallback.note}",
            }
        )


def reconcile(
    *,
    repo: str,
    revision: str,
    verdict: Verdict,
    scope: Sequence[str],
    reviewers: Sequence[Reviewer],
    mode: Mode = Mode.SHADOW,
    mode_source: ModeSource = ModeSource.OVERRIDE,
    unknown_policy: UnknownPolicy | None = None,
    depth_policy: DepthPolicy | None = None,
    policies: Policies | None = None,
    repo_root: str | None = None,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
) -> DecisionDocument:
    """The decision on a review: each reviewer's claims (``Reviewer(agent_id, claims,
    evidence)``; evidence ``None`` when there is none) checked over ``scope`` (see
    ``reviewable_scope``), the verdict in, the mode (``shadow`` computes and never changes the
    verdict; ``enforce`` returns the reconciled one) and the policies.

    The policies are ``unknown_policy`` and ``depth_policy`` (``accept`` when not given), or
    ``policies`` (from ``effective_policies``), which also says where each came from.
    ``repo_root`` places absolute claimed paths. With a ``meter_provider`` and/or
    ``tracer_provider``, the decision's metrics and its ``reconcile {repo}`` span are recorded on
    them; exporting them is the caller's.
    """
    if policies is None:
        policies = Policies(
            depth_policy or DepthPolicy.ACCEPT,
            PolicySource.DEFAULT if depth_policy is None else PolicySource.CLI,
            unknown_policy or UnknownPolicy.ACCEPT,
            PolicySource.DEFAULT if unknown_policy is None else PolicySource.CLI,
        )
    began = time.perf_counter()
    decision = guarded_reconcile(
        ReviewInput(
            repo=repo,
            revision=revision,
            verdict_in=verdict,
            mode=mode,
            mode_source=mode_source,
            scope=list(scope),
            reviewers=list(reviewers),
            unknown_policy=policies.unknown_policy,
            unknown_policy_source=policies.unknown_policy_source,
            depth_policy=policies.depth_policy,
            depth_policy_source=policies.depth_policy_source,
            citation_policy=policies.citation_policy,
            citation_policy_source=policies.citation_policy_source,
            mutation_policy=policies.mutation_policy,
            mutation_policy_source=policies.mutation_policy_source,
            repo_root=repo_root,
        )
    )
    if meter_provider is not None or tracer_provider is not None:
        from coverage_gate.rollout import metrics  # noqa: PLC0415 - only with a provider
        from coverage_gate.telemetry.ports import METER_NAME, TRACER_NAME  # noqa: PLC0415

        duration_s = time.perf_counter() - began
        formats = {r.agent_id: r.evidence_source or "none" for r in decision.reviewers}
        if meter_provider is not None:
            meter = meter_provider.get_meter(METER_NAME)
            metrics.record_decision(meter, decision, duration_s=duration_s, formats=formats)
        if tracer_provider is not None:
            tracer = tracer_provider.get_tracer(TRACER_NAME)
            metrics.record_reconcile_span(tracer, decision, duration_s=duration_s, formats=formats)
    return decision


# --- mode and policies ---------------------------------------------------------------------------


def flag_settings_from_env(
    environ: Mapping[str, str],
    *,
    flag_name: str | None = None,
    snapshot: Path | None = None,
    unleash_url: str | None = None,
    fallback: Mode | None = None,
    on_error: str | None = None,
) -> FlagSettings:
    """Flag settings as the command line builds them from ``environ`` (``COVERAGE_GATE_FLAGS``,
    ``COVERAGE_GATE_FLAG_NAME``, ``UNLEASH_URL``, ``UNLEASH_API_TOKEN``, ...); a keyword given
    wins over its variable. ``FlagSettings(...)`` builds them without the environment."""
    from coverage_gate.rollout.flags import settings_from_env  # noqa: PLC0415 - only what is used

    return settings_from_env(
        environ,
        flag_name=flag_name,
        snapshot=snapshot,
        unleash_url=unleash_url,
        fallback=fallback,
        on_error=on_error,
    )


def resolve_mode(
    repo: str,
    settings: FlagSettings | None = None,
    *,
    override: Mode | None = None,
    properties: Mapping[str, str] | None = None,
) -> ModeResolution:
    """The mode of ``repo`` (``OWNER/NAME``) and which source answered: ``override``, else the
    flags snapshot in ``settings``, else the live Unleash server (or its disk copy), else the
    fallback (``shadow`` by default, never ``enforce``). ``properties`` add to the evaluation
    context (e.g. ``{"agent": ..., "format": ...}``). Default settings name no source: the
    fallback answers."""
    from coverage_gate.rollout import flags  # noqa: PLC0415 - only what is used

    return flags.resolve_mode(
        repo, settings or FlagSettings(), override=override, properties=properties or {}
    )


def effective_policies(
    resolution: ModeResolution,
    *,
    depth_policy: DepthPolicy | None = None,
    unknown_policy: UnknownPolicy | None = None,
    environ: Mapping[str, str] | None = None,
) -> Policies:
    """The policies a reconcile runs under, and where each came from: the argument, else its
    variable in ``environ`` (``COVERAGE_GATE_DEPTH_POLICY``, ``COVERAGE_GATE_UNKNOWN_POLICY``),
    else the payload of the variant that served the repository, else ``accept``."""
    from coverage_gate.rollout import flags  # noqa: PLC0415 - only what is used

    return flags.effective_policies(
        resolution, environ or {}, depth_policy=depth_policy, unknown_policy=unknown_policy
    )
