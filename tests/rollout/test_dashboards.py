"""Static checks of dashboards/: every metric and label a panel or rule queries exists in the
instrument list of ``coverage_gate.rollout.metrics`` (under its Prometheus name), label values of closed
sets are real values, and the rules pass ``promtool check rules`` and ``promtool test rules``.

The rules file is read with a small extractor of ``record``/``alert``/``expr`` entries (the
project has no YAML parser as a dependency); the Prometheus integration test checks that what it
extracts is exactly what a real Prometheus loaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.contracts.model import (
    Capability,
    CitationOutcome,
    CitationReason,
    Depth,
    DepthPolicy,
    FileContent,
    FileStatus,
    Mode,
    ModeSource,
    UnknownReason,
)
from coverage_gate.rollout.metrics import (
    CAPABILITY_ABSENT,
    CITATION_NO_REASON,
    CITATION_NOT_REPLAYED,
    CITATION_OVER_LIMIT,
    INSTRUMENTS,
    ErrorKind,
    InstrumentSpec,
    Kind,
    ReviewOutcome,
)

ROOT = Path(__file__).resolve().parents[2]
DASHBOARDS = ROOT / "dashboards"
DASHBOARD = DASHBOARDS / "coverage-gate.json"
RULES = DASHBOARDS / "prometheus-rules.yml"
RULE_TESTS = DASHBOARDS / "prometheus-rules.test.yml"
COLLECTOR = DASHBOARDS / "otelcol.yaml"

REQUIRE = os.environ.get("CG_REQUIRE_INTEGRATION") == "1"

#: Prometheus series name → the instrument it comes from.
SERIES: dict[str, InstrumentSpec] = {
    name: spec for spec in INSTRUMENTS for name in spec.prometheus_series
}

#: Label values that form closed sets.
CLOSED_VALUES: dict[str, set[str]] = {
    "outcome": {o.value for o in ReviewOutcome},
    "mode": {x.value for x in Mode},
    "mode_source": {x.value for x in ModeSource},
    "capability": {x.value for x in Capability} | {CAPABILITY_ABSENT},
    "complete": {"true", "false"},
    "truncated": {"true", "false"},
    "kind": {x.value for x in ErrorKind},
    "unknown_reason": {x.value for x in UnknownReason},
    "depth": {x.value for x in Depth},
    "depth_policy": {x.value for x in DepthPolicy},
    # A claimed file with depth is verified or shallow under the policy in force.
    "status": {FileStatus.VERIFIED.value, FileStatus.SHALLOW.value},
    "would_downgrade": {"true", "false"},
    "citation_outcome": {x.value for x in CitationOutcome} | {CITATION_NOT_REPLAYED},
    "citation_reason": {x.value for x in CitationReason}
    | {CITATION_NO_REASON, CITATION_OVER_LIMIT},
    "uncorroborated": {"true", "false"},
    "evidence_available": {"true", "false"},
    "content": {x.value for x in FileContent},
}

_MATCHER = re.compile(r'([a-z_][a-z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"')
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)")
_LEGEND = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


# --- reading the files ------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    kind: str  # record | alert
    name: str
    expr: str


def read_rules(text: str) -> list[Rule]:
    """``record``/``alert`` entries and their ``expr`` (plain or a folded ``>`` block)."""
    rules: list[Rule] = []
    lines = text.splitlines()
    current: tuple[str, str] | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        head = re.match(r"\s*-\s*(record|alert):\s*(\S+)\s*$", line)
        expr = re.match(r"(\s*)expr:\s*(.*)$", line)
        if head:
            current = (head.group(1), head.group(2))
        elif expr and current:
            indent, rest = len(expr.group(1)), expr.group(2).strip()
            body: list[str] = []
            if rest in {">", "|", ">-", "|-"}:
                while i + 1 < len(lines) and (
                    not lines[i + 1].strip()
                    or len(lines[i + 1]) - len(lines[i + 1].lstrip()) > indent
                ):
                    i += 1
                    body.append(lines[i].strip())
            else:
                body.append(rest)
            rules.append(Rule(current[0], current[1], " ".join(b for b in body if b)))
            current = None
        i += 1
    return rules


def dashboard() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return document


def panel_targets(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(panel title, expr, legend) of every target."""
    return [
        (panel["title"], target["expr"], target.get("legendFormat", ""))
        for panel in document["panels"]
        for target in panel.get("targets", [])
    ]


def _raw_selectors(expr: str) -> list[tuple[str, str]]:
    """Selectors with their matcher text taken from the original (strings intact)."""
    pairs: list[tuple[str, str]] = []
    for match in re.finditer(r"\b([a-z_][a-z0-9_:]*)\s*(\{[^}]*\})?", expr):
        name = match.group(1)
        if name.startswith("coverage_gate_") or name.count(":") == 2:
            pairs.append((name, match.group(2) or ""))
    return pairs


def grouping_labels(expr: str) -> set[str]:
    return {
        label.strip()
        for group in _GROUPING.findall(expr)
        for label in group.split(",")
        if label.strip()
    }


def recorded_labels(rules: list[Rule]) -> dict[str, set[str]]:
    """Labels a recording rule's output carries: the ``by`` labels of its expression."""
    return {r.name: grouping_labels(r.expr) for r in rules if r.kind == "record"}


def problems(expr: str, rules: list[Rule]) -> list[str]:
    """What is wrong with one query: unknown series, unknown labels, values outside a closed set,
    grouping by labels its inputs do not carry."""
    found: list[str] = []
    recorded = recorded_labels(rules)
    available: set[str] = set()
    for name, matchers in _raw_selectors(expr):
        if name in SERIES:
            spec = SERIES[name]
            labels = set(spec.attributes) | (
                {"le"} if spec.kind is Kind.HISTOGRAM and name.endswith("_bucket") else set()
            )
        elif name in recorded:
            labels = recorded[name]
        else:
            found.append(f"unknown series {name}")
            continue
        available |= labels
        for label, op, value in _MATCHER.findall(matchers):
            if label not in labels:
                found.append(f"{name} has no label {label}")
            elif label in CLOSED_VALUES and not value.startswith("$"):
                values = set(value.split("|")) if op in {"=~", "!~"} else {value}
                unknown = values - CLOSED_VALUES[label]
                if unknown:
                    found.append(f"{label} has no value {sorted(unknown)}")
    missing = grouping_labels(expr) - available
    if missing:
        found.append(f"grouping by labels no input carries: {sorted(missing)}")
    return found


# --- the checker can fail ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "complaint"),
    [
        (
            "sum(rate(coverage_gate_reviewz_total[5m]))",
            "unknown series coverage_gate_reviewz_total",
        ),
        ('coverage_gate_reviews_total{path="a.py"}', "has no label path"),
        ('coverage_gate_reviews_total{outcome="approved"}', "outcome has no value ['approved']"),
        ('coverage_gate_reviews_total{mode=~"shadow|dark"}', "mode has no value ['dark']"),
        (
            'coverage_gate_depth_files_total{depth_policy="some-hunks"}',
            "depth_policy has no value ['some-hunks']",
        ),
        ("sum by (agent) (coverage_gate_reviews_total)", "grouping by labels no input carries"),
        ('coverage_gate_reconcile_duration_seconds_sum{le="1"}', "has no label le"),
        (
            'coverage_gate_citations_total{citation_outcome="passed"}',
            "citation_outcome has no value ['passed']",
        ),
        ("repository:unknown:ratio_1h", "unknown series repository:unknown:ratio_1h"),
        (
            'coverage_gate_content_files_total{content="mismatched"}',
            "content has no value ['mismatched']",
        ),
        (
            "sum by (repository, format) (coverage_gate_claimed_files_total)",
            "grouping by labels no input carries: ['format']",
        ),
    ],
)
def test_checker_rejects_what_prometheus_would_not_hold(expr: str, complaint: str) -> None:
    """The static check itself: each kind of mistake is reported."""
    assert any(complaint in p for p in problems(expr, read_rules(RULES.read_text())))


# --- the dashboard ----------------------------------------------------------------------------


def test_every_panel_query_uses_only_existing_series_labels_and_values() -> None:
    rules = read_rules(RULES.read_text())
    targets = panel_targets(dashboard())
    assert targets
    for title, expr, _ in targets:
        assert problems(expr, rules) == [], title


def test_every_legend_label_survives_the_panel_aggregation() -> None:
    """``{{label}}`` in a legend must be one of the labels the query keeps."""
    for title, expr, legend in panel_targets(dashboard()):
        assert set(_LEGEND.findall(legend)) <= grouping_labels(expr), title


def test_dashboard_has_datasource_and_repository_variables_used_by_every_panel() -> None:
    document = dashboard()
    variables = {v["name"]: v for v in document["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert variables["repository"]["type"] == "query"
    assert "coverage_gate_reviews_total" in variables["repository"]["definition"]
    for panel in document["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}", panel["title"]
            assert '$repository"' in target["expr"], panel["title"]


def test_dashboard_covers_the_rollout_questions() -> None:
    """The panels the rollout needs are there (by the series and labels they query)."""
    exprs = " ".join(expr for _, expr, _ in panel_targets(dashboard()))
    assert 'mode="shadow", outcome="would_downgrade"' in exprs
    assert 'mode="enforce", outcome="downgraded"' in exprs
    assert "coverage_gate_unsupported_files_total" in exprs
    assert "by (agent, format)" in exprs
    assert "by (mode_source)" in exprs
    assert "coverage_gate_reconcile_duration_seconds_bucket" in exprs
    assert "sum by (repository, depth) (increase(coverage_gate_depth_files_total" in exprs
    assert (
        'sum by (repository, depth_policy) (increase(coverage_gate_depth_policy_approvals_total{would_downgrade="true"'
        in exprs
    )
    assert (
        "sum by (repository, citation_outcome, citation_reason) "
        "(increase(coverage_gate_citations_total" in exprs
    )
    assert 'coverage_gate_citations_total{citation_outcome="failed"' in exprs


def content_panel() -> dict[str, Any]:
    """The panel of the content mismatch and content-credit rates."""
    (panel,) = [
        p
        for p in dashboard()["panels"]
        if any("coverage_gate_content_files_total" in t["expr"] for t in p.get("targets", []))
    ]
    return panel


def test_the_content_panel_plots_both_rates_by_repository_and_format() -> None:
    """One target per rate, each of all claimed files the metric counts (every content outcome)
    by repository and format, shown as a share; the legends tell the two apart."""
    panel = content_panel()
    assert panel["fieldConfig"]["defaults"]["unit"] == "percentunit"
    targets = {t["refId"]: t for t in panel["targets"]}
    assert set(targets) == {"A", "B"}
    whole = (
        "sum by (repository, format) (increase("
        'coverage_gate_content_files_total{repository=~"$repository"}[$window]))'
    )
    for ref, outcome, word in (("A", "mismatch", "mismatch"), ("B", "via_content", "credit")):
        expr, legend = targets[ref]["expr"], targets[ref]["legendFormat"]
        part = f'coverage_gate_content_files_total{{content="{outcome}", repository=~'
        assert f"sum by (repository, format) (increase({part}" in expr, ref
        assert expr.endswith(f"/\n{whole}"), ref
        assert grouping_labels(expr) == {"repository", "format"}, ref
        assert word in legend and "{{repository}}" in legend and "{{format}}" in legend, ref


def drift_panel() -> dict[str, Any]:
    """The panel of the streams the gate did not fully understand, by client version."""
    (panel,) = [
        p
        for p in dashboard()["panels"]
        if any("coverage_gate_streams_total" in t["expr"] for t in p.get("targets", []))
    ]
    return panel


def test_the_drift_panel_plots_shares_of_streams_by_format_and_client_version() -> None:
    """Two shares of all reviewer streams per format and client version: drift that could hide
    reads, and any drift; the legends name both labels."""
    panel = drift_panel()
    assert panel["title"] == "Streams the gate did not fully understand, by client version"
    assert panel["fieldConfig"]["defaults"]["unit"] == "percentunit"
    targets = {t["refId"]: t for t in panel["targets"]}
    whole = (
        "sum by (format, client_version) (increase("
        'coverage_gate_streams_total{repository=~"$repository"}[$window]))'
    )
    for ref, selector in (("A", 'drift="hides_reads"'), ("B", 'drift!="none"')):
        expr, legend = targets[ref]["expr"], targets[ref]["legendFormat"]
        assert f"coverage_gate_streams_total{{{selector}, repository=~" in expr, ref
        assert expr.endswith(f"/\n{whole}"), ref
        assert grouping_labels(expr) == {"format", "client_version"}, ref
        assert "{{format}}" in legend and "{{client_version}}" in legend, ref
    assert set(targets) == {"A", "B"}


def test_panel_ids_are_unique() -> None:
    ids = [panel["id"] for panel in dashboard()["panels"]]
    assert len(ids) == len(set(ids))


# --- the rules --------------------------------------------------------------------------------


def test_every_rule_uses_only_existing_series_labels_and_values() -> None:
    rules = read_rules(RULES.read_text())
    assert {r.kind for r in rules} == {"record", "alert"}
    for rule in rules:
        assert problems(rule.expr, rules) == [], rule.name


def test_recording_rule_names_follow_level_metric_operations() -> None:
    for rule in read_rules(RULES.read_text()):
        if rule.kind == "record":
            assert re.fullmatch(r"[a-z_]+:coverage_gate_[a-z_]+:[a-z0-9_]+", rule.name)


def test_alert_annotations_use_labels_the_alert_keeps() -> None:
    text = RULES.read_text()
    rules = read_rules(text)
    recorded = recorded_labels(rules)
    for rule in rules:
        if rule.kind != "alert":
            continue
        kept = grouping_labels(rule.expr) | {
            label for name, _ in _raw_selectors(rule.expr) for label in recorded.get(name, set())
        }
        block = text.split(f"alert: {rule.name}", 1)[1].split("- alert:", 1)[0]
        used = set(re.findall(r"\$labels\.([a-z_]+)", block))
        assert used <= kept, rule.name


def test_collector_example_converts_deltas_before_prometheus() -> None:
    """The pipeline to Prometheus runs deltatocumulative before the prometheus exporter."""
    text = COLLECTOR.read_text()
    pipeline = text.split("    metrics:\n", 1)[1].split("\n    metrics/", 1)[0]
    assert "processors: [transform/restamp_deltas, deltatocumulative, batch]" in pipeline
    assert "exporters: [prometheus]" in pipeline
    assert "prometheusremotewrite:" in text
    assert "receivers:\n  otlp:" in text


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if REQUIRE:
            pytest.fail(
                "promtool is required (CG_REQUIRE_INTEGRATION=1); run .ci/setup-prometheus.sh"
            )
        pytest.skip("promtool not installed; .ci/setup-prometheus.sh installs it")
    return found


def test_promtool_check_rules() -> None:
    """Valid rules, and as many as the extractor here reads (so the static checks saw them all)."""
    result = subprocess.run(
        [_promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.search(r"(\d+) rules found", result.stdout)
    assert found is not None
    assert int(found.group(1)) == len(read_rules(RULES.read_text()))


def test_promtool_test_rules() -> None:
    """The rule unit tests: recorded ratios and when each alert fires."""
    result = subprocess.run(
        [_promtool(), "test", "rules", RULE_TESTS.name],
        capture_output=True,
        text=True,
        check=False,
        cwd=DASHBOARDS,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout
