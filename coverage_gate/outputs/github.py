"""A decision as GitHub Actions shows it: annotations (workflow commands), step outputs, the job
summary and the body of the one pull-request comment a workflow keeps up to date.

Pure: the caller writes the files and chooses the output delimiter.

Workflow commands (``::warning file=PATH,title=T::MESSAGE``) escape their message's ``%``, CR
and LF, and each property value's ``%``, CR, LF, ``:`` and ``,`` as GitHub's runner reads them
back. Step outputs take ``NAME=VALUE``, or for a value with a line break the delimiter form
``NAME<<DELIMITER`` / value / ``DELIMITER``.
"""

from __future__ import annotations

from collections.abc import Mapping

from coverage_gate.contracts.model import DecisionDocument
from coverage_gate.outputs import render
from coverage_gate.outputs.findings import Finding, findings

__all__ = [
    "ANNOTATIONS_PER_LEVEL",
    "COMMENT_LIMIT",
    "COMMENT_MARKER",
    "SUMMARY_LIMIT",
    "annotation",
    "annotation_lines",
    "comment_body",
    "decision_outputs",
    "escape_data",
    "escape_property",
    "output_entry",
    "outputs_text",
    "summary",
    "workflow_command",
]

#: The first line of every comment body: a workflow finds its earlier comment by it and edits it.
COMMENT_MARKER = "<!-- coverage-gate -->"
#: GitHub shows at most this many annotations of one level per step; more are dropped unseen.
ANNOTATIONS_PER_LEVEL = 10
#: GitHub refuses a comment body longer than this many characters.
COMMENT_LIMIT = 65_536
#: GitHub refuses a step summary larger than 1 MiB; this leaves room for other steps' text.
SUMMARY_LIMIT = 1_000_000


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF encoded (``%`` first)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as a message, and ``:`` and ``,`` too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, message: str, properties: Mapping[str, str]) -> str:
    """``::command key=value,key=value::message``, escaped."""
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{command}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(finding: Finding, *, path_prefix: str = "") -> str:
    """One finding as an ``error`` (the mode enforces) or ``warning`` annotation on its file.
    ``path_prefix`` places a repository checked out below the workspace (``sub/``)."""
    spot = finding.spot
    properties = {"file": path_prefix + spot.path}
    if spot.start_line is not None:
        properties["line"] = str(spot.start_line)
        if spot.end_line is not None:
            properties["endLine"] = str(spot.end_line)
    properties["title"] = f"coverage-gate: {finding.rule.title} ({finding.agent_id})"
    return workflow_command("error" if finding.enforced else "warning", finding.message, properties)


def annotation_lines(decision: DecisionDocument, *, path_prefix: str = "") -> list[str]:
    """The decision's findings as annotations, as many as GitHub shows in one step; when there
    are more, a notice says how many were left out and where to read them."""
    found = findings(decision)
    shown = found[:ANNOTATIONS_PER_LEVEL]
    lines = [annotation(finding, path_prefix=path_prefix) for finding in shown]
    rest = len(found) - len(shown)
    if rest:
        lines.append(
            workflow_command(
                "notice",
                f"{rest} more finding(s) not annotated (GitHub shows {ANNOTATIONS_PER_LEVEL} per "
                "step): the job summary and the decision list them all",
                {"title": "coverage-gate"},
            )
        )
    return lines


def output_entry(name: str, value: str, delimiter: str) -> str:
    """One step output: ``name=value``, or the delimiter form when the value spans lines."""
    if "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    if delimiter in value:
        raise ValueError(f"output {name}: the delimiter occurs in the value")
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def outputs_text(outputs: Mapping[str, str], delimiter: str) -> str:
    return "".join(output_entry(name, value, delimiter) for name, value in outputs.items())


def _bool(value: bool) -> str:
    return "true" if value else "false"


def decision_outputs(decision: DecisionDocument, files: Mapping[str, str]) -> dict[str, str]:
    """The action's outputs: the verdict, whether it was (or would be) downgraded, the note, and
    the paths of the files written (``files``: output name → path)."""
    return {
        "verdict": decision.verdict_out.value,
        "downgraded": _bool(decision.downgraded),
        "would_downgrade": _bool(decision.would_downgrade),
        "mode": decision.mode.value,
        "findings": str(len(findings(decision))),
        "note": decision.note,
        **files,
    }


def _cut(text: str, limit: int, trailer: str, *, in_bytes: bool = False) -> str:
    """``text`` whole when it fits in ``limit`` characters (UTF-8 bytes with ``in_bytes``), else
    its first whole lines and ``trailer``."""
    size = len(text.encode()) if in_bytes else len(text)
    if size <= limit:
        return text
    room = limit - len(trailer.encode() if in_bytes else trailer) - 1
    kept = text.encode()[:room].decode(errors="ignore") if in_bytes else text[:room]
    return f"{kept.rsplit(chr(10), 1)[0]}\n{trailer}"


def summary(decision: DecisionDocument) -> str:
    """The job summary: the decision in Markdown."""
    return _cut(
        render.markdown(decision),
        SUMMARY_LIMIT,
        "\n_Cut to fit GitHub's step summary limit: the decision document has every file._\n",
        in_bytes=True,
    )


def comment_body(decision: DecisionDocument) -> str:
    """The pull-request comment: ``COMMENT_MARKER`` on its first line, then the decision in
    Markdown, cut to fit GitHub's comment limit."""
    return _cut(
        f"{COMMENT_MARKER}\n{render.markdown(decision)}",
        COMMENT_LIMIT,
        "\n_Cut to fit GitHub's comment limit: the job summary and the decision document have "
        "every file._\n",
    )
