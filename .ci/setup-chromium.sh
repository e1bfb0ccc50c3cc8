#!/usr/bin/env bash
# Installs Debian's Chromium for the HTML report's browser test
# (tests/integration/test_report_html_browser.py drives it through Playwright's Python package,
# which downloads no browser of its own). Idempotent: does nothing when chromium is on PATH.
# We run as root; no sudo.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Quiet on success; the whole apt log on failure. The fonts make the screenshot's text legible.
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } \
    >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
command -v chromium >/dev/null
