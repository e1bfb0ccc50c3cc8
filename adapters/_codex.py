"""What Codex's two formats share: ``codex-rollout`` (``adapters/codex_rollout.py``) and
``codex exec --json`` (``adapters/codex_exec.py``) judge a command's success alike, find its
record's outcome damaged alike and name drift alike. No decoding: each format's module decodes
its own lines.

Drift and mutations (DESIGN §6 rules 19-20), both formats: a line, ``response_item``,
``event_msg``, ``item_completed`` item or ``exec --json`` item type Codex 0.169.0 does not write
is drift ``unknown_event`` (named ``response_item/<type>``, ``event_msg/<type>``,
``item_completed/<Type>``, ``item/<type>``); so is a ``parsed_cmd`` entry type other than
``read``/``list_files``/``search``/``unknown`` (``parsed_cmd/<type>``): Codex's own parser chose
it, not the model, and a read may hide under it, so it is drift that hides reads. A record field
of a type Codex never writes (``parsed_cmd`` not a list of objects with string types, an
``exit_code`` outside 32 bits, a ``status`` that is not text, a ``payload`` without its ``type``)
is drift ``field_type`` (``missing_field`` when gone) and makes the calls it could end unknown: a
damaged ``parsed_cmd`` is a read of a file that cannot be told. A call of a tool Codex does not
offer is an unknown tool (judged by what it returned, never by a parsed read), MCP tools in
``exec --json`` included (``mcp__<server>__<tool>``). A command whose argv or parsed commands
change files (``adapters/_mutations.py``), an ``apply_patch`` (its ``FileChange`` record's
``changes``, or the patch's headers) and an ``exec --json`` ``file_change`` are writes, never
reads. The rollout's ``session_meta`` names the Codex version (``cli_version``) and the commit
the session started at (``git.commit_hash``); ``exec --json`` names neither. A call without its
end still makes a rollout incomplete (``adapters/codex_rollout.py``); in a stream that
completed, the core also counts such calls as drift ``unpaired``.
"""

from __future__ import annotations

from typing import Final

from coverage_gate.contracts.enums import DriftKind
from coverage_gate.core.events import Drift

from ._json import OUT_OF_RANGE, JsonObject, get_int, get_str

__all__ = [
    "COMMAND_FAILED",
    "command_succeeded",
    "field_drift",
    "odd_outcome",
    "odd_outcome_field",
    "unknown_event",
]


COMMAND_FAILED: Final = "command_failed"


def field_drift(holder: JsonObject, field: str, name: str, lineno: int) -> Drift:
    """A field the adapter relies on, gone (``missing_field``) or of a type the format never
    uses (``field_type``); ``name`` is its dotted path."""
    kind = DriftKind.MISSING_FIELD if field not in holder else DriftKind.FIELD_TYPE
    return Drift(line=lineno, kind=kind, name=name)


def unknown_event(name: str, lineno: int) -> Drift:
    return Drift(line=lineno, kind=DriftKind.UNKNOWN_EVENT, name=name)


_INT32 = (-(2**31), 2**31 - 1)


def command_succeeded(item: JsonObject) -> bool:
    """Explicit success only: status completed and exit code 0 (DESIGN §6 rule 2)."""
    return get_str(item, "status") == "completed" and get_int(item, "exit_code") == 0


def odd_outcome(item: JsonObject) -> str | None:
    """Why a record's outcome cannot be read, or ``None``. Codex writes a string ``status`` and,
    for a completed command, an integer ``exit_code``: anything else is damage, which is neither a
    success nor a proven failure."""
    return odd_outcome_field(item)[0]


def odd_outcome_field(item: JsonObject) -> tuple[str | None, str]:
    """``odd_outcome`` and the field at fault (``status`` or ``exit_code``). An ``exit_code``
    is Codex's 32-bit integer: a larger one (``10**30``) is of a type the format never uses."""
    status = item.get("status")
    if not isinstance(status, str):
        return "field 'status' is not a string", "status"
    code = item.get("exit_code")
    if code is None and status != "completed":
        return None, ""
    if code is OUT_OF_RANGE or (
        isinstance(code, int) and not isinstance(code, bool) and not _INT32[0] <= code <= _INT32[1]
    ):
        return "field 'exit_code' is out of the range of an exit code", "exit_code"
    if not isinstance(code, int) or isinstance(code, bool):
        if status == "completed":
            return "a completed command without an integer 'exit_code'", "exit_code"
        return "field 'exit_code' is not an integer", "exit_code"
    return None, ""
