"""`coverage-gate demo`: record and reconcile the bundled example."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from coverage_gate.commands._common import errors_to_exit, say
from coverage_gate.edges.stdio import require_stdout, write_stdout
from coverage_gate.errors import BadInputError

__all__ = ["demo"]


def demo(
    keep: Annotated[Path | None, typer.Option(help="Keep the demo's files in this folder.")] = None,
) -> None:
    """Record and reconcile the bundled example: an honest and a lying pi reviewer."""
    from coverage_gate.examples.demo import run_demo  # noqa: PLC0415 - only the demo needs it

    def out(text: str) -> None:
        write_stdout(text + "\n", "demo decisions")

    with errors_to_exit():
        require_stdout("demo decisions")
        if keep is not None:
            _make_folder(keep)
            run_demo(keep, say, out)
            say(f"the demo's streams, evidence and decisions are in {keep}")
        else:
            with tempfile.TemporaryDirectory(prefix="coverage-gate-demo-") as folder:
                run_demo(Path(folder), say, out)


def _make_folder(folder: Path) -> None:
    """The folder --keep names, made when missing; a file or an unwritable place is bad input."""
    if folder.exists() and not folder.is_dir():
        raise BadInputError(f"--keep {folder}: exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInputError(
            f"--keep {folder}: cannot be made ({error.strerror or error})"
        ) from None
