"""Files other tools read: evidence, decisions, flag snapshots and what the GitHub step leaves are
written with the mode any new file gets under the writer's umask (0644 under the usual 022),
never a private 0600, and still atomically (a temporary file renamed into place)."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.commands.flags import flags_app
from coverage_gate.examples.demo import REVISION
from coverage_gate.rollout.flags import resolve_mode
from tests._support.examples import EXAMPLES
from tests.rollout.test_flags_stub_server import TOKEN, Servers, features_document, live, servers

__all__ = ["servers"]  # the stub Unleash server fixture, used here as it is there

BIN = Path(sys.executable).parent
UMASKS = [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)]


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def shell(command: list[str], umask: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` run by a shell that set ``umask`` first, as a CI job's shell would."""
    script = f"umask {umask:03o}; exec {shlex.join(command)}"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env={k: v for k, v in env.items() if not k.startswith(("INPUT_", "GITHUB_"))},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def example(tmp_path: Path) -> Path:
    for name in ("lying.pi-rpc.jsonl", "lying.claims.json", "changed.txt", "review.diff"):
        (tmp_path / name).write_bytes((EXAMPLES / name).read_bytes())
    # an earlier private copy of each output: the new file replaces it with the umask's mode
    for name in ("e.json", "d.json"):
        (tmp_path / name).write_text("{}")
        (tmp_path / name).chmod(0o600)
    return tmp_path


@pytest.mark.parametrize(("umask", "expected"), UMASKS, ids=[f"umask {u:03o}" for u, _ in UMASKS])
def test_evidence_and_decision_files_get_the_umasks_mode(
    example: Path, umask: int, expected: int
) -> None:
    record = shell(
        [
            "coverage-gate",
            "record",
            "lying.pi-rpc.jsonl",
            "-f",
            "pi-rpc",
            "--revision",
            REVISION,
            "--diff",
            "review.diff",
            "--repo-root",
            ".",
            "-o",
            "e.json",
        ],
        umask,
        example,
    )
    assert record.returncode == 0, record.stderr
    reconcile = shell(
        [
            "coverage-gate",
            "reconcile",
            "--repo",
            "example/notes",
            "--revision",
            REVISION,
            "--verdict",
            "approve",
            "--claims",
            "lying.claims.json",
            "--evidence",
            "e.json",
            "--changed",
            "changed.txt",
            "--mode",
            "enforce",
            "--repo-root",
            ".",
            "--decision-json",
            "d.json",
        ],
        umask,
        example,
    )
    assert reconcile.returncode == 0, reconcile.stderr
    assert {name: oct(mode_of(example / name)) for name in ("e.json", "d.json")} == {
        "e.json": oct(expected),
        "d.json": oct(expected),
    }
    assert json.loads((example / "d.json").read_text())["downgraded"] is True
    assert not [p.name for p in example.iterdir() if p.name.endswith(".tmp")]


def test_live_capture_writes_its_evidence_with_the_umasks_mode(example: Path) -> None:
    done = shell(
        [
            "coverage-gate",
            "run",
            "--format",
            "pi-rpc",
            "--revision",
            REVISION,
            "-o",
            "e.json",
            "--",
            "cat",
            "lying.pi-rpc.jsonl",
        ],
        0o022,
        example,
    )
    assert done.returncode == 0, done.stderr
    assert oct(mode_of(example / "e.json")) == oct(0o644)


def test_the_demos_files_get_the_umasks_mode(tmp_path: Path) -> None:
    done = shell(["coverage-gate", "demo", "--keep", "kept"], 0o022, tmp_path)
    assert done.returncode == 0, done.stderr
    written = sorted((tmp_path / "kept").glob("*.json"))
    assert written
    assert {p.name: oct(mode_of(p)) for p in written} == {p.name: oct(0o644) for p in written}


def test_the_github_steps_files_get_the_umasks_mode(example: Path) -> None:
    env = {
        "INPUT_VERDICT": "approve",
        "INPUT_CLAIMS": "lying.claims.json",
        "INPUT_STREAM": "lying.pi-rpc.jsonl",
        "INPUT_DIFF": "review.diff",
        "INPUT_CHANGED": "changed.txt",
        "INPUT_MODE": "enforce",
        "INPUT_REPO": "example/notes",
        "INPUT_REVISION": REVISION,
        "INPUT_OUTPUT_DIR": "out",
    }
    assignments = [f"{k}={v}" for k, v in env.items()]
    done = shell(["env", *assignments, "coverage-gate", "github"], 0o022, example)
    assert done.returncode == 0, done.stderr
    written = sorted((example / "out").iterdir())
    assert [p.name for p in written] == [
        "comment.md",
        "decision.json",
        "decision.sarif",
        "reviewer-1.evidence.json",
    ]
    assert {p.name: oct(mode_of(p)) for p in written} == {p.name: oct(0o644) for p in written}


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("umask_022")
def test_a_pulled_snapshot_and_the_flags_disk_copy_get_the_umasks_mode(
    servers: Servers, tmp_path: Path
) -> None:
    servers.stub.serve(features_document(["acme/payments"]))
    out = tmp_path / "pulled.json"
    env = {"UNLEASH_URL": servers.url, "UNLEASH_API_TOKEN": TOKEN}
    pulled = CliRunner().invoke(flags_app, ["pull", "-o", str(out)], env=env)
    assert pulled.exit_code == 0, pulled.output
    resolve_mode("acme/payments", live(servers.url, tmp_path))
    # the disk copy is kept per deployment, beside the configured path: copy.<key>.json
    (copy,) = tmp_path.glob("copy.*.json")
    assert {p.name: oct(mode_of(p)) for p in (out, copy)} == {
        "pulled.json": oct(0o644),
        copy.name: oct(0o644),
    }
