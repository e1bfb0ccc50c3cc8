"""The composite GitHub Action (action.yml), run here the way a runner runs it: its bash steps in a
workspace, with the GITHUB_* variables and the output, summary and env files of a simulated
runner (tests/_support/github_runner.py). No GitHub needed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from coverage_gate.commands.github import INPUTS
from coverage_gate.contracts.model import Mode
from coverage_gate.edges.files import dump_model
from coverage_gate.examples.demo import REVISION
from coverage_gate.outputs.github import COMMENT_MARKER
from tests._support.docs import section
from tests._support.examples import EXAMPLES, example_review
from tests._support.github_runner import (
    INPUT_DEFAULT,
    ActionRun,
    evaluate,
    load_action,
    load_yaml,
    run_action,
    run_script,
    runner_env,
)
from tests.conftest import DATA
from tests.outputs.test_sarif import check_sarif

BIN = Path(sys.executable).parent  # this environment's coverage-gate
SCHEMAS = DATA / "schemas"
CODEREVIEW_REV = "1a2b3c4d5e6f0123456789abcdef0123456789ab"  # tests/data/codereview-cli's head
PR_EVENT = {"pull_request": {"number": 7, "head": {"sha": REVISION}, "base": {"sha": "0" * 40}}}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout whose path has spaces, holding the bundled example's files."""
    folder = tmp_path / "work space" / "my repo"
    folder.mkdir(parents=True)
    for source in EXAMPLES.iterdir():
        if source.suffix in {".jsonl", ".json", ".txt", ".diff"}:
            shutil.copyfile(source, folder / source.name)
    return folder


def run(workspace: Path, repository: str = "example/notes", **inputs: str) -> ActionRun:
    given = {"install": "false", **inputs}
    return run_action(
        given,
        workspace=workspace,
        runner_temp=workspace.parent.parent / "runner temp",
        github={"repository": repository, "sha": REVISION, "event": PR_EVENT},
        env=runner_env(BIN),
    )


def reviewer(name: str, **more: str) -> dict[str, str]:
    """The inputs for one bundled reviewer, its stream recorded by the action."""
    return {
        "verdict": "approve",
        "claims": f"{name}.claims.json",
        "stream": f"{name}.pi-rpc.jsonl",
        "format": "pi-rpc",
        "diff": "review.diff",
        "changed": "changed.txt",
        **more,
    }


def test_a_lying_reviewer_under_enforce_is_downgraded_with_one_error_per_unsupported_claim(
    workspace: Path,
) -> None:
    done = run(workspace, **reviewer("lying", mode="enforce"))
    assert done.succeeded, done.log
    assert {k: done.outputs[k] for k in ("verdict", "downgraded", "would_downgrade", "mode")} == {
        "verdict": "comment",
        "downgraded": "true",
        "would_downgrade": "true",
        "mode": "enforce",
    }
    assert done.outputs["findings"] == "2"
    assert done.outputs["note"].startswith("Approve became Comment")
    assert "\n" in done.outputs["note"]  # came through the delimiter form whole
    assert [(a.command, a.properties["file"]) for a in done.annotations] == [
        ("error", "src/util/strings.py"),
        ("error", "tests/test_handlers.py"),
    ]
    assert done.annotations[0].message.startswith(
        "lying-reviewer claimed `src/util/strings.py` inspected; no successful read"
    )
    assert "**approve** → **comment**" in done.summary
    assert "`tests/test_handlers.py` | inspected | unsupported" in done.summary
    comment = Path(done.outputs["comment"]).read_text()
    assert comment.startswith(COMMENT_MARKER + "\n### coverage-gate\n")
    decision = json.loads(Path(done.outputs["decision"]).read_text())
    assert (decision["verdict_out"], decision["downgraded"]) == ("comment", True)
    check_sarif(json.loads(Path(done.outputs["sarif"]).read_text()))
    assert Path(done.outputs["decision"]).parent == workspace.parent.parent / "runner temp" / (
        "coverage-gate"
    )
    assert (done.env, done.path) == ({}, [])  # the caller's later steps see nothing new


def test_an_honest_reviewer_gets_no_annotations_and_keeps_its_approve(workspace: Path) -> None:
    done = run(workspace, **reviewer("honest", mode="enforce"))
    assert done.succeeded, done.log
    assert done.annotations == []
    assert (done.outputs["verdict"], done.outputs["downgraded"], done.outputs["findings"]) == (
        "approve",
        "false",
        "0",
    )
    assert "**approve** → **approve**" in done.summary
    assert Path(done.outputs["comment"]).read_text().startswith(COMMENT_MARKER + "\n")


def test_shadow_keeps_the_verdict_and_warns(workspace: Path) -> None:
    done = run(workspace, **reviewer("lying", mode="shadow"))
    assert done.succeeded, done.log
    assert (done.outputs["verdict"], done.outputs["downgraded"]) == ("approve", "false")
    assert done.outputs["would_downgrade"] == "true"
    assert [a.command for a in done.annotations] == ["warning", "warning"]


def test_the_mode_comes_from_the_flags_snapshot_for_the_repository(workspace: Path) -> None:
    """acme/payments is in the example snapshot's enforce list: mode auto enforces there."""
    done = run(workspace, **reviewer("lying", flags="flags.snapshot.json", repo="acme/payments"))
    assert done.succeeded, done.log
    assert (done.outputs["mode"], done.outputs["downgraded"]) == ("enforce", "true")
    decision = json.loads(Path(done.outputs["decision"]).read_text())
    assert decision["mode_source"] == "snapshot"


def test_the_policy_inputs_and_receipts_reach_reconcile(workspace: Path) -> None:
    """citation-policy, mutation-policy and receipts: the decision says the policies came from
    the command line, and the receipts folder holds the decision's receipt, which verifies."""
    receipts = workspace / "receipts"
    done = run(
        workspace,
        **reviewer("lying", mode="shadow", receipts=str(receipts)),
        **{"citation-policy": "accept", "mutation-policy": "downgrade"},
    )
    assert done.succeeded, done.log
    decision = json.loads(Path(done.outputs["decision"]).read_text())
    assert (decision["citation_policy"], decision["citation_policy_source"]) == (
        "accept",
        "cli",
    )
    assert (decision["mutation_policy"], decision["mutation_policy_source"]) == (
        "downgrade",
        "cli",
    )
    (receipt,) = receipts.glob("*.receipt.json.gz")
    verified = subprocess.run(
        [BIN / "coverage-gate", "receipts", "verify", str(receipts)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout == "1 of 1 receipt(s) verified\n"
    assert receipt.stat().st_size > 0


def test_recorded_evidence_can_be_given_instead_of_a_stream(workspace: Path) -> None:
    first = run(workspace, **reviewer("lying", mode="enforce", **{"output-dir": "first"}))
    evidence = workspace / "first" / "reviewer-1.evidence.json"
    assert first.succeeded and evidence.is_file(), first.log
    inputs = {k: v for k, v in reviewer("lying", mode="enforce").items() if k != "stream"}
    done = run(workspace, **inputs, evidence=str(evidence))
    assert done.succeeded, done.log
    assert done.outputs["downgraded"] == "true"
    assert len(done.annotations) == 2


def test_several_reviewers_are_one_decision_and_only_the_liar_is_annotated(
    workspace: Path,
) -> None:
    inputs = reviewer("honest", mode="enforce")
    inputs["claims"] = "honest.claims.json\nlying.claims.json\n"
    inputs["stream"] = "honest.pi-rpc.jsonl\nlying.pi-rpc.jsonl\n"
    done = run(workspace, **inputs)
    assert done.succeeded, done.log
    assert done.outputs["downgraded"] == "true"
    assert {a.message.split(" ", 1)[0] for a in done.annotations} == {"lying-reviewer"}
    decision = json.loads(Path(done.outputs["decision"]).read_text())
    assert [r["agent_id"] for r in decision["reviewers"]] == ["honest-reviewer", "lying-reviewer"]


def test_a_codereview_cli_run_is_reconciled_and_each_unsupported_claim_annotated(
    workspace: Path,
) -> None:
    """The codereview-cli fixture (a run folder with two reviewer tasks), read with the pinned
    diff: every unsupported claim in the decision is one annotation, and nothing else is."""
    shutil.copytree(DATA / "codereview-cli", workspace / "cr run")
    shutil.copyfile(DATA / "pi-rpc" / "review.diff", workspace / "cr.diff")
    done = run(
        workspace,
        verdict="approve",
        mode="enforce",
        changed="changed.txt",
        revision=CODEREVIEW_REV,
        diff="cr.diff",
        **{"codereview-run": "cr run"},
    )
    assert done.succeeded, done.log
    decision = json.loads(Path(done.outputs["decision"]).read_text())
    flagged = [
        (reviewer["agent_id"], file["path"])
        for reviewer in decision["reviewers"]
        for file in reviewer["files"]
        if file["status"] == "unsupported"
    ]
    assert flagged
    assert [(a.message.split(" ", 1)[0], a.properties["file"]) for a in done.annotations] == flagged
    assert done.outputs["downgraded"] == "true"


def test_a_path_with_a_comma_and_spaces_is_annotated_on_that_very_file(workspace: Path) -> None:
    """The file property is escaped so the runner does not split the path at its comma."""
    odd = "tests/test handlers, v2.py"
    (workspace / "changed.txt").write_text(
        (workspace / "changed.txt").read_text().replace("tests/test_handlers.py", odd)
    )
    claims = json.loads((workspace / "lying.claims.json").read_text())
    claims["inspected_files"] = [
        odd if path == "tests/test_handlers.py" else path for path in claims["inspected_files"]
    ]
    (workspace / "lying.claims.json").write_text(json.dumps(claims))
    done = run(workspace, **reviewer("lying", mode="enforce"))
    assert done.succeeded, done.log
    assert [a.properties["file"] for a in done.annotations] == ["src/util/strings.py", odd]
    assert "%2C" in done.steps[-1].stdout  # the comma went out escaped


def test_a_checkout_below_the_workspace_is_annotated_with_its_folder(workspace: Path) -> None:
    root = workspace / "checked out"
    root.mkdir()
    done = run(workspace, **reviewer("lying", mode="enforce", **{"repo-root": str(root)}))
    assert done.succeeded, done.log
    assert [a.properties["file"] for a in done.annotations] == [
        "checked out/src/util/strings.py",
        "checked out/tests/test_handlers.py",
    ]


def test_an_empty_scope_is_a_decision_with_no_findings(workspace: Path) -> None:
    (workspace / "changed.txt").write_text("")
    done = run(workspace, **reviewer("lying", mode="enforce"))
    assert done.succeeded, done.log
    assert done.annotations == []
    assert (done.outputs["verdict"], done.outputs["findings"]) == ("approve", "0")
    assert "nothing_to_review" in Path(done.outputs["decision"]).read_text()


def test_fail_on_downgrade_fails_the_step_after_writing_everything(workspace: Path) -> None:
    done = run(workspace, **reviewer("lying", mode="enforce", **{"fail-on-downgrade": "true"}))
    gate = done.steps[-1]
    assert gate.returncode == 1
    assert gate.outputs["downgraded"] == "true"
    assert "**approve** → **comment**" in gate.summary
    assert [a.command for a in done.annotations] == ["error", "error"]


@pytest.mark.parametrize(
    ("inputs", "message", "code"),
    [
        (
            {k: v for k, v in reviewer("lying").items() if k != "verdict"},
            "coverage-gate: input 'verdict' is required: approve, comment, request_changes",
            2,
        ),
        (
            reviewer("lying", verdict="aprove"),
            "coverage-gate: input 'verdict': 'aprove' is not one of: approve, comment, "
            "request_changes",
            2,
        ),
        (
            {k: v for k, v in reviewer("lying").items() if k != "changed"},
            "coverage-gate: input 'changed' (the changed-file list) or inputs 'base' and 'head' "
            "are required",
            2,
        ),
        (
            {k: v for k, v in reviewer("lying").items() if k != "claims"},
            "coverage-gate: input 'claims' (one reviewer output per line), 'bundle' or "
            "'codereview-run' is required",
            2,
        ),
        (
            reviewer("lying", stream="a.jsonl\nb.jsonl"),
            "coverage-gate: input 'stream' lists 2 file(s) and input 'claims' 1: give one per "
            "reviewer, in the same order",
            2,
        ),
        (
            reviewer("lying", claims="no such claims.json"),
            "coverage-gate: reconciling failed (exit 3); the step's log says why",
            3,
        ),
        (
            reviewer("lying", stream="missing stream.jsonl"),
            "coverage-gate: recording stream missing stream.jsonl failed (exit 3); the step's "
            "log says why",
            3,
        ),
    ],
)
def test_a_missing_or_wrong_input_fails_the_step_with_a_clear_error(
    workspace: Path, inputs: dict[str, str], message: str, code: int
) -> None:
    done = run(workspace, **inputs)
    gate = done.steps[-1]
    assert gate.step_id == "gate"
    assert gate.returncode == code, done.log
    assert [(a.command, a.message) for a in done.annotations] == [("error", message)]
    assert "Traceback" not in gate.stdout
    said = [
        line
        for line in gate.stdout.splitlines()
        if line.startswith("coverage-gate github: error: ")
    ]
    assert len(said) == 1, gate.stdout  # one line saying why, in the step's one ordered stream
    assert gate.outputs == {}
    assert done.outputs == {}


def test_install_false_without_coverage_gate_on_path_fails_the_first_step(
    workspace: Path, tmp_path: Path
) -> None:
    env = runner_env()
    env["PATH"] = "/usr/bin:/bin"
    done = run_action(
        {"install": "false", **reviewer("lying")},
        workspace=workspace,
        runner_temp=tmp_path / "rt",
        github={"repository": "example/notes", "sha": REVISION},
        env=env,
    )
    (install,) = done.steps
    assert install.returncode == 1
    assert [a.message for a in done.annotations] == [
        "install is false and coverage-gate is not on PATH"
    ]


@pytest.mark.slow
def test_the_action_installs_itself_and_runs_end_to_end(workspace: Path, tmp_path: Path) -> None:
    """With the default install, the first step builds coverage-gate from the action's folder
    into a fresh virtual environment, and the second runs it."""
    done = run_action(
        reviewer("lying", mode="enforce"),
        workspace=workspace,
        runner_temp=tmp_path / "runner temp",
        github={"repository": "example/notes", "sha": REVISION, "event": PR_EVENT},
        env=runner_env(),
    )
    assert done.succeeded, done.log
    assert done.steps[0].outputs["bin"] == str(
        tmp_path / "runner temp" / "coverage-gate-venv" / "bin" / "coverage-gate"
    )
    assert done.outputs["downgraded"] == "true"
    assert len(done.annotations) == 2


# --- the metadata itself ------------------------------------------------------------------------


def action_schema() -> dict[str, Any]:
    schema = json.loads((SCHEMAS / "github-action.json").read_text())
    assert isinstance(schema, dict)
    return schema


def test_action_yml_is_valid_action_metadata() -> None:
    schema = action_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.Draft7Validator(schema).validate(load_action())


def test_the_metadata_check_refuses_a_broken_action() -> None:
    """The schema check has teeth: an unknown key, or a composite step without a shell."""
    validator = jsonschema.Draft7Validator(action_schema())
    action = load_action()
    assert not validator.is_valid({**action, "inputz": {}})
    broken = json.loads(json.dumps(action))
    del broken["runs"]["steps"][1]["shell"]
    assert not validator.is_valid(broken)


def test_every_input_reaches_the_command_under_its_input_variable() -> None:
    """action.yml's inputs, the gate step's INPUT_* variables and the command's input table name
    the same inputs (install and python belong to the install step)."""
    action = load_action()
    declared = set(action["inputs"]) - {"install", "python"}
    gate = next(step for step in action["runs"]["steps"] if step.get("id") == "gate")
    passed = {name: value for name, value in gate["env"].items() if name.startswith("INPUT_")}
    assert {spec.name for spec in INPUTS} == declared
    assert passed == {spec.variable: f"${{{{ inputs.{spec.name} }}}}" for spec in INPUTS}


def test_every_output_is_one_the_command_writes(workspace: Path) -> None:
    done = run(workspace, **reviewer("lying", mode="enforce"))
    assert set(load_action()["outputs"]) == set(done.steps[-1].outputs)
    assert all(done.outputs.values())


def test_what_a_reviewer_wrote_cannot_issue_workflow_commands(workspace: Path) -> None:
    """The log repeats the reviewer's claims; a claimed path that breaks a line to start a
    workflow command is printed while commands are stopped, so the runner obeys none of it."""
    claims = json.loads((workspace / "lying.claims.json").read_text())
    claims["inspected_files"].append("x\n::warning file=README.md::injected\n::add-mask::x")
    claims["agent_id"] = "lying-reviewer\n::warning::injected on stderr too"
    (workspace / "lying.claims.json").write_text(json.dumps(claims))
    # evidence recorded for agent "lying": reconcile's warning on stderr names both agents
    (evidence,) = [r.evidence for r in example_review("lying", Mode.ENFORCE).reviewers]
    assert evidence is not None
    (workspace / "lying.evidence.json").write_text(dump_model(evidence))
    inputs = {k: v for k, v in reviewer("lying", mode="enforce").items() if k != "stream"}
    done = run(workspace, **inputs, evidence="lying.evidence.json")
    assert done.succeeded, done.log
    assert "::warning file=README.md::injected" in done.steps[-1].stdout
    assert "::warning::injected on stderr too were checked against evidence" in (
        done.steps[-1].stdout + done.steps[-1].stderr
    )
    assert [(a.command, a.properties.get("file")) for a in done.annotations] == [
        ("error", "src/util/strings.py"),
        ("error", "tests/test_handlers.py"),
    ]
    assert not [c for c in done.commands if c.command == "add-mask"]


# --- the README's example workflow --------------------------------------------------------------

#: A stand-in for ``gh api``: lists the comments in $FAKE_COMMENTS (applying ``--jq`` with jq when
#: $FAKE_JQ says so, else checking it is the README's filter and applying that in Python) and
#: logs each edit or new comment to $FAKE_LOG.
FAKE_GH = r"""#!{python}
import json, os, subprocess, sys
args = sys.argv[1:]
assert args[0] == "api", args
method = args[args.index("--method") + 1] if "--method" in args else "GET"
endpoint = next(a for a in args[1:] if a.startswith("repos/"))
log = open(os.environ["FAKE_LOG"], "a")
if method == "GET":
    assert "--paginate" in args
    comments = json.load(open(os.environ["FAKE_COMMENTS"]))
    jq = args[args.index("--jq") + 1]
    if os.environ.get("FAKE_JQ") == "jq":
        out = subprocess.run(["jq", "-r", jq], input=json.dumps(comments), text=True,
                             capture_output=True, check=True).stdout
    else:
        assert jq == {filter!r}, jq
        out = "".join(f"{{c['id']}}\n" for c in comments if c["user"]["login"] == os.environ["AUTHOR"]
                      and c["body"].startswith("<!-- coverage-gate -->"))
    sys.stdout.write(out)
else:
    field = args[args.index("-F") + 1]
    assert field.startswith("body=@"), field
    body = open(field[len("body=@"):]).read()
    log.write(json.dumps({{"method": method, "endpoint": endpoint, "body": body}}) + "\n")
    print(json.dumps({{"id": 1}}))
"""


def readme_workflow() -> dict[str, Any]:
    (block,) = re.findall(r"```yaml\n(.*?)```", section("GitHub Actions"), re.DOTALL)
    return load_yaml(block)


def test_the_readme_workflow_is_a_valid_workflow_using_this_action() -> None:
    schema = json.loads((SCHEMAS / "github-workflow.json").read_text())
    workflow = readme_workflow()
    jsonschema.Draft7Validator(schema).validate(workflow)
    steps = workflow["jobs"]["review"]["steps"]
    gate = next(step for step in steps if step.get("id") == "gate")
    assert set(gate["with"]) <= set(load_action()["inputs"])
    # the action of a checkout of coverage-gate, installed from that same checkout
    (checkout,) = [s for s in steps if s.get("with", {}).get("path") == ".coverage-gate"]
    assert checkout["uses"].startswith("actions/checkout@")
    assert gate["uses"] == "./.coverage-gate"
    assert "pip install ./.coverage-gate" in [s.get("run") for s in steps]
    assert "coverage-gate run " in next(s for s in steps if s.get("id") == "review")["run"]


def _comment_step() -> dict[str, Any]:
    steps = readme_workflow()["jobs"]["review"]["steps"]
    step = next(s for s in steps if str(s.get("name", "")).startswith("Comment"))
    assert isinstance(step, dict)
    return step


@pytest.mark.parametrize(
    ("comments", "expected"),
    [
        ([], ("POST", "repos/acme/shop/issues/7/comments")),
        (
            [
                {"id": 11, "user": {"login": "alice"}, "body": "looks good"},
                {
                    "id": 12,
                    "user": {"login": "github-actions[bot]"},
                    "body": "<!-- coverage-gate -->\nold",
                },
                {
                    "id": 13,
                    "user": {"login": "github-actions[bot]"},
                    "body": "<!-- coverage-gate -->\nolder",
                },
            ],
            ("PATCH", "repos/acme/shop/issues/comments/12"),
        ),
        (
            [{"id": 21, "user": {"login": "mallory"}, "body": "<!-- coverage-gate -->\nspoof"}],
            ("POST", "repos/acme/shop/issues/7/comments"),
        ),
    ],
    ids=["first push adds the comment", "a later push edits it", "another's marker is left alone"],
)
@pytest.mark.parametrize("jq", ["jq", "python"])
def test_the_readme_comment_step_edits_its_one_comment_or_adds_it(
    tmp_path: Path, comments: list[dict[str, Any]], expected: tuple[str, str], jq: str
) -> None:
    """gh's --jq filter is run by jq itself where jq is installed (gh embeds its own)."""
    if jq == "jq" and shutil.which("jq") is None:
        pytest.skip("jq is not installed: the filter is checked by the Python stand-in only")
    step = _comment_step()
    fake = tmp_path / "bin"
    fake.mkdir()
    jq_filter = re.search(r"--jq \\\n\s*'(.*?)'\)", step["run"], re.DOTALL)
    assert jq_filter is not None
    (fake / "gh").write_text(FAKE_GH.format(python=sys.executable, filter=jq_filter[1]))
    (fake / "gh").chmod(0o755)
    body = tmp_path / "runner temp" / "comment.md"
    body.parent.mkdir()
    body.write_text(f"{COMMENT_MARKER}\n### coverage-gate\nnew\n")
    (tmp_path / "comments.json").write_text(json.dumps(comments))
    contexts = {
        "github": {"token": "t", "event": {"pull_request": {"number": 7}}},
        "steps": {"gate": {"outputs": {"comment": str(body)}}},
    }
    env = {
        **runner_env(fake),
        **{key: evaluate(str(value), contexts) for key, value in step["env"].items()},
        "GITHUB_REPOSITORY": "acme/shop",
        "FAKE_COMMENTS": str(tmp_path / "comments.json"),
        "FAKE_LOG": str(tmp_path / "gh.log"),
        "FAKE_JQ": jq,
    }
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    done = run_script(script, env, timeout=60)
    assert done.returncode == 0, done.stderr
    (call,) = [json.loads(line) for line in (tmp_path / "gh.log").read_text().splitlines()]
    assert (call["method"], call["endpoint"]) == expected
    assert call["body"] == body.read_text()


def test_an_input_default_that_reads_another_input_is_refused_as_the_runner_does() -> None:
    """The simulated runner holds action.yml to the contexts GitHub allows in each place."""
    with pytest.raises(AssertionError, match="context not available"):
        evaluate("${{ inputs.repo }}", {"inputs": {"repo": "a/b"}}, INPUT_DEFAULT)
    assert evaluate("${{ runner.temp }}/x", {"runner": {"temp": "/t"}}, INPUT_DEFAULT) == "/t/x"
