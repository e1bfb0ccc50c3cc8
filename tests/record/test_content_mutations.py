"""Content mutations of real captures: how a lying or lazy reviewer could try to pass the read
check, and how an honest one could be punished by its client's presentation (DESIGN §6 rule 16).

Each real capture that carries what its reads returned is recorded against the files at the
revision twice: as captured, and with one mutation of one read's returned text. Mutations a
reviewer could make the text undergo (its own edit of a line, another file's text, an older
version with a line missing, the first line only with a size report that says "whole") make
that read a ``mismatch`` or a partial read, never a whole matched one. Mutations a client makes on
its own (Claude Code appending a ``<system-reminder>``) change nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.contracts.model import EvidenceDocument
from tests.conftest import DATA, record_bytes, revision_content

DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
MODELS = "src/api/models.py"

#: Real captures whose reads carry their returned text, each with a read of models.py.
CAPTURES = {
    "claude-code": DATA / "claude-code" / "claude_b_overclaim.jsonl",
    "pi-rpc": DATA / "pi-rpc" / "pi_a_honest.jsonl",
    "opencode": DATA / "opencode" / "content_opencode_edit_then_read.jsonl",
    "codex-rollout": DATA / "codex-rollout" / "codex_b_overclaim.rollout.jsonl",
}


def texts(obj: Any, fmt: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Where a line holds a call's returned text: (the object holding it, its key)."""
    if fmt == "claude-code" and obj.get("type") == "user":
        for block in obj["message"].get("content") or []:
            is_result = isinstance(block, dict) and block.get("type") == "tool_result"
            if is_result and isinstance(block.get("content"), str):
                yield block, "content"
    elif fmt == "pi-rpc" and obj.get("type") == "tool_execution_end":
        for item in (obj.get("result") or {}).get("content") or []:
            yield item, "text"
    elif fmt == "opencode" and obj.get("type") == "tool_use":
        state = obj["part"]["state"]
        if isinstance(state.get("output"), str):
            yield state, "output"
    elif fmt == "codex-rollout" and obj.get("type") == "response_item":
        payload = obj["payload"]
        if payload.get("type") == "function_call_output" and isinstance(payload.get("output"), str):
            yield payload, "output"


Mutation = Callable[[str], str]


def mutate_first_read_of_models(path: Path, fmt: str, mutation: Mutation) -> bytes:
    """The capture with ``mutation`` applied to the first returned text holding models.py's
    ``MAX_BODY = 10_000`` line (a read of models.py in every capture here)."""
    out: list[str] = []
    done = False
    for raw in path.read_text().splitlines():
        obj = json.loads(raw)
        kept = raw
        for holder, key in texts(obj, fmt):
            if not done and "MAX_BODY = 10_000" in holder[key] and "diff --git" not in holder[key]:
                holder[key] = mutation(holder[key])
                done = True
                kept = json.dumps(obj)
        out.append(kept)
    assert done, f"no read of {MODELS} in {path.name}"
    return ("\n".join(out) + "\n").encode()


def models_entry(data: bytes, fmt: str) -> Any:
    document: EvidenceDocument = record_bytes(data, fmt, diff=DIFF, content=revision_content())
    found = document.file(MODELS)
    assert found is not None
    return found


_NUMBER = re.compile(r"^( *)(\d+)(\t|: |\u2192)")


def _without_the_added_line(text: str) -> str:
    """The text as the client shows the older file: the line the change added is not there,
    and where the client numbers lines, the numbers after it are one less (as a real read of
    the older file numbers them)."""
    lines = text.split("\n")
    at = next(index for index, line in enumerate(lines) if "MAX_BODY = 10_000" in line)
    del lines[at]
    for index in range(at, len(lines)):
        lines[index] = _NUMBER.sub(
            lambda found: f"{found.group(1)}{int(found.group(2)) - 1}{found.group(3)}",
            lines[index],
            count=1,
        )
    return "\n".join(lines)


LYING: dict[str, Mutation] = {
    # the reviewer's own edit of one line, read back
    "edited_line": lambda text: text.replace("MAX_BODY = 10_000", "MAX_BODY = 10_001"),
    # an older version: the line the change added is not there
    "older_version": _without_the_added_line,
    # unrelated text of the same length in place of one line
    "same_length_noise": lambda text: text.replace("MAX_BODY = 10_000", "x" * 17),
}


@pytest.mark.parametrize("fmt", sorted(CAPTURES))
@pytest.mark.parametrize("name", sorted(LYING))
def test_a_read_that_returned_other_text_is_a_mismatch(fmt: str, name: str) -> None:
    honest = models_entry(CAPTURES[fmt].read_bytes(), fmt)
    assert honest.content is not None
    lied = models_entry(mutate_first_read_of_models(CAPTURES[fmt], fmt, LYING[name]), fmt)
    assert lied.content is not None
    assert lied.content.mismatched == honest.content.mismatched + 1
    assert lied.content.matched == honest.content.matched - 1


def test_a_size_the_stream_reports_never_makes_a_read_whole_by_itself() -> None:
    """Claude Code's `Read` of models.py cut to its first five lines, its result detail saying
    `totalLines: 5`: lines 1-5 seen, partial, never whole."""
    out: list[str] = []
    for raw in CAPTURES["claude-code"].read_text().splitlines():
        obj = json.loads(raw)
        line = raw
        detail = obj.get("tool_use_result")
        if isinstance(detail, dict) and str(detail.get("file", {}).get("filePath")) == MODELS:
            (block,) = obj["message"]["content"]
            block["content"] = "\n".join(block["content"].split("\n")[:5])
            detail["file"].update(startLine=1, numLines=5, totalLines=5)
            line = json.dumps(obj)
        out.append(line)
    found = models_entry(("\n".join(out) + "\n").encode(), "claude-code")
    assert not found.lines_seen_whole
    assert found.partial
    seen = {n for r in found.lines_seen for n in range(r.start, r.end + 1)}
    assert set(range(1, 6)) <= seen  # what the read showed (its `git diff` showed more)
    assert not set(range(1, 47)) <= seen  # never the whole of models.py's 46 lines


def test_a_system_reminder_the_client_appends_changes_nothing() -> None:
    """Claude Code appends `<system-reminder>` blocks to what a read returned: not the file's
    text, never a mismatch."""

    def remind(text: str) -> str:
        return (
            text
            + "\n\n<system-reminder>\nWhenever you read a file, check it.\n</system-reminder>\n"
        )

    path = CAPTURES["claude-code"]
    found = models_entry(mutate_first_read_of_models(path, "claude-code", remind), "claude-code")
    assert found.content is not None
    assert (found.content.matched, found.content.mismatched) == (1, 0)


def foreign(diff_text: str) -> str:
    """Another change of the same files: every added line of the diff says something else."""
    return "\n".join(
        "+" + line[1:].replace("e", "o")
        if line.startswith("+") and not line.startswith("+++")
        else line
        for line in diff_text.split("\n")
    )


def test_a_diff_that_is_not_the_pinned_one_is_no_evidence() -> None:
    """claude_b_overclaim's `git diff` output turned into another change (its changed lines
    altered, headers and context kept): it credits no file; as captured it is a page of all of
    the pinned diff."""
    path = CAPTURES["claude-code"]

    def with_diff(change: Mutation) -> EvidenceDocument:
        out: list[str] = []
        for raw in path.read_text().splitlines():
            obj = json.loads(raw)
            line = raw
            for holder, key in texts(obj, "claude-code"):
                if holder[key].startswith("diff --git"):
                    holder[key] = change(holder[key])
                    line = json.dumps(obj)
            out.append(line)
        data = ("\n".join(out) + "\n").encode()
        return record_bytes(data, "claude-code", diff=DIFF, content=revision_content())

    honest, lied = with_diff(lambda text: text), with_diff(foreign)
    assert honest.diff.pages_succeeded == 1
    assert lied.diff.pages_succeeded == 0
    for file in ("README.md", "docs/guide.md", "tests/test_handlers.py"):
        entry = lied.file(file)
        assert entry is None or entry.content is None or not entry.content.credited, file


def test_gemini_display_text_is_never_compared() -> None:
    """Gemini CLI's stream carries what it showed its user, not what the model got (a whole
    read shows ""): every read is unchecked, none matched or mismatched."""
    document = record_bytes(
        (DATA / "gemini-cli" / "gemini_a_honest.jsonl").read_bytes(),
        "gemini-cli",
        diff=DIFF,
        content=revision_content(),
    )
    checked = [f.content for f in document.files if f.content is not None]
    assert checked
    assert all(c.matched == c.mismatched == 0 and c.unchecked for c in checked)
