"""Options `record` and `run` share, and the recording settings they build."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from coverage_gate.commands._common import say
from coverage_gate.contracts import defaults
from coverage_gate.errors import BadInputError, UsageError

if TYPE_CHECKING:
    from coverage_gate.contracts import model
    from coverage_gate.contracts.evidence_doc import Checkout
    from coverage_gate.core.diffmap import DiffIndex
    from coverage_gate.record.recording import RecordSettings, RootChoice

__all__ = [
    "DEFAULT_LINE_BYTES",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_ISSUES",
    "AgentOption",
    "DiffOption",
    "MaxFilesOption",
    "MaxIssuesOption",
    "MaxLineBytesOption",
    "RepoRootOption",
    "RevisionOption",
    "RevisionRepositories",
    "RunRevisionOption",
    "SnapshotOption",
    "checkout_note",
    "checkout_notes",
    "dirty_note",
    "record_settings",
    "resolved_revision",
    "root_note",
    "snapshot_revision",
]

RevisionOption = Annotated[
    str, typer.Option(help="The commit (head SHA) or snapshot tree under review.")
]
RunRevisionOption = Annotated[
    str,
    typer.Option(
        help="The commit (head SHA) under review, or the tree `coverage-gate snapshot` wrote of "
        "uncommitted changes (required unless --snapshot)."
    ),
]
SnapshotOption = Annotated[
    bool,
    typer.Option(
        "--snapshot",
        help="Review the working tree as it is now: write it as a git tree before the reviewer "
        "starts and use that tree as the revision (its id is said on stderr and is the "
        "evidence's revision).",
    ),
]
RepoRootOption = Annotated[
    Path | None,
    typer.Option(
        help="Repository root that absolute paths are made relative to (default: the stream's "
        "own working directory when its format records one, else the Git top level of the "
        "current directory)."
    ),
]
DiffOption = Annotated[
    Path | None,
    typer.Option(
        help="The pinned unified diff cr_diff pages through: enables per-file diff evidence "
        "and depth (which changed lines the reviewer's calls showed)."
    ),
]
AgentOption = Annotated[str | None, typer.Option(help="Reviewer name for the invoke_agent span.")]
MaxFilesOption = Annotated[
    int, typer.Option(min=1, metavar="<int>", help="Bound on distinct files kept.")
]
MaxIssuesOption = Annotated[
    int, typer.Option(min=0, metavar="<int>", help="Bound on sampled call-level issues.")
]
MaxLineBytesOption = Annotated[
    int,
    typer.Option(
        min=1024,
        metavar="<bytes>",
        help="Longest tool-event line held whole; a longer one is read as it flows, keeping only "
        "the fields used.",
    ),
]

DEFAULT_MAX_FILES = defaults.MAX_FILES
DEFAULT_MAX_ISSUES = defaults.MAX_ISSUES
DEFAULT_LINE_BYTES = defaults.MAX_LINE_BYTES


def resolved_revision(revision: str, repo_root: Path | None, *, quiet: bool = False) -> str:
    """``--revision`` as the object id it names in the repository under ``--repo-root``
    (DESIGN §6 rule 22), resolved once, here; a revision that repository does not hold is bad
    input. Without ``--repo-root``, or when it holds no repository, the name stands as given
    (said on stderr when it is not an object id, unless ``quiet``: ``reconcile`` keeps its
    stderr to what it decided)."""
    from coverage_gate.edges.content import RevisionNotHeldError, resolve_revision  # noqa: PLC0415 - start-up

    if repo_root is None:
        return revision
    try:
        found = resolve_revision(repo_root, revision)
    except RevisionNotHeldError:
        raise BadInputError(
            f"--revision {revision!r}: the repository at {repo_root} holds no such commit or tree"
        ) from None
    if found is None:
        if not quiet and not _OBJECT_ID.fullmatch(revision):
            say(
                f"coverage-gate: --revision {revision!r} is recorded as given: no git repository "
                f"at {repo_root} to resolve it in"
            )
        return revision
    if found != revision and not quiet:
        say(f"coverage-gate: --revision {revision} is {found}")
    return found


_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class RevisionRepositories:
    """The repository under each root a recording places paths under (``Repositories``): the
    revision resolved there once (``resolved_revision``: said on stderr; bad input where that
    repository does not hold it) and its checkout read once, however the root was found."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], str] = {}
        self._checkouts: dict[tuple[str, str], Checkout | None] = {}

    def resolve(self, root: str, name: str) -> str:
        key = (root, name)
        if key not in self._ids:
            self._ids[key] = resolved_revision(name, Path(root))
        return self._ids[key]

    def checkout(self, root: str, revision: str) -> Checkout | None:
        from coverage_gate.edges.content import checkout_of  # noqa: PLC0415 - start-up

        key = (root, revision)
        if key not in self._checkouts:
            self._checkouts[key] = checkout_of(Path(root), revision)
        return self._checkouts[key]


def record_settings(
    *,
    revision: str,
    repo_root: Path | None,
    diff: Path | None,
    agent: str | None,
    max_files: int,
    max_issues: int,
    max_line_bytes: int,
    started: bool = True,
) -> RecordSettings:
    """Check the shared options and build the settings; a bad one is bad input. The revision
    is resolved in the repository under ``--repo-root`` now; with no ``--repo-root``, in the
    one under the root the stream's paths are placed under, once that is known (``at``), or
    now in the current directory's when the reviewer has not ``started`` (``run``: before it
    can move ``HEAD``)."""
    from coverage_gate.contracts.evidence_doc import Bounds  # noqa: PLC0415 - start-up
    from coverage_gate.edges.content import RepositoryContents  # noqa: PLC0415 - start-up
    from coverage_gate.edges.gittree import git_toplevel  # noqa: PLC0415 - start-up
    from coverage_gate.record.recording import RecordSettings  # noqa: PLC0415 - start-up

    if not revision:
        raise UsageError("--revision is required: evidence is bound to the commit under review")
    repositories = RevisionRepositories()
    settings = RecordSettings(
        revision=revision,
        repo_root=str(repo_root.absolute()) if repo_root is not None else None,
        default_root=None if repo_root is not None else git_toplevel(Path.cwd()),
        bounds=Bounds(max_files=max_files, max_issues=max_issues),
        diff=_diff_index(diff) if diff else None,
        agent=agent,
        max_line_bytes=max_line_bytes,
        # depth and the content checks read the files at the revision (git objects) under the
        # root, as the repository there resolves it
        content=RepositoryContents(revision, repositories.resolve),
        repository=repositories,
    )
    if repo_root is not None:
        return settings.at(settings.repo_root)
    return settings if started else settings.at(settings.default_root)


_DIFF_MARKS = (b"diff --git ", b"--- ", b"+++ ", b"@@ ")


def _diff_index(path: Path) -> DiffIndex:
    """The pinned diff; a non-empty file with no line of a unified diff is bad input."""
    from coverage_gate.core.diffmap import DiffIndex  # noqa: PLC0415 - start-up
    from coverage_gate.edges.files import read_bytes  # noqa: PLC0415 - start-up

    data = read_bytes(path, "diff")
    if data.strip() and not any(line.startswith(_DIFF_MARKS) for line in data.splitlines()):
        raise BadInputError(
            f"diff {path}: not a unified diff (no 'diff --git', '---', '+++' or '@@' line)"
        )
    return DiffIndex.parse(data)


def snapshot_revision(repo_root: Path | None) -> str:
    """The working tree under the root (``--repo-root``, else the Git top level of the current
    directory) written as a tree: the revision of a review of uncommitted changes."""
    from coverage_gate.edges.content import SnapshotError, snapshot_tree  # noqa: PLC0415 - start-up

    root = repo_root if repo_root is not None else Path.cwd()
    try:
        return snapshot_tree(root)
    except SnapshotError as error:
        raise BadInputError(f"cannot write the working tree as the revision: {error}") from None


def dirty_note(root: str | None, revision: str) -> str | None:
    """The warning for a revision that is the checked-out commit while the working tree holds
    changes: what a reviewer there read may not be that commit, which is what is checked."""
    from coverage_gate.edges.content import dirty_checkout  # noqa: PLC0415 - start-up

    if root is None or not dirty_checkout(Path(root), revision):
        return None
    return (
        f"coverage-gate: warning: --revision {revision} is the checked-out commit and the working "
        f"tree under {root} has uncommitted changes: files are read from the commit, not from "
        "the working tree. If those changes are under review, write them as a tree before the "
        "reviewer starts (`coverage-gate snapshot`, or `run --snapshot`) and pass its id."
    )


def checkout_note(
    checkout: Checkout | model.Checkout | None, revision: str, root: str | None
) -> str | None:
    """The warning for a checkout (``HEAD``) that is another commit than the revision: a
    reviewer reading the working tree read that commit's files, while the revision's are
    checked. A pull request's merge commit (what ``actions/checkout`` checks out for a
    ``pull_request`` event unless given ``ref``) is named as one."""
    from coverage_gate.contracts.enums import CheckoutRelation  # noqa: PLC0415 - start-up

    if checkout is None or checkout.relation is CheckoutRelation.REVISION:
        return None
    what = (
        "a merge commit of it (a pull request's merge ref, refs/pull/N/merge)"
        if checkout.relation is CheckoutRelation.MERGE_OF_REVISION
        else "another commit"
    )
    return (
        f"coverage-gate: warning: the checkout under {root} (HEAD {checkout.head}) is {what}, "
        f"not --revision {revision}: what a reviewer read from the working tree is checked "
        "against the revision's files. Check out the revision before the reviewer starts (on "
        "GitHub: actions/checkout with ref: the pull request's head sha)."
    )


def checkout_notes(
    checkout: Checkout | model.Checkout | None, revision: str, root: str | None
) -> list[str]:
    """What ``record`` and ``run`` warn of about the checkout the reviewer read from: another
    commit than the revision (``checkout_note``), or the revision with uncommitted changes
    (``dirty_note``)."""
    notes = (checkout_note(checkout, revision, root), dirty_note(root, revision))
    return [note for note in notes if note is not None]


def root_note(root: RootChoice) -> str:
    """The stderr line saying which repository root paths were placed under, and why."""
    from coverage_gate.record.recording import RootSource  # noqa: PLC0415 - start-up

    why = {
        RootSource.OPTION: "--repo-root",
        RootSource.STREAM: "the working directory the stream records",
        RootSource.STREAM_IN_DEFAULT: "the Git top level of the current directory, which holds "
        "the working directory the stream records",
        RootSource.DEFAULT: "the Git top level of the current directory; the stream records no "
        "working directory",
    }
    if root.path is None:
        return (
            "coverage-gate: no repository root (no --repo-root, no working directory in the "
            "stream, current directory not in a Git work tree): absolute paths cannot be placed"
        )
    return f"coverage-gate: repository root {root.path} ({why[root.source]})"
