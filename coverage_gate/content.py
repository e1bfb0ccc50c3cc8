"""Files' content at the revision under review: the edge behind depth's ``ContentSource`` port.

A byte-ranged read (pi's ``cr_read``) is told in lines with the file as it was read. When the
revision is the checked-out commit (``HEAD``, or the SHA ``HEAD`` resolves to), that is the
working tree under the repository root: what a reviewer running in that checkout read, including
uncommitted changes. Any other revision is read from git (``git cat-file blob REV:PATH``, the
plumbing behind ``git show REV:PATH``).

Whatever goes wrong (no git, not a repository, an unknown revision, a missing file, a path leaving
the root, a file over the size bound, a slow git) gives ``None``: content not obtainable, so that
read's lines, and its file's depth, are unknown, never unseen. Nothing here raises.

``RepositoryContents`` gives one per repository root (the root is chosen per stream);
``MappingContent`` is the in-memory fake for tests. ``worktree_file`` is the one reader of a file
in the working tree, for this module and for ``GitTree.file_at_revision`` (citations) alike.
"""

from __future__ import annotations

import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path

from coverage_gate.revision_files import FileAtRevision, Presence

GIT_TIMEOUT_SECONDS = 10.0
MAX_CONTENT_BYTES = 64 * 1024 * 1024


def worktree_file(root: Path, path: str, max_bytes: int = MAX_CONTENT_BYTES) -> FileAtRevision:
    """The working-tree file at ``path`` under ``root``: missing when nothing but a directory or
    nothing at all is there; unavailable when it leads out of the root (through a symbolic
    link: never read), is not a regular file, is over ``max_bytes`` or cannot be read."""
    try:
        base = root.resolve()
        target = (base / path).resolve()
    except (OSError, RuntimeError) as error:
        return FileAtRevision(Presence.UNAVAILABLE, detail=f"{path}: {error}")
    if not target.is_relative_to(base):
        return FileAtRevision(Presence.UNAVAILABLE, detail=f"{path}: leads out of the repository")
    try:
        info = target.stat()
    except (FileNotFoundError, NotADirectoryError):
        return FileAtRevision(Presence.MISSING)
    except OSError as error:
        return FileAtRevision(Presence.UNAVAILABLE, detail=f"{path}: {error.strerror}")
    if stat.S_ISDIR(info.st_mode):
        return FileAtRevision(Presence.MISSING, detail=f"{path}: a directory")
    if not stat.S_ISREG(info.st_mode):
        return FileAtRevision(Presence.UNAVAILABLE, detail=f"{path}: not a regular file")
    if info.st_size > max_bytes:
        return FileAtRevision(Presence.UNAVAILABLE, detail=f"{path}: over {max_bytes} bytes")
    try:
        return FileAtRevision(Presence.FOUND, target.read_bytes())
    except OSError as error:
        return FileAtRevision(Presence.UNAVAILABLE, detail=f"{path}: {error.strerror}")


def _revision_name(revision: str) -> bool:
    """A name git can only take as a revision: never an option, no spaces or control bytes."""
    return (
        bool(revision)
        and not revision.startswith("-")
        and revision.isprintable()
        and not any(ch.isspace() for ch in revision)
    )


class RepositoryContent:
    """Content at ``revision`` under ``root``; the working tree or git is chosen once."""

    def __init__(
        self,
        root: str,
        revision: str,
        *,
        timeout: float = GIT_TIMEOUT_SECONDS,
        max_bytes: int = MAX_CONTENT_BYTES,
    ) -> None:
        self.root = Path(root)
        self.revision = revision
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._worktree: bool | None = None

    def _git(self, *args: str) -> bytes | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(self.root), *args],
                capture_output=True,
                timeout=self.timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    def _commit(self, revision: str) -> bytes | None:
        found = self._git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
        return found.strip() if found else None

    def uses_worktree(self) -> bool:
        """Whether the revision is the checked-out commit (asked of git once)."""
        if self._worktree is None:
            if self.revision == "HEAD":
                self._worktree = True
            else:
                head = self._commit("HEAD")
                self._worktree = head is not None and head == self._commit(self.revision)
        return self._worktree

    def content(self, path: str) -> bytes | None:
        if not path or path.startswith("/") or "\0" in path or not _revision_name(self.revision):
            return None
        if self.uses_worktree():
            return self._from_worktree(path)
        return self._from_git(path)

    def _from_worktree(self, path: str) -> bytes | None:
        found = worktree_file(self.root, path, self.max_bytes)
        return found.data if found.presence is Presence.FOUND else None

    def _from_git(self, path: str) -> bytes | None:
        spec = f"{self.revision}:{path}"
        size = self._git("cat-file", "-s", spec)
        if size is None or not size.strip().isdigit() or int(size) > self.max_bytes:
            return None
        return self._git("cat-file", "blob", spec)


class RepositoryContents:
    """``RepositoryContent`` at one revision, one per root, made when first asked for."""

    def __init__(self, revision: str) -> None:
        self.revision = revision
        self._by_root: dict[str, RepositoryContent] = {}

    def __call__(self, root: str) -> RepositoryContent:
        found = self._by_root.get(root)
        if found is None:
            found = self._by_root[root] = RepositoryContent(root, self.revision)
        return found


class MappingContent:
    """Content from a mapping of repo-relative paths to bytes; counts what was asked for."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = dict(files)
        self.asked: list[str] = []

    def content(self, path: str) -> bytes | None:
        self.asked.append(path)
        return self.files.get(path)
