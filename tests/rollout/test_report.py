"""The shadow report: reading OTLP JSON lines, the statistics, readiness, and the command."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coverage_gate.commands.report import report_app
from coverage_gate.contracts.model import (
    Capability,
    CitationPolicy,
    DecisionDocument,
    Depth,
    DepthPolicy,
    FileContent,
    Mode,
    ModeSource,
    Verdict,
)
from coverage_gate.rollout import metrics as m
from coverage_gate.rollout.report import (
    Criteria,
    build_report,
    load_folder,
    percentile,
    render_text,
    to_json,
    wilson,
)
from coverage_gate.rollout.simulation import (
    FABRICATED_CITATION,
    REAL_CITATION,
    ReviewerSpec,
    decide,
)
from coverage_gate.telemetry import otel_setup

SCOPE = ["src/api.py", "src/db.py", "README.md"]
HONEST = ReviewerSpec("security", claimed=SCOPE, read=SCOPE)
LIAR = ReviewerSpec("security", claimed=SCOPE, read=SCOPE[:1])
BLIND = ReviewerSpec(
    "style", claimed=SCOPE, read=(), source="codex-exec", capability=Capability.NONE
)
DAY_NS = 86_400 * 10**9
T0 = 1_790_000_000 * 10**9


def write(
    folder: Path,
    decisions: list[tuple[DecisionDocument, int]],
    *,
    errors: dict[str, int] | None = None,
    duration_s: float = 0.01,
) -> None:
    """Record decisions (each with its span end time) and errors through the real sink."""
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(folder)})
    for decision, end_ns in decisions:
        m.record_decision(telemetry.meter(), decision, duration_s=duration_s)
        m.record_reconcile_span(
            telemetry.tracer(), decision, duration_s=duration_s, end_time_ns=end_ns
        )
    for repo, count in (errors or {}).items():
        for _ in range(count):
            m.record_error(telemetry.meter(), repo=repo, kind=m.ErrorKind.BAD_INPUT)
    assert telemetry.shutdown() is True


def spread(decisions: list[DecisionDocument], days: float) -> list[tuple[DecisionDocument, int]]:
    step = int(days * DAY_NS / max(len(decisions) - 1, 1))
    return [(d, T0 + i * step) for i, d in enumerate(decisions)]


# --- statistics -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (1, 50, 0.0035, 0.1050),
    ],
)
def test_wilson_interval_matches_known_values(k: int, n: int, low: float, high: float) -> None:
    interval = wilson(k, n)
    assert interval is not None
    assert interval[0] == pytest.approx(low, abs=5e-4)
    assert interval[1] == pytest.approx(high, abs=5e-4)


def test_wilson_without_trials_is_none() -> None:
    assert wilson(0, 0) is None


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.95) == 95.0
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([], 0.5) is None


# --- reading ----------------------------------------------------------------------------------


def test_malformed_lines_are_counted_with_their_place_and_never_fatal(tmp_path: Path) -> None:
    write(tmp_path, [(decide("acme/api", scope=SCOPE, reviewers=[HONEST]), T0)])
    (tmp_path / "bad.jsonl").write_text(
        "{not json\n"
        "\n"
        '["a list"]\n'
        '{"something": "else"}\n'
        '{"resourceSpans": [{"scopeSpans": "oops"}]}\n'
        '{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "reconcile x",'
        ' "attributes": [{"key": "coverage_gate.outcome", "value": {"stringValue": "kept"}}],'
        ' "endTimeUnixNano": "soon"}]}]}]}\n',
        encoding="utf-8",
    )
    (tmp_path / "notes.txt").write_text("ignored: not a .jsonl/.json file")
    loaded = load_folder(tmp_path)
    assert len(loaded.reviews) == 1
    assert loaded.malformed_lines == 5
    assert [(x.file, x.line) for x in loaded.malformed_sample] == [
        ("bad.jsonl", 1),
        ("bad.jsonl", 3),
        ("bad.jsonl", 4),
        ("bad.jsonl", 5),
        ("bad.jsonl", 6),
    ]
    assert "bad.jsonl:1: not JSON" in render_text(build_report(loaded, Criteria()))


def test_spans_other_than_reconcile_are_ignored(tmp_path: Path) -> None:
    telemetry = otel_setup.setup({otel_setup.TELEMETRY_DIR_ENV: str(tmp_path)})
    telemetry.tracer().start_span("invoke_agent security").end()
    telemetry.tracer().start_span("reconcile without attributes").end()
    telemetry.shutdown()
    loaded = load_folder(tmp_path)
    assert loaded.reviews == []
    assert loaded.malformed_lines == 0


def test_the_same_span_read_twice_counts_once(tmp_path: Path) -> None:
    """A copied file (or a Collector writing what a run also wrote) does not double a review."""
    write(tmp_path, [(decide("acme/api", scope=SCOPE, reviewers=[HONEST]), T0)])
    (traces,) = tmp_path.glob("traces-*.jsonl")
    (tmp_path / "copy.jsonl").write_text(traces.read_text())
    assert len(load_folder(tmp_path).reviews) == 1


def test_errors_come_from_the_metric_and_name_repositories_without_reviews(
    tmp_path: Path,
) -> None:
    write(tmp_path, [], errors={"acme/broken": 2})
    write(tmp_path, [], errors={"acme/broken": 1})
    report = build_report(load_folder(tmp_path), Criteria())
    (repo,) = report.repositories
    assert (repo.repository, repo.errors, repo.reviews, repo.ready) == ("acme/broken", 3, 0, False)


def test_cumulative_error_points_are_not_summed_twice(tmp_path: Path) -> None:
    """A Collector writing cumulative points repeats the running total: the latest counts."""
    point = (
        '{{"resourceMetrics":[{{"scopeMetrics":[{{"metrics":[{{"name":"coverage_gate.errors",'
        '"sum":{{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[{{'
        '"startTimeUnixNano":"1","timeUnixNano":"{t}","asInt":"{v}","attributes":['
        '{{"key":"repository","value":{{"stringValue":"acme/api"}}}},'
        '{{"key":"kind","value":{{"stringValue":"internal"}}}}]}}]}}}}]}}]}}]}}\n'
    )
    (tmp_path / "c.jsonl").write_text(point.format(t=2, v=1) + point.format(t=3, v=4))
    assert load_folder(tmp_path).errors["acme/api"] == 4


# --- per-repository figures and readiness -----------------------------------------------------


def test_repository_figures(tmp_path: Path) -> None:
    """Counts, shares, the Wilson interval, evidence availability, mode sources, durations and
    reasons, from known decisions."""
    decisions = (
        [decide("acme/api", scope=SCOPE, reviewers=[HONEST])] * 6
        + [decide("acme/api", scope=SCOPE, reviewers=[LIAR])] * 2
        + [decide("acme/api", scope=SCOPE, reviewers=[HONEST, BLIND])]
        + [
            decide(
                "acme/api",
                scope=SCOPE,
                reviewers=[HONEST],
                verdict=Verdict.REQUEST_CHANGES,
                mode_source=ModeSource.FALLBACK,
            )
        ]
    )
    write(tmp_path, spread(decisions, days=2), duration_s=0.004)
    (repo,) = build_report(load_folder(tmp_path), Criteria()).repositories
    assert repo.reviews == 10
    assert repo.approvals == 9
    assert repo.outcomes == {
        "kept": 6,
        "not_applicable": 1,
        "unverifiable": 1,
        "would_downgrade": 2,
    }
    assert repo.would_downgrade == 2
    assert repo.would_downgrade_rate == pytest.approx(2 / 9)
    assert repo.would_downgrade_interval == pytest.approx(wilson(2, 9))
    assert repo.claimed_files == 33
    assert repo.unsupported_share == pytest.approx(4 / 33)
    assert repo.unknown_share == pytest.approx(3 / 33)
    assert (repo.evidence.reviews_available, repo.evidence.capability_none) == (9, 1)
    assert repo.mode_sources == {"fallback": 1, "snapshot": 9}
    assert repo.fallbacks == 1
    assert repo.duration_p50_s == pytest.approx(0.004)
    assert repo.top_reasons == [("claims_unsupported", 2)]
    assert repo.days == pytest.approx(2.0)


# Ready needs the upper end of the would-downgrade rate's 95% Wilson interval under the ceiling:
# 12 clean approvals bound it at 24.3%, 5 at 43.4%; 4 liars in 12 at 60.9%. The error rate
# likewise: 1 error beside 12 reviews bounds it at 33.3%, 12 at 69.2%.
CRITERIA = Criteria(min_approvals=10, min_days=5, max_would_downgrade_rate=0.5, max_error_rate=0.5)


@pytest.mark.parametrize(
    ("case", "failing"),
    [
        ("ready", set()),
        ("few", {"approvals"}),
        ("short", {"days"}),
        ("blind", {"evidence"}),
        ("incomplete", {"evidence"}),
        ("stale", {"evidence"}),
        ("liars", {"would_downgrade_rate"}),
        ("fallback", {"fallbacks"}),
        ("errors", {"error_rate"}),
        ("an error", set()),
    ],
)
def test_each_readiness_criterion_fails_on_its_own(
    tmp_path: Path, case: str, failing: set[str]
) -> None:
    """Each criterion can fail alone; a repository is ready only when all pass."""
    reviewers = {
        "blind": [HONEST, BLIND],
        "incomplete": [ReviewerSpec("security", claimed=SCOPE, read=SCOPE[:1], complete=False)],
        "stale": [ReviewerSpec("security", claimed=SCOPE, read=SCOPE, evidence_revision="old")],
    }.get(case, [HONEST])
    count = 5 if case == "few" else 12
    decisions = [
        decide(
            "acme/api",
            scope=SCOPE,
            reviewers=[LIAR] if case == "liars" and i % 3 == 0 else reviewers,
            mode_source=ModeSource.FALLBACK if case == "fallback" and i == 4 else ModeSource.LIVE,
        )
        for i in range(count)
    ]
    write(
        tmp_path,
        spread(decisions, days=2 if case == "short" else 6),
        errors={"acme/api": {"errors": 12, "an error": 1}[case]}
        if case in ("errors", "an error")
        else None,
    )
    (repo,) = build_report(load_folder(tmp_path), CRITERIA).repositories
    assert {c.name for c in repo.checks if not c.ok} == failing
    assert repo.ready is (not failing)


def test_off_and_enforce_decisions_count_toward_the_rate(tmp_path: Path) -> None:
    """Downgraded (enforce) and would-downgrade (shadow or off) are both flagged approvals."""
    decisions = [
        decide("acme/api", scope=SCOPE, reviewers=[LIAR], mode=Mode.ENFORCE),
        decide("acme/api", scope=SCOPE, reviewers=[LIAR], mode=Mode.OFF),
        decide("acme/api", scope=SCOPE, reviewers=[HONEST], mode=Mode.ENFORCE),
    ]
    write(tmp_path, spread(decisions, days=1))
    (repo,) = build_report(load_folder(tmp_path), Criteria()).repositories
    assert repo.outcomes == {"downgraded": 1, "kept": 1, "would_downgrade": 1}
    assert repo.would_downgrade == 2
    assert repo.modes == {"enforce": 2, "off": 1}


def test_list_would_downgrade_names_repository_revision_reviewer_and_files(
    tmp_path: Path,
) -> None:
    honest_style = ReviewerSpec("style", claimed=SCOPE, read=SCOPE)
    decisions = [
        decide("acme/api", scope=SCOPE, reviewers=[LIAR, honest_style], revision="r1"),
        decide("acme/api", scope=SCOPE, reviewers=[HONEST], revision="r2"),
        decide("acme/web", scope=SCOPE, reviewers=[LIAR], revision="r3", mode=Mode.ENFORCE),
    ]
    write(tmp_path, spread(decisions, days=1))
    report = build_report(load_folder(tmp_path), Criteria(), list_flagged=True)
    assert report.would_downgrade is not None
    listed = [(f.repository, f.revision, f.reviewer, f.files) for f in report.would_downgrade]
    assert listed == [
        ("acme/api", "r1", "security", ("README.md", "src/db.py")),
        ("acme/web", "r3", "security", ("README.md", "src/db.py")),
    ]
    document = json.loads(json.dumps(to_json(report)))
    assert document["would_downgrade"][0]["files"] == ["README.md", "src/db.py"]


# --- the command ------------------------------------------------------------------------------

runner = CliRunner()


def test_report_command_json(tmp_path: Path) -> None:
    write(tmp_path, spread([decide("acme/api", scope=SCOPE, reviewers=[LIAR])] * 3, days=1))
    result = runner.invoke(
        report_app,
        ["--telemetry-dir", str(tmp_path), "--format", "json", "--min-approvals", "3"],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["schema"] == "coverage-gate/report"
    assert document["criteria"]["min_approvals"] == 3
    (repo,) = document["repositories"]
    assert repo["repository"] == "acme/api"
    assert repo["readiness"] == "not_ready"
    assert repo["would_downgrade"] == 3
    assert set(repo["would_downgrade_interval"]) == {"low", "high"}
    assert "would_downgrade" not in document


def test_report_command_text_lists_flagged_decisions(tmp_path: Path) -> None:
    write(tmp_path, [(decide("acme/api", scope=SCOPE, reviewers=[LIAR], revision="abc"), T0)])
    result = runner.invoke(
        report_app, ["--telemetry-dir", str(tmp_path), "--list", "would_downgrade"]
    )
    assert result.exit_code == 0, result.output
    assert "acme/api: NOT READY to enforce" in result.stdout
    assert "acme/api abc security [shadow]" in result.stdout


def test_report_on_an_empty_folder_says_so(tmp_path: Path) -> None:
    result = runner.invoke(report_app, ["--telemetry-dir", str(tmp_path)])
    assert result.exit_code == 0
    assert "no reviews recorded" in result.stdout


def test_missing_telemetry_folder_is_bad_input(tmp_path: Path) -> None:
    result = runner.invoke(report_app, ["--telemetry-dir", str(tmp_path / "nope")])
    assert result.exit_code == 3
    assert "no telemetry folder" in result.stderr


@pytest.mark.parametrize(
    "option",
    [
        ["--min-evidence", "1.5"],
        ["--max-would-downgrade-rate", "-0.1"],
        ["--min-approvals", "-1"],
        ["--max-error-rate", "1.5"],
    ],
)
def test_criteria_out_of_range_are_a_usage_error(tmp_path: Path, option: list[str]) -> None:
    """A criterion is typed on the command line: a value out of range is a mistyped option (exit
    2, nothing on stdout), not bad configuration."""
    result = runner.invoke(report_app, ["--telemetry-dir", str(tmp_path), *option])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "coverage-gate report: error:" in result.stderr


def test_default_folder_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --telemetry-dir the report reads where the embedded default writes."""
    write(tmp_path, [(decide("acme/api", scope=SCOPE, reviewers=[HONEST]), T0)])
    monkeypatch.setenv(otel_setup.TELEMETRY_DIR_ENV, str(tmp_path))
    result = runner.invoke(report_app, ["--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["input"]["reviews"] == 1


# --- depth and the depth policies ---------------------------------------------------------------

SKIM = ReviewerSpec(
    "style", claimed=SCOPE, read=SCOPE, depth=Depth.FULL, depths={"src/api.py": Depth.PARTIAL}
)
BLANK = ReviewerSpec(
    "style", claimed=SCOPE, read=SCOPE, depth=Depth.FULL, depths={"src/api.py": Depth.NONE}
)
FULL = ReviewerSpec("style", claimed=SCOPE, read=SCOPE, depth=Depth.FULL)


def _depth_decisions() -> list[DecisionDocument]:
    """10 approvals in shadow: 6 fully seen, 3 skimmed (partial), 1 blank (none); 1 comment."""
    return (
        [decide("acme/api", scope=SCOPE, reviewers=[FULL])] * 6
        + [decide("acme/api", scope=SCOPE, reviewers=[SKIM])] * 3
        + [decide("acme/api", scope=SCOPE, reviewers=[BLANK])]
        + [decide("acme/api", scope=SCOPE, reviewers=[BLANK], verdict=Verdict.COMMENT)]
    )


def test_report_shows_depths_and_each_policys_shallow_and_would_downgrade_rates(
    tmp_path: Path,
) -> None:
    """Per policy: shallow files of those with evidence, and approvals it would downgrade, each
    with its Wilson interval, all from the comparison the decisions recorded."""
    write(tmp_path, spread(_depth_decisions(), days=1))
    (repo,) = build_report(load_folder(tmp_path), Criteria()).repositories
    depth = repo.depth
    assert depth.files == {"full": 28, "partial": 3, "none": 2, "unknown": 0}
    assert depth.in_force == {"accept": 11}
    assert depth.approvals_compared == 10
    rows = {row.depth_policy: row for row in depth.policies}
    assert list(rows) == ["accept", "any-hunk", "all-hunks"]
    assert [(r.shallow_files, r.would_downgrade) for r in rows.values()] == [(0, 0), (2, 1), (5, 4)]
    assert rows["all-hunks"].shallow_rate == pytest.approx(5 / 33)
    assert rows["all-hunks"].shallow_interval == pytest.approx(wilson(5, 33))
    assert rows["any-hunk"].would_downgrade_rate == pytest.approx(1 / 10)
    assert rows["all-hunks"].would_downgrade_interval == pytest.approx(wilson(4, 10))

    text = render_text(build_report(load_folder(tmp_path), Criteria()))
    assert "depth of claimed files with evidence: full 28, partial 3, none 2, unknown 0" in text
    assert "  all-hunks     5 = 15.2% (95% CI 6.7%-30.9%)" in text
    assert "4 = 40.0% (95% CI 16.8%-68.7%)" in text
    body = to_json(build_report(load_folder(tmp_path), Criteria()))["repositories"][0]
    assert set(body["depth"]["policies"][2]["would_downgrade_interval"]) == {"low", "high"}


def test_readiness_can_be_judged_under_a_stricter_depth_policy(tmp_path: Path) -> None:
    """Ready to enforce accept is not ready to enforce all-hunks, on the same reviews."""
    write(tmp_path, spread(_depth_decisions(), days=1))
    loaded = load_folder(tmp_path)
    # 10 approvals: none flagged under accept bounds the rate at 27.8%, 1 under any-hunk at
    # 40.4%, 4 under all-hunks at 68.7%.
    lenient = build_report(
        loaded,
        Criteria(min_approvals=1, min_days=0, max_would_downgrade_rate=0.45, max_error_rate=1),
    )
    strict = build_report(
        loaded,
        Criteria(
            min_approvals=1,
            min_days=0,
            max_would_downgrade_rate=0.45,
            depth_policy=DepthPolicy.ALL_HUNKS,
        ),
    )
    assert lenient.repositories[0].ready
    (check,) = [c for c in strict.repositories[0].checks if c.name == "would_downgrade_rate"]
    assert not check.ok
    assert "would downgrade 40.0% of approvals under depth policy all-hunks" in check.detail
    result = runner.invoke(
        report_app,
        [
            "--telemetry-dir",
            str(tmp_path),
            "--min-approvals",
            "1",
            "--min-days",
            "0",
            "--max-would-downgrade-rate",
            "0.45",
            "--max-error-rate",
            "1",
            "--depth-policy",
            "any-hunk",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["criteria"]["depth_policy"] == "any-hunk"
    assert document["repositories"][0]["readiness"] == "ready"


def test_list_would_downgrade_names_shallow_files_too(tmp_path: Path) -> None:
    decision = decide(
        "acme/api", scope=SCOPE, reviewers=[SKIM], depth_policy=DepthPolicy.ALL_HUNKS, revision="r9"
    )
    write(tmp_path, [(decision, T0)])
    report = build_report(load_folder(tmp_path), Criteria(), list_flagged=True)
    assert report.would_downgrade is not None
    (flagged,) = report.would_downgrade
    assert (flagged.files, flagged.shallow_files) == ((), ("src/api.py",))
    assert "acme/api r9 style [shadow]" in render_text(report)
    assert ": -; shallow: src/api.py" in render_text(report)


def test_reviews_recorded_before_the_comparison_are_left_out_of_it(tmp_path: Path) -> None:
    """A span without the comparison (an older version wrote it) is neither flagged nor
    counted under any policy."""
    write(tmp_path, [(decide("acme/api", scope=SCOPE, reviewers=[LIAR]), T0)])
    loaded = load_folder(tmp_path)
    older = [replace(r, would_downgrade_under=None) for r in loaded.reviews]
    loaded.reviews[:] = older
    (repo,) = build_report(loaded, Criteria()).repositories
    assert repo.depth.approvals_compared == 0
    assert all(row.would_downgrade_rate is None for row in repo.depth.policies)


# --- citations --------------------------------------------------------------------------------

CITES_REAL = ReviewerSpec("security", claimed=SCOPE, read=SCOPE, citations=[REAL_CITATION])
CITES_FALSE = ReviewerSpec(
    "security",
    claimed=SCOPE,
    read=SCOPE,
    citations=[REAL_CITATION, FABRICATED_CITATION, FABRICATED_CITATION],
)


def _citation_decisions() -> list[DecisionDocument]:
    """10 approvals: 7 citing real lines, 2 with two fabricated lines each, 1 without
    citations; 2 comments, one of them with fabricated lines."""
    return (
        [decide("acme/api", scope=SCOPE, reviewers=[CITES_REAL])] * 7
        + [decide("acme/api", scope=SCOPE, reviewers=[CITES_FALSE])] * 2
        + [decide("acme/api", scope=SCOPE, reviewers=[HONEST])]
        + [decide("acme/api", scope=SCOPE, reviewers=[CITES_FALSE], verdict=Verdict.COMMENT)]
        + [decide("acme/api", scope=SCOPE, reviewers=[HONEST], verdict=Verdict.COMMENT)]
    )


def test_report_shows_failed_citations_per_100_reviews_and_their_rates_with_intervals(
    tmp_path: Path,
) -> None:
    write(tmp_path, spread(_citation_decisions(), days=1))
    (repo,) = build_report(load_folder(tmp_path), Criteria()).repositories
    cited = repo.citations
    assert (cited.reviews, cited.reviews_citing, cited.replayed) == (12, 10, 7 + 3 * 3)
    assert cited.failed == 6
    assert cited.failed_per_100_reviews == pytest.approx(50.0)
    assert cited.reviews_failed == 3
    assert cited.reviews_failed_interval == pytest.approx(wilson(3, 12))
    assert (cited.would_downgrade, cited.approvals) == (2, 10)
    assert cited.would_downgrade_rate == pytest.approx(0.2)
    assert cited.would_downgrade_interval == pytest.approx(wilson(2, 10))

    text = render_text(build_report(load_folder(tmp_path), Criteria()))
    assert "  citations: 16 replayed in 10 of 12 reviews; 6 failed = 50.0 per 100 reviews" in text
    assert (
        "  reviews with a failed citation 3 = 25.0% (95% CI 8.9%-53.2%); approvals failed "
        "citations would downgrade 2 of 10 = 20.0% (95% CI 5.7%-51.0%)"
    ) in text
    document = to_json(build_report(load_folder(tmp_path), Criteria()))
    assert document["version"] == "2.0"
    body = document["repositories"][0]["citations"]
    assert body["failed"] == 6
    assert set(body["would_downgrade_interval"]) == {"low", "high"}


def test_the_citation_rates_do_not_depend_on_the_policy_in_force(tmp_path: Path) -> None:
    """Under citation policy accept nothing is downgraded, and the report still says what
    downgrade would have done."""
    accepted = [
        d.model_copy(update={"citation_policy": CitationPolicy.ACCEPT})
        for d in _citation_decisions()
    ]
    write(tmp_path, spread(accepted, days=1))
    (repo,) = build_report(load_folder(tmp_path), Criteria()).repositories
    assert (repo.citations.would_downgrade, repo.citations.approvals) == (2, 10)


def test_reviews_recorded_before_citations_are_left_out_of_their_rates(tmp_path: Path) -> None:
    write(tmp_path, [(decide("acme/api", scope=SCOPE, reviewers=[CITES_FALSE]), T0)])
    loaded = load_folder(tmp_path)
    loaded.reviews[:] = [replace(r, citations_would_downgrade=None) for r in loaded.reviews]
    (repo,) = build_report(loaded, Criteria()).repositories
    assert repo.citations.reviews == 0
    assert repo.citations.failed_per_100_reviews is None
    assert "  citations: not recorded" in render_text(build_report(loaded, Criteria()))


def test_list_would_downgrade_names_failed_citations(tmp_path: Path) -> None:
    decision = decide("acme/api", scope=SCOPE, reviewers=[CITES_FALSE], revision="r7")
    write(tmp_path, [(decision, T0)])
    report = build_report(load_folder(tmp_path), Criteria(), list_flagged=True)
    assert report.would_downgrade is not None
    (flagged,) = report.would_downgrade
    assert flagged.failed_citations == ("src/api.py:2", "src/api.py:2")
    assert ": -; failed citations: src/api.py:2, src/api.py:2" in render_text(report)


# --- content: mismatch and content-credit rates -------------------------------------------------

MATCHED = FileContent.MATCHED
#: pi: every read was the file at the revision; or one read returned the reviewer's own edit.
CHECKED = ReviewerSpec("security", claimed=SCOPE, read=SCOPE, content=MATCHED)
EDITED = replace(CHECKED, contents={"src/db.py": FileContent.MISMATCH})
#: Claude Code: README.md never read, its lines shown by another call; or one file read, its
#: text not carried, two not read at all.
GREP = ReviewerSpec(
    "style",
    claimed=SCOPE,
    read=SCOPE,
    source="claude-code",
    content=MATCHED,
    contents={"README.md": FileContent.VIA_CONTENT},
)
UNREAD = ReviewerSpec("style", claimed=SCOPE, read=SCOPE[:1], source="claude-code")


def _content_decisions() -> list[DecisionDocument]:
    """8 reviews of acme/api, 3 claimed files a reviewer:

    * 4 x (CHECKED, GREP): pi 12 matched; Claude Code 8 matched, 4 via_content;
    * 2 x (EDITED, UNREAD): pi 4 matched, 2 mismatch; Claude Code 2 unchecked, 4 none;
    * 1 x CHECKED, a comment: pi 3 matched;
    * 1 x (HONEST, BLIND): pi 3 unchecked; codex-exec 3 none.

    pi: 24 claimed, 2 mismatch, none credited; Claude Code: 18 claimed, 4 credited; codex-exec:
    3 claimed. The repository: 45 claimed, 2 mismatch, 4 credited."""
    return (
        [decide("acme/api", scope=SCOPE, reviewers=[CHECKED, GREP])] * 4
        + [decide("acme/api", scope=SCOPE, reviewers=[EDITED, UNREAD])] * 2
        + [decide("acme/api", scope=SCOPE, reviewers=[CHECKED], verdict=Verdict.COMMENT)]
        + [decide("acme/api", scope=SCOPE, reviewers=[HONEST, BLIND])]
    )


def test_report_shows_mismatch_and_content_credit_rates_per_repository_and_client(
    tmp_path: Path,
) -> None:
    """Each rate is its count over the claimed files whose content was checked, with its 95%
    Wilson interval, for the repository and for each client (evidence format) within it."""
    write(tmp_path, spread(_content_decisions(), days=1))
    (repo,) = build_report(load_folder(tmp_path), Criteria()).repositories
    content = repo.content
    assert content is not None
    assert content.claimed == 45 == repo.claimed_files
    assert content.outcomes == {
        "matched": 27,
        "via_content": 4,
        "mismatch": 2,
        "unchecked": 5,
        "none": 7,
    }
    assert (content.mismatch_rate.count, content.mismatch_rate.of) == (2, 45)
    assert content.mismatch_rate.rate == pytest.approx(2 / 45)
    assert content.mismatch_rate.interval == pytest.approx((0.0123, 0.1483), abs=5e-4)
    assert (content.content_credit_rate.count, content.content_credit_rate.of) == (4, 45)
    assert content.content_credit_rate.rate == pytest.approx(4 / 45)
    assert content.content_credit_rate.interval == pytest.approx((0.0351, 0.2073), abs=5e-4)
    clients = {c.format: c for c in content.clients}
    assert list(clients) == ["claude-code", "codex-exec", "pi-rpc"]
    got = {
        fmt: (c.claimed, c.mismatch_rate.count, c.content_credit_rate.count)
        for fmt, c in clients.items()
    }
    assert got == {"claude-code": (18, 0, 4), "codex-exec": (3, 0, 0), "pi-rpc": (24, 2, 0)}
    assert clients["pi-rpc"].outcomes == {
        "matched": 19,
        "via_content": 0,
        "mismatch": 2,
        "unchecked": 3,
        "none": 0,
    }
    assert clients["claude-code"].outcomes == {
        "matched": 8,
        "via_content": 4,
        "mismatch": 0,
        "unchecked": 2,
        "none": 4,
    }
    for client in clients.values():
        for figure in (client.mismatch_rate, client.content_credit_rate):
            assert figure.of == client.claimed
            assert figure.rate == pytest.approx(figure.count / figure.of)
            assert figure.interval == pytest.approx(wilson(figure.count, figure.of))
            assert figure.limit is None  # shown, never judged
    assert clients["pi-rpc"].mismatch_rate.interval == pytest.approx((0.0232, 0.2585), abs=5e-4)
    assert clients["claude-code"].content_credit_rate.interval == pytest.approx(
        (0.0900, 0.4521), abs=5e-4
    )
    # Readiness does not judge them (``streams``: whether the adapters understood the streams).
    assert {c.name for c in repo.checks} == {
        "approvals",
        "days",
        "evidence",
        "fallbacks",
        "would_downgrade_rate",
        "error_rate",
        "streams",
    }


def test_the_text_report_names_the_content_rates(tmp_path: Path) -> None:
    write(tmp_path, spread(_content_decisions(), days=1))
    text = render_text(build_report(load_folder(tmp_path), Criteria()))
    assert (
        "  content checks of 45 claimed files: matched 27, via_content 4, mismatch 2, "
        "unchecked 5, none 7\n"
        "  mismatch rate 2 of 45 = 4.4% (95% CI 1.2%-14.8%); "
        "content-credit rate 4 of 45 = 8.9% (95% CI 3.5%-20.7%)\n"
        "    client claude-code, 18 claimed files: mismatch rate 0 of 18 = 0.0% "
        "(95% CI 0.0%-17.6%); content-credit rate 4 of 18 = 22.2% (95% CI 9.0%-45.2%)\n"
        "    client codex-exec, 3 claimed files: mismatch rate 0 of 3 = 0.0% "
        "(95% CI 0.0%-56.1%); content-credit rate 0 of 3 = 0.0% (95% CI 0.0%-56.1%)\n"
        "    client pi-rpc, 24 claimed files: mismatch rate 2 of 24 = 8.3% "
        "(95% CI 2.3%-25.8%); content-credit rate 0 of 24 = 0.0% (95% CI 0.0%-13.8%)\n"
    ) in text


def test_the_json_report_gives_the_content_rates_as_its_other_rates(tmp_path: Path) -> None:
    """``content``: the repository's claimed files by outcome and both rates, then each client's,
    each rate shaped as an entry of ``rates`` (count, of, rate, interval, limit)."""
    write(tmp_path, spread(_content_decisions(), days=1))
    result = runner.invoke(report_app, ["--telemetry-dir", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["version"] == "2.0"
    content = document["repositories"][0]["content"]
    assert set(content) == {
        "claimed",
        "outcomes",
        "mismatch_rate",
        "content_credit_rate",
        "clients",
        "mismatches",
    }
    # the two mismatched files were the reviewer's own edit (pi-rpc, no client version named)
    assert content["mismatches"] == [
        {"format": "pi-rpc", "client_version": "none", "kind": "edit", "files": 2}
    ]
    rate_keys = set(document["repositories"][0]["rates"]["would_downgrade_rate"])
    assert set(content["mismatch_rate"]) == rate_keys
    assert content["mismatch_rate"]["count"] == 2
    assert set(content["mismatch_rate"]["interval"]) == {"low", "high"}
    pi = next(c for c in content["clients"] if c["format"] == "pi-rpc")
    assert (pi["claimed"], pi["mismatch_rate"]["count"], pi["mismatch_rate"]["of"]) == (24, 2, 24)
    assert pi["content_credit_rate"]["rate"] == 0.0
    assert [c["format"] for c in content["clients"]] == ["claude-code", "codex-exec", "pi-rpc"]


def test_without_content_checks_the_report_shows_no_content(tmp_path: Path) -> None:
    """Spans written before content checks (no content counts on a reviewer event), and reviewers
    that ran without an evidence document, give no content section, in the text or the JSON."""
    no_evidence = ReviewerSpec("security", claimed=SCOPE, read=(), has_evidence=False)
    write(
        tmp_path,
        spread(
            [decide("acme/api", scope=SCOPE, reviewers=[CHECKED, GREP])] * 2
            + [decide("acme/web", scope=SCOPE, reviewers=[no_evidence])],
            days=1,
        ),
    )
    loaded = load_folder(tmp_path)
    reports = build_report(loaded, Criteria()).repositories
    assert [r.content is not None for r in reports] == [True, False]
    loaded.reviews[:] = [
        replace(r, reviewers=tuple(replace(w, content=()) for w in r.reviewers))
        for r in loaded.reviews
    ]
    older = build_report(loaded, Criteria())
    assert all(r.content is None for r in older.repositories)
    text = render_text(older)
    assert "content checks" not in text
    assert "mismatch rate" not in text
    assert all("content" not in body for body in to_json(older)["repositories"])


@pytest.mark.parametrize(("errors", "ready"), [(3, True), (80, False)])
def test_an_operators_few_errors_pass_and_a_pipeline_failing_most_runs_does_not(
    tmp_path: Path, errors: int, ready: bool
) -> None:
    """Default criteria (the error rate's 95% upper bound at most 10%): 150 clean reviews beside
    3 mistyped runs are ready (3 of 153 bound the rate at 5.6%), beside 80 failed runs not; the
    errors are shown by kind in the text and the JSON."""
    decisions = [decide("acme/api", scope=SCOPE, reviewers=[HONEST]) for _ in range(150)]
    write(tmp_path, spread(decisions, days=8), errors={"acme/api": errors})
    (repo,) = build_report(load_folder(tmp_path), Criteria()).repositories
    (check,) = [c for c in repo.checks if c.name == "error_rate"]
    assert check.ok is ready, check.detail
    assert repo.ready is ready, [c for c in repo.checks if not c.ok]
    assert repo.error_kinds == {"bad_input": errors}
    text = runner.invoke(report_app, ["--telemetry-dir", str(tmp_path)]).stdout
    assert f"errors {errors} (bad_input {errors})" in text
    listed = runner.invoke(report_app, ["--telemetry-dir", str(tmp_path), "--format", "json"])
    (body,) = json.loads(listed.stdout)["repositories"]
    assert body["error_kinds"] == {"bad_input": errors}
    assert (body["rates"]["error_rate"]["count"], body["rates"]["error_rate"]["of"]) == (
        errors,
        150 + errors,
    )
