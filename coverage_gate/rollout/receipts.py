"""Review receipts: one self-contained, content-addressed record per decision, and its re-decision.

A receipt holds what decided a review and the decision it led to:

* the inputs ``reconcile`` was given: repository, revision, verdict, scope, the repository root
  (it places absolute claimed paths), each reviewer's claims and evidence document (already
  bounded by the evidence rules), the mode and its source, each policy and its source, and the
  flag that answered (its name, variant, payload and, when a snapshot answered, the snapshot's
  SHA-256 and the flag's own definition out of it);
* what the ports answered while deciding. The repository at the revision is consulted through
  ``RepoTree.symlink_target`` (claimed paths with ``..``): each question and its answer are
  recorded (``RecordingTree``). Citations are replayed through ``RevisionFiles`` (DESIGN §7.9):
  per cited path, ``RecordingFiles`` records only what replaying needs, namely its state (text,
  binary, missing, unavailable with a bounded detail), its number of lines, and the lines replay
  looked at (at most the cited line ±``WINDOW`` and the quote's span below it). A line of at
  most ``LINE_CHARS`` characters is kept as text. A longer one is not cut, since containment can
  hold anywhere in it and cutting could change an outcome: it is kept by its length, what a check
  shows of it (a bounded excerpt) and each comparison asked of it with its answer (the SHA-256 of
  the flattened text looked for, strict or not, held or not). A receipt never holds a whole file;
* the decision document.

Self-contained means re-decidable offline, without the repository: ``redecide`` rebuilds the
review from the receipt and answers the ports from the record alone (``RecordedTree``,
``RecordedFiles``). A question the record does not hold (a symbolic link, a file, a line, a
comparison) is a failure of the receipt, said plainly, never answered.

Version 1.1 added the citation policy and its source, whether citations are replayed, and the
files port's record (``ports.files``; ``null``: the review had no repository to read).

Content address: the receipt's content is its canonical JSON (sorted keys, compact separators,
UTF-8); its id is the SHA-256 of that content, and its file ``<id>.receipt.json.gz`` holds that
content gzipped with mtime 0, so the same decision always gives the same bytes. No clock is in a
receipt (the decision carries none): two identical decisions are one receipt file.

Pure: no files, clock or environment here (``receipt_store`` reads and writes the files).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from pydantic import ValidationError

from coverage_gate.contracts.model import (
    DecisionDocument,
)
from coverage_gate.contracts.receipt import (
    RECEIPT_SCHEMA,
    SUPPORTED_RECEIPT_MAJOR,
    FileState,
    FlagRecord,
    LineAnswer,
    Receipt,
    ReceiptInputs,
    ReceiptReviewer,
    RecordedFile,
    RecordedLine,
    RecordedPorts,
    SymlinkAnswer,
)
from coverage_gate.core.citations import excerpt, found_on, is_binary, line_holds, lines_of
from coverage_gate.core.paths import RepoTree, TreeUnavailableError
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput
from coverage_gate.core.revision_files import (
    FileAtRevision,
    KnownLine,
    Line,
    Presence,
    RevisionFiles,
)

__all__ = [
    "DETAIL_CHARS",
    "HEX_DIGITS",
    "LINE_CHARS",
    "SUFFIX",
    "Decide",
    "ReceiptError",
    "RecordedFiles",
    "RecordedTree",
    "RecordingFiles",
    "RecordingTree",
    "Redecision",
    "build",
    "canonical",
    "compress",
    "content",
    "decompress",
    "file_name",
    "first_difference",
    "parse",
    "receipt_id",
    "recorded_ports",
    "redecide",
    "reduce_snapshot",
    "review_input",
    "verify",
]

#: A receipt's file name: its content's SHA-256 (64 lowercase hex digits) and this suffix.
SUFFIX = ".receipt.json.gz"
HEX_DIGITS = 64
#: Characters of a line a receipt keeps as text; a longer line is kept by its answers.
LINE_CHARS = 512
#: Characters kept of why a file was unavailable.
DETAIL_CHARS = 256


class ReceiptError(Exception):
    """A receipt that cannot be read: not gzip, not JSON, not a receipt of a version we read.
    The message names the field at fault; the caller names the file."""


# --- the ports: recorded while deciding, answered from the record when deciding again ----------


@dataclass
class RecordingTree:
    """A ``RepoTree`` that passes each question to ``tree`` and records the answer."""

    tree: RepoTree
    answers: dict[str, SymlinkAnswer] = field(default_factory=dict)

    def symlink_target(self, path: str) -> str | None:
        try:
            target = self.tree.symlink_target(path)
        except TreeUnavailableError as error:
            self.answers[path] = SymlinkAnswer(path=path, unavailable=str(error))
            raise
        self.answers[path] = SymlinkAnswer(path=path, target=target)
        return target

    def record(self) -> RecordedPorts:
        return RecordedPorts(symlink_targets=[self.answers[key] for key in sorted(self.answers)])


@dataclass
class RecordedTree:
    """A ``RepoTree`` answering only from a receipt's record. A question the record does not
    hold is noted in ``unrecorded`` (and answered as unavailable, so deciding goes on)."""

    record: Mapping[str, SymlinkAnswer]
    unrecorded: list[str] = field(default_factory=list)

    def symlink_target(self, path: str) -> str | None:
        answer = self.record.get(path)
        if answer is None:
            self.unrecorded.append(path)
            raise TreeUnavailableError("not in the receipt's record")
        if answer.unavailable is not None:
            raise TreeUnavailableError(answer.unavailable)
        return answer.target


def _wanted_sha256(wanted: str) -> str:
    return hashlib.sha256(wanted.encode()).hexdigest()


class _RecordingLine(KnownLine):
    """A long line while deciding: answers from its text and notes each answer."""

    def __init__(self, text: Line, answers: dict[tuple[str, bool], bool]) -> None:
        self._text = text
        self._answers = answers

    def holds(self, wanted: str, strict: bool) -> bool:
        answer = line_holds(self._text, wanted, strict)
        self._answers[(_wanted_sha256(wanted), strict)] = answer
        return answer

    def found(self) -> str:
        return found_on(self._text)


class _RecordingLines(Sequence[Line]):
    """A text file's lines while deciding: notes each line looked at."""

    def __init__(self, lines: Sequence[Line]) -> None:
        self._lines = lines
        self.seen: dict[int, _RecordingLine | None] = {}
        self.answers: dict[int, dict[tuple[str, bool], bool]] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def _line(self, index: int) -> Line:
        text = self._lines[index]
        if isinstance(text, str) and len(text) <= LINE_CHARS:
            self.seen[index] = None
            return text
        found = self.seen.get(index)
        if found is None:
            found = self.seen[index] = _RecordingLine(text, self.answers.setdefault(index, {}))
        return found

    @overload
    def __getitem__(self, index: int) -> Line: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Line]: ...
    def __getitem__(self, index: int | slice) -> Line | Sequence[Line]:
        if isinstance(index, slice):
            return [self._line(i) for i in range(*index.indices(len(self._lines)))]
        return self._line(index if index >= 0 else index + len(self._lines))

    def record(self) -> list[RecordedLine]:
        kept = []
        for index in sorted(self.seen):
            text = self._lines[index]
            if isinstance(text, str) and self.seen[index] is None:
                kept.append(RecordedLine(number=index + 1, text=text))
                continue
            answers = self.answers.get(index, {})
            kept.append(
                RecordedLine(
                    number=index + 1,
                    chars=len(text) if isinstance(text, str) else None,
                    found=found_on(text),
                    answers=[
                        LineAnswer(wanted_sha256=sha, strict=strict, holds=answers[(sha, strict)])
                        for sha, strict in sorted(answers)
                    ],
                )
            )
        return kept


@dataclass
class RecordingFiles:
    """A ``RevisionFiles`` that passes each question to ``files`` and records what replaying
    citations needs of the answer: the file's state and line count, and the lines looked at."""

    files: RevisionFiles
    answers: dict[str, tuple[RecordedFile, _RecordingLines | None]] = field(default_factory=dict)

    def file_at_revision(self, path: str) -> FileAtRevision:
        answer = self.files.file_at_revision(path)
        if answer.presence is Presence.MISSING:
            self.answers[path] = (RecordedFile(path=path, state=FileState.MISSING), None)
            return answer
        if answer.presence is Presence.UNAVAILABLE:
            detail = excerpt(answer.detail, DETAIL_CHARS)
            recorded = RecordedFile(path=path, state=FileState.UNAVAILABLE, detail=detail)
            self.answers[path] = (recorded, None)
            return answer
        if answer.lines is None and is_binary(answer.data):
            self.answers[path] = (RecordedFile(path=path, state=FileState.BINARY), None)
            return answer
        lines = _RecordingLines(answer.lines if answer.lines is not None else lines_of(answer.data))
        self.answers[path] = (
            RecordedFile(path=path, state=FileState.TEXT, line_count=len(lines)),
            lines,
        )
        return FileAtRevision(Presence.FOUND, lines=lines)

    def record(self) -> list[RecordedFile]:
        out = []
        for path in sorted(self.answers):
            recorded, lines = self.answers[path]
            if lines is not None:
                recorded = recorded.model_copy(update={"lines": lines.record()})
            out.append(recorded)
        return out


def recorded_ports(tree: RecordingTree, files: RecordingFiles | None) -> RecordedPorts:
    """What both ports answered (``files`` ``None``: the review had no files port)."""
    return RecordedPorts(
        symlink_targets=tree.record().symlink_targets,
        files=files.record() if files is not None else None,
    )


class _AnsweredLine(KnownLine):
    """A long line answered from a receipt's record; a comparison it does not hold is noted."""

    def __init__(self, where: str, line: RecordedLine, unrecorded: list[str]) -> None:
        self._where = where
        self._line = line
        self._answers = {(a.wanted_sha256, a.strict): a.holds for a in line.answers}
        self._unrecorded = unrecorded

    def holds(self, wanted: str, strict: bool) -> bool:
        answer = self._answers.get((_wanted_sha256(wanted), strict))
        if answer is None:
            self._unrecorded.append(f"{self._where} (a comparison)")
            return False
        return answer

    def found(self) -> str:
        return self._line.found or ""


class _RecordedLines(Sequence[Line]):
    """A text file's lines answered from a receipt's record; a line it does not hold is noted
    (and read as blank, so deciding goes on)."""

    def __init__(self, recorded: RecordedFile, unrecorded: list[str]) -> None:
        self._path = recorded.path
        self._count = recorded.line_count or 0
        self._unrecorded = unrecorded
        self._lines: dict[int, Line] = {}
        for line in recorded.lines:
            where = f"{recorded.path} line {line.number}"
            self._lines[line.number - 1] = (
                line.text if line.text is not None else _AnsweredLine(where, line, unrecorded)
            )

    def __len__(self) -> int:
        return self._count

    def _line(self, index: int) -> Line:
        found = self._lines.get(index)
        if found is None:
            self._unrecorded.append(f"{self._path} line {index + 1}")
            return ""
        return found

    @overload
    def __getitem__(self, index: int) -> Line: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Line]: ...
    def __getitem__(self, index: int | slice) -> Line | Sequence[Line]:
        if isinstance(index, slice):
            return [self._line(i) for i in range(*index.indices(self._count))]
        return self._line(index if index >= 0 else index + self._count)


@dataclass
class RecordedFiles:
    """A ``RevisionFiles`` answering only from a receipt's record. A question the record does
    not hold is noted in ``unrecorded`` (and answered as unavailable, so deciding goes on)."""

    record: Mapping[str, RecordedFile]
    unrecorded: list[str] = field(default_factory=list)

    def file_at_revision(self, path: str) -> FileAtRevision:
        recorded = self.record.get(path)
        if recorded is None:
            self.unrecorded.append(f"{path} (its content)")
            return FileAtRevision(Presence.UNAVAILABLE, detail="not in the receipt's record")
        if recorded.state is FileState.MISSING:
            return FileAtRevision(Presence.MISSING)
        if recorded.state is FileState.UNAVAILABLE:
            return FileAtRevision(Presence.UNAVAILABLE, detail=recorded.detail)
        if recorded.state is FileState.BINARY:
            return FileAtRevision(Presence.FOUND, b"\0")
        return FileAtRevision(Presence.FOUND, lines=_RecordedLines(recorded, self.unrecorded))


# --- building, encoding, reading ---------------------------------------------------------------


def reduce_snapshot(document: Mapping[str, Any], flag_name: str) -> dict[str, object] | None:
    """The flag's own definition out of a features document: its feature and the segments its
    strategies use (``None`` when the document does not define it)."""
    features = [
        f
        for f in document.get("features", [])
        if isinstance(f, dict) and f.get("name") == flag_name
    ]
    if not features:
        return None
    used = {
        segment
        for feature in features
        for strategy in feature.get("strategies") or []
        if isinstance(strategy, dict)
        for segment in strategy.get("segments") or []
    }
    segments = [
        s for s in document.get("segments") or [] if isinstance(s, dict) and s.get("id") in used
    ]
    reduced: dict[str, object] = {"version": document.get("version", 2), "features": features}
    if segments:
        reduced["segments"] = segments
    return reduced


def build(
    review: ReviewInput,
    decision: DecisionDocument,
    ports: RecordedPorts,
    flag: FlagRecord | None = None,
) -> Receipt:
    """The receipt of one decision."""
    return Receipt(
        inputs=ReceiptInputs(
            repo=review.repo,
            revision=review.revision,
            verdict_in=review.verdict_in,
            mode=review.mode,
            mode_source=review.mode_source,
            scope=list(review.scope),
            unknown_policy=review.unknown_policy,
            unknown_policy_source=review.unknown_policy_source,
            depth_policy=review.depth_policy,
            depth_policy_source=review.depth_policy_source,
            repo_root=review.repo_root,
            citation_policy=review.citation_policy,
            citation_policy_source=review.citation_policy_source,
            replay_citations=review.replay_citations,
            mutation_policy=review.mutation_policy,
            mutation_policy_source=review.mutation_policy_source,
            reviewers=[
                ReceiptReviewer(
                    agent_id=r.agent_id, claims=r.claims, evidence=r.evidence, failed=r.failed
                )
                for r in review.reviewers
            ],
            flag=flag,
        ),
        ports=ports,
        decision=decision,
    )


def canonical(value: object) -> bytes:
    """Canonical JSON: sorted keys, compact separators, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def content(receipt: Receipt) -> bytes:
    return canonical(receipt.model_dump(mode="json", by_alias=True))


def receipt_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_name(data: bytes) -> str:
    return receipt_id(data) + SUFFIX


def compress(data: bytes) -> bytes:
    """gzip with mtime 0 and no file name: the same content always gives the same bytes."""
    return gzip.compress(data, compresslevel=6, mtime=0)


#: zlib's window bits for a gzip wrapper (header and CRC-32/length trailer checked by zlib).
_GZIP_WBITS = 16 + zlib.MAX_WBITS


def decompress(data: bytes) -> bytes:
    """A receipt file's content. A receipt file is one gzip member: zlib inflates it in one call
    (checking its CRC and length); anything else (several members, trailing bytes, a cut or
    broken file) goes through ``gzip.decompress``, whose answer and errors are the reference."""
    inflater = zlib.decompressobj(_GZIP_WBITS)
    try:
        content = inflater.decompress(data)
    except zlib.error:
        content = None
    if content is not None and inflater.eof and not inflater.unused_data:
        return content
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as error:
        raise ReceiptError(f"not a complete gzip file ({error})") from None


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:3]:
        where = ".".join(str(part) for part in item["loc"]) or "(document)"
        parts.append(f"field '{where}': {item['msg']}")
    more = len(error.errors()) - 3
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _check_header(data: bytes) -> None:
    """Why content that is not a valid receipt is none: not JSON, not a receipt, too new."""
    try:
        document = json.loads(data)
    except UnicodeDecodeError as error:
        raise ReceiptError(f"not UTF-8 text (byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise ReceiptError(f"not JSON: line {error.lineno} column {error.colno}") from None
    except (RecursionError, ValueError):
        raise ReceiptError("JSON beyond the parser's limits (nesting or a number)") from None
    if not isinstance(document, dict):
        raise ReceiptError("not a JSON object")
    schema, version = document.get("schema"), document.get("version")
    if schema != RECEIPT_SCHEMA:
        raise ReceiptError(f"field 'schema' is {schema!r}, not {RECEIPT_SCHEMA!r}")
    _check_version(version)


def _check_version(version: object) -> None:
    if not isinstance(version, str) or not version.split(".")[0].isdigit():
        raise ReceiptError(f"field 'version' is {version!r}, not 'MAJOR.MINOR'")
    if int(version.split(".")[0]) > SUPPORTED_RECEIPT_MAJOR:
        raise ReceiptError(
            f"version {version} is newer than this coverage-gate reads "
            f"({SUPPORTED_RECEIPT_MAJOR}.x); upgrade coverage-gate"
        )


def parse(data: bytes) -> Receipt:
    """A receipt from its content (the decompressed JSON), or ``ReceiptError`` naming the field.
    The content is parsed once; only content that fails the contract is looked at again, to say
    first whether it is JSON, a receipt, and of a version this code reads."""
    try:
        receipt = Receipt.model_validate_json(data)
    except ValidationError as error:
        _check_header(data)
        raise ReceiptError(_describe(error)) from None
    _check_version(receipt.version)
    return receipt


# --- deciding again ----------------------------------------------------------------------------


def review_input(
    receipt: Receipt, tree: RepoTree, files: RevisionFiles | None, **changes: Any
) -> ReviewInput:
    """The review a receipt records, with the tree and files given and any ``changes``
    (candidate mode or policies for a replay)."""
    inputs = receipt.inputs
    fields: dict[str, Any] = {
        "repo": inputs.repo,
        "revision": inputs.revision,
        "verdict_in": inputs.verdict_in,
        "mode": inputs.mode,
        "mode_source": inputs.mode_source,
        "scope": inputs.scope,
        "reviewers": [
            ReviewerInput(r.agent_id, r.claims, r.evidence, failed=r.failed)
            for r in inputs.reviewers
        ],
        "unknown_policy": inputs.unknown_policy,
        "unknown_policy_source": inputs.unknown_policy_source,
        "depth_policy": inputs.depth_policy,
        "depth_policy_source": inputs.depth_policy_source,
        "citation_policy": inputs.citation_policy,
        "citation_policy_source": inputs.citation_policy_source,
        "mutation_policy": inputs.mutation_policy,
        "mutation_policy_source": inputs.mutation_policy_source,
        "replay_citations": inputs.replay_citations,
        "repo_root": inputs.repo_root,
        "tree": tree,
        "files": files,
    }
    return ReviewInput(**(fields | changes))


Decide = Callable[[ReviewInput], DecisionDocument]


@dataclass(frozen=True)
class Redecision:
    decision: DecisionDocument
    #: Questions to the repository the record does not hold (the receipt is not self-contained).
    unrecorded: Sequence[str]


def redecide(receipt: Receipt, decide: Decide, **changes: Any) -> Redecision:
    """Decide the receipt's review again, offline: the ports answer from its record only."""
    tree = RecordedTree({a.path: a for a in receipt.ports.symlink_targets})
    recorded = receipt.ports.files
    files = None if recorded is None else RecordedFiles({f.path: f for f in recorded})
    decision = decide(review_input(receipt, tree, files, **changes))
    unrecorded = [*tree.unrecorded, *(files.unrecorded if files is not None else [])]
    return Redecision(decision, tuple(unrecorded))


def _walk(first: object, second: object, where: str) -> Iterator[str]:
    if isinstance(first, dict) and isinstance(second, dict):
        for key in sorted(set(first) | set(second)):
            if key not in first or key not in second:
                yield f"{where}.{key}".lstrip(".")
                return
            yield from _walk(first[key], second[key], f"{where}.{key}")
        return
    if isinstance(first, list) and isinstance(second, list):
        for index, (one, other) in enumerate(zip(first, second, strict=False)):
            yield from _walk(one, other, f"{where}[{index}]")
        if len(first) != len(second):
            yield f"{where}[{min(len(first), len(second))}]".lstrip(".")
        return
    if first != second:
        yield where.lstrip(".") or "(document)"


def first_difference(recorded: object, again: object) -> str | None:
    """The path of the first field (in sorted key order) where two JSON values differ."""
    return next(_walk(recorded, again, ""), None)


def verify(data: bytes, name: str, decide: Decide) -> list[str]:
    """Why a receipt file's content fails (empty: it verifies). Checks that the content hashes
    to the name, that it is canonical, and that deciding again gives the same decision bytes."""
    problems: list[str] = []
    stem = name.removesuffix(SUFFIX)
    actual = receipt_id(data)
    if actual != stem:
        problems.append(f"its content hashes to {actual}, not to its name {stem}")
    receipt = parse(data)
    if content(receipt) != data:
        problems.append("its content is not the canonical JSON of a receipt")
    again = redecide(receipt, decide)
    if again.unrecorded:
        asked = ", ".join(repr(p) for p in sorted(set(again.unrecorded))[:5])
        problems.append(
            f"deciding again asked the repository about {asked}, which the receipt does not "
            "record: it cannot be re-decided offline"
        )
    recorded = receipt.decision.model_dump(mode="json", by_alias=True)
    replayed = again.decision.model_dump(mode="json", by_alias=True)
    if canonical(recorded) != canonical(replayed):
        where = first_difference(recorded, replayed)
        problems.append(f"deciding again gives another decision: first difference at '{where}'")
    return problems
