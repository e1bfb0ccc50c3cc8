"""Benchmark: the speed table of issue 14, new figures beside the old, and where the time goes.

    .venv/bin/python -m pytest -m bench -s tests/bench/bench_speed.py
    .venv/bin/python tests/bench/bench_speed.py [--runs N] [--mb N]

Whole processes are measured from outside: each case is a fresh process, the cases run in turn
(so load on this shared machine falls on all alike), and each figure is a median of ``--runs``
(wall seconds, and CPU seconds, user+sys, which load disturbs less). Baselines measured in the
same run: ``python -c pass`` (the interpreter), a bare Python loop that JSON-parses every line of
the 200 MB stream, and ``jq`` selecting its tool events. "before" is the figure the issue gives
for the code before this work. Per-call costs are timed inside one process, in CPU seconds.

Where the time goes: the interpreter (``python -c pass``), imports (``-X importtime`` of the same
command, self times summed by top-level package), and the rest (the command's own work); for the
200 MB record, reading the file, the stream pass and the calls, timed in process.

Installed as a user installs it: every command (``pass``, ``--help``, ``reconcile``, the API
import, both records) also runs from a wheel of this checkout installed into a fresh virtual
environment (its dependencies those of this one), as the README's quick start installs it; the
targets are read from those, with the editable install's figure beside them. The checkout's own editable install adds a finder to every interpreter start (about
10 ms, in ``python -c pass`` too) that an installed wheel does not have. Every case runs with
bytecode caches, as an installed wheel has them (``PYTHONDONTWRITEBYTECODE`` is dropped for the
children: without caches the package is compiled at every start).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("BENCH_SPEED_RUNS", "7"))
BIG_MB = int(os.environ.get("BENCH_SPEED_MB", "200"))
REVISION = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
BARE_LOOP = "import json,sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"
JQ_FILTER = 'select(.type|startswith("tool_execution"))'

# Timed inside a fresh process: how long importing the API takes (wall, then CPU seconds).
API_IMPORT = """
import time
began, cpu = time.perf_counter(), time.process_time()
import coverage_gate.api
print(time.perf_counter() - began, time.process_time() - cpu)
"""
# Timed inside a fresh process, in CPU seconds (load on this machine disturbs them less), medians
# of three rounds: the stream pass (scan, decode, pair) of record, and then finishing it: without
# telemetry, with spans encoded directly and exported to the local files, and through SDK spans,
# protobuf and its JSON mapping (the code before).
RECORD_PARTS = """
import io, os, statistics, sys, tempfile, time
from coverage_gate.telemetry import otel_setup
from coverage_gate.adapters import ADAPTERS
from coverage_gate.record.recording import Recorder, RecordSettings

from coverage_gate.record.recording import CHUNK_BYTES
from coverage_gate.record.sniff import peek

def reading():
    began = time.process_time()
    with open(sys.argv[1], "rb") as handle:
        _, stream = peek(handle)
        while stream.read(CHUNK_BYTES):
            pass
    return time.process_time() - began

data = open(sys.argv[1], "rb").read()

def recorder(environ):
    telemetry = otel_setup.setup(environ)
    provider, spans = telemetry.for_recording()
    settings = RecordSettings(revision="bench", repo_root="/r")
    return telemetry, Recorder(ADAPTERS["pi-rpc"], settings, provider, spans=spans)

def timed(environ):
    telemetry, rec = recorder(environ)
    began = time.process_time()
    for start in range(0, len(data), 1 << 22):
        rec.feed(data[start:start + (1 << 22)])
    fed = time.process_time()
    document = rec.finish()
    telemetry.shutdown()
    return fed - began, time.process_time() - fed, document.counters.calls

with tempfile.TemporaryDirectory() as folder:
    files = {otel_setup.TELEMETRY_DIR_ENV: folder}
    timed({"OTEL_SDK_DISABLED": "true"})  # warm: the contracts' validators are built on first use
    modes = {
        "none": {"OTEL_SDK_DISABLED": "true"},
        "direct": files,
        "sdk": {**files, "OTEL_SPAN_EVENT_COUNT_LIMIT": "128"},
    }
    rounds = {name: [] for name in modes}
    for _ in range(3):
        for name, environ in modes.items():
            rounds[name].append(timed(environ))
    median = lambda name, i: statistics.median(r[i] for r in rounds[name])
    calls = rounds["none"][0][2]
    read_s = statistics.median(reading() for _ in range(3))
print(median("none", 0), median("none", 1), median("direct", 1), median("sdk", 1), calls, read_s)
"""


@dataclass
class Case:
    """One command, run as a fresh process."""

    name: str
    command: list[str]
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)

    def run(self, env: dict[str, str]) -> None:
        began = time.perf_counter()
        process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        _, status, usage = os.wait4(process.pid, 0)
        self.walls.append(time.perf_counter() - began)
        self.cpus.append(usage.ru_utime + usage.ru_stime)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if process.returncode != 0:
            raise RuntimeError(f"{self.name} failed: {' '.join(self.command)}")

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)


def cli() -> list[str]:
    """The console script as a user runs it, else the module."""
    script = Path(sys.executable).with_name("coverage-gate")
    return [str(script)] if script.exists() else [sys.executable, "-m", "coverage_gate"]


def clean_env(telemetry: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "COVERAGE_GATE_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode caches, as an installed wheel has them
    env["COVERAGE_GATE_TELEMETRY_DIR"] = str(telemetry)
    return env


def install_wheel(folder: Path) -> Path:
    """A fresh virtual environment with a wheel of this checkout installed (pip compiles its
    bytecode and writes its console script), its dependencies this environment's; its python."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder / "dist"),
         str(ROOT)],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = (folder / "dist").glob("coverage_gate-*.whl")
    env_dir = folder / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    ours = Path(sysconfig.get_paths()["purelib"])
    # the dependencies: this environment's packages, on the path (its .pth files, the editable
    # finder's among them, are not run)
    (site / "_bench_dependencies.pth").write_text(f"{ours}\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    return python


def generate(size_mb: int, path: Path) -> int:
    """A pi RPC stream of ``size_mb`` (tests/_support/gen_pi_stream.py); returns its calls."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "_support" / "gen_pi_stream.py"),
            str(size_mb),
            str(path),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout.split()[0])


def _python_of(command: list[str]) -> tuple[str, bool]:
    """The interpreter ``command`` runs on, and whether ``command`` runs it itself (else it is
    that interpreter's console script)."""
    first = Path(command[0])
    if first.name.startswith("python"):
        return command[0], True
    return str(first.with_name("python")), False


def import_times(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Seconds of imports in one run of ``command`` under ``-X importtime``, self times summed
    by top-level package."""
    interpreter, direct = _python_of(command)
    python = [interpreter, "-P", "-X", "importtime"]  # -P: the checkout (cwd) is not importable
    argv = python + command[1:] if direct else python + _script(command)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    by_package: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+\d+ \| +(\S+)", line)
        if found:
            by_package[found.group(2).split(".")[0]] += int(found.group(1)) / 1e6
    return by_package


def import_shares(
    command: list[str], env: dict[str, str], interpreter: dict[str, float], top: int = 5
) -> str:
    """Which packages take the imports of ``command`` beyond the interpreter's own (``site``...):
    shares of ``-X importtime``'s self times (which that option inflates, so shares only)."""
    own = {
        package: seconds - interpreter.get(package, 0.0)
        for package, seconds in import_times(command, env).items()
    }
    total = sum(max(seconds, 0.0) for seconds in own.values()) or 1.0
    ranked = sorted(own.items(), key=lambda item: -item[1])[:top]
    return ", ".join(f"{name} {seconds / total:.0%}" for name, seconds in ranked if seconds > 0)


# Run in a fresh process: the command (argv, or the code given with -c) with the time spent in
# imports (outermost import statements, lazy ones in function bodies included) and in all,
# measured inside; printed as "imports total" on the last stderr line.
TIMED = """
import builtins, sys, time
real, depth, spent = builtins.__import__, 0, 0.0
def timed(*args, **kwargs):
    global depth, spent
    if depth:
        return real(*args, **kwargs)
    depth, began = 1, time.perf_counter()
    try:
        return real(*args, **kwargs)
    finally:
        depth, spent = 0, spent + time.perf_counter() - began
builtins.__import__ = timed
began = time.perf_counter()
if sys.argv[1] == "-c":
    exec(sys.argv[2])
else:
    sys.argv = ["coverage-gate", *sys.argv[1:]]
    from coverage_gate.cli import main
    try:
        main()
    except SystemExit:
        pass
sys.stdout.flush()
print(spent, time.perf_counter() - began, file=sys.__stderr__)
"""


def imports_and_work(command: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    """Median seconds in imports, and in the rest of the command's own code, measured inside."""
    python, direct = _python_of(command)
    module = direct and command[1] == "-m"  # python -m coverage_gate ...
    argv = command[3:] if module else command[1:]
    samples: list[tuple[float, float]] = []
    for _ in range(runs):
        done = subprocess.run(
            [python, "-P", "-c", TIMED, *argv],  # -P: the checkout (cwd) is not importable
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        spent, total = (float(x) for x in done.stderr.strip().splitlines()[-1].split())
        samples.append((spent, total - spent))
    return statistics.median(s for s, _ in samples), statistics.median(w for _, w in samples)


def _script(command: list[str]) -> list[str]:
    """The console script's work as ``-c`` code, so that ``-X importtime`` applies to it."""
    code = "import sys; from coverage_gate.cli import main; sys.argv[0] = 'coverage-gate'; main()"
    return ["-c", code, *command[1:]]


def in_process(
    code: str, *argv: str, env: dict[str, str], python: str = sys.executable
) -> list[float]:
    """Run ``code`` in a fresh process (the checkout's tests importable when ``python`` is
    this environment's); its last stdout line, as numbers."""
    ours = python == sys.executable
    done = subprocess.run(
        [python, "-c", code, *argv],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT if ours else None,
        env={**env, "PYTHONPATH": str(ROOT)} if ours else env,
    )
    return [float(word) for word in done.stdout.split()]


def measure(runs: int = RUNS, big_mb: int = BIG_MB, say: Callable[[str], None] = print) -> None:
    with tempfile.TemporaryDirectory(prefix="cg-speed-") as name:
        folder = Path(name)
        env = clean_env(folder / "telemetry")
        demo = folder / "demo"
        subprocess.run(
            [*cli(), "demo", "--keep", str(demo)], env=env, check=True, capture_output=True
        )
        small, big = folder / "pi-5mb.jsonl", folder / f"pi-{big_mb}mb.jsonl"
        small_calls = generate(5, small)
        generate(big_mb, big)
        megabytes = big.stat().st_size / 1e6
        small_mb = small.stat().st_size / 1e6
        wheel_python = install_wheel(folder / "wheel")
        wheel_cli = [str(wheel_python.with_name("coverage-gate"))]

        def record(path: Path, command: Sequence[str] = cli()) -> list[str]:
            out = path.with_suffix(".evidence.json")
            return [
                *command,
                "record",
                str(path),
                "-f",
                "pi-rpc",
                "--revision",
                "bench",
                "-o",
                str(out),
            ]

        reconcile_args = ["reconcile", "--repo", "example/notes", "--revision", REVISION,
                          "--verdict", "approve", "--changed", str(demo / "changed.txt"),
                          "--claims", str(demo / "lying.claims.json"),
                          "--evidence", str(demo / "lying.evidence.json"), "--mode", "shadow",
                          "--repo-root", str(demo)]  # fmt: skip
        reconcile = [*cli(), *reconcile_args]
        installed = {
            "w_pass": Case("python -c pass (wheel)", [str(wheel_python), "-c", "pass"]),
            "w_api": Case(
                "python -c 'import coverage_gate.api' (wheel)",
                [str(wheel_python), "-c", "import coverage_gate.api"],
            ),
            "w_help": Case("coverage-gate --help (wheel)", [*wheel_cli, "--help"]),
            "w_reconcile": Case("reconcile --mode shadow (demo, wheel)", [
                *wheel_cli, *reconcile_args]),
            "w_small": Case(f"record 5 MB ({small_calls} calls, wheel)", record(small, wheel_cli)),
            "w_big": Case(f"record {big_mb} MB (wheel)", record(big, wheel_cli)),
        }  # fmt: skip
        cases = {
            **installed,
            "pass": Case("python -c pass", [sys.executable, "-c", "pass"]),
            "api": Case(
                "python -c 'import coverage_gate.api'",
                [sys.executable, "-c", "import coverage_gate.api"],
            ),
            "help": Case("coverage-gate --help", [*cli(), "--help"]),
            "reconcile": Case("reconcile --mode shadow (demo)", reconcile),
            "small": Case(f"record 5 MB ({small_calls} calls)", record(small)),
            "big": Case(f"record {big_mb} MB", record(big)),
            "loop": Case("bare json.loads loop", [sys.executable, "-c", BARE_LOOP, str(big)]),
        }
        if shutil.which("jq"):
            cases["jq"] = Case("jq tool events", ["jq", "-c", JQ_FILTER, str(big)])
        warm = (
            "w_pass",
            "w_api",
            "w_help",
            "w_reconcile",
            "w_small",
            "pass",
            "api",
            "help",
            "small",
        )
        for key in warm:
            cases[key].run(env)  # warm: the checkout's bytecode caches written, files cached
            cases[key].walls.clear()
            cases[key].cpus.clear()
        for _ in range(runs):
            for case in cases.values():
                case.run(env)
        api_runs = [in_process(API_IMPORT, env=env) for _ in range(runs)]
        api_import = statistics.median(wall for wall, _ in api_runs)
        api_wheel_runs = [
            in_process(API_IMPORT, env=env, python=str(wheel_python)) for _ in range(runs)
        ]
        api_wheel = statistics.median(wall for wall, _ in api_wheel_runs)
        api_wheel_cpu = statistics.median(cpu for _, cpu in api_wheel_runs)
        parts = in_process(RECORD_PARTS, str(big), env=env)
        stream_s, fold_s, direct_s, sdk_s, calls, read_s = parts
        interpreters = {
            "pass": import_times(cases["pass"].command, env),
            "w_pass": import_times(cases["w_pass"].command, env),
        }
        breakdowns = {
            key: (
                *imports_and_work(cases[key].command, env, runs),
                import_shares(cases[key].command, env, interpreters[base]),
            )
            for key, base in (("w_help", "w_pass"), ("w_reconcile", "w_pass"),
                              ("w_small", "w_pass"), ("w_api", "w_pass"))
        }  # fmt: skip

    c = cases
    jq = c.get("jq")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    say(f"\nmedians of {runs} runs, interleaved; load average {load} on {os.cpu_count()} cores")
    say(f"{'case':<42}{'wall s':>8}{'cpu s':>8}")
    for case in c.values():
        say(f"{case.name:<42}{case.wall:>8.3f}{case.cpu:>8.3f}")

    # What telemetry adds per call, as the issue measured it (the default sink against the SDK
    # disabled): the span and its local export, beyond pairing and folding, which run either way.
    per_call_us = max(direct_s - fold_s, 0.0) / calls * 1e6
    sdk_us = max(sdk_s - fold_s, 0.0) / calls * 1e6
    loop_ratio = c["loop"].wall / c["w_big"].wall
    jq_text = f"{jq.wall / c['w_big'].wall:.1f}x jq" if jq else "jq not installed"
    ed_ratio = c["loop"].wall / c["big"].wall
    rows = [
        ("coverage-gate --help (installed wheel)", "0.38-0.50 s",
         f"{c['w_help'].wall:.2f} s ({c['help'].wall:.2f} ed.)", "<= 0.12 s",
         c["w_help"].wall <= 0.12),
        ("reconcile --mode shadow, demo, local sink", "0.34-0.43 s",
         f"{c['w_reconcile'].wall:.2f} s ({c['reconcile'].wall:.2f} ed.)", "<= 0.20 s",
         c["w_reconcile"].wall <= 0.20),
        (f"record, 5 MB stream ({small_calls} calls)", "0.32 s",
         f"{c['w_small'].wall:.2f} s ({c['small'].wall:.2f} ed.)", "<= 0.20 s",
         c["w_small"].wall <= 0.20),
        (f"record, {big_mb} MB stream, default sink", "0.58-0.68x loop, 2.0x jq",
         f"{loop_ratio:.2f}x loop, {jq_text} ({ed_ratio:.2f}x ed.)", ">= 2x loop, >= 6x jq",
         loop_ratio >= 2 and (jq is None or jq.wall / c["w_big"].wall >= 6)),
        ("cost per tool call (span, local export)", "about 260 us", f"{per_call_us:.0f} us",
         "<= 30 us", per_call_us <= 30),
        ("import coverage_gate.api (in process, wheel)", "(new)",
         f"{api_wheel * 1000:.0f} ms ({api_wheel_cpu * 1000:.0f} cpu; "
         f"{api_import * 1000:.0f} ed.)", "< 150 ms", api_wheel < 0.150),
    ]  # fmt: skip
    say(f"\n{'what':<46}{'before':<26}{'now':<30}{'target':<22}")
    for what, before, now, target, met in rows:
        say(f"{what:<46}{before:<26}{now:<30}{target:<22}{'met' if met else 'NOT MET'}")
    say("(wheel: installed from a wheel into a fresh venv; ed.: this checkout's editable install)")

    say(
        "\nwhere the time goes (medians, seconds): the interpreter (python -c pass), imports and "
        "the command's own work (timed inside it), the rest (exit: the interpreter's teardown, "
        "which main() spares the last full collection; waiting); imports by package (shares of "
        "-X importtime); from the installed wheel"
    )
    for key, label, base in (("w_help", "--help", "w_pass"), ("w_reconcile", "reconcile", "w_pass"),
                             ("w_small", "record 5 MB", "w_pass"), ("w_api", "import api", "w_pass")):  # fmt: skip
        start = c[base].wall
        imports, work, shares = breakdowns[key]
        rest = max(c[key].wall - start - imports - work, 0.0)
        say(
            f"{label:<12} interpreter {start:.3f}, imports {imports:.3f} ({shares}), "
            f"work {work:.3f}, rest {rest:.3f}"
        )
    # What does not grow with the stream, in cpu seconds (load disturbs them less than wall):
    # the 5 MB record's whole process less its share of the per-byte work measured here.
    fixed = c["w_small"].cpu - small_mb / megabytes * (read_s + stream_s + direct_s)
    say(
        f"record {big_mb} MB ({megabytes:.0f} MB, {calls:.0f} calls, wheel): "
        f"wall {c['w_big'].wall:.3f}, cpu {c['w_big'].cpu:.3f}; in process, cpu: "
        f"reading the file as record reads it {read_s:.3f}; "
        f"stream pass (scan, decode, pair) {stream_s:.3f} ({megabytes / stream_s:.0f} MB/s); "
        f"finishing (pair, fold, build the document) without telemetry {fold_s:.3f} "
        f"({fold_s / calls * 1e6:.0f} us a call), with spans encoded and exported {direct_s:.3f} "
        f"(+{per_call_us:.0f} us a call; through SDK spans and protobuf, as before: {sdk_s:.3f}, "
        f"+{sdk_us:.0f} us a call); what does not grow with the stream (the interpreter, "
        f"imports, option parsing, set-up, exit: the 5 MB record's cpu less its stream) "
        f"{fixed:.3f}; the rest (writing, and what the in-process parts leave out) "
        f"{max(c['w_big'].cpu - read_s - stream_s - direct_s - fixed, 0.0):.3f}"
    )
    say(
        f"bare loop {megabytes / c['loop'].wall:.0f} MB/s; record {megabytes / c['w_big'].wall:.0f} "
        f"MB/s" + (f"; jq {megabytes / jq.wall:.0f} MB/s" if jq else "")
    )


@pytest.mark.bench
def test_speed_table() -> None:
    """Prints the table; asserts nothing about speed (this machine is shared and noisy), only
    that every command ran."""
    measure()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Issue 14's speed table.")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--mb", type=int, default=BIG_MB)
    args = parser.parse_args(argv)
    measure(args.runs, args.mb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
