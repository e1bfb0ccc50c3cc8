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

The machinery lives in private modules beside this one, and its public names are public here:
``_settings`` (the settings and the errors), ``_engine`` (features documents and the offline
evaluation), ``_unleash`` (the live exchange and its deadline), ``_disk_copy`` (the
per-deployment disk copy) and ``_payload`` (a variant payload → policies). This module holds the
order of the sources, the settings read from the environment, and the effective policies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from coverage_gate.contracts.model import (
    CitationPolicy,
    DepthPolicy,
    Mode,
    ModeSource,
    MutationPolicy,
    PolicySource,
    UnknownPolicy,
)
from coverage_gate.edges.urls import redacted, without_secrets
from coverage_gate.rollout._disk_copy import (
    DEPLOYMENT_KEY,
    check_deployment,
    deployment,
    disk_copy_path,
    save_disk_copy,
)
from coverage_gate.rollout._engine import (
    ENFORCE_VARIANT,
    _evaluate_document,
    _read_document,
    check_features_document,
    mode_for_variant,
    offline_context,
)
from coverage_gate.rollout._payload import (
    PAYLOAD_KEYS,
    PAYLOAD_TYPE,
    VariantPolicies,
    _choices,
    _Policy,
    policies_from_payload,
)
from coverage_gate.rollout._settings import (
    DEFAULT_APP_NAME,
    DEFAULT_DEADLINE_S,
    DEFAULT_DISK_COPY,
    DEFAULT_FLAG_NAME,
    DEFAULT_TIMEOUT_S,
    ON_ERROR_CHOICES,
    FlagConfigError,
    FlagFetchError,
    FlagSettings,
    OnError,
)
from coverage_gate.rollout._unleash import talk_to_server

__all__ = [
    "CITATION_POLICY_ENV",
    "DEFAULT_APP_NAME",
    "DEFAULT_DEADLINE_S",
    "DEFAULT_DISK_COPY",
    "DEFAULT_FLAG_NAME",
    "DEFAULT_TIMEOUT_S",
    "DEPLOYMENT_KEY",
    "DEPTH_POLICY_ENV",
    "ENFORCE_VARIANT",
    "MUTATION_POLICY_ENV",
    "ON_ERROR_CHOICES",
    "PAYLOAD_KEYS",
    "PAYLOAD_TYPE",
    "UNKNOWN_POLICY_ENV",
    "FlagConfigError",
    "FlagFetchError",
    "FlagSettings",
    "ModeResolution",
    "OnError",
    "Policies",
    "VariantPolicies",
    "check_features_document",
    "deployment",
    "disk_copy_path",
    "effective_policies",
    "evaluation_context",
    "fetch_features",
    "mode_for_variant",
    "offline_context",
    "override_from_env",
    "parse_mode",
    "policies_from_payload",
    "resolve_mode",
    "save_disk_copy",
    "settings_from_env",
]

_NO_PROPERTIES: Mapping[str, str] = MappingProxyType({})


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
    policies: VariantPolicies = VariantPolicies()  # noqa: RUF009 - a frozen dataclass


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


def _disk_copy_from_env(environ: Mapping[str, str]) -> Path | None:
    raw = environ.get("COVERAGE_GATE_FLAGS_DISK_COPY", DEFAULT_DISK_COPY)
    if raw == "":
        return None
    if raw.startswith("~") and environ.get("HOME"):
        return Path(environ["HOME"]) / raw[1:].lstrip("/")
    return Path(raw).expanduser()


def fetch_features(settings: FlagSettings) -> str:
    """One request to the live server for a snapshot (``flags pull``); raise FlagFetchError if it
    gives no usable features document."""
    if not settings.unleash_url:
        raise FlagConfigError("no Unleash server configured (set UNLEASH_URL)")
    outcome = talk_to_server(settings.unleash_url, settings, None, {})
    if outcome.text is None:
        url = settings.unleash_url
        raise FlagFetchError(
            f"Unleash server {redacted(url)}: {without_secrets(outcome.error or '', url)}"
        )
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
            ModeSource.LIVE: f"Unleash server {redacted(settings.unleash_url or '')}",
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
    outcome = talk_to_server(url, settings, settings.flag_name, context)
    if outcome.text is not None:
        saved = save_disk_copy(settings, outcome.text)
        answer = outcome.answer
        if answer is None or not answer.found or answer.mode is None:
            notes.append(
                f"flag {settings.flag_name!r} not defined on Unleash server {redacted(url)}{saved}"
            )
            return None
        return ModeResolution(
            answer.mode,
            ModeSource.LIVE,
            answer.variant,
            True,
            f"flag {settings.flag_name!r} from Unleash server {redacted(url)} "
            f"(environment {settings.environment!r}): variant {answer.variant!r}{saved}",
            answer.payload,
        )
    failure = f"Unleash server {redacted(url)} failed: {without_secrets(outcome.error or '', url)}"
    return _from_disk_copy(settings, context, failure, notes)


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
        check_deployment(text, settings, path)
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
