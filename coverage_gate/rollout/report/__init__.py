"""The shadow report: per repository, what the coverage check did or would do, and whether the
repository is ready to enforce. Its parts, each building on those before it:

- ``records``: what one ``reconcile`` span says (a review, its reviewers), and span keys;
- ``stats``: Wilson intervals and percentiles;
- ``counts``: ``RepoCounts``, what readiness is judged on, and the tally that folds reviews in;
- ``flagged``: the reviewer decisions ``--list would_downgrade`` lists;
- ``folder``: what reading a telemetry folder gathered (``Loaded``, ``Tallied``), and its counts;
- ``otlp``: the plain reader of OTLP JSON lines (``load_folder``); ``scan``: the same, streamed,
  typed and in parallel (``scan_folder``, imported from there alone: it loads msgspec);
- ``checks``: the criteria, the rates and the readiness checks;
- ``build``: the per-repository report and the report, from a folder or a Prometheus window;
- ``document`` and ``text``: the report as its JSON document and as text.

The names below are the report's surface, for the rest of the package; anything else is
imported from the module that holds it.
"""

from __future__ import annotations

from coverage_gate.rollout.report.build import (
    RepoReport,
    Report,
    Window,
    build_report,
    build_window_report,
    repo_report,
)
from coverage_gate.rollout.report.checks import (
    READINESS_RULE,
    Check,
    Criteria,
    Rate,
    readiness,
)
from coverage_gate.rollout.report.counts import RepoCounts, content_by_format
from coverage_gate.rollout.report.document import REPORT_SCHEMA, REPORT_VERSION, to_json
from coverage_gate.rollout.report.folder import FolderInput, Loaded, Tallied, count_folder
from coverage_gate.rollout.report.otlp import load_folder
from coverage_gate.rollout.report.stats import percentile, wilson
from coverage_gate.rollout.report.text import render_text

__all__ = [
    "READINESS_RULE",
    "REPORT_SCHEMA",
    "REPORT_VERSION",
    "Check",
    "Criteria",
    "FolderInput",
    "Loaded",
    "Rate",
    "RepoCounts",
    "RepoReport",
    "Report",
    "Tallied",
    "Window",
    "build_report",
    "build_window_report",
    "content_by_format",
    "count_folder",
    "load_folder",
    "percentile",
    "readiness",
    "render_text",
    "repo_report",
    "to_json",
    "wilson",
]
