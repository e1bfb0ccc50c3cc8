"""The exception tree and the exit codes it maps to (one table: the README's, and --help's)."""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "BadConfigError",
    "BadInputError",
    "CoverageGateError",
    "ExitCode",
    "UsageError",
    "check_repo",
]


class ExitCode(IntEnum):
    OK = 0  # a decision (or document) was produced; a downgrade is not an error
    DOWNGRADED = 1  # only with --exit-code: the decision changed the verdict
    DRIFT = 1  # formats --check: the stream held what its adapter does not understand
    USAGE = 2  # the command line is wrong
    BAD_INPUT = 3  # an input file or stream is missing, unreadable or breaks its contract
    BAD_CONFIG = 4  # configuration (flags snapshot, flag settings, filters) is wrong
    INTERNAL = 5  # a bug: please report it


class CoverageGateError(Exception):
    """Base of every error coverage-gate reports without a traceback."""

    exit_code: ExitCode = ExitCode.INTERNAL


class BadInputError(CoverageGateError):
    exit_code = ExitCode.BAD_INPUT


class BadConfigError(CoverageGateError):
    exit_code = ExitCode.BAD_CONFIG


class UsageError(CoverageGateError):
    """The command line is wrong: a missing or conflicting option, an unknown name."""

    exit_code = ExitCode.USAGE


def check_repo(repo: str) -> None:
    """--repo names a repository as OWNER/NAME: its owner is a metric label, and a flag's
    targeting may match on it. Anything else is a usage error."""
    owner, slash, name = repo.partition("/")
    if not (owner and slash and name) or any(char.isspace() for char in repo):
        raise UsageError(f"--repo {repo!r}: expected OWNER/NAME, e.g. acme/api")
