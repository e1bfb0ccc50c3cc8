"""The client releases CI installs (``.ci/setup-clients.sh``) are the ones
``coverage_gate.contracts.client_versions`` says each format's adapter was checked with."""

from __future__ import annotations

import re
from pathlib import Path

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.client_versions import CHECKED, PACKAGE
from coverage_gate.core.versions import version_key

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "setup-clients.sh"
FORMATS = {
    "pi-rpc",
    "claude-code",
    "codex-rollout",
    "codex-exec",
    "opencode",
    "copilot-cli",
    "gemini-cli",
    "qwen-code",
}


def declared(name: str) -> dict[str, str]:
    """The script's array ``name`` (``NEWEST`` or ``OLDER``): package → version."""
    text = SCRIPT.read_text()
    found = re.search(rf"^{name}=\(\n(.*?)^\)$", text, re.MULTILINE | re.DOTALL)
    assert found, f"{SCRIPT} declares no {name}=( ... )"
    specs = [line.strip() for line in found.group(1).splitlines() if line.strip()]
    pairs = [re.fullmatch(r'"(@?[^@"]+)@([^@"]+)"', spec) for spec in specs]
    assert all(pairs), specs
    versions = {pair.group(1): pair.group(2) for pair in pairs if pair}
    assert len(versions) == len(specs), f"a package twice in {name}: {specs}"
    return versions


def test_the_script_declares_each_version_set_once() -> None:
    text = SCRIPT.read_text()
    for name in ("NEWEST", "OLDER"):
        assert len(re.findall(rf"^{name}=\(", text, re.MULTILINE)) == 1, name
    rest = re.sub(r"^(NEWEST|OLDER)=\(\n.*?^\)$", "", text, flags=re.MULTILINE | re.DOTALL)
    for version in {*declared("NEWEST").values(), *declared("OLDER").values()}:
        written = re.search(rf"(?<![\w.]){re.escape(version)}(?![\w.])", rest)
        assert written is None, f"{version} is written outside NEWEST and OLDER"


def test_checked_holds_the_older_and_newest_release_the_script_installs() -> None:
    newest, older = declared("NEWEST"), declared("OLDER")
    assert set(newest) == set(older) == set(PACKAGE.values())
    assert set(CHECKED) == set(PACKAGE) == FORMATS
    for fmt, (oldest, latest) in CHECKED.items():
        package = PACKAGE[fmt]
        assert (oldest, latest) == (older[package], newest[package]), fmt


def test_each_range_is_an_older_release_then_a_newer_one() -> None:
    for fmt, (oldest, latest) in CHECKED.items():
        low, high = version_key(oldest), version_key(latest)
        assert low is not None and high is not None, fmt
        assert low < high, fmt


def test_every_checked_format_has_an_adapter() -> None:
    assert set(CHECKED) <= set(ADAPTERS)


def test_the_ci_step_that_installs_the_clients_names_both_releases_of_each() -> None:
    run = (SCRIPT.parent / "run").read_text()
    (step,) = [line for line in run.splitlines() if line.startswith('step "review clients')]
    for oldest, newest in CHECKED.values():
        assert f"{newest} and {oldest}" in step, (newest, oldest)
