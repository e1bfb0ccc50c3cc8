"""Small, total helpers the JSON-lines adapters share: decode a line, read typed fields.

Every helper returns a value or a ``Malformed`` naming what was wrong; none of them raises. A line
that is not UTF-8, not JSON, nested too deeply for the parser, or not a JSON object is malformed.

Numbers are bounded where they are read: a count, offset or line number must fit a 64-bit signed
integer (what OpenTelemetry and every consumer downstream can hold); a larger one, or a number
too long to parse at all, is ``OUT_OF_RANGE``: an unusable value that is labelled, never a crash.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence

from coverage_gate.core.events import Malformed

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "MAX_KEY_CHARS",
    "OUT_OF_RANGE",
    "JsonObject",
    "OutOfRange",
    "as_int64",
    "get_int",
    "get_list",
    "get_obj",
    "get_str",
    "is_blank",
    "key",
    "load_object",
    "loads_object",
    "objects",
    "opens_object",
]

JsonObject = Mapping[str, object]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class OutOfRange:
    """A number outside the 64-bit range (or too long to parse, or NaN/Infinity): read as a value
    of its own, so that it makes the field that holds it unusable, never the line."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<number out of the 64-bit range>"


OUT_OF_RANGE = OutOfRange()

_BLANK = re.compile(rb"\s*")
_JSON_KINDS: dict[type, str] = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


MAX_KEY_CHARS = 256


def key(text: str) -> str:
    """A call id (or tool name) as decoder state keeps it: a long one by its first characters
    and a hash, so that per-call state stays small (the core keeps the same bound)."""
    if len(text) <= MAX_KEY_CHARS:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{text[:MAX_KEY_CHARS]}#{len(text)}:{digest}"


def opens_object(seen: bytes) -> bool:
    """Whether a line begins as a JSON object: one that does not cannot hold any event."""
    return seen.lstrip()[:1] == b"{"


def is_blank(head: bytes) -> bool:
    """An empty or whitespace-only line carries nothing; it is counted and passed over."""
    return _BLANK.fullmatch(head) is not None


@functools.cache
def _fast_decoder() -> Callable[[bytes], object]:
    """msgspec's JSON decoder, loaded on first use (start-up time)."""
    import msgspec  # noqa: PLC0415 - start-up time

    decode: Callable[[bytes], object] = msgspec.json.Decoder().decode
    return decode


def load_object(line: bytes, lineno: int) -> JsonObject | Malformed:
    """The JSON object on ``line``, or why it is not one.

    msgspec reads the bytes first, in one pass (several times faster on the long lines of tool
    results). Where it takes a line at all, it gives what ``json.loads`` gives; what it refuses
    (NaN, numbers past a double, lone surrogates, anything malformed, nesting too deep) is read
    again by ``json.loads``, so the value, or the reason a line is malformed, stays its.
    """
    try:
        fast = _fast_decoder()(line)
    except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
        pass
    else:
        if isinstance(fast, dict):
            return fast
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Malformed(line=lineno, detail=f"not UTF-8 (byte {exc.start})")
    try:
        value = json.loads(text)
    except RecursionError:
        return Malformed(line=lineno, detail="JSON nested too deeply")
    except ValueError as exc:
        return Malformed(line=lineno, detail=f"not JSON: {exc}")
    if not isinstance(value, dict):
        return Malformed(
            line=lineno, detail=f"a JSON {_JSON_KINDS.get(type(value), 'value')}, not an object"
        )
    return value


def loads_object(text: str) -> JsonObject | None:
    """A JSON object embedded in a string field (tool arguments), or ``None``."""
    try:
        value = json.loads(text)
    except (RecursionError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def get_str(obj: JsonObject, key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def get_obj(obj: JsonObject, key: str) -> JsonObject | None:
    value = obj.get(key)
    return value if isinstance(value, dict) else None


def get_list(obj: JsonObject, key: str) -> Sequence[object] | None:
    value = obj.get(key)
    return value if isinstance(value, list) else None


def as_int64(value: object) -> int | OutOfRange | None:
    """An integer within the 64-bit range, ``OUT_OF_RANGE`` for one outside it, ``None`` for
    anything else (booleans are not integers here)."""
    if value is OUT_OF_RANGE:
        return OUT_OF_RANGE
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return value if INT64_MIN <= value <= INT64_MAX else OUT_OF_RANGE


def get_int(obj: JsonObject, key: str) -> int | OutOfRange | None:
    """An integer field (see ``as_int64``)."""
    return as_int64(obj.get(key))


def objects(items: Sequence[object]) -> list[JsonObject]:
    """The JSON objects of a list, skipping anything else."""
    return [item for item in items if isinstance(item, dict)]
