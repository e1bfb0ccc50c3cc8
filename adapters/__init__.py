"""Source formats. The registry is a plain mapping from format name to adapter.

Installed as ``coverage_gate.adapters`` (see ``package-dir`` in pyproject.toml).

Start-up: an adapter's module is imported when its format is first looked up. Naming the formats,
counting them or asking whether one is known imports none; looking items up (listing them with
their descriptions, sniffing a stream's format) imports each in turn. A command given its format
loads that adapter alone.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from coverage_gate.core.events import Adapter

__all__ = ["ADAPTERS", "DOCUMENT_FORMATS", "V"]

V = TypeVar("V")


class _Registry(Mapping[str, V]):
    """Format name → an attribute of one of this package's modules, imported on first lookup;
    in the order given."""

    def __init__(self, entries: dict[str, tuple[str, str]]) -> None:
        self._entries = entries
        self._loaded: dict[str, V] = {}

    def __getitem__(self, name: str) -> V:
        found = self._loaded.get(name)
        if found is None:
            module, attribute = self._entries[name]
            found = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
            self._loaded[name] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries


# Each format's name, and the module and attribute of its adapter (the name is the adapter's
# own ``name``: tests/test_architecture.py holds them equal).
ADAPTERS: Mapping[str, Adapter] = _Registry(
    {
        "pi-rpc": ("pi_rpc", "ADAPTER"),
        "subprocess": ("placeholder", "ADAPTER"),
        "claude-code": ("claude_code", "ADAPTER"),
        "codex-rollout": ("codex_rollout", "ROLLOUT_ADAPTER"),
        "codex-exec": ("codex_exec", "EXEC_ADAPTER"),
        "otlp-json": ("otlp_json", "ADAPTER"),
        # OpenCode and GitHub Copilot CLI
        "opencode": ("opencode", "ADAPTER"),
        "copilot-cli": ("copilot_cli", "ADAPTER"),
        "gemini-cli": ("gemini_cli", "ADAPTER"),
        "qwen-code": ("qwen_code", "ADAPTER"),
    }
)

# Formats read as one JSON document, not as a stream of lines: `record` reads them whole. Each
# maps to its description; its evidence rules live in the core (coverage_gate.core.tracecalls).
DOCUMENT_FORMATS: Mapping[str, str] = _Registry(
    {
        "codereview-cli": ("codereview_cli", "DESCRIPTION"),
    }
)
