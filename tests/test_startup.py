"""A command loads what it uses: `--help` loads no pydantic model, adapter, OpenTelemetry or rich,
and `record` on the local files no OpenTelemetry. Checked in a fresh interpreter, by the modules
it holds once the command is done (timings are the benchmark's: tests/bench/bench_speed.py).

The defaults --help shows come from ``coverage_gate.contracts.defaults``, which the modules using them read
too; the schema names, spelled out for --help, are held equal to the schemas here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coverage_gate.commands.schema import SCHEMA_NAMES
from coverage_gate.contracts.schemas import SCHEMAS
from tests.conftest import DATA, lying_reconcile_args

ROOT = Path(__file__).resolve().parent.parent
HEAVY = (
    "opentelemetry",
    "google",
    "rich",
    "coverage_gate.contracts.model",
    "coverage_gate.adapters",
)
RUN_CLI = """
import json, sys
from coverage_gate.cli import main
sys.argv = ["coverage-gate", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted(sys.modules)), file=sys.__stderr__)
"""


def loaded_by(*argv: str, cwd: Path = ROOT) -> set[str]:
    """The modules a fresh interpreter holds after running the CLI with ``argv``."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, *argv],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    )
    modules: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return set(modules)


def heavy(modules: set[str], prefixes: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(name for name in modules if name.startswith(prefixes))


#: The module of each command --help is asked of.
COMMAND_MODULES = {
    "record": "record",
    "reconcile": "reconcile",
    "run": "run",
    "report": "report",
    "flags": "flags",
    "schema": "schema",
    "github": "github",
    "replay": "replay",
    "receipts": "receipts",
    "demo": "demo",
    "formats": "formats",
}


@pytest.mark.parametrize(
    "command",
    [
        *([], ["record"], ["reconcile"], ["run"], ["report"], ["flags"], ["flags", "pull"]),
        *(["schema"], ["github"], ["replay"], ["receipts", "verify"]),
    ],
    ids=lambda words: " ".join(words) or "main",
)
def test_help_loads_no_model_adapter_telemetry_rich_or_pydantic(command: list[str]) -> None:
    """--help shows every option of its command: that command's module loads (the main --help
    lists the commands by their summary lines and loads none), and nothing heavy, pydantic
    included (typer coerces option values with pydantic: options not given are not coerced)."""
    modules = loaded_by(*command, "--help")
    shown = {COMMAND_MODULES[command[0]]} if command else set()
    loaded = {
        name for name in COMMAND_MODULES.values() if f"coverage_gate.commands.{name}" in modules
    }
    # reconcile and replay share the flags command's options
    assert shown <= loaded <= (shown | {"flags"} if command else set())
    assert heavy(modules, (*HEAVY, "pydantic")) == []


@pytest.mark.parametrize(
    ("command", "others"),
    [
        (["record", "--help"], ["reconcile", "run", "report", "github", "replay", "flags"]),
        (["schema", "--help"], ["record", "reconcile", "run", "report", "github", "replay"]),
    ],
    ids=["record --help", "schema --help"],
)
def test_a_command_loads_no_other_command(command: list[str], others: list[str]) -> None:
    """Only the command invoked is built: the modules of the others are not imported."""
    modules = loaded_by(*command)
    assert f"coverage_gate.commands.{command[0]}" in modules
    assert sorted(f"coverage_gate.commands.{name}" for name in others if
                  f"coverage_gate.commands.{name}" in modules) == []  # fmt: skip


def test_reconcile_loads_no_other_command(tmp_path: Path) -> None:
    """A reconcile run imports its own command module (and the flags options it shares), no
    other command's."""
    modules = loaded_by(*lying_reconcile_args(tmp_path), cwd=tmp_path)
    assert "coverage_gate.commands.reconcile" in modules
    others = ["record", "run", "report", "github", "replay", "receipts", "demo", "schema"]
    assert [name for name in others if f"coverage_gate.commands.{name}" in modules] == []


@pytest.mark.parametrize("diff", [False, True], ids=["plain", "with --diff"])
def test_record_on_the_local_files_loads_no_opentelemetry_or_pydantic(
    tmp_path: Path, diff: bool
) -> None:
    """`record` with the embedded default sink: its spans are encoded directly, and its
    document is built and written as plain values (``coverage_gate.contracts.evidence_doc``), without
    loading pydantic or the contracts (tests/contracts/test_evidence_doc.py holds the two equal)."""
    stream = DATA / "pi-rpc" / "pi_a_honest.jsonl"
    out = tmp_path / "evidence.json"
    pinned = ["--diff", str(DATA / "pi-rpc" / "review.diff"), "--repo-root", str(tmp_path)]
    modules = loaded_by(
        "record", str(stream), "-f", "pi-rpc", "--revision", "r", "-o", str(out),
        *(pinned if diff else []), cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(out.read_text())["counters"]["calls"] > 0
    assert heavy(modules, ("opentelemetry", "google", "rich", "pydantic")) == []
    assert "coverage_gate.contracts.model" not in modules


def test_record_with_its_format_loads_that_adapter_alone(tmp_path: Path) -> None:
    """The adapters registry imports an adapter when its format is looked up: `record -f
    pi-rpc` loads no other format's module."""
    stream = DATA / "pi-rpc" / "pi_a_honest.jsonl"
    out = tmp_path / "evidence.json"
    modules = loaded_by(
        "record", str(stream), "-f", "pi-rpc", "--revision", "r", "-o", str(out), cwd=tmp_path
    )
    assert json.loads(out.read_text())["counters"]["calls"] > 0
    others = ["claude_code", "codex", "otlp_json", "opencode", "copilot_cli", "gemini_cli"]
    assert "coverage_gate.adapters.pi_rpc" in modules
    assert [name for name in others if f"coverage_gate.adapters.{name}" in modules] == []


def test_reconcile_on_the_local_files_loads_no_opentelemetry(tmp_path: Path) -> None:
    """`reconcile` with the embedded default sink: its metrics and its span are written
    directly, as the SDK would write them (tests/telemetry/test_otlp_direct.py). It reads evidence through
    the contracts, so it loads neither msgspec nor the plain evidence document `record` writes."""
    modules = loaded_by(
        *lying_reconcile_args(tmp_path, "--decision-json", str(tmp_path / "d.json")), cwd=tmp_path
    )
    assert json.loads((tmp_path / "d.json").read_text())["would_downgrade"] is True
    assert heavy(modules, ("opentelemetry", "google", "rich", "msgspec")) == []
    assert "coverage_gate.contracts.evidence_doc" not in modules
    telemetry = Path(os.environ["COVERAGE_GATE_TELEMETRY_DIR"])
    assert [len(list(telemetry.glob(f"{signal}-*.jsonl"))) for signal in ("metrics", "traces")] == [
        1,
        1,
    ]


FROZEN_AT_EXIT = """
import atexit, gc, sys
atexit.register(lambda: print(gc.get_freeze_count() > 0, flush=True))  # runs after main's
from coverage_gate.cli import main
sys.argv = ["coverage-gate", "formats"]
main()
"""


def test_the_run_leaves_what_it_loaded_to_the_os_at_exit() -> None:
    """The interpreter's last full collection, at exit, walks nothing the run loaded: main()
    freezes the collector's objects as the process ends (tests/bench/bench_speed.py measures it)."""
    done = subprocess.run(
        [sys.executable, "-c", FROZEN_AT_EXIT],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "True"


def test_schema_names_shown_by_help_are_the_schemas() -> None:
    """`schema --help` names the schemas without loading the models."""
    assert tuple(SCHEMAS) == SCHEMA_NAMES
