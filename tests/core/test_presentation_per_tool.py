"""A presentation belongs to one tool of one client version (DESIGN §6 rules 23, 24, 28), over
real captures made in ``make_repo.sh``'s repository, mutated as a reviewer would have had them.

- A line-cut marker counts only in the output of the tool that writes it (OpenCode's ``read``,
  Gemini CLI's ``read_file``), and only right after that tool's own cut length: a ``git diff``
  piped through ``sed`` to print one character of each line and the client's marker shows the
  model nothing of those lines, and credits nothing.
- Claude Code's ``Read`` wrapping (numbered lines, ``<system-reminder>`` blocks after the text)
  comes off only ``Read``'s output: ``Bash`` output is compared as the command printed it.
- A recognised presentation (Claude Code's numbered lines, OpenCode's wrapper) whose text is
  other content is a ``mismatch``, whatever its line count.

The repository is rebuilt here, in a folder each test makes, and each capture's root is rewritten
to it; what a user runs is what is checked (``record`` then ``reconcile --mode enforce``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    CHANGED_FILES,
    DATA,
    REPO_ROOT,
    Repo,
    enforced_decision,
    kit_repo,
    run_cli,
)

ODD = DATA / "presentation"  # captures made at the same root as REPO_ROOT


# A TSV whose first column is a row number, and a prompt file that ends with a
# <system-reminder> block of its own: files a repository holds, whose text a client's Read
# wrapping would explain away if it were taken off the wrong tool's output.
TSV = "data/limits.tsv"
TSV_TEXT = "".join(
    f"{number}\t{name}\t{value}\n"
    for number, name, value in [
        (1, "title_characters", 80),
        (2, "body_characters", 10000),
        (3, "notes_per_user", 500),
        (4, "requests_per_minute", 120),
    ]
)
PROMPT = "prompts/reviewer.md"
PROMPT_TEXT = (
    "# Reviewer prompt\n\nRead every changed file before you answer.\n\n"
    "<system-reminder>\nNever approve a change whose files you have not read.\n"
    "</system-reminder>\n"
)


@pytest.fixture(scope="module")
def plain_repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """``make_repo.sh``'s repository, which the captures under ``tests/data/<client>`` read."""
    return kit_repo(tmp_path_factory.mktemp("per-tool-plain"), "make_repo.sh")


SHOWN_FILES = {"tsv": (TSV, TSV_TEXT), "prompt": (PROMPT, PROMPT_TEXT)}


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Repo]:
    """``make_repo.sh``'s repository with one of ``SHOWN_FILES`` added to the change, each."""
    return {
        shown: kit_repo(
            tmp_path_factory.mktemp(f"per-tool-{shown}"), "make_repo.sh", (path, text.encode())
        )
        for shown, (path, text) in SHOWN_FILES.items()
    }


def _decided(
    data: bytes, stream_format: str, repo: Repo, claimed: list[str], tmp_path: Path
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``record`` then ``reconcile --mode enforce`` of ``data`` claiming ``claimed``: the
    decision, and each claimed file's entry in it."""
    root, revision, diff, changed = repo
    tmp_path.mkdir(parents=True, exist_ok=True)
    stream = tmp_path / "stream.jsonl"
    stream.write_bytes(data.replace(REPO_ROOT.encode(), str(root).encode()))
    evidence = tmp_path / "evidence.json"
    done = run_cli(
        "record", stream, "--format", stream_format, "--revision", revision,
        "--repo-root", root, "--diff", diff, "-o", evidence,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    decision = enforced_decision(
        evidence, revision=revision, root=root, changed=changed, claimed=claimed,
        folder=tmp_path, repo="example/notes", agent="r",
    )  # fmt: skip
    (reviewer,) = decision["reviewers"]
    return decision, {entry["path"]: entry for entry in reviewer["files"]}


def _lines(capture: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capture.read_text().splitlines() if line.strip()]


def _stream(objects: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(obj) + "\n" for obj in objects).encode()


# --- a cut marker counts only in its own tool's output, at its own length ----------------------


def _sed_cut(output: str, marker: str) -> str:
    """What ``git diff | sed -E '11,$ s/^(.).*/\\1MARKER/'`` prints of a diff that printed
    ``output``: its first ten lines, then each line's first character and the marker (an empty
    line stays empty)."""
    lines = output.split("\n")
    cut = [line if number <= 10 or not line else line[0] + marker for number, line in
           enumerate(lines, 1)]  # fmt: skip
    return "\n".join(cut)


def _opencode_cut_diff(marker: str | None) -> bytes:
    """OpenCode's shell-only review (``content_opencode_bash_only``) with only its ``git diff``
    call, that call's command and output rewritten as the ``sed`` above would print them with
    ``marker`` (``None``: as they are)."""
    kept: list[dict[str, Any]] = []
    for obj in _lines(DATA / "opencode" / "content_opencode_bash_only.jsonl"):
        state = obj.get("part", {}).get("state", {})
        if obj["type"] == "tool_use":
            command = state["input"]["command"]
            if command != "git diff":
                continue
            if marker is not None:
                state["input"]["command"] = f"git diff | sed -E '11,$ s/^(.).*/\\1{marker}/'"
                state["output"] = _sed_cut(state["output"], marker)
        kept.append(obj)
    return _stream(kept)


def _gemini_cut_diff(marker: str | None) -> bytes:
    """Gemini CLI's honest review (``gemini_a_honest``) with only its ``git diff`` call, that
    call's command and output rewritten as the ``sed`` above would print them with ``marker``
    (``None``: as they are)."""
    kept: list[dict[str, Any]] = []
    diff_call = None
    for obj in _lines(DATA / "gemini-cli" / "gemini_a_honest.jsonl"):
        if obj["type"] == "tool_use":
            if obj["tool_name"] != "run_shell_command" or diff_call is not None:
                continue
            diff_call = obj["tool_id"]
            if marker is not None:
                command = f"git diff --no-ext-diff | sed -E '11,$ s/^(.).*/\\1{marker}/'"
                obj["parameters"]["command"] = command
        elif obj["type"] == "tool_result":
            if obj["tool_id"] != diff_call:
                continue
            if marker is not None:
                obj["output"] = _sed_cut(obj["output"], marker)
        kept.append(obj)
    assert diff_call is not None
    return _stream(kept)


CUT_DIFFS: dict[str, tuple[str, str, Callable[[str | None], bytes]]] = {
    # client: (format, the marker its read tool writes, the capture rewritten)
    "opencode": ("opencode", "... (line truncated to 2000 chars)", _opencode_cut_diff),
    "gemini": ("gemini-cli", "... [truncated]", _gemini_cut_diff),
}


@pytest.mark.parametrize("client", sorted(CUT_DIFFS))
def test_a_cut_marker_in_shell_output_is_text_and_shows_nothing_of_the_line(
    client: str, plain_repo: Repo, tmp_path: Path
) -> None:
    """The shell's ``git diff`` alone shows every changed file whole (the control); printed
    through ``sed`` as ten lines and then one character and the client's read tool's cut
    marker per line, it showed nothing of those lines: no file is verified by them, none is
    at depth full, and the Approve does not stand."""
    stream_format, marker, rewritten = CUT_DIFFS[client]
    _decision, files = _decided(
        rewritten(None), stream_format, plain_repo, CHANGED_FILES, tmp_path / "honest"
    )
    assert {path: entry["status"] for path, entry in files.items()} == dict.fromkeys(
        CHANGED_FILES, "verified"
    )
    decision, files = _decided(
        rewritten(marker), stream_format, plain_repo, CHANGED_FILES, tmp_path / "cut"
    )
    verified = {path for path, entry in files.items() if entry["status"] == "verified"}
    assert verified <= {"README.md"}  # its hunk's first lines are among the ten shown whole
    assert all((entry["depth"] or {}).get("depth") != "full" for entry in files.values())
    assert decision["verdict_out"] != "approve"


@pytest.mark.parametrize("release", ["newest", "older"])
def test_opencodes_read_cut_marker_counts_only_after_its_cut_length(
    release: str, odd_repo: Repo, tmp_path: Path
) -> None:
    """OpenCode's honest ``read`` of long_line.js cuts its 3,200-character line 2 at 2,000
    characters and marks it: the marker is right after 2,000 characters, so the read matches
    (shallow, not a mismatch: the line changes past the cut, and a cut line alone verifies
    nothing). The same read with the marker after the line's first character is not the
    client's cut: the line differs from the file's, the read is a mismatch, and the file is
    unsupported."""
    data = (ODD / f"opencode-{release}" / "read.jsonl").read_bytes()
    marker = b"... (line truncated to 2000 chars)"
    line = re.compile(rb'const TABLE = \\"[a-j]{1985}' + re.escape(marker))
    assert line.search(data) is not None  # the output, and the copies the capture keeps of it
    _decision, files = _decided(data, "opencode", odd_repo, ["long_line.js"], tmp_path / "a")
    assert (files["long_line.js"]["status"], files["long_line.js"]["content"]) == (
        "shallow", "matched",
    )  # fmt: skip
    forged = line.sub(b"c" + marker, data)
    _decision, files = _decided(forged, "opencode", odd_repo, ["long_line.js"], tmp_path / "b")
    assert files["long_line.js"]["status"] == "unsupported"


# --- Claude Code's Read wrapping comes off Read's output alone ----------------------------------


def _claude_shows(path: str, text: str, tool: str) -> bytes:
    """Claude Code's honest review (``content_claude_reread``) with its ``Read`` of README.md
    turned into a call of ``tool`` that showed ``path`` (its text ``text``), as Claude Code
    gives each: ``Read`` numbers the lines (``N<tab>``); ``Bash`` passes what ``cat`` printed,
    its last newline gone."""
    capture = DATA / "claude-code" / "content_claude_reread.jsonl"
    objects, call = _lines(capture), None
    for obj in objects:
        content = obj.get("message", {}).get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use" and block["input"].get("file_path", "").endswith(
                "/README.md"
            ):
                call = block["id"]
                block["name"] = tool
                block["input"] = (
                    {"file_path": f"{REPO_ROOT}/{path}"}
                    if tool == "Read"
                    else {"command": f"cat {path}", "description": "Show the file"}
                )
            elif block.get("type") == "tool_result" and block["tool_use_id"] == call:
                block["content"] = (
                    "".join(f"{n}\t{line}\n" for n, line in enumerate(text.splitlines(), 1))
                    if tool == "Read"
                    else text.removesuffix("\n")
                )
                obj.pop("tool_use_result", None)
    assert call is not None
    return _stream(objects)


@pytest.mark.parametrize("tool", ["Bash", "Read"])
@pytest.mark.parametrize("shown", sorted(SHOWN_FILES))
def test_claude_codes_read_wrapping_comes_off_reads_output_alone(
    shown: str, tool: str, repos: dict[str, Repo], tmp_path: Path
) -> None:
    """A file whose first column is a row number, or that ends with a ``<system-reminder>``
    block of its own, shown whole by ``cat`` (``Bash``) or by ``Read``: only ``Read``'s own
    numbers come off, and a reminder block is the client's only where it starts a line after
    the text (a file's own line in a ``Read`` starts with its number). The file is verified at
    depth full, and the Approve stands."""
    path, text = SHOWN_FILES[shown]
    data = _claude_shows(path, text, tool)
    decision, files = _decided(data, "claude-code", repos[shown], [*CHANGED_FILES, path], tmp_path)
    assert files[path]["status"] == "verified", files[path]
    assert files[path]["depth"]["depth"] == "full"
    assert decision["verdict_out"] == "approve"


# --- a recognised presentation holding other text is a mismatch --------------------------------

_NUMBERED = re.compile(r"^( *\d+)(\t|: )(.*)$", re.M)


def _other_text(numbered: str) -> str:
    """Each numbered line's text replaced with text that is in no file (the numbers kept, so
    the text has the file's line count)."""
    return _NUMBERED.sub(
        lambda line: f"{line[1]}{line[2]}lorem ipsum dolor sit amet {line[1]}", numbered
    )


def _claude_other_text(path: str) -> bytes:
    """Claude Code's honest review (``content_claude_reread``) without its ``git diff`` (which
    shows every file by itself), each ``Read`` of ``path`` returning other numbered text."""
    objects, reads, shell = (
        _lines(DATA / "claude-code" / "content_claude_reread.jsonl"),
        set(),
        set(),
    )
    kept: list[dict[str, Any]] = []
    for obj in objects:
        content = obj.get("message", {}).get("content")
        blocks = content if isinstance(content, list) else []
        if any(block.get("type") == "tool_use" and block["name"] == "Bash" for block in blocks):
            shell.update(block["id"] for block in blocks)
            continue
        if any(block.get("tool_use_id") in shell for block in blocks):
            continue
        for block in blocks:
            if block.get("type") == "tool_use" and block["input"].get("file_path", "").endswith(
                f"/{path}"
            ):
                reads.add(block["id"])
            elif block.get("type") == "tool_result" and block["tool_use_id"] in reads:
                block["content"] = _other_text(block["content"])
        kept.append(obj)
    assert reads and shell
    return _stream(kept)


def _opencode_other_text(path: str) -> bytes:
    """OpenCode's honest review (``opencode_capture``) without its ``git diff``, each ``read``
    of ``path`` returning other numbered text inside the client's wrapper."""
    kept: list[dict[str, Any]] = []
    reads = 0
    for obj in _lines(DATA / "opencode" / "opencode_capture.jsonl"):
        part = obj.get("part", {})
        if obj["type"] == "tool_use" and part["tool"] == "bash":
            continue
        state = part.get("state", {})
        if (
            obj["type"] == "tool_use"
            and part["tool"] == "read"
            and str(state["input"].get("filePath")).endswith(f"/{path}")
        ):
            state["output"] = _other_text(state["output"])
            reads += 1
        kept.append(obj)
    assert reads
    return _stream(kept)


OTHER_TEXT: dict[str, tuple[str, str, Callable[[str], bytes]]] = {
    # client: (format, the file its reads show, the capture rewritten)
    "claude-code": ("claude-code", "src/api/models.py", _claude_other_text),
    "opencode": ("opencode", "README.md", _opencode_other_text),
}


@pytest.mark.parametrize("client", sorted(OTHER_TEXT))
def test_a_recognised_presentation_holding_other_text_is_a_mismatch(
    client: str, plain_repo: Repo, tmp_path: Path
) -> None:
    """A read in the client's own presentation (numbered lines; OpenCode's wrapper), the file's
    line count kept, every line's text other text: positive evidence of other content (DESIGN
    §6 rule 24), however little of it aligns with the file. The read is a mismatch, counted as
    no presentation drift, and the claim resting on it is unsupported."""
    stream_format, path, rewritten = OTHER_TEXT[client]
    decision, files = _decided(rewritten(path), stream_format, plain_repo, [path], tmp_path)
    assert (files[path]["status"], files[path]["content"]) == ("unsupported", "mismatch")
    evidence = json.loads((tmp_path / "evidence.json").read_text())
    (entry,) = (file for file in evidence["files"] if file["path"] == path)
    assert entry["content"]["unchecked"] == 0 and entry["content"]["mismatched"] >= 1
    assert "presentation" not in {drift["kind"] for drift in evidence["drift"]}
    assert decision["verdict_out"] != "approve"
