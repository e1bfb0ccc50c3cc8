"""How options are shown and checked where typer's defaults mislead.

Typer's own choice check words its error as a validation error ("Value error, 'x' is not one
of ..."); ``choice`` says "'x' is not one of: a, b" and shows the choices as the option's
metavar. Typer shows ``<bool>`` beside flags, which take no value: ``FLAG`` and the ``Command``
and ``Group`` classes (for --help) show nothing there.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

E = TypeVar("E", bound=StrEnum)

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
    """A group whose --help shows no type: ``typer.Typer(cls=Group)``."""

    def get_help_option(self, ctx: Any) -> TyperOption | None:
        return _without_type(super().get_help_option(ctx))
