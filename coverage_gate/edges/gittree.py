"""The repository at a revision, as the path normaliser asks about it (an edge: runs git).

``GitTree`` tells whether a repository-relative path is a symbolic link at the revision, and its
target. The revision is an immutable object (DESIGN §6 rule 15): a commit, or a tree written
before the reviewer started (``snapshot_tree``); it is read through one ``git cat-file --batch``
process, started on the first question and kept until ``close``, never from the working tree,
which the reviewer could change while or after it runs. Every
answer is cached. Any failure (no git, not a repository, an unknown revision, a git that stops
answering) raises ``TreeUnavailableError``: the path asked about is then rejected, never guessed.
Only paths with a ``..`` segment are ever asked about.

It is also the ``RevisionFiles`` citations are replayed with: ``file_at_revision`` reads a blob of
the revision through the same ``git cat-file --batch`` process, with its blob id. That never
raises: what cannot be read is unavailable.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

from coverage_gate.core.paths import TreeUnavailableError
from coverage_gate.core.revision_files import FileAtRevision, Presence

__all__ = ["DEFAULT_TIMEOUT", "MAX_CONTENT_BYTES", "GitTree", "GitTrees", "git_toplevel"]

DEFAULT_TIMEOUT = 30.0
MAX_CONTENT_BYTES = 64 * 1024 * 1024
_TREE_MODE = b"40000"
_LINK_MODE = b"120000"
_FILE_MODES = (b"100644", b"100755")

_Entries = dict[bytes, tuple[bytes, str]]


def _parse_tree(data: bytes, hash_bytes: int) -> _Entries:
    """Entries of a raw tree object: ``<mode> <name>\\0<hash>`` repeated."""
    entries: _Entries = {}
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        end = nul + 1 + hash_bytes
        if end > len(data):
            raise ValueError("tree entry cut off")
        entries[data[space + 1 : nul]] = (data[at:space], data[nul + 1 : end].hex())
        at = end
    return entries


class _Closing:
    """``with`` closes it (its ``close`` ends the git processes it started)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class GitTree(_Closing):
    """``RepoTree`` of the repository under ``root`` at ``revision``."""

    def __init__(
        self,
        root: Path | str,
        revision: str,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = MAX_CONTENT_BYTES,
    ) -> None:
        self._root = Path(root)
        self._revision = revision
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = bytearray()
        self._opened = False
        self._failure: TreeUnavailableError | None = None
        self._root_tree = ""
        self._trees: dict[str, _Entries] = {}
        self._answers: dict[str, str | None] = {}

    # --- RepoTree ------------------------------------------------------------------------------

    def symlink_target(self, path: str) -> str | None:
        if path in self._answers:
            return self._answers[path]
        self._open()
        answer = self._tree_link(path)
        self._answers[path] = answer
        return answer

    # --- RevisionFiles -------------------------------------------------------------------------

    def file_at_revision(self, path: str) -> FileAtRevision:
        """The file at ``path`` (repository-relative, normalised) at the revision."""
        try:
            self._open()
            return self._tree_file(path)
        except TreeUnavailableError as error:
            return FileAtRevision(Presence.UNAVAILABLE, detail=str(error))

    # --- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            # A git that already exited (no repository there) leaves a broken pipe, which
            # closing reports once more: it is gone either way.
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=self._timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()

    # --- opening -------------------------------------------------------------------------------

    def _fail(self, why: str) -> TreeUnavailableError:
        self.close()
        self._failure = TreeUnavailableError(f"repository {self._root} at {self._revision}: {why}")
        return self._failure

    def _open(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._opened:
            return
        revision = self._revision
        if not revision or any(ch.isspace() or ord(ch) < 0x20 for ch in revision):
            raise self._fail("not a revision name")
        try:
            self._process = subprocess.Popen(
                ["git", "-C", str(self._root), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as error:
            raise self._fail(f"git cannot be run ({error.strerror})") from None
        tree = self._object(f"{revision}^{{tree}}")
        if tree is None:
            raise self._fail("not a commit or tree of this repository")
        self._opened = True
        self._root_tree = tree[0]

    # --- git cat-file --batch ------------------------------------------------------------------

    def _object(self, name: str) -> tuple[str, bytes] | None:
        """``(object id, content)`` of ``name``, or ``None`` when git says it is missing."""
        process = self._process
        if process is None or process.stdin is None:
            raise self._fail("git is not running")
        try:
            process.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            process.stdin.flush()
            header = self._read_line().split(b" ")
        except (OSError, UnicodeEncodeError):
            raise self._fail(self._stderr() or "git stopped answering") from None
        if len(header) == 2 and header[1] in (b"missing", b"ambiguous"):
            return None
        if len(header) != 3 or not header[2].isdigit():
            raise self._fail(f"unexpected answer from git cat-file: {b' '.join(header)!r}")
        content = self._read_exact(int(header[2]) + 1)[:-1]
        return header[0].decode("ascii", "replace"), content

    def _fill(self) -> None:
        process = self._process
        if process is None or process.stdout is None:
            raise self._fail("git is not running")
        fd = process.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], self._timeout)
        if not ready:
            raise self._fail(f"git did not answer within {self._timeout:g} s")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise self._fail(self._stderr() or "git ended")
        self._buffer += chunk

    def _read_line(self) -> bytes:
        while b"\n" not in self._buffer:
            self._fill()
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        return line

    def _read_exact(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._fill()
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _stderr(self) -> str:
        """git's last error line, once it has ended (empty while it still runs)."""
        process = self._process
        if process is None or process.stderr is None:
            return ""
        try:
            process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return ""
        lines = process.stderr.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else ""

    # --- answers -------------------------------------------------------------------------------

    def _entries(self, tree: str) -> _Entries:
        entries = self._trees.get(tree)
        if entries is None:
            found = self._object(tree)
            if found is None:
                raise self._fail(f"tree {tree} is missing")
            try:
                entries = _parse_tree(found[1], len(tree) // 2)
            except ValueError:
                raise self._fail(f"tree {tree} cannot be read") from None
            self._trees[tree] = entries
        return entries

    def _tree_link(self, path: str) -> str | None:
        names = path.split("/")
        tree = self._root_tree
        for index, name in enumerate(names):
            try:
                entry = self._entries(tree).get(name.encode("utf-8", "surrogateescape"))
            except UnicodeEncodeError:
                return None  # no name in a git tree spells this
            if entry is None:
                return None
            mode, object_id = entry
            if index < len(names) - 1:
                if mode != _TREE_MODE:
                    return None
                tree = object_id
            elif mode == _LINK_MODE:
                found = self._object(object_id)
                if found is None:
                    raise self._fail(f"link {path} has no target object")
                return found[1].decode("utf-8", "surrogateescape")
        return None

    def _tree_file(self, path: str) -> FileAtRevision:
        names = path.split("/")
        tree = self._root_tree
        for index, name in enumerate(names):
            try:
                entry = self._entries(tree).get(name.encode("utf-8", "surrogateescape"))
            except UnicodeEncodeError:
                return FileAtRevision(Presence.MISSING)  # no name in a git tree spells this
            if entry is None:
                return FileAtRevision(Presence.MISSING)
            mode, object_id = entry
            if mode == _LINK_MODE:
                return FileAtRevision(Presence.UNAVAILABLE, detail=f"{path}: a symbolic link")
            if index < len(names) - 1:
                if mode != _TREE_MODE:
                    return FileAtRevision(Presence.MISSING)
                tree = object_id
            elif mode == _TREE_MODE:
                return FileAtRevision(Presence.MISSING, detail=f"{path}: a directory")
            elif mode not in _FILE_MODES:
                return FileAtRevision(Presence.UNAVAILABLE, detail=f"{path}: not a regular file")
        found = self._object(object_id)
        if found is None:
            return FileAtRevision(Presence.UNAVAILABLE, detail=f"{path}: blob missing")
        if len(found[1]) > self._max_bytes:
            return FileAtRevision(
                Presence.UNAVAILABLE, detail=f"{path}: over {self._max_bytes} bytes"
            )
        return FileAtRevision(Presence.FOUND, found[1], blob=object_id)


class GitTrees(_Closing):
    """One ``GitTree`` per root, all at one revision; ``close`` ends their git processes.
    ``resolve`` (root, name → object id), when given, is how the repository under each root
    resolves the revision's name (DESIGN §6 rule 22)."""

    def __init__(
        self,
        revision: str,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        resolve: Callable[[str, str], str] | None = None,
    ) -> None:
        self._revision = revision
        self._timeout = timeout
        self._resolve = resolve
        self._trees: dict[str, GitTree] = {}

    def __call__(self, root: str) -> GitTree:
        tree = self._trees.get(root)
        if tree is None:
            revision = self._resolve(root, self._revision) if self._resolve else self._revision
            tree = self._trees[root] = GitTree(root, revision, self._timeout)
        return tree

    def close(self) -> None:
        for tree in self._trees.values():
            tree.close()


def git_toplevel(directory: Path, timeout: float = DEFAULT_TIMEOUT) -> str | None:
    """The top level of the Git work tree ``directory`` is in, or ``None``."""
    try:
        result = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "--show-toplevel"],
            capture_output=True,
            check=False,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = result.stdout.decode("utf-8", "surrogateescape").strip()
    return top if result.returncode == 0 and top.startswith("/") else None
