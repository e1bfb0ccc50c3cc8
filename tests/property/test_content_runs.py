"""The content index finds runs (DESIGN §6 rule 25) exactly as following every line of a text
does: a slice-at-a-time scan of the lines the index holds, against a line-by-line reference
that looks every line's places up by brute force. Texts are made of slices of the files, of the
pinned diff, of lines the client cut with its marker, of lines a terminal renders (a CR inside
them) and of stray lines, with some of the model's own lines among them."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from itertools import product
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate.core import content_index as cc
from coverage_gate.core.content_index import DIFF_KEY, ContentIndex
from coverage_gate.core.presentation import LineCut, Presentation

# the tool whose output the texts are cuts a long line at nine characters, marked " [cut]"
LINE_CUT = LineCut(tool="read", marker=" [cut]", length=9)
PRESENTATION = Presentation(line_cuts=(LINE_CUT,), terminal_breaks=True)
WORDS = [
    "alpha = compute(1)",
    "beta = compute(2)",
    "gamma(delta)",
    "return alpha + beta",
    "progress = 10\rdone = 100",
    "total = compute_everything_that_matters(alpha, beta)",
]
CUT = ["alpha = c [cut]", "return al [cut]"]
RENDERED = ["done = 100= 10"]  # "progress = 10\rdone = 100" as a terminal leaves it
LINE = st.sampled_from([*WORDS, "", "}", "x"])
DIFF_LINE = st.sampled_from(
    [
        "diff --git a/a.py b/a.py",
        "+++ b/a.py",
        "--- a/a.py",
        *(f"{sign}{word}" for sign in "+- " for word in [*WORDS[:4], WORDS[5]]),
        "+}",
    ]
)
PATHS = ["a.py", "b.py", "c.py"]


def reference_runs(index: ContentIndex, out: Sequence[str], own: AbstractSet[str]) -> list[Any]:
    """Every run, following each line of the text in turn (the scan as it was first written),
    each line's places found by comparing it with every line of every file."""

    def places_of(line: str) -> list[tuple[str, int]]:
        found: list[tuple[str, int]] = []
        for key, text in index._lines.items():
            for number, kept in enumerate(text.keys, 1):
                if kept == line and (key != DIFF_KEY or cc._diff_change(kept)):
                    found.append((key, number))
            for position, alternates in text.alternates.items():
                if line in alternates and cc._weight(key, line):
                    found.append((key, position + 1))
        return found

    done: list[Any] = []
    active: dict[tuple[str, int], Any] = {}
    for position, line in enumerate(out):
        if line in own:
            done.extend(active.values())
            active = {}
            continue
        places = places_of(line)
        following: dict[tuple[str, int], Any] = {}
        for (key, wanted), run in active.items():
            lines = index._lines[key]
            if wanted <= len(lines) and lines.same(line, wanted, LINE_CUT):
                run.out_end = position + 1
                run.lines_total += 1
                following[(key, wanted + 1)] = run
            else:
                done.append(run)
        if places and cc.informative(line) and len(places) <= cc.MAX_START_OCCURRENCES:
            for key, number in places:
                if (key, number + 1) in following:
                    continue
                run = cc._Run(key, number, position, position + 1, 1)
                index._extend_back(run, out, own)
                following[(key, number + 1)] = run
        active = following
    done.extend(active.values())
    return done


def described(runs: list[Any]) -> list[tuple[str, int, int, int, int]]:
    return sorted((r.key, r.file_start, r.out_start, r.out_end, r.lines_total) for r in runs)


def made(
    files: dict[str, list[str]], diff: list[str], pieces: list[Any]
) -> tuple[ContentIndex, str]:
    """The index of ``files`` and ``diff``, and a text made of ``pieces``: stray lines, and
    slices (path, first, size) of a file or of the pinned diff."""
    data = {path: "".join(f"{line}\n" for line in lines).encode() for path, lines in files.items()}
    index = ContentIndex(data, "".join(f"{line}\n" for line in diff).encode(), PRESENTATION)
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, tuple):
            path, start, size = piece
            source = diff if path == DIFF_KEY else files.get(path, [])
            out.extend(source[start : start + size])
        else:
            out.append(piece)
    return index, "".join(f"{line}\n" for line in out)


PIECE = st.one_of(
    LINE,
    st.sampled_from(CUT + RENDERED),
    st.tuples(st.sampled_from([*PATHS, DIFF_KEY]), st.integers(0, 11), st.integers(1, 12)),
)


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(st.sampled_from(PATHS), st.lists(LINE, min_size=1, max_size=12), min_size=1),
    st.lists(DIFF_LINE, max_size=14),
    st.lists(PIECE, max_size=10),
    st.sets(st.sampled_from(WORDS[:4])),
)
def test_the_index_finds_the_runs_following_every_line_finds(
    files: dict[str, list[str]], diff: list[str], pieces: list[Any], own: set[str]
) -> None:
    index, text = made(files, diff, pieces)
    out = PRESENTATION.keys(PRESENTATION.lines(text), text)
    found = index._runs(out, own, LINE_CUT)
    reference = reference_runs(index, out, own)
    if index._prune_alone:  # a run of one line alone can neither count nor contest one that can
        reference = [run for run in reference if run.lines_total > 1]
    assert described(found) == described(reference)
    for run in found:
        counted = [
            cc._weight(run.key, line) if run.key == DIFF_KEY else cc.informative(line)
            for line in out[run.out_start : run.out_end]
        ]
        enough = sum(1 for c in counted if c) >= cc.MIN_RUN_LINES
        assert index._long_enough(run, out) == (enough and sum(counted) >= cc.MIN_RUN_CHARS)


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(st.sampled_from(PATHS), st.lists(LINE, min_size=1, max_size=8), min_size=1),
    st.lists(DIFF_LINE, max_size=8),
    st.sampled_from(PATHS),
    st.sets(st.sampled_from(WORDS[:4]), max_size=1),
)
def test_a_files_whole_text_credits_what_following_every_line_credits(
    files: dict[str, list[str]], diff: list[str], path: str, own: set[str]
) -> None:
    """``cat FILE``: the text is one file's whole text (or no file's), and the credits are the
    same with the shortcut for a whole text as without it, files alike or contained in others
    included."""
    data = {name: "".join(f"{line}\n" for line in lines).encode() for name, lines in files.items()}
    index = ContentIndex(data, "".join(f"{line}\n" for line in diff).encode(), PRESENTATION)
    text = data.get(path, b"alpha = compute(1)\n").decode()
    shortcut = index.scan(text, own=frozenset(own), cut=LINE_CUT)
    index._whole_file = lambda out, own, cut: None  # type: ignore[method-assign]
    assert shortcut == index.scan(text, own=frozenset(own), cut=LINE_CUT)


def reference_places(index: ContentIndex) -> tuple[dict[str, list[int]], set[str]]:
    """Each line's places as following every line of every file in turn finds them: its
    places in order, the changed lines of the pinned diff's, the alternates' after their
    file's lines, until a line has more than ``MAX_START_OCCURRENCES``."""
    where: dict[str, list[int]] = {}
    common: set[str] = set()

    def place(line: str, at: int) -> None:
        found = where.setdefault(line, [])
        if len(found) <= cc.MAX_START_OCCURRENCES:
            found.append(at)
            if len(found) > cc.MAX_START_OCCURRENCES:
                common.add(line)

    for slot, key in enumerate(index._keys):
        text = index._lines[key]
        for number, line in enumerate(text.keys, 1):
            if key != DIFF_KEY or (line[:1] in "+-" and line[:3] not in ("+++", "---")):
                place(line, slot * cc._SLOT + number)
        for position, alternates in text.alternates.items():
            for line in alternates:
                if cc._weight(key, line):
                    place(line, slot * cc._SLOT + position + 1)
    return where, common


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(PATHS), st.lists(st.sampled_from([*WORDS, "", "}"]), max_size=40)
    ),
    st.lists(DIFF_LINE, max_size=30),
)
def test_the_index_holds_every_lines_places_in_order(
    files: dict[str, list[str]], diff: list[str]
) -> None:
    """The index made a file at a time, at C speed, holds what placing each line in turn does."""
    data = {path: "".join(f"{line}\n" for line in lines).encode() for path, lines in files.items()}
    index = ContentIndex(data, "".join(f"{line}\n" for line in diff).encode(), PRESENTATION)
    where, common = reference_places(index)
    held = {line: [at] if isinstance(at, int) else at for line, at in index._where.items()}
    assert index._common == common
    # a line too common to start a run is no more looked up once the index is made
    assert held == {line: at for line, at in where.items() if line not in common}


def test_a_changed_line_of_the_pinned_diff_is_told_as_written() -> None:
    """Every line of up to four characters over the characters that matter."""
    for size in range(5):
        for chars in product("+- a", repeat=size):
            line = "".join(chars)
            assert cc._diff_change(line) == (line[:1] in "+-" and line[:3] not in ("+++", "---"))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([*DIFF_LINE.elements, "+++ b/b.py", "diff --git a/b.py b/b.py"])),
    st.integers(1, 40),
    st.integers(0, 40),
)
def test_the_files_of_the_pinned_diffs_lines_are_their_sections(
    diff: list[str], first: int, size: int
) -> None:
    """The sections a stretch of the pinned diff lies in, as reading each line in turn finds
    them: the last ``+++ b/`` line's file, none after a ``diff --git`` line."""
    index = ContentIndex({}, "".join(f"{line}\n" for line in diff).encode(), PRESENTATION)
    path, per_line = "", []
    for line in diff:
        if line.startswith("+++ b/"):
            path = line[6:]
        elif line.startswith("diff --git "):
            path = ""
        per_line.append(path)
    last = min(first + size, len(diff))
    if first > last:
        return
    assert index._diff_paths(first, last) == set(per_line[first - 1 : last])


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(st.sampled_from(PATHS), st.lists(LINE, min_size=2, max_size=12), min_size=1),
    st.lists(DIFF_LINE, min_size=2, max_size=14),
    st.lists(PIECE, max_size=10),
    st.sets(st.sampled_from(WORDS[:4])),
    st.sampled_from([None, 0, 30]),
)
def test_leaving_out_runs_of_one_line_alone_changes_no_credit(
    files: dict[str, list[str]], diff: list[str], pieces: list[Any], own: set[str], kept: int | None
) -> None:
    """With no file of one line, what a text shows is the same whether ``_runs`` makes the runs
    of one line alone or leaves them out: credits, the pinned diff's pages, uncertain files."""
    index, text = made(files, diff, pieces)
    assert index._prune_alone
    pruned = index.scan(text, own=frozenset(own), kept=kept, cut=LINE_CUT)
    index._prune_alone = False
    assert pruned == index.scan(text, own=frozenset(own), kept=kept, cut=LINE_CUT)


def test_a_file_of_one_line_keeps_the_runs_of_one_line_that_contest_it() -> None:
    """A file of one line is credited whole when a text shows it, unless another file shows
    the same line there too (a block two files share credits neither): the other file's run of
    that one line is what contests it, so no run is left out."""
    line = "alpha = compute(1)"
    files = {"a.py": f"{line}\n".encode(), "b.py": f"beta = compute(2)\n{line}\n".encode()}
    index = ContentIndex(files, None, PRESENTATION)
    assert not index._prune_alone
    assert index.scan(f"{line}\n").credits == ()
    alone = ContentIndex({"a.py": files["a.py"]}, None, PRESENTATION)
    assert [credit.path for credit in alone.scan(f"{line}\n").credits] == ["a.py"]
