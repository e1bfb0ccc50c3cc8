"""The documentation as the tests read it: the README, CONTRIBUTING.md and every page of the site
under ``docs/``. A test that holds a section to the code finds it by its heading, on whichever
page it lives, so that moving a section between pages does not unpin it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def pages() -> dict[str, str]:
    """Each Markdown file people read, by its path relative to the checkout."""
    paths = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in paths}


def all_text() -> str:
    """Every page, one after another."""
    return "\n".join(pages().values())


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, level, title) of each heading outside fenced code (a ``# comment`` in a bash
    block is no heading)."""
    found: list[tuple[int, int, str]] = []
    fenced = False
    for index, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else re.match(r"(#+) (.+)$", line)
        if match:
            found.append((index, len(match.group(1)), match.group(2)))
    return found


def section(heading: str, page: str | None = None) -> str:
    """The text under the one heading ``heading`` (any level), up to the next heading of the same
    or a higher level, on ``page`` or on any: an ``AssertionError`` when none, or more than one,
    holds it."""
    found: list[str] = []
    for name, text in pages().items():
        if page is not None and name != page:
            continue
        lines = text.splitlines(keepends=True)
        headings = _headings(lines)
        for position, (index, level, title) in enumerate(headings):
            if title != heading:
                continue
            end = next((i for i, lv, _ in headings[position + 1 :] if lv <= level), len(lines))
            found.append("".join(lines[index + 1 : end]))
    assert len(found) == 1, f"{len(found)} sections headed {heading!r}"
    return found[0]


def hooks() -> ModuleType:
    """``docs/_hooks/reference.py``: the generators the site's build runs."""
    spec = importlib.util.spec_from_file_location("reference", DOCS / "_hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rendered_section(heading: str, page: str | None = None) -> str:
    """``section(heading, page)`` as the site shows it: its generated parts filled in."""
    return str(hooks().render(section(heading, page)))
