"""How a client presents a file's bytes to the model, declared per adapter (DESIGN §6 rule 23).
Pure.

Between a file's bytes and what the model receives, every client transforms the text: it
decodes it (undecodable bytes as U+FFFD, or in a legacy encoding it guesses), drops a byte-order
mark, turns CRLF (or a lone CR) into line breaks, trims trailing white space, renders shell
output as a terminal would (escape sequences gone, tabs as spaces), cuts long lines with a marker
of its own. The adapter takes off what the client wraps around the text (numbers, headers,
notices, placeholders); what is left is compared with the revision *in this presentation*: a
line of the text is the revision's line when it is that line as this client presents it.

Every transform is lossy in white space, control characters or the spelling of bytes that are
not UTF-8, never in the characters a change is made of: a line that differs from the revision's
in one letter, digit or punctuation mark is never explained by a presentation. Each transform is
named with the capture that shows it (``tests/data/presentation/<client>-<release>/``), at both
client releases CI runs.

Lines are compared through ``Presentation.key``: both sides are brought to the same form (the
transforms this client applies, applied to the revision's line too, so that comparing is one
string equality) and, where the revision's bytes are not UTF-8, through the legacy decodings the
client is declared to make (``Presentation.legacy``): U+FFFD stands for the bytes that are not
UTF-8 exactly where they are, and nowhere else.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

__all__ = [
    "BASELINE",
    "LEGACY_ENCODINGS",
    "LineCut",
    "Presentation",
    "Transform",
    "cut_at",
    "line_keys",
    "rendered",
    "text_lines",
    "utf16_units",
]

# CSI and OSC escape sequences, as a terminal consumes them
_ESCAPES: Final = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# C0 controls other than tab, and DEL, which a terminal does not print
_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_NEEDS_TERMINAL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\t]")
# what a terminal's line discipline breaks a line at: a form feed, a vertical tab
_PAGE_BREAKS: Final = re.compile(r"[\f\v]")


class Transform(msgspec.Struct, frozen=True, kw_only=True):
    """One thing a client does to the text, and the capture that shows it."""

    name: str
    shown_by: str


def utf16_units(text: str) -> int:
    """The length of ``text`` as JavaScript counts it (UTF-16 code units): the unit the clients
    written in it (OpenCode, Gemini CLI) cut a long line in."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class LineCut(msgspec.Struct, frozen=True, kw_only=True):
    """How one tool of a client cuts a long line (DESIGN §6 rule 28): a line longer than
    ``length`` units (``utf16_units``) is its first ``length`` units and then ``marker``. Only
    that tool's output is ever cut so; anywhere else, and at any other length, the marker is
    ordinary text."""

    tool: str
    marker: str
    length: int

    def kept(self, line: str) -> str | None:
        """The start of the line a cut line kept: ``None`` unless ``line`` ends with the marker
        right after ``length`` units of text."""
        if not line.endswith(self.marker):
            return None
        kept = line[: -len(self.marker)]
        return kept if utf16_units(kept) == self.length else None


class Presentation(msgspec.Struct, frozen=True, kw_only=True):
    """A client's presentation of a file's text (module notes).

    ``trims_trailing_space``: each line's trailing blanks are gone (Qwen Code ``read_file``);
    ``terminal``: shell output as a terminal renders it: escape sequences and control
    characters gone, tabs as spaces (every line compared without them on both sides);
    ``lone_cr_breaks``: a CR inside a line ends the line (OpenCode ``read``);
    ``terminal_breaks``: a terminal's line discipline (Qwen Code 0.23.0's shell output): a form
    feed or a vertical tab ends the line, and a CR inside a line returns to its start, so that
    what follows overwrites it (``progress: 10%\r100%`` shows ``100%ress: 10%``); both sides are
    broken at a form feed or a vertical tab, and a line holding a CR is also compared as it
    renders;
    ``legacy``: the encodings the client may decode bytes that are not UTF-8 in (Qwen Code);
    ``line_cuts``: the tools that cut a long line, each with its marker and length (the text
    before the marker is the start of the revision's line; where the stream does not carry a
    read's text and says lines were shortened, the length tells which, Gemini CLI);
    ``transforms``: what the client does, each with its capture, as ``coverage-gate formats
    NAME`` lists it."""

    trims_trailing_space: bool = False
    terminal: bool = False
    lone_cr_breaks: bool = False
    terminal_breaks: bool = False
    legacy: tuple[str, ...] = ()
    line_cuts: tuple[LineCut, ...] = ()
    transforms: tuple[Transform, ...] = ()

    @property
    def plain(self) -> bool:
        """Whether a line's key is the line itself, unless it holds a BOM or a CR."""
        return not (self.terminal or self.trims_trailing_space)

    def lines(self, text: str) -> list[str]:
        """A text's lines as this client breaks them (``text_lines``, and at a form feed or a
        vertical tab for a terminal's line discipline)."""
        lines = text_lines(text)
        if self.terminal_breaks and ("\f" in text or "\v" in text):
            return [part for line in lines for part in _PAGE_BREAKS.split(line)]
        return lines

    def keys(self, lines: list[str], text: str) -> list[str]:
        """The keys of ``lines`` (all of ``text``): the lines themselves when nothing in the
        text could make a key differ (most texts, compared at memory speed)."""
        if self.plain and "\r" not in text and "\ufeff" not in text:
            return lines
        key = self.key
        return [key(line) for line in lines]

    def key(self, line: str) -> str:
        """A line in the form both sides are compared in: without a byte-order mark or a CR at
        its end, and in this presentation's white space and controls."""
        if line[:1] == "\ufeff":
            line = line[1:]
        if line[-1:] == "\r":
            line = line[:-1]
        if self.terminal and (
            _NEEDS_TERMINAL.search(line) is not None
            or "  " in line
            or line[:1] == " "
            or line[-1:] == " "
        ):
            # white space as columns, not characters: runs of it are one blank on both sides
            line = " ".join(_CONTROLS.sub("", _ESCAPES.sub("", line)).split())
        if self.trims_trailing_space or self.terminal:
            line = line.rstrip(" \t")
        return line

    def cut_of(self, tool: str | None) -> LineCut | None:
        """How ``tool`` cuts a long line, when it does (no other tool's output is ever cut)."""
        for cut in self.line_cuts:
            if cut.tool == tool:
                return cut
        return None


def text_lines(text: str) -> list[str]:
    """A text's lines, without a last empty one after a final newline, a CR before a line
    break taken off."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" not in text:
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def rendered(line: str) -> str:
    """A line as a terminal leaves it when a CR inside it returns to the line's start: each
    part after a CR overwrites the start of what is there."""
    parts = line.split("\r")
    shown = list(parts[0])
    for part in parts[1:]:
        shown[: len(part)] = part
    return "".join(shown)


def line_keys(presentation: Presentation, raw: bytes) -> list[str]:
    """The keys of a line's every declared decoding: UTF-8 (undecodable bytes as U+FFFD, each
    where it is) first, then each legacy encoding that decodes it."""
    keys = [presentation.key(raw.decode("utf-8", "replace"))]
    for encoding in presentation.legacy:
        try:
            keys.append(presentation.key(raw.decode(encoding)))
        except UnicodeDecodeError:
            continue
    return keys


def cut_at(presentation: Presentation, cut: LineCut, shown: str, revision: str) -> bool:
    """Whether ``shown`` is ``revision`` as the tool whose ``cut`` it is cuts it: the line is
    longer than the cut's length, and ``shown`` is its start of that length, then the marker."""
    kept = cut.kept(shown)
    return (
        kept is not None
        and utf16_units(revision) > cut.length
        and presentation.key(revision).startswith(presentation.key(kept))
    )


#: The legacy encodings a client that guesses an encoding is declared to decode in.
LEGACY_ENCODINGS: Final = ("cp1252", "latin-1", "shift_jis", "gbk", "euc_kr", "euc_jp", "big5")

#: What every client does: nothing but UTF-8 with U+FFFD for what is not, a byte-order mark
#: that is not shown, CRLF as a line break.
BASELINE: Final = Presentation()
