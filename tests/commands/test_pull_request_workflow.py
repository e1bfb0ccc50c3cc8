"""The documented GitHub workflow (docs: "GitHub Actions") run on a real pull request whose base
branch moved on after the branch point: the scope and the pinned diff are the pull request's own
change (from the merge base, ``BASE...HEAD``), and the checkout is its head, so an honest reviewer
that reads the pull request's one file gets it verified, with no file the pull request never
touched in scope.

Each step is the workflow's own: ``actions/checkout`` as GitHub runs it for a ``pull_request``
event (the merge commit ``refs/pull/N/merge`` unless ``ref`` names another, ``fetch-depth``
commits of history), the review step's shell as written (its reviewer, ``./reviewer.sh``, is an
honest pi reviewer whose stream is a real capture, its calls' output what they print in the
checkout), and the action (action.yml, through tests/_support/github_runner.py) with the
workflow's inputs (``mode: shadow``, which the workflow offers in place of a flag snapshot)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._support.docs import section
from tests._support.github_runner import (
    evaluate,
    load_yaml,
    parse_file_commands,
    run_action,
    run_script,
    runner_env,
)
from tests.conftest import DATA, REVISION_FILES, git_in
from tests.conftest import GIT_ENV as COMMITTER_ENV

BIN = Path(sys.executable).parent  # this environment's coverage-gate
CAPTURE = DATA / "pi-rpc" / "content_pi_bash_only.jsonl"
PR_FILE = "src/util/strings.py"
OTHER_FILE = "README.md"  # the base branch's own later change
GIT_ENV = {
    **COMMITTER_ENV,
    # the workspace's fetches by object id, as GitHub's server serves them
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "uploadpack.allowAnySHA1InWant",
    "GIT_CONFIG_VALUE_0": "true",
}

#: The honest reviewer: the capture's `git diff` and `cat src/util/strings.py` calls (its other
#: calls dropped), each output replaced by what the command prints in the checkout, and its
#: claims and verdict left where the workflow reads them.
REVIEWER = r"""#!{python}
import json, os, subprocess, sys

CAPTURE, PR_FILE = {capture!r}, {pr_file!r}
KEPT = {{"git diff", "cat " + PR_FILE}}
diff_command = 'git diff "$BASE_SHA...$HEAD_SHA"'
printed = {{
    "git diff": subprocess.run(
        ["sh", "-c", diff_command], capture_output=True, text=True, check=True
    ).stdout,
    "cat " + PR_FILE: open(PR_FILE, encoding="utf-8").read(),
}}
lines = [json.loads(line) for line in open(CAPTURE, encoding="utf-8")]
commands = {{
    line["toolCallId"]: line["args"]["command"]
    for line in lines
    if line.get("type") == "tool_execution_start"
}}
dropped = {{call for call, command in commands.items() if command not in KEPT}}
captured = {{}}
for line in lines:
    if line.get("type") == "tool_execution_end" and line["toolCallId"] not in dropped:
        captured[line["result"]["content"][0]["text"]] = printed[commands[line["toolCallId"]]]


def names_dropped(value):
    if isinstance(value, dict):
        return value.get("toolCallId") in dropped or value.get("id") in dropped or any(
            names_dropped(item) for item in value.values()
        )
    if isinstance(value, list):
        return any(names_dropped(item) for item in value)
    return False


def replaced(value):
    if isinstance(value, dict):
        return {{key: replaced(item) for key, item in value.items()}}
    if isinstance(value, list):
        return [replaced(item) for item in value if not names_dropped(item)]
    if value == "git diff":
        return diff_command
    return captured.get(value, value) if isinstance(value, str) else value


turn = []
for line in lines:
    if line.get("type") == "turn_start" and turn:
        if not names_dropped(turn):
            for kept in turn:
                print(json.dumps(replaced(kept)))
        turn = []
    turn.append(line)
for kept in turn:
    print(json.dumps(replaced(kept) if kept.get("type") == "agent_end" else kept))
claims = {{"schema_version": 1, "agent_id": "reviewer", "inspected_files": [PR_FILE]}}
json.dump(claims, open("reviewer-output.json", "w"))
open("verdict.txt", "w").write("approve\n")
"""


def _git(repo: Path, *args: str) -> str:
    return git_in(repo, *args, env=GIT_ENV)


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def pull_request(origin: Path) -> dict[str, Any]:
    """The origin's pull request 7: the branch changes src/util/strings.py; after the branch
    point, main changes README.md; refs/pull/7/merge is the merge of the two, as GitHub makes
    it. The ``pull_request`` event's payload."""
    shutil.copytree(REVISION_FILES, origin)
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "apply", "-R", f"--include={PR_FILE}", str(DATA / "pi-rpc" / "review.diff"))
    _commit(origin, "the branch point")
    _git(origin, "checkout", "-q", "-b", "feature")
    shutil.copyfile(REVISION_FILES / PR_FILE, origin / PR_FILE)
    head = _commit(origin, "the pull request's change")
    _git(origin, "checkout", "-q", "main")
    with (origin / OTHER_FILE).open("a") as readme:
        readme.write("\n## Changes on main\n\nThe base branch moved on after the branch point.\n")
    base = _commit(origin, "main moves on")
    _git(origin, "checkout", "-q", "--detach")
    _git(origin, "merge", "-q", "--no-ff", "-m", "Merge into main", head)
    _git(origin, "update-ref", "refs/pull/7/merge", "HEAD")
    _git(origin, "update-ref", "refs/pull/7/head", head)
    _git(origin, "checkout", "-q", "main")
    return {"pull_request": {"number": 7, "head": {"sha": head}, "base": {"sha": base}}}


def workflow_steps() -> list[dict[str, Any]]:
    (block,) = re.findall(r"```yaml\n(.*?)```", section("GitHub Actions"), re.DOTALL)
    steps = load_yaml(block)["jobs"]["review"]["steps"]
    assert isinstance(steps, list)
    return steps


def check_out(step: dict[str, Any], origin: Path, workspace: Path, contexts: dict[str, Any]) -> str:
    """``actions/checkout`` as it runs for a ``pull_request`` event: ``ref`` (default: the
    merge commit, ``refs/pull/N/merge``) fetched with ``fetch-depth`` commits of history (0:
    all of it, every branch and tag), checked out detached. The commit checked out."""
    given = {key: evaluate(str(value), contexts) for key, value in step.get("with", {}).items()}
    number = contexts["github"]["event"]["pull_request"]["number"]
    ref = given.get("ref") or f"refs/pull/{number}/merge"
    depth = int(given.get("fetch-depth") or 1)
    workspace.mkdir(parents=True)
    _git(workspace, "init", "-q")
    _git(workspace, "remote", "add", "origin", origin.as_uri())
    shallow = [] if depth == 0 else [f"--depth={depth}"]
    if depth == 0:
        _git(workspace, "fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*")
    _git(workspace, "fetch", "-q", *shallow, "origin", ref)
    _git(workspace, "checkout", "-q", "--detach", "FETCH_HEAD")
    return _git(workspace, "rev-parse", "HEAD")


def run_step(step: dict[str, Any], workspace: Path, contexts: dict[str, Any]) -> dict[str, str]:
    """A ``run`` step as the runner runs it (bash -eo pipefail, its env evaluated, a fresh
    GITHUB_OUTPUT): the outputs it set."""
    output = workspace.parent / f"{step['id']}.output"
    output.write_text("")
    script = workspace.parent / f"{step['id']}.sh"
    script.write_text(evaluate(step["run"], contexts))
    env = {
        **runner_env(BIN),
        **GIT_ENV,
        **{key: evaluate(str(value), contexts) for key, value in step.get("env", {}).items()},
        "GITHUB_OUTPUT": str(output),
    }
    done = run_script(script, env, cwd=workspace, timeout=300)
    assert done.returncode == 0, done.stderr
    return parse_file_commands(output.read_text())


@pytest.fixture
def reviewed(tmp_path: Path) -> dict[str, Any]:
    """The workflow run on pull request 7, up to and including the gate: what it left."""
    event = pull_request(tmp_path / "origin")
    workspace = tmp_path / "runner" / "work" / "shop"
    contexts: dict[str, Any] = {
        "github": {"event": event, "repository": "acme/shop", "workspace": str(workspace)},
        "steps": {},
        "vars": {},
    }
    steps = workflow_steps()
    checkout = steps[0]
    assert checkout["uses"].startswith("actions/checkout@") and "path" not in checkout["with"]
    checked_out = check_out(checkout, tmp_path / "origin", workspace, contexts)
    reviewer = workspace / "reviewer.sh"
    reviewer.write_text(
        REVIEWER.format(python=sys.executable, capture=str(CAPTURE), pr_file=PR_FILE)
    )
    reviewer.chmod(0o755)
    review = next(step for step in steps if step.get("id") == "review")
    contexts["steps"]["review"] = {"outputs": run_step(review, workspace, contexts)}
    gate = next(step for step in steps if step.get("id") == "gate")
    inputs = {key: evaluate(str(value), contexts) for key, value in gate["with"].items()}
    inputs.pop("flags")  # the workflow's alternative to a flag snapshot: mode shadow
    ran = run_action(
        {**inputs, "mode": "shadow"},
        workspace=workspace,
        runner_temp=tmp_path / "runner" / "temp",
        github={"repository": "acme/shop", "sha": checked_out, "event": event},
        env={**runner_env(BIN), **GIT_ENV},
    )
    assert ran.succeeded, ran.log
    return {
        "event": event,
        "checked_out": checked_out,
        "diff": (workspace / "review.diff").read_text(),
        "evidence": json.loads((workspace / "reviewer.evidence.json").read_text()),
        "decision": json.loads(Path(ran.outputs["decision"]).read_text()),
    }


def test_the_documented_workflow_reviews_the_pull_requests_own_change(
    reviewed: dict[str, Any],
) -> None:
    """The checkout is the pull request's head, not the merge commit GitHub checks out by
    default; the pinned diff and the scope are its change alone, from the merge base; and the
    honest read of its one file is ``verified``, with no ``missing`` file it never touched."""
    head = reviewed["event"]["pull_request"]["head"]["sha"]
    assert reviewed["checked_out"] == head
    assert reviewed["evidence"]["checkout"] == {"head": head, "relation": "revision"}
    assert re.findall(r"^diff --git a/(\S+) ", reviewed["diff"], re.MULTILINE) == [PR_FILE]
    assert "Changes on main" not in reviewed["diff"]
    decision = reviewed["decision"]
    assert decision["revision"] == head
    (reviewer,) = decision["reviewers"]
    assert {file["path"]: file["status"] for file in reviewer["files"]} == {PR_FILE: "verified"}
