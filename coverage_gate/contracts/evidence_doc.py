"""The evidence document as plain values: what the evidence core builds and ``record`` writes.

The contract is ``coverage_gate.contracts.model.EvidenceDocument``, a pydantic model: documents read
from files are validated against it, and its JSON Schema is published. Importing pydantic and
building that model's validator cost ``record`` about 80 ms, 40% of its whole run on a 5 MB stream,
so the core builds these structs instead: the same fields, in the same order, with the same
defaults, written as the same bytes (``dump``, as ``model_dump_json(indent=2, by_alias=True)``
writes the model). ``contract`` gives the pydantic document (validated) to callers that want one.
The tests hold the two field for field and validate what the core builds against the contract.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from coverage_gate.contracts import defaults
from coverage_gate.contracts.defaults import EVIDENCE_SCHEMA, EVIDENCE_VERSION
from coverage_gate.contracts.enums import (
    Capability,
    CheckoutRelation,
    Depth,
    DiffStatus,
    DriftKind,
    IssueKind,
    UnknownReason,
)

if TYPE_CHECKING:
    from coverage_gate.contracts import model

__all__ = [
    "Bounds",
    "ByteRange",
    "CallIssue",
    "CannotVerify",
    "Checkout",
    "ContentSummary",
    "Counters",
    "DiffSummary",
    "DriftEntry",
    "EvidenceDocument",
    "FileDepth",
    "FileEvidence",
    "LineRange",
    "Mutation",
    "contract",
    "dump",
]


class ByteRange(msgspec.Struct, frozen=True, kw_only=True):
    offset: int
    end: int | None = None
    total: int | None = None


class LineRange(msgspec.Struct, frozen=True, kw_only=True):
    """Lines ``start`` to ``end`` inclusive, 1-based, new side of the revision."""

    start: int
    end: int


class FileDepth(msgspec.Struct, frozen=True, kw_only=True):
    """What the successful calls on one file showed of its change (``model.FileDepth``)."""

    depth: Depth
    changed_lines: int = 0
    changed_lines_seen: int = 0
    changed_lines_cut: int = 0
    hunks: int = 0
    hunks_seen: int = 0
    unseen: list[LineRange] = msgspec.field(default_factory=list)
    detail: str = ""
    unseen_truncated: bool = False


class ContentSummary(msgspec.Struct, frozen=True, kw_only=True):
    matched: int = 0
    mismatched: int = 0
    mismatch_kinds: dict[str, int] = msgspec.field(default_factory=dict)
    unchecked: int = 0
    credited: int = 0
    blob: str | None = None


class FileEvidence(msgspec.Struct, frozen=True, kw_only=True):
    """One file's evidence (``model.FileEvidence`` says what each field means)."""

    path: str
    reads_succeeded: int = 0
    reads_failed: int = 0
    reads_unknown: int = 0
    diff_pages_succeeded: int = 0
    ranges: list[ByteRange] = msgspec.field(default_factory=list)
    partial: bool = False
    lines_seen: list[LineRange] = msgspec.field(default_factory=list)
    lines_seen_whole: bool = False
    lines_seen_truncated: bool = False
    reads_empty: int = 0
    reads_lines_unknown: int = 0
    depth: FileDepth | None = None
    content: ContentSummary | None = None


class Counters(msgspec.Struct, frozen=True, kw_only=True):
    lines: int = 0
    calls: int = 0
    succeeded: int = 0
    failed: int = 0
    incomplete: int = 0
    ignored: int = 0
    rejected: int = 0
    malformed_lines: int = 0
    unrecognised_events: int = 0


class DiffSummary(msgspec.Struct, frozen=True, kw_only=True):
    pages_succeeded: int = 0
    pages_failed: int = 0
    bytes_seen: int = 0
    total_bytes: int | None = None
    pinned: bool = False


class CallIssue(msgspec.Struct, frozen=True, kw_only=True):
    kind: IssueKind
    line: int | None = None
    call_id: str | None = None
    tool: str | None = None
    detail: str = ""


class DriftEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One kind of drift with one name, counted over the stream (DESIGN §6 rule 19)."""

    kind: DriftKind
    name: str
    count: int = 1
    first_line: int | None = None
    hides_reads: bool = False


class Mutation(msgspec.Struct, frozen=True, kw_only=True):
    """A successful call that changed files (DESIGN §6 rule 20); ``path`` when it names one."""

    tool: str
    path: str | None = None
    line: int | None = None


class Checkout(msgspec.Struct, frozen=True, kw_only=True):
    """The commit checked out (``HEAD``) and what it is to the revision."""

    head: str
    relation: CheckoutRelation


class Bounds(msgspec.Struct, frozen=True, kw_only=True):
    max_files: int = defaults.MAX_FILES
    max_issues: int = defaults.MAX_ISSUES


class CannotVerify(msgspec.Struct, frozen=True, kw_only=True):
    """Why this evidence verifies no claim (``model.CannotVerify``)."""

    reason: UnknownReason
    detail: str
    named: list[str] = msgspec.field(default_factory=list)


class EvidenceDocument(msgspec.Struct, frozen=True, kw_only=True):
    """One stream's evidence (``model.EvidenceDocument`` says what each field means)."""

    schema_: str = msgspec.field(default=EVIDENCE_SCHEMA, name="schema")
    version: str = EVIDENCE_VERSION
    source: str
    agent: str | None = None
    revision: str
    # ``--revision`` as given, when it was a name (``HEAD``, a branch, an abbreviated id) that the
    # repository resolved to the object id ``revision`` holds (DESIGN §6 rule 22)
    revision_name: str | None = None
    # the repository's checkout, when a repository was at hand and the revision is a commit
    checkout: Checkout | None = None
    stream_complete: bool
    capability: Capability
    truncated: bool = False
    dropped_calls: int = 0
    unattributed_calls: int = 0
    counters: Counters = msgspec.field(default_factory=Counters)
    diff_status: DiffStatus = DiffStatus.NOT_REQUESTED
    diff: DiffSummary = msgspec.field(default_factory=DiffSummary)
    files: list[FileEvidence] = msgspec.field(default_factory=list)
    issues: list[CallIssue] = msgspec.field(default_factory=list)
    issues_dropped: int = 0
    bounds: Bounds = msgspec.field(default_factory=Bounds)
    client_version: str | None = None
    drift: list[DriftEntry] = msgspec.field(default_factory=list)
    drift_dropped: int = 0
    mutations: list[Mutation] = msgspec.field(default_factory=list)
    mutations_dropped: int = 0
    # descendants of the reviewer ``run`` ended when the reviewer did (DESIGN §6 rule 21)
    descendants_ended: int = 0
    # the record that decides is missing, or one the reviewer could write (DESIGN §6 rule 27)
    cannot_verify: CannotVerify | None = None

    def file(self, path: str) -> FileEvidence | None:
        for entry in self.files:
            if entry.path == path:
                return entry
        return None


def dump(document: EvidenceDocument) -> str:
    """The document as ``record`` writes it: JSON indented by two spaces, then a newline."""
    return msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n"


def contract(document: EvidenceDocument) -> model.EvidenceDocument:
    """The pydantic evidence document these values make, validated against the contract."""
    from coverage_gate.contracts.model import EvidenceDocument as Contract  # noqa: PLC0415 - start-up

    return Contract.model_validate_json(msgspec.json.encode(document))
