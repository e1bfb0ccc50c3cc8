"""`coverage-gate replay DIR`: which verdicts candidate settings would change, per repository.

Receipts are read one at a time (never all at once), in this process or by worker processes
(``--jobs``) whose results are taken back in name order; the per-repository counts are held, and
the audit list is spooled to a temporary file and streamed out at the end, so memory stays
bounded however many receipts the folder holds. A receipt that cannot be replayed is named on
stderr and the others are replayed; the exit code is then 3.
"""

from __future__ import annotations

import functools
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer

from coverage_gate.commands._choice import choice
from coverage_gate.commands._common import error_line, errors_to_exit, say
from coverage_gate.commands.flags import FlagNameOption, FlagsFileOption
from coverage_gate.contracts.enums import DepthPolicy, UnknownPolicy
from coverage_gate.edges.stdio import require_stdout, write_stdout
from coverage_gate.errors import BadInputError, ExitCode, UsageError

if TYPE_CHECKING:
    from coverage_gate.rollout.replay import Candidate, FlagAnswer, Tally

__all__ = ["CHUNK", "REPLAY", "CandidateCitationPolicy", "CandidateMode", "ReplayFormat", "replay"]

REPLAY = "replay"
#: Characters written to stdout at a time.
CHUNK = 1 << 16


class ReplayFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


class CandidateMode(StrEnum):
    OFF = "off"
    SHADOW = "shadow"
    ENFORCE = "enforce"


class CandidateCitationPolicy(StrEnum):
    ACCEPT = "accept"
    DOWNGRADE = "downgrade"


def _flag_lookup(snapshot: Path, flag_name: str | None) -> Callable[..., FlagAnswer]:
    """The candidate snapshot's answer per repository, evaluated as reconcile would (once per
    repository, agents and formats)."""
    from coverage_gate.rollout.flags import (  # noqa: PLC0415
        FlagConfigError,
        resolve_mode,
        settings_from_env,
    )
    from coverage_gate.rollout.replay import FlagAnswer  # noqa: PLC0415

    # a snapshot that cannot be used is bad configuration (exit 4), as in reconcile and flags
    if snapshot.is_dir():
        raise FlagConfigError(f"flags snapshot {snapshot}: is a directory, not a file")
    if not snapshot.is_file():
        raise FlagConfigError(f"flags snapshot {snapshot}: no such file")
    settings = settings_from_env({}, snapshot=snapshot, flag_name=flag_name)
    answers: dict[tuple[str, tuple[str, ...], tuple[str, ...]], FlagAnswer] = {}

    def lookup(repo: str, agents: tuple[str, ...], formats: tuple[str, ...]) -> FlagAnswer:
        key = (repo, agents, formats)
        if key not in answers:
            properties = {"agent": ",".join(agents), "format": ",".join(formats)}
            found = resolve_mode(repo, settings, properties=properties)
            answers[key] = FlagAnswer(
                mode=found.mode,
                mode_source=found.source,
                unknown_policy=found.policies.unknown_policy,
                depth_policy=found.policies.depth_policy,
                citation_policy=found.policies.citation_policy,
                mutation_policy=found.policies.mutation_policy,
            )
        return answers[key]

    return lookup


def _candidate(
    mode: CandidateMode | None,
    unknown_policy: UnknownPolicy | None,
    depth_policy: DepthPolicy | None,
    citation_policy: CandidateCitationPolicy | None,
    flags_file: Path | None,
    flag_name: str | None,
) -> Candidate:
    """The candidate the options describe (built once per process that replays)."""
    from coverage_gate.contracts.model import CitationPolicy, Mode  # noqa: PLC0415
    from coverage_gate.rollout.replay import Candidate  # noqa: PLC0415

    return Candidate(
        mode=Mode(mode.value) if mode is not None else None,
        unknown_policy=unknown_policy,
        depth_policy=depth_policy,
        citation_policy=CitationPolicy(citation_policy.value) if citation_policy else None,
        flags=_flag_lookup(flags_file, flag_name) if flags_file else None,
    )


@dataclass
class _Replay:
    """What replaying a folder found: the tally, and how many changes, other files skipped and
    receipts that could not be replayed."""

    tally: Tally
    changes: int = 0
    skipped: int = 0
    unreadable: int = 0


def _run(
    folder: Path, make_candidate: Callable[[], Candidate], jobs: int | None, spool: IO[str]
) -> _Replay:
    """Replay each receipt of ``folder``; audit entries go to ``spool`` as JSON lines, and each
    receipt that cannot be replayed is named on stderr."""
    from coverage_gate.commands.reconcile import decide  # noqa: PLC0415
    from coverage_gate.rollout import receipt_store, receipts  # noqa: PLC0415
    from coverage_gate.rollout.replay import Replayed, Tally  # noqa: PLC0415
    from coverage_gate.rollout.replay_folder import Unreadable, default_jobs, replay_folder  # noqa: PLC0415

    found = receipt_store.names(folder)
    if not found.names:
        raise BadInputError(f"receipt folder {folder}: no receipt (*{receipts.SUFFIX}) in it")
    workers = jobs if jobs is not None else default_jobs(len(found.names))
    done = _Replay(Tally(), skipped=found.skipped)
    for result in replay_folder(folder, found.names, make_candidate, decide, workers):
        if isinstance(result, Unreadable):
            done.unreadable += 1
            say(error_line(result.problem))
            continue
        done.tally.add(Replayed(result.repo, result.change))
        if result.entry is not None:
            done.changes += 1
            spool.write(result.entry + "\n")
    return done


def _entries(spool: IO[str]) -> Iterator[dict[str, object]]:
    spool.seek(0)
    for line in spool:
        entry: dict[str, object] = json.loads(line)
        yield entry


def _emit(parts: Iterator[str], *, failed: bool = False) -> None:
    """Write ``parts`` to stdout in chunks of about ``CHUNK`` characters; ``failed`` (some
    receipts could not be replayed: exit 3), to stderr, so that stdout holds nothing then."""
    buffer: list[str] = []
    size = 0
    for part in parts:
        buffer.append(part)
        size += len(part)
        if size >= CHUNK:
            _write("".join(buffer), failed=failed)
            buffer, size = [], 0
    _write("".join(buffer), failed=failed)


def _write(text: str, *, failed: bool) -> None:
    if failed:
        sys.stderr.write(text)
    else:
        write_stdout(text, REPLAY)


_COLUMNS = (
    ("receipts", "receipts"),
    ("verdict_changed", "verdict changed"),
    ("newly_downgraded", "newly downgraded"),
    ("no_longer_downgraded", "no longer downgraded"),
    ("would_downgrade_changed", "would-downgrade changed"),
    ("unchanged", "unchanged"),
)


def _yes_no(value: object) -> str:
    return "yes" if value is True else "no" if value is False else str(value)


def _entry_line(entry: dict[str, object]) -> str:
    agents = ",".join(str(a) for a in entry["agents"])  # type: ignore[attr-defined]
    return (
        f"{str(entry['receipt'])[:12]} {entry['repo']} {entry['revision']} {agents}: "
        f"{entry['verdict_before']} → {entry['verdict_after']}"
        f" (enforce would downgrade: {_yes_no(entry['would_downgrade_before'])} → "
        f"{_yes_no(entry['would_downgrade_after'])})"
        f": {entry['why']}"
    )


def _text(head: str, rows: list[dict[str, object]], changes: int, spool: IO[str]) -> Iterator[str]:
    yield head + "\n\n"
    width = max([len("repository"), *(len(str(row["repo"])) for row in rows)])
    yield "repository".ljust(width) + "".join(f"  {title}" for _, title in _COLUMNS) + "\n"
    for row in rows:
        cells = "".join(f"  {str(row[key]).rjust(len(title))}" for key, title in _COLUMNS)
        yield str(row["repo"]).ljust(width) + cells + "\n"
    yield f"\nchanges ({changes}):\n"
    for entry in _entries(spool):
        yield f"  {_entry_line(entry)}\n"


def _markdown(
    head: str, rows: list[dict[str, object]], changes: int, spool: IO[str]
) -> Iterator[str]:
    yield f"### Replay\n\n{head}\n\n"
    yield "| repository | " + " | ".join(title for _, title in _COLUMNS) + " |\n"
    yield "| --- |" + " ---: |" * len(_COLUMNS) + "\n"
    for row in rows:
        yield f"| `{row['repo']}` | " + " | ".join(str(row[k]) for k, _ in _COLUMNS) + " |\n"
    yield f"\n#### Changes ({changes})\n\n"
    for entry in _entries(spool):
        yield f"- {_entry_line(entry)}\n"


def _json(
    candidate: str,
    receipts: int,
    skipped: int,
    unreadable: int,
    rows: list[dict[str, object]],
    spool: IO[str],
) -> Iterator[str]:
    head: dict[str, object] = {
        "schema": "coverage-gate/replay",
        "candidate": candidate,
        "receipts": receipts,
        "skipped_files": skipped,
        "repositories": rows,
    }
    if unreadable:  # present only then: a folder of sound receipts reads as it always did
        head["unreadable_receipts"] = unreadable
    yield json.dumps(head, sort_keys=True)[:-1] + ', "changes": ['
    for index, entry in enumerate(_entries(spool)):
        yield ("" if index == 0 else ", ") + json.dumps(entry, sort_keys=True)
    yield "]}\n"


def replay(
    folder: Annotated[Path, typer.Argument(help="The receipt folder (reconcile --receipt DIR).")],
    mode: Annotated[
        CandidateMode | None,
        typer.Option(**choice(CandidateMode), help="Candidate mode for every repository."),
    ] = None,
    unknown_policy: Annotated[
        UnknownPolicy | None,
        typer.Option(**choice(UnknownPolicy), help="Candidate unknown policy.", show_default=False),
    ] = None,
    depth_policy: Annotated[
        DepthPolicy | None,
        typer.Option(**choice(DepthPolicy), help="Candidate depth policy.", show_default=False),
    ] = None,
    citation_policy: Annotated[
        CandidateCitationPolicy | None,
        typer.Option(
            **choice(CandidateCitationPolicy),
            help="Candidate citation policy.",
            show_default=False,
        ),
    ] = None,
    flags_file: FlagsFileOption = None,
    flag_name: FlagNameOption = None,
    output_format: Annotated[
        ReplayFormat,
        typer.Option(
            "--format", **choice(ReplayFormat), help="Output format: text, json or markdown."
        ),
    ] = ReplayFormat.TEXT,
    jobs: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="<int>",
            help="Worker processes replaying receipts (results are the same for any number; "
            "default: one per CPU for 2,000 receipts or more, else 1: this process).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Decide each receipt again under candidate settings (a mode, policies, or a flags snapshot
    evaluated per repository) and show, per repository, which verdicts would change."""
    with errors_to_exit():
        require_stdout(REPLAY)
        given = (mode, unknown_policy, depth_policy, citation_policy)
        if all(option is None for option in given) and not flags_file:
            raise UsageError(
                "give a candidate: --mode, --unknown-policy, --depth-policy, --citation-policy "
                "or --flags FILE"
            )
        make_candidate = functools.partial(
            _candidate, mode, unknown_policy, depth_policy, citation_policy, flags_file, flag_name
        )
        described = make_candidate().describe()  # a snapshot that cannot be read stops here
        with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
            done = _run(folder, make_candidate, jobs, spool)
            rows = done.tally.rows()
            total = sum(r.receipts for r in done.tally.repos.values())
            head = f"Replay of {total} receipt(s) in {folder} under {described}"
            if done.skipped:
                head += f"; {done.skipped} other file(s) skipped"
            if done.unreadable:
                head += f"; {done.unreadable} receipt(s) could not be replayed (named on stderr)"
            failed = bool(done.unreadable)  # exit 3: the replay goes to stderr
            if output_format is ReplayFormat.JSON:
                parts = _json(described, total, done.skipped, done.unreadable, rows, spool)
            elif output_format is ReplayFormat.MARKDOWN:
                parts = _markdown(head, rows, done.changes, spool)
            else:
                parts = _text(head, rows, done.changes, spool)
            _emit(parts, failed=failed)
    if done.unreadable:
        raise typer.Exit(int(ExitCode.BAD_INPUT))
