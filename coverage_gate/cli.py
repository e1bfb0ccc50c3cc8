"""The command line: the composition root. It mounts one module per command
(``coverage_gate/commands/``); each command parses, builds its dependencies, calls one function and
maps the outcome to an exit code. Only the command layer touches argv, the environment, files, the
clock and exit codes. Machine output goes to stdout; people and logs to stderr.
"""

from __future__ import annotations

import os
import sys

import typer

from coverage_gate.commands import demo, formats, reconcile, record, report, run, schema
from coverage_gate.commands._choice import Command, Group
from coverage_gate.commands._common import say
from coverage_gate.commands.flags import flags_app
from coverage_gate.errors import ExitCode

app = typer.Typer(
    cls=Group,
    name="coverage-gate",
    help=(
        "Reconcile an AI code reviewer's claimed coverage with the reads and diffs it really "
        "performed. Exit codes: 0 decision produced, 1 enforced downgrade (only with "
        "--exit-code), 2 usage, 3 bad input, 4 bad configuration, 5 internal error."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


app.command("record", cls=Command)(record.record)
app.command("reconcile", cls=Command)(reconcile.reconcile_command)
app.command("schema", cls=Command)(schema.schema)
app.command("formats", cls=Command)(formats.formats)
app.command("demo", cls=Command)(demo.demo)
app.add_typer(flags_app, name="flags")
app.command("report", cls=Command)(report.report)  # one command, no subcommands
app.command("run", cls=Command, context_settings=run.RUN_CONTEXT_SETTINGS)(run.run_command)


def main() -> None:
    """Console entry point: known errors are handled in the commands; anything else is a bug."""
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        say("coverage-gate: interrupted")
        sys.exit(130)
    except Exception as error:
        if os.environ.get("COVERAGE_GATE_DEBUG"):
            raise
        say(f"coverage-gate: internal error: {type(error).__name__}: {error}")
        say("set COVERAGE_GATE_DEBUG=1 for a traceback, and please report it")
        sys.exit(int(ExitCode.INTERNAL))
