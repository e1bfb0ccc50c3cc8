"""`coverage-gate formats`: the stream formats `record` reads, what each knows, and a check of
one stream against them (DESIGN §6 rule 19)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from coverage_gate.commands._common import errors_to_exit, open_stream, say
from coverage_gate.contracts.enums import Capability
from coverage_gate.edges.stdio import write_stdout
from coverage_gate.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from coverage_gate.core.events import FormatKnowledge

__all__ = ["formats"]


def _knowledge(knows: FormatKnowledge | None) -> dict[str, object]:
    if knows is None:
        return {}
    return {
        "client": knows.client,
        "checked_versions": list(knows.versions) if knows.versions else None,
        "events": sorted(knows.events),
        "reads": sorted(knows.reads),
        "not_reads": dict(sorted(knows.not_reads.items())),
        "writes": sorted(knows.writes),
        "fields": list(knows.fields),
        "presentation": [
            {"transform": t.name, "shown_by": t.shown_by} for t in knows.presentation.transforms
        ],
        "trust": list(knows.trust),
    }


def _rules() -> list[str]:
    """The four rules the evidence holds to (``coverage_gate.core.rules``), wrapped."""
    import textwrap  # noqa: PLC0415 - start-up

    from coverage_gate.core.rules import EVIDENCE_RULES  # noqa: PLC0415

    out = ["  the evidence rules (every format; docs/concepts/trust-model.md):"]
    for number, (rule, does) in enumerate(EVIDENCE_RULES, 1):
        out += textwrap.wrap(
            f"{number}. {rule} {does}",
            width=96,
            initial_indent="    ",
            subsequent_indent="       ",
        )
    return out


def _details(name: str, knows: FormatKnowledge | None) -> str:
    from coverage_gate.core.drift import checked_range  # noqa: PLC0415 - start-up

    if knows is None:
        return (
            "\n".join([f"{name}: a document format; it has no stream events of its own", *_rules()])
            + "\n"
        )
    out = [
        f"{name} ({knows.client})",
        f"  checked with     {checked_range(knows)}",
        f"  event types      {', '.join(sorted(knows.events)) or '-'}",
        f"  reads            {', '.join(sorted(knows.reads)) or '-'}",
        f"  writing tools    {', '.join(sorted(knows.writes)) or '-'}",
        f"  result fields    {', '.join(knows.fields) or '-'}",
        "  known, not reads:",
        *(f"    {tool:<18} {why}" for tool, why in sorted(knows.not_reads.items())),
        "  presentation (what the client does to a file's text; every client: UTF-8 with U+FFFD",
        "  where bytes are not, a byte-order mark and a CR before a line break not compared):",
        *(f"    {t.name}" for t in knows.presentation.transforms),
        *(["  who could write it (what its evidence can prove):"] if knows.trust else []),
        *(f"    {line}" for line in knows.trust),
        "  anything else in a stream is drift: said, counted, and where the model cannot have",
        "  caused it, claims without evidence are unknown rather than unsupported",
        *_rules(),
    ]
    return "\n".join(out) + "\n"


def formats(
    name: Annotated[
        str | None,
        typer.Argument(help="A format to describe: what its adapter knows.", show_default=False),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print every format and what it knows as JSON."),
    ] = False,
    check: Annotated[
        str | None,
        typer.Option(
            "--check",
            metavar="<stream>",
            help="Check one stream ('-' for stdin): its format and client version, whether that "
            "version is in the range checked, and every drift found. Exit 0: understood; 1: "
            "drift; 3: not a known format.",
            show_default=False,
        ),
    ] = None,
    source_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="With --check: the input stream's format (default: told from its first lines).",
            show_default=False,
        ),
    ] = None,
    revision: Annotated[
        str | None,
        typer.Option(
            help="With --check: the revision under review, to compare the stream's own commit "
            "with (default: not compared).",
            show_default=False,
        ),
    ] = None,
    repo_root: Annotated[
        Path | None,
        typer.Option(help="With --check: the repository root paths are placed under."),
    ] = None,
) -> None:
    """List the stream formats `record` reads, or check one stream against them."""
    from coverage_gate.adapters import ADAPTERS, DOCUMENT_FORMATS  # noqa: PLC0415 - start-up

    with errors_to_exit():
        if check is None and (source_format or revision or repo_root):
            raise UsageError("--format, --revision and --repo-root go with --check STREAM")
        if check is not None:
            raise typer.Exit(_check(check, source_format, revision, repo_root))
        if name is not None:
            if name in DOCUMENT_FORMATS:
                write_stdout(_details(name, None), "format")
                return
            if name not in ADAPTERS:
                known = ", ".join(sorted([*ADAPTERS, *DOCUMENT_FORMATS]))
                raise UsageError(f"format {name!r} is unknown; known: {known}")
            write_stdout(_details(name, ADAPTERS[name].knows), "format")
            return
        if as_json:
            document = {
                fmt: {
                    "capability": adapter.capability.value,
                    "description": adapter.description,
                    **_knowledge(adapter.knows),
                }
                for fmt, adapter in sorted(ADAPTERS.items())
            }
            write_stdout(json.dumps(document, indent=2) + "\n", "list of formats")
            return
        described = {
            **{
                fmt: (adapter.capability.value, adapter.description)
                for fmt, adapter in ADAPTERS.items()
            },
            # a task's metadata gives per-file evidence when it holds a trace (see its
            # description)
            **{fmt: (Capability.PER_FILE.value, text) for fmt, text in DOCUMENT_FORMATS.items()},
        }
        lines = [
            f"{fmt:<16} capability {described[fmt][0]:<9} {described[fmt][1]}\n"
            for fmt in sorted(described)
        ]
        write_stdout("".join(lines), "list of formats")


def _check(
    stream: str, source_format: str | None, revision: str | None, repo_root: Path | None
) -> int:
    from coverage_gate.adapters import ADAPTERS  # noqa: PLC0415 - start-up
    from coverage_gate.core.drift import diagnose  # noqa: PLC0415
    from coverage_gate.record.recording import Recorder, RecordSettings, feed_all  # noqa: PLC0415
    from coverage_gate.record.sniff import head_lines, peek, sniff  # noqa: PLC0415

    if source_format is not None and source_format not in ADAPTERS:
        known = ", ".join(sorted(ADAPTERS))
        raise UsageError(f"--format {source_format!r} is not a stream format; known: {known}")
    with open_stream(stream) as raw:
        prefix, handle = peek(raw)
        chosen = source_format or sniff(head_lines(prefix))
        if chosen is None:
            say(
                f"coverage-gate: {stream}: not a known stream format (none of "
                f"{', '.join(sorted(ADAPTERS))} claims its first lines)"
            )
            return int(ExitCode.BAD_INPUT)
        adapter = ADAPTERS[chosen]
        root = str(repo_root.absolute()) if repo_root is not None else None
        settings = RecordSettings(revision=revision or "", repo_root=root)
        document = feed_all(handle, Recorder(adapter, settings))
    found = diagnose(document, adapter.knows, detected=source_format is None)
    write_stdout(found.render(), "check")
    return int(ExitCode.DRIFT) if found.drift else int(ExitCode.OK)
