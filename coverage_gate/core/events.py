"""What adapters decode stream lines into, and the protocol they satisfy.

Adapters only decode: no I/O, clock or environment. They say what a tool call *is* (a read of a
path, a page of the pinned diff, something ignored) and how its execution ended. Pairing starts
with ends, normalising paths, bounding and truncation all happen once, in the core.

Events are frozen msgspec structs: a long stream makes several per call, and a struct costs a
tenth of a frozen dataclass to build and next to nothing to define (defining these as dataclasses
cost every ``record`` 8 ms at start-up). Change one with ``msgspec.structs.replace``. Every struct
is keyword-only: a construction names each field it gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Final, Protocol

import msgspec

from coverage_gate.contracts.enums import Capability, ContentCheck, DriftKind, MismatchKind
from coverage_gate.core.presentation import BASELINE, Presentation

__all__ = [
    "ANY_CALL",
    "EMPTY_SHOWN",
    "HEAD_BYTES",
    "NO_CALLS",
    "UNKNOWN_SHOWN",
    "WHOLE_SHOWN",
    "Action",
    "Adapter",
    "ByteSpan",
    "ClientSeen",
    "ContentSeen",
    "Credit",
    "Decoder",
    "DiffPageAction",
    "Drift",
    "Event",
    "FilesNotShown",
    "FormatKnowledge",
    "IgnoredAction",
    "LineClass",
    "LineReader",
    "Malformed",
    "ReadAction",
    "Returned",
    "Shown",
    "ShownKind",
    "StreamCommit",
    "StreamComplete",
    "StreamReopened",
    "TooLarge",
    "ToolEnd",
    "ToolStart",
    "UnplacedRead",
    "Unreadable",
    "UnreadableArguments",
    "Unrecognised",
    "WorkingDirectory",
    "WriteAction",
]


class ShownKind(StrEnum):
    """What a successful read returned of its file, as far as the stream tells."""

    WHOLE = "whole"  # every line
    LINES = "lines"  # lines ``start``..``end`` (see ``Shown``)
    BYTES = "bytes"  # bytes ``start``..``end`` (end exclusive) of a file of ``total`` bytes
    UNKNOWN = "unknown"  # something, but which lines cannot be told
    EMPTY = "empty"  # nothing at all: zero bytes or zero lines
    # lines ``start``..``end`` were asked for and the source does not say what came back (an
    # agent's own telemetry): at most those lines, and none past the file's end
    ASKED = "asked"


class Shown(msgspec.Struct, frozen=True, kw_only=True):
    """What one read showed (DESIGN §6 rules 11-12).

    ``LINES``: 1-based, inclusive, new side of the revision; a negative ``start`` counts from the
    end (``-10``: the last ten lines, ``tail``) and ``end=None`` runs to the last line: both need
    the file's length to be told. ``total``: the file's length (lines for ``WHOLE``/``LINES``,
    bytes for ``BYTES``) when the stream says it.
    """

    kind: ShownKind
    start: int = 0
    end: int | None = None
    total: int | None = None

    @classmethod
    def whole(cls, total: int | None = None) -> Shown:
        return WHOLE_SHOWN if total is None else cls(kind=ShownKind.WHOLE, total=total)

    @classmethod
    def lines(cls, start: int, end: int | None, total: int | None = None) -> Shown:
        return cls(kind=ShownKind.LINES, start=start, end=end, total=total)

    @classmethod
    def bytes(cls, start: int, end: int, total: int | None = None) -> Shown:
        return cls(kind=ShownKind.BYTES, start=start, end=end, total=total)

    @classmethod
    def asked(cls, start: int, end: int) -> Shown:
        return cls(kind=ShownKind.ASKED, start=start, end=end)


WHOLE_SHOWN = Shown(kind=ShownKind.WHOLE)  # one shared value: most reads are whole
UNKNOWN_SHOWN = Shown(kind=ShownKind.UNKNOWN)
EMPTY_SHOWN = Shown(kind=ShownKind.EMPTY)


class ReadAction(msgspec.Struct, frozen=True, kw_only=True):
    """A read of one file. ``cwd`` is the directory a relative ``path`` is relative to, when the
    stream says so (Claude Code, Codex); ``None`` means the repository root. ``mention``: the
    tool drops one leading ``@`` from ``path`` (a file mention, as pi's read tools do);
    everywhere else ``@`` is part of the name. ``shown`` is what the request asks for, when the
    adapter can tell (what the end reports wins over it)."""

    path: str
    offset: int | None = None
    limit: int | None = None
    cwd: str | None = None
    mention: bool = False
    shown: Shown | None = None


class DiffPageAction(msgspec.Struct, frozen=True, kw_only=True):
    """A page of the whole pinned diff (pi's ``cr_diff``)."""

    offset: int | None = None
    limit: int | None = None


class IgnoredAction(msgspec.Struct, frozen=True, kw_only=True):
    """A tool that does not count as evidence for this format. ``known``: the adapter knows the
    tool (a search, a shell, a sub-agent); an unknown one is judged by what came back and, when
    its arguments name a file in scope, counted as drift (DESIGN §6 rule 19). ``prints``: the
    files a shell command prints from their first line (a plain ``cat``, ``head F``,
    ``adapters/_shell.py``), relative to ``cwd`` as a read's path is: an output that is nothing
    shows each of them empty (rule 24), an output that is exactly their text shows them whole
    (rule 30); ``numbered``: each line of it starts with its number (``cat -n``, ``nl``)."""

    known: bool = True
    prints: tuple[str, ...] = ()
    numbered: bool = False
    cwd: str | None = None


class WriteAction(msgspec.Struct, frozen=True, kw_only=True):
    """A call that changes files (an edit, a write, a patch, a shell redirection, ``git stash``):
    never evidence; a successful one is recorded as a mutation (DESIGN §6 rule 20). ``path``: the
    file it changes, when the call names one (relative to ``cwd`` as a read's is)."""

    path: str | None = None
    cwd: str | None = None


class UnreadableArguments(msgspec.Struct, frozen=True, kw_only=True):
    """A counted tool whose arguments could not be read (missing or of the wrong type)."""

    detail: str


class UnplacedRead(msgspec.Struct, frozen=True, kw_only=True):
    """A read recorded earlier whose absolute path could not be placed in the repository (no
    root was known): it read some file, which one cannot be told."""

    detail: str


Action = (
    ReadAction | DiffPageAction | IgnoredAction | WriteAction | UnreadableArguments | UnplacedRead
)


class ByteSpan(msgspec.Struct, frozen=True, kw_only=True):
    """The ``[cr-range offset=.. end=.. total=..]`` a tool result reports about itself."""

    offset: int
    end: int
    total: int


class Returned(msgspec.Struct, frozen=True, kw_only=True):
    """What a successful call returned, as the model received it, presentation stripped.

    ``first_line``: the 1-based number of the text's first line, when the presentation numbers
    lines (Claude Code's ``Read``). ``byte_offset``: where in the file the text starts, when the
    tool returns bytes (pi's ``cr_read`` header). ``cut``: the client cut the text for the model
    (what is here is exact, but not all the call read). ``placeholder``: a client's stand-in for
    the text ("unchanged since last read"). ``kept``: only the first and last ``kept`` bytes of
    ``text`` surely reached the model (Codex ``exec --json``); ``own``: see below."""

    text: str
    first_line: int | None = None
    byte_offset: int | None = None
    cut: bool = False
    placeholder: bool = False
    kept: int | None = None
    # a placeholder that says the result was empty (Qwen Code's "(read_file completed with no
    # output)", Claude Code's empty-file reminder): the empty file, when the revision's is empty
    empty: bool = False
    # ``False``: one output for several reads (``cat a b``): their files are credited by content,
    # no one read's text is compared with its file
    own: bool = True
    # the client says it shortened the lines longer than its tool's cut length
    # (``Presentation.cut_of``), in a text the stream does not carry (Gemini CLI's "(some lines
    # were shortened)")
    shortened: bool = False
    # the text was in a presentation the adapter recognised as its client's own (numbered
    # lines, a client's wrapper): where it is not the file's text, it is other content
    # (DESIGN §6 rule 24), whatever its line count
    recognised: bool = False


class Credit(msgspec.Struct, frozen=True, kw_only=True):
    """Lines ``start``..``end`` (1-based, inclusive) of ``path`` shown by content; ``end`` 0:
    the whole of a file that is empty at the revision (a plain ``cat`` that printed nothing)."""

    path: str
    start: int
    end: int
    blob: str | None = None  # the blob of the file at the revision these lines are of


class ContentSeen(msgspec.Struct, frozen=True, kw_only=True):
    """What the content checks (``coverage_gate.core.content_check``) made of one call's text,
    compact: the text itself is gone once checked."""

    check: ContentCheck | None = None  # reads only
    first_difference: int | None = None
    mismatch: MismatchKind | None = None  # a mismatched read: what its text was instead
    shown: Shown | None = None  # a matched read: the lines its text showed
    # a matched read: lines the client cut with its own marker (the file's line, chars kept)
    cuts: tuple[tuple[int, int], ...] = ()
    # changed lines it showed only as the presentation folds them (white space, a CR), never
    # as they are: (path, line), unseen (DESIGN §6 rule 29)
    folded: tuple[tuple[str, int], ...] = ()
    blob: str | None = None  # the revision's blob the read was checked against
    credits: tuple[Credit, ...] = ()
    uncertain: tuple[str, ...] = ()
    diff: tuple[tuple[int, int], ...] = ()  # byte ranges of the pinned diff shown


class ToolStart(msgspec.Struct, frozen=True, kw_only=True):
    call_id: str
    tool: str
    action: Action
    line: int
    # the call's arguments as the model wrote them (bounded): text a call's output may echo,
    # never evidence of the revision (DESIGN §6 rule 17)
    said: str | None = None


class ModelText(msgspec.Struct, frozen=True, kw_only=True):
    """Text the model wrote outside any call's arguments: a message, its reasoning where the
    stream carries it. Like a call's arguments, never evidence: a line of it, or one made of a
    few pieces of it, credits nothing (DESIGN §6 rule 29). The content checks take it in; it
    is no event of a call."""

    line: int
    text: str


class ToolEnd(msgspec.Struct, frozen=True, kw_only=True):
    call_id: str
    tool: str | None  # ``None``: the end does not name its tool (the start's is the call's)
    succeeded: bool
    line: int
    error_type: str | None = None  # a failed call's error: ``tool_error``, a span's ``error.type``
    result_range: ByteSpan | None = None
    shown: Shown | None = None  # what a successful read returned, when the end tells
    # the text a successful call returned as the model received it, when the stream carries it;
    # the recorder replaces it with what the content checks made of it (``content``)
    returned: Returned | None = None
    content: ContentSeen | None = None

    @classmethod
    def failed(
        cls, call_id: str, line: int, error_type: str | None, returned: Returned | None = None
    ) -> ToolEnd:
        """The end of a call that failed, not naming its tool; ``returned``: what it printed
        all the same (a command that printed a file and then failed)."""
        return cls(
            call_id=call_id,
            tool=None,
            succeeded=False,
            line=line,
            error_type=error_type,
            returned=returned,
        )


class StreamComplete(msgspec.Struct, frozen=True, kw_only=True):
    """The format's completion marker was seen."""

    line: int


class StreamReopened(msgspec.Struct, frozen=True, kw_only=True):
    """Work resumed after a completion marker (pi's auto-retry): completion is judged again."""

    line: int


class WorkingDirectory(msgspec.Struct, frozen=True, kw_only=True):
    """The working directory the stream records for its session (Claude Code's ``system/init``
    ``cwd``, Codex's ``session_meta`` ``cwd``): the repository root when none is given."""

    path: str
    line: int


class FilesNotShown(msgspec.Struct, frozen=True, kw_only=True):
    """The stream's source cannot show which files its calls read (Claude Code's telemetry
    without ``OTEL_LOG_TOOL_DETAILS=1``, Codex's shell-only telemetry): the evidence declares
    capability ``none`` (DESIGN §6 rule 10), whatever the adapter can see in other streams."""

    line: int
    detail: str


class Malformed(msgspec.Struct, frozen=True, kw_only=True):
    line: int
    detail: str


#: ``Unreadable.starts`` / ``ends``: the line cannot hold that side of any call.
NO_CALLS: Final[tuple[str, ...]] = ()
#: ``Unreadable.starts`` / ``ends``: the line could hold that side of a call, of any call id.
ANY_CALL: Final = None


class Unreadable(msgspec.Struct, frozen=True, kw_only=True):
    """A line that could have carried tool starts or ends but could not be read.

    ``starts`` and ``ends`` name the call ids the line could start or end, as far as they could
    be recovered from the bytes seen: ``()`` (``NO_CALLS``) when the line cannot hold that side
    of a call, ``None`` (``ANY_CALL``) when it could hold it for any call. The core makes the
    evidence those calls could have given unavailable (unknown), never absent (DESIGN §6 rule
    14).
    """

    line: int
    detail: str
    # the ids of the calls the line could start: ``NO_CALLS`` none, ``ANY_CALL`` any
    starts: tuple[str, ...] | None = NO_CALLS
    # the ids of the calls the line could end: ``NO_CALLS`` none, ``ANY_CALL`` any
    ends: tuple[str, ...] | None = NO_CALLS
    # A call recorded as ``outcome_unreadable`` read back from its span: not a line of its own
    # (the line was labelled when first recorded), and ``detail`` is the call's recorded detail.
    replayed: bool = False


class TooLarge(msgspec.Struct, frozen=True, kw_only=True):
    """A line that had to be decoded whole but exceeded the line size limit."""

    line: int
    limit: int


class Unrecognised(msgspec.Struct, frozen=True, kw_only=True):
    """A well-formed line of an event kind this adapter knows and does not use."""

    line: int


class Drift(msgspec.Struct, frozen=True, kw_only=True):
    """Something in the stream the adapter does not understand (DESIGN §6 rule 19): an event
    type it does not know, a field it relies on gone or of a type the format never uses, a
    built-in tool the client lists that it does not know. ``name`` says what (an event type, a
    field, a tool name; bounded by the core)."""

    line: int
    kind: DriftKind
    name: str


class ClientSeen(msgspec.Struct, frozen=True, kw_only=True):
    """The client and version the stream says wrote it (Claude Code's ``claude_code_version``,
    Codex's ``cli_version``)."""

    line: int
    version: str


class StreamCommit(msgspec.Struct, frozen=True, kw_only=True):
    """The commit the stream records its session started at (Codex ``session_meta.git``)."""

    line: int
    commit: str


Event = (
    ToolStart
    | ToolEnd
    | ModelText
    | StreamComplete
    | StreamReopened
    | WorkingDirectory
    | FilesNotShown
    | Malformed
    | Unreadable
    | TooLarge
    | Unrecognised
    | Drift
    | ClientSeen
    | StreamCommit
)


class LineClass(Enum):
    """What an adapter needs of a line, judged from its first bytes."""

    PARSE = "parse"  # the whole line is decoded
    HEAD_ONLY = "head_only"  # only the head is needed (a marker); the rest is passed over
    SKIP = "skip"  # known not to carry tool events; counted, never held or parsed


class LineReader(Protocol):
    """Reads one line too large to hold whole, as its bytes flow past."""

    def feed(self, data: bytes) -> None:
        """The next bytes of the line (never its newline)."""
        ...

    def close(self, lineno: int) -> Sequence[Event]:
        """The line ended (or the stream did): what it carried."""
        ...


class Decoder(Protocol):
    """Per-stream decoding state of one adapter. Plain classes satisfy it.

    A decoder may also declare ``skip_prefixes: tuple[bytes, ...]``: lines starting with one of
    them are known to be ``SKIP`` and are passed over without calling ``classify``.
    """

    def classify(self, head: bytes) -> LineClass:
        """Decide from the first bytes of a line (at most ``HEAD_BYTES``) what is needed."""
        ...

    def decode(self, line: bytes, lineno: int) -> Sequence[Event]:
        """Decode one whole line classified ``PARSE``."""
        ...

    def decode_head(self, head: bytes, lineno: int, intact: bool) -> Sequence[Event]:
        """Decode a line classified ``HEAD_ONLY`` from its head; ``intact`` says the line ended
        with a closing brace (it was not cut off)."""
        ...

    def reader(self, max_string_bytes: int) -> LineReader | None:
        """A reader for a line classified ``PARSE`` that is longer than the scanner holds whole
        (``max_string_bytes``: a string value longer than that need not be kept whole), or
        ``None`` if this format cannot read such a line (it is then labelled too large)."""
        ...

    def finish(self) -> Sequence[Event]:
        """Events only known when the stream has ended."""
        ...


@dataclass(frozen=True)
class FormatKnowledge:
    """What an adapter knows of its format (DESIGN §6 rule 19), as ``coverage-gate formats``
    prints it: anything else in a stream is drift.

    ``events``: the event (line or content block) types it knows; ``reads``: the tools it reads
    as reads (or diff pages); ``not_reads``: tools it knows and does not count, each with why;
    ``writes``: the client's tools that change files; ``fields``: the result fields it relies on;
    ``versions``: the oldest and newest client versions it was checked against (the versions CI
    runs), or ``None`` when the stream names no version; ``presentation``: what the client
    does to a file's text before the model gets it (``coverage_gate.core.presentation``)."""

    client: str
    events: frozenset[str]
    reads: frozenset[str]
    not_reads: Mapping[str, str]
    writes: frozenset[str] = frozenset()
    fields: tuple[str, ...] = ()
    versions: tuple[str, str] | None = None
    notes: tuple[str, ...] = field(default=())
    # how the client presents a file's text to the model (DESIGN §6 rule 23)
    presentation: Presentation = BASELINE
    # who could have written such a record, and what its evidence can prove (DESIGN §6 rule 27)
    trust: tuple[str, ...] = ()

    def knows_tool(self, tool: str) -> bool:
        return tool in self.reads or tool in self.not_reads or tool in self.writes


class Adapter(Protocol):
    """One source format: a name, what it can see, what it knows, and a decoder factory."""

    name: str
    capability: Capability
    description: str
    knows: FormatKnowledge

    def decoder(self) -> Decoder: ...

    def sniff(self, head_lines: Sequence[bytes]) -> bool:
        """Whether the first lines of a stream look like this format."""
        ...


HEAD_BYTES = 256
