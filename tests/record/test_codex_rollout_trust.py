"""A Codex rollout is evidence only when the reviewer could not have written it (DESIGN §6 rule
27), over the real captures of ``tests/data/presentation/codex-*``.

``codex exec --json`` is Codex's own stdout; its thread's rollout is a file under
``$CODEX_HOME`` that a command of the run can write wherever its sandbox lets it. ``record`` takes
the rollout in the exec stream's place only when it is the thread's one regular file, names the
thread, tells the exec stream's story call by call, and lies out of the reach of the run's
sandbox (as the rollout's own ``turn_context`` records it). Otherwise the exec stream is recorded
with ``cannot_verify`` set, and every claim it would verify is ``unknown`` for that reason, named
in the decision's note.

The captures ran under ``-s workspace-write`` (``/tmp`` and ``$TMPDIR`` writable); a test's
``CODEX_HOME`` lies in pytest's temporary folder, which is under one of them, so the captured
sandbox is the one that could write it. Runs under other sandboxes are the captures with their
``turn_context`` rewritten. Each case is ``record`` then ``reconcile --mode enforce``, whole
processes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.record.codex_story import exec_story, rollout_story, story_differs
from tests.conftest import Repo, enforced_decision, run_cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
PRESENTATION = DATA / "presentation"
CAPTURED_ROOT = b"/home/user/repo"
RELEASES = ("newest", "older")
WAYS = ("cat", "diff")


def _pairs() -> list[tuple[Path, Path]]:
    """Every real exec stream under ``tests/data`` with the rollout of its own run."""
    found = []
    for stream in sorted(DATA.glob("**/*.exec.jsonl")):
        name = stream.name.replace(".exec.jsonl", ".rollout.jsonl")
        beside = stream.with_name(name)
        rollout = beside if beside.exists() else DATA / "codex-rollout" / name
        if rollout.exists():
            found.append((stream, rollout))
    return found


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize("pair", _pairs(), ids=lambda pair: str(pair[0].relative_to(DATA)))
def test_every_real_rollout_tells_its_exec_streams_story(pair: tuple[Path, Path]) -> None:
    """Written first: no honest run is refused by the story check."""
    stream, rollout = pair
    steps = exec_story(_lines(stream))
    assert not isinstance(steps, str), steps
    assert steps, "a capture whose run ran no command tells nothing here"
    assert story_differs(steps, rollout_story(_lines(rollout))) is None


def test_the_real_pairs_are_the_ones_this_module_knows() -> None:
    assert len(_pairs()) == 9


# --- rewriting a real rollout ------------------------------------------------------------------


def _events(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def _joined(events: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


def _sandbox(kind: str) -> Callable[[dict[str, Any]], None]:
    """A rewrite of a ``turn_context`` to the sandbox ``kind`` Codex would have recorded."""

    def rewrite(turn: dict[str, Any]) -> None:
        policy = turn["sandbox_policy"]
        system = turn["permission_profile"]["file_system"]
        if kind == "read-only":
            turn["sandbox_policy"] = {"type": "read-only", "network_access": False}
            for entry in system["entries"]:
                entry["access"] = "read"
        elif kind == "workspace-write-no-tmp":
            policy["exclude_slash_tmp"] = policy["exclude_tmpdir_env_var"] = True
            system["entries"] = [
                entry
                for entry in system["entries"]
                if entry["path"].get("value", {}).get("kind") not in ("slash_tmp", "tmpdir")
            ]
        elif kind == "danger-full-access":
            turn["sandbox_policy"] = {"type": "danger-full-access"}
            turn["permission_profile"]["file_system"] = {"type": "unrestricted"}
        else:
            raise AssertionError(kind)

    return rewrite


def _rewritten(data: bytes, turn: Callable[[dict[str, Any]], None]) -> bytes:
    events = _events(data)
    for event in events:
        if event["type"] == "turn_context":
            turn(event["payload"])
    return _joined(events)


def _thread(data: bytes) -> str:
    return str(json.loads(data.split(b"\n", 1)[0])["payload"]["id"])


def _placed(home: Path, data: bytes, day: str = "2026/12/02") -> Path:
    """``data`` where Codex writes its thread's rollout under ``home``."""
    folder = home / "sessions" / day
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-12-02T15-43-57-{_thread(data)}.jsonl"
    path.write_bytes(data)
    return path


def _capture(release: str, way: str, kind: str, repo: Path) -> tuple[bytes, bytes]:
    """A real exec stream and its rollout, rooted at ``repo``."""
    folder = PRESENTATION / f"codex-{release}"
    here = str(repo).encode()
    stream = (folder / f"{way}.{kind}.jsonl").read_bytes().replace(CAPTURED_ROOT, here)
    rollout = (folder / f"{way}.rollout.jsonl").read_bytes().replace(CAPTURED_ROOT, here)
    return stream, rollout


def _decided(
    stream: bytes, repo: Repo, tmp_path: Path, home: Path, *extra: str | Path
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """``record`` of ``stream`` as codex-exec with ``CODEX_HOME=home``, then ``reconcile
    --mode enforce`` of a reviewer claiming every changed file: (evidence, decision, record's
    stderr)."""
    root, revision, diff, changed = repo
    path, evidence = tmp_path / "exec.jsonl", tmp_path / "evidence.json"
    path.write_bytes(stream)
    done = run_cli(
        "record", path, "--format", "codex-exec", "--revision", revision, "--repo-root", root,
        "--diff", diff, "-o", evidence, *extra, env={"CODEX_HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    decision = enforced_decision(
        evidence, revision=revision, root=root, changed=changed,
        claimed=changed.read_text().split(), folder=tmp_path,
    )  # fmt: skip
    return json.loads(evidence.read_text()), decision, done.stderr


def _statuses(decision: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {
        file["path"]: (file["status"], file.get("unknown_reason"))
        for reviewer in decision["reviewers"]
        for file in reviewer["files"]
    }


def _refused(
    evidence: dict[str, Any], decision: dict[str, Any], reason: str
) -> dict[str, tuple[str, str | None]]:
    """The exec stream was recorded, its evidence says why it verifies nothing, the note says
    so, and no claim is verified."""
    assert evidence["source"] == "codex-exec"
    assert evidence["cannot_verify"]["reason"] == reason
    statuses = _statuses(decision)
    assert "verified" not in {status for status, _ in statuses.values()}
    assert (
        decision["reviewers"][0]["evidence_cannot_verify"]["reason"] == reason
        and f"({reason})" in decision["note"]
    )
    return statuses


# --- honest runs -------------------------------------------------------------------------------


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("sandbox", ["read-only", "workspace-write-no-tmp"])
def test_a_rollout_no_command_could_write_is_recorded_in_the_exec_streams_place(
    sandbox: str, way: str, release: str, odd_repo: Repo, tmp_path: Path
) -> None:
    """Honest: the thread's one rollout, out of the sandbox's reach, decides exactly."""
    stream, rollout = _capture(release, way, "exec", odd_repo[0])
    home = tmp_path / "codex"
    _placed(home, _rewritten(rollout, _sandbox(sandbox)))
    evidence, decision, stderr = _decided(stream, odd_repo, tmp_path, home)
    assert evidence["source"] == "codex-rollout"
    assert evidence["cannot_verify"] is None
    assert {status for status, _ in _statuses(decision).values()} == {"verified"}
    assert "tells the exec stream's story" in stderr


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("way", WAYS)
def test_a_rollout_the_pipeline_gives_is_trusted_for_where_it_was_kept(
    way: str, release: str, odd_repo: Repo, tmp_path: Path
) -> None:
    """``--codex-rollout``: the pipeline vouches for where the file was kept, so the captured
    workspace-write sandbox does not count against it; the story still must hold."""
    stream, rollout = _capture(release, way, "exec", odd_repo[0])
    given = tmp_path / "kept" / "rollout.jsonl"
    given.parent.mkdir()
    given.write_bytes(rollout)
    evidence, decision, _ = _decided(
        stream, odd_repo, tmp_path, tmp_path / "no-home", "--codex-rollout", given
    )
    assert evidence["source"] == "codex-rollout"
    assert {status for status, _ in _statuses(decision).values()} == {"verified"}


# --- what a command of the run could write -----------------------------------------------------


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("way", WAYS)
def test_a_rollout_inside_a_root_the_sandbox_let_commands_write_is_not_evidence(
    way: str, release: str, odd_repo: Repo, tmp_path: Path
) -> None:
    """The captured ``workspace-write`` sandbox let commands write ``/tmp`` and ``$TMPDIR``,
    where this ``CODEX_HOME`` lies: a command could have written the rollout, so the claims are
    unknown (``rollout_writable``), and the Approve stands under the default unknown policy."""
    stream, rollout = _capture(release, way, "exec", odd_repo[0])
    home = tmp_path / "codex"
    _placed(home, rollout)
    evidence, decision, stderr = _decided(stream, odd_repo, tmp_path, home)
    statuses = _refused(evidence, decision, "rollout_writable")
    # every file a command named is unknown, the emptied file's empty cat included (rule 26)
    assert set(statuses.values()) == {("unknown", "rollout_writable")}
    assert decision["verdict_out"] == "approve"
    assert "keep CODEX_HOME outside every writable root" in evidence["cannot_verify"]["detail"]
    assert "the rollout is not evidence" in stderr


@pytest.mark.parametrize("given", [False, True], ids=["found", "given"])
def test_a_rollout_of_a_run_without_a_sandbox_is_never_evidence(
    given: bool, odd_repo: Repo, tmp_path: Path
) -> None:
    stream, rollout = _capture("newest", "cat", "exec", odd_repo[0])
    home = tmp_path / "codex"
    path = _placed(home, _rewritten(rollout, _sandbox("danger-full-access")))
    extra = ("--codex-rollout", path) if given else ()
    evidence, decision, _ = _decided(stream, odd_repo, tmp_path, home, *extra)
    _refused(evidence, decision, "rollout_writable")
    assert "without a sandbox" in evidence["cannot_verify"]["detail"]


# --- a rollout that is not the thread's one record ---------------------------------------------


def _two_candidates(home: Path, rollout: bytes) -> None:
    _placed(home, rollout)
    _placed(home, rollout, day="9999/12/31")


def _a_link(home: Path, rollout: bytes) -> None:
    real = home.parent / "elsewhere.jsonl"
    real.write_bytes(rollout)
    folder = home / "sessions" / "2026" / "12" / "02"
    folder.mkdir(parents=True)
    (folder / f"rollout-2026-12-02T15-43-57-{_thread(rollout)}.jsonl").symlink_to(real)


def _a_linked_folder(home: Path, rollout: bytes) -> None:
    real = home.parent / "days"
    _placed(real, rollout)
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "2026").symlink_to(real / "sessions" / "2026")


def _another_threads_meta(home: Path, rollout: bytes) -> None:
    events = _events(rollout)
    thread = _thread(rollout)
    events[0]["payload"]["id"] = "01a2376d-0000-7000-8000-000000000000"
    folder = home / "sessions" / "2026" / "12" / "02"
    folder.mkdir(parents=True)
    (folder / f"rollout-2026-12-02T15-43-57-{thread}.jsonl").write_bytes(_joined(events))


NOT_ONE = {
    "two candidates": (_two_candidates, "2 files are named as its rollout"),
    "a symbolic link": (_a_link, "is a symbolic link"),
    "a linked folder": (_a_linked_folder, "is a symbolic link"),
    "another thread's session_meta": (_another_threads_meta, "its session_meta names"),
}


@pytest.mark.parametrize("case", sorted(NOT_ONE))
def test_a_rollout_that_is_not_the_threads_one_regular_file_is_not_evidence(
    case: str, odd_repo: Repo, tmp_path: Path
) -> None:
    place, said = NOT_ONE[case]
    stream, rollout = _capture("newest", "cat", "exec", odd_repo[0])
    home = tmp_path / "codex"
    place(home, _rewritten(rollout, _sandbox("read-only")))
    evidence, decision, _ = _decided(stream, odd_repo, tmp_path, home)
    _refused(evidence, decision, "rollout_rejected")
    assert said in evidence["cannot_verify"]["detail"]


# --- a rollout that does not tell the exec stream's story --------------------------------------


def _command_items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        event["payload"]["item"]
        for event in events
        if event["type"] == "event_msg"
        and event["payload"].get("type") == "item_completed"
        and event["payload"]["item"].get("type") == "CommandExecution"
    ]


def _outputs(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        event["payload"]
        for event in events
        if event["type"] == "response_item"
        and event["payload"].get("type") == "function_call_output"
    ]


def _forged(rollout: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One way of making the rollout say more than the run did, drawn at random: a command the
    exec stream never ran, one dropped, two swapped, a command's words changed, an output the
    model got replaced by more or other text."""
    events = _events(rollout)
    items, outputs = _command_items(events), _outputs(events)
    n = rng.randrange(len(items))
    way = rng.choice(["added", "dropped", "swapped", "respelled", "output"])
    if way == "added":
        at = events.index(next(e for e in events if e["payload"] is outputs[n]))
        copy = json.loads(json.dumps(events[at - 1]))
        copy["payload"]["item"]["command"] = ["/bin/bash", "-lc", f"cat forged_{n}.py"]
        events.insert(at + 1, copy)
    elif way == "dropped":
        events = [e for e in events if e["payload"].get("item") is not items[n]]
    elif way == "swapped":
        m = (n + 1) % len(items)
        if items[n]["command"] == items[m]["command"]:
            items[n]["command"] = [*items[n]["command"], "#"]
        items[n]["command"], items[m]["command"] = items[m]["command"], items[n]["command"]
    elif way == "respelled":
        argv = items[n]["command"]
        argv[-1] = argv[-1] + rng.choice([" ", ";true", " big.py", "\n"])
    else:
        text = outputs[n]["output"]
        head, _, body = text.partition("Output:\n")
        outputs[n]["output"] = head + "Output:\n" + body + rng.choice(["x", "\nmore = 1", "\0"])
    return way, _joined(events)


@pytest.mark.parametrize("seed", range(12))
def test_a_rollout_that_tells_another_story_is_never_evidence(
    seed: int, odd_repo: Repo, tmp_path: Path
) -> None:
    """Generated: a rollout rewritten in any of these ways, even where no command could have
    written it (read-only), is refused, and the claims are unknown."""
    rng = random.Random(seed)
    release, way = rng.choice(RELEASES), rng.choice(WAYS)
    stream, rollout = _capture(release, way, "exec", odd_repo[0])
    how, forged = _forged(_rewritten(rollout, _sandbox("read-only")), rng)
    home = tmp_path / "codex"
    _placed(home, forged)
    evidence, decision, _ = _decided(stream, odd_repo, tmp_path, home)
    assert evidence["cannot_verify"] is not None, how
    _refused(evidence, decision, "rollout_rejected")
    assert "does not tell the exec stream's story" in evidence["cannot_verify"]["detail"], how


def test_every_way_of_telling_another_story_is_caught_in_process() -> None:
    """The same rewrites, many more of them, on the pure check."""
    for seed in range(400):
        rng = random.Random(seed)
        folder = PRESENTATION / f"codex-{rng.choice(RELEASES)}"
        name = rng.choice([*WAYS, "failed"])
        steps = exec_story(_lines(folder / f"{name}.exec.jsonl"))
        assert not isinstance(steps, str)
        how, forged = _forged((folder / f"{name}.rollout.jsonl").read_bytes(), rng)
        story = rollout_story(forged.splitlines(keepends=True))
        assert story_differs(steps, story) is not None, (seed, how)


# --- a rollout that is gone --------------------------------------------------------------------


def test_a_thread_whose_rollout_is_missing_is_said_by_name(odd_repo: Repo, tmp_path: Path) -> None:
    """The model renamed its own rollout: record finds none, records the exec stream, and the
    claims are unknown for ``rollout_missing``, the thread named in the decision's note."""
    stream, rollout = _capture("newest", "cat", "exec", odd_repo[0])
    home = tmp_path / "codex"
    hidden = _placed(home, rollout)
    hidden.rename(hidden.with_name("rollout-2026-12-02T15-43-57-renamed.jsonl"))
    evidence, decision, stderr = _decided(stream, odd_repo, tmp_path, home)
    _refused(evidence, decision, "rollout_missing")
    thread = _thread(rollout)
    assert f"thread {thread}" in decision["note"]
    assert f"no rollout of thread {thread}" in stderr
    # the exec stream's own evidence is as before: what it shows nothing of is unsupported
    assert evidence["files"], "the exec stream's outputs are still recorded"
