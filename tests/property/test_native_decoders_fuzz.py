"""The OpenCode and Copilot CLI decoders take anything: random bytes, and random JSON in the
shapes of their own events (the fields they read, holding values of every JSON type, numbers
past 64 bits, deep nesting, huge strings), at any line size limit. Each line ends as a decoded
event, a skipped line or a counted malformed line; ``record`` answers with a document (exit 0)
or one clear line of bad input (exit 3), never a traceback."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from coverage_gate.adapters import ADAPTERS
from coverage_gate.cli import app
from coverage_gate.core.events import HEAD_BYTES, LineClass
from coverage_gate.errors import CoverageGateError
from tests.conftest import record_bytes

FORMATS = ["opencode", "copilot-cli"]
KINDS = {
    "opencode": ["tool_use", "step_start", "step_finish", "text", "reasoning", "error", "x"],
    "copilot-cli": [
        "tool.execution_start",
        "tool.execution_complete",
        "result",
        "assistant.turn_start",
        "assistant.message",
        "session.info",
        "x",
    ],
}
IDS = st.sampled_from(["a", "b", "call_1", "", "a" * 300])
NAMES = st.sampled_from(["read", "view"] * 3 + ["bash", "task", "grep", "invalid", "", "Read"])
PATHS = st.sampled_from(
    ["src/a.py", "/home/user/repo/src/a.py", "../x", "@a", "a\x00b", "/etc/passwd", "src", ""]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
ANY_JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually the right kind of value, sometimes any JSON value at all."""
    return st.one_of(strategy, strategy, strategy, ANY_JSON)


def shaped(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """An object with these fields, now and then without some of them."""

    def drop(pair: tuple[dict[str, Any], list[bool]]) -> dict[str, Any]:
        obj, keep = pair
        return {key: value for (key, value), kept in zip(obj.items(), keep, strict=True) if kept}

    keep = st.lists(
        st.sampled_from([True] * 5 + [False]), min_size=len(fields), max_size=len(fields)
    )
    return st.tuples(st.fixed_dictionaries(fields), keep).map(drop)


def opencode_event() -> st.SearchStrategy[dict[str, Any]]:
    display = shaped(
        {
            "type": maybe(st.sampled_from(["file", "directory", "image"])),
            "lineStart": maybe(st.integers(min_value=-3, max_value=2**65)),
            "lineEnd": maybe(st.integers(min_value=-3, max_value=2**65)),
            "totalLines": maybe(st.integers(min_value=-3, max_value=2**65)),
        },
    )
    state = shaped(
        {
            "status": maybe(st.sampled_from(["completed", "error", "running", "pending", "?"])),
            "input": maybe(
                shaped(
                    {
                        "filePath": maybe(PATHS),
                        "offset": maybe(st.integers(min_value=-3, max_value=2**65)),
                        "limit": maybe(st.integers(min_value=-3, max_value=2**65)),
                    },
                )
            ),
            "metadata": maybe(shaped({"display": maybe(display)})),
            "time": maybe(st.fixed_dictionaries({"start": SCALARS})),
        },
    )
    part = shaped(
        {
            "tool": maybe(NAMES),
            "callID": maybe(IDS),
            "state": maybe(state),
            "reason": maybe(st.sampled_from(["stop", "tool-calls", "length"])),
        },
    )
    kind = maybe(st.sampled_from(KINDS["opencode"]))
    return shaped({"type": kind, "sessionID": maybe(st.just("ses_x")), "part": maybe(part)})


def copilot_event() -> st.SearchStrategy[dict[str, Any]]:
    arguments = shaped(
        {
            "path": maybe(PATHS),
            "view_range": maybe(st.lists(st.integers(-2, 2**65), max_size=3)),
            "view_range[0]": maybe(st.integers(-2, 50)),
        },
    )
    telemetry = shaped(
        {
            "properties": maybe(
                shaped(
                    {
                        "largeOutputAvoided": maybe(st.just("true")),
                        "viewType": maybe(st.sampled_from(["file", "directory"])),
                    },
                )
            ),
            "metrics": maybe(
                shaped(
                    {
                        "resultLength": maybe(st.integers(-1, 2**65)),
                        "resultForLlmLength": maybe(st.integers(-1, 2**65)),
                    },
                )
            ),
        },
    )
    data = shaped(
        {
            "toolCallId": maybe(IDS),
            "toolName": maybe(NAMES),
            "arguments": maybe(arguments),
            "success": maybe(st.booleans()),
            "shellExecution": maybe(st.fixed_dictionaries({"exitCode": maybe(st.integers(-1, 2))})),
            "result": maybe(st.fixed_dictionaries({"content": maybe(st.text(max_size=30))})),
            "toolTelemetry": maybe(telemetry),
        },
    )
    kind = maybe(st.sampled_from(KINDS["copilot-cli"]))
    return shaped(
        {"type": kind, "data": maybe(data), "id": st.just("e"), "sessionId": st.just("s")}
    )


EVENTS = {"opencode": opencode_event(), "copilot-cli": copilot_event()}


def as_line(event: dict[str, Any], cut: int | None) -> bytes:
    raw = json.dumps(event).encode()
    return raw[:cut] if cut is not None else raw


def line_of(fmt: str) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.builds(as_line, EVENTS[fmt], st.one_of(st.none(), st.none(), st.integers(0, 80))),
        st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ")),
    )


def stream_of(fmt: str) -> st.SearchStrategy[bytes]:
    return st.lists(line_of(fmt), min_size=1, max_size=12).map(lambda ls: b"\n".join(ls) + b"\n")


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_lines_decode_to_a_document_with_every_broken_line_counted(
    fmt: str, data: st.DataObject
) -> None:
    stream = data.draw(stream_of(fmt))
    limit = data.draw(st.sampled_from([64, 256, 4096, 64 * 1024 * 1024]))
    try:
        doc = record_bytes(stream, fmt, max_line_bytes=limit)
    except CoverageGateError:
        return  # a clear, documented error (a NUL in a file name is bad input)
    lines = stream.split(b"\n")[:-1]
    assert doc.counters.lines == len(lines)
    # a byte-order mark at the very start of a stream is dropped, as every reader of text does
    lines[0] = lines[0].removeprefix(b"\xef\xbb\xbf")
    decoder = ADAPTERS[fmt].decoder()
    broken = [
        line
        for line in lines
        if line.strip()
        and not _is_object(line)
        and decoder.classify(line[:HEAD_BYTES]) is not LineClass.SKIP
    ]
    assert doc.counters.malformed_lines >= len(broken)
    counters = doc.counters
    assert counters.calls == counters.succeeded + counters.failed + counters.incomplete


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_record_answers_random_streams_with_a_document_or_one_line_of_bad_input(
    fmt: str, data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stream = data.draw(stream_of(fmt))
    path = tmp_path_factory.mktemp("fuzz") / "stream.jsonl"
    path.write_bytes(stream)
    result = CliRunner().invoke(
        app, ["record", str(path), "--format", fmt, "--revision", "r", "--repo-root", "/repo"]
    )
    assert result.exit_code in (0, 3), result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    if result.exit_code == 0:
        assert json.loads(result.stdout)["source"] == fmt
