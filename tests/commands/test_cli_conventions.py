"""What users of a command-line tool expect of this one: output in an encoding other than UTF-8
(a Windows console, a pipe in a C locale, a CI log in Latin-1) never fails the run, a character
the encoding cannot hold written as JSON escapes it (``\\u2192``, so a JSON document on stdout
stays JSON); ``--version`` and ``-h``; an empty stream said to be empty."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import DATA, run_cli


def _run(encoding: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The whole process with its output in ``encoding``, read back strictly in it."""
    return run_cli(*args, env={"PYTHONIOENCODING": encoding}, encoding=encoding)


@pytest.mark.parametrize("encoding", ["ascii", "cp1252", "latin-1"])
def test_the_demo_runs_whatever_the_output_encoding(encoding: str) -> None:
    done = _run(encoding, "demo")
    assert done.returncode == 0, done.stderr
    assert "approve -> approve" in done.stdout  # none of the three holds the arrow
    if encoding == "ascii":
        assert "##########" in done.stdout  # the depth bar's glyphs, as ASCII


def _reconcile_on_ascii(folder: Path, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """``reconcile`` of a reviewer claiming the one file ``name``, on an ASCII stdout."""
    claims = folder / "claims.json"
    claims.write_text(
        json.dumps({"schema_version": 1, "agent_id": "r", "inspected_files": [name]}),
        encoding="utf-8",
    )
    changed = folder / "changed.txt"
    changed.write_text(name + "\n", encoding="utf-8")
    return _run(
        "ascii", "reconcile", "--repo", "acme/api", "--revision", "abc", "--verdict", "approve",
        "--claims", claims, "--changed", changed, "--mode", "shadow", *extra,
    )  # fmt: skip


def test_a_text_on_a_narrow_output_uses_ascii_stand_ins_and_escapes_the_rest(
    tmp_path: Path,
) -> None:
    """The program's own glyphs become their stand-ins (``->``); a character of the input
    (a path) that the output cannot hold is escaped as JSON escapes it, never lost."""
    done = _reconcile_on_ascii(tmp_path, "src/caf\u00e9.py")
    assert done.returncode == 0, done.stderr
    assert "approve -> approve" in done.stdout
    assert "src/caf\\u00e9.py" in done.stdout


def test_a_json_document_on_an_ascii_stdout_is_still_json(tmp_path: Path) -> None:
    """A path with characters outside ASCII (and outside the BMP) reads back as it was."""
    name = "src/caf\u00e9/\U0001f680.py"
    done = _reconcile_on_ascii(tmp_path, name, "--format", "json")
    assert done.returncode == 0, done.stderr
    decision = json.loads(done.stdout)
    assert decision["scope"] == [name]


def test_version_and_short_help_answer_as_other_tools_do() -> None:
    """``--version`` prints the installed version (``coverage_gate.__version__``) and exits 0;
    ``-h`` is ``--help``, on the main command and on each command."""
    import coverage_gate  # noqa: PLC0415 - the attribute under test is read on first use

    done = _run("utf-8", "--version")
    assert (done.returncode, done.stdout) == (
        0,
        f"coverage-gate {coverage_gate.__version__}\n",
    )
    assert coverage_gate.__version__[0].isdigit()
    for args in (("-h",), ("record", "-h"), ("report", "-h")):
        short, long = _run("utf-8", *args), _run("utf-8", *args[:-1], "--help")
        assert (short.returncode, short.stdout) == (0, long.stdout), args


@pytest.mark.parametrize("content", [b"", b"\n\n", b"  \n"])
def test_an_empty_stream_is_said_to_be_empty(content: bytes, tmp_path: Path) -> None:
    """With no line to tell its format from, an empty stream is bad input that says it is empty
    (exit 3, no evidence written); with --format it is recorded as a stream that held nothing."""
    stream = tmp_path / "empty.jsonl"
    stream.write_bytes(content)
    done = _run("utf-8", "record", stream, "--revision", "abc", "-o", tmp_path / "e.json")
    assert done.returncode == 3
    assert f"the stream ({stream}) is empty" in done.stderr
    assert not (tmp_path / "e.json").exists()
    done = _run("utf-8", "record", stream, "--revision", "abc", "--format", "pi-rpc")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stream_complete"] is False


def test_quiet_keeps_what_a_run_did_out_of_the_log_and_keeps_warnings(tmp_path: Path) -> None:
    """``-q`` (or ``COVERAGE_GATE_QUIET=1``): record writes the same evidence and no line that
    only says what it did; a warning (a stream that looks like another format) and the missing
    root are still said."""
    stream = DATA / "pi-rpc" / "pi_a_honest.jsonl"
    args = ["record", str(stream), "--format", "pi-rpc", "--revision", "abc123",
            "--repo-root", str(tmp_path), "-o"]  # fmt: skip
    loud = run_cli(*args, tmp_path / "loud.json")
    quiet = run_cli("-q", *args, tmp_path / "quiet.json")
    by_env = run_cli(*args, tmp_path / "env.json", env={"COVERAGE_GATE_QUIET": "1"})
    assert loud.returncode == quiet.returncode == by_env.returncode == 0, quiet.stderr
    assert "tool call(s)" in loud.stderr and "repository root" in loud.stderr
    assert quiet.stderr == by_env.stderr
    assert "tool call(s)" not in quiet.stderr and "repository root" not in quiet.stderr
    assert len(quiet.stderr.splitlines()) < len(loud.stderr.splitlines())
    assert (tmp_path / "quiet.json").read_bytes() == (tmp_path / "loud.json").read_bytes()
    wrong = run_cli("-q", "record", str(stream), "--format", "claude-code", "--revision", "abc123",
                    "-o", tmp_path / "wrong.json", "--repo-root", str(tmp_path))  # fmt: skip
    assert "warning" in wrong.stderr
    rootless = run_cli("-q", "record", str(stream), "--format", "pi-rpc", "--revision", "abc123",
                       "-o", tmp_path / "rootless.json", cwd=tmp_path)  # fmt: skip
    assert "no repository root" in rootless.stderr
