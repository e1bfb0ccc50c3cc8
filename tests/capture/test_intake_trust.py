"""The telemetry ``run --telemetry-intake`` receives is a record the reviewer can write (DESIGN §6
rule 27): the receiver listens on a loopback port the reviewer's environment names, so any command
the reviewer runs can send it spans of reads that never happened.

The reviewer here is a script that does what a lying reviewer's shell command would: it reads the
receiver's address from its own environment and sends, over OTLP/HTTP, the spans and logs of a
real Claude Code review (``tests/data/otlp-json/claude-code_otel_honest.jsonl``) it never made,
then prints nothing or a real stream. ``run`` and ``reconcile`` are whole processes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, REPO_ROOT, run_cli

SENDER = r"""
import os, sys, urllib.request
base = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
for body in open(sys.argv[1], "rb").read().splitlines():
    if body.strip():
        path = "/v1/traces" if body.startswith(b'{"resourceSpans"') else "/v1/logs"
        urllib.request.urlopen(urllib.request.Request(
            base + path, data=body, headers={"Content-Type": "application/json"}), timeout=10).read()
if len(sys.argv) > 2:
    sys.stdout.buffer.write(open(sys.argv[2], "rb").read())
"""

CAPTURE = "claude-code_otel_honest"
CLAIMED = [
    "README.md", "docs/guide.md", "src/api/handlers.py", "src/api/models.py",
    "src/util/strings.py", "tests/test_handlers.py",
]  # fmt: skip


def _decision(tmp_path: Path, evidence: Path, *policy: str) -> dict[str, Any]:
    claims, changed = tmp_path / "claims.json", tmp_path / "changed.txt"
    claims.write_text(
        json.dumps(
            {"schema_version": 1, "agent_id": "reviewer", "inspected_files": CLAIMED,
             "findings": []}
        )
    )  # fmt: skip
    changed.write_text("\n".join(CLAIMED) + "\n")
    done = run_cli(
        "reconcile", "--repo", "example/repo", "--revision", "rev1", "--verdict", "approve",
        "--claims", claims, "--evidence", evidence, "--changed", changed, "--mode", "enforce",
        "--format", "json", *policy,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _statuses(decision: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {
        file["path"]: (file["status"], file.get("unknown_reason"))
        for reviewer in decision["reviewers"]
        for file in reviewer["files"]
    }


def _run(tmp_path: Path, fmt: str, *stream: Path) -> tuple[Path, Path, str]:
    sender = tmp_path / "sender.py"
    sender.write_text(SENDER)
    out, telemetry = tmp_path / "evidence.json", tmp_path / "telemetry.json"
    extra = ("--telemetry-output", telemetry) if fmt != "subprocess" else ()
    done = run_cli(
        "run", "--revision", "rev1", "--repo-root", REPO_ROOT, "--format", fmt,
        "--telemetry-intake", "otlp", "-o", out, *extra, "--",
        sys.executable, sender, DATA / "otlp-json" / f"{CAPTURE}.jsonl", *stream,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out, telemetry, done.stderr


@pytest.mark.parametrize(
    ("policy", "verdict"), [((), "approve"), (("--unknown-policy", "downgrade"), "comment")]
)
def test_spans_the_reviewers_own_command_sent_verify_no_claim(
    tmp_path: Path, policy: tuple[str, ...], verdict: str
) -> None:
    """Alone (``--format subprocess``), the intake's evidence records the six reads, and every
    claim is ``unknown`` for ``telemetry_intake``, said in the note: the Approve is kept only by
    the default unknown policy, never as coverage verified."""
    out, _, _ = _run(tmp_path, "subprocess")
    evidence = json.loads(out.read_text())
    assert evidence["source"] == "otlp-json"
    assert {entry["path"] for entry in evidence["files"] if entry["reads_succeeded"]} == set(
        CLAIMED
    )
    assert evidence["cannot_verify"]["reason"] == "telemetry_intake"
    decision = _decision(tmp_path, out, *policy)
    assert set(_statuses(decision).values()) == {("unknown", "telemetry_intake")}
    assert decision["verdict_out"] == verdict
    assert "(telemetry_intake)" in decision["note"]
    assert "Coverage verified" not in decision["note"]


def test_beside_the_stream_the_intake_corroborates_and_the_stream_decides(tmp_path: Path) -> None:
    """With the stream recorded too, the stream's evidence decides (every claim verified), and
    the intake's evidence, written beside it, still verifies nothing alone."""
    stream = DATA / "claude-code" / f"{CAPTURE}.stream-json.jsonl"
    out, telemetry, stderr = _run(tmp_path, "claude-code", stream)
    assert "the stream and the telemetry agree on every call" in stderr
    assert json.loads(out.read_text())["cannot_verify"] is None
    assert json.loads(telemetry.read_text())["cannot_verify"]["reason"] == "telemetry_intake"
    decided = _statuses(_decision(tmp_path, out))
    assert {status for status, _ in decided.values()} == {"verified"}
