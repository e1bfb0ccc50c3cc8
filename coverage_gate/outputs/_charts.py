"""The Vega-Lite specifications of the report page's charts, and their drawing to SVG.

Holds ``Chart`` (a specification with its title, its text alternative and the marks the SVG must
hold, drawn by ``vl_convert`` with no base URL allowed), the rows each chart plots, read from a
repository of the report's JSON document, and one function per chart: the would-downgrade rate
per day with its Wilson band, the policies compared, claimed files by status, content checks,
drift per client version, and the fleet table's trend line. A chart with nothing to plot is
``None``. The palette (Okabe and Ito's) and the chart configuration are here too. The page around
the charts, its tables and its order are ``report_html``'s.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import vl_convert

from coverage_gate.rollout.report import wilson

__all__ = [
    "Chart",
    "content_chart",
    "content_rows",
    "day_rates",
    "drift_chart",
    "drift_rows",
    "policy_chart",
    "policy_rows",
    "rate_chart",
    "status_chart",
    "status_rows",
    "trend_chart",
]

# Okabe & Ito (2008), "Color Universal Design": told apart with any common colour deficiency.
_BLUE = "#0072B2"
_VERMILLION = "#D55E00"
_ORANGE = "#E69F00"
_SKY = "#56B4E9"
_GREEN = "#009E73"
_PURPLE = "#CC79A7"
_YELLOW = "#F0E442"
_GREY = "#999999"
_CATEGORIES = (_BLUE, _ORANGE, _GREEN, _VERMILLION, _PURPLE, _SKY, _YELLOW, "#000000")
_STATUS_COLOURS = {"verified": _BLUE, "unsupported": _VERMILLION, "unknown": _GREY}
_CONTENT_ORDER = ("matched", "via_content", "mismatch", "unchecked", "none")
#: Colours by meaning: the worst outcomes in the warm colours, the good ones in the blues, what
#: could not be told in grey.
_CONTENT_COLOURS = {
    "matched": _BLUE,
    "via_content": _SKY,
    "mismatch": _VERMILLION,
    "unchecked": _GREY,
    "none": _ORANGE,
}
#: A client version's streams, by what the adapter made of them: each stream is one of the three.
_DRIFT_PARTS = {"understood": _BLUE, "drift said only": _ORANGE, "could hide reads": _VERMILLION}

_CONFIG: dict[str, Any] = {
    "font": "sans-serif",
    "background": "white",
    "view": {"stroke": None},
    "axis": {"labelFontSize": 11, "titleFontSize": 11, "grid": False},
    "title": {"fontSize": 13, "anchor": "start"},
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "labelLimit": 200},
    "axisY": {"titleLimit": 200},
    "axisBand": {"labelLimit": 200},
}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def day_rates(repo: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per day with approvals: its would-downgrade rate and 95% Wilson interval."""
    rows: list[dict[str, Any]] = []
    for day in repo.get("daily") or []:
        approvals, flagged = day["approvals"], day["would_downgrade"]
        interval = wilson(flagged, approvals)
        if interval is None:
            continue
        rows.append(
            {
                "day": day["day"],
                "rate": flagged / approvals,
                "low": interval[0],
                "high": interval[1],
                "approvals": approvals,
                "would_downgrade": flagged,
            }
        )
    return rows


class Chart:
    """A Vega-Lite chart, its title, its text alternative, and the marks it must draw."""

    def __init__(
        self,
        spec: dict[str, Any],
        *,
        title: str,
        desc: str,
        marks: str,
        count: int,
        scale: tuple[float, float] | None = None,
    ) -> None:
        self.spec = spec
        self.title = title
        self.desc = desc
        #: The class of the mark group to count in the SVG, and how many marks it holds.
        self.marks = marks
        self.count = count
        #: The value scale (low, high) of a chart whose scale is fitted to its data.
        self.scale = scale

    def svg(self, ident: str) -> str:
        spec = {**self.spec, "config": _CONFIG, "description": self.desc}
        drawn = vl_convert.vegalite_to_svg(spec, allowed_base_urls=[])
        opening = drawn.index(">") + 1
        return (
            drawn[: opening - 1]
            + f' role="img" aria-labelledby="{ident}-t {ident}-d">'
            + f'<title id="{ident}-t">{_e(self.title)}</title>'
            + f'<desc id="{ident}-d">{_e(self.desc)}</desc>'
            + drawn[opening:]
        )


def _x_day(title: str | None = "day (UTC)") -> dict[str, Any]:
    axis: dict[str, Any] | None = {"format": "%b %d", "labelAngle": 0, "tickCount": 6}
    if title is None:
        axis = None
    return {
        "field": "day",
        "type": "temporal",
        "timeUnit": "utcyearmonthdate",
        "title": title,
        "axis": axis,
    }


def rate_chart(repo: Mapping[str, Any], ceiling: float) -> Chart | None:
    rows = day_rates(repo)
    if not rows:
        return None
    worst = max(rows, key=lambda row: row["rate"])
    y_title = "would-downgrade rate"
    y_rate = {"field": "rate", "type": "quantitative", "title": y_title}
    spec: dict[str, Any] = {
        "width": 440,
        "height": 160,
        "title": "Would-downgrade rate per day, 95% Wilson band",
        "data": {"values": rows},
        "layer": [
            {
                "name": "cg_band",
                "mark": {"type": "area", "color": _SKY, "opacity": 0.45},
                "encoding": {
                    "x": _x_day(),
                    "y": {
                        "field": "low",
                        "type": "quantitative",
                        "title": y_title,
                        "axis": {"format": ".0%"},
                        "scale": {"domain": [0, 1]},
                    },
                    "y2": {"field": "high"},
                },
            },
            {
                "name": "cg_line",
                "mark": {"type": "line", "color": _BLUE},
                "encoding": {"x": _x_day(), "y": y_rate},
            },
            {
                "name": "cg_points",
                "mark": {"type": "point", "filled": True, "color": _BLUE, "size": 30},
                "encoding": {"x": _x_day(), "y": y_rate},
            },
            {
                "name": "cg_ceiling",
                "mark": {"type": "rule", "color": _VERMILLION, "strokeDash": [5, 3]},
                "encoding": {"y": {"datum": ceiling}},
            },
        ],
    }
    desc = (
        f"Would-downgrade rate (would-downgrades over approvals) on each of {len(rows)} days "
        f"with approvals, with its 95% Wilson band; dashed line: the readiness ceiling "
        f"{_pct(ceiling)}. Highest: {_pct(worst['rate'])} on {worst['day']} "
        f"({worst['would_downgrade']} of {worst['approvals']})."
    )
    return Chart(spec, title=spec["title"], desc=desc, marks="cg_points_marks", count=len(rows))


def policy_rows(repo: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each depth policy's and the citation policy's would-downgrade rate, where it has one."""
    rows: list[dict[str, Any]] = []
    depth = repo["depth"]
    for row in depth["policies"]:
        if row["would_downgrade_rate"] is not None:
            interval = row["would_downgrade_interval"]
            rows.append(
                {
                    "policy": row["depth_policy"],
                    "rate": row["would_downgrade_rate"],
                    "low": interval["low"],
                    "high": interval["high"],
                    "count": row["would_downgrade"],
                    "of": depth["approvals_compared"],
                }
            )
    cited = repo.get("citations")
    if cited is not None and cited["would_downgrade_rate"] is not None:
        interval = cited["would_downgrade_interval"]
        rows.append(
            {
                "policy": "citations",
                "rate": cited["would_downgrade_rate"],
                "low": interval["low"],
                "high": interval["high"],
                "count": cited["would_downgrade"],
                "of": cited["approvals"],
            }
        )
    return rows


def policy_chart(repo: Mapping[str, Any], ceiling: float) -> Chart | None:
    rows = policy_rows(repo)
    if not rows:
        return None
    x = {
        "field": "policy",
        "type": "nominal",
        "title": "depth policy, or citation policy downgrade",
        "sort": None,
    }
    x_axis = {**x, "axis": {"labelAngle": 0}}
    spec: dict[str, Any] = {
        "width": 300,
        "height": 160,
        "title": "Would-downgrade rate per policy, same reviews",
        "data": {"values": rows},
        "layer": [
            {
                "name": "cg_bars",
                "mark": {"type": "bar", "color": _ORANGE, "width": 36},
                "encoding": {
                    "x": x_axis,
                    "y": {
                        "field": "rate",
                        "type": "quantitative",
                        "title": "would-downgrade rate",
                        "axis": {"format": ".0%"},
                        "scale": {"domain": [0, 1]},
                    },
                },
            },
            {
                "name": "cg_interval",
                "mark": {"type": "rule", "color": "#000000"},
                "encoding": {
                    "x": x,
                    "y": {"field": "low", "type": "quantitative"},
                    "y2": {"field": "high"},
                },
            },
            {
                "name": "cg_ceiling",
                "mark": {"type": "rule", "color": _VERMILLION, "strokeDash": [5, 3]},
                "encoding": {"y": {"datum": ceiling}},
            },
        ],
    }
    said = "; ".join(
        f"{row['policy']}: {row['count']} of {row['of']} = {_pct(row['rate'])} "
        f"(95% CI {row['low']:.1%}-{row['high']:.1%})"
        for row in rows
    )
    desc = (
        f"Approvals each policy would downgrade, recorded on the same decisions, with 95% "
        f"Wilson intervals (black lines); dashed line: the ceiling {_pct(ceiling)}. {said}."
    )
    return Chart(spec, title=spec["title"], desc=desc, marks="cg_bars_marks", count=len(rows))


def status_rows(repo: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Claimed files per day by status (days and statuses with none left out)."""
    rows: list[dict[str, Any]] = []
    for day in repo.get("daily") or []:
        unsupported, unknown = day["unsupported_files"], day["unknown_files"]
        verified = max(day["claimed_files"] - unsupported - unknown, 0)
        for status, n in (
            ("verified", verified),
            ("unsupported", unsupported),
            ("unknown", unknown),
        ):
            if n:
                rows.append({"day": day["day"], "status": status, "files": n})
    return rows


def status_chart(repo: Mapping[str, Any]) -> Chart | None:
    rows = status_rows(repo)
    if not rows:
        return None
    totals = {s: sum(r["files"] for r in rows if r["status"] == s) for s in _STATUS_COLOURS}
    spec: dict[str, Any] = {
        "width": 440,
        "height": 160,
        "title": "Claimed files by status, per day",
        "data": {"values": rows},
        "name": "cg_bars",
        "mark": {"type": "bar"},
        "encoding": {
            "x": {**_x_day(), "type": "ordinal"},
            "y": {
                "field": "files",
                "type": "quantitative",
                "title": "claimed files",
                "stack": True,
            },
            "color": {
                "field": "status",
                "type": "nominal",
                "title": "status",
                "scale": {"domain": list(_STATUS_COLOURS), "range": list(_STATUS_COLOURS.values())},
            },
            "order": {"field": "status", "sort": "descending"},
        },
    }
    desc = (
        "Claimed files each day, stacked by status: "
        + ", ".join(f"{status} {n}" for status, n in totals.items())
        + " in all."
    )
    return Chart(spec, title=spec["title"], desc=desc, marks="cg_bars_marks", count=len(rows))


def _stacked_bars(
    rows: list[dict[str, Any]],
    *,
    title: str,
    category: str,
    category_title: str,
    part: str,
    part_title: str,
    parts: Sequence[str],
    unit: str,
    desc: str,
    colours: Mapping[str, str] | None = None,
) -> Chart:
    """Bars of ``rows`` per ``category``, stacked by ``part``: each row's parts add up to the
    category's whole (a part counted twice would overstate it)."""
    palette = [(colours or {}).get(name) for name in parts]
    if None in palette:
        palette = list(_CATEGORIES[: len(parts)])
    spec: dict[str, Any] = {
        "width": 360,
        "height": {"step": 22},
        "title": title,
        "data": {"values": rows},
        "name": "cg_bars",
        "mark": {"type": "bar"},
        "encoding": {
            "y": {"field": category, "type": "nominal", "title": category_title},
            "x": {"field": "count", "type": "quantitative", "title": unit, "stack": True},
            "color": {
                "field": part,
                "type": "nominal",
                "title": part_title,
                "scale": {"domain": list(parts), "range": palette},
            },
        },
    }
    return Chart(spec, title=title, desc=desc, marks="cg_bars_marks", count=len(rows))


def content_rows(repo: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = repo.get("content")
    if content is None:
        return []
    return [
        {"client": client["format"], "outcome": outcome, "count": n}
        for client in content["clients"]
        for outcome, n in client["outcomes"].items()
        if n
    ]


def content_chart(repo: Mapping[str, Any]) -> Chart | None:
    rows = content_rows(repo)
    if not rows:
        return None
    outcomes = [*_CONTENT_ORDER, *sorted({r["outcome"] for r in rows} - set(_CONTENT_ORDER))]
    said = "; ".join(
        f"{client['format']}: " + ", ".join(f"{k} {v}" for k, v in client["outcomes"].items() if v)
        for client in repo["content"]["clients"]
    )
    return _stacked_bars(
        rows,
        title="Content checks of claimed files, per client",
        category="client",
        category_title="client",
        part="outcome",
        part_title="content check",
        parts=outcomes,
        colours=_CONTENT_COLOURS,
        unit="claimed files",
        desc=f"Claimed files by how their evidence was checked against the revision: {said}.",
    )


def _client_version(item: Mapping[str, Any]) -> str:
    version = str(item.get("client_version"))
    if version == "none":
        version = "(no version in its streams)"
    return f"{item['format']} {version}" if item.get("format") else version


def _drift_kinds(item: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(kind, streams) of one client version's row of the report's ``drift``."""
    kinds = item.get("kinds")
    return [(str(k), int(n)) for k, n in kinds.items()] if isinstance(kinds, Mapping) else []


def drift_rows(repo: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per client version that held drift, its streams split three ways (they add up to its
    streams): understood, drift said only, drift that could hide reads."""
    rows: list[dict[str, Any]] = []
    for item in repo.get("drift") or []:
        hides, said, streams = int(item["hides_reads"]), int(item["said"]), int(item["streams"])
        if not (hides or said):
            continue
        version = _client_version(item)
        for part, n in zip(_DRIFT_PARTS, (streams - hides - said, said, hides), strict=True):
            if n:
                rows.append({"client_version": version, "part": part, "count": n})
    return rows


def drift_chart(repo: Mapping[str, Any]) -> Chart | None:
    rows = drift_rows(repo)
    if not rows:
        return None
    said = "; ".join(f"{r['client_version']} {r['part']} {r['count']}" for r in rows)
    return _stacked_bars(
        rows,
        title="Streams per client version that held drift",
        category="client_version",
        category_title="client version",
        part="part",
        part_title="what the adapter made of them",
        parts=list(_DRIFT_PARTS),
        colours=_DRIFT_PARTS,
        unit="streams",
        desc=f"Reviewer streams of each client version that held drift, by what the adapter "
        f"made of them (each stream counted once; the kinds are in the table): {said}.",
    )


def trend_scale(
    rows: Sequence[Mapping[str, Any]], repo: Mapping[str, Any], ceiling: float
) -> float:
    """The top of a trend line's scale: room for its highest day, the judged interval and the
    ceiling, and no more (a 0-100% scale flattens 1.8% and 33.5% alike)."""
    interval = repo.get("would_downgrade_interval") or {}
    top = max([float(r["rate"]) for r in rows] + [ceiling, float(interval.get("high", 0.0))])
    return min(1.0, math.ceil(top * 1.15 * 100) / 100)


def trend_chart(repo: Mapping[str, Any], ceiling: float) -> Chart | None:
    """The would-downgrade rate per day, on a scale fitted to it, over the interval the
    readiness check judged (the whole window's 95% Wilson interval, a band) and the ceiling (a
    dashed rule)."""
    rows = day_rates(repo)
    if not rows:
        return None
    top = trend_scale(rows, repo, ceiling)
    y = {"field": "rate", "type": "quantitative", "axis": None, "scale": {"domain": [0, top]}}
    interval = repo.get("would_downgrade_interval")
    layers: list[dict[str, Any]] = []
    if interval is not None:
        layers.append(
            {
                "name": "cg_judged",
                "data": {"values": [{"low": interval["low"], "high": interval["high"]}]},
                "mark": {"type": "rect", "color": _SKY, "opacity": 0.35},
                "encoding": {
                    "y": {**y, "field": "low"},
                    "y2": {"field": "high"},
                },
            }
        )
    layers += [
        {
            "name": "cg_ceiling",
            "data": {"values": [{"ceiling": ceiling}]},
            "mark": {"type": "rule", "color": _VERMILLION, "strokeDash": [3, 2]},
            "encoding": {"y": {**y, "field": "ceiling"}},
        },
        {
            "name": "cg_line",
            "mark": {"type": "line", "color": _BLUE, "strokeWidth": 1.5},
            "encoding": {"x": _x_day(None), "y": y},
        },
        {
            "name": "cg_points",
            "mark": {"type": "point", "filled": True, "color": _BLUE, "size": 8},
            "encoding": {"x": _x_day(None), "y": y},
        },
    ]
    spec: dict[str, Any] = {
        "width": 130,
        "height": 40,
        "padding": 2,
        "data": {"values": rows},
        "layer": layers,
    }
    first, last = rows[0], rows[-1]
    judged = (
        ""
        if interval is None
        else f"; the judged 95% interval {_pct(interval['low'])}-{_pct(interval['high'])}"
    )
    desc = (
        f"Would-downgrade rate per day over {len(rows)} days, from {_pct(first['rate'])} on "
        f"{first['day']} to {_pct(last['rate'])} on {last['day']}, highest "
        f"{_pct(max(r['rate'] for r in rows))}{judged}; ceiling {_pct(ceiling)}; scale 0 to "
        f"{_pct(top)}."
    )
    return Chart(
        spec, title="Trend", desc=desc, marks="cg_points_marks", count=len(rows), scale=(0.0, top)
    )
