"""What replaying citations adds to ``reconcile`` (run with ``pytest -m bench tests/bench/bench_citations.py
-s``).

A git repository of 50 files of 400 lines each; one reviewer claims them all, with the evidence
of a read of each, and cites 500 lines: ten per file, some exact, some a few lines off, some
invented. The same review is reconciled with and without those citations, alternately, in the
same run, through the real ``GitTree`` (one ``git cat-file --batch`` process per reconcile, as
the command makes one), both at an older revision (read from git) and at the checked-out one
(read from the working tree). Printed: the medians, the ratio, and what the citations add.
Budget (issue 10): at most 100 ms added for 500 citations over 50 files.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from coverage_gate.contracts.model import (
    Capability,
    Citation,
    CitationOutcome,
    DecisionDocument,
    EvidenceDocument,
    FileEvidence,
    Mode,
    ModeSource,
    ReviewerOutput,
    Verdict,
)
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.edges.gittree import GitTree

pytestmark = pytest.mark.bench

FILES = 50
LINES = 400
PER_FILE = 10
BUDGET_S = 0.100
REPEAT = 15


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def line_text(file: int, line: int) -> str:
    return f"    value_{file:02d}_{line:04d} = compute({line}, factor={file})"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """(root, an older revision, the checked-out revision): the same 50 files at both."""
    root = tmp_path_factory.mktemp("bench-citations")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "b@example.invalid")
    git(root, "config", "user.name", "b")
    for f in range(FILES):
        folder = root / "src" / f"pkg{f % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(line_text(f, n) + "\n" for n in range(1, LINES + 1))
        (folder / f"module_{f:02d}.py").write_text(body, "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "reviewed")
    older = git(root, "rev-parse", "HEAD")
    (root / "NOTES.md").write_text("later\n", "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "later")
    return root, older, git(root, "rev-parse", "HEAD")


def paths() -> list[str]:
    return [f"src/pkg{f % 5}/module_{f:02d}.py" for f in range(FILES)]


def citations() -> list[Citation]:
    """Ten per file: six exact, two two lines off, two invented."""
    cited: list[Citation] = []
    for f, path in enumerate(paths()):
        for k in range(PER_FILE):
            line = 20 + k * 37
            content = line_text(f, line).strip()
            if k in (6, 7):
                line += 2
            elif k in (8, 9):
                content = f"value_{f:02d}_{line:04d} = invented()"
            cited.append(Citation(path=path, line=line, content=content))
    return cited


def review(root: Path, revision: str, cited: list[Citation]) -> Callable[[], DecisionDocument]:
    claims = ReviewerOutput(
        schema_version=1, agent_id="reviewer", inspected_files=paths(), citations=cited
    )
    evidence = EvidenceDocument(
        source="pi-rpc",
        revision=revision,
        stream_complete=True,
        capability=Capability.PER_FILE,
        files=[FileEvidence(path=path, reads_succeeded=1) for path in paths()],
    )

    def run() -> DecisionDocument:
        with GitTree(root, revision) as tree:
            return reconcile(
                ReviewInput(
                    repo="acme/bench",
                    revision=revision,
                    verdict_in=Verdict.APPROVE,
                    mode=Mode.ENFORCE,
                    mode_source=ModeSource.OVERRIDE,
                    scope=paths(),
                    reviewers=[ReviewerInput("reviewer", claims, evidence)],
                    repo_root=str(root),
                    tree=tree,
                    files=tree,
                )
            )

    return run


def interleaved_medians(
    first: Callable[[], object], second: Callable[[], object], repeat: int
) -> tuple[float, float]:
    """Alternate the two runs so that load on the machine hits both alike."""
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for run, bucket in ((first, samples[0]), (second, samples[1])):
            started = time.perf_counter()
            run()
            bucket.append(time.perf_counter() - started)
    return statistics.median(samples[0]), statistics.median(samples[1])


def test_500_citations_over_50_files_read_from_git_add_under_100_ms(
    repo: tuple[Path, str, str],
) -> None:
    root, older, _ = repo
    measure("git", root, older)


def test_500_citations_over_50_files_read_from_the_working_tree_add_under_100_ms(
    repo: tuple[Path, str, str],
) -> None:
    root, _, head = repo
    measure("worktree", root, head)


def measure(where: str, root: Path, revision: str) -> None:
    plain = review(root, revision, [])
    cited = review(root, revision, citations())
    decision = cited()
    (reviewer,) = decision.reviewers
    assert reviewer.citations is not None
    outcomes = [c.outcome for c in reviewer.citations.checks]
    assert len(outcomes) == FILES * PER_FILE
    assert outcomes.count(CitationOutcome.MATCHED) == FILES * 6
    assert outcomes.count(CitationOutcome.MATCHED_NEARBY) == FILES * 2
    assert outcomes.count(CitationOutcome.FAILED) == FILES * 2
    assert decision.verdict_out is Verdict.COMMENT
    assert plain().verdict_out is Verdict.APPROVE

    without, with_citations = interleaved_medians(plain, cited, REPEAT)
    added = with_citations - without
    print(
        f"\n{where:<9} reconcile without citations {without * 1000:8.1f} ms, with 500 citations "
        f"over 50 files {with_citations * 1000:8.1f} ms: ratio {with_citations / without:5.2f}, "
        f"added {added * 1000:6.1f} ms (budget {BUDGET_S * 1000:.0f} ms)"
    )
    assert added < BUDGET_S
