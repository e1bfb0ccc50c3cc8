"""How options are shown and checked where typer's defaults mislead.

Typer's own choice check words its error as a validation error ("Value error, 'x' is not one
of ..."); ``choice`` says "'x' is not one of: a, b" and shows the choices as the option's
metavar. Typer shows ``<bool>`` beside flags, which take no value: ``FLAG`` and the ``Command``
and ``Group`` classes (for --help) show nothing there. Help is click's plain help (the apps set
``rich_markup_mode=None``: rich costs start-up), with each command's whole first sentence.

Start-up: typer coerces each option's value through a pydantic ``TypeAdapter`` it builds on
first use, also for an option that was not given, whose value (``None``) it returns untouched.
``Command`` and ``Group`` answer that without building one (``_Deferred``), and the values whose
coercion is plain: a ``choice`` value by its parser, a string as itself, an integer default
within its bounds as itself, a path by typer's own path checks on ``Path(value)`` (what the
adapter hands them). Options left out or defaulted cost nothing, ``--help`` loads no pydantic,
and a command whose options are strings, paths and choices loads none for them; anything else
goes through typer's adapter. ``tests/commands/test_cli_coercion.py`` holds the two alike.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

__all__ = ["FLAG", "HELP_WIDTH", "Command", "E", "Group", "P", "build_runtime_param", "choice"]

try:
    from typer._coercion import build_runtime_param
    from typer._param_types import coerce_cli_path
except ImportError:  # a typer that coerces through click's types: nothing to defer
    build_runtime_param = None  # type: ignore[assignment]

E = TypeVar("E", bound=StrEnum)
P = TypeVar("P")

#: Help as wide as the terminal (``COLUMNS``), as rich's was; click caps it at 80 by default.
HELP_WIDTH: dict[str, Any] = {"max_content_width": 10_000, "help_option_names": ["-h", "--help"]}

#: A short help this long is never cut.
_WHOLE = 10_000

#: The metavar of a flag: nothing, where typer would show ``<bool>``.
FLAG: dict[str, Any] = {"metavar": ""}


def _spelling(value: str) -> str:
    """A choice as it is compared: case and ``-``/``_`` do not matter (``request-changes`` is
    ``request_changes``, ``APPROVE`` is ``approve``)."""
    return value.strip().lower().replace("-", "_")


def _parser(kind: type[E]) -> Callable[[str | E], E]:
    by_spelling = {_spelling(member.value): member for member in kind}

    def parse(value: str | E) -> E:
        if isinstance(value, kind):
            return value
        try:
            return kind(value)
        except ValueError:
            found = by_spelling.get(_spelling(value))
            if found is not None:
                return found
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


#: What a plain coercion answers when the value is not plain: typer's own coercion decides.
_TYPER = object()


class _Deferred:
    """Typer's coercion of one option (its ``RuntimeParam``), built for the first value that
    needs it. A value not given (``None``) is answered as typer's own answers it, ``None``, or
    ``()`` for a repeatable option; a single value of a plain kind as typer's ``TypeAdapter``
    would answer it (``_plain``)."""

    def __init__(self, param: Any) -> None:
        self._param = param
        self._built: Any = None
        descriptor = param.type_descriptor
        single = not (
            param.multiple
            or param.nargs != 1
            or getattr(descriptor, "is_list", True)
            or getattr(descriptor, "is_tuple", True)
            or getattr(descriptor, "file_annotation", True) is not None
        )
        self._plain = _plain(descriptor.annotation, descriptor.parameter_info) if single else None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if self._plain is not None:
            found = self._plain(value, param, ctx)
            if found is not _TYPER:
                return found
        if self._built is None:
            self._built = build_runtime_param(self._param.type_descriptor)
        return self._built.coerce(value, param=param, ctx=ctx)


def _plain(annotation: Any, info: Any) -> Callable[[Any, Any, Any], Any] | None:
    """How typer's adapter coerces a single value of ``annotation``, where that is plain (the
    order of its cases is typer's own): a ``choice`` parser is called (it raises only
    ``BadParameter``, which the adapter lets through); a string stays itself; an integer
    default within its bounds stays itself; a path, made ``Path(value)`` as the adapter makes
    it, goes through typer's own checks (when it reads as given: they name it in messages).
    ``_TYPER`` for a value that is not plain."""
    parser = getattr(info, "parser", None)
    if parser is not None:
        return (lambda value, param, ctx: parser(value)) if parser in _PARSERS else None
    if annotation is str:
        return lambda value, param, ctx: value if type(value) is str else _TYPER
    if annotation is int and not getattr(info, "clamp", True):
        low, high = getattr(info, "min", None), getattr(info, "max", None)

        def integer(value: Any, param: Any, ctx: Any) -> Any:
            if type(value) is not int or not (low is None or value >= low):
                return _TYPER
            return value if high is None or value <= high else _TYPER

        return integer
    path_type = getattr(info, "path_type", True)
    if isinstance(annotation, type) and issubclass(annotation, Path) and path_type is None:

        def path(value: Any, param: Any, ctx: Any) -> Any:
            if type(value) is str:
                made = annotation(value)
                if str(made) != value:  # its messages would name the path as made, not as given
                    return _TYPER
                value = made
            if not isinstance(value, annotation):
                return _TYPER
            return coerce_cli_path(value, info, path_type=annotation, param=param, ctx=ctx)

        return path
    return None


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
            summary = self.summary(ctx, name)
            if summary is not None:
                rows.append((name, summary))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def summary(self, ctx: Any, name: str) -> str | None:
        """The line --help lists for the command ``name`` (``None``: not listed)."""
        command = self.get_command(ctx, name)
        if command is None or command.hidden:
            return None
        return str(command.get_short_help_str(limit=_WHOLE))
