"""Receipts of decisions with citations: what the files port answered is recorded, bounded (the
lines replay looked at; a long line by its answers), and re-deciding offline gives the same
bytes; a recorded line altered or missing fails verification with the receipt named."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.contracts.model import Citation, ReviewerCitations
from coverage_gate.core import citations
from coverage_gate.core.citations import Cited
from coverage_gate.core.revision_files import FileAtRevision, Presence, RevisionFiles
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.receipts import LINE_CHARS, RecordedFiles, RecordingFiles
from tests.commands.test_citation_cli import ENV, work  # noqa: F401 - the fixture
from tests.conftest import reconcile_in
from tests.rollout.test_receipts import content_of, receipts_in, rewrite, verify

runner = CliRunner()


def write_receipt(review_of: tuple[Path, Path, str], *extra: str) -> tuple[Path, Path]:
    """Reconcile the review citing one real and one invented line of ``src/tax.py``, with a
    receipt; the receipt folder and its one file."""
    root, review, revision = review_of
    folder = review.parent / "receipts"
    args = reconcile_in(review, "acme/tax", revision, str(root), "--receipt", str(folder), *extra)
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    (path,) = receipts_in(folder)
    return folder, path


def test_a_receipt_with_a_matched_and_a_failed_citation_verifies_without_the_repository(
    work: tuple[Path, Path, str],  # noqa: F811 - the fixture
) -> None:
    folder, path = write_receipt(work, "--mode", "enforce")
    document = content_of(path)
    checks = document["decision"]["reviewers"][0]["citations"]["checks"]
    assert [c["outcome"] for c in checks] == ["matched", "failed"]
    assert document["version"] == "1.1"
    assert (
        document["inputs"]["citation_policy"],
        document["inputs"]["citation_policy_source"],
    ) == (
        "downgrade",
        "default",
    )
    (recorded,) = document["ports"]["files"]
    assert (recorded["path"], recorded["state"], recorded["line_count"]) == (
        "src/tax.py",
        "text",
        5,
    )
    # line 1 matched at once; line 5 and the 3 lines before it were looked at (none after it)
    assert [(line["number"], line["text"]) for line in recorded["lines"]] == [
        (1, "RATE = 0.2"),
        (2, ""),
        (3, ""),
        (4, "def tax(amount):"),
        (5, "    return amount * RATE"),
    ]
    shutil.rmtree(work[0])  # offline: the repository is gone
    result = verify(folder)
    assert result.exit_code == 0, result.output


def test_the_citation_policy_is_recorded_and_decides_again(
    work: tuple[Path, Path, str],  # noqa: F811 - the fixture
) -> None:
    folder, path = write_receipt(work, "--mode", "enforce", "--citation-policy", "accept")
    document = content_of(path)
    assert (
        document["inputs"]["citation_policy"],
        document["inputs"]["citation_policy_source"],
    ) == (
        "accept",
        "cli",
    )
    assert document["decision"]["verdict_out"] == "approve"
    assert verify(folder).exit_code == 0


def test_a_recorded_line_altered_fails_verification_named(
    work: tuple[Path, Path, str],  # noqa: F811 - the fixture
) -> None:
    folder, path = write_receipt(work, "--mode", "enforce")

    def forge(document: dict[str, Any]) -> None:
        (recorded,) = document["ports"]["files"]
        recorded["lines"][4]["text"] = "    return amount * 1.2"

    forged = rewrite(path, forge, rename=True)
    result = verify(folder)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt {forged} fails: deciding again gives another decision" in result.stderr


def test_a_line_missing_from_the_record_is_said_plainly(
    work: tuple[Path, Path, str],  # noqa: F811 - the fixture
) -> None:
    folder, path = write_receipt(work)

    def forget(document: dict[str, Any]) -> None:
        (recorded,) = document["ports"]["files"]
        recorded["lines"] = [line for line in recorded["lines"] if line["number"] != 5]

    forged = rewrite(path, forget, rename=True)
    result = verify(folder)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert (
        f"receipt {forged} fails: deciding again asked the repository about 'src/tax.py line 5', "
        "which the receipt does not record" in result.stderr
    )


# --- the record's bounds and states, at the port -----------------------------------------------

LONG = "total = " + "x + " * 400 + "1"  # one line well over LINE_CHARS


class Files:
    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def file_at_revision(self, path: str) -> FileAtRevision:
        if path == "gone.py":
            return FileAtRevision(Presence.UNAVAILABLE, detail="git failed")
        if path not in self.files:
            return FileAtRevision(Presence.MISSING)
        return FileAtRevision(Presence.FOUND, self.files[path])


CITED = [
    Citation(path="long.py", line=2, content="x + x + x + 1"),  # at the long line's end
    Citation(path="long.py", line=2, content="y + 1"),  # not in it: failed, found shown
    Citation(path="long.py", line=1, content="x + x"),  # matched nearby, on the long line
    Citation(path="missing.py", line=1, content="anything"),
    Citation(path="blob.bin", line=1, content="anything"),
    Citation(path="gone.py", line=1, content="anything"),
]


def replayed(files: RevisionFiles) -> ReviewerCitations:
    return citations.replay(
        [Cited(c) for c in CITED],
        root=None,
        tree=None,
        files=citations.FileCache(files),
        uncorroborated=lambda _path: False,
    )


def test_a_long_line_is_kept_by_its_answers_and_every_state_replays_the_same() -> None:
    """A line over LINE_CHARS is kept by its length, what a check shows of it and the answer to
    each comparison asked of it (cutting it could change a containment), never whole; missing,
    binary and unavailable files replay to the same outcomes."""
    assert len(LONG) > LINE_CHARS
    source = Files({"long.py": f"import os\n{LONG}\n".encode(), "blob.bin": b"\x00\x01"})
    recording = RecordingFiles(source)
    live = replayed(recording)
    outcomes = [check.outcome.value for check in live.checks]
    assert outcomes == [
        "matched",
        "failed",
        "matched_nearby",
        "failed",
        "unavailable",
        "unavailable",
    ]
    record = recording.record()
    by_path = {r.path: r for r in record}
    assert [by_path[p].state.value for p in ("blob.bin", "gone.py", "missing.py")] == [
        "binary",
        "unavailable",
        "missing",
    ]
    long_line = next(line for line in by_path["long.py"].lines if line.number == 2)
    assert long_line.text is None
    assert long_line.chars == len(LONG)
    assert long_line.answers
    assert sum(len(line.model_dump_json()) for line in by_path["long.py"].lines) < 2 * LINE_CHARS
    again = RecordedFiles({r.path: r for r in record})
    assert replayed(again) == live
    assert again.unrecorded == []


def test_a_comparison_the_record_does_not_hold_is_noted() -> None:
    recording = RecordingFiles(Files({"long.py": f"import os\n{LONG}\n".encode()}))
    citations.replay(
        [Cited(CITED[0])],
        root=None,
        tree=None,
        files=citations.FileCache(recording),
        uncorroborated=lambda _path: False,
    )
    again = RecordedFiles({r.path: r for r in recording.record()})
    replayed(again)
    assert "long.py line 2 (a comparison)" in again.unrecorded
    assert "missing.py (its content)" in again.unrecorded
