"""Boundary contracts, and (re-exported from ``coverage_gate.contracts.enums``) the enums every
layer shares.

Everything that crosses a boundary (reviewer output, evidence document, review bundle, decision
document) is a strict, frozen pydantic model that rejects unknown fields. Their JSON Schemas are
published by ``coverage-gate schema``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    NonNegativeInt,
    Tag,
    model_validator,
)

from coverage_gate.contracts import defaults, enums
from coverage_gate.contracts.defaults import EVIDENCE_VERSION

__all__ = [
    "DECISION_SCHEMA",
    "DECISION_VERSION",
    "FINDING_LINE_KEYS",
    "FINDING_PATH_KEYS",
    "FINDING_QUOTE_KEYS",
    "Bounds",
    "BundleReviewer",
    "ByteRange",
    "CallIssue",
    "CallKind",
    "CannotVerify",
    "Capability",
    "Checkout",
    "CheckoutRelation",
    "Citation",
    "CitationCheck",
    "CitationOutcome",
    "CitationPolicy",
    "CitationReason",
    "Claim",
    "ContentSummary",
    "Counters",
    "Coverage",
    "DecisionDocument",
    "Depth",
    "DepthPolicy",
    "DiffStatus",
    "DiffSummary",
    "DriftEntry",
    "DriftKind",
    "EvidenceDocument",
    "FileContent",
    "FileDecision",
    "FileDepth",
    "FileEvidence",
    "FileStatus",
    "Finding",
    "FindingOrText",
    "IssueKind",
    "LineRange",
    "MismatchKind",
    "Mode",
    "ModeSource",
    "Mutation",
    "MutationPolicy",
    "PathRejection",
    "PolicyOutcome",
    "PolicySource",
    "Reason",
    "RejectedClaim",
    "ReviewBundle",
    "ReviewerCitations",
    "ReviewerDecision",
    "ReviewerOutput",
    "ReviewerPolicyOutcome",
    "SchemaVersion1",
    "UnknownPolicy",
    "UnknownReason",
    "UnsupportedReason",
    "Verdict",
]

DECISION_SCHEMA = "coverage-gate/decision"
DECISION_VERSION = "1.7"


# The words every layer shares live in coverage_gate.contracts.enums; the contracts re-export them.
Verdict = enums.Verdict
Mode = enums.Mode
ModeSource = enums.ModeSource
Capability = enums.Capability
CheckoutRelation = enums.CheckoutRelation
DiffStatus = enums.DiffStatus
CallKind = enums.CallKind
IssueKind = enums.IssueKind
Claim = enums.Claim
FileStatus = enums.FileStatus
Coverage = enums.Coverage
Reason = enums.Reason
PathRejection = enums.PathRejection
UnknownReason = enums.UnknownReason
UnsupportedReason = enums.UnsupportedReason
FileContent = enums.FileContent
MismatchKind = enums.MismatchKind
Depth = enums.Depth
UnknownPolicy = enums.UnknownPolicy
MutationPolicy = enums.MutationPolicy
DriftKind = enums.DriftKind
DepthPolicy = enums.DepthPolicy
CitationPolicy = enums.CitationPolicy
CitationOutcome = enums.CitationOutcome
CitationReason = enums.CitationReason
PolicySource = enums.PolicySource


class _Contract(BaseModel):
    # defer_build: a contract's validator and serializer are built when it is first used, not
    # at import, so a command builds only the few contracts it uses (start-up time).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)


def _integer_only(value: object) -> object:
    """A literal matches by equality, and ``True == 1.0 == 1``: only an integer may pass on."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be the integer 1, not {value!r}")  # noqa: TRY004 - a field error
    return value


#: ``"schema_version": 1`` exactly: not ``true``, ``1.0`` or ``"1"``.
SchemaVersion1 = Annotated[Literal[1], BeforeValidator(_integer_only)]


# --- reviewer output (claims) ------------------------------------------------------------------


class Citation(_Contract):
    """ "The file at ``path``, at ``line`` (1-based, new side of the revision), says ``content``."

    A claim with a location that can be read back (DESIGN §5); never evidence of reading."""

    path: str
    line: Annotated[int, Field(ge=1)]
    content: str


#: Keys of a free finding read as a citation when it carries no ``citations`` of its own: the
#: path, the line (the first key present wins) and the quoted snippet.
FINDING_PATH_KEYS = ("path", "file")
FINDING_LINE_KEYS = ("start_line", "line")
FINDING_QUOTE_KEYS = ("snippet", "quote")


class Finding(BaseModel):
    """One finding: free-form, as review tools emit them, with optional ``citations``.

    Any other field is kept as given. A finding without ``citations`` that has a path
    (``path``/``file``), a line (``start_line``/``line``, a positive integer) and a quoted
    snippet (``snippet``/``quote``, a string) is read as one citation of that snippet."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True, defer_build=True)

    citations: list[Citation] = Field(default_factory=list)

    def cited(self) -> list[Citation]:
        """Its citations: the explicit ones, else the one its common-shape fields make."""
        if self.citations:
            return list(self.citations)
        extra = self.model_extra or {}
        path = next((extra[k] for k in FINDING_PATH_KEYS if k in extra), None)
        line = next((extra[k] for k in FINDING_LINE_KEYS if k in extra), None)
        quote = next((extra[k] for k in FINDING_QUOTE_KEYS if k in extra), None)
        if (
            isinstance(path, str)
            and isinstance(line, int)
            and not isinstance(line, bool)
            and line >= 1
            and isinstance(quote, str)
        ):
            return [Citation(path=path, line=line, content=quote)]
        return []


def _finding_kind(value: object) -> str:
    return "text" if isinstance(value, str) else "finding"


#: A finding is free text or an object (the error for a bad object names the object's field).
FindingOrText = Annotated[
    Annotated[Finding, Tag("finding")] | Annotated[str, Tag("text")],
    Discriminator(_finding_kind),
]


class ReviewerOutput(_Contract):
    """What a reviewer says about itself. Claims, never evidence."""

    schema_version: SchemaVersion1
    agent_id: Annotated[str, Field(min_length=1)]
    inspected_files: list[str] = Field(default_factory=list)
    skipped_files: list[str] = Field(default_factory=list)
    constraints: list[str | dict[str, object]] = Field(default_factory=list)
    findings: list[FindingOrText] = Field(default_factory=list)
    # "Checked, nothing to report" claims: where the reviewer looked, not tied to a finding.
    citations: list[Citation] = Field(default_factory=list)

    @model_validator(mode="after")
    def _inspected_and_skipped_are_disjoint(self) -> ReviewerOutput:
        both = sorted(set(self.inspected_files) & set(self.skipped_files))
        if both:
            raise ValueError(f"files both inspected and skipped: {', '.join(both)}")
        return self


# --- evidence ----------------------------------------------------------------------------------


class ByteRange(_Contract):
    offset: NonNegativeInt
    end: NonNegativeInt | None = None
    total: NonNegativeInt | None = None


class LineRange(_Contract):
    """Lines ``start`` to ``end`` inclusive, 1-based, new side of the revision."""

    start: Annotated[int, Field(ge=1)]
    end: Annotated[int, Field(ge=1)]


class FileDepth(_Contract):
    """What the successful calls on one file showed of its change in the pinned diff.

    ``changed_lines`` counts added and deleted lines; ``hunks_seen`` counts hunks at least one of
    whose changed lines was seen; ``unseen`` lists the new-side lines of unseen changed lines (a
    deleted line by its anchor: the line that took its place), at most 16 ranges
    (``unseen_truncated`` when there were more). ``changed_lines_cut`` (1.7) counts the unseen
    added lines a read reached only up to its client's cut, before their change: a file whose
    only changed lines shown are such is shallow under every depth policy."""

    depth: Depth
    changed_lines: NonNegativeInt = 0
    changed_lines_seen: NonNegativeInt = 0
    changed_lines_cut: NonNegativeInt = 0
    hunks: NonNegativeInt = 0
    hunks_seen: NonNegativeInt = 0
    unseen: list[LineRange] = Field(default_factory=list)
    detail: str = ""
    unseen_truncated: bool = False


class ContentSummary(_Contract):
    """How one file's evidence was checked against its content at the revision (DESIGN §6
    rules 16-18): reads whose returned text was the file (``matched``) or was not
    (``mismatched``: no evidence; ``mismatch_kinds``: those reads by what their text was instead,
    ``MismatchKind``), reads whose text the stream did not carry or that could not be checked
    (``unchecked``: rules 1-14 decide), calls of any tool whose text showed the file's lines or
    its hunks of the pinned diff (``credited``), and the blob checked against."""

    matched: NonNegativeInt = 0
    mismatched: NonNegativeInt = 0
    mismatch_kinds: dict[MismatchKind, NonNegativeInt] = Field(default_factory=dict)
    unchecked: NonNegativeInt = 0
    credited: NonNegativeInt = 0
    blob: str | None = None


class FileEvidence(_Contract):
    path: str
    reads_succeeded: NonNegativeInt = 0
    reads_failed: NonNegativeInt = 0
    # Calls on this file whose end could not be read (an undecodable line): their outcome is
    # unknown, so the absence of a successful read proves nothing for this file.
    reads_unknown: NonNegativeInt = 0
    diff_pages_succeeded: NonNegativeInt = 0
    ranges: list[ByteRange] = Field(default_factory=list)
    partial: bool = False
    # Lines of the file at the revision that successful calls showed (merged, at most 64 ranges:
    # ``lines_seen_truncated`` when more were left out). ``lines_seen_whole``: a read showed every
    # line (listed as one range when the file's length is known). Byte ranges are told in lines
    # only for files in the pinned diff.
    lines_seen: list[LineRange] = Field(default_factory=list)
    lines_seen_whole: bool = False
    lines_seen_truncated: bool = False
    # Successful reads that returned nothing (not evidence), and successful reads whose lines
    # could not be told: a command whose range was not recognised, or a byte range of a file in
    # the pinned diff whose content at the revision was not obtainable (depth unknown, never
    # unseen).
    reads_empty: NonNegativeInt = 0
    reads_lines_unknown: NonNegativeInt = 0
    depth: FileDepth | None = None
    content: ContentSummary | None = None


class Counters(_Contract):
    lines: NonNegativeInt = 0
    calls: NonNegativeInt = 0
    succeeded: NonNegativeInt = 0
    failed: NonNegativeInt = 0
    incomplete: NonNegativeInt = 0
    ignored: NonNegativeInt = 0
    rejected: NonNegativeInt = 0
    malformed_lines: NonNegativeInt = 0
    unrecognised_events: NonNegativeInt = 0


class DiffSummary(_Contract):
    pages_succeeded: NonNegativeInt = 0
    pages_failed: NonNegativeInt = 0
    bytes_seen: NonNegativeInt = 0
    total_bytes: NonNegativeInt | None = None
    pinned: bool = False


class CallIssue(_Contract):
    kind: IssueKind
    line: NonNegativeInt | None = None
    call_id: str | None = None
    tool: str | None = None
    detail: str = ""


class DriftEntry(_Contract):
    """One kind of drift with one name, counted over the stream (DESIGN §6 rule 19):
    ``hides_reads`` drift (the client's own events, fields or tools) makes claims without
    evidence unknown; the rest is said and counted."""

    kind: DriftKind
    name: str
    count: Annotated[int, Field(ge=1)] = 1
    first_line: NonNegativeInt | None = None
    hides_reads: bool = False


class Mutation(_Contract):
    """A successful call that changed files during the review (DESIGN §6 rule 20)."""

    tool: str
    path: str | None = None
    line: NonNegativeInt | None = None


class Checkout(_Contract):
    """The commit checked out in the repository (``HEAD``) when the stream was recorded (for
    ``run``: when the reviewer started), and what it is to the revision."""

    head: str
    relation: CheckoutRelation


class Bounds(_Contract):
    max_files: Annotated[int, Field(ge=1)] = defaults.MAX_FILES
    max_issues: Annotated[int, Field(ge=0)] = defaults.MAX_ISSUES


class CannotVerify(_Contract):
    """Why an evidence document verifies no claim (DESIGN §6 rule 27): the record that decides
    is missing (a ``codex exec --json`` stream without its thread's rollout), or is one the
    reviewer could have written (a rollout its commands could write, or one that does not tell
    the exec stream's story; the telemetry its commands could send). Every claimed file the
    evidence would verify, or leaves unknown, is unknown for ``reason``; ``detail`` says why in
    words, naming the record."""

    reason: UnknownReason
    detail: str
    # the files the stream's successful commands name (a ``codex exec --json`` stream's): each
    # is unknown, never unsupported, whatever its output showed (DESIGN §6 rule 26)
    named: list[str] = Field(default_factory=list)


class EvidenceDocument(_Contract):
    schema_: Literal["coverage-gate/evidence"] = Field(
        alias="schema", default="coverage-gate/evidence"
    )
    version: str = EVIDENCE_VERSION
    source: str
    agent: str | None = None
    revision: str
    # ``--revision`` as given, when it was a name (``HEAD``, a branch, an abbreviated id) that the
    # repository resolved to the object id ``revision`` holds (DESIGN §6 rule 22)
    revision_name: str | None = None
    # the repository's checkout, when a repository was at hand and the revision is a commit: a
    # checkout that is another commit (a pull request's merge commit) is not what is checked
    checkout: Checkout | None = None
    stream_complete: bool
    capability: Capability
    truncated: bool = False
    dropped_calls: NonNegativeInt = 0
    # Calls that could have read any file but whose file could not be determined (a tool line
    # that could not be decoded, an absolute path with no known repository root): while any
    # exist, no claimed file's lack of evidence proves anything.
    unattributed_calls: NonNegativeInt = 0
    counters: Counters = Field(default_factory=Counters)
    diff_status: DiffStatus = DiffStatus.NOT_REQUESTED
    diff: DiffSummary = Field(default_factory=DiffSummary)
    files: list[FileEvidence] = Field(default_factory=list)
    issues: list[CallIssue] = Field(default_factory=list)
    issues_dropped: NonNegativeInt = 0
    bounds: Bounds = Field(default_factory=Bounds)
    # the client version the stream names, when it names one
    client_version: str | None = None
    drift: list[DriftEntry] = Field(default_factory=list)
    drift_dropped: NonNegativeInt = 0
    mutations: list[Mutation] = Field(default_factory=list)
    mutations_dropped: NonNegativeInt = 0
    # descendants of the reviewer that ``run`` ended when the reviewer ended (DESIGN §6 rule 21)
    descendants_ended: NonNegativeInt = 0
    # the record that decides is missing, or one the reviewer could write (DESIGN §6 rule 27)
    cannot_verify: CannotVerify | None = None

    model_config = ConfigDict(populate_by_name=True)

    def file(self, path: str) -> FileEvidence | None:
        for entry in self.files:
            if entry.path == path:
                return entry
        return None


# --- review bundle (several reviewers) ---------------------------------------------------------


class BundleReviewer(_Contract):
    """One reviewer of a review. Paths are relative to the bundle file."""

    agent_id: str | None = None
    claims: str | None = None
    evidence: str | None = None
    failed: bool = False

    @model_validator(mode="after")
    def _claims_unless_failed(self) -> BundleReviewer:
        if self.claims is None and not self.failed:
            raise ValueError("a reviewer needs 'claims' unless it is marked 'failed'")
        if self.claims is None and self.agent_id is None:
            raise ValueError("a failed reviewer without claims needs an 'agent_id'")
        return self


class ReviewBundle(_Contract):
    schema_version: SchemaVersion1
    reviewers: Annotated[list[BundleReviewer], Field(min_length=1)]


# --- decision ----------------------------------------------------------------------------------


class FileDecision(_Contract):
    path: str
    claim: Claim
    evidence: str
    status: FileStatus
    unknown_reason: UnknownReason | None = None
    # Why an unsupported claim has no evidence that holds (DESIGN §6 rules 16 and 18).
    unsupported_reason: UnsupportedReason | None = None
    # How the file's evidence was checked against its content (DESIGN §6 rules 16-17).
    content: FileContent | None = None
    # A claimed file whose content is ``mismatch``: what its reads showed instead (the kind most
    # of its mismatched reads showed; ``edit`` before ``older`` before ``other`` on a tie).
    mismatch_kind: MismatchKind | None = None
    # Claimed files with successful evidence only: what it showed of the file's change. Depth is
    # ``unknown`` here whenever the evidence cannot rule out calls it did not see.
    depth: FileDepth | None = None


class ReviewerPolicyOutcome(_Contract):
    """What one depth policy would make of one reviewer's claims."""

    depth_policy: DepthPolicy
    shallow_files: NonNegativeInt
    would_downgrade: bool


class PolicyOutcome(_Contract):
    """What one depth policy would do to the review: would it turn this Approve into a Comment."""

    depth_policy: DepthPolicy
    would_downgrade: bool


class RejectedClaim(_Contract):
    """A claimed path that names no file of the repository: it counts for nothing."""

    path: str
    claim: Claim
    reason: PathRejection


class CitationCheck(_Contract):
    """One citation replayed against the file at the revision.

    ``path`` and ``content`` are as the reviewer gave them, cut to a bounded excerpt (``…`` marks
    a cut; ``content_chars`` is the full length). ``file`` is the path through the normaliser.
    ``found`` is what stands on the cited line at the revision (a bounded excerpt), ``offset``
    where a nearby match stands relative to the cited line. ``finding`` is the index of the
    finding that carried it (none: a top-level citation). ``uncorroborated``: the reviewer has
    no successful read or diff page of the file in evidence that could have shown one."""

    path: str
    file: str | None = None
    line: Annotated[int, Field(ge=1)]
    content: str
    content_chars: NonNegativeInt = 0
    finding: NonNegativeInt | None = None
    outcome: CitationOutcome
    reason: CitationReason | None = None
    path_rejection: PathRejection | None = None
    offset: int | None = None
    found: str | None = None
    file_lines: NonNegativeInt | None = None
    uncorroborated: bool = False


class ReviewerCitations(_Contract):
    """A reviewer's citations and what replaying them found. At most ``limit`` are replayed; the
    rest are counted in ``over_limit``, never dropped silently."""

    checks: list[CitationCheck] = Field(default_factory=list)
    over_limit: NonNegativeInt = 0
    limit: NonNegativeInt = 0

    def count(self, outcome: CitationOutcome) -> int:
        return sum(1 for check in self.checks if check.outcome is outcome)

    @property
    def failed(self) -> list[CitationCheck]:
        return [check for check in self.checks if check.outcome is CitationOutcome.FAILED]


class ReviewerDecision(_Contract):
    agent_id: str
    coverage: Coverage
    reasons: list[Reason]
    would_downgrade: bool
    evidence_source: str | None = None
    evidence_capability: Capability | None = None
    evidence_revision: str | None = None
    # the client version its stream names, when it names one
    evidence_client_version: str | None = None
    claims_outside_scope: list[str] = Field(default_factory=list)
    claims_rejected: list[RejectedClaim] = Field(default_factory=list)
    files: list[FileDecision]
    depth_policies: list[ReviewerPolicyOutcome] = Field(default_factory=list)
    # Present when the reviewer cited anything (DESIGN §7.9).
    citations: ReviewerCitations | None = None
    # What the reviewer changed during the review (DESIGN §6 rule 20), from its evidence.
    mutations: list[Mutation] = Field(default_factory=list)
    # What its stream held that the adapter did not understand (DESIGN §6 rule 19).
    drift: list[DriftEntry] = Field(default_factory=list)
    # Why its evidence verifies no claim, when it cannot (DESIGN §6 rule 27).
    evidence_cannot_verify: CannotVerify | None = None


class DecisionDocument(_Contract):
    schema_: Literal["coverage-gate/decision"] = Field(
        alias="schema", default="coverage-gate/decision"
    )
    version: str = DECISION_VERSION
    repo: str
    revision: str
    verdict_in: Verdict
    verdict_out: Verdict
    mode: Mode
    mode_source: ModeSource
    unknown_policy: UnknownPolicy
    unknown_policy_source: PolicySource = PolicySource.DEFAULT
    depth_policy: DepthPolicy = DepthPolicy.ACCEPT
    depth_policy_source: PolicySource = PolicySource.DEFAULT
    downgraded: bool
    would_downgrade: bool
    reasons: list[Reason]
    note: str
    scope: list[str]
    reviewers: list[ReviewerDecision]
    # Every depth policy, the one in force included, on this same review (DESIGN §7 rule 8).
    depth_policies: list[PolicyOutcome] = Field(default_factory=list)
    citation_policy: CitationPolicy = CitationPolicy.DOWNGRADE
    citation_policy_source: PolicySource = PolicySource.DEFAULT
    # Whether failed citations alone would turn this Approve into a Comment under the citation
    # policy ``downgrade``, whatever the policy in force: what shadow measures.
    citations_would_downgrade: bool = False
    mutation_policy: MutationPolicy = MutationPolicy.ACCEPT
    mutation_policy_source: PolicySource = PolicySource.DEFAULT
    # Whether a reviewer's changes alone would turn this Approve into a Comment under the
    # mutation policy ``downgrade``, whatever the policy in force.
    mutations_would_downgrade: bool = False

    model_config = ConfigDict(populate_by_name=True)
