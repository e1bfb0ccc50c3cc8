"""The model's own text is split into words as ``shlex`` splits it (DESIGN §6 rule 25): a line
with no double quote, backslash or ``#`` by one pattern, every other line by ``shlex``. Over
lines of every character either treats apart, the words are the same as ``shlex``'s, and a quote
that does not close leaves the line as it is."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate.core.own_text import _tokens


def shlex_words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return [line]


# shlex's white space, quotes, punctuation, escape and comment, other white space, and letters
CHARS = st.sampled_from(list(" \t\r'\"();<>|&\\#\x0b\x0c\u00a0$=-.~*ab"))


@settings(max_examples=5000, deadline=None)
@given(st.text(CHARS, max_size=24))
def test_a_line_is_split_into_the_words_shlex_makes(line: str) -> None:
    assert _tokens(line) == shlex_words(line)


@settings(max_examples=3000, deadline=None)
@given(st.text(st.sampled_from(list(" \t'();<>|&\u00a0ab$")), max_size=30))
def test_lines_the_pattern_splits_are_split_as_shlex_splits_them(line: str) -> None:
    """Only characters the pattern reads (no double quote, backslash or ``#``)."""
    assert _tokens(line) == shlex_words(line)


def test_a_command_of_quoted_scripts_is_split_without_shlex() -> None:
    line = "sed -n '1,$p' src/a.py && printf 'total = %d' 3|tee ''"
    assert _tokens(line) == ["sed", "-n", "1,$p", "src/a.py", "&&", "printf", "total = %d",
                             "3", "|", "tee", ""]  # fmt: skip
