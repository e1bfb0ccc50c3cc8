"""The review receipt's contract (``coverage-gate schema receipt``): what a receipt holds, as
pydantic models, strict, frozen, unknown fields rejected. How a receipt is built, addressed,
read and decided again is ``coverage_gate.rollout.receipts``; its files are
``coverage_gate.rollout.receipt_store``.

``RecordedLine`` keeps a line of at most ``LINE_CHARS`` characters (a bound of the recording,
in ``coverage_gate.rollout.receipts``) as text."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt

from coverage_gate.contracts.model import (
    CitationPolicy,
    DecisionDocument,
    DepthPolicy,
    EvidenceDocument,
    Mode,
    ModeSource,
    MutationPolicy,
    PolicySource,
    ReviewerOutput,
    UnknownPolicy,
    Verdict,
)

__all__ = [
    "RECEIPT_SCHEMA",
    "RECEIPT_VERSION",
    "SUPPORTED_RECEIPT_MAJOR",
    "FileState",
    "FlagRecord",
    "LineAnswer",
    "Receipt",
    "ReceiptInputs",
    "ReceiptReviewer",
    "RecordedFile",
    "RecordedLine",
    "RecordedPorts",
    "SymlinkAnswer",
]

RECEIPT_SCHEMA = "coverage-gate/receipt"
RECEIPT_VERSION = "1.1"
SUPPORTED_RECEIPT_MAJOR = int(RECEIPT_VERSION.split(".", maxsplit=1)[0])


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class SymlinkAnswer(_Contract):
    """One question the reconciler asked the repository at the revision, and its answer: the
    link's ``target``, ``None`` when the path is no link, or why the tree could not tell."""

    path: str
    target: str | None = None
    unavailable: str | None = None


class FileState(StrEnum):
    """What the files port answered for a cited path."""

    TEXT = "text"
    BINARY = "binary"
    MISSING = "missing"
    UNAVAILABLE = "unavailable"


class LineAnswer(_Contract):
    """One comparison asked of a line kept by its answers: the SHA-256 of the flattened text
    looked for, whether it had to be the whole line, and whether the line held it."""

    wanted_sha256: str
    strict: bool
    holds: bool


class RecordedLine(_Contract):
    """A line that replaying citations looked at (``number`` is 1-based). A line of at most
    ``LINE_CHARS`` characters is kept as ``text``; a longer one by its length, what a check shows
    of it (``found``) and each comparison asked of it with its answer."""

    number: PositiveInt
    text: str | None = None
    chars: NonNegativeInt | None = None
    found: str | None = None
    answers: list[LineAnswer] = Field(default_factory=list)


class RecordedFile(_Contract):
    """What the files port answered for one cited path: its state, its number of lines (text)
    and the lines replay looked at, sorted."""

    path: str
    state: FileState
    detail: str = ""
    line_count: NonNegativeInt | None = None
    lines: list[RecordedLine] = Field(default_factory=list)


class RecordedPorts(_Contract):
    """What the ports answered during the decision, sorted by question. ``files``: what the files
    port answered for each cited path (``None``: the review had no repository to read)."""

    symlink_targets: list[SymlinkAnswer] = Field(default_factory=list)
    files: list[RecordedFile] | None = None


class FlagRecord(_Contract):
    """The flag that answered for the repository (absent when no flag source was consulted)."""

    name: str
    variant: str | None = None
    payload: dict[str, object] | None = None
    # A snapshot that answered: its SHA-256 and the flag's own definition in it (the feature and
    # the segments it uses), enough to evaluate the flag again offline.
    snapshot_sha256: str | None = None
    snapshot_flag: dict[str, object] | None = None


class ReceiptReviewer(_Contract):
    agent_id: Annotated[str, Field(min_length=1)]
    claims: ReviewerOutput | None = None
    evidence: EvidenceDocument | None = None
    failed: bool = False


class ReceiptInputs(_Contract):
    """What ``reconcile`` was given (DESIGN §7): enough to decide the review again."""

    repo: str
    revision: str
    verdict_in: Verdict
    mode: Mode
    mode_source: ModeSource
    scope: list[str]
    unknown_policy: UnknownPolicy
    unknown_policy_source: PolicySource
    depth_policy: DepthPolicy
    depth_policy_source: PolicySource
    repo_root: str | None = None
    reviewers: list[ReceiptReviewer]
    flag: FlagRecord | None = None
    citation_policy: CitationPolicy = CitationPolicy.DOWNGRADE
    citation_policy_source: PolicySource = PolicySource.DEFAULT
    replay_citations: bool = True
    mutation_policy: MutationPolicy = MutationPolicy.ACCEPT
    mutation_policy_source: PolicySource = PolicySource.DEFAULT


class Receipt(_Contract):
    """A review receipt (``coverage-gate schema receipt``)."""

    schema_: Literal["coverage-gate/receipt"] = Field(
        alias="schema", default="coverage-gate/receipt"
    )
    version: str = RECEIPT_VERSION
    inputs: ReceiptInputs
    ports: RecordedPorts = Field(default_factory=RecordedPorts)
    decision: DecisionDocument

    model_config = ConfigDict(populate_by_name=True)
