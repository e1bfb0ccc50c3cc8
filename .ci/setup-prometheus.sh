#!/usr/bin/env bash
# Installs Prometheus and promtool from Debian for the dashboard and Prometheus tests.
# Idempotent: does nothing when both are already on PATH. We run as root; no sudo.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Quiet on success; the whole apt log on failure. --no-install-recommends keeps the exporters
# and web console packages out. Where an init system runs, the package starts its own service;
# the tests start their own Prometheus on a free loopback port either way.
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus; } \
    >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
command -v prometheus >/dev/null
command -v promtool >/dev/null
