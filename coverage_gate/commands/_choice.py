"""How options are shown and checked where typer's defaults mislead.

Typer's own choice check words its error as a validation error ("Value error, 'x' is not one
of ..."); ``choice`` says "'x' is not one of: a, b" and shows the choices as the option's
metavar. Typer shows ``<bool>`` beside flags, which take no value: ``FLAG`` and the ``Command``
and ``Group`` classes (for --help) show nothing there. Help is click's plain help (the apps set
``rich_markup_mode=None``: rich costs start-up), with each command's whole first sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

E = TypeVar("E", bound=StrEnum)

#: Help as wide as the terminal (``COLUMNS``), as rich's was; click caps it at 80 by default.
HELP_WIDTH: dict[str, Any] = {"max_content_width": 10_000}

#: A short help this long is never cut.
_WHOLE = 10_000

#: The metavar of a flag: nothing, where typer would show ``<bool>``.
FLAG: dict[str, Any] = {"metavar": ""}


def _parser(kind: type[E]) -> Callable[[str | E], E]:
    def parse(value: str | E) -> E:
        if isinstance(value, kind):
            return value
        try:
            return kind(value)
        except ValueError:
            known = ", ".join(member.value for member in kind)
            raise typer.BadParameter(f"{value!r} is not one of: {known}") from None

    return parse


def choice(kind: type[StrEnum]) -> dict[str, Any]:
    """``typer.Option(**choice(Kind), help=...)``: parse into ``Kind``, show its values."""
    return {
        "parser": _parser(kind),
        "metavar": "<" + "|".join(member.value for member in kind) + ">",
    }


def _without_type(option: TyperOption | None) -> TyperOption | None:
    if option is not None:
        option.metavar = ""  # --help is a flag too: no <bool> beside it either
    return option


class Command(TyperCommand):
    """A command whose --help shows no type: ``app.command(cls=Command)``."""

    def get_help_option(self, ctx: Any) -> TyperOption | None:
        return _without_type(super().get_help_option(ctx))


class Group(TyperGroup):
    """A group whose --help shows no type, and each command's whole first sentence (click's
    plain help cuts it to what fits one line): ``typer.Typer(cls=Group)``."""

    def get_help_option(self, ctx: Any) -> TyperOption | None:
        return _without_type(super().get_help_option(ctx))

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=_WHOLE)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
