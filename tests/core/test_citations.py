"""Replaying citations against a real git repository at the revision under review (DESIGN §7.9):
the replay rule of ``coverage_gate.citations`` through ``GitTree.file_at_revision``.

The repository has three commits: BASE, REV (the revision under review) and HEAD (a later one),
and uncommitted changes on top, so that the revision, the checked-out commit and the working
tree all differ.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from coverage_gate.contracts.model import (
    Citation,
    CitationCheck,
    CitationOutcome,
    CitationReason,
    PathRejection,
    ReviewerOutput,
)
from coverage_gate.core.citations import (
    EXCERPT_CHARS,
    MIN_QUOTE_CHARS,
    Cited,
    FileCache,
    check,
    citations_of,
    replay,
)
from coverage_gate.core.revision_files import FileAtRevision, Presence
from coverage_gate.edges.content import snapshot_tree
from coverage_gate.edges.gittree import GitTree

BIG_LINES = 100_000


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def tax_lines() -> list[str]:
    """30 distinct lines, none contained in another."""
    return [f'line_{i:03d} = "word {i:03d}"' for i in range(1, 31)]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("cited") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    git(root, "config", "core.autocrlf", "false")
    (root / "src").mkdir()
    (root / "src" / "tax.py").write_text("RATE = 0.1\n", "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    # REV: the revision under review
    (root / "src" / "tax.py").write_text("\n".join(tax_lines()) + "\n", "utf-8")
    (root / "src" / "crlf.py").write_bytes(b"first = 1\r\nsecond = 2   \r\n\tthird = 3\t\r\n")
    (root / "src" / "tabs.py").write_bytes(b"def f():\n\treturn  compute(a,  b)\n")
    (root / "src" / "short.py").write_text("def g():\n    pass\n}\nx\n", "utf-8")
    (root / "src" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR some text here\n")
    (root / "src" / "empty.py").write_bytes(b"")
    (root / "big.txt").write_text(
        "".join(f"row {i:06d}\n" for i in range(1, BIG_LINES + 1)), "utf-8"
    )
    (root / "src" / "link.py").symlink_to("tax.py")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "revision under review")
    revision = git(root, "rev-parse", "HEAD")
    # HEAD: a later commit, and uncommitted work on top
    (root / "src" / "new.py").write_text("added = True\n", "utf-8")
    (root / "src" / "tax.py").write_text("RATE = 0.3\n", "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "later")
    (root / "src" / "wt_only.py").write_text("uncommitted = 1\n", "utf-8")
    (root / "src" / "tax.py").write_text("RATE = 0.4\n", "utf-8")
    return root, revision


class Counting:
    """A ``RevisionFiles`` that counts what it was asked for."""

    def __init__(self, inner: GitTree) -> None:
        self.inner = inner
        self.asked: list[str] = []

    def file_at_revision(self, path: str) -> FileAtRevision:
        self.asked.append(path)
        return self.inner.file_at_revision(path)


AtRev = tuple[Path, GitTree, Counting]


@pytest.fixture
def at_rev(repo: tuple[Path, str]) -> Iterator[AtRev]:
    root, revision = repo
    with GitTree(root, revision) as tree:
        yield root, tree, Counting(tree)


def replayed(
    at: AtRev,
    path: str,
    line: int,
    content: str,
    *,
    cache: FileCache | None = None,
) -> CitationCheck:
    root, tree, counting = at
    return check(
        Cited(Citation(path=path, line=line, content=content)),
        root=str(root),
        tree=tree,
        files=cache or FileCache(counting),
        uncorroborated=lambda _: False,
    )


# --- the rule ----------------------------------------------------------------------------------


def test_the_cited_line_holding_the_cited_content_matches(at_rev: AtRev) -> None:
    result = replayed(at_rev, "src/tax.py", 10, 'line_010 = "word 010"')
    assert result.outcome is CitationOutcome.MATCHED
    assert result.file == "src/tax.py"
    assert result.reason is None


def test_part_of_the_line_is_enough(at_rev: AtRev) -> None:
    assert replayed(at_rev, "src/tax.py", 10, '"word 010"').outcome is CitationOutcome.MATCHED


@pytest.mark.parametrize("drift", [-3, -2, -1, 1, 2, 3])
def test_content_within_three_lines_matches_nearby_with_its_offset(
    at_rev: AtRev, drift: int
) -> None:
    result = replayed(at_rev, "src/tax.py", 15 - drift, 'line_015 = "word 015"')
    assert result.outcome is CitationOutcome.MATCHED_NEARBY
    assert result.offset == drift


@pytest.mark.parametrize("drift", [-5, -4, 4, 5])
def test_content_further_than_three_lines_fails(at_rev: AtRev, drift: int) -> None:
    result = replayed(at_rev, "src/tax.py", 15 - drift, 'line_015 = "word 015"')
    assert result.outcome is CitationOutcome.FAILED
    assert result.reason is CitationReason.CONTENT_MISMATCH
    assert result.found == f'line_{15 - drift:03d} = "word {15 - drift:03d}"'


def test_fabricated_content_fails_saying_what_is_there(at_rev: AtRev) -> None:
    result = replayed(at_rev, "src/tax.py", 4, "rate = 0.2")
    assert result.outcome is CitationOutcome.FAILED
    assert result.reason is CitationReason.CONTENT_MISMATCH
    assert result.found == 'line_004 = "word 004"'
    assert result.file_lines == 30


def test_a_line_past_the_end_fails_with_the_file_length(at_rev: AtRev) -> None:
    result = replayed(at_rev, "src/tax.py", 31, 'line_030 = "word 030"')
    assert result.outcome is CitationOutcome.FAILED
    assert result.reason is CitationReason.LINE_OUT_OF_RANGE
    assert result.file_lines == 30
    empty = replayed(at_rev, "src/empty.py", 1, "anything")
    assert empty.reason is CitationReason.LINE_OUT_OF_RANGE
    assert empty.file_lines == 0


@pytest.mark.parametrize("content", ["", "   ", "\t\n  \r\n", "\n\n"])
def test_content_empty_after_trimming_fails_without_reading(at_rev: AtRev, content: str) -> None:
    result = replayed(at_rev, "src/tax.py", 1, content)
    assert result.outcome is CitationOutcome.FAILED
    assert result.reason is CitationReason.EMPTY_CONTENT
    assert at_rev[2].asked == []


def test_a_file_in_the_working_tree_but_not_at_the_revision_fails_as_missing(at_rev: AtRev) -> None:
    """``src/new.py`` is committed after the revision, ``src/wt_only.py`` never: both are on
    disk, neither is at the revision."""
    root = at_rev[0]
    for path, content in (("src/new.py", "added = True"), ("src/wt_only.py", "uncommitted = 1")):
        assert (root / path).is_file()
        result = replayed(at_rev, path, 1, content)
        assert result.outcome is CitationOutcome.FAILED
        assert result.reason is CitationReason.MISSING_AT_REVISION


def test_a_file_is_read_at_the_revision_when_the_working_tree_differs(at_rev: AtRev) -> None:
    """Honest: the reviewer cites the revision under review, not what is checked out now."""
    assert replayed(at_rev, "src/tax.py", 1, 'line_001 = "word 001"').outcome is (
        CitationOutcome.MATCHED
    )
    now = replayed(at_rev, "src/tax.py", 1, "RATE = 0.4")
    assert now.outcome is CitationOutcome.FAILED
    assert now.reason is CitationReason.CONTENT_MISMATCH


def test_the_checked_out_revision_is_read_from_git_never_from_the_working_tree(
    repo: tuple[Path, str],
) -> None:
    """With HEAD as the revision, its commit is what is cited: a reviewer that edits the
    checkout cannot make its own line the revision's. Uncommitted changes are reviewed as the
    tree written from the working tree (``snapshot_tree``), which has them."""
    root, _ = repo
    with GitTree(root, "HEAD") as tree:
        at = (root, tree, Counting(tree))
        wt_only = replayed(at, "src/wt_only.py", 1, "uncommitted = 1")
        assert wt_only.reason is CitationReason.MISSING_AT_REVISION
    with GitTree(root, snapshot_tree(root)) as tree:
        at = (root, tree, Counting(tree))
        assert replayed(at, "src/tax.py", 1, "RATE = 0.4").outcome is CitationOutcome.MATCHED
        assert replayed(at, "src/wt_only.py", 1, "uncommitted = 1").outcome is (
            CitationOutcome.MATCHED
        )
        gone = replayed(at, "src/gone.py", 1, "x = 1")
        assert gone.reason is CitationReason.MISSING_AT_REVISION


@pytest.mark.parametrize(
    ("path", "rejection"),
    [
        ("../outside.py", PathRejection.ESCAPES_ROOT),
        ("src/../../outside.py", PathRejection.ESCAPES_ROOT),
        ("/etc/passwd", PathRejection.OUTSIDE_ROOT),
        (".git/config", PathRejection.VCS_METADATA),
        ("src/\x00tax.py", PathRejection.CONTROL_CHARACTER),
        ("", PathRejection.EMPTY),
    ],
)
def test_a_path_the_normaliser_rejects_is_rejected_and_never_read(
    at_rev: AtRev,
    path: str,
    rejection: PathRejection,
) -> None:
    result = replayed(at_rev, path, 1, "[core]")
    assert result.outcome is CitationOutcome.REJECTED
    assert result.reason is CitationReason.PATH_REJECTED
    assert result.path_rejection is rejection
    assert result.file is None
    assert at_rev[2].asked == []


def test_an_absolute_path_inside_the_root_is_the_file_it_names(at_rev: AtRev) -> None:
    root = at_rev[0]
    result = replayed(at_rev, f"{root}/src/./tax.py", 2, 'line_002 = "word 002"')
    assert result.outcome is CitationOutcome.MATCHED
    assert result.file == "src/tax.py"


@pytest.mark.parametrize("decoy", ["tax.py", "@src/tax.py", "src/tax.py ", "src/Tax.py", "src/tax"])
def test_a_decoy_spelling_of_a_real_file_is_not_that_file(at_rev: AtRev, decoy: str) -> None:
    """No basename, suffix, case or ``@`` matching: the decoy names a file the revision lacks."""
    result = replayed(at_rev, decoy, 1, 'line_001 = "word 001"')
    assert result.outcome is CitationOutcome.FAILED
    assert result.reason is CitationReason.MISSING_AT_REVISION


def test_a_binary_file_is_unavailable_never_failed(at_rev: AtRev) -> None:
    result = replayed(at_rev, "src/image.png", 2, "some text here")
    assert result.outcome is CitationOutcome.UNAVAILABLE
    assert result.reason is CitationReason.NOT_TEXT


def test_a_symbolic_link_at_the_revision_is_unavailable(at_rev: AtRev) -> None:
    result = replayed(at_rev, "src/link.py", 1, 'line_001 = "word 001"')
    assert result.outcome is CitationOutcome.UNAVAILABLE
    assert result.reason is CitationReason.CONTENT_UNAVAILABLE


def test_a_directory_is_no_file(at_rev: AtRev) -> None:
    assert replayed(at_rev, "src", 1, "xyz").reason is CitationReason.MISSING_AT_REVISION


@pytest.mark.parametrize(
    ("line", "content"),
    [
        (1, "first = 1"),  # CRLF line end
        (2, "second = 2"),  # trailing blanks before the CRLF
        (2, "second = 2      "),  # trailing blanks in the quote
        (3, "    third = 3"),  # spaces quoted where the file has a tab, at both ends
        (3, "third = 3\r"),
    ],
)
def test_crlf_and_whitespace_at_either_end_still_match(
    at_rev: AtRev, line: int, content: str
) -> None:
    assert replayed(at_rev, "src/crlf.py", line, content).outcome is CitationOutcome.MATCHED


def test_runs_of_whitespace_inside_compare_as_one_space(at_rev: AtRev) -> None:
    result = replayed(at_rev, "src/tabs.py", 2, "return compute(a, b)")
    assert result.outcome is CitationOutcome.MATCHED
    glued = replayed(at_rev, "src/tabs.py", 2, "returncompute(a,b)")
    assert glued.outcome is CitationOutcome.FAILED


def test_content_of_several_lines_matches_line_by_line(at_rev: AtRev) -> None:
    quote = 'line_007 = "word 007"\nline_008 = "word 008"\r\n  line_009 = "word 009"\n'
    assert replayed(at_rev, "src/tax.py", 7, quote).outcome is CitationOutcome.MATCHED
    nearby = replayed(at_rev, "src/tax.py", 9, quote)
    assert nearby.outcome is CitationOutcome.MATCHED_NEARBY
    assert nearby.offset == -2
    invented = 'line_007 = "word 007"\nline_008 = "word 999"'
    assert replayed(at_rev, "src/tax.py", 7, invented).outcome is CitationOutcome.FAILED


def test_short_content_must_be_the_whole_line_at_exactly_that_line(at_rev: AtRev) -> None:
    """Fewer than three non-whitespace characters: ``}`` would be found in any window, so it
    is checked as the whole cited line, with no nearby window."""
    assert MIN_QUOTE_CHARS == 3
    assert replayed(at_rev, "src/short.py", 3, "}").outcome is CitationOutcome.MATCHED
    assert replayed(at_rev, "src/short.py", 4, " x ").outcome is CitationOutcome.MATCHED
    off_by_one = replayed(at_rev, "src/short.py", 4, "}")
    assert off_by_one.outcome is CitationOutcome.FAILED
    assert off_by_one.reason is CitationReason.CONTENT_MISMATCH
    inside = replayed(at_rev, "src/short.py", 1, "f(")  # part of "def g():" would contain "("
    assert inside.outcome is CitationOutcome.FAILED
    three = replayed(at_rev, "src/short.py", 1, "g()")  # three characters: contained is enough
    assert three.outcome is CitationOutcome.MATCHED


def test_a_huge_content_is_stored_and_shown_as_a_bounded_excerpt(at_rev: AtRev) -> None:
    huge = "rate = 0.2 " * 100_000
    result = replayed(at_rev, "src/tax.py", 1, huge)
    assert result.outcome is CitationOutcome.FAILED
    assert len(result.content) == EXCERPT_CHARS
    assert result.content.endswith("…")
    assert result.content_chars == len(huge)
    long_path = "src/" + "d" * 10_000 + ".py"
    assert len(replayed(at_rev, long_path, 1, "xyz").path) <= 256


def test_a_100000_line_file_is_read_once_for_all_its_citations(at_rev: AtRev) -> None:
    counting = at_rev[2]
    cache = FileCache(counting)
    lines = [1, 50_000, BIG_LINES, 99_998]
    results = [replayed(at_rev, "big.txt", n, f"row {n:06d}", cache=cache) for n in lines]
    results.append(replayed(at_rev, "big.txt", 70_000, f"row {70_002:06d}", cache=cache))
    results.append(replayed(at_rev, "big.txt", BIG_LINES + 1, "row", cache=cache))
    assert [r.outcome for r in results] == [
        CitationOutcome.MATCHED,
        CitationOutcome.MATCHED,
        CitationOutcome.MATCHED,
        CitationOutcome.MATCHED,
        CitationOutcome.MATCHED_NEARBY,
        CitationOutcome.FAILED,
    ]
    assert counting.asked == ["big.txt"]


def test_no_repository_leaves_a_checkable_citation_unavailable(at_rev: AtRev) -> None:
    root, tree, _ = at_rev
    result = check(
        Cited(Citation(path="src/tax.py", line=1, content="x = 1")),
        root=str(root),
        tree=tree,
        files=None,
        uncorroborated=lambda _: False,
    )
    assert result.outcome is CitationOutcome.UNAVAILABLE
    assert result.reason is CitationReason.NO_REPOSITORY


def test_a_folder_that_is_no_repository_leaves_citations_unavailable(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", "utf-8")
    with GitTree(tmp_path, "0123456789abcdef0123456789abcdef01234567") as tree:
        result = check(
            Cited(Citation(path="a.py", line=1, content="x = 1")),
            root=str(tmp_path),
            tree=tree,
            files=FileCache(tree),
            uncorroborated=lambda _: False,
        )
    assert result.outcome is CitationOutcome.UNAVAILABLE
    assert result.reason is CitationReason.CONTENT_UNAVAILABLE


# --- a reviewer's citations --------------------------------------------------------------------


def test_citations_are_taken_from_findings_then_the_top_level() -> None:
    output = ReviewerOutput.model_validate(
        {
            "schema_version": 1,
            "agent_id": "r",
            "findings": [
                "text",
                {"path": "a.py", "line": 2, "snippet": "x"},
                {"citations": [{"path": "b.py", "line": 1, "content": "y"}]},
            ],
            "citations": [{"path": "c.py", "line": 3, "content": "z"}],
        }
    )
    assert [(c.citation.path, c.finding) for c in citations_of(output)] == [
        ("a.py", 1),
        ("b.py", 2),
        ("c.py", None),
    ]


def test_past_the_limit_citations_are_counted_not_replayed(at_rev: AtRev) -> None:
    root, tree, counting = at_rev
    cited = [Cited(Citation(path="src/tax.py", line=1, content="line_001")) for _ in range(7)]
    result = replay(
        cited,
        root=str(root),
        tree=tree,
        files=FileCache(counting),
        uncorroborated=lambda _: False,
        limit=5,
    )
    assert len(result.checks) == 5
    assert result.over_limit == 2
    assert result.limit == 5
    assert counting.asked == ["src/tax.py"]


def test_uncorroborated_marks_citations_of_files_the_evidence_never_showed(at_rev: AtRev) -> None:
    root, tree, counting = at_rev
    cited = [
        Cited(Citation(path="src/tax.py", line=1, content="line_001")),
        Cited(Citation(path="src/crlf.py", line=1, content="first = 1")),
        Cited(Citation(path="../x.py", line=1, content="first = 1")),
    ]
    result = replay(
        cited,
        root=str(root),
        tree=tree,
        files=FileCache(counting),
        uncorroborated=lambda path: path == "src/crlf.py",
    )
    assert [c.uncorroborated for c in result.checks] == [False, True, False]
    assert [c.outcome for c in result.checks] == [
        CitationOutcome.MATCHED,
        CitationOutcome.MATCHED,
        CitationOutcome.REJECTED,
    ]


def test_unavailable_content_is_never_failed() -> None:
    """The fake port tells unavailable apart from missing; only missing fails."""

    class Files:
        def file_at_revision(self, path: str) -> FileAtRevision:
            if path == "gone.py":
                return FileAtRevision(Presence.MISSING)
            return FileAtRevision(Presence.UNAVAILABLE, detail="git did not answer")

    cache = FileCache(Files())
    results = [
        check(
            Cited(Citation(path=path, line=1, content="x = 1")),
            root=None,
            tree=None,
            files=cache,
            uncorroborated=lambda _: False,
        )
        for path in ("a.py", "gone.py")
    ]
    assert [(r.outcome, r.reason) for r in results] == [
        (CitationOutcome.UNAVAILABLE, CitationReason.CONTENT_UNAVAILABLE),
        (CitationOutcome.FAILED, CitationReason.MISSING_AT_REVISION),
    ]
