"""Replaying a reviewer's citations against the files at the revision (DESIGN §7.9).

A citation says "the file at this path, at this line, says this". Replay reads that file at the
revision under review and checks. Pure and deterministic: the files come in through the
``RevisionFiles`` port (``GitTree`` is the edge behind it), each path is read once, and nothing
here looks at a clock, the environment or the file system.

The rule, for one citation:

1. The path goes through the one normaliser (``paths.normalise``, as claims do). A path it
   rejects (outside the root, VCS metadata, ...) is ``rejected`` and never read.
2. Both sides are compared trimmed at both ends, with every run of whitespace inside taken as
   one space: CRLF line ends, trailing blanks, tabs against spaces at either end, re-spaced
   tokens all compare equal. Content that is empty after that fails (``empty_content``).
3. The file at the revision: absent there fails (``missing_at_revision``); not obtainable (no
   repository, git failing, a symbolic link, over the size bound) or binary (a NUL byte in its
   first 8000 bytes, git's own test) is ``unavailable``, never failed. A cited line past the
   file's last line fails (``line_out_of_range``).
4. ``matched`` when the cited line contains the cited content; else ``matched_nearby`` when a
   line at most ``WINDOW`` (3) lines before or after does (the nearest wins, the earlier one on
   a tie; ``offset`` says where); else ``failed`` (``content_mismatch``). Content of several
   lines is matched line by line on consecutive lines from the one it starts at.
5. Very short content is checked strictly: content with fewer than ``MIN_QUOTE_CHARS`` (3)
   non-whitespace characters (``}``, ``)``, ``x``) must be the whole cited line, at exactly that
   line. Contained anywhere within seven lines, a lone brace would check nothing.

At most ``MAX_CITATIONS`` citations are replayed per reviewer; the rest are counted in
``over_limit``. What a check stores of the reviewer's text and of the file is a bounded excerpt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from coverage_gate.contracts.model import (
    Citation,
    CitationCheck,
    CitationOutcome,
    CitationReason,
    Finding,
    ReviewerCitations,
    ReviewerOutput,
)
from coverage_gate.core.paths import Rejected, RepoTree, normalise
from coverage_gate.core.revision_files import (
    FileAtRevision,
    KnownLine,
    Line,
    Presence,
    RevisionFiles,
)

__all__ = [
    "BINARY_SNIFF_BYTES",
    "EXCERPT_CHARS",
    "MAX_CITATIONS",
    "MIN_QUOTE_CHARS",
    "PATH_CHARS",
    "WINDOW",
    "Cited",
    "FileCache",
    "check",
    "citations_of",
    "excerpt",
    "flat",
    "found_on",
    "is_binary",
    "line_holds",
    "lines_of",
    "replay",
]

#: Lines looked at on either side of the cited one.
WINDOW = 3
#: Citations replayed per reviewer; the rest are counted, not replayed.
MAX_CITATIONS = 500
#: Content with fewer non-whitespace characters than this must be the whole cited line.
MIN_QUOTE_CHARS = 3
#: Characters kept of the reviewer's content and of a file's line in a check.
EXCERPT_CHARS = 160
#: Characters kept of a path as the reviewer spelled it.
PATH_CHARS = 256
#: A NUL byte among a file's first bytes makes it binary (git's own heuristic).
BINARY_SNIFF_BYTES = 8000

_OFFSETS = tuple(offset for distance in range(1, WINDOW + 1) for offset in (-distance, distance))


@dataclass(frozen=True, slots=True)
class _Text:
    """A file at the revision split into lines (``None``: why it has none)."""

    lines: Sequence[Line] | None
    outcome: CitationOutcome | None = None
    reason: CitationReason | None = None


class FileCache:
    """Reads each path once through a ``RevisionFiles`` and keeps its lines (one per review, so
    that reviewers citing the same file share the read)."""

    def __init__(self, files: RevisionFiles) -> None:
        self._files = files
        self._texts: dict[str, _Text] = {}

    def text(self, path: str) -> _Text:
        found = self._texts.get(path)
        if found is None:
            found = self._texts[path] = _split(self._files.file_at_revision(path))
        return found


def _split(file: FileAtRevision) -> _Text:
    if file.presence is Presence.MISSING:
        return _Text(None, CitationOutcome.FAILED, CitationReason.MISSING_AT_REVISION)
    if file.presence is Presence.UNAVAILABLE:
        return _Text(None, CitationOutcome.UNAVAILABLE, CitationReason.CONTENT_UNAVAILABLE)
    if file.lines is not None:
        return _Text(file.lines)
    if is_binary(file.data):
        return _Text(None, CitationOutcome.UNAVAILABLE, CitationReason.NOT_TEXT)
    return _Text(tuple(lines_of(file.data)))


def is_binary(data: bytes) -> bool:
    """A NUL byte among the first ``BINARY_SNIFF_BYTES``: git's own test."""
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def lines_of(data: bytes) -> list[str]:
    """A text file's lines: UTF-8 (a BOM dropped, bad bytes replaced), split at ``\\n``."""
    text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line of its own
    return lines


def flat(text: str) -> str:
    """Trimmed at both ends, every run of whitespace inside taken as one space."""
    return " ".join(text.split())


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """At most ``limit`` characters of ``text``; a cut is marked with ``…``."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Cited:
    """A citation and where the reviewer gave it: the index of its finding, or ``None`` for
    the top level."""

    citation: Citation
    finding: int | None = None


def citations_of(output: ReviewerOutput) -> list[Cited]:
    """Every citation a reviewer gave, in order: those of its findings (explicit, or read from a
    finding's common shape), then its top-level ones."""
    found = [
        Cited(citation, index)
        for index, finding in enumerate(output.findings)
        if isinstance(finding, Finding)
        for citation in finding.cited()
    ]
    return found + [Cited(citation) for citation in output.citations]


def _quote(content: str) -> list[str]:
    """The content's lines, flattened, without blank lines before the first or after the last."""
    lines = [flat(line) for line in content.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def line_holds(line: Line, wanted: str, strict: bool) -> bool:
    """Whether a file's line, flattened, contains ``wanted`` (``strict``: is exactly it)."""
    if isinstance(line, KnownLine):
        return line.holds(wanted, strict)
    have = flat(line)
    return have == wanted if strict else wanted in have


def found_on(line: Line) -> str:
    """What a check shows of a file's line: a bounded excerpt of it, trimmed."""
    return line.found() if isinstance(line, KnownLine) else excerpt(line.strip())


def _holds(lines: Sequence[Line], start: int, quote: Sequence[str], strict: bool) -> bool:
    """Whether the file's lines from ``start`` (0-based) hold the quote's lines, one by one."""
    if start < 0 or start + len(quote) > len(lines):
        return False
    for wanted, line in zip(quote, lines[start : start + len(quote)], strict=True):
        if not line_holds(line, wanted, strict):
            return False
    return True


class _Replayer:
    """Replays one reviewer's citations; each spelling is normalised, and each file asked about
    its corroboration, once."""

    def __init__(
        self,
        *,
        root: str | None,
        tree: RepoTree | None,
        files: FileCache | None,
        uncorroborated: Callable[[str], bool],
    ) -> None:
        self._root = root
        self._tree = tree
        self._files = files
        self._uncorroborated = uncorroborated
        self._placed: dict[str, str | Rejected] = {}
        self._unread: dict[str, bool] = {}

    def _place(self, raw: str) -> str | Rejected:
        found = self._placed.get(raw)
        if found is None:
            found = self._placed[raw] = normalise(raw, self._root, tree=self._tree)
        return found

    def _is_unread(self, path: str) -> bool:
        found = self._unread.get(path)
        if found is None:
            found = self._unread[path] = self._uncorroborated(path)
        return found

    def check(self, cited: Cited) -> CitationCheck:
        citation = cited.citation
        fields: dict[str, object] = {
            "path": excerpt(citation.path, PATH_CHARS),
            "line": citation.line,
            "content": excerpt(citation.content),
            "content_chars": len(citation.content),
            "finding": cited.finding,
        }
        path = self._place(citation.path)
        if isinstance(path, Rejected):
            return CitationCheck.model_validate(
                fields
                | {
                    "outcome": CitationOutcome.REJECTED,
                    "reason": CitationReason.PATH_REJECTED,
                    "path_rejection": path.reason,
                }
            )
        fields |= {"file": path, "uncorroborated": self._is_unread(path)}
        return CitationCheck.model_validate(fields | self._replay(path, citation))

    def _replay(self, path: str, citation: Citation) -> dict[str, object]:
        """The outcome of one citation of a normalised path, and what goes with it."""
        quote = _quote(citation.content)
        if not quote:
            return _failed(CitationReason.EMPTY_CONTENT)
        if self._files is None:
            return {"outcome": CitationOutcome.UNAVAILABLE, "reason": CitationReason.NO_REPOSITORY}
        text = self._files.text(path)
        if text.lines is None:
            return {"outcome": text.outcome, "reason": text.reason}
        lines = text.lines
        at = citation.line - 1
        if at >= len(lines):
            return _failed(CitationReason.LINE_OUT_OF_RANGE, file_lines=len(lines))
        strict = sum(len(line.replace(" ", "")) for line in quote) < MIN_QUOTE_CHARS
        if _holds(lines, at, quote, strict):
            return {"outcome": CitationOutcome.MATCHED}
        if not strict:
            for offset in _OFFSETS:
                if _holds(lines, at + offset, quote, strict):
                    return {"outcome": CitationOutcome.MATCHED_NEARBY, "offset": offset}
        return _failed(
            CitationReason.CONTENT_MISMATCH,
            found=found_on(lines[at]),
            file_lines=len(lines),
        )


def _failed(
    reason: CitationReason, *, found: str | None = None, file_lines: int | None = None
) -> dict[str, object]:
    return {
        "outcome": CitationOutcome.FAILED,
        "reason": reason,
        "found": found,
        "file_lines": file_lines,
    }


def check(
    cited: Cited,
    *,
    root: str | None,
    tree: RepoTree | None,
    files: FileCache | None,
    uncorroborated: Callable[[str], bool],
) -> CitationCheck:
    """Replay one citation (the rule is in this module's docstring)."""
    replayer = _Replayer(root=root, tree=tree, files=files, uncorroborated=uncorroborated)
    return replayer.check(cited)


def replay(
    cited: Iterable[Cited],
    *,
    root: str | None,
    tree: RepoTree | None,
    files: FileCache | None,
    uncorroborated: Callable[[str], bool],
    limit: int = MAX_CITATIONS,
) -> ReviewerCitations:
    """Replay a reviewer's citations: the first ``limit`` are checked, the rest counted.

    ``files`` is ``None`` when no repository can be read: every citation whose path and content
    could be checked is then ``unavailable``. ``uncorroborated`` tells, for a normalised path,
    whether the reviewer's evidence shows it never read or diffed that file."""
    given = list(cited)
    replayer = _Replayer(root=root, tree=tree, files=files, uncorroborated=uncorroborated)
    checks = [replayer.check(one) for one in given[: max(limit, 0)]]
    return ReviewerCitations(
        checks=checks, over_limit=max(len(given) - max(limit, 0), 0), limit=max(limit, 0)
    )
