"""Qwen Code: ``qwen -p PROMPT --output-format stream-json`` output.

Qwen Code writes Claude Code's stream-json shapes (``coverage_gate.adapters.claude_code``): a
``system/init`` line with ``cwd`` and ``qwen_code_version``, ``assistant`` lines with
``tool_use {id, name, input}`` blocks, ``user`` lines with ``tool_result {tool_use_id, is_error,
content}`` blocks, ``stream_event`` lines, and a final ``result`` line with
``permission_denials``. Everything is decoded as for Claude Code (pairing by id, sub-agent calls
under ``parent_tool_use_id``, unreadable lines, completion at the ``result`` line, relative paths
against the init ``cwd``) except what follows.

- ``read_file {file_path, offset?, limit?}`` is a read of ``file_path``; every other tool is
  ignored (``run_shell_command`` is never parsed; Qwen Code 0.24 registers no
  ``read_many_files``). Qwen Code refuses a relative ``file_path`` (a failed call).
- ``offset`` is a **0-based** line number (Claude Code's is 1-based) and ``limit`` a line count:
  ``offset=2, limit=5`` asks for lines 3-7, recorded as the zero-based range 2..7.
- Success is ``is_error`` false (or absent) and the call not listed in the ``result`` line's
  ``permission_denials``; Qwen Code marks a denied call ``is_error`` itself, so no result text is
  read as a denial.
- Which lines a successful ``read_file`` showed (DESIGN §6 rules 11-12) is told by its
  ``content``, which is Qwen Code's display text when it has one and otherwise what the model
  received: ``Read lines A-B of T from P`` (``of at least T``, `` (truncated)``: a range was asked
  for, or the file was cut) is lines A to B; A past T (an ``offset`` past the end) returned
  nothing. ``Unchanged: P`` (a repeated whole read of a file not changed since, answered from
  Qwen Code's cache) returned nothing this time: the earlier read is the evidence. Empty content
  returned nothing. Any other text is the file itself, returned whole. Without content, the range
  asked for (none: unknown).
"""

from __future__ import annotations

import re
from typing import Final

from coverage_gate.enums import Capability
from coverage_gate.events import (
    EMPTY_SHOWN,
    UNKNOWN_SHOWN,
    Action,
    ByteSpan,
    IgnoredAction,
    ReadAction,
    Returned,
    Shown,
    ToolEnd,
    UnreadableArguments,
)

from ._decoder import JsonLinesAdapter
from ._json import JsonObject, OutOfRange, get_str, key, objects
from ._line_reads import count_argument, read_input
from ._returned import returned
from .claude_code import (
    OTHER_CLIENT_INIT_HEAD,
    PERMISSION_DENIED,
    TOOL_ERROR,
    ClaudeCodeDecoder,
)

NAME: Final = "qwen-code"
READ_TOOL: Final = "read_file"

_LINES_READ = re.compile(
    r"Read lines (\d{1,18})-(\d{1,18}) of (at least )?(\d{1,18}) from .+?(?: \(truncated\))?"
)
_UNCHANGED = re.compile(r"Unchanged: .+")


def _asked(offset: int | None, limit: int | None) -> Shown:
    """The lines a ``read_file`` asks for (``offset`` is 0-based); no range: unknown, since
    Qwen Code cuts a long file without one."""
    if offset is None and limit is None:
        return UNKNOWN_SHOWN
    first = (offset or 0) + 1
    if limit is None:
        return Shown.lines(first, None)
    return Shown.lines(first, first + limit - 1) if limit else EMPTY_SHOWN


def _read_action(block: JsonObject, cwd: str | None) -> Action:
    if get_str(block, "name") != READ_TOOL:
        return IgnoredAction()
    found = read_input(block, READ_TOOL, "file_path")
    if isinstance(found, UnreadableArguments):
        return found
    path, arguments = found
    offset, limit = count_argument(arguments, "offset"), count_argument(arguments, "limit")
    if isinstance(offset, OutOfRange) or isinstance(limit, OutOfRange):
        return ReadAction(path=path, cwd=cwd, shown=UNKNOWN_SHOWN)
    return ReadAction(path=path, offset=offset, limit=limit, cwd=cwd, shown=_asked(offset, limit))


def _content(block: JsonObject) -> str | None:
    """The ``tool_result`` text: a string, or the first text block of a list; ``None`` when
    there is none."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for item in objects(content):
            text = get_str(item, "text")
            if text is not None:
                return text
    return None


def _returned(text: str | None) -> tuple[Shown | None, ByteSpan | None]:
    """What a successful ``read_file`` returned, as its result text tells."""
    if text is None:
        return None, None
    if text == "" or _UNCHANGED.fullmatch(text):
        return EMPTY_SHOWN, None
    found = _LINES_READ.fullmatch(text)
    if found is None:
        return Shown.whole(), None
    first, last = int(found.group(1)), int(found.group(2))
    total = None if found.group(3) else int(found.group(4))
    if first < 1 or last < first or (total is not None and first > total):
        return EMPTY_SHOWN, None  # an offset past the end
    span = None if total is None else ByteSpan(offset=first - 1, end=last, total=total)
    return Shown.lines(first, last, total), span


# Qwen Code's tools whose result is not what they read of the revision: its writing tools (the
# reviewer's own change) and a sub-agent's answer (model text).
NOT_READ_TEXT_TOOLS: Final = frozenset({"edit", "write_file", "replace", "task", "todo_write"})


def _given(text: str | None) -> Returned | None:
    """What a successful call gave the model, as its ``tool_result`` text says. A ranged
    ``read_file`` reports ``Read lines A-B of T from F`` there and an unchanged file
    ``Unchanged: ...``: what the tool showed Qwen Code's user, not the text the model got."""
    if not text:
        return None
    if _LINES_READ.fullmatch(text) or _UNCHANGED.fullmatch(text):
        return returned(text, placeholder=True)
    return returned(text)


class QwenCodeDecoder(ClaudeCodeDecoder):
    """Claude Code's decoder with Qwen Code's read tool and results."""

    no_text_tools = NOT_READ_TEXT_TOOLS

    def _action(self, block: JsonObject, cwd: str | None) -> Action:
        return _read_action(block, cwd)

    def _end(
        self,
        block: JsonObject,
        call_id: str,
        lineno: int,
        *,
        denied: bool,
        span: ByteSpan | OutOfRange | None,
    ) -> ToolEnd:
        no_error = "is_error" not in block or block["is_error"] is False
        self._remember(self._ended, call_id)
        if not no_error or denied:
            kind = PERMISSION_DENIED if denied else TOOL_ERROR
            return ToolEnd(call_id, None, False, lineno, error_type=kind)
        self._remember(self._succeeded, call_id)
        text = _content(block)
        shown, told = _returned(text)
        given = None if key(call_id) in self._no_text else _given(text)
        return ToolEnd(call_id, None, True, lineno, result_range=told, shown=shown, returned=given)


def _looks_like(obj: JsonObject) -> bool:
    return (
        get_str(obj, "type") == "system"
        and get_str(obj, "subtype") == "init"
        and "qwen_code_version" in obj
    )


ADAPTER: Final = JsonLinesAdapter(
    name=NAME,
    capability=Capability.PER_FILE,
    description=(
        "Qwen Code: `qwen -p PROMPT --output-format stream-json` output (read_file; offset is "
        "0-based)"
    ),
    decoder=QwenCodeDecoder,
    sniff_head=OTHER_CLIENT_INIT_HEAD,
    looks_like=_looks_like,
)
