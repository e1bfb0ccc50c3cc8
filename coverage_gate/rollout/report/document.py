"""The report as its JSON document (``to_json``, schema ``REPORT_SCHEMA`` at ``REPORT_VERSION``):
what ``--format json`` prints and what ``coverage_gate.outputs.report_html`` draws its page from.

A plain ``dict`` of plain values (intervals as ``{"low", "high"}``, rates by name); sections the
input cannot fill (content checks, days, drift of older telemetry or of Prometheus) are left out,
so the document of older telemetry is unchanged. Pure.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from coverage_gate.rollout.report.build import (
    CONTENT_CREDIT_RATE,
    MISMATCH_RATE,
    ClientContent,
    ContentReport,
    RepoReport,
    Report,
)
from coverage_gate.rollout.report.checks import READINESS_RULE, Rate
from coverage_gate.rollout.report.folder import Loaded

__all__ = ["REPORT_SCHEMA", "REPORT_VERSION", "to_json"]


REPORT_SCHEMA = "coverage-gate/report"
REPORT_VERSION = "2.0"


def _input_json(report: Report) -> dict[str, Any]:
    if report.window is not None:
        return {"source": "prometheus", **asdict(report.window)}
    loaded = report.loaded or Loaded()
    return {
        "source": "telemetry_dir",
        "files": loaded.files,
        "lines": loaded.lines,
        "reviews": loaded.reviews_read,
        "malformed_lines": loaded.malformed_lines,
        "malformed_sample": [asdict(x) for x in loaded.malformed_sample],
        "unreadable_files": list(loaded.unreadable_files),
    }


def to_json(report: Report) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "version": REPORT_VERSION,
        "criteria": asdict(report.criteria),
        "readiness_rule": READINESS_RULE,
        "input": _input_json(report),
        "repositories": [_repo_json(r) for r in report.repositories],
    }
    if report.would_downgrade is not None:
        document["would_downgrade"] = [asdict(f) for f in report.would_downgrade]
    return document


def _interval_json(pair: tuple[float, float] | None) -> dict[str, float] | None:
    return None if pair is None else {"low": pair[0], "high": pair[1]}


def _repo_json(repo: RepoReport) -> dict[str, Any]:
    body = asdict(repo)
    body["would_downgrade_interval"] = _interval_json(repo.would_downgrade_interval)
    body["top_reasons"] = (
        None
        if repo.top_reasons is None
        else [{"reason": r, "count": n} for r, n in repo.top_reasons]
    )
    for row in body["depth"]["policies"]:
        for key in ("shallow_interval", "would_downgrade_interval"):
            row[key] = _interval_json(row[key])
    body["rates"] = {figure.name: _rate_json(figure) for figure in repo.rates}
    if body["citations"] is not None:
        for key in ("reviews_failed_interval", "would_downgrade_interval"):
            body["citations"][key] = _interval_json(body["citations"][key])
    # Only where claimed files' content was checked: the report of older telemetry is unchanged.
    if repo.content is None:
        del body["content"]
    else:
        body["content"] = _content_json(repo.content)
    if repo.daily is None:  # Prometheus is read over its window as a whole
        del body["daily"]
    if repo.drift is None:  # telemetry from before the drift watch: unchanged
        del body["drift"]
    body["readiness"] = "ready" if repo.ready else "not_ready"
    return body


def _rate_json(figure: Rate) -> dict[str, Any]:
    return {
        "count": figure.count,
        "of": figure.of,
        "rate": figure.rate,
        "interval": _interval_json(figure.interval),
        "limit": figure.limit,
    }


def _content_json(content: ContentReport) -> dict[str, Any]:
    def rates(item: ContentReport | ClientContent) -> dict[str, Any]:
        return {
            "claimed": item.claimed,
            "outcomes": dict(item.outcomes),
            MISMATCH_RATE: _rate_json(item.mismatch_rate),
            CONTENT_CREDIT_RATE: _rate_json(item.content_credit_rate),
        }

    return {
        **rates(content),
        "clients": [{"format": client.format, **rates(client)} for client in content.clients],
        # from the spans only: what mismatched files' reads showed instead, by client version
        "mismatches": [
            {
                "format": row.format,
                "client_version": row.client_version,
                "kind": row.kind,
                "files": row.files,
            }
            for row in content.mismatches
        ],
    }
