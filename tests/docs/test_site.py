"""The documentation site: it builds with ``mkdocs build --strict`` (a broken link, a missing
anchor or a page left out of the navigation fails it), its generated reference says what the
code says (the command line page is every command's ``--help``, verbatim), and every page opens
in headless Chromium with no request leaving the machine.

Without MkDocs (``pip install -e '.[docs]'``), Chromium or Playwright the tests skip, or fail under
CG_REQUIRE_INTEGRATION=1, as CI runs them.
"""

from __future__ import annotations

import functools
import html
import http.server
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.cli import _GROUPS, MOUNTS
from coverage_gate.edges.config_file import SETTINGS
from coverage_gate.rollout.metrics import INSTRUMENTS
from tests._support.docs import hooks

ROOT = Path(__file__).resolve().parents[2]
REQUIRE = os.environ.get("CG_REQUIRE_INTEGRATION") == "1"


def _missing(reason: str) -> None:
    if REQUIRE:
        pytest.fail(f"{reason} (required: CG_REQUIRE_INTEGRATION=1)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        _missing("MkDocs or Material for MkDocs is not installed (pip install -e '.[docs]')")
    folder = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(folder)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return folder


def test_the_site_builds_strict_with_every_page_in_its_navigation(site: Path) -> None:
    sources = {
        p.relative_to(ROOT / "docs").with_suffix(".html") for p in (ROOT / "docs").rglob("*.md")
    }
    built = {p.relative_to(site) for p in site.rglob("*.html")} - {Path("404.html")}
    assert built == sources
    for page in built:
        assert "<!-- generated:" not in (site / page).read_text(encoding="utf-8"), page


def _code_blocks(page: Path) -> dict[str, str]:
    """The CLI page's sections: heading text -> its code block's text."""
    text = page.read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for title, block in re.findall(
        r"<h2 id=\"[^\"]*\"><code>([^<]+)</code>.*?</h2>\s*<div[^>]*>.*?<code>(.*?)</code>",
        text,
        re.DOTALL,
    ):
        found[html.unescape(title)] = html.unescape(re.sub(r"<[^>]+>", "", block))
    return found


def _expected_commands() -> list[str]:
    names = ["coverage-gate"]
    for name in MOUNTS:
        names.append(f"coverage-gate {name}")
        names += [f"coverage-gate {name} {sub}" for sub in sorted(_GROUPS.get(name, ()))]
    return names


def test_the_cli_reference_is_every_commands_help_as_the_program_prints_it(site: Path) -> None:
    """Each command, in the order --help lists them, with exactly what `coverage-gate ... --help`
    prints, run as a user runs it (the installed console script)."""
    script = Path(sys.executable).parent / "coverage-gate"
    if not script.exists():
        pytest.skip("no coverage-gate console script beside this interpreter")
    blocks = _code_blocks(site / "reference" / "cli.html")
    assert list(blocks) == _expected_commands()
    for title, shown in blocks.items():
        words = title.split()[1:]
        done = subprocess.run(
            [str(script), *words, "--help"],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "80"},
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert shown.rstrip() == done.stdout.rstrip(), title


def test_the_generated_tables_hold_every_name_the_code_defines() -> None:
    reference = hooks()
    environment = reference.environment()
    for variable in SETTINGS.values():
        assert f"| `{variable}` |" in environment, variable
    metrics = reference.metrics()
    for spec in INSTRUMENTS:
        row = next(line for line in metrics.splitlines() if line.startswith(f"| `{spec.name}` |"))
        assert f"`{spec.prometheus_series[0]}`" in row
        assert ", ".join(spec.attributes) in row
    spans = reference.spans()
    assert "| `execute_tool` | `EXECUTE_TOOL` |" in spans
    assert "| `coverage_gate.content.check` | `CONTENT_CHECK` |" in spans
    with pytest.raises(ValueError, match="no generator"):
        reference.render("<!-- generated: nothing -->")


# --- in a browser ------------------------------------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        del format, args


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_every_page_opens_in_chromium_with_no_request_leaving_the_machine(
    site: Path, served: str
) -> None:
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415 - optional
    except ImportError:
        _missing("Playwright is not installed (pip install -e . --group dev)")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        _missing("no chromium on PATH (.ci/setup-chromium.sh installs it)")
    pages = sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))
    elsewhere: list[str] = []
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            context = browser.new_context()

            def route(request_route: Any) -> None:
                url = request_route.request.url
                if url.startswith(served):
                    request_route.continue_()
                else:
                    elsewhere.append(url)
                    request_route.abort()

            context.route("**/*", route)
            page = context.new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            for name in pages:
                response = page.goto(served + name, wait_until="load")
                assert response is not None and response.ok, name
                assert page.locator("article h1").count() == 1, name
        finally:
            browser.close()
    assert len(pages) >= 30
    assert elsewhere == []
    assert errors == []


def test_every_setting_has_a_description_for_the_table() -> None:
    from coverage_gate.edges.config_file import DESCRIPTIONS, SECRETS  # noqa: PLC0415

    assert set(DESCRIPTIONS) == set(SETTINGS) | set(SECRETS)


def _anchors(markdown: str) -> set[str]:
    from markdown.extensions.toc import slugify  # noqa: PLC0415 - installed with MkDocs

    return {slugify(title, "-") for title in re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)}


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md"])
def test_the_links_outside_the_site_lead_somewhere(name: str) -> None:
    """The README's and CONTRIBUTING.md's relative links (the site's own are checked by the
    strict build) name files that exist, and anchors those files' headings make."""
    if importlib.util.find_spec("markdown") is None:
        _missing("Markdown is not installed (pip install -e '.[docs]')")
    text = (ROOT / name).read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(relative) >= 3
    for link in relative:
        path, _, anchor = link.partition("#")
        target = (ROOT / path).resolve() if path else ROOT / name
        assert target.exists(), f"{name}: {link}"
        if anchor:
            assert anchor in _anchors(target.read_text(encoding="utf-8")), f"{name}: {link}"
