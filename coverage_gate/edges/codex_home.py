"""Where Codex keeps the session rollout of a thread (DESIGN §6 rule 26).

``codex exec --json`` names its thread in its first line (``thread.started``); Codex writes the
same thread's rollout (what the model received, call by call) under ``$CODEX_HOME`` (``~/.codex``
when unset) as ``sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``, whose first line is the
``session_meta`` naming the thread. ``record`` records that rollout in the exec stream's place
only when it is a record the reviewer could not write (DESIGN §6 rule 27): the one regular file
for the thread (found here), naming it, telling the exec stream's story, out of the sandbox's
reach (``record.codex_trust``); otherwise the exec stream is recorded and says why it verifies
nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from coverage_gate.errors import BadInputError

__all__ = [
    "codex_home",
    "exec_thread",
    "not_one_regular_file",
    "rollout_candidates",
    "rollout_thread",
]

# a thread id as Codex writes it (a UUID), never a pattern of a glob
_THREAD_ID: Final = re.compile(r"[0-9A-Za-z-]{8,64}")
# the first line of a rollout is read whole up to this many bytes (its session_meta)
MAX_META_BYTES: Final = 1 << 20


def codex_home(environ: Mapping[str, str]) -> Path:
    """``$CODEX_HOME``, or ``~/.codex`` when it is unset or empty."""
    home = environ.get("CODEX_HOME")
    if home:
        return Path(home)
    return Path(environ.get("HOME") or Path.home()) / ".codex"


def exec_thread(head: Sequence[bytes]) -> str | None:
    """The thread a ``codex exec --json`` stream names in its ``thread.started`` line."""
    for line in head:
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict) and event.get("type") == "thread.started":
            thread = event.get("thread_id")
            return thread if isinstance(thread, str) and _THREAD_ID.fullmatch(thread) else None
    return None


def rollout_thread(path: Path) -> str | None:
    """The thread a rollout file's ``session_meta`` names; ``None`` when its first line is not
    one. A file that cannot be read is bad input, named."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(MAX_META_BYTES)
    except OSError as error:
        raise BadInputError(f"--codex-rollout {path}: cannot be read ({error.strerror})") from None
    try:
        meta = json.loads(first)
    except (ValueError, RecursionError):
        return None
    payload = meta.get("payload") if isinstance(meta, dict) else None
    if not isinstance(meta, dict) or meta.get("type") != "session_meta":
        return None
    thread = payload.get("id") if isinstance(payload, dict) else None
    return thread if isinstance(thread, str) else None


def rollout_candidates(home: Path, thread: str) -> list[Path]:
    """Every path under a Codex home named as ``thread``'s rollout, in order; none when the
    thread id is not one or there is no such folder."""
    if not _THREAD_ID.fullmatch(thread):
        return []
    try:
        return sorted((home / "sessions").glob(f"*/*/*/rollout-*-{thread}.jsonl"))
    except OSError:
        return []


def not_one_regular_file(home: Path, found: list[Path]) -> str | None:
    """Why the paths found for a thread are not its one rollout (DESIGN §6 rule 27): a second
    candidate, a symbolic link (the file or a folder on its way), anything but a regular file, a
    file whose real place is outside the home's sessions; ``None`` when they are one."""
    if len(found) != 1:
        return f"{len(found)} files are named as its rollout: " + ", ".join(map(str, found))
    (path,) = found
    sessions = home / "sessions"
    try:
        for step in (path, *path.parents):
            if step == sessions:
                break
            if step.is_symlink():
                return f"{step} is a symbolic link"
        if not path.is_file():
            return f"{path} is not a regular file"
        real = path.resolve(strict=True)
        if sessions.resolve(strict=True) not in real.parents:
            return f"{path} lies outside {sessions}"
    except (OSError, RuntimeError) as error:
        return f"{path} cannot be examined ({error})"
    return None
