"""What the model received from each tool call, read from the mock model's ``--bodies`` log.

usage: python received.py BODIES.jsonl > received.json
The last request with tools holds the whole conversation: its tool results, in order, as the
model got them (Anthropic ``tool_result`` blocks, OpenAI Chat ``tool`` messages, Responses
``function_call_output`` items, Gemini ``functionResponse`` parts). Prints a JSON list of
``{"call": N, "text": ...}``; a result that is not text is given as JSON.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [
            part.get("text", json.dumps(part)) if isinstance(part, dict) else _text(part)
            for part in value
        ]
        return "".join(parts)
    return json.dumps(value, ensure_ascii=False)


def results(body: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for message in body.get("messages") or []:
        if message.get("role") == "tool":  # OpenAI Chat
            found.append(_text(message.get("content")))
            continue
        content = message.get("content")
        if isinstance(content, list):  # Anthropic
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found.append(_text(block.get("content")))
    for item in body.get("input") or []:  # Responses
        if isinstance(item, dict) and str(item.get("type", "")).endswith("_output"):
            found.append(_text(item.get("output")))
    for content in body.get("contents") or []:  # Gemini
        for part in content.get("parts") or []:
            if isinstance(part, dict) and "functionResponse" in part:
                response = part["functionResponse"].get("response")
                if isinstance(response, dict) and set(response) <= {"output", "error"}:
                    found.append(_text(response.get("output", response.get("error"))))
                else:
                    found.append(_text(response))
    return found


def main(path: str) -> None:
    last: dict[str, Any] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            last = json.loads(line)["body"]
    received = [{"call": n, "text": text} for n, text in enumerate(results(last), 1)]
    json.dump(received, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
