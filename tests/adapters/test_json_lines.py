"""Reading a JSON object line: ``load_object`` reads the bytes with msgspec first, and gives
exactly what ``json.loads`` of the UTF-8 text gives: the same value, or the same reason the line
is malformed, whatever the line holds."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coverage_gate.adapters._json import load_object
from coverage_gate.core.events import Malformed
from tests.conftest import DATA


def by_json(line: bytes) -> object:
    """What the line reads as through the standard library alone (``load_object``'s word)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ("malformed", f"not UTF-8 (byte {exc.start})")
    try:
        value = json.loads(text)
    except RecursionError:
        return ("malformed", "JSON nested too deeply")
    except ValueError as exc:
        return ("malformed", f"not JSON: {exc}")
    return value if isinstance(value, dict) else ("malformed", "not an object")


def read(line: bytes) -> object:
    found = load_object(line, 7)
    if isinstance(found, Malformed):
        assert found.line == 7
        return ("malformed", "not an object" if found.detail.endswith(", not an object") else
                found.detail)  # fmt: skip
    return found


def same(left: object, right: object) -> bool:
    """Equal, with NaN equal to itself and values compared by type too (1 is not 1.0)."""
    if isinstance(left, float) and isinstance(right, float):
        return (math.isnan(left) and math.isnan(right)) or left == right
    if type(left) is not type(right):
        return False
    if isinstance(left, dict) and isinstance(right, dict):
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(map(same, left, right))
    return left == right


ODD_LINES = [
    b'{"a":NaN}', b'{"a":-Infinity}', b'{"a":1e400}', b'{"a":2.5e308}', b'{"a":1.5e-400}',
    b'{"a":18446744073709551616}', b'{"a":-9223372036854775809}', b'{"a":9007199254740993.0}',
    b'{"a":"\\uDFFF"}', b'{"a":"\\ud800x"}', b'{"\\ud83d\\ude00":1}', b'{"a":"\\u0000"}',
    b'{"a":"x\ty"}', b'{"a":"x\x01y"}', b'{"a":1}\x0c', b'\x0c{"a":1}', b'{"a":1} x',
    b'{"a":1}{"b":2}', b"[1]", b'"text"', b"3", b"null", b"", b"   ", b'{"a":"\xff"}',
    b'{"a":"\xed\xa0\x80"}', b'\xef\xbb\xbf{"a":1}', b'{"a":1,}', b'{"a":01}', b'{"a":tru}',
    b' {"a":1} \r', b'{"a":1,"a":2}', b'{"b":1,"a":2,"b":3}', b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000, b'{"a":1}\x00', b'{"a":-0.0}', b'{"a":1E+2}',
]  # fmt: skip


@pytest.mark.parametrize("line", ODD_LINES)
def test_an_odd_line_reads_as_json_loads_reads_it(line: bytes) -> None:
    """NaN, numbers past a double or a 64-bit integer, lone surrogates, control characters,
    trailing bytes, duplicate keys, deep nesting, bad UTF-8: the value or the reason is
    ``json.loads``'s."""
    assert same(read(line), by_json(line))


def test_every_captured_line_reads_as_json_loads_reads_it() -> None:
    lines = [
        line
        for path in sorted(DATA.rglob("*.jsonl"))
        for line in path.read_bytes().split(b"\n")
        if line.strip()
    ]
    assert len(lines) > 1000
    assert all(same(read(line), by_json(line)) for line in lines)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), json_values, max_size=6), st.booleans())
def test_any_json_object_line_reads_as_json_loads_reads_it(
    value: dict[str, object], ascii_only: bool
) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    assert same(read(line), by_json(line))
