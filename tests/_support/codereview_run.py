"""A synthetic codereview-cli run: many reviewer tasks, each with a full 256-call trace.

Every reviewer claims the same 64 changed files and really read each of them (a whole read, a
ranged read and a failed read per file), paged the diff, looked at symlink views and left some
calls without an end. Two tasks differ: one trace is ``truncated`` (its kept calls never reach
the last ``UNSEEN`` files, and ``dropped_events`` counts what was cut), and one task never
finished (no ``metadata.json``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HEAD = "abcdef012345"
REVISION = HEAD + "6789abcdef0123456789abcdef01"
FILES = tuple(f"src/pkg{n // 8}/mod{n % 8}.py" for n in range(64))
CALLS = 256
UNSEEN = 4  # files the truncated trace's kept calls never read


@dataclass(frozen=True)
class SyntheticRun:
    folder: Path
    changed: Path
    agents: tuple[str, ...]
    truncated: str
    unfinished: str
    unseen: tuple[str, ...]

    def metadata_files(self) -> list[Path]:
        return sorted(self.folder.glob("llm-tasks/*/*.json"))


def _call(call_id: str, tool: str, **fields: Any) -> dict[str, Any]:
    call = {
        "call_id": call_id,
        "tool": tool,
        "status": "succeeded",
        "start_observed": True,
        "end_observed": True,
        "requested_range": {"offset": 0, "limit": 0},
        "output": {"bytes": 2048, "truncated": False},
    }
    call.update(fields)
    return call


def trace_calls(task: int, *, truncated: bool) -> list[dict[str, Any]]:
    """256 calls: 3 reads per file (whole, ranged, failed), then diff pages, symlink views and
    calls without an end. A truncated trace reads none of the last ``UNSEEN`` files."""
    calls: list[dict[str, Any]] = []
    read = FILES[:-UNSEEN] if truncated else FILES
    for path in read:
        n = len(calls)
        calls += [
            _call(f"t{task}-{n}", "cr_read", path=path, read_view="file"),
            _call(
                f"t{task}-{n + 1}",
                "cr_read",
                path=path,
                read_view="file",
                requested_range={"offset": 100, "limit": 400},
                output={"bytes": 400, "truncated": False},
            ),
            _call(f"t{task}-{n + 2}", "cr_read", path=path, read_view="file", status="failed"),
        ]
    kinds = ("diff", "symlink", "diff", "missing_end")
    while len(calls) < CALLS:
        n, kind = len(calls), kinds[len(calls) % len(kinds)]
        if kind == "diff":
            page = {"offset": 2400 * (n % 8), "limit": 2400}
            calls.append(_call(f"t{task}-{n}", "cr_diff", requested_range=page))
        elif kind == "symlink":
            path = FILES[n % len(FILES)]
            calls.append(_call(f"t{task}-{n}", "cr_read", path=path, read_view="symlink"))
        else:
            calls.append(
                _call(
                    f"t{task}-{n}",
                    "cr_read",
                    path=FILES[n % len(FILES)],
                    read_view="file",
                    status="incomplete",
                    end_observed=False,
                    provenance_issue="missing_end",
                    output=None,
                )
            )
    return calls


def write_run(root: Path, tasks: int = 50) -> SyntheticRun:
    """``tasks`` reviewer tasks under ``root/run/llm-tasks``; task 0 is truncated, task 1 never
    finished."""
    folder = root / "run"
    agents = tuple(f"r{n:02d}" for n in range(tasks))
    for n, agent in enumerate(agents):
        task = folder / "llm-tasks" / f"reviewer%3A{agent}-{HEAD}"
        task.mkdir(parents=True)
        claims = {
            "schema_version": 1,
            "agent_id": agent,
            "inspected_files": list(FILES),
            "skipped_files": [],
            "constraints": [],
            "findings": [],
        }
        (task / "validated-output.json").write_text(json.dumps(claims, indent=2))
        if n == 1:
            continue  # never finished: metadata.json is written last
        trace = {
            "version": 1,
            "source": "pi_rpc",
            "stream_complete": True,
            "truncated": n == 0,
            "dropped_events": 40 if n == 0 else 0,
            "calls": trace_calls(n, truncated=n == 0),
        }
        metadata = {
            "schema_version": 4,
            "task_id": f"reviewer:{agent}",
            "status": "succeeded",
            "reviewer_tool_evidence": {"diff_status": "succeeded", "trace": trace},
        }
        (task / "metadata.json").write_text(json.dumps(metadata, indent=2))
    changed = root / "changed.txt"
    changed.write_text("\n".join(FILES) + "\n")
    return SyntheticRun(folder, changed, agents, agents[0], agents[1], FILES[-UNSEEN:])


def reconcile_args(run: SyntheticRun) -> list[str]:
    return [
        "reconcile",
        "--repo",
        "acme/shop",
        "--revision",
        REVISION,
        "--verdict",
        "approve",
        "--changed",
        str(run.changed),
        "--codereview-run",
        str(run.folder),
        "--repo-root",
        str(run.folder.parent),
        "--mode",
        "enforce",
        "--format",
        "json",
    ]
