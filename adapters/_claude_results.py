"""What a Claude Code ``tool_result`` says of its call (``adapters/claude_code.py`` decodes the
lines; Qwen Code's stream, written in the same shapes, is read the same way): the line range a
``Read`` reports about itself (``tool_use_result.file``) and the lines that shows, the text the
model got, a placeholder for a file already given, and the permission decisions that denied
calls. No decoding state: the decoder pairs ends with their calls.

What the client wraps around a result is declared per tool (``ResultShape``, DESIGN §6 rule
28): ``Read`` numbers its lines and may append ``<system-reminder>`` blocks and a notice;
``Bash`` passes what the command printed as it is, and says when it printed nothing. Only the
tool that writes a wrapping has it taken off: a ``cat`` of a file whose first column is 1, 2,
3 or that ends with a ``<system-reminder>`` block of its own is compared as it was printed.
"""

from __future__ import annotations

from typing import Final

import msgspec

from coverage_gate.contracts.enums import DriftKind
from coverage_gate.core.events import EMPTY_SHOWN, ByteSpan, Drift, Returned, Shown
from coverage_gate.core.presentation import Presentation, Transform

from ._json import (
    INT64_MAX,
    OUT_OF_RANGE,
    JsonObject,
    OutOfRange,
    get_int,
    get_list,
    get_obj,
    get_str,
    objects,
)
from ._returned import returned, without_reminders

__all__ = [
    "DENIED_DECISIONS",
    "LINE_RANGE",
    "PLACEHOLDER_PREFIXES",
    "PRESENTATION",
    "READ_RESULT",
    "RESULT_SHAPES",
    "SHELL_RESULT",
    "ResultShape",
    "denied_by_meta",
    "line_span",
    "reported_lines",
    "result_text",
    "returned_text",
    "span_drift",
]


DENIED_DECISIONS: Final = frozenset({"deny", "denied", "reject", "rejected"})
# What Claude Code returns instead of a file it already gave the model unchanged.
PLACEHOLDER_PREFIXES: Final = ("File unchanged since last read",)
# What Claude Code's ``Read`` returns for a file that is empty (2.1.252 and 2.1.328).
EMPTY_FILE: Final = (
    "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
)
# The notice Claude Code's ``Read`` (2.1.328) appends under a file that is not UTF-8, after its
# numbered lines: "[This file is not valid UTF-8: it uses a legacy encoding ...]".
LEGACY_NOTICE: Final = "\n\n[This file is not valid UTF-8"
# What Claude Code's ``Bash`` returns for a command that printed nothing (2.1.252 and 2.1.328).
NO_SHELL_OUTPUT: Final = "(Bash completed with no output)"
LINE_RANGE: Final = {"startLine": None, "numLines": None, "totalLines": None}


def line_span(detail: object) -> ByteSpan | OutOfRange | None:
    """The zero-based, end-exclusive line range a successful ``Read`` reports about itself;
    ``OUT_OF_RANGE`` when a value of it does not fit a 64-bit integer."""
    if not isinstance(detail, dict):
        return None
    file = get_obj(detail, "file")
    if file is None:
        return None
    start, count, total = (get_int(file, key) for key in ("startLine", "numLines", "totalLines"))
    if OUT_OF_RANGE in (start, count, total):
        return OUT_OF_RANGE
    if not isinstance(start, int) or not isinstance(count, int) or not isinstance(total, int):
        return None
    if start < 1 or count < 0 or total < 0:
        return None
    if start - 1 + count > INT64_MAX:
        return OUT_OF_RANGE
    return ByteSpan(offset=start - 1, end=start - 1 + count, total=total)


def reported_lines(span: ByteSpan | None) -> Shown | None:
    """The lines a successful ``Read`` reports it returned (1-based, inclusive)."""
    if span is None:
        return None
    if span.end <= span.offset:
        return EMPTY_SHOWN
    return Shown.lines(span.offset + 1, span.end, span.total)


class ResultShape(msgspec.Struct, frozen=True, kw_only=True):
    """What Claude Code wraps around one tool's result before the model gets it (module notes).

    ``numbered``: each line carries its number; ``reminders``: ``<system-reminder>`` blocks
    may follow the text; ``notice``: how a notice the client puts under the text starts;
    ``empty``: the client's words for a result that is nothing; ``placeholders``: how its
    stand-ins for a text already given start."""

    numbered: bool = False
    reminders: bool = False
    notice: str | None = None
    empty: tuple[str, ...] = ()
    placeholders: tuple[str, ...] = ()


#: ``Read`` (2.1.252 and 2.1.328): ``claude-*/read.jsonl``.
READ_RESULT: Final = ResultShape(
    numbered=True,
    reminders=True,
    notice=LEGACY_NOTICE,
    empty=(EMPTY_FILE,),
    placeholders=PLACEHOLDER_PREFIXES,
)
#: ``Bash``: what the command printed, as it is (``claude-*/cat.jsonl``, ``diff.jsonl``).
SHELL_RESULT: Final = ResultShape(empty=(NO_SHELL_OUTPUT,))
#: Each tool's result shape; any other tool's result is its text as it is.
RESULT_SHAPES: Final = {"Read": READ_RESULT, "Bash": SHELL_RESULT}
_AS_GIVEN: Final = ResultShape()


def returned_text(block: JsonObject, shape: ResultShape = _AS_GIVEN) -> Returned | None:
    """What a successful ``tool_result`` gave the model: its text, with what ``shape`` (its
    tool's) says the client wrapped around it taken off, and nothing else."""
    content = block.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        texts = [get_str(item, "text") for item in objects(content)]
        text = "\n".join(part for part in texts if part is not None)
    else:
        return None
    if shape.empty and text.strip() in shape.empty:
        return returned("", empty=True)
    if shape.reminders:
        text = without_reminders(text)
    if shape.placeholders and text.startswith(shape.placeholders):
        return returned(text, placeholder=True)
    if shape.notice is not None:
        notice = text.rfind(shape.notice, max(len(text) - 1024, 0))
        if notice >= 0 and text.rstrip().endswith("]"):
            text = text[: notice + 1]  # the numbered lines, then the client's notice
    return returned(text, numbers=shape.numbered)


def result_text(block: JsonObject) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for item in objects(content):
            text = get_str(item, "text")
            if text is not None:
                return text
    return ""


def denied_by_meta(line: JsonObject) -> frozenset[str]:
    """Call ids whose ``tool_result_meta`` permission decision was a denial."""
    denied: set[str] = set()
    for meta in objects(get_list(line, "tool_result_meta") or []):
        decision = get_obj(meta, "permission_decision")
        call_id = get_str(meta, "id")
        if (
            decision is not None
            and call_id is not None
            and get_str(decision, "decision") in DENIED_DECISIONS
        ):
            denied.add(call_id)
    return frozenset(denied)


def span_drift(detail: object, lineno: int) -> Drift | None:
    """Drift when a result's ``file`` line range holds a value that is not a number."""
    file = get_obj(detail, "file") if isinstance(detail, dict) else None
    if file is None:
        return None
    for field in LINE_RANGE:
        if field in file and get_int(file, field) is None:
            name = f"tool_use_result.file.{field}"
            return Drift(line=lineno, kind=DriftKind.FIELD_TYPE, name=name)
    return None


# What Claude Code does to a file's text before the model gets it (DESIGN §6 rule 23).
PRESENTATION: Final = Presentation(
    transforms=(
        Transform(
            name="Read: each line numbered (N<tab>), system reminders appended at the end",
            shown_by="claude-*/read.jsonl",
        ),
        Transform(name="byte-order mark dropped (Read)", shown_by="claude-*/read.jsonl bom.py"),
        Transform(name="CRLF as LF (Read)", shown_by="claude-*/read.jsonl crlf.txt"),
        Transform(
            name="bytes that are not UTF-8 as U+FFFD, under a notice (2.1.328: [This file is "
            "not valid UTF-8 ...])",
            shown_by="claude-*/read.jsonl latin1.txt sjis.txt",
        ),
        Transform(
            name="an empty file is a reminder (the file exists but the contents are empty)",
            shown_by="claude-*/read.jsonl emptied.txt",
        ),
        Transform(
            name="a binary file is refused (tool_use_error)",
            shown_by="claude-*/read.jsonl blob.bin",
        ),
        Transform(
            name="Bash output as printed, (Bash completed with no output) for none",
            shown_by="claude-*/cat.jsonl",
        ),
    ),
)
