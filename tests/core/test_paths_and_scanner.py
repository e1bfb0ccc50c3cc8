"""The path normaliser and the line scanner: rules and properties."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate.adapters import ADAPTERS
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.paths import Rejected, Rejection, StaticTree, normalise
from coverage_gate.record.recording import Recorder, RecordSettings
from tests.conftest import CHANGED_FILES, DATA, REPO_ROOT, record_bytes

ROOT = "/home/user/repo"


def test_table_of_normalisations() -> None:
    """``@`` and ``\\`` are parts of a name; ``..`` is collapsed when the tree shows no link."""
    table = {
        ("src/a.py", None): "src/a.py",
        ("@src/a.py", None): "@src/a.py",
        ("./src/./a.py", None): "src/a.py",
        ("src\\win\\a.py", None): "src\\win\\a.py",
        ("/home/user/repo/a.py", None): "a.py",
        ("a.py", "/home/user/repo/src"): "src/a.py",
        ("../a.py", "/home/user/repo/src"): "a.py",
        ("./@x", None): "@x",
        ("@", None): "@",
    }
    for (raw, cwd), expected in table.items():
        assert normalise(raw, ROOT, cwd, tree=StaticTree()) == expected, raw


def test_a_mention_tool_drops_exactly_one_leading_at() -> None:
    """pi's read tools drop one leading ``@``: ``@x`` is ``x``, ``@@x`` is the file ``@x``, and
    an ``@`` further in is part of the name."""
    table = {
        "@src/a.py": "src/a.py",
        "@@types/x.ts": "@types/x.ts",
        "./@x": "@x",
        "@/home/user/repo/a.py": "a.py",
        "a@b.py": "a@b.py",
    }
    for raw, expected in table.items():
        assert normalise(raw, ROOT, mention=True) == expected, raw
    empty = normalise("@", ROOT, mention=True)
    assert isinstance(empty, Rejected) and empty.reason is Rejection.EMPTY


def test_table_of_rejections() -> None:
    table = {
        "../a.py": Rejection.ESCAPES_ROOT,
        "/etc/passwd": Rejection.OUTSIDE_ROOT,
        "/home/user/repo2/a.py": Rejection.OUTSIDE_ROOT,
        ".git/config": Rejection.VCS_METADATA,
        "a/.hg/x": Rejection.VCS_METADATA,
        "a\x00b": Rejection.CONTROL_CHARACTER,
        "a\tb": Rejection.CONTROL_CHARACTER,
        "": Rejection.EMPTY,
        "/home/user/repo": Rejection.NOT_A_FILE,
        ".": Rejection.NOT_A_FILE,
    }
    for raw, reason in table.items():
        result = normalise(raw, ROOT)
        assert isinstance(result, Rejected) and result.reason is reason, raw


def test_absolute_path_without_a_root_is_rejected() -> None:
    result = normalise("/a.py", None)
    assert isinstance(result, Rejected)
    assert result.reason is Rejection.ABSOLUTE_WITHOUT_ROOT


_segment = st.sampled_from(["a", "b.py", ".", "..", "@c", "", ".git", "d e", "\\", "/"])


# Links among the segments above: to a sibling, out of the root, to another folder, in a loop.
_LINKS = StaticTree({"a": "b.py", "sub": "../..", "d e": "/home/user/repo/a/b.py", "@c": "@c"})


@given(
    st.lists(_segment, max_size=8).map("/".join),
    st.sampled_from([None, "/home/user/repo/x", "sub"]),
    st.booleans(),
)
def test_normaliser_is_idempotent(raw: str, cwd: str | None, mention: bool) -> None:
    """What the normaliser returns is a repository path that maps to itself (as recorded paths
    are read back from spans, and claims are matched against evidence)."""
    once = normalise(raw, ROOT, cwd, mention=mention, tree=_LINKS)
    if isinstance(once, str):
        assert normalise(once, ROOT, tree=_LINKS) == once
        assert normalise(once, ROOT) == once


class _RefusingTree:
    def symlink_target(self, path: str) -> str | None:
        raise AssertionError(f"asked about {path!r}")


@given(st.lists(_segment.filter(lambda s: s != ".."), max_size=8).map("/".join))
def test_paths_without_dotdot_never_ask_the_tree(raw: str) -> None:
    normalise(raw, ROOT, "/home/user/repo/x", tree=_RefusingTree())


def test_table_of_dotdot_with_links() -> None:
    """``..`` is collapsed as written only where the OS, following links, lands on the same
    file; otherwise the path is rejected with the reason."""
    tree = StaticTree(
        {
            "src/sibling": "real",  # a link to a sibling folder: '..' lands where it seems
            "src/away": "../decoy/inner",
            "src/here": ".",
            "src/abs_in": "/home/user/repo/src/real",
            "src/abs_out": "/etc",
            "src/up": "../../..",
            "src/loop": "loop2",
            "src/loop2": "loop",
            "src/empty": "",
        }
    )
    accepted = {
        "src/sibling/../a.py": "src/a.py",
        "src/abs_in/../a.py": "src/a.py",
        "src/real/../a.py": "src/a.py",
        "src/away/x.py": "src/away/x.py",  # no '..': the spelling is the file
    }
    for raw, expected in accepted.items():
        assert normalise(raw, ROOT, tree=tree) == expected, raw
    rejected = {
        "src/away/../a.py": Rejection.PARENT_THROUGH_SYMLINK,
        "src/here/../a.py": Rejection.PARENT_THROUGH_SYMLINK,
        "src/abs_out/../a.py": Rejection.SYMLINK_OUTSIDE_ROOT,
        "src/up/../a.py": Rejection.SYMLINK_OUTSIDE_ROOT,
        "src/loop/../a.py": Rejection.SYMLINK_LOOP,
        "src/empty/../a.py": Rejection.PARENT_THROUGH_SYMLINK,
        "src/../../a.py": Rejection.ESCAPES_ROOT,
        "/home/user/repo/../repo/a.py": Rejection.ESCAPES_ROOT,
        "/home/user/other/../repo/a.py": Rejection.OUTSIDE_ROOT,
    }
    for raw, reason in rejected.items():
        result = normalise(raw, ROOT, tree=tree)
        assert isinstance(result, Rejected) and result.reason is reason, (raw, result)
    away = normalise("src/away/../a.py", ROOT, tree=tree)
    assert isinstance(away, Rejected)
    assert "'decoy/a.py'" in away.describe() and "'src/a.py'" in away.describe()
    unresolved = normalise("src/../a.py", ROOT)
    assert isinstance(unresolved, Rejected) and unresolved.reason is Rejection.PARENT_UNRESOLVED


@given(st.text(max_size=30))
def test_normaliser_never_raises_and_never_leaves_the_root(raw: str) -> None:
    result = normalise(raw, ROOT)
    if isinstance(result, str):
        assert not result.startswith("/")
        assert ".." not in result.split("/")


# --- scanner -----------------------------------------------------------------------------------

CAPTURE = (DATA / "pi-rpc" / "pi_b_overclaim.jsonl").read_bytes()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(CAPTURE) - 1), max_size=30))
def test_chunk_boundaries_do_not_change_the_evidence(cuts: list[int]) -> None:
    expected = record_bytes(CAPTURE)
    recorder = Recorder(ADAPTERS["pi-rpc"], RecordSettings(revision="rev1", repo_root=REPO_ROOT))
    previous = 0
    for cut in [*sorted(set(cuts)), len(CAPTURE)]:
        recorder.feed(CAPTURE[previous:cut])
        previous = cut
    assert recorder.finish() == expected


def test_tiny_chunks_with_a_small_line_limit_still_pass_over_big_lines() -> None:
    """Feeding one byte at a time exercises every carry-over state of the scanner."""
    settings_ = RecordSettings(revision="rev1", repo_root=REPO_ROOT, max_line_bytes=4096)
    recorder = Recorder(ADAPTERS["pi-rpc"], settings_)
    for index in range(len(CAPTURE)):
        recorder.feed(CAPTURE[index : index + 1])
    document = recorder.finish()
    assert document.stream_complete
    assert {f.path for f in document.files} == {
        "src/api/handler.py",
        "src/api/handlers.py",
        "src/api/models.py",
        "src/util/strings.py",
    }


def test_event_order_beyond_call_id_pairing_does_not_change_the_evidence() -> None:
    """Shuffle whole calls (each start before its end) and interleave them: same evidence."""
    lines = [
        f'{{"type":"tool_execution_start","toolCallId":"c{n}","toolName":"cr_read","args":{{"path":"f{n % 4}.py"}}}}'
        for n in range(12)
    ]
    ends = [
        f'{{"type":"tool_execution_end","toolCallId":"c{n}","toolName":"cr_read","result":{{}},"isError":{"true" if n % 3 == 0 else "false"}}}'
        for n in range(12)
    ]
    baseline = record_bytes(
        ("\n".join([x for pair in zip(lines, ends, strict=True) for x in pair]) + "\n").encode()
    )
    rng = random.Random(7)
    for _ in range(20):
        events: list[str] = []
        pending = list(range(12))
        started: list[int] = []
        while pending or started:
            if pending and (not started or rng.random() < 0.5):
                n = pending.pop(rng.randrange(len(pending)))
                events.append(lines[n])
                started.append(n)
            else:
                events.append(ends[started.pop(rng.randrange(len(started)))])
        shuffled = record_bytes(("\n".join(events) + "\n").encode())
        assert shuffled.files == baseline.files
        assert shuffled.counters == baseline.counters


def shown(index: DiffIndex, start: int, end: int) -> list[str]:
    return [entry.path for entry in index.files_shown(start, end)]


def test_diff_index_sections_of_the_real_diff() -> None:
    """A page shows a file when it returned a visible byte of one of its lines: README.md's last
    line ends at byte 379 (its newline) and docs/guide.md's section starts at 380 with headers."""
    index = DiffIndex.parse((DATA / "pi-rpc" / "review.diff").read_bytes())
    assert index.paths == CHANGED_FILES
    assert shown(index, 378, 381) == ["README.md"]
    assert shown(index, 379, 381) == []
    assert shown(index, 0, 4570) == CHANGED_FILES
    assert shown(index, 380, 380) == []


def test_diff_index_handles_new_deleted_and_quoted_files() -> None:
    diff = (
        b"diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        b'diff --git "a/caf\\303\\251.txt" "b/caf\\303\\251.txt"\nnew file mode 100644\n--- /dev/null\n+++ "b/caf\\303\\251.txt"\n@@ -0,0 +1 @@\n+y\n'
        b"diff --git a/bin.png b/bin.png\nBinary files a/bin.png and b/bin.png differ\n"
    )
    assert DiffIndex.parse(diff).paths == ["bin.png", "café.txt", "old.txt"]


def test_plain_unified_diff_without_git_headers_is_split_per_file() -> None:
    diff = b"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-c\n+d\n"
    index = DiffIndex.parse(diff)
    assert index.paths == ["x.py", "y.py"]
    assert shown(index, 0, len(diff)) == ["x.py", "y.py"]
    assert shown(index, 0, 40) == ["x.py"]
