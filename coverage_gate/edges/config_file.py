"""The repository's settings file: ``.coverage-gate.toml``, or ``[tool.coverage-gate]`` in
``pyproject.toml``, in the current directory (where a pipeline runs, at the checkout's root).

Every setting the environment holds has a key here (``SETTINGS``: key -> variable), and a key
holds what its variable would. Precedence, highest first: the command line, the environment,
this file, the feature flag's payload, the defaults. The file is the repository's committed
environment: a run's own environment (a CI job's) says more about that run than the file does,
and the file, written by the repository's owners, says more than the central flag, as the
environment already did. The Unleash API token is not a key: a secret does not belong in a
committed file (keep it in the environment).

``apply`` reads the file once, at start-up, and sets each variable the environment does not
hold; ``applied`` says which came from where (``coverage-gate config`` prints it). A file that
does not parse, a key that does not exist, or a value of the wrong type is bad configuration
(exit 4), named with the file and its line.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from coverage_gate.errors import BadConfigError

__all__ = [
    "DESCRIPTIONS",
    "FILE_NAME",
    "SECRETS",
    "SETTINGS",
    "Applied",
    "applied",
    "apply",
    "find",
]

FILE_NAME: Final = ".coverage-gate.toml"
_PYPROJECT: Final = "pyproject.toml"
_TABLE: Final = "tool.coverage-gate"

#: Each key of the file, and the environment variable it stands for.
SETTINGS: Final[dict[str, str]] = {
    "mode": "COVERAGE_GATE_MODE",
    "fallback-mode": "COVERAGE_GATE_FALLBACK_MODE",
    "depth-policy": "COVERAGE_GATE_DEPTH_POLICY",
    "unknown-policy": "COVERAGE_GATE_UNKNOWN_POLICY",
    "citation-policy": "COVERAGE_GATE_CITATION_POLICY",
    "mutation-policy": "COVERAGE_GATE_MUTATION_POLICY",
    "flags": "COVERAGE_GATE_FLAGS",
    "flag-name": "COVERAGE_GATE_FLAG_NAME",
    "flags-on-error": "COVERAGE_GATE_FLAGS_ON_ERROR",
    "flags-disk-copy": "COVERAGE_GATE_FLAGS_DISK_COPY",
    "unleash-url": "UNLEASH_URL",
    "unleash-app-name": "UNLEASH_APP_NAME",
    "unleash-environment": "UNLEASH_ENVIRONMENT",
    "telemetry-dir": "COVERAGE_GATE_TELEMETRY_DIR",
    "prometheus-headers": "COVERAGE_GATE_PROMETHEUS_HEADERS",
    "quiet": "COVERAGE_GATE_QUIET",
}
#: Settings that are environment only: a secret does not belong in a committed file.
SECRETS: Final = {"unleash-api-token": "UNLEASH_API_TOKEN"}

#: What each setting sets, for the documentation's table of variables (a test holds every key of
#: ``SETTINGS`` and ``SECRETS`` to one).
DESCRIPTIONS: Final[dict[str, str]] = {
    "mode": "The mode for every repository: off, shadow or enforce. Set, it wins over the flag.",
    "fallback-mode": "The mode when no flag source answers (default shadow).",
    "depth-policy": "How much of a claimed file's change its evidence must show: accept, "
    "any-hunk or all-hunks.",
    "unknown-policy": "Whether claims whose evidence is unavailable downgrade an Approve: accept "
    "(default) or downgrade.",
    "citation-policy": "Whether a citation that does not match the file at the revision "
    "downgrades an Approve: accept or downgrade.",
    "mutation-policy": "What a reviewer that changed files during its review does to its "
    "coverage: accept (recorded and said) or downgrade.",
    "flags": "A flags snapshot file (from `coverage-gate flags pull`): the flag source, offline.",
    "flag-name": "The feature flag's name (default review.coverage-reconciler).",
    "flags-on-error": "On a corrupt snapshot or variant payload: fail (exit 4) or use the "
    "fallback mode.",
    "flags-disk-copy": "Where the last good Unleash answer is kept (default "
    "~/.cache/coverage-gate/flags.json; empty: none).",
    "unleash-url": "The Unleash server's API URL: the flag source, online.",
    "unleash-app-name": "The application name the Unleash client reports (default coverage-gate).",
    "unleash-environment": "The environment in the flag's evaluation context.",
    "unleash-api-token": "The Unleash client API token.",
    "telemetry-dir": "The local telemetry folder `reconcile` writes and `report` reads (default "
    "$XDG_STATE_HOME/coverage-gate/telemetry).",
    "prometheus-headers": "Request headers for `report --prometheus` (name=value,...).",
    "quiet": "Write warnings and errors only (true or false); `-q` on the command line.",
}


@dataclass(frozen=True)
class Applied:
    """A setting the file holds: its key, value, where (``file:line``), and whether it was
    used (``False``: the environment already held its variable, and wins)."""

    key: str
    variable: str
    value: str
    origin: str
    used: bool


_APPLIED: list[Applied] = []
_FOUND: list[Path] = []


def applied() -> tuple[Path | None, list[Applied]]:
    """The file read at start-up (``None``: none), and the settings it holds."""
    return (_FOUND[0] if _FOUND else None), list(_APPLIED)


def find(folder: Path) -> Path | None:
    """The settings file in ``folder``: ``.coverage-gate.toml``, else a ``pyproject.toml``
    with a ``[tool.coverage-gate]`` table."""
    own = folder / FILE_NAME
    if own.is_file():
        return own
    pyproject = folder / _PYPROJECT
    try:
        if pyproject.is_file() and b"[tool.coverage-gate]" in pyproject.read_bytes():
            return pyproject
    except OSError:
        return None
    return None


def apply(environ: MutableMapping[str, str], folder: Path) -> None:
    """Read the settings file of ``folder``, if any, and set each variable ``environ`` does not
    hold (module notes)."""
    path = find(folder)
    if path is None:
        return
    _FOUND[:] = [path]
    _APPLIED.clear()
    for key, value, line in _entries(path):
        variable = SETTINGS[key]
        used = variable not in environ
        if used:
            environ[variable] = value
        _APPLIED.append(Applied(key, variable, value, f"{path.name}:{line}", used))


def _entries(path: Path) -> list[tuple[str, str, int]]:
    import tomllib  # noqa: PLC0415 - only when there is a file

    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise BadConfigError(f"settings file {path}: cannot be read ({error})") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BadConfigError(f"settings file {path}: {error}") from None
    table: Any = document
    if path.name == _PYPROJECT:
        table = document.get("tool", {}).get("coverage-gate", {})
    if not isinstance(table, dict):
        raise BadConfigError(f"settings file {path}: [{_TABLE}] is not a table")
    found: list[tuple[str, str, int]] = []
    for key, value in table.items():
        line = _line_of(text, key, path.name == _PYPROJECT)
        where = f"settings file {path}: line {line}: key {key!r}"
        if key in SECRETS:
            raise BadConfigError(
                f"{where}: a secret does not belong in a committed file; set "
                f"{SECRETS[key]} in the environment"
            )
        if key not in SETTINGS:
            raise BadConfigError(f"{where} is not a setting (known: {', '.join(SETTINGS)})")
        if isinstance(value, bool) and key == "quiet":
            found.append((key, "1" if value else "0", line))
        elif isinstance(value, str):
            found.append((key, value, line))
        else:
            raise BadConfigError(f"{where}: expected a string, not {type(value).__name__}")
    return found


def _line_of(text: str, key: str, in_table: bool) -> int:
    """The line of ``text`` that sets ``key`` (in ``[tool.coverage-gate]`` for a pyproject)."""
    inside = not in_table
    pattern = re.compile(rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*=""")
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if in_table and stripped.startswith("["):
            inside = stripped.replace(" ", "") in (f"[{_TABLE}]", '[tool."coverage-gate"]')
            continue
        if inside and pattern.match(line):
            return number
    return 0
