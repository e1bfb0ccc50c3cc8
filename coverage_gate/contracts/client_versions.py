"""The review clients' releases CI runs end to end, per format. Pure data.

``.ci/setup-clients.sh`` installs two releases of each client: the newest pinned one into
``$CG_TOOLS/clients`` and an older one into ``$CG_TOOLS/clients-older``, and the real-client
tests run every scenario at both. ``CHECKED`` holds, per format name, the ``(oldest, newest)``
pair of those releases: the range of client versions the format's adapter was checked with.
``tests/contracts/test_client_versions.py`` holds it to the versions the script declares.
"""

from __future__ import annotations

__all__ = ["CHECKED", "PACKAGE"]

# Per format name: (oldest, newest) release of its client that CI runs the scenarios with.
CHECKED: dict[str, tuple[str, str]] = {
    "pi-rpc": ("0.67.4", "0.73.1"),
    "claude-code": ("2.1.252", "2.1.328"),
    "codex-rollout": ("0.152.0", "0.169.0"),
    "codex-exec": ("0.152.0", "0.169.0"),
    "opencode": ("1.18.25", "1.18.33"),
    "copilot-cli": ("1.0.82", "1.0.102"),
    "gemini-cli": ("0.58.0", "0.61.0"),
    "qwen-code": ("0.23.0", "0.24.4"),
}

# Per format name: the npm package of the client that writes it.
PACKAGE: dict[str, str] = {
    "pi-rpc": "@mariozechner/pi-coding-agent",
    "claude-code": "@anthropic-ai/claude-code",
    "codex-rollout": "@openai/codex",
    "codex-exec": "@openai/codex",
    "opencode": "opencode-ai",
    "copilot-cli": "@github/copilot",
    "gemini-cli": "@google/gemini-cli",
    "qwen-code": "@qwen-code/qwen-code",
}
