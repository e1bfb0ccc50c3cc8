"""Whether a Codex rollout may stand in an exec stream's place (DESIGN §6 rule 27): the pure
checks of ``record.codex_story`` over the rollout file that ``edges.codex_home`` found or the
pipeline gave."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from coverage_gate.contracts.enums import UnknownReason
from coverage_gate.edges.codex_home import rollout_thread
from coverage_gate.errors import BadInputError
from coverage_gate.record.codex_story import (
    Step,
    rollout_story,
    story_differs,
    writable_by_commands,
)

__all__ = ["rollout_doubt"]


def _rollout_lines(path: Path) -> Iterator[bytes]:
    """A rollout file's lines; a file that cannot be read is bad input, named."""
    try:
        with path.open("rb") as handle:
            yield from handle
    except OSError as error:
        raise BadInputError(f"rollout {path}: cannot be read ({error.strerror})") from None


def rollout_doubt(
    path: Path,
    thread: str | None,
    steps: list[Step] | str,
    *,
    found: bool,
    tmpdir: str | None,
) -> tuple[UnknownReason, str] | None:
    """Why ``path`` is not evidence in the place of the exec stream whose commands are ``steps``
    (``exec_story``'s: a reason when they cannot be read) (DESIGN §6 rule 27); ``None`` when it
    is. ``found``: the file was found under
    ``$CODEX_HOME`` (where it lies is then checked against the run's sandbox), not given by the
    pipeline (which then vouches for where it was kept)."""
    named = rollout_thread(path)
    if thread is not None and named != thread:
        return UnknownReason.ROLLOUT_REJECTED, (
            f"{path}: its session_meta names {'no thread' if named is None else named}, "
            f"the exec stream is thread {thread}"
        )
    if isinstance(steps, str):
        return UnknownReason.ROLLOUT_REJECTED, f"{path}: cannot be compared: {steps}"
    story = rollout_story(_rollout_lines(path))
    differs = story_differs(steps, story)
    if differs is not None:
        return UnknownReason.ROLLOUT_REJECTED, (
            f"{path} does not tell the exec stream's story: {differs}"
        )
    place = path.resolve().as_posix() if found else None
    writable = writable_by_commands(story, place, tmpdir)
    if writable is not None:
        return UnknownReason.ROLLOUT_WRITABLE, f"{path}: {writable}"
    return None
