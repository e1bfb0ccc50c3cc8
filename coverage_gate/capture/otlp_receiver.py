"""A loopback OTLP/HTTP receiver: the reviewer's own telemetry, handed on as OTLP/JSON lines.

``coverage-gate run --telemetry-intake`` points the reviewer's exporter here. The receiver:

- listens on 127.0.0.1 only, on a port the system picks;
- takes ``POST /v1/logs`` and ``POST /v1/traces`` bodies in OTLP/JSON (``application/json``) or
  OTLP/protobuf (``application/x-protobuf``), plain or gzip-compressed, sent with a length or
  chunked; ``/v1/metrics`` is answered and dropped (no tool call lives there);
- bounds every body (``max_body_bytes``, after decompression too): a larger one is answered 413
  and not read; a body that cannot be read (not JSON, not an OTLP message, a wrong content type)
  is answered 400 or 415 and counted, never raised;
- hands each accepted request on as one OTLP/JSON line (``coverage_gate.telemetry.otlp_wire``) to
  the sink, one at a time, in the order they were read, and answers the exporter at once: the
  reviewer's exporter never waits on more than one request's decoding, and a socket that stalls
  is dropped after ``read_timeout`` seconds.

``close`` stops taking requests and waits, within a bound, for those already being read: the
receiver is *drained* when none is left. OTLP has no "last batch" mark, so whether the telemetry
is whole is known only from outside: the reviewer exited normally (its exporter flushes before
the process ends) and the receiver drained with no request refused (``IntakeSummary.whole``).

This module is an edge: sockets and threads, no evidence rules.
"""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final

from coverage_gate.telemetry.otlp_wire import BadBody, Encoding, Signal, json_line

__all__ = [
    "DEFAULT_DRAIN_SECONDS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_READ_TIMEOUT",
    "DISCARD_FACTOR",
    "LOOPBACK",
    "MAX_CONCURRENT",
    "MAX_REASONS",
    "BodyTooLargeError",
    "IntakeSummary",
    "Sink",
    "TelemetryIntake",
]

LOOPBACK: Final = "127.0.0.1"
DEFAULT_MAX_BODY_BYTES: Final = 32 * 1024 * 1024
DEFAULT_READ_TIMEOUT: Final = 10.0
DEFAULT_DRAIN_SECONDS: Final = 5.0
MAX_CONCURRENT: Final = 16
MAX_REASONS: Final = 8
DISCARD_FACTOR: Final = 4  # a refused body up to this many times the bound is read and dropped
_PATHS: Final = {"/v1/logs": Signal.LOGS, "/v1/traces": Signal.TRACES}
_DROPPED_PATHS: Final = frozenset({"/v1/metrics"})
_TYPES: Final = {"application/json": Encoding.JSON, "application/x-protobuf": Encoding.PROTOBUF}
_ANSWERS: Final = {Encoding.JSON: (b"{}", "application/json"), Encoding.PROTOBUF: (b"", "")}


class BodyTooLargeError(Exception):
    pass


@dataclass
class IntakeSummary:
    """What arrived. ``refused``: export requests answered with an error (their calls are lost);
    ``undrained``: requests still being read when the receiver closed."""

    accepted: int = 0
    refused: int = 0
    undrained: int = 0
    reasons: list[str] = field(default_factory=list)

    @property
    def drained(self) -> bool:
        return self.undrained == 0

    def whole(self, sender_exited_normally: bool) -> bool:
        """Every export the sender made was read: it exited normally (its exporter flushed), at
        least one request came, none was refused, and none was cut short by closing."""
        return sender_exited_normally and self.accepted > 0 and not self.refused and self.drained


Sink = Callable[[bytes], None]


class TelemetryIntake:
    """The receiver (see the module notes). Use as a context manager, or ``start``/``close``."""

    def __init__(
        self,
        sink: Sink,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
    ) -> None:
        self._sink = sink
        self.max_body_bytes = max_body_bytes
        self.read_timeout = read_timeout
        self.summary = IntakeSummary()
        self._lock = threading.Lock()  # the summary and the sink
        self._in_flight = 0
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT)
        self._closing = False
        self._server = _Server((LOOPBACK, 0), _Handler, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="coverage-gate-otlp-intake",
            daemon=True,
        )

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> TelemetryIntake:
        self._thread.start()
        return self

    def __enter__(self) -> TelemetryIntake:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self, drain_seconds: float = DEFAULT_DRAIN_SECONDS) -> IntakeSummary:
        """Stop taking requests; wait up to ``drain_seconds`` for those being read."""
        with self._lock:
            if self._closing:
                return self.summary
            self._closing = True
        deadline = time.monotonic() + drain_seconds
        while time.monotonic() < deadline:
            with self._lock:
                if self._in_flight == 0:
                    break
            time.sleep(0.01)
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
        with self._lock:
            self.summary.undrained = self._in_flight
        return self.summary

    # --- called from the handler threads -------------------------------------------------------

    def enter(self) -> str | None:
        """Take a request in; or why not (closing, or too many at once)."""
        if not self._slots.acquire(blocking=False):
            return "too many requests at once"
        with self._lock:
            if self._closing:
                self._slots.release()
                return "the receiver was closing"
            self._in_flight += 1
        return None

    def leave(self) -> None:
        with self._lock:
            self._in_flight -= 1
        self._slots.release()

    def refuse(self, reason: str) -> None:
        with self._lock:
            self.summary.refused += 1
            if len(self.summary.reasons) < MAX_REASONS:
                self.summary.reasons.append(reason)

    def take(self, line: bytes) -> None:
        """Hand one request on."""
        with self._lock:
            self.summary.accepted += 1
            self._sink(line)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # close() waits for requests itself, within a bound

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        intake: TelemetryIntake,
    ) -> None:
        self.intake = intake
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    _unread: int | None = None  # bytes of a refused body not read yet, when its length is known
    protocol_version = "HTTP/1.1"
    server_version = "coverage-gate-otlp"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.intake.read_timeout)  # a stalled sender is dropped

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        """Requests are not logged: stderr is the reviewer's and ours."""

    def do_GET(self) -> None:
        self._answer(HTTPStatus.METHOD_NOT_ALLOWED, b"POST OTLP requests here\n", "text/plain")

    def do_POST(self) -> None:
        intake = self.server.intake
        path = self.path.split("?", 1)[0]
        if path in _DROPPED_PATHS:
            self._discard()
            return
        signal = _PATHS.get(path)
        if signal is None:
            self._answer(HTTPStatus.NOT_FOUND, b"not an OTLP path\n", "text/plain", close=True)
            return
        why = intake.enter()
        if why is not None:
            intake.refuse(f"{path}: {why}")
            self._answer(HTTPStatus.SERVICE_UNAVAILABLE, b"busy\n", "text/plain", close=True)
            return
        try:
            self._export(intake, signal, path)
        finally:
            intake.leave()

    def _export(self, intake: TelemetryIntake, signal: Signal, path: str) -> None:
        kind = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        encoding = _TYPES.get(kind)
        if encoding is None:
            intake.refuse(f"{path}: content type {kind or 'missing'!r}")
            self._answer(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, b"", "text/plain", close=True)
            return
        try:
            body = self._body(intake.max_body_bytes)
        except BodyTooLargeError:
            intake.refuse(f"{path}: body over {intake.max_body_bytes} bytes")
            self._skip_rest(intake.max_body_bytes * DISCARD_FACTOR)
            self._answer(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, b"", "text/plain", close=True)
            return
        except (OSError, ValueError, zlib.error, EOFError) as error:  # cut off, bad framing
            intake.refuse(f"{path}: body unreadable ({str(error)[:80] or type(error).__name__})")
            self._answer(HTTPStatus.BAD_REQUEST, b"", "text/plain", close=True)
            return
        line = json_line(body, signal, encoding)
        if isinstance(line, BadBody):
            intake.refuse(f"{path}: {line.detail}")
            self._answer(HTTPStatus.BAD_REQUEST, line.detail.encode() + b"\n", "text/plain")
            return
        intake.take(line)
        self._answer(HTTPStatus.OK, *_ANSWERS[encoding])

    def _body(self, limit: int) -> bytes:
        chunked = "chunked" in (self.headers.get("Transfer-Encoding") or "").lower()
        if chunked:
            raw = self._chunked(limit)
        else:
            length = self.headers.get("Content-Length")
            if length is None or not length.strip().isdigit():
                raise ValueError("no Content-Length")
            size = int(length)
            if size > limit:
                self._unread = size
                raise BodyTooLargeError
            raw = self.rfile.read(size)
            if len(raw) < size:
                raise EOFError(f"{len(raw)} of {size} bytes")
        coding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        self._unread = 0
        if coding == "gzip":
            return _gunzip(raw, limit)
        if coding != "identity":
            raise ValueError(f"content encoding {coding!r}")
        return raw

    def _skip_rest(self, most: int) -> None:
        """Read and drop what is left of a refused body of a stated length, up to ``most``
        bytes, so the sender reads our answer rather than a reset connection; a longer one is
        left unread (the connection is closed)."""
        left = self._unread
        if left is None or left > most:
            return
        with contextlib.suppress(OSError):
            while left > 0:
                chunk = self.rfile.read(min(left, 64 * 1024))
                if not chunk:
                    return
                left -= len(chunk)

    def _chunked(self, limit: int) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            head = self.rfile.readline(1024)
            size = int(head.split(b";", 1)[0].strip() or b"x", 16)
            if size == 0:
                while self.rfile.readline(1024).strip():  # trailers
                    pass
                return b"".join(parts)
            total += size
            if total > limit:
                raise BodyTooLargeError
            chunk = self.rfile.read(size)
            if len(chunk) < size:
                raise EOFError("chunk cut off")
            parts.append(chunk)
            self.rfile.readline(1024)

    def _discard(self) -> None:
        with contextlib.suppress(OSError, ValueError, EOFError, zlib.error, BodyTooLargeError):
            self._body(self.server.intake.max_body_bytes)
            self._answer(HTTPStatus.OK, b"{}", "application/json")
            return
        self._answer(HTTPStatus.BAD_REQUEST, b"", "text/plain", close=True)

    def _answer(self, status: HTTPStatus, body: bytes, kind: str, *, close: bool = False) -> None:
        with contextlib.suppress(OSError):
            self.send_response(status)
            if kind:
                self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)


def _gunzip(raw: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = inflater.decompress(raw, limit + 1)
    if len(out) > limit:
        raise BodyTooLargeError
    if not inflater.eof:
        raise ValueError("gzip body cut off")
    return out
