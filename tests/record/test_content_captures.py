"""The content checks over every real capture (DESIGN §6 rules 16-17).

Every capture under ``tests/data`` (the hand-written ``crafted_*`` streams aside) was made by a
real client in ``make_repo.sh``'s repository, whose revision is the six changed files of
``tests/data/revision``. Recorded against those files:

- no read that returned the revision is ever a ``mismatch``: an honest read is never punished by
  the client's presentation (line numbers, wrappers, reminders, notices, cut outputs);
- in the ``content_*`` captures, each read the truth file says returned the reviewer's own edit
  or an older text is a ``mismatch``, and no other read is;
- a review through the shell alone (``cat``, ``sed -n``, ``git diff``) is credited by content for
  every file whose text came back, where the stream carries what came back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.contracts.model import EvidenceDocument
from tests.conftest import CHANGED_FILES, DATA, REVISION_FILES, record_bytes, revision_content

DIFF = (DATA / "pi-rpc" / "review.diff").read_bytes()
FORMAT_OF_FOLDER = {
    "claude-code": "claude-code",
    "codex-rollout": "codex-rollout",
    "codex-exec": "codex-exec",
    "copilot-cli": "copilot-cli",
    "gemini-cli": "gemini-cli",
    "opencode": "opencode",
    "pi-rpc": "pi-rpc",
    "qwen-code": "qwen-code",
}
HOSTILE_FORMATS = {
    "claude-code_2.1.328_same_run.stream-json.jsonl": "claude-code",
    "codex_0.169.0_same_run.exec.jsonl": "codex-exec",
    "copilot_1.0.102_probe.json.jsonl": "copilot-cli",
    "gemini-cli_0.61.0_probe.stream-json.jsonl": "gemini-cli",
    "opencode_1.18.33_probe.json.jsonl": "opencode",
    "qwen-code_0.24.4_probe.stream-json.jsonl": "qwen-code",
}


def real_captures() -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for folder, fmt in FORMAT_OF_FOLDER.items():
        for path in sorted((DATA / folder).glob("*.jsonl")):
            if not path.name.startswith("crafted_"):
                found.append((path, fmt))
    for name, fmt in HOSTILE_FORMATS.items():
        found.append((DATA / "hostile" / name, fmt))
    return found


CAPTURES = real_captures()


def truth_of(path: Path) -> dict[str, Any] | None:
    truth = path.with_name(path.name.removesuffix(".jsonl") + ".truth.json")
    return json.loads(truth.read_text()) if truth.exists() else None


def recorded(path: Path, fmt: str) -> EvidenceDocument:
    return record_bytes(path.read_bytes(), fmt, diff=DIFF, content=revision_content())


def mismatches(document: EvidenceDocument) -> dict[str, int]:
    return {
        f.path: f.content.mismatched for f in document.files if f.content and f.content.mismatched
    }


def expected_mismatches(truth: dict[str, Any] | None) -> dict[str, int]:
    """Reads the truth file says returned something else than the revision's file."""
    found: dict[str, int] = {}
    for path, told in ((truth or {}).get("content") or {}).items():
        other = [read for read in told.get("reads", []) if read["returned"] in {"edited", "older"}]
        if other:
            found[path] = len(other)
    return found


@pytest.mark.parametrize(
    ("path", "fmt"), CAPTURES, ids=[f"{p.parent.name}/{p.name}" for p, _ in CAPTURES]
)
def test_no_honest_read_of_a_real_capture_is_a_mismatch(path: Path, fmt: str) -> None:
    """Exactly the reads that returned the reviewer's own edit or an older text are mismatches
    (content captures), and none at all elsewhere. Formats whose stream does not carry what a
    read returned (Gemini CLI, codex exec's parsed reads) check nothing."""
    document = recorded(path, fmt)
    truth = truth_of(path)
    expected = expected_mismatches(truth) if fmt not in {"gemini-cli", "codex-exec"} else {}
    assert mismatches(document) == expected


TRUTHFUL = [(path, fmt) for path, fmt in CAPTURES if truth_of(path) is not None]


@pytest.mark.parametrize(
    ("path", "fmt"), TRUTHFUL, ids=[f"{p.parent.name}/{p.name}" for p, _ in TRUTHFUL]
)
def test_every_real_capture_with_a_truth_file_ends_as_its_truth_says(path: Path, fmt: str) -> None:
    """A writing call ends as the client records it (Codex's ``apply_patch`` by its
    ``FileChange`` record): the stream is as complete as its truth says."""
    truth = truth_of(path)
    assert truth is not None
    assert recorded(path, fmt).stream_complete is truth["stream_complete"]


SHELL_ONLY = [
    (DATA / "claude-code" / "content_claude_shell_only.jsonl", "claude-code"),
    (DATA / "pi-rpc" / "content_pi_bash_only.jsonl", "pi-rpc"),
    (DATA / "opencode" / "content_opencode_bash_only.jsonl", "opencode"),
    (DATA / "qwen-code" / "content_qwen_shell_only.jsonl", "qwen-code"),
    (DATA / "copilot-cli" / "content_copilot_shell_only.jsonl", "copilot-cli"),
]


@pytest.mark.parametrize(("path", "fmt"), SHELL_ONLY, ids=[p.name for p, _ in SHELL_ONLY])
def test_a_review_through_the_shell_alone_is_credited_by_content(path: Path, fmt: str) -> None:
    """No read tool at all: every changed file's text, or its hunks of the pinned diff, came back
    through the shell, and each file has evidence by content with its changed lines seen."""
    document = recorded(path, fmt)
    for changed in CHANGED_FILES:
        found = document.file(changed)
        assert found is not None, changed
        assert found.reads_succeeded == 0
        assert found.content is not None and found.content.credited >= 1, changed
        assert found.depth is not None and found.depth.depth.value == "full", changed


EDITED = [
    (DATA / "claude-code" / "content_claude_edit_then_read.jsonl", "claude-code"),
    (DATA / "pi-rpc" / "content_pi_edit_then_read.jsonl", "pi-rpc"),
    (DATA / "opencode" / "content_opencode_edit_then_read.jsonl", "opencode"),
    (DATA / "codex-rollout" / "content_codex_apply_patch.rollout.jsonl", "codex-rollout"),
]


@pytest.mark.parametrize(("path", "fmt"), EDITED, ids=[p.name for p, _ in EDITED])
def test_a_read_of_the_reviewers_own_edit_is_no_evidence(path: Path, fmt: str) -> None:
    """Read, edit, read again: the first read verifies models.py, the second is a mismatch that
    names the first line that differs, and is not counted as a read."""
    document = recorded(path, fmt)
    found = document.file("src/api/models.py")
    assert found is not None and found.content is not None
    assert (found.content.matched, found.content.mismatched) == (1, 1)
    assert found.reads_succeeded == 1
    (issue,) = [i for i in document.issues if i.kind.value == "content_mismatch"]
    assert "src/api/models.py" in issue.detail
    assert "first difference at line" in issue.detail


def test_a_read_of_an_older_text_verifies_nothing() -> None:
    """``git checkout HEAD -- strings.py`` then ``Read``: the committed text, not the revision's;
    strings.py has no evidence but what the reviewer's shell commands showed of it."""
    document = recorded(
        DATA / "claude-code" / "content_claude_checkout_then_read.jsonl", "claude-code"
    )
    found = document.file("src/util/strings.py")
    assert found is not None and found.content is not None
    assert found.content.mismatched == 1
    assert found.reads_succeeded == 0


def exec_output(call_id: str, text: str) -> list[str]:
    item = {"id": call_id, "type": "command_execution", "command": "/bin/bash -lc 'cat x'"}
    done = {**item, "aggregated_output": text, "exit_code": 0, "status": "completed"}
    return [
        json.dumps({"type": "item.started", "item": {**item, "status": "in_progress"}}),
        json.dumps({"type": "item.completed", "item": done}),
    ]


def exec_stream(*calls: list[str]) -> bytes:
    lines = [json.dumps({"type": "thread.started", "thread_id": "t"})]
    lines.append(json.dumps({"type": "turn.started"}))
    for call in calls:
        lines += call
    lines.append(json.dumps({"type": "turn.completed", "usage": {}}))
    return ("\n".join(lines) + "\n").encode()


def test_codex_exec_makes_what_its_commands_printed_unknown_never_verified() -> None:
    """A real `codex exec --json` review: `git diff` shows every file's hunks, `cat` and
    `sed -n` show handlers.py and models.py. ``aggregated_output`` holds each whole output while
    the model may have received a cut sized by its own budget (DESIGN §6 rule 26): every file
    is unknown (its evidence ``reads_unknown``), none credited, none unseen."""
    document = recorded(DATA / "codex-exec" / "codex_b_overclaim.exec.jsonl", "codex-exec")
    assert document.capability.value == "per_file"
    for changed in CHANGED_FILES:
        found = document.file(changed)
        assert found is not None, changed
        assert found.reads_unknown >= 1, changed
        assert found.content is None or not found.content.credited, changed


def test_codex_exec_output_nothing_shows_of_a_file_leaves_it_without_evidence() -> None:
    """An output that holds handlers.py and not models.py: handlers.py is unknown (it may have
    reached the model), models.py has no evidence at all (unsupported when claimed)."""
    revision = {path: (REVISION_FILES / path).read_text() for path in CHANGED_FILES}
    noise = "".join(f"noise line {n:05d} of a long listing\n" for n in range(170))
    text = revision["src/api/handlers.py"] + noise
    document = record_bytes(
        exec_stream(exec_output("c1", text)), "codex-exec", diff=DIFF, content=revision_content()
    )
    handlers, models = document.file("src/api/handlers.py"), document.file("src/api/models.py")
    assert handlers is not None and handlers.reads_unknown == 1
    assert handlers.content is None or not handlers.content.credited
    assert models is None or (models.reads_unknown == 0 and not models.reads_succeeded)


def test_a_read_whose_text_aligns_with_nothing_is_presentation_drift_never_a_mismatch() -> None:
    """The real Claude Code capture whose reviewer read every file: one ``Read`` of models.py
    comes back as text no line of which is the file's, not numbered (a presentation the adapter
    does not know: in ``Read``'s own numbered lines it would be other content, a mismatch).
    That read is unchecked, counted as ``presentation`` drift (which hides no read), and the
    file is never called a mismatch."""
    capture = DATA / "claude-code" / "content_claude_reread.jsonl"
    lines = capture.read_text().splitlines()
    stranger = "".join(f"lorem ipsum dolor sit amet {n}\n" for n in range(1, 47))
    out, done = [], False
    for raw in lines:
        kept = raw
        if not done and '"tool_result"' in raw and "\\tMAX_BODY = 10_000" in raw:
            obj = json.loads(raw)
            for block in obj["message"]["content"]:
                if block.get("type") == "tool_result":
                    block["content"] = stranger
            obj.pop("tool_use_result", None)
            kept, done = json.dumps(obj), True
        out.append(kept)
    assert done
    doc = record_bytes(
        ("\n".join(out) + "\n").encode(), "claude-code", diff=DIFF, content=revision_content()
    )
    models = doc.file("src/api/models.py")
    assert models is not None and models.content is not None
    assert models.content.mismatched == 0
    assert models.content.unchecked >= 1
    drift = {(entry.kind.value, entry.hides_reads) for entry in doc.drift}
    assert ("presentation", False) in drift
