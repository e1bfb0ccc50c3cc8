"""Stream → evidence: scan lines, decode, pair, emit spans, fold the spans into the document.

``Recorder`` is push-based (``feed`` bytes as they flow, then ``finish``) so that a live run can
record while it passes the reviewer's output through; ``record_stream`` reads a whole stream.

Spans: with a ``spans`` sink, each call's span is encoded directly into it (the local files);
with an SDK ``tracer_provider``, SDK spans are started on it (an OTLP endpoint, a test's exporter);
with neither, none is made. The document is the same in all three (``coverage_gate.record.spans``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from msgspec.structs import replace

from coverage_gate.contracts.enums import Capability, DriftKind
from coverage_gate.contracts.evidence_doc import Bounds, Checkout, EvidenceDocument, contract
from coverage_gate.core.calls import CallRecord, StreamSummary, resolve_shown
from coverage_gate.core.content_check import MAX_SAID_CHARS, CallChecker
from coverage_gate.core.depth import ContentSource
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.events import (
    Adapter,
    Event,
    FormatKnowledge,
    ModelText,
    ReadAction,
    ToolEnd,
    ToolStart,
)
from coverage_gate.core.folding import EvidenceFolder
from coverage_gate.core.pairing import Pairer
from coverage_gate.core.paths import RepoTree, TreeUnavailableError, normalise
from coverage_gate.core.presentation import BASELINE
from coverage_gate.core.versions import outside
from coverage_gate.record.linescan import DEFAULT_MAX_LINE_BYTES, LineScanner
from coverage_gate.record.spans import record_calls
from coverage_gate.telemetry.ports import SpanSink

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from coverage_gate.contracts import model

__all__ = [
    "CHUNK_BYTES",
    "TRACER_NAME",
    "ByteSource",
    "RecordSettings",
    "Recorder",
    "Repositories",
    "RootChoice",
    "RootSource",
    "feed_all",
    "record_stream",
]

#: What a stream is read in: 1 MiB recorded the 200 MB benchmark streams 3-4% faster than 4 MiB,
#: and no slower than 256 KiB to 2 MiB (whole processes, interleaved runs).
CHUNK_BYTES = 1 << 20
#: The model's messages kept from before its first call, until the content checks start.
MAX_SAID_BEFORE = 64
TRACER_NAME = "coverage_gate.record"


class ByteSource(Protocol):
    """What a stream is read through: ``read`` as a binary file's (all that is left when
    ``size`` is negative; fewer bytes than asked only at the end)."""

    def read(self, size: int = -1, /) -> bytes: ...


class RootSource(StrEnum):
    """Where the repository root that paths are placed under came from."""

    OPTION = "option"  # given explicitly (--repo-root)
    STREAM = "stream"  # the working directory the stream records for its session
    STREAM_IN_DEFAULT = "stream_in_default"  # the default root, which holds the stream's one
    DEFAULT = "default"  # the caller's default (the Git top level of the current directory)
    NONE = "none"  # none known: absolute paths cannot be placed


class Repositories(Protocol):
    """The repository under a root, as recording asks about it (DESIGN §6 rule 22): an edge
    (runs git), asked once per root and answer."""

    def resolve(self, root: str, name: str) -> str:
        """The object id ``name`` names in the repository under ``root``; ``name`` as given
        where the root holds no repository; an input error where it holds one without it."""
        ...

    def checkout(self, root: str, revision: str) -> Checkout | None:
        """The commit checked out under ``root`` and what it is to ``revision``."""
        ...


def _holds(folder: str, path: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it, by their spelling."""
    outer = [part for part in folder.split("/") if part]
    return [part for part in path.split("/") if part][: len(outer)] == outer


@dataclass(frozen=True)
class RootChoice:
    path: str | None
    source: RootSource


@dataclass(frozen=True)
class RecordSettings:
    """``repo_root``, when given, is the root; else the stream's own working directory, when
    its format records one (or ``default_root`` when that holds it: a session started in a
    sub-folder of the repository); else ``default_root``. ``trees`` gives the repository at the
    revision under a root, for paths with ``..``; without it such paths are rejected."""

    revision: str
    repo_root: str | None
    bounds: Bounds = field(default_factory=Bounds)
    diff: DiffIndex | None = None
    agent: str | None = None
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    default_root: str | None = None
    trees: Callable[[str], RepoTree] | None = None
    # the files' content at the revision under a root, for telling byte-ranged reads of files in
    # the pinned diff in lines (depth)
    content: Callable[[str], ContentSource] | None = None
    # ``--revision`` as given, when it was resolved to the object id ``revision`` is
    revision_name: str | None = None
    # the repository under each root: the revision is resolved there, and its checkout read,
    # once the root is known (``at``)
    repository: Repositories | None = None
    # the repository's checkout, once read (``at``)
    checkout: Checkout | None = None

    def at(self, root: str | None) -> RecordSettings:
        """These settings with the revision as the repository under ``root`` resolves it, and
        that repository's checkout (DESIGN §6 rule 22). A root found from the stream is only
        known once the stream has told it; ``--repo-root`` is known before anything is read,
        and so, for ``run``, is the current directory's: the revision is then resolved, and
        the checkout read, before the reviewer starts (it could move ``HEAD``)."""
        repository = self.repository
        if repository is None or root is None:
            return self
        found = repository.resolve(root, self.revision)
        name = self.revision_name
        if name is None and found != self.revision:
            name = self.revision
        return dataclasses.replace(
            self, revision=found, revision_name=name, checkout=repository.checkout(root, found)
        )

    def root_for(self, stream_cwd: str | None) -> RootChoice:
        if self.repo_root is not None:
            return RootChoice(self.repo_root, RootSource.OPTION)
        if stream_cwd is not None and stream_cwd.startswith("/"):
            default = self.default_root
            if default is not None and _holds(default, stream_cwd):
                return RootChoice(default, RootSource.STREAM_IN_DEFAULT)
            return RootChoice(stream_cwd, RootSource.STREAM)
        if self.default_root is not None:
            return RootChoice(self.default_root, RootSource.DEFAULT)
        return RootChoice(None, RootSource.NONE)


class Recorder:
    """Records one stream. ``feed`` bytes, then ``finish`` once (``interrupted`` marks a stream
    that was cut short: whatever was seen is kept, and the stream counts as incomplete)."""

    def __init__(
        self,
        adapter: Adapter,
        settings: RecordSettings,
        tracer_provider: TracerProvider | None = None,
        *,
        spans: SpanSink | None = None,
    ) -> None:
        self._adapter = adapter
        self._settings = settings
        self._provider = tracer_provider
        self._spans = spans
        self._decoder = adapter.decoder()
        self._pairer = Pairer(settings.repo_root, max_line_issues=settings.bounds.max_issues)
        self.root = settings.root_for(None)
        self.records: list[CallRecord] = []  # every call, once finished
        self._scanner = LineScanner(self._decoder, self._sink, settings.max_line_bytes)
        self._checker: CallChecker | None = None
        self._said_before: list[str] = []  # the model's text before its first call

    def _sink(self, events: Sequence[Event]) -> None:
        if events:
            self._pairer.feed([self._checked(event) for event in events if not self._said(event)])

    def _said(self, event: Event) -> bool:
        """Whether ``event`` is the model's own text, which the content checks take in (it is
        no event of a call)."""
        if not isinstance(event, ModelText):
            return False
        if self._checker is not None:
            self._checker.said(event.text)
        elif len(self._said_before) < MAX_SAID_BEFORE:
            # before the first call: kept until the checker is made, with the root the stream
            # tells by its first call
            self._said_before.append(event.text[:MAX_SAID_CHARS])
        return True

    def _checked(self, event: Event) -> Event:
        """A start or end as the content checks pass it on
        (``coverage_gate.core.content_check``)."""
        if isinstance(event, ToolStart):
            return self._content_checker().start(event)
        if isinstance(event, ToolEnd) and event.returned is not None:
            return self._content_checker().end(event)
        return event

    def _content_checker(self) -> CallChecker:
        """Made at the first call, with the root as the stream has told it by then (the working
        directory a stream records comes before its calls)."""
        if self._checker is None:
            root = self._settings.root_for(self._pairer.stream_cwd).path
            self._settings = settings = self._settings.at(root)
            tree = settings.trees(root) if settings.trees and root else None
            source = settings.content(root) if settings.content and root else None
            diff = settings.diff
            knows: FormatKnowledge | None = getattr(self._adapter, "knows", None)

            def place(action: ReadAction) -> str | None:
                try:
                    found = normalise(
                        action.path, root, action.cwd, mention=action.mention, tree=tree
                    )
                except TreeUnavailableError:
                    return None
                return found if isinstance(found, str) else None

            self._checker = CallChecker(
                source,
                scope=[f.path for f in diff.files if f.lines_known] if diff is not None else (),
                unchecked=[f.path for f in diff.files if not f.lines_known]
                if diff is not None
                else (),
                diff=diff.data if diff is not None else None,
                place=place,
                presentation=knows.presentation if knows is not None else BASELINE,
            )
            for text in self._said_before:
                self._checker.said(text)
            self._said_before.clear()
        return self._checker

    def _watch(self, records: list[CallRecord], root: str | None) -> None:
        """Drift only known once the stream has ended (DESIGN §6 rule 19): calls left unpaired
        in a completed stream, unknown tools that named files in scope, a client version
        outside the range checked, a stream's own commit that is not the revision."""
        pairer, settings = self._pairer, self._settings
        pairer.unpaired(records)
        if self._checker is not None:
            for tool, line in self._checker.unexplained:
                pairer.drift.add(DriftKind.PRESENTATION, tool, line)
        diff = settings.diff
        scope = [f.path for f in diff.files] if diff is not None else None
        for tool, said, line in pairer.unknown_tools():
            if scope is None or any(path in said for path in scope):
                pairer.drift.add(DriftKind.UNKNOWN_TOOL, tool, line)
        knows: FormatKnowledge | None = getattr(self._adapter, "knows", None)
        version = pairer.client_version
        if knows is not None and knows.versions is not None and version is not None:
            checked = outside(version, knows.versions)
            if checked is not None:
                pairer.drift.add(DriftKind.CLIENT_VERSION, f"{version} ({checked})", 0)
        if pairer.stream_commit is not None and settings.revision:
            commit, line = pairer.stream_commit
            if not _same_revision(commit, settings.revision, settings, root):
                pairer.drift.add(DriftKind.FOREIGN_COMMIT, commit, line)

    def feed(self, chunk: bytes) -> None:
        self._scanner.feed(chunk)

    @property
    def lines(self) -> int:
        return self._scanner.lines

    def finish(
        self, interrupted: bool = False, *, known_complete: bool = False
    ) -> model.EvidenceDocument:
        """The evidence document, as the contract (``finish_plain``'s values, validated)."""
        return contract(self.finish_plain(interrupted, known_complete=known_complete))

    def finish_plain(
        self, interrupted: bool = False, *, known_complete: bool = False
    ) -> EvidenceDocument:
        """The evidence document as plain values (``coverage_gate.contracts.evidence_doc``), without
        loading the contracts. ``known_complete``: the caller knows the stream is whole though it
        carries no completion marker of its own (an OTLP export whose sender exited normally and
        whose every request was read: OTLP marks no final flush)."""
        self._scanner.close()
        self._pairer.feed(self._decoder.finish())
        pairer = self._pairer
        self.root = root = self._settings.root_for(pairer.stream_cwd)
        self._settings = settings = self._settings.at(root.path)
        tree = settings.trees(root.path) if settings.trees and root.path else None
        pairer.locate(root.path, tree)
        blind = getattr(self._adapter, "by_content", False) and not (
            self._content_checker().can_judge_absence()
        )
        summary = StreamSummary(
            source=self._adapter.name,
            revision=settings.revision,
            capability=Capability.NONE
            if pairer.files_not_shown is not None or blind
            else self._adapter.capability,
            stream_complete=(pairer.complete or known_complete) and not interrupted,
            lines=self._scanner.lines,
            malformed_lines=pairer.malformed,
            unrecognised_events=pairer.unrecognised,
            agent=settings.agent,
            line_issues=tuple(pairer.lines_with_issues),
            line_issue_total=pairer.line_issue_total,
            dropped_calls=pairer.dropped_calls,
        )
        # depth asks for files through the content checks' cache: each is fetched once
        content = self._content_checker() if settings.content and root.path else None
        records = resolve_shown(pairer.records(), settings.diff, content)
        self._watch(records, root.path)
        summary = replace(
            summary,
            client_version=pairer.client_version,
            drift=pairer.drift.entries(),
            drift_dropped=pairer.drift.dropped,
        )
        self.records = records
        max_issues = settings.bounds.max_issues
        if self._provider is not None:
            from coverage_gate.record.sdk_spans import record_through  # noqa: PLC0415 - the SDK path

            folder = EvidenceFolder(settings.bounds, settings.diff)
            document = record_through(
                self._provider, TRACER_NAME, folder, summary, records, max_issues
            )
            if document is not None:
                return self._named(document)
        # Without a provider, or one that recorded nothing (OTEL_SDK_DISABLED=true, a sampler):
        # the same document, folded from the same span attributes. Evidence never depends on
        # telemetry being on.
        folder = EvidenceFolder(settings.bounds, settings.diff)
        return self._named(
            record_calls(folder, summary, records, max_issues, self._spans, scope=TRACER_NAME)
        )

    def _named(self, document: EvidenceDocument) -> EvidenceDocument:
        """The document with the revision's name as given, when it was resolved to an id, and
        the repository's checkout, when it was read."""
        name, checkout = self._settings.revision_name, self._settings.checkout
        if name == document.revision:
            name = None
        if name is None and checkout is None:
            return document
        return replace(document, revision_name=name, checkout=checkout)


_OBJECT_ID = re.compile(r"[0-9a-f]{7,64}")


def _same_revision(commit: str, revision: str, settings: RecordSettings, root: str | None) -> bool:
    """Whether a stream's own commit is the revision under review: the same id (either may be
    abbreviated), or, with the repository at hand, the same tree (a snapshot of a clean
    checkout is its commit's tree)."""
    a, b = commit.lower(), revision.lower()
    if len(a) >= 7 and len(b) >= 7 and (a.startswith(b) or b.startswith(a)):
        return True
    source = settings.content(root) if settings.content is not None and root else None
    same_tree = getattr(source, "same_tree", None)
    told = same_tree(commit) if same_tree is not None else None
    if told is not None:
        return bool(told)
    # without the repository only an object id can be compared; a name (``HEAD``, a branch)
    # cannot be told apart from the commit it names
    return not _OBJECT_ID.fullmatch(b)


def feed_all(stream: ByteSource, recorder: Recorder) -> EvidenceDocument:
    """Feed a whole stream to ``recorder`` and finish it: the document as plain values."""
    while chunk := stream.read(CHUNK_BYTES):
        recorder.feed(chunk)
    return recorder.finish_plain()


def record_stream(
    stream: ByteSource,
    adapter: Adapter,
    settings: RecordSettings,
    tracer_provider: TracerProvider | None = None,
    *,
    spans: SpanSink | None = None,
) -> model.EvidenceDocument:
    return contract(feed_all(stream, Recorder(adapter, settings, tracer_provider, spans=spans)))
