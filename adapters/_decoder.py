"""What the JSON-lines formats share: reading a line into an object, following whether the stream
is complete, declaring a format and telling it by its first lines, recovering the one call id
an unreadable line names, and the model's own text in a message's content blocks. Each format's
own rules (which kinds of line count, what a call is, which lines complete the stream, how an
unreadable line is judged) stay in its module.

Everything here is pure: no I/O.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from coverage_gate.contracts.enums import Capability
from coverage_gate.core.events import (
    Event,
    FormatKnowledge,
    LineClass,
    Malformed,
    ModelText,
    StreamComplete,
    StreamReopened,
)

from ._json import JsonObject, is_blank, load_object
from ._stream import ObjectLineReader, Spec, load_line

__all__ = [
    "D",
    "JsonLinesAdapter",
    "JsonLinesDecoder",
    "model_text_blocks",
    "single_id",
    "sniff_lines",
]


class JsonLinesDecoder(ABC):
    """A decoder of one JSON object per line.

    A line is passed over when it is blank or its head matches ``skip_head`` (model output and
    other lines known from their first bytes to hold no call); any other line is read, whole
    (``decode``) or, when it is too long to hold, as it flows (``reader``), keeping only what
    ``spec`` names. Either way the format's ``_decoded`` gets the object, or why there is none.

    A decoder also follows whether the stream is complete: its completion marker was seen
    (``_mark_complete``) and no later activity reopened it (``_mark_reopened``); DESIGN §6 rule 9.
    """

    spec: ClassVar[Spec]
    skip_head: ClassVar[re.Pattern[bytes] | None] = None

    def __init__(self) -> None:
        self._complete = False

    def classify(self, head: bytes) -> LineClass:
        if is_blank(head) or (self.skip_head is not None and self.skip_head.match(head)):
            return LineClass.SKIP
        return LineClass.PARSE

    def decode(self, line: bytes, lineno: int) -> Sequence[Event]:
        return self._decoded(load_line(line, lineno, self.spec), line, lineno, whole=True)

    def reader(self, max_string_bytes: int) -> ObjectLineReader:
        return ObjectLineReader(self.spec, max_string_bytes, self._streamed)

    def decode_head(self, head: bytes, lineno: int, intact: bool) -> Sequence[Event]:
        return []  # never asked for: no line is classified HEAD_ONLY

    def finish(self) -> Sequence[Event]:
        return []

    def _mark_complete(self, lineno: int) -> list[Event]:
        """The stream's completion marker: the stream is complete from here on."""
        self._complete = True
        return [StreamComplete(line=lineno)]

    def _mark_reopened(self, lineno: int) -> list[Event]:
        """Activity after the completion marker reopens the stream (nothing before it)."""
        if not self._complete:
            return []
        self._complete = False
        return [StreamReopened(line=lineno)]

    def _streamed(self, obj: JsonObject | Malformed, seen: bytes, lineno: int) -> Sequence[Event]:
        return self._decoded(obj, seen, lineno, whole=False)

    @abstractmethod
    def _decoded(
        self, obj: JsonObject | Malformed, seen: bytes, lineno: int, *, whole: bool
    ) -> Sequence[Event]:
        """The events of one line: its object, or why it has none. ``seen`` is the line's bytes
        (its first bytes only, when ``whole`` is false: the line was read as it flowed), to
        recover what they can tell of an unreadable line."""


D = TypeVar("D", bound=JsonLinesDecoder)


@dataclass
class JsonLinesAdapter(Generic[D]):
    """A JSON-lines format: its name, what it can see, a decoder per stream, and how its first
    lines look (``sniff_head`` and ``looks_like``: see ``sniff_lines``)."""

    name: str
    capability: Capability
    description: str
    decoder: Callable[[], D]
    sniff_head: re.Pattern[bytes]
    looks_like: Callable[[JsonObject], bool]
    # what it knows of its format: anything else in a stream is drift (DESIGN §6 rule 19)
    knows: FormatKnowledge
    # Its per-file evidence is what calls printed, compared with the files at the revision, and
    # nothing else (no parsed reads): without those files it can show nothing (capability none).
    by_content: bool = False

    def sniff(self, head_lines: Sequence[bytes]) -> bool:
        return sniff_lines(head_lines, self.sniff_head, self.looks_like)


def sniff_lines(
    head_lines: Sequence[bytes], head: re.Pattern[bytes], looks_like: Callable[[JsonObject], bool]
) -> bool:
    """Whether any non-blank line looks like the format: its object by ``looks_like``, or, for a
    line that cannot be read (cut off where the stream's head was taken), its head by ``head``."""
    return any(_sniffed(line, head, looks_like) for line in head_lines if not is_blank(line))


def _sniffed(
    line: bytes, head: re.Pattern[bytes], looks_like: Callable[[JsonObject], bool]
) -> bool:
    obj = load_object(line, 0)
    if isinstance(obj, Malformed):
        return head.match(line) is not None
    return looks_like(obj)


def single_id(seen: bytes, pattern: re.Pattern[bytes]) -> str | None:
    """The one call id ``pattern`` finds in the bytes of an unreadable line, or ``None`` when
    there is none, more than one, or one whose bytes are not UTF-8."""
    found = pattern.findall(seen)
    if len(found) != 1:
        return None
    call_id: str = found[0].decode("utf-8", "replace")
    return None if "\ufffd" in call_id else call_id


def model_text_blocks(content: object, lineno: int) -> list[Event]:
    """The model's own text in a message's content blocks (Anthropic's shape, which Claude Code,
    Qwen Code and pi write): each ``text`` block's text and ``thinking`` block's thinking, never
    evidence (DESIGN §6 rule 29)."""
    found: list[Event] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        text = block.get("text") if kind == "text" else block.get("thinking")
        if kind in ("text", "thinking") and isinstance(text, str) and text:
            found.append(ModelText(line=lineno, text=text))
    return found
