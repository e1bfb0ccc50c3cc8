"""Replaying a receipt folder: each receipt file read, checked against its name, decided again.

Results come in the folder's name order, one per receipt file, whether the receipts are replayed
in this process or spread over worker processes (``jobs``): each worker replays whole chunks of
consecutive names, and the chunks are taken back in order, a few at a time, so what is held
does not grow with the folder and the output is the same, byte for byte, for any number of
workers.

A receipt that cannot be replayed (unreadable, not gzip, content that does not hash to its
name, content breaking the receipt contract) is an ``Unreadable`` result whose ``problem``
names the file and the field at fault; the receipts after it are replayed all the same.

Workers are fresh interpreters (the ``spawn`` start method), never forks of this process, which
may hold threads and their locks; being this process's own children, the kernel accounts their
time and memory to it. What they need is passed by reference: ``make_candidate`` and ``decide``
must be picklable (module-level functions, or ``functools.partial`` of one); each worker builds
its candidate once.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import NamedTuple

from coverage_gate.errors import BadInputError
from coverage_gate.rollout import receipt_store, receipts
from coverage_gate.rollout.receipts import Decide
from coverage_gate.rollout.replay import Candidate, Change, replay_one

__all__ = [
    "AHEAD",
    "CHUNK",
    "PARALLEL_FROM",
    "Replayed",
    "Result",
    "Unreadable",
    "default_jobs",
    "replay_file",
    "replay_folder",
]

#: Receipts a worker replays per task.
CHUNK = 256
#: Tasks in flight per worker: enough that a worker the scheduler sets aside on a busy machine
#: does not leave the other idle behind the chunk awaited first; few enough to hold little
#: (a chunk's results are about ten kB pickled).
AHEAD = 16
#: Below this many receipts the default is to replay in this process (starting a worker costs
#: about as much as replaying a thousand receipts).
PARALLEL_FROM = 2_000


class Replayed(NamedTuple):
    """One receipt decided again: its repository, how it changed, and its audit entry as a JSON
    object with sorted keys when its verdict or would-downgrade changed."""

    repo: str
    change: Change
    entry: str | None


class Unreadable(NamedTuple):
    """A receipt file that could not be replayed, and why (the file and the field named)."""

    problem: str


Result = Replayed | Unreadable


def replay_file(path: Path, candidate: Candidate, decide: Decide) -> Result:
    """Read one receipt file, check its content against its name, and decide it again."""
    try:
        data = receipt_store.read_content(path)
    except BadInputError as error:
        return Unreadable(str(error))
    stem = path.name.removesuffix(receipts.SUFFIX)
    actual = receipts.receipt_id(data)
    if actual != stem:
        return Unreadable(
            f"receipt {path}: its content hashes to {actual}, not to its name "
            "(run `coverage-gate receipts verify`)"
        )
    try:
        receipt = receipts.parse(data)
    except receipts.ReceiptError as error:
        return Unreadable(f"receipt {path}: {error}")
    outcome = replay_one(stem, receipt, candidate, decide)
    entry = None
    if outcome.entry is not None:
        entry = json.dumps(outcome.entry.as_json(), sort_keys=True)
    return Replayed(outcome.repo, outcome.change, entry)


def default_jobs(receipts_count: int) -> int:
    """One worker per CPU this process may run on, for a folder large enough to be worth it."""
    if receipts_count < PARALLEL_FROM:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        cpus = os.cpu_count() or 1
    return max(1, cpus)


# --- in a worker ------------------------------------------------------------------------------

_worker: tuple[Candidate, Decide] | None = None


def _start(make_candidate: Callable[[], Candidate], decide: Decide) -> None:
    global _worker  # noqa: PLW0603 - one worker process, one candidate, built once
    _worker = (make_candidate(), decide)


def _chunk(folder: str, names: list[str]) -> list[Result]:
    assert _worker is not None, "a worker replays only after _start"  # noqa: S101
    candidate, decide = _worker
    return [replay_file(Path(folder, name), candidate, decide) for name in names]


# --- the folder -------------------------------------------------------------------------------


def replay_folder(
    folder: Path,
    names: Sequence[str],
    make_candidate: Callable[[], Candidate],
    decide: Decide,
    jobs: int = 1,
) -> Iterator[Result]:
    """One result per receipt file name of ``folder``, in the order of ``names``."""
    if jobs <= 1 or len(names) <= CHUNK:
        candidate = make_candidate()
        for name in names:
            yield replay_file(folder / name, candidate, decide)
        return
    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start,
        initargs=(make_candidate, decide),
    ) as pool:
        pending: deque[Future[list[Result]]] = deque()
        try:
            for start in range(0, len(names), CHUNK):
                chunk = list(names[start : start + CHUNK])
                pending.append(pool.submit(_chunk, str(folder), chunk))
                if len(pending) >= AHEAD * jobs:
                    yield from pending.popleft().result()
            while pending:
                yield from pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
