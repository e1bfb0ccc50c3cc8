"""The settings a mode resolution runs under, their defaults, and the errors of a flag setup.

Holds ``FlagSettings`` (validated on construction: never an ``enforce`` fallback, positive
timeout and deadline, a flag name), the defaults it starts from, and ``FlagConfigError`` and
``FlagFetchError``. It reads no environment and talks to no server: ``flags.settings_from_env``
builds the settings, the other private modules of this package use them. Everything here is
public through ``coverage_gate.rollout.flags``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from coverage_gate.contracts.model import Mode
from coverage_gate.errors import BadConfigError

__all__ = [
    "DEFAULT_APP_NAME",
    "DEFAULT_DEADLINE_S",
    "DEFAULT_DISK_COPY",
    "DEFAULT_FLAG_NAME",
    "DEFAULT_TIMEOUT_S",
    "ON_ERROR_CHOICES",
    "FlagConfigError",
    "FlagFetchError",
    "FlagSettings",
    "OnError",
]

DEFAULT_FLAG_NAME = "review.coverage-reconciler"
DEFAULT_APP_NAME = "coverage-gate"
DEFAULT_DISK_COPY = "~/.cache/coverage-gate/flags.json"
#: Seconds one request to the server may wait for a connection or for its next bytes.
DEFAULT_TIMEOUT_S = 2.0
#: Seconds the whole exchange with a live server may take (the features fetch, then the usage
#: report): a server that trickles its answer never resets this one. Past it the exchange is
#: abandoned and the next source answers.
DEFAULT_DEADLINE_S = 3.0

OnError = Literal["fail", "fallback"]
ON_ERROR_CHOICES: tuple[str, ...] = get_args(OnError)


class FlagConfigError(BadConfigError):
    """The flag configuration cannot be used (corrupt snapshot, bad setting). Exit code 4."""


class FlagFetchError(BadConfigError):
    """The configured Unleash server gave no usable features document (``flags pull``)."""


@dataclass(frozen=True)
class FlagSettings:
    """Where the mode comes from. Built by the CLI from options and the environment."""

    flag_name: str = DEFAULT_FLAG_NAME
    snapshot: Path | None = None
    unleash_url: str | None = None
    unleash_token: str | None = None
    app_name: str = DEFAULT_APP_NAME
    environment: str = "default"
    disk_copy: Path | None = None
    fallback: Mode = Mode.SHADOW
    on_error: OnError = "fail"
    timeout_s: float = DEFAULT_TIMEOUT_S
    deadline_s: float = DEFAULT_DEADLINE_S

    def __post_init__(self) -> None:
        if self.fallback is Mode.ENFORCE:
            raise FlagConfigError(
                "the fallback mode may not be 'enforce': a missing or broken flag must never "
                "enforce (use 'off' or 'shadow')"
            )
        if self.on_error not in ON_ERROR_CHOICES:
            raise FlagConfigError(
                f"on_error must be one of {', '.join(ON_ERROR_CHOICES)}, not {self.on_error!r}"
            )
        if not self.timeout_s > 0:
            raise FlagConfigError(f"the Unleash timeout must be positive, not {self.timeout_s}")
        if not self.deadline_s > 0:
            raise FlagConfigError(f"the Unleash deadline must be positive, not {self.deadline_s}")
        if not self.flag_name:
            raise FlagConfigError("the flag name may not be empty")
