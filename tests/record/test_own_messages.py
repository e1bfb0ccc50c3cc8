"""The model's messages are its own text, as its call arguments are (DESIGN §6 rule 29): a result
line that is a line of them, or a few pieces of them, never credits.

The real shell-only captures of the five shell clients, each as the client wrote it, with its
first message ("Let me look at the diff first.", in every copy the stream holds of it: pi's
deltas and repeats, Copilot CLI's delta) made a message that holds strings.py's text, and
strings.py's ``cat`` made a command that prints the client's own session log back (what such a
command printed is that text; strings.py's section is left out of the ``git diff`` output). The
model received nothing of the file that it did not write itself: strings.py credits nothing.
The converse: the same message quoting one line of the file, then an honest ``cat``, credits it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REVISION_FILES, Repo
from tests.core.test_presentation_captures import (
    DATA,
    FORMATS,
    RELEASES,
    _format,
    _recorded,
)
from tests.record.test_older_any_tool import STRINGS, _credited, _shown
from tests.record.test_whole_file_credit import SHELL_ONLY

FIRST_MESSAGE = "Let me look at the diff first."
LOG_COMMAND = "grep -h -A 40 'From memory' ~/.session/*.jsonl | tail -n +2"


def _said(data: bytes, message: str) -> bytes:
    """``data`` with its first message made ``message``, in every copy of it."""
    escaped = json.dumps(FIRST_MESSAGE)[1:-1].encode()
    assert data.count(escaped) >= 1
    return data.replace(escaped, json.dumps(message)[1:-1].encode())


@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_a_file_printed_from_the_models_own_message_credits_nothing(fmt: str) -> None:
    revision = (REVISION_FILES / STRINGS).read_text()
    data = _shown(fmt, LOG_COMMAND, revision)
    assert _credited(data, fmt) >= 1  # without the message, the output alone credits the file
    assert _credited(_said(data, f"From memory, {STRINGS}:\n{revision}"), fmt) == 0


@pytest.mark.parametrize("fmt", sorted(SHELL_ONLY))
def test_an_honest_cat_after_a_message_quoting_a_line_still_credits(fmt: str) -> None:
    revision = (REVISION_FILES / STRINGS).read_text()
    quoted = next(line for line in revision.splitlines() if len(line.strip()) > 12)
    data = _shown(fmt, f"cat {STRINGS}", revision)
    assert _credited(_said(data, f"I will check `{quoted}` first."), fmt) >= 1


# The same over the presentation captures of all six clients and Codex's rollout at both releases
# (their first message is "Let me read the change."): unicode.md's ``cat`` made a command that
# prints the session log back, printing the file as the capture's ``cat`` did.
CAT_CAPTURES = [
    *(f"{client}-{release}/cat.jsonl" for client in FORMATS for release in RELEASES),
    *(f"codex-{release}/cat.rollout.jsonl" for release in RELEASES),
]


@pytest.mark.parametrize("said", [False, True], ids=["no message", "the file in a message"])
@pytest.mark.parametrize("capture", CAT_CAPTURES)
def test_every_clients_messages_are_its_own_text(
    capture: str, said: bool, odd_repo: Repo, tmp_path: Path
) -> None:
    repo, _revision, _diff, _changed = odd_repo
    data = (DATA / capture).read_bytes()
    # Codex parses the command it ran; a grep of a log is a command of no kind it knows
    read = b'{"type":"read","cmd":"cat unicode.md","name":"unicode.md","path":"unicode.md"}'
    data = data.replace(read, b'{"type":"unknown","cmd":"cat unicode.md"}')
    data = data.replace(b"cat unicode.md", json.dumps(LOG_COMMAND)[1:-1].encode())
    if said:
        text = (repo / "unicode.md").read_text()
        message = json.dumps(f"From memory, unicode.md:\n{text}")[1:-1].encode()
        assert data.count(b"Let me read the change.") >= 1
        data = data.replace(b"Let me read the change.", message)
    _document, statuses = _recorded(data, _format(capture), odd_repo, tmp_path)
    assert statuses["unicode.md"] == ("unsupported" if said else "verified")
