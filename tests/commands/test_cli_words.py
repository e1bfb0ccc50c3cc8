"""What the CLI says for people does not mislead: counts say what they count, labels say what
they mean, and one thing is said one way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from tests.conftest import CHANGED_FILES

runner = CliRunner()
REV = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    folder = tmp_path_factory.mktemp("demo")
    result = runner.invoke(app, ["demo", "--keep", str(folder)])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr, folder


def test_record_summary_tells_files_with_evidence_from_files_with_only_failed_reads(
    demo: tuple[str, str, Path],
) -> None:
    """The lying reviewer's two failed reads are no evidence: the summary counts them apart."""
    _, stderr, _ = demo
    lying = next(line for line in stderr.splitlines() if line.startswith("recorded lying"))
    assert "4 file(s) with evidence (a successful read or diff page), 2 with only failed reads" in (
        lying
    )
    assert "6 file(s) with evidence" not in lying


def test_demo_says_its_modes_come_from_the_demo(demo: tuple[str, str, Path]) -> None:
    """The demo sets its modes itself: no header says they came from an override."""
    stdout, _, _ = demo
    headers = [line for line in stdout.splitlines() if line.startswith("example/notes @")]
    assert len(headers) == 4
    assert all(header.endswith(" from demo)") for header in headers)
    assert "from override" not in stdout


def test_header_and_footer_show_the_verdict_with_one_arrow(demo: tuple[str, str, Path]) -> None:
    """The header's "approve → comment" and the note's "Verdict: approve → comment" match."""
    stdout, _, _ = demo
    assert "->" not in stdout
    headers = re.findall(r"@ \w+: (\w+ → \w+) \(mode (\w+)", stdout)
    footers = re.findall(r"Verdict: (\w+ → \w+) \(mode (\w+)\)", stdout)
    assert headers == footers and len(headers) == 4


def test_incomplete_coverage_is_glossed_in_text(demo: tuple[str, str, Path]) -> None:
    """`incomplete_unsupported` is followed by what it means."""
    stdout, _, _ = demo
    assert (
        "reviewer lying-reviewer: incomplete_unsupported (claimed files without a successful "
        "read or diff)" in stdout
    )


def reconcile_without_evidence(folder: Path, *extra: str) -> list[str]:
    (folder / "changed.txt").write_text("\n".join(CHANGED_FILES) + "\n")
    (folder / "claims.json").write_text(
        json.dumps({"schema_version": 1, "agent_id": "r", "inspected_files": CHANGED_FILES})
    )
    return [
        "reconcile", "--repo", "o/r", "--revision", REV, "--verdict", "approve",
        "--changed", str(folder / "changed.txt"), "--claims", str(folder / "claims.json"),
        *extra,
    ]  # fmt: skip


def test_reviewer_without_evidence_is_not_labelled_plainly_complete(tmp_path: Path) -> None:
    """A reviewer with no evidence document above unknown rows says why its claims are
    unknown, and how many."""
    result = runner.invoke(app, reconcile_without_evidence(tmp_path, "--mode", "shadow"))
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if line.startswith("  reviewer r:"))
    unknown = sum(1 for row in result.stdout.splitlines() if row.strip().startswith("unknown "))
    assert unknown == len(CHANGED_FILES)
    assert line == (
        f"  reviewer r: complete ({unknown} claim(s) unknown, accepted as unknown: "
        "no evidence document)"
    )


def test_fallback_mode_is_said_once(tmp_path: Path) -> None:
    """With no flag source, stderr says "mode shadow (fallback): <why>", not "fallback shadow"
    a second time."""
    result = runner.invoke(app, reconcile_without_evidence(tmp_path))
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stderr.splitlines() if "(fallback)" in line)
    assert line.startswith("coverage-gate: mode shadow (fallback): ")
    assert "fallback shadow" not in line


def test_markdown_labels_coverage_the_same_way(tmp_path: Path) -> None:
    """The PR comment's reviewer summary carries the same label as the text output."""
    args = reconcile_without_evidence(tmp_path, "--mode", "shadow", "--format", "markdown")
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    unknown = len(CHANGED_FILES)
    assert (
        f"Reviewer <code>r</code>: complete ({unknown} claim(s) unknown, accepted as unknown: "
        "no evidence document)</summary>"
    ) in result.stdout
