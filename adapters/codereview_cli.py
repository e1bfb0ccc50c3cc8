"""codereview-cli task artifacts: a reviewer task's ``metadata.json`` (``schema_version`` 4).

codereview-cli (open-cli-collective/codereview-cli) writes, per LLM task, a folder
``llm-tasks/<url-encoded task id>-<first 12 hex of the head SHA>/`` holding the reviewer's
validated output (``validated-output.json``, our reviewer output v1) and ``metadata.json``, written
last. From ``schema_version`` 4 the metadata carries ``reviewer_tool_evidence.trace``: a bounded
per-call record of the pi RPC tool calls the harness saw, already paired:

```
{version: 1, source, stream_complete, truncated, dropped_events,
 calls: [{call_id?, tool: cr_read|cr_diff, path?, read_view?: file|symlink,
          status: succeeded|failed|incomplete, start_observed, end_observed,
          provenance_issue?, requested_range?: {offset, limit}, output?: {bytes, truncated}}]}
```

This module only decodes: the contract as strict models (fields other than these are
upstream's own and passed over), and each call as a ``TraceCall``, whose evidence rules live in
``coverage_gate.core.tracecalls``. No trace means the harness's adapter did not provide the per-call
contract: evidence unavailable (capability ``none``), not "no calls".

A ``schema_version`` below 4 has no trace and is refused, naming the version; one above 4, or a
trace ``version`` other than 1, is newer than this reader and refused too. Numbers are 64-bit, as
upstream writes them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal, NotRequired

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, with_config

# pydantic reads typing.TypedDict only from Python 3.12 on
from typing_extensions import TypedDict

from coverage_gate.contracts.enums import IssueKind
from coverage_gate.core.events import FormatKnowledge
from coverage_gate.core.tracecalls import ReadView, TraceCall, TraceStatus

__all__ = [
    "DESCRIPTION",
    "INT64_MAX",
    "KNOWS",
    "LABELS",
    "NAME",
    "SCHEMA_VERSION",
    "TRACE_VERSION",
    "Call",
    "Int64",
    "Metadata",
    "Output",
    "ProvenanceIssue",
    "RequestedRange",
    "ToolEvidence",
    "Trace",
    "trace_call",
    "version_problem",
]

NAME = "codereview-cli"
DESCRIPTION = (
    "codereview-cli task metadata.json (schema 4): its per-call trace; capability none without one"
)
SCHEMA_VERSION = 4
TRACE_VERSION = 1
# A document, not a stream: the versions it reads are refused outside 4 (trace 1), so nothing in
# it can drift; its calls are already the harness's pi calls.
KNOWS = FormatKnowledge(
    client="codereview-cli",
    events=frozenset(),
    reads=frozenset({"cr_read", "cr_diff"}),
    not_reads={},
    fields=("reviewer_tool_evidence.trace.calls", "reviewer_tool_evidence.trace.stream_complete"),
)
INT64_MAX = 2**63 - 1

Int64 = Annotated[int, Field(ge=0, le=INT64_MAX)]


class ProvenanceIssue(StrEnum):
    """The labels a version 1 trace gives a call whose provenance it could not establish."""

    MISSING_END = "missing_end"
    MISSING_START = "missing_start"
    AMBIGUOUS_CALL_ID = "ambiguous_call_id"
    CALL_ID_UNAVAILABLE = "call_id_unavailable"
    OUTCOME_UNAVAILABLE = "outcome_unavailable"
    ARGUMENTS_UNAVAILABLE = "arguments_unavailable"
    ARGUMENTS_AMBIGUOUS = "arguments_ambiguous"
    RANGE_UNAVAILABLE = "range_unavailable"
    READ_VIEW_UNAVAILABLE = "read_view_unavailable"
    PATH_UNAVAILABLE = "path_unavailable"
    PATH_OMITTED = "path_omitted"


#: Each label as our issue kind: the same word where ours has it; an outcome that could not be
#: established is our ``outcome_unreadable`` (the call's file is unknown, never absent).
LABELS: dict[ProvenanceIssue, IssueKind] = {
    label: IssueKind.OUTCOME_UNREADABLE
    if label is ProvenanceIssue.OUTCOME_UNAVAILABLE
    else IssueKind(label.value)
    for label in ProvenanceIssue
}


class _Upstream(BaseModel):
    """Upstream's fields, strictly typed; fields it adds that are not read here pass."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)


def _integer(value: object) -> object:
    """A literal matches by equality, and ``True == 1.0 == 1``: only an integer passes on."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be an integer, not {value!r}")  # noqa: TRY004 - a field error
    return value


# Calls are read as typed dicts (validated as strictly, without a model object per call): a run
# holds thousands of them.
_CALL_CONFIG = ConfigDict(extra="ignore", strict=True)


@with_config(_CALL_CONFIG)
class RequestedRange(TypedDict):
    offset: Int64
    limit: Int64


@with_config(_CALL_CONFIG)
class Output(TypedDict):
    bytes: Int64
    truncated: bool


@with_config(_CALL_CONFIG)
class Call(TypedDict):
    call_id: NotRequired[str | None]
    tool: str
    path: NotRequired[str | None]
    read_view: NotRequired[ReadView | None]
    status: TraceStatus
    start_observed: bool
    end_observed: bool
    provenance_issue: NotRequired[ProvenanceIssue | None]
    requested_range: NotRequired[RequestedRange | None]
    output: NotRequired[Output | None]


def _no_calls(value: object) -> object:
    """Go writes a nil list as ``null``: no calls."""
    return [] if value is None else value


class Trace(_Upstream):
    version: Annotated[Literal[1], BeforeValidator(_integer)]
    source: str
    stream_complete: bool
    truncated: bool
    dropped_events: Int64
    calls: Annotated[list[Call], BeforeValidator(_no_calls)]


class ToolEvidence(_Upstream):
    diff_status: str | None = None
    diff_diagnostic: str | None = None
    trace: Trace | None = None


class Metadata(_Upstream):
    """A reviewer task's ``metadata.json``, as far as it is read here."""

    schema_version: Annotated[Literal[4], BeforeValidator(_integer)]
    task_id: str
    status: str
    reviewer_tool_evidence: ToolEvidence | None = None

    @property
    def trace(self) -> Trace | None:
        evidence = self.reviewer_tool_evidence
        return evidence.trace if evidence is not None else None


def _number(value: object) -> int:
    """An integer field's value; anything else counts as 0 (the model then says what it is)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def version_problem(document: object) -> str | None:
    """What makes a document's versions unreadable here, said with the version, or ``None``."""
    if not isinstance(document, dict):
        return None  # the model says what is wrong with it
    version = document.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool):
        if version < SCHEMA_VERSION:
            return (
                f"field 'schema_version': {version}: metadata before schema_version "
                f"{SCHEMA_VERSION} holds no tool trace; codereview-cli itself refuses to reuse "
                "it. Re-run the review with a codereview-cli that writes schema_version 4"
            )
        if version > SCHEMA_VERSION:
            return (
                f"field 'schema_version': {version} is newer than this coverage-gate reads "
                f"({SCHEMA_VERSION}); upgrade coverage-gate"
            )
    evidence = document.get("reviewer_tool_evidence")
    trace = evidence.get("trace") if isinstance(evidence, dict) else None
    trace_version = trace.get("version") if isinstance(trace, dict) else None
    if _number(trace_version) > TRACE_VERSION:
        return (
            f"field 'reviewer_tool_evidence.trace.version': {trace_version} is newer than "
            f"this coverage-gate reads ({TRACE_VERSION}); upgrade coverage-gate"
        )
    return None


def trace_call(call: Call) -> TraceCall:
    """One call of the trace, in the core's terms."""
    label = call.get("provenance_issue")
    requested = call.get("requested_range")
    output = call.get("output")
    return TraceCall(
        tool=call["tool"],
        status=call["status"],
        start_observed=call["start_observed"],
        end_observed=call["end_observed"],
        call_id=call.get("call_id") or None,
        path=call.get("path"),
        view=call.get("read_view"),
        label=LABELS[label] if label is not None else None,
        label_name=label.value if label is not None else None,
        offset=requested["offset"] if requested is not None else 0,
        limit=requested["limit"] if requested is not None else 0,
        output_bytes=output["bytes"] if output is not None else None,
    )
