"""Decisions for people: each claimed file's depth, readable at a glance in text and Markdown."""

from __future__ import annotations

import pytest

from coverage_gate.contracts.model import (
    Depth,
    DepthPolicy,
    FileDepth,
    LineRange,
    Mode,
    PolicySource,
)
from coverage_gate.core.reconcile import reconcile
from coverage_gate.outputs import render
from tests.core.test_reconcile import PARTIAL_TAX, tax_evidence, tax_review


@pytest.mark.parametrize(
    ("depth", "seen", "changed", "bar"),
    [
        (Depth.FULL, 40, 40, "▰▰▰▰▰▰▰▰▰▰"),
        (Depth.PARTIAL, 27, 40, "▰▰▰▰▰▰▰▱▱▱"),
        (Depth.PARTIAL, 1, 400, "▰▱▱▱▱▱▱▱▱▱"),
        (Depth.PARTIAL, 399, 400, "▰▰▰▰▰▰▰▰▰▱"),
        (Depth.NONE, 0, 40, "▱▱▱▱▱▱▱▱▱▱"),
        (Depth.UNKNOWN, 0, 0, ""),
    ],
)
def test_the_bar_is_full_only_when_every_changed_line_was_seen(
    depth: Depth, seen: int, changed: int, bar: str
) -> None:
    """Partial never rounds to a full or an empty bar; unknown depth has none."""
    record = FileDepth(depth=depth, changed_lines=changed, changed_lines_seen=seen)
    assert render.depth_bar(record) == bar


def test_depth_summary_names_counts_and_unseen_lines_or_why_depth_is_unknown() -> None:
    assert render.depth_summary(PARTIAL_TAX) == (
        "▰▰▰▰▰▰▰▱▱▱ partial: 27/40 changed lines, 1/2 hunks; not seen 480-492"
    )
    unknown = FileDepth(depth=Depth.UNKNOWN, detail="no pinned diff")
    assert render.depth_summary(unknown) == "depth unknown (no pinned diff)"


def test_text_shows_policies_with_sources_and_each_files_depth() -> None:
    decision = reconcile(tax_review(tax_evidence(PARTIAL_TAX), DepthPolicy.ALL_HUNKS)).model_copy(
        update={"depth_policy_source": PolicySource.PAYLOAD}
    )
    lines = render.text(decision).splitlines()
    assert lines[1] == (
        "  depth policy all-hunks (payload), unknown policy accept (default), "
        "citation policy downgrade (default), mutation policy accept (default)"
    )
    assert lines[3] == (
        "    SHALLOW     src/tax.py  [1 successful read(s)]  "
        "▰▰▰▰▰▰▰▱▱▱ partial: 27/40 changed lines, 1/2 hunks; not seen 480-492"
    )


def test_markdown_has_a_depth_column_and_names_the_policy() -> None:
    decision = reconcile(
        tax_review(tax_evidence(PARTIAL_TAX), DepthPolicy.ALL_HUNKS, mode=Mode.SHADOW)
    )
    text = render.markdown(decision)
    assert "· depth policy `all-hunks` (default) ·" in text
    assert "| file | claim | status | evidence | changed lines seen |" in text
    assert (
        "| `src/tax.py` | inspected | shallow | 1 successful read(s) | "
        "▰▰▰▰▰▰▰▱▱▱ partial: 27/40 changed lines, 1/2 hunks; not seen 480-492 |"
    ) in text


def test_files_without_depth_show_a_dash_in_markdown() -> None:
    decision = reconcile(tax_review(None, DepthPolicy.ACCEPT))
    assert "| `src/tax.py` | inspected | unknown | " in render.markdown(decision)
    assert render.markdown(decision).rstrip().splitlines()[-3].endswith("| - |")


def test_an_unseen_range_list_in_text_is_bounded() -> None:
    ranges = [LineRange(start=n, end=n) for n in range(1, 20, 2)]
    record = FileDepth(depth=Depth.NONE, changed_lines=10, hunks=10, unseen=ranges)
    assert render.depth_summary(record).endswith("not seen 1, 3, 5, 7, 9 and 5 more range(s)")


def test_a_reviewers_paths_and_name_cannot_break_out_of_the_markdown() -> None:
    """The Markdown goes into a PR comment: a claimed path or an agent id holding backticks, a
    line break or HTML stays inside its code span, so it cannot start a line of its own (an
    @-mention, a heading) or close the summary's <code>."""
    from dataclasses import replace  # noqa: PLC0415 - this test alone

    from coverage_gate.core.reconcile import ReviewerInput  # noqa: PLC0415
    from tests.core.test_reconcile import claims, review  # noqa: PLC0415

    hostile = "../x`\n@everyone `` # heading"
    agent = "r1</code><b>boss</b>"
    output = claims(["src/tax.py", hostile], agent=agent)
    reviewer = ReviewerInput(agent, output, None)
    decision = reconcile(replace(review(reviewer), scope=["src/tax.py"]))
    text = render.markdown(decision)
    assert "\n@everyone" not in text and "\n# heading" not in text
    assert "<b>" not in text and "&lt;/code&gt;&lt;b&gt;boss" in text
    assert "``` ../x`\\u000a@everyone `` # heading ```" in text
