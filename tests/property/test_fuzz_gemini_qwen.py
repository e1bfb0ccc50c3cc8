"""The Gemini CLI and Qwen Code decoders survive anything: random bytes, and random JSON built
from their own event shapes (every field of every kind of line given any JSON value), read whole
or as they flow, give an evidence document with every unreadable line counted, or a clear error,
never a traceback. Calls are never made up: a stream whose lines are all damaged has no evidence.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coverage_gate.contracts.model import EvidenceDocument, IssueKind
from coverage_gate.errors import CoverageGateError
from tests.conftest import REPO_ROOT, record_bytes

FORMATS = ("gemini-cli", "qwen-code")
IDS = ("read_file__a", "read_file__b", "a", "b", "")

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["success", "error", "", "read_file", "src/a.py", f"{REPO_ROOT}/a.py"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=4,
)
outputs = st.one_of(
    json_values,
    st.sampled_from(
        [
            "",
            "Read lines 1-5 of 18 from README.md",
            "Read lines 19-18 of 18 from README.md",
            "Read lines 3-7 of at least 900 from a.py (truncated)",
            "Read all 9 lines from a.py (some lines were shortened)",
            "Unchanged: a.py",
            json.dumps({"files": ["a.py", 7, None, ""]}),
            "**Processed Files:**\n- `a.py`\n- ...and 3 more.",
        ]
    ),
)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field's usual value, or any JSON value in its place."""
    return st.one_of(strategy, json_values)


@st.composite
def gemini_line(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(maybe(st.sampled_from(["tool_use", "tool_result", "result", "init", "error"])))
    parameters = {
        "file_path": draw(maybe(st.sampled_from(["a.py", "@a.py", "../a.py", f"{REPO_ROOT}/b"]))),
        "start_line": draw(maybe(st.integers(min_value=-3, max_value=2**64))),
        "end_line": draw(maybe(st.integers(min_value=-3, max_value=2**64))),
        "include": draw(json_values),
    }
    line = {
        "type": kind,
        "timestamp": "2026-12-01T00:00:00.000Z",
        "tool_name": draw(maybe(st.sampled_from(["read_file", "read_many_files", "glob"]))),
        "tool_id": draw(maybe(st.sampled_from(IDS))),
        "parameters": draw(maybe(st.just(parameters))),
        "status": draw(maybe(st.sampled_from(["success", "error"]))),
        "output": draw(outputs),
        "error": draw(json_values),
    }
    dropped = draw(st.sets(st.sampled_from(sorted(line))))
    return {key: value for key, value in line.items() if key not in dropped}


@st.composite
def qwen_line(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(maybe(st.sampled_from(["system", "assistant", "user", "result", "stream_event"])))
    block = {
        "type": draw(maybe(st.sampled_from(["tool_use", "tool_result", "text"]))),
        "id": draw(maybe(st.sampled_from(IDS))),
        "name": draw(maybe(st.sampled_from(["read_file", "run_shell_command", "agent"]))),
        "input": draw(
            maybe(
                st.fixed_dictionaries(
                    {
                        "file_path": maybe(st.sampled_from([f"{REPO_ROOT}/a.py", "a.py"])),
                        "offset": maybe(st.integers(min_value=-3, max_value=2**64)),
                        "limit": maybe(st.integers(min_value=-3, max_value=2**64)),
                    }
                )
            )
        ),
        "tool_use_id": draw(maybe(st.sampled_from(IDS))),
        "is_error": draw(maybe(st.booleans())),
        "content": draw(outputs),
    }
    line = {
        "type": kind,
        "subtype": draw(maybe(st.just("init"))),
        "session_id": "s",
        "cwd": draw(maybe(st.just(REPO_ROOT))),
        "qwen_code_version": "0.24.4",
        "parent_tool_use_id": draw(maybe(st.none())),
        "message": draw(maybe(st.fixed_dictionaries({"content": maybe(st.lists(st.just(block)))}))),
        "permission_denials": draw(json_values),
    }
    dropped = draw(st.sets(st.sampled_from(sorted(line))))
    return {key: value for key, value in line.items() if key not in dropped}


SHAPES = {"gemini-cli": gemini_line(), "qwen-code": qwen_line()}


def recorded(data: bytes, fmt: str, max_line_bytes: int) -> EvidenceDocument | None:
    """The evidence document, or ``None`` for a clear error (one with a message); anything
    else fails the test."""
    error: CoverageGateError | None = None
    try:
        return record_bytes(data, fmt, max_line_bytes=max_line_bytes)
    except CoverageGateError as raised:
        error = raised
    assert str(error), "an error without a message"
    return None


def check_counted(document: EvidenceDocument | None, lines: int) -> None:
    if document is None:
        return
    assert document.counters.lines <= lines
    for issue in document.issues:
        assert issue.line is None or 1 <= issue.line <= lines, issue
        if issue.kind is IssueKind.MALFORMED_LINE:
            assert issue.detail


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=200), min_size=1, max_size=12), st.sampled_from([64, 1 << 20]))
def test_random_bytes_are_counted_as_malformed_lines_never_a_crash(
    fmt: str, raw_lines: list[bytes], max_line_bytes: int
) -> None:
    raw_lines = [raw.replace(b"\n", b" ") for raw in raw_lines]
    data = b"\n".join(raw_lines)
    document = recorded(data, fmt, max_line_bytes)
    check_counted(document, len(raw_lines))
    if document is not None:
        assert [f for f in document.files if f.reads_succeeded] == []


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([96, 1 << 20]))
def test_random_json_of_the_formats_own_event_shapes_never_crashes(
    fmt: str, data: st.DataObject, max_line_bytes: int
) -> None:
    """Lines longer than ``max_line_bytes`` are read as they flow, the others whole."""
    objects = data.draw(st.lists(SHAPES[fmt], min_size=1, max_size=10))
    stream = b"".join(json.dumps(obj).encode() + b"\n" for obj in objects)
    check_counted(recorded(stream, fmt, max_line_bytes), len(objects))


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_event_lines_cut_anywhere_never_crash_and_never_make_up_a_read(
    fmt: str, data: st.DataObject
) -> None:
    """Every line cut short: none can be read, so no file has a successful read."""
    objects = data.draw(st.lists(SHAPES[fmt], min_size=1, max_size=6))
    raw = [json.dumps(obj).encode() for obj in objects]
    cut = [
        line[: data.draw(st.integers(min_value=0, max_value=max(len(line) - 1, 0)))] for line in raw
    ]
    document = recorded(b"\n".join(cut) + b"\n", fmt, 1 << 20)
    check_counted(document, len(cut))
    if document is not None:
        assert [f.path for f in document.files if f.reads_succeeded] == []
