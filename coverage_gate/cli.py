"""The command line: the composition root. It mounts one module per command
(``coverage_gate/commands/``); each command parses, builds its dependencies, calls one function and
maps the outcome to an exit code. Only the command layer touches argv, the environment, files, the
clock and exit codes. Machine output goes to stdout; people and logs to stderr.
"""

from __future__ import annotations

import errno
import os
import sys

import typer

from coverage_gate.commands import (
    demo,
    formats,
    github,
    reconcile,
    record,
    replay,
    report,
    run,
    schema,
)
from coverage_gate.commands._choice import HELP_WIDTH, Command, Group
from coverage_gate.commands._common import say
from coverage_gate.commands.flags import flags_app
from coverage_gate.commands.receipts import receipts_app
from coverage_gate.errors import ExitCode
from coverage_gate.stdio import discard_stdout

#: Errors of a stdout that cannot be written: a full disk, a closed pipe.
_STDOUT_GONE = frozenset({errno.ENOSPC, errno.EPIPE, errno.EDQUOT, errno.EFBIG})

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
    # Plain help and usage errors: rich's rendering costs more start-up (about 50 ms, half of
    # what `--help` may take) than the rest of the command line together.
    rich_markup_mode=None,
    context_settings=HELP_WIDTH,
)


app.command("record", cls=Command)(record.record)
app.command("reconcile", cls=Command)(reconcile.reconcile_command)
app.command("schema", cls=Command)(schema.schema)
app.command("formats", cls=Command)(formats.formats)
app.command("demo", cls=Command)(demo.demo)
app.add_typer(flags_app, name="flags")
app.command("report", cls=Command)(report.report)  # one command, no subcommands
app.command("run", cls=Command, context_settings=run.RUN_CONTEXT_SETTINGS)(run.run_command)
app.command("github", cls=Command, epilog=github.INPUTS_HELP)(github.github_command)
app.add_typer(receipts_app, name="receipts")
app.command("replay", cls=Command)(replay.replay)


def main() -> None:
    """Console entry point: known errors are handled in the commands; anything else is a bug."""
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        say("coverage-gate: interrupted")
        sys.exit(130)
    except OSError as error:
        # Help and usage text are written by click itself; a stdout that cannot take them (a
        # full disk, a reader that left) is the caller's output gone wrong, as in write_stdout.
        if error.errno not in _STDOUT_GONE:
            raise
        discard_stdout()
        say(f"coverage-gate: error: stdout: cannot write ({error.strerror or error})")
        sys.exit(int(ExitCode.BAD_INPUT))
    except Exception as error:
        if os.environ.get("COVERAGE_GATE_DEBUG"):
            raise
        say(f"coverage-gate: internal error: {type(error).__name__}: {error}")
        say("set COVERAGE_GATE_DEBUG=1 for a traceback, and please report it")
        sys.exit(int(ExitCode.INTERNAL))
