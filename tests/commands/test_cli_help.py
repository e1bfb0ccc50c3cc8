"""The help and the option errors say what they mean: defaults survive, flags show no type,
a wrong choice is said plainly, and a single command shows no subcommands."""

from __future__ import annotations

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

from coverage_gate.cli import MOUNTS, SUMMARIES, app

runner = CliRunner()
WIDE = {"COLUMNS": "250"}


def command_paths() -> list[list[str]]:
    """Every command of the CLI, as the words that name it."""
    paths: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        paths.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return paths


@pytest.mark.parametrize("path", command_paths(), ids=lambda path: " ".join(path) or "main")
def test_help_shows_no_bool_type_next_to_a_flag(path: list[str]) -> None:
    """A flag takes no value: no help line, --help's included, shows ``<bool>``."""
    result = runner.invoke(app, [*path, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.stdout


@pytest.mark.parametrize("path", command_paths(), ids=lambda path: " ".join(path) or "main")
def test_no_option_help_holds_rich_markup_brackets(path: list[str]) -> None:
    """Help is rendered as rich markup, where ``[default: x]`` vanishes: no help text has one."""
    command = get_command(app)
    for word in path:
        command = command.commands[word]  # type: ignore[attr-defined]
    texts = [getattr(param, "help", None) or "" for param in command.params]
    assert not [text for text in texts if "[" in text]


def test_repository_root_help_keeps_its_default() -> None:
    """`record --help` says what the repository root defaults to, not "relative to ."."""
    result = runner.invoke(app, ["record", "--help"], terminal_width=250)
    assert "default: the stream's own working directory" in result.stdout
    assert "relative to ." not in result.stdout
    result = runner.invoke(app, ["reconcile", "--help"], terminal_width=250)
    assert "Repository root for paths and git (default: the current directory)" in result.stdout


def test_report_usage_shows_no_subcommands() -> None:
    """`report` is one command: its usage names no COMMAND."""
    result = runner.invoke(app, ["report", "--help"], env=WIDE)
    assert result.exit_code == 0
    assert "Usage: coverage-gate report [OPTIONS]" in result.stdout
    assert "COMMAND" not in result.stdout


REQUIRED = ["--repo", "o/r", "--revision", "r", "--verdict", "approve"]
CHOICES = [
    (["reconcile", "--repo", "o/r", "--revision", "r"], "--verdict", "approve"),
    *((["reconcile", *REQUIRED], option, value) for option, value in [
        ("--mode", "auto"),
        ("--flags-on-error", "fail"),
        ("--fallback-mode", "shadow"),
        ("--unknown-policy", "accept"),
        ("--depth-policy", "accept"),
        ("--format", "json"),
    ]),
    *((["flags", "--repo", "o/r"], option, value) for option, value in [
        ("--mode", "auto"),
        ("--flags-on-error", "fail"),
        ("--fallback-mode", "shadow"),
        ("--unknown-policy", "accept"),
        ("--depth-policy", "accept"),
        ("--format", "json"),
    ]),
    (["report"], "--format", "json"),
    (["report"], "--list", "would_downgrade"),
    (["report"], "--depth-policy", "accept"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "option", "known"), CHOICES)
def test_a_wrong_choice_is_said_plainly(args: list[str], option: str, known: str) -> None:
    """A value that is not one of an option's choices: exit 2, naming the value and the
    choices, with no validation-library wording ("Value error,")."""
    result = runner.invoke(app, [*args, option, "nope"], env=WIDE)
    assert result.exit_code == 2, result.output
    assert "Value error" not in result.stderr
    assert f"Invalid value for '{option}': 'nope' is not one of:" in result.stderr
    assert known in result.stderr


def test_the_main_help_lists_each_commands_own_first_sentence() -> None:
    """The main --help lists the commands from ``SUMMARIES`` (start-up: without building them);
    each line is the one the built command gives, in the order the commands are mounted."""
    group = get_command(app)
    assert list(SUMMARIES) == list(MOUNTS)
    built = {name: group.commands[name].get_short_help_str(limit=10_000) for name in MOUNTS}
    assert built == SUMMARIES


def test_the_main_help_reads_the_same_whether_the_commands_were_built_or_not() -> None:
    """Listing a command by its summary line, unbuilt, writes what listing it built writes."""
    group = get_command(app)
    ctx = typer.Context(group, info_name="coverage-gate", **group.context_settings)
    listed = group.get_help(ctx)
    assert [group.commands.built(name) for name in MOUNTS] == [False] * len(MOUNTS)
    assert all(group.commands[name] is not None for name in MOUNTS)  # each built now
    assert group.get_help(ctx) == listed
    assert all(f"  {name} " in listed for name in MOUNTS)


def test_github_help_lists_each_input_on_a_line_of_its_own() -> None:
    from coverage_gate.commands.github import INPUTS  # noqa: PLC0415

    said = CliRunner().invoke(app, ["github", "--help"]).stdout.splitlines()
    for spec in INPUTS:
        assert any(line.strip().startswith(f"{spec.name} ({spec.variable}): ") for line in said)
