"""GitHub Actions surfaces of a decision: annotations escaped as the runner reads them back, step
outputs in the delimiter form when a value spans lines, a comment body that starts with the
marker a workflow finds it by."""

from __future__ import annotations

from pathlib import Path

import pytest

from coverage_gate.commands.github import parse_inputs
from coverage_gate.contracts.model import Mode
from coverage_gate.errors import UsageError
from coverage_gate.outputs import github
from coverage_gate.outputs.github import (
    ANNOTATIONS_PER_LEVEL,
    COMMENT_LIMIT,
    COMMENT_MARKER,
    annotation_lines,
    comment_body,
    decision_outputs,
    escape_data,
    escape_property,
    output_entry,
    outputs_text,
    workflow_command,
)
from tests._support.examples import example_decision, renamed_scope_decision
from tests._support.github_runner import parse_command, parse_file_commands
from tests.core.test_citation_decisions import FABRICATED, claims, decide

AWKWARD = "a,b: 100% done\r\nnext line"


def test_a_message_and_properties_survive_the_runners_parsing() -> None:
    """A path with a comma and a colon, a title with a colon, a message with CR, LF and ``%``
    come back as written: properties split at ``,`` only where we meant them to."""
    line = workflow_command(
        "warning", AWKWARD, {"file": "src/a,b:c.py", "title": "coverage-gate: x, y"}
    )
    assert "\n" not in line and "\r" not in line
    parsed = parse_command(line)
    assert parsed is not None
    assert parsed.command == "warning"
    assert parsed.properties == {"file": "src/a,b:c.py", "title": "coverage-gate: x, y"}
    assert parsed.message == AWKWARD


@pytest.mark.parametrize(
    ("text", "data", "prop"),
    [
        ("%", "%25", "%25"),
        ("\r", "%0D", "%0D"),
        ("\n", "%0A", "%0A"),
        (":", ":", "%3A"),
        (",", ",", "%2C"),
        ("%0A", "%250A", "%250A"),  # an already escaped-looking text stays itself
    ],
)
def test_escaping_follows_the_workflow_command_rules(text: str, data: str, prop: str) -> None:
    assert escape_data(text) == data
    assert escape_property(text) == prop


def test_each_finding_is_one_annotation_on_its_file_error_under_enforce() -> None:
    lines = annotation_lines(example_decision("lying", Mode.ENFORCE))
    parsed = [parse_command(line) for line in lines]
    assert [(p.command, p.properties["file"]) for p in parsed if p] == [
        ("error", "src/util/strings.py"),
        ("error", "tests/test_handlers.py"),
    ]
    first = parsed[0]
    assert first is not None
    assert first.properties["title"] == (
        "coverage-gate: claimed inspected, no read recorded (lying-reviewer)"
    )


def test_findings_are_warnings_when_the_mode_does_not_enforce() -> None:
    parsed = [
        parse_command(line) for line in annotation_lines(example_decision("lying", Mode.SHADOW))
    ]
    assert {p.command for p in parsed if p} == {"warning"}


def test_an_annotation_places_a_repository_checked_out_below_the_workspace() -> None:
    lines = annotation_lines(example_decision("lying", Mode.ENFORCE), path_prefix="checkout/")
    files = [p.properties["file"] for p in map(parse_command, lines) if p]
    assert files == ["checkout/src/util/strings.py", "checkout/tests/test_handlers.py"]


def test_a_path_with_a_comma_is_one_annotation_on_that_very_file() -> None:
    decision = renamed_scope_decision({"tests/test_handlers.py": "tests/a,b: c.py"})
    parsed = [parse_command(line) for line in annotation_lines(decision)]
    assert [p.properties["file"] for p in parsed if p] == [
        "src/util/strings.py",
        "tests/a,b: c.py",
    ]


def test_more_findings_than_github_shows_end_in_a_notice_saying_how_many_were_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(github, "ANNOTATIONS_PER_LEVEL", 1)
    lines = annotation_lines(example_decision("lying", Mode.ENFORCE))
    parsed = [parse_command(line) for line in lines]
    assert [p.command for p in parsed if p] == ["error", "notice"]
    notice = parsed[1]
    assert notice is not None
    assert notice.message.startswith("1 more finding(s) not annotated (GitHub shows 1 per step)")
    assert ANNOTATIONS_PER_LEVEL == 10  # GitHub's own limit, per level and step


def test_a_failed_citation_is_an_annotation_on_the_cited_line() -> None:
    (line,) = annotation_lines(decide(claims(FABRICATED)))
    parsed = parse_command(line)
    assert parsed is not None
    assert (parsed.command, parsed.properties["file"], parsed.properties["line"]) == (
        "error",
        "src/tax.py",
        "3",
    )
    assert parsed.properties["title"] == (
        "coverage-gate: cited line does not hold the cited content (reviewer)"
    )


def test_an_honest_review_has_no_annotations() -> None:
    assert annotation_lines(example_decision("honest", Mode.ENFORCE)) == []


def test_single_line_outputs_are_name_value_and_others_use_the_delimiter_form() -> None:
    assert output_entry("verdict", "comment", "EOF_1") == "verdict=comment\n"
    assert output_entry("note", "a\nb", "EOF_1") == "note<<EOF_1\na\nb\nEOF_1\n"
    text = outputs_text({"verdict": "comment", "note": "line one\nline two\n", "x": "y"}, "D_9")
    assert parse_file_commands(text) == {
        "verdict": "comment",
        "note": "line one\nline two\n",
        "x": "y",
    }


def test_a_value_holding_the_delimiter_is_refused_rather_than_cut() -> None:
    with pytest.raises(ValueError, match="delimiter"):
        output_entry("note", "a\nEOF_1\nverdict=approve", "EOF_1")


def test_the_outputs_say_the_verdict_and_whether_it_was_downgraded() -> None:
    outputs = decision_outputs(example_decision("lying", Mode.ENFORCE), {"decision": "/d.json"})
    assert {k: outputs[k] for k in ("verdict", "downgraded", "would_downgrade", "findings")} == {
        "verdict": "comment",
        "downgraded": "true",
        "would_downgrade": "true",
        "findings": "2",
    }
    assert outputs["decision"] == "/d.json"
    shadow = decision_outputs(example_decision("lying", Mode.SHADOW), {})
    assert (shadow["verdict"], shadow["downgraded"], shadow["would_downgrade"]) == (
        "approve",
        "false",
        "true",
    )


def test_the_comment_body_starts_with_the_marker_then_the_markdown_decision() -> None:
    body = comment_body(example_decision("lying", Mode.ENFORCE))
    first, rest = body.split("\n", 1)
    assert first == COMMENT_MARKER == "<!-- coverage-gate -->"
    assert rest.startswith("### coverage-gate\n")
    assert "**approve** → **comment**" in rest


def test_a_comment_too_long_for_github_is_cut_at_a_line_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(github, "COMMENT_LIMIT", 400)
    body = comment_body(example_decision("lying", Mode.ENFORCE))
    assert len(body) <= 400
    assert body.startswith(COMMENT_MARKER + "\n")
    assert body.rstrip().endswith("the job summary and the decision document have every file._")
    assert COMMENT_LIMIT == 65_536


# --- the action's inputs ------------------------------------------------------------------------

BASE_INPUTS = {
    "INPUT_VERDICT": "approve",
    "INPUT_CLAIMS": "a.json",
    "INPUT_CHANGED": "changed.txt",
    "INPUT_REPO": "acme/shop",
    "INPUT_REVISION": "abc1234",
    "INPUT_OUTPUT_DIR": "/tmp/out",
}


def test_inputs_take_their_defaults_and_lists_skip_blank_lines() -> None:
    inputs = parse_inputs(
        {**BASE_INPUTS, "INPUT_CLAIMS": " a.json\n\n b.json \n", "INPUT_EVIDENCE": "a.e\nb.e\n"}
    )
    assert inputs.claims == [Path("a.json"), Path("b.json")]
    assert inputs.evidence == [Path("a.e"), Path("b.e")]
    assert (inputs.mode, inputs.depth_policy, inputs.fail_on_downgrade) == (None, None, False)
    assert parse_inputs({**BASE_INPUTS, "INPUT_FAIL_ON_DOWNGRADE": "TRUE"}).fail_on_downgrade


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"INPUT_VERDICT": "  "}, "input 'verdict' is required"),
        ({"INPUT_MODE": "enforced"}, "input 'mode': 'enforced' is not one of: auto, off, shadow"),
        ({"INPUT_DEPTH_POLICY": "some"}, "input 'depth-policy': 'some' is not one of"),
        ({"INPUT_UNKNOWN_POLICY": "deny"}, "input 'unknown-policy': 'deny' is not one of"),
        ({"INPUT_FAIL_ON_DOWNGRADE": "yes"}, "input 'fail-on-downgrade': 'yes' is not true"),
        ({"INPUT_BUNDLE": "b.json"}, "input 'bundle' cannot be combined with 'claims'"),
        ({"INPUT_CODEREVIEW_RUN": "r"}, "input 'codereview-run' cannot be combined with 'claims'"),
        (
            {"INPUT_CLAIMS": "", "INPUT_BUNDLE": "b.json", "INPUT_CODEREVIEW_RUN": "r"},
            "give input 'bundle' or 'codereview-run', not both",
        ),
        ({"INPUT_STREAM": "s", "INPUT_EVIDENCE": "e"}, "inputs 'stream' and 'evidence' cannot"),
        ({"INPUT_EVIDENCE": "e1\ne2"}, "input 'evidence' lists 2 file(s) and input 'claims' 1"),
        ({"INPUT_BASE": "abc"}, "give input 'changed' or inputs 'base' and 'head', not both"),
        ({"INPUT_CHANGED": "", "INPUT_BASE": "abc"}, "input 'changed' (the changed-file list) or"),
        ({"INPUT_REPO": ""}, "input 'repo' is required"),
        ({"INPUT_REVISION": ""}, "input 'revision' is required"),
        ({"INPUT_OUTPUT_DIR": ""}, "input 'output-dir' is required"),
    ],
)
def test_a_missing_wrong_or_conflicting_input_is_a_usage_error_naming_it(
    change: dict[str, str], message: str
) -> None:
    with pytest.raises(UsageError) as raised:
        parse_inputs({**BASE_INPUTS, **change})
    assert str(raised.value).startswith(message)
    assert raised.value.exit_code == 2
