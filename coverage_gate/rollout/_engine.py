"""A features document, and what the Unleash engine says of one flag in it.

Holds the envelope check of an Unleash client features document (``check_features_document``),
reading one from a file, the offline evaluation of a flag by UnleashClient's own yggdrasil engine
(``_evaluate_document``, loaded lazily), the rule mapping the variant it returns to a mode
(``mode_for_variant``), and the capture of the client's and engine's log records, which the live
exchange (``_unleash``) shares. It opens no connection and keeps no copy.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from coverage_gate.contracts.model import Mode
from coverage_gate.edges.files import beyond_limits
from coverage_gate.rollout._settings import FlagConfigError, FlagSettings

__all__ = ["ENFORCE_VARIANT", "check_features_document", "mode_for_variant", "offline_context"]

ENFORCE_VARIANT = "enforce"

# UnleashClient reports fetch failures through these loggers instead of raising. They are captured
# while we talk to it, so the reason lands in ``detail`` rather than as a traceback on stderr.
_CLIENT_LOGGERS = ("UnleashClient", "yggdrasil_engine")

# The logger keeps the name of the public module, which its records were always logged under.
_log = logging.getLogger("coverage_gate.rollout.flags")


@dataclass(frozen=True)
class _Answer:
    """What one flag source said about the flag for one repository."""

    found: bool
    variant: str | None = None
    mode: Mode | None = None
    payload: Mapping[str, Any] | None = None


def mode_for_variant(variant: Mapping[str, Any]) -> Mode:
    """Map an UnleashClient variant dict to a mode.

    Disabled → off; enabled with variant ``enforce`` → enforce; any other enabled variant → shadow.
    """
    if variant.get("feature_enabled") is not True:
        return Mode.OFF
    if variant.get("name") == ENFORCE_VARIANT and variant.get("enabled") is True:
        return Mode.ENFORCE
    return Mode.SHADOW


def check_features_document(text: str, origin: str) -> dict[str, Any]:
    """Parse an Unleash client features document, or raise FlagConfigError naming ``origin``.

    Only the envelope is checked here (a JSON object with a ``features`` list of named objects);
    whether the engine accepts the definitions is checked when it loads them.
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise FlagConfigError(f"{origin}: not JSON ({error})") from None
    except (RecursionError, ValueError) as error:
        raise FlagConfigError(f"{origin}: {beyond_limits(text, error)}") from None
    if not isinstance(document, dict):
        raise FlagConfigError(f"{origin}: expected a JSON object with a 'features' list")
    features = document.get("features")
    if not isinstance(features, list):
        raise FlagConfigError(f"{origin}: no 'features' list (not an Unleash features document)")
    for index, feature in enumerate(features):
        if not isinstance(feature, dict) or not isinstance(feature.get("name"), str):
            raise FlagConfigError(f"{origin}: features[{index}] is not an object with a 'name'")
    return document


def _read_document(path: Path, what: str) -> str:
    try:
        # utf-8-sig: a byte-order mark before the JSON marks the encoding and is dropped
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise FlagConfigError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise FlagConfigError(f"{what} {path}: is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise FlagConfigError(f"{what} {path}: cannot be read ({error})") from None


class _CapturedLogs(logging.Handler):
    """Keeps UnleashClient's own log records so failures can be reported in ``detail``; only the
    records of the thread that talks to the client (an abandoned exchange may still be logging
    from its own thread)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self._thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self._thread:
            self.records.append(record)

    def problems(self) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno >= logging.WARNING]


@contextmanager
def _client_logs() -> Iterator[_CapturedLogs]:
    handler = _CapturedLogs()
    loggers = [logging.getLogger(name) for name in _CLIENT_LOGGERS]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
        for message in handler.problems():
            _log.debug("UnleashClient: %s", message)


def _answer(found: bool, variant: Mapping[str, Any]) -> _Answer:
    if not found:
        return _Answer(found=False)
    name = variant.get("name")
    payload = variant.get("payload")
    return _Answer(
        found=True,
        variant=name if isinstance(name, str) else None,
        mode=mode_for_variant(variant),
        payload=payload if isinstance(payload, Mapping) else None,
    )


def _check_all_loaded(document: Mapping[str, Any], known: set[str], origin: str) -> None:
    """The engine drops a whole state it cannot parse, silently: every name must have arrived."""
    rejected = sorted({f["name"] for f in document["features"]} - known)
    if rejected:
        shown = ", ".join(rejected[:5]) + (", ..." if len(rejected) > 5 else "")
        raise FlagConfigError(
            f"{origin}: the Unleash engine rejected the feature definitions ({shown})"
        )


def offline_context(settings: FlagSettings, context: Mapping[str, Any]) -> dict[str, Any]:
    """The context UnleashClient would build (static appName and environment, the current time,
    string properties), for the engine asked directly."""
    properties = context.get("properties", {})
    return {
        "appName": settings.app_name,
        "environment": settings.environment,
        "currentTime": datetime.now(UTC).isoformat(),
        **{key: str(value) for key, value in context.items() if key != "properties"},
        "properties": {key: str(value) for key, value in properties.items()},
    }


def _evaluate_document(
    text: str, settings: FlagSettings, context: dict[str, Any], *, origin: str
) -> _Answer:
    """Evaluate the flag offline, from a features document.

    Asks UnleashClient's own engine (yggdrasil) directly: the same evaluation the client runs,
    without loading the client's scheduler and HTTP stack, which a snapshot does not need.
    """
    document = check_features_document(text, origin)
    # Lazy, like UnleashClient; the engine ships no type information.
    from yggdrasil_engine.engine import (  # type: ignore[import-untyped]  # noqa: PLC0415
        UnleashEngine,
        YggdrasilError,
    )

    engine = UnleashEngine()
    with _client_logs():
        try:
            engine.take_state(text)
        except (YggdrasilError, KeyError, TypeError, ValueError, AttributeError) as error:
            raise FlagConfigError(
                f"{origin}: the Unleash engine rejected the feature definitions "
                f"({type(error).__name__}: {error})"
            ) from None
        _check_all_loaded(document, {t.name for t in engine.list_known_toggles()}, origin)
        result = engine.check_variant(settings.flag_name, offline_context(settings, context))
    return _answer(result.is_found, asdict(result.variant))
