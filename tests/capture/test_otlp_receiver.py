"""The loopback OTLP/HTTP receiver of ``run --telemetry-intake``: real captured bodies POSTed to
it (OTLP/JSON and OTLP/protobuf, plain, gzip, chunked) give the evidence of the same export read
from a file; bad and oversized bodies are answered and counted, never a crash; loopback only."""

from __future__ import annotations

import gzip
import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf.message import DecodeError
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from coverage_gate.capture.otlp_receiver import LOOPBACK, IntakeSummary, TelemetryIntake
from coverage_gate.telemetry.otlp_wire import (
    BadBody,
    Encoding,
    Signal,
    json_line,
    proto_file_lines,
)
from tests.conftest import DATA, record_bytes

OTLP = DATA / "otlp-json"
PROTO_FILE = DATA / "otlp-protobuf" / "claude-code_otel_honest.collector.proto"


class Client:
    def __init__(self, intake: TelemetryIntake) -> None:
        self.intake = intake
        self.lines: list[bytes] = []

    def post(
        self,
        path: str,
        body: bytes,
        kind: str = "application/json",
        headers: dict[str, str] | None = None,
        *,
        chunked: bool = False,
    ) -> tuple[int, bytes]:
        host, port = self.intake.endpoint.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            all_headers = {"Content-Type": kind, **(headers or {})}
            if chunked:
                connection.request(
                    "POST", path, body=iter([body[:10], body[10:]]), headers=all_headers,
                    encode_chunked=True,
                )  # fmt: skip
            else:
                connection.request("POST", path, body=body, headers=all_headers)
            answer = connection.getresponse()
            return answer.status, answer.read()
        finally:
            connection.close()


@pytest.fixture
def client() -> Iterator[Client]:
    lines: list[bytes] = []
    intake = TelemetryIntake(lines.append, max_body_bytes=512 * 1024).start()
    found = Client(intake)
    found.lines = lines
    try:
        yield found
    finally:
        intake.close(1)


def bodies(path: Path) -> list[tuple[str, bytes]]:
    """The requests of a capture, with the OTLP path each was sent to."""
    out = []
    for line in path.read_bytes().splitlines():
        if line.strip():
            signal = "/v1/logs" if "resourceLogs" in json.loads(line) else "/v1/traces"
            out.append((signal, line))
    return out


def evidence(lines: list[bytes]) -> object:
    return record_bytes(b"".join(line + b"\n" for line in lines), "otlp-json").model_dump()


@pytest.mark.parametrize(
    "capture",
    [
        OTLP / "claude-code_otel_honest.jsonl",
        OTLP / "claude-code_otel_mixed.jsonl",
        OTLP / "codex_otel_overclaim.jsonl",
    ],
    ids=lambda p: p.stem,
)
def test_captured_json_bodies_posted_give_the_evidence_of_the_capture(
    client: Client, capture: Path
) -> None:
    for path, body in bodies(capture):
        status, answer = client.post(path, body)
        assert (status, answer) == (200, b"{}")
    summary = client.intake.close(1)
    assert (summary.accepted, summary.refused, summary.undrained) == (len(bodies(capture)), 0, 0)
    assert evidence(client.lines) == record_bytes(capture.read_bytes(), "otlp-json").model_dump()


def test_pretty_printed_shared_captures_are_taken_as_one_line_each(client: Client) -> None:
    """The shared probe files are pretty-printed JSON (Codex sends it so): a newline between
    tokens is a space, and the request is one line."""
    shared = OTLP / "claude-code_2.1.328_otel_shared.jsonl"
    for path, line in bodies(shared):
        pretty = json.dumps(json.loads(line), indent=2).encode()
        assert client.post(path, pretty)[0] == 200
    assert all(b"\n" not in line for line in client.lines)
    assert evidence(client.lines) == record_bytes(shared.read_bytes(), "otlp-json").model_dump()


def test_protobuf_bodies_give_the_evidence_of_the_same_export_in_json(client: Client) -> None:
    """Claude Code's own http/protobuf export (Collector proto file of the real bodies)."""
    data = PROTO_FILE.read_bytes()
    position = 0
    sent = 0
    while position < len(data):
        size = int.from_bytes(data[position : position + 4], "big")
        body = data[position + 4 : position + 4 + size]
        position += 4 + size
        try:
            ExportLogsServiceRequest.FromString(body)
            path = "/v1/logs"
        except DecodeError:  # not logs: traces
            path = "/v1/traces"
        status, answer = client.post(path, body, "application/x-protobuf")
        assert (status, answer) == (200, b"")
        sent += 1
    assert sent == 2
    from_file = [line for line in proto_file_lines(data) if isinstance(line, bytes)]
    assert evidence(client.lines) == evidence(from_file)


def test_gzip_and_chunked_bodies_are_read(client: Client) -> None:
    ((path, body), *_) = bodies(OTLP / "claude-code_otel_honest.jsonl")
    assert client.post(path, gzip.compress(body), headers={"Content-Encoding": "gzip"})[0] == 200
    assert client.post(path, body, chunked=True)[0] == 200
    assert client.lines == [body, body]


@pytest.mark.parametrize(
    ("body", "kind", "headers", "status"),
    [
        (b"not json", "application/json", {}, 400),
        (b"[1, 2]", "application/json", {}, 400),
        (b'{"resourceSpans": 3}', "application/json", {}, 400),
        (b"\xff\xfe\x00garbage", "application/x-protobuf", {}, 400),
        (b"{}", "text/plain", {}, 415),
        (b"{}", "application/json", {"Content-Encoding": "br"}, 400),
        (b"not gzip", "application/json", {"Content-Encoding": "gzip"}, 400),
    ],
)
def test_a_bad_body_is_answered_and_counted_and_the_receiver_goes_on(
    client: Client, body: bytes, kind: str, headers: dict[str, str], status: int
) -> None:
    assert client.post("/v1/logs", body, kind, headers)[0] == status
    good = bodies(OTLP / "claude-code_otel_honest.jsonl")[0]
    assert client.post(*good)[0] == 200
    summary = client.intake.close(1)
    assert (summary.accepted, summary.refused) == (1, 1)
    assert summary.reasons[0].startswith("/v1/logs: ")
    assert not summary.whole(sender_exited_normally=True)


def test_a_body_over_the_bound_is_refused_unread_even_when_compressed(client: Client) -> None:
    big = b'{"resourceLogs": []' + b" " * (600 * 1024) + b"}"
    assert client.post("/v1/logs", big)[0] == 413
    assert (
        client.post("/v1/logs", gzip.compress(big), headers={"Content-Encoding": "gzip"})[0] == 413
    )
    assert client.lines == []
    assert client.intake.close(1).refused == 2


def test_metrics_are_answered_and_dropped_and_other_paths_are_not_found(client: Client) -> None:
    assert client.post("/v1/metrics", b'{"resourceMetrics": []}')[0] == 200
    assert client.post("/v1/other", b"{}")[0] == 404
    summary = client.intake.close(1)
    assert (summary.accepted, summary.refused) == (0, 0)
    assert client.lines == []


def test_the_receiver_listens_on_loopback_only() -> None:
    intake = TelemetryIntake(lambda _line: None)
    try:
        assert intake.endpoint.startswith(f"http://{LOOPBACK}:")
        assert intake._server.server_address[0] == "127.0.0.1"
    finally:
        intake.close(0)


def test_telemetry_is_whole_only_when_the_sender_exited_normally_and_all_was_read() -> None:
    assert IntakeSummary(accepted=2).whole(sender_exited_normally=True)
    assert not IntakeSummary(accepted=2).whole(sender_exited_normally=False)  # killed: cut off
    assert not IntakeSummary(accepted=0).whole(sender_exited_normally=True)  # nothing came
    assert not IntakeSummary(accepted=2, refused=1).whole(sender_exited_normally=True)
    assert not IntakeSummary(accepted=2, undrained=1).whole(sender_exited_normally=True)


def test_a_request_after_closing_is_refused_not_fed(client: Client) -> None:
    intake = client.intake
    intake.close(0)
    assert intake.enter() == "the receiver was closing"


# --- fuzz: random bytes and random JSON of the shapes -----------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=512), st.sampled_from(list(Signal)), st.sampled_from(list(Encoding)))
def test_random_bodies_give_a_line_or_a_reason_never_an_exception(
    body: bytes, signal: Signal, encoding: Encoding
) -> None:
    found = json_line(body, signal, encoding)
    assert isinstance(found, bytes | BadBody)
    if isinstance(found, bytes):
        record_bytes(found + b"\n", "otlp-json")  # whatever it holds, it records


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_random_protobuf_files_give_lines_or_reasons_never_an_exception(data: bytes) -> None:
    for found in proto_file_lines(b"\x00" + data):
        assert isinstance(found, bytes | BadBody)
