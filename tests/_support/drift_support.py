"""Helpers of the drift tests (DESIGN §6 rules 19-20), in two families.

Parsed captures (Claude Code, Qwen Code, Gemini CLI): the capture is loaded into one object per
line, mutated as objects, and recorded re-serialised with the capture's repository root moved
into the test's own folder: ``capture``, ``rooted``, ``mutated_parsed``, ``record_parsed``,
``blocks``, ``lines_with``, ``drift_parsed``, ``backed``, ``assert_no_read_lost``.

Raw captures (GitHub Copilot CLI, OpenCode, pi RPC): the capture stays bytes, a line is dumped
again only when a change touches it, and the root is replaced in the bytes: ``mutated_raw``,
``record_raw``, ``drift_raw``, ``no_failed_reads``.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.enums import DriftKind
from coverage_gate.contracts.evidence_doc import Bounds
from coverage_gate.contracts.model import EvidenceDocument
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.record.recording import RecordSettings, record_stream
from tests.conftest import DATA, REPO_ROOT, revision_content

DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
Line = dict[str, Any]


# --- parsed captures ---------------------------------------------------------------------------


def capture(path: Path) -> list[Line]:
    return [json.loads(text) for text in path.read_text("utf-8").splitlines() if text.strip()]


def rooted(value: Any, root: str) -> Any:
    """``value`` with the capture's repository root replaced by ``root``."""
    if isinstance(value, str):
        return value.replace(REPO_ROOT, root)
    if isinstance(value, list):
        return [rooted(item, root) for item in value]
    if isinstance(value, dict):
        return {key: rooted(item, root) for key, item in value.items()}
    return value


def record_parsed(fmt: str, tmp_path: Path, lines: list[Line]) -> EvidenceDocument:
    """The evidence of ``lines`` (a ``fmt`` stream) recorded in a repository folder of the
    test's own, against the captured review's revision and pinned diff."""
    root = tmp_path / "repo"
    root.mkdir(exist_ok=True)
    data = "".join(
        json.dumps(rooted(obj, str(root)), ensure_ascii=False, separators=(",", ":")) + "\n"
        for obj in lines
    )
    settings = RecordSettings(
        revision="rev1",
        repo_root=str(root),
        bounds=Bounds(),
        diff=DiffIndex.parse(DIFF),
        content=lambda _root: revision_content(),
    )
    return record_stream(io.BytesIO(data.encode("utf-8")), ADAPTERS[fmt], settings)


def mutated_parsed(lines: list[Line], change: Callable[[int, Line], Line | None]) -> list[Line]:
    """A copy of ``lines`` with ``change`` applied to each (1-based number, line); ``None``
    keeps the line as it is."""
    out: list[Line] = []
    for number, obj in enumerate(lines, start=1):
        copied = copy.deepcopy(obj)
        changed = change(number, copied)
        out.append(copied if changed is None else changed)
    return out


def blocks(obj: Line, kind: str) -> list[Line]:
    content = obj.get("message", {}).get("content")
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] if content else []


def lines_with(lines: list[Line], kind: str) -> list[int]:
    return [n for n, obj in enumerate(lines, start=1) if blocks(obj, kind)]


def drift_parsed(
    doc: EvidenceDocument,
) -> dict[tuple[DriftKind, str], tuple[int, int | None, bool]]:
    """Each drift entry's (count, first line, whether it hides reads), by (kind, name)."""
    return {(e.kind, e.name): (e.count, e.first_line, e.hides_reads) for e in doc.drift}


def backed(doc: EvidenceDocument) -> set[str]:
    """The files the evidence backs: a successful read, or lines credited by content."""
    return {
        f.path
        for f in doc.files
        if f.reads_succeeded
        or (f.content is not None and (f.content.credited or f.content.matched))
    }


def assert_no_read_lost(honest: EvidenceDocument, doc: EvidenceDocument) -> None:
    """Drift never turns a read into a failed one, and a file the honest stream backed is still
    backed, or the evidence says it can no longer vouch for an absence (drift that hides reads)
    or names the unknown tool that read it."""
    for file in doc.files:
        before = honest.file(file.path)
        assert file.reads_failed <= (before.reads_failed if before else 0), file.path
    lost = backed(honest) - backed(doc)
    if lost:
        assert any(e.hides_reads or e.kind is DriftKind.UNKNOWN_TOOL for e in doc.drift), lost


# --- raw captures ------------------------------------------------------------------------------


def mutated_raw(
    path: Path, change: Callable[[Line], Line | None], *, skip_blank: bool = True
) -> list[bytes]:
    """The capture's lines, each JSON-loaded, changed (``None``: kept as it was) and dumped.

    With ``skip_blank`` a blank line is left out; without it every line is loaded, a blank one
    included."""
    out = []
    for raw in path.read_bytes().splitlines():
        if raw.strip() or not skip_blank:
            changed = change(json.loads(raw))
            out.append(raw if changed is None else json.dumps(changed).encode())
    return out


def record_raw(fmt: str, lines: list[bytes], root: Path, *, diff: bool = True) -> EvidenceDocument:
    """Record the lines (a ``fmt`` stream) with the capture's root moved to ``root``, against
    the pinned diff unless ``diff`` is false."""
    data = b"\n".join(lines).replace(REPO_ROOT.encode(), str(root).encode()) + b"\n"
    settings = RecordSettings(
        revision="rev1",
        repo_root=str(root),
        bounds=Bounds(),
        diff=DiffIndex.parse(DIFF) if diff else None,
    )
    return record_stream(io.BytesIO(data), ADAPTERS[fmt], settings)


def drift_raw(document: EvidenceDocument) -> dict[tuple[DriftKind, str], tuple[int, int | None]]:
    """Each drift entry's (count, first line), by (kind, name)."""
    return {(d.kind, d.name): (d.count, d.first_line) for d in document.drift}


def no_failed_reads(document: EvidenceDocument) -> None:
    assert all(f.reads_failed == 0 for f in document.files)
