"""A choice is read in the spellings people type: case and ``-``/``_`` do not matter, and a
value that is none of the choices still names them all."""

from __future__ import annotations

import pytest
import typer

from coverage_gate.commands._choice import choice
from coverage_gate.contracts.enums import DepthPolicy, Verdict

SPELLINGS = [
    (Verdict, "request-changes", Verdict.REQUEST_CHANGES),
    (Verdict, "Request_Changes", Verdict.REQUEST_CHANGES),
    (Verdict, "APPROVE", Verdict.APPROVE),
    (Verdict, " comment ", Verdict.COMMENT),
    (DepthPolicy, "all_hunks", DepthPolicy.ALL_HUNKS),
    (DepthPolicy, "All-Hunks", DepthPolicy.ALL_HUNKS),
]


@pytest.mark.parametrize(("kind", "typed", "meant"), SPELLINGS)
def test_case_and_dashes_do_not_matter(kind: type, typed: str, meant: object) -> None:
    assert choice(kind)["parser"](typed) is meant


def test_a_value_that_is_no_choice_names_them_all() -> None:
    with pytest.raises(typer.BadParameter, match="'approved' is not one of: approve, comment"):
        choice(Verdict)["parser"]("approved")
