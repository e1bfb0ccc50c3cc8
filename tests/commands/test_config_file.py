"""The repository's settings file (``.coverage-gate.toml``, or ``[tool.coverage-gate]`` in
``pyproject.toml``): one key per environment variable, precedence command line > environment >
file > flag payload > default, each held by a test; ``coverage-gate config`` says where each
setting came from; a broken file exits 4 naming the file and the line. Whole processes, run in
folders the tests made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coverage_gate.edges.config_file import SETTINGS
from tests.conftest import run_cli
from tests.core.test_policies import features, payload, snapshot


def flags(folder: Path, *args: str, **env: str) -> str:
    done = run_cli("flags", "--repo", "acme/api", *args, cwd=folder, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_precedence_command_line_environment_file_payload_default(tmp_path: Path) -> None:
    body = payload({"unknown_policy": "accept", "depth_policy": "all-hunks"})
    flags_file = snapshot(tmp_path, features(body))
    (tmp_path / ".coverage-gate.toml").write_text(
        f'flags = "{flags_file}"\nmode = "enforce"\nunknown-policy = "downgrade"\n'
    )
    # the file over the payload (unknown policy: the file is the repository's committed
    # environment, so its source reads env), the payload over the default (depth policy)
    said = flags(tmp_path, "--mode", "auto")
    assert "unknown policy downgrade (env)" in said
    assert "depth policy all-hunks (payload)" in said
    # the file's mode over the flag; the environment over the file; the command line over both
    assert flags(tmp_path).startswith("acme/api: enforce (source override")
    assert flags(tmp_path, COVERAGE_GATE_MODE="shadow").startswith("acme/api: shadow")
    assert flags(tmp_path, "--mode", "off", COVERAGE_GATE_MODE="shadow").startswith("acme/api: off")
    assert "unknown policy accept" in flags(tmp_path, COVERAGE_GATE_UNKNOWN_POLICY="accept")


def test_a_pyproject_table_is_read_and_config_says_where_each_setting_came_from(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.coverage-gate]\ndepth-policy = "any-hunk"\nquiet = true\n'
    )
    done = run_cli("config", cwd=tmp_path, env={"COVERAGE_GATE_FLAG_NAME": "my.flag"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"settings file: {tmp_path / 'pyproject.toml'}"
    said = {line.split()[0]: line for line in lines[1:]}
    assert set(said) == set(SETTINGS)
    assert said["depth-policy"].endswith("= any-hunk  (pyproject.toml:5)")
    assert said["quiet"].endswith("= 1  (pyproject.toml:6)")
    assert said["flag-name"].endswith("= my.flag  (environment COVERAGE_GATE_FLAG_NAME)")
    assert "not set" in said["mode"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('mode = "enforce"\nmode-policy = "x"\n', "line 2: key 'mode-policy' is not a setting"),
        ("mode = enforce\n", "(at line 1, column 8)"),
        ('\nunleash-api-token = "t"\n', "line 2: key 'unleash-api-token': a secret"),
        ("quiet = 1\n", "line 1: key 'quiet': expected a string, not int"),
    ],
)
def test_a_broken_file_exits_4_naming_the_file_and_the_line(
    tmp_path: Path, text: str, said: str
) -> None:
    (tmp_path / ".coverage-gate.toml").write_text(text)
    for command in (["config"], ["flags", "--repo", "acme/api"]):
        done = run_cli(*command, cwd=tmp_path, env={})
        assert done.returncode == 4
        assert done.stdout == ""
        assert f"settings file {tmp_path / '.coverage-gate.toml'}" in done.stderr
        assert said in done.stderr, done.stderr


def test_without_a_file_nothing_changes(tmp_path: Path) -> None:
    done = run_cli("config", cwd=tmp_path, env={})
    assert done.returncode == 0
    assert done.stdout.splitlines()[0] == f"settings file: none in {tmp_path}"
    assert json.loads(run_cli("schema", "evidence", cwd=tmp_path).stdout)
