"""reconcile --mode auto and the two guarded boundaries (shadow computation, telemetry)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import coverage_gate.commands.reconcile as cli_module
import coverage_gate.core.reconcile as reconcile_module
from coverage_gate.cli import app
from coverage_gate.errors import ExitCode
from coverage_gate.rollout import metrics
from tests.conftest import CHANGED_FILES, DATA, reconcile_in

runner = CliRunner()
SNAPSHOT = Path(cli_module.__file__).parents[1] / "examples" / "flags.snapshot.json"
REV = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ALL = CHANGED_FILES


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "changed.txt").write_text("\n".join(ALL))
    (tmp_path / "claims.json").write_text(
        json.dumps({"schema_version": 1, "agent_id": "r", "inspected_files": ALL})
    )
    result = runner.invoke(
        app,
        [
            "record",
            str(DATA / "pi-rpc" / "pi_b_overclaim.jsonl"),
            "-f",
            "pi-rpc",
            "--repo-root",
            "/home/user/repo",
            "--revision",
            REV,
            "-o",
            str(tmp_path / "e.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    return tmp_path


def args(work: Path, repo: str, *extra: str) -> list[str]:
    return reconcile_in(work, repo, REV, "/home/user/repo", *extra)


def decide(work: Path, repo: str, *extra: str) -> dict[str, object]:
    result = runner.invoke(app, args(work, repo, *extra))
    assert result.exit_code == 0, result.output
    decision: dict[str, object] = json.loads(result.stdout)
    return decision


def test_auto_without_any_flag_source_falls_back_to_shadow_and_says_so(work: Path) -> None:
    decision = decide(work, "acme/payments")
    assert (decision["mode"], decision["mode_source"]) == ("shadow", "fallback")
    assert decision["verdict_out"] == "approve" and decision["would_downgrade"]


def test_auto_with_a_snapshot_resolves_per_repository(work: Path) -> None:
    enforced = decide(work, "acme/payments", "--flags", str(SNAPSHOT))
    assert (enforced["mode"], enforced["mode_source"], enforced["verdict_out"]) == (
        "enforce",
        "snapshot",
        "comment",
    )


def test_explicit_mode_and_env_override_beat_the_snapshot(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    explicit = decide(work, "acme/payments", "--flags", str(SNAPSHOT), "--mode", "shadow")
    assert (explicit["mode"], explicit["mode_source"]) == ("shadow", "override")
    monkeypatch.setenv("COVERAGE_GATE_MODE", "off")
    from_env = decide(work, "acme/payments", "--flags", str(SNAPSHOT))
    assert (from_env["mode"], from_env["mode_source"]) == ("off", "override")


def test_corrupt_snapshot_is_a_configuration_error_unless_fallback_is_asked(work: Path) -> None:
    corrupt = work / "flags.json"
    corrupt.write_text('{"version": 2, "features": [')
    result = runner.invoke(app, args(work, "acme/payments", "--flags", str(corrupt)))
    assert result.exit_code == ExitCode.BAD_CONFIG and result.stdout == ""
    assert "flags.json" in result.stderr
    decision = decide(
        work, "acme/payments", "--flags", str(corrupt), "--flags-on-error", "fallback"
    )
    assert (decision["mode"], decision["mode_source"]) == ("shadow", "fallback")


def test_enforce_can_never_be_the_fallback(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COVERAGE_GATE_FALLBACK_MODE", "enforce")
    result = runner.invoke(app, args(work, "acme/payments"))
    assert result.exit_code == ExitCode.BAD_CONFIG and result.stdout == ""


def test_explicit_mode_never_imports_the_unleash_client(work: Path) -> None:
    script = (
        "import sys\nfrom typer.testing import CliRunner\nfrom coverage_gate.cli import app\n"
        f"r = CliRunner().invoke(app, {args(work, 'acme/payments', '--mode', 'enforce')!r})\n"
        "assert r.exit_code == 0, r.output\n"
        "print(sorted(m for m in sys.modules if m.lower().startswith(('unleashclient', 'yggdrasil'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_failing_shadow_check_keeps_the_legacy_verdict(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shadow returns the control value: a crash in the evidence check changes nothing."""
    real = reconcile_module.reconcile

    def broken(review: object) -> object:
        if any(r.evidence is not None for r in review.reviewers):  # type: ignore[attr-defined]
            raise RuntimeError("boom")
        return real(review)  # type: ignore[arg-type]

    monkeypatch.setattr(reconcile_module, "reconcile", broken)
    decision = decide(work, "acme/web", "--mode", "shadow")
    assert decision["verdict_out"] == "approve" and decision["mode"] == "shadow"
    assert "shadow evidence check failed (RuntimeError)" in str(decision["note"])
    enforce = runner.invoke(app, args(work, "acme/web", "--mode", "enforce"))
    assert enforce.exit_code != 0 and enforce.stdout == ""


def test_a_telemetry_failure_never_changes_the_decision_or_exit_code(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(metrics, "record_decision", broken)
    result = runner.invoke(app, [*args(work, "acme/payments", "--mode", "enforce"), "--exit-code"])
    assert result.exit_code == ExitCode.DOWNGRADED
    assert json.loads(result.stdout)["verdict_out"] == "comment"
    assert "telemetry not recorded" in result.stderr


def test_reconcile_writes_its_span_and_metrics_to_the_local_telemetry_folder(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = work / "telemetry"
    monkeypatch.setenv("COVERAGE_GATE_TELEMETRY_DIR", str(folder))
    decide(work, "acme/payments", "--mode", "enforce")
    traces = "".join(p.read_text() for p in folder.glob("traces-*.jsonl"))
    metrics = "".join(p.read_text() for p in folder.glob("metrics-*.jsonl"))
    assert "reconcile acme/payments" in traces
    assert "coverage_gate.reviews" in metrics


def test_record_exports_its_spans_and_they_read_back_as_the_same_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OTLP round trip through the CLI: the exported execute_tool spans are the evidence (the
    pinned diff is given again: spans carry page ranges, the diff maps them to files)."""
    folder = tmp_path / "telemetry"
    monkeypatch.setenv("COVERAGE_GATE_TELEMETRY_DIR", str(folder))
    first = runner.invoke(
        app,
        [
            "record",
            str(DATA / "pi-rpc" / "pi_b_overclaim.jsonl"),
            "-f",
            "pi-rpc",
            "--repo-root",
            "/home/user/repo",
            "--revision",
            REV,
            "--diff",
            str(DATA / "pi-rpc" / "review.diff"),
            "-o",
            str(tmp_path / "direct.json"),
        ],
    )
    assert first.exit_code == 0, first.output
    (traces,) = folder.glob("traces-*.jsonl")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    again = runner.invoke(
        app,
        [
            "record",
            str(traces),
            "-f",
            "otlp-json",
            "--revision",
            REV,
            "--diff",
            str(DATA / "pi-rpc" / "review.diff"),
            "-o",
            str(tmp_path / "back.json"),
        ],
    )
    assert again.exit_code == 0, again.output
    direct = json.loads((tmp_path / "direct.json").read_text())
    back = json.loads((tmp_path / "back.json").read_text())
    for key in ("files", "stream_complete", "capability", "truncated", "diff_status", "issues"):
        assert back[key] == direct[key], key
    assert {k: v for k, v in back["counters"].items() if k != "lines"} == {
        k: v for k, v in direct["counters"].items() if k != "lines"
    }
