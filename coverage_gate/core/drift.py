"""What a stream held that its adapter did not understand, said to a person (DESIGN §6 rule 19).

Pure: words from an evidence document and what the adapter knows. ``drift_warning`` is the one
line ``record`` and ``run`` print on stderr; ``diagnose`` is ``coverage-gate formats --check``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coverage_gate.core.versions import outside

if TYPE_CHECKING:
    from coverage_gate.contracts import evidence_doc, model
    from coverage_gate.core.events import FormatKnowledge

    Document = evidence_doc.EvidenceDocument | model.EvidenceDocument
    Entry = evidence_doc.DriftEntry | model.DriftEntry

__all__ = ["Diagnosis", "checked_range", "diagnose", "drift_warning"]

#: Drift entries the one-line warning names; the rest are counted.
WARNING_ENTRIES = 3


def checked_range(knows: FormatKnowledge | None) -> str:
    """The client versions an adapter was checked against, in words."""
    if knows is None or knows.versions is None:
        return "no client version checked (the stream names none)"
    oldest, newest = knows.versions
    if oldest == newest:
        return f"{knows.client} {newest}"
    return f"{knows.client} {oldest} to {newest}"


def _entry(entry: Entry) -> str:
    count = f" x{entry.count}" if entry.count > 1 else ""
    line = f" (first at line {entry.first_line})" if entry.first_line else ""
    return f"{entry.kind.value} {entry.name}{count}{line}"


def drift_warning(document: Document, knows: FormatKnowledge | None) -> str | None:
    """One line naming what was not understood and what to do; ``None`` without drift."""
    drift: Sequence[Entry] = document.drift
    if not drift:
        return None
    named = [_entry(entry) for entry in drift[:WARNING_ENTRIES]]
    more = len(drift) - len(named) + document.drift_dropped
    listed = "; ".join(named) + (f"; and {more} more" if more > 0 else "")
    if any(entry.hides_reads for entry in drift):
        effect = "claims without evidence are unknown, never unsupported"
    else:
        effect = "nothing in it could hide a read; the verdict rules are unchanged"
    return (
        f"coverage-gate: warning: the {document.source} stream held what this version does not "
        f"understand ({listed}): {effect}; upgrade coverage-gate, or pin the client to "
        f"{checked_range(knows)}"
    )


@dataclass(frozen=True)
class Diagnosis:
    """What ``formats --check`` found in one stream."""

    format: str
    detected: bool  # the format was told from the stream's first lines, not given
    client_version: str | None
    checked: str
    in_range: bool | None  # None: no version to compare
    drift: tuple[str, ...]
    drift_dropped: int
    hides_reads: bool
    calls: int
    lines: int

    def render(self) -> str:
        how = "detected from its first lines" if self.detected else "as given"
        version = self.client_version or "not named by the stream"
        if self.in_range is None:
            ranged = ""
        elif self.in_range:
            ranged = " (in the checked range)"
        else:
            ranged = " (OUTSIDE the checked range)"
        out = [
            f"format          {self.format} ({how})",
            f"client version  {version}{ranged}",
            f"checked with    {self.checked}",
            f"stream          {self.lines} lines, {self.calls} tool calls recognised",
        ]
        if not self.drift:
            out.append("drift           none: the adapter understood every line")
        else:
            out.append(f"drift           {len(self.drift) + self.drift_dropped} kind(s):")
            out += [f"  - {item}" for item in self.drift]
            if self.drift_dropped:
                out.append(f"  - and {self.drift_dropped} more, not kept")
            out.append(
                "effect          "
                + (
                    "claims without evidence would be unknown (the adapter cannot vouch for an "
                    "absence); upgrade coverage-gate, or pin the client to the checked range"
                    if self.hides_reads
                    else "said and counted only; no verdict changes"
                )
            )
        return "\n".join(out) + "\n"


def diagnose(document: Document, knows: FormatKnowledge | None, *, detected: bool) -> Diagnosis:
    version = document.client_version
    in_range = None
    if version is not None and knows is not None and knows.versions is not None:
        in_range = outside(version, knows.versions) is None
    return Diagnosis(
        format=document.source,
        detected=detected,
        client_version=version,
        checked=checked_range(knows),
        in_range=in_range,
        drift=tuple(_entry(entry) for entry in document.drift),
        drift_dropped=document.drift_dropped,
        hides_reads=any(entry.hides_reads for entry in document.drift),
        calls=document.counters.calls,
        lines=document.counters.lines,
    )
