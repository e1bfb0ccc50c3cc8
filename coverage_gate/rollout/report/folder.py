"""What reading a telemetry folder gathered (``FolderInput``): its files, lines and errors, its
malformed lines (counted, with a short sample of file and line numbers), and its reviews, either
every one kept (``Loaded``, filled by ``otlp.load_folder``) or folded one at a time into
per-repository ``ReviewTally``s (``Tallied``, filled by ``scan.scan_folder`` for the report
command); and the per-repository counts of either (``count_folder``), the same counts either way.

Holds what was read; reads nothing itself.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from coverage_gate.rollout.report.counts import RepoCounts, ReviewTally
from coverage_gate.rollout.report.flagged import Flagged, _flagged_of
from coverage_gate.rollout.report.records import ReviewRecord, SpanKeys

__all__ = ["MALFORMED_SAMPLE", "FolderInput", "Loaded", "MalformedLine", "Tallied", "count_folder"]


MALFORMED_SAMPLE = 10


@dataclass(frozen=True, slots=True)
class MalformedLine:
    file: str
    line: int
    detail: str


@dataclass
class FolderInput:
    """What reading a telemetry folder gathered besides the reviews themselves."""

    errors: Counter[str] = field(default_factory=Counter)
    #: the same errors by (repository, kind): bad_input, bad_configuration, internal
    error_kinds: Counter[tuple[str, str]] = field(default_factory=Counter)
    files: int = 0
    lines: int = 0
    malformed_lines: int = 0
    malformed_sample: list[MalformedLine] = field(default_factory=list)
    unreadable_files: list[str] = field(default_factory=list)
    #: The review spans read so far (the same span in two files is one review).
    seen_spans: SpanKeys = field(default_factory=SpanKeys)

    def malformed(self, file: str, line: int, detail: str) -> None:
        self.malformed_lines += 1
        if len(self.malformed_sample) < MALFORMED_SAMPLE:
            self.malformed_sample.append(MalformedLine(file, line, detail))

    def add_review(self, review: ReviewRecord) -> None:
        raise NotImplementedError

    @property
    def reviews_read(self) -> int:
        raise NotImplementedError


@dataclass
class Loaded(FolderInput):
    """Everything read from a telemetry folder, every review kept (for callers that want the
    records; the report command streams into a ``Tallied`` instead)."""

    reviews: list[ReviewRecord] = field(default_factory=list)

    def add_review(self, review: ReviewRecord) -> None:
        self.reviews.append(review)

    @property
    def reviews_read(self) -> int:
        return len(self.reviews)


@dataclass
class Tallied(FolderInput):
    """A telemetry folder folded one review at a time into per-repository tallies: memory grows
    with the repositories and by some 30 bytes a review (its key, its duration), not with the
    reviews' records. The flagged decisions are kept only when asked for (``--list``)."""

    tallies: dict[str, ReviewTally] = field(default_factory=dict)
    count: int = 0
    #: (end time, decision) of each flagged reviewer decision, in reading order; None when not
    #: asked for.
    flagged: list[tuple[int, Flagged]] | None = None

    def add_review(self, review: ReviewRecord) -> None:
        self.count += 1
        tally = self.tallies.get(review.repository)
        if tally is None:
            tally = self.tallies[review.repository] = ReviewTally()
        tally.add(review)
        if self.flagged is not None:
            # Its time is written when listed, as for a Loaded.
            self.flagged.extend((review.end_ns, item) for item in _flagged_of(review, timed=False))

    @property
    def reviews_read(self) -> int:
        return self.count

    def absorb(self, part: Tallied) -> None:
        """Fold in what another ``Tallied`` read after this one, whose review keys (not taken
        from it) were none of this one's: ``seen_spans.add_if_new``."""
        self.errors.update(part.errors)
        self.error_kinds.update(part.error_kinds)
        self.files += part.files
        self.lines += part.lines
        self.malformed_lines += part.malformed_lines
        room = MALFORMED_SAMPLE - len(self.malformed_sample)
        self.malformed_sample.extend(part.malformed_sample[: max(room, 0)])
        self.unreadable_files.extend(part.unreadable_files)
        self.count += part.count
        for repository, tally in part.tallies.items():
            mine = self.tallies.get(repository)
            if mine is None:
                self.tallies[repository] = tally
            else:
                mine.merge(tally)
        if self.flagged is not None and part.flagged is not None:
            self.flagged.extend(part.flagged)


def count_folder(loaded: FolderInput) -> list[RepoCounts]:
    """Every repository with a review or an error in ``loaded``, by name."""
    if isinstance(loaded, Tallied):
        tallies = loaded.tallies
    else:
        assert isinstance(loaded, Loaded)  # noqa: S101 - the two kinds of folder input
        tallies = {}
        for review in loaded.reviews:
            tally = tallies.get(review.repository)
            if tally is None:
                tally = tallies[review.repository] = ReviewTally()
            tally.add(review)
    names = sorted(set(tallies) | {repo for repo, n in loaded.errors.items() if n})
    return [
        (tallies.get(name) or ReviewTally()).counts(
            name,
            loaded.errors.get(name, 0),
            {kind: n for (repo, kind), n in sorted(loaded.error_kinds.items()) if repo == name},
        )
        for name in names
    ]
