"""Imports point one way: the pure core imports nothing from the edges."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import coverage_gate
from coverage_gate.adapters import ADAPTERS
from coverage_gate.core.events import Adapter, Decoder

PACKAGE = Path(coverage_gate.__file__).parent
CORE = [
    "contracts/model.py",
    "contracts/enums.py",
    "contracts/defaults.py",
    "core/events.py",
    "core/paths.py",
    "core/diffmap.py",
    "core/evidence.py",
    "core/reconcile.py",
]
CORE += ["core/tracecalls.py"]  # a harness's trace of paired calls → call records
CORE += ["core/citations.py"]  # replaying citations against the files at the revision
CORE += ["outputs/findings.py"]  # what a decision holds against a reviewer, per file
CORE += ["contracts/evidence_doc.py"]  # the evidence document as plain values (record writes them)
CORE += ["core/revision_files.py"]  # the files at the revision: the port citations and depth read
FORBIDDEN = (
    "typer",
    "click",
    "opentelemetry",
    "UnleashClient",
    "adapters",
    "coverage_gate.adapters",
    "coverage_gate.cli",
    "coverage_gate.commands",
    "coverage_gate.record.spans",
    "coverage_gate.edges.files",
    "coverage_gate.edges.content",
    "coverage_gate.edges.gittree",
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


# --- the Python API loads no command line or telemetry SDK ---------------------------------------

# What `import coverage_gate.api` may never load: the command line, and OpenTelemetry (a caller
# who wants telemetry passes a provider in, having loaded the SDK itself).
API_FORBIDDEN = ("typer", "click", "rich", "opentelemetry", "google.protobuf")


def _module_file(name: str) -> Path | None:
    """The source file of one of our modules (``coverage_gate.adapters`` ships from adapters/)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):  # a name imported from a module, not a module
        return None
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin and origin.endswith(".py") else None


def _imports_at_load(name: str, path: Path) -> set[str]:
    """Modules a module imports when it is loaded: its top-level imports, not those in function
    bodies or under ``if TYPE_CHECKING:``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            # `from package import module` loads the module too
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def import_closure(root: str) -> set[str]:
    """Every module loading ``root`` loads, through our modules' top-level imports."""
    seen: set[str] = set()
    pending = [root]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if not name.startswith("coverage_gate"):
            continue
        path = _module_file(name)
        if path is None:
            seen.discard(name)  # not a module: a class or function imported from one
            continue
        parts = name.split(".")
        pending.extend(".".join(parts[:n]) for n in range(1, len(parts)))  # parent packages
        pending.extend(_imports_at_load(name, path))
    return seen


def test_the_api_loads_no_command_line_or_telemetry() -> None:
    closure = import_closure("coverage_gate.api")
    assert {"coverage_gate.contracts.model", "coverage_gate.core.reconcile", "pydantic"} <= closure
    assert not [
        name
        for name in closure
        if any(name == bad or name.startswith(f"{bad}.") for bad in API_FORBIDDEN)
    ]
