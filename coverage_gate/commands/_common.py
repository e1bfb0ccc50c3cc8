"""What the commands share: one-line errors with their exit codes, the run's telemetry, opening a
stream, writing a document.

Start-up: a command's --help loads its module to show its options (``coverage-gate --help``
loads every command's, for their one-line help), so these modules import at their top only
typer, the standard library and light modules of ours (the enums, errors, stdio, telemetry
set-up); pydantic models, adapters, the OTel SDK and the rest are imported in the function
bodies that use them. ``tests/test_startup.py`` holds the rule."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import typer

from coverage_gate.edges.stdio import stdin_bytes, write_stdout
from coverage_gate.errors import BadInputError, CoverageGateError, ExitCode

if TYPE_CHECKING:
    from coverage_gate.telemetry.otel_setup import Telemetry

__all__ = [
    "DECISION",
    "EVIDENCE",
    "QUIET_ENV",
    "emit_document",
    "error_line",
    "errors_to_exit",
    "format_names",
    "info",
    "open_stream",
    "quiet",
    "say",
    "set_command",
    "telemetry_session",
]

EVIDENCE = "evidence document"
DECISION = "decision"


def say(message: str) -> None:
    typer.echo(message, err=True)


#: Set by ``coverage-gate -q`` (or ``COVERAGE_GATE_QUIET=1``): ``info`` lines are not written.
QUIET_ENV = "COVERAGE_GATE_QUIET"


def quiet() -> bool:
    return os.environ.get(QUIET_ENV, "") not in ("", "0")


#: The command this process runs, as its error lines name it (``set_command``).
_COMMAND: list[str] = ["coverage-gate"]


def set_command(words: list[str]) -> None:
    """Name the command this process runs (``["flags", "pull"]``), once, from the command line."""
    _COMMAND[:] = ["coverage-gate", *words]


def error_line(message: str) -> str:
    """The one style of an error line: ``coverage-gate COMMAND: error: MESSAGE`` (a usage error
    is click's own, with the usage line above it)."""
    return f"{' '.join(_COMMAND)}: error: {message}"


def info(message: str) -> None:
    """A line that says what a run did (the repository root chosen, the evidence summary, where
    a file went), for a person at a terminal; ``-q`` leaves it out of a CI log. Warnings and
    errors go through ``say`` and are always written."""
    if not quiet():
        say(message)


@contextlib.contextmanager
def errors_to_exit(telemetry: Telemetry | None = None, repo: str = "") -> Iterator[None]:
    """Known errors become a one-line message and their exit code, never a traceback; with
    ``telemetry``, they are also counted."""
    try:
        yield
    except CoverageGateError as error:
        say(error_line(str(error)))
        if telemetry is not None:
            from coverage_gate.rollout.metrics import ErrorKind, record_error  # noqa: PLC0415 - start-up

            kind = (
                ErrorKind.BAD_CONFIGURATION
                if error.exit_code is ExitCode.BAD_CONFIG
                else ErrorKind.BAD_INPUT
            )
            with contextlib.suppress(Exception):  # counting an error must not add another
                record_error(telemetry.meter(), repo=repo, kind=kind)
        raise typer.Exit(int(error.exit_code)) from None


def format_names() -> str:
    from coverage_gate.adapters import ADAPTERS, DOCUMENT_FORMATS  # noqa: PLC0415 - start-up

    return ", ".join(sorted([*ADAPTERS, *DOCUMENT_FORMATS]))


@contextlib.contextmanager
def telemetry_session() -> Iterator[Telemetry]:
    """The run's providers (OTLP when configured, else local OTLP JSON files), always shut down
    within their short budget."""
    from coverage_gate.telemetry import otel_setup  # noqa: PLC0415 - start-up

    telemetry = otel_setup.setup(os.environ)
    try:
        yield telemetry
    finally:
        telemetry.shutdown()


@contextlib.contextmanager
def open_stream(name: str) -> Iterator[BinaryIO]:
    if name == "-":
        yield stdin_bytes("stream")
        return
    try:
        handle = Path(name).open("rb")  # noqa: SIM115 - closed by the with below
    except FileNotFoundError:
        raise BadInputError(f"stream {name}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"stream {name}: is a directory") from None
    except OSError as error:
        raise BadInputError(f"stream {name}: cannot be read ({error.strerror})") from None
    with handle:
        yield handle


def emit_document(text: str, output: Path | None, what: str) -> None:
    if output is None:
        write_stdout(text, what)
        return
    from coverage_gate.edges.files import write_atomic  # noqa: PLC0415 - start-up

    try:
        write_atomic(output, text)
    except OSError as error:
        raise BadInputError(f"output {output}: cannot be written ({error.strerror})") from None
