"""Scripted mock model server for the real-client tests (stdlib only, 127.0.0.1 only).

Speaks these wire APIs:
  * Anthropic Messages  POST /v1/messages (SSE when "stream": true, JSON otherwise),
                        POST /v1/messages/count_tokens      -- pi and Claude Code
  * OpenAI Responses    POST /v1/responses (SSE)           -- Codex
  * OpenAI Chat         POST /v1/chat/completions (SSE when "stream": true, JSON otherwise)
                                                            -- Qwen Code, OpenCode, Copilot CLI
  * Gemini              POST /v1beta/models/<model>:streamGenerateContent (SSE),
                        :generateContent (JSON), :countTokens -- Gemini CLI

The "model" is a scenario file: {"steps": [{"text": "...", "calls": [{"name", "input"}]}, ...]}
ending with a step without calls (the final answer). The step to play is chosen from the request
alone: the number of tool results already in the conversation picks it, so retries and side
requests never desynchronise it. Requests without tools (titles, summaries) get a short reply.
"${WORKDIR}" anywhere in the scenario is replaced with --workdir.

usage: python mock_llm.py --scenario FILE [--workdir DIR] [--port 0] [--log FILE] [--bodies FILE]
With --port 0 a free port is chosen. The first line on stdout is "listening 127.0.0.1:<port>".
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

Json = dict[str, Any]


def count_tool_results(body: Json) -> int:
    count = 0
    for message in body.get("messages") or []:  # Anthropic; Chat Completions
        if isinstance(message, dict) and message.get("role") == "tool":
            count += 1
            continue
        content = message.get("content")
        if isinstance(content, list):
            count += sum(
                1
                for block in content
                if isinstance(block, dict) and block.get("type") == "tool_result"
            )
    for content in body.get("contents") or []:  # Gemini: functionResponse parts
        parts = content.get("parts") if isinstance(content, dict) else None
        count += sum(
            1 for part in parts or [] if isinstance(part, dict) and "functionResponse" in part
        )
    items = body.get("input")
    if isinstance(items, list):  # Responses
        count += sum(
            1
            for item in items
            if isinstance(item, dict)
            and str(item.get("type", "")).endswith("_output")
            and "call_id" in item
        )
    return count


def new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scenario: ClassVar[Json] = {}
    log_path: ClassVar[str] = ""
    bodies_path: ClassVar[str] = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        sys.stderr.write("[mock] " + (format % args) + "\n")

    # --- plumbing ---------------------------------------------------------------------------

    def _json(self, code: int, obj: Json) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_begin(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, event: str, obj: Json) -> None:
        self.wfile.write(f"event: {event}\ndata: {json.dumps(obj)}\n\n".encode())
        self.wfile.flush()

    def _log(self, body: Json | None) -> None:
        if self.bodies_path and body is not None and body.get("tools"):
            # what the model received, whole: the ground truth the presentation captures' truth
            # files are written from
            with open(self.bodies_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if not self.log_path:
            return
        record: Json = {"t": time.time(), "path": self.path}
        if body is not None:
            record["tools"] = len(body.get("tools") or [])
            record["tool_results_seen"] = count_tool_results(body)
        with open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def _step(self, body: Json) -> Json:
        if not body.get("tools"):
            return {"text": self.scenario.get("side_reply", "Mock session")}
        seen = count_tool_results(body)
        steps: list[Json] = self.scenario["steps"]
        played = 0
        for step in steps:
            if played == seen:
                return step
            played += len(step.get("calls") or [])
        return steps[-1]

    # --- routes ----------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._log(None)
        if self.path.startswith("/v1/models"):
            model = self.scenario.get("model", "mock-model")
            self._json(
                200,
                {
                    "data": [{"id": model, "object": "model", "type": "model"}],
                    "object": "list",
                    "has_more": False,
                },
            )
            return
        self._json(200, {})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        self._log(body)
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 1000})
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/chat/completions"):
            self._chat(body)
        elif "/models/" in path and ":" in path.rsplit("/", 1)[-1]:
            self._gemini(body, path.rsplit(":", 1)[-1])
        else:
            self._json(404, {"error": {"message": "mock: unknown path " + self.path}})

    # --- Anthropic Messages ----------------------------------------------------------------

    def _anthropic(self, body: Json) -> None:
        step = self._step(body)
        model = body.get("model", "mock")
        blocks: list[Json] = []
        if step.get("text"):
            blocks.append({"type": "text", "text": step["text"]})
        for call in step.get("calls") or []:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": new_id("toolu_"),
                    "name": call["name"],
                    "input": call["input"],
                }
            )
        stop = "tool_use" if step.get("calls") else "end_turn"
        usage = {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        message: Json = {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            self._json(200, message)
            return
        self._sse_begin()
        start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
        self._sse("message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                self._sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                self._sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": block["text"]},
                    },
                )
            else:
                self._sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": dict(block, input={}),
                    },
                )
                arguments = json.dumps(block["input"])
                # two deltas, like a real stream; cut after the first key so no value is split
                cut = arguments.find(": ") + 2 if ": " in arguments else len(arguments) // 2
                for part in (arguments[:cut], arguments[cut:]):
                    self._sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": part},
                        },
                    )
            self._sse("content_block_stop", {"type": "content_block_stop", "index": index})
        self._sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        )
        self._sse("message_stop", {"type": "message_stop"})

    # --- OpenAI Responses ------------------------------------------------------------------

    def _responses(self, body: Json) -> None:
        step = self._step(body)
        items: list[Json] = []
        if step.get("text"):
            items.append(
                {
                    "type": "message",
                    "id": new_id("msg_"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": step["text"], "annotations": []}],
                }
            )
        for call in step.get("calls") or []:
            items.append(
                {
                    "type": "function_call",
                    "id": new_id("fc_"),
                    "call_id": new_id("call_"),
                    "name": call["name"],
                    "arguments": json.dumps(call["input"]),
                    "status": "completed",
                }
            )
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 120,
        }
        base: Json = {
            "id": new_id("resp_"),
            "object": "response",
            "created_at": int(time.time()),
            "model": body.get("model", "mock"),
            "status": "in_progress",
            "output": [],
        }
        self._sse_begin()
        sequence = 0

        def emit(obj: Json) -> None:
            nonlocal sequence
            obj["sequence_number"] = sequence
            sequence += 1
            self._sse(obj["type"], obj)

        emit({"type": "response.created", "response": base})
        emit({"type": "response.in_progress", "response": base})
        for index, item in enumerate(items):
            if item["type"] == "message":
                part = item["content"][0]
                ids = {"output_index": index, "item_id": item["id"], "content_index": 0}
                emit(
                    {
                        "type": "response.output_item.added",
                        "output_index": index,
                        "item": dict(item, status="in_progress", content=[]),
                    }
                )
                emit(
                    {
                        "type": "response.content_part.added",
                        **ids,
                        "part": {"type": "output_text", "text": "", "annotations": []},
                    }
                )
                emit({"type": "response.output_text.delta", **ids, "delta": part["text"]})
                emit({"type": "response.output_text.done", **ids, "text": part["text"]})
                emit({"type": "response.content_part.done", **ids, "part": part})
            else:
                emit(
                    {
                        "type": "response.output_item.added",
                        "output_index": index,
                        "item": dict(item, arguments="", status="in_progress"),
                    }
                )
                emit(
                    {
                        "type": "response.function_call_arguments.delta",
                        "output_index": index,
                        "item_id": item["id"],
                        "delta": item["arguments"],
                    }
                )
                emit(
                    {
                        "type": "response.function_call_arguments.done",
                        "output_index": index,
                        "item_id": item["id"],
                        "arguments": item["arguments"],
                    }
                )
            emit({"type": "response.output_item.done", "output_index": index, "item": item})
        emit(
            {
                "type": "response.completed",
                "response": dict(base, status="completed", output=items, usage=usage),
            }
        )

    # --- OpenAI Chat Completions -----------------------------------------------------------

    def _chat(self, body: Json) -> None:
        """One completion: JSON, or streamed (the step's text, then each call as a name chunk
        and an arguments chunk, then the finish reason, a usage chunk and ``[DONE]``)."""
        step = self._step(body)
        model = body.get("model", "mock")
        calls = [
            {
                "id": new_id("call_"),
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["input"])},
            }
            for call in step.get("calls") or []
        ]
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        base: Json = {"id": new_id("chatcmpl-"), "created": int(time.time()), "model": model}
        if not body.get("stream"):
            message: Json = {"role": "assistant", "content": step.get("text") or None}
            if calls:
                message["tool_calls"] = calls
            choice = {"index": 0, "message": message, "finish_reason": finish}
            self._json(
                200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
            )
            return
        self._sse_begin()

        def chunk(delta: Json, finish_reason: str | None = None) -> None:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            self._data({**base, "object": "chat.completion.chunk", "choices": [choice]})

        chunk({"role": "assistant", "content": ""})
        if step.get("text"):
            chunk({"content": step["text"]})
        for index, call in enumerate(calls):
            name = call["function"]["name"]
            opening = {"name": name, "arguments": ""}
            chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                   "function": opening}]})  # fmt: skip
            arguments = {"arguments": call["function"]["arguments"]}
            chunk({"tool_calls": [{"index": index, "function": arguments}]})
        chunk({}, finish)
        self._data({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _data(self, obj: Json) -> None:
        """One server-sent event without an event name (OpenAI Chat, Gemini)."""
        self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
        self.wfile.flush()

    # --- Gemini ----------------------------------------------------------------------------

    def _gemini(self, body: Json, method: str) -> None:
        if method == "countTokens":
            self._json(200, {"totalTokens": 1000})
            return
        step = self._step(body)
        parts: list[Json] = []
        if step.get("text"):
            parts.append({"text": step["text"]})
        for call in step.get("calls") or []:
            function = {"name": call["name"], "args": call["input"], "id": new_id("gcall_")}
            parts.append({"functionCall": function})
        response: Json = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "totalTokenCount": 120,
            },
            "modelVersion": self.scenario.get("model", "mock-model"),
            "responseId": new_id("resp_"),
        }
        if method != "streamGenerateContent":
            self._json(200, response)
            return
        self._sse_begin()
        self._data(response)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--workdir", default="")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--log", default="")
    parser.add_argument("--bodies", default="", help="append every request with tools, whole")
    args = parser.parse_args()
    with open(args.scenario, encoding="utf-8") as handle:
        Handler.scenario = json.loads(handle.read().replace("${WORKDIR}", args.workdir))
    Handler.log_path = args.log
    Handler.bodies_path = args.bodies
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    sys.stdout.write(f"listening 127.0.0.1:{server.server_address[1]}\n")
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
