"""Format sniffing: every real and crafted stream is recognised from its first lines, nothing is
guessed when the lines are ambiguous, and a stream fed to the wrong adapter gets a hint."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import pytest

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.model import Capability, Counters
from coverage_gate.core.events import Adapter, Decoder
from coverage_gate.record.sniff import candidates, head_lines, peek, sniff, wrong_format_hint
from tests.conftest import DATA, record_bytes

SNIFFED = ["pi-rpc", "claude-code", "codex-rollout", "codex-exec", "otlp-json"]
SNIFFED += ["opencode", "copilot-cli"]
SNIFFED += ["gemini-cli", "qwen-code"]
STREAMS = [(fmt, path) for fmt in SNIFFED for path in sorted((DATA / fmt).glob("*.jsonl"))]
HEAD_BYTES = 64 * 1024
CLAUDE = DATA / "claude-code" / "claude_b_overclaim.jsonl"


def test_every_registered_format_is_named_by_its_adapter() -> None:
    assert set(SNIFFED) <= set(ADAPTERS)
    assert all(adapter.name == name for name, adapter in ADAPTERS.items())


@pytest.mark.parametrize(("fmt", "path"), STREAMS, ids=[f"{f}-{p.stem}" for f, p in STREAMS])
def test_every_stream_is_sniffed_as_its_own_format(fmt: str, path: Path) -> None:
    assert sniff(head_lines(path.read_bytes()[:HEAD_BYTES])) == fmt


@pytest.mark.parametrize(("fmt", "path"), STREAMS, ids=[f"{f}-{p.stem}" for f, p in STREAMS])
def test_lines_cut_to_their_first_bytes_are_still_sniffed(fmt: str, path: Path) -> None:
    """A reader may only hold the head of a long first line (Claude's init, Codex's meta)."""
    assert sniff(head_lines(path.read_bytes()[:HEAD_BYTES], max_bytes=256)) == fmt


@pytest.mark.parametrize(
    "prefix",
    [b"", b"\n\n", b"hello world\nthis is a log\n", b"\xff\xfe\x00\x01", b'{"a": 1}\n[1, 2]\n'],
    ids=["empty", "blank", "text", "binary", "other-json"],
)
def test_streams_of_no_known_format_are_not_guessed(prefix: bytes) -> None:
    assert sniff(head_lines(prefix)) is None


class _Claims:
    """A fake adapter whose sniffer claims every stream."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.capability = Capability.PER_FILE
        self.description = "claims everything"

    def decoder(self) -> Decoder:
        raise NotImplementedError

    def sniff(self, head_lines: Sequence[bytes]) -> bool:
        return bool(head_lines)


def test_lines_claimed_by_two_formats_are_not_guessed() -> None:
    registry: dict[str, Adapter] = {"one": _Claims("one"), "two": _Claims("two")}
    lines = [b'{"type":"x"}']
    assert candidates(lines, registry) == ["one", "two"]
    assert sniff(lines, registry) is None


def test_head_lines_keeps_the_first_non_blank_lines_each_cut() -> None:
    prefix = b"\n  \nabcdef\r\n\nsecond\nthird-without-newline"
    assert head_lines(prefix, max_lines=2, max_bytes=4) == [b"abcd", b"seco"]
    assert head_lines(prefix)[-1] == b"third-without-newline"


@pytest.mark.parametrize("size", [0, 5, 16, 1 << 20], ids=["none", "inside", "exact", "past-end"])
def test_peeked_stream_still_yields_every_byte_from_the_start(size: int) -> None:
    """A pipe cannot be rewound: what was read to sniff it must still be recorded."""
    data = b"0123456789abcdef" * 1000
    prefix, stream = peek(io.BytesIO(data), size)
    assert prefix == data[:size]
    chunks = []
    while chunk := stream.read(7):
        chunks.append(chunk)
    assert b"".join(chunks) == data


def test_a_peeked_stream_hands_on_the_rest_without_copying_it() -> None:
    """Past the peeked bytes, each read is the underlying stream's own bytes object: a stream of
    hundreds of MB is not copied again through a buffer of the wrapper's."""
    rest = [b"rest-1" * 1000, b"rest-2" * 1000]
    pieces = iter([b"{}\n" * 10, *rest])

    class Source:
        def read(self, size: int = -1, /) -> bytes:
            return next(pieces, b"")

    prefix, stream = peek(Source(), 1 << 16)
    assert stream.read(1 << 22) == prefix + rest[0]  # the one join, where the peek ends
    assert stream.read(1 << 22) is rest[1]
    assert stream.read(1 << 22) == b""


def test_a_peeked_stream_records_the_same_evidence() -> None:
    data = CLAUDE.read_bytes()
    prefix, stream = peek(io.BytesIO(data), 300)
    assert sniff(head_lines(prefix)) == "claude-code"
    assert record_bytes(stream.read(), "claude-code") == record_bytes(data, "claude-code")


# --- the wrong-format hint ---------------------------------------------------------------------


def hint_for(data: bytes, source: str) -> str | None:
    document = record_bytes(data, source)
    return wrong_format_hint(source, document.counters, head_lines(data[:HEAD_BYTES]))


def test_stream_fed_to_the_wrong_adapter_names_the_format_it_looks_like() -> None:
    assert hint_for(CLAUDE.read_bytes(), "pi-rpc") == (
        "0 tool calls recognised in 14 lines: is this a claude-code stream?"
    )


def test_hint_counts_lines_with_thousands_separators() -> None:
    first, *_ = CLAUDE.read_bytes().splitlines()
    event = b'{"type":"stream_event","event":{"type":"ping"},"session_id":"s"}'
    data = b"\n".join([first, *[event] * 1203]) + b"\n"
    assert hint_for(data, "codex-rollout") == (
        "0 tool calls recognised in 1,204 lines: is this a claude-code stream?"
    )


def test_no_hint_when_calls_were_recognised() -> None:
    assert hint_for(CLAUDE.read_bytes(), "claude-code") is None


def test_no_hint_for_an_empty_stream() -> None:
    assert wrong_format_hint("claude-code", Counters(lines=0), []) is None


def test_no_hint_for_a_stream_of_the_right_format_without_calls() -> None:
    first, *_ = CLAUDE.read_bytes().splitlines()
    assert hint_for(first + b"\n", "claude-code") is None


def test_stream_of_no_known_format_says_it_does_not_look_like_the_chosen_one() -> None:
    assert hint_for(b"plain log line\nanother line\n", "claude-code") == (
        "0 tool calls recognised in 2 lines: the stream does not look like claude-code; "
        "pass the right --format"
    )


def test_one_line_is_singular() -> None:
    counters = Counters(lines=1)
    assert wrong_format_hint("pi-rpc", counters, [b"x"]) == (
        "0 tool calls recognised in 1 line: the stream does not look like pi-rpc; "
        "pass the right --format"
    )


# --- OpenCode and Copilot CLI --------------------------------------------------------------------

OTHER_CLIENT_PROBES = sorted((DATA / "hostile").glob("*_probe.*.jsonl"))


@pytest.mark.parametrize("path", OTHER_CLIENT_PROBES, ids=lambda p: p.name.split("_")[0])
def test_opencode_and_copilot_sniffers_claim_only_their_own_clients_probes(path: Path) -> None:
    """The probes of Gemini CLI, Qwen Code, OpenCode and Copilot CLI: the OpenCode and Copilot
    sniffers claim their own client's stream and no other."""
    found = candidates(head_lines(path.read_bytes()[:HEAD_BYTES]))
    own = {"opencode": "opencode", "copilot": "copilot-cli"}.get(path.name.split("_")[0])
    assert {"opencode", "copilot-cli"} & set(found) == ({own} if own else set())


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (DATA / "opencode" / "opencode_capture.jsonl", "opencode"),
        (DATA / "copilot-cli" / "copilot_capture.jsonl", "copilot-cli"),
    ],
    ids=["opencode", "copilot-cli"],
)
def test_an_opencode_or_copilot_stream_fed_to_another_adapter_gets_a_hint(
    path: Path, fmt: str
) -> None:
    hint = hint_for(path.read_bytes(), "claude-code")
    assert hint is not None
    assert hint.endswith(f"is this a {fmt} stream?")
