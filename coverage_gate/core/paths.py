"""The one path normaliser, for claims and evidence alike (DESIGN §6 rule 4).

Pure: it never looks at the file system. The one thing a spelling cannot say by itself, whether
a directory that a ``..`` climbs out of is a symbolic link, it asks a ``RepoTree`` passed in.

How a spelling maps to a repository-relative file:

1. ``@`` is part of a name. Only a tool that treats a leading ``@`` as a file mention drops it
   (``mention=True``; pi's read tools drop exactly one). A claim never drops it.
2. ``\\`` is part of a name, as on POSIX; only ``/`` separates. Empty and ``.`` segments go.
3. An absolute path is placed by its literal leading segments under ``root``; with no root it
   cannot be placed (``absolute_without_root``). A relative path is relative to ``cwd`` when the
   stream records one, else to the root.
4. Without a ``..`` segment the spelling is the file: no lookup. With one, the lexical collapse
   is the file only if the OS, which follows a symbolic link before climbing out of it, reads
   the same file: each directory a ``..`` climbs out of is looked up in the tree at the
   revision. Same file: accepted. A different one: rejected, because which one was read
   depends on the tool (Node's ``path.resolve`` collapses first, a shell follows the link).
   A link leading out of the root, a loop of links, or no tree to ask: rejected.
5. Rejected too: empty, NUL or control characters, VCS metadata (``.git/``...). No basename or
   suffix matching ever happens here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from coverage_gate.contracts.enums import PathRejection

__all__ = [
    "MAX_LINKS",
    "VCS_DIRS",
    "Rejected",
    "Rejection",
    "RepoTree",
    "StaticTree",
    "TreeUnavailableError",
    "normalise",
    "normalise_claims",
]

Rejection = PathRejection

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})
MAX_LINKS = 40  # links followed for one path before it counts as a loop (Linux's ELOOP bound)


class TreeUnavailableError(Exception):
    """The repository at the revision cannot be consulted; the message says why."""


class RepoTree(Protocol):
    """The repository at the revision under review, as far as paths need it."""

    def symlink_target(self, path: str) -> str | None:
        """The target of ``path`` (repository-relative, ``/``-separated, no ``.`` or ``..``)
        when it is a symbolic link at the revision; ``None`` when it is anything else or does
        not exist. Raises ``TreeUnavailableError`` when that cannot be told."""
        ...


@dataclass(frozen=True)
class StaticTree:
    """A ``RepoTree`` given as a mapping of link paths to their targets."""

    links: Mapping[str, str] = field(default_factory=dict)

    def symlink_target(self, path: str) -> str | None:
        return self.links.get(path)


@dataclass(frozen=True, slots=True)
class Rejected:
    reason: Rejection
    raw: str
    detail: str = ""

    def describe(self) -> str:
        text = f"{self.reason.value}: {self.raw!r}"
        return f"{text} ({self.detail})" if self.detail else text


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def _segments(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _collapse(parts: list[str]) -> list[str] | None:
    """Resolve ``..`` lexically; ``None`` when the path climbs above its start."""
    out: list[str] = []
    for part in parts:
        if part == "..":
            if not out:
                return None
            out.pop()
        else:
            out.append(part)
    return out


def normalise(
    raw: str,
    root: str | None,
    cwd: str | None = None,
    *,
    mention: bool = False,
    tree: RepoTree | None = None,
) -> str | Rejected:
    """Repo-relative POSIX path for ``raw``, or why it names no file of the repository.

    ``root`` is the repository root as an absolute POSIX path (``None``: absolute paths cannot
    be placed). ``cwd`` is the directory a relative ``raw`` is relative to, when a stream
    records one; ``None`` means the root. ``mention``: the tool that read ``raw`` drops one
    leading ``@``. ``tree`` answers for the directories a ``..`` climbs out of.
    """
    if not raw:
        return Rejected(Rejection.EMPTY, raw)
    if _has_control(raw):
        return Rejected(Rejection.CONTROL_CHARACTER, raw)
    text = raw[1:] if mention and raw.startswith("@") else raw
    if not text:
        return Rejected(Rejection.EMPTY, raw)
    if text.startswith("/") or (cwd is not None and cwd.startswith("/")):
        root_parts = _root_parts(root)
        absolute = _segments(text) if text.startswith("/") else _segments(f"{cwd}/{text}")
        if root_parts is None:
            return Rejected(Rejection.ABSOLUTE_WITHOUT_ROOT, raw)
        if tuple(absolute[: len(root_parts)]) != root_parts:
            return Rejected(Rejection.OUTSIDE_ROOT, raw)
        parts = absolute[len(root_parts) :]
    else:
        parts = _segments(cwd) + _segments(text) if cwd else _segments(text)
    placed = _resolve(parts, raw, root, tree)
    if isinstance(placed, Rejected):
        return placed
    if not placed:
        return Rejected(Rejection.NOT_A_FILE, raw)
    if not VCS_DIRS.isdisjoint(placed):
        return Rejected(Rejection.VCS_METADATA, raw)
    return "/".join(placed)


@functools.lru_cache(maxsize=64)
def _root_parts(root: str | None) -> tuple[str, ...] | None:
    """The segments of the root (``None``: no root, or one that climbs above ``/``); a stream's
    paths are placed under one root, so it is split once."""
    parts = _collapse(_segments(root)) if root else None
    return None if parts is None else tuple(parts)


def _resolve(
    parts: list[str], raw: str, root: str | None, tree: RepoTree | None
) -> list[str] | Rejected:
    """The file ``parts`` (relative to the root) names; ``..`` is checked against ``tree``."""
    if ".." not in parts:
        return parts  # the spelling is the file: nothing to collapse, nothing to look up
    lexical = _collapse(parts)
    if lexical is None:
        return Rejected(Rejection.ESCAPES_ROOT, raw)
    if tree is None:
        return Rejected(
            Rejection.PARENT_UNRESOLVED, raw, "no repository tree at the revision to check '..'"
        )
    try:
        physical = _physical(parts, _root_parts(root), tree)
    except TreeUnavailableError as error:
        return Rejected(Rejection.PARENT_UNRESOLVED, raw, str(error))
    if isinstance(physical, PathRejection):
        return Rejected(physical, raw)
    if physical != lexical:
        return Rejected(
            Rejection.PARENT_THROUGH_SYMLINK,
            raw,
            f"the OS reads {'/'.join(physical) or '.'!r}, "
            f"a tool collapsing '..' first reads {'/'.join(lexical)!r}",
        )
    return lexical


def _first_link(out: list[str], start: int, tree: RepoTree) -> tuple[int, str] | None:
    """The first of ``out[start:]`` (as a path from the root) that is a symbolic link."""
    for index in range(start, len(out)):
        target = tree.symlink_target("/".join(out[: index + 1]))
        if target is not None:
            return index, target
    return None


def _physical(
    parts: list[str], root_parts: tuple[str, ...] | None, tree: RepoTree
) -> list[str] | PathRejection:
    """What the OS would resolve ``parts`` to: before each ``..``, the directories it climbs
    out of are looked up, and a symbolic link among them is replaced by its target."""
    out: list[str] = []
    checked = 0  # out[:checked] are known not to be links
    pending = list(reversed(parts))
    links = 0
    while pending:
        part = pending.pop()
        if part != "..":
            out.append(part)
            continue
        link = _first_link(out, checked, tree)
        if link is None:
            if not out:
                return Rejection.SYMLINK_OUTSIDE_ROOT if links else Rejection.ESCAPES_ROOT
            out.pop()
            checked = len(out)
            continue
        links += 1
        if links > MAX_LINKS:
            return Rejection.SYMLINK_LOOP
        index, target = link
        if not target:
            return Rejection.PARENT_THROUGH_SYMLINK  # an empty target names no directory
        target_parts = _segments(target)
        base = out[:index]
        if target.startswith("/"):
            if root_parts is None or tuple(target_parts[: len(root_parts)]) != root_parts:
                return Rejection.SYMLINK_OUTSIDE_ROOT
            base, target_parts = [], target_parts[len(root_parts) :]
        pending.append("..")
        pending.extend(reversed(out[index + 1 :]))
        pending.extend(reversed(target_parts))
        out = base
        checked = len(base)
    return out


def normalise_claims(
    paths: Iterable[str], root: str | None, tree: RepoTree | None = None
) -> tuple[list[str], list[Rejected]]:
    """Normalise a reviewer's claimed paths (a claim never drops ``@``); duplicates collapse,
    rejections are returned in the order given."""
    kept: set[str] = set()
    rejected: list[Rejected] = []
    for raw in paths:
        result = normalise(raw, root, tree=tree)
        if isinstance(result, Rejected):
            rejected.append(result)
        else:
            kept.add(result)
    return sorted(kept), rejected
