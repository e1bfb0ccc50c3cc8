"""Every network exchange has a total deadline, not only a wait per read.

The server here answers at once with headers, then sends its body one byte at a time, each byte
well within any per-read timeout: a client that only bounds each read never finishes. The commands
run as real processes and are timed from outside with generous bounds: the assertion is that they
end at all, with the documented outcome, where before they hung.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from coverage_gate.contracts.model import Mode, ModeSource
from coverage_gate.rollout.flags import DEFAULT_DEADLINE_S, FlagSettings, resolve_mode
from tests.conftest import DATA, approve_args

ROOT = Path(__file__).resolve().parents[2]
PI = DATA / "pi-rpc"
# Far above the 3 s deadline and the 2.5 s exit budget, far below "never".
ENDS_WITHIN_S = 20.0
MAX_TRICKLE_S = 60.0  # the server lets go by itself after this, whatever the client does


@dataclass
class Trickler:
    """A loopback HTTP server that sends its headers at once and then one body byte every
    ``interval_s``; bounded in time, and stopped with the fixture."""

    interval_s: float
    url: str = ""
    connections: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def serve(self, listener: socket.socket) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._trickle, args=(connection,), daemon=True).start()

    def _trickle(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.settimeout(5)
                connection.recv(65536)  # the request (its head is enough)
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 1000000\r\n\r\n{"
                )
                ends = time.monotonic() + MAX_TRICKLE_S
                while time.monotonic() < ends and not self.stop.wait(self.interval_s):
                    connection.sendall(b" ")
            except OSError:
                return  # the client went away


def _trickler(interval_s: float) -> Iterator[Trickler]:
    listener = socket.create_server(("127.0.0.1", 0))
    trickler = Trickler(interval_s, url=f"http://127.0.0.1:{listener.getsockname()[1]}")
    thread = threading.Thread(target=trickler.serve, args=(listener,), daemon=True)
    thread.start()
    try:
        yield trickler
    finally:
        trickler.stop.set()
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=5)


@pytest.fixture
def unleash_trickle() -> Iterator[Trickler]:
    """1.5 s between bytes: inside Unleash's 2 s request timeout."""
    yield from _trickler(1.5)


@pytest.fixture
def collector_trickle() -> Iterator[Trickler]:
    """0.4 s between bytes: inside the OTLP exporter's 1 s request timeout."""
    yield from _trickler(0.4)


def _env(**extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "UNLEASH_"))}
    keep = {k: v for k, v in keep.items() if not k.startswith("COVERAGE_GATE_")}
    return {**keep, "COVERAGE_GATE_FLAGS_DISK_COPY": "", **extra}


def _run(
    args: list[str], env: dict[str, str], cwd: Path = ROOT
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run coverage-gate as a process in ``cwd``; a hang fails the test at ENDS_WITHIN_S."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "coverage_gate", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=ENDS_WITHIN_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"coverage-gate {args[0]} still running after {ENDS_WITHIN_S} s")
    return done, time.monotonic() - started


def _reconcile_args(folder: Path, *extra: str) -> list[str]:
    evidence = folder / "evidence.json"
    recorded = subprocess.run(
        [
            sys.executable,
            "-m",
            "coverage_gate",
            "record",
            str(PI / "pi_a_honest.jsonl"),
            "-f",
            "pi-rpc",
            "--repo-root",
            "/home/user/repo",
            "--revision",
            "abc",
            "-o",
            str(evidence),
        ],
        cwd=ROOT,
        env=_env(OTEL_SDK_DISABLED="true"),
        capture_output=True,
        check=True,
    )
    assert recorded.returncode == 0
    claims = folder / "claims.json"
    claims.write_text(json.dumps({"schema_version": 1, "agent_id": "r", "inspected_files": []}))
    changed = folder / "changed.txt"
    changed.write_text("src/api.py\n")
    return approve_args(
        "abc", changed, "--claims", claims, "--evidence", evidence, "--format", "json", *extra,
        repo="acme/api",
    )  # fmt: skip


# --- Unleash ------------------------------------------------------------------------------------


def test_trickling_unleash_server_is_cut_at_the_deadline(unleash_trickle: Trickler) -> None:
    """In process: the live source gives up at the deadline and the fallback answers, saying the
    deadline was hit (the per-request timeout of 2 s alone would wait for ever)."""
    started = time.monotonic()
    result = resolve_mode(
        "acme/api", FlagSettings(unleash_url=f"{unleash_trickle.url}/api", deadline_s=1.0)
    )
    assert time.monotonic() - started < ENDS_WITHIN_S
    assert (result.mode, result.source) == (Mode.SHADOW, ModeSource.FALLBACK)
    assert "deadline hit: no complete answer within 1 s" in result.detail
    assert unleash_trickle.connections == 1


@pytest.mark.slow
def test_reconcile_mode_auto_with_a_trickling_unleash_server_falls_back(
    unleash_trickle: Trickler, tmp_path: Path
) -> None:
    """`reconcile --mode auto` ends within the deadline (plus start-up and exit), takes the
    fallback mode, and says on stderr that the deadline was hit."""
    args = _reconcile_args(tmp_path, "--mode", "auto", "--flags-on-error", "fallback")
    env = _env(UNLEASH_URL=f"{unleash_trickle.url}/api", OTEL_SDK_DISABLED="true")
    done, elapsed = _run(args, env, cwd=tmp_path)  # outside any repository: "abc" is no commit
    assert done.returncode == 0, done.stderr
    decision = json.loads(done.stdout)
    assert (decision["mode"], decision["mode_source"]) == ("shadow", "fallback")
    assert f"deadline hit: no complete answer within {DEFAULT_DEADLINE_S:g} s" in done.stderr
    assert elapsed < ENDS_WITHIN_S


@pytest.mark.slow
def test_flags_with_a_trickling_unleash_server_falls_back(unleash_trickle: Trickler) -> None:
    """`coverage-gate flags --repo R` answers from the fallback and says the deadline was hit."""
    env = _env(UNLEASH_URL=f"{unleash_trickle.url}/api", OTEL_SDK_DISABLED="true")
    done, _ = _run(["flags", "--repo", "acme/api", "--format", "json"], env)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["mode"], answer["source"]) == ("shadow", "fallback")
    assert "deadline hit" in answer["detail"]


@pytest.mark.slow
def test_flags_pull_from_a_trickling_server_is_a_configuration_error(
    unleash_trickle: Trickler, tmp_path: Path
) -> None:
    """`flags pull` gets no document in time: exit 4, the deadline named, no file written."""
    env = _env(UNLEASH_URL=f"{unleash_trickle.url}/api", OTEL_SDK_DISABLED="true")
    done, _ = _run(["flags", "pull", "-o", str(tmp_path / "snapshot.json")], env)
    assert done.returncode == 4, done.stderr
    assert "deadline hit" in done.stderr
    assert list(tmp_path.iterdir()) == []


# --- OTLP ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_reconcile_with_a_trickling_collector_exits_within_budget_and_decides_the_same(
    collector_trickle: Trickler, tmp_path: Path
) -> None:
    """Telemetry to a collector that trickles its answer: the decision and exit code are those of
    a run without telemetry, and the process ends within the exit budget (plus start-up)."""
    args = _reconcile_args(tmp_path, "--mode", "shadow")
    quiet, _ = _run(args, _env(OTEL_SDK_DISABLED="true"), cwd=tmp_path)  # "abc" is no commit
    started = time.monotonic()
    trickled, _ = _run(args, _env(OTEL_EXPORTER_OTLP_ENDPOINT=collector_trickle.url), cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert (trickled.returncode, quiet.returncode) == (0, 0), trickled.stderr
    assert json.loads(trickled.stdout) == json.loads(quiet.stdout)
    assert collector_trickle.connections >= 1
    assert elapsed < ENDS_WITHIN_S
