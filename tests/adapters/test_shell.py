"""A plain ``cat`` is told from every other command (``adapters/_shell.py``): only its output,
when it is nothing, shows the files it names empty (DESIGN §6 rule 24)."""

from __future__ import annotations

import pytest

from coverage_gate.adapters._shell import MAX_PLAIN_CAT_CHARS, plain_cat, shell_action
from coverage_gate.core.events import IgnoredAction, WriteAction

PLAIN = {
    "cat a.txt": ("a.txt",),
    "cat -- a.txt": ("a.txt",),
    "cat a.txt b/c.py": ("a.txt", "b/c.py"),
    "cat 'a file.txt'": ("a file.txt",),
    '  cat  "a.txt"  ': ("a.txt",),
}
NOT_PLAIN = [
    "cat",
    "cat --",
    "cat -n a.txt",
    "cat -v a.txt",
    "cat a.txt >/dev/null",
    "cat a.txt | head -c 0",
    "cat a.txt; true",
    "true && cat a.txt",
    "cat a.txt\ncat b.txt",
    "cat $F",
    "cat `echo a.txt`",
    "cat $(echo a.txt)",
    "cat *.txt",
    "cat a.tx?",
    "cat ~/a.txt",
    "cat {a,b}.txt",
    "cat a\\ b.txt",
    "cat 'a.txt",
    "cat < a.txt",
    "cat a.txt 2>&1",
    "tac a.txt",
    "head -c 0 a.txt",
    "cat '' a.txt",
    "cat " + "a" * MAX_PLAIN_CAT_CHARS,
]


@pytest.mark.parametrize(("command", "files"), sorted(PLAIN.items()))
def test_a_plain_cat_names_its_files(command: str, files: tuple[str, ...]) -> None:
    assert plain_cat(command) == files


@pytest.mark.parametrize("command", NOT_PLAIN)
def test_any_other_command_names_none(command: str) -> None:
    assert plain_cat(command) == ()


def test_a_shell_action_is_a_write_before_it_is_a_cat() -> None:
    assert isinstance(shell_action("cat a.txt > b.txt"), WriteAction)
    assert shell_action("cat a.txt", "/repo") == IgnoredAction(prints=("a.txt",), cwd="/repo")
    assert shell_action(None) == IgnoredAction()
