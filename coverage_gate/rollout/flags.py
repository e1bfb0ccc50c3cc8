"""Which mode a repository runs in, decided through Unleash (DESIGN §8).

Sources are asked in a fixed order and the first one that knows the flag answers:

1. an explicit override (``--mode`` or ``COVERAGE_GATE_MODE``): no flag source is consulted and
   UnleashClient is not even imported;
2. a flags snapshot file (the Unleash ``/api/client/features`` JSON): offline, no network;
3. a live Unleash server; a good answer is kept as a plain-JSON disk copy, and that copy answers
   when the server does not (refused, timed out, 5xx, malformed body, or no complete answer
   within the deadline of the whole exchange). The copy is kept per deployment (server URL,
   environment, app name): its file name carries a digest of the three and the document
   records them, so two deployments on one runner never answer for each other;
4. the configured fallback, ``shadow`` by default and never ``enforce``.

A source that answers but does not define the flag passes the question on to the next source, and
the resolution's ``detail`` says so. Every evaluation is Unleash's own: the live source runs
UnleashClient; offline documents (snapshot, disk copy) go to the client's yggdrasil engine directly,
which keeps the client's scheduler and HTTP stack out of offline runs. This module maps the variant
they return to a mode and nothing more.

* flag disabled for the repository → ``off``
* enabled with variant ``enforce`` → ``enforce``
* enabled with any other variant, or none → ``shadow`` (an unknown variant never escalates)

The variant that answers may carry a JSON payload setting policies for the repositories it serves
(``{"depth_policy": "any-hunk", "unknown_policy": "accept", "citation_policy": "accept",
"mutation_policy": "downgrade"}``);
``effective_policies`` weighs them
against the CLI and the environment. A payload that cannot be read is a configuration error, like
a corrupt snapshot, never a silent default.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args
from urllib.parse import urlsplit, urlunsplit

from coverage_gate.contracts.model import (
    CitationPolicy,
    DepthPolicy,
    Mode,
    ModeSource,
    MutationPolicy,
    PolicySource,
    UnknownPolicy,
)
from coverage_gate.edges.files import beyond_limits, write_atomic
from coverage_gate.errors import BadConfigError

if TYPE_CHECKING:
    from UnleashClient.clients.unleash_client import UnleashClient

DEFAULT_FLAG_NAME = "review.coverage-reconciler"
DEFAULT_APP_NAME = "coverage-gate"
DEFAULT_DISK_COPY = "~/.cache/coverage-gate/flags.json"
ENFORCE_VARIANT = "enforce"
#: Seconds one request to the server may wait for a connection or for its next bytes.
DEFAULT_TIMEOUT_S = 2.0
#: Seconds the whole exchange with a live server may take (the features fetch, then the usage
#: report): a server that trickles its answer never resets this one. Past it the exchange is
#: abandoned and the next source answers.
DEFAULT_DEADLINE_S = 3.0

OnError = Literal["fail", "fallback"]
ON_ERROR_CHOICES: tuple[str, ...] = get_args(OnError)

# UnleashClient reports fetch failures through these loggers instead of raising. They are captured
# while we talk to it, so the reason lands in ``detail`` rather than as a traceback on stderr.
_CLIENT_LOGGERS = ("UnleashClient", "yggdrasil_engine")
# Live clients live for one resolution: nothing may be scheduled inside that window.
_NEVER_SECONDS = 24 * 3600

_NO_PROPERTIES: Mapping[str, str] = MappingProxyType({})

_log = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class VariantPolicies:
    """The policies a variant's payload sets for the repositories it serves (``None``: not set)."""

    depth_policy: DepthPolicy | None = None
    unknown_policy: UnknownPolicy | None = None
    citation_policy: CitationPolicy | None = None
    mutation_policy: MutationPolicy | None = None


@dataclass(frozen=True)
class ModeResolution:
    """The answer and where it came from.

    ``flag_found`` is true only when a flag source (snapshot, live, disk copy) defined the flag;
    an override or a fallback leaves it false. ``variant`` is the variant name the engine returned
    (``"disabled"`` when the flag was off for the repository), ``None`` when no flag answered.
    ``payload`` is that variant's payload as the engine returned it, and ``policies`` what it sets.
    """

    mode: Mode
    source: ModeSource
    variant: str | None
    flag_found: bool
    detail: str
    payload: Mapping[str, Any] | None = None
    policies: VariantPolicies = VariantPolicies()


# --- the mapping rule --------------------------------------------------------------------------


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


def evaluation_context(repo: str, properties: Mapping[str, str] = _NO_PROPERTIES) -> dict[str, Any]:
    """The Unleash context: ``userId`` and ``properties.repo`` are the repository, so gradual
    rollouts are sticky per repository; extra properties (agent, format) can be targeted too."""
    return {"userId": repo, "properties": {**properties, "repo": repo}}


# --- settings from the environment -------------------------------------------------------------


def parse_mode(value: str | None, *, what: str) -> Mode | None:
    """``off``/``shadow``/``enforce`` → that mode; empty or ``auto`` → ``None`` (no override)."""
    if value is None or value.strip().lower() in ("", "auto"):
        return None
    try:
        return Mode(value.strip().lower())
    except ValueError:
        choices = ", ".join(["auto", *(m.value for m in Mode)])
        raise FlagConfigError(f"{what}: {value!r} is not a mode ({choices})") from None


def override_from_env(environ: Mapping[str, str]) -> Mode | None:
    """The explicit override from ``COVERAGE_GATE_MODE`` (``auto`` or unset: none)."""
    return parse_mode(environ.get("COVERAGE_GATE_MODE"), what="COVERAGE_GATE_MODE")


def settings_from_env(
    environ: Mapping[str, str],
    *,
    flag_name: str | None = None,
    snapshot: Path | None = None,
    unleash_url: str | None = None,
    unleash_token: str | None = None,
    app_name: str | None = None,
    environment: str | None = None,
    disk_copy: Path | None = None,
    fallback: Mode | None = None,
    on_error: str | None = None,
    timeout_s: float | None = None,
) -> FlagSettings:
    """Build settings from the environment; a keyword given (not ``None``) wins over its variable.

    ``COVERAGE_GATE_FLAGS_DISK_COPY`` set to the empty string disables the disk copy.
    """
    env = {key: value for key, value in environ.items() if value != ""}
    fallback_mode = fallback or parse_mode(
        env.get("COVERAGE_GATE_FALLBACK_MODE"), what="COVERAGE_GATE_FALLBACK_MODE"
    )
    chosen_on_error = on_error or env.get("COVERAGE_GATE_FLAGS_ON_ERROR", "fail")
    if chosen_on_error not in ON_ERROR_CHOICES:
        raise FlagConfigError(
            f"flags on-error must be one of {', '.join(ON_ERROR_CHOICES)}, not {chosen_on_error!r}"
        )
    snapshot_env = env.get("COVERAGE_GATE_FLAGS")
    return FlagSettings(
        flag_name=flag_name or env.get("COVERAGE_GATE_FLAG_NAME", DEFAULT_FLAG_NAME),
        snapshot=snapshot or (Path(snapshot_env) if snapshot_env else None),
        unleash_url=unleash_url or env.get("UNLEASH_URL"),
        unleash_token=unleash_token or env.get("UNLEASH_API_TOKEN"),
        app_name=app_name or env.get("UNLEASH_APP_NAME", DEFAULT_APP_NAME),
        environment=environment or env.get("UNLEASH_ENVIRONMENT", "default"),
        disk_copy=disk_copy or _disk_copy_from_env(environ),
        fallback=fallback_mode or Mode.SHADOW,
        on_error="fallback" if chosen_on_error == "fallback" else "fail",
        timeout_s=timeout_s if timeout_s is not None else DEFAULT_TIMEOUT_S,
    )


#: The member of a disk copy that names the deployment it was kept for (the Unleash engine
#: ignores members it does not know, so the copy stays a features document).
DEPLOYMENT_KEY = "coverageGateDeployment"


def deployment(settings: FlagSettings) -> dict[str, str]:
    """The deployment a live answer belongs to: server URL (without credentials or a trailing
    slash), environment and app name."""
    raw = (settings.unleash_url or "").strip()
    try:
        parts = urlsplit(raw)
    except ValueError:  # not a URL (an unclosed "[" of an IPv6 host): the fetch will say so
        scheme, separator, rest = raw.partition("://")
        url = f"{scheme}{separator}{rest.rpartition('@')[2]}" if separator else raw
    else:
        netloc = parts.netloc.rpartition("@")[2].lower()  # user:password@ is never written down
        url = urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))
    return {"url": url, "environment": settings.environment, "appName": settings.app_name}


def disk_copy_path(settings: FlagSettings) -> Path | None:
    """Where this deployment's disk copy lives: beside the configured path, its name carrying a
    digest of the deployment (``flags.json`` → ``flags.3f2a9c0d1e4b5a67.json``); ``None`` when
    the disk copy is off."""
    base = settings.disk_copy
    if base is None:
        return None
    key = json.dumps(deployment(settings), sort_keys=True).encode()
    digest = hashlib.sha256(key).hexdigest()[:16]
    return base.with_name(f"{base.stem}.{digest}{base.suffix or '.json'}")


def _disk_copy_from_env(environ: Mapping[str, str]) -> Path | None:
    raw = environ.get("COVERAGE_GATE_FLAGS_DISK_COPY", DEFAULT_DISK_COPY)
    if raw == "":
        return None
    if raw.startswith("~") and environ.get("HOME"):
        return Path(environ["HOME"]) / raw[1:].lstrip("/")
    return Path(raw).expanduser()


# --- features documents ------------------------------------------------------------------------


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
    except (OSError, UnicodeDecodeError) as error:
        raise FlagConfigError(f"{what} {path}: cannot be read ({error})") from None


# --- talking to UnleashClient ------------------------------------------------------------------


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


def _ask(client: UnleashClient, flag_name: str, context: dict[str, Any]) -> _Answer:
    """Ask the live client for the flag's variant; a flag it does not know is not found."""
    if flag_name not in client.feature_definitions():
        return _Answer(found=False)
    return _answer(True, client.get_variant(flag_name, context))


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


def _talk_to_server(
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


def fetch_features(settings: FlagSettings) -> str:
    """One request to the live server for a snapshot (``flags pull``); raise FlagFetchError if it
    gives no usable features document."""
    if not settings.unleash_url:
        raise FlagConfigError("no Unleash server configured (set UNLEASH_URL)")
    outcome = _talk_to_server(settings.unleash_url, settings, None, {})
    if outcome.text is None:
        raise FlagFetchError(f"Unleash server {settings.unleash_url}: {outcome.error}")
    return outcome.text


# --- resolution --------------------------------------------------------------------------------


def resolve_mode(
    repo: str,
    settings: FlagSettings,
    *,
    override: Mode | None = None,
    properties: Mapping[str, str] = _NO_PROPERTIES,
) -> ModeResolution:
    """Decide the mode for ``repo``: override → snapshot → live (or its disk copy) → fallback;
    then read the policies the answering variant's payload sets.

    A payload that cannot be read raises FlagConfigError, or with ``on_error`` ``fallback`` gives
    the fallback, whose detail says why.
    """
    resolution = _resolve_source(repo, settings, override=override, properties=properties)
    if resolution.payload is None:
        return resolution
    try:
        policies = policies_from_payload(resolution.payload)
    except FlagConfigError as error:
        origin = {
            ModeSource.SNAPSHOT: f"flags snapshot {settings.snapshot}",
            ModeSource.LIVE: f"Unleash server {settings.unleash_url}",
            ModeSource.DISK_COPY: f"disk copy {disk_copy_path(settings)}",
        }.get(resolution.source, resolution.source.value)
        message = (
            f"{origin}: flag {settings.flag_name!r} variant {resolution.variant!r}: "
            f"variant payload {error}"
        )
        if settings.on_error == "fail":
            raise FlagConfigError(message) from None
        return _fallback(settings, [f"unusable variant payload: {message}"])
    return replace(resolution, policies=policies)


def _resolve_source(
    repo: str,
    settings: FlagSettings,
    *,
    override: Mode | None,
    properties: Mapping[str, str],
) -> ModeResolution:
    """The first source that knows the flag answers."""
    if override is not None:
        return ModeResolution(
            override, ModeSource.OVERRIDE, None, False, "explicit override; no flag consulted"
        )
    context = evaluation_context(repo, properties)
    flag = settings.flag_name
    notes: list[str] = []

    if settings.snapshot is not None:
        try:
            resolution = _from_snapshot(settings.snapshot, settings, context)
        except FlagConfigError as error:
            if settings.on_error == "fail":
                raise
            return _fallback(settings, [f"snapshot unusable: {error}"])
        if resolution is not None:
            return resolution
        notes.append(f"flag {flag!r} not defined in snapshot {settings.snapshot}")

    if settings.unleash_url:
        resolution = _from_live(settings, context, notes)
        if resolution is not None:
            return resolution

    if settings.snapshot is None and not settings.unleash_url:
        notes.append("no flag source configured (no snapshot, no Unleash server)")
    return _fallback(settings, notes)


def _from_snapshot(
    path: Path, settings: FlagSettings, context: dict[str, Any]
) -> ModeResolution | None:
    text = _read_document(path, "flags snapshot")
    answer = _evaluate_document(text, settings, context, origin=f"flags snapshot {path}")
    if not answer.found or answer.mode is None:
        return None
    return ModeResolution(
        answer.mode,
        ModeSource.SNAPSHOT,
        answer.variant,
        True,
        f"flag {settings.flag_name!r} in snapshot {path}: variant {answer.variant!r}",
        answer.payload,
    )


def _from_live(
    settings: FlagSettings, context: dict[str, Any], notes: list[str]
) -> ModeResolution | None:
    """Ask the server; on success keep the disk copy, on failure answer from the disk copy."""
    url = settings.unleash_url
    assert url is not None  # noqa: S101 - only called with a server configured
    outcome = _talk_to_server(url, settings, settings.flag_name, context)
    if outcome.text is not None:
        saved = save_disk_copy(settings, outcome.text)
        answer = outcome.answer
        if answer is None or not answer.found or answer.mode is None:
            notes.append(f"flag {settings.flag_name!r} not defined on Unleash server {url}{saved}")
            return None
        return ModeResolution(
            answer.mode,
            ModeSource.LIVE,
            answer.variant,
            True,
            f"flag {settings.flag_name!r} from Unleash server {url} "
            f"(environment {settings.environment!r}): variant {answer.variant!r}{saved}",
            answer.payload,
        )
    failure = f"Unleash server {url} failed: {outcome.error}"
    return _from_disk_copy(settings, context, failure, notes)


def save_disk_copy(settings: FlagSettings, text: str) -> str:
    """Keep the last good document of this deployment, naming the deployment inside; a copy that
    cannot be written never fails the run (the note says why)."""
    path = disk_copy_path(settings)
    if path is None:
        return ""
    try:
        document = json.loads(text)
        document[DEPLOYMENT_KEY] = deployment(settings)
        write_atomic(path, json.dumps(document), make_parents=True)  # its folder may be new
    except OSError as error:
        return f"; disk copy not saved to {path} ({error})"
    return ""


def _check_deployment(text: str, settings: FlagSettings, path: Path) -> None:
    """A copy is trusted only by the deployment it names."""
    named = json.loads(text).get(DEPLOYMENT_KEY)
    if named is None:
        raise FlagConfigError(
            f"disk copy {path} names no deployment (kept before copies were kept per "
            "deployment): not trusted"
        )
    if named != deployment(settings):
        raise FlagConfigError(f"disk copy {path} was kept for another deployment ({named})")


def _from_disk_copy(
    settings: FlagSettings, context: dict[str, Any], failure: str, notes: list[str]
) -> ModeResolution | None:
    path = disk_copy_path(settings)
    if path is None:
        notes.append(f"{failure}; no disk copy configured")
        return None
    if not path.exists():
        notes.append(f"{failure}; no disk copy at {path}")
        return None
    try:
        text = _read_document(path, "disk copy")
        answer = _evaluate_document(text, settings, context, origin=f"disk copy {path}")
        _check_deployment(text, settings, path)
        saved_at = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")
    except (FlagConfigError, OSError) as error:
        notes.append(f"{failure}; disk copy unusable: {error}")
        return None
    if not answer.found or answer.mode is None:
        notes.append(f"{failure}; flag {settings.flag_name!r} not defined in disk copy {path}")
        return None
    return ModeResolution(
        answer.mode,
        ModeSource.DISK_COPY,
        answer.variant,
        True,
        f"{failure}; answered from disk copy {path} saved {saved_at}: "
        f"flag {settings.flag_name!r} variant {answer.variant!r}",
        answer.payload,
    )


def _fallback(settings: FlagSettings, notes: list[str]) -> ModeResolution:
    return ModeResolution(
        settings.fallback,
        ModeSource.FALLBACK,
        None,
        False,
        f"fallback {settings.fallback.value}: " + "; ".join(notes),
    )


# --- policies ----------------------------------------------------------------------------------

DEPTH_POLICY_ENV = "COVERAGE_GATE_DEPTH_POLICY"
UNKNOWN_POLICY_ENV = "COVERAGE_GATE_UNKNOWN_POLICY"
CITATION_POLICY_ENV = "COVERAGE_GATE_CITATION_POLICY"
MUTATION_POLICY_ENV = "COVERAGE_GATE_MUTATION_POLICY"
PAYLOAD_TYPE = "json"
#: The keys a variant payload may set, and the policy each one names.
PAYLOAD_KEYS: Mapping[str, type[StrEnum]] = MappingProxyType(
    {
        "depth_policy": DepthPolicy,
        "unknown_policy": UnknownPolicy,
        "citation_policy": CitationPolicy,
        "mutation_policy": MutationPolicy,
    }
)

_Policy = TypeVar("_Policy", DepthPolicy, UnknownPolicy, CitationPolicy, MutationPolicy)


def _choices(kind: type[StrEnum]) -> str:
    return ", ".join(member.value for member in kind)


def policies_from_payload(payload: Mapping[str, Any]) -> VariantPolicies:
    """Read an Unleash variant payload (``{"type": "json", "value": "{...}"}``).

    The value must be a JSON object whose keys are among ``PAYLOAD_KEYS`` and whose values name
    a policy; anything else raises FlagConfigError saying what is wrong (the caller names where
    the payload came from).
    """
    kind = payload.get("type")
    if kind != PAYLOAD_TYPE:
        raise FlagConfigError(f"is of type {kind!r}; policies are read from a 'json' payload")
    value = payload.get("value")
    if not isinstance(value, str):
        raise FlagConfigError("has no JSON text in its 'value'")
    try:
        body = json.loads(value)
    except json.JSONDecodeError as error:
        raise FlagConfigError(f"is not valid JSON ({error})") from None
    if not isinstance(body, dict):
        raise FlagConfigError(f"is not a JSON object of policies ({', '.join(PAYLOAD_KEYS)})")
    unknown = sorted(set(body) - set(PAYLOAD_KEYS))
    if unknown:
        raise FlagConfigError(
            f"has unknown key(s) {', '.join(map(repr, unknown))} (known: {', '.join(PAYLOAD_KEYS)})"
        )
    return VariantPolicies(
        depth_policy=_payload_policy(body, "depth_policy", DepthPolicy),
        unknown_policy=_payload_policy(body, "unknown_policy", UnknownPolicy),
        citation_policy=_payload_policy(body, "citation_policy", CitationPolicy),
        mutation_policy=_payload_policy(body, "mutation_policy", MutationPolicy),
    )


def _payload_policy(body: Mapping[str, Any], key: str, kind: type[_Policy]) -> _Policy | None:
    if key not in body:
        return None
    value = body[key]
    if not isinstance(value, str) or value not in {member.value for member in kind}:
        raise FlagConfigError(f"{key} {value!r} is not one of {_choices(kind)}")
    return kind(value)


@dataclass(frozen=True)
class Policies:
    """The policies a decision runs under, and where each one came from."""

    depth_policy: DepthPolicy
    depth_policy_source: PolicySource
    unknown_policy: UnknownPolicy
    unknown_policy_source: PolicySource
    citation_policy: CitationPolicy = CitationPolicy.DOWNGRADE
    citation_policy_source: PolicySource = PolicySource.DEFAULT
    mutation_policy: MutationPolicy = MutationPolicy.ACCEPT
    mutation_policy_source: PolicySource = PolicySource.DEFAULT


def effective_policies(
    resolution: ModeResolution,
    environ: Mapping[str, str],
    *,
    depth_policy: DepthPolicy | None = None,
    unknown_policy: UnknownPolicy | None = None,
    citation_policy: CitationPolicy | None = None,
    mutation_policy: MutationPolicy | None = None,
) -> Policies:
    """Each policy from, in order: the CLI option, its environment variable
    (``COVERAGE_GATE_DEPTH_POLICY``, ``COVERAGE_GATE_UNKNOWN_POLICY``,
    ``COVERAGE_GATE_CITATION_POLICY``, ``COVERAGE_GATE_MUTATION_POLICY``; empty is unset), the
    payload of the variant that served the repository, the default (``accept``; ``downgrade``
    for citations, which the mode then decides: shadow measures, enforce applies). A variable
    naming no policy is a configuration error."""
    depth, depth_source = _choose(
        depth_policy,
        environ.get(DEPTH_POLICY_ENV),
        resolution.policies.depth_policy,
        DepthPolicy.ACCEPT,
        DEPTH_POLICY_ENV,
    )
    unknown, unknown_source = _choose(
        unknown_policy,
        environ.get(UNKNOWN_POLICY_ENV),
        resolution.policies.unknown_policy,
        UnknownPolicy.ACCEPT,
        UNKNOWN_POLICY_ENV,
    )
    citation, citation_source = _choose(
        citation_policy,
        environ.get(CITATION_POLICY_ENV),
        resolution.policies.citation_policy,
        CitationPolicy.DOWNGRADE,
        CITATION_POLICY_ENV,
    )
    mutation, mutation_source = _choose(
        mutation_policy,
        environ.get(MUTATION_POLICY_ENV),
        resolution.policies.mutation_policy,
        MutationPolicy.ACCEPT,
        MUTATION_POLICY_ENV,
    )
    return Policies(
        depth,
        depth_source,
        unknown,
        unknown_source,
        citation,
        citation_source,
        mutation,
        mutation_source,
    )


def _choose(
    cli: _Policy | None, env: str | None, payload: _Policy | None, default: _Policy, variable: str
) -> tuple[_Policy, PolicySource]:
    if cli is not None:
        return cli, PolicySource.CLI
    if env:
        kind = type(default)
        try:
            return kind(env.strip().lower()), PolicySource.ENV
        except ValueError:
            raise FlagConfigError(f"{variable}: {env!r} is not one of {_choices(kind)}") from None
    if payload is not None:
        return payload, PolicySource.PAYLOAD
    return default, PolicySource.DEFAULT
