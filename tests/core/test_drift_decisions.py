"""What drift and mutations do to a decision (DESIGN §6 rules 19-20, §7.11): drift the model cannot
cause makes claims without evidence unknown, never unsupported; drift a model can cause (an
unknown tool) changes nothing by itself; a reviewer's changes are said, and held against it only
under ``--mutation-policy downgrade``."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from coverage_gate.contracts.enums import DriftKind
from coverage_gate.contracts.model import (
    Capability,
    ContentSummary,
    Coverage,
    DecisionDocument,
    DriftEntry,
    EvidenceDocument,
    FileEvidence,
    FileStatus,
    Mode,
    ModeSource,
    Mutation,
    MutationPolicy,
    PolicySource,
    Reason,
    ReviewerOutput,
    UnknownReason,
    UnsupportedReason,
    Verdict,
)
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.core.versions import outside
from coverage_gate.errors import BadConfigError
from coverage_gate.rollout import metrics
from coverage_gate.rollout.flags import ModeResolution, effective_policies, policies_from_payload

SCOPE = ["src/api.py", "src/db.py"]
HIDING = DriftEntry(
    kind=DriftKind.UNKNOWN_EVENT,
    name="tool_execution_finish",
    count=7,
    first_line=3,
    hides_reads=True,
)
UNKNOWN_TOOL = DriftEntry(kind=DriftKind.UNKNOWN_TOOL, name="mcp__fs__peek", count=2, first_line=5)


def evidence(
    *,
    read: list[str],
    drift: Sequence[DriftEntry] = (),
    mutations: Sequence[Mutation] = (),
    **kw: object,
) -> EvidenceDocument:
    return EvidenceDocument(
        source="pi-rpc",
        revision="abc1234",
        stream_complete=True,
        capability=Capability.PER_FILE,
        files=[FileEvidence(path=p, reads_succeeded=1) for p in read],
        drift=list(drift),
        mutations=list(mutations),
        **kw,  # type: ignore[arg-type]
    )


def decide(
    doc: EvidenceDocument, *, mode: Mode = Mode.ENFORCE, **review: object
) -> DecisionDocument:
    return reconcile(
        ReviewInput(
            repo="acme/api",
            revision="abc1234",
            verdict_in=Verdict.APPROVE,
            mode=mode,
            mode_source=ModeSource.OVERRIDE,
            scope=SCOPE,
            reviewers=[
                ReviewerInput(
                    "security",
                    ReviewerOutput(schema_version=1, agent_id="security", inspected_files=SCOPE),
                    doc,
                )
            ],
            **review,  # type: ignore[arg-type]
        )
    )


def statuses(decision: DecisionDocument) -> dict[str, FileStatus]:
    return {f.path: f.status for f in decision.reviewers[0].files}


def test_drift_that_could_hide_reads_makes_unread_claims_unknown_and_keeps_the_approve() -> None:
    decision = decide(evidence(read=["src/api.py"], drift=[HIDING]))
    files = {f.path: f for f in decision.reviewers[0].files}
    assert files["src/api.py"].status is FileStatus.VERIFIED
    assert files["src/db.py"].status is FileStatus.UNKNOWN
    assert files["src/db.py"].unknown_reason is UnknownReason.FORMAT_DRIFT
    assert decision.verdict_out is Verdict.APPROVE
    assert "does not know (an event type `tool_execution_finish` 7 times)" in decision.note
    assert "claims without evidence are unknown, not unsupported" in decision.note
    assert "upgrade coverage-gate" in decision.note


def test_the_same_review_without_drift_is_downgraded() -> None:
    """The control: the drift alone is what kept the claim from being unsupported."""
    decision = decide(evidence(read=["src/api.py"]))
    assert statuses(decision)["src/db.py"] is FileStatus.UNSUPPORTED
    assert decision.verdict_out is Verdict.COMMENT


def test_an_unknown_tool_never_turns_an_absence_into_unknown() -> None:
    """A model can call any tool with any path: a liar calling an MCP tool with each claimed path
    is still unsupported, and the note says the tool was seen."""
    decision = decide(evidence(read=[], drift=[UNKNOWN_TOOL]))
    assert set(statuses(decision).values()) == {FileStatus.UNSUPPORTED}
    assert decision.verdict_out is Verdict.COMMENT
    assert "a tool naming a file in scope `mcp__fs__peek` 2 times" in decision.note
    assert "nothing here could hide a read" in decision.note


def test_a_version_out_of_range_alone_changes_nothing() -> None:
    version = DriftEntry(kind=DriftKind.CLIENT_VERSION, name="3.0.0 (newer than 2.1.328)")
    with_drift = decide(evidence(read=["src/api.py"], drift=[version]))
    without = decide(evidence(read=["src/api.py"]))
    assert statuses(with_drift) == statuses(without)
    assert with_drift.verdict_out is without.verdict_out is Verdict.COMMENT


def test_a_read_of_other_text_stays_unsupported_under_drift() -> None:
    doc = evidence(read=["src/api.py"], drift=[HIDING])
    doc.files.append(FileEvidence(path="src/db.py", content=ContentSummary(mismatched=1)))
    files = {f.path: f for f in decide(doc).reviewers[0].files}
    assert files["src/db.py"].status is FileStatus.UNSUPPORTED
    assert files["src/db.py"].unsupported_reason is UnsupportedReason.CONTENT_MISMATCH


CHANGED = [Mutation(tool="edit", path="src/api.py", line=9)]


def test_mutations_are_said_and_accepted_by_default() -> None:
    decision = decide(evidence(read=SCOPE, mutations=CHANGED))
    assert decision.verdict_out is Verdict.APPROVE
    assert decision.mutation_policy is MutationPolicy.ACCEPT
    assert decision.mutations_would_downgrade
    assert decision.reviewers[0].mutations[0].path == "src/api.py"
    assert "the reviewer `security` changed `src/api.py` (edit, line 9)" in decision.note
    assert "mutation policy (accept) records it" in decision.note


@pytest.mark.parametrize(
    ("mode", "verdict", "head"),
    [
        (Mode.ENFORCE, Verdict.COMMENT, "Approve became Comment: a reviewer changed the code"),
        (Mode.SHADOW, Verdict.APPROVE, "in enforce mode this Approve would become a Comment"),
    ],
)
def test_mutation_policy_downgrade_makes_a_changing_reviewer_incomplete(
    mode: Mode, verdict: Verdict, head: str
) -> None:
    decision = decide(
        evidence(read=SCOPE, mutations=CHANGED),
        mode=mode,
        mutation_policy=MutationPolicy.DOWNGRADE,
        mutation_policy_source=PolicySource.PAYLOAD,
    )
    reviewer = decision.reviewers[0]
    assert reviewer.coverage is Coverage.INCOMPLETE_MUTATED
    assert Reason.REVIEWER_MUTATED in reviewer.reasons
    assert decision.would_downgrade
    assert decision.verdict_out is verdict
    assert head in decision.note
    assert decision.mutation_policy_source is PolicySource.PAYLOAD


def test_a_reviewer_that_changed_nothing_is_not_held_to_the_mutation_policy() -> None:
    decision = decide(evidence(read=SCOPE), mutation_policy=MutationPolicy.DOWNGRADE)
    assert decision.verdict_out is Verdict.APPROVE
    assert not decision.mutations_would_downgrade
    assert "changed" not in decision.note


def test_the_mutation_policy_comes_from_the_payload_the_environment_or_the_option() -> None:
    payload = {"type": "json", "value": '{"mutation_policy": "downgrade"}'}
    policies = policies_from_payload(payload)
    assert policies.mutation_policy is MutationPolicy.DOWNGRADE
    resolution = ModeResolution(
        Mode.SHADOW, ModeSource.SNAPSHOT, "shadow", True, "snapshot", policies=policies
    )
    chosen = effective_policies(resolution, {})
    assert (chosen.mutation_policy, chosen.mutation_policy_source) == (
        MutationPolicy.DOWNGRADE,
        PolicySource.PAYLOAD,
    )
    env = effective_policies(resolution, {"COVERAGE_GATE_MUTATION_POLICY": "accept"})
    assert (env.mutation_policy, env.mutation_policy_source) == (
        MutationPolicy.ACCEPT,
        PolicySource.ENV,
    )
    cli = effective_policies(
        resolution,
        {"COVERAGE_GATE_MUTATION_POLICY": "accept"},
        mutation_policy=MutationPolicy.DOWNGRADE,
    )
    assert cli.mutation_policy_source is PolicySource.CLI
    with pytest.raises(BadConfigError, match="COVERAGE_GATE_MUTATION_POLICY: 'sometimes'"):
        effective_policies(resolution, {"COVERAGE_GATE_MUTATION_POLICY": "sometimes"})
    with pytest.raises(BadConfigError, match="mutation_policy 'never' is not one of"):
        policies_from_payload({"type": "json", "value": '{"mutation_policy": "never"}'})


def test_metrics_count_streams_by_client_version_and_drift_kind() -> None:
    from opentelemetry.sdk.metrics import MeterProvider  # noqa: PLC0415
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: PLC0415

    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    doc = evidence(read=["src/api.py"], drift=[HIDING, UNKNOWN_TOOL], client_version="0.80.0")
    metrics.record_decision(meter, decide(doc), duration_s=0.01)
    data = reader.get_metrics_data()
    points = {
        metric.name: [
            (dict(p.attributes), getattr(p, "value", None)) for p in metric.data.data_points
        ]
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for metric in sm.metrics
    }
    (stream,) = points["coverage_gate.streams"]
    assert stream[0]["client_version"] == "0.80.0"
    assert stream[0]["drift"] == "hides_reads"
    assert sorted(p[0]["kind"] for p in points["coverage_gate.drift"]) == [
        "unknown_event",
        "unknown_tool",
    ]
    assert all(
        "path" not in attrs and "name" not in attrs for attrs, _ in points["coverage_gate.drift"]
    )


@pytest.mark.parametrize(
    ("version", "label"),
    [
        ("2.1.328", "2.1.328"),
        ("0.61.0-preview.2", "0.61.0-preview.2"),
        (None, "none"),
        ("2.1.328 (Claude Code)", "other"),
        ("x" * 300, "other"),
    ],
)
def test_a_client_version_label_is_bounded(version: str | None, label: str) -> None:
    assert metrics.version_label(version) == label


@pytest.mark.parametrize(
    ("version", "said"),
    [
        ("2.1.328", None),
        ("2.1.300", None),
        ("3.0.0", "newer than 2.1.328, the newest checked"),
        ("2.1.299", "older than 2.1.300, the oldest checked"),
        ("2.1.328-beta", None),
        ("2.1.300-beta", "older than 2.1.300, the oldest checked"),
        ("v2.1.310", None),
        ("nightly", None),
    ],
)
def test_a_version_is_compared_with_the_checked_range(version: str, said: str | None) -> None:
    assert outside(version, ("2.1.300", "2.1.328")) == said
