"""The live source against a stub Unleash server: what each fault costs and what answers instead.

The stub is stdlib ``http.server`` on 127.0.0.1 with an ephemeral port, serving
``/api/client/features`` the way Unleash does, or failing in one chosen way: refused connection,
HTTP 500, a malformed body, a body that is JSON but no features document, a 401, and a server that
accepts the connection and never answers.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.commands.flags import EXIT_BAD_CONFIG, flags_app
from coverage_gate.contracts.model import Mode, ModeSource
from coverage_gate.rollout.flags import (
    DEFAULT_FLAG_NAME,
    DEPLOYMENT_KEY,
    FlagSettings,
    disk_copy_path,
    resolve_mode,
    save_disk_copy,
)

FLAG = DEFAULT_FLAG_NAME
TOKEN = "default:development.stub-token"  # noqa: S105 - a fake token for the stub


def features_document(enforced: list[str], *, flag: str = FLAG) -> dict[str, Any]:
    """One flag: listed repositories get variant enforce, every other repository shadow."""
    enforce = {
        "name": "flexibleRollout",
        "constraints": [{"contextName": "repo", "operator": "IN", "values": enforced}],
        "parameters": {"rollout": "100", "stickiness": "default", "groupId": flag},
        "variants": [{"name": "enforce", "weight": 1000, "weightType": "variable"}],
    }
    shadow = {
        "name": "flexibleRollout",
        "constraints": [],
        "parameters": {"rollout": "100", "stickiness": "default", "groupId": flag},
        "variants": [{"name": "shadow", "weight": 1000, "weightType": "variable"}],
    }
    return {
        "version": 2,
        "features": [{"name": flag, "enabled": True, "strategies": [enforce, shadow]}],
    }


@dataclass
class Stub:
    """What the stub serves next, and what it has seen."""

    status: int = 200
    body: bytes = b""
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    metrics_stall_s: float = 0.0
    release: threading.Event = field(default_factory=threading.Event)

    def serve(self, document: dict[str, Any]) -> None:
        self.status, self.body = 200, json.dumps(document).encode()


@dataclass
class Servers:
    stub: Stub
    url: str
    hanging_url: str
    refused_url: str
    server: HTTPServer

    def stop(self) -> None:
        """The stub goes away: its URL now refuses connections."""
        self.server.shutdown()
        self.server.server_close()


def _handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            stub.requests.append(("GET", self.path, dict(self.headers)))
            self.send_response(stub.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(stub.body)))
            self.end_headers()
            self.wfile.write(stub.body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            stub.requests.append(("POST", self.path, dict(self.headers)))
            stub.release.wait(stub.metrics_stall_s)
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            """Quiet: the test reads ``stub.requests`` instead."""

    return Handler


def _hold_connections(listener: socket.socket, held: list[socket.socket]) -> None:
    """Accept every connection and never answer (until the listener is closed)."""
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        held.append(connection)


@pytest.fixture
def servers() -> Iterator[Servers]:
    stub = Stub()
    server = HTTPServer(("127.0.0.1", 0), _handler(stub))
    serving = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.02},
        name="stub-unleash",
        daemon=True,
    )
    serving.start()

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    holding = threading.Thread(
        target=_hold_connections, args=(listener, held), name="stub-hang", daemon=True
    )
    holding.start()

    with socket.create_server(("127.0.0.1", 0)) as probe:
        refused_port = probe.getsockname()[1]  # closed on exit: nothing listens there any more

    try:
        yield Servers(
            stub=stub,
            url=f"http://127.0.0.1:{server.server_address[1]}/api",
            hanging_url=f"http://127.0.0.1:{listener.getsockname()[1]}/api",
            refused_url=f"http://127.0.0.1:{refused_port}/api",
            server=server,
        )
    finally:
        stub.release.set()
        server.shutdown()
        server.server_close()
        serving.join(timeout=5)
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        holding.join(timeout=5)
        for connection in held:
            connection.close()


def live(url: str, tmp_path: Path, **kwargs: Any) -> FlagSettings:
    return FlagSettings(
        unleash_url=url, unleash_token=TOKEN, disk_copy=tmp_path / "copy.json", **kwargs
    )


def copy_of(url: str, tmp_path: Path, **kwargs: Any) -> Path:
    """Where the disk copy of the deployment ``live(url, tmp_path, **kwargs)`` is kept."""
    path = disk_copy_path(live(url, tmp_path, **kwargs))
    assert path is not None
    return path


# --- a server that answers --------------------------------------------------------------------


def test_live_answer_is_recorded_and_kept_as_a_plain_json_disk_copy(
    servers: Servers, tmp_path: Path
) -> None:
    """A good answer comes from the live source, and the document is saved as plain JSON."""
    servers.stub.serve(features_document(["acme/payments"]))
    result = resolve_mode("acme/payments", live(servers.url, tmp_path))
    assert (result.mode, result.source, result.variant, result.flag_found) == (
        Mode.ENFORCE,
        ModeSource.LIVE,
        "enforce",
        True,
    )
    assert servers.url in result.detail
    kept = copy_of(servers.url, tmp_path)
    copy = json.loads(kept.read_text("utf-8"))
    deployment = {"url": servers.url, "environment": "default", "appName": "coverage-gate"}
    assert copy == {**features_document(["acme/payments"]), DEPLOYMENT_KEY: deployment}
    assert [p.name for p in tmp_path.iterdir()] == [kept.name]


def test_live_client_sends_token_skips_registration_and_flushes_usage(
    servers: Servers, tmp_path: Path
) -> None:
    """One features GET with the API token and app name, no registration, and usage metrics sent
    once when the client is closed (before resolve_mode returns)."""
    servers.stub.serve(features_document([]))
    resolve_mode("acme/web", live(servers.url, tmp_path, app_name="gate-ci"))
    seen = [(method, path) for method, path, _ in servers.stub.requests]
    assert seen == [("GET", "/api/client/features"), ("POST", "/api/client/metrics")]
    headers = servers.stub.requests[0][2]
    assert headers["Authorization"] == TOKEN
    assert headers["UNLEASH-APPNAME"] == "gate-ci"


def test_usage_flush_at_exit_is_bounded_by_the_timeout(servers: Servers, tmp_path: Path) -> None:
    """The one metrics send at exit cannot hold the run: a server that stalls on it costs at most
    the request timeout, and the answer stands."""
    servers.stub.serve(features_document(["acme/payments"]))
    servers.stub.metrics_stall_s = 10.0
    started = time.perf_counter()
    result = resolve_mode("acme/payments", live(servers.url, tmp_path, timeout_s=0.5))
    elapsed = time.perf_counter() - started
    assert (result.mode, result.source) == (Mode.ENFORCE, ModeSource.LIVE)
    assert ("POST", "/api/client/metrics") in [(m, p) for m, p, _ in servers.stub.requests]
    assert 0.4 <= elapsed < 2.0


def test_no_thread_is_left_behind(servers: Servers, tmp_path: Path) -> None:
    """The client's scheduler and workers are stopped before resolve_mode returns, on success
    and on failure alike."""
    before = {thread.ident for thread in threading.enumerate()}
    servers.stub.serve(features_document([]))
    resolve_mode("acme/web", live(servers.url, tmp_path))
    resolve_mode("acme/web", live(servers.refused_url, tmp_path))
    servers.stub.status, servers.stub.body = 500, b"boom"
    resolve_mode("acme/web", live(servers.url, tmp_path))
    left = [t.name for t in threading.enumerate() if t.ident not in before]
    assert left == []


def test_flag_missing_on_the_server_falls_back_without_the_disk_copy(
    servers: Servers, tmp_path: Path
) -> None:
    """The server answered that the flag does not exist: that is an answer, not an outage, so the
    fallback answers (not an older disk copy), and the detail says the flag is not defined."""
    servers.stub.serve(features_document(["acme/payments"]))
    resolve_mode("acme/payments", live(servers.url, tmp_path))
    servers.stub.serve(features_document([], flag="another.flag"))
    result = resolve_mode("acme/payments", live(servers.url, tmp_path))
    assert (result.mode, result.source, result.flag_found) == (
        Mode.SHADOW,
        ModeSource.FALLBACK,
        False,
    )
    assert f"flag {FLAG!r} not defined on Unleash server" in result.detail


def test_snapshot_without_the_flag_goes_on_to_the_server(servers: Servers, tmp_path: Path) -> None:
    """A source that does not define the flag passes the question to the next source."""
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps(features_document([], flag="another.flag")), "utf-8")
    servers.stub.serve(features_document(["acme/payments"]))
    result = resolve_mode("acme/payments", live(servers.url, tmp_path, snapshot=snapshot))
    assert (result.mode, result.source) == (Mode.ENFORCE, ModeSource.LIVE)


def test_live_and_offline_evaluation_agree(servers: Servers, tmp_path: Path) -> None:
    """The live client and the engine asked offline give every repository the same answer for
    the same document (the example rollout: constraint, then a sticky 30% rollout)."""
    example = Path(__file__).parents[2] / "coverage_gate" / "examples" / "flags.snapshot.json"
    servers.stub.serve(json.loads(example.read_text("utf-8")))
    repos = ["acme/payments", "acme/billing"] + [f"org/repo-{i}" for i in range(40)]
    for repo in repos:
        live_answer = resolve_mode(repo, live(servers.url, tmp_path))
        offline = resolve_mode(repo, FlagSettings(snapshot=example))
        assert (live_answer.source, offline.source) == (ModeSource.LIVE, ModeSource.SNAPSHOT)
        assert (live_answer.mode, live_answer.variant) == (offline.mode, offline.variant), repo


# --- faults -------------------------------------------------------------------------------------

FAULTS: dict[str, tuple[int, bytes, str]] = {
    "http 500": (500, b"Internal Server Error", "HTTP 500"),
    "http 401": (401, b'{"message": "unauthorized"}', "HTTP 401"),
    "malformed body": (200, b"<html>not json", "malformed features document"),
    "json but not features": (200, b'{"ok": true}', "no 'features' list"),
    "engine rejects": (200, b'{"features": [{"name": "x", "enabled": true}]}', "rejected"),
}


def _set_fault(servers: Servers, fault: str) -> str:
    """Make the stub fail in one way; return the URL to ask."""
    if fault == "refused":
        return servers.refused_url
    servers.stub.status, servers.stub.body, _ = FAULTS[fault]
    return servers.url


ALL_FAULTS = ["refused", *sorted(FAULTS)]


@pytest.mark.parametrize("fault", ALL_FAULTS)
def test_server_fault_without_disk_copy_falls_back_and_says_why(
    servers: Servers, tmp_path: Path, fault: str
) -> None:
    """A failing server and no disk copy: the fallback answers, never enforce, and the detail
    gives the reason."""
    url = _set_fault(servers, fault)
    result = resolve_mode("acme/payments", live(url, tmp_path, fallback=Mode.OFF))
    assert (result.mode, result.source, result.flag_found) == (Mode.OFF, ModeSource.FALLBACK, False)
    expected = "connection refused" if fault == "refused" else FAULTS[fault][2]
    assert expected in result.detail
    assert "no disk copy" in result.detail
    assert list(tmp_path.iterdir()) == []  # no disk copy of any deployment


@pytest.mark.parametrize("fault", ALL_FAULTS)
def test_server_fault_answers_from_the_disk_copy_and_says_so(
    servers: Servers, tmp_path: Path, fault: str
) -> None:
    """After one good answer, a failing server is replaced by the disk copy (source disk_copy),
    and a bad body never overwrites the good copy."""
    servers.stub.serve(features_document(["acme/payments"]))
    assert resolve_mode("acme/payments", live(servers.url, tmp_path)).source is ModeSource.LIVE
    kept = copy_of(servers.url, tmp_path)
    good_copy = kept.read_text("utf-8")

    if fault == "refused":
        servers.stop()  # the same server, gone: a copy is only its own deployment's
    else:
        _set_fault(servers, fault)
    result = resolve_mode("acme/payments", live(servers.url, tmp_path))
    assert (result.mode, result.source, result.flag_found) == (
        Mode.ENFORCE,
        ModeSource.DISK_COPY,
        True,
    )
    assert "answered from disk copy" in result.detail
    assert str(kept) in result.detail
    assert kept.read_text("utf-8") == good_copy


def test_corrupt_disk_copy_falls_back(servers: Servers, tmp_path: Path) -> None:
    """A disk copy that cannot be read as features is not trusted: the fallback answers."""
    copy_of(servers.refused_url, tmp_path).write_text("{truncated", "utf-8")
    result = resolve_mode("acme/payments", live(servers.refused_url, tmp_path))
    assert (result.mode, result.source) == (Mode.SHADOW, ModeSource.FALLBACK)
    assert "disk copy unusable" in result.detail


def test_hanging_server_costs_about_the_timeout(servers: Servers, tmp_path: Path) -> None:
    """A server that accepts and never answers costs the request timeout (2 s), no retries; the
    disk copy then answers. The bound asserted here is generous; the benchmark measures it."""
    # the last good answer this (now hanging) server gave
    save_disk_copy(
        live(servers.hanging_url, tmp_path), json.dumps(features_document(["acme/payments"]))
    )
    started = time.perf_counter()
    result = resolve_mode("acme/payments", live(servers.hanging_url, tmp_path))
    elapsed = time.perf_counter() - started
    assert (result.mode, result.source) == (Mode.ENFORCE, ModeSource.DISK_COPY)
    assert "no answer within 2 s" in result.detail
    assert 1.5 <= elapsed < 4.0


def test_shorter_timeout_is_honoured(servers: Servers, tmp_path: Path) -> None:
    """timeout_s bounds the wait on a silent server."""
    started = time.perf_counter()
    result = resolve_mode("a/b", live(servers.hanging_url, tmp_path, timeout_s=0.3))
    assert time.perf_counter() - started < 1.5
    assert result.source is ModeSource.FALLBACK


# --- flags pull ---------------------------------------------------------------------------------

runner = CliRunner()


def test_pull_saves_the_servers_document(servers: Servers, tmp_path: Path) -> None:
    """`flags pull -o FILE` saves what one request returned, usable as --flags FILE."""
    servers.stub.serve(features_document(["acme/payments"]))
    out = tmp_path / "pulled.json"
    env = {"UNLEASH_URL": servers.url, "UNLEASH_API_TOKEN": TOKEN}
    pulled = runner.invoke(flags_app, ["pull", "-o", str(out)], env=env)
    assert pulled.exit_code == 0, pulled.output
    assert json.loads(out.read_text("utf-8")) == features_document(["acme/payments"])
    assert f"flag {FLAG!r} present" in pulled.stderr
    assert [method for method, _, _ in servers.stub.requests] == ["GET"]
    shown = runner.invoke(
        flags_app,
        ["--repo", "acme/payments", "--flags", str(out), "--format", "json"],
        env={"UNLEASH_URL": "", "COVERAGE_GATE_FLAGS_DISK_COPY": ""},
    )
    assert json.loads(shown.stdout)["mode"] == "enforce"


@pytest.mark.parametrize("fault", ALL_FAULTS)
def test_pull_from_a_failing_server_writes_nothing(
    servers: Servers, tmp_path: Path, fault: str
) -> None:
    """A failed pull exits 4 with the reason and leaves no file behind."""
    url = _set_fault(servers, fault)
    out = tmp_path / "pulled.json"
    pulled = runner.invoke(flags_app, ["pull", "-o", str(out), "--unleash-url", url])
    assert pulled.exit_code == EXIT_BAD_CONFIG
    assert url in pulled.stderr
    assert not out.exists()
