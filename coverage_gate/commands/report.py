"""``coverage-gate report``: the shadow comparison read from the local telemetry folder, or
from Prometheus over a window.

Registered by the main CLI as a plain command, ``app.command("report")(report)``, so that its
usage shows no subcommands; ``report_app`` runs it alone.

    coverage-gate report [--telemetry-dir D] [--format text|json|html] [-o FILE]
                         [--list would_downgrade]
                         [--min-approvals N] [--min-days D] [--min-evidence F]
                         [--max-error-rate F] [--max-fallbacks N] [--max-would-downgrade-rate F]
                         [--depth-policy accept|any-hunk|all-hunks]
    coverage-gate report --prometheus URL [--since 14d] [--prometheus-header 'Name: value']
                         [--prometheus-timeout S] [the same format and criteria options]

``--format html`` writes one self-contained page with charts (``coverage_gate.outputs.report_html``,
imported on that path alone: it needs the optional extra ``html``).

Exit codes: 0 report printed (whatever the readiness), 2 usage (options that do not go
together, a bad --since, URL or header, criteria out of range), 3 bad input (no such telemetry
folder; Prometheus down, slow, failing, answering what is not its API, or holding no
coverage-gate metrics; a closed or unwritable stdout or --output file; --format html without
the html extra), 4 bad
configuration (Prometheus refusing the credentials, a bad header variable).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from coverage_gate.commands._choice import HELP_WIDTH, Group, choice
from coverage_gate.contracts import defaults
from coverage_gate.contracts.enums import DepthPolicy
from coverage_gate.edges.stdio import require_stdout, write_stdout
from coverage_gate.errors import BadInputError, CoverageGateError, ExitCode
from coverage_gate.telemetry.otel_setup import TELEMETRY_DIR_ENV, default_telemetry_dir

if TYPE_CHECKING:
    from coverage_gate.rollout.report import Criteria, Report

__all__ = [
    "DEFAULT_PROMETHEUS_TIMEOUT_S",
    "DEFAULT_SINCE",
    "EXIT_BAD_CONFIG",
    "EXIT_BAD_INPUT",
    "EXIT_OK",
    "EXIT_USAGE",
    "HTML_EXTRA_MISSING",
    "Listing",
    "ReportFormat",
    "report",
    "report_app",
]

EXIT_OK = 0
EXIT_USAGE = int(ExitCode.USAGE)
EXIT_BAD_INPUT = int(ExitCode.BAD_INPUT)
EXIT_BAD_CONFIG = int(ExitCode.BAD_CONFIG)
# Repeated here (not imported) to keep coverage_gate.rollout.prometheus out of --help's start-up.
DEFAULT_SINCE = "14d"
DEFAULT_PROMETHEUS_TIMEOUT_S = 10.0


class ReportFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    HTML = "html"


#: What --format html needs, and the line that says how to get it: into the environment this
#: program runs in, wherever it was installed from (a checkout, a git URL, a wheel).
HTML_EXTRA_MISSING = (
    "--format html needs the html extra (vl-convert-python) in the environment coverage-gate "
    f"runs in: {shlex.quote(sys.executable)} -m pip install 'vl-convert-python>=1.6'"
)


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
    sys.stderr.write(f"coverage-gate report: error: {message}\n")  # error_line's style
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
            "--format",
            **choice(ReportFormat),
            help="Output format: text for people, json for machines, html for one page with "
            "charts (needs "
            "the html extra).",
        ),
    ] = ReportFormat.TEXT,
    out_file: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the report to this file (atomically) instead of stdout.",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    listing: Annotated[
        Listing | None,
        typer.Option(
            "--list", **choice(Listing), help="Also list each reviewer decision the check flagged."
        ),
    ] = None,
    compact: Annotated[
        bool,
        typer.Option(
            "--compact/--no-compact",
            help="Merge the telemetry folder's run files of each past day into one file per "
            "signal and day before reading it (the report reads the same; the folder keeps two "
            "files a day instead of one or two per run).",
        ),
    ] = True,
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
    max_error_rate: Annotated[
        float,
        typer.Option(
            help="Ready only when the upper bound of the error rate's 95% Wilson interval (runs "
            "that ended without a decision, of all runs) is at most this: a few mistyped runs "
            "among many reviews pass, a pipeline failing on most reviews does not."
        ),
    ] = defaults.MAX_ERROR_RATE,
    max_fallbacks: Annotated[
        int, typer.Option(help="Ready only with at most this many mode-source fallbacks.")
    ] = defaults.MAX_FALLBACKS,
    max_would_downgrade_rate: Annotated[
        float,
        typer.Option(
            help="Ready only when the upper bound of the would-downgrade rate's 95% Wilson "
            "interval is at most this share of approvals."
        ),
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
    prometheus: Annotated[
        str | None,
        typer.Option(
            metavar="<url>",
            help="Read the counts from this Prometheus (http://host:9090) instead of the "
            "telemetry folder: the same readiness, from the metrics "
            "docs/reference/telemetry.md lists.",
            show_default=False,
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            metavar="<duration>",
            help=f"With --prometheus: the window, ending now (14d, 36h, 90m; default "
            f"{DEFAULT_SINCE}).",
            show_default=False,
        ),
    ] = None,
    prometheus_header: Annotated[
        list[str] | None,
        typer.Option(
            metavar="<'name: value'>",
            help="With --prometheus: a request header, e.g. 'Authorization: Bearer TOKEN' "
            "(repeatable; also COVERAGE_GATE_PROMETHEUS_HEADERS=name=value,...).",
            show_default=False,
        ),
    ] = None,
    prometheus_timeout: Annotated[
        float,
        typer.Option(
            metavar="<seconds>",
            help="With --prometheus: the whole report must arrive within this many seconds.",
        ),
    ] = DEFAULT_PROMETHEUS_TIMEOUT_S,
) -> None:
    """Per repository: what the coverage check did or would do, and readiness to enforce
    (from the local telemetry folder, or from Prometheus over a window)."""
    # start-up: see commands._common
    from coverage_gate.rollout.report import (  # noqa: PLC0415
        Criteria,
        render_text,
        to_json,
    )

    criteria = Criteria(
        min_approvals=min_approvals,
        min_days=min_days,
        min_evidence_availability=min_evidence,
        max_error_rate=max_error_rate,
        max_fallbacks=max_fallbacks,
        max_would_downgrade_rate=max_would_downgrade_rate,
        depth_policy=depth_policy,
    )
    problems = criteria.problems()
    if problems:
        raise _fail("; ".join(problems), EXIT_USAGE)  # typed on the command line
    problem = _source_problem(
        prometheus is not None,
        telemetry_dir=telemetry_dir is not None,
        listing=listing is not None,
        since=since is not None,
        headers=bool(prometheus_header),
        timeout_s=prometheus_timeout,
    )
    if problem:
        raise _fail(problem, EXIT_USAGE)
    # Before any reading: without the extra, say what to install and stop.
    render_html = _html_renderer() if output is ReportFormat.HTML else None
    if out_file is None:
        try:
            require_stdout("report")
        except BadInputError as error:
            raise _fail(str(error), EXIT_BAD_INPUT) from None
    if prometheus is not None:
        try:
            result = _from_prometheus(
                prometheus,
                since or DEFAULT_SINCE,
                prometheus_header or [],
                prometheus_timeout,
                criteria,
            )
        except CoverageGateError as error:
            raise _fail(str(error), int(error.exit_code)) from None
    else:
        result = _from_folder(telemetry_dir, criteria, listing, compact=compact)
    if render_html is not None:
        text = render_html(to_json(result))
    elif output is ReportFormat.JSON:
        text = json.dumps(to_json(result), indent=2, sort_keys=True) + "\n"
    else:
        text = render_text(result)
    if out_file is not None:
        _write_file(out_file, text)
        raise typer.Exit(EXIT_OK)
    try:
        write_stdout(text, "report")
    except BadInputError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    raise typer.Exit(EXIT_OK)


def _html_renderer() -> Callable[[dict[str, Any]], str]:
    """The page renderer, its chart engine starting while the report reads; without the html
    extra, a one-line error (exit 3)."""
    try:
        from coverage_gate.outputs import report_html  # noqa: PLC0415 - the html extra
    except ImportError:
        raise _fail(HTML_EXTRA_MISSING, EXIT_BAD_INPUT) from None
    return report_html.start()


def _write_file(path: Path, text: str) -> None:
    from coverage_gate.edges.files import write_atomic  # noqa: PLC0415 - start-up

    try:
        write_atomic(path, text)
    except OSError as error:
        raise _fail(f"cannot write {path}: {error.strerror or error}", EXIT_BAD_INPUT) from None


def _source_problem(
    prometheus: bool,
    *,
    telemetry_dir: bool,
    listing: bool,
    since: bool,
    headers: bool,
    timeout_s: float,
) -> str | None:
    """What is wrong with the choice of source, if anything."""
    if not prometheus:
        given = [
            name
            for name, value in (
                ("--since", since),
                ("--prometheus-header", headers),
                ("--prometheus-timeout", timeout_s != DEFAULT_PROMETHEUS_TIMEOUT_S),
            )
            if value
        ]
        return f"{', '.join(given)} need --prometheus URL" if given else None
    if telemetry_dir:
        return "--telemetry-dir and --prometheus: choose one source"
    if listing:
        return "--list needs the telemetry folder: Prometheus holds no per-review detail"
    if not timeout_s > 0:
        return "--prometheus-timeout must be positive"
    return None


def _from_folder(
    telemetry_dir: Path | None, criteria: Criteria, listing: Listing | None, *, compact: bool
) -> Report:
    from coverage_gate.rollout.report import build_report  # noqa: PLC0415 - start-up
    from coverage_gate.rollout.report.scan import scan_folder  # noqa: PLC0415 - start-up

    folder = telemetry_dir if telemetry_dir is not None else default_telemetry_dir(os.environ)
    if not folder.is_dir():
        raise _fail(f"no telemetry folder at {folder}", EXIT_BAD_INPUT)
    listed = listing is Listing.WOULD_DOWNGRADE
    if compact:
        from coverage_gate.telemetry.retention import compact as compact_folder  # noqa: PLC0415

        try:
            compact_folder(folder)
        except OSError as error:  # a folder this user may read and not write: read it as it is
            sys.stderr.write(
                f"coverage-gate report: note: {folder} not compacted ({error.strerror or error})\n"
            )
    try:
        # Streamed into per-repository tallies, on every core for a big folder.
        loaded = scan_folder(folder, list_flagged=listed)
    except OSError as error:
        raise _fail(f"cannot read {folder}: {error.strerror or error}", EXIT_BAD_INPUT) from None
    return build_report(loaded, criteria, list_flagged=listed)


def _from_prometheus(
    url: str, since: str, headers: list[str], timeout_s: float, criteria: Criteria
) -> Report:
    """The counts over the window ending now, from Prometheus; any failure is an error, never a
    report (so never a verdict of ready)."""
    from coverage_gate.rollout import prometheus as p  # noqa: PLC0415 - urllib3 only when asked
    from coverage_gate.rollout.report import build_window_report  # noqa: PLC0415 - start-up

    base = p.check_url(url)
    since_s = p.parse_since(since)
    transport = p.HttpTransport(base, p.parse_headers(headers, os.environ), timeout_s)
    counts, window = p.read_counts(
        transport,
        url=base,
        since_s=since_s,
        timeout_s=timeout_s,
        now_s=time.time(),
        clock_iso=lambda s: datetime.fromtimestamp(s, UTC).isoformat(timespec="seconds"),
    )
    return build_window_report(counts, criteria, window)


if __name__ == "__main__":  # pragma: no cover
    report_app()
