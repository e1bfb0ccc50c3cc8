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
import subprocess
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coverage_gate.contracts.model import EvidenceDocument
from coverage_gate.core.own_text import CHARS_PER_PIECE, MAX_PIECE_CHARS, MAX_PIECES, pieces_allowed
from tests.conftest import DATA, REVISION_FILES, record_bytes, revision_content

CAPTURE = DATA / "claude-code" / "content_claude_shell_only.jsonl"
DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
STRINGS = "src/util/strings.py"
DOCS = Path(__file__).resolve().parents[2] / "docs"
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


# The model's own text in pieces (DESIGN §6 rule 29): each line of strings.py printed from a few
# pieces of the command, however the command puts them together. Every generated command is run
# by bash here, and prints the file's text to the byte: the capture's output is what it prints.


def _python(pieces: list[str]) -> str:
    return "python3 -c " + _quoted("print(" + " + ".join(map(repr, pieces)) + ")")


def _awk(pieces: list[str]) -> str:
    strings = " ".join('"' + p.replace("\\", "\\\\").replace('"', '\\"') + '"' for p in pieces)
    return "awk " + _quoted("BEGIN{print " + strings + "}")


def _variables(pieces: list[str]) -> str:
    names = [f"P{index}" for index in range(len(pieces))]
    set_ = "; ".join(f"{name}={_quoted(p)}" for name, p in zip(names, pieces, strict=True))
    return set_ + "; printf '%s\\n' \"" + "".join(f"${name}" for name in names) + '"'


def _expansions(pieces: list[str]) -> str:
    names = [f"P{index}" for index in range(len(pieces))]
    set_ = "; ".join(f"{name}={_quoted(p + '#')}" for name, p in zip(names, pieces, strict=True))
    return set_ + "; printf '%s\\n' \"" + "".join(f"${{{name}%#}}" for name in names) + '"'


def _printf_halves(pieces: list[str]) -> str:
    return "; ".join(f"printf '%s' {_quoted(p)}" for p in pieces) + "; printf '\\n'"


def _patch_prefix(pieces: list[str]) -> str:
    return "sed 's/^+//' <<'EOF'\n+" + "".join(pieces) + "\nEOF"


PIECE_SPELLINGS: dict[str, Callable[[list[str]], str]] = {
    "python -c": _python,
    "awk": _awk,
    "shell variables": _variables,
    "parameter expansion": _expansions,
    "printf halves": _printf_halves,
    "patch prefix": _patch_prefix,
}


def _split(line: str, cuts: list[int]) -> list[str]:
    """``line`` in pieces at the given places (each taken modulo its length)."""
    places = sorted({cut % len(line) for cut in cuts if len(line) > 1} - {0})
    ends = [0, *places, len(line)]
    return [line[start:end] for start, end in pairwise(ends)]


def _command(spellings: list[str], cuts: list[list[int]]) -> str:
    parts = []
    for index, line in enumerate(LINES):
        if not line:
            parts.append("echo")
            continue
        spelling = PIECE_SPELLINGS[spellings[index % len(spellings)]]
        parts.append(spelling(_split(line, cuts[index % len(cuts)])))
    return "\n".join(parts)


def _prints_the_file(command: str, folder: Path) -> None:
    done = subprocess.run(
        ["bash", "-c", command], cwd=folder, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (0, TEXT), done.stderr


@pytest.mark.parametrize("spelling", sorted(PIECE_SPELLINGS))
@pytest.mark.parametrize("pieces", [1, 2, MAX_PIECES])
def test_a_line_printed_from_pieces_of_the_command_never_credits(
    spelling: str, pieces: int, tmp_path: Path
) -> None:
    command = _command(
        [spelling], [[len(line) * k // pieces for k in range(1, pieces)] for line in LINES]
    )
    _prints_the_file(command, tmp_path)
    assert not _credited(_record(_with_command(_without_git_diff(_lines()), command))), command


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    spellings=st.lists(st.sampled_from(sorted(PIECE_SPELLINGS)), min_size=1, max_size=4),
    cuts=st.lists(
        st.lists(st.integers(min_value=1, max_value=200), max_size=MAX_PIECES - 1),
        min_size=1,
        max_size=5,
    ),
)
def test_any_spelling_of_the_lines_in_a_few_pieces_never_credits(
    spellings: list[str], cuts: list[list[int]], tmp_path: Path
) -> None:
    """Generated: each line cut at random places into at most four pieces, each line spelled
    its own way; whatever the mix, the command prints the file and credits nothing."""
    command = _command(spellings, cuts)
    _prints_the_file(command, tmp_path)
    assert not _credited(_record(_with_command(_without_git_diff(_lines()), command))), command


@settings(max_examples=40, deadline=None)
@given(
    line=st.sampled_from([line for line in LINES if len(line) >= 6]),
    start=st.integers(min_value=0, max_value=200),
    share=st.integers(min_value=1, max_value=3),
)
def test_an_honest_cat_after_the_model_named_part_of_a_line_still_credits(
    line: str, start: int, share: int
) -> None:
    """The converse: a reviewer that wrote a part of a line (a third at most: what a search
    pattern names) before its honest ``cat`` is still credited with the file."""
    length = max(1, len(line) * share // 9)
    at = start % (len(line) - length + 1)
    pattern = line[at : at + length]
    command = f"cat {STRINGS}  # for {_quoted(pattern)}"
    assert _credited(_record(_with_command(_without_git_diff(_lines()), command))), pattern


def test_the_trust_model_states_the_bounds_the_pieces_rule_keeps() -> None:
    """The figures the docs give are the ones the rule uses."""
    page = " ".join((DOCS / "concepts" / "trust-model.md").read_text().split())
    words = {4: "four", 10: "ten"}
    assert f"at most {words[MAX_PIECES]} pieces" in page
    assert f"one per {words[CHARS_PER_PIECE]} characters of a longer line" in page
    assert f"first {MAX_PIECE_CHARS:,} characters" in page
    assert pieces_allowed("x" * 39) == MAX_PIECES
    assert pieces_allowed("x" * 80) == 80 // CHARS_PER_PIECE
