"""Which source format a stream is in, judged from its first lines.

Each adapter says whether the first lines look like its format (``Adapter.sniff``). ``sniff``
picks the one format that claims them, and refuses to guess when none or several do. After a
stream was recorded, ``wrong_format_hint`` turns "nothing recognised" into a sentence that names
the format the stream looks like, instead of a silently empty evidence document.
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, BinaryIO

from coverage_gate.adapters import ADAPTERS
from coverage_gate.events import Adapter
from coverage_gate.model import Counters

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

SNIFF_LINES = 16
"""How many of the first non-blank lines are looked at."""
SNIFF_LINE_BYTES = 64 * 1024
"""How much of each of those lines is looked at."""
PEEK_BYTES = 64 * 1024
"""How much of a stream ``peek`` reads before any of it is recorded."""


class _Replayed(io.RawIOBase):
    """A stream whose first bytes were already read: yields them again, then the rest."""

    def __init__(self, prefix: bytes, rest: BinaryIO) -> None:
        super().__init__()
        self._prefix = memoryview(prefix)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        target = memoryview(buffer).cast("B")
        if self._prefix:
            size = min(len(target), len(self._prefix))
            target[:size] = self._prefix[:size]
            self._prefix = self._prefix[size:]
            return size
        data = self._rest.read(len(target))
        target[: len(data)] = data
        return len(data)


def peek(stream: BinaryIO, size: int = PEEK_BYTES) -> tuple[bytes, BinaryIO]:
    """The first ``size`` bytes of ``stream`` (fewer if it ends first), and a stream that yields
    every byte from the start again, so a pipe can be sniffed and still recorded whole."""
    prefix = stream.read(size)
    return prefix, io.BufferedReader(_Replayed(prefix, stream))


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
