"""The statistics the report shows: the Wilson score interval of a proportion (``wilson``, 95%
by default), the nearest-rank percentile, and a share that is None without a whole.

Numbers in, numbers out; how they are written is ``_format``'s, what they are judged against is
``checks``'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["Z_95", "percentile", "wilson"]


Z_95 = 1.959963984540054


def wilson(successes: int, trials: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval for a proportion; None without trials."""
    if trials <= 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..1); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(math.ceil(q * len(ordered)), 1)
    return ordered[rank - 1]


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None
