"""Every client's presentation, over real captures (DESIGN §6 rules 23-25): an honest read is
never a mismatch, and a file whose text never reached the model is never verified.

``tests/data/presentation/<client>-<release>/<way>.jsonl``: each real client, at both releases CI
runs, read ``make_odd_repo.sh``'s fifteen changed files honestly (with its read tool, through
``git diff`` then ``cat``, through ``cat`` alone; ``capture_content.sh odd``) and claimed all
fifteen. The repository is rebuilt here, in a folder this test makes, and each capture's root is
rewritten to it. ``truth.json`` says, per capture, which files' text never reached the model
(written by hand from the mock model's ``received.json``, not from what the gate says).

What a user runs is what is checked: ``coverage-gate record`` then ``reconcile --mode enforce``,
whole processes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import enforced_decision, run_cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "presentation"
CAPTURED_ROOT = b"/home/user/repo"
_TRUTH = json.loads((DATA / "truth.json").read_text())
TRUTH = _TRUTH["not_received"]
CHANGE_CUT = _TRUTH["change_cut"]
FORMATS = {
    "claude": "claude-code",
    "copilot": "copilot-cli",
    "gemini": "gemini-cli",
    "opencode": "opencode",
    "pi": "pi-rpc",
    "qwen": "qwen-code",
}

RELEASES = ("newest", "older")
CHANGED = {
    "big.py", "blob.bin", "bom.py", "control.txt", "crlf.txt", "emptied.txt", "latin1.txt",
    "lone_cr.txt", "long_line.js", "no_newline.txt", "one_line.txt", "reminder.md", "sjis.txt",
    "tabs.py", "unicode.md",
}  # fmt: skip


def _captures() -> list[str]:
    return sorted(str(path.relative_to(DATA)) for path in DATA.glob("*/*.jsonl"))


def _format(capture: str) -> str:
    if capture.endswith(".rollout.jsonl"):
        return "codex-rollout"
    if capture.endswith(".exec.jsonl"):
        return "codex-exec"
    return FORMATS[capture.split("-", 1)[0]]


def test_the_truth_covers_every_capture() -> None:
    assert sorted(TRUTH) == _captures()


def _recorded(
    data: bytes, stream_format: str, odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> tuple[dict[str, Any], dict[str, str]]:
    """``record`` then ``reconcile --mode enforce`` of a capture claiming every changed file,
    as whole processes: the evidence, and each file's status."""
    document, decision = _decided(data, stream_format, odd_repo, tmp_path)
    statuses = {
        file["path"]: file["status"]
        for reviewer in decision["reviewers"]
        for file in reviewer["files"]
    }
    return document, statuses


def _decided(
    data: bytes, stream_format: str, odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The evidence and the decision of ``_recorded``."""
    repo, revision, diff, changed = odd_repo
    stream = tmp_path / "stream.jsonl"
    stream.write_bytes(data.replace(CAPTURED_ROOT, str(repo).encode()))
    evidence = tmp_path / "evidence.json"
    done = run_cli(
        "record", stream, "--format", stream_format, "--revision", revision,
        "--repo-root", repo, "--diff", diff, "-o", evidence,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    decision = enforced_decision(
        evidence, revision=revision, root=repo, changed=changed,
        claimed=changed.read_text().split(), folder=tmp_path,
    )  # fmt: skip
    return json.loads(evidence.read_text()), decision


@pytest.mark.parametrize("capture", _captures())
def test_an_honest_read_is_never_a_mismatch_and_unreceived_text_never_verifies(
    capture: str, odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    document, statuses = _recorded(
        (DATA / capture).read_bytes(), _format(capture), odd_repo, tmp_path
    )
    mismatched = {
        file["path"]: file["content"]
        for file in document["files"]
        if (file.get("content") or {}).get("mismatched")
    }
    assert mismatched == {}, f"{capture}: honest reads called a mismatch"
    not_received = set(TRUTH[capture])
    if capture.endswith(".exec.jsonl"):
        # `codex exec --json` cannot show what the model received (DESIGN §6 rule 26): what
        # its outputs hold is unknown at best, never verified; what none shows, unsupported
        assert "verified" not in statuses.values(), capture
        return
    verified = {path for path, status in statuses.items() if status == "verified"}
    assert not (verified & not_received), f"{capture}: text the model never got verified"
    assert {statuses[path] for path in not_received} <= {"unsupported"}
    # a line the client cut before its change shows nothing of it: shallow, whatever the policy
    change_cut = set(CHANGE_CUT.get(capture, ()))
    assert {path: statuses[path] for path in change_cut} == dict.fromkeys(change_cut, "shallow")
    unverified = set(statuses) - verified - not_received - change_cut
    assert unverified == set(), f"{capture}: text that reached the model not verified"


# Each client's `cat emptied.txt` printed nothing, and each said so in its own words: a plain
# `cat` that printed nothing shows the file empty (DESIGN §6 rule 24). Rewritten here as a
# reviewer that did not look would write it, the same nothing shows nothing.
CAT_CAPTURES = [f"{client}-{release}/cat.jsonl" for client in FORMATS for release in RELEASES]
NOT_PLAIN_CATS = {
    "into /dev/null": "cat emptied.txt >/dev/null",
    "piped to head -c 0": "cat emptied.txt | head -c 0",
    "another program": "wc -c emptied.txt",
    "a test": "test -f emptied.txt",
    "an option": "cat -v emptied.txt",
    "a glob": "cat emptied.tx?",
    "a variable": "cat $F",
    "a command list": "true; cat emptied.txt",
}
PLAIN_CATS = {"with --": "cat -- emptied.txt", "quoted": "cat 'emptied.txt'"}
SPELLINGS = {
    **{name: (command, "unsupported") for name, command in NOT_PLAIN_CATS.items()},
    **{name: (command, "verified") for name, command in PLAIN_CATS.items()},
}


def _rewritten(capture: str, command: str) -> bytes:
    data = (DATA / capture).read_bytes()
    assert data.count(b"cat emptied.txt") >= 1
    return data.replace(b"cat emptied.txt", json.dumps(command)[1:-1].encode())


@pytest.mark.parametrize("capture", CAT_CAPTURES)
@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_command_that_printed_nothing_shows_an_empty_file_only_when_it_is_a_plain_cat(
    capture: str, spelling: str, odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    command, status = SPELLINGS[spelling]
    data = _rewritten(capture, command)
    _document, statuses = _recorded(data, _format(capture), odd_repo, tmp_path)
    assert statuses["emptied.txt"] == status


@pytest.mark.parametrize("capture", CAT_CAPTURES)
def test_a_plain_cat_of_a_file_that_is_not_empty_showing_nothing_shows_nothing(
    capture: str, odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    """The emptied file's call, rewritten to name one_line.txt: the output that is nothing is
    not one_line.txt's text, so only one_line.txt's own call (which printed it) credits it."""
    data = _rewritten(capture, "cat one_line.txt")
    document, statuses = _recorded(data, _format(capture), odd_repo, tmp_path)
    assert statuses["emptied.txt"] == "unsupported"
    (one_line,) = (file for file in document["files"] if file["path"] == "one_line.txt")
    assert one_line["content"]["credited"] == 1


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("client", ["opencode", "gemini"])
def test_a_change_past_the_clients_cut_of_a_line_is_unseen(
    client: str, release: str, odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    """OpenCode's ``read`` and Gemini CLI's ``read_file`` cut long_line.js's 3,200-character line
    2 at 2,000 characters (OpenCode's text shows its marker; Gemini's stream, which does not carry
    the text, says "some lines were shortened"); the change is at the line's end. Depth counts
    line 2 unseen, cut before its change, and a cut line alone verifies nothing: the file is
    shallow under the default depth policy too (DESIGN §6 rules 25 and 29)."""
    capture = f"{client}-{release}/read.jsonl"
    data = (DATA / capture).read_bytes()
    document, decision = _decided(data, _format(capture), odd_repo, tmp_path)
    (long_line,) = (file for file in document["files"] if file["path"] == "long_line.js")
    assert long_line["content"]["matched" if client == "opencode" else "unchecked"] == 1
    (status,) = (f["status"] for r in decision["reviewers"] for f in r["files"]
                 if f["path"] == "long_line.js")  # fmt: skip
    assert status == "shallow"
    assert "`long_line.js`: changed lines 2 not seen" in decision["note"]
    assert "1 cut by the client before the change: a cut line alone verifies" in decision["note"]
    assert long_line["depth"]["depth"] == "none"
    assert long_line["depth"]["changed_lines_cut"] == 1
    assert "a cut line alone verifies nothing" in long_line["depth"]["detail"]
    assert {"start": 2, "end": 2} in long_line["depth"]["unseen"]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("client", ["opencode", "gemini"])
def test_a_new_line_cut_by_the_client_is_unseen_past_the_cut(
    client: str, release: str, odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    """The same reads, with long_line.js's line 2 a new line in the pinned diff (its old line
    left out): what the cut did not show is no old line's, so the line is unseen, however its
    first 2,000 characters begin, and the file is shallow (DESIGN §6 rule 29)."""
    repo, revision, diff, changed = odd_repo
    pinned = diff.read_bytes()  # other files' sections hold legacy encodings: bytes
    section = pinned.split(b"diff --git a/long_line.js b/long_line.js\n")[1]
    section = section.split(b"diff --git ")[0]
    old = next(line for line in section.splitlines() if line.startswith(b"-const TABLE"))
    assert b"@@ -1,3 +1,3 @@" in section
    added = section.replace(old + b"\n", b"").replace(b"@@ -1,3 +1,3 @@", b"@@ -1,2 +1,3 @@")
    new_diff = tmp_path / "added.diff"
    new_diff.write_bytes(pinned.replace(section, added))
    capture = f"{client}-{release}/read.jsonl"
    data = (DATA / capture).read_bytes()
    document, statuses = _recorded(
        data, _format(capture), (repo, revision, new_diff, changed), tmp_path
    )
    (long_line,) = (file for file in document["files"] if file["path"] == "long_line.js")
    assert statuses["long_line.js"] == "shallow"
    assert long_line["depth"]["depth"] == "none"
    assert long_line["depth"]["changed_lines_cut"] == 1
    assert {"start": 2, "end": 2} in long_line["depth"]["unseen"]


def test_a_rollout_of_another_thread_is_refused_naming_both(
    odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    repo, revision, diff, _changed = odd_repo
    stream = tmp_path / "exec.jsonl"
    stream.write_bytes((DATA / "codex-newest/cat.exec.jsonl").read_bytes())
    other = DATA / "codex-older/cat.rollout.jsonl"
    done = run_cli(
        "record", stream, "--format", "codex-exec", "--revision", revision, "--repo-root", repo,
        "--diff", diff, "-o", tmp_path / "evidence.json", "--codex-rollout", other,
    )  # fmt: skip
    assert done.returncode == 3
    assert "is thread 01a2376e-" in done.stderr and "the stream is thread 01a2376d-" in done.stderr
    assert not (tmp_path / "evidence.json").exists()
    done = run_cli(
        "record", other, "--format", "codex-rollout", "--revision", "abc", "--codex-rollout", other
    )
    assert done.returncode == 2
    assert "--codex-rollout is for a codex-exec stream" in done.stderr


# What a mismatch showed instead, per client version, as `report` lists it (DESIGN §6 rule 24):
# Claude Code's honest read of no_newline.txt (`zeta = 7`), rewritten to the line the change
# removed (`older`) and to a line nobody wrote (`other`); the edited capture reconciles with
# telemetry on, and `report` over that telemetry says which client version and kind.
MISMATCHES = {"older": b"zeta = 6", "other": b"zeta = 8"}


@pytest.mark.parametrize("kind", sorted(MISMATCHES))
def test_a_mismatch_says_what_it_showed_and_report_lists_it_by_client_version(
    kind: str, odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    data = (DATA / "claude-newest/read.jsonl").read_bytes()
    assert data.count(b"zeta = 7") == 2  # the text the model got, and the result's file copy
    data = data.replace(b"zeta = 7", MISMATCHES[kind])
    document, statuses = _recorded(data, "claude-code", odd_repo, tmp_path)
    (entry,) = (file for file in document["files"] if file["path"] == "no_newline.txt")
    assert entry["content"]["mismatch_kinds"] == {kind: 1}
    assert statuses["no_newline.txt"] == "unsupported"
    done = run_cli("report", "--format", "json", "--min-approvals", "1")
    assert done.returncode == 0, done.stderr
    (repo,) = json.loads(done.stdout)["repositories"]
    assert repo["content"]["mismatches"] == [
        {"format": "claude-code", "client_version": "2.1.328", "kind": kind, "files": 1}
    ]
    done = run_cli("report", "--min-approvals", "1")
    assert f"mismatched files of claude-code 2.1.328: 1 {kind}" in done.stdout


def test_presentation_drift_is_counted_per_client_version_in_the_report(
    odd_repo: tuple[Path, str, Path, Path], tmp_path: Path
) -> None:
    """A read whose text aligns with nothing of its file, in no presentation the adapter
    recognises (not numbered), is no mismatch: presentation drift, which `report` counts by
    client version beside every other kind of drift."""
    data = (DATA / "claude-newest/read.jsonl").read_bytes()
    data = data.replace(b"1\\talpha beta gamma\\n2\\tdelta epsilon\\n3\\tzeta = 7", b"Q\\nR")
    document, _statuses = _recorded(data, "claude-code", odd_repo, tmp_path)
    assert [entry["kind"] for entry in document["drift"]] == ["presentation"]
    done = run_cli("report", "--format", "json", "--min-approvals", "1")
    (repo,) = json.loads(done.stdout)["repositories"]
    (row,) = repo["drift"]
    assert (row["client_version"], row["kinds"]) == ("2.1.328", {"presentation": 1})
