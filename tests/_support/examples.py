"""Decisions of the bundled example (two real pi captures of one review), made as the demo makes
them, for the tests of the surfaces that show a decision (SARIF, GitHub)."""

from __future__ import annotations

import importlib.resources
from dataclasses import replace
from pathlib import Path

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.model import (
    DecisionDocument,
    Mode,
    ModeSource,
    ReviewerOutput,
    UnknownPolicy,
    Verdict,
)
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.edges.scope import parse_changed
from coverage_gate.examples.demo import REPO, REPO_ROOT, REVISION
from coverage_gate.record.recording import RecordSettings, record_stream

EXAMPLES = Path(str(importlib.resources.files("coverage_gate.examples")))


def example_review(reviewer: str, mode: Mode) -> ReviewInput:
    """The bundled review of ``reviewer`` (``honest`` or ``lying``): an Approve, in ``mode``."""
    diff = DiffIndex.parse((EXAMPLES / "review.diff").read_bytes())
    scope = parse_changed((EXAMPLES / "changed.txt").read_text(), "changed.txt", REPO_ROOT)
    settings = RecordSettings(revision=REVISION, repo_root=REPO_ROOT, diff=diff, agent=reviewer)
    with (EXAMPLES / f"{reviewer}.pi-rpc.jsonl").open("rb") as stream:
        evidence = record_stream(stream, ADAPTERS["pi-rpc"], settings)
    claims = ReviewerOutput.model_validate_json((EXAMPLES / f"{reviewer}.claims.json").read_bytes())
    return ReviewInput(
        repo=REPO,
        revision=REVISION,
        verdict_in=Verdict.APPROVE,
        mode=mode,
        mode_source=ModeSource.OVERRIDE,
        scope=scope,
        reviewers=[ReviewerInput(claims.agent_id, claims, evidence)],
        repo_root=REPO_ROOT,
    )


def example_decision(reviewer: str, mode: Mode) -> DecisionDocument:
    return reconcile(example_review(reviewer, mode))


def renamed_scope_decision(paths: dict[str, str], mode: Mode = Mode.ENFORCE) -> DecisionDocument:
    """The lying reviewer's decision with its unsupported files given other names (``paths``:
    old → new), in claims, evidence-free scope and all: names a capture cannot hold."""
    review = example_review("lying", mode)
    (reviewer,) = review.reviewers
    assert reviewer.claims is not None
    claims = reviewer.claims.model_copy(
        update={"inspected_files": [paths.get(p, p) for p in reviewer.claims.inspected_files]}
    )
    return reconcile(
        replace(
            review,
            scope=[paths.get(p, p) for p in review.scope],
            reviewers=[replace(reviewer, claims=claims)],
        )
    )


def unverifiable_decision(policy: UnknownPolicy) -> DecisionDocument:
    """The honest reviewer's claims with no evidence document at all, under ``policy``."""
    review = example_review("honest", Mode.ENFORCE)
    (reviewer,) = review.reviewers
    return reconcile(
        replace(review, reviewers=[replace(reviewer, evidence=None)], unknown_policy=policy)
    )
