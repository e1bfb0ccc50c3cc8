"""Seeded hostile inputs: damaged copies of every input file coverage-gate reads.

``tests/commands/test_hostile_inputs.py`` runs them. Every case is rebuilt from its id alone (its random
generator is seeded with ``f"{SEED}:{case_id}"``), so a failing case reproduces exactly:

    python -m tests._support.hostile CASE_ID DIR    # writes the case's files into DIR, prints its commands

Inputs start from real ones: the captured streams in ``tests/data`` (``tests/data/hostile`` holds
copies of the native client captures of ``realclients/native``: Claude Code's stream-json and
its own OTLP traces of one run, Codex ``exec --json``, and probes of four other clients, two of them read by their own adapters), the
golden evidence documents, the bundled flags snapshot (also the disk copy's format), a changed
files list, a review bundle, reviewer claims, and a small telemetry folder for ``report``.

Two kinds of change are made:

- ``DAMAGE``: bytes that are not UTF-8, a line cut off (or the stream cut short), NUL bytes, a
  line over the size limit, a 5,000-digit number, a value of 2**63 or more, 100,000-deep
  nesting, a field of the wrong JSON type, a UTF-8 BOM, CRLF line ends, a duplicated line,
  independent lines shuffled. Damage is no statement about what the reviewer did: an honest
  reviewer's claims must stay verified or become unknown, never unsupported.
- ``FACTS`` and the rest: a line dropped, a success flag made an explicit failure, decoy paths,
  huge strings, garbage lines, empty files. These may change what the evidence says; they are
  only held to a documented exit code and to leaving no partial output.
"""

from __future__ import annotations

import json
import random
import re
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

import coverage_gate.examples
from coverage_gate.rollout.flags import DEPLOYMENT_KEY, FlagSettings, deployment, disk_copy_path

SEED = 20260808
TESTS = Path(__file__).parents[1]
DATA = TESTS / "data"
HOSTILE_DATA = DATA / "hostile"
GOLDEN = TESTS / "golden"
EXAMPLES = Path(coverage_gate.examples.__file__).parent

REPO_ROOT = "/home/user/repo"
REVISION = "rev1"  # the revision the golden evidence documents were recorded at
REPO = "acme/hostile"
DEAD_UNLEASH = "http://127.0.0.1:9/api"  # nothing listens there: the live flag source fails

PI_CHANGED = (
    "README.md",
    "docs/guide.md",
    "src/api/handlers.py",
    "src/api/models.py",
    "src/util/strings.py",
    "tests/test_handlers.py",
)
READ_IN_B = ("src/api/handlers.py", "src/api/models.py")  # what the *_b_overclaim runs really read
LEDGER_READ = ("pkg/ledger/invoice.go", "pkg/ledger/tax.go", "web/app.js")

ADAPTERS: tuple[str, ...] = (
    "pi-rpc",
    "claude-code",
    "codex-rollout",
    "codex-exec",
    "otlp-json",
    "subprocess",
    "gemini-cli",
    "qwen-code",
)
ADAPTERS += ("opencode", "copilot-cli")


@dataclass(frozen=True)
class Capture:
    """A real captured stream; ``honest`` lists the files its reviewer read successfully, which
    an honest reviewer of that run claims (and nothing else)."""

    key: str
    path: Path
    adapter: str
    honest: tuple[str, ...]
    diff: Path | None = None


HONEST = (
    Capture(
        "pi_a_honest",
        DATA / "pi-rpc" / "pi_a_honest.jsonl",
        "pi-rpc",
        PI_CHANGED,
        DATA / "pi-rpc" / "review.diff",
    ),
    Capture(
        "claude_b_reads",
        DATA / "claude-code" / "claude_b_overclaim.jsonl",
        "claude-code",
        READ_IN_B,
    ),
    Capture(
        "claude_native",
        HOSTILE_DATA / "claude-code_2.1.328_same_run.stream-json.jsonl",
        "claude-code",
        LEDGER_READ,
    ),
    Capture(
        "codex_rollout_b_reads",
        DATA / "codex-rollout" / "codex_b_overclaim.rollout.jsonl",
        "codex-rollout",
        READ_IN_B,
    ),
    Capture(
        "codex_exec_b_reads",
        DATA / "codex-exec" / "codex_b_overclaim.exec.jsonl",
        "codex-exec",
        READ_IN_B,
    ),
    Capture(
        "codex_exec_native",
        HOSTILE_DATA / "codex_0.169.0_same_run.exec.jsonl",
        "codex-exec",
        (*LEDGER_READ, "cmd/ledger/main.go"),
    ),
    Capture(
        "otlp_claude_b_reads",
        DATA / "otlp-json" / "coverage_gate_claude_b_overclaim.jsonl",
        "otlp-json",
        READ_IN_B,
    ),
    Capture(
        "otlp_claude_native",
        HOSTILE_DATA / "claude-code_2.1.328_otlp_traces.jsonl",
        "otlp-json",
        LEDGER_READ,
    ),
    Capture("subprocess_pi", DATA / "pi-rpc" / "pi_a_honest.jsonl", "subprocess", PI_CHANGED),
    # OpenCode 1.18.33 and Copilot CLI 1.0.102: what each run read successfully
    Capture(
        "opencode_reads",
        DATA / "opencode" / "opencode_capture.jsonl",
        "opencode",
        ("README.md", "src/api/handlers.py", "src/util/strings.py"),
    ),
    Capture(
        "opencode_native",
        HOSTILE_DATA / "opencode_1.18.33_probe.json.jsonl",
        "opencode",
        ("pkg/ledger/tax.go", "web/app.js"),
    ),
    Capture(
        "copilot_reads",
        DATA / "copilot-cli" / "copilot_capture.jsonl",
        "copilot-cli",
        ("README.md", "src/api/handlers.py", "src/api/models.py", "src/util/strings.py"),
    ),
    Capture(
        "copilot_native",
        HOSTILE_DATA / "copilot_1.0.102_probe.json.jsonl",
        "copilot-cli",
        ("pkg/ledger/tax.go", "web/app.js"),
    ),
    Capture(
        "gemini_a_honest",
        DATA / "gemini-cli" / "gemini_a_honest.jsonl",
        "gemini-cli",
        PI_CHANGED,
        DATA / "pi-rpc" / "review.diff",
    ),
    Capture(
        "qwen_a_honest",
        DATA / "qwen-code" / "qwen_a_honest.jsonl",
        "qwen-code",
        PI_CHANGED,
        DATA / "pi-rpc" / "review.diff",
    ),
)
HONEST_BY_KEY = {capture.key: capture for capture in HONEST}


@cache
def stream_corpus() -> tuple[tuple[Path, str | None], ...]:
    """Every stream in the test data with its own format (``None``: a client no adapter reads)."""
    found: list[tuple[Path, str | None]] = []
    for adapter in ADAPTERS:
        folder = DATA / adapter
        if folder.is_dir():
            found += [(path, adapter) for path in sorted(folder.glob("*.jsonl"))]
    for path in sorted(HOSTILE_DATA.glob("*.jsonl")):
        if "stream-json" in path.name and path.name.startswith("claude-code"):
            found.append((path, "claude-code"))
        elif "otlp_traces" in path.name:
            found.append((path, "otlp-json"))
        elif path.name.startswith("codex") and ".exec." in path.name:
            found.append((path, "codex-exec"))
        elif path.name.startswith("opencode_"):
            found.append((path, "opencode"))
        elif path.name.startswith("copilot_"):
            found.append((path, "copilot-cli"))
        elif path.name.startswith(("gemini-cli", "qwen-code")):
            found.append((path, path.name.split("_", 1)[0]))
        else:
            found.append((path, None))
    return tuple(found)


@cache
def read(path: Path) -> bytes:
    return path.read_bytes()


# --- steps and cases ---------------------------------------------------------------------------


@dataclass
class Step:
    """One command line. ``outputs`` maps each file it may write (``-o``) to its contract."""

    args: list[str]
    stdin: bytes | None = None
    env: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)  # path -> "evidence" | "decision"
    exit_code_flag: bool = False  # --exit-code given: 1 is a documented answer
    stdout_contract: str | None = None  # stdout is this whole document on exit 0
    optional_evidence: str | None = None  # drop "--evidence PATH" when PATH was not written


@dataclass
class Built:
    """A case's files are written; these are its commands and what was done to its inputs."""

    steps: list[Step]
    mutations: list[str]
    honest: tuple[str, ...] = ()  # (c): the honest reviewer's claims, each verified or unknown
    out_dir: Path | None = None


# record makes no metrics: its metric reader would only cost a thread per case. Its spans, which
# carry what it read from the stream, are exported as they are for every user.
RECORD_ENV = {"OTEL_METRICS_EXPORTER": "none"}


def rng_for(case_id: str) -> random.Random:
    return random.Random(f"{SEED}:{case_id}")


# --- JSON helpers ------------------------------------------------------------------------------

RAW = "@@HOSTILE_RAW@@"
BAD_UTF8 = (b"\xff", b"\xfe\xff", b"\xc3\x28", b"\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80")
BIG_NUMBERS = (2**63, 2**63 + 1, 2**64, 2**64 + 7, 10**19, 10**30, -(2**63) - 1)
DEPTH = 100_000
# Keys of fields that decide what a line means; the damage aims at them more often than not.
INTERESTING = frozenset(
    (  # noqa: SIM905 - a list of field names reads best as words
        "type subtype id tool_use_id toolCallId toolName name input file_path filePath args path "
        "isError is_error content status exit_code call_id parsed_cmd cwd item payload message "
        "offset limit result tool_use_result file startLine numLines totalLines "
        "parent_tool_use_id resourceSpans scopeSpans spans attributes key value stringValue "
        "intValue boolValue code events success schema_version agent_id inspected_files "
        "skipped_files findings constraints schema version revision stream_complete capability "
        "files reads_succeeded reads_failed reads_unknown diff_pages_succeeded ranges counters "
        "truncated issues bounds reviewers claims evidence failed features enabled strategies "
        "variants parameters rollout weight values startTimeUnixNano endTimeUnixNano dataPoints "
        "asInt metrics"
    ).split()
)
SWAPS: dict[str, tuple[object, ...]] = {
    "string": ("", "x", "true", "false", "0", "1", "null"),
    "number": (0, 1, -1, 2.5),
    "boolean": (True, False),
    "null": (None,),
    "array": ([], ["x"], [None, 1]),
    "object": ({}, {"x": 1}),
}
PATH_DECOYS = (
    "../../../etc/passwd",
    "/etc/passwd",
    "/home/user/repo/../repo/README.md",
    "/home/user/repository/README.md",
    ".git/config",
    "src/.git/HEAD",
    "@",
    "",
    ".",
    "./",
    "src\\api\\handlers.py",
    "C:\\repo\\README.md",
    "README.md\u0000.txt",
    "README.md\n",
    "README\u202emd.py",
    "\uff53\uff52\uff43/api/handlers.py",
    "src/api/handlers.py/",
    "src//api///handlers.py",
    "notREADME.md",
    "a/" * 3000 + "b",
    "\udcff.py",
    "file:///home/user/repo/README.md",
)


def kind_of(value: object) -> str:
    if value is ABSENT:
        return "absent"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    return "object"


Path_ = tuple[str | int, ...]


def nodes(root: object) -> list[tuple[Path_, object]]:
    """Every node below ``root`` with its path (iterative: documents may be deep)."""
    out: list[tuple[Path_, object]] = []
    stack: list[tuple[Path_, object]] = [((), root)]
    while stack:
        path, value = stack.pop()
        children: Iterator[tuple[str | int, object]]
        if isinstance(value, dict):
            children = iter(value.items())
        elif isinstance(value, list):
            children = iter(enumerate(value))
        else:
            continue
        for key, child in children:
            out.append(((*path, key), child))
            stack.append(((*path, key), child))
    return out


def show_path(path: Path_) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)


def set_at(root: object, path: Path_, value: object) -> None:
    target = root
    for part in path[:-1]:
        target = target[part]  # type: ignore[index]
    target[path[-1]] = value  # type: ignore[index]


def dump(value: object, *, indent: int | None = None) -> bytes:
    separators = (",", ":") if indent is None else (",", ": ")
    try:
        return json.dumps(value, ensure_ascii=False, separators=separators, indent=indent).encode()
    except UnicodeEncodeError:
        return json.dumps(value, separators=separators, indent=indent).encode()


def loads(data: bytes) -> object | None:
    try:
        value: object = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return value


def short(value: object, size: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= size else text[: size - 3] + "..."


def deep(rng: random.Random) -> bytes:
    if rng.random() < 0.7:
        return b"[" * DEPTH + b"]" * DEPTH
    return b'{"a":' * DEPTH + b"1" + b"}" * DEPTH


def digits(rng: random.Random) -> bytes:
    sign = b"-" if rng.random() < 0.3 else b""
    return sign + b"1" + bytes(rng.choice(b"0123456789") for _ in range(4999))


OUTCOME_KEYS = frozenset({"isError", "is_error", "status", "exit_code", "success", "code"})
OUTCOME_ATTRIBUTES = frozenset({"coverage_gate.call.outcome", "success", "error.type"})


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()


def outcome_nodes(root: object) -> list[tuple[Path_, object]]:
    """The fields that say how a call ended: success flags, statuses, exit codes, an OTLP
    outcome attribute, and the optional ``is_error`` of a Claude Code tool result."""
    found: list[tuple[Path_, object]] = []
    for path, value in nodes(root):
        last = path[-1]
        if isinstance(last, str) and last in OUTCOME_KEYS:
            found.append((path, value))
        elif isinstance(value, dict) and value.get("key") in OUTCOME_ATTRIBUTES:
            found.append(((*path, "value"), value.get("value", ABSENT)))
        elif (
            isinstance(value, dict)
            and value.get("type") == "tool_result"
            and "is_error" not in value
        ):
            found.append(((*path, "is_error"), ABSENT))
    return found


def pick_node(
    rng: random.Random, root: object, numeric: bool = False
) -> tuple[Path_, object] | None:
    every = nodes(root)
    if not every:
        return None
    if numeric:
        numbers = [n for n in every if kind_of(n[1]) == "number"]
        if numbers and rng.random() < 0.6:
            return rng.choice(numbers)
    interesting = [n for n in every if isinstance(n[0][-1], str) and n[0][-1] in INTERESTING]
    if interesting and rng.random() < 0.7:
        return rng.choice(interesting)
    return rng.choice(every)


def mutate_value(rng: random.Random, root: object, how: str) -> tuple[object, bytes | None, str]:
    """Change one node of a parsed document: ``how`` is one of type_swap, big_int, digits, deep,
    huge_string, path_decoy. Returns the new root, raw bytes that replace the ``RAW`` marker
    (for values ``json`` cannot write), and a description."""
    picked = pick_node(rng, root, numeric=how in ("big_int", "digits"))
    if picked is None:  # a scalar document: replace it whole
        path: Path_ = ()
        old: object = root
    else:
        path, old = picked
    raw: bytes | None = None
    outcomes = outcome_nodes(root) if how == "type_swap" else []
    if outcomes and rng.random() < 0.5:
        path, old = rng.choice(outcomes)
    if how == "type_swap":
        # A flag given a value of another type: never a boolean where one was absent, since
        # true and false are real statements of how a call ended.
        wrong = {kind_of(old), "boolean"} if old is ABSENT else {kind_of(old)}
        choices = [kind for kind in SWAPS if kind not in wrong]
        new: object = json.loads(json.dumps(rng.choice(SWAPS[rng.choice(choices)])))
    elif how == "big_int":
        new = rng.choice(BIG_NUMBERS)
    elif how == "digits":
        new, raw = RAW, digits(rng)
    elif how == "deep":
        new, raw = RAW, deep(rng)
    elif how == "huge_string":
        new = rng.choice(["a", "é", "\U0001f600", "\\"]) * rng.choice([70_000, 1_100_000])
    else:  # path_decoy
        strings = [n for n in nodes(root) if isinstance(n[1], str)]
        if strings:
            path, old = rng.choice(strings)
        new = rng.choice(PATH_DECOYS)
    what = f"{how} {show_path(path)}: {short(old)} -> " + (
        f"<{len(raw)} bytes {raw[:12]!r}...>" if raw is not None else short(new)
    )
    if not path:
        return new, raw, what
    set_at(root, path, new)
    return root, raw, what


def serialise(root: object, raw: bytes | None, *, indent: int | None = None) -> bytes:
    data = dump(root, indent=indent)
    if raw is not None:
        data = data.replace(f'"{RAW}"'.encode(), raw, 1)
    return data


# --- JSON-lines streams ------------------------------------------------------------------------

MARKERS: tuple[bytes, ...] = (
    b'"type":"agent_start"',
    b'"type":"agent_end"',
    b'"type":"agent_settled"',
    b'"type":"result"',
    b'"subtype":"init"',
    b'"task_complete"',
    b'"task_started"',
    b'"session_meta"',
    b'"turn_context"',
    b'"turn.completed"',
    b'"turn.started"',
    b'"thread.started"',
)
TOOL_LINES: tuple[bytes, ...] = (
    b'"tool_execution_',
    b'"tool_use"',
    b'"tool_result"',
    b'"function_call',
    b"CommandExecution",
    b'"command_execution"',
    b"execute_tool",
    b"claude_code.tool",
)
# OpenCode's step lines complete (and reopen) its stream; Copilot CLI's tool lines
MARKERS += (b'"type":"step_start"', b'"type":"step_finish"', b'"type":"assistant.turn_start"')
TOOL_LINES += (b'"tool.execution_',)
_IDS = re.compile(
    rb'"(?:toolCallId|tool_use_id|id|call_id|spanId|item_id|callID|tool_id)"\s*:\s*"([^"\\]{4,200})"'
)


class Lines:
    """A JSON-lines file being damaged, line by line."""

    def __init__(self, data: bytes, limit: int) -> None:
        self.lines = data.split(b"\n")
        self.trailing = bool(self.lines) and self.lines[-1] == b""
        if self.trailing:
            self.lines.pop()
        self.limit = limit  # the line size limit the record command is given

    def data(self) -> bytes:
        return b"\n".join(self.lines) + (b"\n" if self.trailing else b"")

    def pick(self, rng: random.Random) -> int:
        """A line index, biased towards tool calls and completion markers."""
        if not self.lines:
            self.lines.append(b"")
        roll = rng.random()
        tools = [i for i, line in enumerate(self.lines) if any(t in line for t in TOOL_LINES)]
        markers = [i for i, line in enumerate(self.lines) if any(m in line for m in MARKERS)]
        if tools and roll < 0.6:
            return rng.choice(tools)
        if markers and roll < 0.75:
            return rng.choice(markers)
        return rng.randrange(len(self.lines))


def _insert(line: bytes, rng: random.Random, what: bytes) -> tuple[bytes, int]:
    at = rng.randrange(len(line) + 1)
    return line[:at] + what + line[at:], at


def _line_value(rng: random.Random, doc: Lines, how: str) -> str:
    i = doc.pick(rng)
    parsed = loads(doc.lines[i])
    if parsed is None:  # not JSON (any more): put the bad value in as bytes
        bad = {
            "digits": digits(rng),
            "deep": deep(rng),
            "big_int": str(rng.choice(BIG_NUMBERS)).encode(),
        }.get(how, b'"x"')
        doc.lines[i], at = _insert(doc.lines[i], rng, bad)
        return f"{how} line {i + 1} (not JSON) at byte {at}"
    root, raw, what = mutate_value(rng, parsed, how)
    doc.lines[i] = serialise(root, raw)
    return what.replace(f"{how} ", f"{how} line {i + 1} ", 1)


def m_bad_utf8(rng: random.Random, doc: Lines) -> str:
    i = doc.pick(rng)
    bad = rng.choice(BAD_UTF8)
    doc.lines[i], at = _insert(doc.lines[i], rng, bad)
    return f"bad_utf8 line {i + 1} byte {at}: {bad!r}"


def m_cut_line(rng: random.Random, doc: Lines) -> str:
    i = doc.pick(rng)
    line = doc.lines[i]
    at = rng.randrange(1, max(len(line), 2))
    doc.lines[i] = line[:at]
    return f"cut_line line {i + 1} at byte {at} of {len(line)}"


def m_cut_stream(rng: random.Random, doc: Lines) -> str:
    data = doc.data()
    at = rng.randrange(max(len(data), 1))
    doc.lines, doc.trailing = data[:at].split(b"\n"), False
    return f"cut_stream at byte {at} of {len(data)}"


def m_nul(rng: random.Random, doc: Lines) -> str:
    i = doc.pick(rng)
    count = rng.choice([1, 1, 3])
    doc.lines[i], at = _insert(doc.lines[i], rng, b"\0" * count)
    return f"nul line {i + 1} byte {at} x{count}"


def m_oversize(rng: random.Random, doc: Lines) -> str:
    i = doc.pick(rng)
    line = doc.lines[i]
    pad = max(doc.limit - len(line), 0) + rng.randrange(1, 4096)
    body = line.rstrip(b"\r")
    if body.endswith(b"}"):
        doc.lines[i] = body[:-1] + b',"pad":"' + b"x" * pad + b'"}' + line[len(body) :]
    else:
        doc.lines[i] = line + b"x" * pad
    return f"oversize line {i + 1} to {len(doc.lines[i])} bytes (limit {doc.limit})"


def m_bom(rng: random.Random, doc: Lines) -> str:
    del rng
    if not doc.lines:
        doc.lines.append(b"")
    doc.lines[0] = b"\xef\xbb\xbf" + doc.lines[0]
    return "bom"


def m_crlf(rng: random.Random, doc: Lines) -> str:
    del rng
    doc.lines = [line + b"\r" for line in doc.lines]
    return "crlf"


def m_dup_line(rng: random.Random, doc: Lines) -> str:
    i = doc.pick(rng)
    j = i + 1 if rng.random() < 0.6 else rng.randrange(i + 1, len(doc.lines) + 1)
    doc.lines.insert(j, doc.lines[i])
    return f"dup_line line {i + 1} again as line {j + 1}"


def m_shuffle(rng: random.Random, doc: Lines) -> str:
    """Reorder a few neighbouring lines that share no call id, never moving a marker line (a
    completion, a context line) or the first line: the same events, in another order."""
    free = [
        i
        for i, line in enumerate(doc.lines)
        if i > 0 and not any(marker in line for marker in MARKERS)
    ]
    if len(free) < 2:
        return "shuffle (no independent lines)"
    start = rng.randrange(len(free))
    window = [free[start]]
    size = rng.randrange(2, 9)
    for index in free[start + 1 :]:
        if len(window) == size or index != window[-1] + 1:
            break
        window.append(index)
    ids = [set(_IDS.findall(doc.lines[i])) for i in window]
    remaining = list(range(len(window)))
    order: list[int] = []
    while remaining:  # a random order that keeps lines sharing an id in their order
        ready = [k for k in remaining if not any(ids[k] & ids[e] for e in remaining if e < k)]
        chosen = rng.choice(ready)
        order.append(chosen)
        remaining.remove(chosen)
    original = [doc.lines[i] for i in window]
    for slot, k in zip(window, order, strict=True):
        doc.lines[slot] = original[k]
    moved = "" if order != sorted(order) else " (no independent lines)"
    return f"shuffle lines {window[0] + 1}-{window[-1] + 1} as {order}{moved}"


DAMAGE: dict[str, Callable[[random.Random, Lines], str]] = {
    "bad_utf8": m_bad_utf8,
    "cut_line": m_cut_line,
    "cut_stream": m_cut_stream,
    "nul": m_nul,
    "oversize": m_oversize,
    "digits": partial(_line_value, how="digits"),
    "big_int": partial(_line_value, how="big_int"),
    "deep": partial(_line_value, how="deep"),
    "type_swap": partial(_line_value, how="type_swap"),
    "bom": m_bom,
    "crlf": m_crlf,
    "dup_line": m_dup_line,
    "shuffle": m_shuffle,
}


def m_drop_line(rng: random.Random, doc: Lines) -> str:
    i = doc.pick(rng)
    del doc.lines[i]
    return f"drop_line line {i + 1}"


_FAILURES: dict[str, object] = {
    "isError": True,
    "is_error": True,
    "status": "failed",
    "exit_code": 1,
    "success": False,
    "code": 2,
}


def m_flip_failure(rng: random.Random, doc: Lines) -> str:
    """A success flag made an explicit failure: a change of what happened."""
    i = doc.pick(rng)
    parsed = loads(doc.lines[i])
    if parsed is None:
        return m_drop_line(rng, doc)
    flags = [n for n in nodes(parsed) if isinstance(n[0][-1], str) and n[0][-1] in _FAILURES]
    blocks = [
        n for n in nodes(parsed) if isinstance(n[1], dict) and n[1].get("type") == "tool_result"
    ]
    if flags:
        path, old = rng.choice(flags)
        new = _FAILURES[str(path[-1])]
        set_at(parsed, path, new)
        what = f"{show_path(path)}: {short(old)} -> {short(new)}"
    elif blocks:
        path, block = rng.choice(blocks)
        block["is_error"] = True  # type: ignore[index]
        what = f"{show_path(path)}.is_error = true"
    else:
        return m_drop_line(rng, doc)
    doc.lines[i] = dump(parsed)
    return f"flip_failure line {i + 1} {what}"


def m_garbage(rng: random.Random, doc: Lines) -> str:
    at = rng.randrange(len(doc.lines) + 1)
    garbage = rng.choice(
        [
            bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b""),
            b"[]",
            b'"text"',
            b"42",
            b"null",
            b"{",
            b"}",
            b"   ",
            b"",
            b'{"type":"tool_execution_end"}',
            b'{"type":"tool_execution_start","toolCallId":"x","toolName":"cr_read","args":{}}',
            b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"execute_tool Read"}]}]}]}',
            b'{"type":"user","message":{"content":[{"type":"tool_result"}]}}',
        ]
    )
    doc.lines.insert(at, garbage)
    return f"garbage line {at + 1}: {short(garbage)}"


def m_stream_twice(rng: random.Random, doc: Lines) -> str:
    del rng
    doc.lines = doc.lines + doc.lines
    return "stream_twice"


def m_empty(rng: random.Random, doc: Lines) -> str:
    doc.lines = rng.choice([[], [b""], [b"", b"", b""], [b"\r"]])
    doc.trailing = rng.random() < 0.5
    return f"empty {doc.lines!r}"


OTHER: dict[str, Callable[[random.Random, Lines], str]] = {
    "drop_line": m_drop_line,
    "flip_failure": m_flip_failure,
    "path_decoy": partial(_line_value, how="path_decoy"),
    "huge_string": partial(_line_value, how="huge_string"),
    "garbage": m_garbage,
    "stream_twice": m_stream_twice,
    "empty": m_empty,
}
ANY_LINE_CHANGE = {**DAMAGE, **OTHER}


def damage_lines(
    rng: random.Random,
    data: bytes,
    limit: int,
    table: dict[str, Callable[[random.Random, Lines], str]],
    count: int,
) -> tuple[bytes, list[str]]:
    doc = Lines(data, limit)
    kinds = [kind for kind in sorted(table) for _ in range(WEIGHTS.get(kind, 1))]
    done = [table[rng.choice(kinds)](rng, doc) for _ in range(count)]
    return doc.data(), done


# A wrong type has many more fields to land on than the other kinds of damage have ways to
# happen, and it is where the success flags are: it is drawn more often.
WEIGHTS = {"type_swap": 3}


def longest_line(data: bytes) -> int:
    return max((len(line) for line in data.split(b"\n")), default=0)


def line_limit(data: bytes) -> int:
    """A line limit above every line of a capture, with room for a 100,000-deep value."""
    return max(longest_line(data), 1024) + 700_000


# --- whole documents (claims, evidence, bundle, flags) -----------------------------------------


def damage_document(rng: random.Random, data: bytes, count: int = 1) -> tuple[bytes, list[str]]:
    done: list[str] = []
    for _ in range(count):
        how = rng.choice(
            [
                "type_swap",
                "type_swap",
                "type_swap",
                "big_int",
                "digits",
                "deep",
                "huge_string",
                "path_decoy",
                "drop_key",
                "extra_key",
                "negative",
                "whole",
                "bytes",
                "bytes",
            ]
        )
        parsed = loads(data)
        if how == "bytes" or parsed is None:
            data, what = damage_bytes(rng, data)
            done.append(what)
            continue
        indent = rng.choice([None, 2])
        if how == "whole":
            new = json.loads(json.dumps(rng.choice([v for vs in SWAPS.values() for v in vs])))
            data = dump(new)
            done.append(f"whole document -> {short(new)}")
        elif how in ("drop_key", "extra_key", "negative"):
            data, what = _key_change(rng, parsed, how, indent)
            done.append(what)
        else:
            root, raw, what = mutate_value(rng, parsed, how)
            data = serialise(root, raw, indent=indent)
            done.append(what)
    return data, done


def _key_change(
    rng: random.Random, parsed: object, how: str, indent: int | None
) -> tuple[bytes, str]:
    objects: list[tuple[Path_, object]] = [((), parsed)] if isinstance(parsed, dict) else []
    objects += [n for n in nodes(parsed) if isinstance(n[1], dict)]
    if how == "negative":
        numbers = [n for n in nodes(parsed) if kind_of(n[1]) == "number"]
        if numbers:
            path, old = rng.choice(numbers)
            new = rng.choice([-1, -(2**31), -0.5, 1e308 * 10])
            set_at(parsed, path, new)
            return dump(parsed, indent=indent), f"negative {show_path(path)}: {old!r} -> {new!r}"
    if not objects:
        return dump(parsed, indent=indent), f"{how} (no object)"
    path, target = rng.choice(objects)
    assert isinstance(target, dict)
    if how == "drop_key" and target:
        key = rng.choice(sorted(target))
        del target[key]
        return dump(parsed, indent=indent), f"drop_key {show_path((*path, key))}"
    target[rng.choice(["extra", "__proto__", "inspected_files", "", "schema_version"])] = (
        rng.choice([1, "x", None, [], {}])
    )
    return dump(parsed, indent=indent), f"extra_key in {show_path(path)}"


def damage_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    how = rng.choice(
        ["bad_utf8", "cut", "nul", "bom", "crlf", "empty", "whitespace", "garbage", "twice"]
    )
    at = rng.randrange(len(data) + 1)
    if how == "bad_utf8":
        bad = rng.choice(BAD_UTF8)
        return data[:at] + bad + data[at:], f"bad_utf8 at byte {at}: {bad!r}"
    if how == "cut":
        return data[:at], f"cut at byte {at} of {len(data)}"
    if how == "nul":
        return data[:at] + b"\0" + data[at:], f"nul at byte {at}"
    if how == "bom":
        return b"\xef\xbb\xbf" + data, "bom"
    if how == "crlf":
        return data.replace(b"\n", b"\r\n"), "crlf"
    if how == "empty":
        return b"", "empty"
    if how == "whitespace":
        return b" \n\t\r\n", "whitespace (only)"
    if how == "twice":
        return data + data, "twice (the document twice)"
    garbage = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    return data[:at] + garbage + data[at:], f"garbage at byte {at}: {short(garbage)}"


# --- the groups of cases -----------------------------------------------------------------------


def _record_args(stream: str, adapter: str | None, out: Path | None) -> list[str]:
    args = ["record", stream, "--revision", REVISION, "--repo-root", REPO_ROOT]
    if adapter is not None:
        args += ["--format", adapter]
    if out is not None:
        args += ["-o", str(out)]
    return args


def _claims(inspected: Sequence[str], agent: str = "reviewer") -> bytes:
    document = {
        "schema_version": 1,
        "agent_id": agent,
        "inspected_files": list(inspected),
        "skipped_files": [],
        "constraints": [],
        "findings": [],
    }
    return dump(document, indent=2) + b"\n"


def _reconcile_args(
    rng: random.Random,
    folder: Path,
    *,
    claims: str | None = "claims.json",
    evidence: str | None = "evidence.json",
    changed: str = "changed.txt",
    mode: str | None = None,
) -> tuple[list[str], Step]:
    inp, out = folder / "in", folder / "out"
    args = [
        "reconcile",
        "--repo",
        REPO,
        "--revision",
        REVISION,
        "--verdict",
        rng.choice(["approve", "approve", "comment", "request_changes"]),
        "--changed",
        changed if changed == "-" else str(inp / changed),
        "--repo-root",
        REPO_ROOT,
        "--mode",
        mode or rng.choice(["enforce", "shadow", "off"]),
    ]
    if claims is not None:
        args += ["--claims", str(inp / claims)]
    if evidence is not None:
        args += ["--evidence", str(inp / evidence)]
    fmt = rng.choice(["json", "text", "markdown"])
    args += ["--format", fmt]
    step = Step(args, stdout_contract="decision" if fmt == "json" else None)
    if rng.random() < 0.7:
        args += ["--decision-json", str(out / "decision.json")]
        step.outputs[str(out / "decision.json")] = "decision"
    if rng.random() < 0.4:
        args.append("--exit-code")
        step.exit_code_flag = True
    return args, step


def _swap_path(rng: random.Random, step: Step, path: Path, mutations: list[str]) -> None:
    """Now and then the file named is no file: a folder, an empty device, or nothing at all."""
    if rng.random() >= 0.06:
        return
    label, other = rng.choice(
        [("a folder", str(path.parent)), ("/dev/null", "/dev/null"), ("missing", f"{path}.gone")]
    )
    step.args = [other if arg == str(path) else arg for arg in step.args]
    mutations.append(f"path {path.name} is {label}")


def _prepare(folder: Path) -> tuple[Path, Path]:
    inp, out = folder / "in", folder / "out"
    inp.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    return inp, out


def _base_reconcile_inputs(inp: Path) -> None:
    (inp / "claims.json").write_bytes(_claims(PI_CHANGED))
    (inp / "evidence.json").write_bytes(read(GOLDEN / "pi-rpc" / "pi_a_honest.evidence.json"))
    (inp / "changed.txt").write_bytes("\n".join(PI_CHANGED).encode() + b"\n")


def build_honest(case_id: str, index: int, capture: Capture, folder: Path) -> Built:
    """(c) A damaged honest capture, recorded, then reconciled in enforce mode with the honest
    reviewer's claims over exactly those files. Index 0 is the undamaged capture."""
    rng = rng_for(case_id)
    inp, out = _prepare(folder)
    data = read(capture.path)
    limit = line_limit(data)
    mutations: list[str] = []
    if index > 0:
        data, mutations = damage_lines(rng, data, limit, DAMAGE, 1 if rng.random() < 0.85 else 2)
    (inp / "stream.jsonl").write_bytes(data)
    (inp / "claims.json").write_bytes(_claims(capture.honest))
    (inp / "changed.txt").write_bytes("\n".join(capture.honest).encode() + b"\n")
    evidence = out / "evidence.json"
    record = _record_args(str(inp / "stream.jsonl"), capture.adapter, evidence)
    record += ["--max-line-bytes", str(limit)]
    if capture.diff is not None and rng.random() < 0.3:
        record += ["--diff", str(capture.diff)]
        mutations.append("with --diff")
    reconcile = [
        "reconcile",
        "--repo",
        REPO,
        "--revision",
        REVISION,
        "--verdict",
        "approve",
        "--claims",
        str(inp / "claims.json"),
        "--evidence",
        str(evidence),
        "--changed",
        str(inp / "changed.txt"),
        "--mode",
        "enforce",
        "--format",
        "json",
        "--exit-code",
        "--repo-root",
        REPO_ROOT,
        "--decision-json",
        str(out / "decision.json"),
    ]
    return Built(
        steps=[
            Step(record, env=dict(RECORD_ENV), outputs={str(evidence): "evidence"}),
            Step(
                reconcile,
                # Only the evidence document differs between these cases, and nothing of it but
                # enum values reaches reconcile's telemetry: the claims are the honest ones.
                env={"OTEL_SDK_DISABLED": "true"},
                outputs={str(out / "decision.json"): "decision"},
                exit_code_flag=True,
                stdout_contract="decision",
                optional_evidence=str(evidence),
            ),
        ],
        mutations=mutations or ["none (the capture as recorded)"],
        honest=capture.honest,
        out_dir=out,
    )


def build_stream(case_id: str, adapter: str, folder: Path) -> Built:
    """(a)/(b) Any stream, damaged or changed, recorded with one adapter (or detected)."""
    rng = rng_for(case_id)
    inp, out = _prepare(folder)
    corpus = stream_corpus()
    own = [item for item in corpus if item[1] == adapter]
    path, _ = rng.choice(own if own and rng.random() < 0.6 else corpus)
    data = read(path)
    limit = rng.choice([1024, 4096, 65536, line_limit(data)])
    data, mutations = damage_lines(rng, data, limit, ANY_LINE_CHANGE, rng.choice([1, 1, 2, 3]))
    mutations.insert(0, f"from {path.relative_to(TESTS)}")
    (inp / "stream.jsonl").write_bytes(data)
    use_stdin = rng.random() < 0.15
    to_file = rng.random() < 0.8
    target = out / "evidence.json"
    chosen = None if rng.random() < 0.2 else adapter
    args = _record_args(
        "-" if use_stdin else str(inp / "stream.jsonl"), chosen, target if to_file else None
    )
    args += ["--max-line-bytes", str(limit)]
    if rng.random() < 0.2:
        diff = read(DATA / "pi-rpc" / "review.diff")
        if rng.random() < 0.4:
            diff, what = damage_bytes(rng, diff)
            mutations.append(f"diff {what}")
        (inp / "review.diff").write_bytes(diff)
        args += ["--diff", str(inp / "review.diff")]
    if to_file and rng.random() < 0.2:  # an earlier run's output is there: keep it or replace it
        target.write_bytes(read(GOLDEN / "pi-rpc" / "pi_a_honest.evidence.json"))
        mutations.append("old output already at -o")
    if rng.random() < 0.1:
        args += ["--max-files", str(rng.randrange(1, 4))]
    if rng.random() < 0.1:
        args += ["--max-issues", str(rng.randrange(0, 3))]
    step = Step(
        args,
        env=dict(RECORD_ENV),
        stdin=data if use_stdin else None,
        outputs={str(target): "evidence"} if to_file else {},
        stdout_contract=None if to_file else "evidence",
    )
    if not use_stdin:
        _swap_path(rng, step, inp / "stream.jsonl", mutations)
    return Built([step], mutations, out_dir=out)


def build_claims(case_id: str, folder: Path) -> Built:
    rng = rng_for(case_id)
    inp, out = _prepare(folder)
    _base_reconcile_inputs(inp)
    base = _claims(PI_CHANGED)
    if rng.random() < 0.3:  # a reviewer output with findings and citations
        document = json.loads(base)
        document["findings"] = [
            {"path": "src/api/handlers.py", "line": 12, "content": "def create_note", "note": "x"},
            "plain text finding",
        ]
        document["constraints"] = ["time budget", {"kind": "tokens", "limit": 1000}]
        base = dump(document, indent=2)
    data, mutations = damage_document(rng, base, rng.choice([1, 1, 2]))
    (inp / "claims.json").write_bytes(data)
    _, step = _reconcile_args(rng, folder)
    _swap_path(rng, step, inp / "claims.json", mutations)
    return Built([step], mutations, out_dir=out)


def build_evidence(case_id: str, folder: Path) -> Built:
    rng = rng_for(case_id)
    inp, out = _prepare(folder)
    _base_reconcile_inputs(inp)
    goldens = sorted(GOLDEN.glob("*/*.evidence.json"))
    source = rng.choice(goldens)
    data, mutations = damage_document(rng, read(source), rng.choice([1, 1, 2]))
    mutations.insert(0, f"from {source.relative_to(TESTS)}")
    (inp / "evidence.json").write_bytes(data)
    _, step = _reconcile_args(rng, folder)
    _swap_path(rng, step, inp / "evidence.json", mutations)
    return Built([step], mutations, out_dir=out)


BUNDLE_DECOYS = (
    "",
    ".",
    "/",
    "in",
    "../../../../../etc/passwd",
    "/etc/hostname",
    "/dev/null",
    "/proc/self/status",
    "claims.json\u0000.txt",
    "claims.json/",
    "no-such-file.json",
    "a" * 5000,
    "evidence.json",
    "claims.json",
    "bundle.json",
    "\udcff.json",
)


def build_bundle(case_id: str, folder: Path) -> Built:
    rng = rng_for(case_id)
    inp, out = _prepare(folder)
    _base_reconcile_inputs(inp)
    (inp / "claims2.json").write_bytes(_claims(READ_IN_B, agent="style"))
    (inp / "evidence2.json").write_bytes(
        read(GOLDEN / "claude-code" / "claude_b_overclaim.evidence.json")
    )
    bundle: dict[str, Any] = {
        "schema_version": 1,
        "reviewers": [
            {"claims": "claims.json", "evidence": "evidence.json"},
            {"agent_id": "style", "claims": "claims2.json", "evidence": "evidence2.json"},
            {"agent_id": "broken", "failed": True},
        ],
    }
    mutations: list[str] = []
    if rng.random() < 0.4:
        reviewer = rng.choice(bundle["reviewers"][:2])
        key = rng.choice(["claims", "evidence"])
        decoy = rng.choice(BUNDLE_DECOYS)
        mutations.append(f"decoy $.reviewers[].{key}: {short(reviewer[key])} -> {short(decoy)}")
        reviewer[key] = decoy
        data = dump(bundle, indent=2)
    else:
        data, mutations = damage_document(rng, dump(bundle, indent=2), rng.choice([1, 1, 2]))
    (inp / "bundle.json").write_bytes(data)
    _, step = _reconcile_args(rng, folder, claims=None, evidence=None)
    step.args += ["--bundle", str(inp / "bundle.json")]
    _swap_path(rng, step, inp / "bundle.json", mutations)
    return Built([step], mutations, out_dir=out)


CHANGED_DECOYS = (
    "../outside.py",
    "/etc/passwd",
    "/home/user/repo/README.md",
    ".git/config",
    "@README.md",
    "./README.md",
    "  README.md  ",
    "src\\api\\handlers.py",
    "# a comment",
    "a/" * 3000 + "b",
    "x" * 1_100_000,
    "README.md\u0085",
    "\uff52\uff45\uff41\uff44\uff4d\uff45.md",
    "package-lock.json",
    "vendor/lib.py",
)


def build_changed(case_id: str, folder: Path) -> Built:
    rng = rng_for(case_id)
    inp, out = _prepare(folder)
    _base_reconcile_inputs(inp)
    lines = [line.encode() for line in PI_CHANGED]
    mutations: list[str] = []
    for _ in range(rng.choice([1, 1, 2])):
        how = rng.choice(["decoy", "decoy", "bad_utf8", "nul", "control", "lines", "bytes"])
        at = rng.randrange(len(lines) + 1)
        if how == "decoy":
            decoy = rng.choice(CHANGED_DECOYS).encode("utf-8", "surrogatepass")
            lines.insert(at, decoy)
            mutations.append(f"decoy line {at + 1}: {short(decoy)}")
        elif how == "bad_utf8":
            bad = rng.choice(BAD_UTF8)
            lines.insert(at, b"src/" + bad + b".py")
            mutations.append(f"bad_utf8 line {at + 1}: {bad!r}")
        elif how == "nul":
            lines.insert(at, b"src/a\0b.py")
            mutations.append(f"nul line {at + 1}")
        elif how == "control":
            lines.insert(at, b"src/\x1b[31mred.py")
            mutations.append(f"control line {at + 1}: an escape sequence")
        elif how == "lines":
            doc = Lines(b"\n".join(lines) + b"\n", 1024)
            what = rng.choice([m_bom, m_crlf, m_dup_line, m_shuffle, m_cut_stream, m_empty])(
                rng, doc
            )
            lines = doc.lines
            mutations.append(what)
        else:
            data, what = damage_bytes(rng, b"\n".join(lines))
            lines = data.split(b"\n")
            mutations.append(what)
    data = b"\n".join(lines) + b"\n"
    (inp / "changed.txt").write_bytes(data)
    stdin = rng.random() < 0.25
    _, step = _reconcile_args(rng, folder, changed="-" if stdin else "changed.txt")
    if stdin:
        step.stdin = data
        mutations.append("stdin (the list piped in)")
    else:
        _swap_path(rng, step, inp / "changed.txt", mutations)
    return Built([step], mutations, out_dir=out)


def _flags_command(rng: random.Random, folder: Path, snapshot: str | None) -> Step:
    if rng.random() < 0.5:
        args = ["flags", "--repo", rng.choice(["acme/payments", "acme/other", "x"])]
        if snapshot is not None:
            args += ["--flags", snapshot]
        if rng.random() < 0.5:
            args += ["--format", "json"]
        if rng.random() < 0.3:
            args += ["--flags-on-error", "fallback"]
        return Step(args)
    _, step = _reconcile_args(rng, folder, mode="auto")
    if snapshot is not None:
        step.args += ["--flags", snapshot]
    if rng.random() < 0.3:
        step.args += ["--flags-on-error", "fallback"]
    return step


def build_flags(case_id: str, folder: Path) -> Built:
    rng = rng_for(case_id)
    inp, out = _prepare(folder)
    _base_reconcile_inputs(inp)
    data, mutations = damage_document(
        rng, read(EXAMPLES / "flags.snapshot.json"), rng.choice([1, 1, 2])
    )
    (inp / "flags.json").write_bytes(data)
    step = _flags_command(rng, folder, str(inp / "flags.json"))
    _swap_path(rng, step, inp / "flags.json", mutations)
    return Built([step], mutations, out_dir=out)


def build_disk_copy(case_id: str, folder: Path) -> Built:
    """The live server is down, so the disk copy answers: a damaged disk copy."""
    rng = rng_for(case_id)
    inp, out = _prepare(folder)
    _base_reconcile_inputs(inp)
    # The copy the dead server's deployment kept (named for it, where it is looked for).
    settings = FlagSettings(unleash_url=DEAD_UNLEASH, disk_copy=inp / "copy.json")
    kept = disk_copy_path(settings)
    assert kept is not None
    kept_document = {
        **json.loads(read(EXAMPLES / "flags.snapshot.json")),
        DEPLOYMENT_KEY: deployment(settings),
    }
    data, mutations = damage_document(
        rng, json.dumps(kept_document, indent=2).encode(), rng.choice([1, 1, 2])
    )
    kept.write_bytes(data)
    step = _flags_command(rng, folder, None)
    step.env = {
        "UNLEASH_URL": DEAD_UNLEASH,
        "COVERAGE_GATE_FLAGS_DISK_COPY": str(inp / "copy.json"),
    }
    return Built([step], mutations, out_dir=out)


def build_report(case_id: str, folder: Path) -> Built:
    rng = rng_for(case_id)
    inp, out = _prepare(folder)
    telemetry = inp / "telemetry"
    telemetry.mkdir()
    mutations: list[str] = []
    names = ["traces.jsonl", "metrics.jsonl"]
    for name in names:
        (telemetry / name).write_bytes(read(HOSTILE_DATA / "telemetry" / name))
    for _ in range(rng.choice([1, 1, 2])):
        roll = rng.random()
        if roll < 0.8:
            name = rng.choice(names)
            data, done = damage_lines(
                rng, (telemetry / name).read_bytes(), 4096, ANY_LINE_CHANGE, 1
            )
            (telemetry / name).write_bytes(data)
            mutations += [f"{what} (in {name})" for what in done]
        elif roll < 0.9:
            (telemetry / "folder.jsonl").mkdir(exist_ok=True)
            mutations.append("folder named folder.jsonl")
        else:
            link = telemetry / "broken.jsonl"
            if not link.is_symlink():
                link.symlink_to(telemetry / "missing-target")
            mutations.append("symlink broken.jsonl to nothing")
    args = ["report", "--telemetry-dir", str(telemetry)]
    if rng.random() < 0.5:
        args += ["--format", "json"]
    if rng.random() < 0.3:
        args += ["--list", "would_downgrade"]
    return Built([Step(args)], mutations, out_dir=out)


# --- registry ------------------------------------------------------------------------------------

Builder = Callable[[str, Path], Built]


@dataclass(frozen=True)
class Group:
    name: str
    count: int
    build: Builder
    honest: bool = False


def _honest(capture: Capture) -> Builder:
    def build(case_id: str, folder: Path) -> Built:
        return build_honest(case_id, int(case_id.rsplit("-", 1)[1]), capture, folder)

    return build


def _stream(adapter: str) -> Builder:
    def build(case_id: str, folder: Path) -> Built:
        return build_stream(case_id, adapter, folder)

    return build


# Cases per honest capture: more for the per-file formats, fewer where evidence is unavailable
# whatever happens (capability none) or already unknown.
HONEST_CASES = {
    "pi_a_honest": 140,
    "claude_b_reads": 110,
    "claude_native": 110,
    "codex_rollout_b_reads": 120,
    "codex_exec_b_reads": 50,
    "codex_exec_native": 50,
    "otlp_claude_b_reads": 110,
    "otlp_claude_native": 60,
    "subprocess_pi": 40,
    "opencode_reads": 80,
    "opencode_native": 40,
    "copilot_reads": 80,
    "copilot_native": 40,
    "gemini_a_honest": 110,
    "qwen_a_honest": 110,
}
GROUPS: tuple[Group, ...] = (
    *(Group(f"honest/{c.key}", HONEST_CASES[c.key], _honest(c), honest=True) for c in HONEST),
    *(Group(f"stream/{a}", 40 if a == "subprocess" else 70, _stream(a)) for a in ADAPTERS),
    Group("claims", 150, build_claims),
    Group("evidence", 150, build_evidence),
    Group("bundle", 100, build_bundle),
    Group("changed", 150, build_changed),
    Group("flags-snapshot", 150, build_flags),
    Group("disk-copy", 60, build_disk_copy),
    Group("report", 250, build_report),
)
GROUPS_BY_NAME = {group.name: group for group in GROUPS}


def case_ids(group: Group) -> list[str]:
    return [f"{group.name}-{index:04d}" for index in range(group.count)]


def group_of(case_id: str) -> Group:
    return GROUPS_BY_NAME[case_id.rsplit("-", 1)[0]]


def build(case_id: str, folder: Path) -> Built:
    return group_of(case_id).build(case_id, folder)


def command_line(step: Step, folder: Path | None = None) -> str:
    """The step as a shell line (``folder`` shown as ``CASE_DIR``)."""
    words = [f"{key}={value}" for key, value in step.env.items()]
    words += ["coverage-gate", *step.args]
    line = " ".join(shlex.quote(word) for word in words)
    if folder is not None:
        line = line.replace(str(folder), "CASE_DIR")
    return line + (" < (the case's input on stdin)" if step.stdin is not None else "")


def main(argv: Sequence[str]) -> int:
    """``python -m tests._support.hostile CASE_ID DIR``: write one case's files and print its commands."""
    if len(argv) != 2:
        sys.stderr.write("usage: python -m tests._support.hostile CASE_ID DIR\n")
        return 2
    case_id, folder = argv
    built = build(case_id, Path(folder))
    print(f"# case {case_id} (seed {SEED}): {'; '.join(built.mutations)}")
    for step in built.steps:
        print(command_line(step))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
