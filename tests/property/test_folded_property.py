"""A change of white space or a CR only is seen exactly where the shown text holds the changed
line as it is, and the text before the change never credits the file (DESIGN §6 rule 29).

For random files of informative lines, one line is changed in white space only (indent, a run of
blanks, a tab for a space, trailing blanks) or in a CR only (added or dropped before the line
break), and the pinned diff is made as ``git diff`` writes it. Each client's presentation checks
a shell output (a command no adapter reads as a read) that prints: the file before the change
(never credited), the revision as it is (credited, the changed line seen), and the revision with
the changed line as the presentation would fold it (credited, the line unseen, unless folding it
changed nothing). A change of trailing blanks is never seen through a client that trims them.
"""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters import ADAPTERS
from coverage_gate.core.content_check import CallChecker
from coverage_gate.core.events import IgnoredAction, Returned, ToolEnd, ToolStart
from coverage_gate.edges.content import MappingContent

CLIENTS = ["claude-code", "copilot-cli", "gemini-cli", "opencode", "pi-rpc", "qwen-code"]
PATH = "src/module.py"
WORDS = ["total", "value", "count", "names", "return", "result", "window", "kernel"]
LINE = st.lists(st.sampled_from(WORDS), min_size=2, max_size=5).map(" ".join)
# one white-space or CR change of a line: its old and new spellings
CHANGES = st.sampled_from(["indent", "outdent", "double", "tab", "trailing", "add-cr", "drop-cr"])


def _changed(line: str, change: str) -> tuple[str, str]:
    """(the line before, the line after) for ``change``; each ends with its own line break."""
    match change:
        case "indent":
            return f"    {line}\n", f"        {line}\n"
        case "outdent":
            return f"    {line}\n", f"{line}\n"
        case "double":
            head, _, tail = line.partition(" ")
            return f"{head} {tail}\n", f"{head}   {tail}\n"
        case "tab":
            return f"    {line}\n", f"\t{line}\n"
        case "trailing":
            return f"{line}\n", f"{line}   \n"
        case "add-cr":
            return f"{line}\n", f"{line}\r\n"
        case _:
            return f"{line}\r\n", f"{line}\n"


def _diff(before: list[str], after: list[str]) -> bytes:
    body = "".join(
        line if line.endswith("\n") else line + "\n"
        for line in list(difflib.unified_diff(before, after, f"a/{PATH}", f"b/{PATH}", n=3))[2:]
    )
    return f"diff --git a/{PATH} b/{PATH}\n--- a/{PATH}\n+++ b/{PATH}\n{body}".encode()


def _shown(checker: CallChecker, text: str) -> tuple[set[int], set[int]]:
    """The lines of the file a shell output ``text`` credits, and those it showed only folded."""
    checker.start(ToolStart(call_id="c", tool="bash", action=IgnoredAction(), line=1, said="x"))
    end = checker.end(
        ToolEnd(call_id="c", tool="bash", succeeded=True, line=2, returned=Returned(text=text))
    )
    content = end.content
    assert content is not None
    credited = {
        number
        for credit in content.credits
        if credit.path == PATH
        for number in range(credit.start, credit.end + 1)
    }
    return credited, {number for path, number in content.folded if path == PATH}


@pytest.mark.parametrize("client", CLIENTS)
@settings(max_examples=40, deadline=None)
@given(
    lines=st.lists(LINE, min_size=4, max_size=10, unique=True),
    where=st.integers(min_value=0, max_value=9),
    change=CHANGES,
)
def test_a_folded_change_is_seen_only_as_it_is(
    client: str, lines: list[str], where: int, change: str
) -> None:
    presentation = ADAPTERS[client].knows.presentation
    index = where % len(lines)
    old, new = _changed(lines[index], change)
    before = [f"{line}\n" for line in lines]
    after = list(before)
    before[index], after[index] = old, new
    revision = "".join(after)
    diff = _diff(before, after)

    def checker() -> CallChecker:
        return CallChecker(
            MappingContent({PATH: revision.encode()}),
            scope=[PATH],
            diff=diff,
            presentation=presentation,
        )

    number = index + 1
    credited, _ = _shown(checker(), "".join(before))
    assert not credited, "the text before the change credited the file"

    credited, folded = _shown(checker(), revision)
    assert number in credited
    # a client that trims trailing blanks shows no change of them, whatever the stream holds
    trims = presentation.trims_trailing_space or presentation.terminal
    never = trims and old.rstrip(" \t\n") == new.rstrip(" \t\n")
    assert (number in folded) is never

    # the changed line as the presentation keys it: white space folded, a CR dropped
    folded_line = presentation.key(new.rstrip("\n"))
    folds = folded_line == presentation.key(old.rstrip("\n"))
    credited, folded = _shown(checker(), revision.replace(new, folded_line + "\n"))
    if folded_line != new.rstrip("\n") and folds:
        assert number not in credited or number in folded


@pytest.mark.parametrize("client", CLIENTS)
@settings(max_examples=30, deadline=None)
@given(
    lines=st.lists(LINE, min_size=6, max_size=10, unique=True),
    change=CHANGES.filter(lambda change: change != "trailing"),
)
def test_a_removed_spelling_the_revision_holds_elsewhere_is_not_older(
    client: str, lines: list[str], change: str
) -> None:
    """The changed line's old spelling stays, as it is, a line of the revision further down: an
    honest print of the revision past the change holds it, and credits what it printed."""
    presentation = ADAPTERS[client].knows.presentation
    old, new = _changed(lines[0], change)
    before = [old, *(f"{line}\n" for line in lines[1:]), old]
    after = [new, *before[1:]]
    revision = "".join(after)
    checker = CallChecker(
        MappingContent({PATH: revision.encode()}),
        scope=[PATH],
        diff=_diff(before, after),
        presentation=presentation,
    )
    credited, _ = _shown(checker, "".join(after[1:]))
    assert len(after) in credited, "an honest print of the revision was called older"
