"""`coverage-gate snapshot`: write the working tree as a git tree, the revision of a review of
uncommitted changes (DESIGN §6 rule 15)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coverage_gate.commands._common import errors_to_exit
from coverage_gate.commands._options import snapshot_revision
from coverage_gate.edges.stdio import write_stdout

__all__ = ["snapshot"]


def snapshot(
    repo_root: Annotated[
        Path | None,
        typer.Option(help="A folder of the work tree to write (default: the current directory's)."),
    ] = None,
) -> None:
    """Write the working tree as a git tree and print its id: the revision to review.

    Run it before the reviewer starts, and give the id to `run`, `record` and `reconcile` as
    --revision: files are then read from that tree, never from the working tree the reviewer
    could change. Every file git would add is in it (new ones too; .gitignore respected); the
    repository's own index and history are left as they are, and the same content always gives
    the same id. Exit code 3 when the folder is not in a git work tree."""
    with errors_to_exit():
        write_stdout(snapshot_revision(repo_root) + "\n", "tree id")
