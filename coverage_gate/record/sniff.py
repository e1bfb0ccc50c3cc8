"""Which source format a stream is in, judged from its first lines.

Each adapter says whether the first lines look like its format (``Adapter.sniff``). ``sniff``
picks the one format that claims them, and refuses to guess when none or several do. After a
stream was recorded, ``wrong_format_hint`` turns "nothing recognised" into a sentence that names
the format the stream looks like, instead of a silently empty evidence document.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from coverage_gate.adapters import ADAPTERS
from coverage_gate.core.events import Adapter

if TYPE_CHECKING:
    from coverage_gate.contracts import evidence_doc, model
    from coverage_gate.record.recording import ByteSource

    #: ``record`` reads the plain document's counters; the other callers hold the contract's
    Counters = evidence_doc.Counters | model.Counters

__all__ = [
    "PEEK_BYTES",
    "SNIFF_LINES",
    "SNIFF_LINE_BYTES",
    "candidates",
    "head_lines",
    "peek",
    "sniff",
    "wrong_format_hint",
]

SNIFF_LINES = 16
"""How many of the first non-blank lines are looked at."""
SNIFF_LINE_BYTES = 64 * 1024
"""How much of each of those lines is looked at."""
PEEK_BYTES = 64 * 1024
"""How much of a stream ``peek`` reads before any of it is recorded."""


class _Replayed:
    """A stream whose first bytes were already read: yields them again, then the rest.

    The rest is read straight from the stream, never copied through a buffer of this wrapper's
    own (the rest can be hundreds of MB).
    """

    def __init__(self, prefix: bytes, rest: ByteSource) -> None:
        self._prefix = prefix
        self._at = 0  # how much of the prefix was yielded
        self._rest = rest

    def read(self, size: int = -1, /) -> bytes:
        left = len(self._prefix) - self._at
        if not left:
            return self._rest.read(size)
        if 0 <= size < left:
            self._at += size
            return self._prefix[self._at - size : self._at]
        head = self._prefix[self._at :] if self._at else self._prefix
        self._prefix, self._at = b"", 0
        more = self._rest.read(-1 if size < 0 else size - len(head))
        return head + more if more else head


def peek(stream: ByteSource, size: int = PEEK_BYTES) -> tuple[bytes, ByteSource]:
    """The first ``size`` bytes of ``stream`` (fewer if it ends first), and a stream that yields
    every byte from the start again, so a pipe can be sniffed and still recorded whole."""
    prefix = stream.read(size)
    return prefix, _Replayed(prefix, stream)


def head_lines(
    prefix: bytes, max_lines: int = SNIFF_LINES, max_bytes: int = SNIFF_LINE_BYTES
) -> list[bytes]:
    """The first non-blank lines of a stream's first bytes, each cut to ``max_bytes``.

    A last line without its newline is included: it may be the whole stream, or cut off (the
    adapters' sniffers accept a cut-off line by its first bytes). A UTF-8 byte-order mark that
    starts the stream is not part of its first line (``LineScanner`` drops it too).
    """
    prefix = prefix.removeprefix(codecs.BOM_UTF8)
    lines = [line[:max_bytes] for line in prefix.split(b"\n") if line.strip()]
    return lines[:max_lines]


def candidates(lines: Sequence[bytes], adapters: Mapping[str, Adapter] | None = None) -> list[str]:
    """Every format whose sniffer claims these lines, in registry order."""
    registry = ADAPTERS if adapters is None else adapters
    if not lines:
        return []
    return [name for name, adapter in registry.items() if adapter.sniff(lines)]


def sniff(lines: Sequence[bytes], adapters: Mapping[str, Adapter] | None = None) -> str | None:
    """The one format these first lines are in; ``None`` when no format, or more than one,
    claims them (the caller then asks for ``--format``)."""
    found = candidates(lines, adapters)
    return found[0] if len(found) == 1 else None


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def wrong_format_hint(
    source: str,
    counters: Counters,
    lines: Sequence[bytes],
    adapters: Mapping[str, Adapter] | None = None,
) -> str | None:
    """A sentence for a stream read as ``source`` in which no tool call was recognised, when
    that is likely a wrong ``--format``; ``None`` when calls were recognised or the stream is
    empty.

    It names the formats whose sniffers claim the first lines. When none does and ``source``'s
    own sniffer does not claim them either, it says the stream does not look like ``source``. A
    stream that looks like ``source`` and simply holds no calls gets no hint.
    """
    if counters.calls > 0 or counters.lines == 0:
        return None
    registry = ADAPTERS if adapters is None else adapters
    found = candidates(lines, registry)
    lead = f"0 tool calls recognised in {_plural(counters.lines, 'line')}"
    others = [name for name in found if name != source]
    if others:
        return f"{lead}: is this a {' or '.join(others)} stream?"
    if source not in found:
        return f"{lead}: the stream does not look like {source}; pass the right --format"
    return None
