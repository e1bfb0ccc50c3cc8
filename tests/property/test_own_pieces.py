"""``OwnPieces`` is exact (DESIGN §6 rule 29): whatever the model's text and in whatever order it
came, a line is its own exactly when the fewest pieces of that text it is made of are within the
bound. The quick tests on substrings, the waits they keep and the counts kept from one call to
the next only save work: each answer equals a brute-force count over the whole text so far."""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate.core.own_text import OwnPieces, piece_count, pieces_allowed

# a small alphabet, so that pieces meet and lines are often made of them
CHARS = st.text(alphabet="ab c=_(x)", min_size=0, max_size=24)
# a wide one, so that most substrings of a line are not yet in the text
WIDE = "abcdefghijklmnopqrstuvwxyz0123456789 =_()"


def brute_pieces(line: str, strings: list[str]) -> int:
    """The fewest substrings of any of ``strings`` whose concatenation is ``line``."""

    @cache
    def fewest(at: int) -> float:
        if at == len(line):
            return 0
        best = float("inf")
        for end in range(at + 1, len(line) + 1):
            if any(line[at:end] in string for string in strings):
                best = min(best, 1 + fewest(end))
        return best

    return int(min(fewest(0), 10**6))


@settings(max_examples=300, deadline=None)
@given(
    calls=st.lists(st.lists(CHARS, min_size=1, max_size=4), min_size=1, max_size=6),
    lines=st.lists(st.text(alphabet="ab c=_(x)", min_size=1, max_size=60), min_size=1, max_size=8),
)
def test_every_answer_is_the_brute_force_count_over_the_text_so_far(
    calls: list[list[str]], lines: list[str]
) -> None:
    pieces = OwnPieces()
    said: list[str] = []
    for call in calls:
        pieces.add(call)
        said += [string for string in call if string]
        found = pieces.among(set(lines), lambda line: True)
        expected = {line for line in lines if brute_pieces(line, said) <= pieces_allowed(line)}
        assert found == expected


@settings(max_examples=300, deadline=None)
@given(text=CHARS, line=st.text(alphabet="ab c=_(x)", min_size=1, max_size=40))
def test_piece_count_is_the_fewest_pieces_up_to_its_limit(text: str, line: str) -> None:
    limit = pieces_allowed(line)
    brute = brute_pieces(line, [text] if text else [])
    assert piece_count(line, text, limit) == (brute if brute <= limit else limit + 1)


@st.composite
def _pieced(draw: st.DrawFn) -> tuple[list[list[str]], list[str]]:
    """Lines made of pieces of a pool, and calls that bring the pool's strings a few at a time,
    in any order: lines become the model's own as the pieces come."""
    pool = draw(st.lists(st.text(alphabet=WIDE, min_size=1, max_size=12), min_size=2))
    lines = draw(
        st.lists(
            st.lists(st.sampled_from(pool), min_size=1, max_size=9).map("".join),
            min_size=1,
            max_size=8,
        )
    )
    order = draw(st.permutations(pool))
    sizes = draw(st.lists(st.integers(min_value=1, max_value=3), min_size=len(order)))
    calls, at = [], 0
    for size in sizes:
        if at >= len(order):
            break
        calls.append(list(order[at : at + size]))
        at += size
    return calls, lines


@settings(max_examples=400, deadline=None)
@given(_pieced())
def test_lines_that_become_the_models_own_as_its_text_grows_are_found(
    case: tuple[list[list[str]], list[str]],
) -> None:
    calls, lines = case
    pieces = OwnPieces()
    said: list[str] = []
    for call in calls:
        pieces.add(call)
        said += call
        found = pieces.among(set(lines), lambda line: True)
        expected = {line for line in lines if brute_pieces(line, said) <= pieces_allowed(line)}
        assert found == expected
