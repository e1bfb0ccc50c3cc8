"""Drift and mutations in Codex streams (DESIGN §6 rules 19-20), built from real captures.

Each case changes the bytes of an honest capture the way a Codex update (or damage) would: a
renamed parsed ``read``, a renamed call start or end, a line type never seen, a version past the
range checked, a session commit that is not the revision, a field of a type Codex never writes.
The evidence carries the drift (kind, name, count, first line) and no call becomes a failed or
absent read because of it. The honest captures carry none, and the captures in which the reviewer
changed files list those changes as mutations.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.codex_exec import EXEC_ADAPTER
from adapters.codex_rollout import ROLLOUT_ADAPTER
from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import DriftKind
from coverage_gate.contracts.model import EvidenceDocument
from tests.conftest import DATA, record_bytes, stream_truths

ROLLOUT = "codex-rollout"
EXEC = "codex-exec"


def _honest(fmt: str) -> list[Path]:
    """Every real capture of ``fmt``: those with a truth file, the content captures and, for
    ``codex exec``, the native probe in ``tests/data/hostile`` (the hand-made ``crafted_*``
    streams are not captures)."""
    found = [
        truth.with_name(truth.name.replace(".truth.json", ".jsonl"))
        for truth in stream_truths(DATA / fmt)
    ]
    found += sorted((DATA / fmt).glob("content_*.jsonl"))
    if fmt == EXEC:
        found += sorted((DATA / "hostile").glob("codex_*.exec.jsonl"))
    return found


def _commit(data: bytes) -> str:
    """The commit a rollout's ``session_meta`` says its session started at."""
    for line in data.splitlines():
        obj = json.loads(line) if line.strip() else {}
        if obj.get("type") == "session_meta":
            return str(obj["payload"]["git"]["commit_hash"])
    return "rev1"


def record(data: bytes, fmt: str = ROLLOUT, revision: str | None = None) -> EvidenceDocument:
    """The evidence of ``data``, reviewed at the commit its session names (unless told)."""
    return record_bytes(data, fmt, revision=revision or _commit(data))


def drift(document: EvidenceDocument) -> list[tuple[str, str, int, int | None]]:
    return [(d.kind.value, d.name, d.count, d.first_line) for d in document.drift]


def mutate(data: bytes, change: Callable[[dict[str, Any]], None]) -> bytes:
    """``data`` with ``change`` applied to each line's object (loaded, changed, dumped)."""
    out = []
    for line in data.splitlines():
        if not line.strip():
            out.append(line)
            continue
        obj = json.loads(line)
        change(obj)
        out.append(json.dumps(obj, ensure_ascii=False).encode())
    return b"\n".join(out) + b"\n"


def lines_where(data: bytes, test: Callable[[dict[str, Any]], bool]) -> list[int]:
    return [
        n for n, line in enumerate(data.splitlines(), 1) if line.strip() and test(json.loads(line))
    ]


def item(obj: dict[str, Any]) -> dict[str, Any] | None:
    payload = obj.get("payload")
    if isinstance(payload, dict) and payload.get("type") == "item_completed":
        found = payload.get("item")
        return found if isinstance(found, dict) else None
    return None


def is_command(obj: dict[str, Any]) -> bool:
    found = item(obj)
    return found is not None and found.get("type") == "CommandExecution"


def has_read(obj: dict[str, Any]) -> bool:
    found = item(obj)
    return found is not None and any(e.get("type") == "read" for e in found.get("parsed_cmd", []))


CAPTURE = DATA / ROLLOUT / "codex_b_overclaim.rollout.jsonl"
HONEST = CAPTURE.read_bytes()


def no_read_failed_or_lost(document: EvidenceDocument, honest: EvidenceDocument) -> None:
    """No file the honest stream read is a failed read now, nor a file with fewer successful
    reads that are not accounted as unknown."""
    for before in honest.files:
        after = document.file(before.path)
        if after is None:
            continue  # not read at all: what is left is drift, which hides reads
        assert after.reads_failed <= before.reads_failed, before.path
        assert after.reads_succeeded + after.reads_unknown >= before.reads_succeeded, before.path


# --- honest captures -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [ROLLOUT, EXEC])
def test_no_honest_capture_holds_drift(fmt: str) -> None:
    captures = _honest(fmt)
    assert captures
    for path in captures:
        document = record(path.read_bytes(), fmt)
        assert drift(document) == [], path.name
        assert document.drift_dropped == 0


def test_a_rollout_names_its_client_version() -> None:
    assert record(HONEST).client_version == "0.169.0"


def test_each_adapter_knows_the_versions_checked_and_its_tools() -> None:
    assert ROLLOUT_ADAPTER.knows.versions == CHECKED[ROLLOUT]
    assert EXEC_ADAPTER.knows.versions == CHECKED[EXEC]
    assert "exec_command" in ROLLOUT_ADAPTER.knows.reads
    assert ROLLOUT_ADAPTER.knows.writes == frozenset({"apply_patch"})
    assert EXEC_ADAPTER.knows.writes == frozenset({"file_change"})
    assert "command_execution" in EXEC_ADAPTER.knows.not_reads


# --- drift the client causes -------------------------------------------------------------------


def test_a_renamed_parsed_read_is_drift_and_no_read_fails() -> None:
    def rename(obj: dict[str, Any]) -> None:
        for entry in (item(obj) or {}).get("parsed_cmd", []):
            if entry.get("type") == "read":
                entry["type"] = "file_read"

    reads = lines_where(HONEST, has_read)
    document = record(mutate(HONEST, rename))
    assert drift(document) == [
        (DriftKind.UNKNOWN_EVENT.value, "parsed_cmd/file_read", len(reads), reads[0])
    ]
    assert document.drift[0].hides_reads
    assert [f.path for f in document.files if f.reads_failed] == []


def test_a_renamed_call_start_is_drift_and_no_read_fails() -> None:
    def rename(obj: dict[str, Any]) -> None:
        if obj.get("payload", {}).get("type") == "function_call":
            obj["payload"]["type"] = "function_call_v2"

    starts = lines_where(HONEST, lambda o: o.get("payload", {}).get("type") == "function_call")
    document = record(mutate(HONEST, rename))
    assert drift(document)[0] == (
        DriftKind.UNKNOWN_EVENT.value,
        "response_item/function_call_v2",
        len(starts),
        starts[0],
    )
    assert [f.path for f in document.files if f.reads_failed] == []
    assert not any(f.reads_succeeded for f in document.files)  # never evidence from drift


def test_a_renamed_call_end_is_drift_and_leaves_the_rollout_incomplete() -> None:
    def rename(obj: dict[str, Any]) -> None:
        if is_command(obj):
            obj["payload"]["item"]["type"] = "CommandRun"

    ends = lines_where(HONEST, is_command)
    document = record(mutate(HONEST, rename))
    assert drift(document) == [
        (DriftKind.UNKNOWN_EVENT.value, "item_completed/CommandRun", len(ends), ends[0])
    ]
    assert document.stream_complete is False  # a command without its record: reads unknown
    assert [f.path for f in document.files if f.reads_failed] == []


def test_an_unknown_line_type_and_event_are_drift() -> None:
    def rename(obj: dict[str, Any]) -> None:
        if obj.get("type") == "world_state":
            obj["type"] = "world_view"
        if obj.get("payload", {}).get("type") == "token_count":
            obj["payload"]["type"] = "token_tally"

    data = mutate(HONEST, rename)
    world = lines_where(data, lambda o: o.get("type") == "world_view")
    tally = lines_where(data, lambda o: o.get("payload", {}).get("type") == "token_tally")
    document = record(data)
    found = {(kind, name): (count, line) for kind, name, count, line in drift(document)}
    assert found == {
        ("unknown_event", "world_view"): (len(world), world[0]),
        ("unknown_event", "event_msg/token_tally"): (len(tally), tally[0]),
    }
    no_read_failed_or_lost(document, record(HONEST))


def test_a_version_past_the_range_checked_is_drift() -> None:
    def bump(obj: dict[str, Any]) -> None:
        if obj.get("type") == "session_meta":
            obj["payload"]["cli_version"] = "0.300.0"

    document = record(mutate(HONEST, bump))
    assert [(d.kind, d.name.split(" ")[0]) for d in document.drift] == [
        (DriftKind.CLIENT_VERSION, "0.300.0")
    ]
    assert not document.drift[0].hides_reads
    assert document.files == record(HONEST).files


def test_a_session_commit_that_is_not_the_revision_is_drift() -> None:
    commit = _commit(HONEST)
    document = record(HONEST, revision="0" * 40)
    assert drift(document) == [(DriftKind.FOREIGN_COMMIT.value, commit, 1, 1)]
    assert document.files == record(HONEST).files


# --- field types Codex never writes ------------------------------------------------------------


def _first(test: Callable[[dict[str, Any]], bool]) -> int:
    return lines_where(HONEST, test)[0]


def _on_line(number: int, change: Callable[[dict[str, Any]], None]) -> bytes:
    lines = HONEST.splitlines()
    obj = json.loads(lines[number - 1])
    change(obj)
    lines[number - 1] = json.dumps(obj).encode()
    return b"\n".join(lines) + b"\n"


def _read_path(number: int) -> str:
    found = item(json.loads(HONEST.splitlines()[number - 1]))
    assert found is not None
    return str(next(e["path"] for e in found["parsed_cmd"] if e["type"] == "read"))


def _set_item(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        obj["payload"]["item"][field] = value

    return change


def _set_entry_type(obj: dict[str, Any]) -> None:
    obj["payload"]["item"]["parsed_cmd"][0]["type"] = 7


@pytest.mark.parametrize(
    ("change", "kind", "name"),
    [
        (_set_item("exit_code", 10**30), DriftKind.FIELD_TYPE, "payload.item.exit_code"),
        (_set_item("parsed_cmd", "cat x"), DriftKind.FIELD_TYPE, "payload.item.parsed_cmd"),
        (_set_item("parsed_cmd", [1]), DriftKind.FIELD_TYPE, "payload.item.parsed_cmd[]"),
        (_set_entry_type, DriftKind.FIELD_TYPE, "payload.item.parsed_cmd[].type"),
    ],
    ids=["exit_code_huge", "parsed_cmd_string", "parsed_cmd_entry_number", "entry_type_number"],
)
def test_a_record_field_of_a_wrong_type_makes_its_read_unknown(
    change: Callable[[dict[str, Any]], None], kind: DriftKind, name: str
) -> None:
    number = _first(has_read)
    path = _read_path(number)
    document = record(_on_line(number, change))
    assert drift(document) == [(kind.value, name, 1, number)]
    honest = record(HONEST).file(path)
    assert honest is not None
    assert honest.reads_succeeded >= 1
    found = document.file(path)
    assert found is None or found.reads_failed == honest.reads_failed
    assert "outcome_unreadable" in {i.kind.value for i in document.issues}
    assert document.counters.failed == record(HONEST).counters.failed


def test_an_empty_payload_on_a_call_line_is_drift_and_unreadable() -> None:
    number = _first(lambda o: o.get("payload", {}).get("type") == "function_call")

    def empty(obj: dict[str, Any]) -> None:
        obj["payload"] = {}

    document = record(_on_line(number, empty))
    assert drift(document) == [(DriftKind.MISSING_FIELD.value, "payload.type", 1, number)]
    assert document.counters.malformed_lines == 1
    no_read_failed_or_lost(document, record(HONEST))


def test_exec_exit_code_out_of_range_is_drift_not_a_failure() -> None:
    data = (DATA / EXEC / "codex_b_overclaim.exec.jsonl").read_bytes()

    def huge(obj: dict[str, Any]) -> None:
        if obj.get("type") == "item.completed" and obj["item"].get("type") == "command_execution":
            obj["item"]["exit_code"] = 10**30

    ends = lines_where(
        data,
        lambda o: (
            o.get("type") == "item.completed" and o["item"].get("type") == "command_execution"
        ),
    )
    document = record(mutate(data, huge), EXEC)
    found = {(kind, name): (count, line) for kind, name, count, line in drift(document)}
    assert found[("field_type", "item.exit_code")] == (len(ends), ends[0])
    # the core also counts each such call as one whose end it never saw: hiding drift as well
    assert set(found) <= {
        ("field_type", "item.exit_code"),
        ("unpaired", "command_execution without its end"),
    }
    assert document.counters.failed == 0


def test_an_mcp_tool_in_exec_is_an_unknown_tool() -> None:
    data = (DATA / EXEC / "codex_b_overclaim.exec.jsonl").read_bytes()

    def to_mcp(obj: dict[str, Any]) -> None:
        found = obj.get("item")
        if isinstance(found, dict) and found.get("type") == "command_execution":
            found.update(type="mcp_tool_call", server="files", tool="read", arguments={"path": "x"})

    document = record(mutate(data, to_mcp), EXEC)
    assert [(d.kind, d.name, d.hides_reads) for d in document.drift] == [
        (DriftKind.UNKNOWN_TOOL, "mcp__files__read", False)
    ]
    assert document.files == []


# --- mutations -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "name", "tool"),
    [
        (ROLLOUT, "content_codex_apply_patch.rollout", "exec_command"),
        (ROLLOUT, "content_codex_shell_redirect.rollout", "exec_command"),
        (EXEC, "content_codex_apply_patch.exec", "file_change"),
        (EXEC, "content_codex_shell_redirect.exec", "command_execution"),
    ],
)
def test_a_capture_that_changed_files_lists_its_mutations(fmt: str, name: str, tool: str) -> None:
    truth = json.loads((DATA / fmt / f"{name}.truth.json").read_text())
    document = record((DATA / fmt / f"{name}.jsonl").read_bytes(), fmt)
    assert [(m.tool, m.path) for m in document.mutations] == [
        (tool, change["file"]) for change in truth["mutations"]
    ]
    assert drift(document) == []
    if fmt == ROLLOUT:  # the write is no read: each file's successful reads are the cats
        for path, counts in truth["files"].items():
            found = document.file(path)
            assert found is not None
            assert found.reads_succeeded == counts["read_succeeded"], path
