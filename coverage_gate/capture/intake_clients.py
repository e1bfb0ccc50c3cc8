"""How each reviewer client is pointed at ``run``'s telemetry receiver.

``run --telemetry-intake CLIENT`` gives the reviewer's process the environment (and, for Codex,
the ``-c`` config overrides) that make its own OpenTelemetry exporter send to the loopback
receiver, with short export intervals. Plain data: no I/O.

- ``claude-code``: Claude Code's telemetry (``CLAUDE_CODE_ENABLE_TELEMETRY=1``), logs and traces
  over OTLP/HTTP JSON, with ``OTEL_LOG_TOOL_DETAILS=1`` (without it no record names a file).
- ``codex``: ``-c otel.exporter=...`` right after the ``codex`` program word (Codex reads its
  exporter from its config, not from ``OTEL_*``); its tool results name shell commands only, so
  its evidence has capability ``none``.
- ``otlp``: any agent that honours the standard ``OTEL_EXPORTER_OTLP_*`` variables (GenAI
  ``execute_tool`` spans).

Every client also gets ``COVERAGE_GATE_OTLP_ENDPOINT`` (the receiver's base URL), for a wrapper
script that configures its agent itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import PurePath
from typing import Final

__all__ = [
    "ENDPOINT_VARIABLE",
    "EXPORT_INTERVAL_MS",
    "IntakeClient",
    "codex_overrides",
    "command",
    "environment",
]

ENDPOINT_VARIABLE: Final = "COVERAGE_GATE_OTLP_ENDPOINT"
EXPORT_INTERVAL_MS: Final = "1000"


class IntakeClient(StrEnum):
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    OTLP = "otlp"


def _otlp_environment(endpoint: str) -> dict[str, str]:
    """The standard exporter variables, every signal-specific one too (it would win)."""
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": f"{endpoint}/v1/logs",
        "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/json",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{endpoint}/v1/traces",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_BSP_SCHEDULE_DELAY": EXPORT_INTERVAL_MS,
        "OTEL_BLRP_SCHEDULE_DELAY": EXPORT_INTERVAL_MS,
        ENDPOINT_VARIABLE: endpoint,
    }


def environment(client: IntakeClient, endpoint: str, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` (our own environment) with the client's exporter pointed at ``endpoint``."""
    env = {**base, **_otlp_environment(endpoint)}
    if client is IntakeClient.CLAUDE_CODE:
        env |= {
            "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
            "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
            "OTEL_LOG_TOOL_DETAILS": "1",
            "OTEL_LOGS_EXPORT_INTERVAL": EXPORT_INTERVAL_MS,
            "OTEL_TRACES_EXPORT_INTERVAL": EXPORT_INTERVAL_MS,
        }
    elif client is IntakeClient.CODEX:
        # Only the logs name tool calls; Codex's traces carry no arguments and are large.
        for name in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
            env.pop(name, None)
    return env


def codex_overrides(endpoint: str) -> list[str]:
    """Codex's ``-c`` options: its log exporter sent here, as OTLP/HTTP JSON."""
    exporter = f'{{otlp-http={{endpoint="{endpoint}/v1/logs",protocol="json"}}}}'
    return ["-c", f"otel.exporter={exporter}", "-c", "otel.log_user_prompt=false"]


def command(client: IntakeClient, argv: Sequence[str], endpoint: str) -> list[str] | None:
    """The reviewer command to run; ``None`` when Codex's options cannot be placed in it (its
    program word is not ``codex``: a wrapper must pass them on itself)."""
    if client is not IntakeClient.CODEX:
        return list(argv)
    if not argv or PurePath(argv[0]).name != "codex":
        return None
    return [argv[0], *codex_overrides(endpoint), *argv[1:]]
