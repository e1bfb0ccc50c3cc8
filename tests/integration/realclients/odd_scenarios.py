"""Scripted honest reviews of make_odd_repo.sh's repository, one per client and way of reading.

usage: python odd_scenarios.py CLIENT WAY > scenario.json
  CLIENT: claude, codex, pi, opencode, copilot, gemini, qwen
  WAY:    read  (the client's own read tool: every changed file whole, then big.py's tail as a
                 ranged read, since every client cuts a whole read of it at about 2,000 lines)
          diff  (``git diff``, then ``cat`` of each file; big.py's end through ``tail``)
          cat   (``cat`` of each file alone, big.py's end through ``tail``)
          failed (``cat F; exit 1`` of three files: a command that printed the file and then
                 failed; the model got the output all the same)
The final answer claims every changed file the review read inspected: each was read honestly. Whether the model
received each file's text is what the client decides (a binary file may be refused); the truth
files beside the captures say what it received.
"""

from __future__ import annotations

import json
import sys
from typing import Any

CHANGED = [
    "big.py", "blob.bin", "bom.py", "control.txt", "crlf.txt", "emptied.txt", "latin1.txt",
    "lone_cr.txt", "long_line.js", "no_newline.txt", "one_line.txt", "reminder.md", "sjis.txt",
    "tabs.py", "unicode.md",
]  # fmt: skip
BIG_TAIL = (2401, 2600)  # big.py's lines 2,401 to its end, where it changed (line 2,582)
FAILED = ["no_newline.txt", "reminder.md", "tabs.py"]  # printed by a command that then fails


def _shell(client: str, command: str) -> dict[str, Any]:
    about = f"Show {command.rsplit(maxsplit=1)[-1]}"
    match client:
        case "claude":
            return {"name": "Bash", "input": {"command": command, "description": about}}
        case "codex":
            return {"name": "exec_command", "input": {"cmd": command}}
        case "pi":
            return {"name": "bash", "input": {"command": command}}
        case "opencode":
            return {"name": "bash", "input": {"command": command, "description": about}}
        case "copilot":
            return {
                "name": "bash",
                "input": {
                    "command": command,
                    "description": about,
                    "initial_wait": 30,
                    "mode": "sync",
                },
            }
        case "gemini":
            return {
                "name": "run_shell_command",
                "input": {"command": command, "description": about},
            }
        case "qwen":
            return {
                "name": "run_shell_command",
                "input": {"command": command, "description": about, "is_background": False},
            }
    raise SystemExit(f"unknown client {client}")


def _read(client: str, path: str, lines: tuple[int, int] | None = None) -> dict[str, Any]:
    absolute = "${WORKDIR}/" + path
    first, last = lines or (0, 0)
    match client, lines:
        case "claude", None:
            return {"name": "Read", "input": {"file_path": absolute}}
        case "claude", _:
            return {
                "name": "Read",
                "input": {"file_path": absolute, "offset": first, "limit": last - first + 1},
            }
        case "pi", None:
            return {"name": "read", "input": {"path": path}}
        case "pi", _:
            return {
                "name": "read",
                "input": {"path": path, "offset": first, "limit": last - first + 1},
            }
        case "opencode", None:
            return {"name": "read", "input": {"filePath": absolute}}
        case "opencode", _:
            return {
                "name": "read",
                "input": {"filePath": absolute, "offset": first, "limit": last - first + 1},
            }
        case "copilot", None:
            return {"name": "view", "input": {"path": absolute}}
        case "copilot", _:
            return {"name": "view", "input": {"path": absolute, "view_range": [first, last]}}
        case "gemini", None:
            return {"name": "read_file", "input": {"file_path": absolute}}
        case "gemini", _:
            return {
                "name": "read_file",
                "input": {"file_path": absolute, "start_line": first, "end_line": last},
            }
        case "qwen", None:
            return {"name": "read_file", "input": {"file_path": absolute}}
        case "qwen", _:
            return {
                "name": "read_file",
                "input": {"file_path": absolute, "offset": first - 1, "limit": last - first + 1},
            }
    raise SystemExit(f"{client} has no read tool of its own: read it with WAY cat or diff")


def calls(client: str, way: str) -> list[dict[str, Any]]:
    """The calls of one honest review, in order."""
    if way == "read":
        return [_read(client, path) for path in CHANGED] + [_read(client, "big.py", BIG_TAIL)]
    first, last = BIG_TAIL
    shown = [
        _shell(client, f"sed -n '{first},{last}p' big.py" if path == "big.py" else f"cat {path}")
        for path in CHANGED
    ]
    if way == "diff":
        return [_shell(client, "git diff"), *shown]
    if way == "cat":
        return shown
    if way == "failed":
        return [_shell(client, f"cat {path}; exit 1") for path in FAILED]
    raise SystemExit(f"unknown way {way}")


def scenario(client: str, way: str) -> dict[str, Any]:
    answer = {
        "schema_version": 1,
        "agent_id": "reviewer",
        "inspected_files": FAILED if way == "failed" else CHANGED,
        "findings": [],
    }
    steps: list[dict[str, Any]] = [{"calls": [call]} for call in calls(client, way)]
    steps[0]["text"] = "Let me read the change."
    steps.append({"text": json.dumps(answer)})
    return {"model": "mock-model", "side_reply": "Mock session", "steps": steps}


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    json.dump(scenario(sys.argv[1], sys.argv[2]), sys.stdout, indent=1)
    sys.stdout.write("\n")
