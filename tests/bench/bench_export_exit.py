"""How long a coverage-gate process is held at exit by telemetry export.

Each case starts a fresh Python process that records one decision (metrics and the reconcile
span) and calls ``Telemetry.shutdown()``, as the CLI does at the end of a run. Measured: seconds
from the call to ``shutdown`` until the process is gone (wall clock across both processes), and
the whole process lifetime for scale. Cases:

- ``disabled``: ``OTEL_SDK_DISABLED=true``
- ``files``: the embedded default, OTLP JSON lines in a temporary folder
- ``collector``: a responsive in-process OTLP/HTTP receiver on 127.0.0.1
- ``dead``: an OTLP endpoint on a loopback port nobody listens on (connection refused)
- ``hanging``: a loopback port that accepts connections and never answers
- ``trickling``: a loopback server that sends its headers, then one body byte every 0.4 s (each
  read well inside the exporter's 1 s request timeout, so only the exit budget ends it)

    python tests/bench/bench_export_exit.py [--runs N]
    pytest -m bench tests/bench/bench_export_exit.py -s
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUDGET_S = 2.5

CHILD = """
import os, time
from coverage_gate.rollout import metrics
from coverage_gate.telemetry import otel_setup
from coverage_gate.rollout.simulation import ReviewerSpec, decide
scope = ["src/api.py", "src/db.py"]
decision = decide("acme/api", scope=scope, reviewers=[ReviewerSpec("a", claimed=scope, read=[])])
t = otel_setup.setup(os.environ)
metrics.record_decision(t.meter(), decision, duration_s=0.01)
metrics.record_reconcile_span(t.tracer(), decision, duration_s=0.01)
print(time.time(), flush=True)
t.shutdown()
"""


class _Ok(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Quiet."""


@contextmanager
def _collector() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def _dead() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


@contextmanager
def _hanging() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def _trickle(connection: socket.socket, stop: threading.Event) -> None:
    with connection:
        try:
            connection.settimeout(5)
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            for _ in range(150):  # at most a minute
                if stop.wait(0.4):
                    return
                connection.sendall(b" ")
        except OSError:
            return


@contextmanager
def _trickling() -> Iterator[str]:
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_trickle, args=(connection, stop), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=5)


def run_once(env: dict[str, str]) -> tuple[float, float]:
    """(seconds from shutdown to exit, whole process seconds)."""
    spawned = time.time()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    child.wait(timeout=60)
    gone = time.time()
    child.stdout.close()
    if child.returncode != 0 or not line:
        raise RuntimeError(f"child failed with exit code {child.returncode}")
    return gone - float(line), gone - spawned


def measure(runs: int) -> dict[str, list[tuple[float, float]]]:
    results: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="cg-bench-") as folder:
        results["disabled"] = [run_once({"OTEL_SDK_DISABLED": "true"}) for _ in range(runs)]
        results["files"] = [run_once({"COVERAGE_GATE_TELEMETRY_DIR": folder}) for _ in range(runs)]
    endpoints = (
        ("collector", _collector),
        ("dead", _dead),
        ("hanging", _hanging),
        ("trickling", _trickling),
    )
    for name, endpoint in endpoints:
        with endpoint() as url:
            results[name] = [run_once({"OTEL_EXPORTER_OTLP_ENDPOINT": url}) for _ in range(runs)]
    return results


def render(results: dict[str, list[tuple[float, float]]]) -> str:
    lines = [f"{'case':<10} {'exit median':>12} {'exit max':>9} {'process median':>15}"]
    for name, samples in results.items():
        exits = [e for e, _ in samples]
        totals = [t for _, t in samples]
        lines.append(
            f"{name:<10} {statistics.median(exits):>11.3f}s {max(exits):>8.3f}s "
            f"{statistics.median(totals):>14.3f}s"
        )
    return "\n".join(lines)


@pytest.mark.bench
def test_exit_time_with_dead_and_hanging_collectors() -> None:
    """Prints the figures; fails when any case holds the process past the budget (+0.5 s)."""
    results = measure(runs=3)
    sys.stdout.write("\n" + render(results) + "\n")
    for name, samples in results.items():
        assert max(e for e, _ in samples) < BUDGET_S + 0.5, name


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure exit time under telemetry export.")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    sys.stdout.write(render(measure(args.runs)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
