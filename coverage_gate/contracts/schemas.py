"""The published contracts, by the name `coverage-gate schema NAME` takes."""

from __future__ import annotations

from pydantic import BaseModel

from coverage_gate.contracts.model import (
    DecisionDocument,
    EvidenceDocument,
    ReviewBundle,
    ReviewerOutput,
)
from coverage_gate.contracts.receipt import Receipt

__all__ = ["SCHEMAS"]

SCHEMAS: dict[str, type[BaseModel]] = {
    "reviewer-output": ReviewerOutput,
    "evidence": EvidenceDocument,
    "bundle": ReviewBundle,
    "decision": DecisionDocument,
    "receipt": Receipt,
}
