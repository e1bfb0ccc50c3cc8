"""The report as one HTML page: ``coverage-gate report --format html``.

The page is drawn from the report's JSON document (``coverage_gate.rollout.report.to_json``), so
every number it shows is the JSON's; each figure the page states is also held, exactly, in a
``data-*`` attribute of the element that shows it, for the tests to compare. One self-contained
file: inline CSS, inline SVG, no script, no font, image or style sheet from anywhere else; it reads
the same with JavaScript off.

What it holds, in order:

- the headline: how many repositories are ready to enforce and, check by check in words, which
  repositories each failing check holds back; the window, when the page was made and by which
  version; what the figures mean; the readiness rule (collapsed);
- the fleet table: every repository with its readiness, reviews, approvals, days observed,
  would-downgrade count and rate with its 95% Wilson interval, the checks it fails (in words),
  its trend (the would-downgrade rate of its last ``TREND_DAYS`` days against the interval of
  the days before: ``worse`` above it, ``better`` below, else ``steady``) and a trend line on a
  scale fitted to its data, with the judged interval as a band and the ceiling as a dashed rule.
  Ordered by risk: the repositories not ready first, the highest would-downgrade upper bound
  first among them, then the ready ones the same way;
- per repository: the would-downgrade rate per day with its 95% Wilson band and the readiness
  ceiling; the three depth policies and the citation policy side by side on the same reviews;
  claimed files by status (verified, unsupported, unknown) per day; content-check outcomes per
  client; drift per client version (the repository's ``drift`` list, where the JSON has one);
  the readiness checklist in words; the flagged decisions of ``--list would_downgrade`` with
  each one's note (collapsed); and the per-day counts as a table (collapsed). A section without
  figures says "no data". Colours carry meaning: the worst outcomes (a content mismatch, drift
  that could hide reads, unsupported claims) in the warm colours;
- at the foot: where the figures were read from (the telemetry folder's files, lines and
  malformed lines, or the Prometheus window and its queries).

Per-day figures come from the telemetry folder's spans; Prometheus is read over its window as a
whole, so a page made from it says so where the per-day charts would be.

Charts are Vega-Lite specifications rendered to static SVG by ``vl-convert`` (the Vega project's
own converter: Vega and Vega-Lite in an embedded JavaScript engine, shipped as one wheel, no
browser, no network, ``allowed_base_urls=[]``). Why it over matplotlib's SVG backend: a chart
is a small declarative specification rather than drawing code; its SVG keeps text as text and
labels each mark group by name (what the browser test counts) and each axis in ARIA; and it
draws faster (measured here: a trend line 10 ms against 26 ms, a banded line chart about 60 ms
against 90 ms), with none of numpy's import. It is the optional extra ``html`` (``pip install
'.[html]'`` from a checkout): this module is imported by the report command's html branch alone,
which says what to install when ``vl_convert`` is missing. Each chart carries a ``<title>`` and
a ``<desc>`` (its text alternative, also the figure's caption, which gives every series' figures
in words) and axis titles; colours are Okabe and Ito's palette, told apart with the common
colour-vision deficiencies.

Cost: charts are drawn for the first ``CHARTED`` repositories of the fleet table (every one has
its trend line and its tables): past that a page of a fleet would hold thousands of charts, take
longer to draw than the report takes to count, and weigh megabytes. The flagged decisions are
shown up to ``AUDIT_ROWS`` per repository, the rest counted (the JSON lists them all).

The chart specifications and their drawing are in ``coverage_gate.outputs._charts``; this module
holds the page: its order, its tables, its text and its style.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

import vl_convert

from coverage_gate.outputs._charts import (
    Chart,
    _client_version,
    _drift_kinds,
    _e,
    _pct,
    content_chart,
    drift_chart,
    policy_chart,
    rate_chart,
    status_chart,
    trend_chart,
)
from coverage_gate.rollout.report import wilson

__all__ = ["AUDIT_ROWS", "CHARTED", "CHECK_WORDS", "TREND_DAYS", "render_html", "start"]

#: Repositories (in the fleet table's order) whose section has charts.
CHARTED = 10
#: Flagged decisions listed per repository.
AUDIT_ROWS = 100
#: The trend compares the would-downgrade rate of this many last days with the days before.
TREND_DAYS = 7

#: Each readiness check as the page names it: what fails, in words.
CHECK_WORDS: dict[str, str] = {
    "approvals": "too few approvals",
    "days": "too few days observed",
    "evidence": "evidence missing in too many reviews",
    "fallbacks": "flag source fell back",
    "would_downgrade_rate": "would-downgrade rate too high",
    "error_rate": "too many runs without a decision",
    "streams": "client streams not understood (drift)",
}

#: What the page's figures mean, said beside them.
DEFINITIONS: dict[str, str] = {
    "ready": "every readiness check passes: enforce mode can be turned on for the repository",
    "would downgrade": "approvals that enforce mode would have turned into comments",
    "judged interval": "the 95% Wilson interval of the whole window's would-downgrade rate: "
    "the readiness check needs its upper end at or under the ceiling",
    "ceiling": "the highest would-downgrade rate a ready repository may have",
    "trend": "the last 7 days' would-downgrade rate against the interval of the days before",
}

_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;
margin:0 auto;max-width:1100px;padding:1rem 1.5rem 3rem}
h1{font-size:1.5rem;margin:.5rem 0}h2{font-size:1.2rem;margin:2.2rem 0 .5rem;
border-top:2px solid #ccc;padding-top:1rem}h3{font-size:1rem;margin:1.2rem 0 .4rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:.9rem}
th,td{border-bottom:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.t{white-space:nowrap}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.ready{color:#005a8c;font-weight:600}.not_ready{color:#a33f00;font-weight:600}
.worse{color:#a33f00;font-weight:600}
figure{margin:.6rem 0 1rem}figcaption{font-size:.85rem;color:#444;max-width:60rem}
figure svg{max-width:100%;height:auto}.nodata{color:#555;font-style:italic}
.grid{display:flex;flex-wrap:wrap;gap:0 1.5rem}ul.checks{padding-left:1.2rem}
.ok::before{content:"\\2713  "}.fail::before{content:"\\2717  "}.fail{color:#a33f00}
small{color:#555}
.headline{font-size:1.25rem;font-weight:600;margin:.4rem 0}
dl.defs{display:grid;grid-template-columns:max-content auto;gap:.1rem .8rem;font-size:.85rem;
color:#333;margin:.4rem 0 1rem}dl.defs dt{font-weight:600}dl.defs dd{margin:0}
footer{margin-top:3rem;border-top:1px solid #ccc;font-size:.85rem;color:#444}
"""


# --- the document's figures ---------------------------------------------------------------------


def _ci(interval: Mapping[str, float] | None) -> str:
    return "" if interval is None else f" (95% CI {interval['low']:.1%}-{interval['high']:.1%})"


def _num(value: object) -> str:
    """A figure as the JSON writes it, for a data attribute."""
    return json.dumps(value)


def _slug(name: str) -> str:
    return "repo-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")


def trend(repo: Mapping[str, Any]) -> str:
    """``worse``, ``better`` or ``steady``: the would-downgrade rate of the last ``TREND_DAYS``
    days against the 95% interval of the days before; ``n/a`` without both."""
    daily = repo.get("daily") or []
    if not daily:
        return "n/a"
    cut = _day_number(daily[-1]["day"]) - TREND_DAYS
    late = [d for d in daily if _day_number(d["day"]) > cut]
    early = [d for d in daily if _day_number(d["day"]) <= cut]
    late_of = sum(d["approvals"] for d in late)
    interval = wilson(sum(d["would_downgrade"] for d in early), sum(d["approvals"] for d in early))
    if interval is None or not late_of:
        return "n/a"
    rate = sum(d["would_downgrade"] for d in late) / late_of
    if rate > interval[1]:
        return "worse"
    if rate < interval[0]:
        return "better"
    return "steady"


def _day_number(day: str) -> int:
    return date.fromisoformat(day).toordinal()


def failing(repo: Mapping[str, Any]) -> list[str]:
    return [check["name"] for check in repo["checks"] if not check["ok"]]


def in_words(check: str) -> str:
    return CHECK_WORDS.get(check, check.replace("_", " "))


def fleet_order(repositories: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """By risk: the repositories not ready first, the highest would-downgrade upper bound (the
    worst rate the data allows) first among them; then the ready ones, the same way."""

    def key(repo: Mapping[str, Any]) -> tuple[bool, float, str]:
        interval = repo.get("would_downgrade_interval")
        high = 1.0 if interval is None else float(interval["high"])
        return (bool(repo["ready"]), -high, str(repo["repository"]))

    return sorted(repositories, key=key)


# --- the page -----------------------------------------------------------------------------------


class _Page:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.charts = 0

    def add(self, *text: str) -> None:
        self.parts.extend(text)

    def figure(self, kind: str, chart: Chart | None, ident: str, *, empty: str) -> None:
        if chart is None:
            self.add(f'<p class="nodata" data-chart="{kind}" data-empty="true">{_e(empty)}</p>')
            return
        self.charts += 1
        self.add(
            f'<figure data-chart="{kind}" data-marks="{_e(chart.marks)}" '
            f'data-count="{chart.count}">',
            chart.svg(f"{ident}-{kind}"),
            f"<figcaption>{_e(chart.desc)}</figcaption></figure>",
        )


def _window(document: Mapping[str, Any]) -> str:
    source = document["input"]
    if source["source"] == "prometheus":
        return f"{source['start']} .. {source['end']}"
    seen = [r for r in document["repositories"] if r.get("first_seen")]
    if not seen:
        return "no reviews"
    first = min(str(r["first_seen"]) for r in seen)
    last = max(str(r["last_seen"] or r["first_seen"]) for r in seen)
    return f"{first[:16].replace('T', ' ')} .. {last[:16].replace('T', ' ')} UTC"


def _blockers(ordered: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[str]]]:
    """Each failing check, in words, with the repositories it holds back (in fleet order)."""
    held: dict[str, list[str]] = {}
    for repo in ordered:
        for check in failing(repo):
            held.setdefault(check, []).append(str(repo["repository"]))
    return sorted(((in_words(c), names) for c, names in held.items()), key=lambda x: -len(x[1]))


def _header(
    page: _Page, document: Mapping[str, Any], ordered: Sequence[Mapping[str, Any]], made: str
) -> None:
    from coverage_gate import __version__  # noqa: PLC0415

    ready = sum(1 for repo in ordered if repo["ready"])
    prometheus = document["input"]["source"] == "prometheus"
    origin = "Prometheus" if prometheus else "the local telemetry folder"
    blocked = "; ".join(f"{words}: {', '.join(names)}" for words, names in _blockers(ordered))
    criteria = document["criteria"]
    page.add(
        "<header><h1>coverage-gate rollout report</h1>",
        f'<p class="headline" data-ready="{ready}" data-repositories="{len(ordered)}">'
        f"{ready} of {len(ordered)} repositories ready to enforce.</p>",
        f"<p data-blockers>{_e('What holds the rest back: ' + blocked + '.') if blocked else ''}"
        "</p>",
        f'<p data-window="{_e(_window(document))}"><small>Window {_e(_window(document))}; made '
        f"{_e(made)} by coverage-gate {_e(__version__)} (report {_e(document['version'])}); "
        f"from {origin} (see the foot of the page).</small></p>",
        '<dl class="defs">',
        *(f"<dt>{_e(term)}</dt><dd>{_e(meaning)}</dd>" for term, meaning in DEFINITIONS.items()),
        "</dl>",
        "<details><summary>What ready needs</summary>"
        f"<p>Every check passes: at least {criteria['min_approvals']} "
        f"approvals over at least {criteria['min_days']:g} days, evidence in at least "
        f"{_pct(criteria['min_evidence_availability'])} of reviews, at most "
        f"{criteria['max_fallbacks']} mode fallbacks, an error rate (runs without a decision) "
        f"whose 95% upper bound is at most {_pct(criteria['max_error_rate'])}, "
        f"a would-downgrade rate whose 95% upper bound is at most "
        f"{_pct(criteria['max_would_downgrade_rate'])}, and reviewer streams the adapters "
        f"understood (no drift that could hide reads, no client outside the checked range). "
        f"{_e(document['readiness_rule'])}</p></details>",
        "</header>",
    )


def _footer(page: _Page, document: Mapping[str, Any]) -> None:
    """Where the figures came from: the telemetry plumbing, at the foot of the page."""
    source = document["input"]
    if source["source"] == "prometheus":
        where = (
            f"Prometheus {source['prometheus']}, {source['start']} .. {source['end']} "
            f"({source['queries']} queries)"
        )
    else:
        where = (
            f"telemetry folder: {source['files']} files, {source['lines']} lines, "
            f"{source['reviews']} reviews, {source['malformed_lines']} malformed lines"
        )
    page.add(
        f'<footer><p data-source="{_e(source["source"])}">Read from the {_e(where)}. Report '
        f"{_e(document['schema'])} {_e(document['version'])}.</p></footer>"
    )


def _fleet(page: _Page, ordered: Sequence[Mapping[str, Any]], ceiling: float) -> None:
    page.add(
        '<section id="fleet"><h2>Fleet</h2>',
        f"<p>{len(ordered)} repositories, by risk: those not ready first, the highest "
        "would-downgrade rate the data allows (the judged interval's upper end) first. Trend "
        "lines are scaled to their data: the band is the judged interval, the dashed line the "
        "ceiling.</p>",
        '<table id="fleet-table"><caption class="nodata" style="text-align:left">'
        "Readiness per repository</caption><thead><tr><th>repository</th>"
        f'<th title="{_e(DEFINITIONS["ready"])}">readiness</th>'
        '<th class="n" title="reviews reconciled in the window">reviews</th>'
        '<th class="n" title="reviews whose verdict was Approve">approvals</th>'
        '<th class="n" title="from the first review to the last">days observed</th>'
        f'<th class="n" title="{_e(DEFINITIONS["would downgrade"])}">would downgrade</th>'
        '<th title="the readiness checks the repository fails">failing checks</th>'
        f'<th title="{_e(DEFINITIONS["trend"])}">trend</th>'
        "<th>would-downgrade rate per day</th></tr></thead><tbody>",
    )
    for repo in ordered:
        name = repo["repository"]
        interval = repo.get("would_downgrade_interval")
        low = None if interval is None else interval["low"]
        high = None if interval is None else interval["high"]
        moved = trend(repo)
        chart = trend_chart(repo, ceiling)
        if chart is None:
            line = '<span class="nodata" data-chart="trend" data-empty="true">no data</span>'
        else:
            page.charts += 1
            top = chart.scale[1] if chart.scale is not None else 1.0
            line = (
                f'<figure data-chart="trend" data-marks="{chart.marks}" data-count="{chart.count}"'
                f' data-scale-high="{_num(top)}" style="margin:0">'
                f"{chart.svg(_slug(name) + '-trend')}</figure>"
            )
        fails = failing(repo)
        page.add(
            f'<tr data-repository="{_e(name)}" data-readiness="{repo["readiness"]}" '
            f'data-reviews="{_num(repo["reviews"])}" data-approvals="{_num(repo["approvals"])}" '
            f'data-days="{_num(repo["days"])}" '
            f'data-would-downgrade="{_num(repo["would_downgrade"])}" '
            f'data-would-downgrade-rate="{_num(repo["would_downgrade_rate"])}" '
            f'data-interval-low="{_num(low)}" data-interval-high="{_num(high)}" '
            f'data-failing="{_e(" ".join(fails))}" data-trend="{moved}">',
            f'<td><a href="#{_slug(name)}">{_e(name)}</a></td>',
            f'<td class="{repo["readiness"]}">{"ready" if repo["ready"] else "not ready"}</td>',
            f'<td class="n">{repo["reviews"]}</td><td class="n">{repo["approvals"]}</td>',
            f'<td class="n">{repo["days"]:.1f}</td>',
            f'<td class="n">{repo["would_downgrade"]} = {_pct(repo["would_downgrade_rate"])}'
            f"<br><small>{_e(_ci(interval).strip(' ()'))}</small></td>",
            f"<td>{_e('; '.join(in_words(check) for check in fails) or '-')}</td>",
            f'<td class="{moved}">{moved}</td><td>{line}</td></tr>',
        )
    page.add("</tbody></table></section>")


def _checklist(page: _Page, repo: Mapping[str, Any]) -> None:
    page.add('<h3>Readiness checklist</h3><ul class="checks">')
    for check in repo["checks"]:
        state = "ok" if check["ok"] else "fail"
        name = check["name"].replace("_", " ") if check["ok"] else in_words(check["name"])
        page.add(
            f'<li class="{state}" data-check="{_e(check["name"])}" data-ok="{_num(check["ok"])}">'
            f"<b>{_e(name)}</b>: {_e(check['detail'])}</li>"
        )
    page.add("</ul>")


def _note(item: Mapping[str, Any]) -> str:
    """What the decision's span records of why it was flagged, in the note's words."""
    parts: list[str] = []
    files = list(item["files"])
    if files:
        more = f" (+{item['files_dropped']} more)" if item["files_dropped"] else ""
        parts.append(
            f"claimed inspected; no successful read or diff recorded at "
            f"{str(item['revision'])[:12]}: {', '.join(files)}{more}"
        )
    if item.get("shallow_files"):
        parts.append(f"changed lines not seen (shallow): {', '.join(item['shallow_files'])}")
    if item.get("failed_citations"):
        parts.append(f"failed citations: {', '.join(item['failed_citations'])}")
    return "; ".join(parts) or "flagged"


def _audit(page: _Page, items: Sequence[Mapping[str, Any]] | None) -> None:
    page.add("<h3>Flagged decisions to audit</h3>")
    if items is None:
        page.add(
            '<p class="nodata">Not listed: make the page with --list would_downgrade '
            "(from the telemetry folder).</p>"
        )
        return
    if not items:
        page.add('<p class="nodata" data-audit="0">no data: no decision was flagged.</p>')
        return
    shown = items[:AUDIT_ROWS]
    page.add(
        f"<details><summary>{len(items)} flagged decision(s): open to audit</summary>",
        f'<table class="audit" data-audit="{len(items)}"><thead><tr><th>time</th>'
        "<th>revision</th><th>reviewer</th><th>mode</th><th>outcome</th><th>note</th>"
        "</tr></thead><tbody>",
    )
    for item in shown:
        page.add(
            f'<tr><td class="t">{_e(item["time"])}</td>'
            f"<td><code>{_e(str(item['revision'])[:12])}</code></td><td>{_e(item['reviewer'])}</td><td>{_e(item['mode'])}</td>"
            f"<td>{_e(item['outcome'])}</td><td>{_e(_note(item))}</td></tr>"
        )
    page.add("</tbody></table>")
    if len(items) > len(shown):
        page.add(
            f"<p><small>{len(items) - len(shown)} more: --format json --list would_downgrade "
            "lists them all.</small></p>"
        )
    page.add("</details>")


def _drift_table(page: _Page, repo: Mapping[str, Any]) -> None:
    drift = repo.get("drift")
    if not drift:
        return
    page.add(
        '<table class="drift"><thead><tr><th>client version</th><th>drift</th>'
        '<th class="n">streams</th></tr></thead><tbody>'
    )
    for item in drift:
        kinds = ", ".join(f"{kind} {n}" for kind, n in _drift_kinds(item)) or "none"
        page.add(
            f"<tr><td>{_e(_client_version(item))}</td><td>{_e(kinds)}</td>"
            f'<td class="n">{_e(item.get("streams"))}</td></tr>'
        )
    page.add("</tbody></table>")


def _daily_table(page: _Page, repo: Mapping[str, Any]) -> None:
    daily = repo.get("daily")
    if not daily:
        return
    page.add(
        f"<details><summary>Per-day counts ({len(daily)} days)</summary>"
        '<table class="daily"><thead><tr><th>day (UTC)</th><th class="n">reviews</th>'
        '<th class="n">approvals</th><th class="n">would downgrade</th>'
        '<th class="n">claimed files</th><th class="n">unsupported</th>'
        '<th class="n">unknown</th></tr></thead><tbody>'
    )
    for day in daily:
        page.add(
            f'<tr data-day="{_e(day["day"])}"><td>{_e(day["day"])}</td>'
            + "".join(
                f'<td class="n" data-field="{key}">{day[key]}</td>'
                for key in (
                    "reviews",
                    "approvals",
                    "would_downgrade",
                    "claimed_files",
                    "unsupported_files",
                    "unknown_files",
                )
            )
            + "</tr>"
        )
    page.add("</tbody></table></details>")


def _repository(
    page: _Page,
    repo: Mapping[str, Any],
    ceiling: float,
    flagged: Sequence[Mapping[str, Any]] | None,
    *,
    charted: bool,
    prometheus: bool,
) -> None:
    name = repo["repository"]
    ident = _slug(name)
    page.add(
        f'<section class="repository" id="{ident}" data-repository="{_e(name)}" '
        f'data-readiness="{repo["readiness"]}" data-charted="{_num(charted)}">',
        f'<h2>{_e(name)}: <span class="{repo["readiness"]}">'
        f"{'ready' if repo['ready'] else 'not ready'}</span> to enforce</h2>",
        f"<p>{repo['reviews']} reviews, {repo['approvals']} approvals, observed "
        f"{repo['days']:.1f} days ({_e(repo['first_seen'] or '-')} .. "
        f"{_e(repo['last_seen'] or '-')}); would downgrade {repo['would_downgrade']} = "
        f"{_pct(repo['would_downgrade_rate'])}{_ci(repo['would_downgrade_interval'])}.</p>",
    )
    per_day = (
        "no data: Prometheus is read over its window as a whole, not per day"
        if prometheus
        else "no data: no approvals recorded per day"
    )

    def chart(kind: str, make: Callable[[], Chart | None], empty: str) -> None:
        if not charted:
            page.add(
                f'<p class="nodata" data-chart="{kind}" data-empty="true">Chart not drawn: charts '
                f"are drawn for the first {CHARTED} repositories of the fleet table; the figures "
                "are in the tables and the checklist below.</p>"
            )
            return
        page.figure(kind, make(), ident, empty=empty)

    page.add('<div class="grid">')
    chart("rate", lambda: rate_chart(repo, ceiling), per_day)
    chart("policies", lambda: policy_chart(repo, ceiling), "no data: no approvals compared")
    page.add('</div><div class="grid">')
    chart("status", lambda: status_chart(repo), per_day.replace("approvals", "claimed files"))
    page.add('</div><h3>Content checks and drift per client</h3><div class="grid">')
    chart("content", lambda: content_chart(repo), "no data: no claimed file's content checked")
    chart("drift", lambda: drift_chart(repo), "no data: no drift recorded")
    page.add("</div>")
    _drift_table(page, repo)
    _checklist(page, repo)
    _audit(page, None if flagged is None else [f for f in flagged if f["repository"] == name])
    _daily_table(page, repo)
    page.add("</section>")


def _warm_up() -> None:
    vl_convert.vegalite_to_svg(
        {"data": {"values": [{"a": 0}]}, "mark": "point", "encoding": {"x": {"field": "a"}}},
        allowed_base_urls=[],
    )


def start() -> Callable[[Mapping[str, Any]], str]:
    """Start the chart engine in the background and give the page's renderer, which waits for
    it: the engine's first chart costs a second or more, spent while the report reads."""
    engine = threading.Thread(target=_warm_up, name="chart engine start", daemon=True)
    engine.start()

    def render(document: Mapping[str, Any]) -> str:
        engine.join()
        return render_html(document)

    return render


def render_html(
    document: Mapping[str, Any], *, charted: int = CHARTED, made: datetime | None = None
) -> str:
    """The page of a report's JSON document (``coverage_gate.rollout.report.to_json``), made at
    ``made`` (now by default)."""
    page = _Page()
    when = (made or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    ordered = fleet_order(document["repositories"])
    ceiling = float(document["criteria"]["max_would_downgrade_rate"])
    flagged = document.get("would_downgrade")
    prometheus = document["input"]["source"] == "prometheus"
    page.add(
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # Nothing is fetched, whatever the page holds: no script, style or image from anywhere.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">",
        "<title>coverage-gate rollout report</title>",
        f"<style>{_STYLE}</style></head><body>",
    )
    _header(page, document, ordered, when)
    if not ordered:
        page.add('<p class="nodata">no data: no reviews recorded.</p>')
    else:
        _fleet(page, ordered, ceiling)
    for index, repo in enumerate(ordered):
        _repository(page, repo, ceiling, flagged, charted=index < charted, prometheus=prometheus)
    _footer(page, document)
    page.add("</body></html>")
    return "\n".join(page.parts) + "\n"
