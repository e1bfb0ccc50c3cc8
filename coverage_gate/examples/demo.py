"""The bundled example: two real pi RPC captures of the same review, one honest, one lying.

Both reviewers claim all six changed files. The honest one paged the whole diff and read every
file; the lying one read one diff page, two files, and two reads that failed.
"""

from __future__ import annotations

import importlib.resources
import shutil
from collections.abc import Callable
from pathlib import Path

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.model import (
    DecisionDocument,
    Mode,
    ModeSource,
    ReviewerOutput,
    Verdict,
)
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.edges.files import dump_model, load_model, write_atomic
from coverage_gate.edges.scope import parse_changed
from coverage_gate.outputs import render
from coverage_gate.record.recording import RecordSettings, record_stream

__all__ = ["FILES", "REPO", "REPO_ROOT", "REVIEWERS", "REVISION", "copy_examples", "run_demo"]

REPO = "example/notes"
REVISION = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
REPO_ROOT = "/home/user/repo"  # where the captured reviewers ran
REVIEWERS = ("honest", "lying")
FILES = (
    "review.diff",
    "changed.txt",
    *tuple(f"{name}.{kind}" for name in REVIEWERS for kind in ("pi-rpc.jsonl", "claims.json")),
)


def copy_examples(folder: Path) -> None:
    source = importlib.resources.files("coverage_gate.examples")
    for name in FILES:
        with importlib.resources.as_file(source / name) as path:
            shutil.copyfile(path, folder / name)


def run_demo(
    folder: Path, say: Callable[[str], None], show: Callable[[str], None]
) -> list[DecisionDocument]:
    copy_examples(folder)
    diff = DiffIndex.parse((folder / "review.diff").read_bytes())
    scope = parse_changed((folder / "changed.txt").read_text(), "changed.txt", REPO_ROOT)
    decisions: list[DecisionDocument] = []
    for name in REVIEWERS:
        settings = RecordSettings(revision=REVISION, repo_root=REPO_ROOT, diff=diff, agent=name)
        with (folder / f"{name}.pi-rpc.jsonl").open("rb") as stream:
            evidence = record_stream(stream, ADAPTERS["pi-rpc"], settings)
        write_atomic(folder / f"{name}.evidence.json", dump_model(evidence))
        say(f"recorded {name}.evidence.json: {render.evidence_summary(evidence)}")
        claims = load_model(folder / f"{name}.claims.json", ReviewerOutput, "reviewer output")
        for mode in (Mode.SHADOW, Mode.ENFORCE):
            decision = reconcile(
                ReviewInput(
                    repo=REPO,
                    revision=REVISION,
                    verdict_in=Verdict.APPROVE,
                    mode=mode,
                    mode_source=ModeSource.OVERRIDE,
                    scope=scope,
                    reviewers=[ReviewerInput(claims.agent_id, claims, evidence)],
                    repo_root=REPO_ROOT,
                )
            )
            write_atomic(folder / f"{name}.{mode.value}.decision.json", dump_model(decision))
            decisions.append(decision)
            show(f"=== {name} reviewer, mode {mode.value} ===")
            show(render.text(decision, mode_from="demo"))
    return decisions
