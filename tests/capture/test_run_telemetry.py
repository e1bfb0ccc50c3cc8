"""``coverage-gate run --telemetry-intake``: the reviewer's own telemetry, received on loopback
and recorded as evidence, alone or beside its stdout stream.

The reviewer here is a small script that does what Claude Code does with the environment it is
given: it sends its real captured OTLP requests (tests/data/otlp-json) to the endpoint in
``OTEL_EXPORTER_OTLP_ENDPOINT`` and prints its real captured stream-json, then exits; or it is
killed, exits with an error, sends nothing, or sends a body that cannot be read.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.contracts.model import Capability, EvidenceDocument
from tests.conftest import DATA, REPO_ROOT, record_bytes

PY = sys.executable
OTLP = DATA / "otlp-json"
STREAMS = DATA / "claude-code"

REVIEWER = r"""
import json, os, signal, sys, urllib.request
otlp, stream, ending = sys.argv[1], sys.argv[2], sys.argv[3]
base = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
assert os.environ["OTEL_LOG_TOOL_DETAILS"] == "1"
assert os.environ["OTEL_EXPORTER_OTLP_PROTOCOL"] == "http/json"
bodies = [line for line in open(otlp, "rb").read().splitlines() if line.strip()]
if ending == "bad-body":
    bodies.append(b"{not json")
if ending == "silent":
    bodies = []
for body in bodies:
    path = "/v1/traces" if body.startswith(b'{"resourceSpans"') else "/v1/logs"
    request = urllib.request.Request(base + path, data=body, headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request, timeout=10).read()
    except urllib.error.HTTPError:
        pass
sys.stdout.buffer.write(open(stream, "rb").read()); sys.stdout.flush()
if ending == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
raise SystemExit(3 if ending == "error" else 0)
"""


def reviewer(tmp_path: Path, capture: str, ending: str = "ok") -> list[str]:
    script = tmp_path / "reviewer.py"
    script.write_text(REVIEWER)
    otlp = OTLP / f"{capture}.jsonl"
    stream = STREAMS / f"{capture}.stream-json.jsonl"
    return [PY, str(script), str(otlp), str(stream), ending]


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app,
        ["run", "--revision", "rev1", "--repo-root", REPO_ROOT, *args],
    )
    return result.exit_code, result.stderr


def evidence(path: Path) -> EvidenceDocument:
    return EvidenceDocument.model_validate_json(path.read_text())


def reads(document: EvidenceDocument) -> dict[str, tuple[int, int]]:
    return {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}


def test_telemetry_alone_is_the_runs_evidence_and_complete_when_the_reviewer_exits_normally(
    tmp_path: Path,
) -> None:
    """With --format subprocess, --output holds the telemetry's evidence. Logs alone carry no
    completion mark; the run knows the reviewer exited normally and every export was read."""
    out = tmp_path / "ev.json"
    logs_only = tmp_path / "logs.jsonl"
    capture = (OTLP / "claude-code_otel_honest.jsonl").read_bytes().splitlines()
    logs_only.write_bytes(b"".join(line + b"\n" for line in capture if b"resourceLogs" in line))
    command = reviewer(tmp_path, "claude-code_otel_honest")
    command[2] = str(logs_only)
    code, stderr = run(
        tmp_path, "--format", "subprocess", "--telemetry-intake", "claude-code", "-o", str(out),
        "--", *command,
    )  # fmt: skip
    assert code == 0, stderr
    document = evidence(out)
    assert document.source == "otlp-json"
    assert document.stream_complete
    assert document.capability is Capability.PER_FILE
    assert set(reads(document)) == {
        "README.md", "docs/guide.md", "src/api/handlers.py", "src/api/models.py",
        "src/util/strings.py", "tests/test_handlers.py",
    }  # fmt: skip
    from_file = record_bytes(logs_only.read_bytes(), "otlp-json")
    assert not from_file.stream_complete  # the file alone cannot know
    assert reads(from_file) == reads(document)
    assert f"telemetry evidence written to {out}" in stderr


def test_beside_the_stream_both_are_written_and_their_agreement_is_said(tmp_path: Path) -> None:
    out, telemetry = tmp_path / "ev.json", tmp_path / "tel.json"
    code, stderr = run(
        tmp_path, "--format", "claude-code", "--telemetry-intake", "claude-code",
        "-o", str(out), "--telemetry-output", str(telemetry),
        "--", *reviewer(tmp_path, "claude-code_otel_honest"),
    )  # fmt: skip
    assert code == 0, stderr
    assert reads(evidence(out)) == reads(evidence(telemetry))
    assert evidence(out).source == "claude-code"
    assert evidence(telemetry).stream_complete
    assert "the stream and the telemetry agree on every call" in stderr


def test_a_call_in_one_source_and_not_the_other_is_reported(tmp_path: Path) -> None:
    """Claude Code's telemetry has no record of a call to a tool that does not exist."""
    out, telemetry = tmp_path / "ev.json", tmp_path / "tel.json"
    code, stderr = run(
        tmp_path, "--format", "claude-code", "--telemetry-intake", "claude-code",
        "-o", str(out), "--telemetry-output", str(telemetry),
        "--", *reviewer(tmp_path, "claude-code_otel_mixed"),
    )  # fmt: skip
    assert code == 0, stderr
    assert "the stream and the telemetry disagree" in stderr
    assert "only in the stream: Frobnicate" in stderr


@pytest.mark.parametrize(
    ("ending", "exit_code", "why"),
    [
        ("killed", 128 + 9, "did not exit normally"),
        ("error", 3, "did not exit normally"),
        ("silent", 0, "no telemetry arrived"),
        ("bad-body", 0, "could not be read"),
    ],
)
def test_telemetry_that_may_miss_a_batch_is_incomplete(
    tmp_path: Path, ending: str, exit_code: int, why: str
) -> None:
    """A killed or failing reviewer may have lost its last export; nothing arriving is no
    evidence of absence; a request that could not be read could have held calls."""
    out = tmp_path / "ev.json"
    code, stderr = run(
        tmp_path, "--format", "subprocess", "--telemetry-intake", "claude-code", "-o", str(out),
        "--", *reviewer(tmp_path, "claude-code_otel_honest", ending),
    )  # fmt: skip
    assert code == exit_code, stderr
    assert not evidence(out).stream_complete
    assert why in stderr


def test_codex_gets_its_exporter_as_config_options_after_its_program_word(tmp_path: Path) -> None:
    """Codex reads its exporter from its config: `-c otel.exporter=...` pointing at /v1/logs."""
    argv_file = tmp_path / "argv.json"
    codex = tmp_path / "codex"
    codex.write_text(
        f"#!{PY}\n"
        + textwrap.dedent(
            f"""
            import json, os, sys
            json.dump([sys.argv, os.environ.get("COVERAGE_GATE_OTLP_ENDPOINT")],
                      open({str(argv_file)!r}, "w"))
            """
        )
    )
    codex.chmod(codex.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "ev.json"
    code, stderr = run(
        tmp_path, "--format", "subprocess", "--telemetry-intake", "codex", "-o", str(out),
        "--", str(codex), "exec", "--json", "review",
    )  # fmt: skip
    assert code == 0, stderr
    argv, endpoint = json.loads(argv_file.read_text())
    assert endpoint.startswith("http://127.0.0.1:")
    assert argv[1:3] == [
        "-c",
        f'otel.exporter={{otlp-http={{endpoint="{endpoint}/v1/logs",protocol="json"}}}}',
    ]
    assert argv[-3:] == ["exec", "--json", "review"]
    assert "no telemetry arrived" in stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--telemetry-output", "TEL"], "--telemetry-output needs --telemetry-intake"),
        (
            ["--format", "claude-code", "--telemetry-intake", "claude-code"],
            "--telemetry-output is required",
        ),
        (
            [
                "--format",
                "claude-code",
                "--telemetry-intake",
                "claude-code",
                "--telemetry-output",
                "EV",
            ],
            "must differ from --output",
        ),
        (
            ["--format", "subprocess", "--telemetry-intake", "codex"],
            "after the 'codex' program word",
        ),
    ],
)
def test_telemetry_options_are_checked_before_the_reviewer_starts(
    tmp_path: Path, args: list[str], message: str
) -> None:
    marker = tmp_path / "started"
    places = {"EV": str(tmp_path / "ev.json"), "TEL": str(tmp_path / "tel.json")}
    args = [places.get(arg, arg) for arg in args]
    code, stderr = run(
        tmp_path, "-o", places["EV"], *args, "--", PY, "-c", f"open({str(marker)!r}, 'w')"
    )
    assert code == 3, stderr
    assert message in stderr
    assert not marker.exists()
    assert not os.path.exists(places["EV"])
