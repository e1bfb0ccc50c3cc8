"""The scope of a review: changed files, after the reviewable-path filter."""

from __future__ import annotations

import codecs
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

import pathspec

from coverage_gate.core.paths import Rejected, normalise
from coverage_gate.errors import BadConfigError, BadInputError

__all__ = [
    "DEFAULT_EXCLUDES",
    "build_filter",
    "changed_from_git",
    "decode_changed",
    "parse_changed",
    "reviewable",
]

DEFAULT_EXCLUDES: tuple[str, ...] = (
    # lock files
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "Cargo.lock",
    "go.sum",
    "Gemfile.lock",
    "composer.lock",
    "mix.lock",
    "flake.lock",
    "*.lock",
    # vendored code
    "vendor/",
    "third_party/",
    "third-party/",
    "node_modules/",
    # generated code
    "*.min.js",
    "*.min.css",
    "*.map",
    "*_pb2.py",
    "*_pb2.pyi",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.generated.*",
    "*.g.dart",
)


def build_filter(excludes: Sequence[str], use_defaults: bool) -> pathspec.GitIgnoreSpec:
    patterns = [*(DEFAULT_EXCLUDES if use_defaults else ()), *excludes]
    try:
        return pathspec.GitIgnoreSpec.from_lines(patterns)
    except (ValueError, TypeError) as error:
        raise BadConfigError(f"--exclude: not a valid glob: {error}") from None


def reviewable(paths: Iterable[str], spec: pathspec.GitIgnoreSpec) -> list[str]:
    return sorted({path for path in paths if not spec.match_file(path)})


def decode_changed(data: bytes, source: str) -> str:
    """The text of a changed-file list: UTF-8, a leading byte-order mark dropped (it marks the
    encoding; it is not part of the first path)."""
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as error:
        at = start + error.start
        line = data.count(b"\n", 0, at) + 1
        raise BadInputError(
            f"changed-file list {source}: line {line}: not UTF-8 text (byte {at})"
        ) from None


def parse_changed(text: str, source: str, root: str | None) -> list[str]:
    """A newline-separated list of changed files; blank lines and ``#`` comments are ignored."""
    out: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        path = normalise(line, root)
        if isinstance(path, Rejected):
            raise BadInputError(f"changed-file list {source}: line {number}: {path.describe()}")
        out.append(path)
    return out


def changed_from_git(repo_root: Path, base: str, head: str) -> list[str]:
    """Files added, copied, modified, renamed or retyped on ``head`` since it left ``base``:
    ``git diff base...head``, from their merge base, as a pull request shows its change. A
    base branch that moved on after the branch point brings none of its own changes into scope.

    Deleted files are not in scope: there is nothing left to read.
    """
    command = ["git", "-C", str(repo_root), "diff", "--name-only", "-z", "--diff-filter=ACMRT"]
    try:
        result = subprocess.run(
            [*command, f"{base}...{head}", "--"], capture_output=True, check=False, timeout=60
        )
    except FileNotFoundError:
        raise BadConfigError("--base/--head need git on PATH") from None
    except subprocess.TimeoutExpired:
        raise BadInputError(f"git diff {base}...{head} did not finish within 60 s") from None
    if result.returncode != 0:
        said = result.stderr.decode("utf-8", "replace")
        inside = repo_root.is_dir() and subprocess.run(
            ["git", "-C", str(repo_root), "rev-parse", "--show-toplevel"],
            capture_output=True, check=False, timeout=60,
        ).returncode == 0  # fmt: skip
        if not inside:
            raise BadInputError(
                f"--base {base} --head {head}: {repo_root} is not in a git work tree (give "
                "--repo-root the repository's checkout, or --changed a file list)"
            )
        for revision in (base, head):
            known = subprocess.run(
                ["git", "-C", str(repo_root), "rev-parse", "--verify", "--quiet",
                 f"{revision}^{{commit}}"],
                capture_output=True, check=False, timeout=60,
            )  # fmt: skip
            if known.returncode != 0:
                raise BadInputError(
                    f"--base {base} --head {head}: the repository at {repo_root} holds no "
                    f"commit {revision!r} (fetched deep enough?)"
                )
        merge_base = subprocess.run(
            ["git", "-C", str(repo_root), "merge-base", base, head],
            capture_output=True, check=False, timeout=60,
        )  # fmt: skip
        if merge_base.returncode != 0:
            raise BadInputError(
                f"--base {base} --head {head}: the repository at {repo_root} holds no merge base "
                "of the two (fetched deep enough? on GitHub: actions/checkout with fetch-depth: 0)"
            )
        message = said.strip().splitlines()
        raise BadInputError(f"git diff {base}...{head}: {message[-1] if message else 'failed'}")
    names: set[str] = set()
    for raw in result.stdout.split(b"\0"):
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            shown = raw.decode("utf-8", "replace")
            raise BadInputError(
                f"git diff {base}...{head}: changed file {shown!r} has a name that is not UTF-8"
            ) from None
        if name:
            names.add(name)
    return sorted(names)
