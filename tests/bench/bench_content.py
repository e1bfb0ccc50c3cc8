"""Benchmark: `record` with content checks (DESIGN §6 rules 16-18): time, peak memory, git fetches.

    .venv/bin/python -m pytest -m bench -s tests/bench/bench_content.py
    .venv/bin/python -m tests.bench.bench_content [--runs N] [--mb N] [--shell-mb N]

Content checks compare every successful call's returned text with the files at the revision (git
objects under the repository root) and scan any call's output for runs of the in-scope files'
lines and of the pinned diff's. Whole ``record`` processes, run from a wheel of this checkout
installed into a fresh virtual environment (``tests.bench.bench_speed.install_wheel``), as bench_speed
measures them: each case a fresh process, the cases run in turn (so load on this shared machine
falls on all alike), each figure the median of ``--runs`` (wall seconds, and CPU seconds,
user+sys, git's included). Peak RSS is the child's ``ru_maxrss``, the largest of its runs; Linux
carries over exec the peak of the process a child was started from, so this process's own peak
is printed too: a figure at or under it is that floor, not the child's.

1. ``record --diff`` with content checks on the 200 MB benchmark stream (tests/_support/gen_pi_stream.py,
   as bench_speed generates it), in a git repository the benchmark builds whose revision holds the
   stream's 400 files; the pinned diff is ``git diff`` of that revision against its parent (every
   file changed, about 1.5 MB; bench_record's is 1 MB over the same 400 files). The generated
   reads' bodies (``z`` x N) are replaced by the files' real text, about as long: the first N
   bytes cut to a whole line, or the whole file when it is shorter (the stream comes to about
   190 MB); one read in 50 shows one line the revision does not hold (a mismatch). Against the
   bare JSON loop of bench_speed on the same stream, in the same run, with bench_speed's
   definition: "N x loop" is the loop's wall time over record's (record N times as fast).
   Targets: >= 2x loop, peak RSS under 100 MB.
2. pi ``bash`` calls returning 50 MB of shell output (runs of the changed files' lines, sections
   of the pinned diff as ``git diff -- PATH`` prints them, runs of unchanged files, test and lint
   output, ``grep -n`` and ``ls -l`` lines) over 40 changed files of a pinned diff: record with
   content checks against the same stream recorded with ``--repo-root`` a folder that no git
   repository holds (no content source). Target: < 2x.
3. How often each in-scope file is fetched from git in one record of each: ``GIT_TRACE`` written
   to a file, ``ls-tree`` invocations counted by the paths they list, ``cat-file`` invocations by
   blob id, and a ``cat-file --batch`` as one fetch of each path the ``ls-tree`` before it listed.
   Target: once per file.

Beside those, for where the cost lies: each stream recorded with no ``--diff`` and no root at
all (run where no git repository is: nothing is fetched, nothing scanned, no depth), and the
200 MB stream with no ``--diff`` under the repository (every read checked, no file in scope:
files outside the pinned diff are kept 256 at a time, so reads of the stream's 400 files fetch
again). A root with no content is not "no checks": the pinned diff's own lines are scanned for
all the same, and a ``git diff`` of a file's section is credited to it as a page of the diff.

The evidence of every case is read back, so that the figures compare what they claim to: the
checked runs show matched and mismatched reads and credits; under a root with no content no read
is matched, and the bash stream's credits are pages of the pinned diff (fewer than checked); with
no diff and no root nothing is credited. Where the time goes: one in-process record of each
checked case under cProfile (the checkout's code, which the wheel is built from), its hottest
functions, those of coverage_gate/core/content_check.py and content_index.py, and their share. Nothing about speed is
asserted (this machine is shared and noisy): the targets are printed as met or NOT MET.

Streams and repositories are written by child processes (``python -m tests.bench.bench_content KIND
...``), so that the benchmark process stays small.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.bench.bench_speed import BARE_LOOP, Case, clean_env, generate, install_wheel

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("BENCH_CONTENT_RUNS", "5"))
BIG_MB = int(os.environ.get("BENCH_CONTENT_MB", "200"))
SHELL_MB = int(os.environ.get("BENCH_CONTENT_SHELL_MB", "50"))
#: The generated stream's files (tests/_support/gen_pi_stream.py), all changed in benchmark 1's diff.
STREAM_FILES = [f"src/pkg{i // 20}/mod{i}.py" for i in range(400)]
#: Benchmark 2: the changed files (the pinned diff's) and files the review leaves unchanged.
CHANGED = [f"src/app/part{i // 10}/changed{i}.py" for i in range(40)]
UNCHANGED = [f"src/lib/part{i // 20}/other{i}.py" for i in range(160)]
READ_TOOLS = frozenset({"cr_read", "read"})
MISMATCH_EVERY = 50
#: An honest stream's reads made shell commands: one in this many ``cat``, the next ``git diff``.
SHELL_EVERY = 4


# --- the repository ----------------------------------------------------------------------------


def module_text(path: str, size: int) -> str:
    """A Python module of about ``size`` bytes: lines mostly its own (names and numbers of this
    module), some every module shares (blank lines, ``return None``, an ``if`` of the same
    words), as real code has."""
    rng = random.Random(path)
    stem = re.sub(r"\W", "_", path.removesuffix(".py"))
    lines = [f'"""{path}: part of the content benchmark\'s generated repository."""', "",
             "from __future__ import annotations", "", "import os", "import sys", "", ""]  # fmt: skip
    used = sum(len(line) + 1 for line in lines)
    k = 0
    while used < size:
        k += 1
        name = f"{stem}_step{k}"
        block = [
            f"def {name}(value: int, limit: int = {rng.randint(1, 999)}) -> int | None:",
            f'    """Step {k} of {path}: scale value, bounded by limit."""',
            f"    result = value * {rng.randint(2, 97)} + {rng.randint(0, 9999)}",
            "    if result > limit:",
            f"        return result - limit // {rng.randint(2, 9)}",
            f"    total_{k} = [item + {rng.randint(1, 99)} for item in range(result % 17)]",
            f"    if len(total_{k}) > {rng.randint(3, 12)}:",
            f"        return sum(total_{k}) - {rng.randint(0, 500)}",
            "    return None",
            "",
            "",
        ]
        lines += block
        used += sum(len(line) + 1 for line in block)
    return "\n".join(lines) + "\n"


def parent_text(text: str) -> str:
    """The file at the revision's parent: some lines different, some not there yet, so that the
    diff has hunks of context, removed and added lines all through the file."""
    out = []
    for number, line in enumerate(text.split("\n")[:-1]):
        if number % 40 == 13:
            out.append(line.replace("value", "amount") + "  # before")
        elif number % 80 != 50:
            out.append(line)
    return "\n".join(out) + "\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


def write_repository(root: Path, changed: Sequence[str], unchanged: Sequence[str]) -> None:
    """Two commits: the parent, then the revision under review, which changes ``changed``; the
    pinned diff (``git diff`` of the two) is written to ``root.with_suffix('.diff')``."""
    sizes = random.Random("sizes")
    texts = {path: module_text(path, sizes.randint(500, 20000)) for path in changed}
    texts |= {path: module_text(path, sizes.randint(2000, 30000)) for path in unchanged}
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.invalid")
    git(root, "config", "user.name", "bench")
    for round_ in ("parent", "revision"):
        for path, text in texts.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            after = text if round_ == "revision" or path not in changed else parent_text(text)
            target.write_text(after)
        git(root, "add", "-A")
        git(root, "commit", "-qm", round_)
    root.with_suffix(".diff").write_text(git(root, "diff", "HEAD~1", "HEAD"))


# --- benchmark 1: the 200 MB stream, its reads the files' real text ----------------------------


def real_reads(source: Path, target: Path, root: Path, *, honest: bool = False) -> None:
    """``source`` (a tests/_support/gen_pi_stream.py stream) with every read's body replaced by its file's
    text at the revision (the files under ``root``), about as long: the first N bytes cut to a
    whole line, or the whole file; one read in ``MISMATCH_EVERY`` holds a line the file does not.
    ``turn_end`` repeats the turn's results, so it repeats the new bodies too. Other lines are
    copied as they are.

    ``honest``: no read holds another line, and through the shell: one read in ``SHELL_EVERY``
    is ``bash`` ``cat PATH`` printing the whole file, the next ``git diff HEAD~1 -- PATH``
    printing the file's section of the pinned diff (``root``'s ``.diff``)."""
    texts: dict[str, str] = {}
    bodies: dict[str, str] = {}  # this turn's calls' new bodies
    shell: dict[str, str] = {}  # this turn's calls made shell commands: id -> command
    sections = _diff_sections(root.with_suffix(".diff").read_text()) if honest else {}
    reads = 0
    with source.open("rb") as lines, target.open("wb") as out:
        for line in lines:
            written = line
            if line.startswith(b'{"type":"tool_execution_start"'):
                start = json.loads(line)
                if start["toolName"] in READ_TOOLS:
                    path = bodies[start["toolCallId"]] = start["args"]["path"]
                    reads += 1
                    command = _shell_read(path, reads, sections) if honest else None
                    if command is not None:
                        shell[start["toolCallId"]] = command
                        start = {**start, "toolName": "bash", "args": {"command": command}}
                        written = (json.dumps(start, separators=(",", ":")) + "\n").encode()
            elif line.startswith(b'{"type":"tool_execution_end"'):
                end = json.loads(line)
                call = end["toolCallId"]
                path = bodies.get(call)
                if path is not None:
                    if path not in texts:
                        texts[path] = (root / path).read_text()
                    command = shell.get(call)
                    if command is not None:
                        end["toolName"] = "bash"
                    body = (
                        _read_body(texts[path], len(end["result"]["content"][0]["text"]),
                                   mismatch=not honest and reads % MISMATCH_EVERY == 0)
                        if command is None
                        else texts[path] if command.startswith("cat ") else sections[path]
                    )  # fmt: skip
                    bodies[call] = body
                    end["result"]["content"][0]["text"] = body
                    written = (json.dumps(end, separators=(",", ":")) + "\n").encode()
            elif line.startswith(b'{"type":"turn_end"'):
                turn_end = json.loads(line)
                for result in turn_end["toolResults"]:
                    body = bodies.get(result["toolCallId"])
                    if body is not None and result["toolName"] in READ_TOOLS:
                        result["content"][0]["text"] = body
                        if result["toolCallId"] in shell:
                            result["toolName"] = "bash"
                bodies.clear()
                shell.clear()
                written = (json.dumps(turn_end, separators=(",", ":")) + "\n").encode()
            out.write(written)


def _shell_read(path: str, reads: int, sections: dict[str, str]) -> str | None:
    """The shell command the ``reads``-th read becomes in an honest stream, if any."""
    if reads % SHELL_EVERY == 0:
        return f"cat {path}"
    if reads % SHELL_EVERY == 1 and path in sections:
        return f"git diff HEAD~1 -- {path}"
    return None


def _diff_sections(diff: str) -> dict[str, str]:
    """Each file's section of a diff, as ``git diff -- PATH`` prints it."""
    found: dict[str, str] = {}
    for section in diff.split("diff --git ")[1:]:
        text = "diff --git " + section
        for line in text.split("\n"):
            if line.startswith("+++ b/"):
                found[line[6:]] = text
                break
    return found


def _read_body(text: str, size: int, *, mismatch: bool) -> str:
    body = text if size >= len(text) else text[: text.rfind("\n", 0, size) + 1] or text
    if mismatch:
        lines = body.split("\n")
        middle = len(lines) // 2
        lines[middle] += "  # edited by the reviewer"
        body = "\n".join(lines)
    return body


# --- benchmark 2: 50 MB of shell output --------------------------------------------------------


def diff_sections(diff: str) -> dict[str, str]:
    """The pinned diff's section of each file, as ``git diff -- PATH`` prints it."""
    sections: dict[str, str] = {}
    for part in re.split(r"(?m)^(?=diff --git )", diff):
        found = re.match(r"diff --git a/(\S+) b/", part)
        if found:
            sections[found.group(1)] = part
    return sections


def shell_stream(target: Path, root: Path, size_mb: int) -> None:
    """pi ``bash`` calls whose outputs total ``size_mb`` MB: runs of the changed files' lines (a
    ``cat``, ``sed -n``), sections of the pinned diff (``git diff -- PATH``), runs of files the
    review leaves unchanged, and other text (test and lint output, ``grep -n`` and ``ls -l``
    lines, lone common lines)."""
    rng = random.Random(2)
    files = {path: (root / path).read_text().split("\n")[:-1] for path in (*CHANGED, *UNCHANGED)}
    sections = diff_sections(root.with_suffix(".diff").read_text())
    budget = size_mb * 1_000_000
    n = 0

    def emit(obj: object) -> None:
        out.write(json.dumps(obj, separators=(",", ":")) + "\n")

    def lines_of(paths: Sequence[str]) -> tuple[str, list[str]]:
        path = rng.choice(paths)
        lines = files[path]
        first = rng.randrange(len(lines))
        count = rng.choice((rng.randint(3, 12), rng.randint(10, 60), rng.randint(40, 200)))
        return path, lines[first : first + count]

    def other() -> list[str]:
        kind = rng.randrange(5)
        count = rng.randint(1, 60)
        if kind == 0:
            return [f"tests/test_part{rng.randrange(30)}.py::test_case_{rng.randrange(900)} "
                    f"PASSED [{rng.randrange(101):3d}%]" for _ in range(count)]  # fmt: skip
        if kind == 1:
            return [f"{rng.choice(CHANGED)}:{rng.randrange(1, 600)}:{rng.randrange(1, 80)}: "
                    f"W0612 unused variable 'tmp{rng.randrange(99)}'" for _ in range(count)]  # fmt: skip
        if kind == 2:
            path = rng.choice(CHANGED)
            return [f"{path}:{number + 1}:{line}" for number, line in
                    enumerate(files[path]) if "result" in line][:count]  # fmt: skip
        if kind == 3:
            return [f"-rw-r--r-- 1 dev dev {rng.randrange(99999):5d} Dec  1 12:{rng.randrange(60):02d} "
                    f"{rng.choice(UNCHANGED)}" for _ in range(count)]  # fmt: skip
        return [rng.choice(("", "    return None", "}", "    if result > limit:", "ok", "done"))
                for _ in range(count)]  # fmt: skip

    with target.open("w") as out:
        emit({"type": "agent_start"})
        while budget > 0:
            emit({"type": "turn_start"})
            n += 1
            cid = f"toolu_{n:08d}"
            size = rng.randint(5_000, 95_000)
            commands: list[str] = []
            parts: list[str] = []
            used = 0
            while used < size:
                pick = rng.random()
                if pick < 0.30:
                    path, lines = lines_of(CHANGED)
                    commands.append(f"sed -n '1,$p' {path}")
                elif pick < 0.36:
                    path = rng.choice(CHANGED)
                    commands.append(f"git diff HEAD~1 -- {path}")
                    lines = sections[path].split("\n")[:-1]
                elif pick < 0.60:
                    path, lines = lines_of(UNCHANGED)
                    commands.append(f"cat {path}")
                else:
                    lines = other()
                text = "".join(line + "\n" for line in lines)
                parts.append(text)
                used += len(text)
            output = "".join(parts)
            command = " && ".join(commands) or "make check"
            emit({"type": "tool_execution_start", "toolCallId": cid, "toolName": "bash",
                  "args": {"command": command}})  # fmt: skip
            emit({"type": "tool_execution_end", "toolCallId": cid, "toolName": "bash",
                  "result": {"content": [{"type": "text", "text": output}], "details": {}},
                  "isError": False})  # fmt: skip
            emit({"type": "turn_end", "message": {"role": "assistant", "content": []},
                  "toolResults": []})  # fmt: skip
            budget -= len(output)
        emit({"type": "agent_end", "messages": []})


def repository(root: str, kind: str) -> None:
    """Benchmark 1's repository (``stream``: the stream's files, all changed) or 2's."""
    if kind == "stream":
        write_repository(Path(root), STREAM_FILES, ())
    else:
        write_repository(Path(root), CHANGED, UNCHANGED)


WRITERS: dict[str, Callable[..., None]] = {
    "repository": repository,
    "real-reads": lambda source, target, root: real_reads(Path(source), Path(target), Path(root)),
    "honest-reads": lambda source, target, root: real_reads(
        Path(source), Path(target), Path(root), honest=True
    ),
    "shell": lambda target, root, size: shell_stream(Path(target), Path(root), int(size)),
}


def write(kind: str, *args: object) -> None:
    """Run a writer in a child process (the benchmark process stays small)."""
    subprocess.run(
        [sys.executable, "-m", "tests.bench.bench_content", kind, *map(str, args)],
        check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


# --- measuring ---------------------------------------------------------------------------------


@dataclass
class Measured(Case):
    """A ``Case`` that keeps each run's peak RSS too (KiB, the child's ``ru_maxrss``)."""

    peaks: list[int] = field(default_factory=list)
    cwd: Path | None = None

    def run(self, env: dict[str, str]) -> None:
        began = time.perf_counter()
        process = subprocess.Popen(
            self.command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=self.cwd,
        )
        _, status, usage = os.wait4(process.pid, 0)
        self.walls.append(time.perf_counter() - began)
        self.cpus.append(usage.ru_utime + usage.ru_stime)
        self.peaks.append(usage.ru_maxrss)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if process.returncode != 0:
            raise RuntimeError(f"{self.name} failed: {' '.join(self.command)}")

    @property
    def peak_mib(self) -> float:
        return max(self.peaks) / 1024


def record_command(
    cli: Sequence[str],
    stream: Path,
    revision: str,
    root: Path | None,
    diff: Path | None,
    out: Path,
) -> list[str]:
    """``record``; without ``root``, no ``--repo-root`` (run it where no git repository is: no
    root at all); without ``diff``, no ``--diff``."""
    rooted = ["--repo-root", str(root)] if root is not None else []
    pinned = ["--diff", str(diff)] if diff is not None else []
    return [*cli, "record", str(stream), "--format", "pi-rpc", "--revision", revision,
            *rooted, *pinned, "-o", str(out)]  # fmt: skip


def credited_files(evidence: Path) -> Counter[str]:
    """Each file's ``content.credited``: calls whose text showed its lines or its hunks."""
    return Counter(
        {
            entry["path"]: entry["content"].get("credited", 0)
            for entry in json.loads(evidence.read_text())["files"]
            if entry.get("content")
        }
    )


def diff_section_calls(stream: Path) -> Counter[str]:
    """How many of the shell stream's calls printed each file's pinned diff section."""
    calls: Counter[str] = Counter()
    with stream.open("rb") as lines:
        for line in lines:
            if line.startswith(b'{"type":"tool_execution_start"'):
                command = json.loads(line)["args"]["command"]
                calls.update(set(re.findall(r"git diff HEAD~1 -- (\S+)", command)))
    return calls


def content_totals(evidence: Path) -> Counter[str]:
    """The evidence's ``content`` counts summed over its files, and how many files have one."""
    totals: Counter[str] = Counter()
    for entry in json.loads(evidence.read_text())["files"]:
        content = entry.get("content")
        if content:
            totals["files"] += 1
            for key in ("matched", "mismatched", "unchecked", "credited"):
                totals[key] += content.get(key, 0)
    return totals


_TRACED = re.compile(r"trace: built-in: git (.*)$")


def git_fetches(
    command: list[str], env: dict[str, str], root: Path, revision: str, trace: Path
) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """One run of ``command`` with ``GIT_TRACE``: the git commands it ran (by name), and how
    often each file was listed (``ls-tree``, by path) and fetched (``cat-file``, by blob)."""
    trace.unlink(missing_ok=True)
    subprocess.run(command, env={**env, "GIT_TRACE": str(trace)}, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    blobs = {}
    for entry in git(root, "ls-tree", "-r", revision).splitlines():
        meta, _, path = entry.partition("\t")
        blobs[meta.split()[2]] = path
    commands: Counter[str] = Counter()
    listed: Counter[str] = Counter()
    fetched: Counter[str] = Counter()
    last_listed: list[str] = []
    for line in trace.read_text().splitlines():
        found = _TRACED.search(line)
        if found is None:
            continue
        words = shlex.split(found.group(1))
        commands[words[0]] += 1
        if words[0] == "ls-tree" and "--" in words:
            last_listed = words[words.index("--") + 1 :]
            listed.update(last_listed)
        elif words[0] == "cat-file" and "--batch" in words:
            # one batch reads the blobs of the files the ls-tree before it listed (their ids go
            # in on stdin, which the trace does not show)
            fetched.update(last_listed)
        elif words[0] == "cat-file":
            fetched[blobs.get(words[-1], words[-1])] += 1
    return commands, listed, fetched


# Run in a fresh process from the checkout: the command under cProfile; printed as JSON: the
# profile's total seconds, its hottest functions (self seconds, calls, cumulative seconds) and
# those of coverage_gate/core/content_check.py and content_index.py by cumulative seconds.
PROFILE = """
import cProfile, json, pstats, sys
from pathlib import Path
sys.argv = ["coverage-gate", *sys.argv[1:]]
from coverage_gate.cli import main
profile = cProfile.Profile()
profile.enable()
try:
    main()
except SystemExit:
    pass
profile.disable()
rows = []
for (file, line, name), (_, calls, own, cumulative, _) in pstats.Stats(profile).stats.items():
    where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if line else file
    rows.append((own, cumulative, calls, f"{where}({name})"))
total = sum(row[0] for row in rows)
top = sorted(rows, reverse=True)[:12]
ours = sorted((row for row in rows if "/content_check.py" in row[3] or "/content_index.py" in row[3]),
              key=lambda row: -row[1])
print(json.dumps({"total": total, "top": top, "content_check": ours[:12],
                  "content_check_self": sum(row[0] for row in ours)}))
"""


def profiled(argv: Sequence[str], env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROFILE, *argv], capture_output=True, text=True, check=True,
        cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def say_profile(label: str, found: dict[str, object], say: Callable[[str], None]) -> None:
    total = float(found["total"])  # type: ignore[arg-type]
    own = float(found["content_check_self"])  # type: ignore[arg-type]
    say(f"\nwhere the time goes, {label} (cProfile, in process, from the checkout: {total:.2f} s "
        f"profiled; self time in content_check.py {own:.2f} s, {own / total:.0%})")  # fmt: skip
    say(f"  {'self s':>7} {'cum s':>7} {'calls':>9}  hottest functions")
    for own_s, cumulative, calls, name in found["top"]:  # type: ignore[attr-defined]
        say(f"  {own_s:7.2f} {cumulative:7.2f} {calls:9d}  {name}")
    say(f"  {'self s':>7} {'cum s':>7} {'calls':>9}  content_check.py, by cumulative time")
    for own_s, cumulative, calls, name in found["content_check"]:  # type: ignore[attr-defined]
        say(f"  {own_s:7.2f} {cumulative:7.2f} {calls:9d}  {name}")


def not_a_repository(folder: Path) -> Path:
    """A folder that no git repository holds: recorded under it, no content can be had."""
    folder.mkdir()
    probe = subprocess.run(["git", "-C", str(folder), "rev-parse", "--git-dir"],
                           capture_output=True, check=False)  # fmt: skip
    assert probe.returncode != 0, f"{folder} is inside a git repository"
    return folder


def fetch_summary(listed: Counter[str], fetched: Counter[str], scope: Sequence[str]) -> str:
    """How often the in-scope files, and the others, were listed and fetched."""
    inside = set(scope)
    parts = []
    if scope:
        got = [fetched[path] for path in scope]
        seen = [listed[path] for path in scope]
        parts.append(f"{len(scope)} in-scope files: cat-file per file {min(got)}-{max(got)} "
                     f"(total {sum(got)}), ls-tree per file {min(seen)}-{max(seen)}")  # fmt: skip
    others = {path: count for path, count in fetched.items() if path not in inside}
    if others:
        parts.append(f"{len(others)} other files: cat-file {sum(others.values())} "
                     f"(up to {max(others.values())} a file)")  # fmt: skip
    else:
        parts.append("no other file fetched")
    return "; ".join(parts)


def code_version() -> str:
    """The checkout the wheel is built from: its commit, and the product files changed in the
    working tree (others edit this checkout while benchmarks run)."""
    head = git(ROOT, "rev-parse", "--short=12", "HEAD").strip()
    changed = git(ROOT, "status", "--porcelain", "--", "coverage_gate", "adapters").splitlines()
    content_check = git(ROOT, "hash-object", "coverage_gate/core/content_check.py").strip()
    edited = f", uncommitted: {', '.join(line[3:] for line in changed)}" if changed else ""
    return f"commit {head}{edited}; coverage_gate/core/content_check.py blob {content_check[:12]}"


def measure(
    runs: int = RUNS,
    big_mb: int = BIG_MB,
    shell_mb: int = SHELL_MB,
    say: Callable[[str], None] = print,
) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="cg-content-") as name:
        folder = Path(name)
        env = clean_env(folder / "telemetry")
        began = time.perf_counter()
        # benchmark 1: the stream's repository, the 200 MB stream with real reads
        repo1 = folder / "stream-repo"
        write("repository", repo1, "stream")
        rev1 = git(repo1, "rev-parse", "HEAD").strip()
        generated = folder / f"pi-{big_mb}mb.generated.jsonl"
        calls = generate(big_mb, generated)
        big = folder / f"pi-{big_mb}mb.jsonl"
        write("real-reads", generated, big, repo1)
        generated.unlink()
        # benchmark 2: 40 changed files, 50 MB of shell output
        repo2 = folder / "shell-repo"
        write("repository", repo2, "shell")
        rev2 = git(repo2, "rev-parse", "HEAD").strip()
        shell = folder / f"bash-{shell_mb}mb.jsonl"
        write("shell", shell, repo2, shell_mb)
        plain = not_a_repository(folder / "plain")
        version = code_version()
        wheel_python = install_wheel(folder / "wheel")
        wheel_cli = [str(wheel_python.with_name("coverage-gate"))]
        made = time.perf_counter() - began

        diff1, diff2 = repo1.with_suffix(".diff"), repo2.with_suffix(".diff")
        # What each case records: the stream, under which root (the repository: the content
        # source; "plain", a folder no git repository holds: a root with no content; None: no
        # root at all, run in "plain"), with the pinned diff or without.
        setups = {
            "checked": (big, rev1, repo1, diff1),
            "plain": (big, rev1, plain, diff1),
            "none": (big, rev1, None, None),
            "reads": (big, rev1, repo1, None),
            "sh_checked": (shell, rev2, repo2, diff2),
            "sh_plain": (shell, rev2, plain, diff2),
            "sh_none": (shell, rev2, None, None),
        }
        out = {key: folder / f"{key}.evidence.json" for key in setups}
        commands = {
            key: record_command(wheel_cli, stream, rev, root, diff, out[key])
            for key, (stream, rev, root, diff) in setups.items()
        }
        names = {
            "checked": f"record --diff, content checked ({big_mb} MB)",
            "plain": f"record --diff, root not a repository ({big_mb} MB)",
            "none": f"record, no diff, no root ({big_mb} MB)",
            "reads": f"record, no diff, reads checked ({big_mb} MB)",
            "sh_checked": f"record --diff, content checked ({shell_mb} MB bash)",
            "sh_plain": f"record --diff, root not a repository ({shell_mb} MB bash)",
            "sh_none": f"record, no diff, no root ({shell_mb} MB bash)",
        }
        loops = {
            "loop": Measured(f"bare json.loads loop ({big_mb} MB)",
                             [sys.executable, "-c", BARE_LOOP, str(big)]),
            "sh_loop": Measured(f"bare json.loads loop ({shell_mb} MB bash)",
                                [sys.executable, "-c", BARE_LOOP, str(shell)]),
        }  # fmt: skip
        records = {
            key: Measured(names[key], commands[key], cwd=plain if setups[key][2] is None else None)
            for key in setups
        }
        order = ("loop", "checked", "plain", "none", "reads",
                 "sh_loop", "sh_checked", "sh_plain", "sh_none")  # fmt: skip
        cases = {key: {**loops, **records}[key] for key in order}
        for case in cases.values():
            case.run(env)  # warm: bytecode caches written, files in the page cache
            case.walls.clear()
            case.cpus.clear()
            case.peaks.clear()
        for _ in range(runs):
            for case in cases.values():
                case.run(env)
        # A child's ru_maxrss is at least this process's own peak (Linux carries the peak of the
        # memory it was started from over exec), so a figure at or under it is that floor.
        floor_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        totals = {key: content_totals(out[key]) for key in out}
        # with no content source, what credits remain: pages of the pinned diff, by file
        plain_credits = credited_files(out["sh_plain"])
        section_calls = diff_section_calls(shell)
        traces = {
            key: git_fetches(commands[key], env, setups[key][2], setups[key][1],
                             folder / f"{key}.trace")
            for key in ("checked", "reads", "sh_checked")
        }  # fmt: skip
        profiles = {
            key: profiled(commands[key][1:], env)  # the console script's arguments
            for key in ("checked", "sh_checked")
        }
        megabytes, shell_size = big.stat().st_size / 1e6, shell.stat().st_size / 1e6
        diff_sizes = diff1.stat().st_size / 1e6, diff2.stat().st_size / 1e6

    c = cases
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    say(f"\nmedians of {runs} runs, interleaved; load average {load} on {os.cpu_count()} cores; "
        f"inputs written and the wheel installed in {made:.0f} s")  # fmt: skip
    say(f"code measured: {version}")
    say(f"1: {megabytes:.0f} MB pi stream ({calls} calls; reads return the revision's files), "
        f"pinned diff {diff_sizes[0]:.2f} MB over {len(STREAM_FILES)} files")  # fmt: skip
    say(f"2: {shell_size:.0f} MB pi stream of bash calls ({shell_mb} MB of output), pinned diff "
        f"{diff_sizes[1]:.2f} MB over {len(CHANGED)} files")  # fmt: skip
    say(f"peak RSS: the child's ru_maxrss, the largest of its runs; this process's own peak, "
        f"which a child's figure cannot go under: {floor_mib:.1f} MiB")  # fmt: skip
    say(f"{'case':<52}{'wall s':>8}{'cpu s':>8}{'peak MiB':>10}")
    for case in c.values():
        say(f"{case.name:<52}{case.wall:>8.3f}{case.cpu:>8.3f}{case.peak_mib:>10.1f}")
    for key in out:
        say(
            f"evidence, {names[key]}: "
            + (", ".join(f"{k} {v}" for k, v in sorted(totals[key].items())) or "no content")
        )

    def vs_loop(key: str, loop: str = "loop") -> str:
        return f"{c[loop].wall / c[key].wall:.2f}x loop"

    loop_ratio = c["loop"].wall / c["checked"].wall
    cpu_ratio = c["loop"].cpu / c["checked"].cpu
    peak_mb = max(c["checked"].peaks) * 1024 / 1e6
    shell_ratio = c["sh_checked"].wall / c["sh_plain"].wall
    shell_cpu = c["sh_checked"].cpu / c["sh_plain"].cpu
    fetched = {key: traces[key][2] for key in traces}
    once = all(fetched["checked"][p] == 1 for p in STREAM_FILES) and all(
        fetched["sh_checked"][p] == 1 for p in CHANGED
    )
    rows = [
        (f"1: record --diff, {big_mb} MB, content checked",
         f"{loop_ratio:.2f}x loop (cpu {cpu_ratio:.2f}x)", ">= 2x loop", loop_ratio >= 2),
        ("1: peak RSS, content checked", f"{peak_mb:.1f} MB ({c['checked'].peak_mib:.1f} MiB)",
         "< 100 MB", peak_mb < 100),
        (f"2: {shell_mb} MB bash output, checked / no source",
         f"{shell_ratio:.2f}x (cpu {shell_cpu:.2f}x)", "< 2x", shell_ratio < 2),
        ("3: git fetches per in-scope file (1 and 2)", "once" if once else "more than once",
         "once", once),
    ]  # fmt: skip
    say(f"\n{'what':<46}{'now':<34}{'target':<12}")
    for what, now, target, met in rows:
        say(f"{what:<46}{now:<34}{target:<12}{'met' if met else 'NOT MET'}")
    say(f"beside 1: root not a repository {vs_loop('plain')}, no diff and no root "
        f"{vs_loop('none')}, no diff with reads checked {vs_loop('reads')}; checked / root not "
        f"a repository {c['checked'].wall / c['plain'].wall:.2f}x, checked / no diff and no root "
        f"{c['checked'].wall / c['none'].wall:.2f}x")  # fmt: skip
    say(f"beside 2: checked / no diff and no root {c['sh_checked'].wall / c['sh_none'].wall:.2f}x"
        f", root not a repository / no diff and no root "
        f"{c['sh_plain'].wall / c['sh_none'].wall:.2f}x; checked "
        f"{vs_loop('sh_checked', 'sh_loop')}, root not a repository "
        f"{vs_loop('sh_plain', 'sh_loop')}, no diff and no root {vs_loop('sh_none', 'sh_loop')}")  # fmt: skip
    same = sum(plain_credits[path] == section_calls[path] for path in CHANGED)
    say(f"2, root not a repository: {sum(plain_credits.values())} credits; calls that printed a "
        f"file's pinned diff section (git diff -- PATH) {sum(section_calls.values())}; the two "
        f"agree for {same} of {len(CHANGED)} files")  # fmt: skip
    for key, scope in (("checked", STREAM_FILES), ("reads", ()), ("sh_checked", CHANGED)):
        commands_run, listed, _ = traces[key]
        say(f"git in one run, {names[key]}: {dict(sorted(commands_run.items()))}; "
            f"{fetch_summary(listed, fetched[key], scope)}")  # fmt: skip
    say_profile(names["checked"], profiles["checked"], say)
    say_profile(names["sh_checked"], profiles["sh_checked"], say)
    return {"totals": totals, "fetched": fetched, "diff_pages": (plain_credits, section_calls)}


@pytest.mark.bench
def test_content_checks_cost() -> None:
    """Prints the figures; asserts nothing about speed (this machine is shared and noisy), only
    that each case compares what it claims to: checks ran where a content source exists (matched
    and mismatched reads, credits of the bash output), and nothing was checked where none does."""
    found = measure()
    totals: dict[str, Counter[str]] = found["totals"]  # type: ignore[assignment]
    assert totals["checked"]["matched"] > 0
    assert totals["checked"]["mismatched"] > 0
    assert totals["reads"]["matched"] > 0
    assert totals["sh_checked"]["credited"] > 0
    for key in ("plain", "sh_plain"):  # a root with no content: no read checked
        assert totals[key]["matched"] == totals[key]["mismatched"] == 0
    assert totals["plain"]["credited"] == 0
    # no diff, no root: reads unchecked, nothing credited
    assert totals["none"]["matched"] == totals["none"]["credited"] == 0
    assert totals["sh_none"] == Counter()
    # Without a content source the pinned diff's own lines are still scanned for: credits remain,
    # pages of the pinned diff (printed sections with changes enough to count), fewer than with
    # the files' lines too.
    plain_credits, _ = found["diff_pages"]  # type: ignore[misc]
    assert 0 < sum(plain_credits.values()) < totals["sh_checked"]["credited"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The cost of record's content checks.")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--mb", type=int, default=BIG_MB)
    parser.add_argument("--shell-mb", type=int, default=SHELL_MB)
    args = parser.parse_args(argv)
    measure(args.runs, args.mb, args.shell_mb)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in WRITERS:
        WRITERS[sys.argv[1]](*sys.argv[2:])
    else:
        sys.exit(main())
