"""A change that only the presentation's folding hides is not shown by the folded text (DESIGN §6
rule 29): white space, a CR, a line a CR overwrote.

The real ``cat`` captures of six clients at both releases read ``make_odd_repo.sh``'s files. The
repository is rebuilt here with three files' pre-change text made so that their change is one a
presentation can fold: ``one_line.txt`` was ``    version = 2`` (only its indent changed, which a
terminal's columns fold), ``crlf.txt``'s first line had no CR (only a CR was added, which every
key drops), ``lone_cr.txt``'s first line was ``progress: 0%`` (the new line holds CRs, which a
terminal renders by overwriting its start). The revision is the captures' own, so each honest
``cat`` is what the client wrote. A reviewer that never read the revision prints the older text
instead (``git show HEAD~1:F``, the captured ``cat`` call rewritten to it, its output to what that
command prints): it tells nothing of the change apart and credits nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.edges.content import snapshot_tree
from tests.conftest import Repo, git_in, kit_repo, pinned_change
from tests.core.test_presentation_captures import DATA, FORMATS, RELEASES, _recorded

# each file's text before the change, and its changed line as the revision has it
BEFORE = {
    "one_line.txt": (b"    version = 2\n", "version = 2"),
    "crlf.txt": (b"first line\nsecond line\r\nvalue = on\r\nlast line\r\n", "first line\r\n"),
    "lone_cr.txt": (b"progress: 0%\nstatus = done\nnext line\n", "progress: 10%\r50%\r100%"),
}
# what ``git show HEAD~1:F`` prints in place of the revision's changed line
OLDER = {"one_line.txt": "    version = 2", "crlf.txt": "first line\n"}
CAT_CAPTURES = [f"{client}-{release}/cat.jsonl" for client in FORMATS for release in RELEASES]


@pytest.fixture(scope="module")
def folded_repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """The odd repository with ``BEFORE``'s texts as the files' pre-change (committed) text."""
    work = tmp_path_factory.mktemp("folded")
    repo, *_ = kit_repo(work)
    revision = {path: (repo / path).read_bytes() for path in BEFORE}
    for path, (before, _shown) in BEFORE.items():
        (repo / path).write_bytes(before)
        git_in(repo, "add", path)
    git_in(repo, "commit", "-q", "--amend", "--no-edit")
    for path, text in revision.items():
        (repo / path).write_bytes(text)
    return repo, snapshot_tree(repo), *pinned_change(repo, work)


def _escaped(text: str) -> bytes:
    return json.dumps(text)[1:-1].encode()


def _entry(document: dict[str, Any], path: str) -> dict[str, Any]:
    (found,) = (file for file in document["files"] if file["path"] == path)
    return found


def test_each_change_is_only_what_a_presentation_folds(folded_repo: Repo) -> None:
    _repo, _revision, diff, _changed = folded_repo
    text = diff.read_bytes()
    assert b"-    version = 2\n+version = 2\n" in text
    assert b"-first line\n+first line\r\n" in text
    assert b"-progress: 0%\n+progress: 10%\r50%\r100%\n" in text


@pytest.mark.parametrize("path", sorted(OLDER))
@pytest.mark.parametrize("capture", CAT_CAPTURES)
def test_the_older_text_through_a_folding_presentation_credits_nothing(
    capture: str, path: str, folded_repo: Repo, tmp_path: Path
) -> None:
    data = (DATA / capture).read_bytes()
    shown = _escaped(BEFORE[path][1])
    if shown in data:
        data = data.replace(shown, _escaped(OLDER[path]))
    else:  # Qwen Code 0.23.0 drops every CR: the older text is what it showed of the revision
        assert path == "crlf.txt" and capture == "qwen-older/cat.jsonl"
        assert _escaped("first line\nsecond line\nvalue = on") in data
    data = data.replace(_escaped(f"cat {path}"), _escaped(f"git show HEAD~1:{path}"))
    document, statuses = _recorded(data, FORMATS[capture.split("-", 1)[0]], folded_repo, tmp_path)
    assert statuses[path] == "unsupported"
    found = [file for file in document["files"] if file["path"] == path]
    assert not found or found[0]["content"]["credited"] == 0


@pytest.mark.parametrize("capture", CAT_CAPTURES)
def test_the_revision_through_the_same_clients_is_seen_where_it_is_shown_as_it_is(
    capture: str, folded_repo: Repo, tmp_path: Path
) -> None:
    """The honest ``cat``s: every folded file verified; its changed line seen where the stream
    holds it as it is, and unseen where the client folded it: Qwen Code 0.23.0 drops every CR
    and renders a line a CR overwrote as its terminal does (``100%ress: 10%``)."""
    data = (DATA / capture).read_bytes()
    document, statuses = _recorded(data, FORMATS[capture.split("-", 1)[0]], folded_repo, tmp_path)
    for path in BEFORE:
        assert statuses[path] == "verified", path
    # each change is one line removed and one added; a read of the new file can show only the
    # added one, and shows it only where the stream holds it as it is
    for path, (_before, line) in BEFORE.items():
        depth = _entry(document, path)["depth"]
        as_is = _escaped(line) in data
        assert (depth["changed_lines"], depth["changed_lines_seen"]) == (2, int(as_is)), path
    rendered = b"100%ress: 10%" in data
    assert rendered == (capture == "qwen-older/cat.jsonl")
    assert rendered is not (_escaped(BEFORE["lone_cr.txt"][1]) in data)
