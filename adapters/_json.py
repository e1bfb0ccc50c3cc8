"""Small, total helpers the JSON-lines adapters share: decode a line, read typed fields.

Every helper returns a value or a ``Malformed`` naming what was wrong; none of them raises. A line
that is not UTF-8, not JSON, nested too deeply for the parser, or not a JSON object is malformed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from coverage_gate.events import Malformed

JsonObject = Mapping[str, object]

_BLANK = re.compile(rb"\s*")
_JSON_KINDS: dict[type, str] = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def is_blank(head: bytes) -> bool:
    """An empty or whitespace-only line carries nothing; it is counted and passed over."""
    return _BLANK.fullmatch(head) is not None


def load_object(line: bytes, lineno: int) -> JsonObject | Malformed:
    """The JSON object on ``line``, or why it is not one."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Malformed(lineno, f"not UTF-8 (byte {exc.start})")
    try:
        value = json.loads(text)
    except RecursionError:
        return Malformed(lineno, "JSON nested too deeply")
    except ValueError as exc:
        return Malformed(lineno, f"not JSON: {exc}")
    if not isinstance(value, dict):
        return Malformed(lineno, f"a JSON {_JSON_KINDS.get(type(value), 'value')}, not an object")
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


def get_int(obj: JsonObject, key: str) -> int | None:
    """An integer field; booleans are not integers here."""
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def objects(items: Sequence[object]) -> list[JsonObject]:
    """The JSON objects of a list, skipping anything else."""
    return [item for item in items if isinstance(item, dict)]
