"""``report --format html``: one self-contained page drawn from the JSON document, the html
extra loaded on that path alone, and a one-line error without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import coverage_gate.outputs
from coverage_gate.commands.report import HTML_EXTRA_MISSING, report_app
from coverage_gate.outputs.report_html import CHECK_WORDS
from coverage_gate.rollout.simulation import simulate
from coverage_gate.telemetry.otel_setup import TELEMETRY_DIR_ENV
from tests._support.docs import all_text
from tests.test_startup import loaded_by

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
#: The README's command (README: Report, "One page to look at").
README_HTML = "coverage-gate report --format html -o report.html"


@pytest.fixture(scope="module")
def rollout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("rollout")
    simulate(folder, reviews=70)
    return folder


def _report(*args: str) -> tuple[int, str]:
    result = runner.invoke(report_app, list(args))
    return result.exit_code, result.stdout


class _Page(HTMLParser):
    """Every start tag with its attributes, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Page()
    parser.feed(page)
    return parser.tags


def test_without_the_html_extra_the_page_exits_3_with_what_to_install(
    monkeypatch: pytest.MonkeyPatch, rollout: Path, tmp_path: Path
) -> None:
    """A missing extra is one line naming what to install, exit 3, before any reading (and no
    file is written)."""
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import vl_convert raises ImportError
    # an earlier test may have loaded the page's module: it must be imported again, and fail
    monkeypatch.delitem(sys.modules, "coverage_gate.outputs.report_html", raising=False)
    monkeypatch.delattr(coverage_gate.outputs, "report_html", raising=False)
    page = tmp_path / "x.html"
    result = runner.invoke(
        report_app, ["--telemetry-dir", str(rollout), "--format", "html", "-o", str(page)]
    )
    assert not page.exists()
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr == f"coverage-gate report: error: {HTML_EXTRA_MISSING}\n"
    # an install hint that works wherever coverage-gate was installed from: into its own Python
    assert f"{sys.executable} -m pip install 'vl-convert-python>=1.6'" in result.stderr


def test_the_html_module_is_loaded_by_the_html_format_alone(rollout: Path) -> None:
    """The json and text reports, and record, load neither the page's module nor its extra."""
    for argv in (
        ["report", "--telemetry-dir", str(rollout), "--format", "json"],
        ["report", "--telemetry-dir", str(rollout)],
        ["record", "--help"],
    ):
        modules = loaded_by(*argv)
        assert "coverage_gate.outputs.report_html" not in modules, argv
        assert not [m for m in modules if m.startswith("vl_convert")], argv


def test_the_page_is_self_contained_and_has_no_script(rollout: Path, tmp_path: Path) -> None:
    """No script, no style sheet, font or image from elsewhere: nothing to fetch offline."""
    out = tmp_path / "report.html"
    code, stdout = _report("--telemetry-dir", str(rollout), "--format", "html", "-o", str(out))
    assert (code, stdout) == (0, "")
    page = out.read_text()
    tags = _tags(page)
    assert not [t for t, _ in tags if t in {"script", "link", "img", "iframe", "object"}]
    for _, attrs in tags:
        for name in ("src", "href", "xlink:href"):
            value = attrs.get(name) or ""
            assert not value or value.startswith("#"), (name, value)
    assert "@import" not in page and "url(" not in page
    assert "http://www.w3.org/" in page  # SVG namespaces only
    assert not [
        u
        for u in page.split('"')
        if u.startswith(("http://", "https://")) and not u.startswith("http://www.w3.org/")
    ]


def test_every_chart_has_a_title_a_text_alternative_and_a_caption(rollout: Path) -> None:
    code, page = _report("--telemetry-dir", str(rollout), "--format", "html")
    assert code == 0
    svgs = page.count("<svg ")
    assert svgs == page.count('role="img" aria-labelledby=')
    assert svgs == page.count("<title id=") == page.count("<desc id=")
    # every chart but the fleet's trend lines (whose row says what they are) has a caption
    figures = [a for t, a in _tags(page) if t == "figure" and a.get("data-chart") != "trend"]
    assert len(figures) == page.count("<figcaption>") > 0


def test_the_fleet_table_holds_the_json_figures_and_orders_by_risk(rollout: Path) -> None:
    """Each row's data attributes are the JSON's values; the repositories not ready come first,
    the worst would-downgrade upper bound first; the headline says how many are ready and what
    holds the others back, each check in words."""
    _, text = _report("--telemetry-dir", str(rollout), "--format", "json")
    document = json.loads(text)
    _, page = _report("--telemetry-dir", str(rollout), "--format", "html")
    rows = [a for t, a in _tags(page) if t == "tr" and "data-repository" in a]
    by_name = {r["repository"]: r for r in document["repositories"]}
    assert sorted(a["data-repository"] or "" for a in rows) == sorted(by_name)
    for attrs in rows:
        repo = by_name[attrs["data-repository"] or ""]
        interval = repo["would_downgrade_interval"]
        assert attrs["data-readiness"] == repo["readiness"]
        for key, value in (
            ("data-reviews", repo["reviews"]),
            ("data-approvals", repo["approvals"]),
            ("data-days", repo["days"]),
            ("data-would-downgrade", repo["would_downgrade"]),
            ("data-would-downgrade-rate", repo["would_downgrade_rate"]),
            ("data-interval-low", interval["low"]),
            ("data-interval-high", interval["high"]),
        ):
            assert json.loads(attrs[key] or "") == value, (repo["repository"], key)
    # by risk: not ready first, the highest would-downgrade upper bound first within each
    order = [
        (a["data-readiness"] == "ready", -json.loads(a["data-interval-high"] or "1")) for a in rows
    ]
    assert order == sorted(order)
    assert rows[-1]["data-readiness"] == "ready"
    assert rows[0]["data-repository"] == "acme/frontend"  # the worst rate, 33.5%
    # the headline counts the JSON's ready repositories, and names what holds each other back
    ready = sum(1 for r in document["repositories"] if r["ready"])
    assert f"{ready} of {len(rows)} repositories ready to enforce." in page
    for repo in document["repositories"]:
        for check in repo["checks"]:
            if not check["ok"]:
                assert f"{CHECK_WORDS[check['name']]}: " in page, check["name"]


def test_each_trend_line_is_scaled_to_its_data(rollout: Path) -> None:
    """A trend line's scale holds its highest day, the judged interval and the ceiling, and
    reaches no further than 15% past the highest of them (plus rounding): 1.8% and 33.5% do
    not look alike on a 0-100% scale."""
    _, text = _report("--telemetry-dir", str(rollout), "--format", "json")
    document = json.loads(text)
    ceiling = document["criteria"]["max_would_downgrade_rate"]
    _, page = _report("--telemetry-dir", str(rollout), "--format", "html")
    scales = {
        a["data-repository"]: json.loads(a["data-scale-high"] or "null")
        for a in _tags_in_rows(page)
    }
    for repo in document["repositories"]:
        days = [d["would_downgrade"] / d["approvals"] for d in repo["daily"] if d["approvals"]]
        top = max([*days, ceiling, repo["would_downgrade_interval"]["high"]])
        assert top <= scales[repo["repository"]] <= top * 1.15 + 0.01, repo["repository"]
    assert scales["acme/frontend"] > 2 * scales["acme/payments"]


def _tags_in_rows(page: str) -> list[dict[str, str | None]]:
    """Each fleet row's trend figure's attributes, with its row's repository."""
    found: list[dict[str, str | None]] = []
    repository: str | None = None
    for tag, attrs in _tags(page):
        if tag == "tr" and "data-repository" in attrs:
            repository = attrs["data-repository"]
        if tag == "figure" and attrs.get("data-chart") == "trend":
            found.append({**attrs, "data-repository": repository})
    return found


def _document(repo: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": "coverage-gate/report",
        "version": "1.3",
        "criteria": {
            "min_approvals": 50,
            "min_days": 7.0,
            "min_evidence_availability": 0.99,
            "max_error_rate": 0.1,
            "max_fallbacks": 0,
            "max_would_downgrade_rate": 0.1,
            "depth_policy": None,
        },
        "readiness_rule": "rule",
        "input": {
            "source": "prometheus",
            "prometheus": "http://p:9090",
            "start": "a",
            "end": "b",
            "queries": 3,
        },
        "repositories": [repo],
    }


def _repo(rollout: Path, **changes: Any) -> dict[str, Any]:
    _, text = _report("--telemetry-dir", str(rollout), "--format", "json")
    repo: dict[str, Any] = json.loads(text)["repositories"][0]
    repo.update(changes)
    return {k: v for k, v in repo.items() if v is not None or k not in changes}


def test_drift_is_drawn_where_the_json_has_it_and_said_absent_where_not(rollout: Path) -> None:
    """acme/search's client was upgraded mid-window: its streams of the new version drifted
    (two kinds, each of them in every stream), so its page draws that version's streams once
    each, all of them ones that could hide reads (the bar adds up to the streams, not to the
    kinds), and names the kinds in the table; a repository whose streams never drifted says it
    has none."""
    from coverage_gate.outputs.report_html import render_html  # noqa: PLC0415 - the html extra

    _, text = _report("--telemetry-dir", str(rollout), "--format", "json")
    repositories = {r["repository"]: r for r in json.loads(text)["repositories"]}
    search = repositories["acme/search"]
    upgraded = [row for row in search["drift"] if row["kinds"]]
    assert [(row["client_version"], sorted(row["kinds"])) for row in upgraded] == [
        ("0.80.0", ["client_version", "unknown_event"])
    ]
    with_drift = render_html(_document(search))
    assert 'data-chart="drift" data-marks="cg_bars_marks" data-count="1"' in with_drift
    assert f"pi-rpc 0.80.0 could hide reads {upgraded[0]['streams']}." in with_drift
    assert f"unknown_event {upgraded[0]['kinds']['unknown_event']}" in with_drift
    without = render_html(_document(repositories["acme/docs"]))
    assert 'data-chart="drift" data-empty="true">no data: no drift recorded' in without


def test_a_page_from_prometheus_says_it_has_no_per_day_figures(rollout: Path) -> None:
    """Prometheus is read over its window as a whole: no daily key, no per-day charts, and
    the page says why instead of drawing an empty chart."""
    from coverage_gate.outputs.report_html import render_html  # noqa: PLC0415 - the html extra

    repo = _repo(rollout)
    del repo["daily"]
    page = render_html(_document(repo))
    assert page.count("Prometheus is read over its window as a whole") == 2  # rate, status
    assert 'data-chart="policies" data-marks' in page
    assert '<span class="nodata" data-chart="trend" data-empty="true">' in page


def test_readme_html_command_runs_as_written(rollout: Path, tmp_path: Path) -> None:
    """The README's command, verbatim, over the simulated rollout's folder."""
    assert README_HTML in all_text()
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        TELEMETRY_DIR_ENV: str(rollout),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", "-c", README_HTML],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'data-repository="acme/payments"' in page
