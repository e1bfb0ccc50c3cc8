"""The parts of the documentation generated from the code, so that they cannot drift from it: a
page writes ``<!-- generated: NAME -->`` where the part goes, and the build puts it there.

- ``environment``: every environment variable an option reads, from the command line's own
  options (their ``envvar``), with the settings-file key that stands for it;
- ``metrics``: the instruments (``coverage_gate.rollout.metrics.INSTRUMENTS``);
- ``spans``: the span and attribute names (``coverage_gate.contracts.spans`` and
  ``review_span``), with the comment that groups them in the source;
- ``schemas``: the published JSON Schemas, as ``coverage-gate schema NAME`` prints them;
- ``cli``: every command's ``--help``, as the program prints it, command by command.

A marker with no generator fails the build.

Why the command line page is made here rather than by mkdocs-click or mkdocs-typer2: typer now
carries its own copy of click, whose commands mkdocs-click (which checks for click's classes)
does not recognise; mkdocs-typer2 parses the Markdown typer's ``utils docs`` writes as XML, so a
help text holding ``<name>`` or click's no-rewrap marker fails the build, and it renders nothing
when that command fails; its in-process engine does not see a group whose commands are built when
first asked for (this program's main group, for start-up). Each command's own ``--help``, run in
this process, is what a user sees, verbatim.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import re
from collections.abc import Iterator
from typing import Any

_MARKER = re.compile(r"<!-- generated: ([a-z-]+) -->")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _commands(command: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Each command of the tree under ``command``, with its full name."""
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    yield path, command
    for name in command.list_commands(None):
        yield from _commands(subcommands[name], f"{path} {name}")


def environment() -> str:
    """One table: each setting's variable, its settings-file key, the options whose help names
    the variable (which it stands in for), and what it sets."""
    from typer.main import get_command  # noqa: PLC0415

    from coverage_gate.cli import app  # noqa: PLC0415
    from coverage_gate.edges.config_file import DESCRIPTIONS, SECRETS, SETTINGS  # noqa: PLC0415

    options: dict[str, dict[str, set[str]]] = {}
    variables = {**SETTINGS, **SECRETS}
    for name, command in _commands(get_command(app), "coverage-gate"):
        for param in getattr(command, "params", []):
            for variable in variables.values():
                if re.search(rf"\b{variable}\b", param.help or ""):
                    by_option = options.setdefault(variable, {})
                    by_option.setdefault(param.opts[-1], set()).add(name.split(" ", 1)[-1])
    lines = [
        "| variable | settings-file key | options it stands in for | what it sets |",
        "| --- | --- | --- | --- |",
    ]
    for key, variable in variables.items():
        shown = ", ".join(
            f"`{option}` ({', '.join(sorted(commands))})"
            for option, commands in sorted(options.get(variable, {}).items())
        )
        file_key = "- (a secret: environment only)" if key in SECRETS else f"`{key}`"
        lines.append(f"| `{variable}` | {file_key} | {shown or '-'} | {_cell(DESCRIPTIONS[key])} |")
    return "\n".join(lines) + "\n"


def metrics() -> str:
    from coverage_gate.rollout.metrics import INSTRUMENTS  # noqa: PLC0415

    lines = [
        "| metric | kind | unit | Prometheus | attributes | what it counts |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for spec in INSTRUMENTS:
        series = spec.prometheus_series
        prometheus = f"`{series[0]}`" + "".join(
            f", `{name.removeprefix(spec.prometheus_name)}`" for name in series[1:]
        )
        lines.append(
            f"| `{spec.name}` | {spec.kind.value} | `{spec.unit}` | {prometheus} | "
            f"{', '.join(spec.attributes)} | {_cell(spec.description)} |"
        )
    return "\n".join(lines) + "\n"


def _names(module: Any) -> Iterator[tuple[str, str, str]]:
    """(constant, value, the comment above its group) for each string constant of ``module``."""
    tree = ast.parse(inspect.getsource(module))
    source = inspect.getsource(module).splitlines()
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)):
            continue
        if not isinstance(node.value.value, str) or not isinstance(node.targets[0], ast.Name):
            continue
        comment: list[str] = []
        line = node.lineno - 2
        while line >= 0 and source[line].startswith("#"):
            comment.insert(0, source[line].lstrip("# "))
            line -= 1
        yield node.targets[0].id, node.value.value, " ".join(comment)


def spans() -> str:
    from coverage_gate.contracts import review_span, spans  # noqa: PLC0415

    parts = []
    for title, module in (
        ("`record`'s spans (`invoke_agent`, `execute_tool`)", spans),
        ("`reconcile`'s review span (`reconcile {repo}`) and its reviewer events", review_span),
    ):
        lines = [f"**{title}**", "", "| name | constant | group |", "| --- | --- | --- |"]
        group = ""
        for constant, value, comment in _names(module):
            group = comment or group
            lines.append(f"| `{value}` | `{constant}` | {_cell(group)} |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def schemas() -> str:
    from coverage_gate.commands.schema import published  # noqa: PLC0415
    from coverage_gate.contracts.schemas import SCHEMAS  # noqa: PLC0415

    parts = []
    for name, model in SCHEMAS.items():
        summary = _cell((model.__doc__ or "").split("\n\n")[0])
        body = json.dumps(published(name), indent=2, sort_keys=True)
        parts.append(
            f"### `{name}`\n\n{summary}\n\n`coverage-gate schema {name}` prints it.\n\n"
            f'??? note "The schema"\n\n    ```json\n'
            + "\n".join(f"    {line}" for line in body.splitlines())
            + "\n    ```\n"
        )
    return "\n".join(parts)


def help_text(words: list[str]) -> str:
    """What ``coverage-gate WORDS --help`` prints, run in this process."""
    from typer.main import get_command  # noqa: PLC0415

    from coverage_gate.cli import app  # noqa: PLC0415

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        get_command(app).main(
            args=[*words, "--help"], prog_name="coverage-gate", standalone_mode=False
        )
    return printed.getvalue()


def command_words() -> list[list[str]]:
    """Every command line the reference shows: the program, then each command and subcommand in
    the order ``--help`` lists them."""
    from typer.main import get_command  # noqa: PLC0415

    from coverage_gate.cli import app  # noqa: PLC0415

    return [name.split()[1:] for name, _ in _commands(get_command(app), "coverage-gate")]


def cli() -> str:
    parts = []
    for words in command_words():
        title = " ".join(["coverage-gate", *words])
        parts.append(f"## `{title}`\n\n```text\n{help_text(words).rstrip()}\n```\n")
    return "\n".join(parts)


GENERATORS = {
    "cli": cli,
    "environment": environment,
    "metrics": metrics,
    "spans": spans,
    "schemas": schemas,
}


def render(markdown: str) -> str:
    """``markdown`` with each marker replaced by what its generator writes."""

    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"no generator for <!-- generated: {name} -->")
        return GENERATORS[name]()

    return _MARKER.sub(generated, markdown)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs hook: each page's Markdown, before it is rendered."""
    del kwargs
    return render(markdown)
