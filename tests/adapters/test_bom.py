"""A UTF-8 byte-order mark opening an input marks its encoding: it is dropped, never read as part
of the first line, the first path, or the JSON document (a BOM anywhere else is data)."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.adapters import ADAPTERS
from coverage_gate.cli import app
from coverage_gate.contracts.model import EvidenceDocument
from coverage_gate.record.linescan import LineScanner
from coverage_gate.record.recording import Recorder, RecordSettings
from coverage_gate.record.sniff import head_lines, sniff
from coverage_gate.rollout.report import load_folder
from coverage_gate.rollout.simulation import decide
from tests.conftest import DATA, REPO_ROOT
from tests.rollout.test_report import LIAR, SCOPE, T0, write

BOM = codecs.BOM_UTF8
FULL = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
runner = CliRunner()

# Real captures of real clients, one per format the scanner reads line by line. The OTLP file
# is one line (one export request): a BOM used to cost it all of its evidence.
STREAMS = [
    ("pi-rpc", DATA / "pi-rpc" / "pi_b_overclaim.jsonl"),
    ("claude-code", DATA / "claude-code" / "claude_b_overclaim.jsonl"),
    ("codex-rollout", DATA / "codex-rollout" / "codex_b_overclaim.rollout.jsonl"),
    ("codex-exec", DATA / "codex-exec" / "codex_b_overclaim.exec.jsonl"),
    ("otlp-json", DATA / "otlp-json" / "coverage_gate_claude_b_overclaim.jsonl"),
]
IDS = [fmt for fmt, _ in STREAMS]


def record_in_chunks(data: bytes, fmt: str, size: int) -> EvidenceDocument:
    recorder = Recorder(ADAPTERS[fmt], RecordSettings(revision="rev1", repo_root=REPO_ROOT))
    for start in range(0, len(data), size):
        recorder.feed(data[start : start + size])
    return recorder.finish()


@pytest.mark.parametrize(("fmt", "path"), STREAMS, ids=IDS)
@pytest.mark.parametrize("size", [1, 2, 3, 4, 1 << 20])
def test_a_bom_opening_a_stream_changes_nothing_even_split_across_chunks(
    fmt: str, path: Path, size: int
) -> None:
    """Chunks of 1 and 2 bytes split the mark itself; the evidence must be the same as without
    it (the first line is read, counted once, and no line is malformed for it)."""
    data = path.read_bytes()
    assert record_in_chunks(BOM + data, fmt, size) == record_in_chunks(data, fmt, 1 << 20)


def test_a_bom_elsewhere_is_data_and_a_cut_off_mark_is_a_line() -> None:
    """Only the stream's first bytes can be its mark: a BOM opening line two is part of that
    line, and a stream of the mark's first two bytes alone is one (malformed) line."""
    request = b'{"resourceSpans": []}\n'
    moved = record_in_chunks(request + BOM + request, "otlp-json", 1)
    assert (moved.counters.lines, moved.counters.malformed_lines) == (2, 1)
    cut = record_in_chunks(BOM[:2], "otlp-json", 1)
    assert (cut.counters.lines, cut.counters.malformed_lines) == (1, 1)


def test_scanner_counts_every_byte_it_was_fed_including_the_mark() -> None:
    scanner = LineScanner(ADAPTERS["pi-rpc"].decoder(), lambda events: None)
    for byte in [BOM[:1], BOM[1:2], BOM[2:], b"{}\n"]:
        scanner.feed(byte)
    scanner.close()
    assert (scanner.bytes, scanner.lines) == (len(BOM) + 3, 1)


@pytest.mark.parametrize(("fmt", "path"), STREAMS, ids=IDS)
def test_a_stream_opening_with_a_bom_is_sniffed_as_its_format(fmt: str, path: Path) -> None:
    assert sniff(head_lines(BOM + path.read_bytes()[: 64 * 1024])) == fmt


def test_record_detects_the_format_of_a_stream_with_a_bom(tmp_path: Path) -> None:
    stream = tmp_path / "claude.jsonl"
    stream.write_bytes(BOM + STREAMS[1][1].read_bytes())
    result = runner.invoke(app, ["record", str(stream), "--revision", "r"])
    assert result.exit_code == 0, result.output
    assert "format claude-code" in result.stderr
    assert json.loads(result.stdout)["counters"]["malformed_lines"] == 0


def _reconcile(folder: Path, changed: Path, claims: Path, *extra: str) -> list[str]:
    return [
        "reconcile",
        "--repo",
        "o/r",
        "--revision",
        FULL,
        "--verdict",
        "approve",
        "--changed",
        str(changed),
        "--claims",
        str(claims),
        "--mode",
        "enforce",
        "--format",
        "json",
        "--repo-root",
        str(folder),
        *extra,
    ]


def _claims(path: Path, inspected: list[str]) -> Path:
    body = {"schema_version": 1, "agent_id": "b", "inspected_files": inspected}
    path.write_bytes(BOM + json.dumps(body).encode())
    return path


def test_a_bom_opening_the_changed_list_is_not_part_of_the_first_path(tmp_path: Path) -> None:
    changed = tmp_path / "changed.txt"
    changed.write_bytes(BOM + b"README.md\nsrc/a.py\n")
    claims = _claims(tmp_path / "claims.json", ["README.md", "src/a.py"])
    result = runner.invoke(app, _reconcile(tmp_path, changed, claims))
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["scope"] == ["README.md", "src/a.py"]
    assert "files_missing" not in decision["reasons"]


def test_a_bom_opening_the_changed_list_on_stdin_is_dropped(tmp_path: Path) -> None:
    claims = _claims(tmp_path / "claims.json", ["README.md"])
    args = _reconcile(tmp_path, Path("-"), claims)
    result = runner.invoke(app, args, input=BOM + b"README.md\n")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["scope"] == ["README.md"]


def test_json_inputs_opening_with_a_bom_are_read(tmp_path: Path) -> None:
    """Claims, evidence and a flags snapshot written by a tool that adds the mark."""
    changed = tmp_path / "changed.txt"
    changed.write_text("README.md\n")
    claims = _claims(tmp_path / "claims.json", ["README.md"])
    evidence = tmp_path / "evidence.json"
    recorded = runner.invoke(
        app, ["record", str(STREAMS[0][1]), "--revision", FULL, "-o", str(evidence)]
    )
    assert recorded.exit_code == 0, recorded.output
    evidence.write_bytes(BOM + evidence.read_bytes())
    snapshot = tmp_path / "flags.json"
    example = Path(__file__).parents[2] / "coverage_gate" / "examples" / "flags.snapshot.json"
    snapshot.write_bytes(BOM + example.read_bytes())
    args = _reconcile(tmp_path, changed, claims, "--evidence", str(evidence))
    args[args.index("--mode") : args.index("--mode") + 2] = ["--flags", str(snapshot)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["mode_source"] == "snapshot"
    assert decision["reviewers"][0]["evidence_source"] == "pi-rpc"


def test_report_reads_a_telemetry_file_opening_with_a_bom(tmp_path: Path) -> None:
    write(tmp_path, [(decide("acme/api", scope=SCOPE, reviewers=[LIAR]), T0)])
    for path in tmp_path.glob("*.jsonl"):
        path.write_bytes(BOM + path.read_bytes())
    loaded = load_folder(tmp_path)
    assert loaded.malformed_lines == 0
    assert len(loaded.reviews) == 1
