"""Generate a synthetic pi RPC stream shaped like real ones (compare the captures in tests/data/pi-rpc).

Real pi RPC streams repeat content: `message_update` carries the partial message twice, `turn_end`
repeats the turn's tool results, and the final `agent_end` carries the whole conversation in ONE
line (a large fraction of the stream). Usage: gen_pi_stream.py SIZE_MB OUT.jsonl
"""

import json
import random
import sys

random.seed(1)
target = int(sys.argv[1]) * 1024 * 1024
out = open(sys.argv[2], "w")
size = 0
n = 0
files = [f"src/pkg{i // 20}/mod{i}.py" for i in range(400)]
history = []  # (role, text) kept only as sizes + seeds to rebuild agent_end without holding text


def emit(obj):
    global size
    line = json.dumps(obj, separators=(",", ":"))
    out.write(line + "\n")
    size += len(line) + 1


emit({"type": "agent_start"})
while size < target * 0.8:
    emit({"type": "turn_start"})
    text = ""
    for _ in range(random.randint(20, 60)):
        text += "x" * random.randint(5, 60)
        partial = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        emit(
            {
                "type": "message_update",
                "assistantMessageEvent": {
                    "type": "text_delta",
                    "contentIndex": 0,
                    "delta": "x",
                    "partial": partial,
                },
                "message": partial,
            }
        )
    calls = []
    for _ in range(random.randint(1, 3)):
        n += 1
        cid = f"toolu_{n:08d}"
        tool = random.choice(["cr_read", "cr_read", "cr_diff", "read"])
        args = (
            {"path": random.choice(files)}
            if tool != "cr_diff"
            else {"offset": random.randint(0, 10**6), "limit": 20000}
        )
        calls.append((cid, tool, args))
        emit({"type": "tool_execution_start", "toolCallId": cid, "toolName": tool, "args": args})
    results = []
    for cid, tool, args in calls:
        body = "z" * random.randint(500, 20000)
        res = {"content": [{"type": "text", "text": body}], "details": {}}
        err = random.random() < 0.05
        emit(
            {
                "type": "tool_execution_end",
                "toolCallId": cid,
                "toolName": tool,
                "result": res,
                "isError": err,
            }
        )
        results.append(
            {
                "role": "toolResult",
                "toolCallId": cid,
                "toolName": tool,
                "content": res["content"],
                "isError": err,
            }
        )
        history.append(len(body))
    emit(
        {
            "type": "turn_end",
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "toolResults": results,
        }
    )
    history.append(len(text))
# the final agent_end: the whole conversation in one line, written in pieces
out.write('{"type":"agent_end","messages":[')
first = True
for k in history:
    piece = json.dumps(
        {"role": "toolResult", "content": [{"type": "text", "text": "z" * k}]},
        separators=(",", ":"),
    )
    out.write(("" if first else ",") + piece)
    first = False
    size += len(piece) + 1
out.write("]}\n")
print(n, "calls", size, "bytes")
