"""Source formats. The registry is a plain mapping from format name to adapter.

Installed as ``coverage_gate.adapters`` (see ``package-dir`` in pyproject.toml).
"""

from __future__ import annotations

from coverage_gate.events import Adapter

from . import (
    claude_code,
    codereview_cli,
    codex,
    copilot_cli,
    gemini_cli,
    opencode,
    otlp_json,
    pi_rpc,
    placeholder,
    qwen_code,
)

ADAPTERS: dict[str, Adapter] = {
    pi_rpc.NAME: pi_rpc.ADAPTER,
    placeholder.NAME: placeholder.ADAPTER,
    claude_code.NAME: claude_code.ADAPTER,
    codex.ROLLOUT: codex.ROLLOUT_ADAPTER,
    codex.EXEC: codex.EXEC_ADAPTER,
    otlp_json.NAME: otlp_json.ADAPTER,
    # OpenCode and GitHub Copilot CLI
    opencode.NAME: opencode.ADAPTER,
    copilot_cli.NAME: copilot_cli.ADAPTER,
    gemini_cli.NAME: gemini_cli.ADAPTER,
    qwen_code.NAME: qwen_code.ADAPTER,
}

# Formats read as one JSON document, not as a stream of lines: `record` reads them whole. Each
# maps to its description; its evidence rules live in the core (coverage_gate.tracecalls).
DOCUMENT_FORMATS: dict[str, str] = {
    codereview_cli.NAME: codereview_cli.DESCRIPTION,
}
