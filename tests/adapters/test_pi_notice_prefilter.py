"""The cheap test before pi's notice is looked for (``_notice_at``: the text must end with a
closing bracket and white space) lets every notice through: over texts made of notices, brackets,
every kind of white space and other characters, it finds what the notice pattern alone finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.pi_rpc import _NOTICE, _NOTICE_TAIL, _notice_at

PIECES = st.sampled_from(
    [
        "[Showing lines 1-2 of 9. Use offset=3 to continue.]",
        "[Showing last 20 lines]",
        "[Output truncated at 50KB]",
        "[12 more lines in file. Use offset=40 to continue.]",
        "[Showing lines",
        "]",
        "[",
        "\n",
        " ",
        "\t",
        "\u00a0",
        "\u2003",
        "\x1c",
        "x = [1]",
        "word",
    ]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(PIECES, max_size=12), st.integers(0, 700))
def test_the_notice_is_found_as_the_pattern_alone_finds_it(pieces: list[str], pad: int) -> None:
    text = "a" * pad + "".join(pieces)
    tail = max(len(text) - _NOTICE_TAIL, 0)
    found, wanted = _notice_at(text, tail), _NOTICE.search(text, tail)
    assert (found and found.span()) == (wanted and wanted.span())
