"""The package's layers, as its folders say them.

``python -m tests.architecture_report`` prints each part of ``coverage_gate`` (a subpackage, or a
module at the top), its modules and lines, and the parts it imports; then every import that runs
against ``LAYERS`` and every cycle of imports, if any. ``tests/test_architecture.py`` fails on
those. Imports are read from the source, all of them: at the top, inside functions (lazy) and under
``if TYPE_CHECKING:``.

The parts come from the folders; only their order is written here. A part imports only parts
before it in ``LAYERS`` (and itself): the contracts and the core below every edge, the command
line at the end.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import coverage_gate

__all__ = [
    "LAYERS",
    "Module",
    "against_the_order",
    "cycles",
    "main",
    "modules",
    "part_of",
    "parts",
]

PACKAGE = Path(coverage_gate.__file__).parent
#: The adapters ship as ``coverage_gate.adapters`` from the top-level ``adapters/`` folder.
ADAPTERS = PACKAGE.parent / "adapters"

#: The parts of the package, lowest first. A new subpackage fails the architecture test until it
#: is placed here.
LAYERS = (
    "errors",  # the error tree and exit codes every part raises and maps
    "contracts",  # what crosses a boundary: models, enums, defaults, span names
    "core",  # the pure rules
    "edges",  # files, standard streams, git, the revision's content
    "telemetry",  # where signals go
    "adapters",  # one decoder per stream format, over the core's port
    "record",  # stream → evidence
    "capture",  # `run`
    "rollout",  # flags, metrics, receipts, replay, report
    "outputs",  # views of a decision and of the report
    "examples",  # the bundled example and the demo over it
    "api",  # the Python API
    "commands",  # one module per command
    "cli",
    "__main__",
)


@dataclass
class Module:
    name: str  # dotted, as imported
    path: Path
    lines: int
    imports: set[str] = field(default_factory=set)  # our modules it imports, anywhere in it
    external: set[str] = field(default_factory=set)  # top-level names of what else it imports


def _sources() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path
    for path in sorted(ADAPTERS.glob("*.py")):
        yield "coverage_gate.adapters" + ("" if path.stem == "__init__" else f".{path.stem}"), path


def modules() -> dict[str, Module]:
    """Every module of the package, with what it imports."""
    found = {name: Module(name, path, 0) for name, path in _sources()}
    for module in found.values():
        text = module.path.read_text("utf-8")
        module.lines = len(text.splitlines())
        package = (
            module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]
        )
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    _add(module, alias.name, found)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*kept, base] if base else kept)
                named = [f"{base}.{alias.name}" for alias in node.names]
                submodules = [name for name in named if name in found]
                for name in submodules or [base]:
                    _add(module, name, found)
    return found


def _add(module: Module, name: str, found: Mapping[str, Module]) -> None:
    if name.split(".", maxsplit=1)[0] != "coverage_gate":
        module.external.add(name.split(".", maxsplit=1)[0])
        return
    while name not in found:  # `import a.b.c` of a name inside a module
        name = name.rpartition(".")[0]
    if name != module.name:
        module.imports.add(name)


def part_of(name: str) -> str:
    """``coverage_gate.core.paths`` → ``core``; ``coverage_gate.cli`` → ``cli``."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "(package)"


def parts(found: Mapping[str, Module]) -> dict[str, list[Module]]:
    grouped: dict[str, list[Module]] = {}
    for module in found.values():
        grouped.setdefault(part_of(module.name), []).append(module)
    grouped.pop("(package)", None)  # coverage_gate/__init__.py: empty
    return grouped


def against_the_order(found: Mapping[str, Module]) -> list[str]:
    """Every import of a part placed later in ``LAYERS`` (or of a part not placed at all)."""
    rank = {part: index for index, part in enumerate(LAYERS)}
    wrong = []
    for module in found.values():
        here = part_of(module.name)
        for name in sorted(module.imports):
            there = part_of(name)
            if there in (here, "(package)"):
                continue
            if here not in rank or there not in rank or rank[there] > rank[here]:
                wrong.append(f"{module.name} imports {name} ({here} → {there})")
    return wrong


def cycles(found: Mapping[str, Module]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for other in sorted(found[name].imports):
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in on_stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(found)))
    for name in sorted(found):
        if name not in index:
            visit(name)
    return groups


def main() -> int:
    found = modules()
    grouped = parts(found)
    print(f"{'part':<11} {'modules':>7} {'lines':>6}  imports")
    for part in [*LAYERS, *sorted(set(grouped) - set(LAYERS))]:
        members = grouped.get(part, [])
        if not members:
            continue
        imported = {part_of(name) for module in members for name in module.imports} - {part}
        imported.discard("(package)")
        ordered = [p for p in LAYERS if p in imported] + sorted(imported - set(LAYERS))
        lines = sum(module.lines for module in members)
        print(f"{part:<11} {len(members):>7} {lines:>6}  {', '.join(ordered) or '-'}")
    longest = sorted((m for m in found.values() if m.lines > 800), key=lambda m: -m.lines)
    for module in longest:
        print(f"over 800 lines: {module.name} ({module.lines})")
    wrong = against_the_order(found)
    loops = cycles(found)
    for line in wrong:
        print(f"against the order: {line}")
    for group in loops:
        print(f"cycle: {' ↔ '.join(group)}")
    if not wrong and not loops:
        print("imports run one way; no cycle")
    return 1 if wrong or loops else 0


if __name__ == "__main__":
    raise SystemExit(main())
