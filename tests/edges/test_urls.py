"""No URL the program prints carries the user and password it may hold (``UNLEASH_URL`` with
credentials was printed in full by ``flags`` and ``reconcile``)."""

from __future__ import annotations

import pytest

from coverage_gate.edges.urls import redacted, without_secrets
from tests.conftest import run_cli

CASES = [
    ("http://user:s3cret@127.0.0.1:1/api", "http://127.0.0.1:1/api"),
    ("https://token@unleash.example/api/", "https://unleash.example/api/"),
    ("http://127.0.0.1:4242/api", "http://127.0.0.1:4242/api"),
    ("http://u:p@[::1", "http://[::1"),  # not a URL urllib can split
]


@pytest.mark.parametrize(("url", "shown"), CASES)
def test_a_printed_url_has_no_user_or_password(url: str, shown: str) -> None:
    assert redacted(url) == shown


def test_an_error_quoting_the_url_loses_its_secrets_too() -> None:
    url = "http://user:s3cret@host/api"
    said = "GET http://user:s3cret@host/api failed (auth s3cret rejected)"
    assert without_secrets(said, url) == "GET http://host/api failed (auth *** rejected)"
    assert without_secrets("plain", "http://host/api") == "plain"


@pytest.mark.parametrize("command", [["flags", "--repo", "acme/api"]])
def test_flags_never_prints_the_servers_password(command: list[str]) -> None:
    done = run_cli(*command, env={"UNLEASH_URL": "http://user:s3cret@127.0.0.1:1/api"})
    assert done.returncode == 0, done.stderr
    assert "127.0.0.1:1/api" in done.stdout + done.stderr
    assert "s3cret" not in done.stdout + done.stderr
    assert "user:" not in done.stdout + done.stderr
