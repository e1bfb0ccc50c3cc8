"""The plain evidence document (``coverage_gate.contracts.evidence_doc``) is the contract's twin: the same
fields in the same order with the same defaults, and written as the same bytes. ``record`` writes
it without loading the contract, so any drift between the two would change what it writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts import evidence_doc as plain
from coverage_gate.contracts import model
from coverage_gate.contracts.enums import Capability, Depth, DiffStatus, IssueKind
from coverage_gate.edges.files import dump_model
from coverage_gate.record.recording import Recorder, RecordSettings
from tests.conftest import DATA, REVISION_FILES

TWINS = [
    (plain.ByteRange, model.ByteRange),
    (plain.LineRange, model.LineRange),
    (plain.FileDepth, model.FileDepth),
    (plain.ContentSummary, model.ContentSummary),
    (plain.FileEvidence, model.FileEvidence),
    (plain.Counters, model.Counters),
    (plain.DiffSummary, model.DiffSummary),
    (plain.CallIssue, model.CallIssue),
    (plain.Bounds, model.Bounds),
    (plain.DriftEntry, model.DriftEntry),
    (plain.Mutation, model.Mutation),
    (plain.CannotVerify, model.CannotVerify),
    (plain.Checkout, model.Checkout),
    (plain.EvidenceDocument, model.EvidenceDocument),
]


def _plain_fields(struct: type[msgspec.Struct]) -> list[tuple[str, Any]]:
    """Each field's written name and its default as JSON (``None`` for a required field)."""
    fields = []
    for field in msgspec.structs.fields(struct):
        if field.default is not msgspec.NODEFAULT:
            default: Any = msgspec.json.encode(field.default)
        elif field.default_factory is not msgspec.NODEFAULT:
            default = msgspec.json.encode(field.default_factory())
        else:
            default = None
        fields.append((field.encode_name, default))
    return fields


def _model_fields(contract: type[BaseModel]) -> list[tuple[str, Any]]:
    fields = []
    for name, info in contract.model_fields.items():
        if info.default is not PydanticUndefined:
            value = info.default
            default: Any = (
                value.model_dump_json(by_alias=True).encode()
                if isinstance(value, BaseModel)
                else msgspec.json.encode(value)
            )
        elif info.default_factory is not None:
            made = info.default_factory()  # type: ignore[call-arg]
            default = (
                made.model_dump_json(by_alias=True).encode()
                if isinstance(made, BaseModel)
                else msgspec.json.encode(made)
            )
        else:
            default = None
        fields.append((info.alias or name, default))
    return fields


@pytest.mark.parametrize(("twin", "contract"), TWINS, ids=lambda c: c.__name__)
def test_the_plain_twin_has_the_contracts_fields_order_and_defaults(
    twin: type[msgspec.Struct], contract: type[BaseModel]
) -> None:
    assert _plain_fields(twin) == _model_fields(contract)


def test_every_evidence_contract_has_a_plain_twin() -> None:
    """A model the evidence document holds, added without a twin, would go unwritten."""
    reached: set[type[BaseModel]] = set()
    pending: list[type[BaseModel]] = [model.EvidenceDocument]
    while pending:
        contract = pending.pop()
        if contract in reached:
            continue
        reached.add(contract)
        for info in contract.model_fields.values():
            for found in _models_in(info.annotation):
                pending.append(found)
    assert reached == {contract for _, contract in TWINS}


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [found for arg in getattr(annotation, "__args__", ()) for found in _models_in(arg)]


def _recorded(path: Path, source: str) -> plain.EvidenceDocument:
    recorder = Recorder(ADAPTERS[source], RecordSettings(revision="r", repo_root="/repo"))
    recorder.feed(path.read_bytes())
    return recorder.finish_plain()


CAPTURES = sorted(
    (path, path.parent.name)
    for path in DATA.rglob("*.jsonl")
    if REVISION_FILES not in path.parents and path.parent.name in ADAPTERS
)


@pytest.mark.parametrize(("path", "source"), CAPTURES, ids=lambda c: str(c)[-48:])
def test_a_recorded_document_meets_the_contract_and_is_written_as_its_bytes(
    path: Path, source: str
) -> None:
    document = _recorded(path, source)
    validated = plain.contract(document)
    assert plain.dump(document) == dump_model(validated)


def test_the_captures_cover_every_kind_of_value_the_document_holds() -> None:
    """The test above would pass on documents with no files, issues or depth: they hold some."""
    documents = [_recorded(path, source) for path, source in CAPTURES]
    assert any(document.files for document in documents)
    assert any(document.issues for document in documents)
    assert any(file.ranges for document in documents for file in document.files)
    assert any(file.lines_seen for document in documents for file in document.files)


_counts = st.integers(min_value=0, max_value=2**63 - 1)
_texts = st.text(max_size=40)
_lines = st.builds(plain.LineRange, start=st.integers(1, 2**31), end=st.integers(1, 2**31))


@st.composite
def _documents(draw: st.DrawFn) -> plain.EvidenceDocument:
    depth = st.builds(
        plain.FileDepth,
        depth=st.sampled_from(Depth),
        changed_lines=_counts,
        unseen=st.lists(_lines, max_size=3),
        detail=_texts,
        unseen_truncated=st.booleans(),
    )
    files = st.builds(
        plain.FileEvidence,
        path=_texts,
        reads_succeeded=_counts,
        ranges=st.lists(
            st.builds(
                plain.ByteRange,
                offset=_counts,
                end=st.none() | _counts,
                total=st.none() | _counts,
            ),
            max_size=3,
        ),
        partial=st.booleans(),
        lines_seen=st.lists(_lines, max_size=3),
        depth=st.none() | depth,
    )
    issues = st.builds(
        plain.CallIssue,
        kind=st.sampled_from(IssueKind),
        line=st.none() | _counts,
        call_id=st.none() | _texts,
        tool=st.none() | _texts,
        detail=_texts,
    )
    return plain.EvidenceDocument(
        source=draw(_texts),
        agent=draw(st.none() | _texts),
        revision=draw(_texts),
        stream_complete=draw(st.booleans()),
        capability=draw(st.sampled_from(Capability)),
        counters=plain.Counters(lines=draw(_counts), calls=draw(_counts)),
        diff_status=draw(st.sampled_from(DiffStatus)),
        diff=plain.DiffSummary(total_bytes=draw(st.none() | _counts), pinned=draw(st.booleans())),
        files=draw(st.lists(files, max_size=3)),
        issues=draw(st.lists(issues, max_size=3)),
        bounds=plain.Bounds(max_files=draw(st.integers(1, 10**6))),
    )


@settings(max_examples=300, deadline=None)
@given(_documents())
def test_any_document_is_written_as_the_contract_writes_it(
    document: plain.EvidenceDocument,
) -> None:
    """Every character a string can hold (controls, quotes, non-ASCII, separators) and every
    integer the contract admits are written as pydantic writes them."""
    assert plain.dump(document) == dump_model(plain.contract(document))


def test_a_document_the_contract_refuses_is_refused() -> None:
    """``contract`` validates: a value the core should never make is an error, not a document."""
    bad = plain.EvidenceDocument(
        source="s",
        revision="r",
        stream_complete=True,
        capability=Capability.PER_FILE,
        counters=plain.Counters(calls=-1),
    )
    with pytest.raises(ValueError, match=r"counters\.calls"):
        plain.contract(bad)
