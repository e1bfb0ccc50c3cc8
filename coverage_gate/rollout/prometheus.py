"""The report's counts read from Prometheus: the same ``RepoCounts`` a telemetry folder gives,
so that a repository's readiness at fleet scale and on one machine come from one definition.

What is queried: the counters the docs list, under the names Prometheus holds after the
OTLP translation (``metrics.InstrumentSpec.prometheus_name``), through the HTTP API's instant
queries (``POST /api/v1/query``), summed by repository. Three choices make the counts those
of the decisions themselves rather than an estimate:

- **No extrapolation.** ``increase()`` extrapolates to the window's edges (non-integer counts)
  and never counts a series' first sample, so a repository whose first review made a new series
  (every new repository, every first ``capability=none`` record) would be undercounted, in the
  direction that lets it look ready. A series' count over the window is instead its last value
  in the window minus its last value before it (``window_total``); a series born within the
  window counts its whole last value (the Collector's cumulative series start at zero). Only a
  series that was reset within the window (its Collector restarted) falls back to
  ``increase()``, Prometheus' own reset-aware estimate, rounded.
- **Days observed in steps.** When reviews happened is read in steps of an hour (or the window,
  when shorter): the first and the last step in which the repository's review counter rose (or
  a series of it was born). ``first_seen .. last_seen`` (the start of the first step, the end of
  the last) bracket the reviews, each end to within a step, so days observed count that span
  less two steps: never more than the true span, at most two steps less.
- **One deadline.** Every query of one report shares a deadline (``timeout_s``); the queries run
  in daemon threads, so a server that accepts connections and trickles its answers is cut off
  there, and an answer not complete by then is an error, never a partial count.

I/O (HTTP) lives in ``HttpTransport``; building queries and folding their answers into counts is
pure and takes any ``Transport``.
"""

from __future__ import annotations

import json
import math
import queue
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from coverage_gate.contracts.model import Depth, DepthPolicy
from coverage_gate.edges.urls import redacted
from coverage_gate.errors import BadConfigError, BadInputError, UsageError
from coverage_gate.rollout import metrics as m
from coverage_gate.rollout.metrics import ReviewOutcome
from coverage_gate.rollout.report import RepoCounts, Window, content_by_format

__all__ = [
    "BASELINE",
    "CONCURRENCY",
    "COUNTED",
    "DEFAULT_SINCE",
    "DEFAULT_TIMEOUT_S",
    "HEADERS_ENV",
    "MAX_ANSWER_BYTES",
    "STEP_S",
    "Counted",
    "HttpTransport",
    "PrometheusAuthError",
    "PrometheusError",
    "Query",
    "Series",
    "Transport",
    "check_url",
    "fold",
    "parse_answer",
    "parse_headers",
    "parse_since",
    "queries",
    "read_counts",
    "step_for",
    "window_total",
]

DEFAULT_SINCE = "14d"
DEFAULT_TIMEOUT_S = 10.0
#: The resolution of "days observed" (seconds); the window itself when shorter.
STEP_S = 3600
#: How far before the window a series' last value is looked for: a series with no sample for
#: this long before the window starts is counted as born within it.
BASELINE = "1d"
#: Extra request headers, as OpenTelemetry spells them: ``name=value,name2=value2`` (values
#: percent-encoded).
HEADERS_ENV = "COVERAGE_GATE_PROMETHEUS_HEADERS"
#: Queries in flight at once.
CONCURRENCY = 4
#: The largest answer read, per query.
MAX_ANSWER_BYTES = 64 * 1024 * 1024

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}
_DURATION = re.compile(r"^([0-9]+)([smhdw])$")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class PrometheusError(BadInputError):
    """Prometheus gave no usable answer (down, slow, an error, a malformed answer, no metrics)."""


class PrometheusAuthError(BadConfigError):
    """Prometheus refused the request's credentials (HTTP 401 or 403)."""


# --- settings ---------------------------------------------------------------------------------


def parse_since(text: str) -> int:
    """``14d``, ``12h``, ``90m``, ``2w``, ``600s`` → seconds; at least a minute."""
    found = _DURATION.match(text.strip())
    if found is None:
        raise UsageError(f"--since {text!r}: expected a number and a unit (s, m, h, d, w): 14d")
    seconds = int(found.group(1)) * _UNITS[found.group(2)]
    if seconds < 60:
        raise UsageError(f"--since {text!r}: the window must be at least a minute")
    return seconds


def check_url(url: str) -> str:
    """The Prometheus base URL, without a trailing slash; http or https with a host."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in {"http", "https"} or not parsed.hostname:
        raise UsageError(
            f"--prometheus {redacted(url)!r}: expected an http(s) URL such as http://host:9090"
        )
    return url.rstrip("/")


def _header(name: str, value: str, origin: str) -> tuple[str, str]:
    name, value = name.strip(), value.strip()
    if not _TOKEN.match(name):
        raise ValueError(f"{origin}: {name!r} is not a header name")
    if any(ch in value for ch in "\r\n\0"):
        raise ValueError(f"{origin}: the value of header {name} holds a line break or NUL")
    return name, value


def parse_headers(options: Sequence[str], environ: Mapping[str, str]) -> dict[str, str]:
    """Request headers: ``COVERAGE_GATE_PROMETHEUS_HEADERS`` (``name=value,...``, percent-encoded
    values, as ``OTEL_EXPORTER_OTLP_HEADERS``), then each ``--prometheus-header 'Name: value'``,
    which wins over the environment for the same name. Values are never shown in errors."""
    headers: dict[str, str] = {}
    raw = environ.get(HEADERS_ENV, "")
    for index, item in enumerate(part for part in raw.split(",") if part.strip()):
        name, sep, value = item.partition("=")
        if not sep:
            raise BadConfigError(f"{HEADERS_ENV}: entry {index + 1} is not name=value")
        try:
            key, text = _header(name, urllib.parse.unquote(value), HEADERS_ENV)
        except ValueError as error:
            raise BadConfigError(str(error)) from None
        headers[key] = text
    chosen: dict[str, str] = {}
    for option in options:
        name, sep, value = option.partition(":")
        if not sep:
            raise UsageError("--prometheus-header: expected 'Name: value'")
        try:
            key, text = _header(name, value, "--prometheus-header")
        except ValueError as error:
            raise UsageError(str(error)) from None
        chosen[key] = text
    lowered = {k.lower() for k in chosen}
    return {
        **{k: v for k, v in headers.items() if k.lower() not in lowered},
        **chosen,
    }


# --- the transport ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Series:
    """One element of an instant query's answer."""

    labels: Mapping[str, str]
    value: float


class Transport(Protocol):
    """Runs one instant query at a time ``at`` (seconds since the epoch)."""

    def query(self, expr: str, at: float) -> list[Series]: ...


def parse_answer(body: bytes, origin: str) -> list[Series]:
    """An instant-vector answer of the HTTP API, or PrometheusError saying what is wrong."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        raise PrometheusError(f"{origin}: the answer is not JSON") from None
    if not isinstance(document, dict):
        raise PrometheusError(f"{origin}: the answer is not a JSON object")
    if document.get("status") != "success":
        detail = document.get("error")
        said = f": {str(detail)[:300]}" if detail else ""
        raise PrometheusError(f"{origin}: the query failed{said}")
    data = document.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        raise PrometheusError(f"{origin}: the answer is not an instant vector")
    result = data.get("result")
    if not isinstance(result, list):
        raise PrometheusError(f"{origin}: the answer has no result list")
    found: list[Series] = []
    for index, item in enumerate(result):
        labels = item.get("metric") if isinstance(item, dict) else None
        value = item.get("value") if isinstance(item, dict) else None
        if (
            not isinstance(labels, dict)
            or not all(isinstance(v, str) for v in labels.values())
            or not isinstance(value, list)
            or len(value) != 2
            or not isinstance(value[1], str)
        ):
            raise PrometheusError(f"{origin}: result[{index}] is not a sample with labels")
        try:
            number = float(value[1])
        except ValueError:
            raise PrometheusError(f"{origin}: result[{index}] holds no number") from None
        found.append(Series(labels, number))
    return found


class HttpTransport:
    """Instant queries over HTTP with urllib3: no retries, ``timeout_s`` to connect and for each
    read, the same timeout asked of Prometheus for evaluating the query."""

    def __init__(self, url: str, headers: Mapping[str, str], timeout_s: float) -> None:
        import urllib3  # noqa: PLC0415 - loaded only when Prometheus is asked

        self._urllib3 = urllib3
        self._endpoint = f"{url}/api/v1/query"
        self._timeout_s = timeout_s
        self._headers = dict(headers)
        self._pool = urllib3.PoolManager(
            retries=False,
            timeout=urllib3.Timeout(connect=timeout_s, read=timeout_s),
            maxsize=CONCURRENCY,
        )

    def query(self, expr: str, at: float) -> list[Series]:
        urllib3 = self._urllib3
        origin = f"Prometheus {redacted(self._endpoint)}"  # printed: no user or password
        fields = {"query": expr, "time": f"{at:.3f}", "timeout": f"{self._timeout_s:g}s"}
        try:
            response = self._pool.request(
                "POST",
                self._endpoint,
                fields=fields,
                encode_multipart=False,
                headers=self._headers,
                preload_content=False,
                redirect=False,
            )
            try:
                body = _read_capped(response, origin)
            finally:
                response.release_conn()
        # NewConnectionError is a ConnectTimeoutError to urllib3: it goes first
        except urllib3.exceptions.NewConnectionError as error:
            raise PrometheusError(f"{origin}: cannot connect ({_reason(error)})") from None
        except urllib3.exceptions.TimeoutError:
            raise PrometheusError(
                f"{origin}: no answer within {self._timeout_s:g} s (--prometheus-timeout)"
            ) from None
        except urllib3.exceptions.HTTPError as error:
            raise PrometheusError(f"{origin}: {_reason(error)}") from None
        if response.status in {401, 403}:
            raise PrometheusAuthError(
                f"{origin}: HTTP {response.status}: the credentials were refused (set "
                f"--prometheus-header or {HEADERS_ENV})"
            )
        if response.status >= 300 and response.status not in {400, 422}:
            raise PrometheusError(f"{origin}: HTTP {response.status}")
        # 400 and 422 carry the API's own error document: a query it could not run
        return parse_answer(body, origin)


def _read_capped(response: Any, origin: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.stream(64 * 1024):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise PrometheusError(f"{origin}: the answer is over {MAX_ANSWER_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _reason(error: BaseException) -> str:
    text = str(getattr(error, "reason", None) or error)
    lowered = text.lower()
    if "refused" in lowered:
        return "connection refused"
    if "name or service not known" in lowered or "nodename nor servname" in lowered:
        return "host not found"
    return text[:200]


# --- queries ------------------------------------------------------------------------------------


def window_total(selector: str, window: str, baseline: str = BASELINE) -> str:
    """Per series, what a counter counted within ``window`` (ending at the query's time).

    A series with a value before the window and no reset within it: its last value in the
    window less its last value before it (exact; never extrapolated). A series without a value
    in the ``baseline`` before the window (born within it) or that fell below that value (reset
    at the window's start): its whole last value. A series reset within the window: Prometheus'
    ``increase()``, an estimate."""
    last = f"last_over_time({selector}[{window}])"
    before = f"last_over_time({selector}[{baseline}] offset {window})"
    reset = f"(resets({selector}[{window}]) > 0)"
    kept = f"((({last} - {before}) >= 0) unless {reset})"
    return (
        f"({kept} or ({last} unless {kept} unless {reset}) "
        f"or (increase({selector}[{window}]) and {reset}))"
    )


def _rose(selector: str, step: str) -> str:
    """The series that rose within the step ending at each evaluation time."""
    now = f"last_over_time({selector}[{step}])"
    before = f"last_over_time({selector}[{step}] offset {step})"
    return f"(({now} - {before}) > 0)"


def _born(selector: str, window: str, step: str, baseline: str = BASELINE) -> str:
    """Per series born within the window: the end of the step it first appeared in."""
    return (
        f"label_replace(min_over_time(timestamp(last_over_time({selector}[{step}]))"
        f"[{window}:{step}]) unless last_over_time({selector}[{baseline}] offset {window}), "
        f'"born", "true", "", "")'
    )


@dataclass(frozen=True, slots=True)
class Query:
    """One query of the report: its PromQL, and when it is evaluated (the window's end, or the
    end of the step holding it)."""

    name: str
    expr: str
    stepped: bool = False


def _name(spec: m.InstrumentSpec) -> str:
    return spec.prometheus_name


@dataclass(frozen=True, slots=True)
class Counted:
    """A counter summed over the window by repository and ``labels``; ``_fold_counts`` says
    which ``RepoCounts`` figures its answer feeds."""

    name: str
    spec: m.InstrumentSpec
    labels: tuple[str, ...] = ()


#: The counters one report reads.
COUNTED: tuple[Counted, ...] = (
    Counted("reviews", m.REVIEWS, ("mode", "mode_source", "outcome", "evidence_available")),
    Counted("errors", m.ERRORS, ("kind",)),
    Counted("fallbacks", m.MODE_FALLBACKS),
    Counted("claimed", m.CLAIMED_FILES),
    Counted("unsupported", m.UNSUPPORTED_FILES),
    Counted("unknown", m.UNKNOWN_FILES),
    Counted("depth", m.DEPTH_FILES, ("depth",)),
    Counted("policies", m.DEPTH_POLICY_APPROVALS, ("depth_policy", "would_downgrade")),
    Counted("content", m.CONTENT_FILES, ("format", "content")),
    Counted("streams", m.STREAMS, ("format", "client_version", "drift")),
    Counted("drift", m.DRIFT, ("format", "client_version", "kind")),
)


def queries(since_s: int, step_s: int) -> list[Query]:
    """Every query one report runs, built from the instrument list. The stepped ones (when
    reviews were seen) reach one step further back, so that their steps cover the window."""
    window, step, stepped = f"{since_s}s", f"{step_s}s", f"{since_s + step_s}s"

    def total(spec: m.InstrumentSpec, labels: Iterable[str] = (), suffix: str = "") -> str:
        by = ", ".join(["repository", *labels])
        return f"sum by ({by}) ({window_total(_name(spec) + suffix, window)})"

    reviews = _name(m.REVIEWS)
    seen = f"sum by (repository) ({_rose(reviews, step)})"
    first = (
        f"min by (repository) (min_over_time(timestamp({seen})[{stepped}:{step}]) "
        f"or {_born(reviews, stepped, step)})"
    )
    last = (
        f"max by (repository) (max_over_time(timestamp({seen})[{stepped}:{step}]) "
        f"or {_born(reviews, stepped, step)})"
    )
    buckets = total(m.RECONCILE_DURATION, ["le"], "_bucket")
    # Each counter's reset series, named (resets() drops the metric name, and series of two
    # counters with the same labels may not share one vector).
    reset = " or ".join(
        f'label_replace(resets({_name(spec)}[{window}]) > 0, "counter", "{_name(spec)}", "", "")'
        for spec in m.INSTRUMENTS
        if spec.kind is m.Kind.COUNTER
    )
    resets = f"count by (repository) ({reset})"
    return [
        *(Query(c.name, total(c.spec, c.labels)) for c in COUNTED),
        Query("resets", resets),
        Query("p50", f"histogram_quantile(0.5, {buckets})"),
        Query("p95", f"histogram_quantile(0.95, {buckets})"),
        Query("first_seen", first, stepped=True),
        Query("last_seen", last, stepped=True),
    ]


# --- folding answers into counts --------------------------------------------------------------


@dataclass
class _Tally:
    reviews: int = 0
    approvals: int = 0
    flagged: int = 0
    available: int = 0
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    fallbacks: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)
    claimed: int = 0
    unsupported: int = 0
    unknown: int = 0
    depth: dict[str, int] = field(default_factory=dict)
    compared: dict[str, int] = field(default_factory=dict)
    flagged_under: dict[str, int] = field(default_factory=dict)
    #: Claimed files by (format, how their content was checked).
    content: dict[tuple[str, str], int] = field(default_factory=dict)
    #: Reviewer streams by (format, client version, drift label), and by (..., drift kind).
    streams: dict[tuple[str, str, str], int] = field(default_factory=dict)
    drift_kinds: dict[tuple[str, str, str], int] = field(default_factory=dict)
    resets: int = 0
    p50: float | None = None
    p95: float | None = None
    first: float | None = None
    last: float | None = None


def _count(series: Series, origin: str) -> int:
    if not math.isfinite(series.value) or series.value < 0:
        raise PrometheusError(f"{origin}: a count of {series.value} for {dict(series.labels)}")
    return round(series.value)


def _add(table: dict[str, int], key: str, value: int) -> None:
    if value:
        table[key] = table.get(key, 0) + value


_FLAGGED = {ReviewOutcome.WOULD_DOWNGRADE.value, ReviewOutcome.DOWNGRADED.value}
#: Queries whose count adds to the tally's figure of the same name.
_TOTALS = frozenset({"errors", "fallbacks", "claimed", "unsupported", "unknown"})


def _fold_counts(tally: _Tally, name: str, labels: Mapping[str, str], n: int) -> None:
    if name in _TOTALS:
        setattr(tally, name, getattr(tally, name) + n)
        if name == "errors":
            _add(tally.error_kinds, labels.get("kind", ""), n)
    elif name == "reviews":
        tally.reviews += n
        outcome = labels.get("outcome", "")
        if outcome != ReviewOutcome.NOT_APPLICABLE.value:
            tally.approvals += n
        if outcome in _FLAGGED:
            tally.flagged += n
        if labels.get("evidence_available") == "true":
            tally.available += n
        _add(tally.outcomes, outcome, n)
        _add(tally.modes, labels.get("mode", ""), n)
        _add(tally.sources, labels.get("mode_source", ""), n)
    elif name == "depth":
        _add(tally.depth, labels.get("depth", ""), n)
    elif name == "policies":
        policy = labels.get("depth_policy", "")
        _add(tally.compared, policy, n)
        if labels.get("would_downgrade") == "true":
            _add(tally.flagged_under, policy, n)
    elif name == "content":
        key = (labels.get("format", ""), labels.get("content", ""))
        tally.content[key] = tally.content.get(key, 0) + n
    elif name in ("streams", "drift"):
        table = tally.streams if name == "streams" else tally.drift_kinds
        client = (labels.get("format", ""), labels.get("client_version", ""))
        row = (*client, labels.get("drift" if name == "streams" else "kind", ""))
        if n:
            table[row] = table.get(row, 0) + n


def fold(
    answers: Mapping[str, Sequence[Series]], *, now_s: float, step_s: int, origin: str
) -> list[RepoCounts]:
    """Per repository, the counts the answers hold (pure)."""
    tallies: dict[str, _Tally] = {}
    for name, found in answers.items():
        for series in found:
            repository = series.labels.get("repository")
            if repository is None:
                continue
            tally = tallies.setdefault(repository, _Tally())
            value = series.value
            if name in {"p50", "p95"}:
                setattr(tally, name, value if math.isfinite(value) else None)
            elif name == "first_seen":
                # the end of the first step with a review: the review came after its start
                tally.first = value - step_s
            elif name == "last_seen":
                # the end of the last step with a review, which may lie ahead of now
                tally.last = min(value, now_s)
            elif name == "resets":
                tally.resets += _count(series, origin)
            else:
                _fold_counts(tally, name, series.labels, _count(series, origin))
    return [_counts(name, t, step_s) for name, t in sorted(tallies.items()) if _active(t)]


def _active(tally: _Tally) -> bool:
    return bool(tally.reviews or tally.errors)


def _counts(repository: str, t: _Tally, step_s: int) -> RepoCounts:
    first = t.first
    last = None if first is None or t.last is None else max(t.last, first)
    # first_seen .. last_seen bracket the reviews, each end to within a step: days observed
    # count two steps less, so as never to overstate the span.
    return RepoCounts(
        repository=repository,
        reviews=t.reviews,
        approvals=t.approvals,
        flagged=t.flagged,
        evidence_available=t.available,
        errors=t.errors,
        error_kinds=dict(sorted(t.error_kinds.items())),
        fallbacks=t.fallbacks,
        first_seen_s=first,
        last_seen_s=last,
        resolution_s=2.0 * step_s,
        reset_series=t.resets,
        outcomes=dict(sorted(t.outcomes.items())),
        modes=dict(sorted(t.modes.items())),
        mode_sources=dict(sorted(t.sources.items())),
        claimed_files=t.claimed,
        unsupported_files=t.unsupported,
        unknown_files=t.unknown,
        depth_files={d.value: t.depth.get(d.value, 0) for d in Depth},
        approvals_compared=t.compared.get(DepthPolicy.ACCEPT.value, 0),
        flagged_under={p.value: t.flagged_under.get(p.value, 0) for p in DepthPolicy},
        content=content_by_format(t.content.items()),
        streams=dict(sorted(t.streams.items())) if t.streams else None,
        drift_kinds=dict(sorted(t.drift_kinds.items())) if t.streams else None,
        duration_p50_s=t.p50,
        duration_p95_s=t.p95,
    )


# --- running the queries ----------------------------------------------------------------------


def _run_all(
    transport: Transport,
    plan: Sequence[tuple[Query, float]],
    timeout_s: float,
    url: str,
) -> dict[str, list[Series]]:
    """Every query, ``CONCURRENCY`` at a time in daemon threads, all within ``timeout_s``; the
    first failure, or the deadline, is the error."""
    work: queue.Queue[tuple[Query, float]] = queue.Queue()
    for item in plan:
        work.put(item)
    done: queue.Queue[tuple[str, list[Series] | None, Exception | None]] = queue.Queue()

    def worker() -> None:
        while True:
            try:
                query, at = work.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((query.name, transport.query(query.expr, at), None))
            # Not handled here: whatever the query raised is handed to the caller's thread,
            # which raises it there (a known error with the query's name, anything else, a bug,
            # as it is), instead of dying with this thread and leaving the caller to time out.
            except Exception as error:  # noqa: BLE001
                done.put((query.name, None, error))

    for index in range(min(CONCURRENCY, len(plan))):
        threading.Thread(
            target=worker, name=f"coverage-gate-prometheus-{index}", daemon=True
        ).start()
    deadline = time.monotonic() + timeout_s
    answers: dict[str, list[Series]] = {}
    while len(answers) < len(plan):
        try:
            name, found, error = done.get(timeout=max(deadline - time.monotonic(), 0.0))
        except queue.Empty:
            raise PrometheusError(
                f"Prometheus {redacted(url)}: no complete answer within {timeout_s:g} s "
                f"({len(answers)} of {len(plan)} queries answered; --prometheus-timeout)"
            ) from None
        if isinstance(error, PrometheusError):
            raise PrometheusError(f"{error} (query {name!r})") from None
        if error is not None:
            raise error
        assert found is not None  # noqa: S101 - a worker puts an answer or an error
        answers[name] = found
    return answers


def step_for(since_s: int) -> int:
    return min(STEP_S, since_s)


def read_counts(
    transport: Transport,
    *,
    url: str,
    since_s: int,
    timeout_s: float,
    now_s: float,
    clock_iso: Callable[[float], str],
) -> tuple[list[RepoCounts], Window]:
    """Run the report's queries over the window ending at ``now_s`` and fold them into counts.

    Raises PrometheusError when Prometheus holds no review or error counter of coverage-gate
    over the window (wrong server, metrics not scraped, names not translated as documented)."""
    step_s = step_for(since_s)
    stepped_at = math.ceil(now_s / step_s) * step_s
    plan = [(q, stepped_at if q.stepped else now_s) for q in queries(since_s, step_s)]
    answers = _run_all(transport, plan, timeout_s, url)
    if not answers.get("reviews") and not answers.get("errors"):
        raise PrometheusError(
            f"Prometheus {redacted(url)} holds no {_name(m.REVIEWS)} or {_name(m.ERRORS)} series "
            f"over the last {since_s / 86_400:g} days: are coverage-gate's metrics scraped there "
            "(dashboards/otelcol.yaml), under the names docs/reference/telemetry.md lists?"
        )
    counts = fold(answers, now_s=now_s, step_s=step_s, origin=f"Prometheus {url}")
    window = Window(
        prometheus=redacted(url),  # the report is shown and shared: no user or password
        since_s=float(since_s),
        start=clock_iso(now_s - since_s),
        end=clock_iso(now_s),
        step_s=float(step_s),
        queries=len(plan),
    )
    return counts, window
