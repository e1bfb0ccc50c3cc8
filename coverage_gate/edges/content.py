"""Files' content at the revision under review: the edge behind the ``ContentSource`` port of
depth and the content checks, and the revision as an immutable object (DESIGN §6 rule 15).

Content is read from git objects only: the blobs of the commit under review, or of a tree written
before the reviewer started when uncommitted changes are under review (``snapshot_tree``: a
temporary index filled from the working tree, then ``git write-tree``). Never from the working
tree itself, which a reviewer can change while or after it runs: a reviewer that edits the
checkout does not make its edits "the revision".

Why a temporary index and not ``git stash create``: ``stash create`` leaves untracked files out
(a new file under review would be missing from the revision), writes a commit whose parents and
time vary, and gives nothing at all for a clean tree. A temporary index plus ``git add -A``
takes every file the review sees (``.gitignore`` respected), never touches the user's own index,
and writes a tree whose id depends on the content alone: the same working tree gives the same id.

Whatever goes wrong (no git, not a repository, an unknown revision, a missing file, a file over
the size bound, a slow git) gives ``None``: content not obtainable, so that read is unchecked and
its lines, and its file's depth, are unknown, never unseen. Nothing here raises, except
``snapshot_tree``, whose caller must know that no revision could be written.

``RepositoryContents`` gives one per repository root (the root is chosen per stream);
``MappingContent`` is the in-memory fake for tests.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from coverage_gate.contracts.enums import CheckoutRelation
from coverage_gate.edges.gittree import DEFAULT_TIMEOUT, MAX_CONTENT_BYTES

if TYPE_CHECKING:
    from coverage_gate.contracts.evidence_doc import Checkout

GIT_TIMEOUT_SECONDS = 10.0

__all__ = [
    "GIT_TIMEOUT_SECONDS",
    "MAX_CONTENT_BYTES",
    "MappingContent",
    "RepositoryContent",
    "RepositoryContents",
    "RevisionNotHeldError",
    "SnapshotError",
    "checkout_of",
    "dirty_checkout",
    "resolve_revision",
    "snapshot_tree",
]


class SnapshotError(Exception):
    """The working tree could not be written as a tree object."""


def _git(
    root: Path, *args: str, env: Mapping[str, str] | None = None, stdin: bytes | None = None
) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=DEFAULT_TIMEOUT,
            check=False,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            env=None if env is None else {**os.environ, **env},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


class RevisionNotHeldError(Exception):
    """The repository does not hold the revision named: nothing of it can be checked."""


def resolve_revision(root: Path, revision: str) -> str | None:
    """The object id ``revision`` names in the repository under ``root`` (DESIGN §6 rule 22):
    a commit's (``HEAD``, a branch, a tag, an abbreviated id), else a tree's (a snapshot).
    ``None`` when ``root`` holds no git repository; ``RevisionNotHeldError`` when it does and the
    revision is not one of its commits or trees."""
    if _git(root, "rev-parse", "--git-dir") is None:
        return None
    if _revision_name(revision):
        for kind in ("commit", "tree"):
            found = _git(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{{kind}}}")
            if found is not None:
                return found.decode("ascii").strip()
    raise RevisionNotHeldError(revision)


def snapshot_tree(root: Path) -> str:
    """The working tree under ``root`` written as a git tree object: its id."""
    if not root.exists():
        raise SnapshotError(f"{root}: no such folder")
    if not root.is_dir():
        raise SnapshotError(f"{root}: a file, not a folder (give the repository's folder)")
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        raise SnapshotError(f"{root}: not in a git work tree")
    root = Path(top.decode("utf-8", "surrogateescape").strip())
    with tempfile.TemporaryDirectory(prefix="coverage-gate-index-") as folder:
        env = {"GIT_INDEX_FILE": str(Path(folder) / "index")}
        head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{tree}")
        if head is not None and _git(root, "read-tree", head.decode().strip(), env=env) is None:
            raise SnapshotError(f"{root}: git read-tree failed")
        if _git(root, "add", "-A", "--", ".", env=env) is None:
            raise SnapshotError(f"{root}: git add -A failed on a temporary index")
        tree = _git(root, "write-tree", env=env)
    if tree is None:
        raise SnapshotError(f"{root}: git write-tree failed")
    return tree.decode("ascii").strip()


def dirty_checkout(root: Path, revision: str) -> bool:
    """Whether ``revision`` is the checked-out commit under ``root`` and the working tree holds
    changes it does not: what a reviewer there read may not be the revision."""
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    wanted = _git(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if head is None or wanted is None or head != wanted:
        return False
    status = _git(root, "status", "--porcelain", "--untracked-files=normal")
    return bool(status and status.strip())


def checkout_of(root: Path, revision: str) -> Checkout | None:
    """The commit checked out under ``root`` (``HEAD``) and what it is to ``revision``: the
    revision, a merge commit with the revision among its parents (GitHub's
    ``refs/pull/N/merge``), or another commit. ``None`` when there is nothing to compare: no
    repository, no commit checked out, or a revision that is no commit of it (a snapshot tree)."""
    # the evidence document's module only here: `reconcile` resolves revisions through this
    # module and reads evidence through the contracts, never through the plain document
    from coverage_gate.contracts.evidence_doc import Checkout  # noqa: PLC0415 - start-up

    if not _revision_name(revision):
        return None
    wanted = _git(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    listed = _git(root, "rev-list", "--parents", "-n", "1", "HEAD")
    if wanted is None or listed is None or not listed.split():
        return None
    head, *parents = listed.decode("ascii").split()
    if head == wanted.decode("ascii").strip():
        relation = CheckoutRelation.REVISION
    elif len(parents) > 1 and wanted.decode("ascii").strip() in parents:
        relation = CheckoutRelation.MERGE_OF_REVISION
    else:
        relation = CheckoutRelation.OTHER_COMMIT
    return Checkout(head=head, relation=relation)


class RepositoryContent:
    """Content at ``revision`` (a commit or a tree) under ``root``, from git objects: a regular
    file's blob (a symbolic link, a directory or a submodule has no content here)."""

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
        self._readable: bool | None = None

    def _tree_known(self) -> bool:
        """Whether the revision is a commit or tree of a repository under the root (asked of git
        once: a stream's every read of a root that is no repository costs no process)."""
        if self._readable is None:
            self._readable = _revision_name(self.revision) and (
                _git(self.root, "rev-parse", "--verify", "--quiet", f"{self.revision}^{{tree}}")
                is not None
            )
        return self._readable

    def content(self, path: str) -> bytes | None:
        return self.prefetch([path]).get(path)

    def same_tree(self, commit: str) -> bool | None:
        """Whether ``commit`` names the revision's tree (the revision itself, or a snapshot of a
        clean checkout of it): a stream's own commit compared with the revision. ``None`` when
        the repository here cannot tell (no repository, or one that holds neither)."""
        if not self._tree_known():
            return None
        ours = _git(self.root, "rev-parse", "--verify", "--quiet", f"{self.revision}^{{tree}}")
        theirs = (
            _git(self.root, "rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}")
            if _revision_name(commit)
            else None
        )
        if ours is None or theirs is None:
            return False if ours is not None and theirs is None else None
        return ours.strip() == theirs.strip()

    def prefetch(self, paths: Sequence[str]) -> dict[str, bytes]:
        """The regular files among ``paths`` at the revision, read in one ``git ls-tree`` and
        one ``git cat-file --batch``; the others are left out."""
        wanted = [p for p in dict.fromkeys(paths) if p and not p.startswith("/") and "\0" not in p]
        if not wanted or not self._tree_known():
            return {}
        listed = _git(
            self.root, "ls-tree", "-z", "--long", "--full-tree", self.revision, "--", *wanted
        )
        if not listed:
            return {}
        blobs: dict[str, str] = {}
        for entry in listed.split(b"\0"):
            head, _, name = entry.partition(b"\t")
            fields = head.split()
            path = name.decode("utf-8", "surrogateescape")
            if path not in wanted or len(fields) != 4:
                continue
            mode, kind, object_id, size = fields
            if mode not in (b"100644", b"100755") or kind != b"blob" or not size.isdigit():
                continue
            if int(size) <= self.max_bytes:
                blobs[path] = object_id.decode("ascii")
        return self._blobs(blobs)

    def _blobs(self, blobs: Mapping[str, str]) -> dict[str, bytes]:
        """Each blob's bytes, through one ``git cat-file --batch``."""
        if not blobs:
            return {}
        request = "".join(f"{object_id}\n" for object_id in blobs.values()).encode("ascii")
        answer = _git(self.root, "cat-file", "--batch", stdin=request)
        if answer is None:
            return {}
        found: dict[str, bytes] = {}
        position = 0
        by_id = {object_id: path for path, object_id in blobs.items()}
        while position < len(answer):
            end = answer.find(b"\n", position)
            if end < 0:
                break
            header = answer[position:end].split()
            if len(header) != 3 or not header[2].isdigit():
                break
            size = int(header[2])
            data = answer[end + 1 : end + 1 + size]
            path = by_id.get(header[0].decode("ascii", "replace"))
            if path is not None and len(data) == size:
                found[path] = data
            position = end + 1 + size + 1
        return found


def _revision_name(revision: str) -> bool:
    """A name git can only take as a revision: never an option, no spaces or control bytes."""
    return (
        bool(revision)
        and not revision.startswith("-")
        and revision.isprintable()
        and not any(ch.isspace() for ch in revision)
    )


class RepositoryContents:
    """``RepositoryContent`` at one revision, one per root, made when first asked for.
    ``resolve`` (root, name → object id) gives the revision as the repository under each root
    resolves it, when it was given as a name that could only be resolved once the root was
    known (DESIGN §6 rule 22)."""

    def __init__(self, revision: str, resolve: Callable[[str, str], str] | None = None) -> None:
        self.revision = revision
        self._resolve = resolve
        self._by_root: dict[str, RepositoryContent] = {}

    def __call__(self, root: str) -> RepositoryContent:
        found = self._by_root.get(root)
        if found is None:
            revision = self._resolve(root, self.revision) if self._resolve else self.revision
            found = self._by_root[root] = RepositoryContent(root, revision)
        return found


class MappingContent:
    """Content from a mapping of repo-relative paths to bytes; counts what was asked for."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = dict(files)
        self.asked: list[str] = []

    def content(self, path: str) -> bytes | None:
        self.asked.append(path)
        return self.files.get(path)
