"""The report as text for people (``render_text``): what was read, then per repository its
readiness, figures and checks, the readiness rule, and the flagged decisions when listed.

Pure: a ``Report`` in, one string out (the JSON document is ``document``'s).
"""

from __future__ import annotations

from collections.abc import Mapping

from coverage_gate.rollout.report._format import _pct
from coverage_gate.rollout.report.build import (
    ClientDrift,
    ContentReport,
    DepthReport,
    Evidence,
    RepoReport,
    Report,
)
from coverage_gate.rollout.report.checks import READINESS_RULE, WOULD_DOWNGRADE_RATE, Rate
from coverage_gate.rollout.report.counts import CitationReport
from coverage_gate.rollout.report.folder import Loaded

__all__ = ["render_text"]


def _ci(interval: tuple[float, float] | None) -> str:
    return "" if interval is None else f" (95% CI {interval[0]:.1%}-{interval[1]:.1%})"


def _counted(values: Mapping[str, int] | None) -> str:
    if values is None:
        return "n/a"
    return ", ".join(f"{name} {count}" for name, count in values.items()) or "-"


def _depth_lines(depth: DepthReport) -> list[str]:
    lines = [
        f"  depth of claimed files with evidence: {_counted(depth.files)}; "
        f"policy in force: {_counted(depth.in_force)}",
        f"  {'depth policy':<13} {'shallow files':<34} would downgrade "
        f"(of {depth.approvals_compared} approvals)",
    ]
    for row in depth.policies:
        shallow = f"{row.shallow_files} = {_pct(row.shallow_rate)}{_ci(row.shallow_interval)}"
        flagged = (
            f"{row.would_downgrade} = {_pct(row.would_downgrade_rate)}"
            f"{_ci(row.would_downgrade_interval)}"
        )
        lines.append(f"  {row.depth_policy:<13} {shallow:<34} {flagged}")
    return lines


def _citation_lines(cited: CitationReport | None) -> list[str]:
    if cited is None:
        return ["  citations: n/a (only the local spans carry them)"]
    if not cited.reviews:
        return ["  citations: not recorded"]
    if not cited.reviews_citing:
        return [f"  citations: none given in {cited.reviews} reviews"]
    per_100 = (
        "n/a" if cited.failed_per_100_reviews is None else f"{cited.failed_per_100_reviews:.1f}"
    )
    return [
        f"  citations: {cited.replayed} replayed in {cited.reviews_citing} of {cited.reviews} "
        f"reviews; {cited.failed} failed = {per_100} per 100 reviews",
        f"  reviews with a failed citation {cited.reviews_failed} = "
        f"{_pct(cited.reviews_failed_rate)}{_ci(cited.reviews_failed_interval)}; approvals "
        f"failed citations would downgrade {cited.would_downgrade} of {cited.approvals} = "
        f"{_pct(cited.would_downgrade_rate)}{_ci(cited.would_downgrade_interval)}",
    ]


def _figure(figure: Rate) -> str:
    return f"{figure.count} of {figure.of} = {_pct(figure.rate)}{_ci(figure.interval)}"


def _content_lines(content: ContentReport | None) -> list[str]:
    if content is None:
        return []
    lines = [
        f"  content checks of {content.claimed} claimed files: {_counted(content.outcomes)}",
        f"  mismatch rate {_figure(content.mismatch_rate)}; "
        f"content-credit rate {_figure(content.content_credit_rate)}",
    ]
    lines.extend(
        f"    client {client.format}, {client.claimed} claimed files: mismatch rate "
        f"{_figure(client.mismatch_rate)}; content-credit rate "
        f"{_figure(client.content_credit_rate)}"
        for client in content.clients
    )
    lines.extend(
        f"    mismatched files of {row.format} {row.client_version}: {row.files} {row.kind}"
        for row in content.mismatches
    )
    return lines


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:.1f} ms"


def _header(report: Report) -> list[str]:
    window = report.window
    if window is not None:
        return [
            f"Prometheus {window.prometheus}: {window.start} .. {window.end} "
            f"(--since {_span(window.since_s)}; {window.queries} queries; reviews placed in "
            f"steps of {_span(window.step_s)})"
        ]
    loaded = report.loaded or Loaded()
    out = [
        f"{loaded.files} files, {loaded.lines} lines, {loaded.reviews_read} reviews, "
        f"{loaded.malformed_lines} malformed lines"
    ]
    out.extend(f"  malformed: {x.file}:{x.line}: {x.detail}" for x in loaded.malformed_sample)
    out.extend(f"  unreadable: {name}" for name in loaded.unreadable_files)
    return out


def _span(seconds: float) -> str:
    """``1209600`` → ``14d``: the largest unit that divides it."""
    whole = int(seconds)
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if whole and whole % size == 0:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def _evidence_line(ev: Evidence) -> str:
    if ev.capability_none is None:
        why = "per review: not in the metrics"
    else:
        why = (
            f"capability none {ev.capability_none}, incomplete {ev.incomplete}, "
            f"truncated {ev.truncated}, stale {ev.stale}"
        )
    return f"  evidence available {_pct(ev.availability)}: {why}"


def _drift_lines(drift: list[ClientDrift] | None) -> list[str]:
    if not drift:
        return []
    lines = ["  streams by client version (drift: what the adapter did not understand):"]
    for row in drift:
        kinds = ", ".join(f"{kind} {n}" for kind, n in row.kinds.items()) or "no drift"
        lines.append(
            f"    {row.format} {row.client_version}: {row.streams} streams, "
            f"{row.hides_reads} could hide reads, {row.said} said only ({kinds})"
        )
    return lines


def render_text(report: Report) -> str:
    out = _header(report)
    if not report.repositories:
        out.append("no reviews recorded")
    for repo in report.repositories:
        reasons = (
            "n/a"
            if repo.top_reasons is None
            else ", ".join(f"{r} {n}" for r, n in repo.top_reasons) or "-"
        )
        out += [
            "",
            f"{repo.repository}: {'READY' if repo.ready else 'NOT READY'} to enforce",
            f"  reviews {repo.reviews}, approvals {repo.approvals}, "
            f"observed {repo.days:.1f} days ({repo.first_seen or '-'} .. {repo.last_seen or '-'})",
            f"  would downgrade {repo.would_downgrade} = {_pct(repo.would_downgrade_rate)}"
            f"{_ci(repo.would_downgrade_interval)}",
            *(
                f"  {figure.name.replace('_', ' ')} {figure.count} of {figure.of} = "
                f"{_pct(figure.rate)}{_ci(figure.interval)}"
                for figure in repo.rates
                if figure.name != WOULD_DOWNGRADE_RATE.name
            ),
            "  outcomes " + ", ".join(f"{k} {v}" for k, v in repo.outcomes.items()),
            f"  claimed files {repo.claimed_files}: unsupported {_pct(repo.unsupported_share)}, "
            f"unknown {_pct(repo.unknown_share)}",
            _evidence_line(repo.evidence),
            "  mode sources "
            + (", ".join(f"{k} {v}" for k, v in repo.mode_sources.items()) or "-")
            + f"; fallbacks {repo.fallbacks}; errors {repo.errors}{_error_kinds(repo)}",
            f"  duration p50 {_seconds(repo.duration_p50_s)}, p95 {_seconds(repo.duration_p95_s)}",
            f"  top reasons {reasons}",
            *_depth_lines(repo.depth),
            *_citation_lines(repo.citations),
            *_content_lines(repo.content),
            *_drift_lines(repo.drift),
        ]
        if repo.reset_series:
            out.append(
                f"  estimated: {repo.reset_series} counter series were reset within the window "
                "(the Collector restarted) and are counted with Prometheus' increase()"
            )
        out.extend(f"  [{'ok' if c.ok else 'FAIL'}] {c.detail}" for c in repo.checks)
    if report.repositories:
        out += ["", READINESS_RULE]
    if report.would_downgrade is not None:
        out += ["", f"would downgrade: {len(report.would_downgrade)} reviewer decisions"]
        for item in report.would_downgrade:
            more = f" (+{item.files_dropped} more)" if item.files_dropped else ""
            shallow = f"; shallow: {', '.join(item.shallow_files)}" if item.shallow_files else ""
            cited = (
                f"; failed citations: {', '.join(item.failed_citations)}"
                if item.failed_citations
                else ""
            )
            out.append(
                f"  {item.repository} {item.revision} {item.reviewer} [{item.mode}] "
                f"{item.time}: {', '.join(item.files) or '-'}{more}{shallow}{cited}"
            )
    return "\n".join(out) + "\n"


def _error_kinds(repo: RepoReport) -> str:
    """The errors by kind, where the source tells them: ``(bad_input 11)``."""
    kinds = repo.error_kinds
    if not repo.errors or not kinds:
        return ""
    return " (" + ", ".join(f"{kind} {n}" for kind, n in kinds.items() if n) + ")"
