"""A simulated shadow rollout: many reviews across several repositories, through the real
reconciler and the real telemetry sink, then the report's readiness verdict per repository.

Each repository has its own kind of reviewers:

- ``acme/payments``: honest reviewers (claims match reads) but one rare invented citation: ready
  (one flagged in 59 approvals bounds the would-downgrade rate at 9.0%, under the 10% ceiling; a
  second flagged review would not be). Its style reviewer often reads a file without seeing all
  of its change (never none of it: under the interval rule one such review more would already
  fail): ready under the depth policies ``accept`` and ``any-hunk``, not under ``all-hunks``.
  Its security reviewer cites the lines it speaks of, and now and then a line that is not there.
  Every fifth review, its style reviewer saw README.md only through another call's output
  (credited by content, ``via_content``).
- ``acme/frontend``: a reviewer that claims every file and reads about half, in a third of the
  reviews: not ready (would-downgrade rate far above the ceiling; audit before enforcing). In
  every other such review it did read one more of those files, but what came back was its own
  edit, not the file at the revision (a content ``mismatch``: no evidence either). Its style
  reviewer runs on Claude Code, its security reviewer on pi.
- ``acme/ml``: a reviewer whose stream format cannot see reads (capability none): not ready
  (evidence unavailable), although nothing would be downgraded.
- ``acme/infra``: honest, but the flag source fell back a few times and 20 runs ended without a
  decision (internal, bad input and bad configuration errors in turn): not ready (fallbacks, and
  an error rate far above the 10% ceiling).
- ``acme/docs``: honest, but observed for three days only: not ready (days).
- ``acme/search``: honest, but on day 6 of 10 its style reviewer's client (pi) was upgraded to a
  version whose stream renamed the tool-end event: from then on its adapter sees no reads in
  those streams and says so (drift: an unknown event type, a client version newer than the
  checked range); the claims are unknown, never unsupported, and the repository is not ready
  (streams) from that day on.

In ``acme/payments`` and ``acme/frontend`` the streams carry what each read returned, checked
against the revision (``matched``); the other repositories' reads are ``unchecked``.

Reviews are spread evenly over each repository's observation window with synthetic span times;
every few reviews a new telemetry setup is made, as separate CLI runs would, so the folder holds
many files. One garbage line is added to show the report counts it and goes on.

    python -m coverage_gate.rollout.simulation [--reviews N] [--folder DIR]

prints the report and exits 0 when every repository's readiness is the expected one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from coverage_gate.contracts.model import (
    Capability,
    Citation,
    ContentSummary,
    DecisionDocument,
    Depth,
    DepthPolicy,
    DriftEntry,
    DriftKind,
    EvidenceDocument,
    FileContent,
    FileDepth,
    FileEvidence,
    LineRange,
    MismatchKind,
    Mode,
    ModeSource,
    ReviewerOutput,
    UnknownPolicy,
    Verdict,
)
from coverage_gate.core.paths import StaticTree
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.core.revision_files import FileAtRevision, Presence
from coverage_gate.rollout import metrics, receipt_store, receipts
from coverage_gate.rollout.receipts import RecordingFiles, RecordingTree, recorded_ports
from coverage_gate.rollout.report import Criteria, Report, build_report, load_folder, render_text
from coverage_gate.telemetry import otel_setup

__all__ = [
    "ALL_HUNKS_FAILURES",
    "CLIENT_VERSION",
    "FABRICATED_CITATION",
    "PLANS",
    "REAL_CITATION",
    "UPGRADED_VERSION",
    "RepoPlan",
    "ReviewerSpec",
    "decide",
    "expected_readiness",
    "failures",
    "main",
    "plan_decisions",
    "plan_reviews",
    "simulate",
    "two_decisions",
    "write_receipts",
]

DAY_NS = 86_400 * 10**9
START_NS = 1_790_000_000 * 10**9  # a fixed epoch for reproducible reports
REVIEWS_PER_RUN = 10


# --- building decisions through the real reconciler -------------------------------------------


@dataclass(frozen=True)
class ReviewerSpec:
    """One reviewer of one review: what it claims, what the evidence shows it read."""

    agent: str
    claimed: Sequence[str]
    read: Sequence[str]
    source: str = "pi-rpc"
    capability: Capability = Capability.PER_FILE
    complete: bool = True
    truncated: bool = False
    has_evidence: bool = True
    failed: bool = False
    skipped: Sequence[str] = ()
    evidence_revision: str | None = None
    # How much of each read file's change the reads showed; None: no pinned diff (unknown).
    depth: Depth | None = None
    depths: Mapping[str, Depth] = field(default_factory=dict)  # per path, over ``depth``
    # Lines it cites (path, line, content), replayed against ``SimulatedFiles``.
    citations: Sequence[tuple[str, int, str]] = ()
    # What each read file's returned text was, against the file at the revision: ``matched``
    # (it was the file), ``via_content`` (no read of it: its lines came back through another
    # call), ``mismatch`` (a read whose text was not the file: no evidence); ``unchecked`` or
    # None: the stream does not carry the text (what the rules decide without it).
    content: FileContent | None = None
    contents: Mapping[str, FileContent] = field(default_factory=dict)  # per path, over ``content``
    # The client version its stream names, and what its adapter did not understand of it.
    client_version: str | None = None
    drift: Sequence[DriftEntry] = ()


#: What every file of a simulated repository holds at the revision.
SIMULATED_FILE = b"def handler(request):\n    return respond(request, status=200)\n"


class SimulatedFiles:
    """Every path of a simulated repository is a file holding ``SIMULATED_FILE``, except the
    ones named ``missing``."""

    def file_at_revision(self, path: str) -> FileAtRevision:
        if "missing" in path:
            return FileAtRevision(Presence.MISSING)
        return FileAtRevision(Presence.FOUND, SIMULATED_FILE)


#: A citation that replays as matched, and one that fails, against ``SimulatedFiles``.
REAL_CITATION = ("src/api.py", 2, "return respond(request, status=200)")
FABRICATED_CITATION = ("src/api.py", 2, "return respond(request, status=500)")


def file_depth(depth: Depth | None) -> FileDepth | None:
    """A plausible record: 40 changed lines in 2 hunks (100-119 and 480-499)."""
    if depth is None:
        return None
    hunks = [LineRange(start=100, end=119), LineRange(start=480, end=499)]
    seen = {Depth.FULL: 2, Depth.PARTIAL: 1, Depth.NONE: 0}.get(depth, 0)
    return FileDepth(
        depth=depth,
        changed_lines=0 if depth is Depth.UNKNOWN else 40,
        changed_lines_seen=20 * seen,
        hunks=0 if depth is Depth.UNKNOWN else 2,
        hunks_seen=seen,
        unseen=[] if depth is Depth.UNKNOWN else hunks[seen:],
    )


def file_evidence(path: str, depth: Depth | None, content: FileContent | None) -> FileEvidence:
    """The evidence of one file read once, its returned text checked as ``content`` says."""
    if content is FileContent.MISMATCH:
        # A read whose text is not the file is no read: nothing of the file was seen. In this
        # simulation it is the reviewer's own edit, read back.
        kinds = {MismatchKind.EDIT: 1}
        return FileEvidence(path=path, content=ContentSummary(mismatched=1, mismatch_kinds=kinds))
    summary = None  # unchecked: the stream did not carry the text
    if content is FileContent.MATCHED:
        summary = ContentSummary(matched=1)
    elif content is FileContent.VIA_CONTENT:
        summary = ContentSummary(credited=1)
    return FileEvidence(
        path=path,
        reads_succeeded=0 if content is FileContent.VIA_CONTENT else 1,
        depth=file_depth(depth),
        content=summary,
    )


def _evidence(spec: ReviewerSpec, revision: str) -> EvidenceDocument | None:
    if not spec.has_evidence:
        return None
    reads = [] if spec.capability is Capability.NONE else sorted(set(spec.read))
    return EvidenceDocument(
        source=spec.source,
        agent=spec.agent,
        revision=spec.evidence_revision or revision,
        stream_complete=spec.complete,
        capability=spec.capability,
        truncated=spec.truncated,
        client_version=spec.client_version,
        drift=list(spec.drift),
        files=[
            file_evidence(
                path, spec.depths.get(path, spec.depth), spec.contents.get(path, spec.content)
            )
            for path in reads
        ],
    )


def decide(repo: str, **review: Any) -> DecisionDocument:
    """A decision made by the real reconciler from reviewer specs (``review_of``'s keywords)."""
    return reconcile(review_of(repo, **review))


def two_decisions() -> list[DecisionDocument]:
    """Two repositories' decisions for telemetry tests: one reviewer that read one of two
    claimed files; then an honest one beside one that skipped a file and whose stream did not
    end, and one whose source can show no reads (capability none)."""
    scope = ["src/api.py", "src/db.py"]
    return [
        decide(
            "acme/api", scope=scope, reviewers=[ReviewerSpec("a", claimed=scope, read=scope[:1])]
        ),
        decide(
            "acme/web",
            scope=scope,
            reviewers=[
                ReviewerSpec("a", claimed=scope, read=scope),
                ReviewerSpec("b", claimed=scope[1:], read=(), skipped=scope[:1], complete=False),
                ReviewerSpec("c", claimed=scope, read=(), capability=Capability.NONE),
            ],
        ),
    ]


def review_of(
    repo: str,
    *,
    scope: Sequence[str],
    reviewers: Sequence[ReviewerSpec],
    verdict: Verdict = Verdict.APPROVE,
    mode: Mode = Mode.SHADOW,
    mode_source: ModeSource = ModeSource.SNAPSHOT,
    revision: str = "0123456789abcdef",
    unknown_policy: UnknownPolicy = UnknownPolicy.ACCEPT,
    depth_policy: DepthPolicy = DepthPolicy.ACCEPT,
) -> ReviewInput:
    """A review of reviewer specs, as the real reconciler takes it."""
    return ReviewInput(
        repo=repo,
        revision=revision,
        verdict_in=verdict,
        mode=mode,
        mode_source=mode_source,
        scope=list(scope),
        unknown_policy=unknown_policy,
        depth_policy=depth_policy,
        files=SimulatedFiles(),
        reviewers=[
            ReviewerInput(
                agent_id=spec.agent,
                claims=None
                if spec.failed
                else ReviewerOutput(
                    schema_version=1,
                    agent_id=spec.agent,
                    inspected_files=list(spec.claimed),
                    skipped_files=list(spec.skipped),
                    citations=[
                        Citation(path=path, line=line, content=content)
                        for path, line, content in spec.citations
                    ],
                ),
                evidence=_evidence(spec, revision),
                failed=spec.failed,
            )
            for spec in reviewers
        ],
    )


# --- the rollout ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RepoPlan:
    repo: str
    days: float
    lie_every: int = 0  # every n-th review has a lying reviewer (0: never)
    skim_every: int = 0  # every n-th review, the style reviewer sees part of a file's change
    blank_every: int = 0  # every n-th review, it sees none of that file's change
    fabricate_every: int = 0  # every n-th review, the citing security reviewer invents a line
    pinned_diff: bool = True  # without it, every depth is unknown
    blind: bool = False  # the second reviewer's format cannot see reads
    fallback_every: int = 0  # every n-th review's mode came from the fallback
    errors: int = 0
    expected_failures: frozenset[str] = field(default_factory=frozenset)
    # The streams carry the reads' text, checked against the revision: honest reads match.
    checked: bool = False
    # Every n-th review, the style reviewer's README.md came back through another call (a
    # grep), credited by content, not read.
    credit_every: int = 0
    # Every n-th review (a multiple of ``lie_every``: only a lying review), the liar also read a
    # second file, but what came back was its own edit, not the file at the revision.
    mismatch_every: int = 0
    style_source: str = "pi-rpc"  # the stream format of the style reviewer
    # From this day of the window on, the style reviewer runs a client version whose stream its
    # adapter does not fully understand (``UPGRADE_DRIFT``).
    upgrade_day: float | None = None


PLANS: tuple[RepoPlan, ...] = (
    RepoPlan(
        "acme/payments", days=10, skim_every=4, fabricate_every=70, checked=True, credit_every=5
    ),
    RepoPlan(
        "acme/frontend",
        days=10,
        lie_every=3,
        expected_failures=frozenset({"would_downgrade_rate"}),
        checked=True,
        mismatch_every=6,
        style_source="claude-code",
    ),
    RepoPlan("acme/ml", days=10, blind=True, expected_failures=frozenset({"evidence"})),
    RepoPlan(
        "acme/infra",
        days=10,
        fallback_every=25,
        errors=20,
        expected_failures=frozenset({"fallbacks", "error_rate"}),
    ),
    RepoPlan("acme/docs", days=3, pinned_diff=False, expected_failures=frozenset({"days"})),
    RepoPlan("acme/search", days=10, upgrade_day=6, expected_failures=frozenset({"streams"})),
)
#: The style reviewer's client before and after the upgrade, and what the new one's stream
#: holds that the adapter does not know.
CLIENT_VERSION = "0.73.1"
UPGRADED_VERSION = "0.80.0"
UPGRADE_DRIFT = (
    DriftEntry(
        kind=DriftKind.UNKNOWN_EVENT,
        name="tool_execution_finish",
        count=7,
        first_line=4,
        hides_reads=True,
    ),
    DriftEntry(kind=DriftKind.CLIENT_VERSION, name=f"{UPGRADED_VERSION} (newer than 0.73.1)"),
)
#: Under depth policy all-hunks, acme/payments would downgrade too many approvals to enforce.
ALL_HUNKS_FAILURES = {"acme/payments": frozenset({"would_downgrade_rate"})}


def _verdict(index: int) -> Verdict:
    if index % 10 == 3:
        return Verdict.REQUEST_CHANGES
    if index % 20 == 7:
        return Verdict.COMMENT
    return Verdict.APPROVE


def plan_decisions(plan: RepoPlan, reviews: int) -> list[tuple[DecisionDocument, int, float]]:
    """(decision, span end time, duration) for each review of one repository."""
    return [(reconcile(review), end, took) for review, end, took in plan_reviews(plan, reviews)]


def plan_reviews(plan: RepoPlan, reviews: int) -> list[tuple[ReviewInput, int, float]]:
    """(review, span end time, duration) for each review of one repository."""
    out: list[tuple[ReviewInput, int, float]] = []
    step = int(plan.days * DAY_NS / max(reviews - 1, 1))
    for i in range(reviews):
        scope = [f"src/module_{i % 7}.py", f"src/module_{(i + 1) % 7}.py", "README.md"]
        depth = Depth.FULL if plan.pinned_diff else None
        checked = FileContent.MATCHED if plan.checked else None
        security = ReviewerSpec("security", claimed=scope, read=scope, depth=depth, content=checked)
        if plan.lie_every and i % plan.lie_every == 0:
            security = replace(security, read=scope[:1])
            if plan.mismatch_every and i % plan.mismatch_every == 0:
                edited = {scope[1]: FileContent.MISMATCH}
                security = replace(security, read=scope[:2], contents=edited)
        elif plan.fabricate_every:
            invented = i % plan.fabricate_every == plan.fabricate_every // 2
            cited = [REAL_CITATION, FABRICATED_CITATION] if invented else [REAL_CITATION]
            security = replace(security, citations=cited)
        skimmed: dict[str, Depth] = {}
        if plan.blank_every and i % plan.blank_every == 5:
            skimmed = {scope[0]: Depth.NONE}
        elif plan.skim_every and i % plan.skim_every == 1:
            skimmed = {scope[0]: Depth.PARTIAL}
        credited: dict[str, FileContent] = {}
        if plan.credit_every and i % plan.credit_every == 2:
            credited = {scope[2]: FileContent.VIA_CONTENT}
        second = ReviewerSpec(
            "style",
            claimed=scope,
            read=scope,
            source=plan.style_source,
            depth=depth,
            depths=skimmed,
            content=checked,
            contents=credited,
        )
        if plan.blind:
            second = ReviewerSpec(
                "style", claimed=scope, read=(), source="codex-exec", capability=Capability.NONE
            )
        elif plan.upgrade_day is not None:
            upgraded = i * step >= plan.upgrade_day * DAY_NS
            second = replace(
                second,
                read=() if upgraded else second.read,
                client_version=UPGRADED_VERSION if upgraded else CLIENT_VERSION,
                drift=UPGRADE_DRIFT if upgraded else (),
            )
        fallback = bool(plan.fallback_every) and i % plan.fallback_every == 1
        review = review_of(
            plan.repo,
            scope=scope,
            reviewers=[security, second],
            verdict=_verdict(i),
            mode_source=ModeSource.FALLBACK if fallback else ModeSource.SNAPSHOT,
            revision=f"{i:040x}",
        )
        out.append((review, START_NS + i * step, 0.002 + (i % 9) * 0.001))
    return out


def write_receipts(folder: Path, reviews: int = 70) -> int:
    """The rollout's receipts, as `reconcile --receipt` writes them, into ``folder``; returns
    how many files it holds (identical decisions share one)."""
    for plan in PLANS:
        for planned, _end, _took in plan_reviews(plan, reviews):
            recorder, files = RecordingTree(StaticTree()), RecordingFiles(SimulatedFiles())
            review = replace(planned, tree=recorder, files=files)
            decision = reconcile(review)
            ports = recorded_ports(recorder, files)
            receipt_store.write(folder, receipts.build(review, decision, ports))
    return len(list(folder.glob(f"*{receipts.SUFFIX}")))


def simulate(folder: Path, reviews: int = 70) -> None:
    """Write the whole rollout's telemetry to ``folder``, one telemetry setup per few reviews."""
    environ = {otel_setup.TELEMETRY_DIR_ENV: str(folder)}
    planned = [(plan, item) for plan in PLANS for item in plan_decisions(plan, reviews)]
    for start in range(0, len(planned), REVIEWS_PER_RUN):
        telemetry = otel_setup.setup(environ)
        meter, tracer = telemetry.meter(), telemetry.tracer()
        for _plan, (decision, end_ns, duration) in planned[start : start + REVIEWS_PER_RUN]:
            formats = {r.agent_id: r.evidence_source or "none" for r in decision.reviewers}
            metrics.record_decision(meter, decision, duration_s=duration, formats=formats)
            metrics.record_reconcile_span(
                tracer, decision, duration_s=duration, formats=formats, end_time_ns=end_ns
            )
        telemetry.shutdown()
    for plan in PLANS:
        if plan.errors:
            telemetry = otel_setup.setup(environ)
            kinds = list(metrics.ErrorKind)
            for index in range(plan.errors):
                metrics.record_error(telemetry.meter(), repo=plan.repo, kind=kinds[index % 3])
            telemetry.shutdown()
    (folder / "garbage.jsonl").write_text("this is not OTLP\n", encoding="utf-8")


def expected_readiness() -> dict[str, frozenset[str]]:
    return {plan.repo: plan.expected_failures for plan in PLANS}


def failures(report: Report) -> dict[str, frozenset[str]]:
    return {
        repo.repository: frozenset(c.name for c in repo.checks if not c.ok)
        for repo in report.repositories
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reviews", type=int, default=200, help="reviews per repository")
    parser.add_argument("--folder", type=Path, default=None, help="keep the telemetry here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cg-rollout-") as scratch:
        folder = args.folder or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        simulate(folder, args.reviews)
        loaded = load_folder(folder)
        report = build_report(loaded, Criteria(), list_flagged=False)
        sys.stdout.write(render_text(report))
        got, want = failures(report), expected_readiness()
        for repo, expected in sorted(want.items()):
            status = "as expected" if got.get(repo) == expected else f"UNEXPECTED {got.get(repo)}"
            sys.stdout.write(f"{repo}: failing checks {sorted(expected)}: {status}\n")
        strict = failures(build_report(loaded, Criteria(depth_policy=DepthPolicy.ALL_HUNKS)))
        strict_want = {**want, **{r: want[r] | f for r, f in ALL_HUNKS_FAILURES.items()}}
        for repo in sorted(ALL_HUNKS_FAILURES):
            status = "as expected" if strict[repo] == strict_want[repo] else "UNEXPECTED"
            sys.stdout.write(
                f"{repo} under depth policy all-hunks: failing checks "
                f"{sorted(strict_want[repo])}: {status}\n"
            )
        return 0 if got == want and strict == strict_want else 1


if __name__ == "__main__":
    sys.exit(main())
