"""The instrument list, the outcome of a decision, and what a decision records on metrics and
spans. Local providers with in-memory readers and exporters; nothing global."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from coverage_gate.contracts import review_span as span_names
from coverage_gate.contracts.model import (
    Capability,
    DecisionDocument,
    Depth,
    DepthPolicy,
    Mode,
    ModeSource,
    UnknownPolicy,
    Verdict,
)
from coverage_gate.rollout import metrics as m
from coverage_gate.rollout.metrics import INSTRUMENTS, Kind, ReviewOutcome
from coverage_gate.rollout.simulation import (
    FABRICATED_CITATION,
    REAL_CITATION,
    ReviewerSpec,
    decide,
)

SCOPE = ["src/api.py", "src/db.py", "README.md"]
HONEST = ReviewerSpec("security", claimed=SCOPE, read=SCOPE)
LIAR = ReviewerSpec("security", claimed=SCOPE, read=["src/api.py"])
BLIND = ReviewerSpec(
    "style", claimed=SCOPE, read=(), source="codex-exec", capability=Capability.NONE
)

# Metric attribute keys that may never appear: they are unbounded (paths, ids, revisions).
FORBIDDEN_KEYS = {"path", "file", "revision", "sha", "trace_id", "call_id", "pr", "user"}


# --- helpers ----------------------------------------------------------------------------------


def _points(reader: InMemoryMetricReader) -> Iterator[tuple[str, dict[str, Any], Any]]:
    data = reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    yield metric.name, dict(point.attributes or {}), point


def _sum(reader: InMemoryMetricReader, name: str, **attributes: str) -> int:
    return sum(
        p.value
        for n, a, p in _points(reader)
        if n == name and all(a.get(k) == v for k, v in attributes.items())
    )


def _paths(value: object) -> list[str]:
    assert isinstance(value, list | tuple)
    return [str(v) for v in value]


def _record(decision: DecisionDocument, **kwargs: Any) -> InMemoryMetricReader:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    m.record_decision(provider.get_meter("t"), decision, duration_s=0.02, **kwargs)
    return reader


def _span(decision: DecisionDocument, **kwargs: Any) -> ReadableSpan:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    m.record_reconcile_span(provider.get_tracer("t"), decision, duration_s=0.5, **kwargs)
    (span,) = exporter.get_finished_spans()
    return span


# --- the instrument list ----------------------------------------------------------------------


def test_instrument_names_follow_opentelemetry_naming() -> None:
    """Dotted lower-case names in the coverage_gate namespace, UCUM units or {annotations},
    a description each, and no name twice."""
    names = [spec.name for spec in INSTRUMENTS]
    assert len(names) == len(set(names))
    for spec in INSTRUMENTS:
        assert re.fullmatch(r"coverage_gate(\.[a-z][a-z0-9_]*)+", spec.name), spec.name
        assert re.fullmatch(r"\{[a-z]+\}|s", spec.unit), spec.unit
        assert spec.description.endswith(".")
        assert spec.attributes, spec.name


def test_metric_attributes_are_low_cardinality_keys_only() -> None:
    """Never a path, id or revision as a metric attribute key."""
    for spec in INSTRUMENTS:
        assert not FORBIDDEN_KEYS & set(spec.attributes), spec.name


@pytest.mark.parametrize(
    ("name", "prometheus"),
    [
        ("coverage_gate.reviews", ("coverage_gate_reviews_total",)),
        ("coverage_gate.claimed_files", ("coverage_gate_claimed_files_total",)),
        ("coverage_gate.unsupported_files", ("coverage_gate_unsupported_files_total",)),
        ("coverage_gate.unknown_files", ("coverage_gate_unknown_files_total",)),
        ("coverage_gate.evidence.records", ("coverage_gate_evidence_records_total",)),
        (
            "coverage_gate.reconcile.duration",
            (
                "coverage_gate_reconcile_duration_seconds_bucket",
                "coverage_gate_reconcile_duration_seconds_sum",
                "coverage_gate_reconcile_duration_seconds_count",
            ),
        ),
        ("coverage_gate.mode.fallbacks", ("coverage_gate_mode_fallbacks_total",)),
        ("coverage_gate.errors", ("coverage_gate_errors_total",)),
        ("coverage_gate.depth.files", ("coverage_gate_depth_files_total",)),
        (
            "coverage_gate.depth_policy.approvals",
            ("coverage_gate_depth_policy_approvals_total",),
        ),
        ("coverage_gate.citations", ("coverage_gate_citations_total",)),
    ],
)
def test_prometheus_names_follow_the_otlp_translation(
    name: str, prometheus: tuple[str, ...]
) -> None:
    """Dots to underscores, {annotation} units dropped, s → _seconds, _total on counters."""
    (spec,) = [s for s in INSTRUMENTS if s.name == name]
    assert spec.prometheus_series == prometheus


def test_every_instrument_is_created_with_its_listed_kind_and_unit() -> None:
    """The list is the truth: what ``instruments`` creates matches it, name, kind and unit."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    inst = m.instruments(provider.get_meter("t"))
    for counter in (
        inst.reviews,
        inst.claimed_files,
        inst.unsupported_files,
        inst.unknown_files,
        inst.evidence_records,
        inst.mode_fallbacks,
        inst.errors,
        inst.depth_files,
        inst.depth_policy_approvals,
        inst.citations,
        inst.content_files,
        inst.streams,
        inst.drift,
    ):
        counter.add(1, {})
    inst.reconcile_duration.record(0.1, {})
    data = reader.get_metrics_data()
    assert data is not None
    seen = {
        metric.name: (metric.unit, type(metric.data).__name__)
        for metric in data.resource_metrics[0].scope_metrics[0].metrics
    }
    want = {
        s.name: (s.unit, "Histogram" if s.kind is Kind.HISTOGRAM else "Sum") for s in INSTRUMENTS
    }
    assert seen == want


# --- outcomes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "mode", "reviewers", "outcome"),
    [
        (Verdict.APPROVE, Mode.SHADOW, [HONEST], ReviewOutcome.KEPT),
        (Verdict.APPROVE, Mode.SHADOW, [LIAR], ReviewOutcome.WOULD_DOWNGRADE),
        (Verdict.APPROVE, Mode.OFF, [LIAR], ReviewOutcome.WOULD_DOWNGRADE),
        (Verdict.APPROVE, Mode.ENFORCE, [LIAR], ReviewOutcome.DOWNGRADED),
        (Verdict.APPROVE, Mode.ENFORCE, [HONEST, BLIND], ReviewOutcome.UNVERIFIABLE),
        (Verdict.REQUEST_CHANGES, Mode.ENFORCE, [LIAR], ReviewOutcome.NOT_APPLICABLE),
        (Verdict.COMMENT, Mode.SHADOW, [HONEST], ReviewOutcome.NOT_APPLICABLE),
        (
            Verdict.APPROVE,
            Mode.ENFORCE,
            [ReviewerSpec("security", claimed=SCOPE[:2], read=SCOPE[:2], skipped=SCOPE[2:])],
            ReviewOutcome.LEGACY_DOWNGRADED,
        ),
        (
            Verdict.APPROVE,
            Mode.SHADOW,
            [LIAR, ReviewerSpec("style", claimed=(), read=(), failed=True)],
            ReviewOutcome.LEGACY_DOWNGRADED,
        ),
    ],
)
def test_review_outcome_of_real_decisions(
    verdict: Verdict, mode: Mode, reviewers: list[ReviewerSpec], outcome: ReviewOutcome
) -> None:
    """kept / would_downgrade (shadow, off) / downgraded (enforce) / unverifiable / not an
    approve / the legacy gate downgraded it whatever the new check says."""
    decision = decide("acme/api", scope=SCOPE, reviewers=reviewers, verdict=verdict, mode=mode)
    assert m.review_outcome(decision) is outcome


def test_unknown_policy_downgrade_counts_unverifiable_claims_as_would_downgrade() -> None:
    """With the stricter per-repo policy, unavailable evidence flags the approve."""
    decision = decide(
        "acme/api",
        scope=SCOPE,
        reviewers=[BLIND],
        unknown_policy=UnknownPolicy.DOWNGRADE,
    )
    assert m.review_outcome(decision) is ReviewOutcome.WOULD_DOWNGRADE


# --- metrics ----------------------------------------------------------------------------------


def test_record_decision_counts_review_files_and_evidence() -> None:
    """One review by outcome; claimed and unsupported files per agent; one evidence record per
    reviewer with its format, capability, completeness and truncation."""
    decision = decide("acme/api", scope=SCOPE, reviewers=[LIAR, BLIND])
    reader = _record(decision, formats={"security": "pi-rpc"})

    assert (
        _sum(
            reader,
            "coverage_gate.reviews",
            owner="acme",
            repository="acme/api",
            mode="shadow",
            mode_source="snapshot",
            outcome="would_downgrade",
        )
        == 1
    )
    assert _sum(reader, "coverage_gate.claimed_files", agent="security") == 3
    assert _sum(reader, "coverage_gate.unsupported_files", agent="security") == 2
    assert _sum(reader, "coverage_gate.unsupported_files", agent="style") == 0
    assert (
        _sum(reader, "coverage_gate.unknown_files", agent="style", unknown_reason="capability_none")
        == 3
    )
    assert (
        _sum(
            reader,
            "coverage_gate.evidence.records",
            agent="security",
            format="pi-rpc",
            capability="per_file",
            complete="true",
            truncated="false",
        )
        == 1
    )
    assert (
        _sum(
            reader,
            "coverage_gate.evidence.records",
            agent="style",
            format="codex-exec",
            capability="none",
        )
        == 1
    )
    assert _sum(reader, "coverage_gate.mode.fallbacks") == 0
    (duration,) = [p for n, _, p in _points(reader) if n == "coverage_gate.reconcile.duration"]
    assert duration.count == 1
    assert duration.sum == pytest.approx(0.02)


def test_metric_attributes_never_carry_paths_or_revisions() -> None:
    """Every attribute on every recorded point comes from the instrument's listed keys, and no
    value is a path or the revision."""
    decision = decide("acme/api", scope=SCOPE, reviewers=[LIAR, BLIND], revision="f" * 40)
    reader = _record(decision)
    listed = {s.name: set(s.attributes) for s in INSTRUMENTS}
    points = list(_points(reader))
    assert points
    for name, attributes, _ in points:
        assert set(attributes) <= listed[name], name
        assert not {"f" * 40, *SCOPE} & {str(v) for v in attributes.values()}


def test_mode_fallback_is_counted_only_when_the_fallback_answered() -> None:
    decision = decide("acme/api", scope=SCOPE, reviewers=[HONEST], mode_source=ModeSource.FALLBACK)
    reader = _record(decision)
    assert _sum(reader, "coverage_gate.mode.fallbacks", repository="acme/api", mode="shadow") == 1
    assert _sum(reader, "coverage_gate.reviews", mode_source="fallback") == 1


def test_failed_reviewer_brings_no_evidence_record_and_no_claims() -> None:
    """A failed reviewer is the legacy gate's business: it is not an evidence gap."""
    failed = ReviewerSpec("style", claimed=(), read=(), failed=True, has_evidence=False)
    reader = _record(decide("acme/api", scope=SCOPE, reviewers=[HONEST, failed]))
    assert _sum(reader, "coverage_gate.evidence.records") == 1
    assert _sum(reader, "coverage_gate.evidence.records", agent="style") == 0


def test_incomplete_and_truncated_evidence_are_labelled() -> None:
    """Completeness and truncation come from why claims were unknown."""
    cut = ReviewerSpec("security", claimed=SCOPE, read=SCOPE[:1], complete=False)
    trunc = ReviewerSpec("style", claimed=SCOPE, read=SCOPE[:1], truncated=True)
    reader = _record(decide("acme/api", scope=SCOPE, reviewers=[cut, trunc]))
    assert _sum(reader, "coverage_gate.evidence.records", agent="security", complete="false") == 1
    assert _sum(reader, "coverage_gate.evidence.records", agent="style", truncated="true") == 1


def test_owner_is_the_part_before_the_slash() -> None:
    assert m.split_repo("acme/api") == ("acme", "acme/api")
    assert m.split_repo("solo") == ("", "solo")


def test_record_error_counts_by_kind() -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    m.record_error(provider.get_meter("t"), repo="acme/api", kind=m.ErrorKind.BAD_INPUT)
    assert _sum(reader, "coverage_gate.errors", repository="acme/api", kind="bad_input") == 1


# --- spans ------------------------------------------------------------------------------------


def test_reconcile_span_carries_outcome_counts_and_unsupported_paths() -> None:
    decision = decide("acme/api", scope=SCOPE, reviewers=[LIAR, BLIND], revision="abc123")
    span = _span(decision, end_time_ns=2_000_000_000)
    attributes = dict(span.attributes or {})
    assert span.name == "reconcile acme/api"
    assert attributes[span_names.A_OUTCOME] == "would_downgrade"
    assert attributes[span_names.A_REVISION] == "abc123"
    assert attributes[span_names.A_CLAIMED] == 6
    assert attributes[span_names.A_UNSUPPORTED] == 2
    assert attributes[span_names.A_UNKNOWN] == 3
    assert _paths(attributes[span_names.A_UNSUPPORTED_PATHS]) == ["README.md", "src/db.py"]
    assert span.end_time == 2_000_000_000
    assert span.start_time == 1_500_000_000
    events = {
        e.attributes[span_names.A_AGENT]: dict(e.attributes) for e in span.events if e.attributes
    }
    assert events["security"][span_names.A_WOULD_DOWNGRADE] is True
    assert events["style"][span_names.A_CAPABILITY] == "none"


def test_reconcile_span_bounds_the_unsupported_paths() -> None:
    """At most ``max_files`` paths across the span's reviewers; the rest are counted."""
    scope = [f"src/f{i:03}.py" for i in range(40)]
    liars = [
        ReviewerSpec("a", claimed=scope, read=()),
        ReviewerSpec("b", claimed=scope, read=()),
    ]
    span = _span(decide("acme/api", scope=scope, reviewers=liars), max_files=50)
    attributes = dict(span.attributes or {})
    assert len(_paths(attributes[span_names.A_UNSUPPORTED_PATHS])) == 50
    assert attributes[span_names.A_UNSUPPORTED_DROPPED] == 30
    kept = [
        len(_paths(e.attributes[span_names.A_UNSUPPORTED_PATHS]))
        for e in span.events
        if e.attributes
    ]
    dropped = [e.attributes[span_names.A_UNSUPPORTED_DROPPED] for e in span.events if e.attributes]
    assert kept == [40, 10]
    assert dropped == [0, 30]


# --- depth --------------------------------------------------------------------------------------

SKIMMER = ReviewerSpec(
    "style",
    claimed=SCOPE,
    read=SCOPE,
    depth=Depth.FULL,
    depths={"src/api.py": Depth.PARTIAL, "src/db.py": Depth.NONE},
)


def test_claimed_files_are_counted_by_depth_and_status_under_the_policy_in_force() -> None:
    """Only low-cardinality labels: depth, the policy in force and the status it gave."""
    decision = decide(
        "acme/api", scope=SCOPE, reviewers=[SKIMMER], depth_policy=DepthPolicy.ANY_HUNK
    )
    reader = _record(decision)
    name = "coverage_gate.depth.files"
    assert _sum(reader, name, depth="full", depth_policy="any-hunk", status="verified") == 1
    assert _sum(reader, name, depth="partial", depth_policy="any-hunk", status="verified") == 1
    assert _sum(reader, name, depth="none", depth_policy="any-hunk", status="shallow") == 1
    assert _sum(reader, name, agent="style", mode="shadow", repository="acme/api") == 3


def test_files_without_successful_evidence_have_no_depth_to_count() -> None:
    reader = _record(decide("acme/api", scope=SCOPE, reviewers=[LIAR, BLIND]))
    assert _sum(reader, "coverage_gate.depth.files") == 1  # LIAR's one read; no pinned diff
    assert _sum(reader, "coverage_gate.depth.files", depth="unknown") == 1


def test_each_approval_is_counted_once_under_every_depth_policy() -> None:
    """Shadow compares the policies on the same reviews: one point per policy per approval."""
    decision = decide("acme/api", scope=SCOPE, reviewers=[SKIMMER])
    reader = _record(decision)
    name = "coverage_gate.depth_policy.approvals"
    assert _sum(reader, name) == 3
    assert _sum(reader, name, depth_policy="accept", would_downgrade="false") == 1
    assert _sum(reader, name, depth_policy="any-hunk", would_downgrade="true") == 1
    assert _sum(reader, name, depth_policy="all-hunks", would_downgrade="true") == 1
    not_approve = decide("acme/api", scope=SCOPE, reviewers=[SKIMMER], verdict=Verdict.COMMENT)
    assert _sum(_record(not_approve), name) == 0


def test_reconcile_span_carries_policies_depths_and_the_comparison() -> None:
    decision = decide(
        "acme/api", scope=SCOPE, reviewers=[SKIMMER], depth_policy=DepthPolicy.ALL_HUNKS
    )
    attributes = dict(_span(decision).attributes or {})
    assert attributes[span_names.A_DEPTH_POLICY] == "all-hunks"
    assert attributes[span_names.A_DEPTH_POLICY_SOURCE] == "default"
    assert attributes[span_names.A_UNKNOWN_POLICY_SOURCE] == "default"
    assert _paths(attributes[span_names.A_WOULD_DOWNGRADE_UNDER]) == ["any-hunk", "all-hunks"]
    assert [
        attributes[f"{span_names.A_DEPTH_PREFIX}{d}"]
        for d in ("full", "partial", "none", "unknown")
    ] == [
        1,
        1,
        1,
        0,
    ]
    assert attributes[span_names.A_SHALLOW] == 2
    (event,) = [dict(e.attributes) for e in _span(decision).events if e.attributes]
    assert _paths(event[span_names.A_SHALLOW_PATHS]) == ["src/api.py", "src/db.py"]


# --- citations --------------------------------------------------------------------------------

CITING = ReviewerSpec(
    "security",
    claimed=SCOPE,
    read=SCOPE,
    citations=[
        REAL_CITATION,
        FABRICATED_CITATION,
        FABRICATED_CITATION,
        ("src/missing.py", 1, "x = 1"),  # a file it never read: uncorroborated too
        ("../etc/passwd", 1, "root"),
    ],
)


def test_citations_are_counted_by_outcome_reason_and_corroboration() -> None:
    reader = _record(decide("acme/api", scope=SCOPE, reviewers=[CITING]))
    name = "coverage_gate.citations"
    assert _sum(reader, name) == 5
    assert _sum(reader, name, citation_outcome="matched", citation_reason="none") == 1
    assert (
        _sum(
            reader,
            name,
            citation_outcome="failed",
            citation_reason="content_mismatch",
            uncorroborated="false",
        )
        == 2
    )
    assert (
        _sum(
            reader,
            name,
            citation_outcome="failed",
            citation_reason="missing_at_revision",
            uncorroborated="true",
        )
        == 1
    )
    assert _sum(reader, name, citation_outcome="rejected", citation_reason="path_rejected") == 1
    assert _sum(reader, name, agent="security", repository="acme/api", mode="shadow") == 5


def test_citations_past_the_limit_are_counted_as_not_replayed() -> None:
    spec = ReviewerSpec("security", claimed=SCOPE, read=SCOPE, citations=[REAL_CITATION] * 3)
    decision = decide("acme/api", scope=SCOPE, reviewers=[spec])
    cited = decision.reviewers[0].citations
    assert cited is not None
    over = decision.model_copy(
        update={
            "reviewers": [
                decision.reviewers[0].model_copy(
                    update={"citations": cited.model_copy(update={"over_limit": 4})}
                )
            ]
        }
    )
    reader = _record(over)
    name = "coverage_gate.citations"
    assert _sum(reader, name, citation_outcome="not_replayed", citation_reason="over_limit") == 4
    assert _sum(reader, name, citation_outcome="matched") == 3


def test_citation_metrics_carry_no_path_line_or_content() -> None:
    reader = _record(decide("acme/api", scope=SCOPE, reviewers=[CITING]))
    values = {
        str(v)
        for n, a, _ in _points(reader)
        if n == "coverage_gate.citations"
        for k, v in a.items()
        if k != "repository"  # owner/name, the one label with a slash by design
    }
    assert values
    assert not {v for v in values if "/" in v or "src" in v or "respond" in v or ":" in v}


def test_a_review_without_citations_records_no_citation_points() -> None:
    reader = _record(decide("acme/api", scope=SCOPE, reviewers=[HONEST]))
    assert not [n for n, _, _ in _points(reader) if n == "coverage_gate.citations"]


def test_reconcile_span_carries_citation_counts_policy_and_the_failed_locations() -> None:
    decision = decide("acme/api", scope=SCOPE, reviewers=[CITING, HONEST])
    span = _span(decision)
    attributes = dict(span.attributes or {})
    assert attributes[span_names.A_CITATION_POLICY] == "downgrade"
    assert attributes[span_names.A_CITATION_POLICY_SOURCE] == "default"
    assert attributes[span_names.A_CITATIONS] == 5
    assert attributes[span_names.A_CITATIONS_FAILED] == 3
    assert attributes[span_names.A_CITATIONS_WOULD_DOWNGRADE] is True
    citing, honest = [dict(e.attributes or {}) for e in span.events]
    assert (citing[span_names.A_CITATIONS], citing[span_names.A_CITATIONS_FAILED]) == (5, 3)
    assert _paths(citing[span_names.A_FAILED_CITATIONS]) == [
        "src/api.py:2",
        "src/api.py:2",
        "src/missing.py:1",
    ]
    assert (honest[span_names.A_CITATIONS], _paths(honest[span_names.A_FAILED_CITATIONS])) == (
        0,
        [],
    )
