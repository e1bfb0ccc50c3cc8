"""Placeholder for a reviewer run as a plain subprocess: no per-file reads are observable.

It declares capability ``none``: evidence unavailable, never evidence of absence. Its lines are
counted and nothing else; the stream counts as complete when it ends.
"""

from __future__ import annotations

from collections.abc import Sequence

from coverage_gate.contracts.enums import Capability
from coverage_gate.core.events import Event, FormatKnowledge, LineClass, StreamComplete

__all__ = ["ADAPTER", "NAME", "SubprocessAdapter", "SubprocessDecoder"]

NAME = "subprocess"


class SubprocessDecoder:
    def __init__(self) -> None:
        self._last = 0

    def classify(self, head: bytes) -> LineClass:
        del head
        return LineClass.SKIP

    def decode(self, line: bytes, lineno: int) -> Sequence[Event]:
        del line, lineno
        return []

    def decode_head(self, head: bytes, lineno: int, intact: bool) -> Sequence[Event]:
        del head, lineno, intact
        return []

    def reader(self, max_string_bytes: int) -> None:
        del max_string_bytes  # never asked for: no line is classified PARSE

    def finish(self) -> Sequence[Event]:
        return [StreamComplete(line=0)]


class SubprocessAdapter:
    name = NAME
    capability = Capability.NONE
    description = "any command's output; evidence unavailable (capability none)"
    # nothing of the output is read: no event, tool or version to know, so nothing can drift
    knows = FormatKnowledge(
        client="any command", events=frozenset(), reads=frozenset(), not_reads={}
    )

    def decoder(self) -> SubprocessDecoder:
        return SubprocessDecoder()

    def sniff(self, head_lines: Sequence[bytes]) -> bool:
        del head_lines
        return False


ADAPTER = SubprocessAdapter()
