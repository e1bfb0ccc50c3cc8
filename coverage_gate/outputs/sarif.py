"""A decision as a SARIF 2.1.0 log, so code-scanning views show each finding on its file.

One run, its driver ``coverage-gate`` with every rule of ``findings.RULES`` (always all of them, so
rule indices stay stable), one result per finding. Paths are repository-relative URIs under
``%SRCROOT%``. A finding is an ``error`` when the mode in force enforces, else a ``warning``.
Pure but for ``tool_version``, which asks the installed package.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from typing import Any
from urllib.parse import quote

from coverage_gate.contracts.model import DecisionDocument
from coverage_gate.outputs.findings import RULES, Finding, findings

__all__ = [
    "FINGERPRINT",
    "SARIF_SCHEMA",
    "SARIF_VERSION",
    "SOURCE_ROOT",
    "TOOL_NAME",
    "artifact_uri",
    "sarif_log",
    "sarif_text",
    "tool_version",
]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "coverage-gate"
SOURCE_ROOT = "%SRCROOT%"
#: Key of the partial fingerprint that tells one finding from another across runs.
FINGERPRINT = "coverageGateFinding/v1"


def _rule(index: int) -> dict[str, Any]:
    rule = RULES[index]
    return {
        "id": rule.rule_id,
        "name": rule.name,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.description},
        "help": {"text": rule.description},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"reason": rule.reason.value, "tags": ["coverage-gate", "review"]},
    }


def artifact_uri(path: str) -> str:
    """A repository-relative path as a URI reference: ``/`` kept, everything else that a URI
    path may not hold as it is (a space, ``%``, ``#``, ``?``) percent-encoded."""
    return quote(path, safe="/")


def _result(finding: Finding) -> dict[str, Any]:
    spot = finding.spot
    region: dict[str, int] = {"startLine": spot.start_line or 1}
    if spot.end_line is not None and spot.start_line is not None:
        region["endLine"] = spot.end_line
    identity = "\0".join([finding.rule.rule_id, finding.agent_id, spot.path])
    return {
        "ruleId": finding.rule.rule_id,
        "ruleIndex": RULES.index(finding.rule),
        "level": "error" if finding.enforced else "warning",
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(spot.path), "uriBaseId": SOURCE_ROOT},
                    "region": region,
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT: hashlib.sha256(identity.encode()).hexdigest()},
        "properties": {"reviewer": finding.agent_id},
    }


def sarif_log(decision: DecisionDocument, *, tool_version: str) -> dict[str, Any]:
    """The SARIF log of one decision."""
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": tool_version,
                        "rules": [_rule(index) for index in range(len(RULES))],
                    }
                },
                "results": [_result(finding) for finding in findings(decision)],
                "columnKind": "unicodeCodePoints",
                "properties": {
                    "repo": decision.repo,
                    "revision": decision.revision,
                    "verdict_in": decision.verdict_in.value,
                    "verdict_out": decision.verdict_out.value,
                    "mode": decision.mode.value,
                    "mode_source": decision.mode_source.value,
                    "downgraded": decision.downgraded,
                    "would_downgrade": decision.would_downgrade,
                    "note": decision.note,
                },
            }
        ],
    }


def sarif_text(decision: DecisionDocument, *, tool_version: str) -> str:
    return json.dumps(sarif_log(decision, tool_version=tool_version), indent=2) + "\n"


def tool_version() -> str:
    """The installed coverage-gate's version (``0+unknown`` when it runs uninstalled)."""
    try:
        return importlib.metadata.version("coverage-gate")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"
