"""Properties of the content checks (DESIGN §6 rules 16-17).

- The content index credits exactly the lines a brute-force comparison of the text with every
  in-scope file finds (every maximal run of equal consecutive lines, held to the same length
  rule and the same "no other run covers it as well" rule).
- Adding a call never removes evidence a matched call gave: whatever another call returned (the
  reviewer's own edit of the file, another file, noise), each file keeps its verified reads and
  every line they showed.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate.core import content_index as cc
from coverage_gate.core.content_index import ContentIndex
from coverage_gate.edges.content import MappingContent
from tests.conftest import record_bytes

# Few distinct informative lines, so that runs meet, repeat and overlap across files; each
# occurs far fewer times than a run-starting line may (MAX_START_OCCURRENCES).
WORDS = ["alpha = compute(1)", "beta = compute(2)", "gamma(delta)", "return alpha + beta"]
LINE = st.sampled_from([*WORDS, "", "}", "x"])
FILE = st.lists(LINE, min_size=1, max_size=12)


def brute_runs(out: list[str], files: dict[str, list[str]]) -> list[cc._Run]:
    """Every maximal run of consecutive text lines equal to consecutive lines of one file that
    holds an informative line, found by comparing every pair of positions."""
    found: list[cc._Run] = []
    for key, lines in files.items():
        for i in range(len(out)):
            for j in range(len(lines)):
                if i > 0 and j > 0 and out[i - 1] == lines[j - 1]:
                    continue  # not where a maximal run starts
                k = 0
                while i + k < len(out) and j + k < len(lines) and out[i + k] == lines[j + k]:
                    k += 1
                if not k:
                    continue
                if not any(cc.informative(line) for line in out[i : i + k]):
                    continue
                found.append(cc._Run(key, j + 1, i, i + k, k))
    return found


def brute_credits(out: list[str], files: dict[str, list[str]]) -> set[tuple[str, int, int]]:
    credited: set[tuple[str, int, int]] = set()
    for run in cc._uncontested(brute_runs(out, files)):
        whole = run.file_start == 1 and run.lines_total == len(files[run.key])
        weights = [cc.informative(line) for line in out[run.out_start : run.out_end]]
        enough = (
            sum(1 for w in weights if w) >= cc.MIN_RUN_LINES and sum(weights) >= cc.MIN_RUN_CHARS
        )
        if not whole and not enough:
            continue
        credited.add((run.key, run.file_start, run.file_start + run.lines_total - 1))
    return credited


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["a.py", "b.py", "c.py"]), FILE, min_size=1, max_size=3),
    st.lists(
        st.one_of(
            LINE,
            st.tuples(
                st.sampled_from(["a.py", "b.py", "c.py"]), st.integers(0, 11), st.integers(1, 12)
            ),
        ),
        max_size=10,
    ),
)
def test_the_index_credits_exactly_what_a_brute_force_comparison_finds(
    files: dict[str, list[str]], pieces: list[Any]
) -> None:
    """A text made of slices of the files and stray lines: the same credits either way."""
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, tuple):
            path, start, count = piece
            out.extend(files.get(path, [])[start : start + count])
        else:
            out.append(piece)
    data = {path: "".join(f"{line}\n" for line in lines).encode() for path, lines in files.items()}
    index = ContentIndex(data)
    seen = index.scan("".join(f"{line}\n" for line in out))
    assert {(c.path, c.start, c.end) for c in seen.credits} == brute_credits(out, files)


# --- adding a call -------------------------------------------------------------------------------

REVISION = {
    "a.py": "".join(f"{word}\n" for word in WORDS).encode(),
    "b.py": b"def b():\n    return beta_value(2)\n\nprint('b is here')\n",
}


def pi_call(n: int, tool: str, args: dict[str, Any], text: str) -> list[str]:
    start = {"type": "tool_execution_start", "toolCallId": f"c{n}", "toolName": tool, "args": args}
    end = {
        "type": "tool_execution_end",
        "toolCallId": f"c{n}",
        "toolName": tool,
        "result": {"content": [{"type": "text", "text": text}], "details": {}},
        "isError": False,
    }
    return [json.dumps(start), json.dumps(end)]


def stream(calls: list[tuple[str, dict[str, Any], str]]) -> bytes:
    lines = [json.dumps({"type": "agent_start"})]
    for n, (tool, args, text) in enumerate(calls):
        lines += pi_call(n, tool, args, text)
    lines.append(json.dumps({"type": "agent_end", "messages": []}))
    return ("\n".join(lines) + "\n").encode()


HONEST = st.sampled_from(
    [
        ("cr_read", {"path": "a.py"}, REVISION["a.py"].decode()),
        ("cr_read", {"path": "b.py"}, REVISION["b.py"].decode()),
        ("read", {"path": "a.py", "offset": 2, "limit": 2}, "".join(f"{w}\n" for w in WORDS[1:3])),
    ]
)
OTHER = st.one_of(
    HONEST,
    st.tuples(
        st.sampled_from(["cr_read", "read", "bash", "mcp_tool"]),
        st.fixed_dictionaries({"path": st.sampled_from(["a.py", "b.py", "c.py"])}),
        st.one_of(
            st.just(REVISION["a.py"].decode().replace("compute", "edited")),
            st.just(REVISION["b.py"].decode()),
            st.text(max_size=40),
        ),
    ),
)


def evidence_of(calls: list[tuple[str, dict[str, Any], str]]) -> dict[str, tuple[bool, set[int]]]:
    document = record_bytes(stream(calls), content=MappingContent(REVISION))
    found: dict[str, tuple[bool, set[int]]] = {}
    for entry in document.files:
        credited = entry.content.credited if entry.content is not None else 0
        lines = {n for r in entry.lines_seen for n in range(r.start, r.end + 1)}
        found[entry.path] = (entry.reads_succeeded > 0 or credited > 0, lines)
    return found


@settings(max_examples=150, deadline=None)
@given(st.lists(HONEST, min_size=1, max_size=4), st.lists(OTHER, max_size=4), st.randoms())
def test_adding_a_call_never_removes_evidence_a_matched_call_gave(
    honest: list[tuple[str, dict[str, Any], str]],
    others: list[tuple[str, dict[str, Any], str]],
    shuffle: Any,
) -> None:
    before = evidence_of(honest)
    mixed = [*honest, *others]
    shuffle.shuffle(mixed)
    after = evidence_of(mixed)
    for path, (evidenced, lines) in before.items():
        assert path in after
        now_evidenced, now_lines = after[path]
        assert now_evidenced or not evidenced, path
        assert lines <= now_lines, path
