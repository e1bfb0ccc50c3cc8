"""`coverage-gate replay DIR` at scale: receipts replayed in worker processes give the same
bytes as in one; a receipt that cannot be replayed is named and the others are replayed; a
receipt file is inflated as gzip would."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import shutil
import zlib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.commands.reconcile import decide
from coverage_gate.commands.replay import CandidateMode, _candidate
from coverage_gate.core.reconcile import ReviewInput
from coverage_gate.errors import ExitCode
from coverage_gate.rollout import receipts, replay_folder
from coverage_gate.rollout.receipt_store import names
from coverage_gate.rollout.receipts import SUFFIX, ReceiptError, canonical, compress
from coverage_gate.rollout.replay_folder import Replayed, Unreadable
from coverage_gate.rollout.simulation import write_receipts

runner = CliRunner()


@pytest.fixture(scope="module")
def rollout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("rollout") / "receipts"
    assert write_receipts(folder, reviews=70) == 420
    return folder


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 16 receipts: 22 of them over the rollout, so workers finish out of order."""
    monkeypatch.setattr(replay_folder, "CHUNK", 16)


def invoke(folder: Path, *options: str) -> Any:
    return runner.invoke(app, ["replay", str(folder), *options])


@pytest.mark.slow
@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize(
    ("candidate", "output", "jobs"),
    [
        (("--mode", "enforce"), "json", "2"),
        (("--mode", "enforce"), "json", "3"),
        (("--mode", "enforce"), "text", "2"),
        (("--mode", "enforce"), "markdown", "2"),
        (("--depth-policy", "all-hunks"), "json", "2"),
        (("--unknown-policy", "downgrade", "--citation-policy", "accept"), "json", "2"),
    ],
)
def test_workers_give_the_bytes_one_process_gives(
    rollout: Path, candidate: tuple[str, ...], output: str, jobs: str
) -> None:
    """Whatever the number of workers, the output is the same bytes, in every format: chunks
    are taken back in name order."""
    one = invoke(rollout, *candidate, "--format", output, "--jobs", "1")
    assert one.exit_code == 0, one.output
    several = invoke(rollout, *candidate, "--format", output, "--jobs", jobs)
    assert several.exit_code == 0, several.output
    assert several.stdout == one.stdout


def _make_enforce() -> Any:
    return functools.partial(_candidate, CandidateMode.ENFORCE, None, None, None, None, None)


@pytest.mark.slow
@pytest.mark.usefixtures("small_chunks")
def test_each_receipt_has_one_result_in_name_order(rollout: Path) -> None:
    """One result per receipt file, in the order of the names given, with workers or without."""
    found = names(rollout).names
    serial = list(replay_folder.replay_folder(rollout, found, _make_enforce(), decide, 1))
    pooled = list(replay_folder.replay_folder(rollout, found, _make_enforce(), decide, 2))
    assert pooled == serial
    assert len(serial) == len(found) == 420
    assert all(isinstance(result, Replayed) for result in serial)
    changed = [r for r in serial if isinstance(r, Replayed) and r.entry is not None]
    receipts_named = [json.loads(r.entry)["receipt"] for r in changed if r.entry]
    assert receipts_named == sorted(receipts_named)


def fails_to_decide(review: ReviewInput) -> Any:
    raise RuntimeError(f"cannot decide {review.repo}")


@pytest.mark.slow
def test_a_failure_in_a_worker_is_raised_not_lost(rollout: Path) -> None:
    """An internal failure while deciding in a worker reaches the caller (the command maps it
    to exit 5), never a hang or a silently shorter result."""
    found = names(rollout).names
    results = replay_folder.replay_folder(rollout, found, _make_enforce(), fails_to_decide, 2)
    with pytest.raises(RuntimeError, match="cannot decide acme/"):
        list(results)


def _damage(folder: Path) -> dict[str, str]:
    """Three receipts of ``folder`` made unreplayable, three ways; what each is expected to say."""
    paths = sorted(folder.glob(f"*{SUFFIX}"))
    cut, tampered, broken = paths[10], paths[100], paths[200]
    cut.write_bytes(cut.read_bytes()[:-20])
    document = json.loads(gzip.decompress(tampered.read_bytes()))
    document["decision"]["would_downgrade"] = not document["decision"]["would_downgrade"]
    tampered.write_bytes(compress(canonical(document)))
    document = json.loads(gzip.decompress(broken.read_bytes()))
    document["inputs"]["verdict_in"] = "maybe"
    data = canonical(document)
    broken.unlink()
    renamed = broken.with_name(hashlib.sha256(data).hexdigest() + SUFFIX)
    renamed.write_bytes(compress(data))
    return {
        str(cut): "not a complete gzip file",
        str(tampered): "its content hashes to",
        str(renamed): "field 'inputs.verdict_in'",
    }


@pytest.mark.slow
@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_unreplayable_receipts_are_named_and_the_rest_replayed(
    rollout: Path, tmp_path: Path, jobs: str
) -> None:
    """Three bad receipts among 420: each is named on stderr with what is wrong with it (the
    field, when a field is), the 417 others are replayed as they would be without them, and the
    exit code is 3."""
    folder = tmp_path / "receipts"
    shutil.copytree(rollout, folder)
    expected = _damage(folder)
    result = invoke(folder, "--mode", "enforce", "--format", "json", "--jobs", jobs)
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.stdout == ""  # exit 3: the replay of the others goes to stderr
    lines = result.stderr.splitlines(keepends=True)
    complaints = [line for line in lines if line.startswith("coverage-gate: error: ")]
    assert len(complaints) == 3, result.stderr
    for path, why in expected.items():
        (line,) = [c for c in complaints if f"receipt {path}: " in c]
        assert why in line, line
    document = json.loads("".join(line for line in lines if line not in complaints))
    assert document["receipts"] == 417
    assert document["unreadable_receipts"] == 3
    clean = tmp_path / "clean"
    shutil.copytree(folder, clean)
    for path in expected:
        (clean / Path(path).name).unlink()
    without = json.loads(invoke(clean, "--mode", "enforce", "--format", "json").stdout)
    assert document == without | {"unreadable_receipts": 3}
    text = invoke(folder, "--mode", "enforce", "--jobs", jobs)
    (first,) = [line for line in text.stderr.splitlines() if line.startswith("Replay of ")]
    assert first.endswith("; 3 receipt(s) could not be replayed (named on stderr)"), first


def test_a_folder_of_sound_receipts_has_no_unreadable_count(rollout: Path) -> None:
    """The JSON document of a folder whose receipts all replay is the one it always was."""
    result = invoke(rollout, "--citation-policy", "accept", "--format", "json")
    assert result.exit_code == 0, result.output
    assert "unreadable_receipts" not in json.loads(result.stdout)


def test_large_folders_use_a_worker_per_cpu_small_ones_this_process() -> None:
    assert replay_folder.default_jobs(replay_folder.PARALLEL_FROM - 1) == 1
    assert replay_folder.default_jobs(replay_folder.PARALLEL_FROM) >= 1


def test_jobs_below_one_is_a_usage_error(rollout: Path) -> None:
    result = invoke(rollout, "--mode", "enforce", "--jobs", "0")
    assert result.exit_code == ExitCode.USAGE


# --- inflating a receipt file -----------------------------------------------------------------

CONTENT = canonical({"schema": "coverage-gate/receipt", "version": "1.1"}) * 40
ONE = compress(CONTENT)


def _header_crc(data: bytes) -> bytes:
    """The same member with a header CRC (FHCRC) that zlib checks and gzip skips, made wrong."""
    flags = data[3] | 0x02
    header = data[:3] + bytes([flags]) + data[4:10]
    return header + b"\0\0" + data[10:]


@pytest.mark.parametrize(
    "data",
    [
        ONE,
        ONE + ONE,  # two members: gzip joins them
        ONE + b"trailing",  # bytes after the member
        ONE[:-4],  # no length in the trailer
        ONE[:-20],  # cut in the middle
        ONE[:-8] + b"\0\0\0\0" + ONE[-4:],  # a wrong CRC
        _header_crc(ONE),
        b"",
        b"not gzip at all",
        zlib.compress(CONTENT),  # zlib, not gzip
    ],
    ids=[
        "one",
        "two-members",
        "trailing",
        "no-length",
        "cut",
        "bad-crc",
        "header-crc",
        "empty",
        "not-gzip",
        "zlib",
    ],
)
def test_a_receipt_file_is_inflated_as_gzip_would(data: bytes) -> None:
    """The one-call inflate never gives another answer or another error than gzip.decompress."""
    try:
        expected: bytes | str = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as error:
        expected = f"not a complete gzip file ({error})"
    try:
        got: bytes | str = receipts.decompress(data)
    except ReceiptError as error:
        got = str(error)
    assert got == expected


def test_unreadable_is_a_result_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / ("0" * 64 + SUFFIX)
    path.write_bytes(b"not gzip")
    candidate = _make_enforce()()
    result = replay_folder.replay_file(path, candidate, decide)
    assert isinstance(result, Unreadable)
    assert result.problem.startswith(f"receipt {path}: not a complete gzip file")
