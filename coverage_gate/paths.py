"""The one path normaliser, for claims and evidence alike (DESIGN §6 rule 4).

Pure: it never looks at the file system. Lexical rules only, so that the same spelling always
gives the same answer wherever it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})


class Rejection(StrEnum):
    EMPTY = "empty"
    CONTROL_CHARACTER = "control_character"
    OUTSIDE_ROOT = "outside_root"
    ESCAPES_ROOT = "escapes_root"
    ABSOLUTE_WITHOUT_ROOT = "absolute_without_root"
    VCS_METADATA = "vcs_metadata"
    NOT_A_FILE = "not_a_file"


@dataclass(frozen=True, slots=True)
class Rejected:
    reason: Rejection
    raw: str

    def describe(self) -> str:
        return f"{self.reason.value}: {self.raw!r}"


def _has_control(text: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)


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


def normalise(raw: str, root: str | None, cwd: str | None = None) -> str | Rejected:
    """Repo-relative POSIX path for ``raw``, or why it gives no evidence.

    ``root`` is the repository root as an absolute POSIX path (``None``: absolute paths cannot be
    placed). ``cwd`` is the directory a relative ``raw`` is relative to, when a stream records
    one; ``None`` means the root. Leading ``@`` (pi's file mention) is stripped, backslashes
    become slashes, ``./`` and repeated slashes collapse, ``..`` resolves lexically and may not
    leave the root. VCS metadata is rejected. No basename or suffix matching ever happens here.
    """
    if not raw:
        return Rejected(Rejection.EMPTY, raw)
    if "\x00" in raw or _has_control(raw):
        return Rejected(Rejection.CONTROL_CHARACTER, raw)
    text = raw.lstrip("@").replace("\\", "/")
    if not text:
        return Rejected(Rejection.EMPTY, raw)
    root_parts = _collapse(_segments(root)) if root else None
    if text.startswith("/"):
        absolute = _collapse(_segments(text))
    elif cwd is not None and cwd.startswith("/"):
        absolute = _collapse(_segments(cwd) + _segments(text))
    else:
        base = [] if cwd is None else _segments(cwd)
        relative = _collapse(base + _segments(text))
        if relative is None:
            return Rejected(Rejection.ESCAPES_ROOT, raw)
        return _finish(relative, raw)
    if root_parts is None:
        return Rejected(Rejection.ABSOLUTE_WITHOUT_ROOT, raw)
    if absolute is None or absolute[: len(root_parts)] != root_parts:
        return Rejected(Rejection.OUTSIDE_ROOT, raw)
    return _finish(absolute[len(root_parts) :], raw)


def _finish(parts: list[str], raw: str) -> str | Rejected:
    # A repo-relative result never starts with "@": that keeps the normaliser idempotent
    # ("./@x" and "@x" both mean "x", as pi's file mentions do).
    if parts and parts[0].startswith("@"):
        parts = [parts[0].lstrip("@"), *parts[1:]]
        parts = [part for part in parts if part]
    if not parts:
        return Rejected(Rejection.NOT_A_FILE, raw)
    if any(part in VCS_DIRS for part in parts):
        return Rejected(Rejection.VCS_METADATA, raw)
    return "/".join(parts)


def normalise_claims(paths: list[str], root: str | None) -> tuple[list[str], list[Rejected]]:
    """Normalise a reviewer's claimed paths; duplicates collapse, rejections are returned."""
    kept: set[str] = set()
    rejected: list[Rejected] = []
    for raw in paths:
        result = normalise(raw, root)
        if isinstance(result, Rejected):
            rejected.append(result)
        else:
            kept.add(result)
    return sorted(kept), rejected
