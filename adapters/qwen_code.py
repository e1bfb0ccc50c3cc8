"""Qwen Code: ``qwen -p PROMPT --output-format stream-json`` output.

Qwen Code writes Claude Code's stream-json shapes (``coverage_gate.adapters.claude_code``): a
``system/init`` line with ``cwd`` and ``qwen_code_version``, ``assistant`` lines with
``tool_use {id, name, input}`` blocks, ``user`` lines with ``tool_result {tool_use_id, is_error,
content}`` blocks, ``stream_event`` lines, and a final ``result`` line with
``permission_denials``. Everything is decoded as for Claude Code (pairing by id, sub-agent calls
under ``parent_tool_use_id``, unreadable lines, completion at the ``result`` line, relative paths
against the init ``cwd``) except what follows.

- ``read_file {file_path, offset?, limit?}`` is a read of ``file_path``; every other tool is
  ignored (``run_shell_command`` is never parsed as a read; Qwen Code 0.24 registers no
  ``read_many_files``). Qwen Code refuses a relative ``file_path`` (a failed call).
- ``edit``/``write_file``/``replace`` (``file_path``), ``notebook_edit`` (``notebook_path``) and
  ``enter_worktree`` change files, and so does a ``run_shell_command`` command that redirects
  into a file or runs ``git stash``/``checkout``/... (``adapters/_mutations.py``): mutations,
  never reads.
- Drift is watched as for Claude Code, against Qwen Code's own line, block and tool names
  (``KNOWS``); the client version is the init line's ``qwen_code_version``.
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
from collections.abc import Mapping
from typing import Final

from coverage_gate.contracts.client_versions import CHECKED
from coverage_gate.contracts.enums import Capability
from coverage_gate.core.events import (
    EMPTY_SHOWN,
    UNKNOWN_SHOWN,
    Action,
    ByteSpan,
    FormatKnowledge,
    ReadAction,
    Returned,
    Shown,
    ToolEnd,
    UnreadableArguments,
)
from coverage_gate.core.presentation import LEGACY_ENCODINGS, Presentation, Transform

from ._claude_results import ResultShape
from ._decoder import JsonLinesAdapter
from ._json import JsonObject, OutOfRange, get_str, key, objects
from ._line_reads import count_argument, read_input
from ._returned import returned
from .claude_code import (
    OTHER_CLIENT_INIT_HEAD,
    PERMISSION_DENIED,
    TOOL_ERROR,
    ClaudeCodeDecoder,
    other_action,
)

__all__ = [
    "ADAPTER",
    "EVENTS",
    "KNOWS",
    "NAME",
    "NOT_READ_TEXT_TOOLS",
    "NOT_READ_TOOLS",
    "READ_TOOL",
    "SHELL_TOOL",
    "WRITE_TOOLS",
    "QwenCodeDecoder",
]

NAME: Final = "qwen-code"
READ_TOOL: Final = "read_file"
SHELL_TOOL: Final = "run_shell_command"
# The tools that change files, and the input field naming the file each changes.
WRITE_TOOLS: Final = {
    "edit": "file_path",
    "write_file": "file_path",
    "replace": "file_path",  # the edit tool's earlier name
    "notebook_edit": "notebook_path",
    "enter_worktree": None,  # a git worktree made for the session
}
_TASKS = "the model's task list"
_SCHEDULING = "scheduling"
_TEAM = "agent teams: messages and plans, not files"
_MEDIA = "media processing, not a file of the revision as text"
_OMNI_TOOLS = (
    "downsample_image", "downscale_video", "downsample_audio", "extract_keyframes",
    "extract_audio", "clip_video", "convert_image", "transcribe_audio", "clip_image",
    "clip_audio", "caption_image",
)  # fmt: skip
# Qwen Code's built-in tools that are not reads, and why (its ``system/init`` lists them).
NOT_READ_TOOLS: Final = {
    SHELL_TOOL: "shell: commands are not parsed (a write when it changes files)",
    "exec": "runs code: not parsed",
    "glob": "file search: names, not contents",
    "grep_search": "search: matching lines, not a file's text as a read",
    "list_directory": "directory listing: names, not contents",
    "lsp": "language server queries: symbols, not a file's text as a read",
    "read_many_files": "not registered by Qwen Code 0.24: the call fails",
    "zoom_image": "an image, not a file's text",
    "agent": "sub-agent: its answer is model text (its own calls are in the stream)",
    "task": "sub-agent (the agent tool's earlier name): its answer is model text",
    "create_sub_session": "a sub-session: its answer is model text",
    "list_agents": "lists sub-agents",
    "send_message": "a message to another agent",
    "workflow": "runs a workflow of sub-agents",
    "todo_write": _TASKS,
    "task_create": _TASKS,
    "task_update": _TASKS,
    "task_list": _TASKS,
    "task_stop": "ends a background task",
    "monitor": "watches a background process's output",
    "save_memory": "the model's memory file, outside the repository",
    "skill": "a skill's instructions, not a file of the revision",
    "tool_search": "tool discovery",
    "tool_call": "calls another tool by name: not parsed",
    "web_fetch": "web: not the repository",
    "web_search": "web: not the repository",
    "image_gen": "makes an image",
    "ask_user_question": "a question to the user",
    "enter_plan_mode": "plan mode",
    "exit_plan_mode": "plan mode",
    "exit_worktree": "leaves the session's worktree",
    "cron_create": _SCHEDULING,
    "cron_list": _SCHEDULING,
    "cron_delete": _SCHEDULING,
    "loop_wakeup": _SCHEDULING,
    "team_create": _TEAM,
    "team_delete": _TEAM,
    "team_plan_approval": _TEAM,
    "request_shutdown": _TEAM,
    "structured_output": "the model's answer: model text",
    "report_findings": "the reviewer's findings: model text",
    "artifact": "the model's artifact: model text",
    "record_artifact": "the model's artifact: model text",
    "record_source": "records a source the model cites",
    "get_goal": "the session's goal",
    "update_goal": "the session's goal",
    "read_mcp_resource": "MCP resources, not files of the revision",
    **{f"omni_{name}": _MEDIA for name in _OMNI_TOOLS},
}
# Every line type and content-block type Qwen Code's stream-json writes, used here or not.
EVENTS: Final = frozenset(
    {
        "system", "assistant", "user", "result", "stream_event",
        "control_request", "control_response", "control_cancel_request",
        "text", "thinking", "tool_use", "tool_result", "image",
    }
)  # fmt: skip
PRESENTATION: Final = Presentation(
    trims_trailing_space=True,
    terminal=True,
    terminal_breaks=True,
    legacy=LEGACY_ENCODINGS,
    transforms=(
        Transform(name="byte-order mark dropped (read_file)", shown_by="qwen-*/read.jsonl bom.py"),
        Transform(
            name="trailing white space trimmed (read_file)", shown_by="qwen-*/read.jsonl tabs.py"
        ),
        Transform(
            name="bytes that are not UTF-8 decoded in a legacy encoding it detects (Latin-1, "
            "Shift JIS; shell output too at 0.24.4)",
            shown_by="qwen-*/read.jsonl latin1.txt sjis.txt, qwen-newest/cat.jsonl",
        ),
        Transform(
            name="shell output rendered by a terminal: escape sequences and controls gone, "
            "tabs as spaces (0.23.0)",
            shown_by="qwen-*/cat.jsonl control.txt, qwen-older/cat.jsonl tabs.py",
        ),
        Transform(
            name="shell output through a terminal's line discipline: a form feed or a vertical "
            "tab ends the line, a CR inside a line returns to its start and what follows "
            "overwrites it (0.23.0)",
            shown_by="qwen-older/cat.jsonl control.txt lone_cr.txt, qwen-older/diff.jsonl",
        ),
        Transform(
            name="an empty file is the placeholder (read_file completed with no output)",
            shown_by="qwen-*/read.received.json emptied.txt",
        ),
        Transform(
            name="a binary file is refused (Cannot display content of binary file)",
            shown_by="qwen-*/read.jsonl blob.bin",
        ),
    ),
)


KNOWS: Final = FormatKnowledge(
    client="Qwen Code",
    events=EVENTS,
    reads=frozenset({READ_TOOL}),
    not_reads=NOT_READ_TOOLS,
    writes=frozenset(WRITE_TOOLS),
    fields=(
        "type",
        "message",
        "message.content",
        "message.content[].type",
        "tool_use.id",
        "tool_use.name",
        "tool_result.tool_use_id",
        "tool_result.is_error",
        "tool_result.content",
        "system.tools",
        "qwen_code_version",
    ),
    versions=CHECKED.get(NAME),
    presentation=PRESENTATION,
    notes=(
        "MCP tools (mcp__*) are unknown tools: the model can call them with any path",
        "a run_shell_command command that redirects into a file or runs git stash/checkout/... "
        "is a write",
    ),
)

_LINES_READ = re.compile(
    r"Read lines (\d{1,18})-(\d{1,18}) of (at least )?(\d{1,18}) from .+?(?: \(truncated\))?"
)
_UNCHANGED = re.compile(r"Unchanged: .+")
# what read_file reports for a file it takes for binary (0.23.0 and 0.24.4; the model gets
# "Cannot display content of binary file"): nothing of it
_NO_OUTPUT: Final = "(read_file completed with no output)"
# run_shell_command's result: the command, its folder, its output, then its error, exit code,
# signal and process group (0.23.0 and 0.24.4); "(empty)" for an output that is nothing
_SHELL_RESULT = re.compile(
    r"Command: .*?\nDirectory: [^\n]*\nOutput: (?P<body>.*)\nError: .*?\nExit Code: [^\n]*"
    r"\nSignal: [^\n]*\nProcess Group PGID: [^\n]*",
    re.DOTALL,
)
_NO_SHELL_OUTPUT: Final = "(empty)"
_REFUSED = re.compile(r"Skipped binary file: .+")


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
    tool = get_str(block, "name")
    if tool != READ_TOOL:
        return other_action(block, cwd, tool, KNOWS, shell=SHELL_TOOL, writes=WRITE_TOOLS)
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
    if text == "" or _UNCHANGED.fullmatch(text) or _REFUSED.fullmatch(text):
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
NOT_READ_TEXT_TOOLS: Final = frozenset(
    {"edit", "write_file", "replace", "notebook_edit", "task", "agent", "todo_write"}
)


def _given(text: str | None) -> Returned | None:
    """What a successful call gave the model, as its ``tool_result`` text says. A ranged
    ``read_file`` reports ``Read lines A-B of T from F`` there and an unchanged file
    ``Unchanged: ...``: what the tool showed Qwen Code's user, not the text the model got."""
    if not text:
        return None
    if text == _NO_OUTPUT:
        return returned("", empty=True)
    shell = _SHELL_RESULT.fullmatch(text)
    if shell is not None:
        body = shell.group("body")
        return returned("", empty=True) if body == _NO_SHELL_OUTPUT else returned(body)
    if _LINES_READ.fullmatch(text) or _UNCHANGED.fullmatch(text) or _REFUSED.fullmatch(text):
        return returned(text, placeholder=True)
    return returned(text)


class QwenCodeDecoder(ClaudeCodeDecoder):
    """Claude Code's decoder with Qwen Code's read tool and results."""

    no_text_tools = NOT_READ_TEXT_TOOLS
    result_shapes: Mapping[str, ResultShape] = {}  # its results are read by ``_given``
    knows = KNOWS
    version_field = "qwen_code_version"

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
            # a run_shell_command that ran and failed: its output reached the model all the
            # same (DESIGN §6 rule 25); a read tool's failure is its error message
            text = _content(block) if not denied else None
            shell = _SHELL_RESULT.fullmatch(text) if text else None
            body = shell.group("body") if shell is not None else _NO_SHELL_OUTPUT
            given = returned(body) if body != _NO_SHELL_OUTPUT else None
            return ToolEnd.failed(call_id, lineno, kind, given)
        self._remember(self._succeeded, call_id)
        text = _content(block)
        shown, told = _returned(text)
        given = None if key(call_id) in self._no_text else _given(text)
        return ToolEnd(
            call_id=call_id,
            tool=None,
            succeeded=True,
            line=lineno,
            result_range=told,
            shown=shown,
            returned=given,
        )


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
    knows=KNOWS,
)
