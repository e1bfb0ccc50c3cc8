"""The decision's output formats, and the one mapping from each to its renderer.

``OutputFormat`` names the forms a decision is printed in (``reconcile --format``: text, JSON,
Markdown, SARIF); ``RENDERERS`` maps every member to a function ``render(decision) -> str``,
and ``render_decision`` prints a decision in one of them. The commands choose here and nowhere
else; a new decision output is a member and an entry (``tests/outputs/test_registry.py`` checks
that every member has one).

Light on purpose: the enum is built when a command module is imported (``--help`` included), so
each renderer imports what it draws with (the model, SARIF, the Markdown renderer) only when it
is called. It does not hold the GitHub step's own outputs (annotations, the comment body, step
outputs, the job summary): those are ``coverage_gate.outputs.github``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coverage_gate.contracts.model import DecisionDocument

__all__ = ["RENDERERS", "OutputFormat", "Renderer", "render_decision"]

#: A decision in one output format: a pure function of the decision.
Renderer = Callable[["DecisionDocument"], str]


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    SARIF = "sarif"


def _text(decision: DecisionDocument) -> str:
    """For a terminal (``coverage_gate.outputs.render.text``)."""
    from coverage_gate.outputs import render  # noqa: PLC0415 - start-up: see the docstring

    return render.text(decision)


def _json(decision: DecisionDocument) -> str:
    """The decision document itself, as ``-o`` writes it."""
    from coverage_gate.edges.files import dump_model  # noqa: PLC0415 - start-up

    return dump_model(decision)


def _markdown(decision: DecisionDocument) -> str:
    """A PR comment (``coverage_gate.outputs.render.markdown``)."""
    from coverage_gate.outputs import render  # noqa: PLC0415 - start-up

    return render.markdown(decision)


def _sarif(decision: DecisionDocument) -> str:
    """A SARIF 2.1.0 log of the decision's findings, naming this version of the tool."""
    from coverage_gate.outputs.sarif import sarif_text, tool_version  # noqa: PLC0415 - sarif only

    return sarif_text(decision, tool_version=tool_version())


#: Every output format's renderer.
RENDERERS: Mapping[OutputFormat, Renderer] = MappingProxyType(
    {
        OutputFormat.TEXT: _text,
        OutputFormat.JSON: _json,
        OutputFormat.MARKDOWN: _markdown,
        OutputFormat.SARIF: _sarif,
    }
)


def render_decision(decision: DecisionDocument, output_format: OutputFormat) -> str:
    """``decision`` in ``output_format``."""
    return RENDERERS[output_format](decision)
