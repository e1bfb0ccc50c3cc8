"""`coverage-gate formats`: the stream formats `record` reads."""

from __future__ import annotations

from coverage_gate.commands._common import errors_to_exit
from coverage_gate.enums import Capability
from coverage_gate.stdio import write_stdout


def formats() -> None:
    """List the stream formats `record` reads."""
    from coverage_gate.adapters import ADAPTERS, DOCUMENT_FORMATS  # noqa: PLC0415 - start-up

    described = {
        **{
            name: (adapter.capability.value, adapter.description)
            for name, adapter in ADAPTERS.items()
        },
        # a task's metadata gives per-file evidence when it holds a trace (see its description)
        **{name: (Capability.PER_FILE.value, text) for name, text in DOCUMENT_FORMATS.items()},
    }
    lines = [
        f"{name:<16} capability {described[name][0]:<9} {described[name][1]}\n"
        for name in sorted(described)
    ]
    with errors_to_exit():
        write_stdout("".join(lines), "list of formats")
