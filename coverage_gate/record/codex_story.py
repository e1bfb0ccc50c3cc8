"""Whether a Codex rollout is a record the reviewer could not write (DESIGN §6 rule 27).

``record`` takes a thread's rollout in the place of its ``codex exec --json`` stream, because
only the rollout shows what the model received. The rollout is a file under ``$CODEX_HOME``, and
a command of the run can write it wherever the run's sandbox lets commands write. The exec
stream is Codex's own stdout, which no command of the run writes. So a rollout is evidence only
when both hold:

- it tells the exec stream's story call by call: the same shell commands in the same order
  (the exec stream's ``command_execution`` items against the rollout's ``CommandExecution``
  records; the exec stream spells a command as one shell line, the rollout as its argument
  list), and each output the model got (the rollout's ``function_call_output``, its header and
  cut notice taken off) is the exec output or a cut of it (a head and a tail around Codex's
  ``…N chars truncated…``). A forged rollout must then hold the run's own commands and outputs:
  what it adds is what the exec stream shows anyway;
- the run's sandbox did not let a command write the rollout: no command ran, or the sandbox was
  ``read-only``, or ``workspace-write`` with the rollout outside every root it could write (the
  working directory, the writable roots, ``/tmp`` and ``$TMPDIR`` unless excluded, each
  ``write`` entry of the permission profile, its ``read`` carve-outs honoured); never under
  ``danger-full-access`` or a profile that writes the file system's root. The sandbox is read
  from the rollout's own ``turn_context`` records (every turn's); a rollout that names none
  cannot show it was out of reach.

Both are pure functions over the two streams' lines; finding the file is ``edges.codex_home``'s.
"""

from __future__ import annotations

import contextlib
import json
import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from coverage_gate.adapters._codex_commands import model_text

__all__ = [
    "RolloutStory",
    "Sandbox",
    "Step",
    "exec_story",
    "named_words",
    "rollout_story",
    "story_differs",
    "writable_by_commands",
]

# Codex's own mark of the middle it cut out of an output it gave the model
_CUT: Final = re.compile(r"…\d+ (?:chars|tokens) truncated…")
# how many characters of a command a reason quotes
_QUOTE: Final = 80


@dataclass(frozen=True)
class Step:
    """One shell command of a run: its argument list, the text of its output and, in an exec
    stream, its exit code."""

    argv: tuple[str, ...]
    output: str | None
    exit_code: int | None = None


@dataclass(frozen=True)
class Sandbox:
    """What a turn's sandbox let commands write, as the rollout records it."""

    kind: str | None  # sandbox_policy.type: read-only, workspace-write, danger-full-access
    cwd: str | None
    writable: tuple[str, ...] = ()  # paths the profile or the policy lets commands write
    protected: tuple[str, ...] = ()  # paths under those the profile keeps read-only
    slash_tmp: bool = False
    tmpdir: bool = False
    everything: bool = False  # the file system's root is writable


@dataclass
class RolloutStory:
    steps: list[Step] = field(default_factory=list)
    sandboxes: list[Sandbox] = field(default_factory=list)


def _objects(lines: Iterable[bytes]) -> Iterable[dict[str, object]]:
    for line in lines:
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line that is not JSON tells no step; the recording says it
        if isinstance(obj, dict):
            yield obj


def exec_story(lines: Iterable[bytes]) -> list[Step] | str:
    """The shell commands a ``codex exec --json`` stream ran, in order, each with its whole
    output; a reason when a command cannot be read as an argument list."""
    steps: list[Step] = []
    for obj in _objects(lines):
        item = obj.get("item")
        if obj.get("type") != "item.completed" or not isinstance(item, dict):
            continue
        if item.get("type") != "command_execution":
            continue
        command = item.get("command")
        if not isinstance(command, str):
            return f"exec command {len(steps) + 1} is not a string"
        try:
            argv = tuple(shlex.split(command))
        except ValueError:
            return f"exec command {len(steps) + 1} cannot be split: {command[:_QUOTE]!r}"
        output, code = item.get("aggregated_output"), item.get("exit_code")
        steps.append(
            Step(
                argv,
                output if isinstance(output, str) else None,
                code if isinstance(code, int) and not isinstance(code, bool) else None,
            )
        )
    return steps


# a shell that runs the script in its next argument (``/bin/bash -lc 'cat F'``)
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash"})
_SCRIPT_FLAGS: Final = frozenset({"-c", "-lc", "-cl"})


def named_words(steps: Sequence[Step]) -> list[str]:
    """Every word of every command that exited 0 and could name a file, in order, once: the
    argument list's words and, for a shell given a script, the script's words (split as the
    shell would split plain words; a script that cannot be split names what it can). A
    ``codex exec --json`` stream cannot show what reached the model of such a command's output,
    empty or binary output included, so each file it names is unknown, never unsupported
    (DESIGN §6 rule 26)."""
    words: dict[str, None] = {}
    for step in steps:
        if step.exit_code != 0:
            continue
        argv = list(step.argv)
        if len(argv) >= 3 and posixpath.basename(argv[0]) in _SHELLS and argv[1] in _SCRIPT_FLAGS:
            argv = argv[3:] + _script_words(argv[2])
        for word in argv:
            if word and not word.startswith("-") and "\n" not in word:
                words.setdefault(word)
    return list(words)


def _script_words(script: str) -> list[str]:
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    found: list[str] = []
    with contextlib.suppress(ValueError):  # an unfinished quote: the words before it count
        for word in lexer:
            found.append(word)
    return found


def rollout_story(lines: Iterable[bytes]) -> RolloutStory:
    """The shell commands a rollout records, in order, each with the text the model got of its
    output, and every turn's sandbox."""
    story = RolloutStory()
    outputs: dict[str, str | None] = {}
    order: list[tuple[str, tuple[str, ...]]] = []
    for obj in _objects(lines):
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            continue
        kind = obj.get("type")
        if kind == "turn_context":
            story.sandboxes.append(_sandbox(payload))
        elif kind == "response_item" and payload.get("type") == "function_call_output":
            call_id = payload.get("call_id")
            if isinstance(call_id, str) and call_id not in outputs:
                got = model_text(payload.get("output"))
                outputs[call_id] = None if got is None else got.text
        elif kind == "event_msg" and payload.get("type") == "item_completed":
            item = payload.get("item")
            if not isinstance(item, dict) or item.get("type") != "CommandExecution":
                continue
            command, call_id = item.get("command"), item.get("id")
            if isinstance(command, list) and all(isinstance(a, str) for a in command):
                order.append((call_id if isinstance(call_id, str) else "", tuple(command)))
            else:
                order.append(("", ("<not an argument list>",)))
    story.steps = [Step(argv, outputs.get(call_id)) for call_id, argv in order]
    return story


def _is_cut_of(given: str, whole: str) -> bool:
    """Whether the text the model got is the whole output or Codex's cut of it."""
    if given == whole:
        return True
    found = _CUT.search(given)
    if found is None:
        return False
    head, tail = given[: found.start()], given[found.end() :]
    return len(head) + len(tail) <= len(whole) and whole.startswith(head) and whole.endswith(tail)


def story_differs(exec_steps: Sequence[Step], rollout: RolloutStory) -> str | None:
    """Why the rollout does not tell the exec stream's story call by call; ``None`` when it
    does."""
    told = rollout.steps
    for n, (ran, kept) in enumerate(zip(exec_steps, told, strict=False), start=1):
        if ran.argv != kept.argv:
            return (
                f"its command {n} is {shlex.join(kept.argv)[:_QUOTE]!r}, the exec stream's is "
                f"{shlex.join(ran.argv)[:_QUOTE]!r}"
            )
        if kept.output is not None and not _is_cut_of(kept.output, ran.output or ""):
            return f"the output of its command {n} is not the exec stream's, nor a cut of it"
    if len(told) != len(exec_steps):
        return f"it records {len(told)} command(s), the exec stream ran {len(exec_steps)}"
    return None


def _sandbox(turn: dict[str, object]) -> Sandbox:
    policy = turn.get("sandbox_policy")
    policy = policy if isinstance(policy, dict) else {}
    kind = policy.get("type")
    cwd = turn.get("cwd")
    cwd = cwd if isinstance(cwd, str) else None
    roots = policy.get("writable_roots")
    writable = [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []
    protected: list[str] = []
    slash_tmp = kind == "workspace-write" and policy.get("exclude_slash_tmp") is not True
    tmpdir = kind == "workspace-write" and policy.get("exclude_tmpdir_env_var") is not True
    everything = kind == "danger-full-access"
    if kind == "workspace-write" and cwd is not None:
        writable.append(cwd)
    profile = turn.get("permission_profile")
    system = profile.get("file_system") if isinstance(profile, dict) else None
    entries = system.get("entries") if isinstance(system, dict) else None
    if isinstance(system, dict) and system.get("type") not in (None, "restricted"):
        everything = True  # an unrestricted file system: every path writable
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        place, access = entry.get("path"), entry.get("access")
        writes = access == "write"
        if not isinstance(place, dict):
            continue
        if place.get("type") == "path" and isinstance(place.get("path"), str):
            (writable if writes else protected).append(str(place["path"]))
        elif place.get("type") == "special" and writes:
            value = place.get("value")
            special = value.get("kind") if isinstance(value, dict) else None
            everything |= special == "root"
            slash_tmp |= special == "slash_tmp"
            tmpdir |= special == "tmpdir"
            if special in ("current_working_directory", "project_roots") and cwd is not None:
                writable.append(cwd)
    return Sandbox(
        kind=kind if isinstance(kind, str) else None,
        cwd=cwd,
        writable=tuple(writable),
        protected=tuple(protected),
        slash_tmp=slash_tmp,
        tmpdir=tmpdir,
        everything=everything,
    )


def _under(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies under it (both absolute, compared as written)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def writable_by_commands(
    rollout: RolloutStory, place: str | None, tmpdir: str | None
) -> str | None:
    """Why a command of the run could have written the rollout at ``place`` (its resolved
    path; ``None`` when the pipeline gave the file and vouches for where it was kept: only a run
    that could write anywhere counts then); ``None`` when none could. ``tmpdir`` is ``$TMPDIR``
    as this process sees it."""
    if not rollout.steps:
        return None  # no command ran: nothing but Codex wrote the file
    if not rollout.sandboxes:
        return "the rollout records no sandbox, so it cannot show its commands could not write it"
    for sandbox in rollout.sandboxes:
        if sandbox.everything:
            return f"its commands ran without a sandbox ({sandbox.kind or 'full access'})"
        if sandbox.kind == "read-only" or place is None:
            continue
        if sandbox.kind != "workspace-write":
            return f"its sandbox {sandbox.kind!r} cannot show its commands could not write it"
        roots = list(sandbox.writable)
        if sandbox.slash_tmp:
            roots.append("/tmp")  # noqa: S108 - a root the sandbox lets commands write
        if sandbox.tmpdir and tmpdir:
            roots.append(tmpdir)
        for root in roots:
            kept = any(_under(place, p) and len(p) > len(root) for p in sandbox.protected)
            if _under(place, root) and not kept:
                return (
                    f"it lies inside {root}, which its commands could write (sandbox "
                    "workspace-write): keep CODEX_HOME outside every writable root"
                )
    return None
