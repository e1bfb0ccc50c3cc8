"""Client versions against the range an adapter was checked with (DESIGN §6 rule 19). Pure.

Client versions are dotted numbers, sometimes with a suffix (``0.61.0-preview.2``, ``2.1.328
(Claude Code)``). They compare by their leading numbers; a suffix makes a version a pre-release
of its numbers, older than the release.
"""

from __future__ import annotations

import re

__all__ = ["outside", "version_key"]

_VERSION = re.compile(r"\s*v?(\d+(?:\.\d+)*)(.*)")


def version_key(version: str) -> tuple[tuple[int, ...], int] | None:
    """What a version sorts by, or ``None`` when it does not start with a number."""
    found = _VERSION.match(version)
    if found is None:
        return None
    numbers = tuple(int(part) for part in found.group(1).split("."))
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]
    suffix = found.group(2).strip()
    release = 0 if suffix.startswith("-") else 1
    return numbers, release


def outside(version: str, checked: tuple[str, str]) -> str | None:
    """Why ``version`` is outside the ``(oldest, newest)`` range checked, or ``None`` when it is
    inside it (or cannot be told)."""
    key, oldest, newest = version_key(version), version_key(checked[0]), version_key(checked[1])
    if key is None or oldest is None or newest is None:
        return None
    if key > newest:
        return f"newer than {checked[1]}, the newest checked"
    if key < oldest:
        return f"older than {checked[0]}, the oldest checked"
    return None
