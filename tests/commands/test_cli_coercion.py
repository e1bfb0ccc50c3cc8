"""Option values coerce as typer coerces them: the plain cases answered without typer's pydantic
``TypeAdapter`` (``commands/_choice.py``, for start-up) give what typer's own coercion gives, value
for value and message for message, on every option of every command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer._coercion import build_runtime_param
from typer.main import get_command

from coverage_gate.cli import app
from coverage_gate.commands._choice import _Deferred


def options() -> list[tuple[str, Any, Any]]:
    """Every option of every command (its --help's included), with a context to coerce in."""
    found: list[tuple[str, Any, Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        ctx = command.context_class(command)
        for param in [*command.params, command.get_help_option(ctx)]:
            if param is not None:
                found.append((" ".join([*path, param.name or "?"]), param, ctx))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return found


OPTIONS = options()


def samples(tmp_path: Path, default: object) -> list[object]:
    folder = tmp_path / "a folder"
    folder.mkdir(exist_ok=True)
    file = folder / "a file"
    file.write_text("x")
    strings = ["", "x", "-", "./x", "a//b/", str(file), str(folder), str(tmp_path / "missing")]
    numbers = ["0", "12", "-3", " 7", "1_000", "1.0", "x1", 0, 7, 2000, -1, 1 << 40]
    choices = ["approve", "json", "shadow", "auto", "nope", "Approve"]
    return [None, *strings, *numbers, *choices, True, False, file, default]


def outcome(coerce: Any) -> tuple[str, object]:
    try:
        value = coerce()
    except Exception as error:  # noqa: BLE001 - the error is the outcome compared
        formatted = getattr(error, "format_message", None)
        return f"raises {type(error).__name__}", formatted() if formatted else str(error)
    return f"gives {type(value).__name__}", value


@pytest.mark.parametrize(("name", "param", "ctx"), OPTIONS, ids=[name for name, _, _ in OPTIONS])
def test_plain_coercion_is_typers(tmp_path: Path, name: str, param: Any, ctx: Any) -> None:
    """Whatever the value, coercing it answers as typer's own coercion answers."""
    deferred = param._runtime_param
    assert isinstance(deferred, _Deferred), name
    typers = build_runtime_param(param.type_descriptor)
    for value in samples(tmp_path, param.default):
        ours = outcome(lambda value=value: deferred.coerce(value, param=param, ctx=ctx))
        theirs = outcome(lambda value=value: typers.coerce(value, param=param, ctx=ctx))
        assert ours == theirs, (name, value)


def test_strings_paths_integers_and_choices_are_coerced_plainly() -> None:
    """The plain cases cover what the commands take: no option of record or reconcile but its
    repeatable one and its flags goes through typer's adapter."""
    plain = {name: param._runtime_param._plain is not None for name, param, _ in OPTIONS}
    for command in ("record", "reconcile"):
        mine = {name: is_plain for name, is_plain in plain.items() if name.startswith(command)}
        assert [name for name, is_plain in mine.items() if not is_plain] == [
            f"{command} {flag}"
            for flag in {
                "record": ["help"],
                "reconcile": ["exclude", "default_excludes", "exit_code", "help"],
            }[command]
        ]
