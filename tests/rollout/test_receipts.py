"""Review receipts: `reconcile --receipt DIR` and `receipts verify DIR` (DESIGN §7.7 as a
command). A receipt is self-contained (re-decided offline, the repository's answers taken from
its record), content-addressed, and any change to it fails verification with the receipt named."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.receipts import SUFFIX, canonical
from tests.conftest import approve_args, lying_reconcile_args
from tests.core.test_path_decoys import make_repo

runner = CliRunner()


def receipts_in(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{SUFFIX}"))


def write_one(work: Path, *extra: str) -> Path:
    """Reconcile the lying reviewer with a receipt; the one receipt file written."""
    folder = work / "receipts"
    result = runner.invoke(app, lying_reconcile_args(work, "--receipt", str(folder), *extra))
    assert result.exit_code == 0, result.output
    (path,) = receipts_in(folder)
    assert f"receipt {path}" in result.stderr
    return path


def verify(folder: Path) -> Any:
    return runner.invoke(app, ["receipts", "verify", str(folder)])


def content_of(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return loaded


def rewrite(path: Path, change: Callable[[dict[str, Any]], None], *, rename: bool) -> Path:
    """Change a receipt's content; keep its name, or name it after its new hash (a forger who
    knows the scheme)."""
    document = content_of(path)
    change(document)
    data = canonical(document)
    target = path.with_name(hashlib.sha256(data).hexdigest() + SUFFIX) if rename else path
    path.unlink()
    target.write_bytes(gzip.compress(data, mtime=0))
    return target


def test_a_receipt_is_named_after_its_content_and_verifies(tmp_path: Path) -> None:
    path = write_one(tmp_path)
    data = gzip.decompress(path.read_bytes())
    assert path.name == hashlib.sha256(data).hexdigest() + SUFFIX
    assert data == canonical(json.loads(data))  # the content is its canonical JSON
    assert path.read_bytes()[4:8] == b"\0\0\0\0"  # gzip mtime 0: the same bytes every time
    document = json.loads(data)
    assert document["schema"] == "coverage-gate/receipt"
    assert document["inputs"]["mode"] == "shadow"
    assert document["inputs"]["mode_source"] == "override"
    assert document["inputs"]["reviewers"][0]["evidence"]["files"][0]["path"] == "src/api.py"
    assert document["decision"]["would_downgrade"] is True
    result = verify(path.parent)
    assert result.exit_code == 0, result.output
    assert result.stdout == "1 of 1 receipt(s) verified\n"


def test_two_identical_decisions_are_one_receipt_file(tmp_path: Path) -> None:
    first = write_one(tmp_path)
    before = first.read_bytes()
    again = write_one(tmp_path)
    assert again == first
    assert again.read_bytes() == before


def test_a_different_mode_is_a_different_receipt(tmp_path: Path) -> None:
    folder = tmp_path / "receipts"
    for mode in ("shadow", "enforce"):
        args = lying_reconcile_args(tmp_path, "--receipt", str(folder), "--mode", mode)
        assert runner.invoke(app, args).exit_code == 0
    assert len(receipts_in(folder)) == 2


def test_a_decision_altered_in_place_fails_with_both_hashes(tmp_path: Path) -> None:
    path = write_one(tmp_path)

    def approve(document: dict[str, Any]) -> None:
        document["decision"]["would_downgrade"] = False

    rewrite(path, approve, rename=False)
    result = verify(path.parent)
    assert result.exit_code == ExitCode.BAD_INPUT
    actual = hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest()
    assert f"receipt {path} fails: its content hashes to {actual}, not to its name" in (
        result.stderr
    )
    assert path.name.removesuffix(SUFFIX) in result.stderr
    assert result.stdout == ""  # exit 3: nothing on stdout, the count on stderr
    assert result.stderr.endswith("coverage-gate: error: 0 of 1 receipt(s) verified\n")


def test_a_decision_altered_and_renamed_fails_at_the_field(tmp_path: Path) -> None:
    path = write_one(tmp_path)

    def kept(document: dict[str, Any]) -> None:
        document["decision"]["verdict_out"] = "comment"

    forged = rewrite(path, kept, rename=True)
    result = verify(forged.parent)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert (
        f"receipt {forged} fails: deciding again gives another decision: first difference at "
        "'verdict_out'" in result.stderr
    )


def test_evidence_altered_fails_because_the_decision_no_longer_follows(tmp_path: Path) -> None:
    path = write_one(tmp_path)

    def read_it_all(document: dict[str, Any]) -> None:
        evidence = document["inputs"]["reviewers"][0]["evidence"]
        evidence["files"].append(dict(evidence["files"][0], path="src/db.py"))

    forged = rewrite(path, read_it_all, rename=True)
    result = verify(forged.parent)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt {forged} fails: deciding again gives another decision" in result.stderr


def test_one_byte_of_a_compressed_receipt_changed_names_the_receipt(tmp_path: Path) -> None:
    path = write_one(tmp_path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    result = verify(path.parent)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt {path} fails:" in result.stderr
    assert "Traceback" not in result.output


def test_a_truncated_gzip_fails_named(tmp_path: Path) -> None:
    path = write_one(tmp_path)
    path.write_bytes(path.read_bytes()[:-12])
    result = verify(path.parent)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt {path} fails: not a complete gzip file" in result.stderr


def test_a_receipt_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = write_one(tmp_path)

    def newer(document: dict[str, Any]) -> None:
        document["version"] = "2.0"

    forged = rewrite(path, newer, rename=True)
    result = verify(forged.parent)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt {forged} fails: version 2.0 is newer than this coverage-gate reads" in (
        result.stderr
    )


def test_a_receipt_breaking_its_contract_names_the_field(tmp_path: Path) -> None:
    path = write_one(tmp_path)

    def bad_mode(document: dict[str, Any]) -> None:
        document["inputs"]["mode"] = "maybe"

    forged = rewrite(path, bad_mode, rename=True)
    result = verify(forged.parent)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt {forged} fails: field 'inputs.mode'" in result.stderr


def test_other_files_in_the_folder_are_skipped_and_counted(tmp_path: Path) -> None:
    path = write_one(tmp_path)
    (path.parent / "README.txt").write_text("receipts of acme/api\n")
    (path.parent / "sub").mkdir()
    result = verify(path.parent)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"1 of 1 receipt(s) verified; 2 other file(s) skipped (not *{SUFFIX})\n"
    )


def test_a_receipt_file_not_named_by_a_hash_fails(tmp_path: Path) -> None:
    path = write_one(tmp_path)
    renamed = path.with_name("latest" + SUFFIX)
    path.rename(renamed)
    result = verify(path.parent)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt {renamed} fails: its name is not the SHA-256" in result.stderr


@pytest.mark.parametrize("setup", ["missing", "empty"])
def test_no_receipt_to_verify_is_bad_input(tmp_path: Path, setup: str) -> None:
    folder = tmp_path / "receipts"
    if setup == "empty":
        folder.mkdir()
    result = verify(folder)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt folder {folder}" in result.stderr


def test_the_receipt_schema_is_published() -> None:
    result = runner.invoke(app, ["schema", "receipt"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert set(schema["properties"]) == {"schema", "version", "inputs", "ports", "decision"}


# --- the repository's answers are recorded, and verify answers from the record alone ----------


def dotdot_review(work: Path) -> tuple[Path, list[str]]:
    """A real repository with a folder link, and a reconcile whose claims climb out of it."""
    repo = make_repo(work / "repo")
    (work / "changed.txt").write_text("src/api/handlers.py\n")
    claims = {
        "schema_version": 1,
        "agent_id": "r",
        "inspected_files": ["src/api/sub/../handlers.py", "src/api/x/../handlers.py"],
    }
    (work / "claims.json").write_text(json.dumps(claims))
    evidence = {
        "schema": "coverage-gate/evidence",
        "version": "1.1",
        "source": "pi-rpc",
        "revision": repo.with_link,
        "stream_complete": True,
        "capability": "per_file",
        "files": [{"path": "src/api/handlers.py", "reads_succeeded": 1}],
    }
    (work / "e.json").write_text(json.dumps(evidence))
    folder = work / "receipts"
    args = approve_args(
        repo.with_link, work / "changed.txt", "--claims", work / "claims.json",
        "--evidence", work / "e.json", "--repo-root", repo.path, "--mode", "enforce",
        "--receipt", folder, repo="acme/api",
    )  # fmt: skip
    return folder, args


def test_the_repository_answers_are_recorded_and_verify_needs_no_repository(
    tmp_path: Path,
) -> None:
    folder, args = dotdot_review(tmp_path)
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (path,) = receipts_in(folder)
    document = content_of(path)
    answers = {a["path"]: a["target"] for a in document["ports"]["symlink_targets"]}
    assert answers["src/api/x"] == "../../decoy/inner"
    assert answers["src/api/sub"] is None
    rejected = document["decision"]["reviewers"][0]["claims_rejected"]
    assert [r["path"] for r in rejected] == ["src/api/x/../handlers.py"]
    shutil.rmtree(tmp_path / "repo")  # offline: the repository is gone
    result = verify(folder)
    assert result.exit_code == 0, result.output


def test_a_recorded_answer_altered_fails(tmp_path: Path) -> None:
    folder, args = dotdot_review(tmp_path)
    assert runner.invoke(app, args).exit_code == 0
    (path,) = receipts_in(folder)

    def no_link(document: dict[str, Any]) -> None:
        for answer in document["ports"]["symlink_targets"]:
            if answer["path"] == "src/api/x":
                answer["target"] = None

    forged = rewrite(path, no_link, rename=True)
    result = verify(folder)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"receipt {forged} fails: deciding again gives another decision" in result.stderr


def test_a_question_missing_from_the_record_is_said_plainly(tmp_path: Path) -> None:
    folder, args = dotdot_review(tmp_path)
    assert runner.invoke(app, args).exit_code == 0
    (path,) = receipts_in(folder)

    def forget(document: dict[str, Any]) -> None:
        document["ports"]["symlink_targets"] = [
            a for a in document["ports"]["symlink_targets"] if a["path"] != "src/api/x"
        ]

    forged = rewrite(path, forget, rename=True)
    result = verify(folder)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert (
        f"receipt {forged} fails: deciding again asked the repository about 'src/api/x', which "
        "the receipt does not record: it cannot be re-decided offline" in result.stderr
    )


def test_a_snapshot_that_answered_goes_into_the_receipt(tmp_path: Path) -> None:
    snapshot = Path(__file__).parents[2] / "coverage_gate/examples/flags.snapshot.json"
    folder = tmp_path / "receipts"
    args = [a for a in lying_reconcile_args(tmp_path) if a not in {"--mode", "shadow"}]
    args += ["--flags", str(snapshot), "--receipt", str(folder)]
    assert runner.invoke(app, args).exit_code == 0
    (path,) = receipts_in(folder)
    flag = content_of(path)["inputs"]["flag"]
    assert flag["name"] == "review.coverage-reconciler"
    assert flag["snapshot_sha256"] == hashlib.sha256(snapshot.read_bytes()).hexdigest()
    assert [f["name"] for f in flag["snapshot_flag"]["features"]] == [flag["name"]]
    assert content_of(path)["inputs"]["mode_source"] == "snapshot"
    assert verify(folder).exit_code == 0
