"""Per-repository policies from the flag variant's payload (DESIGN §8): how a payload is read,
the order of sources (CLI option, environment, payload, default), and that a payload that cannot
be read is a configuration error with its own message, never a silent default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.commands.flags import EXIT_BAD_CONFIG, flags_app
from coverage_gate.contracts.model import (
    Capability,
    Depth,
    DepthPolicy,
    EvidenceDocument,
    FileDepth,
    FileEvidence,
    LineRange,
    Mode,
    ModeSource,
    PolicySource,
    UnknownPolicy,
)
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.flags import (
    DEFAULT_FLAG_NAME,
    FlagConfigError,
    FlagSettings,
    ModeResolution,
    VariantPolicies,
    effective_policies,
    policies_from_payload,
    resolve_mode,
)
from tests.conftest import reconcile_in
from tests.rollout.test_flags_stub_server import (  # noqa: F401 - `servers` is a fixture used below
    Servers,
    live,
    servers,
)

FLAG = DEFAULT_FLAG_NAME
REV = "c" * 40
runner = CliRunner()


def payload(body: object, kind: str = "json") -> dict[str, Any]:
    return {"type": kind, "value": body if isinstance(body, str) else json.dumps(body)}


def features(variant_payload: dict[str, Any] | None, *, variant: str = "shadow") -> dict[str, Any]:
    """One flag serving every repository one variant, with the given payload."""
    entry: dict[str, Any] = {"name": variant, "weight": 1000, "weightType": "variable"}
    if variant_payload is not None:
        entry["payload"] = variant_payload
    strategy = {
        "name": "flexibleRollout",
        "constraints": [],
        "parameters": {"rollout": "100", "stickiness": "default", "groupId": FLAG},
        "variants": [entry],
    }
    return {"version": 2, "features": [{"name": FLAG, "enabled": True, "strategies": [strategy]}]}


def snapshot(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "flags.json"
    path.write_text(json.dumps(document), "utf-8")
    return path


# --- reading a payload --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({}, VariantPolicies()),
        ({"depth_policy": "any-hunk"}, VariantPolicies(depth_policy=DepthPolicy.ANY_HUNK)),
        ({"unknown_policy": "downgrade"}, VariantPolicies(unknown_policy=UnknownPolicy.DOWNGRADE)),
        (
            {"depth_policy": "all-hunks", "unknown_policy": "accept"},
            VariantPolicies(DepthPolicy.ALL_HUNKS, UnknownPolicy.ACCEPT),
        ),
    ],
)
def test_a_json_payload_sets_the_policies_it_names(body: object, expected: VariantPolicies) -> None:
    assert policies_from_payload(payload(body)) == expected


@pytest.mark.parametrize(
    ("variant_payload", "message"),
    [
        (payload("{depth_policy: any-hunk"), "is not valid JSON"),
        (payload('["any-hunk"]'), "is not a JSON object of policies"),
        (payload({"depth": "any-hunk"}), "has unknown key(s) 'depth'"),
        (payload({"quote_policy": "x"}), "has unknown key(s) 'quote_policy'"),
        (payload({"citation_policy": "x"}), "citation_policy 'x' is not one of accept, downgrade"),
        (payload({"depth_policy": "some-hunks"}), "depth_policy 'some-hunks' is not one of"),
        (payload({"unknown_policy": "ignore"}), "unknown_policy 'ignore' is not one of"),
        (payload({"depth_policy": 2}), "depth_policy 2 is not one of"),
        (payload({"depth_policy": "ANY-HUNK"}), "depth_policy 'ANY-HUNK' is not one of"),
        (payload("any-hunk", kind="string"), "is of type 'string'"),
        ({"type": "json"}, "has no JSON text"),
    ],
)
def test_a_payload_that_cannot_be_read_says_what_is_wrong(
    variant_payload: dict[str, Any], message: str
) -> None:
    with pytest.raises(FlagConfigError) as raised:
        policies_from_payload(variant_payload)
    assert message in str(raised.value)


# --- the payload reaches the resolution from every flag source ----------------------------------


def test_snapshot_variant_payload_reaches_the_resolution(tmp_path: Path) -> None:
    path = snapshot(tmp_path, features(payload({"depth_policy": "any-hunk"})))
    result = resolve_mode("acme/tax", FlagSettings(snapshot=path))
    assert (result.mode, result.source, result.variant) == (
        Mode.SHADOW,
        ModeSource.SNAPSHOT,
        "shadow",
    )
    assert result.policies == VariantPolicies(depth_policy=DepthPolicy.ANY_HUNK)


def test_a_variant_without_payload_sets_no_policy(tmp_path: Path) -> None:
    path = snapshot(tmp_path, features(None))
    assert resolve_mode("acme/tax", FlagSettings(snapshot=path)).policies == VariantPolicies()


def test_an_override_consults_no_flag_and_so_no_payload(tmp_path: Path) -> None:
    path = snapshot(tmp_path, features(payload({"depth_policy": "any-hunk"})))
    result = resolve_mode("acme/tax", FlagSettings(snapshot=path), override=Mode.ENFORCE)
    assert result.policies == VariantPolicies()


def test_a_bad_snapshot_payload_is_a_configuration_error_naming_flag_variant_and_file(
    tmp_path: Path,
) -> None:
    path = snapshot(tmp_path, features(payload({"depth_policy": "deep"})))
    with pytest.raises(FlagConfigError) as raised:
        resolve_mode("acme/tax", FlagSettings(snapshot=path))
    assert str(raised.value) == (
        f"flags snapshot {path}: flag {FLAG!r} variant 'shadow': variant payload depth_policy "
        "'deep' is not one of accept, any-hunk, all-hunks"
    )
    assert raised.value.exit_code is ExitCode.BAD_CONFIG


def test_a_bad_payload_with_on_error_fallback_gives_the_fallback_and_says_why(
    tmp_path: Path,
) -> None:
    path = snapshot(tmp_path, features(payload("{not json")))
    result = resolve_mode("acme/tax", FlagSettings(snapshot=path, on_error="fallback"))
    assert (result.mode, result.source, result.flag_found) == (
        Mode.SHADOW,
        ModeSource.FALLBACK,
        False,
    )
    assert result.policies == VariantPolicies()
    assert "unusable variant payload" in result.detail
    assert "is not valid JSON" in result.detail


def test_live_and_disk_copy_payloads_reach_the_resolution_alike(
    servers: Servers,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    """The live server's variant payload is read; once the server is gone, the disk copy's."""
    servers.stub.serve(features(payload({"depth_policy": "all-hunks"})))
    answered = resolve_mode("acme/tax", live(servers.url, tmp_path))
    assert answered.source is ModeSource.LIVE
    assert answered.policies == VariantPolicies(depth_policy=DepthPolicy.ALL_HUNKS)
    servers.stop()  # the same server, gone: its deployment's copy answers
    from_copy = resolve_mode("acme/tax", live(servers.url, tmp_path))
    assert from_copy.source is ModeSource.DISK_COPY
    assert from_copy.policies == VariantPolicies(depth_policy=DepthPolicy.ALL_HUNKS)


def test_a_bad_live_payload_is_a_configuration_error_not_an_outage(
    servers: Servers,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    """The server answered: its payload is configuration, so it fails (no disk-copy retry)."""
    servers.stub.serve(features(payload({"depth_policy": "deep"})))
    with pytest.raises(FlagConfigError, match=r"Unleash server .*variant payload depth_policy"):
        resolve_mode("acme/tax", live(servers.url, tmp_path))


# --- the order of sources -------------------------------------------------------------------------

_ANSWERED = ModeResolution(
    Mode.SHADOW,
    ModeSource.SNAPSHOT,
    "shadow",
    True,
    "answered",
    policies=VariantPolicies(DepthPolicy.ANY_HUNK, UnknownPolicy.DOWNGRADE),
)
_NO_PAYLOAD = ModeResolution(Mode.SHADOW, ModeSource.FALLBACK, None, False, "fallback")


@pytest.mark.parametrize(
    ("resolution", "cli", "env", "expected"),
    [
        (_NO_PAYLOAD, None, {}, (DepthPolicy.ACCEPT, PolicySource.DEFAULT)),
        (_ANSWERED, None, {}, (DepthPolicy.ANY_HUNK, PolicySource.PAYLOAD)),
        (
            _ANSWERED,
            None,
            {"COVERAGE_GATE_DEPTH_POLICY": ""},
            (DepthPolicy.ANY_HUNK, PolicySource.PAYLOAD),
        ),
        (
            _ANSWERED,
            None,
            {"COVERAGE_GATE_DEPTH_POLICY": "all-hunks"},
            (DepthPolicy.ALL_HUNKS, PolicySource.ENV),
        ),
        (
            _ANSWERED,
            DepthPolicy.ACCEPT,
            {"COVERAGE_GATE_DEPTH_POLICY": "all-hunks"},
            (DepthPolicy.ACCEPT, PolicySource.CLI),
        ),
    ],
    ids=["default", "payload", "empty-env-is-unset", "env-beats-payload", "cli-beats-env"],
)
def test_each_policy_comes_from_cli_then_env_then_payload_then_default(
    resolution: ModeResolution,
    cli: DepthPolicy | None,
    env: dict[str, str],
    expected: tuple[DepthPolicy, PolicySource],
) -> None:
    policies = effective_policies(resolution, env, depth_policy=cli)
    assert (policies.depth_policy, policies.depth_policy_source) == expected


def test_the_unknown_policy_follows_the_same_order() -> None:
    from_payload = effective_policies(_ANSWERED, {})
    assert (from_payload.unknown_policy, from_payload.unknown_policy_source) == (
        UnknownPolicy.DOWNGRADE,
        PolicySource.PAYLOAD,
    )
    from_env = effective_policies(_ANSWERED, {"COVERAGE_GATE_UNKNOWN_POLICY": "accept"})
    assert (from_env.unknown_policy, from_env.unknown_policy_source) == (
        UnknownPolicy.ACCEPT,
        PolicySource.ENV,
    )
    from_cli = effective_policies(_ANSWERED, {}, unknown_policy=UnknownPolicy.ACCEPT)
    assert from_cli.unknown_policy_source is PolicySource.CLI


def test_an_environment_variable_naming_no_policy_is_a_configuration_error() -> None:
    with pytest.raises(FlagConfigError, match="COVERAGE_GATE_DEPTH_POLICY: 'deep' is not one of"):
        effective_policies(_NO_PAYLOAD, {"COVERAGE_GATE_DEPTH_POLICY": "deep"})


# --- coverage-gate flags --------------------------------------------------------------------------

_CLEAN_ENV = {
    "COVERAGE_GATE_FLAGS_DISK_COPY": "",
    "UNLEASH_URL": "",
    "COVERAGE_GATE_MODE": "",
    "COVERAGE_GATE_FLAGS": "",
    "COVERAGE_GATE_DEPTH_POLICY": "",
    "COVERAGE_GATE_UNKNOWN_POLICY": "",
    "COVERAGE_GATE_CITATION_POLICY": "",
}


def test_flags_shows_the_effective_policies_and_their_sources(tmp_path: Path) -> None:
    path = snapshot(tmp_path, features(payload({"depth_policy": "any-hunk"})))
    env = {**_CLEAN_ENV, "COVERAGE_GATE_UNKNOWN_POLICY": "downgrade"}
    shown = runner.invoke(
        flags_app, ["--repo", "acme/tax", "--flags", str(path), "--format", "json"], env=env
    )
    assert shown.exit_code == 0, shown.output
    document = json.loads(shown.stdout)
    assert {key: document[key] for key in document if "policy" in key} == {
        "depth_policy": "any-hunk",
        "depth_policy_source": "payload",
        "unknown_policy": "downgrade",
        "unknown_policy_source": "env",
        "citation_policy": "downgrade",
        "citation_policy_source": "default",
        "mutation_policy": "accept",
        "mutation_policy_source": "default",
    }
    text = runner.invoke(flags_app, ["--repo", "acme/tax", "--flags", str(path)], env=env)
    assert text.stdout.splitlines()[2] == (
        "  depth policy any-hunk (payload), unknown policy downgrade (env), "
        "citation policy downgrade (default), mutation policy accept (default)"
    )


def test_flags_with_a_bad_payload_exits_4_saying_so(tmp_path: Path) -> None:
    path = snapshot(tmp_path, features(payload({"depth_policy": "any-hunk", "depth": 1})))
    failed = runner.invoke(flags_app, ["--repo", "acme/tax", "--flags", str(path)], env=_CLEAN_ENV)
    assert failed.exit_code == EXIT_BAD_CONFIG
    assert failed.stdout == ""
    assert "variant payload has unknown key(s) 'depth'" in failed.stderr


# --- reconcile: the policy reaches the decision ---------------------------------------------------


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A one-file review whose only read showed none of the file's change."""
    (tmp_path / "changed.txt").write_text("src/tax.py\n")
    (tmp_path / "claims.json").write_text(
        json.dumps({"schema_version": 1, "agent_id": "r", "inspected_files": ["src/tax.py"]})
    )
    depth = FileDepth(
        depth=Depth.NONE, changed_lines=13, hunks=1, unseen=[LineRange(start=480, end=492)]
    )
    evidence = EvidenceDocument(
        source="pi-rpc",
        revision=REV,
        stream_complete=True,
        capability=Capability.PER_FILE,
        files=[FileEvidence(path="src/tax.py", reads_succeeded=1, depth=depth)],
    )
    (tmp_path / "e.json").write_text(evidence.model_dump_json(by_alias=True))
    return tmp_path


def reconcile_args(work: Path, *extra: str) -> list[str]:
    return reconcile_in(work, "acme/tax", REV, str(work), *extra)


def decide(work: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = runner.invoke(app, reconcile_args(work, *extra), env={**_CLEAN_ENV, **(env or {})})
    assert result.exit_code == 0, result.output
    decision: dict[str, Any] = json.loads(result.stdout)
    return decision


def test_the_variant_payload_policy_reaches_the_decision_with_its_source(work: Path) -> None:
    """The payload's any-hunk makes the unseen file shallow: enforce turns Approve into Comment."""
    path = snapshot(work, features(payload({"depth_policy": "any-hunk"}), variant="enforce"))
    decision = decide(work, "--flags", str(path))
    assert (decision["mode"], decision["mode_source"]) == ("enforce", "snapshot")
    assert (decision["depth_policy"], decision["depth_policy_source"]) == ("any-hunk", "payload")
    assert (decision["unknown_policy"], decision["unknown_policy_source"]) == ("accept", "default")
    assert decision["verdict_out"] == "comment"
    assert decision["reasons"] == ["claims_shallow"]
    assert "`src/tax.py`: changed lines 480-492 not seen" in decision["note"]


def test_the_environment_and_the_option_beat_the_payload_in_a_decision(work: Path) -> None:
    path = snapshot(work, features(payload({"depth_policy": "any-hunk"}), variant="enforce"))
    by_env = decide(work, "--flags", str(path), env={"COVERAGE_GATE_DEPTH_POLICY": "accept"})
    assert (by_env["depth_policy"], by_env["depth_policy_source"], by_env["verdict_out"]) == (
        "accept",
        "env",
        "approve",
    )
    by_option = decide(
        work,
        "--flags",
        str(path),
        "--depth-policy",
        "all-hunks",
        "--unknown-policy",
        "accept",
        env={"COVERAGE_GATE_DEPTH_POLICY": "accept"},
    )
    assert (by_option["depth_policy"], by_option["depth_policy_source"]) == ("all-hunks", "cli")
    assert by_option["unknown_policy_source"] == "cli"


def test_a_bad_payload_stops_reconcile_with_exit_4_or_falls_back_saying_why(work: Path) -> None:
    path = snapshot(work, features(payload("{oops"), variant="enforce"))
    failed = runner.invoke(app, reconcile_args(work, "--flags", str(path)), env=_CLEAN_ENV)
    assert failed.exit_code == ExitCode.BAD_CONFIG
    assert failed.stdout == ""
    assert "variant payload is not valid JSON" in failed.stderr
    tolerated = runner.invoke(
        app,
        reconcile_args(work, "--flags", str(path), "--flags-on-error", "fallback"),
        env=_CLEAN_ENV,
    )
    assert tolerated.exit_code == 0, tolerated.output
    decision = json.loads(tolerated.stdout)
    assert (decision["mode"], decision["mode_source"]) == ("shadow", "fallback")
    assert (decision["depth_policy"], decision["depth_policy_source"]) == ("accept", "default")
    assert "unusable variant payload" in tolerated.stderr


def test_a_bad_policy_variable_stops_reconcile_with_exit_4(work: Path) -> None:
    failed = runner.invoke(
        app,
        reconcile_args(work, "--mode", "shadow"),
        env={**_CLEAN_ENV, "COVERAGE_GATE_UNKNOWN_POLICY": "never"},
    )
    assert failed.exit_code == ExitCode.BAD_CONFIG
    assert "COVERAGE_GATE_UNKNOWN_POLICY: 'never' is not one of accept, downgrade" in failed.stderr
