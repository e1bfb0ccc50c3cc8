"""End to end with the real review clients: what a reviewer's calls returned, checked against
the revision (DESIGN §6 rules 15-18; README "What a read returned: content checks").

The clients, the scripted model and the workspaces are ``test_real_clients.py``'s: a fresh
repository per test (``realclients/make_repo.sh``: six changed files, uncommitted), a fresh HOME
and TMPDIR, the mock model playing one of ``realclients/scenarios/e2e_content_*.json``. The
revision is the tree written from the working tree before the reviewer starts, so a reviewer
that changes a file changes the working tree only: what it reads back is not the revision.

* Edit, then read: Claude Code (``Edit``), OpenCode (``edit``) and Codex (``apply_patch`` through
  its shell) change src/api/models.py and only then read it, with no earlier read and no
  ``git diff``. That read returned the reviewer's own text: a ``mismatch``, so the claim is
  unsupported (``content_mismatch``) and the Approve becomes a Comment; the other five files,
  read honestly, are verified. Codex's ``apply_patch`` call ends with its ``FileChange`` record.
* Shell only: Claude Code offered nothing but ``Bash`` (``git diff`` and ``cat``) is credited by
  what its commands printed, and keeps its Approve.
* A large diff (``realclients/make_large_repo.sh``: twelve changed modules, about 70 KB of
  ``git diff``), one ``git diff`` and a claim of all twelve: each client cuts that output before
  the model sees it, and only the files whose hunks reached the model are verified, at the depth
  they were seen.
* A reviewer that rewrites a file and cites its own new line: the content check and the citation
  replay both fail it.
* Each successful change is a mutation (DESIGN §6 rule 20): the evidence's ``mutations`` names
  the file and the writing tool, the decision carries it for the reviewer and says it in its
  note, and ``--mutation-policy downgrade`` makes it a reason of its own (``reviewer_mutated``).
  Besides the clients above: Gemini CLI (``replace``; its stream carries no read's text, so its
  reads stay unchecked), Qwen Code (``edit``, after the read it demands first) and Copilot CLI
  (``edit``).

The clients come from ``bash .ci/setup-clients.sh``; each test runs once with the newest and
once with the older release of its client (``test_real_clients.py``'s ``release``). Without them
these tests skip, unless ``CG_REQUIRE_INTEGRATION=1``, when they fail.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from coverage_gate.edges.content import snapshot_tree
from tests.integration import test_real_clients as real_clients
from tests.integration.test_real_clients import (
    CHANGED,
    KIT,
    SHELL_PROMPT,
    Clients,
    GeminiQwen,
    Json,
    Processes,
    Workspace,
    assert_caught,
    assert_honest,
    cg,
    claims_from_text,
    claude_env,
    codex_daemon_dir_removed,
    codex_home,
    drive_pi_under_gate,
    file_evidence,
    pi_final_answer,
    receipts_of,
    reconcile,
    record,
    run_copilot,
    run_gemini,
    run_opencode,
    run_qwen,
    run_under_gate,
    start_mock,
    statuses,
    with_port,
    with_status,
)

pytestmark = pytest.mark.slow

# test_real_clients.py's fixtures: the installed clients at each release, the process registry,
# the workspace; and its parametrization: each test of a client once per release
pytest_generate_tests = real_clients.pytest_generate_tests
release = real_clients.release
clients = real_clients.clients
opencode = real_clients.opencode
copilot = real_clients.copilot
gemini_qwen = real_clients.gemini_qwen
procs = real_clients.procs
workspace = real_clients.workspace

MODELS = "src/api/models.py"
PIPE: dict[str, int] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}


# --- running the clients -----------------------------------------------------------------------


def run_claude_under_gate(
    procs: Processes, clients: Clients, ws: Workspace, scenario: str, *options: str
) -> tuple[Json, Json]:
    """Claude Code (``-p --output-format stream-json``, ``options`` naming its tools) under
    `coverage-gate run --format claude-code`; returns (evidence, its final answer)."""
    port = start_mock(procs, ws, scenario)
    command = [
        str(clients.claude), "-p", SHELL_PROMPT, "--output-format", "stream-json", "--verbose",
        *options,
    ]  # fmt: skip
    evidence, stream = run_under_gate(
        procs, ws, "claude-code", command, claude_env(ws, port), name="claude"
    )
    result = json.loads(stream.read_bytes().splitlines()[-1])
    assert result["type"] == "result", result
    return evidence, json.loads(result["result"])


def run_codex_recorded(
    procs: Processes, clients: Clients, ws: Workspace, scenario: str, *options: str
) -> tuple[Json, Path, Json]:
    """Codex ``exec --json`` with ``options``; its session rollout then given to `coverage-gate
    record` (written to ``codex.rollout.evidence.json``). Returns (evidence, rollout, its final
    answer)."""
    port = start_mock(procs, ws, scenario)
    home = codex_home(ws, port)
    env = ws.env(CODEX_HOME=str(home), MOCK_API_KEY="dummy")
    stream, stderr = ws.root / "codex.exec.jsonl", ws.root / "codex.stderr"
    with codex_daemon_dir_removed(), stream.open("wb") as out, stderr.open("wb") as err:
        done = procs.run(
            [str(clients.codex), "exec", "--json", *options, SHELL_PROMPT],
            cwd=ws.repo, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
        )  # fmt: skip
    assert done.returncode == 0, stderr.read_text()
    (rollout,) = home.glob("sessions/*/*/*/rollout-*.jsonl")
    evidence = record(procs, ws, "codex-rollout", rollout, ws.root / "codex.rollout.evidence.json")
    messages = [
        event["item"]["text"]
        for event in map(json.loads, stream.read_bytes().splitlines())
        if event.get("type") == "item.completed" and event["item"].get("type") == "agent_message"
    ]
    assert messages, "codex gave no final answer"
    return evidence, rollout, json.loads(messages[-1])


def run_pi_builtin(
    procs: Processes, clients: Clients, ws: Workspace, scenario: str, tools: str
) -> tuple[Json, list[Json]]:
    """pi with its own built-in ``tools`` (no cr_* extension) under `coverage-gate run --format
    pi-rpc`, driven as test_real_clients.py drives it (its prompt words are for the cr_* tools;
    the scripted model does not read them). Returns (evidence of run, pi's RPC events)."""
    port = start_mock(procs, ws, scenario)
    agentdir = ws.root / "agentdir"
    agentdir.mkdir()
    (agentdir / "models.json").write_text(with_port(KIT / "models.json", port))
    env = ws.env(
        PI_CODING_AGENT_DIR=str(agentdir), PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1",
        PI_TELEMETRY="0",
    )  # fmt: skip
    pi = [
        str(clients.pi), "--mode", "rpc", "--provider", "mock", "--model", "mock-model",
        "--no-session", "--tools", tools, "--no-extensions", "--no-skills",
        "--no-prompt-templates", "--no-themes", "--no-context-files",
        "--system-prompt", "You are a code reviewer.",
    ]  # fmt: skip
    return drive_pi_under_gate(procs, ws, pi, env, ws.root / "pi.run.evidence.json")


# --- what the decisions say --------------------------------------------------------------------


def decided_files(decision: Json) -> dict[str, Json]:
    (reviewer,) = decision["reviewers"]
    return {entry["path"]: entry for entry in reviewer["files"]}


def lines_at_revision(ws: Workspace, path: str) -> list[str]:
    """``path``'s lines in the revision's tree (git objects, not the working tree)."""
    return subprocess.run(
        ["git", "-C", str(ws.repo), "cat-file", "-p", f"{ws.revision}:{path}"],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()  # fmt: skip


def assert_the_edit_stayed_in_the_working_tree(ws: Workspace, new_line: str) -> None:
    """The reviewer's edit changed the working tree; the revision (a tree written before it
    started) still holds the line under review."""
    assert new_line in (ws.repo / MODELS).read_text().splitlines()
    assert "MAX_BODY = 10_000" in lines_at_revision(ws, MODELS)
    assert new_line not in lines_at_revision(ws, MODELS)


def reconcile_with(
    procs: Processes, ws: Workspace, claims: Json, evidence: Path, mode: str, *options: str
) -> Json:
    """test_real_clients.py's ``reconcile`` (with a receipt, every receipt of the workspace then
    verified offline), with ``options`` added to `coverage-gate reconcile`."""
    claims_file = evidence.with_suffix(".claims.json")
    claims_file.write_text(json.dumps(claims))
    done = cg(
        procs, "reconcile", "--repo", "example/notes-service", "--revision", ws.revision,
        "--verdict", "approve", "--claims", claims_file, "--evidence", evidence,
        "--changed", ws.changed, "--mode", mode, "--repo-root", ws.repo, "--format", "json",
        "--receipt", receipts_of(ws), *options,
    )  # fmt: skip
    decision: Json = json.loads(done.stdout)
    verified = cg(procs, "receipts", "verify", receipts_of(ws)).stdout.decode()
    count = len(list(receipts_of(ws).glob("*.receipt.json.gz")))
    assert verified == f"{count} of {count} receipt(s) verified\n"
    return decision


def assert_the_edit_is_a_mutation(evidence: Json, decision: Json, tool: str) -> None:
    """The evidence lists the one successful change, models.py by ``tool`` (the stream line of
    its call), and the decision carries it for the reviewer and says it in its note."""
    (mutation,) = evidence["mutations"]
    assert (mutation["tool"], mutation["path"]) == (tool, MODELS), mutation
    assert isinstance(mutation["line"], int), mutation
    assert evidence["mutations_dropped"] == 0
    (reviewer,) = decision["reviewers"]
    assert reviewer["mutations"] == [mutation]
    assert (
        f"- the reviewer `reviewer` changed `{MODELS}` ({tool}, line {mutation['line']}) "
        "during the review"
    ) in decision["note"], decision["note"]


def assert_the_mutation_policy_downgrade_counts_it(
    procs: Processes, ws: Workspace, claims: Json, evidence: Path
) -> None:
    """The same evidence reconciled with ``--mutation-policy downgrade``: the change is a reason
    of its own (``reviewer_mutated``), for the reviewer and the decision; Approve → Comment."""
    decision = reconcile_with(
        procs, ws, claims, evidence, "enforce", "--mutation-policy", "downgrade"
    )
    assert decision["mutation_policy"] == "downgrade"
    assert decision["mutations_would_downgrade"]
    assert "reviewer_mutated" in decision["reasons"]
    (reviewer,) = decision["reviewers"]
    assert "reviewer_mutated" in reviewer["reasons"]
    assert decision["verdict_out"] == "comment"
    assert decision["downgraded"]


def assert_own_edit_read_back_is_caught(
    procs: Processes, ws: Workspace, claims: Json, path: Path, evidence: Json, tool: str
) -> Json:
    """models.py's one read returned the reviewer's edited text: a mismatch, no evidence, the
    claim unsupported for content_mismatch and said so; the five other files verified by reads
    that matched the revision; enforce turns the Approve into a Comment. The edit (by ``tool``)
    is the evidence's one mutation, named in the decision, and under ``--mutation-policy
    downgrade`` a reason of its own. Returns the decision (enforce, the default mutation
    policy: accept) of the evidence at ``path``."""
    decision = reconcile(procs, ws, claims, path, "enforce")
    models = file_evidence(evidence)[MODELS]
    assert models["content"]["mismatched"] == 1
    assert models["content"]["matched"] == 0
    assert models["content"]["credited"] == 0
    assert models["lines_seen"] == []
    assert "content_mismatch" in {issue["kind"] for issue in evidence["issues"]}
    for other in set(CHANGED) - {MODELS}:
        assert file_evidence(evidence)[other]["content"]["matched"] == 1, other
    assert_caught(decision, {MODELS})
    files = decided_files(decision)
    assert files[MODELS]["unsupported_reason"] == "content_mismatch"
    assert files[MODELS]["content"] == "mismatch"
    for other in set(CHANGED) - {MODELS}:
        assert files[other]["content"] == "matched", other
    assert (
        f"- `{MODELS}`: claimed inspected by `reviewer`; what the read of {MODELS} returned is "
        f"not {MODELS} at {ws.revision[:12]} (the reviewer's own edit, an older version or "
        "another file)"
    ) in decision["note"]
    assert_the_edit_is_a_mutation(evidence, decision, tool)
    assert "reviewer_mutated" not in decision["reasons"]  # accepted: recorded, not held against
    assert_the_mutation_policy_downgrade_counts_it(procs, ws, claims, path)
    return decision


# --- 1. edit, then read: the read returned the reviewer's own text ----------------------------


def test_claude_code_edit_then_first_read_is_a_content_mismatch(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Claude Code, Edit allowed, under `run`: it changes ``MAX_BODY = 10_000`` to ``20_000``
    in models.py without reading it first (Claude Code 2.1.328 allows that), then Reads it: the
    Read returned the edited text. The Edit's ``tool_use_result`` carries the whole file as it
    was (``originalFile``: the revision's text), but that is client metadata the model was not
    given and counts for nothing. models.py is unsupported (content_mismatch); the other five
    Reads matched the revision and are verified; Approve → Comment."""
    evidence, claims = run_claude_under_gate(
        procs, clients, workspace, "e2e_content_claude_edit_then_read",
        "--allowedTools", "Read,Bash,Edit,Write",
    )  # fmt: skip
    assert evidence["stream_complete"]
    stream = (workspace.root / "claude.jsonl").read_text()
    assert '"originalFile"' in stream  # the revision's text, beside the Edit's result
    assert_the_edit_stayed_in_the_working_tree(workspace, "MAX_BODY = 20_000")
    path = workspace.root / "claude.run.evidence.json"
    assert_own_edit_read_back_is_caught(procs, workspace, claims, path, evidence, "Edit")


def test_opencode_edit_then_first_read_is_a_content_mismatch(
    opencode: Path, procs: Processes, workspace: Workspace
) -> None:
    """OpenCode with its edit permission allowed, under `run`: ``edit`` of models.py with no
    read before it, then ``read``: the read's ``<content>`` holds the edited line. models.py is
    unsupported (content_mismatch), the five other reads verified; Approve → Comment."""
    evidence, claims = run_opencode(
        procs, opencode, workspace, "e2e_content_opencode_edit_then_read", allow_edit=True
    )
    assert evidence["stream_complete"]
    assert_the_edit_stayed_in_the_working_tree(workspace, "MAX_BODY = 20_000")
    path = workspace.root / "opencode.run.evidence.json"
    assert_own_edit_read_back_is_caught(procs, workspace, claims, path, evidence, "edit")


def test_codex_apply_patch_then_first_cat_is_a_content_mismatch(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Codex with ``--sandbox workspace-write``: ``apply_patch`` through its shell (a heredoc)
    changes models.py, then ``cat`` of it (a read its harness parsed) returns the patched text:
    a mismatch. From the rollout, models.py should be unsupported (content_mismatch) and the
    five other ``cat``s verified, Approve → Comment.

    Codex 0.169.0 records the heredoc as a ``function_call`` ``exec_command`` whose completion
    is an ``item_completed`` ``FileChange`` (``changes``, ``stdout`` "Success. Updated the
    following files:\nM src/api/models.py\n"), followed by its ``function_call_output``; no
    ``CommandExecution`` ever comes for it: the ``FileChange`` is its end, so the rollout is
    complete and the claim's absence of evidence holds."""
    evidence, _rollout, answer = run_codex_recorded(
        procs, clients, workspace, "e2e_content_codex_apply_patch",
        "--sandbox", "workspace-write",
    )  # fmt: skip
    assert_the_edit_stayed_in_the_working_tree(workspace, "MAX_BODY = 20_000")
    assert file_evidence(evidence)[MODELS]["content"]["mismatched"] == 1
    assert "missing_end" not in {issue["kind"] for issue in evidence["issues"]}
    assert evidence["stream_complete"]
    claims = claims_from_text(json.dumps(answer))
    path = workspace.root / "codex.rollout.evidence.json"
    assert_own_edit_read_back_is_caught(procs, workspace, claims, path, evidence, "exec_command")


# --- 2. shell only: credited by what the commands printed ---------------------------------------


def test_claude_code_shell_only_review_is_credited_by_content(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Claude Code offered only Bash (``--tools Bash``), under `run`: one ``git diff`` and a
    ``cat`` of each changed file. Bash is no read tool, so nothing is a read; every file is
    credited by the lines its ``cat`` printed (and its hunks of the pinned diff by the
    ``git diff``): each verified ``via_content``, every hunk seen, and the Approve stands."""
    evidence, answer = run_claude_under_gate(
        procs, clients, workspace, "e2e_content_claude_shell_only",
        "--tools", "Bash", "--allowedTools", "Bash",
    )  # fmt: skip
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    for path in CHANGED:
        entry = files[path]
        assert entry["reads_succeeded"] == 0, path
        # two calls credited each file: the `git diff` (its hunks) and its `cat` (every line)
        assert entry["content"]["credited"] == 2, path
        assert entry["content"]["mismatched"] == 0, path
        assert entry["lines_seen"] == [{"start": 1, "end": len(lines_at_revision(workspace, path))}]
        assert entry["depth"]["depth"] == "full", path
    claims = claims_from_text(json.dumps(answer))
    decision = reconcile(
        procs, workspace, claims, workspace.root / "claude.run.evidence.json", "enforce"
    )
    assert_honest(decision)
    for path, entry in decided_files(decision).items():
        assert entry["content"] == "via_content", path


# --- 3. one `git diff` of a large change, cut by the client -------------------------------------

LARGE = [
    f"src/pkg/{name}.py"
    for name in (
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima",
    )
]  # fmt: skip
LARGE_HUNKS, LARGE_CHANGED_LINES = 12, 62  # per module (make_large_repo.sh)


@pytest.fixture
def large_workspace(procs: Processes, workspace: Workspace) -> Workspace:
    """The workspace's HOME and TMPDIR around make_large_repo.sh's repository (twelve changed
    modules, uncommitted): its own pinned diff, changed-file list and revision."""
    repo = workspace.root / "large-repo"
    done = procs.run(["bash", str(KIT / "make_large_repo.sh"), str(repo)], timeout=60, **PIPE)
    assert done.returncode == 0, done.stderr
    git = ["git", "-C", str(repo), "-c", "core.quotepath=off"]
    diff = procs.run([*git, "diff", "--no-color", "--no-ext-diff"], timeout=60, **PIPE)
    assert diff.returncode == 0, diff.stderr
    assert 65_000 < len(diff.stdout) < 80_000  # about 70 KB: more than any client passes on
    (workspace.root / "large.diff").write_bytes(diff.stdout)
    (workspace.root / "large-changed.txt").write_text("\n".join(LARGE) + "\n")
    return dataclasses.replace(
        workspace,
        repo=repo,
        diff=workspace.root / "large.diff",
        changed=workspace.root / "large-changed.txt",
        revision=snapshot_tree(repo),  # before any reviewer starts
    )


def large_claims(answer: Json) -> Json:
    assert sorted(answer["inspected_files"]) == LARGE
    return answer


def assert_only_what_reached_the_model_counts(
    evidence: Json, decision: Json, seen: dict[str, tuple[str, int, int]]
) -> None:
    """``seen``: for each module whose hunks reached the model, its depth, hunks seen and changed
    lines seen. Those are verified by what the one `git diff` printed (``via_content``) at that
    depth; every other module has no evidence at all and is unsupported; Approve → Comment, the
    note naming exactly the unsupported modules."""
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    assert set(files) == set(seen)
    for path, (depth, hunks, lines) in seen.items():
        found = files[path]["depth"]
        assert (found["depth"], found["hunks_seen"], found["changed_lines_seen"]) == (
            depth, hunks, lines
        ), path  # fmt: skip
        assert (found["hunks"], found["changed_lines"]) == (LARGE_HUNKS, LARGE_CHANGED_LINES)
        assert files[path]["reads_succeeded"] == 0, path
        assert files[path]["content"]["credited"] == 1, path
    unsupported = set(LARGE) - set(seen)
    assert with_status(decision, "unsupported") == unsupported
    assert with_status(decision, "verified") == set(seen)
    decided = decided_files(decision)
    for path, entry in decided.items():
        if path in seen:
            assert entry["content"] == "via_content", path
            assert entry["depth"]["depth"] == seen[path][0], path
        else:
            assert entry["unsupported_reason"] == "no_evidence", path
    assert decision["verdict_out"] == "comment"
    assert decision["downgraded"]
    assert decision["reasons"] == ["claims_unsupported"]
    for path in LARGE:
        assert (f"`{path}`" in decision["note"]) == (path in unsupported), decision["note"]


def tool_outputs(stream: Path, kind: str) -> list[str]:
    """The texts a stream says the model was given for its tool calls: Claude Code's
    ``tool_result`` contents (``kind`` "claude"), Codex's ``function_call_output`` outputs
    ("codex"), pi's ``tool_execution_end`` result texts ("pi")."""
    found: list[str] = []
    for event in map(json.loads, stream.read_bytes().splitlines()):
        if kind == "claude" and event.get("type") == "user":
            found += [
                block["content"]
                for block in event["message"]["content"]
                if isinstance(block, dict) and block.get("type") == "tool_result"
            ]
        elif kind == "codex" and event.get("payload", {}).get("type") == "function_call_output":
            found.append(event["payload"]["output"])
        elif kind == "pi" and event.get("type") == "tool_execution_end":
            found.append("".join(part["text"] for part in event["result"]["content"]))
    return found


def test_claude_code_large_git_diff_counts_only_its_preview(
    clients: Clients, procs: Processes, large_workspace: Workspace
) -> None:
    """Claude Code 2.1.328, Bash, under `run`: one ``git diff`` printing 71,343 bytes. Past
    30,000 characters of output (25,088 pass whole; 30,107 do not) Claude Code gives the model
    none of it but a ``<persisted-output>`` block: ``Output too large (69.7KB). Full output
    saved to: <HOME>/.claude/projects/.../tool-results/<id>.txt``, a blank line, ``Preview
    (first 2KB):``, the output's first whole lines within 2,000 bytes (1,937 bytes here), then
    ``...`` and ``</persisted-output>`` (2,198 characters in all). The stream's ``tool_result``
    content is that block, as the model got it (the request the mock received holds the same
    text); the line's ``tool_use_result`` has the output's first 30,000 characters in
    ``stdout`` and ``persistedOutputSize`` 71343, which the model never saw and which count for
    nothing. The preview holds the
    first four of alpha.py's twelve hunks (the fourth cut after two of its five changed lines):
    alpha.py is verified at depth partial, the eleven other modules are unsupported."""
    ws = large_workspace
    evidence, answer = run_claude_under_gate(
        procs, clients, ws, "e2e_content_claude_large_diff", "--allowedTools", "Read,Bash"
    )
    (given,) = tool_outputs(ws.root / "claude.jsonl", "claude")
    assert given.startswith("<persisted-output>\nOutput too large (69.7KB). Full output saved to: ")
    preview = given.split("\n\nPreview (first 2KB):\n", 1)[1]
    assert preview.endswith("\n...\n</persisted-output>")
    preview = preview.removesuffix("\n...\n</persisted-output>")
    assert ws.diff.read_text().startswith(preview + "\n")
    assert len(preview.encode()) <= 2_000
    (metadata,) = [
        event["tool_use_result"]
        for event in map(json.loads, (ws.root / "claude.jsonl").read_bytes().splitlines())
        if event.get("type") == "user" and isinstance(event.get("tool_use_result"), dict)
    ]
    assert len(metadata["stdout"]) == 30_000
    assert ws.diff.read_text().startswith(metadata["stdout"])
    assert metadata["persistedOutputSize"] == ws.diff.stat().st_size
    decision = reconcile(
        procs, ws, large_claims(answer), ws.root / "claude.run.evidence.json", "enforce"
    )
    assert_only_what_reached_the_model_counts(
        evidence, decision, {"src/pkg/alpha.py": ("partial", 4, 21)}
    )


def test_codex_large_git_diff_counts_only_its_head_and_tail(
    clients: Clients, procs: Processes, large_workspace: Workspace
) -> None:
    """Codex 0.169.0, ``exec_command``, recorded from its rollout: one ``git diff`` printing
    71,343 bytes. The ``function_call_output`` the model got says, after ``Output:``,
    ``Warning: truncated output (original token count: 17836)``, ``Total output lines: 1812``
    and a blank line, then the output's first 5,000 bytes, ``…61343 chars truncated…`` and its
    last 5,000 bytes (both cuts in the middle of a line); the ``CommandExecution`` record's
    ``aggregated_output`` keeps it whole. The head holds ten of alpha.py's twelve hunks, the tail
    eleven of lima.py's (from the middle of its second hunk): both verified at depth partial,
    the ten modules between them unsupported."""
    ws = large_workspace
    evidence, rollout, answer = run_codex_recorded(
        procs, clients, ws, "e2e_content_codex_large_diff"
    )
    size = ws.diff.stat().st_size
    (given,) = tool_outputs(rollout, "codex")
    body = given.split("\nOutput:\n", 1)[1]
    assert body.startswith("Warning: truncated output (original token count: ")
    head, tail = body.split("\n\n", 1)[1].split(f"…{size - 10_000} chars truncated…")
    diff = ws.diff.read_text()
    assert (len(head.encode()), len(tail.encode())) == (5_000, 5_000)
    assert diff.startswith(head)
    assert diff.endswith(tail)
    decision = reconcile(
        procs, ws, large_claims(answer), ws.root / "codex.rollout.evidence.json", "enforce"
    )
    assert_only_what_reached_the_model_counts(
        evidence,
        decision,
        {"src/pkg/alpha.py": ("partial", 10, 52), "src/pkg/lima.py": ("partial", 11, 54)},
    )


def test_pi_large_git_diff_counts_only_its_tail(
    clients: Clients, procs: Processes, large_workspace: Workspace
) -> None:
    """pi 0.73.1 with its built-in ``bash`` (``--tools bash``), under `run`: one ``git diff``
    printing 71,343 bytes. pi's bash keeps the output's last whole lines within 50 KB (51,152
    bytes here, from line 509) and appends a blank line and ``[Showing lines 509-1813 of 1813
    (50.0KB limit). Full output: <TMPDIR>/pi-bash-<hex>.log]``; its ``details.truncation`` says
    ``truncated: true``. The tail starts inside delta.py's section, after the changed lines of
    its fourth hunk: alpha.py, bravo.py and charlie.py are unsupported, delta.py is verified at
    depth partial (eight of twelve hunks) and the eight modules after it at depth full."""
    ws = large_workspace
    evidence, events = run_pi_builtin(procs, clients, ws, "e2e_content_pi_large_diff", "bash")
    (given,) = tool_outputs(ws.root / "pi.jsonl", "pi")
    kept, notice = given.rsplit("\n\n", 1)
    assert notice.startswith("[Showing lines 509-1813 of 1813 (50.0KB limit). Full output: ")
    assert ws.diff.read_text().endswith(kept)
    assert len(kept.encode()) <= 50 * 1024
    (end,) = [event for event in events if event.get("type") == "tool_execution_end"]
    assert end["result"]["details"]["truncation"]["truncated"] is True
    answer = json.loads(pi_final_answer(events))
    decision = reconcile(
        procs, ws, large_claims(answer), ws.root / "pi.run.evidence.json", "enforce"
    )
    seen = {"src/pkg/delta.py": ("partial", 8, 40)}
    seen |= dict.fromkeys(LARGE[4:], ("full", LARGE_HUNKS, LARGE_CHANGED_LINES))
    assert_only_what_reached_the_model_counts(evidence, decision, seen)


# --- 4. a reviewer citing the line it wrote itself -----------------------------------------------


def test_pi_reviewer_citing_its_own_edit_fails_both_checks(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """pi with its built-in read/bash/edit/write, under `run`: it edits models.py
    (``MAX_BODY = 10_000`` → ``25_000``) with no read before, reads it back, reads the five other
    files, and its final answer cites ``src/api/models.py`` line 6 as ``MAX_BODY = 25_000``: its
    own line. Two independent checks hold it to the revision: the read of models.py returned
    the edited text (unsupported, content_mismatch) and the cited line reads
    ``MAX_BODY = 10_000`` at the revision (the citation failed, content_mismatch, and is
    uncorroborated: no read showed models.py). Both are in the decision; Approve → Comment."""
    evidence, events = run_pi_builtin(
        procs, clients, workspace, "e2e_content_pi_cites_own_edit", "read,bash,edit,write"
    )
    assert evidence["stream_complete"]
    assert_the_edit_stayed_in_the_working_tree(workspace, "MAX_BODY = 25_000")
    claims = claims_from_text(pi_final_answer(events))
    path = workspace.root / "pi.run.evidence.json"
    decision = assert_own_edit_read_back_is_caught(procs, workspace, claims, path, evidence, "edit")
    assert set(decision["reasons"]) == {"claims_unsupported", "citations_failed"}
    (reviewer,) = decision["reviewers"]
    (check,) = reviewer["citations"]["checks"]
    assert (check["file"], check["line"], check["outcome"], check["reason"]) == (
        MODELS, 6, "failed", "content_mismatch"
    )  # fmt: skip
    assert check["found"] == "MAX_BODY = 10_000"
    assert check["uncorroborated"]
    assert (
        f"- `{MODELS}` line 6, cited by `reviewer` as `MAX_BODY = 25_000`: line 6 reads "
        f"`MAX_BODY = 10_000` at {workspace.revision[:12]}, and no line within 3 of it holds "
        "the cited content"
    ) in decision["note"]
    assert statuses(decision)[MODELS] == "unsupported"


# --- 5. a writing tool of the other clients: the change is a mutation ---------------------------


def test_gemini_cli_replace_then_read_is_recorded_as_a_mutation(
    gemini_qwen: GeminiQwen, procs: Processes, workspace: Workspace
) -> None:
    """Gemini CLI with ``--yolo``, under `run`: ``replace`` changes ``MAX_BODY = 10_000`` to
    ``20_000`` in models.py with no read before it, then ``read_file`` reads the six changed
    files and the answer claims all six. The ``replace`` is the evidence's one mutation, named
    in the decision. Gemini CLI's stream carries no ``read_file`` output, so no read is checked
    against the revision: the read of the edited models.py stays unchecked, as do the others,
    and under the default mutation policy (accept) the Approve stands; under ``--mutation-policy
    downgrade`` the change is ``reviewer_mutated`` and the Approve becomes a Comment."""
    evidence, claims = run_gemini(procs, gemini_qwen, workspace, "e2e_mutation_gemini_replace")
    assert evidence["stream_complete"]
    assert_the_edit_stayed_in_the_working_tree(workspace, "MAX_BODY = 20_000")
    for path in CHANGED:
        entry = file_evidence(evidence)[path]
        assert entry["reads_succeeded"] == 1, path
        assert entry["content"]["matched"] == entry["content"]["mismatched"] == 0, path
    path = workspace.root / "gemini.run.evidence.json"
    decision = reconcile(procs, workspace, claims, path, "enforce")
    assert_the_edit_is_a_mutation(evidence, decision, "replace")
    assert decision["verdict_out"] == "approve"
    assert decision["mutations_would_downgrade"]
    assert_the_mutation_policy_downgrade_counts_it(procs, workspace, claims, path)


def test_qwen_code_edit_then_read_back_is_a_content_mismatch(
    gemini_qwen: GeminiQwen, procs: Processes, workspace: Workspace
) -> None:
    """Qwen Code with ``--yolo``, under `run`: ``edit`` of models.py (``MAX_BODY = 10_000`` →
    ``20_000``), then ``read_file`` of the six changed files.

    Qwen Code (0.24.4 and 0.23.0) refuses an ``edit`` of a file not read in the session
    (``is_error``: "File ... has not been read in this session. Use the read_file tool first
    ..."), so the scenario first reads lines 1-2 of models.py (``offset`` 0, ``limit`` 2: two
    unchanged lines, none of the change). A ranged read's ``tool_result`` in the stream is only
    a summary ("Read lines 1-2 of 47 from src/api/models.py"), so that read is unchecked. The
    whole read after the edit carries the edited text: a mismatch, which counts for nothing (no
    lines seen from it), while the five other reads match the revision. models.py stays
    verified by the unchecked peek alone (depth none; the default depth policy accepts any
    successful evidence), so the Approve stands under the default mutation policy (accept); the
    ``edit`` is the evidence's one mutation, named in the decision, and under
    ``--mutation-policy downgrade`` it is ``reviewer_mutated``: Approve → Comment."""
    evidence, claims = run_qwen(procs, gemini_qwen, workspace, "e2e_mutation_qwen_edit")
    assert evidence["stream_complete"]
    assert_the_edit_stayed_in_the_working_tree(workspace, "MAX_BODY = 20_000")
    models = file_evidence(evidence)[MODELS]
    assert models["content"]["mismatched"] == 1
    assert models["content"]["unchecked"] == 1
    assert models["content"]["matched"] == 0
    assert models["reads_succeeded"] == 1
    assert models["lines_seen"] == [{"start": 1, "end": 2}]
    assert models["depth"]["depth"] == "none"
    assert "content_mismatch" in {issue["kind"] for issue in evidence["issues"]}
    for other in set(CHANGED) - {MODELS}:
        assert file_evidence(evidence)[other]["content"]["matched"] == 1, other
    path = workspace.root / "qwen.run.evidence.json"
    decision = reconcile(procs, workspace, claims, path, "enforce")
    assert_honest(decision)
    files = decided_files(decision)
    assert files[MODELS]["content"] == "unchecked"
    for other in set(CHANGED) - {MODELS}:
        assert files[other]["content"] == "matched", other
    assert_the_edit_is_a_mutation(evidence, decision, "edit")
    assert decision["mutations_would_downgrade"]
    assert_the_mutation_policy_downgrade_counts_it(procs, workspace, claims, path)


def test_copilot_edit_then_first_view_is_a_content_mismatch(
    copilot: Path, procs: Processes, workspace: Workspace
) -> None:
    """Copilot CLI with ``--allow-all-tools``, under `run`: ``edit`` of models.py
    (``MAX_BODY = 10_000`` → ``20_000``) with no view before it, then ``view`` of the six changed
    files. The view of models.py returned the edited line: unsupported (content_mismatch), the
    five other views verified, Approve → Comment; the ``edit`` is the evidence's one mutation,
    named in the decision."""
    evidence, claims = run_copilot(procs, copilot, workspace, "e2e_mutation_copilot_edit")
    assert evidence["stream_complete"]
    assert_the_edit_stayed_in_the_working_tree(workspace, "MAX_BODY = 20_000")
    path = workspace.root / "copilot-cli.run.evidence.json"
    assert_own_edit_read_back_is_caught(procs, workspace, claims, path, evidence, "edit")
