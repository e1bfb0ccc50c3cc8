"""A variant's payload, read as the policies it sets for the repositories it serves.

Holds ``VariantPolicies`` and ``policies_from_payload``: a ``json`` payload whose value is an
object of known policy keys, each naming a policy; anything else is a FlagConfigError saying what
is wrong (the caller names where the payload came from). Weighing the payload against the CLI and
the environment is ``flags.effective_policies``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeVar

from coverage_gate.contracts.model import (
    CitationPolicy,
    DepthPolicy,
    MutationPolicy,
    UnknownPolicy,
)
from coverage_gate.rollout._settings import FlagConfigError

__all__ = ["PAYLOAD_KEYS", "PAYLOAD_TYPE", "VariantPolicies", "policies_from_payload"]

PAYLOAD_TYPE = "json"
#: The keys a variant payload may set, and the policy each one names.
PAYLOAD_KEYS: Mapping[str, type[StrEnum]] = MappingProxyType(
    {
        "depth_policy": DepthPolicy,
        "unknown_policy": UnknownPolicy,
        "citation_policy": CitationPolicy,
        "mutation_policy": MutationPolicy,
    }
)


@dataclass(frozen=True)
class VariantPolicies:
    """The policies a variant's payload sets for the repositories it serves (``None``: not set)."""

    depth_policy: DepthPolicy | None = None
    unknown_policy: UnknownPolicy | None = None
    citation_policy: CitationPolicy | None = None
    mutation_policy: MutationPolicy | None = None


_Policy = TypeVar("_Policy", DepthPolicy, UnknownPolicy, CitationPolicy, MutationPolicy)


def _choices(kind: type[StrEnum]) -> str:
    return ", ".join(member.value for member in kind)


def policies_from_payload(payload: Mapping[str, Any]) -> VariantPolicies:
    """Read an Unleash variant payload (``{"type": "json", "value": "{...}"}``).

    The value must be a JSON object whose keys are among ``PAYLOAD_KEYS`` and whose values name
    a policy; anything else raises FlagConfigError saying what is wrong (the caller names where
    the payload came from).
    """
    kind = payload.get("type")
    if kind != PAYLOAD_TYPE:
        raise FlagConfigError(f"is of type {kind!r}; policies are read from a 'json' payload")
    value = payload.get("value")
    if not isinstance(value, str):
        raise FlagConfigError("has no JSON text in its 'value'")
    try:
        body = json.loads(value)
    except json.JSONDecodeError as error:
        raise FlagConfigError(f"is not valid JSON ({error})") from None
    if not isinstance(body, dict):
        raise FlagConfigError(f"is not a JSON object of policies ({', '.join(PAYLOAD_KEYS)})")
    unknown = sorted(set(body) - set(PAYLOAD_KEYS))
    if unknown:
        raise FlagConfigError(
            f"has unknown key(s) {', '.join(map(repr, unknown))} (known: {', '.join(PAYLOAD_KEYS)})"
        )
    return VariantPolicies(
        depth_policy=_payload_policy(body, "depth_policy", DepthPolicy),
        unknown_policy=_payload_policy(body, "unknown_policy", UnknownPolicy),
        citation_policy=_payload_policy(body, "citation_policy", CitationPolicy),
        mutation_policy=_payload_policy(body, "mutation_policy", MutationPolicy),
    )


def _payload_policy(body: Mapping[str, Any], key: str, kind: type[_Policy]) -> _Policy | None:
    if key not in body:
        return None
    value = body[key]
    if not isinstance(value, str) or value not in {member.value for member in kind}:
        raise FlagConfigError(f"{key} {value!r} is not one of {_choices(kind)}")
    return kind(value)
