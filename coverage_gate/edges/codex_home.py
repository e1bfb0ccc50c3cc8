"""Where Codex keeps the session rollout of a thread (DESIGN §6 rule 26).

``codex exec --json`` names its thread in its first line (``thread.started``); Codex writes the
same thread's rollout (what the model received, call by call) under ``$CODEX_HOME`` (``~/.codex``
when unset) as ``sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``, whose first line is the
``session_meta`` naming the thread. ``record`` records that rollout in the exec stream's place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from coverage_gate.errors import BadInputError

__all__ = ["codex_home", "exec_thread", "find_rollout", "rollout_thread"]

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


def find_rollout(home: Path, thread: str) -> Path | None:
    """The rollout of ``thread`` under a Codex home, the newest when there are several; ``None``
    when there is none (or no such folder)."""
    if not _THREAD_ID.fullmatch(thread):
        return None
    try:
        found = sorted((home / "sessions").glob(f"*/*/*/rollout-*-{thread}.jsonl"))
    except OSError:
        return None
    return found[-1] if found else None
