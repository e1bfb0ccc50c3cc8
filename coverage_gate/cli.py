"""The command line: the composition root. It mounts one module per command
(``coverage_gate/commands/``); each command parses, builds its dependencies, calls one function and
maps the outcome to an exit code. Only the command layer touches argv, the environment, files, the
clock and exit codes. Machine output goes to stdout; people and logs to stderr.

Start-up: a command's module is imported, and its click command built, only when that command
is invoked, or shown by ``--help``: ``coverage-gate reconcile ...`` loads no other command, and
the main ``--help`` lists the commands from ``SUMMARIES`` without loading any (building them all
cost it about 45 ms, half its run). ``MOUNTS`` names each command and how it is mounted; a
command built alone is the command typer builds among all (the same main ``Typer`` settings build
both).
"""

from __future__ import annotations

import atexit
import codecs
import errno
import gc
import os
import sys
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main

from coverage_gate.commands._choice import HELP_WIDTH, Command, Group
from coverage_gate.commands._common import error_line, say, set_command
from coverage_gate.edges.stdio import discard_stdout
from coverage_gate.errors import ExitCode

__all__ = ["MOUNTS", "SUMMARIES", "LazyGroup", "app", "main"]

#: Errors of a stdout that cannot be written: a full disk, a closed pipe.
_STDOUT_GONE = frozenset({errno.ENOSPC, errno.EPIPE, errno.EDQUOT, errno.EFBIG})


def _typer(cls: type[Group]) -> typer.Typer:
    """The main command's settings: the app's, and those each command is built under."""
    return typer.Typer(
        cls=cls,
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


# Each command's module is imported when the command is first needed (start-up).


def _record(app: typer.Typer) -> None:
    from coverage_gate.commands import record  # noqa: PLC0415

    app.command("record", cls=Command)(record.record)


def _reconcile(app: typer.Typer) -> None:
    from coverage_gate.commands import reconcile  # noqa: PLC0415

    app.command("reconcile", cls=Command)(reconcile.reconcile_command)


def _schema(app: typer.Typer) -> None:
    from coverage_gate.commands import schema  # noqa: PLC0415

    app.command("schema", cls=Command)(schema.schema)


def _formats(app: typer.Typer) -> None:
    from coverage_gate.commands import formats  # noqa: PLC0415

    app.command("formats", cls=Command)(formats.formats)


def _demo(app: typer.Typer) -> None:
    from coverage_gate.commands import demo  # noqa: PLC0415

    app.command("demo", cls=Command)(demo.demo)


def _flags(app: typer.Typer) -> None:
    from coverage_gate.commands.flags import flags_app  # noqa: PLC0415

    app.add_typer(flags_app, name="flags")


def _report(app: typer.Typer) -> None:
    from coverage_gate.commands import report  # noqa: PLC0415

    app.command("report", cls=Command)(report.report)  # one command, no subcommands


def _run(app: typer.Typer) -> None:
    from coverage_gate.commands import run  # noqa: PLC0415

    app.command("run", cls=Command, context_settings=run.RUN_CONTEXT_SETTINGS)(run.run_command)


def _github(app: typer.Typer) -> None:
    from coverage_gate.commands import github  # noqa: PLC0415

    app.command("github", cls=Command, epilog=github.INPUTS_HELP)(github.github_command)


def _receipts(app: typer.Typer) -> None:
    from coverage_gate.commands.receipts import receipts_app  # noqa: PLC0415

    app.add_typer(receipts_app, name="receipts")


def _snapshot(app: typer.Typer) -> None:
    from coverage_gate.commands import snapshot  # noqa: PLC0415

    app.command("snapshot", cls=Command)(snapshot.snapshot)


def _config(app: typer.Typer) -> None:
    from coverage_gate.commands import config  # noqa: PLC0415

    app.command("config", cls=Command)(config.config)


def _replay(app: typer.Typer) -> None:
    from coverage_gate.commands import replay  # noqa: PLC0415

    app.command("replay", cls=Command)(replay.replay)


#: The commands, in the order --help lists them: the order a user meets them (try the example;
#: in a pipeline, snapshot, run or record, reconcile, or the GitHub step; rolling out, flags,
#: report, receipts and replay; then the reference), and how each is mounted.
MOUNTS: dict[str, Callable[[typer.Typer], None]] = {
    "demo": _demo,
    "snapshot": _snapshot,
    "run": _run,
    "record": _record,
    "reconcile": _reconcile,
    "github": _github,
    "flags": _flags,
    "report": _report,
    "receipts": _receipts,
    "replay": _replay,
    "formats": _formats,
    "schema": _schema,
    "config": _config,
}


#: The line the main --help lists for each command: the first sentence of its own help, which a
#: test holds equal to what the built command says (tests/commands/test_cli_help.py).
SUMMARIES: dict[str, str] = {
    "demo": "Record and reconcile the bundled example: an honest and a lying pi reviewer.",
    "snapshot": "Write the working tree as a git tree and print its id: the revision to review.",
    "run": "Run a reviewer, pass its stdin and stdout through, and record evidence as it flows.",
    "record": "Read an agent's event stream and write the evidence document (JSON).",
    "reconcile": ("Reconcile claims with evidence over the changed files and print the decision."),
    "github": (
        "Run as the GitHub Action's step: read the inputs from the INPUT_* variables (see "
        "action.yml), record each stream, reconcile, and write the step outputs, the job "
        "summary, one annotation per finding, the PR comment body and a SARIF log."
    ),
    "flags": "Show the mode a repository resolves to, and pull flag snapshots from Unleash.",
    "report": (
        "Per repository: what the coverage check did or would do, and readiness to enforce "
        "(from the local telemetry folder, or from Prometheus over a window)."
    ),
    "receipts": "Review receipts written by `reconcile --receipt DIR`.",
    "replay": (
        "Decide each receipt again under candidate settings (a mode, policies, or a flags "
        "snapshot evaluated per repository) and show, per repository, which verdicts would "
        "change."
    ),
    "formats": "List the stream formats `record` reads, or check one stream against them.",
    "schema": "Print the JSON Schemas of the contracts.",
    "config": (
        "Print each setting the environment or the settings file holds (.coverage-gate.toml, "
        "or [tool.coverage-gate] in pyproject.toml, in the current directory) and where it "
        "came from; precedence: command line, environment, file, flag payload, default."
    ),
}


class _Commands(MutableMapping[str, Any]):
    """The main group's commands by name, each built when first looked up."""

    def __init__(self) -> None:
        self._names = list(MOUNTS)
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in MOUNTS:
                raise KeyError(name)
            alone = _typer(Group)
            MOUNTS[name](alone)
            self._built[name] = typer.main.get_group(alone).commands[name]
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        if name not in self._names:
            self._names.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._names.remove(name)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def built(self, name: str) -> bool:
        return name in self._built


class LazyGroup(Group):
    """The main group: its commands are built when looked up (``_Commands``)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands()

    def list_commands(self, ctx: Any) -> list[str]:
        del ctx
        return list(self.commands)

    def _main_shell_completion(
        self, ctx_args: MutableMapping[str, Any], prog_name: str, complete_var: str | None = None
    ) -> None:
        """A shell asking for completions (``_COVERAGE_GATE_COMPLETE`` set by the script that
        ``--install-completion`` wrote): typer's completion classes are registered only then, so
        no other run pays for them."""
        if os.environ.get(complete_var or _COMPLETE_VAR):
            from typer._completion_classes import completion_init  # noqa: PLC0415

            completion_init()
        super()._main_shell_completion(ctx_args, prog_name, complete_var)

    def summary(self, ctx: Any, name: str) -> str | None:
        """A command not built yet is listed by its line in ``SUMMARIES``, without building it."""
        commands = self.commands
        if isinstance(commands, _Commands) and not commands.built(name) and name in SUMMARIES:
            return SUMMARIES[name]
        return super().summary(ctx, name)


app = _typer(LazyGroup)


#: The variable a shell's completion script sets to ask for completions.
_COMPLETE_VAR = "_COVERAGE_GATE_COMPLETE"


#: The shells typer's completion scripts are written for.
_SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def _shell(option: str) -> str:
    """The shell this runs in, or a usage error naming the option and what was found."""
    from typer._completion_shared import _get_shell_name  # noqa: PLC0415 - only when asked

    shell = _get_shell_name()
    if shell not in _SHELLS:
        found = f"it runs in {shell}" if shell else "no shell was found above this process"
        say(error_line(f"{option}: {found}; completion is for {', '.join(_SHELLS)}"))
        raise typer.Exit(int(ExitCode.USAGE))
    return shell


def _install_completion(ctx: Any, param: Any, asked: bool) -> None:
    """Typer's installer, for the ``coverage-gate`` command however this run was started."""
    del param
    if asked and not ctx.resilient_parsing:
        from typer._completion_shared import install  # noqa: PLC0415 - only when asked

        shell, path = install(
            shell=_shell("--install-completion"),
            prog_name="coverage-gate",
            complete_var=_COMPLETE_VAR,
        )
        typer.echo(f"{shell} completion installed in {path}; it takes effect in a new shell")
        raise typer.Exit


def _show_completion(ctx: Any, param: Any, asked: bool) -> None:
    """The script typer's installer would write, for the shell this runs in."""
    del param
    if asked and not ctx.resilient_parsing:
        from typer._completion_shared import get_completion_script  # noqa: PLC0415

        script = get_completion_script(
            prog_name="coverage-gate",
            complete_var=_COMPLETE_VAR,
            shell=_shell("--show-completion"),
        )
        typer.echo(script)
        raise typer.Exit


def _print_version(asked: bool) -> None:
    if asked:
        from coverage_gate import __version__  # noqa: PLC0415 - only when asked

        typer.echo(f"coverage-gate {__version__}")
        raise typer.Exit


@app.callback()
def _main_group(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print coverage-gate's version and exit.",
        ),
    ] = False,
    install_completion: Annotated[
        bool,
        typer.Option(
            "--install-completion",
            callback=_install_completion,
            is_eager=True,
            expose_value=False,
            help="Install tab completion for the shell this runs in (bash, zsh, fish, "
            "PowerShell) and exit; it takes effect in a new shell.",
        ),
    ] = False,
    show_completion: Annotated[
        bool,
        typer.Option(
            "--show-completion",
            callback=_show_completion,
            is_eager=True,
            expose_value=False,
            help="Print the completion script for the shell this runs in and exit, to install "
            "it by hand.",
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Write no line that only says what a run did (the repository root, the "
            "evidence summary, where files went): warnings and errors only, for a CI log "
            "(env COVERAGE_GATE_QUIET=1).",
        ),
    ] = False,
) -> None:
    # The commands come from ``MOUNTS``; this callback makes typer build the main command as a
    # group (typer builds a group for an app with a callback or commands).
    del version
    if quiet:
        os.environ["COVERAGE_GATE_QUIET"] = "1"  # read by commands._common.info


def main() -> None:
    """Console entry point: known errors are handled in the commands; anything else is a bug."""
    # When the process ends, the interpreter's last full collection need not walk what the run
    # loaded (typer, pydantic, the contracts: a few tens of ms); the OS frees it all at once.
    atexit.register(gc.freeze)
    _main()


#: What the text outputs' own characters become on an output that cannot encode them: arrows,
#: the bar glyphs of the report, the middle dot, the ellipsis, the section sign.
ASCII_FOR: dict[str, str] = {
    "\u2192": "->", "\u25b0": "#", "\u25b1": ".", "\u00b7": "-", "\u2026": "...",
    "\u00a7": "S", "\u00b1": "+/-",
}  # fmt: skip


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    """A character the output's encoding cannot hold: in a text, one of the program's own
    (``ASCII_FOR``) as its ASCII stand-in (``->`` for ``\u2192``); any other, and any in a JSON
    document (a text that opens with ``{`` or ``[``), as JSON escapes it (``\\u2192``; one outside
    the BMP as its surrogate pair): a JSON document stays JSON, a text stays legible."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    document = error.object.lstrip()[:1] in ("{", "[")
    escaped: list[str] = []
    for char in error.object[error.start : error.end]:
        if not document and char in ASCII_FOR:
            escaped.append(ASCII_FOR[char])
            continue
        units = char.encode("utf-16-be", "surrogatepass")
        escaped.extend(
            f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in (0, 2)[: len(units) // 2]
        )
    return "".join(escaped), error.end


def _writable_anywhere() -> None:
    """A stdout or stderr whose encoding cannot hold a character (``PYTHONIOENCODING=ascii``, a
    Windows console, a pipe in a C locale) writes it as JSON escapes it instead of failing the
    run: ``→`` is written ``\\u2192``."""
    codecs.register_error("coverage-gate-json", _json_escape)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and (stream.encoding or "").lower().replace("-", "") != "utf8":
            reconfigure(errors="coverage-gate-json")


def _settings_file() -> None:
    """The repository's settings file, read once: its values become the environment's where the
    environment holds none (``coverage_gate.edges.config_file``); a broken one exits 4."""
    from coverage_gate.edges.config_file import apply  # noqa: PLC0415
    from coverage_gate.errors import BadConfigError  # noqa: PLC0415

    try:
        apply(os.environ, Path.cwd())
    except BadConfigError as error:
        say(error_line(str(error)))
        sys.exit(int(ExitCode.BAD_CONFIG))


#: Commands whose subcommands their error lines name too.
_GROUPS: dict[str, frozenset[str]] = {
    "flags": frozenset({"pull"}),
    "receipts": frozenset({"verify"}),
}


def _command_words(argv: list[str]) -> list[str]:
    """The command (and subcommand) ``argv`` runs, past the main options: ``["flags", "pull"]``."""
    words = [word for word in argv if not word.startswith("-")][:2]
    if not words or words[0] not in MOUNTS:
        return []
    if len(words) == 2 and words[1] in _GROUPS.get(words[0], frozenset()):
        return words
    return words[:1]


def _main() -> None:
    _writable_anywhere()
    set_command(_command_words(sys.argv[1:]))
    _settings_file()
    try:
        # One completion variable however the program was started (``python -m coverage_gate``
        # too): the one the script of ``--show-completion`` sets.
        app(complete_var=_COMPLETE_VAR)
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
        say(error_line(f"stdout: cannot write ({error.strerror or error})"))
        sys.exit(int(ExitCode.BAD_INPUT))
    except Exception as error:
        if os.environ.get("COVERAGE_GATE_DEBUG"):
            raise
        say(f"coverage-gate: internal error: {type(error).__name__}: {error}")
        say("set COVERAGE_GATE_DEBUG=1 for a traceback, and please report it")
        sys.exit(int(ExitCode.INTERNAL))
