"""Mode resolution from flags snapshots (DESIGN §8): each rule a rollout relies on, pinned.

Every evaluation goes through UnleashClient and its engine; these tests feed it Unleash client
features documents shaped like a real server's, and check the mode coverage-gate derives.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from coverage_gate.commands.flags import EXIT_BAD_CONFIG, EXIT_USAGE, flags_app
from coverage_gate.contracts.model import Mode, ModeSource
from coverage_gate.edges.files import write_atomic
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.flags import (
    DEFAULT_FLAG_NAME,
    FlagConfigError,
    FlagFetchError,
    FlagSettings,
    evaluation_context,
    mode_for_variant,
    override_from_env,
    resolve_mode,
    settings_from_env,
)

FLAG = DEFAULT_FLAG_NAME
EXAMPLE = Path(__file__).parents[2] / "coverage_gate" / "examples" / "flags.snapshot.json"
ENFORCED = ["acme/payments", "acme/billing"]


# --- building features documents ----------------------------------------------------------------


def variant(name: str, stickiness: str = "default") -> dict[str, Any]:
    return {"name": name, "weight": 1000, "weightType": "variable", "stickiness": stickiness}


def rollout(
    percent: int,
    *,
    stickiness: str = "default",
    constraints: list[dict[str, Any]] | None = None,
    variants: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "name": "flexibleRollout",
        "constraints": constraints or [],
        "parameters": {"rollout": str(percent), "stickiness": stickiness, "groupId": FLAG},
        "variants": variants or [],
    }


def repo_in(repos: list[str], field: str = "repo") -> dict[str, Any]:
    return {"contextName": field, "operator": "IN", "values": repos}


def enforce_strategy(repos: list[str]) -> dict[str, Any]:
    return rollout(100, constraints=[repo_in(repos)], variants=[variant("enforce")])


def feature(
    strategies: list[dict[str, Any]], *, enabled: bool = True, name: str = FLAG
) -> dict[str, Any]:
    return {"name": name, "enabled": enabled, "strategies": strategies, "variants": []}


def document(*features: dict[str, Any]) -> dict[str, Any]:
    return {"version": 2, "features": list(features)}


def snapshot(tmp_path: Path, content: dict[str, Any] | str, name: str = "flags.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return path


def resolve(path: Path, repo: str, **kwargs: Any) -> Any:
    return resolve_mode(repo, FlagSettings(snapshot=path, **kwargs))


# --- the mapping rule -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant_dict", "expected"),
    [
        ({"name": "disabled", "enabled": False, "feature_enabled": False}, Mode.OFF),
        ({"name": "enforce", "enabled": True, "feature_enabled": False}, Mode.OFF),
        ({"name": "enforce", "enabled": True, "feature_enabled": True}, Mode.ENFORCE),
        ({"name": "disabled", "enabled": False, "feature_enabled": True}, Mode.SHADOW),
        ({"name": "shadow", "enabled": True, "feature_enabled": True}, Mode.SHADOW),
        ({"name": "canary", "enabled": True, "feature_enabled": True}, Mode.SHADOW),
        ({"name": "ENFORCE", "enabled": True, "feature_enabled": True}, Mode.SHADOW),
        ({"name": "enforce", "enabled": False, "feature_enabled": True}, Mode.SHADOW),
        ({}, Mode.OFF),
    ],
)
def test_variant_maps_to_mode(variant_dict: dict[str, Any], expected: Mode) -> None:
    """Disabled → off; exactly variant 'enforce' → enforce; any other enabled variant → shadow."""
    assert mode_for_variant(variant_dict) is expected


def test_context_carries_the_repository_as_user_and_property() -> None:
    """userId and properties.repo are the repository (sticky per repo); extras are properties."""
    context = evaluation_context("acme/api", {"agent": "pi", "format": "pi-rpc", "repo": "spoof"})
    assert context == {
        "userId": "acme/api",
        "properties": {"agent": "pi", "format": "pi-rpc", "repo": "acme/api"},
    }


# --- snapshots: one test per strategy a rollout uses ------------------------------------------


def test_repo_constraint_returns_enforce_for_listed_repositories(tmp_path: Path) -> None:
    """A constraint `repo IN [...]` with variant enforce enforces exactly the listed repos."""
    path = snapshot(tmp_path, document(feature([enforce_strategy(ENFORCED)])))
    for repo in ENFORCED:
        result = resolve(path, repo)
        assert (result.mode, result.source, result.variant) == (
            Mode.ENFORCE,
            ModeSource.SNAPSHOT,
            "enforce",
        )
        assert result.flag_found
    other = resolve(path, "acme/web")
    assert (other.mode, other.source, other.flag_found) == (Mode.OFF, ModeSource.SNAPSHOT, True)


@pytest.mark.parametrize("stickiness", ["userId", "repo", "default"])
def test_sticky_gradual_rollout_puts_30_percent_in_shadow(tmp_path: Path, stickiness: str) -> None:
    """A 30% flexibleRollout sticky on the repository (userId or the custom `repo` field) puts
    about 30% of repositories in shadow, the rest off, and each repository keeps its answer."""
    path = snapshot(
        tmp_path,
        document(feature([rollout(30, stickiness=stickiness, variants=[variant("shadow")])])),
    )
    repos = [f"org/repo-{i}" for i in range(400)]
    first = {repo: resolve(path, repo).mode for repo in repos}
    assert set(first.values()) == {Mode.SHADOW, Mode.OFF}
    share = sum(mode is Mode.SHADOW for mode in first.values()) / len(repos)
    assert 0.22 <= share <= 0.38
    again = {repo: resolve(path, repo).mode for repo in repos}
    assert again == first


def test_gradual_rollout_answer_is_the_same_in_another_process(tmp_path: Path) -> None:
    """Stickiness is a hash of the repository, not process state: a fresh process agrees."""
    path = snapshot(
        tmp_path, document(feature([rollout(30, stickiness="repo", variants=[variant("shadow")])]))
    )
    repos = [f"team/service-{i}" for i in range(60)]
    here = {repo: resolve(path, repo).mode.value for repo in repos}
    script = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        from coverage_gate.rollout.flags import FlagSettings, resolve_mode
        settings = FlagSettings(snapshot=Path({str(path)!r}))
        repos = json.loads(sys.argv[1])
        print(json.dumps({{r: resolve_mode(r, settings).mode.value for r in repos}}))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script, json.dumps(repos)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    assert json.loads(completed.stdout) == here


def test_constraint_wins_over_rollout_in_strategy_order(tmp_path: Path) -> None:
    """The example rollout: listed repos enforce, a sticky share shadows, the rest are off."""
    results = {repo: resolve(EXAMPLE, repo) for repo in [*ENFORCED, "acme/ops", "acme/web"]}
    assert results["acme/payments"].mode is Mode.ENFORCE
    assert results["acme/billing"].mode is Mode.ENFORCE
    assert results["acme/ops"].mode is Mode.SHADOW
    assert results["acme/web"].mode is Mode.OFF
    assert all(r.source is ModeSource.SNAPSHOT for r in results.values())


def test_disabled_flag_is_off_and_found(tmp_path: Path) -> None:
    """A disabled flag answers `off` from the snapshot: found, not a fallback."""
    path = snapshot(tmp_path, document(feature([enforce_strategy(ENFORCED)], enabled=False)))
    result = resolve(path, "acme/payments")
    assert (result.mode, result.source, result.flag_found) == (Mode.OFF, ModeSource.SNAPSHOT, True)
    assert result.variant == "disabled"


def test_enabled_flag_without_variants_is_shadow(tmp_path: Path) -> None:
    """An enabled flag with no variant (the engine's 'disabled' variant name) means shadow."""
    path = snapshot(tmp_path, document(feature([{"name": "default", "parameters": {}}])))
    result = resolve(path, "acme/web")
    assert (result.mode, result.variant) == (Mode.SHADOW, "disabled")


def test_unknown_variant_never_escalates(tmp_path: Path) -> None:
    """Any enabled variant other than 'enforce' (typo, case, new name) is shadow."""
    for name in ["Enforce", "enforced", "canary", "strict"]:
        path = snapshot(tmp_path, document(feature([rollout(100, variants=[variant(name)])])))
        assert resolve(path, "acme/web").mode is Mode.SHADOW


@pytest.mark.parametrize("fallback", [Mode.SHADOW, Mode.OFF])
def test_missing_flag_falls_back_and_says_so(tmp_path: Path, fallback: Mode) -> None:
    """A flag that does not exist is not a disabled flag: the configured fallback answers and the
    detail names the missing flag."""
    path = snapshot(tmp_path, document(feature([], name="some.other-flag")))
    result = resolve(path, "acme/web", fallback=fallback)
    assert (result.mode, result.source, result.flag_found) == (fallback, ModeSource.FALLBACK, False)
    assert f"flag {FLAG!r} not defined in snapshot {path}" in result.detail


def test_properties_let_operators_target_an_agent(tmp_path: Path) -> None:
    """Agent and format are context properties: a constraint on `agent` targets one reviewer."""
    strategy = rollout(100, constraints=[repo_in(["pi"], "agent")], variants=[variant("enforce")])
    path = snapshot(tmp_path, document(feature([strategy])))
    pi = resolve_mode("acme/web", FlagSettings(snapshot=path), properties={"agent": "pi"})
    codex = resolve_mode("acme/web", FlagSettings(snapshot=path), properties={"agent": "codex"})
    assert (pi.mode, codex.mode) == (Mode.ENFORCE, Mode.OFF)


def test_app_name_and_environment_reach_the_context(tmp_path: Path) -> None:
    """The configured app name is part of the context, so strategies can target it."""
    strategy = rollout(100, constraints=[repo_in(["ci-gate"], "appName")])
    path = snapshot(tmp_path, document(feature([strategy])))
    assert resolve(path, "a/b", app_name="ci-gate").mode is Mode.SHADOW
    assert resolve(path, "a/b").mode is Mode.OFF


# --- override -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(Mode))
def test_override_wins_over_every_source(tmp_path: Path, mode: Mode) -> None:
    """An explicit override answers first, even over a snapshot and a server."""
    path = snapshot(tmp_path, document(feature([enforce_strategy(ENFORCED)])))
    settings = FlagSettings(snapshot=path, unleash_url="http://127.0.0.1:9/api")
    result = resolve_mode("acme/payments", settings, override=mode)
    assert (result.mode, result.source, result.flag_found) == (mode, ModeSource.OVERRIDE, False)


def test_override_never_imports_unleash_client(tmp_path: Path) -> None:
    """An explicit mode must not pay for (or depend on) UnleashClient: it is never imported."""
    script = textwrap.dedent(
        """
        import sys
        from coverage_gate.rollout.flags import FlagSettings, resolve_mode, override_from_env
        from coverage_gate.commands.flags import flags_app
        from coverage_gate.contracts.model import Mode
        override = override_from_env({"COVERAGE_GATE_MODE": "enforce"})
        result = resolve_mode("acme/api", FlagSettings(unleash_url="http://x"), override=override)
        assert result.mode is Mode.ENFORCE
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in
                        ("UnleashClient", "yggdrasil_engine", "apscheduler", "requests"))
        print(",".join(loaded))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    assert completed.stdout.strip() == ""


def test_snapshot_loads_the_engine_but_not_the_client(tmp_path: Path) -> None:
    """Offline answers use UnleashClient's engine alone: the client's scheduler and HTTP stack
    (most of its import cost) are not loaded for a snapshot."""
    path = snapshot(tmp_path, document(feature([enforce_strategy(ENFORCED)])))
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from coverage_gate.rollout.flags import FlagSettings, resolve_mode
        result = resolve_mode("acme/payments", FlagSettings(snapshot=Path({str(path)!r})))
        assert result.mode.value == "enforce", result
        print(",".join(sorted({{m.split(".")[0] for m in sys.modules}} &
                              {{"UnleashClient", "yggdrasil_engine", "apscheduler", "requests"}})))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    assert completed.stdout.strip() == "yggdrasil_engine"


# --- bad configuration ---------------------------------------------------------------------------


CORRUPT = {
    "not json": ("{features: nope", "not JSON"),
    "empty file": ("", "not JSON"),
    "a list": ("[]", "expected a JSON object"),
    "no features": ('{"version": 2}', "no 'features' list"),
    "features not a list": ('{"features": {}}', "no 'features' list"),
    "nameless feature": ('{"features": [{"enabled": true}]}', "features[0]"),
    "engine rejects": (
        '{"features": [{"name": "review.coverage-reconciler", "enabled": true}]}',
        "rejected the feature definitions",
    ),
    "strategies not a list": (
        '{"features": [{"name": "x", "enabled": true, "strategies": "all"}]}',
        "rejected",
    ),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_snapshot_is_a_configuration_error_naming_the_file(
    tmp_path: Path, case: str
) -> None:
    """A corrupt snapshot raises FlagConfigError naming the file and what is wrong."""
    text, expected = CORRUPT[case]
    path = snapshot(tmp_path, text)
    with pytest.raises(FlagConfigError) as raised:
        resolve(path, "acme/web")
    assert str(path) in str(raised.value)
    assert expected in str(raised.value)


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_snapshot_with_on_error_fallback_uses_and_records_the_fallback(
    tmp_path: Path, case: str
) -> None:
    """With on_error=fallback a corrupt snapshot yields the fallback mode, recorded with why."""
    path = snapshot(tmp_path, CORRUPT[case][0])
    result = resolve(path, "acme/payments", on_error="fallback", fallback=Mode.OFF)
    assert (result.mode, result.source, result.flag_found) == (Mode.OFF, ModeSource.FALLBACK, False)
    assert "snapshot unusable" in result.detail
    assert str(path) in result.detail


def test_missing_snapshot_file_is_a_configuration_error(tmp_path: Path) -> None:
    """A --flags file that does not exist is a configuration error naming it."""
    with pytest.raises(FlagConfigError, match="no such file"):
        resolve(tmp_path / "absent.json", "acme/web")


def test_flag_errors_map_to_the_bad_configuration_exit_code() -> None:
    """The main CLI's handler maps BadConfigError to exit 4; flag errors are of that kind."""
    assert FlagConfigError("x").exit_code == ExitCode.BAD_CONFIG == EXIT_BAD_CONFIG
    assert FlagFetchError("x").exit_code == ExitCode.BAD_CONFIG


def test_enforce_can_never_be_the_fallback() -> None:
    """The fallback may be off or shadow; asking for enforce is rejected, from code or env."""
    with pytest.raises(FlagConfigError, match="may not be 'enforce'"):
        FlagSettings(fallback=Mode.ENFORCE)
    with pytest.raises(FlagConfigError, match="may not be 'enforce'"):
        settings_from_env({"COVERAGE_GATE_FALLBACK_MODE": "enforce"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"timeout_s": 0.0}, "positive"),
        ({"deadline_s": 0.0}, "deadline must be positive"),
        ({"flag_name": ""}, "flag name"),
        ({"on_error": "ignore"}, "on_error"),
    ],
)
def test_bad_settings_are_rejected(kwargs: dict[str, Any], message: str) -> None:
    """Settings that cannot work are refused when built, not when used."""
    with pytest.raises(FlagConfigError, match=message):
        FlagSettings(**kwargs)


# --- settings from the environment ---------------------------------------------------------------


def test_settings_from_env_reads_every_variable(tmp_path: Path) -> None:
    """Each documented variable lands in its setting."""
    environ = {
        "COVERAGE_GATE_FLAGS": str(tmp_path / "f.json"),
        "UNLEASH_URL": "https://unleash.example/api",
        "UNLEASH_API_TOKEN": "default:production.secret",
        "UNLEASH_APP_NAME": "gate",
        "UNLEASH_ENVIRONMENT": "production",
        "COVERAGE_GATE_FLAG_NAME": "other.flag",
        "COVERAGE_GATE_FLAGS_DISK_COPY": str(tmp_path / "copy.json"),
        "COVERAGE_GATE_FALLBACK_MODE": "off",
        "COVERAGE_GATE_FLAGS_ON_ERROR": "fallback",
    }
    assert settings_from_env(environ) == FlagSettings(
        flag_name="other.flag",
        snapshot=tmp_path / "f.json",
        unleash_url="https://unleash.example/api",
        unleash_token="default:production.secret",  # noqa: S106 - a fake token
        app_name="gate",
        environment="production",
        disk_copy=tmp_path / "copy.json",
        fallback=Mode.OFF,
        on_error="fallback",
    )


def test_cli_values_win_over_the_environment(tmp_path: Path) -> None:
    """A value given on the command line beats its environment variable."""
    environ = {"COVERAGE_GATE_FLAGS": "/env.json", "UNLEASH_URL": "http://env", "HOME": "/h"}
    settings = settings_from_env(
        environ, snapshot=tmp_path / "cli.json", unleash_url="http://cli", on_error="fallback"
    )
    assert (settings.snapshot, settings.unleash_url, settings.on_error) == (
        tmp_path / "cli.json",
        "http://cli",
        "fallback",
    )


def test_default_disk_copy_is_in_the_user_cache_and_can_be_disabled() -> None:
    """The disk copy defaults to ~/.cache/coverage-gate/flags.json; an empty value disables it."""
    assert settings_from_env({"HOME": "/home/ci"}).disk_copy == Path(
        "/home/ci/.cache/coverage-gate/flags.json"
    )
    assert settings_from_env({"COVERAGE_GATE_FLAGS_DISK_COPY": ""}).disk_copy is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("", None), ("auto", None), ("OFF", Mode.OFF), ("enforce", Mode.ENFORCE)],
)
def test_override_from_env(value: str | None, expected: Mode | None) -> None:
    """COVERAGE_GATE_MODE: unset, empty or auto means no override; a mode name overrides."""
    environ = {} if value is None else {"COVERAGE_GATE_MODE": value}
    assert override_from_env(environ) == expected


def test_bad_mode_in_env_is_a_configuration_error() -> None:
    """A mode name that does not exist is refused, naming the variable."""
    with pytest.raises(FlagConfigError, match="COVERAGE_GATE_MODE"):
        override_from_env({"COVERAGE_GATE_MODE": "strict"})
    with pytest.raises(FlagConfigError, match="on-error"):
        settings_from_env({"COVERAGE_GATE_FLAGS_ON_ERROR": "ignore"})


def test_no_source_configured_falls_back_and_says_so() -> None:
    """With no snapshot and no server, the fallback answers and the detail says why."""
    result = resolve_mode("acme/web", FlagSettings())
    assert (result.mode, result.source) == (Mode.SHADOW, ModeSource.FALLBACK)
    assert "no flag source configured" in result.detail


# --- atomic disk writes -------------------------------------------------------------------------


def test_write_atomically_replaces_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    """The disk copy is replaced in one step; no temporary file survives, success or failure."""
    target = tmp_path / "deep" / "flags.json"
    write_atomic(target, '{"features": []}', make_parents=True)
    write_atomic(target, '{"version": 2, "features": []}', make_parents=True)
    assert json.loads(target.read_text("utf-8")) == {"version": 2, "features": []}
    with pytest.raises(TypeError):
        write_atomic(target, 42, make_parents=True)  # type: ignore[arg-type]
    assert json.loads(target.read_text("utf-8")) == {"version": 2, "features": []}
    assert [p.name for p in target.parent.iterdir()] == ["flags.json"]


# --- never enforce by accident --------------------------------------------------------------------

NOT_ENFORCE = st.text(max_size=12).filter(lambda name: name != "enforce")
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def broken_or_enforce_free_documents(draw: st.DrawFn) -> str:
    """Snapshot texts that must never yield enforce: garbage, arbitrary JSON, documents without
    the flag, with the flag disabled, or with only non-enforce variants."""
    kind = draw(st.sampled_from(["text", "json", "absent", "disabled", "other-variants"]))
    if kind == "text":
        return draw(st.text(max_size=40))
    if kind == "json":
        return json.dumps(draw(JSON_VALUES))
    names = draw(st.lists(NOT_ENFORCE, min_size=1, max_size=3))
    strategies = [rollout(draw(st.integers(0, 100)), variants=[variant(n) for n in names])]
    if kind == "absent":
        return json.dumps(document(feature([enforce_strategy(["r/x"])], name="another.flag")))
    if kind == "disabled":
        return json.dumps(document(feature([enforce_strategy(["r/x"])], enabled=False)))
    return json.dumps(document(feature(strategies)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=broken_or_enforce_free_documents(),
    repo=st.sampled_from(["r/x", "acme/payments", "a/b"]),
    fallback=st.sampled_from([Mode.OFF, Mode.SHADOW]),
    on_error=st.sampled_from(["fail", "fallback"]),
)
def test_a_missing_or_broken_flag_never_enforces(
    tmp_path_factory: pytest.TempPathFactory, text: str, repo: str, fallback: Mode, on_error: str
) -> None:
    """No missing, disabled, unknown-variant or corrupt flag ever yields enforce: either a
    configuration error is raised or the mode is off/shadow."""
    path = tmp_path_factory.mktemp("never") / "flags.json"
    path.write_text(text, "utf-8")
    settings_ = FlagSettings(snapshot=path, fallback=fallback, on_error=on_error)  # type: ignore[arg-type]
    try:
        result = resolve_mode(repo, settings_)
    except FlagConfigError:
        assert on_error == "fail"
        return
    assert result.mode is not Mode.ENFORCE


# --- the CLI sub-app ------------------------------------------------------------------------------

runner = CliRunner()


def invoke(args: list[str], env: dict[str, str] | None = None) -> Any:
    base = {"COVERAGE_GATE_FLAGS_DISK_COPY": "", "UNLEASH_URL": "", "COVERAGE_GATE_MODE": ""}
    return runner.invoke(flags_app, args, env={**base, **(env or {})})


def test_cli_prints_mode_variant_and_source_as_json(tmp_path: Path) -> None:
    """`flags --repo R --format json` prints the effective mode, variant and answering source."""
    path = snapshot(tmp_path, document(feature([enforce_strategy(ENFORCED)])))
    result = invoke(["--repo", "acme/payments", "--flags", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "repo": "acme/payments",
        "flag": FLAG,
        "mode": "enforce",
        "source": "snapshot",
        "variant": "enforce",
        "flag_found": True,
        "detail": f"flag {FLAG!r} in snapshot {path}: variant 'enforce'",
        "depth_policy": "accept",
        "depth_policy_source": "default",
        "unknown_policy": "accept",
        "unknown_policy_source": "default",
        "citation_policy": "downgrade",
        "citation_policy_source": "default",
        "mutation_policy": "accept",
        "mutation_policy_source": "default",
    }


def test_cli_text_output_and_env_snapshot(tmp_path: Path) -> None:
    """The snapshot can come from COVERAGE_GATE_FLAGS; text output names mode and source."""
    path = snapshot(tmp_path, document(feature([enforce_strategy(ENFORCED)])))
    result = invoke(["--repo", "acme/web"], env={"COVERAGE_GATE_FLAGS": str(path)})
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "acme/web: off (source snapshot, variant disabled)"


def test_cli_override_from_option_and_env() -> None:
    """--mode and COVERAGE_GATE_MODE are overrides; --mode wins."""
    by_env = invoke(["--repo", "a/b", "--format", "json"], env={"COVERAGE_GATE_MODE": "off"})
    assert json.loads(by_env.stdout)["source"] == "override"
    both = invoke(
        ["--repo", "a/b", "--mode", "enforce", "--format", "json"],
        env={"COVERAGE_GATE_MODE": "off"},
    )
    assert json.loads(both.stdout)["mode"] == "enforce"


def test_cli_corrupt_snapshot_exits_with_the_configuration_code(tmp_path: Path) -> None:
    """A corrupt snapshot exits 4 and names the file on stderr, unless --flags-on-error fallback."""
    path = snapshot(tmp_path, "{not json")
    failed = invoke(["--repo", "a/b", "--flags", str(path)])
    assert failed.exit_code == EXIT_BAD_CONFIG
    assert str(path) in failed.stderr
    assert failed.stdout == ""
    tolerated = invoke(
        ["--repo", "a/b", "--flags", str(path), "--flags-on-error", "fallback", "--format", "json"]
    )
    assert tolerated.exit_code == 0
    assert json.loads(tolerated.stdout)["source"] == "fallback"


def test_cli_requires_a_repository() -> None:
    """Without --repo and without a subcommand there is nothing to answer: a usage error."""
    assert invoke([]).exit_code == EXIT_USAGE


def test_cli_pull_without_a_server_is_a_configuration_error(tmp_path: Path) -> None:
    """`flags pull` needs UNLEASH_URL or --unleash-url."""
    result = invoke(["pull", "-o", str(tmp_path / "out.json")])
    assert result.exit_code == EXIT_BAD_CONFIG
    assert "UNLEASH_URL" in result.stderr


def test_sub_app_mounts_into_the_main_cli(tmp_path: Path) -> None:
    """The lead mounts flags_app with add_typer(name="flags"): both forms keep working there."""
    app = typer.Typer()

    @app.command()
    def other() -> None:  # a second command so that typer keeps sub-command names
        """Unrelated."""

    app.add_typer(flags_app, name="flags")
    path = snapshot(tmp_path, document(feature([enforce_strategy(ENFORCED)])))
    env = {"COVERAGE_GATE_FLAGS_DISK_COPY": "", "UNLEASH_URL": "", "COVERAGE_GATE_MODE": ""}
    shown = runner.invoke(app, ["flags", "--repo", "acme/billing", "--flags", str(path)], env=env)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("acme/billing: enforce")
    pulled = runner.invoke(app, ["flags", "pull", "-o", str(tmp_path / "o.json")], env=env)
    assert pulled.exit_code == EXIT_BAD_CONFIG


def test_a_server_url_that_does_not_parse_is_never_an_internal_error(tmp_path: Path) -> None:
    """``UNLEASH_URL='http://[::1'`` with the disk copy on: the mode falls back (exit 0, the
    reason said) and ``flags pull`` is a configuration error (exit 4)."""
    env = {"UNLEASH_URL": "http://[::1", "COVERAGE_GATE_FLAGS_DISK_COPY": str(tmp_path / "f.json")}
    shown = invoke(["--repo", "acme/payments", "--format", "json"], env)
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["source"] == "fallback"
    pulled = invoke(["pull", "-o", str(tmp_path / "snapshot.json")], env)
    assert pulled.exit_code == 4, pulled.output
    assert "http://[::1" in pulled.output
