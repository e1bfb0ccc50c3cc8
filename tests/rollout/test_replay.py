"""`coverage-gate replay DIR`: candidate settings decided again over receipts, per repository,
with the audit list; the counts over the simulated rollout are pinned."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.contracts.model import (
    CitationPolicy,
    DepthPolicy,
    Mode,
    ModeSource,
    PolicySource,
    UnknownPolicy,
)
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.receipt_store import read
from coverage_gate.rollout.receipts import SUFFIX
from coverage_gate.rollout.replay import Candidate, FlagAnswer
from coverage_gate.rollout.simulation import write_receipts
from tests.conftest import lying_reconcile_args

runner = CliRunner()
SNAPSHOT = Path(__file__).parents[2] / "coverage_gate/examples/flags.snapshot.json"
REPOS = ("acme/docs", "acme/frontend", "acme/infra", "acme/ml", "acme/payments", "acme/search")


@pytest.fixture(scope="module")
def rollout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("rollout") / "receipts"
    assert write_receipts(folder, reviews=70) == 70 * len(REPOS)
    return folder


def replay_json(folder: Path, *candidate: str) -> dict[str, Any]:
    result = runner.invoke(app, ["replay", str(folder), *candidate, "--format", "json"])
    assert result.exit_code == 0, result.output
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


def counts(document: dict[str, Any], key: str) -> dict[str, int]:
    return {row["repo"]: row[key] for row in document["repositories"]}


def only(**changed: int) -> dict[str, int]:
    return {repo: changed.get(repo.split("/")[1], 0) for repo in REPOS}


# The counts below follow from coverage_gate/rollout/simulation.py's plans, 70 reviews a repository, review
# i's verdict request_changes when i % 10 == 3 (7 of 70), comment when i % 20 == 7 (4 of 70),
# approve otherwise (59 of 70); only an approval can be downgraded, only an approval's
# would-downgrade counts:
# * frontend lies every 3rd review (24 of 70): 20 of them approvals (3, 33, 63 request changes;
#   27 a comment);
# * payments cites one invented line, once (review 35, an approval), and has no liar: it fails
#   its citation check (citations_failed) under the default citation policy, downgrade;
# * payments skims a file every 4th review (i % 4 == 1, 18 of 70; partial depth, no file left
#   unread): 15 of them approvals (13, 33, 53 request changes), none is review 35;
# * ml's second reviewer has no per-file evidence: each of its 59 approvals is unverifiable.
# * search's style reviewer's client is upgraded from review 42 on: its claims are unknown
#   (format drift), never unsupported.


def test_enforce_changes_the_verdicts_the_shadow_rollout_flagged(rollout: Path) -> None:
    """Enforcing everywhere turns exactly the would-downgrade approvals into comments:
    frontend's 20 liars' approvals, payments' one approval citing an invented line; ml's blind
    reviewer changes nothing (unknown policy accept)."""
    document = replay_json(rollout, "--mode", "enforce")
    assert counts(document, "newly_downgraded") == only(frontend=20, payments=1)
    assert counts(document, "verdict_changed") == only(frontend=20, payments=1)
    assert counts(document, "would_downgrade_changed") == only()
    assert counts(document, "receipts") == dict.fromkeys(REPOS, 70)
    assert sum(counts(document, "unchanged").values()) == 420 - 21
    assert len(document["changes"]) == 21
    # receipts are named by their content's hash, so the order of the changes is no plan's
    entry = next(e for e in document["changes"] if e["repo"] == "acme/frontend")
    assert set(entry) >= {"receipt", "repo", "revision", "agents", "verdict_before", "why"}
    assert (entry["verdict_before"], entry["verdict_after"]) == ("approve", "comment")
    assert entry["why"] == "mode shadow → enforce; evidence check: claims_unsupported"
    assert (rollout / f"{entry['receipt']}{SUFFIX}").is_file()
    (cited,) = [e for e in document["changes"] if e["repo"] == "acme/payments"]
    assert cited["revision"] == f"{35:040x}"
    assert cited["why"] == "mode shadow → enforce; evidence check: citations_failed"


def test_a_stricter_depth_policy_in_shadow_changes_no_verdict(rollout: Path) -> None:
    """all-hunks in shadow: payments' 15 skimmed approvals would now downgrade, no verdict
    changes; any-hunk passes a skimmed file (one hunk seen), and no file is left unread."""
    document = replay_json(rollout, "--depth-policy", "all-hunks")
    assert counts(document, "verdict_changed") == only()
    assert counts(document, "would_downgrade_changed") == only(payments=15)
    any_hunk = replay_json(rollout, "--depth-policy", "any-hunk")
    assert counts(any_hunk, "would_downgrade_changed") == only()
    enforced = replay_json(rollout, "--depth-policy", "all-hunks", "--mode", "enforce")
    # payments: its 15 skimmed approvals and its one approval citing an invented line
    assert counts(enforced, "newly_downgraded") == only(frontend=20, payments=16)


def test_accepting_failed_citations_lifts_payments_citation_downgrade(rollout: Path) -> None:
    """--citation-policy accept: payments' approval citing an invented line no longer would
    downgrade, and under enforce it is no longer turned into a comment; nothing else changes."""
    document = replay_json(rollout, "--citation-policy", "accept")
    assert counts(document, "would_downgrade_changed") == only(payments=1)
    assert counts(document, "verdict_changed") == only()
    (entry,) = document["changes"]
    assert entry["revision"] == f"{35:040x}"
    assert entry["why"] == "citation policy downgrade → accept; evidence check passes"
    assert document["candidate"] == "citation policy accept"
    enforced = replay_json(rollout, "--citation-policy", "accept", "--mode", "enforce")
    assert counts(enforced, "newly_downgraded") == only(frontend=20)
    assert counts(enforced, "would_downgrade_changed") == only(payments=1)


def test_downgrading_unknown_claims_flags_the_blind_repository(rollout: Path) -> None:
    """ml's 59 approvals carry claims its blind reviewer's evidence cannot check; so do search's
    23 approvals from the day its style reviewer's client was upgraded (reviews 42 to 69, five of
    them not approvals: 43, 53, 63 request changes, 47, 67 comments), whose streams drifted."""
    document = replay_json(rollout, "--unknown-policy", "downgrade")
    assert counts(document, "would_downgrade_changed") == only(ml=59, search=23)
    assert counts(document, "verdict_changed") == only()
    assert {e["why"] for e in document["changes"]} == {
        "unknown policy accept → downgrade; evidence check: claims_unverifiable"
    }


def test_a_candidate_snapshot_is_evaluated_per_repository(rollout: Path) -> None:
    """The example snapshot enforces acme/payments only: its one approval citing an invented
    line changes (the payload sets no citation policy: downgrade, the default)."""
    document = replay_json(rollout, "--flags", str(SNAPSHOT))
    assert counts(document, "newly_downgraded") == only(payments=1)
    assert {e["repo"] for e in document["changes"]} == {"acme/payments"}


def test_text_and_markdown_show_the_same_counts(rollout: Path) -> None:
    text = runner.invoke(app, ["replay", str(rollout), "--mode", "enforce"])
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0] == f"Replay of 420 receipt(s) in {rollout} under mode enforce"
    row = next(line for line in lines if line.startswith("acme/frontend"))
    assert row.split()[1:] == ["70", "20", "20", "0", "0", "50"]
    assert "changes (21):" in lines
    markdown = runner.invoke(
        app, ["replay", str(rollout), "--mode", "enforce", "--format", "markdown"]
    )
    assert "| `acme/frontend` | 70 | 20 | 20 | 0 | 0 | 50 |" in markdown.stdout
    assert "#### Changes (21)" in markdown.stdout


def test_rolling_back_to_shadow_restores_the_enforced_verdicts(tmp_path: Path) -> None:
    folder = tmp_path / "receipts"
    args = lying_reconcile_args(tmp_path, "--receipt", str(folder), "--mode", "enforce")
    assert runner.invoke(app, args).exit_code == 0
    document = replay_json(folder, "--mode", "shadow")
    assert counts(document, "no_longer_downgraded") == {"acme/api": 1}
    (entry,) = document["changes"]
    assert (entry["verdict_before"], entry["verdict_after"]) == ("comment", "approve")


def test_no_candidate_is_a_usage_error(rollout: Path) -> None:
    result = runner.invoke(app, ["replay", str(rollout)])
    assert result.exit_code == ExitCode.USAGE
    assert "give a candidate" in result.stderr


def test_a_tampered_receipt_is_named_and_fails_the_replay(tmp_path: Path) -> None:
    """A receipt whose content no longer hashes to its name is named on stderr, and the replay
    exits 3 (the others replayed: tests/rollout/test_replay_folder.py)."""
    folder = tmp_path / "receipts"
    assert (
        runner.invoke(app, lying_reconcile_args(tmp_path, "--receipt", str(folder))).exit_code == 0
    )
    (path,) = folder.glob(f"*{SUFFIX}")
    document = json.loads(gzip.decompress(path.read_bytes()))
    document["decision"]["would_downgrade"] = False
    path.write_bytes(gzip.compress(json.dumps(document).encode(), mtime=0))
    (folder / "notes.txt").write_text("not a receipt\n")
    result = runner.invoke(app, ["replay", str(folder), "--mode", "enforce"])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt {path}: its content hashes to" in result.stderr


def test_other_files_are_skipped_and_counted(tmp_path: Path) -> None:
    folder = tmp_path / "receipts"
    assert (
        runner.invoke(app, lying_reconcile_args(tmp_path, "--receipt", str(folder))).exit_code == 0
    )
    (folder / "notes.txt").write_text("not a receipt\n")
    document = replay_json(folder, "--mode", "enforce")
    assert document["skipped_files"] == 1
    assert document["receipts"] == 1


# --- the candidate setting of a receipt --------------------------------------------------------


def _receipt(tmp_path: Path) -> Any:
    folder = tmp_path / "receipts"
    assert (
        runner.invoke(app, lying_reconcile_args(tmp_path, "--receipt", str(folder))).exit_code == 0
    )
    (path,) = folder.glob(f"*{SUFFIX}")
    return read(path)


def test_an_option_beats_the_snapshot_which_beats_the_recorded_setting(tmp_path: Path) -> None:
    receipt = _receipt(tmp_path)  # recorded: shadow (override), accept/accept (default)
    asked: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []

    def flags(repo: str, agents: tuple[str, ...], formats: tuple[str, ...]) -> FlagAnswer:
        asked.append((repo, agents, formats))
        return FlagAnswer(Mode.ENFORCE, ModeSource.SNAPSHOT, depth_policy=DepthPolicy.ANY_HUNK)

    setting = Candidate(flags=flags).setting(receipt)
    assert (setting.mode, setting.mode_source) == (Mode.ENFORCE, ModeSource.SNAPSHOT)
    assert (setting.depth_policy, setting.depth_policy_source) == (
        DepthPolicy.ANY_HUNK,
        PolicySource.PAYLOAD,
    )
    assert (setting.unknown_policy_source) is PolicySource.DEFAULT
    assert asked == [("acme/api", ("security",), ("pi-rpc",))]
    setting = Candidate(mode=Mode.OFF, depth_policy=DepthPolicy.ALL_HUNKS, flags=flags).setting(
        receipt
    )
    assert (setting.mode, setting.mode_source) == (Mode.OFF, ModeSource.OVERRIDE)
    assert (setting.depth_policy, setting.depth_policy_source) == (
        DepthPolicy.ALL_HUNKS,
        PolicySource.CLI,
    )
    recorded = Candidate(unknown_policy=UnknownPolicy.DOWNGRADE).setting(receipt)
    assert (recorded.mode, recorded.mode_source) == (Mode.SHADOW, ModeSource.OVERRIDE)


def test_the_citation_policy_comes_from_the_option_then_the_payload(tmp_path: Path) -> None:
    """A snapshot's payload ``citation_policy`` is the candidate's (source payload); without
    one, the default, downgrade; ``--citation-policy`` beats both."""
    receipt = _receipt(tmp_path)
    assert receipt.inputs.citation_policy is CitationPolicy.DOWNGRADE

    def accepting(repo: str, agents: tuple[str, ...], formats: tuple[str, ...]) -> FlagAnswer:
        return FlagAnswer(Mode.ENFORCE, ModeSource.SNAPSHOT, citation_policy=CitationPolicy.ACCEPT)

    def silent(repo: str, agents: tuple[str, ...], formats: tuple[str, ...]) -> FlagAnswer:
        return FlagAnswer(Mode.ENFORCE, ModeSource.SNAPSHOT)

    setting = Candidate(flags=accepting).setting(receipt)
    assert (setting.citation_policy, setting.citation_policy_source) == (
        CitationPolicy.ACCEPT,
        PolicySource.PAYLOAD,
    )
    setting = Candidate(flags=silent).setting(receipt)
    assert (setting.citation_policy, setting.citation_policy_source) == (
        CitationPolicy.DOWNGRADE,
        PolicySource.DEFAULT,
    )
    setting = Candidate(citation_policy=CitationPolicy.DOWNGRADE, flags=accepting).setting(receipt)
    assert (setting.citation_policy, setting.citation_policy_source) == (
        CitationPolicy.DOWNGRADE,
        PolicySource.CLI,
    )


def test_an_audit_line_says_yes_or_no_never_a_python_value() -> None:
    from coverage_gate.commands.replay import _entry_line  # noqa: PLC0415

    entry = {"receipt": "ab" * 32, "repo": "acme/api", "revision": "abc123", "agents": ["r"],
             "verdict_before": "approve", "verdict_after": "comment", "would_downgrade_before": True,
             "would_downgrade_after": False, "why": "mode shadow → enforce"}  # fmt: skip
    line = _entry_line(entry)
    assert "(enforce would downgrade: yes → no)" in line
    assert "True" not in line and "False" not in line
