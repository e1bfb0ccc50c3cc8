"""A command that names a file and prints exactly that whole file credits it, whatever its length
and whichever other file holds the same bytes (DESIGN §6 rule 30).

The real shell-only captures of the five shell clients (each ``cat``s every changed file through
its shell tool) are rewritten the way a repository would make them: ``README.md`` a one-line
``1.4.3`` (a ``VERSION`` file), or ``docs/guide.md`` the same bytes as ``README.md`` (two identical
``.env`` files, two empty ``__init__.py``). The revision's files and each ``cat``'s output change
together; everything else is the capture as the client wrote it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from coverage_gate.contracts.model import EvidenceDocument
from coverage_gate.edges.content import MappingContent
from tests.conftest import CHANGED_FILES, DATA, REVISION_FILES, record_bytes

SHELL_ONLY = {
    "claude-code": DATA / "claude-code" / "content_claude_shell_only.jsonl",
    "pi-rpc": DATA / "pi-rpc" / "content_pi_bash_only.jsonl",
    "opencode": DATA / "opencode" / "content_opencode_bash_only.jsonl",
    "qwen-code": DATA / "qwen-code" / "content_qwen_shell_only.jsonl",
    "copilot-cli": DATA / "copilot-cli" / "content_copilot_shell_only.jsonl",
}


def _escaped(text: bytes) -> bytes:
    return json.dumps(text.decode())[1:-1].encode()


def _rewritten(fmt: str, files: dict[str, bytes]) -> tuple[bytes, dict[str, bytes]]:
    """The capture with each changed file's text (as its ``cat`` returned it, escaped in the
    stream) replaced by ``files``' one, and the revision's files so rewritten."""
    data = SHELL_ONLY[fmt].read_bytes()
    revision = {path: (REVISION_FILES / path).read_bytes() for path in CHANGED_FILES}
    for path, new in files.items():
        old = revision[path]
        # a client may drop the output's last newline; the longer spelling goes first
        found = 0
        for before, after in ((old, new), (old.rstrip(b"\n"), new.rstrip(b"\n"))):
            found += data.count(_escaped(before))
            data = data.replace(_escaped(before), _escaped(after))
        assert found, f"{fmt}: no output of {path} to rewrite"
        revision[path] = new
    return data, revision


def _record(fmt: str, files: dict[str, bytes]) -> EvidenceDocument:
    data, revision = _rewritten(fmt, files)
    return record_bytes(data, fmt, content=MappingContent(revision))


def _credited(document: EvidenceDocument, path: str) -> int:
    found = document.file(path)
    return found.content.credited if found is not None and found.content is not None else 0


@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_cat_of_a_short_whole_file_credits_it(fmt: str) -> None:
    """``cat VERSION`` printing ``1.4.3``, all the file holds: credited, though the line is
    shorter than a run needs when no file is named."""
    document = _record(fmt, {"README.md": b"1.4.3\n"})
    assert _credited(document, "README.md") >= 1


@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
@pytest.mark.parametrize(
    "text", [b"API_KEY=placeholder\nDEBUG=false\nREGION=eu-west-1\n", b"1.4.3\n"]
)
def test_twins_each_keep_their_credit(fmt: str, text: bytes) -> None:
    """Two files of one blob, each ``cat``ed by name: both credited."""
    document = _record(fmt, {"README.md": text, "docs/guide.md": text})
    assert _credited(document, "README.md") >= 1
    assert _credited(document, "docs/guide.md") >= 1


@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_a_short_output_that_is_not_the_named_file_credits_nothing(fmt: str) -> None:
    """``cat README.md`` printing ``1.4.3`` while the revision's README.md is ``1.4.4``: the
    output is not the file it names, and a line that short is no run of any file."""
    data, revision = _rewritten(fmt, {"README.md": b"1.4.3\n"})
    revision["README.md"] = b"1.4.4\n"
    document = record_bytes(data, fmt, content=MappingContent(revision))
    assert _credited(document, "README.md") == 0


@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_a_twin_named_by_no_command_is_not_credited_by_its_twins_cat(fmt: str) -> None:
    """``cat README.md`` shows the bytes ``docs/guide.md`` also holds; guide's own ``cat`` is
    rewritten to print other text. README.md is credited, docs/guide.md is not: its twin's text
    under another name is no read of it."""
    text = b"API_KEY=placeholder\nDEBUG=false\nREGION=eu-west-1\n"
    data, revision = _rewritten(fmt, {"README.md": text, "docs/guide.md": b"other = 1\n"})
    revision["docs/guide.md"] = text
    document = record_bytes(data, fmt, content=MappingContent(revision))
    assert _credited(document, "README.md") >= 1
    assert _credited(document, "docs/guide.md") == 0


# Commands of one file that print it from its first line (``adapters/_shell.py``); each is run
# by bash on the file, and what it printed is the output the capture's call returns.
FROM_THE_START = [
    "head README.md",
    "head -n 5 README.md",
    "head -20 README.md",
    "sed -n p README.md",
    "sed -n 1p README.md",
    "sed -n 1,40p README.md",
    "tail -n +1 README.md",
    "cat -n README.md",
    "nl README.md",
    "nl -ba README.md",
]
SHORT_FILES = [b"1.4.3\n", b"[tool]\n\nname = x\n", b"v2"]


def _printed(command: str, text: bytes, tmp_path: Path) -> bytes:
    (tmp_path / "README.md").write_bytes(text)
    done = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, check=True, timeout=30
    )
    return done.stdout


def _with_command(fmt: str, command: str, out: bytes, text: bytes) -> EvidenceDocument:
    """The capture with README.md's ``cat`` made ``command``, printing ``out``, and README.md at
    the revision ``text``."""
    data, revision = _rewritten(fmt, {"README.md": out})
    revision["README.md"] = text
    assert data.count(b'"cat README.md"') >= 1
    data = data.replace(b'"cat README.md"', json.dumps(command).encode())
    return record_bytes(data, fmt, content=MappingContent(revision))


@pytest.mark.parametrize("text", SHORT_FILES)
@pytest.mark.parametrize("command", FROM_THE_START)
@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_a_command_that_prints_a_short_file_whole_credits_it(
    fmt: str, command: str, text: bytes, tmp_path: Path
) -> None:
    """``nl VERSION``, ``sed -n p VERSION``, ``head VERSION``: what it printed is the whole file
    (numbers taken off), so the file is credited whole, however short its lines."""
    if command == "sed -n 1p README.md":
        text = text.split(b"\n")[0] + b"\n"  # the whole of a file of one line
    out = _printed(command, text, tmp_path)
    document = _with_command(fmt, command, out, text)
    found = document.file("README.md")
    assert found is not None and found.content is not None and found.content.credited == 1
    assert found.lines_seen_whole or [(r.start, r.end) for r in found.lines_seen] == [
        (1, text.count(b"\n") + (not text.endswith(b"\n")))
    ]


@pytest.mark.parametrize(
    "command",
    ["sed -n 2p README.md", "tail -n 1 README.md", "grep -n . README.md", "nl -ba README.md"],
)
@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_a_print_that_is_not_the_whole_named_file_credits_nothing(
    fmt: str, command: str, tmp_path: Path
) -> None:
    """The file is ``1.4.3`` then ``1.4.4``: a command that printed one line of it, or that
    printed another file's text in numbered lines (``nl`` of a file the reviewer wrote, here the
    revision's README.md differs), is no whole print of the file it names."""
    text = b"1.4.3\n1.4.4\n"
    out = _printed(command, b"1.4.3\n" if command.startswith("nl") else text, tmp_path)
    document = _with_command(fmt, command, out, text)
    assert _credited(document, "README.md") == 0


# What each client's stream holds for a shell command that printed nothing (the presentation
# captures' ``cat emptied.txt``, tests/data/presentation/<client>-newest/cat.jsonl).
NOTHING_PRINTED = {
    "claude-code": lambda path: b"",
    "copilot-cli": lambda path: b"",
    "opencode": lambda path: b"(no output)",
    "pi-rpc": lambda path: b"(no output)",
    "qwen-code": lambda path: (
        f"Command: cat {path}\nDirectory: (root)\nOutput: (empty)\nError: (none)\n"
        "Exit Code: 0\nSignal: (none)\nProcess Group PGID: (none)"
    ).encode(),
}


@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_empty_twins_each_keep_their_credit(fmt: str) -> None:
    """Two files the change empties (two new empty ``__init__.py``), each ``cat``ed by name and
    each printing nothing, in the client's own words for nothing: both credited."""
    paths = ["README.md", "docs/guide.md"]
    data, revision = _rewritten(fmt, {path: NOTHING_PRINTED[fmt](path) for path in paths})
    revision.update(dict.fromkeys(paths, b""))
    document = record_bytes(data, fmt, content=MappingContent(revision))
    assert _credited(document, "README.md") == 1
    assert _credited(document, "docs/guide.md") == 1


def test_the_captures_are_the_five_shell_clients() -> None:
    assert sorted(SHELL_ONLY) == ["claude-code", "copilot-cli", "opencode", "pi-rpc", "qwen-code"]
    assert all(path.exists() for path in SHELL_ONLY.values())
