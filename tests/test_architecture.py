"""Imports point one way: the pure core imports nothing from the edges."""

from __future__ import annotations

import ast
from pathlib import Path

import coverage_gate
from coverage_gate.adapters import ADAPTERS
from coverage_gate.events import Adapter, Decoder

PACKAGE = Path(coverage_gate.__file__).parent
CORE = [
    "model.py",
    "enums.py",
    "defaults.py",
    "events.py",
    "paths.py",
    "diffmap.py",
    "evidence.py",
    "reconcile.py",
]
CORE += ["tracecalls.py"]  # a harness's trace of paired calls → call records
FORBIDDEN = (
    "typer",
    "click",
    "opentelemetry",
    "UnleashClient",
    "adapters",
    "coverage_gate.adapters",
    "coverage_gate.cli",
    "coverage_gate.commands",
    "coverage_gate.telemetry",
    "coverage_gate.files",
    "os",
    "time",
    "datetime",
    "random",
    "subprocess",
    "socket",
    "urllib",
    "requests",
)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module if node.level == 0 else f".{node.module}")
    return names


def test_core_imports_nothing_from_the_edges() -> None:
    for name in CORE:
        for module in imported_modules(PACKAGE / name):
            root = module.split(".")[0]
            banned = any(module == f or module.startswith(f"{f}.") for f in FORBIDDEN)
            assert not banned and root not in FORBIDDEN, f"{name} imports {module}"


def test_adapters_do_no_io() -> None:
    adapters_dir = Path(__import__("coverage_gate.adapters").adapters.__file__).parent
    for path in adapters_dir.glob("*.py"):
        for module in imported_modules(path):
            assert module.split(".")[0] not in {
                "os",
                "io",
                "subprocess",
                "socket",
                "time",
                "datetime",
                "pathlib",
            }, f"{path.name} imports {module}"


def test_every_format_has_an_adapter_satisfying_the_protocol() -> None:
    assert ADAPTERS, "no formats registered"
    for name, adapter in ADAPTERS.items():
        assert isinstance(adapter.name, str)
        assert adapter.name == name
        decoder: Decoder = adapter.decoder()
        assert callable(decoder.classify)
        assert callable(decoder.decode)
        assert callable(decoder.finish)
        typed: Adapter = adapter
        assert typed.description
