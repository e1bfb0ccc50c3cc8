"""Push-based line scanner: splits a byte stream into lines without holding lines it does not need.

Real agent streams repeat themselves, and one line can be hundreds of MB (pi's final
``agent_end`` carries the whole conversation; a tool result carries the file it read). The adapter
judges each line from its first ``HEAD_BYTES`` bytes; only lines it must decode are held whole,
and only up to ``max_line_bytes``. A longer line it must decode is handed to the decoder's
``reader`` as its bytes flow past, so a line is never a unit of memory. Everything else is counted
and passed over as it flows.

A UTF-8 byte-order mark at the very start of the stream (some editors and Windows tools write
one) marks the encoding and is dropped, even when it arrives split across chunks; anywhere else
it is data.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from enum import Enum

from coverage_gate.contracts import defaults
from coverage_gate.core.events import HEAD_BYTES, Decoder, Event, LineClass, LineReader, TooLarge

__all__ = ["BOM", "DEFAULT_MAX_LINE_BYTES", "LineScanner", "Sink"]

DEFAULT_MAX_LINE_BYTES = defaults.MAX_LINE_BYTES
BOM = codecs.BOM_UTF8


class _State(Enum):
    LINE_START = 0
    HOLDING = 1  # bytes of the current line are kept (not yet classified, or PARSE)
    PASSING = 2  # the current line is SKIP/HEAD_ONLY/too large: only its head is kept
    STREAMING = 3  # the current line is PARSE and longer than the limit: its reader reads it


Sink = Callable[[Sequence[Event]], None]


class LineScanner:
    """Feed it chunks; it calls ``sink`` with the events its decoder produces, line by line."""

    def __init__(
        self, decoder: Decoder, sink: Sink, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    ) -> None:
        self._decoder = decoder
        self._sink = sink
        self._max = max_line_bytes
        self._state = _State.LINE_START
        self._held = bytearray()
        self._head = b""
        self._class = LineClass.SKIP
        self._last = b""
        self._too_large = False
        # The stream's first bytes while they may still be (part of) a byte-order mark; ``None``
        # once that is settled.
        self._start: bytes | None = b""
        self._reader: LineReader | None = None
        # Line prefixes the decoder declares skippable are passed over without a call into it:
        # most lines of a long stream are of a few known kinds.
        self._skip: tuple[bytes, ...] = tuple(getattr(decoder, "skip_prefixes", ()))
        self.lines = 0
        self.bytes = 0

    def feed(self, chunk: bytes) -> None:
        self.bytes += len(chunk)
        if self._start is not None:
            chunk = self._without_bom(chunk)
        pos, size = 0, len(chunk)
        if self._state is not _State.LINE_START:
            pos = self._go_on(chunk)
            if pos < 0:
                return
        # Lines that start and end in this chunk, most of a long stream: one search for the
        # newline and, for a line of a skipped kind, one prefix test (none when no prefix is
        # declared: ``startswith(())`` is false), each; skipped lines are counted locally.
        find, starts, skip = chunk.find, chunk.startswith, self._skip
        lines = self.lines
        nl = find(b"\n", pos)
        while nl >= 0:
            if starts(skip, pos):
                lines += 1
            else:
                self.lines = lines
                self._line_in_chunk(chunk, pos, nl)
                lines = self.lines
            pos = nl + 1
            nl = find(b"\n", pos)
        self.lines = lines
        if pos < size:
            self._held += chunk[pos:]
            self._state = _State.HOLDING
            self._check_held()

    def _go_on(self, chunk: bytes) -> int:
        """Go on with the line the last chunk ended in: where the next line starts in
        ``chunk``, or -1 when the line goes on past it."""
        nl = chunk.find(b"\n")
        end = len(chunk) if nl < 0 else nl
        if self._state is _State.STREAMING:
            self._stream(chunk[:end])
            if nl >= 0:
                self._end_streamed_line()
        elif self._state is _State.PASSING:
            self._remember_tail(chunk, 0, end)
            if nl >= 0:
                self._end_passed_line()
        else:  # HOLDING
            self._held += chunk[:end]
            if nl < 0:
                self._check_held()
            else:
                line = bytes(self._held)
                self._held.clear()
                self._state = _State.LINE_START
                self._whole_line(line, line[:HEAD_BYTES])
        return -1 if nl < 0 else nl + 1

    def close(self) -> None:
        """The stream ended: a last line without a newline still counts."""
        if self._start:  # the stream was the first byte or two of a mark, and no more
            held, self._start = self._start, None
            self.bytes -= len(held)
            self.feed(held)
        if self._state is _State.STREAMING:
            self._end_streamed_line()
        elif self._state is _State.PASSING:
            self._end_passed_line()
        elif self._state is _State.HOLDING:
            line = bytes(self._held)
            self._held.clear()
            self._state = _State.LINE_START
            self._whole_line(line, line[:HEAD_BYTES])

    # --- internals -----------------------------------------------------------------------------

    def _without_bom(self, chunk: bytes) -> bytes:
        """``chunk`` after the stream's byte-order mark, with any first bytes held back before it
        until it was clear they were no mark."""
        start = (self._start or b"") + chunk
        if len(start) < len(BOM) and BOM.startswith(start):
            self._start = start
            return b""
        self._start = None
        return start[len(BOM) :] if start.startswith(BOM) else start

    def _line_in_chunk(self, chunk: bytes, pos: int, nl: int) -> None:
        """A whole line that lies in one chunk, at ``chunk[pos:nl]``."""
        head = chunk[pos : min(nl, pos + HEAD_BYTES)]
        self.lines += 1
        cls = self._decoder.classify(head)
        if cls is LineClass.PARSE and nl - pos > self._max:
            self._sink(self._read_through(chunk[pos:nl]))
        elif cls is LineClass.PARSE:
            self._sink(self._decoder.decode(chunk[pos:nl], self.lines))
        elif cls is LineClass.HEAD_ONLY:
            tail = chunk[max(nl - 16, pos) : nl]
            self._sink(self._decoder.decode_head(head, self.lines, _intact(tail)))

    def _whole_line(self, line: bytes, head: bytes) -> None:
        self.lines += 1
        cls = self._decoder.classify(head)
        if cls is LineClass.PARSE and len(line) > self._max:
            self._sink(self._read_through(line))
        elif cls is LineClass.PARSE:
            self._sink(self._decoder.decode(line, self.lines))
        elif cls is LineClass.HEAD_ONLY:
            self._sink(self._decoder.decode_head(head, self.lines, _intact(line[-16:])))

    def _check_held(self) -> None:
        if len(self._held) < HEAD_BYTES:
            return
        head = bytes(self._held[:HEAD_BYTES])
        cls = self._decoder.classify(head)
        if cls is LineClass.PARSE and len(self._held) <= self._max:
            return
        reader = self._decoder.reader(self._max) if cls is LineClass.PARSE else None
        if reader is not None:
            self._reader = reader
            reader.feed(bytes(self._held))
            self._held.clear()
            self._state = _State.STREAMING
            return
        self._head = head
        self._class = cls
        self._too_large = cls is LineClass.PARSE
        self._last = bytes(self._held[-16:])
        self._held.clear()
        self._state = _State.PASSING

    def _read_through(self, line: bytes) -> Sequence[Event]:
        """A whole line longer than the limit, read as if it had flowed past."""
        reader = self._decoder.reader(self._max)
        if reader is None:
            return [TooLarge(line=self.lines, limit=self._max)]
        reader.feed(line)
        return reader.close(self.lines)

    def _stream(self, data: bytes) -> None:
        if data and self._reader is not None:
            self._reader.feed(data)

    def _end_streamed_line(self) -> None:
        self.lines += 1
        self._state = _State.LINE_START
        reader, self._reader = self._reader, None
        if reader is not None:
            self._sink(reader.close(self.lines))

    def _remember_tail(self, chunk: bytes, start: int, end: int) -> None:
        if end > start:
            self._last = (self._last + chunk[max(start, end - 16) : end])[-16:]

    def _end_passed_line(self) -> None:
        self.lines += 1
        self._state = _State.LINE_START
        if self._too_large:
            self._sink([TooLarge(line=self.lines, limit=self._max)])
        elif self._class is LineClass.HEAD_ONLY:
            self._sink(self._decoder.decode_head(self._head, self.lines, _intact(self._last)))
        self._too_large = False
        self._last = b""


def _intact(tail: bytes) -> bool:
    """A JSON object line that was not cut off ends with a closing brace."""
    return tail.rstrip().endswith(b"}")
