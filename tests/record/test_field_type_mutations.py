"""Single-field type mutations of honest real captures (DESIGN §6 rules 14, 19).

A client's own fields never change type in a stream it wrote; one that does (a ``content`` that
is ``""`` instead of a list, a ``parsed_cmd`` that is a number, an exit code of 10^30) is a line
the adapter cannot read, or drift: the calls it could affect are unknown, never absent or failed.
So for every tool line of every honest real capture, each field replaced by a value of another
JSON type must leave every claim the capture verified verified or unknown, never unsupported:
recorded plain (no pinned diff, no files: the parsed reads alone decide) and with both (where
another call's output can credit a file by content).

The cases are drawn with a fixed seed (the same every run); a failure names the capture, the
line, the field and the value.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.contracts.model import FileStatus
from tests.conftest import record_bytes
from tests.record.test_content_captures import CAPTURES
from tests.record.test_drift_captures import decide, record, verified_files

#: Cases drawn per capture (every field of a tool line is a candidate).
PER_CAPTURE = 60
SEED = 20261201
BIG = 10**30

Path_ = tuple[str | int, ...]


def _fields(value: Any, at: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    yield at, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _fields(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:4]):
            yield from _fields(item, (*at, index))


def _others(value: Any) -> list[Any]:
    """Values of other JSON types (and an integer too large for 64 bits for an integer)."""
    if isinstance(value, bool):
        return ["true", 1, None]
    if isinstance(value, int):
        return [BIG, str(value), None]
    if isinstance(value, float):
        return [str(value), None]
    if isinstance(value, str):
        return [[], {}, None, 7]
    if isinstance(value, list):
        return ["", {}, None]
    if isinstance(value, dict):
        return [[], "", None]
    return ["", 0]


def _set(obj: Any, at: Path_, value: Any) -> Any:
    if not at:
        return value
    head, rest = at[0], at[1:]
    if isinstance(obj, dict):
        return {**obj, head: _set(obj[head], rest, value)}
    copy = list(obj)
    copy[head] = _set(copy[head], rest, value)  # type: ignore[index]
    return copy


def _tool_lines(lines: list[bytes], paths: list[str]) -> list[int]:
    """Lines that name a verified file or a call id that such a line names."""
    ids: set[str] = set()
    chosen: list[int] = []
    for index, line in enumerate(lines):
        text = line.decode("utf-8", "replace")
        if any(path in text for path in paths):
            chosen.append(index)
            ids.update(
                value
                for _, value in _fields(json.loads(text) if text.strip() else {})
                if isinstance(value, str) and 6 <= len(value) <= 80 and "/" not in value
            )
    for index, line in enumerate(lines):
        if index not in chosen and any(i.encode() in line for i in ids if len(i) >= 12):
            chosen.append(index)
    return sorted(chosen)


def cases(path: Path, fmt: str, claimed: list[str]) -> list[tuple[int, Path_, Any]]:
    lines = path.read_bytes().splitlines(keepends=True)
    found: list[tuple[int, Path_, Any]] = []
    for index in _tool_lines(lines, claimed):
        try:
            obj = json.loads(lines[index])
        except ValueError:
            continue
        for at, value in _fields(obj):
            if at:
                found.extend((index, at, other) for other in _others(value))
    rng = random.Random(f"{SEED}:{path.name}")
    return sorted(rng.sample(found, min(PER_CAPTURE, len(found))), key=repr)


def _ids(case: tuple[Path, str]) -> str:
    return case[0].name


RECORDERS = {
    "plain": record_bytes,
    "checked": record,
}


@pytest.mark.parametrize("how", sorted(RECORDERS))
@pytest.mark.parametrize("case", CAPTURES, ids=_ids)
def test_a_field_of_another_type_never_makes_a_verified_claim_unsupported(
    case: tuple[Path, str], how: str
) -> None:
    path, fmt = case
    record = RECORDERS[how]
    honest = record(path.read_bytes(), fmt)
    claimed = verified_files(honest)
    if not claimed:
        pytest.skip("the capture verifies no file")
    assert set(decide(honest, claimed).values()) == {FileStatus.VERIFIED}
    lines = path.read_bytes().splitlines(keepends=True)
    failures: list[str] = []
    for index, at, value in cases(path, fmt, claimed):
        obj = _set(json.loads(lines[index]), at, value)
        mutated = [*lines]
        mutated[index] = json.dumps(obj, ensure_ascii=False).encode() + b"\n"
        statuses = decide(record(b"".join(mutated), fmt), claimed)
        lost = sorted(p for p, s in statuses.items() if s is FileStatus.UNSUPPORTED)
        if lost:
            where = ".".join(str(part) for part in at)
            failures.append(f"line {index + 1} {where} = {json.dumps(value)[:40]}: {lost}")
    assert failures == []
