"""What the two ways of exporting a run's telemetry share: the direct encoding for the local files
(``otel_setup``) and the OpenTelemetry SDK's providers (``otel_sdk``).

It holds the export settings (spans per request or line, the periodic metric interval), the
resource every signal carries (``resource_attributes``), the OTLP/HTTP encodings and where one
signal goes (``OtlpProtocol``, ``Endpoint``), the local file of one signal of one run
(``JsonLinesFile``), the collector of export log lines behind the one line said at exit
(``ExportTrouble``), and the queue that exports every span in chunks (``ChunkedExport``, and
``SpanLines`` for spans encoded directly). Nothing of OpenTelemetry is imported here, and nothing
decides where a signal goes: that is ``otel_setup``'s, from the environment.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Generic, TypeVar
from urllib.parse import unquote

from coverage_gate.telemetry import otlp_encode

__all__ = [
    "EXPORT_CHUNK_SPANS",
    "METRIC_INTERVAL_MS",
    "SERVICE_NAME",
    "ChunkedExport",
    "Endpoint",
    "ExportTrouble",
    "JsonLinesFile",
    "OtlpProtocol",
    "SpanLines",
    "env_value",
    "parse_pairs",
    "resource_attributes",
]

#: The telemetry's own log lines keep the name they are known by.
_log = logging.getLogger("coverage_gate.telemetry.otel_setup")
#: Where a failed export request is reported (collected by ``ExportTrouble``).
_export_log = logging.getLogger("opentelemetry.coverage_gate.export")

#: Periodic metric export for long runs; a short run exports once, at shutdown.
METRIC_INTERVAL_MS = 60_000
#: Spans per OTLP request, and per line of the local files.
EXPORT_CHUNK_SPANS = 512
SERVICE_NAME = "coverage-gate"


# --- the resource, and where a signal goes --------------------------------------------------------


def env_value(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name, "").strip()
    return value or None


def parse_pairs(raw: str | None) -> dict[str, str]:
    """``k=v,k2=v2`` with percent-encoding, as ``OTEL_*_HEADERS`` and
    ``OTEL_RESOURCE_ATTRIBUTES`` spell it; malformed pairs are skipped."""
    pairs: dict[str, str] = {}
    for item in (raw or "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            pairs[unquote(key.strip())] = unquote(value.strip())
    return pairs


def resource_attributes(
    environ: Mapping[str, str], service_version: str | None = None
) -> dict[str, str]:
    """The resource every signal of the run carries."""
    attributes: dict[str, str] = parse_pairs(env_value(environ, "OTEL_RESOURCE_ATTRIBUTES"))
    attributes["service.name"] = env_value(environ, "OTEL_SERVICE_NAME") or attributes.get(
        "service.name", SERVICE_NAME
    )
    if service_version:
        attributes.setdefault("service.version", service_version)
    attributes.update({"telemetry.sdk.language": "python", "telemetry.sdk.name": "opentelemetry"})
    return attributes


class OtlpProtocol(StrEnum):
    """OTLP/HTTP encodings this project exports with (``OTEL_EXPORTER_OTLP_PROTOCOL``)."""

    PROTOBUF = "http/protobuf"
    JSON = "http/json"


@dataclass(frozen=True)
class Endpoint:
    """Where one signal goes over OTLP/HTTP, and how."""

    url: str
    protocol: OtlpProtocol
    headers: dict[str, str]
    timeout_s: float
    gzip: bool


# --- the local OTLP JSON lines sink -----------------------------------------------------------


class JsonLinesFile:
    """A file of this run alone, created on first write (no empty files for silent runs).

    Each line goes out in one ``write`` on an ``O_APPEND`` descriptor under a lock, so a line is
    never split by another thread of this run, and no other run ever holds this file.
    """

    def __init__(self, folder: Path, signal: str, *, clock: Callable[[], float] = time.time):
        self.folder = folder
        self.signal = signal
        self._clock = clock
        self._fd: int | None = None
        self.path: Path | None = None
        self._lock = threading.Lock()

    def _open(self) -> int:
        self.folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self._clock()))
        for _ in range(8):
            name = f"{self.signal}-{stamp}-{os.getpid()}-{os.urandom(4).hex()}.jsonl"
            path = self.folder / name
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
            except FileExistsError:
                continue
            self.path = path
            return fd
        raise FileExistsError(f"no unused file name in {self.folder}")

    def write_line(self, line: str) -> None:
        data = (line + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                self._fd = self._open()
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


# --- what an export to an endpoint says --------------------------------------------------------


class ExportTrouble(logging.Handler):
    """Collects the SDK's export log lines (each retry, each refused connection) instead of
    printing them, so that a failed export says one line at exit (``Telemetry.shutdown``)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.reasons: list[str] = []
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        if len(self.reasons) < _MAX_REASONS:
            with contextlib.suppress(Exception):  # a malformed record must not cost the run
                self.reasons.append(_reason(record.getMessage()))

    @property
    def first(self) -> str | None:
        """The most telling reason: an OS error or HTTP status before a generic line."""
        telling = [r for r in self.reasons if r not in _GENERIC]
        found = telling or self.reasons
        return found[0] if found else None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        logger = logging.getLogger("opentelemetry")
        propagate = logger.propagate
        logger.addHandler(self)
        logger.propagate = False
        try:
            yield
        finally:
            logger.removeHandler(self)
            logger.propagate = propagate


_MAX_REASONS = 32
_GENERIC = frozenset({"timed out", "unknown error"})
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^\"')]+)")
_STATUS = re.compile(r"code: ?(\d+), reason: ?(.*)")


def _reason(message: str) -> str:
    """The useful part of an export log line: the OS error, or the HTTP status and reason."""
    if found := _ERRNO.search(message):
        return found.group(1).strip().lower()
    if found := _STATUS.search(message):
        return f"HTTP {found.group(1)} {found.group(2).strip()}"[:160]
    if "timeout" in message.lower() or "timed out" in message.lower():
        return "timed out"
    return message.strip().splitlines()[0][:160] if message.strip() else "unknown error"


# --- exporting every span ----------------------------------------------------------------------

Item = TypeVar("Item")


class ChunkedExport(Generic[Item]):
    """Keeps every span of the run; exports them on ``flush`` or ``close``, in the order they
    were kept, ``chunk`` at a time (one request, or one line).

    Once a request fails, later spans are not sent: they are counted in ``not_exported`` and
    never wait out a deadline of their own. ``progress_at`` (monotonic seconds) moves on each
    completed request, for the exit wait. Subclasses say how a chunk is sent (``_send``, true on
    success) and what closing releases (``_close``).
    """

    def __init__(self, chunk: int = EXPORT_CHUNK_SPANS, *, warn: bool = True) -> None:
        self._warn = warn  # False when ``Telemetry.shutdown`` says it in its one line
        self._chunk = max(chunk, 1)
        self._pending: collections.deque[Item] = collections.deque()
        self._lock = threading.Lock()
        self._export_lock = threading.Lock()
        self._closed = False
        self.ended = 0
        self.exported = 0
        self.not_exported = 0
        self.failed = False
        self.progress_at = time.monotonic()

    def _send(self, chunk: list[Item]) -> bool:
        raise NotImplementedError

    def _close(self) -> None:
        return None

    def keep(self, item: Item) -> None:
        with self._lock:
            self.ended += 1
            if self._closed:
                self.not_exported += 1
            else:
                self._pending.append(item)

    def _next_chunk(self) -> list[Item]:
        with self._lock:
            return [self._pending.popleft() for _ in range(min(self._chunk, len(self._pending)))]

    def flush(self) -> bool:
        with self._export_lock:
            while chunk := self._next_chunk():
                if self.failed:
                    self.not_exported += len(chunk)
                    continue
                try:
                    sent = self._send(chunk)
                # The telemetry export boundary: an exporter may raise anything (encoding, network,
                # a full disk); it must end this export, never the run.
                except Exception as error:  # noqa: BLE001
                    _log.warning("telemetry: span export failed: %s", error)
                    sent = False
                if sent:
                    self.exported += len(chunk)
                    self.progress_at = time.monotonic()
                else:
                    self.failed = True
                    self.not_exported += len(chunk)
            return not self.failed

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self.flush()
        if self.not_exported and self._warn:
            _log.warning(
                "telemetry: %d of %d span(s) not exported (an export request failed)",
                self.not_exported,
                self.ended,
            )
        self._close()


class SpanLines(ChunkedExport[tuple[str, str]]):
    """Spans encoded directly as OTLP JSON (``record.spans.record_calls``), written to the local
    files as ``SpanExport`` writes the SDK's: one ``ExportTraceServiceRequest`` per line, spans
    grouped by scope in the order they came."""

    def __init__(
        self,
        sink: JsonLinesFile,
        resource: Mapping[str, str],
        chunk: int = EXPORT_CHUNK_SPANS,
        *,
        warn: bool = True,
    ) -> None:
        super().__init__(chunk, warn=warn)
        self.sink = sink
        self._resource = otlp_encode.resource(resource)

    def add(self, scope: str, span: str) -> None:
        self.keep((scope, span))

    def _send(self, chunk: list[tuple[str, str]]) -> bool:
        groups: dict[str, list[str]] = {}
        for scope, span in chunk:
            groups.setdefault(scope, []).append(span)
        line = otlp_encode.trace_request(
            self._resource, [(otlp_encode.scope(name), spans) for name, spans in groups.items()]
        )
        try:
            self.sink.write_line(line)
        except OSError as error:
            _log.warning("telemetry: cannot write spans to %s: %s", self.sink.folder, error)
            return False
        return True

    def _close(self) -> None:
        self.sink.close()
