"""Text that matches a file before its change at least as well as the revision is older, whatever
the tool that printed it (DESIGN §6 rule 29).

The real shell-only captures of the five shell clients ``cat`` every changed file through their
shell tool (after a ``git diff``, whose strings.py section is left out). Here strings.py's call is rewritten as ``git show HEAD~1:src/util/strings.py`` (a
command no adapter reads as a read of the file), printing the file before the pinned diff's
change: it holds the line the change removed and none of the five it added, so it shows nothing
of the change and credits nothing. The same command printing the revision's text (``git show
HEAD:...``) credits the file: the rule is about what was shown, not the command.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from coverage_gate.contracts.model import EvidenceDocument
from tests.conftest import DATA, REVISION_FILES, record_bytes, revision_content
from tests.record.test_whole_file_credit import SHELL_ONLY

STRINGS = "src/util/strings.py"
DIFF = DATA / "pi-rpc" / "review.diff"


def _escaped(text: str) -> bytes:
    return json.dumps(text)[1:-1].encode()


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> str:
    """strings.py before the pinned diff's change: the revision's text with it undone."""
    folder = tmp_path_factory.mktemp("before")
    (folder / "src" / "util").mkdir(parents=True)
    (folder / STRINGS).write_bytes((REVISION_FILES / STRINGS).read_bytes())
    subprocess.run(
        ["git", "apply", "-R", f"--include={STRINGS}", str(DIFF)], cwd=folder, check=True
    )
    return (folder / STRINGS).read_text()


def _section() -> str:
    """strings.py's section of the pinned diff, as ``git diff`` printed it."""
    diff = DIFF.read_text()
    start = diff.index(f"diff --git a/{STRINGS}")
    end = diff.find("diff --git", start + 1)
    return diff[start : end if end >= 0 else len(diff)]


def _shown(fmt: str, command: str, text: str) -> bytes:
    """The capture with strings.py's ``cat`` replaced by ``command`` printing ``text``, and
    strings.py's section left out of its ``git diff`` output (which would show the change)."""
    data = SHELL_ONLY[fmt].read_bytes()
    assert _escaped(_section()) in data, f"{fmt}: no git diff output to leave strings.py out of"
    data = data.replace(_escaped(_section()), b"")
    revision = (REVISION_FILES / STRINGS).read_text()
    found = data.count(_escaped(f"cat {STRINGS}"))
    data = data.replace(_escaped(f"cat {STRINGS}"), _escaped(command))
    for old, new in ((revision, text), (revision.rstrip("\n"), text.rstrip("\n"))):
        found *= data.count(_escaped(old)) or 1
        data = data.replace(_escaped(old), _escaped(new))
    assert found, f"{fmt}: no cat of {STRINGS} to rewrite"
    return data


def _credited(data: bytes, fmt: str) -> int:
    document: EvidenceDocument = record_bytes(
        data, fmt, diff=DIFF.read_bytes(), content=revision_content()
    )
    found = document.file(STRINGS)
    return found.content.credited if found is not None and found.content is not None else 0


@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_the_file_before_its_change_through_any_command_credits_nothing(
    fmt: str, before: str
) -> None:
    assert _credited(_shown(fmt, f"git show HEAD~1:{STRINGS}", before), fmt) == 0


@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_the_revision_through_the_same_command_credits_the_file(fmt: str) -> None:
    revision = (REVISION_FILES / STRINGS).read_text()
    assert _credited(_shown(fmt, f"git show HEAD:{STRINGS}", revision), fmt) >= 1


def test_the_file_before_the_change_holds_a_removed_line_and_no_added_one(before: str) -> None:
    diff = DIFF.read_text().split(f"diff --git a/{STRINGS}")[1].split("diff --git")[0]
    removed = [line[1:] for line in diff.splitlines() if line[:1] == "-" and line[:3] != "---"]
    added = [line[1:] for line in diff.splitlines() if line[:1] == "+" and line[:3] != "+++"]
    lines = before.splitlines()
    assert removed and all(line in lines for line in removed)
    assert added and not any(line in lines for line in added if line.strip())
