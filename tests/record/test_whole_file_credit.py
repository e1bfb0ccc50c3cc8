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


def test_the_captures_are_the_five_shell_clients() -> None:
    assert sorted(SHELL_ONLY) == ["claude-code", "copilot-cli", "opencode", "pi-rpc", "qwen-code"]
    assert all(path.exists() for path in SHELL_ONLY.values())
