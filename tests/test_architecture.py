"""Imports point one way, as the folders say (``tests/architecture_report.py`` reads them): each
part of ``coverage_gate`` imports only the parts below it in ``LAYERS``, no modules import each
other in a cycle, the pure parts import nothing from the edges, and the adapters do no I/O.
Every import counts: at the top, inside functions, and under ``if TYPE_CHECKING:``."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from coverage_gate.adapters import ADAPTERS
from coverage_gate.core.events import Adapter, Decoder
from tests.architecture_report import (
    LAYERS,
    Module,
    against_the_order,
    cycles,
    main,
    modules,
    part_of,
    parts,
)

#: What the pure parts never import, anywhere in a module: the command line, telemetry, the flag
#: client, and the machine (files, clock, processes, network).
PURE = ("contracts", "core")
NOT_PURE = (
    "typer",
    "click",
    "opentelemetry",
    "UnleashClient",
    "os",
    "io",
    "time",
    "datetime",
    "random",
    "subprocess",
    "socket",
    "urllib",
    "urllib3",
    "requests",
    "shutil",
    "tempfile",
)
#: What an adapter never imports: it decodes lines handed to it.
ADAPTER_IO = ("os", "io", "subprocess", "socket", "time", "datetime", "pathlib", "shutil")

FOUND = modules()


def test_every_part_has_its_place_in_the_order() -> None:
    """A new subpackage (or a module at the top) is placed in ``LAYERS`` before it lands."""
    assert set(parts(FOUND)) == set(LAYERS)


def test_imports_point_one_way() -> None:
    assert against_the_order(FOUND) == []


def test_no_modules_import_each_other_in_a_cycle() -> None:
    assert cycles(FOUND) == []


def test_the_order_check_sees_an_import_back_up_and_a_lazy_cycle() -> None:
    """The checks can fail: a core module importing the command line inside a function, and two
    core modules importing each other, are both found."""
    paths = FOUND["coverage_gate.core.paths"]
    diffmap = FOUND["coverage_gate.core.diffmap"]
    upward = {**FOUND, paths.name: Module(paths.name, paths.path, 0, {"coverage_gate.cli"})}
    found = set(against_the_order(upward)) - set(against_the_order(FOUND))
    assert found == {"coverage_gate.core.paths imports coverage_gate.cli (core → cli)"}
    looped = {
        **FOUND,
        paths.name: Module(paths.name, paths.path, 0, {*paths.imports, diffmap.name}),
        diffmap.name: Module(diffmap.name, diffmap.path, 0, {*diffmap.imports, paths.name}),
    }
    assert sorted([paths.name, diffmap.name]) in cycles(looped)


@pytest.mark.parametrize("part", PURE)
def test_the_pure_parts_import_nothing_from_the_edges(part: str) -> None:
    for module in parts(FOUND)[part]:
        banned = module.external & set(NOT_PURE)
        assert not banned, f"{module.name} imports {sorted(banned)}"


def test_adapters_do_no_io() -> None:
    for module in parts(FOUND)["adapters"]:
        banned = module.external & set(ADAPTER_IO)
        assert not banned, f"{module.name} imports {sorted(banned)}"


def test_a_module_over_800_lines_says_why() -> None:
    """A long module is a module waiting to be split, unless its docstring says why not."""
    for module in FOUND.values():
        if module.lines > 800:
            docstring = ast.get_docstring(ast.parse(module.path.read_text("utf-8"))) or ""
            assert "800 lines" in docstring, f"{module.name}: {module.lines} lines"


def test_every_module_declares_its_public_names() -> None:
    for module in FOUND.values():
        tree = ast.parse(module.path.read_text("utf-8"))
        if module.path.name == "__init__.py" and not any(
            isinstance(node, (ast.Import, ast.ImportFrom)) for node in tree.body
        ):
            continue  # a package's docstring, nothing to export
        declared = [
            node
            for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            and any(
                isinstance(target, ast.Name) and target.id == "__all__"
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
        ]
        assert declared, f"{module.name} declares no __all__"


def test_the_report_names_every_part(capsys: pytest.CaptureFixture[str]) -> None:
    assert main() == 0
    printed = capsys.readouterr().out
    for part in LAYERS:
        assert any(line.split()[:1] == [part] for line in printed.splitlines()), part
    assert "imports run one way; no cycle" in printed
    assert part_of("coverage_gate.core.paths") == "core"


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
