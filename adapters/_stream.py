"""Read one JSON object line without holding it whole: only the fields a decoder names are kept.

A line can be hundreds of MB (the result of reading a large file), and a line is not a unit of
memory. ``ObjectReader`` is fed the line's bytes as they flow past:

1. a byte filter bounds every string to ``max_string_bytes`` (a longer one keeps its first bytes
   and ends with a marker giving the length and a hash of the rest, so two long values never
   read as one) and turns numbers too long for a 64-bit integer, ``NaN`` and ``Infinity`` into
   ``OUT_OF_RANGE``, so an unrelated odd number never makes a line unreadable;
2. ijson's C parser (yajl) reads the filtered bytes incrementally;
3. a builder keeps only the paths a ``Spec`` names, so the object it returns is small whatever the
   line held.

The filtered object is the object ``json.loads`` would give, pruned to the spec, for every line
whose strings fit the bound. Everything here is pure: no I/O.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Final, TypeAlias

from coverage_gate.core.events import Event, Malformed

from ._json import OUT_OF_RANGE, JsonObject, load_object

__all__ = [
    "MAX_TOKEN_BYTES",
    "Items",
    "LineDecoder",
    "ObjectLineReader",
    "ObjectReader",
    "Spec",
    "load_line",
]


@dataclass(frozen=True, slots=True)
class Items:
    """An array whose items (the first ``first`` of them, when given) are kept as ``each``."""

    each: Spec
    first: int | None = None


Spec: TypeAlias = "Mapping[str, Spec] | Items | None"
"""What to keep of a value: ``None`` keeps a scalar (a container is kept empty, to show its
type); a mapping keeps an object's named keys; ``Items`` keeps an array's items."""

MAX_TOKEN_BYTES: Final = 64  # longer number tokens cannot be 64-bit integers
_NUMBER_MARKER: Final = "\0number out of range"
_MARKER_LITERAL: Final = b'"\\u0000number out of range"'

_TOKEN_CHARS = re.compile(rb"[-+.0-9A-Za-z]*")
_TOKEN_TAIL = re.compile(rb"[-+.0-9A-Za-z]+\Z")
_ODD_TOKEN = re.compile(rb"[-+.0-9A-Za-z]{65,}|NaN|-?Infinity")
_NUMBERISH = re.compile(rb"[-+.0-9eE]+")
_DROP: Final = object()


@functools.cache
def _ijson() -> ModuleType:
    """ijson, loaded on first use: only a line too long to hold whole, or one ``json.loads``
    cannot take, is read through it (start-up time)."""
    import ijson  # noqa: PLC0415 - start-up time

    module: ModuleType = ijson
    return module


def _odd_token(match: re.Match[bytes]) -> bytes:
    token = match.group()
    if _NUMBERISH.fullmatch(token) or token in (b"NaN", b"Infinity", b"-Infinity"):
        return _MARKER_LITERAL
    return token  # not a number: the parser rejects it as it would anyway


def _escape_starts(data: bytes, start: int, slash: int) -> bool:
    """Whether the backslash at ``slash`` begins an escape (``start`` is an escape boundary)."""
    run = slash
    while run > start and data[run - 1] == 0x5C:
        run -= 1
    return (slash - run) % 2 == 0


def _closing_quote(data: bytes, pos: int) -> int:
    """The quote that closes the string whose content starts at ``pos`` (an escape boundary),
    or -1 when the data ends first."""
    start = pos
    for _ in range(8):
        quote = data.find(b'"', pos)
        escaped = quote > start and data[quote - 1] == 0x5C
        if not escaped or not _escape_starts(data, start, quote - 1):
            return quote
        pos = quote + 1
    # Many escaped quotes (JSON inside a string): blank every escape pair out at once, from an
    # escape boundary, rather than stepping over each of them.
    rest = data[pos:].replace(b"\\\\", b"__").replace(b'\\"', b"__").find(b'"')
    return rest if rest < 0 else pos + rest


def _safe_cut(data: bytes, start: int, cut: int) -> int:
    """``cut`` moved back, if need be, so that no escape and no UTF-8 sequence is split."""
    slash = data.rfind(b"\\", max(start, cut - 6), cut)
    if slash >= 0 and _escape_starts(data, start, slash):
        length = 6 if data[slash + 1 : slash + 2] == b"u" else 2
        if slash + length > cut:
            cut = slash
    while cut > start and 0x80 <= data[cut] < 0xC0:
        cut -= 1
    return cut


def _incomplete_tail(data: bytes, start: int, end: int) -> int:
    """Where a string piece ending at ``end`` stops being whole: an escape or a UTF-8 sequence
    cut short is carried to the next feed, so that pieces end on character bounds."""
    slash = data.rfind(b"\\", max(start, end - 6), end)
    if slash >= 0 and _escape_starts(data, start, slash):
        length = 6 if data[slash + 1 : slash + 2] == b"u" else 2
        if slash + length > end:
            return slash
    lead = end
    while lead > max(start, end - 3) and 0x80 <= data[lead - 1] < 0xC0:
        lead -= 1
    if lead > start and data[lead - 1] >= 0xC0:
        first = data[lead - 1]
        need = 2 if first < 0xE0 else 3 if first < 0xF0 else 4
        if end - (lead - 1) < need:
            return lead - 1
    return end


class _Filter:
    """Bounds strings and odd number tokens in a stream of JSON bytes (see the module doc)."""

    def __init__(self, max_string_bytes: int) -> None:
        self._max = max_string_bytes
        self._in_string = False
        self._length = 0  # bytes of the current string passed on
        self._rest = 0  # bytes of the current string past the bound
        self._hash: hashlib.blake2b | None = None
        self._carry = b""
        self._skip_token = False
        self.truncated = 0

    def feed(self, chunk: bytes) -> bytes:
        data = self._carry + chunk if self._carry else chunk
        self._carry = b""
        out: list[bytes] = []
        pos, size = 0, len(data)
        while pos < size:
            if self._in_string:
                end = _closing_quote(data, pos)
                if end < 0:
                    whole = _incomplete_tail(data, pos, size)
                    self._take(data, pos, whole, out)
                    self._carry = data[whole:]
                    break
                self._take(data, pos, end, out)
                out.append(self._close_string())
                pos = end + 1
            else:
                quote = data.find(b'"', pos)
                stop = size if quote < 0 else quote
                pos = self._between(data, pos, stop, out, at_end=quote < 0)
                if quote < 0:
                    break
                out.append(b'"')
                self._in_string = True
                pos = quote + 1
        return b"".join(out)

    def finish(self) -> bytes:
        """What is still carried (an incomplete escape, character or token) at the line's end."""
        tail, self._carry = self._carry, b""
        if self._skip_token or not tail:
            return b""
        return _ODD_TOKEN.sub(_odd_token, tail) if not self._in_string else tail

    def _take(self, data: bytes, start: int, end: int, out: list[bytes]) -> None:
        if end <= start:
            return
        if self._hash is not None:
            self._hash.update(memoryview(data)[start:end])
            self._rest += end - start
            return
        room = self._max - self._length
        if end - start <= room:
            out.append(data[start:end])
            self._length += end - start
            return
        stop = _safe_cut(data, start, start + room)
        out.append(data[start:stop])
        self._length += stop - start
        self._hash = hashlib.blake2b(memoryview(data)[stop:end], digest_size=16)
        self._rest = end - stop

    def _close_string(self) -> bytes:
        self._in_string = False
        self._length = 0
        if self._hash is None:
            return b'"'
        marker = b'\\u2026[+%d bytes, blake2b %s]"' % (self._rest, self._hash.hexdigest().encode())
        self._hash = None
        self._rest = 0
        self.truncated += 1
        return marker

    def _between(self, data: bytes, pos: int, stop: int, out: list[bytes], *, at_end: bool) -> int:
        """Bytes outside strings: odd tokens replaced; a token the data may cut is carried."""
        if self._skip_token:
            skipped = _TOKEN_CHARS.match(data, pos, stop)
            pos = skipped.end() if skipped else pos
            if pos == stop and at_end:
                return stop
            self._skip_token = False
        segment = data[pos:stop]
        if at_end:
            tail = _TOKEN_TAIL.search(segment)
            if tail is not None:
                segment, carried = segment[: tail.start()], segment[tail.start() :]
                if len(carried) > MAX_TOKEN_BYTES:
                    numeric = _NUMBERISH.fullmatch(carried) is not None
                    segment += _MARKER_LITERAL if numeric else b"!"
                    self._skip_token = True
                else:
                    self._carry = carried
        if len(segment) > MAX_TOKEN_BYTES or b"N" in segment or b"I" in segment:
            segment = _ODD_TOKEN.sub(_odd_token, segment)
        out.append(segment)
        return stop


@dataclass(slots=True)
class _Frame:
    container: dict[str, object] | list[object]
    spec: Spec
    key: str = ""
    child: object = _DROP


class _Builder:
    """Builds the pruned value from ijson's basic events, without recursion."""

    def __init__(self, spec: Spec) -> None:
        self._spec = spec
        self._frames: list[_Frame] = []
        self._skip = 0
        self.value: object = None

    def take(self, events: list[tuple[str, object]]) -> None:
        for event, value in events:
            if self._skip:
                if event in ("start_map", "start_array"):
                    self._skip += 1
                elif event in ("end_map", "end_array"):
                    self._skip -= 1
            elif event == "map_key":
                frame = self._frames[-1]
                frame.key = str(value)
                spec = frame.spec
                frame.child = spec.get(frame.key, _DROP) if isinstance(spec, Mapping) else _DROP
            elif event in ("end_map", "end_array"):
                self._frames.pop()
            else:
                self._value(event, value)

    def _child(self) -> object:
        if not self._frames:
            return self._spec
        frame = self._frames[-1]
        if isinstance(frame.container, dict):
            return frame.child
        spec = frame.spec
        if not isinstance(spec, Items) or (
            spec.first is not None and len(frame.container) >= spec.first
        ):
            return _DROP
        return spec.each

    def _put(self, value: object) -> None:
        if not self._frames:
            self.value = value
            return
        frame = self._frames[-1]
        if isinstance(frame.container, dict):
            frame.container[frame.key] = value
        else:
            frame.container.append(value)

    def _value(self, event: str, value: object) -> None:
        spec = self._child()
        if event == "start_map":
            if spec is _DROP:
                self._skip = 1
                return
            obj: dict[str, object] = {}
            self._put(obj)
            if isinstance(spec, Mapping):
                self._frames.append(_Frame(obj, spec))
            else:
                self._skip = 1
        elif event == "start_array":
            if spec is _DROP:
                self._skip = 1
                return
            items: list[object] = []
            self._put(items)
            if isinstance(spec, Items):
                self._frames.append(_Frame(items, spec))
            else:
                self._skip = 1
        elif spec is not _DROP:
            self._put(_scalar(value))


def _scalar(value: object) -> object:
    """A scalar as ijson gives it (``None``, a boolean, an integer, a string, or a ``Decimal``
    for any other number) as ``json.loads`` gives it."""
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, str):
        return OUT_OF_RANGE if value == _NUMBER_MARKER else value
    return float(value)  # type: ignore[arg-type]  # a Decimal


class ObjectReader:
    """Fed the bytes of one line, gives the pruned JSON object, or what made it unreadable.

    ``seen`` keeps the line's first ``keep_bytes`` bytes as they were, for a decoder to recover
    what it can (a call id) from a line that could not be read.
    """

    def __init__(self, spec: Spec, max_string_bytes: int, keep_bytes: int = 64 * 1024) -> None:
        self._filter = _Filter(max_string_bytes)
        ijson = _ijson()
        self._events = ijson.sendable_list()
        self._parser = ijson.basic_parse_coro(self._events)
        self._errors: tuple[type[Exception], ...] = (ijson.JSONError, ValueError)
        self._builder = _Builder(spec)
        self._keep = keep_bytes
        self._seen: list[bytes] = []
        self._seen_bytes = 0
        self.size = 0
        self._error: str | None = None

    @property
    def seen(self) -> bytes:
        return b"".join(self._seen)

    @property
    def truncated_strings(self) -> int:
        return self._filter.truncated

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        if self._seen_bytes < self._keep:
            piece = data[: self._keep - self._seen_bytes]
            self._seen.append(piece)
            self._seen_bytes += len(piece)
        if self._error is None:
            self._send(self._filter.feed(data))

    def result(self) -> JsonObject | Malformed:
        """The object, once the line has ended."""
        if self._error is None:
            self._send(self._filter.finish())
        if self._error is None:
            try:
                self._parser.close()
            except self._errors as error:
                self._error = _first_line(error)
            else:
                self._builder.take(self._events)
        if self._error is not None:
            return Malformed(line=0, detail=f"not JSON: {self._error}")
        value = self._builder.value
        if not isinstance(value, dict):
            return Malformed(line=0, detail="not a JSON object")
        return value

    def _send(self, data: bytes) -> None:
        if not data:
            return
        try:
            self._parser.send(data)
        except self._errors as error:
            self._error = _first_line(error)
            return
        self._builder.take(self._events)
        del self._events[:]


def _first_line(error: Exception) -> str:
    text = error.args[0] if error.args else str(error)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text).strip().splitlines()[0][:120] if str(text).strip() else type(error).__name__


def load_line(line: bytes, lineno: int, spec: Spec) -> JsonObject | Malformed:
    """The JSON object on a held line, or why it is not one.

    ``json.loads`` first (fast, whole); a line it cannot take because of a number too long to
    parse or nesting too deep for it is read again through the bounded reader, which keeps only
    what ``spec`` names: such a line is unreadable only if the fields a decoder needs are.
    """
    obj = load_object(line, lineno)
    if not isinstance(obj, Malformed) or obj.detail.startswith("not UTF-8"):
        return obj
    reader = ObjectReader(spec, max(len(line), 1), keep_bytes=0)
    reader.feed(line)
    found = reader.result()
    return obj if isinstance(found, Malformed) else found


LineDecoder = Callable[[JsonObject | Malformed, bytes, int], Sequence[Event]]
"""How a decoder turns a line's object (or why it has none) into events, given the bytes of the
line it saw (to recover what it can from an unreadable line) and the line number."""


class ObjectLineReader:
    """A ``LineReader`` for one JSON object line: the bounded reader, then the decoder's own
    handling of the object it gives."""

    def __init__(self, spec: Spec, max_string_bytes: int, decode: LineDecoder) -> None:
        self._reader = ObjectReader(spec, max_string_bytes)
        self._decode = decode

    def feed(self, data: bytes) -> None:
        self._reader.feed(data)

    def close(self, lineno: int) -> Sequence[Event]:
        found = self._reader.result()
        if isinstance(found, Malformed):
            found = Malformed(
                line=lineno, detail=f"{found.detail} (in a line of {self._reader.size} bytes)"
            )
        return self._decode(found, self._reader.seen, lineno)
