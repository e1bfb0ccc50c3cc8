"""How the report writes a time (ISO 8601, UTC, to the second), a share (a percentage to one
decimal, ``n/a`` for none) and an interval's range: shared by the counts' days (``counts``), the
flagged decisions' times (``flagged``), the checks' words (``checks``), the per-repository report
(``build``) and the text (``text``).
"""

from __future__ import annotations

from datetime import UTC, datetime

# Only private helpers, for the modules of this package.
__all__: list[str] = []


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat(timespec="seconds")


def _iso_s(seconds: float | None) -> str | None:
    return None if seconds is None else _iso(int(seconds * 1e9))


def _ci_range(interval: tuple[float, float]) -> str:
    return f"{interval[0]:.1%}-{interval[1]:.1%}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"
