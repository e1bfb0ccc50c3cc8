"""codereview-cli task artifacts through `record --format codereview-cli` and
`reconcile --codereview-run` (tests/data/codereview-cli, a hand-made fixture of the six-file review
in tests/data/pi-rpc, and mutations of it).
"""

from __future__ import annotations

import codecs
import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from coverage_gate.cli import app
from coverage_gate.errors import ExitCode
from tests.conftest import CHANGED_FILES, DATA

runner = CliRunner()
RUN = DATA / "codereview-cli"
HEAD = "1a2b3c4d5e6f"  # the fixture's task folders end in it
REV = HEAD + "0123456789abcdef0123456789ab"  # the review's full head SHA
OTHER_REV = "ffffffffffff0123456789abcdef0123456789ab"
CORRECTNESS = f"reviewer%3Acorrectness-{HEAD}"
SECURITY = f"reviewer%3Asecurity-{HEAD}"
DIFF = DATA / "pi-rpc" / "review.diff"

# What the fixture's README implies for each reviewer and changed file, with the pinned diff
# given (--diff) and without it. The correctness trace pages bytes 0-2400 of the 4570-byte diff
# (README.md, docs/guide.md and src/api/handlers.py whole, src/api/models.py in part), reads
# handlers.py whole and models.py in a range, fails to read strings.py, never ends its read of
# tests/test_handlers.py (missing_end), reads docs/guide.md only as a symlink view (no file body),
# and makes one call whose path was unavailable (no evidence for anything). The security task has
# no trace (capability none) and skips docs/guide.md.
#
# reviewer      file                     with --diff   without      why
FIXTURE_STATUSES = [
    ("correctness", "README.md", "verified", "unsupported", "only the diff page shows it"),
    ("correctness", "docs/guide.md", "verified", "unsupported", "a symlink view is no body"),
    ("correctness", "src/api/handlers.py", "verified", "verified", "a whole read"),
    ("correctness", "src/api/models.py", "verified", "verified", "a ranged read"),
    ("correctness", "src/util/strings.py", "unsupported", "unsupported", "a failed read"),
    ("correctness", "tests/test_handlers.py", "unsupported", "unsupported", "missing_end"),
    ("security", "README.md", "missing", "missing", "not claimed"),
    ("security", "docs/guide.md", "skipped", "skipped", "skipped"),
    ("security", "src/api/handlers.py", "unknown", "unknown", "no trace: capability none"),
    ("security", "src/api/models.py", "missing", "missing", "not claimed"),
    ("security", "src/util/strings.py", "missing", "missing", "not claimed"),
    ("security", "tests/test_handlers.py", "missing", "missing", "not claimed"),
]
FIXTURE_COVERAGE = {"correctness": "incomplete_unsupported", "security": "incomplete_skipped"}


def statuses(decision: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {
        (reviewer["agent_id"], entry["path"]): entry["status"]
        for reviewer in decision["reviewers"]
        for entry in reviewer["files"]
    }


def expected(with_diff: bool) -> dict[tuple[str, str], str]:
    return {(r, path): (a if with_diff else b) for r, path, a, b, _ in FIXTURE_STATUSES}


def changed_list(folder: Path) -> Path:
    path = folder / "changed.txt"
    path.write_text("\n".join(CHANGED_FILES) + "\n")
    return path


def record(metadata: Path, *extra: str, revision: str = REV) -> Result:
    return runner.invoke(
        app,
        ["record", str(metadata), "--revision", revision, "--repo-root", "/nonexistent", *extra],
    )


def reconcile(folder: Path, *extra: str, revision: str = REV) -> Result:
    args = [
        "reconcile",
        "--repo",
        "acme/shop",
        "--revision",
        revision,
        "--verdict",
        "approve",
        "--changed",
        str(changed_list(folder)),
        "--mode",
        "enforce",
        "--format",
        "json",
        "--repo-root",
        str(folder),
        *extra,
    ]
    return runner.invoke(app, args)


def decision_of(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, (result.output, repr(result.exception))
    decision: dict[str, Any] = json.loads(result.stdout)
    return decision


# --- the fixture -------------------------------------------------------------------------------


@pytest.mark.parametrize("with_diff", [True, False], ids=["pinned-diff", "no-diff"])
def test_the_fixture_through_reconcile_codereview_run_gives_the_readme_statuses(
    tmp_path: Path, with_diff: bool
) -> None:
    extra = ["--diff", str(DIFF)] if with_diff else []
    decision = decision_of(reconcile(tmp_path, "--codereview-run", str(RUN), *extra))
    assert statuses(decision) == expected(with_diff)
    assert {r["agent_id"]: r["coverage"] for r in decision["reviewers"]} == FIXTURE_COVERAGE
    assert decision["verdict_out"] == "comment"
    assert {r["evidence_revision"] for r in decision["reviewers"]} == {HEAD}


@pytest.mark.parametrize("with_diff", [True, False], ids=["pinned-diff", "no-diff"])
def test_the_fixture_through_record_then_reconcile_gives_the_same_statuses(
    tmp_path: Path, with_diff: bool
) -> None:
    extra = ["--diff", str(DIFF)] if with_diff else []
    reviewers = []
    for folder in (CORRECTNESS, SECURITY):
        task = RUN / "llm-tasks" / folder
        out = tmp_path / f"{folder}.evidence.json"
        result = record(
            task / "metadata.json", "--format", "codereview-cli", "-o", str(out), *extra
        )
        assert result.exit_code == 0, result.output
        reviewers.append({"claims": str(task / "validated-output.json"), "evidence": str(out)})
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"schema_version": 1, "reviewers": reviewers}))
    decision = decision_of(reconcile(tmp_path, "--bundle", str(bundle)))
    assert statuses(decision) == expected(with_diff)


def test_the_correctness_evidence_keeps_the_traces_labels_and_counts() -> None:
    result = record(RUN / "llm-tasks" / CORRECTNESS / "metadata.json", "--diff", str(DIFF))
    assert result.exit_code == 0, result.output
    assert "format codereview-cli (detected" in result.stderr
    evidence = json.loads(result.stdout)
    assert (evidence["source"], evidence["capability"], evidence["revision"]) == (
        "codereview-cli",
        "per_file",
        REV,
    )
    assert [(i["kind"], i["line"], i["call_id"]) for i in evidence["issues"]] == [
        ("missing_end", 5, "toolu_05"),
        ("path_unavailable", 7, "(trace call 7)"),
    ]
    counters = evidence["counters"]
    assert (counters["calls"], counters["succeeded"], counters["failed"]) == (7, 4, 1)
    assert (counters["incomplete"], counters["ignored"]) == (2, 1)  # ignored: the symlink view
    by_path = {f["path"]: f for f in evidence["files"]}
    assert by_path["src/api/models.py"]["ranges"] == [{"offset": 200, "end": 600, "total": None}]
    assert by_path["docs/guide.md"]["reads_succeeded"] == 0
    assert evidence["stream_complete"] is True


def test_a_task_without_a_trace_is_capability_none() -> None:
    result = record(RUN / "llm-tasks" / SECURITY / "metadata.json", "--format", "codereview-cli")
    assert result.exit_code == 0, result.output
    evidence = json.loads(result.stdout)
    assert (evidence["capability"], evidence["files"]) == ("none", [])
    assert "holds no tool trace" in result.stderr


# --- mutations -----------------------------------------------------------------------------------


def load(folder: str, name: str = "metadata.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RUN / "llm-tasks" / folder / name).read_text())
    return data


def write_run(
    root: Path,
    tasks: dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]],
) -> Path:
    """A run folder: each task folder name → (metadata, claims); ``None`` leaves a file out."""
    run = root / "run"
    for name, (metadata, claims) in tasks.items():
        folder = run / "llm-tasks" / name
        folder.mkdir(parents=True)
        if metadata is not None:
            (folder / "metadata.json").write_text(json.dumps(metadata))
        if claims is not None:
            (folder / "validated-output.json").write_text(json.dumps(claims))
    return run


def correctness_with(calls: list[dict[str, Any]], **trace: Any) -> dict[str, Any]:
    metadata = copy.deepcopy(load(CORRECTNESS))
    metadata["reviewer_tool_evidence"]["trace"]["calls"] = calls
    metadata["reviewer_tool_evidence"]["trace"].update(trace)
    return metadata


def run_of_correctness(root: Path, metadata: dict[str, Any] | None) -> Path:
    return write_run(root, {CORRECTNESS: (metadata, load(CORRECTNESS, "validated-output.json"))})


READ_HANDLERS = {
    "call_id": "c1",
    "tool": "cr_read",
    "path": "src/api/handlers.py",
    "read_view": "file",
    "status": "succeeded",
    "start_observed": True,
    "end_observed": True,
    "requested_range": {"offset": 0, "limit": 0},
    "output": {"bytes": 979, "truncated": False},
}


def handlers_status(root: Path, call: dict[str, Any], *extra: str) -> tuple[str, dict[str, Any]]:
    """The status of the claimed src/api/handlers.py when the trace holds only ``call``."""
    run = run_of_correctness(root, correctness_with([call]))
    decision = decision_of(reconcile(root, "--codereview-run", str(run), *extra))
    return statuses(decision)[("correctness", "src/api/handlers.py")], decision


def test_an_honest_read_verifies_its_file(tmp_path: Path) -> None:
    """The control for the mutations below: the same call, untouched, verifies."""
    assert handlers_status(tmp_path, READ_HANDLERS)[0] == "verified"


@pytest.mark.parametrize(
    "path",
    [
        "../repo/src/api/handlers.py",
        "/home/user/repo/src/api/handlers.py",
        "/etc/passwd",
        ".git/config",
        "src/api/../../src/api/handlers.py",
        "src/util/../api/handlers.py",  # no such folder link at all: still needs the tree
    ],
)
def test_a_trace_call_claiming_success_on_a_decoy_path_is_no_evidence(
    tmp_path: Path, path: str
) -> None:
    """Rejected (not unknown): reading elsewhere buys nothing, the claim is unsupported."""
    status, _ = handlers_status(tmp_path, {**READ_HANDLERS, "path": path})
    assert status == "unsupported"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        check=True,
        text=True,
    )
    return done.stdout.strip()


def test_a_path_through_a_symlink_to_elsewhere_is_no_evidence_in_a_real_repository(
    tmp_path: Path,
) -> None:
    """src/api/x links to decoy/inner, so src/api/x/../handlers.py opens decoy/handlers.py:
    rejected (parent_through_symlink), while src/api/same/../handlers.py (a link to a sibling
    folder) lands on the file itself and counts."""
    repo = tmp_path / "repo"
    for name, text in {
        "src/api/handlers.py": "real\n",
        "src/api/sub/keep.txt": "\n",
        "decoy/handlers.py": "DECOY\n",
        "decoy/inner/keep.txt": "\n",
    }.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "src/api/x").symlink_to("../../decoy/inner")
    (repo / "src/api/same").symlink_to("sub")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "decoys")
    head = git(repo, "rev-parse", "HEAD")
    for path, wanted in (
        ("src/api/x/../handlers.py", "unsupported"),
        ("src/api/same/../handlers.py", "verified"),
    ):
        metadata = correctness_with([{**READ_HANDLERS, "path": path}])
        run = write_run(
            tmp_path / path.replace("/", "_"),
            {
                f"reviewer%3Acorrectness-{head[:12]}": (
                    metadata,
                    load(CORRECTNESS, "validated-output.json"),
                )
            },
        )
        result = reconcile(repo, "--codereview-run", str(run), revision=head)
        assert statuses(decision_of(result))[("correctness", "src/api/handlers.py")] == wanted


def test_a_symlink_view_read_is_no_read_of_the_file(tmp_path: Path) -> None:
    status, decision = handlers_status(tmp_path, {**READ_HANDLERS, "read_view": "symlink"})
    assert status == "unsupported"
    assert "no successful read or diff recorded" in decision["note"]


def test_a_diff_call_whose_bytes_do_not_match_the_pinned_diff_is_no_evidence(
    tmp_path: Path,
) -> None:
    """The pinned diff has 4570 bytes; a page that returned bytes 4000-6400 is of another diff.
    Its files are not credited, and the evidence says why (diff_mismatch)."""
    page = {
        "call_id": "d1",
        "tool": "cr_diff",
        "status": "succeeded",
        "start_observed": True,
        "end_observed": True,
        "requested_range": {"offset": 4000, "limit": 2400},
        "output": {"bytes": 2400, "truncated": False},
    }
    metadata_path = tmp_path / CORRECTNESS / "metadata.json"
    metadata_path.parent.mkdir()
    metadata_path.write_text(json.dumps(correctness_with([page])))
    result = record(metadata_path, "--diff", str(DIFF))
    evidence = json.loads(result.stdout)
    assert evidence["files"] == []
    (issue,) = evidence["issues"]
    assert issue["kind"] == "diff_mismatch"
    assert "past the end of the pinned diff (4570 bytes)" in issue["detail"]
    status, _ = handlers_status(tmp_path / "run", {**page}, "--diff", str(DIFF))
    assert status == "unsupported"
    control = {**page, "requested_range": {"offset": 0, "limit": 2400}}
    assert handlers_status(tmp_path / "control", control, "--diff", str(DIFF))[0] == "verified"


@pytest.mark.parametrize(
    ("change", "status", "label"),
    [
        ({"provenance_issue": "range_unavailable"}, "unsupported", "range_unavailable"),
        ({"end_observed": False}, "unsupported", "missing_end"),
        ({"call_id": ""}, "unsupported", "call_id_unavailable"),
        ({"status": "incomplete"}, "unknown", "outcome_unreadable"),
        (
            {"status": "incomplete", "provenance_issue": "outcome_unavailable"},
            "unknown",
            "outcome_unreadable",
        ),
    ],
)
def test_labelled_and_incomplete_calls_are_no_evidence_and_keep_their_label(
    tmp_path: Path, change: dict[str, Any], status: str, label: str
) -> None:
    """A call the trace could not establish never verifies, even marked 'succeeded'; one whose
    outcome alone is unknown leaves its file unknown, never unsupported."""
    assert handlers_status(tmp_path, {**READ_HANDLERS, **change})[0] == status
    metadata = tmp_path / "m" / CORRECTNESS / "metadata.json"
    metadata.parent.mkdir(parents=True)
    metadata.write_text(json.dumps(correctness_with([{**READ_HANDLERS, **change}])))
    evidence = json.loads(record(metadata).stdout)
    assert [issue["kind"] for issue in evidence["issues"]] == [label]


def test_the_traces_stream_state_carries_over(tmp_path: Path) -> None:
    """An incomplete stream proves nothing absent; a truncated trace with dropped events makes
    claims without evidence unknown, as dropped calls do."""
    failed = {**READ_HANDLERS, "status": "failed"}
    incomplete = correctness_with([failed], stream_complete=False)
    run = run_of_correctness(tmp_path / "a", incomplete)
    decision = decision_of(reconcile(tmp_path, "--codereview-run", str(run)))
    files = {f["path"]: f for f in decision["reviewers"][0]["files"]}
    assert files["src/api/handlers.py"]["unknown_reason"] == "stream_incomplete"
    truncated = correctness_with([failed], truncated=True, dropped_events=40)
    run = run_of_correctness(tmp_path / "b", truncated)
    metadata = run / "llm-tasks" / CORRECTNESS / "metadata.json"
    evidence = json.loads(record(metadata).stdout)
    assert (evidence["truncated"], evidence["dropped_calls"], evidence["unattributed_calls"]) == (
        True,
        40,
        40,
    )
    decision = decision_of(reconcile(tmp_path, "--codereview-run", str(run)))
    files = {f["path"]: f for f in decision["reviewers"][0]["files"]}
    assert files["README.md"]["unknown_reason"] == "truncated"


def test_calls_null_is_a_trace_with_no_calls(tmp_path: Path) -> None:
    """Go writes an empty list as null: no supported executions observed, per-file evidence."""
    metadata = tmp_path / CORRECTNESS / "metadata.json"
    metadata.parent.mkdir()
    body = correctness_with([])
    body["reviewer_tool_evidence"]["trace"]["calls"] = None
    metadata.write_text(json.dumps(body))
    evidence = json.loads(record(metadata).stdout)
    assert (evidence["capability"], evidence["counters"]["calls"]) == ("per_file", 0)


# --- bad input -----------------------------------------------------------------------------------


def assert_bad_input(result: Result, *words: str) -> str:
    """Exit 3, one line on stderr naming what is at fault, nothing on stdout, no traceback."""
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_metadata_before_schema_4_is_refused_naming_its_version(
    tmp_path: Path, version: int
) -> None:
    old = copy.deepcopy(load(CORRECTNESS))
    old["schema_version"] = version
    del old["reviewer_tool_evidence"]
    run = run_of_correctness(tmp_path, old)
    metadata = run / "llm-tasks" / CORRECTNESS / "metadata.json"
    for result in (
        record(metadata, "--format", "codereview-cli"),
        record(metadata),  # detected, then refused the same way
        reconcile(tmp_path, "--codereview-run", str(run)),
    ):
        line = assert_bad_input(result, str(metadata), "'schema_version'", f": {version}:")
        assert "schema_version 4" in line


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda m: m.update(schema_version=5), ["'schema_version'", "5 is newer"]),
        (
            lambda m: m["reviewer_tool_evidence"]["trace"].update(version=2),
            ["'reviewer_tool_evidence.trace.version'", "2 is newer"],
        ),
        (
            lambda m: m["reviewer_tool_evidence"]["trace"]["calls"][1].update(status="done"),
            ["'reviewer_tool_evidence.trace.calls.1.status'"],
        ),
        (
            lambda m: m["reviewer_tool_evidence"]["trace"]["calls"][0].update(
                start_observed="true"
            ),
            ["'reviewer_tool_evidence.trace.calls.0.start_observed'"],
        ),
        (
            lambda m: m["reviewer_tool_evidence"]["trace"]["calls"][4].update(
                provenance_issue="felt_like_it"
            ),
            ["'reviewer_tool_evidence.trace.calls.4.provenance_issue'"],
        ),
        (
            lambda m: m["reviewer_tool_evidence"]["trace"]["calls"][2].update(
                output={"bytes": 2**64, "truncated": False}
            ),
            ["'reviewer_tool_evidence.trace.calls.2.output.bytes'"],
        ),
        (lambda m: m.pop("task_id"), ["'task_id'"]),
        (lambda m: m.update(task_id="reviewer:security"), ["'task_id'", "reviewer:correctness"]),
    ],
)
def test_malformed_metadata_exits_3_naming_the_file_and_field(
    tmp_path: Path, mutate: Any, words: list[str]
) -> None:
    metadata = copy.deepcopy(load(CORRECTNESS))
    mutate(metadata)
    run = run_of_correctness(tmp_path, metadata)
    path = run / "llm-tasks" / CORRECTNESS / "metadata.json"
    assert_bad_input(record(path, "--format", "codereview-cli"), str(path), *words)
    assert_bad_input(reconcile(tmp_path, "--codereview-run", str(run)), str(path), *words)


def test_metadata_that_is_not_json_exits_3_naming_the_line(tmp_path: Path) -> None:
    run = run_of_correctness(tmp_path, load(CORRECTNESS))
    path = run / "llm-tasks" / CORRECTNESS / "metadata.json"
    path.write_text((RUN / "llm-tasks" / CORRECTNESS / "metadata.json").read_text()[:700])
    assert_bad_input(record(path, "--format", "codereview-cli"), str(path), "not JSON: line ")
    assert_bad_input(reconcile(tmp_path, "--codereview-run", str(run)), str(path), "line ")


def test_a_malformed_validated_output_exits_3_naming_the_field(tmp_path: Path) -> None:
    claims = {**load(CORRECTNESS, "validated-output.json"), "inspected_files": "README.md"}
    run = write_run(tmp_path, {CORRECTNESS: (load(CORRECTNESS), claims)})
    assert_bad_input(
        reconcile(tmp_path, "--codereview-run", str(run)),
        "validated-output.json",
        "'inspected_files'",
    )


# --- runs ---------------------------------------------------------------------------------------


def test_a_task_folder_for_another_head_is_stale_and_said_plainly(tmp_path: Path) -> None:
    """The folder names the head its task ran at; for another revision its evidence is stale:
    claimed files unknown, reason evidence_stale, and stderr names the folder and both heads."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    decision = decision_of(reconcile(tmp_path, "--codereview-run", str(run), revision=OTHER_REV))
    correctness = decision["reviewers"][0]
    assert correctness["coverage"] != "incomplete_unsupported"
    assert "evidence_stale" in correctness["reasons"]
    assert {f["status"] for f in correctness["files"]} == {"unknown"}
    result = reconcile(tmp_path, "--codereview-run", str(run), revision=OTHER_REV)
    said = [line for line in result.stderr.splitlines() if CORRECTNESS in line]
    assert len(said) == 1
    assert f"ran at head {HEAD}, not at --revision {OTHER_REV[:12]}" in said[0]
    assert "stale" in said[0]


def test_record_of_metadata_in_another_heads_folder_binds_it_to_that_head() -> None:
    """The trace was made at the folder's head: bound there, it is stale for the revision
    asked for, instead of vouching for a commit it never saw."""
    metadata = RUN / "llm-tasks" / CORRECTNESS / "metadata.json"
    result = record(metadata, revision=OTHER_REV)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["revision"] == HEAD
    assert f"ran at head {HEAD}, not at --revision {OTHER_REV}" in result.stderr
    assert json.loads(record(metadata).stdout)["revision"] == REV  # the same commit: kept


def test_a_task_without_validated_output_is_a_failed_reviewer(tmp_path: Path) -> None:
    run = write_run(
        tmp_path,
        {
            CORRECTNESS: (load(CORRECTNESS), None),
            SECURITY: (load(SECURITY), load(SECURITY, "validated-output.json")),
        },
    )
    result = reconcile(tmp_path, "--codereview-run", str(run))
    reviewers = {r["agent_id"]: r for r in decision_of(result)["reviewers"]}
    assert reviewers["correctness"]["coverage"] == "incomplete_failed"
    assert "reviewer_failed" in reviewers["correctness"]["reasons"]
    assert "no validated-output.json" in result.stderr


def test_a_task_that_never_finished_is_a_failed_reviewer(tmp_path: Path) -> None:
    """metadata.json is written last: without it the task never finished."""
    run = write_run(
        tmp_path,
        {
            CORRECTNESS: (None, load(CORRECTNESS, "validated-output.json")),
            SECURITY: (load(SECURITY), load(SECURITY, "validated-output.json")),
        },
    )
    result = reconcile(tmp_path, "--codereview-run", str(run))
    decision = decision_of(result)
    reviewers = {r["agent_id"]: r for r in decision["reviewers"]}
    assert reviewers["correctness"]["coverage"] == "incomplete_failed"
    assert decision["verdict_out"] == "comment"
    assert "never finished" in result.stderr


def test_a_task_whose_status_is_not_succeeded_is_a_failed_reviewer(tmp_path: Path) -> None:
    metadata = {**load(CORRECTNESS), "status": "failed"}
    run = run_of_correctness(tmp_path, metadata)
    result = reconcile(tmp_path, "--codereview-run", str(run))
    assert decision_of(result)["reviewers"][0]["coverage"] == "incomplete_failed"
    assert "status 'failed'" in result.stderr


def test_only_reviewer_tasks_are_reviewers_and_the_rest_are_named(tmp_path: Path) -> None:
    run = write_run(
        tmp_path,
        {
            CORRECTNESS: (load(CORRECTNESS), load(CORRECTNESS, "validated-output.json")),
            f"synthesis-{HEAD}": ({**load(SECURITY), "task_id": "synthesis"}, None),
            "notes": (None, None),
        },
    )
    result = reconcile(tmp_path, "--codereview-run", str(run / "llm-tasks"))
    assert [r["agent_id"] for r in decision_of(result)["reviewers"]] == ["correctness"]
    assert "not reviewers: synthesis" in result.stderr
    assert "notes" in result.stderr


def test_a_run_without_reviewer_tasks_is_bad_input(tmp_path: Path) -> None:
    run = write_run(tmp_path, {f"synthesis-{HEAD}": (None, None)})
    assert_bad_input(reconcile(tmp_path, "--codereview-run", str(run)), "no reviewer task")
    assert_bad_input(reconcile(tmp_path, "--codereview-run", str(tmp_path / "none")), "no such")


@pytest.mark.parametrize(
    "extra",
    [
        ["--claims", "x.json"],
        ["--bundle", "b.json"],
        ["--diff", "review.diff", "--claims", "x.json"],
        ["--evidence", "e.json"],
    ],
)
def test_codereview_run_goes_alone_and_diff_only_with_it(tmp_path: Path, extra: list[str]) -> None:
    args = extra if "--diff" in extra else ["--codereview-run", str(RUN), *extra]
    result = reconcile(tmp_path, *args)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stdout == ""


def test_metadata_on_stdin_is_detected_and_read_whole() -> None:
    data = (RUN / "llm-tasks" / CORRECTNESS / "metadata.json").read_bytes()
    for given in (data, codecs.BOM_UTF8 + data):  # a byte-order mark only marks the encoding
        result = runner.invoke(app, ["record", "-", "--revision", REV], input=given)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["counters"]["calls"] == 7
    old = data.replace(b'"schema_version": 4', b'"schema_version": 2')
    result = runner.invoke(app, ["record", "-", "--revision", REV], input=old)
    assert_bad_input(result, "codereview-cli metadata (stdin)", "'schema_version': 2")
