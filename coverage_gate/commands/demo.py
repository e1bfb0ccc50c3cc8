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


#: Reviews per repository in the simulated rollout: two weeks of a busy repository's shadow mode.
ROLLOUT_REVIEWS = 200


def demo(
    keep: Annotated[Path | None, typer.Option(help="Keep the demo's files in this folder.")] = None,
    rollout: Annotated[
        Path | None,
        typer.Option(
            help="Instead, write the telemetry of a simulated rollout (six repositories in "
            "shadow mode, each failing a different readiness check, or none) into this new or "
            "empty folder, and print its readiness report; `coverage-gate report "
            "--telemetry-dir FOLDER --format html -o report.html` makes its page.",
        ),
    ] = None,
) -> None:
    """Record and reconcile the bundled example: an honest and a lying pi reviewer."""
    from coverage_gate.examples.demo import run_demo  # noqa: PLC0415 - only the demo needs it

    def out(text: str) -> None:
        write_stdout(text + "\n", "demo decisions")

    with errors_to_exit():
        require_stdout("demo decisions")
        if rollout is not None:
            _simulated_rollout(rollout)
            return
        if keep is not None:
            _make_folder(keep)
            run_demo(keep, say, out)
            say(f"the demo's streams, evidence and decisions are in {keep}")
        else:
            with tempfile.TemporaryDirectory(prefix="coverage-gate-demo-") as folder:
                run_demo(Path(folder), say, out)


def _simulated_rollout(folder: Path) -> None:
    """The simulated rollout's telemetry into ``folder`` (new or empty: a report of it must hold
    nothing else), and its readiness report on stdout."""
    from coverage_gate.rollout.report import (  # noqa: PLC0415 - only this option needs them
        Criteria,
        build_report,
        load_folder,
        render_text,
    )
    from coverage_gate.rollout.simulation import simulate  # noqa: PLC0415

    if folder.is_dir() and any(folder.iterdir()):
        raise BadInputError(f"--rollout {folder}: not empty (the report would mix in its files)")
    _make_folder(folder, "--rollout")
    simulate(folder, ROLLOUT_REVIEWS)
    report = build_report(load_folder(folder), Criteria(), list_flagged=False)
    write_stdout(render_text(report), "rollout report")
    say(f"the simulated rollout's telemetry is in {folder}; its page (the html extra):")
    say(f"  coverage-gate report --telemetry-dir {folder} --format html -o report.html")


def _make_folder(folder: Path, option: str = "--keep") -> None:
    """The folder ``option`` names, made when missing; a file or an unwritable place is bad
    input."""
    if folder.exists() and not folder.is_dir():
        raise BadInputError(f"{option} {folder}: exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInputError(
            f"{option} {folder}: cannot be made ({error.strerror or error})"
        ) from None
