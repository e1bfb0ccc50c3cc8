"""The four rules the evidence holds to are one text: the docs' evidence page states each
(``docs/concepts/trust-model.md``), and ``coverage-gate formats NAME`` prints each under every
format, as ``coverage_gate/core/rules.py`` holds them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coverage_gate.adapters import ADAPTERS, DOCUMENT_FORMATS
from coverage_gate.core.rules import EVIDENCE_RULES
from tests.conftest import run_cli

PAGE = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "trust-model.md"


def test_the_evidence_page_states_the_four_rules_in_order() -> None:
    section = PAGE.read_text().split("## Four rules the evidence holds to", 1)[1].split("\n## ")[0]
    titles = re.findall(r"^\d\. \*\*(.+?)\*\*", section, re.MULTILINE)
    assert titles == [rule for rule, _does in EVIDENCE_RULES]


@pytest.mark.parametrize("name", sorted({*ADAPTERS, *DOCUMENT_FORMATS}))
def test_formats_name_prints_the_four_rules(name: str) -> None:
    done = run_cli("formats", name)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # the rules are wrapped to the terminal's width
    at = [
        text.find(f"{number}. {rule} {does}")
        for number, (rule, does) in enumerate(EVIDENCE_RULES, 1)
    ]
    assert -1 not in at and at == sorted(at), at
