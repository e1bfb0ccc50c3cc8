"""The drift watch over every real capture (DESIGN §6 rule 19).

- No honest real capture holds drift: a stream the adapters were built on is understood to the
  last line (0 false alarms).
- A lying reviewer that calls a tool the adapter does not know (an MCP tool) with each path it
  claims, and gets nothing of those files back, is still unsupported under enforce, in every
  format: drift a model can cause is said, never an excuse.
- The same capture whose read tool was renamed by a client update, with the reads' text still in
  the stream, is verified by content.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.adapters import ADAPTERS
from coverage_gate.cli import app
from coverage_gate.contracts.enums import DriftKind
from coverage_gate.contracts.model import (
    EvidenceDocument,
    FileStatus,
    Mode,
    ModeSource,
    ReviewerOutput,
    Verdict,
)
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from tests.conftest import CHANGED_FILES, DATA, REPO_ROOT, record_bytes, revision_content
from tests.record.test_content_captures import CAPTURES, DIFF

UNKNOWN_TOOL = "mcp__files__read_file"
runner = CliRunner()
TOOL_KEYS = frozenset({"name", "tool", "toolName", "tool_name"})


def record(data: bytes, fmt: str) -> EvidenceDocument:
    return record_bytes(data, fmt, diff=DIFF, content=revision_content())


def _ids(case: tuple[Path, str]) -> str:
    return case[0].name


@pytest.mark.parametrize("case", CAPTURES, ids=_ids)
def test_no_honest_real_capture_holds_drift(case: tuple[Path, str]) -> None:
    path, fmt = case
    document = record(path.read_bytes(), fmt)
    assert [(d.kind.value, d.name, d.first_line) for d in document.drift] == []
    assert document.drift_dropped == 0


def _rewrite(line: bytes, change: Callable[[Any, str | None], Any]) -> bytes:
    """``line`` with every value passed through ``change`` (value, its key), innermost first."""
    text = line.strip()
    if not text:
        return line
    try:
        obj = json.loads(text)
    except ValueError:
        return line

    def walk(value: Any, key: str | None) -> Any:
        if isinstance(value, dict):
            value = {k: walk(v, k) for k, v in value.items()}
        elif isinstance(value, list):
            value = [walk(v, key) for v in value]
        return change(value, key)

    return json.dumps(walk(obj, None), ensure_ascii=False).encode() + b"\n"


def rename_reads(data: bytes, fmt: str, *, keep_output: bool) -> bytes:
    """Every call of a tool the adapter reads as a read renamed to an unknown tool; without
    ``keep_output``, every multi-line text in the stream (what the calls returned) replaced by
    a short answer, as a tool that returns nothing of the file would."""
    reads = ADAPTERS[fmt].knows.reads

    def change(value: Any, key: str | None) -> Any:
        if key in TOOL_KEYS and isinstance(value, str) and value in reads:
            return UNKNOWN_TOOL
        if not keep_output and isinstance(value, str) and "\n" in value and len(value) > 40:
            return "ok"
        return value

    return b"".join(_rewrite(line, change) for line in data.splitlines(keepends=True))


def verified_files(document: EvidenceDocument) -> list[str]:
    """The changed files the capture's calls verify (the scope is the pinned diff's)."""
    return sorted(
        f.path
        for f in document.files
        if (f.reads_succeeded or f.diff_pages_succeeded) and f.path in CHANGED_FILES
    )


def decide(document: EvidenceDocument, claimed: list[str]) -> dict[str, FileStatus]:
    decision = reconcile(
        ReviewInput(
            repo="acme/api",
            revision=document.revision,
            verdict_in=Verdict.APPROVE,
            mode=Mode.ENFORCE,
            mode_source=ModeSource.OVERRIDE,
            scope=claimed,
            reviewers=[
                ReviewerInput(
                    "r",
                    ReviewerOutput(schema_version=1, agent_id="r", inspected_files=claimed),
                    document,
                )
            ],
        )
    )
    return {f.path: f.status for f in decision.reviewers[0].files}


#: Captures whose reads are all by a read tool the adapter names (the ones a rename can hide).
READ_CAPTURES = [
    case
    for case in CAPTURES
    if ADAPTERS[case[1]].knows.reads
    and rename_reads(case[0].read_bytes(), case[1], keep_output=True) != case[0].read_bytes()
]


@pytest.mark.parametrize("case", READ_CAPTURES, ids=_ids)
def test_a_liar_calling_an_unknown_tool_with_every_claimed_path_stays_unsupported(
    case: tuple[Path, str],
) -> None:
    path, fmt = case
    honest = record(path.read_bytes(), fmt)
    claimed = verified_files(honest)
    if not claimed:
        pytest.skip("the capture verifies no changed file")
    if not honest.stream_complete or honest.unattributed_calls:
        pytest.skip("an absence in this capture proves nothing, drift or not")
    lying = record(rename_reads(path.read_bytes(), fmt, keep_output=False), fmt)
    statuses = decide(lying, claimed)
    assert {p for p, s in statuses.items() if s is not FileStatus.UNSUPPORTED} == set()
    assert any(d.kind is DriftKind.UNKNOWN_TOOL for d in lying.drift)
    assert not any(d.hides_reads for d in lying.drift)


@pytest.mark.parametrize("case", READ_CAPTURES, ids=_ids)
def test_a_renamed_read_tool_whose_output_the_stream_carries_is_verified_by_content(
    case: tuple[Path, str],
) -> None:
    """A client update renames its read tool: where the stream carries what the reads returned,
    the claims they backed are verified by content (where it does not, as Gemini CLI's display
    text, a claim may stay unsupported, and the drift says why); the drift is recorded."""
    path, fmt = case
    honest = record(path.read_bytes(), fmt)
    claimed = verified_files(honest)
    if not claimed:
        pytest.skip("the capture verifies no changed file")
    if not honest.stream_complete or honest.unattributed_calls:
        pytest.skip("an absence in this capture proves nothing, drift or not")
    renamed = record(rename_reads(path.read_bytes(), fmt, keep_output=True), fmt)
    assert renamed.drift, "the renamed tool is drift"
    statuses = decide(renamed, claimed)
    carried = {f.path for f in honest.files if f.content and f.content.matched}
    for file in claimed:
        if file in carried:
            assert statuses[file] is FileStatus.VERIFIED, file


#: One capture per format whose read tool a client update could rename, that verifies a changed
#: file.
ONE_PER_FORMAT = list(
    {
        case[1]: case
        for case in reversed(READ_CAPTURES)
        if verified_files(record(case[0].read_bytes(), case[1]))
    }.values()
)


@pytest.mark.parametrize("case", ONE_PER_FORMAT, ids=lambda case: case[1])
def test_drift_is_said_on_stderr_and_carried_by_the_evidence_and_the_metric(
    case: tuple[Path, str], tmp_path: Path
) -> None:
    """``record`` of a stream whose read tool was renamed says so in one line on stderr, the
    evidence carries the drift, and ``reconcile`` counts it on ``coverage_gate.drift``."""
    path, fmt = case
    stream = tmp_path / "reviewer.jsonl"
    stream.write_bytes(rename_reads(path.read_bytes(), fmt, keep_output=True))
    evidence = tmp_path / "evidence.json"
    done = runner.invoke(
        app,
        ["record", str(stream), "--format", fmt, "--revision", "rev1", "--repo-root", REPO_ROOT,
         "--diff", str(DATA / "pi-rpc" / "review.diff"), "-o", str(evidence)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    warning = next(line for line in done.stderr.splitlines() if "does not" in line)
    assert warning.startswith(f"coverage-gate: warning: the {fmt} stream held what this version")
    assert f"unknown_tool {UNKNOWN_TOOL}" in warning
    assert "upgrade coverage-gate, or pin the client to" in warning
    recorded = json.loads(evidence.read_text())
    assert {(d["kind"], d["name"]) for d in recorded["drift"]} >= {("unknown_tool", UNKNOWN_TOOL)}
    claims = tmp_path / "claims.json"
    claimed = verified_files(record(path.read_bytes(), fmt)) or ["README.md"]
    claims.write_text(
        json.dumps({"schema_version": 1, "agent_id": "r", "inspected_files": claimed})
    )
    changed = tmp_path / "changed.txt"
    changed.write_text("\n".join(claimed) + "\n")
    done = runner.invoke(
        app,
        ["reconcile", "--repo", "acme/api", "--revision", "rev1", "--verdict", "approve",
         "--changed", str(changed), "--claims", str(claims), "--evidence", str(evidence),
         "--mode", "shadow", "--format", "json"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    metrics = "".join(
        p.read_text() for p in Path(os.environ["COVERAGE_GATE_TELEMETRY_DIR"]).rglob("*metrics*")
    )
    assert '"coverage_gate.drift"' in metrics
    assert '"stringValue":"unknown_tool"' in metrics
