"""Shell completion: ``--install-completion`` and ``--show-completion`` write the script a shell
sources, and that script's request (the ``_COVERAGE_GATE_COMPLETE`` variable) answers with the
commands, the options and an option's choices, as a person pressing Tab in bash sees them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli


def _complete(*words: str) -> list[str]:
    """What bash's completion function gets for the command line ``words`` (the last is the word
    being completed), as the installed script asks for it."""
    done = run_cli(
        env={
            "_COVERAGE_GATE_COMPLETE": "complete_bash",
            "COMP_WORDS": " ".join(["coverage-gate", *words]),
            "COMP_CWORD": str(len(words)),
        }
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_command_is_completed_from_its_first_letters() -> None:
    assert _complete("re") == ["record", "reconcile", "report", "receipts", "replay"]


def test_an_option_and_its_choices_are_completed() -> None:
    assert _complete("reconcile", "--fo") == ["--format"]
    assert _complete("reconcile", "--format", "") == ["text", "json", "markdown", "sarif"]


def _in_bash(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``coverage-gate ARGS`` started by bash, as a person types it: the shell it detects."""
    command = " ".join([sys.executable, "-m", "coverage_gate", *args])
    return subprocess.run(
        ["bash", "--norc", "-c", f"{command}; exit $?"],
        env={**os.environ, "HOME": str(home), "SHELL": "/bin/bash"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="bash")
def test_show_completion_prints_the_script_that_asks_for_completions(tmp_path: Path) -> None:
    done = _in_bash(tmp_path, "--show-completion")
    assert done.returncode == 0, done.stderr
    assert "_COVERAGE_GATE_COMPLETE=complete_bash" in done.stdout
    assert "complete -o default -F _coverage_gate_completion coverage-gate" in done.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="bash")
def test_install_completion_writes_the_script_where_bash_reads_it(tmp_path: Path) -> None:
    done = _in_bash(tmp_path, "--install-completion")
    assert done.returncode == 0, done.stderr
    script = tmp_path / ".bash_completions" / "coverage-gate.sh"
    assert "_COVERAGE_GATE_COMPLETE=complete_bash" in script.read_text(encoding="utf-8")
    assert str(script) in (tmp_path / ".bashrc").read_text(encoding="utf-8")
    assert "bash completion installed" in done.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="sh")
def test_a_shell_with_no_completion_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    command = f"{sys.executable} -m coverage_gate --show-completion"
    done = subprocess.run(
        ["sh", "-c", f"{command}; exit $?"],
        env={**os.environ, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "coverage-gate: error: --show-completion: it runs in sh" in done.stderr
