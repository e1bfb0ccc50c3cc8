"""`coverage-gate config`: the effective settings and where each came from, as `git config
--show-origin` shows them (``coverage_gate.edges.config_file``)."""

from __future__ import annotations

import os

from coverage_gate.edges.stdio import write_stdout

__all__ = ["config"]


def config() -> None:
    """Print each setting the environment or the settings file holds (.coverage-gate.toml, or
    [tool.coverage-gate] in pyproject.toml, in the current directory) and where it came from;
    precedence: command line, environment, file, flag payload, default."""
    from coverage_gate.edges.config_file import SETTINGS, applied  # noqa: PLC0415

    path, entries = applied()
    by_key = {entry.key: entry for entry in entries}
    lines = [f"settings file: {path if path is not None else f'none in {os.getcwd()}'}"]
    width = max(len(key) for key in SETTINGS)
    for key, variable in SETTINGS.items():
        entry = by_key.get(key)
        if entry is not None and entry.used:
            lines.append(f"{key:<{width}} = {entry.value}  ({entry.origin})")
        elif variable in os.environ:
            shown = os.environ[variable]
            overridden = f"; {entry.origin} says {entry.value}" if entry is not None else ""
            lines.append(f"{key:<{width}} = {shown}  (environment {variable}{overridden})")
        elif key.endswith("-policy") or key == "mode":
            lines.append(f"{key:<{width}}   not set (the flag's payload, else the default)")
        else:
            lines.append(f"{key:<{width}}   not set (the default)")
    write_stdout("\n".join(lines) + "\n", "settings")
