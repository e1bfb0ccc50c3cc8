"""A plain ``cat`` is told from every other command (``adapters/_shell.py``): only its output,
when it is nothing, shows the files it names empty (DESIGN §6 rule 24)."""

from __future__ import annotations

import pytest

from coverage_gate.adapters._shell import (
    MAX_PLAIN_CAT_CHARS,
    plain_cat,
    shell_action,
    whole_printer,
)
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


FROM_THE_START = {
    "cat a.txt b.txt": (("a.txt", "b.txt"), False),
    "head a.txt": (("a.txt",), False),
    "head -n 5 a.txt": (("a.txt",), False),
    "head -n5 a.txt": (("a.txt",), False),
    "head -20 a.txt": (("a.txt",), False),
    "sed -n p a.txt": (("a.txt",), False),
    "sed -n 1p a.txt": (("a.txt",), False),
    "sed -n 1,40p a.txt": (("a.txt",), False),
    "tail -n +1 a.txt": (("a.txt",), False),
    "cat -n a.txt": (("a.txt",), True),
    "nl a.txt": (("a.txt",), True),
    "nl -ba 'a file.txt'": (("a file.txt",), True),
}
NOT_FROM_THE_START = [
    "head -n 0 a.txt",
    "head -c 10 a.txt",
    "head -n 5 a.txt b.txt",
    "sed -n 2p a.txt",
    "sed -n 2,40p a.txt",
    "sed -n 's/x/y/p' a.txt",
    "sed p a.txt",
    "tail -n 1 a.txt",
    "tail a.txt",
    "nl -bt -v2 a.txt",
    "cat -n a.txt b.txt",
    "nl a.txt | head",
    "nl -ba",
    "head -n 5 -- a.txt",
]


@pytest.mark.parametrize(("command", "found"), sorted(FROM_THE_START.items()))
def test_a_command_that_prints_a_file_from_its_first_line_names_it(
    command: str, found: tuple[tuple[str, ...], bool]
) -> None:
    assert whole_printer(command) == found
    assert shell_action(command) == IgnoredAction(prints=found[0], numbered=found[1])


@pytest.mark.parametrize("command", NOT_FROM_THE_START)
def test_a_command_that_may_start_past_the_first_line_names_none(command: str) -> None:
    assert whole_printer(command) == ((), False)
