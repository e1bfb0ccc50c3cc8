"""OTLP export requests as they travel (OTLP/HTTP bodies, JSON or protobuf, and the Collector's
protobuf files), turned into the OTLP/JSON lines the ``otlp-json`` adapter reads.

- A JSON body is kept as it is, on one line: a raw newline can only stand between tokens in
  JSON, so it is replaced by a space and nothing the body says changes.
- A protobuf body (``application/x-protobuf``) is parsed with the OpenTelemetry protocol's own
  messages and written as OTLP/JSON (``traceId``/``spanId`` as hex, as OTLP/JSON has them).
- A Collector file of ``format: proto`` holds one message after another, each after its length
  (4 bytes, big-endian); which signal a message is (logs or traces) is told by which of the two
  messages its bytes parse as.

A body that cannot be read gives a ``BadBody`` naming why; nothing here raises on bad input and
nothing does I/O.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = [
    "FRAME_HEADER",
    "BadBody",
    "Encoding",
    "Signal",
    "as_json",
    "json_line",
    "looks_like_proto_file",
    "proto_file_lines",
]

FRAME_HEADER: Final = 4
_ID_KEYS: Final = ("traceId", "spanId", "parentSpanId")


class Signal(StrEnum):
    LOGS = "logs"
    TRACES = "traces"


class Encoding(StrEnum):
    JSON = "json"
    PROTOBUF = "protobuf"


_TOP: Final = {Signal.LOGS: "resourceLogs", Signal.TRACES: "resourceSpans"}
_MESSAGES: Final[dict[Signal, type[Message]]] = {
    Signal.LOGS: ExportLogsServiceRequest,
    Signal.TRACES: ExportTraceServiceRequest,
}


@dataclass(frozen=True, slots=True)
class BadBody:
    """Why a request body (or a file's message) could not be read."""

    detail: str


def json_line(body: bytes, signal: Signal, encoding: Encoding) -> bytes | BadBody:
    """One export request as one OTLP/JSON line (no newline), or why it cannot be read."""
    if encoding is Encoding.PROTOBUF:
        return _protobuf_line(body, signal)
    try:
        value = json.loads(body)
    except RecursionError:
        return BadBody("JSON nested too deeply")
    except ValueError as error:  # not UTF-8, not JSON
        return BadBody(f"not JSON: {str(error).splitlines()[0][:120]}")
    if not isinstance(value, dict):
        return BadBody("not a JSON object")
    top = _TOP[signal]
    if value and not isinstance(value.get(top), list):
        return BadBody(f"field {top!r} is missing or not a list")
    return body.replace(b"\r", b" ").replace(b"\n", b" ")


def _protobuf_line(body: bytes, signal: Signal) -> bytes | BadBody:
    message = _parsed(body, signal)
    if isinstance(message, BadBody):
        return message
    return as_json(message)


def _parsed(body: bytes, signal: Signal) -> Message | BadBody:
    message = _MESSAGES[signal]()
    try:
        message.ParseFromString(body)
    except (DecodeError, RecursionError, ValueError) as error:
        return BadBody(f"not an OTLP {signal} protobuf message: {str(error)[:120]}")
    return message


def as_json(message: Message) -> bytes:
    """A parsed export request as compact OTLP/JSON."""
    value = json_format.MessageToDict(message)
    _hex_ids(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _hex_ids(value: object) -> None:
    """protobuf's JSON writes bytes as base64; OTLP/JSON writes trace and span ids as hex."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for id_key in _ID_KEYS:
                found = item.get(id_key)
                if isinstance(found, str):  # one that is not base64 is kept as written
                    with contextlib.suppress(binascii.Error, ValueError):
                        item[id_key] = base64.b64decode(found, validate=True).hex()
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def proto_file_lines(data: bytes) -> Iterator[bytes | BadBody]:
    """The messages of a Collector ``format: proto`` file, each as one OTLP/JSON line."""
    pos = 0
    while pos < len(data):
        if len(data) - pos < FRAME_HEADER:
            yield BadBody(f"a message length cut off at byte {pos}")
            return
        size = int.from_bytes(data[pos : pos + FRAME_HEADER], "big")
        body = data[pos + FRAME_HEADER : pos + FRAME_HEADER + size]
        if len(body) < size:
            yield BadBody(f"a message of {size} bytes cut off at byte {pos}")
            return
        yield _either_signal(body, pos)
        pos += FRAME_HEADER + size


def _either_signal(body: bytes, pos: int) -> bytes | BadBody:
    for signal in (Signal.TRACES, Signal.LOGS):
        message = _parsed(body, signal)
        if not isinstance(message, BadBody):
            return as_json(message)
    return BadBody(f"the message at byte {pos} is neither OTLP traces nor logs")


def looks_like_proto_file(head: bytes) -> bool:
    """A Collector proto file starts with a message length; a JSON lines file with text. A
    first byte below a tab (a length under 16 MiB starts with a zero byte) cannot start JSON;
    and the message after the 4-byte length opens with field 1 (``resource_spans``,
    ``resource_metrics`` or ``resource_logs``: tag ``0x0a``) unless it is empty. A JSON lines
    file whose first line is a stray NUL (``\x00\n{...``) is not one."""
    if not head or head[0] >= 0x09:
        return False
    if len(head) < 5:
        return True
    return int.from_bytes(head[:4], "big") == 0 or head[4] == 0x0A
