"""`coverage-gate receipts verify DIR`: every receipt decides again to the same bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coverage_gate.commands._choice import Command, Group
from coverage_gate.commands._common import error_line, errors_to_exit, say
from coverage_gate.edges.stdio import write_stdout
from coverage_gate.errors import BadInputError, ExitCode

__all__ = ["receipts_app", "verify"]

receipts_app = typer.Typer(
    cls=Group,
    help="Review receipts written by `reconcile --receipt DIR`.",
    no_args_is_help=True,
)


@receipts_app.command("verify", cls=Command)
def verify(
    folder: Annotated[Path, typer.Argument(help="The receipt folder (reconcile --receipt DIR).")],
) -> None:
    """Check that each receipt's content hashes to its name and decides again, offline, to the
    same decision bytes. Exit 0 when all do (the count on stdout), 3 when any does not (each one
    named, and the count, on stderr)."""
    from coverage_gate.commands.reconcile import decide  # noqa: PLC0415
    from coverage_gate.rollout import receipt_store, receipts  # noqa: PLC0415 - pydantic contracts

    with errors_to_exit():
        found = receipt_store.listing(folder)
        if not found.paths:
            raise BadInputError(f"receipt folder {folder}: no receipt (*{receipts.SUFFIX}) in it")
        failed = 0
        for path in found.paths:
            try:
                problems = receipts.verify(receipt_store.read_content(path), path.name, decide)
            except BadInputError as error:
                problems = [str(error).removeprefix(f"receipt {path}: ")]
            except receipts.ReceiptError as error:
                problems = [str(error)]
            if not receipt_store.well_named(path):
                problems.insert(0, "its name is not the SHA-256 of a receipt's content")
            if problems:
                failed += 1
                for problem in problems:
                    say(f"coverage-gate: receipt {path} fails: {problem}")
        skipped = (
            f"; {found.skipped} other file(s) skipped (not *{receipts.SUFFIX})"
            if found.skipped
            else ""
        )
        verified = len(found.paths) - failed
        summary = f"{verified} of {len(found.paths)} receipt(s) verified{skipped}"
        if failed:
            say(error_line(summary))  # exit 3: nothing on stdout
        else:
            write_stdout(f"{summary}\n", "verify summary")
    if failed:
        raise typer.Exit(int(ExitCode.BAD_INPUT))
