"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``, which
``.ci/setup-chromium.sh`` installs) driven by Playwright, on the page of the simulated rollout.

Asserted from the DOM: each repository appears with the readiness the JSON report gives; every
chart rendered (a non-empty SVG with as many marks as its data has points, bars or days);
nothing but the page itself was requested (every request is recorded, and any other is aborted
and fails the test); and the page's figures equal ``--format json``'s. A screenshot of the
fleet and the first repository is saved under ``.ci/artifacts/`` (``CG_ARTIFACTS`` elsewhere)
and, with ``CG_UPDATE_SCREENSHOT=1``, as the README's ``docs/report.png``.

Without Chromium or Playwright the tests skip, or fail under CG_REQUIRE_INTEGRATION=1.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.commands.demo import ROLLOUT_REVIEWS
from coverage_gate.commands.report import report_app
from coverage_gate.rollout.simulation import simulate

pytestmark = pytest.mark.slow

REQUIRE = os.environ.get("CG_REQUIRE_INTEGRATION") == "1"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("CG_ARTIFACTS", ROOT / ".ci" / "artifacts"))
SCREENSHOT = ROOT / "docs" / "report.png"
MAX_SCREENSHOT_BYTES = 200_000
runner = CliRunner()


def _missing(reason: str) -> None:
    if REQUIRE:
        pytest.fail(f"{reason} (required: CG_REQUIRE_INTEGRATION=1)")
    pytest.skip(reason)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    _missing("no chromium on PATH (.ci/setup-chromium.sh installs it)")
    raise AssertionError  # pragma: no cover - _missing raised


class Rendered:
    def __init__(self, document: dict[str, Any], page: Any, requests: list[str]) -> None:
        self.document = document
        self.page = page
        self.requests = requests


def _report(*args: str) -> str:
    result = runner.invoke(report_app, list(args))
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rendered]:
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415 - optional
    except ImportError:
        _missing("Playwright is not installed (pip install -e . --group dev)")
    executable = _chromium()
    folder = tmp_path_factory.mktemp("rollout")
    simulate(folder, reviews=ROLLOUT_REVIEWS)  # as `coverage-gate demo --rollout` makes it
    listed = ("--telemetry-dir", str(folder), "--list", "would_downgrade")
    document = json.loads(_report(*listed, "--format", "json"))
    html_file = folder.parent / "report.html"
    _report(*listed, "--format", "html", "-o", str(html_file))
    url = html_file.as_uri()
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            # root in CI: Chromium's sandbox needs user namespaces a container may not give
            args=["--no-sandbox", "--disable-gpu"],
        )
        try:
            context = browser.new_context(
                viewport={"width": 1200, "height": 900}, java_script_enabled=False
            )

            def route(request_route: Any) -> None:
                requests.append(request_route.request.url)
                if request_route.request.url == url:
                    request_route.continue_()
                else:
                    request_route.abort()

            context.route("**/*", route)
            page = context.new_page()
            page.goto(url, wait_until="load")
            yield Rendered(document, page, requests)
        finally:
            browser.close()


def _attr(rendered: Rendered, selector: str, name: str) -> list[Any]:
    values = rendered.page.eval_on_selector_all(
        selector, f"(els) => els.map((e) => e.getAttribute({json.dumps(name)}))"
    )
    return [json.loads(v) if v is not None else None for v in values]


def test_each_repository_appears_with_the_readiness_the_json_report_gives(
    rendered: Rendered,
) -> None:
    want = {r["repository"]: r["readiness"] for r in rendered.document["repositories"]}
    page = rendered.page
    rows = page.eval_on_selector_all(
        "#fleet-table tbody tr",
        "(rows) => rows.map((r) => [r.dataset.repository, r.dataset.readiness, "
        "r.cells[1].innerText])",
    )
    assert {name: readiness for name, readiness, _ in rows} == want
    for _, readiness, shown in rows:
        assert shown == ("ready" if readiness == "ready" else "not ready")
    sections = page.eval_on_selector_all(
        "section.repository", "(s) => s.map((e) => [e.dataset.repository, e.dataset.readiness])"
    )
    assert dict(sections) == want
    assert len(sections) == len(want) >= 5


def test_every_chart_rendered_with_its_marks(rendered: Rendered) -> None:
    """Each figure holds a drawn SVG (a real box, not zero by zero) whose named mark group has
    as many marks as the figure's data: one point a day, one bar a policy, a status, a client."""
    figures = rendered.page.eval_on_selector_all(
        "figure[data-chart]",
        """(figs) => figs.map((f) => {
            const svg = f.querySelector('svg');
            const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
            const marks = svg ? svg.querySelectorAll('g.' + f.dataset.marks + ' > path').length : -1;
            return [f.dataset.chart, Number(f.dataset.count), marks, box.width, box.height,
                    svg ? svg.querySelector('title').textContent : ''];
        })""",
    )
    kinds = {kind for kind, *_ in figures}
    assert {"trend", "rate", "policies", "status", "content"} <= kinds
    for kind, count, marks, width, height, title in figures:
        assert count > 0 and marks == count, (kind, count, marks)
        assert width > 20 and height > 10, (kind, width, height)
        assert title, kind
    repositories = rendered.document["repositories"]
    # One trend line a repository with approvals, one rate point a day with approvals.
    daily = {r["repository"]: [d for d in r["daily"] if d["approvals"]] for r in repositories}
    trends = _attr(rendered, "#fleet-table figure[data-chart=trend]", "data-count")
    assert sorted(trends) == sorted(len(days) for days in daily.values() if days)


def test_the_page_fetched_nothing_but_itself(rendered: Rendered) -> None:
    assert len(rendered.requests) == 1
    assert rendered.requests[0].startswith("file://")
    assert rendered.requests[0].endswith("/report.html")


def test_the_pages_figures_equal_the_json_report(rendered: Rendered) -> None:
    """Fleet rows, checklists, per-day counts and the audit counts, read from the DOM, against
    ``--format json`` on the same folder."""
    page = rendered.page
    rows = page.eval_on_selector_all(
        "#fleet-table tbody tr", "(rows) => rows.map((r) => Object.assign({}, r.dataset))"
    )
    by_name = {r["repository"]: r for r in rendered.document["repositories"]}
    for row in rows:
        repo = by_name[row["repository"]]
        interval = repo["would_downgrade_interval"]
        assert {
            key: json.loads(row[key])
            for key in ("reviews", "approvals", "days", "wouldDowngrade", "wouldDowngradeRate")
        } == {
            "reviews": repo["reviews"],
            "approvals": repo["approvals"],
            "days": repo["days"],
            "wouldDowngrade": repo["would_downgrade"],
            "wouldDowngradeRate": repo["would_downgrade_rate"],
        }
        assert (json.loads(row["intervalLow"]), json.loads(row["intervalHigh"])) == (
            interval["low"],
            interval["high"],
        )
        assert row["failing"].split() == [c["name"] for c in repo["checks"] if not c["ok"]]
    # the headline's count is the JSON's; the fleet runs by risk: not ready first, the worst
    # would-downgrade upper bound first
    headline = page.locator("p.headline")
    ready = sum(1 for repo in by_name.values() if repo["ready"])
    assert (headline.get_attribute("data-ready"), headline.get_attribute("data-repositories")) == (
        str(ready),
        str(len(by_name)),
    )
    assert headline.inner_text() == f"{ready} of {len(by_name)} repositories ready to enforce."
    risk = [
        (
            by_name[r["repository"]]["ready"],
            -by_name[r["repository"]]["would_downgrade_interval"]["high"],
        )
        for r in rows
    ]
    assert risk == sorted(risk)
    # each trend line's scale holds its data, the judged interval and the ceiling, and no more
    ceiling = rendered.document["criteria"]["max_would_downgrade_rate"]
    scales = page.eval_on_selector_all(
        "#fleet-table tbody tr",
        "(rows) => rows.map((r) => [r.dataset.repository, "
        "r.querySelector('figure[data-chart=trend]').dataset.scaleHigh])",
    )
    for name, high in scales:
        repo = by_name[name]
        days = [d["would_downgrade"] / d["approvals"] for d in repo["daily"] if d["approvals"]]
        top = max([*days, ceiling, repo["would_downgrade_interval"]["high"]])
        assert top <= float(high) <= top * 1.15 + 0.01, name
    for name, repo in by_name.items():
        section = page.locator(f'section.repository[data-repository="{name}"]')
        checks = section.locator("li[data-check]").evaluate_all(
            "(els) => els.map((e) => [e.dataset.check, e.dataset.ok, e.innerText])"
        )
        assert [(c, json.loads(ok)) for c, ok, _ in checks] == [
            (c["name"], c["ok"]) for c in repo["checks"]
        ]
        assert [text.split(": ", 1)[1] for *_, text in checks] == [
            c["detail"] for c in repo["checks"]
        ]
        days = section.locator("table.daily tbody tr").evaluate_all(
            "(rows) => rows.map((r) => [r.dataset.day, "
            "Object.fromEntries([...r.querySelectorAll('td[data-field]')].map("
            "(td) => [td.dataset.field, Number(td.textContent)]))])"
        )
        assert [{"day": day, **counts} for day, counts in days] == repo["daily"]
        flagged = [f for f in rendered.document["would_downgrade"] if f["repository"] == name]
        audit = section.locator("[data-audit]").evaluate_all("(e) => e.map((x) => x.dataset.audit)")
        assert [int(n) for n in audit] == [len(flagged)]


def test_a_screenshot_is_saved(rendered: Rendered) -> None:
    """The fleet and the first repository, as CI's artifact (and the README's picture)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = rendered.page
    page.screenshot(path=str(ARTIFACTS / "report-full.png"), full_page=True)
    shot = ARTIFACTS / "report.png"
    page.set_viewport_size({"width": 1100, "height": 1000})
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000
    if os.environ.get("CG_UPDATE_SCREENSHOT") == "1":
        SCREENSHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)
    assert SCREENSHOT.is_file(), "docs/report.png: run with CG_UPDATE_SCREENSHOT=1"
    assert SCREENSHOT.stat().st_size < MAX_SCREENSHOT_BYTES
