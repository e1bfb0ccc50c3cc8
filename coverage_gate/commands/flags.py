"""``coverage-gate flags``: the effective mode of a repository, and snapshots from a live server.

Mounted into the main CLI with ``app.add_typer(flags_app, name="flags")``; also runnable alone as
``python -m coverage_gate.commands.flags``.

    coverage-gate flags --repo acme/api [--flags FILE] [--format json]

It also shows the policies a reconcile of that repository would run under (depth, unknown and
citation policy) and where each came from: CLI option, environment, the variant's payload, or
default.
    coverage-gate flags pull -o flags.snapshot.json

Exit codes: 0 answered (whatever the mode), 2 usage, 3 a closed or unwritable stdout, 4 bad
configuration (corrupt snapshot, bad setting, or no usable answer from the server ``pull`` was
pointed at).
"""

from __future__ import annotations

import json
import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from coverage_gate.commands._choice import HELP_WIDTH, Command, Group, choice
from coverage_gate.contracts.enums import CitationPolicy, DepthPolicy, MutationPolicy, UnknownPolicy
from coverage_gate.edges.stdio import require_stdout, write_stdout
from coverage_gate.edges.urls import redacted
from coverage_gate.errors import BadInputError, ExitCode, UsageError, check_repo

if TYPE_CHECKING:
    from coverage_gate.rollout.flags import FlagSettings, ModeResolution, Policies

__all__ = [
    "EXIT_BAD_CONFIG",
    "EXIT_BAD_INPUT",
    "EXIT_OK",
    "EXIT_USAGE",
    "EnvironmentOption",
    "FallbackChoice",
    "FlagNameOption",
    "FlagsFileOption",
    "ModeChoice",
    "OnErrorChoice",
    "OutputFormat",
    "UrlOption",
    "flags",
    "flags_app",
    "pull",
    "resolution_document",
]

EXIT_OK = int(ExitCode.OK)
EXIT_USAGE = int(ExitCode.USAGE)
EXIT_BAD_INPUT = int(ExitCode.BAD_INPUT)
EXIT_BAD_CONFIG = int(ExitCode.BAD_CONFIG)


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class ModeChoice(StrEnum):
    AUTO = "auto"
    OFF = "off"
    SHADOW = "shadow"
    ENFORCE = "enforce"


class FallbackChoice(StrEnum):
    OFF = "off"
    SHADOW = "shadow"


class OnErrorChoice(StrEnum):
    FAIL = "fail"
    FALLBACK = "fallback"


flags_app = typer.Typer(
    cls=Group,
    help="Show the mode a repository resolves to, and pull flag snapshots from Unleash.",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,  # plain help, as the main command's (start-up)
    context_settings=HELP_WIDTH,
)

FlagsFileOption = Annotated[
    Path | None,
    typer.Option(
        "--flags",
        help="Unleash client features JSON to evaluate offline (env COVERAGE_GATE_FLAGS).",
    ),
]
UrlOption = Annotated[
    str | None,
    typer.Option(
        "--unleash-url", help="Unleash API URL, e.g. https://unleash/api (env UNLEASH_URL)."
    ),
]
FlagNameOption = Annotated[
    str | None,
    typer.Option("--flag-name", help="Flag name (env COVERAGE_GATE_FLAG_NAME)."),
]
EnvironmentOption = Annotated[
    str | None,
    typer.Option(
        "--environment",
        help="Environment in the evaluation context (env UNLEASH_ENVIRONMENT); the server side "
        "environment is the one the API token belongs to.",
    ),
]


def _fail(message: str, code: int = EXIT_BAD_CONFIG) -> typer.Exit:
    typer.echo(f"coverage-gate flags: error: {message}", err=True)
    return typer.Exit(code)


def resolution_document(
    repo: str, flag_name: str, resolution: ModeResolution, policies: Policies | None = None
) -> dict[str, object]:
    """The JSON the command prints with ``--format json``."""
    document: dict[str, object] = {
        "repo": repo,
        "flag": flag_name,
        "mode": resolution.mode.value,
        "source": resolution.source.value,
        "variant": resolution.variant,
        "flag_found": resolution.flag_found,
        "detail": resolution.detail,
    }
    if policies is not None:
        document |= {
            "depth_policy": policies.depth_policy.value,
            "depth_policy_source": policies.depth_policy_source.value,
            "unknown_policy": policies.unknown_policy.value,
            "unknown_policy_source": policies.unknown_policy_source.value,
            "citation_policy": policies.citation_policy.value,
            "citation_policy_source": policies.citation_policy_source.value,
            "mutation_policy": policies.mutation_policy.value,
            "mutation_policy_source": policies.mutation_policy_source.value,
        }
    return document


@flags_app.callback(invoke_without_command=True)
def flags(
    ctx: typer.Context,
    *,
    repo: Annotated[
        str | None, typer.Option("--repo", "-r", help="Repository as OWNER/NAME, e.g. acme/api.")
    ] = None,
    mode: Annotated[
        ModeChoice | None,
        typer.Option(
            "--mode",
            **choice(ModeChoice),
            help="Explicit override: auto, off, shadow, enforce (env COVERAGE_GATE_MODE).",
        ),
    ] = None,
    flags_file: FlagsFileOption = None,
    flags_on_error: Annotated[
        OnErrorChoice | None,
        typer.Option(
            "--flags-on-error",
            **choice(OnErrorChoice),
            help="On a corrupt snapshot or variant payload: fail (exit 4) or use the fallback mode"
            " (env COVERAGE_GATE_FLAGS_ON_ERROR).",
        ),
    ] = None,
    depth_policy: Annotated[
        DepthPolicy | None,
        typer.Option(
            "--depth-policy",
            **choice(DepthPolicy),
            help="As reconcile's: shows it winning (env COVERAGE_GATE_DEPTH_POLICY).",
            show_default=False,
        ),
    ] = None,
    unknown_policy: Annotated[
        UnknownPolicy | None,
        typer.Option(
            "--unknown-policy",
            **choice(UnknownPolicy),
            help="As reconcile's: shows it winning (env COVERAGE_GATE_UNKNOWN_POLICY).",
            show_default=False,
        ),
    ] = None,
    citation_policy: Annotated[
        CitationPolicy | None,
        typer.Option(
            "--citation-policy",
            **choice(CitationPolicy),
            help="As reconcile's: shows it winning (env COVERAGE_GATE_CITATION_POLICY).",
            show_default=False,
        ),
    ] = None,
    mutation_policy: Annotated[
        MutationPolicy | None,
        typer.Option(
            "--mutation-policy",
            **choice(MutationPolicy),
            help="As reconcile's: shows it winning (env COVERAGE_GATE_MUTATION_POLICY).",
            show_default=False,
        ),
    ] = None,
    fallback_mode: Annotated[
        FallbackChoice | None,
        typer.Option(
            "--fallback-mode",
            **choice(FallbackChoice),
            help="Mode when no flag answers: off or shadow, never enforce"
            " (env COVERAGE_GATE_FALLBACK_MODE).",
        ),
    ] = None,
    unleash_url: UrlOption = None,
    flag_name: FlagNameOption = None,
    environment: EnvironmentOption = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Reviewer agent, as a targetable property.")
    ] = None,
    stream_format: Annotated[
        str | None,
        typer.Option(
            "--stream-format",
            help="The input stream's format, as a property flag strategies can target.",
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option("--format", **choice(OutputFormat), help="Output format: text or json."),
    ] = OutputFormat.TEXT,
) -> None:
    """Print the effective mode of --repo, its variant and the source that answered, and the
    policies a reconcile would run under with where each came from."""
    if ctx.invoked_subcommand is not None:
        return
    # start-up: see commands._common
    from coverage_gate.rollout.flags import (  # noqa: PLC0415
        FlagConfigError,
        effective_policies,
        override_from_env,
        parse_mode,
        resolve_mode,
        settings_from_env,
    )

    if not repo:
        raise _fail("--repo is required (or use a subcommand: pull)", EXIT_USAGE)
    try:
        check_repo(repo)
    except UsageError as error:
        raise _fail(str(error), EXIT_USAGE) from None
    try:
        require_stdout("mode")
    except BadInputError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None
    properties = {
        key: value
        for key, value in (("agent", agent), ("format", stream_format))
        if value is not None
    }
    try:
        override = (
            parse_mode(mode.value, what="--mode")
            if mode is not None
            else override_from_env(os.environ)
        )
        settings = settings_from_env(
            os.environ,
            snapshot=flags_file,
            unleash_url=unleash_url,
            flag_name=flag_name,
            environment=environment,
            fallback=parse_mode(fallback_mode.value if fallback_mode else None, what="fallback"),
            on_error=flags_on_error.value if flags_on_error else None,
        )
        resolution = resolve_mode(repo, settings, override=override, properties=properties)
        policies = effective_policies(
            resolution,
            os.environ,
            depth_policy=depth_policy,
            unknown_policy=unknown_policy,
            citation_policy=citation_policy,
            mutation_policy=mutation_policy,
        )
    except FlagConfigError as error:
        raise _fail(str(error)) from None
    _print_resolution(repo, settings, resolution, policies, output_format)


def _print_resolution(
    repo: str,
    settings: FlagSettings,
    resolution: ModeResolution,
    policies: Policies,
    output_format: OutputFormat,
) -> None:
    if output_format is OutputFormat.JSON:
        document = resolution_document(repo, settings.flag_name, resolution, policies)
        text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    else:
        variant = resolution.variant if resolution.variant is not None else "-"
        text = (
            f"{repo}: {resolution.mode.value} (source {resolution.source.value}, "
            f"variant {variant})\n  {resolution.detail}\n"
            f"  depth policy {policies.depth_policy.value} ({policies.depth_policy_source.value}), "
            f"unknown policy {policies.unknown_policy.value} "
            f"({policies.unknown_policy_source.value}), "
            f"citation policy {policies.citation_policy.value} "
            f"({policies.citation_policy_source.value}), "
            f"mutation policy {policies.mutation_policy.value} "
            f"({policies.mutation_policy_source.value})\n"
        )
    try:
        write_stdout(text, "mode")
    except BadInputError as error:
        raise _fail(str(error), EXIT_BAD_INPUT) from None


@flags_app.command("pull", cls=Command)
def pull(
    *,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="Where to save the snapshot.", dir_okay=False),
    ],
    unleash_url: UrlOption = None,
    flag_name: FlagNameOption = None,
    environment: EnvironmentOption = None,
) -> None:
    """Save the live server's features (one request) as a snapshot for `--flags FILE`."""
    from coverage_gate.edges.files import write_atomic  # noqa: PLC0415 - start-up: see commands._common
    from coverage_gate.rollout.flags import (  # noqa: PLC0415
        FlagConfigError,
        FlagFetchError,
        check_features_document,
        fetch_features,
        settings_from_env,
    )

    try:
        settings = settings_from_env(
            os.environ, unleash_url=unleash_url, flag_name=flag_name, environment=environment
        )
        text = fetch_features(settings)
        document = check_features_document(text, "response")
        write_atomic(output, text, make_parents=True)
    except (FlagConfigError, FlagFetchError, OSError) as error:  # OSError: -o cannot be written
        raise _fail(str(error)) from None
    names = {feature["name"] for feature in document["features"]}
    present = "present" if settings.flag_name in names else "ABSENT"
    typer.echo(
        f"saved {len(names)} flag(s) from {redacted(settings.unleash_url or '')} to {output} "
        f"(flag {settings.flag_name!r} {present})",
        err=True,
    )


if __name__ == "__main__":  # pragma: no cover - `python -m coverage_gate.commands.flags`
    flags_app()
