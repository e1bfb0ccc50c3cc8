"""The Python API (``coverage_gate.api``), used only through its public names: it records,
reconciles, loads and resolves as the command line does, with no command line and no telemetry
unless a provider is passed in."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

from coverage_gate import api
from coverage_gate.cli import app
from tests._support.docs import section
from tests.conftest import DATA, GOLDEN, REPO_ROOT, canonical

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "coverage_gate" / "examples"
HONEST = DATA / "pi-rpc" / "pi_a_honest.jsonl"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
REVISION = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
SCOPE = (EXAMPLES / "changed.txt").read_text().split()


def as_golden(document: api.EvidenceDocument) -> str:
    return canonical(document.model_dump(mode="json", by_alias=True))


def test_record_stream_gives_the_golden_evidence() -> None:
    """A real capture, as a file object and as bytes: its golden evidence document, with and
    without the pinned diff."""
    with HONEST.open("rb") as stream:
        document = api.record_stream(stream, "pi-rpc", revision="rev1", repo_root=REPO_ROOT)
    golden = (GOLDEN / "pi-rpc" / "pi_a_honest.evidence.json").read_text()
    assert as_golden(document) == golden
    with_diff = api.record_stream(
        HONEST.read_bytes(), "pi-rpc", revision="rev1", repo_root=REPO_ROOT, diff=DIFF
    )
    assert (
        as_golden(with_diff) == (GOLDEN / "pi-rpc" / "pi_a_honest.diff.evidence.json").read_text()
    )


def test_record_lines_gives_what_record_stream_gives() -> None:
    """Lines as text or bytes, with or without their newline: the same document."""
    data = HONEST.read_bytes()
    whole = api.record_stream(data, "pi-rpc", revision="rev1", repo_root=REPO_ROOT)
    text = data.decode().splitlines()
    assert api.record_lines(text, "pi-rpc", revision="rev1", repo_root=REPO_ROOT) == whole
    kept = data.splitlines(keepends=True)
    assert api.record_lines(kept, "pi-rpc", revision="rev1", repo_root=REPO_ROOT) == whole


def test_recorded_spans_go_to_a_provider_passed_in() -> None:
    """With an SDK tracer provider, one execute_tool span per call under invoke_agent."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    document = api.record_stream(
        HONEST.read_bytes(), "pi-rpc", revision="r", repo_root=REPO_ROOT, tracer_provider=provider
    )
    names = [span.name for span in exporter.get_finished_spans()]
    assert names[-1] == "invoke_agent pi-rpc"
    assert len(names) == document.counters.calls + 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: api.record_stream(b"", "nope", revision="r"), "format 'nope' is unknown; known:"),
        (lambda: api.record_stream(b"", "pi-rpc", revision=""), "revision is required"),
        (lambda: api.load_claims(b"{"), "reviewer output (bytes): not JSON"),
        (
            lambda: api.load_claims(b'{"schema_version": 1, "agent_id": "a", "extra": 1}'),
            "field 'extra'",
        ),
        (
            lambda: api.load_evidence(
                b'{"schema": "coverage-gate/evidence", "version": "9.0", "source": "x"}'
            ),
            "version 9.0 is newer than this coverage-gate reads",
        ),
        (lambda: api.reviewable_scope(["../outside.py"]), "line 1"),
    ],
)
def test_bad_input_is_one_clear_error(call: object, message: str) -> None:
    with pytest.raises(api.BadInputError) as raised:
        call()  # type: ignore[operator]
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_contracts_load_from_files_and_bytes(tmp_path: Path) -> None:
    claims = api.load_claims(EXAMPLES / "lying.claims.json")
    assert api.load_claims((EXAMPLES / "lying.claims.json").read_bytes()) == claims
    evidence = api.record_stream(HONEST.read_bytes(), "pi-rpc", revision=REVISION)
    path = tmp_path / "e.json"
    path.write_text(api.to_json(evidence))
    assert api.load_evidence(path) == evidence == api.load_evidence(path.read_bytes())
    bundle = {"schema_version": 1, "reviewers": [{"agent_id": "b", "failed": True}]}
    assert api.load_bundle(json.dumps(bundle).encode()).reviewers[0].failed is True
    decision = api.reconcile(
        repo="o/r", revision=REVISION, verdict=api.Verdict.APPROVE, scope=[], reviewers=[]
    )
    assert api.load_decision(api.to_json(decision).encode()) == decision


def lying_reviewer() -> api.Reviewer:
    claims = api.load_claims(EXAMPLES / "lying.claims.json")
    with (EXAMPLES / "lying.pi-rpc.jsonl").open("rb") as stream:
        evidence = api.record_stream(
            stream,
            "pi-rpc",
            revision=REVISION,
            repo_root=REPO_ROOT,
            diff=(EXAMPLES / "review.diff").read_bytes(),
            agent="lying",
        )
    return api.Reviewer(claims.agent_id, claims, evidence)


@pytest.mark.parametrize(("mode", "verdict_out"), [("shadow", "approve"), ("enforce", "comment")])
def test_reconcile_is_the_command_lines_decision(
    tmp_path: Path, mode: str, verdict_out: str
) -> None:
    """The bundled lying reviewer: shadow keeps the Approve and says it would downgrade, enforce
    downgrades; the document is the one `reconcile --format json` prints for the same inputs."""
    reviewer = lying_reviewer()
    decision = api.reconcile(
        repo="example/notes",
        revision=REVISION,
        verdict=api.Verdict.APPROVE,
        scope=api.reviewable_scope(SCOPE),
        reviewers=[reviewer],
        mode=api.Mode(mode),
    )
    assert decision.verdict_out.value == verdict_out
    assert decision.would_downgrade is True
    assert reviewer.evidence is not None
    evidence = tmp_path / "e.json"
    evidence.write_text(api.to_json(reviewer.evidence))
    result = CliRunner().invoke(
        app,
        [
            "reconcile",
            "--repo",
            "example/notes",
            "--revision",
            REVISION,
            "--verdict",
            "approve",
            "--changed",
            str(EXAMPLES / "changed.txt"),
            "--claims",
            str(EXAMPLES / "lying.claims.json"),
            "--evidence",
            str(evidence),
            "--mode",
            mode,
            "--repo-root",
            str(tmp_path),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads(api.to_json(decision))


def test_reconcile_records_telemetry_only_on_providers_passed_in() -> None:
    reader = InMemoryMetricReader()
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    api.reconcile(
        repo="example/notes",
        revision=REVISION,
        verdict=api.Verdict.APPROVE,
        scope=SCOPE,
        reviewers=[lying_reviewer()],
        meter_provider=MeterProvider(metric_readers=[reader]),
        tracer_provider=tracer_provider,
    )
    (span,) = exporter.get_finished_spans()
    assert span.name == "reconcile example/notes"
    data = reader.get_metrics_data()
    assert data is not None
    names = {m.name for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics}
    assert "coverage_gate.reviews" in names


def test_resolve_mode_and_policies() -> None:
    """No source configured: the fallback (shadow) answers; an override wins; a snapshot
    answers per repository; policies come from the argument, else the environment, else the
    default."""
    fallback = api.resolve_mode("acme/api")
    assert (fallback.mode, fallback.source) == (api.Mode.SHADOW, api.ModeSource.FALLBACK)
    forced = api.resolve_mode("acme/api", override=api.Mode.ENFORCE)
    assert (forced.mode, forced.source) == (api.Mode.ENFORCE, api.ModeSource.OVERRIDE)
    settings = api.FlagSettings(snapshot=EXAMPLES / "flags.snapshot.json")
    snapshot = api.resolve_mode("acme/payments", settings)
    assert (snapshot.mode, snapshot.source) == (api.Mode.ENFORCE, api.ModeSource.SNAPSHOT)
    from_env = api.flag_settings_from_env(
        {"COVERAGE_GATE_FLAGS": str(EXAMPLES / "flags.snapshot.json")}
    )
    assert api.resolve_mode("acme/payments", from_env) == snapshot
    policies = api.effective_policies(
        fallback,
        unknown_policy=api.UnknownPolicy.DOWNGRADE,
        environ={"COVERAGE_GATE_DEPTH_POLICY": "all-hunks"},
    )
    assert (policies.unknown_policy, policies.unknown_policy_source) == (
        api.UnknownPolicy.DOWNGRADE,
        api.PolicySource.CLI,
    )
    assert (policies.depth_policy, policies.depth_policy_source) == (
        api.DepthPolicy.ALL_HUNKS,
        api.PolicySource.ENV,
    )
    with pytest.raises(api.BadConfigError):
        api.effective_policies(fallback, environ={"COVERAGE_GATE_DEPTH_POLICY": "most"})


def test_every_public_name_exists_and_every_function_is_documented() -> None:
    for name in api.__all__:
        value = getattr(api, name)
        if inspect.isfunction(value):
            assert inspect.getdoc(value), name
    assert set(api.formats()) >= {"pi-rpc", "claude-code", "codex-exec", "otlp-json"}


def test_the_api_reads_the_formats_the_command_lists() -> None:
    """``api.formats()`` is the ``formats`` command's list, codereview-cli included, and
    ``record_stream`` reads a codereview-cli task's metadata as ``record`` does from stdin."""
    runner = CliRunner()
    listed = runner.invoke(app, ["formats"]).stdout.splitlines()
    assert api.formats() == [line.split()[0] for line in listed if line.strip()]
    head = "1a2b3c4d5e6f"  # the fixture's task folders end in it
    folder = DATA / "codereview-cli" / "llm-tasks" / f"reviewer%3Acorrectness-{head}"
    data = (folder / "metadata.json").read_bytes()
    document = api.record_stream(data, "codereview-cli", revision=head * 3, repo_root="/nowhere")
    done = runner.invoke(
        app,
        ["record", "-", "--format", "codereview-cli", "--revision", head * 3,
         "--repo-root", "/nowhere"],
        input=data,
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads(document.model_dump_json(by_alias=True)) == json.loads(done.stdout)
    assert document.counters.calls == 7


USE_WITHOUT_PROVIDERS = """
import json, sys
from pathlib import Path
from coverage_gate import api
examples = Path(sys.argv[1])
evidence = api.record_stream(
    (examples / "lying.pi-rpc.jsonl").read_bytes(), "pi-rpc", revision="r", repo_root="/home/user/repo"
)
claims = api.load_claims(examples / "lying.claims.json")
resolution = api.resolve_mode("acme/api")
api.reconcile(
    repo="acme/api", revision="r", verdict=api.Verdict.APPROVE, mode=resolution.mode,
    scope=api.reviewable_scope(["src/api/models.py"]),
    reviewers=[api.Reviewer(claims.agent_id, claims, evidence)],
)
print(json.dumps(sorted(sys.modules)))
"""


def loaded(code: str, *argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True, cwd=ROOT
    )
    modules: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return set(modules)


def test_importing_the_api_loads_no_command_line() -> None:
    """`import coverage_gate.api` loads no typer (nor click, nor any OpenTelemetry)."""
    modules = loaded(
        "import json, sys\nimport coverage_gate.api\nprint(json.dumps(sorted(sys.modules)))"
    )
    assert "coverage_gate.api" in modules
    assert not [m for m in modules if m.startswith(("typer", "click", "opentelemetry", "rich"))]


def test_using_the_api_without_providers_loads_no_telemetry_or_command_line() -> None:
    """Record, load, resolve and reconcile without a provider: no OpenTelemetry, no typer."""
    modules = loaded(USE_WITHOUT_PROVIDERS, str(EXAMPLES))
    assert "coverage_gate.record.recording" in modules
    assert not [m for m in modules if m.startswith(("typer", "click", "opentelemetry", "rich"))]


def test_the_readme_example_runs_as_written() -> None:
    """The README's Python API example, run as it is shown, prints what its comment says."""
    (code,) = re.findall(r"```python\n(.*?)```", section("Python API"), re.DOTALL)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.split() == ["approve", "True"]
