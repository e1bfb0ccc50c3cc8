"""The pinned diff, parsed once: sections for page mapping, hunks and changed lines for depth.

Each rule of ``coverage_gate.core.diffmap`` on a small diff, the real captured diff, and a property
against ``unidiff`` (a well-kept unified diff parser) as an independent oracle for the line
numbers.
"""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st
from unidiff import PatchSet

from coverage_gate.core.diffmap import DiffIndex, FileDiff, LineKind
from tests.conftest import CHANGED_FILES, DATA

REAL = (DATA / "pi-rpc" / "review.diff").read_bytes()


def changed(entry: FileDiff) -> list[tuple[str, int]]:
    """(marker, new-side number or anchor) of each changed line, in diff order."""
    return [(entry.kinds[i].value, entry.numbers[i]) for i in entry.changed]


def only(diff: bytes) -> FileDiff:
    (entry,) = DiffIndex.parse(diff).files
    return entry


def shown(index: DiffIndex, start: int, end: int) -> list[str]:
    return [entry.path for entry in index.files_shown(start, end)]


# --- lines and numbers -------------------------------------------------------------------------


def test_added_lines_carry_their_new_side_numbers() -> None:
    entry = only(b"--- a/x\n+++ b/x\n@@ -4,3 +4,4 @@\n c4\n+n5\n c5\n+n7\n")
    assert changed(entry) == [("+", 5), ("+", 7)]
    assert [entry.numbers[i] for i in range(len(entry.kinds))] == [4, 5, 6, 7]


def test_a_deleted_line_is_anchored_to_the_new_line_that_follows_it_in_its_hunk() -> None:
    entry = only(b"--- a/x\n+++ b/x\n@@ -10,4 +10,3 @@\n c10\n-gone\n+new11\n c12\n-last\n")
    # "gone" sits before new line 11; "last" has no new line after it: the one before (12)
    assert changed(entry) == [("-", 11), ("+", 11), ("-", 12)]


def test_a_deletion_in_a_zero_context_hunk_is_anchored_to_the_line_before_it() -> None:
    """``+c,0``: the deleted lines followed new line c (git -U0)."""
    entry = only(b"--- a/x\n+++ b/x\n@@ -8,2 +7,0 @@\n-a\n-b\n")
    assert changed(entry) == [("-", 7), ("-", 7)]


def test_a_deleted_file_has_no_anchors_only_a_page_can_show_it() -> None:
    diff = b"diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n"
    entry = only(diff)
    assert entry.path == "old.txt"
    assert changed(entry) == [("-", 0), ("-", 0)]


def test_a_deleted_line_that_reads_like_a_header_stays_in_its_hunk() -> None:
    """Hunk lines are counted off against the @@ counts: ``--- x`` deleted and ``+++ y`` added
    are lines of the file, not the start of another file's section (plain diffs split there)."""
    diff = b"--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n c\n--- a/r.sql\n+++ b/r.sql\n@@ -1 +1 @@\n-1\n+2\n"
    index = DiffIndex.parse(diff)
    assert index.paths == ["q.sql", "r.sql"]
    first = index.file("q.sql")
    assert first is not None
    assert changed(first) == [("-", 1), ("+", 1)]


def test_no_newline_marker_is_not_a_line_and_crlf_is_a_terminator() -> None:
    diff = (
        b"--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,2 +1,2 @@\r\n keep\r\n-old\r\n"
        b"\\ No newline at end of file\n+new\r\n\\ No newline at end of file\n"
    )
    entry = only(diff)
    assert entry.path == "w.txt"
    assert [k.value for k in entry.kinds] == [" ", "-", "+"]
    new_line = diff.index(b"+new")
    added = entry.changed[1]
    # visible bytes: after the marker, without the CRLF
    assert (entry.visible_start[added], entry.visible_end[added]) == (new_line + 1, new_line + 4)


def test_an_empty_diff_line_shows_as_its_marker() -> None:
    diff = b"--- a/x\n+++ b/x\n@@ -1,1 +1,2 @@\n a\n+\n"
    entry = only(diff)
    added = entry.changed[0]
    assert entry.visible_end[added] - entry.visible_start[added] == 1


def test_a_hunk_cut_short_ends_at_the_first_line_that_cannot_belong_to_it() -> None:
    diff = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n a\n-b\n+c\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-1\n+2\n"
    index = DiffIndex.parse(diff)
    assert index.paths == ["x", "y"]
    x = index.file("x")
    assert x is not None
    assert changed(x) == [("-", 2), ("+", 2)]


# --- sections and what a page shows ------------------------------------------------------------


def test_new_deleted_binary_and_quoted_files() -> None:
    diff = (
        b"diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        b'diff --git "a/caf\\303\\251.txt" "b/caf\\303\\251.txt"\nnew file mode 100644\n--- /dev/null\n+++ "b/caf\\303\\251.txt"\n@@ -0,0 +1 @@\n+y\n'
        b"diff --git a/bin.png b/bin.png\nindex 1..2 100644\nBinary files a/bin.png and b/bin.png differ\n"
    )
    index = DiffIndex.parse(diff)
    assert index.paths == ["bin.png", "café.txt", "old.txt"]
    cafe, binary = index.file("café.txt"), index.file("bin.png")
    assert cafe is not None
    assert binary is not None
    assert changed(cafe) == [("+", 1)]
    assert binary.binary
    assert not binary.lines_known
    body = diff.index(b"Binary files")
    assert shown(index, binary.start, body) == []  # its header lines only
    assert shown(index, body, body + 3) == ["bin.png"]


def test_a_page_ending_in_a_files_header_shows_nothing_of_it() -> None:
    """The page that ends 24 bytes into docs/guide.md's section (``diff --git a/docs/guide``)
    shows README.md whole and nothing of docs/guide.md; nor do its whole header and ``@@``."""
    index = DiffIndex.parse(REAL)
    guide = index.file("docs/guide.md")
    assert guide is not None
    assert shown(index, 0, guide.start + 24) == ["README.md"]
    hunk_line_end = REAL.index(b"\n", guide.body) + 1
    assert shown(index, guide.start, hunk_line_end) == []
    assert shown(index, guide.start, hunk_line_end + 2) == ["docs/guide.md"]


def test_a_page_that_returned_only_a_lines_newline_did_not_show_that_line() -> None:
    index = DiffIndex.parse(REAL)
    readme = index.file("README.md")
    assert readme is not None
    assert shown(index, readme.end - 2, readme.end) == ["README.md"]  # "3." then "\n"
    assert shown(index, readme.end - 1, readme.end) == []


def test_a_rename_without_changes_is_shown_only_by_a_page_holding_its_whole_section() -> None:
    diff = b"diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\nrename to b.py\n"
    index = DiffIndex.parse(diff)
    (entry,) = index.files
    assert entry.path == "b.py"
    assert len(entry.changed) == 0
    assert entry.lines_known
    assert shown(index, 0, len(diff) - 1) == []
    assert shown(index, 0, len(diff)) == ["b.py"]


def test_the_real_diffs_files_and_changed_lines() -> None:
    index = DiffIndex.parse(REAL)
    assert index.paths == CHANGED_FILES
    assert shown(index, 0, len(REAL)) == CHANGED_FILES
    handlers = index.file("src/api/handlers.py")
    assert handlers is not None
    assert len(handlers.hunks) == 2
    assert ("+", 12) in changed(handlers)


# --- an independent oracle ---------------------------------------------------------------------

WORDS = st.sampled_from(["a", "b", "c", "--- x", "+++ y", "", " ", "@@ z"])


@st.composite
def file_pairs(draw: st.DrawFn) -> list[tuple[list[str], list[str], int]]:
    count = draw(st.integers(1, 3))
    return [
        (
            draw(st.lists(WORDS, max_size=12)),
            draw(st.lists(WORDS, max_size=12)),
            draw(st.integers(0, 3)),
        )
        for _ in range(count)
    ]


def unified(pairs: list[tuple[list[str], list[str], int]]) -> bytes:
    out: list[str] = []
    for n, (old, new, context) in enumerate(pairs):
        lines = list(
            difflib.unified_diff(
                [f"{w}\n" for w in old],
                [f"{w}\n" for w in new],
                f"a/f{n}.txt",
                f"b/f{n}.txt",
                n=context,
            )
        )
        if lines:
            out.append(f"diff --git a/f{n}.txt b/f{n}.txt\n")
            out.extend(lines)
    return "".join(out).encode()


@settings(max_examples=300, deadline=None)
@given(file_pairs())
def test_line_numbers_agree_with_unidiff(pairs: list[tuple[list[str], list[str], int]]) -> None:
    """For any diff difflib writes (lines that look like headers included), our added lines'
    numbers and our deleted-line counts per file are unidiff's."""
    diff = unified(pairs)
    ours = DiffIndex.parse(diff)
    theirs = PatchSet(diff.decode())
    assert ours.paths == sorted(patched.path for patched in theirs)
    for patched in theirs:
        entry = ours.file(patched.path)
        assert entry is not None
        added = [entry.numbers[i] for i in entry.changed if entry.kinds[i] is LineKind.ADDED]
        assert added == [line.target_line_no for hunk in patched for line in hunk if line.is_added]
        deleted = [i for i in entry.changed if entry.kinds[i] is LineKind.DELETED]
        assert len(deleted) == patched.removed
        assert len(entry.hunks) == len(patched)
