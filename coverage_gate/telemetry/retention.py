"""Retention of the local telemetry folder: each run writes files of its own
(``{signal}-{YYYYMMDD}T{HHMMSS}Z-{pid}-{random}.jsonl``, ``_export.JsonLinesFile``), so the folder
grows by a file or two per run. ``compact`` merges the run files of each past day into one file
per signal and day (``{signal}-{YYYYMMDD}.jsonl``): the folder then holds two files per day
observed, plus the runs of the last day. ``coverage-gate report`` compacts the folder it reads.

What the report reads is unchanged: the lines are the same lines, a span in two files is one
review, and a cumulative metric series is keyed by its start time, which differs run by run.

A run file is merged only when its day is before today (UTC) and it has not been written for
``QUIET_S``: a run that began before midnight may still be writing. Merging holds an exclusive
lock on ``.compact.lock`` in the folder (another report compacting at once skips it), writes the
day's file whole under a temporary name, renames it into place, and only then removes the run
files. A crash between the two leaves run files whose lines the day file already holds: the
next compaction (the next report, before it reads) removes them without merging them again, so
no error point is counted twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["QUIET_S", "Compacted", "compact"]

#: How long a run file must have gone unwritten before it is merged.
QUIET_S = 6 * 3600
_RUN_FILE = re.compile(r"^(?P<signal>[a-z]+)-(?P<day>\d{8})T\d{6}Z-\d+-[0-9a-f]+\.jsonl$")


@dataclass(frozen=True)
class Compacted:
    """What ``compact`` did: run files merged, into how many day files."""

    merged: int = 0
    days: int = 0


def compact(folder: Path, *, now_s: float | None = None) -> Compacted:
    """Merge the run files of each past day of ``folder`` into one file per signal and day
    (module notes). Nothing is merged when another process holds the lock."""
    now = time.time() if now_s is None else now_s
    today = time.strftime("%Y%m%d", time.gmtime(now))
    groups: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for path in sorted(folder.iterdir()):
        found = _RUN_FILE.match(path.name)
        if found is None or found["day"] >= today or not path.is_file():
            continue
        if now - path.stat().st_mtime < QUIET_S:
            continue  # it may still be written
        groups[(found["signal"], found["day"])].append(path)
    if not groups:
        return Compacted()
    merged = 0
    with _locked(folder) as held:
        if not held:
            return Compacted()
        for (signal, day), paths in sorted(groups.items()):
            _merge(folder / f"{signal}-{day}.jsonl", paths)
            merged += len(paths)
    return Compacted(merged=merged, days=len(groups))


def _merge(target: Path, paths: list[Path]) -> None:
    """``target`` (if it exists) and then ``paths`` as one file, every line ending in a newline;
    then ``paths`` removed. A run file whose every line the day file already holds (a merge cut
    short after its rename) is only removed."""
    held = set(target.read_bytes().splitlines()) if target.exists() else set()
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with temporary.open("wb") as out:
        if held:
            out.write(target.read_bytes().rstrip(b"\n") + b"\n")
        for source in paths:
            data = source.read_bytes()
            lines = data.splitlines()
            if held and all(line in held for line in lines):
                continue
            out.write(b"".join(line + b"\n" for line in lines))
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, target)
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[bool]:
    """An exclusive, non-blocking lock on the folder's ``.compact.lock``: whether it was had."""
    fd = os.open(folder / ".compact.lock", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
