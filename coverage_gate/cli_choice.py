"""Options whose value is one of an enum's: parsed here so that a wrong value is said plainly.

Typer's own choice check words its error as a validation error ("Value error, 'x' is not one
of ..."); this one says "'x' is not one of: a, b" and shows the choices as the option's metavar.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, TypeVar

import typer

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
