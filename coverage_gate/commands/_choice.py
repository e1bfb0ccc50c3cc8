"""How options are shown and checked where typer's defaults mislead.

Typer's own choice check words its error as a validation error ("Value error, 'x' is not one
of ..."); ``choice`` says "'x' is not one of: a, b" and shows the choices as the option's
metavar. Typer shows ``<bool>`` beside flags, which take no value: ``FLAG`` and the ``Command``
and ``Group`` classes (for --help) show nothing there. Help is click's plain help (the apps set
``rich_markup_mode=None``: rich costs start-up), with each command's whole first sentence.

Start-up: typer coerces each option's value through a pydantic ``TypeAdapter`` it builds on
first use, also for an option that was not given, whose value (``None``) it returns untouched.
``Command`` and ``Group`` answer those without building one (``_Deferred``), and a ``choice``
value by calling its parser, as that adapter does, so that options left out or defaulted cost
nothing and ``--help`` loads no pydantic.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

try:
    from typer._coercion import build_runtime_param
except ImportError:  # a typer that coerces through click's types: nothing to defer
    build_runtime_param = None  # type: ignore[assignment]

E = TypeVar("E", bound=StrEnum)
P = TypeVar("P")

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

    _PARSERS.add(parse)
    return parse


#: The parsers ``choice`` made: they raise nothing but ``typer.BadParameter``, which typer's
#: ``TypeAdapter`` around a parser lets through as it is, so calling one is what typer does.
_PARSERS: set[Callable[..., Any]] = set()


def choice(kind: type[StrEnum]) -> dict[str, Any]:
    """``typer.Option(**choice(Kind), help=...)``: parse into ``Kind``, show its values."""
    return {
        "parser": _parser(kind),
        "metavar": "<" + "|".join(member.value for member in kind) + ">",
    }


class _Deferred:
    """Typer's coercion of one option (its ``RuntimeParam``), built for the first value given:
    a value not given (``None``) is answered as typer's own answers it, ``None``, or ``()`` for a
    repeatable option, and a single ``choice`` value by its parser, without the ``TypeAdapter``
    typer would build first."""

    def __init__(self, param: Any) -> None:
        self._param = param
        self._built: Any = None
        descriptor = param.type_descriptor
        parser = getattr(descriptor.parameter_info, "parser", None)
        single = not (
            param.multiple
            or param.nargs != 1
            or getattr(descriptor, "is_list", True)
            or getattr(descriptor, "is_tuple", True)
        )
        self._parser = parser if single and parser in _PARSERS else None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if self._parser is not None:
            return self._parser(value)
        if self._built is None:
            self._built = build_runtime_param(self._param.type_descriptor)
        return self._built.coerce(value, param=param, ctx=ctx)


def _deferred(param: P) -> P:
    """``param`` with its coercion deferred (``_Deferred``), where typer coerces as described."""
    if (
        build_runtime_param is not None
        and getattr(param, "_runtime_param", False) is None
        and hasattr(param, "type_descriptor")
    ):
        param._runtime_param = _Deferred(param)  # type: ignore[attr-defined]
    return param


def _without_type(option: TyperOption | None) -> TyperOption | None:
    if option is not None:
        option.metavar = ""  # --help is a flag too: no <bool> beside it either
    return _deferred(option)


class Command(TyperCommand):
    """A command whose --help shows no type: ``app.command(cls=Command)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            _deferred(param)

    def get_help_option(self, ctx: Any) -> TyperOption | None:
        return _without_type(super().get_help_option(ctx))


class Group(TyperGroup):
    """A group whose --help shows no type, and each command's whole first sentence (click's
    plain help cuts it to what fits one line): ``typer.Typer(cls=Group)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            _deferred(param)

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
