"""Which files a byte range of the pinned unified diff covers.

``cr_diff`` pages through one fixed diff by byte offset. A page is per-file evidence only for the
files whose sections it overlapped, so the diff is split into per-file byte sections once.
"""

from __future__ import annotations

import bisect
import codecs
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Section:
    start: int
    end: int
    path: str


def _unquote(path: bytes) -> str:
    """Git quotes unusual paths C-style (``"a/caf\\303\\251.txt"``)."""
    if len(path) >= 2 and path[:1] == b'"' and path[-1:] == b'"':
        inner = codecs.escape_decode(path[1:-1])[0]
        assert isinstance(inner, bytes)  # noqa: S101 - escape_decode always returns bytes
        path = inner
    return path.decode("utf-8", "surrogateescape")


def _strip_prefix(path: str) -> str:
    for prefix in ("a/", "b/"):
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


def _path_from_header(header: bytes) -> str | None:
    """``diff --git a/X b/Y`` → ``Y`` (only used when no ``---``/``+++`` lines name the file)."""
    rest = header[len(b"diff --git ") :].rstrip(b"\r\n")
    if rest.startswith(b'"'):
        close = rest.find(b'"', 1)
        rest = rest[close + 2 :] if close > 0 else rest
    else:
        mark = rest.rfind(b" b/")
        rest = rest[mark + 1 :] if mark >= 0 else rest
    return _strip_prefix(_unquote(rest)) if rest else None


def _section_path(lines: list[bytes]) -> str | None:
    old = new = None
    for line in lines:
        if line.startswith(b"--- "):
            old = line[4:].rstrip(b"\r\n").split(b"\t")[0]
        elif line.startswith(b"+++ "):
            new = line[4:].rstrip(b"\r\n").split(b"\t")[0]
            break
    for candidate in (new, old):
        if candidate and candidate != b"/dev/null":
            return _strip_prefix(_unquote(candidate))
    if lines and lines[0].startswith(b"diff --git "):
        return _path_from_header(lines[0])
    return None


class DiffIndex:
    """Per-file byte sections of one unified diff."""

    def __init__(self, sections: list[Section], total: int) -> None:
        self.sections = sections
        self.total = total
        self._starts = [section.start for section in sections]

    @classmethod
    def parse(cls, diff: bytes) -> DiffIndex:
        """Sections start at ``diff --git`` headers; a diff without any (plain ``diff -u``
        output) is split at each ``---``/``+++`` pair instead."""
        lines = diff.splitlines(keepends=True)
        offsets: list[int] = []
        offset = 0
        for line in lines:
            offsets.append(offset)
            offset += len(line)
        git = any(line.startswith(b"diff --git ") for line in lines)
        starts = [
            index
            for index, line in enumerate(lines)
            if (line.startswith(b"diff --git ") if git else _plain_header(lines, index))
        ]
        sections: list[Section] = []
        for position, first in enumerate(starts):
            last = starts[position + 1] if position + 1 < len(starts) else len(lines)
            path = _section_path(lines[first:last])
            end = offsets[last] if last < len(lines) else len(diff)
            if path is not None:
                sections.append(Section(offsets[first], end, path))
        return cls(sections, len(diff))

    def files_overlapping(self, offset: int, end: int) -> list[str]:
        """Files whose section shares at least one byte with ``[offset, end)``."""
        if end <= offset:
            return []
        first = max(bisect.bisect_right(self._starts, offset) - 1, 0)
        found: list[str] = []
        for section in self.sections[first:]:
            if section.start >= end:
                break
            if section.end > offset:
                found.append(section.path)
        return found

    @property
    def paths(self) -> list[str]:
        return sorted({section.path for section in self.sections})


def _plain_header(lines: list[bytes], index: int) -> bool:
    return (
        lines[index].startswith(b"--- ")
        and index + 1 < len(lines)
        and lines[index + 1].startswith(b"+++ ")
    )
