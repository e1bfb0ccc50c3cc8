"""Presenting a file as each client does and checking it never gives ``mismatch``; changing one
character of a line that is not white space always does (DESIGN §6 rules 23-24).

A file is drawn from lines of text, white space, tabs, escape sequences, non-ASCII letters, a
BOM at its start and CRLF endings, and for a client whose shell output passes a terminal's line
discipline, form feeds, vertical tabs and CRs inside lines; each client's presentation is applied to it as the client
does (``present`` below follows the transforms each adapter declares, shown by the captures in
``tests/data/presentation``), and the read check compares the result with the file.

Files have two lines or more: a one-line file whose only line differs has nothing left to align
with, and is ``unchecked`` (no positive evidence of other content), unless the stream itself
wrote it (``tests/record/test_content_captures.py``'s shell redirect)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters import ADAPTERS
from coverage_gate.contracts.enums import ContentCheck
from coverage_gate.core.content_check import check_read
from coverage_gate.core.events import Returned
from coverage_gate.core.presentation import Presentation, rendered

CLIENTS = ["claude-code", "copilot-cli", "gemini-cli", "opencode", "pi-rpc", "qwen-code"]
WORD = st.sampled_from(["total", "value", "名前", "café", "x1", "return", "#", "=", "(a, b)"])
SPACE = st.sampled_from([" ", "  ", "\t", ""])
LINE = st.lists(st.tuples(WORD, SPACE), min_size=1, max_size=6).map(
    lambda parts: "".join(word + space for word, space in parts)
)
FILE = st.tuples(
    st.lists(LINE, min_size=2, max_size=12),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
_ESCAPES = re.compile(r"\x1b\[[0-9;]*m")


def presentation(name: str) -> Presentation:
    return ADAPTERS[name].knows.presentation


def file_bytes(
    lines: list[str], bom: bool, crlf: bool, colour: bool, controls: bool = False
) -> bytes:
    if controls:  # a form feed, a vertical tab, a CR that a terminal returns to the start at
        marks = ["\f", "\v", "\r"]
        lines = [
            f"{line}{marks[index % 3]}{line[:3]}" if index % 2 else line
            for index, line in enumerate(lines)
        ]
    if colour:
        lines = [
            f"\x1b[31m{line}\x1b[0m" if index % 3 == 0 else line for index, line in enumerate(lines)
        ]
    text = ("\r\n" if crlf else "\n").join(lines) + ("\r\n" if crlf else "\n")
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode()


def present(data: bytes, shown: Presentation) -> str:
    """The file as a client with ``shown`` gives it to the model: BOM dropped, CRLF as LF,
    trailing blanks trimmed where it trims them, a terminal's rendering where it renders."""
    text = data.decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if shown.terminal_breaks:  # a terminal's line discipline
        lines = [rendered(part) for line in lines for part in re.split("[\f\v]", line)]
    if shown.terminal:
        lines = [_ESCAPES.sub("", line).expandtabs(8) for line in lines]
    if shown.trims_trailing_space or shown.terminal:
        lines = [line.rstrip(" \t") for line in lines]
    return "\n".join(lines)


@pytest.mark.parametrize("client", CLIENTS)
@settings(max_examples=60, deadline=None)
@given(drawn=FILE)
def test_a_file_as_the_client_presents_it_is_never_a_mismatch(
    client: str, drawn: tuple[list[str], bool, bool, bool, bool]
) -> None:
    lines, bom, crlf, colour, controls = drawn
    shown = presentation(client)
    data = file_bytes(
        lines, bom, crlf, colour and shown.terminal, controls and shown.terminal_breaks
    )
    result = check_read(Returned(text=present(data, shown)), data, None, shown)
    assert result.check is ContentCheck.MATCHED


@pytest.mark.parametrize("client", CLIENTS)
@settings(max_examples=60, deadline=None)
@given(drawn=FILE, where=st.integers(0, 10_000), to=st.sampled_from(["Z", "7", ";", "é"]))
def test_one_changed_character_that_is_not_white_space_is_always_a_mismatch(
    client: str, drawn: tuple[list[str], bool, bool, bool, bool], where: int, to: str
) -> None:
    lines, bom, crlf, _colour, controls = drawn
    shown = presentation(client)
    data = file_bytes(lines, bom, crlf, colour=False, controls=controls and shown.terminal_breaks)
    text = present(data, shown)
    places = [index for index, ch in enumerate(text) if not ch.isspace() and ch != to]
    if not places:
        return
    at = places[where % len(places)]
    changed = text[:at] + to + text[at + 1 :]
    result = check_read(Returned(text=changed), data, None, shown)
    assert result.check is ContentCheck.MISMATCH, (text, changed)
