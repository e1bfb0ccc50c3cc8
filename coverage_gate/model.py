"""Boundary contracts and the enums every layer shares.

Everything that crosses a boundary (reviewer output, evidence document, review bundle, decision
document) is a strict, frozen pydantic model that rejects unknown fields. Their JSON Schemas are
published by ``coverage-gate schema``.
"""

from __future__ import annotations

from enum import StrEnum
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

EVIDENCE_SCHEMA = "coverage-gate/evidence"
EVIDENCE_VERSION = "1.1"
DECISION_SCHEMA = "coverage-gate/decision"
DECISION_VERSION = "1.2"


class Verdict(StrEnum):
    APPROVE = "approve"
    COMMENT = "comment"
    REQUEST_CHANGES = "request_changes"


class Mode(StrEnum):
    OFF = "off"
    SHADOW = "shadow"
    ENFORCE = "enforce"


class ModeSource(StrEnum):
    """Which source answered the question "which mode is this repository in"."""

    OVERRIDE = "override"
    SNAPSHOT = "snapshot"
    LIVE = "live"
    DISK_COPY = "disk_copy"
    FALLBACK = "fallback"


class Capability(StrEnum):
    PER_FILE = "per_file"
    NONE = "none"


class DiffStatus(StrEnum):
    """The legacy, whole-diff view of ``cr_diff`` paging."""

    NOT_REQUESTED = "not_requested"
    FAILED = "failed"
    PARTIAL = "partial"
    COMPLETE = "complete"


class CallKind(StrEnum):
    READ = "read"
    DIFF_PAGE = "diff_page"
    IGNORED = "ignored"


class IssueKind(StrEnum):
    MISSING_END = "missing_end"
    MISSING_START = "missing_start"
    AMBIGUOUS_CALL_ID = "ambiguous_call_id"
    PATH_REJECTED = "path_rejected"
    ARGUMENTS_UNAVAILABLE = "arguments_unavailable"
    MALFORMED_LINE = "malformed_line"
    LINE_TOO_LARGE = "line_too_large"
    DIFF_MISMATCH = "diff_mismatch"
    # An absolute path and no known repository root: the call read some file, which one cannot
    # be told. Counted in ``unattributed_calls`` (evidence unavailable, not absent).
    PATH_WITHOUT_ROOT = "path_without_root"
    # A call an unreadable line could have been part of: its outcome (or, with no path, its file)
    # is unknown; it counts in ``reads_unknown`` or ``unattributed_calls``.
    OUTCOME_UNREADABLE = "outcome_unreadable"
    # A string kept as a bounded prefix and a hash (a call id, path or detail longer than kept).
    VALUE_TRUNCATED = "value_truncated"
    # A successful read that returned nothing (zero bytes or lines): not evidence.
    EMPTY_RESULT = "empty_result"
    # Calls of a harness's own trace (codereview-cli) whose provenance it could not establish,
    # under the harness's labels where ours have no word for them; no evidence. The trace's other
    # labels are ours already (missing_end, missing_start, ambiguous_call_id,
    # arguments_unavailable; outcome_unavailable is our outcome_unreadable).
    CALL_ID_UNAVAILABLE = "call_id_unavailable"
    ARGUMENTS_AMBIGUOUS = "arguments_ambiguous"
    RANGE_UNAVAILABLE = "range_unavailable"
    READ_VIEW_UNAVAILABLE = "read_view_unavailable"
    PATH_UNAVAILABLE = "path_unavailable"
    PATH_OMITTED = "path_omitted"


class Claim(StrEnum):
    INSPECTED = "inspected"
    SKIPPED = "skipped"
    NONE = "none"


class FileStatus(StrEnum):
    VERIFIED = "verified"
    UNSUPPORTED = "unsupported"
    # Claimed, with successful evidence that did not show enough of the file's change for the
    # repository's depth policy (DESIGN §7 rule 8); counts as unsupported under that policy.
    SHALLOW = "shallow"
    UNKNOWN = "unknown"
    SKIPPED = "skipped"
    MISSING = "missing"


class Coverage(StrEnum):
    COMPLETE = "complete"
    INCOMPLETE_FAILED = "incomplete_failed"
    INCOMPLETE_SKIPPED = "incomplete_skipped"
    INCOMPLETE_MISSING = "incomplete_missing"
    INCOMPLETE_UNSUPPORTED = "incomplete_unsupported"
    INCOMPLETE_SHALLOW = "incomplete_shallow"
    INCOMPLETE_UNVERIFIABLE = "incomplete_unverifiable"
    # A citation the reviewer gave does not match the file at the revision (DESIGN §7.10).
    INCOMPLETE_CITATIONS = "incomplete_citations"
    # The scope held no reviewable file: there was no coverage to check, so none was verified.
    NOTHING_TO_REVIEW = "nothing_to_review"


class Reason(StrEnum):
    REVIEWER_FAILED = "reviewer_failed"
    FILES_SKIPPED = "files_skipped"
    FILES_MISSING = "files_missing"
    CLAIMS_UNSUPPORTED = "claims_unsupported"
    CLAIMS_SHALLOW = "claims_shallow"
    CLAIMS_UNVERIFIABLE = "claims_unverifiable"
    # A cited line does not say what the reviewer said it does (DESIGN §7.10).
    CITATIONS_FAILED = "citations_failed"
    # Said, never held against the reviewer by themselves: the scope was empty, or the evidence
    # was recorded at another revision (its claimed files are then unknown, DESIGN §7.1).
    NOTHING_TO_REVIEW = "nothing_to_review"
    EVIDENCE_STALE = "evidence_stale"


class PathRejection(StrEnum):
    """Why a path spelling names no file of the repository (DESIGN §6 rule 4)."""

    EMPTY = "empty"
    CONTROL_CHARACTER = "control_character"
    OUTSIDE_ROOT = "outside_root"
    ESCAPES_ROOT = "escapes_root"
    ABSOLUTE_WITHOUT_ROOT = "absolute_without_root"
    VCS_METADATA = "vcs_metadata"
    NOT_A_FILE = "not_a_file"
    # A '..' segment needs the repository at the revision (is a component it climbs out of a
    # symbolic link?), and it could not be consulted.
    PARENT_UNRESOLVED = "parent_unresolved"
    # A '..' climbs out of a symbolic link: the OS and a tool that collapses '..' first read
    # different files, so which one was read cannot be told.
    PARENT_THROUGH_SYMLINK = "parent_through_symlink"
    SYMLINK_OUTSIDE_ROOT = "symlink_outside_root"
    SYMLINK_LOOP = "symlink_loop"


class UnknownReason(StrEnum):
    """Why evidence cannot speak for a claimed file."""

    NO_EVIDENCE_DOCUMENT = "no_evidence_document"
    CAPABILITY_NONE = "capability_none"
    STREAM_INCOMPLETE = "stream_incomplete"
    TRUNCATED = "truncated"
    STALE = "stale"
    OUTCOME_UNREADABLE = "outcome_unreadable"
    UNATTRIBUTED_CALLS = "unattributed_calls"


class Depth(StrEnum):
    """How much of a file's change the successful calls showed (DESIGN §6 rule 13)."""

    FULL = "full"
    PARTIAL = "partial"
    NONE = "none"
    UNKNOWN = "unknown"


class UnknownPolicy(StrEnum):
    ACCEPT = "accept"
    DOWNGRADE = "downgrade"


class DepthPolicy(StrEnum):
    """How much of a claimed file's change its evidence must show (DESIGN §7 rule 8).

    Listed from the most to the least permissive: ``accept`` (any successful evidence verifies),
    ``any-hunk`` (depth ``none`` is shallow), ``all-hunks`` (any depth but ``full`` is shallow).
    ``unknown`` depth is never shallow.
    """

    ACCEPT = "accept"
    ANY_HUNK = "any-hunk"
    ALL_HUNKS = "all-hunks"


class CitationPolicy(StrEnum):
    """What a failed citation does (DESIGN §7.10): ``downgrade`` (the default) holds it against
    the reviewer under the mode in force (shadow measures, enforce applies); ``accept`` replays
    and records citations but never holds one against a reviewer."""

    ACCEPT = "accept"
    DOWNGRADE = "downgrade"


class CitationOutcome(StrEnum):
    """What replaying one citation against the file at the revision found (DESIGN §7.9)."""

    MATCHED = "matched"  # the cited line holds the cited content
    MATCHED_NEARBY = "matched_nearby"  # a line within the window holds it (``offset`` says where)
    FAILED = "failed"  # the file at the revision contradicts it (``reason`` says how)
    UNAVAILABLE = "unavailable"  # the file's content could not be obtained: never held against
    REJECTED = "rejected"  # the path names no file of the repository: never read


class CitationReason(StrEnum):
    """Why a citation failed, could not be checked, or was not read."""

    # failed
    MISSING_AT_REVISION = "missing_at_revision"
    LINE_OUT_OF_RANGE = "line_out_of_range"
    EMPTY_CONTENT = "empty_content"
    CONTENT_MISMATCH = "content_mismatch"
    # unavailable
    NO_REPOSITORY = "no_repository"  # no repository was given to read the revision from
    CONTENT_UNAVAILABLE = "content_unavailable"  # git or the file system could not give it
    NOT_TEXT = "not_text"  # a binary file: it has no lines to cite
    # rejected
    PATH_REJECTED = "path_rejected"


class PolicySource(StrEnum):
    """Where a policy came from: the CLI option, its environment variable, the payload of the
    flag variant that serves the repository, or the default."""

    CLI = "cli"
    ENV = "env"
    PAYLOAD = "payload"
    DEFAULT = "default"


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


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

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

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
    (``unseen_truncated`` when there were more)."""

    depth: Depth
    changed_lines: NonNegativeInt = 0
    changed_lines_seen: NonNegativeInt = 0
    hunks: NonNegativeInt = 0
    hunks_seen: NonNegativeInt = 0
    unseen: list[LineRange] = Field(default_factory=list)
    detail: str = ""
    unseen_truncated: bool = False


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


class Bounds(_Contract):
    max_files: Annotated[int, Field(ge=1)] = 2000
    max_issues: Annotated[int, Field(ge=0)] = 256


class EvidenceDocument(_Contract):
    schema_: Literal["coverage-gate/evidence"] = Field(
        alias="schema", default="coverage-gate/evidence"
    )
    version: str = EVIDENCE_VERSION
    source: str
    agent: str | None = None
    revision: str
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
    claims_outside_scope: list[str] = Field(default_factory=list)
    claims_rejected: list[RejectedClaim] = Field(default_factory=list)
    files: list[FileDecision]
    depth_policies: list[ReviewerPolicyOutcome] = Field(default_factory=list)
    # Present when the reviewer cited anything (DESIGN §7.9).
    citations: ReviewerCitations | None = None


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

    model_config = ConfigDict(populate_by_name=True)
