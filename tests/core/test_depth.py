"""Depth: what each successful call showed, in lines, and how much of each file's change that was
(DESIGN §6 rules 11-13). Streams are pi RPC (``cr_diff`` pages, byte-ranged ``cr_read``, line-
ranged ``read``); the other adapters' ranges are pinned in their own test modules."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from coverage_gate.contracts import evidence_doc as plain
from coverage_gate.contracts.model import (
    Depth,
    DepthPolicy,
    EvidenceDocument,
    FileDepth,
    FileEvidence,
    IssueKind,
    LineRange,
)
from coverage_gate.core.depth import ChangeMarks, LineSet, LineTable, file_depth, resolve
from coverage_gate.core.diffmap import DiffIndex, LineKind
from coverage_gate.core.events import EMPTY_SHOWN, UNKNOWN_SHOWN, Shown
from coverage_gate.core.presentation import LineCut, Presentation
from coverage_gate.core.read_check import FileText
from coverage_gate.core.reconcile import held_shallow
from coverage_gate.edges.content import MappingContent
from coverage_gate.edges.files import load_evidence
from tests.conftest import CHANGED_FILES, DATA, REVISION_FILES, record_bytes, revision_content

DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
INDEX = DiffIndex.parse(DIFF)


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def call(
    call_id: str, tool: str, args: dict[str, Any], text: str = "x", *, ok: bool = True
) -> list[str]:
    start = {"type": "tool_execution_start", "toolCallId": call_id, "toolName": tool, "args": args}
    end = {
        "type": "tool_execution_end",
        "toolCallId": call_id,
        "toolName": tool,
        "result": {"content": [{"type": "text", "text": text}], "details": {}},
        "isError": not ok,
    }
    return [line(start), line(end)]


def page(call_id: str, start: int, end: int, total: int = len(DIFF)) -> list[str]:
    header = f"[cr-range offset={start} end={end} total={total} next_offset=-1]\n..."
    return call(call_id, "cr_diff", {"offset": start, "limit": end - start}, header)


def _revision_text(path: str) -> str | None:
    """The file at the revision, as an honest read returns it (``None`` for other paths)."""
    found = REVISION_FILES / path
    return found.read_text() if found.is_file() else None


def byte_read(call_id: str, path: str, start: int, end: int, total: int) -> list[str]:
    """An honest ``cr_read`` of bytes ``[start, end)``: its text is those bytes of the file."""
    text = _revision_text(path)
    body = text.encode()[start:end].decode("utf-8", "replace") if text is not None else "..."
    header = f"[cr-range offset={start} end={end} total={total} next_offset=-1]\n{body}"
    return call(call_id, "cr_read", {"path": path, "offset": start, "limit": end - start}, header)


def whole_read(call_id: str, path: str) -> list[str]:
    return call(call_id, "cr_read", {"path": path}, _revision_text(path) or "the file")


def line_read(call_id: str, path: str, first: int, count: int) -> list[str]:
    text = _revision_text(path)
    body = "".join(text.splitlines(keepends=True)[first - 1 : first - 1 + count]) if text else ""
    return call(call_id, "read", {"path": path, "offset": first, "limit": count}, body or "lines")


def stream(*calls: list[str]) -> bytes:
    lines = [line({"type": "agent_start"})]
    for pair in calls:
        lines.extend(pair)
    lines.append(line({"type": "agent_end", "messages": []}))
    return ("\n".join(lines) + "\n").encode()


def record(data: bytes, content: Any = None, diff: bytes | None = DIFF) -> EvidenceDocument:
    return record_bytes(data, diff=diff, content=content)


def entry(document: EvidenceDocument, path: str) -> FileEvidence:
    found = document.file(path)
    assert found is not None, f"no evidence for {path}"
    return found


def depth_of(document: EvidenceDocument, path: str) -> Depth:
    found = entry(document, path).depth
    assert found is not None
    return found.depth


def size(path: str) -> int:
    return len((REVISION_FILES / path).read_bytes())


# --- the line table: bytes to lines ------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0, 1, (1, 1)),  # one byte of line 1
        (0, 3, (1, 1)),  # "ab\n"
        (0, 4, (1, 2)),  # "ab\nc": one byte of line 2 too
        (2, 3, None),  # line 1's newline alone shows no line
        (2, 5, (2, 2)),  # its newline, then "cd"
        (5, 6, None),  # line 2's CR and LF are its terminator
        (7, 8, (3, 3)),  # the empty line 3 shows as its terminator
        (8, 10, (4, 4)),  # "ef" without a final newline
        (0, 10, (1, 4)),
    ],
)
def test_a_byte_range_shows_the_lines_it_returned_a_visible_byte_of(
    start: int, end: int, expected: tuple[int, int] | None
) -> None:
    table = LineTable(b"ab\ncd\r\n\nef")
    assert table.count == 4
    assert table.lines_of(start, end) == expected


def _lines_by_definition(content: bytes, start: int, end: int) -> tuple[int, int] | None:
    """``lines_of`` by its definition, byte by byte: the lines a range returned a visible byte
    of (a CRLF's CR and every newline are not visible; an empty line's newline stands for it)."""
    shown: list[int] = []
    number, position = 1, 0
    while position < len(content):
        newline = content.find(b"\n", position)
        last = len(content) if newline < 0 else newline
        visible = last - (newline >= 0 and last > position and content[last - 1] == 0x0D)
        if any(start <= byte < end for byte in range(position, max(visible, position + 1))):
            shown.append(number)
        number, position = number + 1, last + 1
    return (shown[0], shown[-1]) if shown else None


def test_every_short_content_maps_byte_ranges_to_lines_by_the_definition() -> None:
    """Every content of up to six bytes from ``a``, ``\r`` and ``\n``, every byte range."""
    for size in range(7):
        for letters in itertools.product(b"a\r\n", repeat=size):
            content = bytes(letters)
            table = LineTable(content)
            lines = content.split(b"\n")[: -1 if content.endswith(b"\n") or not content else None]
            assert table.count == len(lines)
            for start in range(size + 1):
                for end in range(start + 1, size + 2):
                    expected = _lines_by_definition(content, start, end)
                    assert table.lines_of(start, end) == expected, (content, start, end)


def test_resolving_a_byte_range_needs_the_very_content_that_was_read() -> None:
    table = LineTable(b"one\ntwo\nthree\n")
    assert resolve(Shown.bytes(4, 8, 14), table) == Shown.lines(2, 2, 3)
    assert resolve(Shown.bytes(0, 14, 14), table) == Shown.whole(3)
    assert resolve(Shown.bytes(4, 8, 99), table) == UNKNOWN_SHOWN  # another version of the file
    assert resolve(Shown.bytes(4, 8, 14), None) == UNKNOWN_SHOWN  # content not obtainable
    assert resolve(Shown.bytes(3, 4, 14), table) == EMPTY_SHOWN  # a newline shows no line


def test_ranges_counted_from_the_end_need_the_files_length() -> None:
    table = LineTable(b"1\n2\n3\n4\n5\n")
    assert resolve(Shown.lines(-2, None), table) == Shown.lines(4, 5, 5)
    assert resolve(Shown.lines(-9, None), table) == Shown.whole(5)
    assert resolve(Shown.lines(3, None), table) == Shown.lines(3, 5, 5)
    assert resolve(Shown.lines(7, 9), table) == Shown.lines(7, 9)  # plain: no content needed
    assert resolve(Shown.lines(7, None), table) == EMPTY_SHOWN  # past the end
    assert resolve(Shown.lines(-2, None), None) == UNKNOWN_SHOWN


def test_line_sets_merge_and_say_when_their_bound_was_hit() -> None:
    lines = LineSet(cap=2)
    lines.add(5, 6)
    lines.add(1, 2)
    lines.add(3, 4)  # touches both: one range
    assert lines.ranges() == [plain.LineRange(start=1, end=6)]
    lines.add(10, 10)
    lines.add(20, 20)  # would be a third range
    assert lines.truncated
    assert lines.ranges() == [plain.LineRange(start=1, end=6), plain.LineRange(start=10, end=10)]


# --- what counts as seen, per call -------------------------------------------------------------


def test_a_page_ending_in_a_files_header_is_no_evidence_for_it() -> None:
    """The page shows README.md whole and 24 bytes of docs/guide.md's header: README.md is
    credited (depth full), docs/guide.md gets no diff-page credit and no entry."""
    guide = INDEX.file("docs/guide.md")
    assert guide is not None
    doc = record(stream(page("p", 0, guide.start + 24)))
    assert doc.file("docs/guide.md") is None
    readme = entry(doc, "README.md")
    assert readme.diff_pages_succeeded == 1
    assert readme.depth is not None
    assert readme.depth.depth is Depth.FULL
    assert readme.lines_seen == [LineRange(start=10, end=17)]


def test_a_page_of_context_lines_only_is_evidence_of_depth_none() -> None:
    """Bytes of docs/guide.md's first context lines, none of its changed lines."""
    guide = INDEX.file("docs/guide.md")
    assert guide is not None
    first_change = guide.visible_start[guide.changed[0]] - 1
    doc = record(stream(page("p", guide.body, first_change)))
    found = entry(doc, "docs/guide.md")
    assert found.diff_pages_succeeded == 1
    assert found.depth is not None
    assert found.depth.depth is Depth.NONE
    assert found.depth.changed_lines_seen == 0
    assert found.lines_seen == [LineRange(start=3, end=5)]


def test_pages_that_split_a_line_between_them_both_show_it() -> None:
    readme = INDEX.file("README.md")
    assert readme is not None
    last = readme.visible_start[readme.changed[-1]] + 5
    doc = record(stream(page("p1", 0, last), page("p2", last, readme.end)))
    found = entry(doc, "README.md")
    assert found.depth is not None
    assert found.depth.depth is Depth.FULL


def test_a_ranged_read_away_from_the_change_verifies_nothing_of_it() -> None:
    """handlers.py bytes 0-90 are lines 1-4; its changes are at 12-15 and 24-30."""
    total = size("src/api/handlers.py")
    doc = record(
        stream(byte_read("r", "src/api/handlers.py", 0, 90, total)), content=revision_content()
    )
    found = entry(doc, "src/api/handlers.py")
    assert found.reads_succeeded == 1
    assert found.partial
    assert found.lines_seen == [LineRange(start=1, end=4)]
    assert found.depth is not None
    assert found.depth.depth is Depth.NONE
    assert found.depth.hunks == 2
    assert found.depth.hunks_seen == 0
    assert found.depth.unseen
    assert found.depth.unseen[0].start == 12


def _added(path: str) -> int:
    """The added lines of ``path`` in the pinned diff: what a read of the new file can show."""
    diff = INDEX.file(path)
    assert diff is not None
    return sum(1 for index in diff.changed if diff.kinds[index] is LineKind.ADDED)


def test_a_ranged_read_over_part_of_the_change_is_partial_and_names_what_was_unseen() -> None:
    """Lines 1-20 of handlers.py: its first hunk's added lines, not its second's (and none of
    its deletions, which no read of the new file shows)."""
    doc = record(stream(line_read("r", "src/api/handlers.py", 1, 20)))
    depth = entry(doc, "src/api/handlers.py").depth
    assert depth is not None
    assert depth.depth is Depth.PARTIAL
    assert (depth.hunks, depth.hunks_seen) == (2, 1)
    assert any(r.start > 20 for r in depth.unseen)
    assert depth.changed_lines_seen < depth.changed_lines


def test_a_deleted_line_is_never_seen_by_a_read_of_the_new_file() -> None:
    """strings.py line 5 replaced ``return title.strip()``: a read of line 5 shows the added
    line, never the one removed (DESIGN §6 rule 25); the pinned diff's page of it shows both."""
    found = entry(
        record(stream(line_read("r", "src/util/strings.py", 5, 1))), "src/util/strings.py"
    )
    assert found.depth is not None
    assert found.depth.changed_lines_seen == 1  # the added line 5, not the deletion


def test_whole_reads_see_every_added_line_and_no_deleted_one() -> None:
    doc = record(stream(*(whole_read(f"r{n}", path) for n, path in enumerate(INDEX.paths))))
    for path in INDEX.paths:
        found = entry(doc, path)
        assert found.lines_seen_whole
        assert found.depth is not None
        assert found.depth.changed_lines_seen == _added(path) > 0, path
        full = _added(path) == found.depth.changed_lines
        assert (found.depth.depth is Depth.FULL) is full, path


def test_a_byte_range_without_the_files_content_is_of_unknown_depth_never_unseen() -> None:
    total = size("src/api/handlers.py")
    data = stream(byte_read("r", "src/api/handlers.py", 0, 90, total))
    for content in (None, MappingContent({})):
        found = entry(record(data, content=content), "src/api/handlers.py")
        assert found.reads_succeeded == 1
        assert found.reads_lines_unknown == 1
        assert found.depth is not None
        assert found.depth.depth is Depth.UNKNOWN


def test_a_byte_range_of_other_content_than_the_revisions_is_no_evidence() -> None:
    """The revision's handlers.py is ``other``: what the read returned is not that file."""
    total = size("src/api/handlers.py")
    data = stream(byte_read("r", "src/api/handlers.py", 0, 90, total))
    content = MappingContent({"src/api/handlers.py": b"other"})
    found = entry(record(data, content=content), "src/api/handlers.py")
    assert found.reads_succeeded == 0
    assert found.content is not None
    assert found.content.mismatched == 1


def test_unknown_lines_do_not_hide_a_change_seen_in_full() -> None:
    """A whole read beside a read of unknown lines: every added line seen, as by the whole
    read alone (the unknown read hides nothing it saw)."""
    total = size("src/api/handlers.py")
    data = stream(
        byte_read("r", "src/api/handlers.py", 0, 90, total), whole_read("w", "src/api/handlers.py")
    )
    depth = entry(record(data), "src/api/handlers.py").depth
    assert depth is not None
    assert depth.changed_lines_seen == _added("src/api/handlers.py")


def test_content_is_asked_for_once_per_file_and_only_for_byte_ranges_of_files_in_the_diff() -> None:
    total = size("src/api/handlers.py")
    content = revision_content()
    data = stream(
        byte_read("a", "src/api/handlers.py", 0, 90, total),
        byte_read("b", "src/api/handlers.py", 90, 200, total),
        byte_read("c", "src/util/dates.py", 0, 10, 99),  # not in the diff
        whole_read("d", "README.md"),
        line_read("e", "docs/guide.md", 1, 3),
    )
    record(data, content=content)
    # every in-scope file once (the content index), and each file read outside the diff once
    assert sorted(content.asked) == sorted({*CHANGED_FILES, "src/util/dates.py"})
    content.asked.clear()
    record(data, content=content, diff=None)
    assert sorted(content.asked) == sorted(set(content.asked))


def test_without_a_pinned_diff_depth_stays_unset() -> None:
    doc = record(
        stream(whole_read("r", "README.md"), line_read("s", "docs/guide.md", 1, 3)), diff=None
    )
    assert [f.depth for f in doc.files] == [None, None]
    assert entry(doc, "docs/guide.md").lines_seen == [LineRange(start=1, end=3)]


def test_files_outside_the_diff_get_lines_but_no_depth() -> None:
    doc = record(stream(line_read("r", "src/util/dates.py", 2, 2)))
    found = entry(doc, "src/util/dates.py")
    assert found.depth is None
    assert found.lines_seen == [LineRange(start=2, end=3)]


def test_a_binary_file_is_of_unknown_depth() -> None:
    diff = b"diff --git a/logo.png b/logo.png\nindex 1..2 100644\nBinary files a/logo.png and b/logo.png differ\n"
    doc = record(stream(whole_read("r", "logo.png")), diff=diff)
    depth = entry(doc, "logo.png").depth
    assert depth is not None
    assert depth.depth is Depth.UNKNOWN


# --- reads that returned nothing ---------------------------------------------------------------


def test_a_read_that_returned_nothing_is_not_evidence_and_is_labelled() -> None:
    """A header with end at offset (zero bytes), and a result with no text: counted as empty,
    never as a successful read, even though the call itself succeeded."""
    total = size("src/util/strings.py")
    data = stream(
        byte_read("a", "src/util/strings.py", total, total, total),
        call("b", "cr_read", {"path": "README.md"}, ""),
    )
    doc = record(data, content=revision_content())
    for path in ("src/util/strings.py", "README.md"):
        found = entry(doc, path)
        assert (found.reads_succeeded, found.reads_empty) == (0, 1)
        assert found.depth is None
    assert [i.kind for i in doc.issues] == [IssueKind.EMPTY_RESULT] * 2
    assert doc.counters.succeeded == 2


def test_an_over_long_call_id_does_not_turn_an_empty_read_into_a_whole_one() -> None:
    """A call id past the bound is shortened; what the read returned (nothing) goes with it, so
    the empty read stays no evidence instead of counting as a whole read."""
    data = stream(call("x" * 5000, "cr_read", {"path": "README.md"}, ""))
    found = entry(record(data, content=revision_content()), "README.md")
    assert (found.reads_succeeded, found.reads_empty) == (0, 1)
    assert found.depth is None


def test_a_byte_range_that_holds_only_a_newline_showed_no_line() -> None:
    content = (REVISION_FILES / "src/util/strings.py").read_bytes()
    newline = content.index(b"\n")
    data = stream(byte_read("a", "src/util/strings.py", newline, newline + 1, len(content)))
    found = entry(record(data, content=revision_content()), "src/util/strings.py")
    assert (found.reads_succeeded, found.reads_empty) == (0, 1)


def test_pi_read_cut_by_pi_shows_the_lines_its_notice_names() -> None:
    """pi's ``read`` cuts long output and says which lines it showed; a first line over its
    limit shows nothing but a notice."""
    cut = {"truncated": True, "truncatedBy": "lines", "outputLines": 12, "totalLines": 42}
    text = "...\n\n[Showing lines 1-12 of 42. Use offset=13 to continue.]"
    over = {"truncated": True, "firstLineExceedsLimit": True}
    lines = [line({"type": "agent_start"})]
    for call_id, path, details, body in (
        ("a", "src/api/handlers.py", cut, text),
        ("b", "README.md", over, "[Line 1 is 60KB, exceeds 50KB limit. Use bash: ...]"),
    ):
        lines.append(
            line(
                {
                    "type": "tool_execution_start",
                    "toolCallId": call_id,
                    "toolName": "read",
                    "args": {"path": path},
                }
            )
        )
        result = {"content": [{"type": "text", "text": body}], "details": {"truncation": details}}
        lines.append(
            line(
                {
                    "type": "tool_execution_end",
                    "toolCallId": call_id,
                    "toolName": "read",
                    "result": result,
                    "isError": False,
                }
            )
        )
    lines.append(line({"type": "agent_end", "messages": []}))
    doc = record(("\n".join(lines) + "\n").encode())
    handlers = entry(doc, "src/api/handlers.py")
    assert handlers.lines_seen == [LineRange(start=1, end=12)]
    assert handlers.partial
    assert handlers.depth is not None
    assert handlers.depth.depth is Depth.PARTIAL
    readme = entry(doc, "README.md")
    assert (readme.reads_succeeded, readme.reads_empty) == (0, 1)


def test_an_evidence_document_without_the_depth_fields_still_reads(tmp_path: Path) -> None:
    """A 1.0 document (none of the line and depth fields) reads, with no depth recorded."""
    document = record(stream(whole_read("r", "README.md"))).model_dump(mode="json", by_alias=True)
    document["version"] = "1.0"
    for entry_ in document["files"]:
        for key in (
            "lines_seen",
            "lines_seen_whole",
            "lines_seen_truncated",
            "reads_empty",
            "reads_lines_unknown",
            "depth",
            "reads_unknown",
        ):
            entry_.pop(key)
    path = tmp_path / "old.evidence.json"
    path.write_text(json.dumps(document))
    loaded = load_evidence(path)
    (found,) = loaded.files
    assert (found.depth, found.lines_seen, found.reads_empty) == (None, [], 0)


def test_a_binary_file_is_asked_for_once_and_its_depth_stays_unknown() -> None:
    """A binary file is compared as the text its bytes decode to (DESIGN §6 rule 24), its
    content asked for once: a read whose bytes are not the file's is a mismatch (here the
    read returned other bytes), one whose bytes are has unknown depth (no hunks)."""
    diff = b"diff --git a/logo.png b/logo.png\nindex 1..2 100644\nBinary files a/logo.png and b/logo.png differ\n"
    content = MappingContent({"logo.png": b"\x89PNG"})
    doc = record(stream(byte_read("r", "logo.png", 0, 2, 4)), content=content, diff=diff)
    assert content.asked == ["logo.png"]
    found = entry(doc, "logo.png").content
    assert found is not None
    assert found.mismatched == 1
    honest = MappingContent({"logo.png": b"...."})  # the test read returns "..."
    doc = record(stream(byte_read("r", "logo.png", 0, 2, 4)), content=honest, diff=diff)
    depth = entry(doc, "logo.png").depth
    assert depth is not None
    assert depth.depth is Depth.UNKNOWN


def test_a_pi_read_too_large_to_hold_keeps_what_it_showed() -> None:
    """A tool line past --max-line-bytes is read as it flows: its header, its truncation notice
    and whether it returned text are kept, so it shows the same lines as when held whole."""
    total = size("src/api/handlers.py")
    header = f"[cr-range offset=0 end=90 total={total} next_offset=90]\n" + "z" * 50_000
    cut = {"truncated": True, "truncatedBy": "lines", "outputLines": 3, "totalLines": 42}
    first_lines = "".join((REVISION_FILES / "README.md").read_text().splitlines(True)[:3])
    notice = first_lines + "\n[Showing lines 1-3 of 42. Use offset=4 to continue.]"
    result = {"content": [{"type": "text", "text": notice}], "details": {"truncation": cut}}
    lines = [
        line({"type": "agent_start"}),
        *call("a", "cr_read", {"path": "src/api/handlers.py", "offset": 0, "limit": 90}, header),
        line(
            {
                "type": "tool_execution_start",
                "toolCallId": "b",
                "toolName": "read",
                "args": {"path": "README.md"},
            }
        ),
        line(
            {
                "type": "tool_execution_end",
                "toolCallId": "b",
                "toolName": "read",
                "isError": False,
                "result": result,
                "padding": "p" * 50_000,
            }
        ),
        line({"type": "agent_end", "messages": []}),
    ]
    data = ("\n".join(lines) + "\n").encode()
    doc = record_bytes(data, diff=DIFF, content=revision_content(), max_line_bytes=4096)
    assert entry(doc, "src/api/handlers.py").lines_seen == [LineRange(start=1, end=4)]
    assert entry(doc, "README.md").lines_seen == [LineRange(start=1, end=3)]


# --- a line the client cut (DESIGN §6 rule 25) --------------------------------------------------

_LONG_OLD = "x = [" + "1, " * 60 + "0]"
_CUT_DIFF = (
    "diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1,3 +1,4 @@\n a = 1\n"
    f"-{_LONG_OLD}\n+{_LONG_OLD[:-2]}9]\n-b = 2\n+B = 2\n+added = True\n"
).encode()


def _cut_marks() -> ChangeMarks:
    changed = DiffIndex.parse(_CUT_DIFF).file("t.py")
    assert changed is not None
    return ChangeMarks(changed)


def test_a_change_past_a_cut_is_hidden_and_one_before_it_is_not() -> None:
    """Line 2 changed in its next-to-last character: a cut that kept the characters before it
    kept only what the old line said too; one more character shows the change, and what it
    cut is how the old line ends. Line 3 changed in its first character: a cut after it shows
    the change, the rest is the old line's. Line 4 is new: what a cut of it did not show is
    no old line's, so it is unseen however it starts (DESIGN §6 rule 29)."""
    marks = _cut_marks()
    data = _CUT_DIFF
    assert marks.hidden_by_cuts(data, [(2, 100)]) == {2}
    assert marks.hidden_by_cuts(data, [(2, len(_LONG_OLD) - 2)]) == {2}
    assert marks.hidden_by_cuts(data, [(2, len(_LONG_OLD) - 1)]) == set()
    assert marks.hidden_by_cuts(data, [(3, 1)]) == set()
    assert marks.hidden_by_cuts(data, [(4, 1), (4, len("added = Tru"))]) == {4}


@settings(max_examples=200, deadline=None)
@given(
    old=st.text(alphabet="ab =,", min_size=1, max_size=30),
    new=st.text(alphabet="ab =,", min_size=1, max_size=30),
    kept=st.integers(min_value=0, max_value=30),
)
def test_a_cut_line_is_seen_only_when_its_change_lies_in_what_was_kept(
    old: str, new: str, kept: int
) -> None:
    """Generated: one line replaced by another, the new one cut after ``kept`` characters. It
    is seen exactly when the old line does not start as the kept part (the model could tell
    them apart) and the part cut off is how the old line ends (the change was all shown)."""
    assume(old != new and kept < len(new))
    diff = (
        f"diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-{old}\n+{new}\n"
    ).encode()
    changed = DiffIndex.parse(diff).file("t.py")
    assert changed is not None
    shown, rest = new[:kept], new[kept:]
    seen = not old.startswith(shown) and old.endswith(rest) and old[: len(old) - len(rest)] != shown
    assert ChangeMarks(changed).hidden_by_cuts(diff, [(1, kept)]) == (set() if seen else {1})


def test_a_whole_read_with_a_hidden_line_leaves_it_unseen_for_a_later_read() -> None:
    marks = _cut_marks()
    marks.see_whole(hidden={2})
    assert not marks.whole
    depth = file_depth(marks, 0)
    assert (depth.depth, [(r.start, r.end) for r in depth.unseen]) == (
        plain.Depth.PARTIAL,
        [(2, 3)],  # the hidden line 2 and the two deleted lines (anchored at 2 and 3)
    )
    marks.see_whole()  # a read that showed the whole line
    assert marks.whole
    assert sum(marks.seen) == 3  # the added lines; the two deleted ones need a view of removal


def _one_line_marks() -> ChangeMarks:
    """One changed line only: ``x = [...0]`` becomes ``x = [...9]``."""
    diff = f"diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-{_LONG_OLD}\n"
    changed = DiffIndex.parse(f"{diff}+{_LONG_OLD[:-2]}9]\n".encode()).file("t.py")
    assert changed is not None
    return ChangeMarks(changed)


def test_a_file_whose_only_changed_line_was_cut_before_its_change_says_so() -> None:
    """A cut line alone verifies nothing (DESIGN §6 rule 29): the depth counts the line cut,
    and a read that later shows it whole clears the count."""
    marks = _one_line_marks()
    marks.mark_cut({1})
    marks.see_whole(hidden={1})
    depth = file_depth(marks, 0)
    assert (depth.depth, depth.changed_lines_seen, depth.changed_lines_cut) == (
        plain.Depth.NONE, 0, 1,
    )  # fmt: skip
    assert "a cut line alone verifies nothing" in depth.detail
    marks.see_whole()
    depth = file_depth(marks, 0)
    assert (depth.depth, depth.changed_lines_cut) == (plain.Depth.PARTIAL, 0)  # the deletion


def test_a_cut_line_beside_a_seen_change_leaves_the_file_partial_not_cut_alone() -> None:
    marks = _cut_marks()
    marks.mark_cut({2})
    marks.see_whole(hidden={2})
    depth = file_depth(marks, 0)
    assert depth.depth is plain.Depth.PARTIAL
    assert depth.changed_lines_cut == 1
    assert "verifies nothing" not in depth.detail


@pytest.mark.parametrize("policy", list(DepthPolicy))
def test_a_cut_line_alone_is_shallow_under_every_depth_policy(policy: DepthPolicy) -> None:
    cut_alone = FileDepth(depth=Depth.NONE, changed_lines=2, changed_lines_cut=1)
    assert held_shallow(cut_alone, policy)
    untouched = FileDepth(depth=Depth.NONE, changed_lines=2)
    assert held_shallow(untouched, policy) is (policy is not DepthPolicy.ACCEPT)
    partial = FileDepth(depth=Depth.PARTIAL, changed_lines=2, changed_lines_seen=1,
                        changed_lines_cut=1)  # fmt: skip
    assert held_shallow(partial, policy) is (policy is DepthPolicy.ALL_HUNKS)


def test_a_cut_counts_the_lines_own_characters_whatever_the_clients_units() -> None:
    """A client written in JavaScript cuts at 2,000 UTF-16 units: a line of emoji (two units
    each) keeps 1,000 of its characters; a key that drops the line's trailing blanks counts
    the characters of the line itself (DESIGN §6 rule 29)."""
    cut = LineCut(tool="read", marker="... [truncated]", length=2000)
    text = FileText(("x\n" + "\U0001f600" * 1500 + "\n").encode(), Presentation())
    assert text.chars_in_units(2, 2000) == 1000
    kept = text.kept("\U0001f600" * 1000 + "... [truncated]", 2, cut)
    assert kept == 1000
    trimmed = FileText(("a" * 2500 + "   \n").encode(), Presentation(trims_trailing_space=True))
    assert trimmed.chars_in_units(1, 2000) == 2000
