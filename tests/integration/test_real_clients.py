"""End to end with the real review clients: pi, Claude Code and Codex against a scripted model.

Each test builds a fresh repository (``realclients/make_repo.sh``: six changed files in the
working tree) and a fresh HOME, starts the mock model (``realclients/mock_llm.py``) on a free
loopback port with one of ``realclients/scenarios/``, runs the real client, records evidence
and reconciles the reviewer's own final answer (its claims) over the changed files:

* pi runs *through* ``coverage-gate run --format pi-rpc -- pi --mode rpc ...``: the test drives
  pi's RPC stdin through our pass-through, exactly as a pipeline would;
* Claude Code (``-p --output-format stream-json``) and Codex (``exec --json`` and its session
  rollout file) run directly; their output files are then fed to ``coverage-gate record``;
* Claude Code and Codex once more under ``coverage-gate run --telemetry-intake``, their own
  OpenTelemetry sent to its loopback receiver and recorded beside their stdout;
* OpenCode (``run --format json``) and Copilot CLI (``-p --output-format json``) run through
  ``coverage-gate run`` as well, against the mock's Chat Completions route.

An honest reviewer keeps its Approve in enforce mode; one that claims files it never read, or
whose reads failed, gets a Comment whose note names exactly those files. ``codex exec --json``
parses no reads: its evidence is what its commands printed (evidence by content).

Depth (which changed lines each call showed) is recorded against the pinned diff and the files
at the revision (the tree written from the workspace before the reviewer starts): an honest
review sees every hunk (depth full); the ``*_depth`` scenarios show a
diff page that ends in a file's header (no evidence for it), a read past the end of a file (no
evidence), ranged reads away from the change (depth none) and Codex ``sed -n``/``tail`` ranges.

The clients come from ``bash .ci/setup-clients.sh``, at two releases each: the newest pinned
one (in ``${CG_TOOLS:-.tools}/clients``) and an older one (in ``${CG_TOOLS:-.tools}/clients-older``),
the pair ``coverage_gate.contracts.client_versions.CHECKED`` names per format. Every test of a client runs
once with each, its id naming the release (``[pi-0.73.1]``, ``[pi-0.67.4]``). Without them these
tests skip, unless ``CG_REQUIRE_INTEGRATION=1``, when they fail. Every process they start runs in
a process group of its own that is killed on the way out.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from coverage_gate.contracts.client_versions import CHECKED, PACKAGE
from coverage_gate.core.versions import version_key
from coverage_gate.edges.content import snapshot_tree
from tests.conftest import CHANGED_FILES

pytestmark = pytest.mark.slow

PY = sys.executable
PROJECT = Path(__file__).resolve().parents[2]
KIT = Path(__file__).resolve().parent / "realclients"
TOOLS = Path(os.environ.get("CG_TOOLS") or PROJECT / ".tools")
CLIENT_TIMEOUT = 180.0  # seconds one client run may take before the test fails

CHANGED = CHANGED_FILES  # make_repo.sh's working tree changes these six
ANSWER = (
    'answer with one JSON object {"schema_version":1,"agent_id":"reviewer",'
    '"inspected_files":[...],"findings":[...]}.'
)
PI_PROMPT = (
    "Review the change in this repository. Page through the diff with cr_diff, read changed "
    "files with cr_read, then " + ANSWER
)
PI_SYSTEM = (
    "You are a code reviewer. Inspect the repository only through the cr_read and cr_diff tools."
)
SHELL_PROMPT = (
    "Review the uncommitted change in this repository (git diff), read the changed files, then "
    + ANSWER
)

Json = dict[str, Any]


# --- the installed clients ---------------------------------------------------------------------


# .ci/setup-clients.sh installs each client twice, under TOOLS: the newest pinned release and an
# older one (CHECKED's pair per format)
PREFIX = {"newest": "clients", "oldest": "clients-older"}
# a test of a client is named for it: test_pi_..., test_claude_code_..., ...
CLIENT_OF_TEST = {
    "test_pi_": "pi-rpc",
    "test_claude_code_": "claude-code",
    "test_codex_": "codex-rollout",
    "test_opencode_": "opencode",
    "test_copilot_": "copilot-cli",
    "test_gemini_cli_": "gemini-cli",
    "test_qwen_code_": "qwen-code",
}
SHORT_NAME = {"pi-rpc": "pi", "codex-rollout": "codex", "copilot-cli": "copilot"}
CLIENT_FIXTURES = frozenset({"clients", "opencode", "copilot", "gemini_qwen"})


@dataclass(frozen=True)
class Release:
    """One of the two releases of the client a test runs: ``which`` is "newest" or "oldest"."""

    fmt: str
    which: str

    @property
    def version(self) -> str:
        oldest, newest = CHECKED[self.fmt]
        return newest if self.which == "newest" else oldest

    @property
    def prefix(self) -> Path:
        return TOOLS / PREFIX[self.which]

    @property
    def bin(self) -> Path:
        return self.prefix / "node_modules" / ".bin"

    @property
    def id(self) -> str:
        return f"{SHORT_NAME.get(self.fmt, self.fmt)}-{self.version}"

    def at_least(self, version: str) -> bool:
        return version_key(self.version) >= version_key(version)  # type: ignore[operator]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each test of a client runs once per release (``release``), newest first."""
    if not CLIENT_FIXTURES & set(metafunc.fixturenames):
        return
    name = metafunc.function.__name__
    fmt = next((f for start, f in CLIENT_OF_TEST.items() if name.startswith(start)), None)
    assert fmt is not None, f"{name} runs a client but its name says none of {CLIENT_OF_TEST}"
    releases = [Release(fmt, "newest"), Release(fmt, "oldest")]
    metafunc.parametrize("release", releases, ids=[r.id for r in releases], indirect=True)


@pytest.fixture
def release(request: pytest.FixtureRequest) -> Release:
    found: Release = request.param
    return found


@dataclass(frozen=True)
class Clients:
    pi: Path
    claude: Path
    codex: Path
    release: Release


def _claude_binary(prefix: Path) -> Path:
    machine = os.uname().machine
    platform = {"x86_64": "linux-x64", "aarch64": "linux-arm64", "arm64": "linux-arm64"}.get(
        machine, machine
    )
    return prefix / "node_modules" / "@anthropic-ai" / f"claude-code-{platform}" / "claude"


def _installed_version(prefix: Path, package: str) -> str | None:
    try:
        manifest = json.loads((prefix / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = manifest.get("version") if isinstance(manifest, dict) else None
    return version if isinstance(version, str) else None


def require_installed(*paths: Path, release: Release | None = None) -> None:
    """Each client executable (and node and git) is there, and ``release``'s package at its
    version, or a skip (a failure under ``CG_REQUIRE_INTEGRATION=1``)."""
    missing = [str(path) for path in paths if not os.access(path, os.X_OK)]
    missing += [tool for tool in ("node", "git") if shutil.which(tool) is None]
    reason = ""
    if missing:
        reason = (
            f"real review client{'s' if len(paths) > 1 else ''} not installed "
            f"(missing: {', '.join(missing)}); run `bash .ci/setup-clients.sh` first"
        )
    elif release is not None:
        package = PACKAGE[release.fmt]
        found = _installed_version(release.prefix, package)
        if found != release.version:
            reason = (
                f"{release.prefix} holds {package} {found or 'at no version'}, not "
                f"{release.version}; run `bash .ci/setup-clients.sh` first"
            )
    if reason:
        if os.environ.get("CG_REQUIRE_INTEGRATION") == "1":
            pytest.fail(f"CG_REQUIRE_INTEGRATION=1 but {reason}")
        pytest.skip(reason)


@pytest.fixture
def clients(release: Release) -> Clients:
    """pi, Claude Code and Codex at ``release`` (the test runs one of them)."""
    found = Clients(
        pi=release.bin / "pi",
        claude=_claude_binary(release.prefix),
        codex=release.bin / "codex",
        release=release,
    )
    require_installed(found.pi, found.claude, found.codex, release=release)
    return found


# --- processes: every one in its own group, killed on the way out ------------------------------


class Processes:
    def __init__(self) -> None:
        self._started: list[subprocess.Popen[bytes]] = []

    def start(
        self, command: list[str], *, log: Path | None = None, **kwargs: Any
    ) -> subprocess.Popen[bytes]:
        """Start in a new process group; ``log`` receives its stderr."""
        with contextlib.ExitStack() as stack:
            if log is not None:
                kwargs["stderr"] = stack.enter_context(log.open("wb"))
            proc = subprocess.Popen(command, process_group=0, **kwargs)
        self._started.append(proc)
        return proc

    def run(
        self, command: list[str], *, timeout: float = CLIENT_TIMEOUT, **kwargs: Any
    ) -> subprocess.CompletedProcess[bytes]:
        """Run to completion within ``timeout``; the group is killed if it overruns."""
        proc = self.start(command, **kwargs)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(proc)
            pytest.fail(f"{Path(command[0]).name} did not finish within {timeout:g}s")
        return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)

    @staticmethod
    def kill(proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

    def cleanup(self) -> None:
        for proc in self._started:
            self.kill(proc)


@pytest.fixture
def procs() -> Iterator[Processes]:
    processes = Processes()
    try:
        yield processes
    finally:
        processes.cleanup()


# --- workspace: fresh repository, HOME and TMPDIR ----------------------------------------------


@dataclass(frozen=True)
class Workspace:
    root: Path
    repo: Path
    home: Path
    tmp: Path
    diff: Path
    changed: Path
    revision: str

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment: nothing of ours (no model keys, no config) leaks in."""
        base = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "LANG": "C.UTF-8",
        }
        return {**base, **extra}


@pytest.fixture
def workspace(procs: Processes) -> Iterator[Workspace]:
    """A fresh repository, HOME and TMPDIR, removed afterwards even when the test fails
    (``CG_KEEP_WORKSPACES=1`` keeps them for a look, and names the folder)."""
    root = Path(tempfile.mkdtemp(prefix="coverage-gate-clients-"))
    try:
        yield _make_workspace(procs, root)
    finally:
        procs.cleanup()  # nothing may still write into the folder
        strays = _processes_inside(root)
        for pid in strays:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if os.environ.get("CG_KEEP_WORKSPACES") == "1":
            sys.stderr.write(f"kept {root}\n")
        else:
            shutil.rmtree(root, ignore_errors=True)
    assert not strays, f"processes outlived their process group: {strays}"


def _processes_inside(root: Path) -> dict[int, str]:
    """Running processes whose working directory is inside ``root`` (a client that escaped
    its process group would show up here), with their command lines."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile, or not ours to look at
            continue
        if (cwd == str(root) or cwd.startswith(f"{root}/")) and _running(int(entry.name)):
            found[int(entry.name)] = command.strip()
    return found


def _make_workspace(procs: Processes, root: Path) -> Workspace:
    repo, home, tmp = root / "repo", root / "home", root / "tmp"
    home.mkdir()
    tmp.mkdir()
    pipes: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    done = procs.run(["bash", str(KIT / "make_repo.sh"), str(repo)], timeout=60, **pipes)
    assert done.returncode == 0, done.stderr
    git = ["git", "-C", str(repo), "-c", "core.quotepath=off"]
    diff = procs.run([*git, "diff", "--no-color", "--no-ext-diff"], timeout=60, **pipes)
    (root / "pr.diff").write_bytes(diff.stdout)
    (root / "changed.txt").write_text("\n".join(CHANGED) + "\n")
    return Workspace(
        root=root,
        repo=repo,
        home=home,
        tmp=tmp,
        diff=root / "pr.diff",
        changed=root / "changed.txt",
        # the change under review is uncommitted: the revision is the tree written from the
        # working tree before any reviewer starts (DESIGN §6 rule 15)
        revision=snapshot_tree(repo),
    )


# --- the mock model ----------------------------------------------------------------------------


class LineReader:
    """Lines from a pipe within a deadline: a silent process fails the test, never hangs it."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        self._buffer = bytearray()
        self._eof = False

    def _fill(self, deadline: float, what: str) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(self._fd, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    pytest.fail(f"timed out waiting for {what}")
                if sel.select(left):
                    chunk = os.read(self._fd, 65536)
                    self._eof = not chunk
                    self._buffer += chunk
                    return

    def line(self, deadline: float, what: str) -> bytes:
        """The next line with its newline; a last line without one; ``b""`` at end of file."""
        while b"\n" not in self._buffer and not self._eof:
            self._fill(deadline, what)
        end = self._buffer.find(b"\n") + 1 or len(self._buffer)
        line = bytes(self._buffer[:end])
        del self._buffer[:end]
        return line

    def rest(self, deadline: float, what: str) -> bytes:
        while not self._eof:
            self._fill(deadline, what)
        rest = bytes(self._buffer)
        self._buffer.clear()
        return rest


def start_mock(procs: Processes, ws: Workspace, scenario: str) -> int:
    log = ws.root / "mock.log"
    proc = procs.start(
        [PY, str(KIT / "mock_llm.py"), "--scenario", str(KIT / "scenarios" / f"{scenario}.json"),
         "--workdir", str(ws.repo), "--port", "0", "--log", str(ws.root / "requests.jsonl")],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, log=log,
    )  # fmt: skip
    assert proc.stdout is not None
    first = LineReader(proc.stdout).line(time.monotonic() + 30, "the mock model").decode()
    assert first.startswith("listening 127.0.0.1:"), first
    return int(first.rsplit(":", 1)[1])


def with_port(template: Path, port: int) -> str:
    return template.read_text().replace("${PORT}", str(port))


# --- coverage-gate -----------------------------------------------------------------------------


def coverage_gate() -> list[str]:
    return [PY, "-m", "coverage_gate"]


def gate_run(
    ws: Workspace, fmt: str, evidence: Path, client: list[str], *options: str
) -> list[str]:
    """`coverage-gate run` of ``client`` in the workspace, its stream read as ``fmt`` and its
    evidence written to ``evidence``."""
    return [
        *coverage_gate(), "run", "--format", fmt, *options, "-o", str(evidence),
        "--revision", ws.revision, "--repo-root", str(ws.repo), "--diff", str(ws.diff),
        "--timeout", str(CLIENT_TIMEOUT), "--", *client,
    ]  # fmt: skip


def cg(procs: Processes, *args: str | Path) -> subprocess.CompletedProcess[bytes]:
    done = procs.run(
        [*coverage_gate(), *map(str, args)],
        timeout=120,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done


def record(procs: Processes, ws: Workspace, fmt: str, stream: Path, out: Path) -> Json:
    cg(procs, "record", stream, "--format", fmt, "-o", out, "--revision", ws.revision,
       "--repo-root", ws.repo, "--diff", ws.diff)  # fmt: skip
    evidence: Json = json.loads(out.read_text())
    return evidence


def reconcile(procs: Processes, ws: Workspace, claims: Json, evidence: Path, mode: str) -> Json:
    """Reconcile with a receipt, and verify every receipt of the workspace so far offline."""
    claims_file = evidence.with_suffix(".claims.json")
    claims_file.write_text(json.dumps(claims))
    done = cg(
        procs, "reconcile", "--repo", "example/notes-service", "--revision", ws.revision,
        "--verdict", "approve", "--claims", claims_file, "--evidence", evidence,
        "--changed", ws.changed, "--mode", mode, "--repo-root", ws.repo, "--format", "json",
        "--receipt", receipts_of(ws),
    )  # fmt: skip
    decision: Json = json.loads(done.stdout)
    verified = cg(procs, "receipts", "verify", receipts_of(ws)).stdout.decode()
    count = len(list(receipts_of(ws).glob("*.receipt.json.gz")))
    assert verified == f"{count} of {count} receipt(s) verified\n"
    return decision


def receipts_of(ws: Workspace) -> Path:
    return ws.root / "receipts"


def assert_one_byte_of_evidence_fails_its_receipt(procs: Processes, ws: Workspace) -> None:
    """A receipt whose evidence differs by one byte from what was decided fails verify, named."""
    forged = ws.root / "forged-receipts"
    shutil.copytree(receipts_of(ws), forged)
    path = sorted(forged.glob("*.receipt.json.gz"))[0]
    content = gzip.decompress(path.read_bytes())
    at = content.index(b'"reads_succeeded":') + len(b'"reads_succeeded":')
    changed = content[:at] + bytes([content[at] ^ 0x01]) + content[at + 1 :]
    path.write_bytes(gzip.compress(changed, mtime=0))
    done = procs.run([*coverage_gate(), "receipts", "verify", str(forged)], timeout=120,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert done.returncode == 3, done.stderr.decode()
    assert f"receipt {path} fails: its content hashes to" in done.stderr.decode()


def file_evidence(evidence: Json) -> dict[str, Json]:
    return {entry["path"]: entry for entry in evidence["files"]}


def statuses(decision: Json) -> dict[str, str]:
    (reviewer,) = decision["reviewers"]
    return {entry["path"]: entry["status"] for entry in reviewer["files"]}


def with_status(decision: Json, status: str) -> set[str]:
    return {path for path, found in statuses(decision).items() if found == status}


def assert_honest(decision: Json) -> None:
    """Every changed file claimed and verified: the Approve stands, in enforce mode."""
    assert statuses(decision) == dict.fromkeys(CHANGED, "verified")
    assert decision["verdict_out"] == "approve"
    assert not decision["downgraded"]
    assert not decision["would_downgrade"]


def assert_caught(decision: Json, unsupported: set[str]) -> None:
    """The Approve became a Comment, and the note names each unsupported file and nothing else."""
    assert with_status(decision, "unsupported") == unsupported
    assert with_status(decision, "verified") == set(CHANGED) - unsupported
    assert decision["mode"] == "enforce"
    assert decision["verdict_in"] == "approve"
    assert decision["verdict_out"] == "comment"
    assert decision["downgraded"]
    assert "claims_unsupported" in decision["reasons"]
    for path in CHANGED:
        assert (f"`{path}`" in decision["note"]) == (path in unsupported), decision["note"]


def assert_shadow_would_downgrade(
    procs: Processes, ws: Workspace, claims: Json, evidence: Path
) -> Json:
    """In shadow mode the same review keeps its Approve and says it would downgrade."""
    shadow = reconcile(procs, ws, claims, evidence, "shadow")
    assert shadow["verdict_out"] == "approve"
    assert shadow["would_downgrade"]
    return shadow


def depths(evidence: Json) -> dict[str, str | None]:
    return {
        path: entry["depth"]["depth"] if entry["depth"] else None
        for path, entry in file_evidence(evidence).items()
    }


def assert_every_hunk_seen(evidence: Json) -> None:
    """A review that saw every changed line of every changed file: depth full for each."""
    found = file_evidence(evidence)
    for path in CHANGED:
        depth = found[path]["depth"]
        assert depth is not None, path
        assert depth["depth"] == "full", (path, depth)
        assert depth["changed_lines_seen"] == depth["changed_lines"] > 0, path
        assert depth["hunks_seen"] == depth["hunks"], path


def claims_from_text(text: str) -> Json:
    claims: Json = json.loads(text)
    assert sorted(claims["inspected_files"]) == CHANGED
    return claims


# --- pi, through `coverage-gate run` -----------------------------------------------------------


def drive_pi_rpc(proc: subprocess.Popen[bytes], transcript: Path, deadline: float) -> list[Json]:
    """What a pipeline does with pi RPC: send a prompt, read events until the final
    ``agent_end``, ask for ``get_state``, and close stdin after its response."""
    assert proc.stdin is not None
    assert proc.stdout is not None

    def send(command: Mapping[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(command).encode() + b"\n")
        proc.stdin.flush()

    events: list[Json] = []
    send({"id": "req-1", "type": "prompt", "message": PI_PROMPT})
    asked = False
    reader = LineReader(proc.stdout)
    with transcript.open("wb") as saved:
        while True:
            line = reader.line(deadline, "pi's RPC events")
            if not line:
                break
            saved.write(line)
            event = json.loads(line)
            events.append(event)
            kind = event.get("type")
            final_end = kind == "agent_end" and (
                (event.get("messages") or [{}])[-1].get("stopReason") != "error"
            )
            retry_failed = kind == "auto_retry_end" and not event.get("success")
            if (final_end or retry_failed) and not asked:
                asked = True
                send({"id": "req-2", "type": "get_state"})
            if kind == "response" and event.get("id") == "req-2":
                proc.stdin.close()
                saved.write(reader.rest(deadline, "pi to exit"))  # anything written before exit
                break
    return events


def pi_final_answer(events: list[Json]) -> str:
    ends = [event for event in events if event.get("type") == "agent_end"]
    assert ends, "pi never reached agent_end"
    last = ends[-1]["messages"][-1]
    assert last["role"] == "assistant"
    return "".join(block["text"] for block in last["content"] if block.get("type") == "text")


# pi 0.73.1 has --no-builtin-tools, and its --tools lists extension tools too; pi 0.67.4 has
# neither: its --tools names built-in tools only (it warns of cr_read as unknown) and its
# --no-tools turns off the built-in ones, leaving an extension's tools on
PI_NO_BUILTIN_TOOLS = "0.73.1"


def pi_extension_tools_only(release: Release) -> list[str]:
    """pi's options that leave it the cr_tools extension's tools and none of its own."""
    if release.at_least(PI_NO_BUILTIN_TOOLS):
        return ["--no-builtin-tools", "--tools", "cr_read,cr_diff"]
    return ["--no-tools"]


def run_pi(procs: Processes, clients: Clients, ws: Workspace, scenario: str) -> tuple[Json, Json]:
    """pi under `coverage-gate run`; returns (evidence of run, claims)."""
    port = start_mock(procs, ws, scenario)
    agentdir = ws.root / "agentdir"
    agentdir.mkdir()
    (agentdir / "models.json").write_text(with_port(KIT / "models.json", port))
    shutil.copy(KIT / "cr_tools.mjs", ws.root / "cr_tools.mjs")
    env = ws.env(
        PI_CODING_AGENT_DIR=str(agentdir), PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1",
        PI_TELEMETRY="0", CR_DIFF_PATH=str(ws.diff),
    )  # fmt: skip
    evidence_path = ws.root / "pi.run.evidence.json"
    pi = [
        str(clients.pi), "--mode", "rpc", "--provider", "mock", "--model", "mock-model",
        "--no-session", *pi_extension_tools_only(clients.release),
        "-e", str(ws.root / "cr_tools.mjs"), "--no-extensions", "--no-skills",
        "--no-prompt-templates", "--no-themes", "--no-context-files",
        "--system-prompt", PI_SYSTEM,
    ]  # fmt: skip
    evidence, events = drive_pi_under_gate(procs, ws, pi, env, evidence_path)
    return evidence, claims_from_text(pi_final_answer(events))


def drive_pi_under_gate(
    procs: Processes, ws: Workspace, pi: list[str], env: Mapping[str, str], evidence_path: Path
) -> tuple[Json, list[Json]]:
    """pi (the command ``pi``) under `coverage-gate run --format pi-rpc`, driven over its RPC
    stdin through our pass-through; returns (the evidence `run` wrote, pi's RPC events), having
    checked that `record` gives the same evidence of the stream `run` passed through."""
    stderr = ws.root / "pi.stderr"
    proc = procs.start(
        gate_run(ws, "pi-rpc", evidence_path, pi), cwd=ws.repo, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, log=stderr,
    )  # fmt: skip
    deadline = time.monotonic() + CLIENT_TIMEOUT
    events = drive_pi_rpc(proc, ws.root / "pi.jsonl", deadline)
    try:
        code = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    except subprocess.TimeoutExpired:
        pytest.fail("`coverage-gate run` did not exit after pi's stdin closed")
    assert code == 0, stderr.read_text()
    recorded = record(procs, ws, "pi-rpc", ws.root / "pi.jsonl", ws.root / "pi.record.json")
    evidence: Json = json.loads(evidence_path.read_text())
    assert evidence == recorded
    return evidence, events


def test_pi_honest_reviewer_through_run_keeps_its_approve(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """pi pages the whole diff and reads all six changed files (two in parallel, one ranged):
    `run` records every read, the same as `record` does, and the Approve stands."""
    evidence, claims = run_pi(procs, clients, workspace, "pi_honest")
    assert evidence["stream_complete"]
    assert evidence["capability"] == "per_file"
    assert evidence["diff_status"] == "complete"
    files = file_evidence(evidence)
    for path in CHANGED:
        assert files[path]["reads_succeeded"] == 1, path
        assert files[path]["reads_failed"] == 0, path
    assert_every_hunk_seen(evidence)
    assert_honest(
        reconcile(procs, workspace, claims, workspace.root / "pi.run.evidence.json", "enforce")
    )


def test_pi_overclaiming_reviewer_through_run_is_downgraded(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """pi pages only README.md's part of the diff, reads two files, fails to read a missing
    file (thrown) and strings.py past its end (returned error), yet claims all six: the three
    files with no successful read or covering diff page are unsupported; enforce → Comment;
    shadow keeps the Approve but says it would downgrade."""
    evidence, claims = run_pi(procs, clients, workspace, "pi_overclaim")
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    assert files["src/api/handlers.py"]["reads_succeeded"] == 1
    assert files["src/api/models.py"]["reads_succeeded"] == 1  # spelled "@src/api/models.py"
    assert files["src/api/handler.py"]["reads_failed"] == 1
    assert files["src/util/strings.py"]["reads_succeeded"] == 0
    assert files["src/util/strings.py"]["reads_failed"] == 1
    assert files["README.md"]["diff_pages_succeeded"] == 1
    assert "docs/guide.md" not in files
    assert evidence["diff_status"] == "partial"
    path = workspace.root / "pi.run.evidence.json"
    unsupported = {"docs/guide.md", "src/util/strings.py", "tests/test_handlers.py"}
    assert_caught(reconcile(procs, workspace, claims, path, "enforce"), unsupported)
    assert_shadow_would_downgrade(procs, workspace, claims, path)


# --- citations, replayed (pi, through `coverage-gate run`) -------------------------------------


def test_pi_reviewer_citing_a_line_that_is_not_there_is_downgraded(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """pi reads every changed file, and its final answer cites two lines: `MAX_BODY = 10_000`
    at src/api/models.py:6 (there) and a `return 400` at src/api/handlers.py:14 (invented: the
    code returns 413 on the next line). Every claim is verified by evidence; the fabricated
    citation alone turns the Approve into a Comment in enforce, and the note names it, its line,
    what stands there and why. Shadow keeps the Approve and says it would downgrade."""
    evidence, claims = run_pi(procs, clients, workspace, "pi_citations")
    assert evidence["stream_complete"]
    path = workspace.root / "pi.run.evidence.json"
    decision = reconcile(procs, workspace, claims, path, "enforce")
    assert statuses(decision) == dict.fromkeys(CHANGED, "verified")
    assert decision["verdict_out"] == "comment"
    assert decision["reasons"] == ["citations_failed"]
    (reviewer,) = decision["reviewers"]
    assert reviewer["coverage"] == "incomplete_citations"
    checks = reviewer["citations"]["checks"]
    assert [(c["file"], c["line"], c["outcome"]) for c in checks] == [
        ("src/api/models.py", 6, "matched"),
        ("src/api/handlers.py", 14, "failed"),
    ]
    assert not any(c["uncorroborated"] for c in checks)
    assert (
        '- `src/api/handlers.py` line 14, cited by `reviewer` as `return 400, {"error": "body too '
        'long"}`: line 14 reads `except ValueError:` at '
        f"{workspace.revision[:12]}, and no line within 3 of it holds the cited content"
    ) in decision["note"]
    assert "MAX_BODY" not in decision["note"]
    shadow = assert_shadow_would_downgrade(procs, workspace, claims, path)
    assert shadow["citations_would_downgrade"]
    assert_cited_lines_are_recorded_and_verify_offline(procs, workspace)


def assert_cited_lines_are_recorded_and_verify_offline(procs: Processes, ws: Workspace) -> None:
    """The receipts hold the cited files' lines replay looked at, never the whole file, and
    verify with the repository gone: its files' answers come from the record alone."""
    for path in sorted(receipts_of(ws).glob("*.receipt.json.gz")):
        receipt = json.loads(gzip.decompress(path.read_bytes()))
        files = {f["path"]: f for f in receipt["ports"]["files"]}
        assert set(files) == {"src/api/models.py", "src/api/handlers.py"}
        assert receipt["inputs"]["citation_policy"] == "downgrade"
        handlers = files["src/api/handlers.py"]
        assert handlers["state"] == "text"
        numbers = [line["number"] for line in handlers["lines"]]
        assert numbers == list(range(11, 18))  # line 14 and the 3 either side of it
        assert handlers["line_count"] > len(numbers)
    shutil.rmtree(ws.repo)
    verified = cg(procs, "receipts", "verify", receipts_of(ws)).stdout.decode()
    assert verified == "2 of 2 receipt(s) verified\n"


# --- Claude Code -------------------------------------------------------------------------------


def claude_env(ws: Workspace, port: int) -> dict[str, str]:
    return ws.env(
        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY="dummy",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
    )  # fmt: skip


def claude_command(clients: Clients) -> list[str]:
    return [str(clients.claude), "-p", SHELL_PROMPT, "--output-format", "stream-json",
            "--verbose", "--allowedTools", "Read,Bash"]  # fmt: skip


def claude_claims(stream: Path) -> Json:
    """The claims of Claude Code's final answer: the last line, of type ``result``."""
    lines = [json.loads(line) for line in stream.read_bytes().splitlines() if line.strip()]
    result = lines[-1]
    assert result["type"] == "result", result
    return claims_from_text(result["result"])


def run_claude(
    procs: Processes, clients: Clients, ws: Workspace, scenario: str
) -> tuple[Json, Json]:
    """Claude Code (``-p --output-format stream-json``) run directly; returns (the evidence
    `record` gives of its stream, written to ``claude.evidence.json``, claims)."""
    port = start_mock(procs, ws, scenario)
    stream = ws.root / "claude.jsonl"
    with stream.open("wb") as out, (ws.root / "claude.stderr").open("wb") as err:
        done = procs.run(
            claude_command(clients), cwd=ws.repo, env=claude_env(ws, port),
            stdin=subprocess.DEVNULL, stdout=out, stderr=err,
        )  # fmt: skip
    assert done.returncode == 0, (ws.root / "claude.stderr").read_text()
    evidence = record(procs, ws, "claude-code", stream, ws.root / "claude.evidence.json")
    return evidence, claude_claims(stream)


def test_claude_code_honest_reviewer_keeps_its_approve(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Claude Code reads all six files (absolute and relative paths, two in parallel, one
    ranged): each is verified and the Approve stands in enforce mode."""
    evidence, claims = run_claude(procs, clients, workspace, "claude_honest")
    evidence_path = workspace.root / "claude.evidence.json"
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    for path in CHANGED:
        assert files[path]["reads_succeeded"] == 1, path
    assert files["src/util/strings.py"]["partial"]
    # lines 1-8 by its ranged Read, and the hunk lines its `git diff` showed (line 9 among them)
    assert files["src/util/strings.py"]["lines_seen"] == [{"start": 1, "end": 9}]
    assert files["src/util/strings.py"]["content"]["matched"] == 1
    assert_every_hunk_seen(evidence)  # lines 1-8 of strings.py hold all of its changes
    assert_honest(reconcile(procs, workspace, claims, evidence_path, "enforce"))


def assert_two_read_two_failed(evidence: Json) -> None:
    """What the Claude Code and Codex overclaiming runs did: the stream ended, handlers.py and
    models.py were read, and the reads of a missing file and of a directory failed."""
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    assert files["src/api/handlers.py"]["reads_succeeded"] == 1
    assert files["src/api/models.py"]["reads_succeeded"] == 1
    assert files["src/api/handler.py"]["reads_failed"] == 1
    assert files["src/util"]["reads_failed"] == 1


def test_claude_code_overclaiming_reviewer_is_downgraded(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Claude Code reads two files; its reads of a missing file and of a directory fail; it
    claims all six. The four never successfully read are unsupported: Approve → Comment."""
    evidence, claims = run_claude(procs, clients, workspace, "claude_overclaim")
    evidence_path = workspace.root / "claude.evidence.json"
    assert_two_read_two_failed(evidence)
    unsupported = {"README.md", "docs/guide.md", "src/util/strings.py", "tests/test_handlers.py"}
    assert_caught(reconcile(procs, workspace, claims, evidence_path, "enforce"), unsupported)
    assert_one_byte_of_evidence_fails_its_receipt(procs, workspace)


# --- Codex -------------------------------------------------------------------------------------


def codex_home(ws: Workspace, port: int) -> Path:
    """A CODEX_HOME in the fresh HOME (made on the first call) whose config points at the mock
    model on ``port``."""
    home = ws.home / ".codex"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(with_port(KIT / "codex_config.toml", port))
    return home


@contextlib.contextmanager
def codex_daemon_dir_removed() -> Iterator[None]:
    """Codex makes /tmp/codex-daemon-<uid> whatever TMPDIR says; remove it if we caused it."""
    daemon_dir = Path("/tmp") / f"codex-daemon-{os.getuid()}"
    existed = daemon_dir.exists()
    try:
        yield
    finally:
        if not existed:
            with contextlib.suppress(OSError):  # not empty or already gone: leave it
                daemon_dir.rmdir()


def codex_claims(stream: Path) -> Json:
    """The claims of the last agent message in a `codex exec --json` stream."""
    messages = [
        event["item"]["text"]
        for event in map(json.loads, stream.read_bytes().splitlines())
        if event.get("type") == "item.completed" and event["item"].get("type") == "agent_message"
    ]
    assert messages, "codex gave no final answer"
    return claims_from_text(messages[-1])


def codex_exec(
    procs: Processes, clients: Clients, ws: Workspace, scenario: str, *flags: str
) -> tuple[Path, Path]:
    """``codex exec --json [flags]`` of ``scenario`` with ``CODEX_HOME`` in the fresh HOME (made
    on the first run, its config pointed at this run's mock model): (the exec stream, the
    home)."""
    home = codex_home(ws, start_mock(procs, ws, scenario))
    env = ws.env(CODEX_HOME=str(home), MOCK_API_KEY="dummy")
    stream = ws.root / f"{scenario}.exec.jsonl"
    with (
        codex_daemon_dir_removed(),
        stream.open("wb") as out,
        (ws.root / "codex.stderr").open("wb") as err,
    ):
        done = procs.run(
            [str(clients.codex), "exec", "--json", *flags, SHELL_PROMPT],
            cwd=ws.repo, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
        )  # fmt: skip
    assert done.returncode == 0, (ws.root / "codex.stderr").read_text()
    return stream, home


def run_codex(
    procs: Processes, clients: Clients, ws: Workspace, scenario: str
) -> tuple[Json, Path, Json]:
    """Codex exec --json; returns (the evidence `record` gives of its session rollout file,
    written to ``codex.rollout.evidence.json``, the exec stream, claims)."""
    stream, home = codex_exec(procs, clients, ws, scenario)
    (rollout,) = home.glob("sessions/*/*/*/rollout-*.jsonl")
    evidence = record(procs, ws, "codex-rollout", rollout, ws.root / "codex.rollout.evidence.json")
    return evidence, stream, codex_claims(stream)


def exec_decision(procs: Processes, ws: Workspace, stream: Path, claims: Json) -> Json:
    """`codex exec --json` parses no reads: its evidence is what the commands printed (evidence
    by content), and the decision under enforce."""
    evidence_path = ws.root / "codex.exec.evidence.json"
    evidence = record(procs, ws, "codex-exec", stream, evidence_path)
    assert evidence["capability"] == "per_file"
    assert all(entry["reads_succeeded"] == 0 for entry in evidence["files"])
    return reconcile(procs, ws, claims, evidence_path, "enforce")


def test_codex_honest_reviewer_keeps_its_approve(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Codex reads all six files with shell commands its harness parses as reads: from the
    rollout each is verified and the Approve stands; from exec --json each is unknown (what
    the commands printed may not all have reached the model), and the Approve stands too."""
    evidence, stream, claims = run_codex(procs, clients, workspace, "codex_honest")
    evidence_path = workspace.root / "codex.rollout.evidence.json"
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    for path in CHANGED:
        assert files[path]["reads_succeeded"] == 1, path
    # sed -n '1,200p': what came back is the whole of models.py's 46 lines, told by its text
    assert files["src/api/models.py"]["lines_seen"] == [{"start": 1, "end": 46}]
    assert_every_hunk_seen(evidence)
    assert_honest(reconcile(procs, workspace, claims, evidence_path, "enforce"))
    # exec --json holds each whole output while the model may have received a cut of it
    # (DESIGN §6 rule 26): what it printed is unknown, never verified, and the Approve stands
    decided = exec_decision(procs, workspace, stream, claims)
    assert statuses(decided) == dict.fromkeys(CHANGED, "unknown")
    assert decided["verdict_out"] == "approve"
    assert not decided["downgraded"]
    # with the thread's rollout at hand under CODEX_HOME, record takes it in the exec
    # stream's place: the exec stream is decided exactly, as the rollout is
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CODEX_HOME", str(workspace.home / ".codex"))
        found = record(procs, workspace, "codex-exec", stream, workspace.root / "exec.found.json")
    assert found["source"] == "codex-rollout"
    assert file_evidence(found) == files


def test_codex_overclaiming_reviewer_is_downgraded(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Codex reads two files; `cat` of a missing file and of a directory exit 1; it claims all
    six. From the rollout the four never read are unsupported: Approve → Comment. From exec
    --json the same four (its `git diff --stat` names files and shows none of their lines),
    and the two it printed are unknown, not verified (DESIGN §6 rule 26)."""
    evidence, stream, claims = run_codex(procs, clients, workspace, "codex_overclaim")
    evidence_path = workspace.root / "codex.rollout.evidence.json"
    assert_two_read_two_failed(evidence)
    unsupported = {"README.md", "docs/guide.md", "src/util/strings.py", "tests/test_handlers.py"}
    assert_caught(reconcile(procs, workspace, claims, evidence_path, "enforce"), unsupported)
    decided = exec_decision(procs, workspace, stream, claims)
    assert with_status(decided, "unsupported") == unsupported
    assert with_status(decided, "unknown") == set(CHANGED) - unsupported  # rule 26
    assert decided["verdict_out"] == "comment"


# A reviewer whose command forges or hides its own rollout (DESIGN §6 rule 27): an honest run
# first leaves a rollout of all six reads under CODEX_HOME; the next run, under -s
# workspace-write with CODEX_HOME in its /tmp home, has one command (a Python heredoc, output to
# /dev/null) that copies that rollout under its own thread's name (beside its real one, or in its
# place) or hides its real rollout and then cats every file.
FORGERIES = {
    "add": ("rollout_rejected", "2 files are named as its rollout"),
    "replace": ("rollout_rejected", "does not tell the exec stream's story"),
    "hide": ("rollout_missing", "no rollout of thread"),
}


@pytest.mark.parametrize("way", sorted(FORGERIES))
def test_codex_a_rollout_the_reviewers_own_command_forged_or_hid_verifies_nothing(
    way: str, clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    reason, said = FORGERIES[way]
    codex_exec(procs, clients, workspace, "codex_honest")
    stream, home = codex_exec(
        procs, clients, workspace, f"codex_rollout_{way}", "-s", "workspace-write"
    )
    thread = json.loads(stream.read_bytes().split(b"\n", 1)[0])["thread_id"]
    if way != "hide":
        # what was forged would verify all six files were it recorded as it stands
        (forged,) = (
            path
            for path in home.glob(f"sessions/*/*/*/rollout-*-{thread}.jsonl")
            if "9999" in str(path) or way == "replace"
        )
        alone = record(procs, workspace, "codex-rollout", forged, workspace.root / "forged.json")
        assert {entry["path"] for entry in alone["files"] if entry["reads_succeeded"]} == set(
            CHANGED
        )
    out = workspace.root / f"{way}.evidence.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CODEX_HOME", str(home))
        evidence = record(procs, workspace, "codex-exec", stream, out)
    assert evidence["source"] == "codex-exec"
    assert evidence["cannot_verify"]["reason"] == reason
    assert said in evidence["cannot_verify"]["detail"]
    decided = reconcile(procs, workspace, codex_claims(stream), out, "enforce")
    assert f"({reason})" in decided["note"]
    if way == "hide":
        # it cat'ed every file: each is unknown, named, and the thread is said by name
        assert statuses(decided) == dict.fromkeys(CHANGED, "unknown")
        assert f"thread {thread}" in decided["note"]
    else:
        # its one command printed nothing: no claim has evidence, Approve → Comment
        assert statuses(decided) == dict.fromkeys(CHANGED, "unsupported")
        assert decided["verdict_out"] == "comment"


# --- the clients' own telemetry, through `coverage-gate run --telemetry-intake` ------------------


def run_with_telemetry(
    procs: Processes, ws: Workspace, client: str, fmt: str, command: list[str], env: dict[str, str]
) -> tuple[Path, Json, Json, str]:
    """The client under `coverage-gate run`, its stdout recorded as ``fmt`` and its own
    telemetry received on loopback; returns (stdout, stream evidence, telemetry evidence,
    run's stderr)."""
    out, tel = ws.root / f"{client}.run.evidence.json", ws.root / f"{client}.telemetry.json"
    stream, stderr = ws.root / f"{client}.run.jsonl", ws.root / f"{client}.run.stderr"
    gate = gate_run(
        ws, fmt, out, command, "--telemetry-intake", client, "--telemetry-output", str(tel)
    )
    with stream.open("wb") as saved, stderr.open("wb") as err:
        done = procs.run(
            gate, cwd=ws.repo, env=env, stdin=subprocess.DEVNULL, stdout=saved, stderr=err
        )
    assert done.returncode == 0, stderr.read_text()
    return stream, json.loads(out.read_text()), json.loads(tel.read_text()), stderr.read_text()


def test_claude_code_own_telemetry_gives_the_evidence_and_decision_of_its_stream(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Claude Code reviews with its telemetry pointed at `run`'s receiver (logs and traces,
    OTEL_LOG_TOOL_DETAILS=1): the telemetry records the same reads and failures as the stream,
    the two agree call by call; decided from the telemetry alone, the four files never
    successfully read are unsupported (Approve → Comment) and the two read are unknown, since
    the reviewer's own commands could have sent those spans."""
    port = start_mock(procs, workspace, "claude_overclaim")
    stream, evidence, telemetry, stderr = run_with_telemetry(
        procs, workspace, "claude-code", "claude-code", claude_command(clients),
        claude_env(workspace, port),
    )  # fmt: skip
    assert telemetry["source"] == "otlp-json"
    assert telemetry["stream_complete"]
    assert telemetry["capability"] == "per_file"
    counts = {e["path"]: (e["reads_succeeded"], e["reads_failed"]) for e in telemetry["files"]}
    assert counts == {
        p: (e["reads_succeeded"], e["reads_failed"]) for p, e in file_evidence(evidence).items()
    }
    assert counts["src/api/handler.py"] == (0, 1)
    assert counts["src/util"] == (0, 1)
    assert "agree on every call" in stderr
    claims = claude_claims(stream)
    unsupported = {"README.md", "docs/guide.md", "src/util/strings.py", "tests/test_handlers.py"}
    decision = reconcile(
        procs, workspace, claims, workspace.root / "claude-code.telemetry.json", "enforce"
    )
    # the receiver is one the reviewer's commands can reach (DESIGN §6 rule 27): the two reads
    # it shows are unknown, never verified; the four it shows no read of stay unsupported
    assert with_status(decision, "unsupported") == unsupported
    assert with_status(decision, "unknown") == set(CHANGED) - unsupported
    assert decision["verdict_out"] == "comment"
    assert "(telemetry_intake)" in decision["note"]


def test_codex_own_telemetry_names_shell_commands_only_and_proves_nothing(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Codex reviews with `-c otel.exporter=...` pointed at `run`'s receiver: its tool results
    are shell commands (and say success for `cat` of a missing file), so the telemetry's
    evidence has capability none: every claim unknown, the Approve stands."""
    port = start_mock(procs, workspace, "codex_overclaim")
    env = workspace.env(CODEX_HOME=str(codex_home(workspace, port)), MOCK_API_KEY="dummy")
    with codex_daemon_dir_removed():
        stream, _evidence, telemetry, stderr = run_with_telemetry(
            procs, workspace, "codex", "codex-exec",
            [str(clients.codex), "exec", "--json", SHELL_PROMPT], env,
        )  # fmt: skip
    assert telemetry["capability"] == "none"
    assert telemetry["files"] == []
    assert telemetry["stream_complete"]
    assert telemetry["counters"]["calls"] == telemetry["counters"]["ignored"] == 5
    assert "not compared with the stream" in stderr
    claims = codex_claims(stream)
    decision = reconcile(
        procs, workspace, claims, workspace.root / "codex.telemetry.json", "enforce"
    )
    assert statuses(decision) == dict.fromkeys(CHANGED, "unknown")
    assert decision["verdict_out"] == "approve"


# --- Gemini CLI and Qwen Code, through `coverage-gate run` --------------------------------------


@dataclass(frozen=True)
class GeminiQwen:
    gemini: Path
    qwen: Path


@pytest.fixture
def gemini_qwen(release: Release) -> GeminiQwen:
    """Gemini CLI and Qwen Code at ``release`` (the test runs one of them)."""
    found = GeminiQwen(gemini=release.bin / "gemini", qwen=release.bin / "qwen")
    require_installed(found.gemini, found.qwen, release=release)
    return found


def run_under_gate(
    procs: Processes,
    ws: Workspace,
    fmt: str,
    client: list[str],
    env: dict[str, str],
    *,
    name: str | None = None,
    compare: bool = True,
) -> tuple[Json, Path]:
    """The client under `coverage-gate run --format FMT`, its stdout saved as ``NAME.jsonl``
    and its evidence as ``NAME.run.evidence.json`` (``NAME`` is ``fmt`` unless given); returns
    (the evidence `run` recorded, the saved stream). ``compare``: check that `record` reads the
    same evidence from that stream."""
    name = name or fmt
    evidence_path = ws.root / f"{name}.run.evidence.json"
    stream, stderr = ws.root / f"{name}.jsonl", ws.root / f"{name}.stderr"
    command = gate_run(ws, fmt, evidence_path, client)
    with stream.open("wb") as out, stderr.open("wb") as err:
        done = procs.run(
            command, cwd=ws.repo, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
    assert done.returncode == 0, stderr.read_text()
    evidence: Json = json.loads(evidence_path.read_text())
    if compare:
        assert evidence == record(procs, ws, fmt, stream, ws.root / f"{name}.record.json")
    return evidence, stream


def run_gemini(
    procs: Processes, clients: GeminiQwen, ws: Workspace, scenario: str
) -> tuple[Json, Json]:
    """Gemini CLI (Gemini API route of the mock) under `coverage-gate run`; returns (evidence,
    claims: the assistant text after its last tool call). An honest run's evidence is checked
    against `record` of the same stream."""
    port = start_mock(procs, ws, scenario)
    (ws.home / ".gemini").mkdir()
    shutil.copy(KIT / "gemini_settings.json", ws.home / ".gemini" / "settings.json")
    env = ws.env(
        GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}", GEMINI_API_KEY="dummy",
        GEMINI_CLI_NO_RELAUNCH="true",  # one node process, not a second with a larger heap
    )  # fmt: skip
    client = [
        str(clients.gemini), "-p", SHELL_PROMPT, "--output-format", "stream-json", "--yolo",
        "--skip-trust", "-m", "gemini-2.5-pro",
    ]  # fmt: skip
    compare = scenario.endswith("honest")
    evidence, stream = run_under_gate(
        procs, ws, "gemini-cli", client, env, name="gemini", compare=compare
    )
    answer: list[str] = []
    for event in map(json.loads, stream.read_bytes().splitlines()):
        if event.get("type") in ("tool_use", "tool_result"):
            answer.clear()
        elif event.get("type") == "message" and event.get("role") == "assistant":
            answer.append(event["content"])
    return evidence, claims_from_text("".join(answer))


def run_qwen(
    procs: Processes, clients: GeminiQwen, ws: Workspace, scenario: str
) -> tuple[Json, Json]:
    """Qwen Code (OpenAI Chat route of the mock) under `coverage-gate run`; returns (evidence,
    claims: the final `result` line's text). An honest run's evidence is checked against
    `record` of the same stream."""
    port = start_mock(procs, ws, scenario)
    (ws.home / ".qwen").mkdir()
    shutil.copy(KIT / "qwen_settings.json", ws.home / ".qwen" / "settings.json")
    env = ws.env(
        OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="dummy",
        OPENAI_MODEL="mock-model",
    )  # fmt: skip
    client = [
        str(clients.qwen), "-p", SHELL_PROMPT, "--output-format", "stream-json", "--yolo",
        "--auth-type", "openai",
    ]  # fmt: skip
    compare = scenario.endswith("honest")
    evidence, stream = run_under_gate(
        procs, ws, "qwen-code", client, env, name="qwen", compare=compare
    )
    last = json.loads(stream.read_bytes().splitlines()[-1])
    assert last["type"] == "result", last
    return evidence, claims_from_text(last["result"])


def assert_honest_reads(evidence: Json, strings_end: int = 8) -> None:
    """Every changed file read once, strings.py as lines 1-8 (which hold all of its additions;
    ``strings_end`` 9 where the client carries its whole `git diff` output, whose hunk shows
    line 9), the others whole (told with the workspace's files). Every changed line seen where
    the whole diff reached the model; else every added line, and the deletions only as far as
    the diff the model got showed them (a read of the new file cannot show a removal)."""
    assert evidence["stream_complete"]
    assert evidence["capability"] == "per_file"
    files = file_evidence(evidence)
    for path in CHANGED:
        assert (files[path]["reads_succeeded"], files[path]["reads_failed"]) == (1, 0), path
        assert files[path]["lines_seen_whole"] is (path != "src/util/strings.py"), path
    assert files["src/util/strings.py"]["partial"]
    assert files["src/util/strings.py"]["lines_seen"] == [{"start": 1, "end": strings_end}]
    if strings_end == 9:
        assert_every_hunk_seen(evidence)
        return
    for path in CHANGED:
        depth = files[path]["depth"]
        assert depth is not None, path
        assert depth["depth"] in ("full", "partial"), (path, depth)
        assert depth["hunks_seen"] == depth["hunks"], path


def assert_overclaim_reads(evidence: Json) -> dict[str, Json]:
    """What both overclaiming runs share: a missing file and a directory failed, README.md
    read past its end (nothing), docs/guide.md lines 1-3 (none of its change), strings.py only
    named by `wc -l` through the shell (a decoy: its output holds no line of the file) and
    tests/test_handlers.py only through the unregistered read_many_files (no evidence for
    either)."""
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    assert files["src/api/handlers.py"]["reads_succeeded"] == 1
    assert files["src/api/models.py"]["reads_succeeded"] == 1
    assert files["src/api/handler.py"]["reads_failed"] == 1
    assert files["src/util"]["reads_failed"] == 1
    readme = files["README.md"]
    assert (readme["reads_succeeded"], readme["reads_failed"], readme["reads_empty"]) == (0, 0, 1)
    assert files["docs/guide.md"]["lines_seen"] == [{"start": 1, "end": 3}]
    assert files["docs/guide.md"]["depth"]["depth"] == "none"
    assert "src/util/strings.py" not in files
    assert "tests/test_handlers.py" not in files
    return files


OVERCLAIMED = {"README.md", "src/util/strings.py", "tests/test_handlers.py"}


def test_gemini_cli_honest_reviewer_through_run_keeps_its_approve(
    gemini_qwen: GeminiQwen, procs: Processes, workspace: Workspace
) -> None:
    """Gemini CLI reads all six files (relative and absolute paths, two in one turn, one by
    start_line/end_line): `run` records every read as `record` does, and the Approve stands."""
    evidence, claims = run_gemini(procs, gemini_qwen, workspace, "gemini_honest")
    # its `git diff` output is credited by content: the hunk of strings.py shows line 9
    diff_shown = _shell_output_holds(workspace.root / "gemini.jsonl", "+++ b/src/util/strings.py")
    assert_honest_reads(evidence, strings_end=9 if diff_shown else 8)
    path = workspace.root / "gemini.run.evidence.json"
    assert_honest(reconcile(procs, workspace, claims, path, "enforce"))


def test_gemini_cli_overclaiming_reviewer_through_run_is_downgraded(
    gemini_qwen: GeminiQwen, procs: Processes, workspace: Workspace
) -> None:
    """Gemini CLI claims all six; its shell `wc -l` (success) and its call of the unregistered
    read_many_files show nothing of the files they name, and README.md read past its end
    returned nothing: those three are unsupported, enforce → Comment, shadow would downgrade."""
    evidence, claims = run_gemini(procs, gemini_qwen, workspace, "gemini_overclaim")
    assert_overclaim_reads(evidence)
    kinds = {issue["kind"] for issue in evidence["issues"]}
    assert kinds == {"empty_result"}
    path = workspace.root / "gemini.run.evidence.json"
    assert_caught(reconcile(procs, workspace, claims, path, "enforce"), OVERCLAIMED)
    assert_shadow_would_downgrade(procs, workspace, claims, path)


def test_qwen_code_honest_reviewer_through_run_keeps_its_approve(
    gemini_qwen: GeminiQwen, procs: Processes, workspace: Workspace, release: Release
) -> None:
    """Qwen Code reads all six files (absolute paths, two in one turn, one by a 0-based offset
    and a limit): `run` records every read as `record` does, and the Approve stands.

    Qwen Code 0.24.4 gives the model its `git diff` output whole (4,569 characters), and the
    stream's ``tool_result`` carries it: its hunk of strings.py shows line 9. Qwen Code 0.23.0
    cuts a shell command's output to its first 3,072 characters, with no notice, in what the
    model gets and in the stream alike: strings.py's hunk is past the cut, and its lines seen
    are the ranged read's 1-8. On a loaded machine either release may hand back less of the
    output (even none): line 9 counts exactly when the stream carries that hunk."""
    evidence, claims = run_qwen(procs, gemini_qwen, workspace, "qwen_honest")
    diff_shown = _shell_output_holds(workspace.root / "qwen.jsonl", "+++ b/src/util/strings.py")
    assert_honest_reads(evidence, strings_end=9 if diff_shown else 8)
    path = workspace.root / "qwen.run.evidence.json"
    assert_honest(reconcile(procs, workspace, claims, path, "enforce"))


def _shell_output_holds(stream: Path, text: str) -> bool:
    """Whether a `tool_result` in the stream carries ``text`` (what the model was given): a
    Qwen Code ``tool_result`` block, or a Gemini CLI ``tool_result`` line's ``output``."""
    for raw in stream.read_bytes().splitlines():
        line = json.loads(raw)
        output = line.get("output") if line.get("type") == "tool_result" else None
        if isinstance(output, str) and text in output:
            return True
        for block in (line.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                if text in (content if isinstance(content, str) else json.dumps(content)):
                    return True
    return False


def test_qwen_code_overclaiming_reviewer_through_run_is_downgraded(
    gemini_qwen: GeminiQwen, procs: Processes, workspace: Workspace
) -> None:
    """Qwen Code claims all six; besides what Gemini CLI's run shows, its relative read of
    models.py fails (Qwen Code takes absolute paths only) and a later offset 30, limit 17 reads
    lines 31-47; a repeated read of handlers.py answered from its cache returned nothing."""
    evidence, claims = run_qwen(procs, gemini_qwen, workspace, "qwen_overclaim")
    files = assert_overclaim_reads(evidence)
    assert files["src/api/models.py"]["reads_failed"] == 1
    assert files["src/api/models.py"]["lines_seen"] == [{"start": 31, "end": 47}]
    assert files["src/api/models.py"]["depth"]["depth"] == "partial"
    assert files["src/api/handlers.py"]["reads_empty"] == 1
    path = workspace.root / "qwen.run.evidence.json"
    assert_caught(reconcile(procs, workspace, claims, path, "enforce"), OVERCLAIMED)


# --- depth: what the calls showed of each change ------------------------------------------------


def test_pi_depth_page_ending_in_a_header_and_a_ranged_read_away_from_the_change(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """pi pages bytes 0-404 of the diff: README.md whole and 24 bytes of docs/guide.md's
    ``diff --git`` line, which is no evidence for docs/guide.md. Its byte-ranged read of
    handlers.py (bytes 0-90, told in lines with the workspace's file) shows lines 1-4, none of
    the change: depth none. A whole read of strings.py sees every line the change added, and
    not the one it removed (only a diff shows a removal): depth partial."""
    evidence, claims = run_pi(procs, clients, workspace, "pi_depth")
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    assert "docs/guide.md" not in files
    assert files["README.md"]["diff_pages_succeeded"] == 1
    handlers = files["src/api/handlers.py"]
    assert handlers["ranges"] == [{"offset": 0, "end": 90, "total": 979}]
    assert handlers["lines_seen"] == [{"start": 1, "end": 4}]
    assert handlers["depth"]["depth"] == "none"
    assert handlers["depth"]["hunks_seen"] == 0
    assert depths(evidence) == {
        "README.md": "full",
        "src/api/handlers.py": "none",
        "src/util/strings.py": "partial",
    }
    path = workspace.root / "pi.run.evidence.json"
    unsupported = {"docs/guide.md", "src/api/models.py", "tests/test_handlers.py"}
    assert_caught(reconcile(procs, workspace, claims, path, "enforce"), unsupported)


def test_claude_code_depth_read_past_the_end_is_no_evidence(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """Claude Code reads README.md from line 500 (it has 17): no ``is_error``, zero lines, so
    no evidence and README.md is unsupported. Lines 1-4 of handlers.py show none of its change;
    lines 30-46 of models.py some of it; a whole read of strings.py every line the change added
    to it, not the one it removed (only a diff shows a removal): partial."""
    evidence, claims = run_claude(procs, clients, workspace, "claude_depth")
    evidence_path = workspace.root / "claude.evidence.json"
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    readme = files["README.md"]
    assert (readme["reads_succeeded"], readme["reads_failed"], readme["reads_empty"]) == (0, 0, 1)
    assert "empty_result" in {issue["kind"] for issue in evidence["issues"]}
    assert files["src/api/handlers.py"]["lines_seen"] == [{"start": 1, "end": 4}]
    # Claude Code counts the empty string after a file's last newline as a line (models.py's 46
    # lines read from line 30 are reported as 18 lines, strings.py's 16 as 17); what came back
    # is told against the file at the revision, which ends at 46 and 16
    assert files["src/api/models.py"]["lines_seen"] == [{"start": 30, "end": 46}]
    assert files["src/util/strings.py"]["lines_seen"] == [{"start": 1, "end": 16}]
    assert files["src/util/strings.py"]["lines_seen_whole"]
    assert depths(evidence) == {
        "README.md": None,
        "src/api/handlers.py": "none",
        "src/api/models.py": "partial",
        "src/util/strings.py": "partial",
    }
    unsupported = {"README.md", "docs/guide.md", "tests/test_handlers.py"}
    assert_caught(reconcile(procs, workspace, claims, evidence_path, "enforce"), unsupported)


def test_codex_depth_command_ranges(
    clients: Clients, procs: Processes, workspace: Workspace
) -> None:
    """From the rollout: ``sed -n '1,5p'`` of handlers.py is lines 1-5 (depth none, no longer
    a whole read); ``tail -n 5`` of strings.py is told with the workspace's file (lines 12-16,
    none); a pipe is a read of unknown lines (depth unknown); ``cat`` is whole (full); a ``sed``
    past the end of docs/guide.md printed nothing: no evidence."""
    evidence, _stream, claims = run_codex(procs, clients, workspace, "codex_depth")
    evidence_path = workspace.root / "codex.rollout.evidence.json"
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    handlers = files["src/api/handlers.py"]
    assert handlers["partial"]
    assert handlers["lines_seen"] == [{"start": 1, "end": 5}]
    assert files["src/util/strings.py"]["lines_seen"] == [{"start": 12, "end": 16}]
    guide = files["docs/guide.md"]
    assert (guide["reads_succeeded"], guide["reads_empty"]) == (0, 1)
    assert depths(evidence) == {
        "README.md": "full",
        "docs/guide.md": None,
        "src/api/handlers.py": "none",
        "src/api/models.py": "unknown",
        "src/util/strings.py": "none",
    }
    assert files["src/api/models.py"]["reads_lines_unknown"] == 1
    unsupported = {"docs/guide.md", "tests/test_handlers.py"}
    assert_caught(reconcile(procs, workspace, claims, evidence_path, "enforce"), unsupported)


# --- OpenCode and Copilot CLI, through `coverage-gate run` ------------------------------------
#
# Both write their event stream to stdout and exit, so they run under `coverage-gate run`, which
# passes their output through and records evidence as it flows. They talk to the mock's OpenAI
# Chat Completions route. What the four tests cost, on 2 cores with nothing else running: about
# 6 s per OpenCode run (its git snapshots are off in realclients/opencode.json: they doubled it)
# and 4 s per Copilot run, which unpacks itself (235 MB) into the fresh HOME's cache first.


def native_client(path: Path, release: Release) -> Path:
    """An installed client, or a skip (a failure under ``CG_REQUIRE_INTEGRATION=1``)."""
    require_installed(path, release=release)
    return path


@pytest.fixture
def opencode(release: Release) -> Path:
    return native_client(release.bin / "opencode", release)


@pytest.fixture
def copilot(release: Release) -> Path:
    return native_client(release.bin / "copilot", release)


def run_opencode(
    procs: Processes, opencode: Path, ws: Workspace, scenario: str, *, allow_edit: bool = False
) -> tuple[Json, Json]:
    """OpenCode (`run --format json`) under `coverage-gate run`; returns (evidence, claims).
    ``allow_edit``: its edit permission allowed (the kit's config denies it)."""
    port = start_mock(procs, ws, scenario)
    config = ws.root / "opencode.json"
    text = with_port(KIT / "opencode.json", port)
    if allow_edit:
        assert '"edit": "deny"' in text
        text = text.replace('"edit": "deny"', '"edit": "allow"')
    config.write_text(text)
    env = ws.env(
        OPENCODE_CONFIG=str(config), OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        npm_config_offline="true",  # it would fetch its plugin package from npm at start
    )  # fmt: skip
    command = [str(opencode), "run", "--format", "json", "-m", "mock/mock-model", SHELL_PROMPT]
    evidence, stream = run_under_gate(procs, ws, "opencode", command, env)
    texts = [
        event["part"]["text"]
        for event in map(json.loads, stream.read_bytes().splitlines())
        if event.get("type") == "text"
    ]
    assert texts, "opencode gave no final answer"
    return evidence, claims_from_text(texts[-1])


def run_copilot(procs: Processes, copilot: Path, ws: Workspace, scenario: str) -> tuple[Json, Json]:
    """Copilot CLI (`-p --output-format json`) under `coverage-gate run`; returns (evidence,
    claims)."""
    port = start_mock(procs, ws, scenario)
    env = ws.env(
        COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{port}/v1",
        COPILOT_PROVIDER_API_KEY="dummy", COPILOT_MODEL="mock-model", COPILOT_ALLOW_ALL="1",
    )  # fmt: skip
    command = [
        str(copilot), "-p", SHELL_PROMPT, "--output-format", "json", "--allow-all-tools",
        "--no-auto-update",
    ]  # fmt: skip
    evidence, stream = run_under_gate(procs, ws, "copilot-cli", command, env)
    answers = [
        event["data"]["content"]
        for event in map(json.loads, stream.read_bytes().splitlines())
        if event.get("type") == "assistant.message" and event["data"].get("content")
    ]
    assert answers, "copilot gave no final answer"
    return evidence, claims_from_text(answers[-1])


def test_opencode_honest_reviewer_through_run_keeps_its_approve(
    opencode: Path, procs: Processes, workspace: Workspace
) -> None:
    """OpenCode reads all six files (absolute and relative paths, two in parallel, lines 1-8 of
    strings.py): each finished `read` is verified, every hunk seen, and the Approve stands."""
    evidence, claims = run_opencode(procs, opencode, workspace, "opencode_honest")
    assert evidence["stream_complete"]
    assert evidence["capability"] == "per_file"
    files = file_evidence(evidence)
    for path in CHANGED:
        assert files[path]["reads_succeeded"] == 1, path
    assert files["src/util/strings.py"]["partial"]
    # lines 1-8 by its ranged read, and the hunk its `git diff` showed (line 9 among them)
    assert files["src/util/strings.py"]["lines_seen"] == [{"start": 1, "end": 9}]
    assert_every_hunk_seen(evidence)
    path = workspace.root / "opencode.run.evidence.json"
    assert_honest(reconcile(procs, workspace, claims, path, "enforce"))


def test_opencode_overclaiming_reviewer_through_run_is_downgraded(
    opencode: Path, procs: Processes, workspace: Workspace
) -> None:
    """OpenCode reads two files; its reads of a missing file and past the end of docs/guide.md
    fail; a read of a directory lists it (no line of a file); `wc -l README.md` in bash names
    README.md and shows none of it. It claims all six: the four never read are unsupported,
    Approve → Comment."""
    evidence, claims = run_opencode(procs, opencode, workspace, "opencode_overclaim")
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    assert files["src/api/handlers.py"]["reads_succeeded"] == 1
    assert files["src/api/models.py"]["reads_succeeded"] == 1
    assert files["src/api/handler.py"]["reads_failed"] == 1
    assert files["docs/guide.md"]["reads_failed"] == 1
    assert files["src/util"]["reads_empty"] == 1
    assert "README.md" not in files
    unsupported = {"README.md", "docs/guide.md", "src/util/strings.py", "tests/test_handlers.py"}
    path = workspace.root / "opencode.run.evidence.json"
    assert_caught(reconcile(procs, workspace, claims, path, "enforce"), unsupported)


def test_copilot_honest_reviewer_through_run_keeps_its_approve(
    copilot: Path, procs: Processes, workspace: Workspace
) -> None:
    """Copilot views all six files (absolute and relative paths, two in parallel, lines 1-8 of
    strings.py, ``[1, -1]``): each view is verified, every hunk seen, and the Approve stands."""
    evidence, claims = run_copilot(procs, copilot, workspace, "copilot_honest")
    assert evidence["stream_complete"]
    assert evidence["capability"] == "per_file"
    files = file_evidence(evidence)
    for path in CHANGED:
        assert files[path]["reads_succeeded"] == 1, path
    # lines 1-8 by its ranged read, and the hunk its `git diff` showed (line 9 among them)
    assert files["src/util/strings.py"]["lines_seen"] == [{"start": 1, "end": 9}]
    assert_every_hunk_seen(evidence)
    path = workspace.root / "copilot-cli.run.evidence.json"
    assert_honest(reconcile(procs, workspace, claims, path, "enforce"))


def test_copilot_overclaiming_reviewer_through_run_is_downgraded(
    copilot: Path, procs: Processes, workspace: Workspace, release: Release
) -> None:
    """Copilot views two files; a view of a missing file fails, a view of a directory lists it,
    a view past the end of the test file fails; `wc -l` in bash names README.md and
    docs/guide.md and shows none of their lines, and a `wc -l` that exits 1 reports
    `success: true` (a failed call). It claims all six: the four never viewed are unsupported,
    Approve → Comment.

    Copilot CLI 1.0.102 says a shell command's exit code in ``data.shellExecution.exitCode``;
    1.0.82 writes no ``shellExecution``, only the result text's last line (``<shellId: 2
    completed with exit code 1>``), which the adapter reads there: the same failed call."""
    evidence, claims = run_copilot(procs, copilot, workspace, "copilot_overclaim")
    assert evidence["stream_complete"]
    files = file_evidence(evidence)
    assert files["src/api/handlers.py"]["reads_succeeded"] == 1
    assert files["src/api/models.py"]["reads_succeeded"] == 1
    assert files["src/api/handler.py"]["reads_failed"] == 1
    assert files["tests/test_handlers.py"]["reads_failed"] == 1
    assert files["src/util"]["reads_empty"] == 1
    assert "README.md" not in files
    # two views and the `wc -l` that exited 1, at both releases
    assert evidence["counters"]["failed"] == 3
    unsupported = {"README.md", "docs/guide.md", "src/util/strings.py", "tests/test_handlers.py"}
    path = workspace.root / "copilot-cli.run.evidence.json"
    assert_caught(reconcile(procs, workspace, claims, path, "enforce"), unsupported)


def test_processes_are_cleaned_up_even_when_a_test_fails(tmp_path: Path) -> None:
    """The process registry kills whole groups: a grandchild left behind by a failing test
    does not survive it."""
    processes = Processes()
    pidfile = tmp_path / "pid"
    code = (
        "import subprocess, sys, time; "
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(pidfile)!r}, 'w').write(str(g.pid)); time.sleep(60)"
    )
    processes.start([PY, "-c", code])
    deadline = time.monotonic() + 10
    while not (pidfile.exists() and pidfile.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    grandchild = int(pidfile.read_text())
    try:
        raise RuntimeError("a failing test")  # noqa: TRY301 - what the finally below survives
    except RuntimeError:
        pass
    finally:
        processes.cleanup()
    deadline = time.monotonic() + 5
    while _running(grandchild):
        assert time.monotonic() < deadline, f"process {grandchild} survived the cleanup"
        time.sleep(0.02)


def _running(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_process_that_escaped_its_group_is_found(tmp_path: Path) -> None:
    """The workspace check finds a process that left its process group (a new session) but
    still works inside the workspace, so the fixture can kill it and fail the test."""
    escaped = subprocess.Popen(
        [PY, "-c", "import time; time.sleep(60)"], cwd=tmp_path, start_new_session=True
    )
    try:
        assert escaped.pid in _processes_inside(tmp_path)
    finally:
        escaped.kill()
        escaped.wait()
    assert escaped.pid not in _processes_inside(tmp_path)
