"""`coverage-gate formats`: the stream formats `record` reads."""

from __future__ import annotations

from coverage_gate.adapters import ADAPTERS
from coverage_gate.commands._common import errors_to_exit
from coverage_gate.stdio import write_stdout


def formats() -> None:
    """List the stream formats `record` reads."""
    lines = [
        f"{name:<16} capability {ADAPTERS[name].capability.value:<9} {ADAPTERS[name].description}\n"
        for name in sorted(ADAPTERS)
    ]
    with errors_to_exit():
        write_stdout("".join(lines), "list of formats")
