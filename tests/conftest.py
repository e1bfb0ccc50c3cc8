"""Shared test helpers: record a stream held in memory, canonical JSON, golden files."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.evidence_doc import Bounds
from coverage_gate.contracts.model import Capability, EvidenceDocument, FileEvidence, LineRange
from coverage_gate.core.depth import ContentSource
from coverage_gate.core.diffmap import DiffIndex
from coverage_gate.edges.content import MappingContent
from coverage_gate.record.recording import RecordSettings, record_stream

TESTS = Path(__file__).parent
DATA = TESTS / "data"
GOLDEN = TESTS / "golden"
#: The root the sanitized captures name. A test that lets `record` look at the file system under
#: the root never passes it as it stands (the machine may hold a folder there): it records the
#: capture as ``hermetic_capture`` rewrites it.
REPO_ROOT = "/home/user/repo"
# The six changed files of the captured review (tests/data/pi-rpc/review.diff)
CHANGED_FILES = [
    "README.md",
    "docs/guide.md",
    "src/api/handlers.py",
    "src/api/models.py",
    "src/util/strings.py",
    "tests/test_handlers.py",
]
UPDATE_GOLDEN = os.environ.get("COVERAGE_GATE_UPDATE_GOLDEN") == "1"
# The six changed files as they are at the captured review's revision (tests/data/revision)
REVISION_FILES = DATA / "revision"
collect_ignore = ["data"]  # tests/data/revision holds a test_*.py that is data, not a test


#: Where a test that lets `record` look under the root places the captures instead: as long as
#: ``REPO_ROOT`` (so every offset in the stream stays where it was), and under a device, so no
#: machine can hold a folder there.
UNREACHABLE_ROOT = "/dev/null/_repo"
assert len(UNREACHABLE_ROOT) == len(REPO_ROOT)


def hermetic_capture(stream: Path, work: Path) -> Path:
    """``stream`` as written to ``work`` with ``REPO_ROOT`` rewritten to ``UNREACHABLE_ROOT``."""
    rewritten = work / "hermetic" / stream.name
    rewritten.parent.mkdir(parents=True, exist_ok=True)
    rewritten.write_bytes(
        stream.read_bytes().replace(REPO_ROOT.encode(), UNREACHABLE_ROOT.encode())
    )
    return rewritten


def revision_content() -> MappingContent:
    return MappingContent({path: (REVISION_FILES / path).read_bytes() for path in CHANGED_FILES})


def record_bytes(
    data: bytes,
    source: str = "pi-rpc",
    *,
    revision: str = "rev1",
    diff: bytes | None = None,
    bounds: Bounds | None = None,
    max_line_bytes: int = 64 * 1024 * 1024,
    content: ContentSource | None = None,
) -> EvidenceDocument:
    settings = RecordSettings(
        revision=revision,
        repo_root=REPO_ROOT,
        bounds=bounds or Bounds(),
        diff=DiffIndex.parse(diff) if diff is not None else None,
        max_line_bytes=max_line_bytes,
        content=None if content is None else (lambda _root: content),
    )
    return record_stream(io.BytesIO(data), ADAPTERS[source], settings)


def canonical(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def check_golden(path: Path, actual: Any) -> None:
    """Compare with the golden file; ``COVERAGE_GATE_UPDATE_GOLDEN=1`` rewrites it instead."""
    text = canonical(actual)
    if UPDATE_GOLDEN or not path.exists():
        if not UPDATE_GOLDEN:
            raise AssertionError(
                f"{path} is missing; run with COVERAGE_GATE_UPDATE_GOLDEN=1 to create it"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.read_text(encoding="utf-8") == text, f"{path} differs from the recorded evidence"


@pytest.fixture(autouse=True)
def _isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test writes telemetry or flag copies into the real home folder, reads a Codex rollout
    from it, or reads a mode, flag source, policy or collector from the environment it happens
    to run in; and none runs in this project's own checkout, whose Git top level would be the
    repository root (and the repository its --revision is resolved in) of every command given
    no --repo-root."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    monkeypatch.setenv("COVERAGE_GATE_TELEMETRY_DIR", str(state / "telemetry"))
    monkeypatch.setenv("COVERAGE_GATE_FLAGS_DISK_COPY", str(state / "flags.json"))
    # a codex exec stream's rollout is looked for here, never in the real ~/.codex
    monkeypatch.setenv("CODEX_HOME", str(state / "codex"))
    for name in list(os.environ):
        if name.startswith(("OTEL_", "UNLEASH_")) or name in {
            "COVERAGE_GATE_MODE",
            "COVERAGE_GATE_FLAGS",
            "COVERAGE_GATE_FALLBACK_MODE",
            "COVERAGE_GATE_FLAGS_ON_ERROR",
            "COVERAGE_GATE_FLAG_NAME",
            "COVERAGE_GATE_DEPTH_POLICY",
            "COVERAGE_GATE_UNKNOWN_POLICY",
            "COVERAGE_GATE_CITATION_POLICY",
            "COVERAGE_GATE_MUTATION_POLICY",
        }:
            monkeypatch.delenv(name)


def lying_reconcile_args(folder: Path, *extra: str) -> list[str]:
    """``reconcile`` arguments for a lying reviewer in shadow mode: it claims two files, the
    evidence shows one read."""
    scope = ["src/api.py", "src/db.py"]
    claims = folder / "claims.json"
    claims.write_text(
        json.dumps({"schema_version": 1, "agent_id": "security", "inspected_files": scope})
    )
    evidence = folder / "evidence.json"
    evidence.write_text(
        EvidenceDocument(
            source="pi-rpc",
            revision="abc123",
            stream_complete=True,
            capability=Capability.PER_FILE,
            files=[FileEvidence(path="src/api.py", reads_succeeded=1)],
        ).model_dump_json(by_alias=True)
    )
    changed = folder / "changed.txt"
    changed.write_text("\n".join(scope) + "\n")
    return approve_args(
        "abc123", changed, "--claims", claims, "--evidence", evidence, "--mode", "shadow",
        "--repo-root", folder, *extra, repo="acme/api",
    )  # fmt: skip


def approve_args(
    revision: str, changed: Path, *options: str | Path, repo: str = "o/r"
) -> list[str]:
    """``reconcile`` of an Approve of ``repo`` at ``revision`` over the files listed in
    ``changed``, with ``options``."""
    return [
        "reconcile", "--repo", repo, "--revision", revision, "--verdict", "approve",
        "--changed", str(changed), *map(str, options),
    ]  # fmt: skip


def reconcile_claims(folder: Path, claims: object, *options: str | Path) -> Result:
    """`reconcile` (in process, shadow mode, telemetry off) of an Approve over the one changed
    file ``a.py`` whose claims file in ``folder`` holds ``claims`` as JSON; the CLI result."""
    from typer.testing import CliRunner  # noqa: PLC0415 - only the tests that invoke it

    from coverage_gate.cli import app  # noqa: PLC0415 - only the tests that invoke it

    (folder / "claims.json").write_text(json.dumps(claims), "utf-8")
    (folder / "changed.txt").write_text("a.py\n", "utf-8")
    args = approve_args("abc", folder / "changed.txt", "--mode", "shadow",
                        "--claims", folder / "claims.json", *options)  # fmt: skip
    return CliRunner().invoke(app, args, env={"OTEL_SDK_DISABLED": "true"})


def reconcile_in(work: Path, repo: str, revision: str, root: str, *extra: str) -> list[str]:
    """``reconcile --format json`` of the approve review whose ``changed.txt``, ``claims.json``
    and ``e.json`` lie in ``work``."""
    return approve_args(
        revision, work / "changed.txt", "--claims", work / "claims.json",
        "--evidence", work / "e.json", "--repo-root", root, "--format", "json", *extra, repo=repo,
    )  # fmt: skip


# --- adapter tests: real captures against their truth and golden files ---------------------------


def check_golden_evidence(path: Path, document: EvidenceDocument) -> None:
    """An evidence document against its golden file (see ``check_golden``)."""
    check_golden(path, document.model_dump(mode="json", by_alias=True))


def git_repository(folder: Path) -> Path:
    """``folder`` made a git repository of its own (its files untracked: ``snapshot_tree`` writes
    them as the revision), with no user or system configuration read."""
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.environ["PATH"]}
    subprocess.run(
        ["git", "-C", str(folder), "init", "-q", "-b", "main"],
        check=True,
        env=env,
        capture_output=True,
    )
    return folder


#: A committer's identity and no user or system configuration: git runs the same everywhere.
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git_in(repo: Path, *args: str, env: Mapping[str, str] = GIT_ENV) -> str:
    """``git -C repo ARGS`` with ``env`` over this process's variables: its stdout, stripped
    (a failure fails the test)."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return done.stdout.strip()


CONTENT_CAPTURE_PREFIX = "content_"


def stream_truths(folder: Path) -> list[Path]:
    """The truth files of ``folder``'s captures that pin what each call was and how it ended.
    Captures named ``content_*`` pin what the calls *returned* against the revision instead:
    ``tests/record/test_content_captures.py`` judges them, with the repository they ran in."""
    return [
        path
        for path in sorted(folder.glob("*.truth.json"))
        if not path.name.startswith(CONTENT_CAPTURE_PREFIX)
    ]


def assert_capture_reproduces_truth(document: EvidenceDocument, truth: dict[str, Any]) -> None:
    """What a real capture's ``*.truth.json`` says its run did: each file's successful and
    failed reads, whether the stream ended, which reads came back empty, which showed only some
    lines, and the claims the reads leave unsupported or the reads no claim names."""
    reads = {f.path: (f.reads_succeeded, f.reads_failed) for f in document.files}
    expected = {path: (v["read_succeeded"], v["read_failed"]) for path, v in truth["files"].items()}
    assert reads == expected
    assert document.stream_complete is truth["stream_complete"]
    assert {f.path for f in document.files if f.reads_empty} == set(truth.get("empty_reads", []))
    for path, partial in truth.get("partial_reads", {}).items():
        found = document.file(path)
        assert found is not None
        start, end = partial["lines"]
        assert found.lines_seen == [LineRange(start=start, end=end)], path
    read_ok = {f.path for f in document.files if f.reads_succeeded}
    assert sorted(set(truth["claimed_inspected"]) - read_ok) == sorted(
        truth["claimed_but_not_read"]
    )
    assert sorted(read_ok - set(truth["claimed_inspected"])) == sorted(
        truth["read_but_not_claimed"]
    )


#: The capture kit's scripts (``tests/integration/realclients``), which build the repositories
#: the real captures read.
KIT = TESTS / "integration" / "realclients"
#: A repository a kit script built: (root, revision, pinned diff, changed list).
Repo = tuple[Path, str, Path, Path]


def kit_repo(folder: Path, script: str = "make_odd_repo.sh", *extra: tuple[str, bytes]) -> Repo:
    """A repository from the capture kit's ``script``, in ``folder``, with ``extra`` files added
    to the change (intent-to-add, so that plain ``git diff`` shows them)."""
    root = folder / "repo"
    subprocess.run(["bash", str(KIT / script), str(root)], check=True, capture_output=True)
    for path, data in extra:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
        subprocess.run(["git", "-C", str(root), "add", "-N", path], check=True)
    from coverage_gate.edges.content import snapshot_tree  # noqa: PLC0415

    return root, snapshot_tree(root), *pinned_change(root, folder)


@pytest.fixture(scope="module")
def odd_repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """``make_odd_repo.sh``'s repository, which the presentation captures read, rebuilt."""
    return kit_repo(tmp_path_factory.mktemp("odd"))


def pinned_change(repo: Path, folder: Path) -> tuple[Path, Path]:
    """The working tree's change in ``repo`` as a pipeline pins it: ``git diff`` written to
    ``folder/pr.diff`` and the changed paths to ``folder/changed.txt``; both paths."""
    diff = subprocess.run(
        ["git", "-C", str(repo), "diff", "--no-color", "--no-ext-diff"],
        capture_output=True,
        check=True,
    ).stdout
    (folder / "pr.diff").write_bytes(diff)
    names = subprocess.run(
        ["git", "-C", str(repo), "diff", "--name-only"], capture_output=True, text=True, check=True
    ).stdout
    (folder / "changed.txt").write_text(names)
    return folder / "pr.diff", folder / "changed.txt"


def run_cli(
    *args: str | Path,
    env: Mapping[str, str] | None = None,
    encoding: str = "utf-8",
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """``coverage-gate ARGS`` as a whole process, as a pipeline runs it (text out, no check):
    ``env`` adds to (or replaces) this process's variables; the output is decoded, strictly, in
    ``encoding``; ``cwd``: where it runs (this process's directory by default)."""
    return subprocess.run(
        [sys.executable, "-m", "coverage_gate", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding=encoding,
        env={**os.environ, **env} if env is not None else None,
        timeout=120,
        check=False,
    )


def enforced_decision(
    evidence: Path,
    *,
    revision: str,
    root: Path | None,
    changed: Path,
    claimed: list[str],
    folder: Path,
    repo: str = "example/odd",
    agent: str = "reviewer",
    cwd: Path | None = None,
) -> dict[str, Any]:
    """``reconcile --mode enforce --format json`` as a whole process (in ``cwd``), of an Approve
    whose reviewer ``agent`` claims ``claimed`` (its claims written to ``folder``), with the
    evidence recorded, under ``--repo-root root`` (none: the root found from ``cwd``): the
    decision (a non-zero exit fails the test)."""
    claims = folder / "claims.json"
    claims.write_text(
        json.dumps(
            {"schema_version": 1, "agent_id": agent, "inspected_files": claimed, "findings": []}
        )
    )
    done = run_cli(
        "reconcile", "--repo", repo, "--revision", revision, "--verdict", "approve",
        "--claims", claims, "--evidence", evidence, "--changed", changed, "--mode", "enforce",
        *(("--repo-root", root) if root is not None else ()), "--format", "json", cwd=cwd,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    decision: dict[str, Any] = json.loads(done.stdout)
    return decision
