"""What one ``reconcile`` span says: a review (``ReviewRecord``) and each reviewer's decision in
it (``ReviewerRecord``), as the report reads them; and the keys that tell review spans apart
(``SpanKeys``, ``span_key``), so that the same span read twice is one review.

Plain records and a compact set: no decoding (``otlp``, ``scan``) and no counting (``counts``).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from hashlib import blake2b

from coverage_gate.contracts.model import DepthPolicy
from coverage_gate.rollout import metrics as m

__all__ = ["ReviewRecord", "ReviewerRecord", "SpanKeys", "span_key"]


# The two records are not frozen: a frozen dataclass is built through object.__setattr__, field
# by field, three times slower, and a report builds and drops one of each per review read (a
# million for a big folder). Nothing changes one once built.
@dataclass(slots=True)
class ReviewerRecord:
    agent: str
    format: str
    capability: str
    complete: bool
    truncated: bool
    stale: bool
    failed: bool
    would_downgrade: bool
    unsupported_files: tuple[str, ...]
    unsupported_dropped: int
    shallow_files: tuple[str, ...] = ()
    failed_citations: tuple[str, ...] = ()
    #: Claimed files by how their evidence was checked against their content at the revision,
    #: as (``FileContent`` value, count) pairs, the outcomes counted only; empty when none was
    #: (or the event predates content checks).
    content: tuple[tuple[str, int], ...] = ()
    #: Of those, the ``mismatch`` ones by what their reads showed instead (``MismatchKind``
    #: value, count); empty when none (or the event predates the kinds).
    mismatches: tuple[tuple[str, int], ...] = ()
    #: The client version its stream named (``none``), whether its adapter understood the stream
    #: (``metrics.drift_label``) and the kinds of drift it held.
    client_version: str = m.VERSION_NONE
    drift: str = ""  # empty: the event predates the drift watch
    drift_kinds: tuple[str, ...] = ()

    @property
    def evidence_available(self) -> bool:
        return (
            self.capability == "per_file"
            and self.complete
            and not self.truncated
            and not self.stale
        )


@dataclass(slots=True)
class ReviewRecord:
    repository: str
    revision: str
    mode: str
    mode_source: str
    outcome: str
    verdict_in: str
    reasons: tuple[str, ...]
    claimed: int
    unsupported: int
    unknown: int
    duration_s: float
    end_ns: int
    reviewers: tuple[ReviewerRecord, ...]
    depth_policy: str = DepthPolicy.ACCEPT.value
    # Claimed files with successful evidence, by depth.
    depths: Mapping[str, int] = field(default_factory=dict)
    # The depth policies that would have downgraded this review; None when the span predates
    # the comparison (such a review is left out of it).
    would_downgrade_under: tuple[str, ...] | None = None
    citations_replayed: int = 0
    citations_failed: int = 0
    # Whether failed citations alone would downgrade this approval; None when the span predates
    # citations (such a review is left out of that rate).
    citations_would_downgrade: bool | None = None


class SpanKeys:
    """The review spans read so far, each by a 64-bit key of its trace and span ids: a compact
    open-addressing set (8 bytes a key in one array, not a tuple of two strings in a set), so
    that a million reviews cost megabytes. Two different spans share a key with a chance of
    about n²/2⁶⁵ (3·10⁻⁸ for a million reviews)."""

    __slots__ = ("_count", "_table")

    def __init__(self) -> None:
        self._table = array("Q", bytes(8 * 1024))
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: int) -> bool:
        table = self._table
        mask = len(table) - 1
        index = key & mask
        while True:
            held = table[index]
            if held == key:
                return True
            if not held:
                return False
            index = (index + 1) & mask

    def add(self, key: int) -> None:
        table = self._table
        mask = len(table) - 1
        index = key & mask
        while True:
            held = table[index]
            if held == key:
                return
            if not held:
                break
            index = (index + 1) & mask
        table[index] = key
        self._count += 1
        if 2 * self._count > len(table):
            self._grow()

    def add_if_new(self, keys: Sequence[int]) -> bool:
        """Add every one of ``keys`` (distinct, non-zero) if none is held yet, and say so; add
        none of them otherwise."""
        table = self._table
        mask = len(table) - 1
        for key in keys:
            index = key & mask
            while held := table[index]:
                if held == key:
                    return False
                index = (index + 1) & mask
        while 2 * (self._count + len(keys)) > len(table):
            self._grow()
            table = self._table
        mask = len(table) - 1
        for key in keys:
            index = key & mask
            while table[index]:
                index = (index + 1) & mask
            table[index] = key
        self._count += len(keys)
        return True

    def held(self) -> array[int]:
        """Every key held, compactly."""
        return array("Q", filter(None, self._table))

    def __iter__(self) -> Iterator[int]:
        return iter(self.held())

    def _grow(self) -> None:
        held = self.held()
        self._table = array("Q", bytes(16 * len(self._table)))
        self._count = 0
        self.add_if_new(held)


def span_key(trace_id: str, span_id: str) -> int:
    """A span's key for ``SpanKeys``: 64 bits of a hash of its ids, never 0; 0 for a span with
    neither id (such spans are never taken for one another)."""
    if not trace_id and not span_id:
        return 0
    ids = f"{len(trace_id)}:{trace_id}{span_id}".encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(ids, digest_size=8).digest(), "little") or 1
