"""The files of the repository at the revision under review, as citations replay and depth read
them: the port (``RevisionFiles``) and what it answers. Kept apart from
``coverage_gate.core.citations`` so that the edges serving files (``gittree``, ``content``) load no
contracts: ``record`` uses them to place paths and read files' lengths (start-up time)."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

__all__ = ["FileAtRevision", "KnownLine", "Line", "Presence", "RevisionFiles", "blob_id"]


class Presence(StrEnum):
    FOUND = "found"
    MISSING = "missing"  # the revision has no file at that path
    UNAVAILABLE = "unavailable"  # whether it has, or what it holds, could not be told


class KnownLine(ABC):
    """A line of a file known by what replay asks of it, not by its text (a receipt's record of
    a line too long to keep whole)."""

    @abstractmethod
    def holds(self, wanted: str, strict: bool) -> bool:
        """Whether the line, flattened, contains ``wanted`` (``strict``: is exactly it)."""

    @abstractmethod
    def found(self) -> str:
        """What a check shows of the line: ``excerpt`` of it trimmed."""


#: A line of a file at the revision: its text, or what is known of it.
Line = str | KnownLine


@dataclass(frozen=True, slots=True)
class FileAtRevision:
    """A file's content at the revision, or why there is none. ``lines``: the file already split
    into lines (a receipt's record), used instead of ``data`` when present."""

    presence: Presence
    data: bytes = b""
    detail: str = ""
    lines: Sequence[Line] | None = None
    blob: str = ""  # the git object id of the content, when read from git


class RevisionFiles(Protocol):
    """The files of the repository at the revision under review."""

    def file_at_revision(self, path: str) -> FileAtRevision:
        """The file at ``path`` (repository-relative, normalised). Never raises: what cannot be
        read is ``UNAVAILABLE``, with a detail saying why."""
        ...


def blob_id(data: bytes) -> str:
    """Git's object id of a blob holding ``data`` (SHA-1 object format): what evidence records
    of the content it was checked against, so it can be compared at another revision."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
