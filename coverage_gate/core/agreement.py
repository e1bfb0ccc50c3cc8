"""Do two records of the same run agree? The reviewer's stdout stream and its own telemetry.

Claude Code names a call by the same ``tool_use`` id in its stream-json and in its telemetry, so
the calls of the two sources can be matched one to one. A call in one and not the other, or one
that the two tell differently (another tool, file, kind or outcome), is a disagreement. What only
one side can tell (the lines a read returned, a file's length) is not compared.

Sources that cannot show per-file reads (capability ``none``) are not compared call by call: their
call ids need not match (Codex's ``exec --json`` items and its telemetry's call ids differ).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from coverage_gate.contracts.enums import Capability
from coverage_gate.core.calls import CallRecord

__all__ = ["MAX_SHOWN", "Disagreement", "Side", "comparable", "compare", "report"]

MAX_SHOWN = 20


class Side(StrEnum):
    STREAM = "stream"
    TELEMETRY = "telemetry"


@dataclass(frozen=True, slots=True)
class Disagreement:
    call_id: str
    detail: str


def _told(record: CallRecord) -> tuple[str, str, str | None, str]:
    return (record.tool, record.kind.value, record.path, record.outcome.value)


def _describe(record: CallRecord) -> str:
    where = f" {record.path}" if record.path else ""
    return f"{record.tool}{where} ({record.kind.value}, {record.outcome.value})"


def compare(
    stream: Sequence[CallRecord],
    telemetry: Sequence[CallRecord],
) -> list[Disagreement]:
    """Every call the two sources tell differently, in call id order."""
    ours = {record.call_id: record for record in stream}
    theirs = {record.call_id: record for record in telemetry}
    out: list[Disagreement] = []
    for call_id in sorted(ours.keys() | theirs.keys()):
        one, other = ours.get(call_id), theirs.get(call_id)
        if other is None and one is not None:
            out.append(Disagreement(call_id, f"only in the stream: {_describe(one)}"))
        elif one is None and other is not None:
            out.append(Disagreement(call_id, f"only in the telemetry: {_describe(other)}"))
        elif one is not None and other is not None and _told(one) != _told(other):
            detail = f"the stream says {_describe(one)}, the telemetry {_describe(other)}"
            out.append(Disagreement(call_id, detail))
    return out


def comparable(stream: Capability, telemetry: Capability) -> bool:
    return stream is Capability.PER_FILE and telemetry is Capability.PER_FILE


def report(found: Sequence[Disagreement]) -> list[str]:
    """Lines for people: each disagreement (the first ``MAX_SHOWN``), then how many more."""
    lines = [f"call {item.call_id}: {item.detail}" for item in found[:MAX_SHOWN]]
    if len(found) > MAX_SHOWN:
        lines.append(f"... and {len(found) - MAX_SHOWN} more")
    return lines
