"""The names of the review span (``reconcile {repo}``, one per decision) and of its reviewer
events: the span name's prefix and the ``coverage_gate.*`` attribute keys ``reconcile`` writes and
the report reads back, from the telemetry folder or a Collector's export.

They are a published contract (the docs' span reference): changing one is a contract change,
and a folder written before it would read differently. Names only: what the span says with them
is ``coverage_gate.rollout.metrics.record_reconcile_span``.
"""

__all__ = [
    "A_AGENT",
    "A_CAPABILITY",
    "A_CITATIONS",
    "A_CITATIONS_FAILED",
    "A_CITATIONS_WOULD_DOWNGRADE",
    "A_CITATION_POLICY",
    "A_CITATION_POLICY_SOURCE",
    "A_CLAIMED",
    "A_CLIENT_VERSION",
    "A_COMPLETE",
    "A_CONTENT_PREFIX",
    "A_COVERAGE",
    "A_DEPTH_POLICY",
    "A_DEPTH_POLICY_SOURCE",
    "A_DEPTH_PREFIX",
    "A_DOWNGRADED",
    "A_DRIFT",
    "A_DRIFT_KINDS",
    "A_DURATION",
    "A_FAILED",
    "A_FAILED_CITATIONS",
    "A_FORMAT",
    "A_MISMATCH_PREFIX",
    "A_MODE",
    "A_MODE_SOURCE",
    "A_MUTATIONS",
    "A_MUTATIONS_WOULD_DOWNGRADE",
    "A_MUTATION_POLICY",
    "A_MUTATION_POLICY_SOURCE",
    "A_OUTCOME",
    "A_OWNER",
    "A_REASONS",
    "A_REPOSITORY",
    "A_REVIEWERS",
    "A_REVISION",
    "A_SHALLOW",
    "A_SHALLOW_PATHS",
    "A_STALE",
    "A_TRUNCATED",
    "A_UNKNOWN",
    "A_UNKNOWN_POLICY",
    "A_UNKNOWN_POLICY_SOURCE",
    "A_UNSUPPORTED",
    "A_UNSUPPORTED_DROPPED",
    "A_UNSUPPORTED_PATHS",
    "A_VERDICT_IN",
    "A_VERDICT_OUT",
    "A_WOULD_DOWNGRADE",
    "A_WOULD_DOWNGRADE_UNDER",
    "REVIEWER_EVENT",
    "SPAN_PREFIX",
]

#: Span and event attribute keys; the report reads them back.
A_REPOSITORY = "coverage_gate.repository"
A_OWNER = "coverage_gate.owner"
A_REVISION = "coverage_gate.revision"
A_MODE = "coverage_gate.mode"
A_MODE_SOURCE = "coverage_gate.mode_source"
A_UNKNOWN_POLICY = "coverage_gate.unknown_policy"
A_UNKNOWN_POLICY_SOURCE = "coverage_gate.unknown_policy_source"
A_DEPTH_POLICY = "coverage_gate.depth_policy"
A_DEPTH_POLICY_SOURCE = "coverage_gate.depth_policy_source"
#: The depth policies that would have turned this review's Approve into a Comment.
A_WOULD_DOWNGRADE_UNDER = "coverage_gate.would_downgrade_under"
#: Claimed files with successful evidence of each depth: ``coverage_gate.files.depth.<depth>``.
A_DEPTH_PREFIX = "coverage_gate.files.depth."
A_SHALLOW = "coverage_gate.files.shallow"
A_SHALLOW_PATHS = "coverage_gate.shallow_files"
A_VERDICT_IN = "coverage_gate.verdict_in"
A_VERDICT_OUT = "coverage_gate.verdict_out"
A_OUTCOME = "coverage_gate.outcome"
A_REASONS = "coverage_gate.reasons"
A_DOWNGRADED = "coverage_gate.downgraded"
A_WOULD_DOWNGRADE = "coverage_gate.would_downgrade"
A_REVIEWERS = "coverage_gate.reviewers"
A_CLAIMED = "coverage_gate.files.claimed"
A_UNSUPPORTED = "coverage_gate.files.unsupported"
A_UNKNOWN = "coverage_gate.files.unknown"
A_UNSUPPORTED_PATHS = "coverage_gate.unsupported_files"
A_UNSUPPORTED_DROPPED = "coverage_gate.unsupported_files.dropped"
A_DURATION = "coverage_gate.reconcile.duration"
A_AGENT = "gen_ai.agent.name"
A_FORMAT = "coverage_gate.evidence.format"
A_CAPABILITY = "coverage_gate.evidence.capability"
A_COMPLETE = "coverage_gate.evidence.complete"
A_TRUNCATED = "coverage_gate.evidence.truncated"
A_STALE = "coverage_gate.evidence.stale"
A_COVERAGE = "coverage_gate.coverage"
A_FAILED = "coverage_gate.reviewer.failed"
A_CITATION_POLICY = "coverage_gate.citation_policy"
A_CITATION_POLICY_SOURCE = "coverage_gate.citation_policy_source"
A_CITATIONS = "coverage_gate.citations.replayed"
A_CITATIONS_FAILED = "coverage_gate.citations.failed"
#: Whether failed citations alone would turn this review's Approve into a Comment.
A_CITATIONS_WOULD_DOWNGRADE = "coverage_gate.citations.would_downgrade"
#: Failed citations of one reviewer as ``path:line`` (at most ``MAX_SPAN_CITATIONS``).
A_FAILED_CITATIONS = "coverage_gate.failed_citations"
#: Claimed files of one reviewer by how their evidence was checked: ``…content.<outcome>``.
A_CONTENT_PREFIX = "coverage_gate.files.content."
#: Its claimed files whose content is ``mismatch``, by what their reads showed instead
#: (``MismatchKind``): ``…mismatch.<kind>``, present only where there are some.
A_MISMATCH_PREFIX = "coverage_gate.files.mismatch."
A_CLIENT_VERSION = "coverage_gate.evidence.client_version"
#: What the reviewer's stream held that its adapter did not understand: none, said, hides_reads
A_DRIFT = "coverage_gate.drift"
A_DRIFT_KINDS = "coverage_gate.drift.kinds"
A_MUTATIONS = "coverage_gate.mutations"
A_MUTATION_POLICY = "coverage_gate.mutation_policy"
A_MUTATION_POLICY_SOURCE = "coverage_gate.mutation_policy_source"
A_MUTATIONS_WOULD_DOWNGRADE = "coverage_gate.mutations.would_downgrade"

#: The review span's name is this prefix and the repository; each reviewer is an event of it.
SPAN_PREFIX = "reconcile "
REVIEWER_EVENT = "coverage_gate.reviewer"
