"""The words every layer shares, as enums: verdicts, modes, statuses, reasons, policies.

They live apart from the contracts (``coverage_gate.contracts.model``, which re-exports them) so
that what needs only the words (the command line's options, the adapters, the flag sources) loads no
pydantic.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "CallKind",
    "Capability",
    "CheckoutRelation",
    "CitationOutcome",
    "CitationPolicy",
    "CitationReason",
    "Claim",
    "ContentCheck",
    "Coverage",
    "Depth",
    "DepthPolicy",
    "DiffStatus",
    "DriftKind",
    "FileContent",
    "FileStatus",
    "IssueKind",
    "MismatchKind",
    "Mode",
    "ModeSource",
    "MutationPolicy",
    "PathRejection",
    "PolicySource",
    "Reason",
    "UnknownPolicy",
    "UnknownReason",
    "UnsupportedReason",
    "Verdict",
]


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


class CheckoutRelation(StrEnum):
    """What the repository's checkout (``HEAD``) is to the revision under review: a reviewer
    that reads the working tree reads the checkout's files, and only the revision's are checked."""

    REVISION = "revision"  # HEAD is the revision
    # HEAD is a merge commit with the revision among its parents: GitHub's refs/pull/N/merge,
    # what actions/checkout checks out for a pull request unless told the head
    MERGE_OF_REVISION = "merge_of_revision"
    OTHER_COMMIT = "other_commit"  # HEAD is another commit


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
    # a tool that changes files (an edit, a write, a patch, ``git stash``): never evidence, and
    # a successful one is recorded as a mutation (DESIGN §6 rule 20)
    WRITE = "write"


class DriftKind(StrEnum):
    """What in a stream its adapter did not understand (DESIGN §6 rule 19)."""

    UNKNOWN_EVENT = "unknown_event"  # an event (or content block) type the adapter does not know
    MISSING_FIELD = "missing_field"  # a field the adapter relies on is gone
    FIELD_TYPE = "field_type"  # a field of a type the format never uses
    UNPAIRED = "unpaired"  # starts without ends (or ends without starts) in a completed stream
    UNLISTED_TOOL = "unlisted_tool"  # a built-in tool the client lists that the adapter lacks
    UNKNOWN_TOOL = "unknown_tool"  # a successful call of an unknown tool naming a file in scope
    CLIENT_VERSION = "client_version"  # a client version outside the range checked
    FOREIGN_COMMIT = "foreign_commit"  # the stream's own commit is not the revision
    # a read's text that the client's declared presentation does not explain and that does not
    # align with its file (DESIGN §6 rule 23): unchecked, never a mismatch
    PRESENTATION = "presentation"

    @property
    def hides_reads(self) -> bool:
        """Drift the model cannot cause that could hide reads: claims without evidence become
        unknown. A model can call any tool with any path, so an unknown tool never blinds; a
        version or a commit alone changes nothing."""
        return self in _HIDING_DRIFT


_HIDING_DRIFT = frozenset(
    {
        DriftKind.UNKNOWN_EVENT,
        DriftKind.MISSING_FIELD,
        DriftKind.FIELD_TYPE,
        DriftKind.UNPAIRED,
        DriftKind.UNLISTED_TOOL,
    }
)


class ContentCheck(StrEnum):
    """What a read's returned text is, against the file at the revision (DESIGN §6 rule 16)."""

    MATCHED = "matched"
    MISMATCH = "mismatch"
    UNCHECKED = "unchecked"


class FileContent(StrEnum):
    """How a claimed file's evidence was checked against its content at the revision, as one
    word per file (the decision's ``content``, the metric's ``content`` label)."""

    MATCHED = "matched"  # a read whose text was the file at the revision
    VIA_CONTENT = "via_content"  # no such read; its lines came back through another call
    MISMATCH = "mismatch"  # only reads whose text was not the file: no evidence
    UNCHECKED = "unchecked"  # reads the stream does not carry the text of (today's rules)
    NONE = "none"  # no successful call on the file at all


class MismatchKind(StrEnum):
    """What a read whose text was not its file at the revision showed instead (DESIGN §6 rule
    24), so that an operator in shadow can tell a client whose presentation is not modelled (a
    false accusation: ``other``, clustered on one client version) from a reviewer's own edit or
    an older round."""

    EDIT = "edit"  # the file as the stream itself changed it (an edit, a write, a redirection)
    OLDER = "older"  # a line the change removed (the pinned diff's base side) where it was
    OTHER = "other"  # any other text that aligns with the file but differs from it


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
    # A successful read whose returned text is not the file at the revision: not evidence.
    CONTENT_MISMATCH = "content_mismatch"
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
    # The reviewer changed files during the review, under ``--mutation-policy downgrade``.
    INCOMPLETE_MUTATED = "incomplete_mutated"
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
    # The reviewer changed the code it reviewed (held against it under --mutation-policy
    # downgrade; said in every case).
    REVIEWER_MUTATED = "reviewer_mutated"
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
    # the stream held what its adapter does not understand and that could hide reads
    FORMAT_DRIFT = "format_drift"
    # The record that decides is missing or is one the reviewer could write (DESIGN §6 rule
    # 27): a ``codex exec --json`` stream whose thread's rollout is not at hand, a rollout that
    # is not the thread's one file or does not tell the exec stream's story, a rollout the run's
    # sandbox let commands write, the telemetry the reviewer's commands could send to ``run``.
    ROLLOUT_MISSING = "rollout_missing"
    ROLLOUT_REJECTED = "rollout_rejected"
    ROLLOUT_WRITABLE = "rollout_writable"
    TELEMETRY_INTAKE = "telemetry_intake"


class UnsupportedReason(StrEnum):
    """Why a claimed file's evidence, available and complete, holds nothing of it."""

    NO_EVIDENCE = "no_evidence"  # no successful read or diff page at all
    # reads whose returned text is not the file at the revision (the reviewer's own edit, an
    # older round, another file): they show nothing of the revision's file
    CONTENT_MISMATCH = "content_mismatch"
    # evidence recorded at another revision, of content the file no longer has
    EVIDENCE_STALE = "evidence_stale"


class Depth(StrEnum):
    """How much of a file's change the successful calls showed (DESIGN §6 rule 13)."""

    FULL = "full"
    PARTIAL = "partial"
    NONE = "none"
    UNKNOWN = "unknown"


class UnknownPolicy(StrEnum):
    ACCEPT = "accept"
    DOWNGRADE = "downgrade"


class MutationPolicy(StrEnum):
    """What a reviewer that changed files during its review does to its coverage (DESIGN §7.11):
    ``accept`` (the default) records and says it; ``downgrade`` makes the coverage incomplete
    (``reviewer_mutated``)."""

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
