"""Every shell command the README shows is run here as written, or run verbatim by CI's script
(checked here), or listed here with the reason it cannot run in a test."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coverage_gate.rollout.simulation import expected_readiness
from tests._support.docs import all_text
from tests.conftest import CHANGED_FILES, DATA

ROOT = Path(__file__).parent.parent
README = all_text()
CI_SCRIPT = ROOT / ".ci" / "run"
REV = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# Inline commands in prose: those that start with an interpreter, a script runner or a tool.
_INLINE = re.compile(r"`((?:\.venv/bin/|python3? |bash |promtool )[^`]*)`")
_COMMENT = re.compile(r"(?:^|\s)#.*$")


def _words(command: str) -> str:
    return " ".join(command.split())


def shown_commands() -> list[str]:
    """The README's commands: each logical line of its bash blocks (continuations joined,
    comments dropped) and the inline commands of its prose, whitespace normalised."""
    commands: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", README, re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            command = _words(_COMMENT.sub("", line))
            if command:
                commands.append(command)
    commands += [_words(found) for found in _INLINE.findall(README)]
    return commands


ROLLOUT_DEMO = ".venv/bin/coverage-gate demo --rollout rollout"
BENCH = ".venv/bin/python -m pytest -m bench -s"
ARCHITECTURE = ".venv/bin/python -m tests.architecture_report"
RECORD = (
    'coverage-gate record reviewer.jsonl --format pi-rpc --revision "$HEAD_SHA" '
    '--repo-root "$PWD" --diff review.diff -o reviewer.evidence.json'
)
RECONCILE = (
    'coverage-gate reconcile --repo acme/shop --revision "$HEAD_SHA" --verdict approve '
    "--changed changed-files.txt --claims reviewer-output.json "
    "--evidence reviewer.evidence.json --format json"
)

CODEREVIEW_RECORD = (
    'coverage-gate record "run/llm-tasks/reviewer%3Acorrectness-${HEAD_SHA:0:12}/metadata.json" '
    '--format codereview-cli --revision "$HEAD_SHA" --diff review.diff -o correctness.evidence.json'
)
CODEREVIEW_RECONCILE = (
    'coverage-gate reconcile --repo acme/shop --revision "$HEAD_SHA" --verdict approve '
    "--changed changed-files.txt --codereview-run run --diff review.diff --format json"
)

#: A review of uncommitted changes, in its order (one shell: the first sets REV).
SNAPSHOT_PIPELINE = (
    'REV="$(coverage-gate snapshot)"',
    'coverage-gate record reviewer.jsonl --format pi-rpc --revision "$REV" --diff review.diff '
    "-o reviewer.evidence.json",
    'coverage-gate reconcile --repo acme/shop --revision "$REV" --verdict approve --changed '
    "changed-files.txt --claims reviewer-output.json --evidence reviewer.evidence.json",
)

#: The rollout runbook, in its order.
RUNBOOK = (
    'coverage-gate reconcile --repo acme/shop --revision "$HEAD_SHA" --verdict approve '
    "--changed changed-files.txt --claims reviewer-output.json "
    "--evidence reviewer.evidence.json --flags flags.json --receipt receipts",
    "coverage-gate report --list would_downgrade",
    "coverage-gate receipts verify receipts",
    "coverage-gate replay receipts --flags candidate-flags.json --format markdown",
    "coverage-gate flags --repo acme/shop --flags candidate-flags.json",
    "coverage-gate report",
    "coverage-gate replay receipts --mode shadow",
)

#: What an operator runs when drift appears.
FORMATS_CHECK = 'coverage-gate formats --check reviewer.jsonl --revision "$HEAD_SHA"'

#: Run as written by a test of this file.
RUN_HERE = {
    FORMATS_CHECK: "test_formats_check_runs_as_written",
    RECORD: "test_pipeline_commands_run_as_written",
    RECONCILE: "test_pipeline_commands_run_as_written",
    CODEREVIEW_RECORD: "test_codereview_commands_run_as_written",
    CODEREVIEW_RECONCILE: "test_codereview_commands_run_as_written",
    ROLLOUT_DEMO: "test_rollout_demo_command_runs_as_written",
    ARCHITECTURE: "test_architecture_command_runs_as_written",
    **dict.fromkeys(SNAPSHOT_PIPELINE, "test_uncommitted_changes_pipeline_runs_as_written"),
    **dict.fromkeys(RUNBOOK, "test_rollout_runbook_runs_as_written"),
    "coverage-gate report --format html -o report.html": (
        "tests/outputs/test_report_html.py::test_readme_html_command_runs_as_written"
    ),
}

#: Run verbatim by CI's script: each part between ``&&`` is one of its lines (checked below).
RUN_BY_CI = {
    ".venv/bin/ruff format --check . && .venv/bin/ruff check . && .venv/bin/mypy",
    "bash .ci/setup-unleash.sh",
    "bash .ci/setup-prometheus.sh",
    "bash .ci/setup-clients.sh",
}

#: Cannot run in a test, and why.
CANNOT_RUN = {
    "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/coverage-gate demo": (
        "makes a fresh virtualenv and installs the dependencies from the package index; "
        "tests/test_packaging.py installs the built wheel into a fresh virtualenv and runs its "
        "`coverage-gate demo`"
    ),
    'git clone "$COVERAGE_GATE_GIT_URL" coverage-gate && cd coverage-gate': (
        "names the git URL of the reader's own copy (coverage-gate is published nowhere); "
        "CI runs on a clone"
    ),
    "python3 -m venv .venv && .venv/bin/pip install .": (
        "makes a fresh virtualenv and installs the dependencies from the package index; "
        "tests/test_packaging.py installs the built wheel into a fresh virtualenv"
    ),
    ".venv/bin/mkdocs build --strict": (
        "writes site/ into the checkout; tests/docs/test_site.py runs the same strict build "
        "into a temporary folder"
    ),
    ".venv/bin/python -m tests.bench.test_speed_guard --runs 5": (
        "measures for minutes on a quiet machine and prints figures; CI runs the same guard as "
        "tests/bench/test_speed_guard.py, which asserts them"
    ),
    "python -c pass": (
        "names the interpreter's bare start-up, the baseline the speed guard times --help against"
    ),
    "./.ci/run": (
        "is CI itself: installs system packages as root, then runs the whole suite, this test "
        "included"
    ),
    'coverage-gate run --format pi-rpc --revision "$HEAD_SHA" --repo-root "$PWD" --diff '
    "review.diff -o reviewer.evidence.json --timeout 1800 -- pi --mode rpc --no-builtin-tools "
    "--tools cr_read,cr_diff -e cr_tools.mjs ...": (
        "ends in a placeholder (`...`) and needs the real pi client; "
        "tests/integration/test_real_clients.py runs pi under `coverage-gate run`"
    ),
    'coverage-gate run --format claude-code --telemetry-intake claude-code --revision "$HEAD_SHA" '
    '--repo-root "$PWD" --diff review.diff -o reviewer.evidence.json --telemetry-output '
    'reviewer.telemetry.json -- claude -p "$PROMPT" --output-format stream-json --verbose': (
        "needs the real Claude Code client and a model; tests/integration/test_real_clients.py "
        "runs Claude Code under `coverage-gate run --telemetry-intake claude-code`"
    ),
    "python3 -m venv .venv && .venv/bin/pip install -U pip && .venv/bin/pip install -e '.[docs]' --group dev": (
        "replaces the virtualenv the tests run in (CI's script runs it, with -q)"
    ),
    ".venv/bin/python -m pytest": "is the test run itself (CI's script runs it with --cov)",
    "COVERAGE_GATE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/adapters/test_pi_rpc.py": (
        "rewrites the tracked golden files in place, which the golden tests exist to pin"
    ),
    BENCH: (
        "runs the benchmarks: half an hour and several GB of generated data (a million "
        "decisions for report, 100,000 receipts for replay) the default run must not include; "
        "test_bench_command_selects_every_benchmark_and_the_default_run_none checks what it runs"
    ),
    ".venv/bin/python -m pytest tests/integration/test_real_clients.py": (
        "the default run collects this file (tests/ is the test path); it needs the clients "
        ".ci/setup-clients.sh installs"
    ),
    "python -m tests.bench.compare --against COMMIT": (
        "names a placeholder commit, and installs that commit into a fresh virtualenv from the "
        "package index; it measures, asserts nothing (tests/bench/test_speed_guard.py, which CI "
        "runs, asserts)"
    ),
    "promtool test rules dashboards/prometheus-rules.test.yml": (
        "needs promtool; tests/rollout/test_dashboards.py runs `promtool test rules` on that file when "
        "it is installed (always in CI)"
    ),
}


def test_every_readme_command_is_run_or_explained() -> None:
    """No README command is left unaccounted for, and none is listed twice or stale."""
    shown = shown_commands()
    listed = [*RUN_HERE, *RUN_BY_CI, *CANNOT_RUN]
    assert len(listed) == len(set(listed)), "a command is listed twice"
    assert not [c for c in shown if c not in listed], "README commands not run or explained"
    assert not [c for c in listed if c not in shown], "listed commands the README no longer shows"


def test_commands_listed_as_run_by_ci_are_in_its_script() -> None:
    lines = {_words(line) for line in CI_SCRIPT.read_text().splitlines()}
    for command in RUN_BY_CI:
        for part in command.split(" && "):
            assert part in lines, f"{part!r} is not a line of {CI_SCRIPT}"


def _bash(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_pipeline_commands_run_as_written(tmp_path: Path) -> None:
    """The review-pipeline example runs as written, in a folder holding the files it names."""
    shutil.copyfile(DATA / "pi-rpc" / "pi_a_honest.jsonl", tmp_path / "reviewer.jsonl")
    shutil.copyfile(DATA / "pi-rpc" / "review.diff", tmp_path / "review.diff")
    (tmp_path / "changed-files.txt").write_text("\n".join(CHANGED_FILES) + "\n")
    claims = {"schema_version": 1, "agent_id": "r", "inspected_files": list(CHANGED_FILES)}
    (tmp_path / "reviewer-output.json").write_text(json.dumps(claims))
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "HEAD_SHA": REV, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = _bash(RECORD, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "reviewer.evidence.json").read_text())["revision"] == REV
    done = _bash(RECONCILE, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["repo"] == "acme/shop"


def test_formats_check_runs_as_written(tmp_path: Path) -> None:
    """The drift check runs as written: a real pi capture is understood (exit 0); the same
    capture with its tool-end event renamed, as a client update might, is drift (exit 1), each
    kind named."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "HEAD_SHA": REV, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    honest = (DATA / "pi-rpc" / "pi_a_honest.jsonl").read_text()
    (tmp_path / "reviewer.jsonl").write_text(honest)
    done = _bash(FORMATS_CHECK, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "format          pi-rpc (detected from its first lines)" in done.stdout
    assert "drift           none" in done.stdout
    renamed = honest.replace('"type":"tool_execution_end"', '"type":"tool_execution_finish"')
    assert renamed != honest
    (tmp_path / "reviewer.jsonl").write_text(renamed)
    done = _bash(FORMATS_CHECK, tmp_path, env)
    assert done.returncode == 1, done.stderr
    assert "unknown_event tool_execution_finish" in done.stdout
    assert "claims without evidence would be unknown" in done.stdout
    (tmp_path / "reviewer.jsonl").write_text("this is not a stream\n")
    done = _bash(FORMATS_CHECK, tmp_path, env)
    assert done.returncode == 3
    assert "not a known stream format" in done.stderr


def test_uncommitted_changes_pipeline_runs_as_written(tmp_path: Path) -> None:
    """The uncommitted-changes example runs as written in make_repo.sh's repository (its change
    is in the working tree): the revision is the tree snapshot wrote, the honest pi capture's
    reads match it, and every claim is verified."""
    repo = tmp_path / "repo"
    kit = ROOT / "tests" / "integration" / "realclients"
    subprocess.run(["bash", str(kit / "make_repo.sh"), str(repo)], check=True, capture_output=True)
    shutil.copyfile(DATA / "pi-rpc" / "review.diff", repo / "review.diff")
    claims = {"schema_version": 1, "agent_id": "r", "inspected_files": list(CHANGED_FILES)}
    inputs = {
        "reviewer.jsonl": (DATA / "pi-rpc" / "pi_a_honest.jsonl").read_text(),
        "changed-files.txt": "\n".join(CHANGED_FILES) + "\n",
        "reviewer-output.json": json.dumps(claims),
    }
    info = repo / ".git" / "info"
    info.mkdir(parents=True, exist_ok=True)
    # the pipeline's own files are no part of the change under review
    (info / "exclude").write_text("\n".join([*inputs, "review.diff", "*.evidence.json"]) + "\n")
    for name, text in inputs.items():
        (repo / name).write_text(text)
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = _bash("\n".join(SNAPSHOT_PIPELINE), repo, env)
    assert done.returncode == 0, done.stderr
    evidence = json.loads((repo / "reviewer.evidence.json").read_text())
    tree = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", f"{evidence['revision']}^{{tree}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert tree == evidence["revision"]  # a tree, not a commit
    assert {f["path"]: f["content"]["matched"] for f in evidence["files"]} == dict.fromkeys(
        CHANGED_FILES, 1
    )
    assert "verified" in done.stdout and "unsupported" not in done.stdout


def test_codereview_commands_run_as_written(tmp_path: Path) -> None:
    """The codereview-cli example runs as written on the fixture run, copied to ``run/``."""
    shutil.copytree(DATA / "codereview-cli", tmp_path / "run")
    shutil.copyfile(DATA / "pi-rpc" / "review.diff", tmp_path / "review.diff")
    (tmp_path / "changed-files.txt").write_text("\n".join(CHANGED_FILES) + "\n")
    head = "1a2b3c4d5e6f" + "0" * 28  # the fixture's task folders name 1a2b3c4d5e6f
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "HEAD_SHA": head, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = _bash(CODEREVIEW_RECORD, tmp_path, env)
    assert done.returncode == 0, done.stderr
    evidence = json.loads((tmp_path / "correctness.evidence.json").read_text())
    assert (evidence["source"], evidence["revision"]) == ("codereview-cli", head)
    done = _bash(CODEREVIEW_RECONCILE, tmp_path, env)
    assert done.returncode == 0, done.stderr
    decision = json.loads(done.stdout)
    assert [r["agent_id"] for r in decision["reviewers"]] == ["correctness", "security"]


def _snapshot(enforced: list[str]) -> str:
    """The example snapshot, serving every repository shadow and ``enforced`` enforce."""
    document = json.loads((ROOT / "coverage_gate/examples/flags.snapshot.json").read_text())
    enforce, shadow = document["features"][0]["strategies"]
    enforce["constraints"][0]["values"] = enforced
    shadow["parameters"]["rollout"] = "100"
    return json.dumps(document)


def test_rollout_runbook_runs_as_written(tmp_path: Path) -> None:
    """The runbook's commands, in order, over an overclaiming reviewer's review of acme/shop:
    shadow keeps the Approve and leaves a receipt; the replay of the candidate flag shows its
    one verdict changing; the candidate resolves acme/shop to enforce."""
    shutil.copyfile(DATA / "pi-rpc" / "pi_b_overclaim.jsonl", tmp_path / "reviewer.jsonl")
    shutil.copyfile(DATA / "pi-rpc" / "review.diff", tmp_path / "review.diff")
    (tmp_path / "changed-files.txt").write_text("\n".join(CHANGED_FILES) + "\n")
    claims = {"schema_version": 1, "agent_id": "r", "inspected_files": list(CHANGED_FILES)}
    (tmp_path / "reviewer-output.json").write_text(json.dumps(claims))
    (tmp_path / "flags.json").write_text(_snapshot(["acme/payments"]))
    (tmp_path / "candidate-flags.json").write_text(_snapshot(["acme/payments", "acme/shop"]))
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "HEAD_SHA": REV, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    assert _bash(RECORD, tmp_path, env).returncode == 0
    outputs = []
    for command in RUNBOOK:
        done = _bash(command, tmp_path, env)
        assert done.returncode == 0, f"{command}: {done.stderr}"
        outputs.append(done.stdout)
    shadow, _, verified, replayed, resolved, _, rolled_back = outputs
    assert "(mode shadow)" in shadow
    assert verified == "1 of 1 receipt(s) verified\n"
    assert "| `acme/shop` | 1 | 1 | 1 | 0 | 0 | 0 |" in replayed
    assert "approve → comment" in replayed
    assert "enforce" in resolved
    assert "changes (0):" in rolled_back


def test_rollout_demo_command_runs_as_written(tmp_path: Path) -> None:
    """`.venv/bin/coverage-gate demo --rollout rollout`, in a checkout (``.venv`` here is this
    interpreter's environment), writes the simulated rollout and prints its report, every
    repository's readiness the one the simulation plans; a second run into the same folder is
    refused (the report would mix its files), and the HTML command it prints runs."""
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    done = _bash(ROLLOUT_DEMO, tmp_path, dict(os.environ))
    assert done.returncode == 0, done.stderr
    planned = expected_readiness()
    for repo, failing in planned.items():
        verdict = "READY to enforce" if not failing else "NOT READY to enforce"
        assert f"{repo}: {verdict}" in done.stdout, repo
    assert "1200 reviews" in done.stdout  # 200 a repository, as the documentation says
    assert "coverage-gate report --telemetry-dir rollout --format html -o report.html" in (
        done.stderr
    )
    again = _bash(ROLLOUT_DEMO, tmp_path, dict(os.environ))
    assert again.returncode == 3
    assert again.stdout == ""
    assert "--rollout rollout: not empty" in again.stderr


def test_architecture_command_runs_as_written() -> None:
    """`.venv/bin/python -m tests.architecture_report`, from the checkout, names every part and
    finds imports running one way and no cycle."""
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("no .venv in the checkout (README: Develop makes it)")
    done = _bash(ARCHITECTURE, ROOT, dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    parts = [line.split()[0] for line in done.stdout.splitlines()[1:] if line and line[0] != " "]
    assert {"contracts", "core", "adapters", "record", "rollout", "outputs"} <= set(parts)
    assert done.stdout.rstrip().endswith("imports run one way; no cycle")


def _benchmarks() -> set[str]:
    """Each test function of tests/bench/bench_*.py, as a pytest node id."""
    found: set[str] = set()
    for path in sorted((ROOT / "tests" / "bench").glob("bench_*.py")):
        tree = ast.parse(path.read_text())
        found |= {
            f"tests/bench/{path.name}::{node.name}"
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
        }
    return found


def _collected(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr
    return {line for line in done.stdout.splitlines() if "::" in line}


@pytest.mark.slow
def test_bench_command_selects_every_benchmark_and_the_default_run_none() -> None:
    """The README's benchmark command (`-m bench`) selects each test of tests/bench/bench_*.py; the
    default run, which CI makes, selects none of them, and the speed guard alone."""
    benchmarks = _benchmarks()
    assert len(benchmarks) >= 4
    assert BENCH.split(" -m pytest ", 1)[1] == "-m bench -s"
    assert _collected("-m", "bench", "-s") == benchmarks
    assert {node for node in _collected() if node.startswith("tests/bench/")} == {
        "tests/bench/test_speed_guard.py::test_no_slowdown_of_record_or_start_up",
        "tests/bench/test_speed_guard.py::test_a_planted_slowdown_fails_the_guard",
    }
