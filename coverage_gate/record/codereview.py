"""codereview-cli runs: a task's ``metadata.json`` → evidence; a run's ``llm-tasks/`` → reviewers.

The edge between codereview-cli's artifacts and the core: it reads files, decodes them with the
``codereview-cli`` adapter, turns trace calls into call records (``coverage_gate.core.tracecalls``)
and folds them like any recorded stream's (through spans when a tracer provider is given).

A run folder holds ``llm-tasks/<url-encoded task id>-<first 12 hex of the head SHA>/`` per LLM
task. Each reviewer task (its id starts with ``reviewer:``) is one reviewer: its claims are its
``validated-output.json``, its evidence its ``metadata.json``, bound to the folder's head. A task
without ``metadata.json`` never finished, and one without ``validated-output.json`` gave no output
that passed validation, or whose own status is not ``succeeded``: each is a failed reviewer.
"""

from __future__ import annotations

import codecs
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from coverage_gate.adapters import codereview_cli
from coverage_gate.contracts.evidence_doc import contract
from coverage_gate.contracts.model import Capability, EvidenceDocument, ReviewerOutput
from coverage_gate.core.calls import CallRecord, StreamSummary, resolve_shown
from coverage_gate.core.folding import EvidenceFolder
from coverage_gate.core.reconcile import ReviewerInput, same_revision
from coverage_gate.core.tracecalls import TraceRecords, trace_records
from coverage_gate.edges.files import describe_validation, load_model, parse_json, read_document
from coverage_gate.errors import BadInputError
from coverage_gate.record.recording import TRACER_NAME, RecordSettings, RootChoice
from coverage_gate.record.spans import record_calls
from coverage_gate.telemetry.ports import SpanSink

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = [
    "CLAIMS",
    "MAX_METADATA_BYTES",
    "METADATA",
    "REVIEWER_PREFIX",
    "SUCCEEDED",
    "TASKS",
    "Recorded",
    "Run",
    "RunTask",
    "SettingsFor",
    "evidence_from_metadata",
    "load_run",
    "load_task",
    "looks_like_metadata",
    "read_metadata",
    "record_metadata",
    "reviewer_tasks",
    "tasks_folder",
]

METADATA = "metadata.json"
CLAIMS = "validated-output.json"
TASKS = "llm-tasks"
REVIEWER_PREFIX = "reviewer:"
SUCCEEDED = "succeeded"
MAX_METADATA_BYTES = 64 * 1024 * 1024  # a 256-call trace is some 100 KB
_WHAT = "codereview-cli metadata"
_TASK_FOLDER = re.compile(r"(?P<task>.+)-(?P<head>[0-9a-f]{12})", re.DOTALL)


def read_metadata(data: bytes, where: Path | str) -> codereview_cli.Metadata:
    """A task's metadata, or bad input naming the file and the field at fault."""
    if len(data) > MAX_METADATA_BYTES:
        raise BadInputError(
            f"{_WHAT} {where}: {len(data):,} bytes, more than any task's metadata "
            f"({MAX_METADATA_BYTES:,} at most)"
        )
    data = data.removeprefix(codecs.BOM_UTF8)  # marks the encoding; not part of the JSON
    try:
        return codereview_cli.Metadata.model_validate_json(data)
    except ValidationError as error:
        # Parsed again only to say what is wrong: JSON syntax by line and column, then a
        # version this reader refuses, then the fields at fault.
        problem = codereview_cli.version_problem(parse_json(data, where, _WHAT))
        raise BadInputError(f"{_WHAT} {where}: {problem or describe_validation(error)}") from None


def evidence_from_metadata(
    metadata: codereview_cli.Metadata,
    settings: RecordSettings,
    tracer_provider: TracerProvider | None = None,
    *,
    spans: SpanSink | None = None,
) -> tuple[EvidenceDocument, RootChoice]:
    """The evidence a task's trace gives (module notes), and the root its paths were placed
    under. Without a tracer provider the records are folded directly (the same document)."""
    root = settings.root_for(None)
    trace = metadata.trace
    if trace is None:
        traced = TraceRecords([], 0)
    else:
        tree = settings.trees(root.path) if settings.trees and root.path else None
        calls = [codereview_cli.trace_call(call) for call in trace.calls]
        traced = trace_records(calls, root.path, tree)
    content = settings.content(root.path) if settings.content and root.path else None
    records = resolve_shown(traced.records, settings.diff, content)
    summary = StreamSummary(
        source=codereview_cli.NAME,
        revision=settings.revision,
        capability=Capability.PER_FILE if trace is not None else Capability.NONE,
        # no trace: nothing was seen, so nothing was seen to complete
        stream_complete=trace is not None and trace.stream_complete,
        lines=len(records),
        agent=settings.agent,
        dropped_calls=min(
            (trace.dropped_events if trace is not None else 0) + traced.dropped,
            codereview_cli.INT64_MAX,  # what a span attribute holds
        ),
    )
    document = _fold(records, summary, settings, tracer_provider, spans)
    if trace is not None and trace.truncated and not document.truncated:
        document = document.model_copy(update={"truncated": True})
    return document, root


def looks_like_metadata(prefix: bytes) -> bool:
    """Whether a stream's first bytes look like a task's ``metadata.json``: one JSON object
    naming a ``schema_version`` and a ``task_id`` (stream formats hold one event per line)."""
    head = prefix.removeprefix(codecs.BOM_UTF8).lstrip()
    return head.startswith(b"{") and b'"schema_version"' in head and b'"task_id"' in head


@dataclass(frozen=True)
class Recorded:
    """What ``record`` made of one task's metadata, and what an operator should be told."""

    document: EvidenceDocument
    root: RootChoice
    notes: list[str]


def record_metadata(
    data: bytes,
    where: Path | None,
    settings: RecordSettings,
    tracer_provider: TracerProvider | None = None,
    *,
    spans: SpanSink | None = None,
) -> Recorded:
    """``record --format codereview-cli``: a task's metadata (read from the file ``where``, or
    from stdin when ``None``) → its evidence.

    When the file lies in its task's folder (``<task id>-<12 hex>``), the folder must be that
    task's, and the evidence is bound to the head the folder names when ``--revision`` is another
    commit: the trace was made there, and so it is stale for the revision asked for.
    """
    metadata = read_metadata(data, where or "(stdin)")
    notes: list[str] = []
    task = _task(where.parent) if where is not None else None
    if where is not None and task is not None:
        _check_task_id(metadata, task, where)
        if not same_revision(task.head, settings.revision):
            notes.append(
                f"{where} is in the folder of a task that ran at head {task.head}, not at "
                f"--revision {settings.revision}: its evidence is bound to {task.head} (stale "
                f"for {settings.revision[:12]})"
            )
            settings = replace(settings, revision=task.head)
    document, root = evidence_from_metadata(metadata, settings, tracer_provider, spans=spans)
    return Recorded(document, root, notes)


def _check_task_id(metadata: codereview_cli.Metadata, task: RunTask, where: Path | str) -> None:
    if metadata.task_id != task.task_id:
        raise BadInputError(
            f"{_WHAT} {where}: field 'task_id': {metadata.task_id!r}, but its folder is task "
            f"{task.task_id!r}"
        )


def _fold(
    records: list[CallRecord],
    summary: StreamSummary,
    settings: RecordSettings,
    tracer_provider: TracerProvider | None,
    spans: SpanSink | None = None,
) -> EvidenceDocument:
    """As ``Recorder.finish`` folds (``coverage_gate.record.spans``): through SDK spans on a
    provider given, else from the span attributes, with the spans encoded into ``spans``."""
    max_issues = settings.bounds.max_issues
    if tracer_provider is not None:
        from coverage_gate.record.sdk_spans import record_through  # noqa: PLC0415 - the SDK path

        folder = EvidenceFolder(settings.bounds, settings.diff)
        document = record_through(
            tracer_provider, TRACER_NAME, folder, summary, records, max_issues
        )
        if document is not None:
            return contract(document)
    # No provider, or one whose SDK is disabled (OTEL_SDK_DISABLED): the same document, folded
    # from the same span attributes; evidence never depends on telemetry being on.
    folder = EvidenceFolder(settings.bounds, settings.diff)
    return contract(record_calls(folder, summary, records, max_issues, spans, scope=TRACER_NAME))


# --- runs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunTask:
    """One task folder of a run: ``head`` is the 12 hex digits of the SHA it ran at."""

    folder: Path
    task_id: str
    head: str

    @property
    def agent_id(self) -> str:
        return self.task_id.removeprefix(REVIEWER_PREFIX)


@dataclass(frozen=True)
class Run:
    """A run's reviewers, and what an operator should be told about how they were read."""

    reviewers: list[ReviewerInput]
    notes: list[str]


def tasks_folder(run: Path) -> Path:
    """The run's ``llm-tasks`` folder: ``run`` itself when it is one, else the one inside it."""
    for candidate in (run / TASKS, run):
        if candidate.name == TASKS and candidate.is_dir():
            return candidate
    if not run.exists():
        raise BadInputError(f"codereview-cli run {run}: no such folder")
    raise BadInputError(f"codereview-cli run {run}: no {TASKS}/ folder in it")


def _task(folder: Path) -> RunTask | None:
    match = _TASK_FOLDER.fullmatch(folder.name)
    if match is None:
        return None
    try:
        task_id = urllib.parse.unquote(match["task"], errors="strict")
    except UnicodeDecodeError:
        raise BadInputError(
            f"codereview-cli task folder {folder}: its task id is not UTF-8 once decoded"
        ) from None
    return RunTask(folder, task_id, match["head"])


def reviewer_tasks(tasks: Path) -> tuple[list[RunTask], list[str]]:
    """The reviewer tasks under an ``llm-tasks`` folder, by folder name, and notes on the
    folders passed over."""
    try:
        folders = sorted(entry for entry in tasks.iterdir() if entry.is_dir())
    except OSError as error:
        raise BadInputError(f"{tasks}: cannot be listed ({error.strerror})") from None
    found: list[RunTask] = []
    others: list[str] = []
    unnamed: list[str] = []
    for folder in folders:
        task = _task(folder)
        if task is None:
            unnamed.append(folder.name)
        elif task.task_id.startswith(REVIEWER_PREFIX) and task.agent_id:
            found.append(task)
        else:
            others.append(task.task_id)
    notes: list[str] = []
    if others:
        notes.append(
            f"passed over {len(others)} task(s) that are not reviewers: {', '.join(others)}"
        )
    if unnamed:
        notes.append(
            f"passed over {len(unnamed)} folder(s) not named <task id>-<12 hex of the head SHA>: "
            + ", ".join(unnamed)
        )
    if not found:
        raise BadInputError(
            f"{tasks}: no reviewer task (a folder named reviewer%3A<name>-<12 hex of the head SHA>)"
        )
    return found, notes


SettingsFor = Callable[[str], RecordSettings]
"""The recording settings for evidence bound to a task's head."""


def load_task(
    task: RunTask, revision: str, settings_for: SettingsFor
) -> tuple[ReviewerInput, list[str]]:
    """One reviewer task as a reviewer of the review at ``revision``, and notes on it."""
    name = f"task {task.task_id} ({task.folder.name})"
    notes: list[str] = []
    metadata_path = task.folder / METADATA
    if not metadata_path.is_file():
        notes.append(f"{name} has no {METADATA}: it never finished; a failed reviewer")
        claims = _claims(task) if (task.folder / CLAIMS).is_file() else None
        agent_id = claims.agent_id if claims is not None else task.agent_id
        return ReviewerInput(agent_id, claims, None, failed=True), notes
    metadata = read_metadata(read_document(metadata_path, _WHAT), metadata_path)
    _check_task_id(metadata, task, metadata_path)
    evidence, _ = evidence_from_metadata(metadata, settings_for(task.head))
    if not same_revision(task.head, revision):
        notes.append(
            f"{name} ran at head {task.head}, not at --revision {revision[:12]}: its evidence is "
            "stale and its claimed files unknown"
        )
    failed = metadata.status != SUCCEEDED
    if failed:
        notes.append(f"{name} has status {metadata.status!r}: a failed reviewer")
    claims = None
    if (task.folder / CLAIMS).is_file():
        claims = _claims(task)
    elif not failed:
        notes.append(f"{name} has no {CLAIMS}: no output passed validation; a failed reviewer")
        failed = True
    agent_id = claims.agent_id if claims is not None else task.agent_id
    return ReviewerInput(agent_id, claims, evidence, failed=failed), notes


def _claims(task: RunTask) -> ReviewerOutput:
    return load_model(task.folder / CLAIMS, ReviewerOutput, "reviewer output")


def load_run(run: Path, revision: str, settings_for: SettingsFor) -> Run:
    """Every reviewer task of a run as one bundle of reviewers (module notes)."""
    tasks, notes = reviewer_tasks(tasks_folder(run))
    reviewers: list[ReviewerInput] = []
    for task in tasks:
        reviewer, said = load_task(task, revision, settings_for)
        reviewers.append(reviewer)
        notes.extend(said)
    return Run(reviewers, notes)
