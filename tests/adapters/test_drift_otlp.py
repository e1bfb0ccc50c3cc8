"""Drift and mutations in OTLP JSON streams, Claude Code's and Codex's own telemetry included
(DESIGN §6 rules 19-20), each built by changing the bytes of a real capture: what the adapter does
not understand is drift (kind, name, count, first line), never a failed or absent read; the
client version is the resource's; the honest captures carry none."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.enums import DriftKind
from coverage_gate.contracts.evidence_doc import Bounds
from coverage_gate.contracts.model import EvidenceDocument
from coverage_gate.record.recording import RecordSettings, record_stream
from tests.conftest import DATA, REPO_ROOT

FOLDER = DATA / "otlp-json"
CLAUDE = FOLDER / "claude-code_otel_honest.jsonl"
CODEX = FOLDER / "codex_0.169.0_otel_shared.jsonl"
REAL = [
    *(
        p
        for p in sorted(FOLDER.glob("*.jsonl"))
        if "unmatched" not in p.name and "crafted" not in p.name
    ),
    *sorted((DATA / "hostile").glob("*_otlp_*.jsonl")),
]

Obj = dict[str, Any]


def lines_of(path: Path) -> list[Obj]:
    if path.suffix == ".json":
        return [json.loads(path.read_text())]
    return [json.loads(raw) for raw in path.read_bytes().splitlines() if raw.strip()]


def record(lines: list[Obj], root: Path) -> EvidenceDocument:
    data = "\n".join(json.dumps(line) for line in lines).replace(REPO_ROOT, str(root))
    settings = RecordSettings(revision="rev1", repo_root=str(root), bounds=Bounds())
    return record_stream(io.BytesIO(data.encode() + b"\n"), ADAPTERS["otlp-json"], settings)


def drift(document: EvidenceDocument) -> dict[tuple[DriftKind, str], tuple[int, int]]:
    return {(d.kind, d.name): (d.count, d.first_line) for d in document.drift}


def attrs(item: Obj) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values()), None) for a in item.get("attributes", [])}


def set_attr(item: Obj, key: str, value: str) -> None:
    for found in item.setdefault("attributes", []):
        if found["key"] == key:
            found["value"] = {"stringValue": value}
            return
    item["attributes"].append({"key": key, "value": {"stringValue": value}})


def records(lines: list[Obj]) -> Iterator[tuple[str, Obj]]:
    """Every span (``"span"``) and log record (``"log"``) of the lines, to change in place."""
    for line in lines:
        for resource in line.get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                yield from (("span", span) for span in scope["spans"])
        for resource in line.get("resourceLogs", []):
            for scope in resource["scopeLogs"]:
                yield from (("log", log) for log in scope["logRecords"])


def changed(path: Path, change: Callable[[str, Obj], None]) -> list[Obj]:
    lines = lines_of(path)
    for kind, item in records(lines):
        change(kind, item)
    return lines


def no_failed_reads(document: EvidenceDocument) -> None:
    assert all(f.reads_failed == 0 for f in document.files)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_honest_real_captures_carry_no_drift(path: Path, tmp_path: Path) -> None:
    assert record(lines_of(path), tmp_path).drift == []


@pytest.mark.parametrize(
    ("path", "client"),
    [(CLAUDE, "claude-code 2.1.328"), (CODEX, "codex_exec 0.169.0")],
)
def test_the_client_version_is_the_resources(path: Path, client: str, tmp_path: Path) -> None:
    assert record(lines_of(path), tmp_path).client_version == client


@pytest.mark.parametrize(("path", "version"), [(CLAUDE, "3.0.0"), (CODEX, "0.300.0")])
def test_a_version_beyond_the_range_checked_is_drift_and_nothing_else(
    path: Path, version: str, tmp_path: Path
) -> None:
    lines = lines_of(path)
    for line in lines:
        for top in ("resourceSpans", "resourceLogs"):
            for resource in line.get(top, []):
                set_attr(resource["resource"], "service.version", version)
    document = record(lines, tmp_path)
    honest = record(lines_of(path), tmp_path)
    (entry,) = document.drift
    assert entry.kind is DriftKind.CLIENT_VERSION and version in entry.name
    assert "newer than" in entry.name and not entry.hides_reads
    assert document.files == honest.files


def test_a_renamed_tool_result_log_is_unknown_event_drift(tmp_path: Path) -> None:
    def rename(kind: str, item: Obj) -> None:
        if kind == "log" and item.get("body", {}).get("stringValue") == "claude_code.tool_result":
            item["body"] = {"stringValue": "claude_code.tool_output"}

    lines = changed(CLAUDE, rename)
    document = record(lines, tmp_path)
    renamed = [
        item
        for kind, item in records(lines)
        if item.get("body", {}).get("stringValue") == "claude_code.tool_output"
    ]
    count, _ = drift(document)[(DriftKind.UNKNOWN_EVENT, "claude_code.tool_output")]
    assert count == len(renamed) == 7
    no_failed_reads(document)


def test_a_renamed_tool_span_is_unknown_event_drift(tmp_path: Path) -> None:
    def rename(kind: str, item: Obj) -> None:
        if kind == "span" and item["name"] == "claude_code.tool.execution":
            item["name"] = "claude_code.tool.run"

    document = record(changed(CLAUDE, rename), tmp_path)
    assert (DriftKind.UNKNOWN_EVENT, "claude_code.tool.run") in drift(document)
    no_failed_reads(document)


def test_a_renamed_codex_log_is_unknown_event_drift(tmp_path: Path) -> None:
    def rename(kind: str, item: Obj) -> None:
        for found in item.get("attributes", []):
            if found["key"] == "event.name" and found["value"] == {
                "stringValue": "codex.tool_result"
            }:
                found["value"] = {"stringValue": "codex.tool_output"}

    document = record(changed(CODEX, rename), tmp_path)
    assert (DriftKind.UNKNOWN_EVENT, "codex.tool_output") in drift(document)


def test_a_renamed_read_tool_is_unknown_and_never_a_failed_read(tmp_path: Path) -> None:
    def rename(kind: str, item: Obj) -> None:
        for found in item.get("attributes", []):
            if found["key"] in {"tool_name", "gen_ai.tool.name"} and found["value"] == {
                "stringValue": "Read"
            }:
                found["value"] = {"stringValue": "ReadFile"}

    document = record(changed(CLAUDE, rename), tmp_path)
    no_failed_reads(document)
    assert all(f.reads_succeeded == 0 for f in document.files)
    assert not any(d.hides_reads for d in document.drift)


def test_claude_writes_and_shell_writes_are_mutations(tmp_path: Path) -> None:
    """A ``Read`` turned into an ``Edit`` of the same file, and a ``Bash`` command that appends to
    a file, in every record of each call: two mutations, no read of either."""
    edited: set[str] = set()

    def change(kind: str, item: Obj) -> None:
        found = attrs(item)
        call = found.get("tool_use_id") or found.get("gen_ai.tool.call.id")
        tool = found.get("tool_name") or found.get("gen_ai.tool.name")
        if tool == "Read" and (not edited or call in edited):
            edited.add(str(call))
            for key in ("tool_name", "gen_ai.tool.name"):
                if key in found:
                    set_attr(item, key, "Edit")
        if tool == "Bash" and "tool_input" in found:
            set_attr(item, "tool_input", json.dumps({"command": "echo x >> README.md"}))

    document = record(changed(CLAUDE, change), tmp_path)
    assert sorted((m.tool, m.path) for m in document.mutations) == [
        ("Bash", "README.md"),
        ("Edit", "README.md"),
    ]
    readme = document.file("README.md")
    assert readme is None or readme.reads_succeeded == 0
