"""Properties of depth over random diffs and random calls (DESIGN §6 rules 11-13).

A random diff of a few files (CRLF files, files without a final newline, new and deleted files,
lines that look like headers) and a random sequence of successful and failed calls: ``cr_diff``
pages, whole and byte-ranged ``cr_read`` (some files' content not obtainable), line-ranged
``read``, reads that return nothing. The evidence's ``changed_lines_seen`` must equal a
brute-force recount, done here byte by byte from the diff this test wrote itself, and adding a
call never lowers any file's depth.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate.contracts.model import Depth, EvidenceDocument
from coverage_gate.edges.content import MappingContent
from tests.conftest import record_bytes

WORDS = ["a", "b", "c", "dd", "--- x", "+++ y", "", "@@ q"]
RANK = {None: 0, Depth.NONE: 1, Depth.PARTIAL: 2, Depth.UNKNOWN: 3, Depth.FULL: 4}


@dataclass
class Changed:
    visible: range  # bytes of the diff that show it
    anchor: int  # new-side number, or a deletion's anchor (0: none)
    added: bool = True  # a deleted line is in no read of the new file


@dataclass
class Written:
    """One file of the diff, as this test wrote it."""

    path: str
    content: bytes | None  # at the revision; None: deleted, or "not obtainable" for the test
    lines: list[range] = field(default_factory=list)  # visible bytes of every diff line
    changed: list[Changed] = field(default_factory=list)


def visible(line: bytes, offset: int) -> range:
    body_end = offset + len(line.rstrip(b"\r\n"))
    return range(offset + 1, body_end) if body_end > offset + 1 else range(offset, offset + 1)


def write_diff(
    files: list[tuple[list[str], list[str], bool, bool, int]],
) -> tuple[bytes, list[Written]]:
    out = bytearray()
    written: list[Written] = []
    for n, (old, new, crlf, final_newline, context) in enumerate(files):
        end = "\r\n" if crlf else "\n"
        old_lines = [w + end for w in old]
        new_lines = [w + end for w in new]
        if new_lines and not final_newline and new_lines[-1] != end:
            # no final newline (an empty last line cannot lack one: it would not be a line)
            new_lines[-1] = new_lines[-1].removesuffix(end)
        path = f"d{n}/f {n}.txt"
        body = list(difflib.unified_diff(old_lines, new_lines, n=context, lineterm="\n"))
        if not body:
            continue
        file = Written(path, "".join(new_lines).encode() if new else None)
        out += f"diff --git a/{path} b/{path}\n".encode()
        out += (f"--- a/{path}\n" if old else "--- /dev/null\n").encode()
        out += (f"+++ b/{path}\n" if new else "+++ /dev/null\n").encode()
        hunk: list[tuple[str, int, range]] = []  # kind, number before anchoring, visible
        new_next = 0
        for text in body[2:]:
            raw = text.encode()
            if not raw.endswith(b"\n"):
                raw += b"\n\\ No newline at end of file\n"
            if raw.startswith(b"@@"):
                settle(file, hunk)
                hunk = []
                new_range = raw.split(b" ")[2][1:].split(b",")
                start, count = int(new_range[0]), int(new_range[1]) if len(new_range) > 1 else 1
                new_next = start if count else start + 1
                out += raw
                continue
            kind = raw[:1].decode()
            line_bytes = raw.split(b"\n\\")[0] if b"\n\\" in raw else raw
            shown = visible(line_bytes, len(out))
            file.lines.append(shown)
            if kind == "-":
                hunk.append(("-", new_next - 1, shown))
            else:
                hunk.append((kind, new_next, shown))
                new_next += 1
            out += raw
        settle(file, hunk)
        written.append(file)
    return bytes(out), written


def settle(file: Written, hunk: list[tuple[str, int, range]]) -> None:
    """Anchor each deletion: the next new-side line in its hunk, else the one before it."""
    for position, (kind, number, shown) in enumerate(hunk):
        if kind == " ":
            continue
        if kind == "+":
            file.changed.append(Changed(shown, number))
            continue
        following = [n for k, n, _ in hunk[position + 1 :] if k != "-"]
        file.changed.append(Changed(shown, following[0] if following else number, added=False))


@dataclass(frozen=True)
class Call:
    kind: str  # page, lines, whole, bytes, empty, failed
    file: int = 0
    start: int = 0
    end: int = 0


FILES = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), max_size=10),
        st.lists(st.sampled_from(WORDS), max_size=10),
        st.booleans(),
        st.booleans(),
        st.integers(0, 3),
    ),
    min_size=1,
    max_size=3,
)
CALL = st.builds(
    Call,
    st.sampled_from(["page", "page", "lines", "whole", "bytes", "bytes", "empty", "failed"]),
    st.integers(0, 2),
    st.integers(0, 400),
    st.integers(0, 400),
)


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def pi_call(n: int, tool: str, args: dict[str, Any], text: str, ok: bool = True) -> list[str]:
    end = {
        "type": "tool_execution_end",
        "toolCallId": f"c{n}",
        "toolName": tool,
        "result": {"content": [{"type": "text", "text": text}], "details": {}},
        "isError": not ok,
    }
    start = {"type": "tool_execution_start", "toolCallId": f"c{n}", "toolName": tool, "args": args}
    return [line(start), line(end)]


def stream(calls: list[Call], diff: bytes, files: list[Written]) -> bytes:
    out = [line({"type": "agent_start"})]
    for n, spec in enumerate(calls):
        file = files[spec.file % len(files)]
        total = len(file.content or b"")
        low, high = sorted((spec.start, spec.end))
        if spec.kind == "page":
            low, high = min(low, len(diff)), min(high, len(diff))
            header = f"[cr-range offset={low} end={high} total={len(diff)} next_offset=-1]\n"
            out += pi_call(n, "cr_diff", {"offset": low, "limit": high - low}, header)
        elif spec.kind == "lines":
            first, count = low % 20 + 1, high % 5 + 1
            args = {"path": file.path, "offset": first, "limit": count}
            out += pi_call(n, "read", args, honest_lines(file, first, count))
        elif spec.kind == "whole":
            text = file.content.decode() if file.content is not None else "the file"
            out += pi_call(n, "cr_read", {"path": file.path}, text)
        elif spec.kind in ("bytes", "empty"):
            size = max(total, 1)
            low, high = low % (size + 1), high % (size + 1)
            low, high = sorted((low, high))
            if spec.kind == "empty":
                high = low
            header = f"[cr-range offset={low} end={high} total={size} next_offset=-1]\n"
            body = (file.content or b"")[low:high].decode("utf-8", "replace")
            out += pi_call(
                n, "cr_read", {"path": file.path, "offset": low, "limit": high - low}, header + body
            )
        else:
            out += pi_call(n, "cr_read", {"path": file.path}, "no such file", ok=False)
    out.append(line({"type": "agent_end", "messages": []}))
    return ("\n".join(out) + "\n").encode()


def honest_lines(file: Written, first: int, count: int) -> str:
    """What an honest ``read`` of lines ``first``.. returns: those of the file that exist (none
    past its end); a file with no content at the revision: some text, never checked."""
    if file.content is None:
        return "l"
    return "".join(file.content.decode().splitlines(keepends=True)[first - 1 : first - 1 + count])


def content_lines(content: bytes) -> list[range]:
    """Visible bytes of each line of a file (without its terminator; an empty line: its newline)."""
    out: list[range] = []
    position = 0
    for raw in content.splitlines(keepends=True):
        out.append(
            visible(b"x" + raw, position - 1)
            if raw.rstrip(b"\r\n")
            else range(position, position + 1)
        )
        position += len(raw)
    return out


def read_lines(spec: Call, file: Written, known: bool) -> tuple[int, int] | str:
    """The lines one read of ``file`` showed, or "nothing" / "unknown"."""
    low, high = sorted((spec.start, spec.end))
    if spec.kind == "lines":
        first, count = low % 20 + 1, high % 5 + 1
        if file.content is not None and not honest_lines(file, first, count):
            return "nothing"  # past the end: it returned nothing
        return first, first + count - 1
    if spec.kind == "whole":
        return 1, 10**9
    content = file.content or b""
    size = max(len(content), 1)
    low, high = sorted((low % (size + 1), high % (size + 1)))
    if high <= low:
        return "nothing"
    if low == 0 and high >= size:
        return 1, 10**9  # the whole file, no content needed
    if not known or file.content is None:
        return "unknown"
    numbers = [
        k + 1
        for k, shown in enumerate(content_lines(content))
        if set(shown) & set(range(low, high))
    ]
    return (numbers[0], numbers[-1]) if numbers else "nothing"


def brute_force(
    calls: list[Call], diff: bytes, files: list[Written], known: set[int]
) -> dict[str, tuple[int, int, Depth | None]]:
    """Per file: (changed lines, changed lines seen, depth), recounted byte by byte."""
    result: dict[str, tuple[int, int, Depth | None]] = {}
    for index, file in enumerate(files):
        seen = [False] * len(file.changed)
        evidenced = unknown = 0
        for spec in calls:
            if spec.kind == "page":
                low, high = sorted((spec.start, spec.end))
                page = set(range(min(low, len(diff)), min(high, len(diff))))
                evidenced += any(page & set(shown) for shown in file.lines)
                for n, change in enumerate(file.changed):
                    seen[n] = seen[n] or bool(page & set(change.visible))
                continue
            if files[spec.file % len(files)] is not file or spec.kind in ("failed", "empty"):
                continue
            shown = read_lines(spec, file, index in known)
            if shown == "nothing":
                continue
            evidenced += 1
            if isinstance(shown, str):
                unknown += 1
                continue
            first, last = shown
            for n, change in enumerate(file.changed):
                seen[n] = seen[n] or (
                    change.added and change.anchor >= 1 and first <= change.anchor <= last
                )
        total, count = len(file.changed), sum(seen)
        if not evidenced:
            depth = None
        elif count == total:
            depth = Depth.FULL
        elif unknown:
            depth = Depth.UNKNOWN
        else:
            depth = Depth.NONE if count == 0 else Depth.PARTIAL
        result[file.path] = (total, count, depth)
    return result


def recorded(
    calls: list[Call], diff: bytes, files: list[Written], known: set[int]
) -> EvidenceDocument:
    content = MappingContent(
        {f.path: f.content for i, f in enumerate(files) if i in known and f.content is not None}
    )
    return record_bytes(stream(calls, diff, files), diff=diff, content=content)


def depths(
    document: EvidenceDocument, files: list[Written]
) -> dict[str, tuple[int, int, Depth | None]]:
    out: dict[str, tuple[int, int, Depth | None]] = {}
    for file in files:
        entry = document.file(file.path)
        depth = entry.depth if entry is not None else None
        if depth is None:
            out[file.path] = (len(file.changed), 0, None)
        else:
            out[file.path] = (depth.changed_lines, depth.changed_lines_seen, depth.depth)
    return out


@settings(max_examples=150, deadline=None)
@given(FILES, st.lists(CALL, max_size=8), st.sets(st.integers(0, 2)))
def test_changed_lines_seen_equal_a_brute_force_recount(
    spec: list[tuple[list[str], list[str], bool, bool, int]], calls: list[Call], known: set[int]
) -> None:
    diff, files = write_diff(spec)
    if not files:
        return
    document = recorded(calls, diff, files, known)
    assert depths(document, files) == brute_force(calls, diff, files, known)


@settings(max_examples=150, deadline=None)
@given(FILES, st.lists(CALL, max_size=8), CALL, st.sets(st.integers(0, 2)))
def test_adding_a_call_never_lowers_a_files_depth(
    spec: list[tuple[list[str], list[str], bool, bool, int]],
    calls: list[Call],
    extra: Call,
    known: set[int],
) -> None:
    diff, files = write_diff(spec)
    if not files:
        return
    before = depths(recorded(calls, diff, files, known), files)
    after = depths(recorded([*calls, extra], diff, files, known), files)
    for path, (_, seen, depth) in before.items():
        _, seen_after, depth_after = after[path]
        assert seen_after >= seen
        assert RANK[depth_after] >= RANK[depth], (path, depth, depth_after)
