"""The Unleash disk copy is kept per deployment (server URL, environment, app name): two
deployments on one runner, sharing one configured disk-copy path, each answer from their own
last good document when their server fails, and a copy that names no deployment, or another
one, is never trusted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.contracts.model import Mode, ModeSource
from coverage_gate.rollout.flags import (
    DEPLOYMENT_KEY,
    FlagFetchError,
    FlagSettings,
    disk_copy_path,
    fetch_features,
    resolve_mode,
    save_disk_copy,
)
from tests.rollout.test_flags_stub_server import TOKEN, Servers, features_document, servers  # noqa: F401

#: Two deployments differ in one of these; the other two are the same.
DIFFERENCES = ["url", "environment", "app_name"]


def _deployments(url: str, differ: str, base: Path) -> tuple[FlagSettings, FlagSettings]:
    common: dict[str, Any] = {"unleash_token": TOKEN, "disk_copy": base}
    first = FlagSettings(unleash_url=url, environment="production", app_name="gate", **common)
    second = {
        # The same server, reached by another name: another deployment all the same.
        "url": FlagSettings(
            unleash_url=url.replace("127.0.0.1", "localhost"),
            environment="production",
            app_name="gate",
            **common,
        ),
        "environment": FlagSettings(
            unleash_url=url, environment="development", app_name="gate", **common
        ),
        "app_name": FlagSettings(
            unleash_url=url, environment="production", app_name="gate-nightly", **common
        ),
    }[differ]
    return first, second


@pytest.mark.parametrize("differ", DIFFERENCES)
def test_two_deployments_on_one_runner_never_answer_for_each_other(
    servers: Servers,  # noqa: F811 - the stub server fixture
    tmp_path: Path,
    differ: str,
) -> None:
    """Deployment A's server enforces acme/payments, B's only shadows it; both answers are kept
    under one configured path; when both servers fail, each answers from its own copy."""
    a, b = _deployments(servers.url, differ, tmp_path / "flags.json")
    servers.stub.serve(features_document(["acme/payments"]))
    assert resolve_mode("acme/payments", a).mode is Mode.ENFORCE
    servers.stub.serve(features_document([]))
    assert resolve_mode("acme/payments", b).mode is Mode.SHADOW
    assert disk_copy_path(a) != disk_copy_path(b)

    servers.stub.status, servers.stub.body = 500, b"down"
    from_a = resolve_mode("acme/payments", a)
    from_b = resolve_mode("acme/payments", b)
    assert (from_a.source, from_a.mode) == (ModeSource.DISK_COPY, Mode.ENFORCE)
    assert (from_b.source, from_b.mode) == (ModeSource.DISK_COPY, Mode.SHADOW)
    assert str(disk_copy_path(a)) in from_a.detail


def test_an_old_unkeyed_copy_is_not_trusted_for_another_deployment(
    servers: Servers,  # noqa: F811 - the stub server fixture
    tmp_path: Path,
) -> None:
    """The plain document an older coverage-gate kept at the configured path, from deployment
    A, never answers for deployment B: B's failing server gives way to the fallback."""
    base = tmp_path / "flags.json"
    base.write_text(json.dumps(features_document(["acme/payments"])), "utf-8")
    b = FlagSettings(unleash_url=servers.refused_url, environment="development", disk_copy=base)
    result = resolve_mode("acme/payments", b)
    assert (result.source, result.mode) == (ModeSource.FALLBACK, Mode.SHADOW)
    assert f"no disk copy at {disk_copy_path(b)}" in result.detail


@pytest.mark.parametrize(
    ("named", "said"),
    [
        (None, "names no deployment"),
        (
            {"url": "http://elsewhere:4242/api", "environment": "default", "appName": "x"},
            "was kept for another deployment",
        ),
    ],
)
def test_a_copy_naming_no_or_another_deployment_is_not_trusted(
    servers: Servers,  # noqa: F811 - the stub server fixture
    tmp_path: Path,
    named: dict[str, str] | None,
    said: str,
) -> None:
    """Even under this deployment's own file name (copied or renamed there), a document that
    does not name this deployment does not answer."""
    settings = FlagSettings(unleash_url=servers.refused_url, disk_copy=tmp_path / "flags.json")
    path = disk_copy_path(settings)
    assert path is not None
    document: dict[str, Any] = features_document(["acme/payments"])
    if named is not None:
        document[DEPLOYMENT_KEY] = named
    path.write_text(json.dumps(document), "utf-8")
    result = resolve_mode("acme/payments", settings)
    assert (result.source, result.mode) == (ModeSource.FALLBACK, Mode.SHADOW)
    assert said in result.detail


def test_the_copy_names_its_deployment_without_credentials_and_stays_a_snapshot(
    tmp_path: Path,
) -> None:
    """A URL's user and password are never written down; the kept document is still a features
    document that --flags reads."""
    settings = FlagSettings(
        unleash_url="https://ci:s3cret@Unleash.Example.com/api/", disk_copy=tmp_path / "f.json"
    )
    assert save_disk_copy(settings, json.dumps(features_document(["acme/payments"]))) == ""
    path = disk_copy_path(settings)
    assert path is not None
    text = path.read_text("utf-8")
    assert "s3cret" not in text
    assert json.loads(text)[DEPLOYMENT_KEY]["url"] == "https://unleash.example.com/api"
    snapshot = resolve_mode("acme/payments", FlagSettings(snapshot=path))
    assert (snapshot.source, snapshot.mode) == (ModeSource.SNAPSHOT, Mode.ENFORCE)


def test_a_disabled_disk_copy_has_no_path() -> None:
    assert disk_copy_path(FlagSettings(unleash_url="http://u/api", disk_copy=None)) is None


@pytest.mark.parametrize("url", ["http://[::1", "http://ci:s3cret@[::1", "[::1"])
def test_a_url_that_does_not_parse_is_a_failed_server_not_an_internal_error(
    tmp_path: Path, url: str
) -> None:
    """An unclosed IPv6 host cannot be split: the disk copy still has a path (credentials left
    out), and the mode falls back like any other server that cannot be reached; a pull of it is a
    configuration error."""
    settings = FlagSettings(unleash_url=url, disk_copy=tmp_path / "flags.json", timeout_s=1)
    path = disk_copy_path(settings)
    assert path is not None
    assert path.parent == tmp_path
    result = resolve_mode("acme/payments", settings)
    assert (result.source, result.mode) == (ModeSource.FALLBACK, Mode.SHADOW)
    assert url.replace("ci:s3cret@", "") in result.detail  # printed without its credentials
    assert "s3cret" not in result.detail
    with pytest.raises(FlagFetchError, match=r"Unleash server .*\[::1"):  # `flags pull`: exit 4
        fetch_features(settings)
