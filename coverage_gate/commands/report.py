"""``coverage-gate report``: the shadow comparison read from the local telemetry folder.

Registered by the main CLI as a plain command, ``app.command("report")(report)``, so that its
usage shows no subcommands; ``report_app`` runs it alone.

    coverage-gate report [--telemetry-dir D] [--format text|json] [--list would_downgrade]
                         [--min-approvals N] [--min-days D] [--min-evidence F]
                         [--max-errors N] [--max-fallbacks N] [--max-would-downgrade-rate F]
                         [--depth-policy accept|any-hunk|all-hunks]

Exit codes: 0 report printed (whatever the readiness), 3 bad input (no such telemetry folder,
or a closed or unwritable stdout), 4 bad configuration (criteria out of range).
"""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from coverage_gate import defaults
from coverage_gate.commands._choice import HELP_WIDTH, Group, choice
from coverage_gate.enums import DepthPolicy
from coverage_gate.errors import BadInputError
from coverage_gate.otel_setup import TELEMETRY_DIR_ENV, default_telemetry_dir
from coverage_gate.stdio import require_stdout, write_stdout

EXIT_OK = 0
EXIT_BAD_INPUT = 3
EXIT_BAD_CONFIG = 4


class ReportFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class Listing(StrEnum):
    WOULD_DOWNGRADE = "would_downgrade"


report_app = typer.Typer(
    cls=Group,
    add_completion=False,
    help="Per repository: what the coverage check did or would do, and readiness to enforce.",
    rich_markup_mode=None,  # plain help, as the main command's (start-up)
    context_settings=HELP_WIDTH,
)


def _fail(message: str, code: int) -> typer.Exit:
    sys.stderr.write(f"coverage-gate report: {message}\n")
    return typer.Exit(code)


@report_app.callback(invoke_without_command=True)
def report(
    *,
    telemetry_dir: Annotated[
        Path | None,
        typer.Option(
            help=f"Folder of OTLP JSON lines (default: ${TELEMETRY_DIR_ENV}, else "
            "$XDG_STATE_HOME or ~/.local/state, then coverage-gate/telemetry)."
        ),
    ] = None,
    output: Annotated[
        ReportFormat,
        typer.Option(
            "--format", **choice(ReportFormat), help="text for people, json for machines."
        ),
    ] = ReportFormat.TEXT,
    listing: Annotated[
        Listing | None,
        typer.Option(
            "--list", **choice(Listing), help="Also list each reviewer decision the check flagged."
        ),
    ] = None,
    min_approvals: Annotated[
        int, typer.Option(help="Ready only with at least this many approvals.")
    ] = defaults.MIN_APPROVALS,
    min_days: Annotated[
        float, typer.Option(help="Ready only when reviews span at least this many days.")
    ] = defaults.MIN_DAYS,
    min_evidence: Annotated[
        float,
        typer.Option(help="Ready only when evidence was available in this share of reviews."),
    ] = defaults.MIN_EVIDENCE_AVAILABILITY,
    max_errors: Annotated[
        int, typer.Option(help="Ready only with at most this many reconcile errors.")
    ] = defaults.MAX_ERRORS,
    max_fallbacks: Annotated[
        int, typer.Option(help="Ready only with at most this many mode-source fallbacks.")
    ] = defaults.MAX_FALLBACKS,
    max_would_downgrade_rate: Annotated[
        float,
        typer.Option(help="Ready only when at most this share of approvals would downgrade."),
    ] = defaults.MAX_WOULD_DOWNGRADE_RATE,
    depth_policy: Annotated[
        DepthPolicy | None,
        typer.Option(
            **choice(DepthPolicy),
            help="Judge readiness to enforce this depth policy: its would-downgrade rate, from "
            "the comparison every decision records, instead of the policy in force.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Per repository: what the coverage check did or would do, and readiness to enforce
    (from the local telemetry folder)."""
    # start-up: see commands._common
    from coverage_gate.report import (  # noqa: PLC0415
        Criteria,
        build_report,
        load_folder,
        render_text,
        to_json,
    )

    criteria = Criteria(
        min_approvals=min_approvals,
        min_days=min_days,
        min_evidence_availability=min_evidence,
        max_errors=max_errors,
        max_fallbacks=max_fallbacks,
        max_would_downgrade_rate=max_would_downgrade_rate,
        depth_policy=depth_policy,
    )
    problems = criteria.problems()
    if problems:
        raise _fail("; ".join(problems), EXIT_BAD_CONFIG)
    try:
        require_stdout("report")
    except BadInputError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    folder = telemetry_dir if telemetry_dir is not None else default_telemetry_dir(os.environ)
    if not folder.is_dir():
        raise _fail(f"no telemetry folder at {folder}", EXIT_BAD_INPUT)
    try:
        loaded = load_folder(folder)
    except OSError as error:
        raise _fail(f"cannot read {folder}: {error.strerror or error}", EXIT_BAD_INPUT) from None
    result = build_report(loaded, criteria, list_flagged=listing is Listing.WOULD_DOWNGRADE)
    if output is ReportFormat.JSON:
        text = json.dumps(to_json(result), indent=2, sort_keys=True) + "\n"
    else:
        text = render_text(result)
    try:
        write_stdout(text, "report")
    except BadInputError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    raise typer.Exit(EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    report_app()
