"""The streamed report: ``scan_folder`` folds a telemetry folder into per-repository tallies,
typed by msgspec and read by several processes, and reports exactly what ``load_folder``'s
records report, on real telemetry and on every kind of bad line."""

from __future__ import annotations

import gc
import json
import random
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.contracts.model import Depth, DepthPolicy, FileContent
from coverage_gate.rollout.metrics import ReviewOutcome
from coverage_gate.rollout.report import (
    Criteria,
    FolderInput,
    Loaded,
    RepoCounts,
    Tallied,
    build_report,
    load_folder,
    percentile,
    render_text,
    to_json,
    wilson,
)
from coverage_gate.rollout.report.counts import (
    CitationReport,
    Day,
    EvidenceDetail,
    ReviewTally,
    blocks_readiness,
    count_reviews,
)
from coverage_gate.rollout.report.records import ReviewRecord, SpanKeys
from coverage_gate.rollout.report.scan import scan_folder
from coverage_gate.rollout.report.stats import _share
from coverage_gate.rollout.simulation import simulate

CRITERIA = Criteria()


@pytest.fixture(scope="module")
def rollout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulated rollout's telemetry: 420 decisions of six repositories, many files."""
    folder = tmp_path_factory.mktemp("rollout")
    simulate(folder, reviews=70)
    return folder


def trace_lines(folder: Path) -> list[bytes]:
    return [
        line
        for path in sorted(folder.glob("traces-*.jsonl"))
        for line in path.read_bytes().splitlines()
    ]


def metrics_lines(folder: Path) -> list[bytes]:
    return [
        line
        for path in sorted(folder.glob("metrics-*.jsonl"))
        for line in path.read_bytes().splitlines()
    ]


def reports(folder: Path, loaded: FolderInput) -> tuple[str, str]:
    report = build_report(loaded, CRITERIA, list_flagged=True)
    return render_text(report), json.dumps(to_json(report), indent=2, sort_keys=True)


def assert_same_report(folder: Path) -> Tallied:
    """The streamed report, in this process and with two workers, is the loaded one."""
    expected = reports(folder, load_folder(folder))
    for workers in (1, 2):
        scanned = scan_folder(folder, list_flagged=True, workers=workers)
        assert reports(folder, scanned) == expected, f"workers={workers}"
    return scanned


def nth(text: bytes, old: bytes, new: bytes, n: int) -> bytes:
    """``text`` with the ``n``-th (from 0) occurrence of ``old`` replaced by ``new``."""
    at = -1
    for _ in range(n + 1):
        at = text.index(old, at + 1)
    return text[:at] + new + text[at + len(old) :]


def mutated(lines: Sequence[bytes], metrics: Sequence[bytes]) -> list[bytes]:
    """Lines the typed reader must leave to the report's reader, or read as it does."""
    one, two, three = lines[0], lines[1], lines[2]
    spans = one[one.index(b'"spans":[') + len(b'"spans":[') : one.rindex(b"]}]}]}")]
    first_span = spans[: spans.index(b',{"traceId"')]
    return [
        one.replace(b'"intValue":"6"', b'"intValue":"+6"', 1),  # an int Python reads, leniently
        one.replace(b'"doubleValue":0.007', b'"doubleValue":"NaN"'),  # a double as a string
        nth(two, b'"endTimeUnixNano":"', b'"endTimeUnixNano":"soon', 3),  # folded in part
        three[: len(three) // 2],  # cut off
        nth(three, b'{"stringValue":"0000', b'{"stringValue":0,"x":"', 0),  # a read value, wrong
        one.replace(b'"kind":1', b'"kind":1,"extra":' + b"7" * 5000, 1),  # a number too long
        b'{"resourceSpans":[],"x":' + b"[" * 5000 + b"]" * 5000 + b"}",  # nested too deeply
        one.replace(first_span, first_span + b"," + first_span, 1),  # a span twice in a line
        b'{"resourceSpans": NaN}',
        b'["a list"]',
        b'{"something": "else"}',
        b"{}",
        b'{"resourceSpans":[{"scopeSpans":"oops"}]}',
        one.replace(b'"name":"reconcile ', b'"name":5,"was":"', 1),  # a name of no text
        one.replace(b'"traceId":"', b'"traceId":7,"was":"', 1),  # an id of no text
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"reconcile a/b","attributes":[{"key'
        b'":"coverage_gate.outcome","value":{"stringValue":"kept"}},{"key":"coverage_gate.reconc'
        b'ile.duration","value":{"intValue":"1' + b"0" * 400 + b'"}}]}]}]}]}',  # too large a float
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"reconcile a/b","attributes":[{"key'
        b'":"coverage_gate.outcome","value":{"stringValue":"kept"}},{"key":"coverage_gate.reconc'
        b'ile.duration","value":{"doubleValue":1e400}}]}]}]}]}',  # past a double: infinity
        b"\xc2\xa0",  # a blank line to Python, not to bytes.strip()
        b"\x0c  \t",
        metrics[0].replace(b'"aggregationTemporality":1', b'"aggregationTemporality":2'),
        metrics[1].replace(b'"asInt":"', b'"asInt":"+', 1),
        b'{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"coverage_gate.errors","sum":'
        b'{"aggregationTemporality":2,"dataPoints":[{"asDouble":3.0,"attributes":[{"key":"reposit'
        b'ory","value":{"stringValue":"acme/api"}}]},{"asDouble":2,"attributes":[]}]}}]}]}]}',
        b'{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"coverage_gate.errors","sum":'
        b'{"dataPoints":[{"asDouble":1e400}]}}]}]}]}',
    ]


def test_the_streamed_report_is_the_loaded_one_on_the_simulated_rollout(rollout: Path) -> None:
    scanned = assert_same_report(rollout)
    assert scanned.reviews_read == 420
    assert (scanned.files, scanned.malformed_lines) == (len(list(rollout.iterdir())), 1)


def test_the_streamed_report_is_the_loaded_one_on_mutated_and_garbage_lines(
    rollout: Path, tmp_path: Path
) -> None:
    """Every line the typed reader refuses is read again by the report's reader: the same
    counts, the same malformed lines in the same words, whichever process read which file."""
    lines, metrics = trace_lines(rollout), metrics_lines(rollout)
    bad = mutated(lines, metrics)
    (tmp_path / "a-mutated.jsonl").write_bytes(b"\n".join(bad[:12]) + b"\n")
    (tmp_path / "b-mutated.jsonl").write_bytes(b"\n".join(bad[12:]) + b"\n")
    # A file opening with a byte-order mark, written with CRLF, a bare CR inside a line.
    crlf = b"\r\n".join(lines[3:6]) + b"\r\n" + lines[6] + b"\r" + lines[7] + b"\n"
    (tmp_path / "c-crlf.jsonl").write_bytes(b"\xef\xbb\xbf" + crlf)
    # Text that is not UTF-8, in a value read and in one not read.
    (tmp_path / "d-latin1.jsonl").write_bytes(
        nth(lines[8], b'"stringValue":"0000', b'"stringValue":"\xe9\xff', 0)
        + b"\n"
        + lines[9].replace(b'"stringValue":"acme"', b'"stringValue":"\xe9"', 1)
        + b"\n"
    )
    for index, line in enumerate(lines[10:]):
        (tmp_path / f"e-{index:03d}.jsonl").write_bytes(line + b"\n")
    for index, line in enumerate(metrics):
        (tmp_path / f"f-{index:03d}.jsonl").write_bytes(line + b"\n")
    scanned = assert_same_report(tmp_path)
    assert scanned.malformed_lines == 11
    assert [(x.file[0], x.line) for x in scanned.malformed_sample] == [
        *(("a", n) for n in (3, 4, 6, 7, 9, 10, 11, 12)),
        ("b", 1),
        ("b", 4),
    ]


def test_malformed_lines_are_named_in_the_report_readers_words(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_bytes(
        b"{not json\n"
        b'["a list"]\n'
        b'{"resourceSpans": [{"scopeSpans": "oops"}]}\n'
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"reconcile x","attributes":[{"key":'
        b'"coverage_gate.outcome","value":{"stringValue":"kept"}},{"key":"n","value":{"intValue":'
        b'"x1"}}]}]}]}]}\n'
        b'{"resourceSpans":[],"x":' + b"7" * 5000 + b"}\n"
        b'{"resourceSpans":[],"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"reconcile x","attributes":[{"key":'
        b'"coverage_gate.outcome","value":{"stringValue":"kept"}},{"key":"coverage_gate.reconcile'
        b'.duration","value":{"intValue":"1' + b"0" * 400 + b'"}}]}]}]}]}\n'
    )
    scanned = scan_folder(tmp_path)
    assert [(x.line, x.detail) for x in scanned.malformed_sample] == [
        (1, "not JSON: Expecting property name enclosed in double quotes"),
        (2, "line is not an object"),
        (3, "scopeSpans is not a list"),
        (4, "intValue is not an integer"),
        (5, "a number too long to read (over 4,300 digits)"),
        (6, "JSON nested too deeply to read"),
        (7, "a number too large to read"),
    ]


def test_an_integer_duration_too_large_for_a_float_is_a_malformed_line(tmp_path: Path) -> None:
    """Not a crash: the line is counted and named, the report goes on."""
    (tmp_path / "big.jsonl").write_text(
        '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"reconcile a/b","attributes":[{"key":'
        '"coverage_gate.outcome","value":{"stringValue":"kept"}},{"key":"coverage_gate.reconcile.'
        'duration","value":{"intValue":"1' + "0" * 400 + '"}}]}]}]}]}\n'
    )
    loaded = load_folder(tmp_path)
    assert (loaded.malformed_lines, loaded.reviews_read) == (1, 0)
    assert loaded.malformed_sample[0].detail == "a number too large to read"


def changed_copy(line: bytes) -> bytes:
    """The same spans, the same ids, another outcome."""
    return line.replace(
        b'"outcome","value":{"stringValue":"kept"',
        b'"outcome","value":{"stringValue":"would_downgrade"',
    )


def test_a_span_in_two_files_read_by_different_workers_counts_once(
    rollout: Path, tmp_path: Path
) -> None:
    """Each worker dedupes its own file; the parent dedupes across files, in name order: the
    first file holding a span counts it, a later copy (even a changed one) does not."""
    lines = trace_lines(rollout)
    (tmp_path / "1-run.jsonl").write_bytes(lines[0] + b"\n" + lines[1] + b"\n")
    (tmp_path / "2-other.jsonl").write_bytes(lines[2] + b"\n")
    # A Collector's file: what the run wrote, changed, beside a span of its own.
    (tmp_path / "3-collector.jsonl").write_bytes(changed_copy(lines[1]) + b"\n" + lines[3] + b"\n")
    per_line = lines[0].count(b'"traceId"')
    scanned = assert_same_report(tmp_path)
    assert scanned.reviews_read == 4 * per_line
    alone = tmp_path / "without-the-copy"
    alone.mkdir()
    for name in ("1-run.jsonl", "2-other.jsonl"):
        (alone / name).write_bytes((tmp_path / name).read_bytes())
    (alone / "3-own.jsonl").write_bytes(lines[3] + b"\n")
    without = to_json(build_report(scan_folder(alone, workers=2), CRITERIA))
    assert to_json(build_report(scanned, CRITERIA))["repositories"] == without["repositories"]


def test_the_tally_keeps_no_review_records(rollout: Path) -> None:
    """What grows with the reviews is a key and a duration each, never their records."""
    gc.collect()
    scanned = scan_folder(rollout, workers=1)
    gc.collect()
    alive = sum(isinstance(o, ReviewRecord) for o in gc.get_objects())
    assert scanned.reviews_read == 420
    assert alive == 0
    assert not hasattr(scanned, "reviews")
    assert sum(len(t.durations) for t in scanned.tallies.values()) == 420
    assert len(scanned.seen_spans) == 420


def reference_counts(repository: str, reviews: Sequence[ReviewRecord], errors: int) -> RepoCounts:
    """``count_reviews`` as it was over a list of records: the tally's oracle."""
    outcomes = Counter(x.outcome for x in reviews)
    compared = [
        x for x in reviews if x.verdict_in == "approve" and x.would_downgrade_under is not None
    ]
    sources = Counter(x.mode_source for x in reviews)
    durations = [x.duration_s for x in reviews]
    ends = [x.end_ns for x in reviews]
    available = none = incomplete = truncated = stale = 0
    for review in reviews:
        working = [w for w in review.reviewers if not w.failed]
        available += all(w.evidence_available for w in working)
        none += any(w.capability != "per_file" for w in working)
        incomplete += any(not w.complete for w in working)
        truncated += any(w.truncated for w in working)
        stale += any(w.stale for w in working)
    recorded = [x for x in reviews if x.citations_would_downgrade is not None]
    approvals = [x for x in recorded if x.verdict_in == "approve"]
    failed = sum(x.citations_failed for x in recorded)
    reviews_failed = sum(1 for x in recorded if x.citations_failed)
    flagged = sum(1 for x in approvals if x.citations_would_downgrade)
    checked: dict[str, Counter[str]] = {}
    for review in reviews:
        for w in review.reviewers:
            if not w.failed:
                checked.setdefault(w.format, Counter()).update(dict(w.content))
    content = {
        fmt: {c.value: checked[fmt][c.value] for c in FileContent}
        for fmt in sorted(checked)
        if checked[fmt].total()
    }
    mismatches = Counter(
        (w.format, w.client_version, kind)
        for review in reviews
        for w in review.reviewers
        if not w.failed
        for kind, n in w.mismatches
        for _ in range(n)
    )
    return RepoCounts(
        repository=repository,
        reviews=len(reviews),
        approvals=sum(1 for x in reviews if x.verdict_in == "approve"),
        flagged=outcomes[ReviewOutcome.WOULD_DOWNGRADE] + outcomes[ReviewOutcome.DOWNGRADED],
        evidence_available=available,
        errors=errors,
        fallbacks=sources.get("fallback", 0),
        first_seen_s=min(ends) / 1e9 if ends else None,
        last_seen_s=max(ends) / 1e9 if ends else None,
        outcomes=dict(sorted(outcomes.items())),
        modes=dict(sorted(Counter(x.mode for x in reviews).items())),
        mode_sources=dict(sorted(sources.items())),
        claimed_files=sum(x.claimed for x in reviews),
        unsupported_files=sum(x.unsupported for x in reviews),
        unknown_files=sum(x.unknown for x in reviews),
        depth_files={d.value: sum(x.depths.get(d.value, 0) for x in reviews) for d in Depth},
        approvals_compared=len(compared),
        flagged_under={
            p.value: sum(1 for x in compared if p.value in (x.would_downgrade_under or ()))
            for p in DepthPolicy
        },
        evidence_detail=EvidenceDetail(none, incomplete, truncated, stale),
        depth_in_force=dict(sorted(Counter(x.depth_policy for x in reviews).items())),
        duration_p50_s=percentile(durations, 0.50),
        duration_p95_s=percentile(durations, 0.95),
        top_reasons=tuple(Counter(y for x in reviews for y in x.reasons).most_common(5)),
        citations=CitationReport(
            reviews=len(recorded),
            reviews_citing=sum(1 for x in recorded if x.citations_replayed),
            replayed=sum(x.citations_replayed for x in recorded),
            failed=failed,
            failed_per_100_reviews=None if not recorded else 100 * failed / len(recorded),
            reviews_failed=reviews_failed,
            reviews_failed_rate=_share(reviews_failed, len(recorded)),
            reviews_failed_interval=wilson(reviews_failed, len(recorded)),
            approvals=len(approvals),
            would_downgrade=flagged,
            would_downgrade_rate=_share(flagged, len(approvals)),
            would_downgrade_interval=wilson(flagged, len(approvals)),
        ),
        content=content or None,
        mismatches=dict(sorted(mismatches.items())) or None,
        daily=tuple(_days(reviews)),
        **_drift_counts(reviews),
    )


def _days(reviews: Sequence[ReviewRecord]) -> list[Day]:
    """Per UTC day of the reviews' end times, in order: what ``ReviewTally.daily`` counts."""
    by_day: dict[str, list[ReviewRecord]] = {}
    for review in reviews:
        day = datetime.fromtimestamp(review.end_ns / 1e9, tz=UTC).date().isoformat()
        by_day.setdefault(day, []).append(review)
    return [
        Day(
            day,
            len(mine),
            sum(1 for x in mine if x.verdict_in == "approve"),
            sum(
                1
                for x in mine
                if x.outcome in (ReviewOutcome.WOULD_DOWNGRADE, ReviewOutcome.DOWNGRADED)
            ),
            sum(x.claimed for x in mine),
            sum(x.unsupported for x in mine),
            sum(x.unknown for x in mine),
        )
        for day, mine in sorted(by_day.items())
    ]


def _drift_counts(reviews: Sequence[ReviewRecord]) -> dict[str, Any]:
    """The reviewers' streams by client version and drift, and when blocking drift began."""
    streams: Counter[tuple[str, str, str]] = Counter()
    kinds: Counter[tuple[str, str, str]] = Counter()
    first: int | None = None
    for review in reviews:
        for w in review.reviewers:
            if w.failed or not w.drift:
                continue
            streams[w.format, w.client_version, w.drift] += 1
            kinds.update((w.format, w.client_version, kind) for kind in w.drift_kinds)
            if blocks_readiness(w.drift, w.drift_kinds):
                first = review.end_ns if first is None else min(first, review.end_ns)
    return {
        "streams": dict(sorted(streams.items())) if streams else None,
        "drift_kinds": dict(sorted(kinds.items())) if streams else None,
        "drift_first_s": None if first is None else first / 1e9,
    }


def test_count_reviews_over_the_tally_is_what_it_was_over_the_records(rollout: Path) -> None:
    """Folded one review at a time, and merged from consecutive parts, the counts are the
    list's: every repository of the rollout, shuffled too (ties among the top reasons follow
    the reading order in both)."""
    reviews = load_folder(rollout).reviews
    by_repo: dict[str, list[ReviewRecord]] = {}
    for review in reviews:
        by_repo.setdefault(review.repository, []).append(review)
    shuffled = random.Random(7)
    for repository, mine in by_repo.items():
        for order in (mine, shuffled.sample(mine, len(mine))):
            expected = reference_counts(repository, order, 3)
            assert count_reviews(repository, order, 3) == expected
            head, tail = ReviewTally(), ReviewTally()
            for review in order[: len(order) // 3]:
                head.add(review)
            for review in order[len(order) // 3 :]:
                tail.add(review)
            head.merge(tail)
            assert head.counts(repository, 3) == expected
    assert count_reviews("none", [], 0) == reference_counts("none", [], 0)


def test_span_keys_hold_what_a_set_holds() -> None:
    chosen = random.Random(11)
    keys = [chosen.getrandbits(64) or 1 for _ in range(5000)]
    held = SpanKeys()
    for key in keys[:3000]:
        held.add(key)
    held.add(keys[0])
    assert len(held) == len(set(keys[:3000]))
    assert all(key in held for key in keys[:3000])
    assert not any(key in held for key in keys[3000:])
    assert set(held) == set(keys[:3000])
    # A file's keys are added whole, or (one already held) not at all.
    assert not held.add_if_new(keys[2999:4000])
    assert not any(key in held for key in keys[3000:])
    assert held.add_if_new(keys[3000:])
    assert sorted(held.held()) == sorted(set(keys))


def test_the_report_command_streams_and_reads_a_big_folder_in_parallel(
    rollout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command never loads every record (``load_folder`` is not called), and a folder over
    the parallel threshold is read by worker processes with the same report."""
    from typer.testing import CliRunner  # noqa: PLC0415 - only this test runs the command

    from coverage_gate.commands.report import report_app  # noqa: PLC0415
    from coverage_gate.rollout import report  # noqa: PLC0415
    from coverage_gate.rollout.report import otlp, scan  # noqa: PLC0415

    def refuse(folder: Path) -> Loaded:
        raise AssertionError(f"every record of {folder} loaded")

    monkeypatch.setattr(report, "load_folder", refuse)
    monkeypatch.setattr(otlp, "load_folder", refuse)
    command = ["--telemetry-dir", str(rollout), "--list", "would_downgrade"]
    alone = CliRunner().invoke(report_app, command)
    assert alone.exit_code == 0, alone.output
    pools: list[int] = []
    pool = scan.ProcessPoolExecutor

    def counted(workers: int, **options: object) -> object:
        pools.append(workers)
        return pool(workers, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(scan, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(scan, "_workers", lambda: 2)
    monkeypatch.setattr(scan, "ProcessPoolExecutor", counted)
    parallel = CliRunner().invoke(report_app, command)
    assert parallel.exit_code == 0, parallel.output
    assert pools == [2]
    assert parallel.output == alone.output
    assert "420 reviews" in alone.output
