"""`report --prometheus`: the counts Prometheus' answers fold into are those of the spans, and
every way Prometheus can fail (down, slow, trickling, refusing credentials, not answering its
API, holding no metrics) is a one-line error with its exit code, never a report, so never a
verdict of ready. Against a small fake of the HTTP API on loopback."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.commands.report import report_app
from coverage_gate.contracts.model import ModeSource, Verdict
from coverage_gate.errors import BadConfigError, UsageError
from coverage_gate.rollout import prometheus as p
from coverage_gate.rollout.metrics import INSTRUMENTS
from coverage_gate.rollout.report import (
    Criteria,
    count_folder,
    load_folder,
    readiness,
    repo_report,
    wilson,
)
from coverage_gate.rollout.report.build import MismatchRow
from coverage_gate.rollout.simulation import ReviewerSpec, decide
from tests.rollout.test_report import (
    BLIND,
    HONEST,
    LIAR,
    SCOPE,
    _content_decisions,
    spread,
    write,
)

runner = CliRunner()
NOW = 1_790_000_000.0
#: Each query of a report over the default window, by its PromQL: how the fake knows it.
QUERY_NAMES = {q.expr: q.name for q in p.queries(14 * 86_400, p.STEP_S)}


# --- the fake HTTP API ----------------------------------------------------------------------------


def vector(*samples: tuple[dict[str, str], float]) -> bytes:
    result = [{"metric": labels, "value": [NOW, repr(value)]} for labels, value in samples]
    return json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": result}}
    ).encode()


EMPTY = vector()


@dataclass
class Reply:
    status: int = 200
    body: bytes = EMPTY
    #: Seconds between bytes of the body (a server that trickles its answer).
    trickle_s: float = 0.0
    #: Hold the request until the test ends (a server that never answers).
    hang: bool = False


@dataclass
class Fake:
    url: str
    answer: Callable[[str], Reply]
    seen_headers: list[dict[str, str]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def fake() -> Iterator[Fake]:
    state = Fake("", lambda _query: Reply())

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = urllib.parse.parse_qs(self.rfile.read(length).decode())
            state.seen_headers.append(dict(self.headers))
            reply = state.answer(form["query"][0])
            if reply.hang:
                state.release.wait(30)
                return
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            if not reply.trickle_s:
                self.wfile.write(reply.body)
                return
            for byte in reply.body:
                if state.release.wait(reply.trickle_s):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def report(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(report_app, [*args, "--format", "json"], env=env or {})


def _is(query: str, name: str) -> bool:
    return QUERY_NAMES.get(query) == name


# --- folding Prometheus' answers: the same counts as the spans ------------------------------------


def _metric_points(folder: Path) -> Iterator[tuple[str, dict[str, str], float]]:
    """(Prometheus name, labels, value) of each delta point the real sink wrote."""
    names = {spec.name: spec.prometheus_name for spec in INSTRUMENTS}
    for path in sorted(folder.glob("metrics-*.jsonl")):
        for line in path.read_text().splitlines():
            for resource in json.loads(line)["resourceMetrics"]:
                for scope in resource["scopeMetrics"]:
                    for metric in scope["metrics"]:
                        for point in metric.get("sum", {}).get("dataPoints", []):
                            labels = {
                                a["key"]: a["value"]["stringValue"] for a in point["attributes"]
                            }
                            yield names[metric["name"]], labels, float(point.get("asInt", 0))


def answers_from(folder: Path) -> dict[str, list[p.Series]]:
    """What each counted query returns over a window holding everything in ``folder``: the
    counter's points summed by repository and the query's labels."""
    answers: dict[str, list[p.Series]] = {}
    for counted in p.COUNTED:
        sums: dict[tuple[tuple[str, str], ...], float] = defaultdict(float)
        for name, labels, value in _metric_points(folder):
            if name == counted.spec.prometheus_name:
                keys = ("repository", *counted.labels)
                sums[tuple((k, labels[k]) for k in keys)] += value
        answers[counted.name] = [p.Series(dict(key), value) for key, value in sums.items()]
    return answers


def test_the_counters_fold_into_the_counts_the_spans_give(tmp_path: Path) -> None:
    """Every readiness figure, from the metrics as Prometheus would sum them, equals the one
    from the spans of the same decisions; so does the verdict of every check, and so do the
    content mismatch and content-credit rates, per repository and per client."""
    stale = ReviewerSpec("security", claimed=SCOPE, read=SCOPE, evidence_revision="old")
    decisions = (
        [decide("acme/api", scope=SCOPE, reviewers=[HONEST])] * 4
        + [decide("acme/api", scope=SCOPE, reviewers=[LIAR])]
        + [decide("acme/api", scope=SCOPE, reviewers=[HONEST, BLIND])]
        + [decide("acme/api", scope=SCOPE, reviewers=[stale])]
        + [decide("acme/api", scope=SCOPE, reviewers=[HONEST], verdict=Verdict.COMMENT)]
        + [decide("acme/web", scope=SCOPE, reviewers=[HONEST], mode_source=ModeSource.FALLBACK)]
        + [d.model_copy(update={"repo": "acme/checked"}) for d in _content_decisions()]
    )
    write(tmp_path, spread(decisions, days=1), errors={"acme/web": 2, "acme/gone": 1})
    spans = {c.repository: c for c in count_folder(load_folder(tmp_path))}
    folded = {
        c.repository: c
        for c in p.fold(answers_from(tmp_path), now_s=NOW, step_s=3600, origin="test")
    }
    assert set(folded) == set(spans) == {"acme/api", "acme/web", "acme/gone", "acme/checked"}
    compared = (
        "reviews",
        "approvals",
        "flagged",
        "evidence_available",
        "errors",
        "error_kinds",
        "fallbacks",
        "outcomes",
        "modes",
        "mode_sources",
        "claimed_files",
        "unsupported_files",
        "unknown_files",
        "depth_files",
        "approvals_compared",
        "flagged_under",
        "content",
    )
    criteria = Criteria(min_approvals=1, min_days=0, max_would_downgrade_rate=0.9)
    for name, mine in spans.items():
        theirs = folded[name]
        assert {k: getattr(theirs, k) for k in compared} == {
            k: getattr(mine, k) for k in compared
        }, name
        assert [(c.name, c.ok) for c in readiness(theirs, criteria)] == [
            (c.name, c.ok) for c in readiness(mine, criteria)
        ], name
    assert spans["acme/api"].evidence_available == 6  # all but the blind and the stale review
    assert not repo_report(folded["acme/api"], criteria).ready
    # The same content report from either source: the rates of tests/rollout/test_report.py's fixture.
    checked = repo_report(folded["acme/checked"], criteria).content
    from_spans = repo_report(spans["acme/checked"], criteria).content
    assert from_spans is not None and checked is not None
    # what mismatches showed instead, by client version, comes from the spans only
    assert checked.mismatches == []
    assert from_spans.mismatches == [MismatchRow("pi-rpc", "none", "edit", 2)]
    assert checked == replace(from_spans, mismatches=[])
    assert checked is not None
    assert (checked.claimed, checked.mismatch_rate.count, checked.content_credit_rate.count) == (
        45,
        2,
        4,
    )
    assert folded["acme/gone"].content is None


def test_first_and_last_seen_bracket_the_reviews_and_days_never_overstate() -> None:
    """The steps with a review end at 10:00 and at 16:00: the reviews fell between 09:00 and
    16:00, and days observed count 7 h less two steps, 5 h."""
    hour = 3600
    answers = {
        "reviews": [p.Series({"repository": "a", "outcome": "kept"}, 3)],
        "first_seen": [p.Series({"repository": "a"}, 10 * hour)],
        "last_seen": [p.Series({"repository": "a"}, 16 * hour)],
    }
    (counts,) = p.fold(answers, now_s=20 * hour, step_s=hour, origin="test")
    assert (counts.first_seen_s, counts.last_seen_s) == (9 * hour, 16 * hour)
    assert counts.days == pytest.approx(5 / 24)
    # A last step still running ends no later than now.
    (running,) = p.fold(answers, now_s=15.5 * hour, step_s=hour, origin="test")
    assert running.last_seen_s == 15.5 * hour


def test_a_count_that_is_not_a_count_is_malformed() -> None:
    answers = {"reviews": [p.Series({"repository": "a", "outcome": "kept"}, float("nan"))]}
    with pytest.raises(p.PrometheusError, match="a count of nan"):
        p.fold(answers, now_s=NOW, step_s=3600, origin="test")


def test_counts_are_never_extrapolated() -> None:
    """A series' count is its last value less its last value before the window (whole when born
    in it); increase() only where a series was reset within the window."""
    expr = p.window_total("coverage_gate_reviews_total", "86400s")
    assert "last_over_time(coverage_gate_reviews_total[86400s])" in expr
    assert "last_over_time(coverage_gate_reviews_total[1d] offset 86400s)" in expr
    assert expr.count("increase(") == 1
    assert "and (resets(coverage_gate_reviews_total[86400s]) > 0)" in expr


def test_every_query_names_only_documented_metrics() -> None:
    """The PromQL is built from the instrument list (the README's metric table)."""
    documented = {s for spec in INSTRUMENTS for s in spec.prometheus_series}
    for query in p.queries(14 * 86_400, 3600):
        named = set(re_metric_names(query.expr))
        assert named, query.name
        assert named <= documented, (query.name, named - documented)


def re_metric_names(expr: str) -> list[str]:
    import re  # noqa: PLC0415

    return re.findall(r"\b(coverage_gate_[a-z_]+)\b", expr)


# --- settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("14d", 14 * 86_400), ("36h", 36 * 3600), ("90m", 5400), ("2w", 1_209_600)],
)
def test_since_reads_a_prometheus_duration(text: str, seconds: int) -> None:
    assert p.parse_since(text) == seconds


@pytest.mark.parametrize("text", ["", "14", "d", "1.5d", "-1d", "30s", "14 days"])
def test_a_bad_since_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--since"):
        p.parse_since(text)


def test_headers_come_from_the_environment_and_the_option_wins() -> None:
    env = {p.HEADERS_ENV: "Authorization=Bearer%20from-env,X-Scope-OrgID=acme"}
    assert p.parse_headers([], env) == {"Authorization": "Bearer from-env", "X-Scope-OrgID": "acme"}
    chosen = p.parse_headers(["authorization: Bearer from-option"], env)
    assert chosen == {"X-Scope-OrgID": "acme", "authorization": "Bearer from-option"}


@pytest.mark.parametrize(
    ("option", "env", "error"),
    [
        (["no colon"], {}, UsageError),
        (["Bad Name: x"], {}, UsageError),
        ([], {p.HEADERS_ENV: "novalue"}, BadConfigError),
        ([], {p.HEADERS_ENV: "X=a%0Ab"}, BadConfigError),
    ],
)
def test_a_bad_header_is_refused_without_showing_its_value(
    option: list[str], env: dict[str, str], error: type[Exception]
) -> None:
    with pytest.raises(error) as raised:
        p.parse_headers(option, env)
    assert "a%0Ab" not in str(raised.value)


# --- the command: usage -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--since", "14d"], "--since need --prometheus URL"),
        (["--prometheus-header", "A: b"], "--prometheus-header need --prometheus URL"),
        (["--prometheus", "http://x:9090", "--list", "would_downgrade"], "--list needs"),
        (["--prometheus", "http://x:9090", "--telemetry-dir", "."], "choose one source"),
        (["--prometheus", "http://x:9090", "--prometheus-timeout", "0"], "must be positive"),
        (["--prometheus", "ftp://x"], "expected an http(s) URL"),
        (["--prometheus", "http://x:9090", "--since", "soon"], "--since 'soon'"),
    ],
)
def test_options_that_do_not_go_together_are_usage_errors(args: list[str], said: str) -> None:
    result = report(*args)
    assert result.exit_code == 2, result.output
    assert said in result.stderr
    assert result.stdout == ""


# --- the command against a fake Prometheus ----------------------------------------------------


def _healthy(query: str) -> Reply:
    """acme/api: 60 clean approvals over several days, no errors, no fallbacks."""
    if _is(query, "reviews"):
        labels = {
            "repository": "acme/api",
            "mode": "shadow",
            "mode_source": "snapshot",
            "outcome": "kept",
            "evidence_available": "true",
        }
        return Reply(body=vector((labels, 60.0)))
    if _is(query, "policies"):
        labels = {"repository": "acme/api", "would_downgrade": "false"}
        return Reply(
            body=vector(*(({**labels, "depth_policy": d}, 60.0) for d in ("accept", "any-hunk")))
        )
    if _is(query, "first_seen"):
        return Reply(body=vector(({"repository": "acme/api"}, NOW - 10 * 86_400)))
    if _is(query, "last_seen"):
        return Reply(body=vector(({"repository": "acme/api"}, NOW)))
    return Reply()


def test_a_healthy_prometheus_gives_the_report_and_its_verdict(fake: Fake) -> None:
    fake.answer = _healthy
    result = report("--prometheus", fake.url + "/", "--since", "14d")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["input"]["source"] == "prometheus"
    assert document["input"]["queries"] == len(p.queries(14 * 86_400, 3600))
    (repo,) = document["repositories"]
    assert (repo["repository"], repo["approvals"], repo["readiness"]) == ("acme/api", 60, "ready")
    assert repo["evidence"]["capability_none"] is None  # not in the metrics: n/a, not 0
    text = runner.invoke(report_app, ["--prometheus", fake.url], env={})
    assert "acme/api: READY to enforce" in text.stdout
    assert "evidence available 100.0%: per review: not in the metrics" in text.stdout


def test_the_header_option_and_variable_reach_prometheus(fake: Fake) -> None:
    fake.answer = _healthy
    env = {p.HEADERS_ENV: "X-Scope-OrgID=acme,Authorization=Bearer%20env"}
    result = report(
        "--prometheus", fake.url, "--prometheus-header", "Authorization: Bearer opt", env=env
    )
    assert result.exit_code == 0, result.output
    assert fake.seen_headers
    for headers in fake.seen_headers:
        assert headers["Authorization"] == "Bearer opt"
        assert headers["X-Scope-OrgID"] == "acme"


def _bad(reply: Reply) -> Callable[[str], Reply]:
    return lambda query: reply if _is(query, "reviews") else _healthy(query)


@pytest.mark.parametrize(
    ("reply", "code", "said"),
    [
        (Reply(status=401, body=b"no"), 4, "HTTP 401: the credentials were refused"),
        (Reply(status=403, body=b"no"), 4, "HTTP 403"),
        (Reply(status=503, body=b"busy"), 3, "HTTP 503"),
        (Reply(body=b"<html>not the API</html>"), 3, "the answer is not JSON"),
        (
            Reply(body=b'{"status": "success", "data": {"resultType": "matrix", "result": []}}'),
            3,
            "not an instant vector",
        ),
        (
            Reply(
                body=b'{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, 2]}]}}'
            ),
            3,
            "result[0] is not a sample",
        ),
        (
            Reply(
                status=400,
                body=b'{"status": "error", "errorType": "bad_data", "error": "parse error at char 3"}',
            ),
            3,
            "the query failed: parse error at char 3 (query 'reviews')",
        ),
    ],
)
def test_a_failing_prometheus_is_an_error_never_a_report(
    fake: Fake, reply: Reply, code: int, said: str
) -> None:
    fake.answer = _bad(reply)
    result = report("--prometheus", fake.url, "--prometheus-header", "Authorization: Bearer s3cret")
    assert result.exit_code == code, result.output
    assert said in result.stderr
    assert result.stderr.startswith("coverage-gate report: error: Prometheus http://127.0.0.1:")
    assert "s3cret" not in result.stderr
    assert result.stdout == ""


def test_absent_metrics_are_an_error_that_says_what_is_missing(fake: Fake) -> None:
    """A Prometheus without coverage-gate's counters (another server, metrics not scraped, names
    translated otherwise) is not a report of no repositories."""
    result = report("--prometheus", fake.url, "--since", "7d")
    assert result.exit_code == 3
    assert "holds no coverage_gate_reviews_total or coverage_gate_errors_total series" in (
        result.stderr
    )
    assert "over the last 7 days" in result.stderr


def test_nothing_listening_is_an_error(fake: Fake) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = report("--prometheus", f"http://127.0.0.1:{port}")
    assert result.exit_code == 3
    assert "cannot connect (connection refused)" in result.stderr


@pytest.mark.parametrize(
    "reply",
    [Reply(hang=True), Reply(body=vector(({"repository": "a"}, 1.0)), trickle_s=0.2)],
    ids=["silent", "trickling"],
)
def test_a_slow_prometheus_is_an_error_within_its_timeout(fake: Fake, reply: Reply) -> None:
    """One query that never completes (silent, or trickling bytes that reset every read
    timeout): the report gives up at --prometheus-timeout. The bound asserted is generous."""
    fake.answer = lambda query: reply if _is(query, "p95") else _healthy(query)
    began = time.monotonic()
    result = report("--prometheus", fake.url, "--prometheus-timeout", "1")
    took = time.monotonic() - began
    assert result.exit_code == 3, result.output
    assert "within 1 s" in result.stderr
    assert result.stdout == ""
    assert took < 10


class _Broken:
    """A transport with a bug in it."""

    def query(self, expr: str, at: float) -> list[p.Series]:
        raise RuntimeError("a bug")


def test_a_bug_in_a_query_surfaces_as_itself_not_as_a_slow_prometheus() -> None:
    """What a query raised is raised in the caller's thread: a bug stays a bug (exit 5 from the
    CLI's handler), never a timeout or a Prometheus error that hides it."""
    with pytest.raises(RuntimeError, match="a bug"):
        p.read_counts(
            _Broken(),
            url="http://x",
            since_s=86_400,
            timeout_s=5,
            now_s=NOW,
            clock_iso=str,
        )


def _with_content(query: str) -> Reply:
    """``_healthy``, and 60 approvals' claimed files by how their content was checked: pi 150
    matched and 6 mismatches, Claude Code 20 matched and 4 credited by content."""
    if _is(query, "content"):
        base = {"repository": "acme/api"}
        return Reply(
            body=vector(
                ({**base, "format": "pi-rpc", "content": "matched"}, 150.0),
                ({**base, "format": "pi-rpc", "content": "mismatch"}, 6.0),
                ({**base, "format": "claude-code", "content": "matched"}, 20.0),
                ({**base, "format": "claude-code", "content": "via_content"}, 4.0),
            )
        )
    return _healthy(query)


def test_the_content_metric_gives_the_content_rates_per_repository_and_client(
    fake: Fake,
) -> None:
    """From ``coverage_gate_content_files_total`` summed by repository, format and content: the
    claimed files per client and both rates with their Wilson intervals; absent without it."""
    fake.answer = _with_content
    result = report("--prometheus", fake.url)
    assert result.exit_code == 0, result.output
    (repo,) = json.loads(result.stdout)["repositories"]
    content = repo["content"]
    assert (content["claimed"], content["mismatch_rate"]["count"]) == (180, 6)
    assert content["content_credit_rate"]["count"] == 4
    clients = {c["format"]: c for c in content["clients"]}
    assert list(clients) == ["claude-code", "pi-rpc"]
    assert clients["pi-rpc"]["mismatch_rate"]["rate"] == pytest.approx(6 / 156)
    interval = clients["pi-rpc"]["mismatch_rate"]["interval"]
    assert (interval["low"], interval["high"]) == pytest.approx(wilson(6, 156))
    assert clients["claude-code"]["content_credit_rate"]["rate"] == pytest.approx(4 / 24)
    assert clients["claude-code"]["outcomes"] == {
        "matched": 20,
        "via_content": 4,
        "mismatch": 0,
        "unchecked": 0,
        "none": 0,
    }
    text = runner.invoke(report_app, ["--prometheus", fake.url], env={}).stdout
    assert "  mismatch rate 6 of 180 = 3.3% (95% CI" in text
    assert "    client pi-rpc, 156 claimed files: mismatch rate 6 of 156 = 3.8%" in text
    fake.answer = _healthy
    (plain,) = json.loads(report("--prometheus", fake.url).stdout)["repositories"]
    assert "content" not in plain


def test_the_text_report_names_its_source_and_window(fake: Fake) -> None:
    fake.answer = _healthy
    text = runner.invoke(report_app, ["--prometheus", fake.url], env={}).stdout
    assert text.startswith(f"Prometheus {fake.url}: ")
    assert "(--since 14d; 16 queries; reviews placed in steps of 1h)" in text.splitlines()[0]


def test_no_prometheus_url_is_printed_with_its_user_and_password(fake: Fake) -> None:
    """A Prometheus URL holding a user and password: the report's window, the errors and the
    usage error name it without them."""
    secret = fake.url.replace("http://", "http://reader:s3cret@")
    fake.answer = _healthy
    shown = []
    for output in ("json", "text"):
        done = runner.invoke(report_app, ["--prometheus", secret, "--format", output], env={})
        assert done.exit_code == 0, done.output
        shown.append(done.stdout + done.stderr)
        if output == "json":
            assert json.loads(done.stdout)["input"]["prometheus"] == fake.url
    fake.answer = _bad(Reply(status=500))
    shown.append(report("--prometheus", secret).stderr)
    fake.answer = lambda _query: Reply(body=vector())
    shown.append(report("--prometheus", secret).stderr)
    shown.append(report("--prometheus", "ftp://reader:s3cret@host").stderr)
    for said in shown:
        assert "s3cret" not in said and "reader" not in said, said
    assert all(said.strip() for said in shown)
