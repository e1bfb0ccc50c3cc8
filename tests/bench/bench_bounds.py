"""Benchmark: `record` on hostile shapes, time and peak memory.

Not part of the default run: ``python -m pytest -m bench -s tests/bench/bench_bounds.py``.

- 1,000,000 tool starts that never end (distinct call ids): the pairer follows a bounded number
  of calls, so time and memory stay those of reading the lines.
- one 150 MB pi ``tool_execution_end`` line (a read result of a large file), and the same as a
  Claude Code ``user`` tool_result line: read as they flow, memory does not grow with the line.
- one line holding a 30 MB call id and a 30 MB path: the evidence file stays small.

Figures are printed with the interpreter-and-imports baseline measured alongside. Streams are
written by a child process (``python -m tests.bench.bench_bounds KIND PATH``), so that the benchmark
process stays small: a child forked from a large parent would count the parent's pages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench.bench_record import run_measured

SIZE_MB = int(os.environ.get("BENCH_LINE_MB", "150"))
STARTS = int(os.environ.get("BENCH_STARTS", "1000000"))


def write_unmatched(path: Path) -> None:
    with path.open("w") as out:
        out.write('{"type":"agent_start"}\n')
        for n in range(STARTS):
            start = {
                "type": "tool_execution_start",
                "toolCallId": f"c{n}",
                "toolName": "cr_read",
                "args": {"path": f"src/f{n % 1000}.py"},
            }
            out.write(json.dumps(start, separators=(",", ":")) + "\n")
        out.write('{"type":"agent_end","messages":[]}\n')


def big_text() -> str:
    line = 'a source line with "quotes", é and a \\ backslash\n'
    return line * (SIZE_MB * 1024 * 1024 // len(line.encode()))


def write_pi_line(path: Path) -> None:
    start = {"type": "tool_execution_start", "toolCallId": "b", "toolName": "cr_read",
             "args": {"path": "src/big.py"}}  # fmt: skip
    end = {"type": "tool_execution_end", "toolCallId": "b", "toolName": "cr_read",
           "result": {"content": [{"type": "text", "text": big_text()}]}, "isError": False}  # fmt: skip
    lines = [{"type": "agent_start"}, start, end, {"type": "agent_end", "messages": []}]
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))


def write_claude_line(path: Path) -> None:
    text = big_text()
    use = {"type": "assistant", "session_id": "s", "parent_tool_use_id": None,
           "message": {"content": [{"type": "tool_use", "id": "t", "name": "Read",
                                    "input": {"file_path": "src/big.py"}}]}}  # fmt: skip
    result = {"type": "user", "session_id": "s", "parent_tool_use_id": None,
              "message": {"content": [{"tool_use_id": "t", "type": "tool_result", "content": text}]},
              "tool_use_result": {"file": {"startLine": 1, "numLines": 3, "totalLines": 3}}}  # fmt: skip
    done = {"type": "result", "subtype": "success", "session_id": "s", "permission_denials": []}
    path.write_text("".join(json.dumps(x) + "\n" for x in (use, result, done)))


def write_long_strings(path: Path) -> None:
    start = {"type": "tool_execution_start", "toolCallId": "c" * 30_000_000, "toolName": "cr_read",
             "args": {"path": "/etc/" + "p" * 30_000_000}}  # fmt: skip
    lines = [{"type": "agent_start"}, start, {"type": "agent_end", "messages": []}]
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))


WRITERS = {
    "unmatched": write_unmatched,
    "pi-line": write_pi_line,
    "claude-line": write_claude_line,
    "long-strings": write_long_strings,
}


def record(path: Path, source: str) -> tuple[float, int, Path]:
    out = path.with_suffix(".evidence.json")
    command = [sys.executable, "-m", "coverage_gate", "record", str(path), "--format", source,
               "--revision", "bench", "--repo-root", "/r", "-o", str(out)]  # fmt: skip
    seconds, peak_kib = run_measured(command)
    return seconds, peak_kib, out


@pytest.mark.bench
def test_record_stays_bounded_on_hostile_shapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COVERAGE_GATE_TELEMETRY_DIR", str(tmp_path / "telemetry"))
    _, baseline_kib = run_measured([sys.executable, "-c", "import coverage_gate.cli"])
    print(f"\ninterpreter + imports alone: {baseline_kib / 1024:.1f} MiB")
    cases = [
        (f"{STARTS:,} unmatched starts", "unmatched", "pi-rpc"),
        (f"one {SIZE_MB} MB pi tool_execution_end line", "pi-line", "pi-rpc"),
        (f"one {SIZE_MB} MB Claude Code tool_result line", "claude-line", "claude-code"),
        ("a 30 MB call id and a 30 MB path", "long-strings", "pi-rpc"),
    ]
    for label, kind, source in cases:
        path = tmp_path / "stream.jsonl"
        began = time.perf_counter()
        writer = [sys.executable, "-m", "tests.bench.bench_bounds", kind, str(path)]
        subprocess.run(writer, check=True, cwd=Path(__file__).parents[2])
        made = time.perf_counter() - began
        seconds, peak_kib, out = record(path, source)
        document = json.loads(out.read_text())
        files = [(f["path"], f["reads_succeeded"]) for f in document["files"]][:3]
        print(
            f"{label:<44} {path.stat().st_size / 1e6:7.0f} MB in {seconds:6.2f} s, "
            f"peak {peak_kib / 1024:6.1f} MiB; evidence {out.stat().st_size:,} bytes; "
            f"files {files}; dropped {document['dropped_calls']:,} (written in {made:.1f} s)"
        )
        path.unlink()
        out.unlink()


if __name__ == "__main__":
    WRITERS[sys.argv[1]](Path(sys.argv[2]))
