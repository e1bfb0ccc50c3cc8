"""`record` writes the same evidence, byte for byte, and exports the same spans as it did before
its speed work, on every capture under tests/data read as every format.

``tests/golden/record-manifest.json`` holds, per case, the SHA-256 of the evidence file `record -o`
wrote and of the spans it exported to the local sink (in the order they were exported, with trace
and span ids numbered by first appearance and times blanked: the rest of every span, its resource
and its scope, as written). It was made by the code before that work;
``COVERAGE_GATE_UPDATE_GOLDEN=1`` rewrites it, which only a deliberate change of the evidence or
of the spans may do.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.adapters import ADAPTERS
from coverage_gate.cli import app
from coverage_gate.edges.content import snapshot_tree
from tests.conftest import (
    DATA,
    GOLDEN,
    REVISION_FILES,
    UNREACHABLE_ROOT,
    UPDATE_GOLDEN,
    git_repository,
    hermetic_capture,
)
from tests.record.test_span_export import pi_stream

MANIFEST = GOLDEN / "record-manifest.json"
DIFF = DATA / "pi-rpc" / "review.diff"
# presentation/ reads another repository (make_odd_repo.sh's), which its own test rebuilds
# (tests/core/test_presentation_captures.py)
PRESENTATION = DATA / "presentation"
CAPTURES = sorted(
    path
    for path in DATA.rglob("*.jsonl")
    if REVISION_FILES not in path.parents and PRESENTATION not in path.parents
)
# Folders named for a format hold captures of it; the rest (hostile/) are read in their own
# format, as detection picks it.
OWN_FORMAT = {name: name for name in ADAPTERS}
_TIMES = frozenset({"startTimeUnixNano", "endTimeUnixNano", "timeUnixNano"})
_IDS = frozenset({"traceId", "spanId", "parentSpanId"})


def _case_id(path: Path, *rest: str) -> str:
    return "/".join([path.relative_to(DATA).as_posix(), *rest])


def _canonical_spans(folder: Path) -> tuple[list[Any], int]:
    """Every exported span with its resource and scope, ids numbered, times blanked."""
    ids: dict[str, int] = {}
    spans: list[Any] = []

    def scrub(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                key: (
                    "t"
                    if key in _TIMES
                    else ids.setdefault(value, len(ids))
                    if key in _IDS and value
                    else scrub(value)
                )
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [scrub(item) for item in node]
        return node

    files = sorted(folder.glob("traces-*.jsonl"))
    for path in files:
        for line in path.read_text("utf-8").splitlines():
            for resource_spans in json.loads(line)["resourceSpans"]:
                resource = resource_spans.get("resource", {})
                for scope_spans in resource_spans.get("scopeSpans", []):
                    scope = scope_spans.get("scope", {})
                    spans.extend(
                        {"resource": resource, "scope": scope, "span": scrub(span)}
                        for span in scope_spans.get("spans", [])
                    )
    return spans, len(files)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_case(
    stream: Path, fmt: str, work: Path, *extra: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run `record` as a user would (the local sink on), and digest what it wrote."""
    telemetry = work / "telemetry"
    shutil.rmtree(telemetry, ignore_errors=True)
    out = work / "evidence.json"
    out.unlink(missing_ok=True)
    rooted: list[str] = []
    if "--repo-root" not in extra:
        stream = hermetic_capture(stream, work)
        rooted = ["--repo-root", UNREACHABLE_ROOT]
    args = ["record", str(stream), "-f", fmt, "--revision", "rev1", "-o", str(out), *rooted]
    result = CliRunner().invoke(
        app,
        [*args, *extra],
        env={"COVERAGE_GATE_TELEMETRY_DIR": str(telemetry), **(env or {})},
    )
    if result.exit_code != 0:
        return {"exit": result.exit_code}
    spans, files = _canonical_spans(telemetry)
    spans_json = json.dumps(spans, sort_keys=False, separators=(",", ":")).encode()
    return {
        "exit": 0,
        "evidence": _sha(out.read_bytes().replace(str(work).encode(), b"<work>")),
        "spans": _sha(spans_json),
        "span_count": len(spans),
        "trace_files": files,
    }


def cases(work: Path) -> dict[str, tuple[Path, str, tuple[str, ...]]]:
    """Case id → (stream, format, extra arguments)."""
    generated = work / "generated-pi-1500.jsonl"
    generated.write_bytes(pi_stream(1500, seed=7))
    root = work / "revision"
    if not root.exists():
        shutil.copytree(REVISION_FILES, root)
    tree = snapshot_tree(git_repository(root))
    found: dict[str, tuple[Path, str, tuple[str, ...]]] = {}
    for path in CAPTURES:
        for fmt in ADAPTERS:
            found[_case_id(path, fmt)] = (path, fmt, ())
        own = OWN_FORMAT.get(path.relative_to(DATA).parts[0])
        if own in {"pi-rpc", "claude-code", "codex-rollout"}:
            found[_case_id(path, own, "diff")] = (path, own, ("--diff", str(DIFF)))
            found[_case_id(path, own, "diff", "content")] = (
                path,
                own,
                ("--diff", str(DIFF), "--repo-root", str(root), "--revision", tree),
            )
    found["generated/pi_stream-1500-seed7/pi-rpc"] = (generated, "pi-rpc", ())
    found["generated/pi_stream-1500-seed7/pi-rpc/diff"] = (
        generated,
        "pi-rpc",
        ("--diff", str(DIFF)),
    )
    return found


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("record-unchanged")


@pytest.fixture(scope="module")
def recorded(work: Path) -> dict[str, dict[str, Any]]:
    found = {
        case: record_case(stream, fmt, work, *extra)
        for case, (stream, fmt, extra) in cases(work).items()
    }
    if UPDATE_GOLDEN:
        MANIFEST.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", "utf-8")
    return found


def test_the_manifest_covers_every_capture() -> None:
    """A capture added under tests/data without its digests fails here, not silently."""
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    for path in CAPTURES:
        name = path.relative_to(DATA).as_posix()
        assert {f"{name}/{fmt}" for fmt in ADAPTERS} <= set(manifest), name


def test_record_writes_the_evidence_and_spans_it_wrote_before(
    recorded: dict[str, dict[str, Any]],
) -> None:
    """Every case, compared whole: a changed byte of evidence, a lost, added or altered span,
    or a changed exit code fails here, naming the cases."""
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    assert set(recorded) == set(manifest)
    changed = sorted(case for case in manifest if recorded[case] != manifest[case])
    assert not changed, f"{len(changed)} case(s) changed: {changed[:10]}"


def test_evidence_is_the_same_with_the_sdk_disabled(work: Path) -> None:
    """OTEL_SDK_DISABLED=true: no span, the same evidence bytes, on every capture in its own
    format (every format for the captures of hostile/, whose format is theirs alone)."""
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    for case, (stream, fmt, extra) in cases(work).items():
        if fmt != OWN_FORMAT.get(case.split("/")[0], fmt) or "content" in case:
            continue
        quiet = record_case(stream, fmt, work, *extra, env={"OTEL_SDK_DISABLED": "true"})
        assert quiet.get("evidence") == manifest[case].get("evidence"), case
        assert quiet.get("span_count", 0) == 0, case
