"""The documentation's tables stay true: exit codes, formats, commands, metrics, versions."""

from __future__ import annotations

import re

from typer.main import get_command

from coverage_gate.adapters import ADAPTERS, DOCUMENT_FORMATS
from coverage_gate.cli import app
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.metrics import INSTRUMENTS
from tests._support.docs import all_text, rendered_section

README = all_text()


def table_after(heading: str, page: str | None = None) -> list[list[str]]:
    rows = [
        line
        for line in rendered_section(heading, page).splitlines()
        if line.startswith("| ") and "---" not in line
    ]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[1:]]


def test_exit_code_table_matches_the_code() -> None:
    documented = {int(row[0]) for row in table_after("Exit codes", "README.md")}
    assert documented == {int(code) for code in ExitCode}


def test_exit_codes_are_in_the_top_level_help() -> None:
    help_text = app.info.help or ""
    for code in ExitCode:
        assert f"{int(code)} " in help_text


def test_every_format_is_documented() -> None:
    documented = {row[0].strip("`") for row in table_after("Source formats")}
    assert documented == set(ADAPTERS) | set(DOCUMENT_FORMATS)


def test_every_command_is_mentioned() -> None:
    command = get_command(app)
    names = set(getattr(command, "commands", {}))
    missing = [name for name in names if not re.search(rf"coverage-gate {name}\b", README)]
    assert not missing, f"README does not mention: {missing}"


def test_every_metric_is_in_the_metric_table() -> None:
    """The table lists each instrument with its kind, unit, Prometheus name and attributes."""
    rows = {row[0].strip("`"): row for row in table_after("Metrics")}
    assert set(rows) == {spec.name for spec in INSTRUMENTS}
    for spec in INSTRUMENTS:
        _, kind, unit, prometheus, attributes, _ = rows[spec.name]
        assert (kind, unit.strip("`")) == (spec.kind.value, spec.unit), spec.name
        assert prometheus.split(",")[0].strip().strip("`") == spec.prometheus_series[0]
        assert [a.strip() for a in attributes.split(",")] == list(spec.attributes), spec.name


def test_the_documented_contract_versions_are_the_codes() -> None:
    """The README names the versions the evidence, decision and report documents are written
    at: the versions this code writes."""
    from coverage_gate.contracts.defaults import EVIDENCE_VERSION  # noqa: PLC0415
    from coverage_gate.contracts.model import DECISION_VERSION  # noqa: PLC0415
    from coverage_gate.rollout.report import REPORT_VERSION  # noqa: PLC0415

    text = README
    assert f'"schema": "coverage-gate/evidence"`, `"version": "{EVIDENCE_VERSION}"' in text
    assert f'"schema": "coverage-gate/decision"`, `"version": "{DECISION_VERSION}"' in text
    assert f"report version {REPORT_VERSION}" in text
