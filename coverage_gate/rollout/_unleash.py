"""The exchange with a live Unleash server, bounded by the deadline of the whole exchange.

Holds the client built for one fetch (no registration, no retries, nothing scheduled, an
in-memory cache instead of the client's pickled file cache), the thread the exchange runs in so
that the caller stops waiting at ``deadline_s`` (``talk_to_server``), the check of the document
the server served, and the short reason reported when it served none. UnleashClient is imported
only inside these functions. Which source answers, and keeping the disk copy, is ``flags``'s.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from coverage_gate.rollout._engine import (
    _Answer,
    _answer,
    _CapturedLogs,
    _check_all_loaded,
    _client_logs,
    check_features_document,
)
from coverage_gate.rollout._settings import FlagConfigError, FlagSettings

if TYPE_CHECKING:
    from UnleashClient.clients.unleash_client import UnleashClient

__all__ = ["talk_to_server"]

# Live clients live for one resolution: nothing may be scheduled inside that window.
_NEVER_SECONDS = 24 * 3600

# The logger keeps the name of the public module, which its records were always logged under.
_log = logging.getLogger("coverage_gate.rollout.flags")


def _memory_cache() -> Any:
    """An in-memory UnleashClient cache for one live conversation.

    Replaces the client's default FileCache, which pickles into the home folder; the document we
    keep is written by us, as plain JSON, only once it has been checked.
    """
    from UnleashClient.cache import BaseCache  # noqa: PLC0415 - UnleashClient is imported lazily
    from UnleashClient.constants import FEATURES_URL  # noqa: PLC0415

    class MemoryCache(BaseCache):
        def __init__(self) -> None:
            self.values: dict[str, Any] = {}

        def set(self, key: str, value: Any) -> None:
            self.values[key] = value

        def mset(self, data: dict[str, Any]) -> None:
            self.values.update(data)

        def get(self, key: str, default: Any = None) -> Any:
            return self.values.get(key, default)

        def exists(self, key: str) -> bool:
            return key in self.values

        def destroy(self) -> None:
            self.values.clear()

        def features(self) -> str | None:
            found = self.values.get(FEATURES_URL)
            return found if isinstance(found, str) else None

    return MemoryCache()


def _client(settings: FlagSettings, cache: Any, *, url: str) -> UnleashClient:
    """A client for one fetch: no registration, no retries, nothing scheduled in its lifetime."""
    # Imported here, not at the top: an explicit override must never load the client.
    from UnleashClient.clients.unleash_client import UnleashClient  # noqa: PLC0415
    from UnleashClient.utils import InstanceAllowType  # noqa: PLC0415

    headers = {"Authorization": settings.unleash_token} if settings.unleash_token else {}
    return UnleashClient(
        url=url,
        app_name=settings.app_name,
        environment=settings.environment,
        disable_registration=True,
        # Usage metrics are sent once, when destroy() flushes them, within the request timeout.
        disable_metrics=False,
        request_timeout=settings.timeout_s,  # type: ignore[arg-type]  # requests takes float seconds
        request_retries=0,
        refresh_interval=_NEVER_SECONDS,
        metrics_interval=_NEVER_SECONDS,
        custom_headers=headers,
        cache=cache,
        verbose_log_level=logging.DEBUG,
        multiple_instance_mode=InstanceAllowType.SILENTLY_ALLOW,
    )


def _ask(client: UnleashClient, flag_name: str, context: dict[str, Any]) -> _Answer:
    """Ask the live client for the flag's variant; a flag it does not know is not found."""
    if flag_name not in client.feature_definitions():
        return _Answer(found=False)
    return _answer(True, client.get_variant(flag_name, context))


@dataclass(frozen=True)
class _LiveOutcome:
    """One conversation with a live server: the document it served, or why it served none."""

    text: str | None
    error: str | None
    answer: _Answer | None = None


# How UnleashClient's logged fetch failures read, and the short reason we report for each.
_FAILURE_REASONS: tuple[tuple[str, str], ...] = (
    ("connection refused", "connection refused"),
    ("read timed out", "no answer within {timeout} s"),
    ("timed out", "no connection within {timeout} s"),
    ("too many 500 error responses", "HTTP 500"),
    ("too many 502 error responses", "HTTP 502"),
    ("too many 504 error responses", "HTTP 504"),
    ("name or service not known", "host not found"),
)


def _describe_failure(problems: list[str], timeout_s: float) -> str:
    """A short reason from UnleashClient's logged fetch failure (it logs instead of raising)."""
    failures = [m for m in problems if "fetch failed" in m] or problems
    for message in failures:
        lowered = message.lower()
        if "status code:" in lowered:
            return f"HTTP {message.rsplit(':', 1)[1].strip()}"
        for needle, reason in _FAILURE_REASONS:
            if needle in lowered:
                return reason.format(timeout=f"{timeout_s:g}")
    return failures[-1][:200] if failures else "no features document received"


class _Exchange:
    """One conversation with the server, run in a thread of its own so that the caller can stop
    waiting at the deadline. ``answered`` is set once ``outcome`` is known; the usage report
    (``destroy``) follows it."""

    def __init__(
        self, url: str, settings: FlagSettings, flag_name: str | None, context: dict[str, Any]
    ) -> None:
        self._url = url
        self._settings = settings
        self._flag_name = flag_name
        self._context = context
        self.outcome = _LiveOutcome(None, "no answer")
        self.answered = threading.Event()

    def run(self) -> None:
        with _client_logs() as logs:
            cache = _memory_cache()
            client: UnleashClient | None = None
            try:
                client = _client(self._settings, cache, url=self._url)
                client.initialize_client()
                self.outcome = self._outcome(client, cache, logs)
            # A network boundary around a third-party client: whatever it raises means "the server
            # did not answer", and the caller must go on to the disk copy rather than fail the
            # review.
            except Exception as error:  # noqa: BLE001
                self.outcome = _LiveOutcome(
                    None, f"Unleash client failed ({type(error).__name__}: {error})"
                )
            finally:
                self.answered.set()
                if client is not None:
                    _destroy(client)

    def _outcome(self, client: UnleashClient, cache: Any, logs: _CapturedLogs) -> _LiveOutcome:
        text = cache.features()
        if text is None:
            return _LiveOutcome(None, _describe_failure(logs.problems(), self._settings.timeout_s))
        try:
            document = check_features_document(text, "response")
            _check_all_loaded(document, set(client.feature_definitions()), "response")
        except FlagConfigError as error:
            return _LiveOutcome(None, f"malformed features document ({error})")
        answer = _ask(client, self._flag_name, self._context) if self._flag_name else None
        return _LiveOutcome(text, None, answer)


def _destroy(client: UnleashClient) -> None:
    """Stop the client and send its usage report once; the answer already stands."""
    try:
        client.destroy()
    # The same network boundary: a usage report that fails must not turn an answer into an error.
    except Exception as error:  # noqa: BLE001
        _log.debug("UnleashClient: destroy failed: %s", error)


def talk_to_server(
    url: str, settings: FlagSettings, flag_name: str | None, context: dict[str, Any]
) -> _LiveOutcome:
    """Fetch once from the server (no registration, no retries, ``timeout_s`` per request); when a
    flag name is given, evaluate it on the fetched state; then stop the client, which sends its
    usage report once.

    The whole exchange is bounded by ``deadline_s``: a request timeout only bounds each wait for
    the next bytes, so a server that trickles its answer would hold it for ever. Past the deadline
    the exchange is abandoned to its daemon thread (it ends with the process, or when the server
    lets go) and the failure says the deadline was hit. A usage report still pending at the
    deadline is given up in the same way; the answer stands."""
    exchange = _Exchange(url, settings, flag_name, context)
    worker = threading.Thread(target=exchange.run, name="coverage-gate-unleash", daemon=True)
    deadline = settings.deadline_s
    began = time.monotonic()
    worker.start()
    if not exchange.answered.wait(deadline):
        return _LiveOutcome(
            None,
            f"deadline hit: no complete answer within {deadline:g} s (the exchange was abandoned)",
        )
    worker.join(max(deadline - (time.monotonic() - began), 0.0))
    return exchange.outcome
