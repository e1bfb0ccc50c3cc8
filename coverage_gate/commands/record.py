"""`coverage-gate record`: read an agent's event stream, write the evidence document."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated

import typer

from coverage_gate.commands._common import (
    EVIDENCE,
    emit_document,
    errors_to_exit,
    format_names,
    info,
    open_stream,
    say,
    telemetry_session,
)
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
    RevisionOption,
    checkout_notes,
    record_settings,
    root_note,
)
from coverage_gate.edges.stdio import require_stdout
from coverage_gate.errors import BadInputError, UsageError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from coverage_gate.contracts.enums import UnknownReason
    from coverage_gate.contracts.evidence_doc import CannotVerify, EvidenceDocument
    from coverage_gate.record.recording import ByteSource, Recorder, RecordSettings
    from coverage_gate.telemetry.ports import SpanSink

__all__ = ["record"]

# an exec stream is read once to compare it with its rollout: held in memory up to this size
_SPOOL_BYTES = 16 << 20


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
            help="The input stream's format (see `coverage-gate formats`); detected when omitted.",
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
    codex_rollout: Annotated[
        Path | None,
        typer.Option(
            "--codex-rollout",
            metavar="<file>",
            help=(
                "For a `codex exec --json` stream: its thread's session rollout, recorded in its "
                "place (the rollout shows what the model received; exec output cannot). Found "
                "under $CODEX_HOME (default ~/.codex) by the thread id when omitted."
            ),
        ),
    ] = None,
) -> None:
    """Read an agent's event stream and write the evidence document (JSON)."""
    # What only a run needs (start-up: see commands._common)
    import msgspec  # noqa: PLC0415

    from coverage_gate.adapters import ADAPTERS, DOCUMENT_FORMATS  # noqa: PLC0415
    from coverage_gate.contracts.evidence_doc import dump  # noqa: PLC0415
    from coverage_gate.core.drift import drift_warning  # noqa: PLC0415
    from coverage_gate.edges.gittree import GitTrees  # noqa: PLC0415
    from coverage_gate.outputs.summary import evidence_summary  # noqa: PLC0415
    from coverage_gate.record.recording import Recorder, feed_all  # noqa: PLC0415
    from coverage_gate.record.sniff import head_lines, peek, wrong_format_hint  # noqa: PLC0415

    with errors_to_exit():
        known = source_format is None or source_format in ADAPTERS
        if not known and source_format not in DOCUMENT_FORMATS:
            raise UsageError(f"--format {source_format!r} is unknown; known: {format_names()}")
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
            require_stdout(EVIDENCE)
        with (
            open_stream(stream) as raw,
            telemetry_session() as telemetry,
            GitTrees(settings.revision, resolve=_resolver(settings)) as trees,
            contextlib.ExitStack() as stack,
        ):
            prefix, handle = peek(raw)
            lines = head_lines(prefix)
            proto = _proto_file(prefix, source_format)
            chosen = _chosen_format(prefix, lines, proto, source_format, stream)
            if source_format is None:
                info(f"coverage-gate: format {chosen} (detected from the first lines)")
            rollout, doubt, handle = _thread_rollout(chosen, lines, codex_rollout, handle, stack)
            if rollout is not None:
                prefix, handle = peek(stack.enter_context(rollout.open("rb")))
                lines, chosen = head_lines(prefix), "codex-rollout"
            provider, spans = telemetry.for_recording()
            if chosen in DOCUMENT_FORMATS:
                located = replace(settings, trees=trees)
                _record_document(handle, stream, located, provider, spans, output)
                return
            recorder = Recorder(
                ADAPTERS[chosen], replace(settings, trees=trees), provider, spans=spans
            )
            document = _feed_proto(handle, recorder) if proto else feed_all(handle, recorder)
            if doubt is not None:
                cannot = doubt.for_root(recorder.root.path, settings.bounds.max_files)
                document = msgspec.structs.replace(document, cannot_verify=cannot)
        # no root found: absolute paths cannot be placed, which -q does not hide
        (info if recorder.root.path is not None else say)(root_note(recorder.root))
        for note in checkout_notes(document.checkout, document.revision, recorder.root.path):
            say(note)
        emit_document(dump(document), output, EVIDENCE)
        info(evidence_summary(document))
        hint = wrong_format_hint(chosen, document.counters, lines)
        if hint is not None:
            say(f"coverage-gate: warning: {hint}")
        drifted = drift_warning(document, getattr(ADAPTERS[chosen], "knows", None))
        if drifted is not None and hint is None:  # another format's stream: not this one's drift
            say(drifted)


def _resolver(settings: RecordSettings) -> Callable[[str, str], str] | None:
    """How the repository under a root resolves the revision, for the path normaliser's trees."""
    return settings.repository.resolve if settings.repository is not None else None


def _chosen_format(
    prefix: bytes, lines: list[bytes], proto: bool, source_format: str | None, stream: str
) -> str:
    """The format to record the stream as: given, or told from its first bytes; an empty or
    unknown stream is bad input, said with what to pass."""
    from coverage_gate.record.sniff import sniff  # noqa: PLC0415 - start-up time

    chosen = "otlp-json" if proto else source_format or sniff(lines) or _document_format(prefix)
    if chosen is None and not prefix.strip():
        where = "standard input" if stream == "-" else stream
        raise BadInputError(
            f"the stream ({where}) is empty: no line to tell its format from; pass "
            f"--format to record it as a stream that held nothing (known: {format_names()})"
        )
    if chosen is None:
        raise BadInputError(
            "cannot tell the stream's format from its first lines; "
            f"pass --format (known: {format_names()})"
        )
    return chosen


def _thread_rollout(
    chosen: str,
    head: list[bytes],
    given: Path | None,
    handle: ByteSource,
    stack: contextlib.ExitStack,
) -> tuple[Path | None, _ExecDoubt | None, ByteSource]:
    """For a ``codex exec --json`` stream, its thread's rollout, to record in its place (DESIGN
    §6 rules 26-27), or why the exec stream is recorded and verifies nothing: the rollout given,
    else the one under ``$CODEX_HOME``, when it is a record the reviewer could not write. Returns
    (the rollout, or ``None``; why the exec stream's evidence cannot verify, or ``None``; the
    stream to record when it is the exec stream: read once to compare, so spooled)."""
    if chosen != "codex-exec":
        if given is not None:
            raise UsageError(f"--codex-rollout is for a codex-exec stream; this one is {chosen}")
        return None, None, handle
    # What only a codex exec stream needs (start-up: see commands._common)
    import tempfile  # noqa: PLC0415

    from coverage_gate.contracts.enums import UnknownReason  # noqa: PLC0415
    from coverage_gate.edges.codex_home import (  # noqa: PLC0415
        codex_home,
        exec_thread,
        not_one_regular_file,
        rollout_candidates,
        rollout_thread,
    )
    from coverage_gate.record.codex_story import exec_story, named_words  # noqa: PLC0415
    from coverage_gate.record.codex_trust import rollout_doubt  # noqa: PLC0415

    thread = exec_thread(head)
    if given is not None:
        named = rollout_thread(given)
        if named is None:
            raise BadInputError(f"--codex-rollout {given}: its first line is no session_meta")
        if thread is not None and named != thread:
            raise BadInputError(
                f"--codex-rollout {given} is thread {named}; the stream is thread {thread}"
            )
    spool = stack.enter_context(tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES))  # noqa: SIM115 - closed by the stack
    while chunk := handle.read(1 << 20):
        spool.write(chunk)
    spool.seek(0)
    steps = exec_story(spool)
    spool.seek(0)
    words = named_words(steps) if not isinstance(steps, str) else []
    which = f"thread {thread}" if thread else "the thread (the stream names none)"
    doubt: tuple[UnknownReason, str] | None = None
    if given is not None:
        path: Path | None = given
        doubt = rollout_doubt(given, thread, steps, found=False, tmpdir=os.environ.get("TMPDIR"))
    else:
        home = codex_home(os.environ)
        candidates = rollout_candidates(home, thread) if thread is not None else []
        path = candidates[0] if len(candidates) == 1 else None
        bad = not_one_regular_file(home, candidates) if candidates else None
        if not candidates:
            doubt = (
                UnknownReason.ROLLOUT_MISSING,
                (
                    f"no rollout of {which} under $CODEX_HOME/sessions: codex exec --json "
                    "cannot show what the model received (pass --codex-rollout FILE, or set "
                    "CODEX_HOME)"
                ),
            )
        elif bad is not None:
            doubt = UnknownReason.ROLLOUT_REJECTED, f"the rollout of {which}: {bad}"
        elif path is not None:
            doubt = rollout_doubt(path, thread, steps, found=True, tmpdir=os.environ.get("TMPDIR"))
    if doubt is not None or path is None:
        reason, detail = doubt or (UnknownReason.ROLLOUT_MISSING, f"no rollout of {which}")
        why = (
            f"{detail} (CODEX_HOME is {codex_home(os.environ)})"
            if reason is UnknownReason.ROLLOUT_MISSING
            else f"the rollout is not evidence: {detail}"
        )
        say(
            f"coverage-gate: codex-exec: {why}; the exec stream is recorded, and the files "
            "its commands name or its outputs show are unknown"
        )
        return None, _ExecDoubt(reason, detail, words), spool
    where = "given" if given is not None else f"found under {path.parents[4]}"
    say(
        f"coverage-gate: recording the thread's rollout {path} (codex-rollout, {where}) in "
        "place of its exec output, which cannot show what the model received; it tells the "
        "exec stream's story call by call"
    )
    return path, None, spool


@dataclass(frozen=True)
class _ExecDoubt:
    """Why an exec stream's evidence verifies nothing, and the words its commands name."""

    reason: UnknownReason
    detail: str
    words: list[str]

    def for_root(self, root: str | None, limit: int) -> CannotVerify:
        """The evidence's ``cannot_verify``: the words that name a path under ``root`` (as the
        evidence's paths are, relative to it), at most ``limit`` of them."""
        from coverage_gate.contracts.evidence_doc import CannotVerify  # noqa: PLC0415

        named: dict[str, None] = {}
        for word in self.words:
            if len(named) >= limit:
                break
            place = PurePosixPath(word)
            if place.is_absolute():
                if root is None or not place.is_relative_to(root):
                    continue
                place = place.relative_to(root)
            if ".." in place.parts or not place.parts:
                continue
            named.setdefault(place.as_posix())
        return CannotVerify(reason=self.reason, detail=self.detail, named=list(named))


def _proto_file(prefix: bytes, source_format: str | None) -> bool:
    """A Collector ``format: proto`` file, read as the ``otlp-json`` format."""
    if source_format not in (None, "otlp-json"):
        return False  # decided without loading protobuf (otlp_wire's)
    from coverage_gate.telemetry.otlp_wire import looks_like_proto_file  # noqa: PLC0415 - start-up

    return looks_like_proto_file(prefix)


def _feed_proto(handle: ByteSource, recorder: Recorder) -> EvidenceDocument:
    """Each message of a Collector proto file as one OTLP/JSON line; a message that cannot be
    read is bad input, named by its byte offset."""
    from coverage_gate.telemetry.otlp_wire import BadBody, proto_file_lines  # noqa: PLC0415

    for line in proto_file_lines(handle.read()):
        if isinstance(line, BadBody):
            raise BadInputError(f"OTLP protobuf file: {line.detail}")
        recorder.feed(line + b"\n")
    return recorder.finish_plain()


def _document_format(prefix: bytes) -> str | None:
    """A format read as one document, when the stream's first bytes look like one."""
    from coverage_gate.record.codereview import looks_like_metadata  # noqa: PLC0415 - start-up time

    return "codereview-cli" if looks_like_metadata(prefix) else None


def _record_document(
    handle: ByteSource,
    stream: str,
    settings: RecordSettings,
    provider: TracerProvider | None,
    spans: SpanSink | None,
    output: Path | None,
) -> None:
    """``--format codereview-cli``: one task's ``metadata.json``, read whole."""
    from coverage_gate.contracts.enums import Capability  # noqa: PLC0415
    from coverage_gate.edges.files import dump_model  # noqa: PLC0415
    from coverage_gate.outputs.summary import evidence_summary  # noqa: PLC0415
    from coverage_gate.record.codereview import (  # noqa: PLC0415
        MAX_METADATA_BYTES,
        record_metadata,
    )

    where = "(stdin)" if stream == "-" else stream
    try:
        data = handle.read(MAX_METADATA_BYTES + 1)
    except OSError as error:
        raise BadInputError(f"stream {where}: cannot be read ({error.strerror})") from None
    recorded = record_metadata(
        data, None if stream == "-" else Path(stream), settings, provider, spans=spans
    )
    for note in recorded.notes:
        say(f"coverage-gate: warning: {note}")
    if recorded.root.path is not None:
        info(root_note(recorded.root))
    else:
        say(
            "coverage-gate: no repository root (no --repo-root, current directory not in a Git "
            "work tree): trace paths with '..' cannot be checked, and are rejected"
        )
    emit_document(dump_model(recorded.document), output, EVIDENCE)
    info(evidence_summary(recorded.document))
    if recorded.document.capability is Capability.NONE:
        say(
            "coverage-gate: the task's metadata holds no tool trace (its harness adapter keeps "
            "no per-call record): its evidence is unavailable, not absent"
        )
