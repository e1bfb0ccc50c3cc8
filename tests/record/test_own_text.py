"""The model's own text never credits a file (DESIGN §6 rule 25), in any spelling a shell
undoes, written in this call or an earlier one.

From the real Claude Code capture of a shell-only review (``content_claude_shell_only``: ``git
diff``, then ``cat`` or ``sed`` of each changed file): its ``git diff`` call is dropped, so each
file is evidenced by its own command's output alone. The ``cat src/util/strings.py`` call is then
rewritten as a reviewer that never read the file would write it: a command that prints the lines
itself (``echo`` per line, ``printf``, ``echo -e``, ``$'...'``, ``base64 -d``, hex), or a
``Write`` of the lines to a scratch file and a ``cat`` of that. The output is the file's text, as
before; the call's own arguments hold it. strings.py is then unsupported, under every depth
policy; the honest capture, with the same drop, verifies it."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from coverage_gate.contracts.model import EvidenceDocument
from tests.conftest import DATA, REVISION_FILES, record_bytes, revision_content

CAPTURE = DATA / "claude-code" / "content_claude_shell_only.jsonl"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
STRINGS = "src/util/strings.py"
TEXT = (REVISION_FILES / STRINGS).read_text()
LINES = TEXT.rstrip("\n").split("\n")

Line = dict[str, Any]


def _quoted(line: str) -> str:
    return "'" + line.replace("'", "'\\''") + "'"


def _ansi_c(text: str) -> str:
    return "$'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


SPELLINGS: dict[str, Callable[[], str]] = {
    "echo per line": lambda: "\n".join(f"echo {_quoted(line)}" for line in LINES),
    "echo joined by ;": lambda: "; ".join(f"echo {_quoted(line)}" for line in LINES),
    "printf": lambda: "printf '%s\\n' " + " ".join(_quoted(line) for line in LINES),
    "echo -e": lambda: "echo -e " + _quoted(TEXT.rstrip("\n").replace("\n", "\\n")),
    "ansi-c": lambda: "echo " + _ansi_c(TEXT.rstrip("\n")),
    "base64": lambda: f"echo {base64.b64encode(TEXT.encode()).decode()} | base64 -d",
    "hex": lambda: f"echo {TEXT.encode().hex()} | xxd -r -p",
}


def _lines() -> list[Line]:
    return [json.loads(raw) for raw in CAPTURE.read_text().splitlines()]


def _blocks(obj: Line) -> list[Line]:
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _without_git_diff(lines: list[Line]) -> list[Line]:
    """The capture with its ``git diff`` call's start and end lines left out."""
    ids = {
        block["id"]
        for obj in lines
        for block in _blocks(obj)
        if block.get("type") == "tool_use" and block["input"].get("command") == "git diff"
    }
    return [
        obj
        for obj in lines
        if not any(
            block.get("id") in ids or block.get("tool_use_id") in ids for block in _blocks(obj)
        )
    ]


def _with_command(lines: list[Line], command: str) -> list[Line]:
    """The ``cat src/util/strings.py`` call with ``command`` in its place."""
    out = copy.deepcopy(lines)
    for obj in out:
        for block in _blocks(obj):
            if (
                block.get("type") == "tool_use"
                and block["input"].get("command") == f"cat {STRINGS}"
            ):
                block["input"]["command"] = command
    return out


def _with_scratch_write(lines: list[Line]) -> list[Line]:
    """A ``Write`` of the file's text to a scratch file before the call, and the call a ``cat``
    of the scratch file: the text printed back is the model's own."""
    out = _with_command(lines, "cat /tmp/notes.txt")
    at = next(
        index
        for index, obj in enumerate(out)
        if any(b.get("input", {}).get("command") == "cat /tmp/notes.txt" for b in _blocks(obj))
    )
    template = out[at]
    write = copy.deepcopy(template)
    block = next(b for b in _blocks(write) if b.get("type") == "tool_use")
    block.update(id="toolu_scratch_write", name="Write")
    block["input"] = {"file_path": "/tmp/notes.txt", "content": TEXT}
    result = copy.deepcopy(out[at + 1])
    for item in _blocks(result):
        if item.get("type") == "tool_result":
            item.update(tool_use_id="toolu_scratch_write", content="File created successfully")
    result.pop("tool_use_result", None)
    return [*out[:at], write, result, *out[at:]]


def _record(lines: list[Line]) -> EvidenceDocument:
    data = "".join(json.dumps(obj) + "\n" for obj in lines).encode()
    return record_bytes(data, "claude-code", diff=DIFF, content=revision_content())


def _credited(document: EvidenceDocument) -> bool:
    found = document.file(STRINGS)
    return found is not None and found.content is not None and found.content.credited > 0


def test_the_honest_capture_without_its_git_diff_credits_strings_py() -> None:
    assert _credited(_record(_without_git_diff(_lines())))


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_text_the_command_itself_holds_never_credits(spelling: str) -> None:
    lines = _with_command(_without_git_diff(_lines()), SPELLINGS[spelling]())
    assert not _credited(_record(lines)), spelling


def test_text_an_earlier_call_wrote_never_credits_when_printed_back() -> None:
    assert not _credited(_record(_with_scratch_write(_without_git_diff(_lines()))))


def _failed(lines: list[Line], tool: str | None = None) -> list[Line]:
    """The ``cat src/util/strings.py`` call ended as a failure (``cat F; exit 1``: Claude Code
    puts ``Exit code 1`` over the output), or its tool renamed ``tool``."""
    out = copy.deepcopy(lines)
    target = None
    for obj in out:
        for block in _blocks(obj):
            if (
                block.get("type") == "tool_use"
                and block["input"].get("command") == f"cat {STRINGS}"
            ):
                target = block["id"]
                if tool is not None:
                    block["name"] = tool
                    block["input"] = {"file_path": f"/home/user/repo/{STRINGS}"}
    for obj in out:
        for block in _blocks(obj):
            if block.get("type") == "tool_result" and block.get("tool_use_id") == target:
                block["is_error"] = True
                block["content"] = "Exit code 1\n" + TEXT
        if any(b.get("tool_use_id") == target for b in _blocks(obj)):
            obj.pop("tool_use_result", None)
    return out


def test_a_failed_commands_output_still_credits_what_it_printed() -> None:
    """What reached the model counts whatever the exit status (DESIGN §6 rule 25)."""
    assert _credited(_record(_failed(_without_git_diff(_lines()))))


def test_a_failed_read_tools_error_shows_nothing() -> None:
    """A read tool's failure is its error message: its text is never the file's evidence."""
    document = _record(_failed(_without_git_diff(_lines()), tool="Read"))
    found = document.file(STRINGS)
    assert found is not None and found.reads_failed == 1
    assert not _credited(document)
