#!/usr/bin/env bash
# Installs the real review clients the end-to-end tests run, idempotently, at two releases each:
# the newest pinned one into ${CG_TOOLS:-$PWD/.tools}/clients and an older one (published about
# three months before it) into ${CG_TOOLS:-$PWD/.tools}/clients-older. The tests run every
# scenario with both. The clients:
#   - @mariozechner/pi-coding-agent (pi, run through `coverage-gate run`)
#   - @anthropic-ai/claude-code     (Claude Code; its native binary ships in the platform package
#                                    @anthropic-ai/claude-code-linux-x64)
#   - @openai/codex                 (Codex CLI; native binary in a platform package too)
#   - opencode-ai                   (OpenCode; native binary in a platform package, linked into
#                                    the package's bin by its postinstall step)
#   - @github/copilot               (GitHub Copilot CLI; native binary in a platform package)
#   - @google/gemini-cli            (Gemini CLI, `gemini -p ... --output-format stream-json`)
#   - @qwen-code/qwen-code          (Qwen Code, `qwen -p ... --output-format stream-json`)
# The versions are NEWEST and OLDER below, and nowhere else in this script;
# coverage_gate/contracts/client_versions.py holds the same pairs (tests/contracts/test_client_versions.py checks).
# Re-running is cheap: nothing is installed into a prefix whose packages are all at their pins.
# Needs node >= 20 with npm. Network: the npm registry only.
set -euo pipefail

NEWEST=(
    "@mariozechner/pi-coding-agent@0.73.1"
    "@anthropic-ai/claude-code@2.1.328"
    "@openai/codex@0.169.0"
    "opencode-ai@1.18.33"
    "@github/copilot@1.0.102"
    "@google/gemini-cli@0.61.0"
    "@qwen-code/qwen-code@0.24.4"
)
OLDER=(
    "@mariozechner/pi-coding-agent@0.67.4"
    "@anthropic-ai/claude-code@2.1.252"
    "@openai/codex@0.152.0"
    "opencode-ai@1.18.25"
    "@github/copilot@1.0.82"
    "@google/gemini-cli@0.58.0"
    "@qwen-code/qwen-code@0.23.0"
)

CG_TOOLS="${CG_TOOLS:-$PWD/.tools}"
BINARIES=(pi codex opencode copilot gemini qwen)  # in node_modules/.bin, besides Claude Code's

log() { printf 'setup-clients: %s\n' "$*" >&2; }

installed_version() {  # $1 = prefix, $2 = package name; prints its installed version or nothing
    local manifest="$1/node_modules/$2/package.json"
    [[ -f "$manifest" ]] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version || "")' "$manifest"
}

claude_binary() {  # $1 = prefix
    # The claude-code package's own launcher is installed by a postinstall step; the platform
    # package carries the native executable itself, which is what the tests run.
    local platform
    case "$(uname -m)" in
        x86_64) platform="linux-x64" ;;
        aarch64 | arm64) platform="linux-arm64" ;;
        *) log "unsupported machine $(uname -m)"; exit 1 ;;
    esac
    printf '%s\n' "$1/node_modules/@anthropic-ai/claude-code-$platform/claude"
}

up_to_date() {  # $1 = prefix, then the package@version specs
    local prefix="$1" spec binary
    shift
    for spec in "$@"; do
        [[ "$(installed_version "$prefix" "${spec%@*}")" == "${spec##*@}" ]] || return 1
    done
    [[ -x "$(claude_binary "$prefix")" ]] || return 1
    for binary in "${BINARIES[@]}"; do
        [[ -x "$prefix/node_modules/.bin/$binary" ]] || return 1
    done
}

check() {  # $1 = prefix: each client says its version
    local prefix="$1" bin="$1/node_modules/.bin" claude home
    claude="$(claude_binary "$prefix")"
    [[ -x "$claude" ]] || { log "missing $claude"; exit 1; }
    log "  pi $("$bin/pi" --version 2>&1 | tail -n1)"
    log "  claude $("$claude" --version 2>&1 | head -n1)"
    log "  codex $("$bin/codex" --version 2>&1 | head -n1)"
    log "  opencode $("$bin/opencode" --version 2>&1 | head -n1)"
    # copilot unpacks itself into $HOME/.cache on first start: give it a throwaway HOME
    home="$(mktemp -d)"
    log "  copilot $(HOME="$home" "$bin/copilot" --version 2>&1 | head -n1)"
    rm -rf "$home"
    log "  gemini $("$bin/gemini" --version 2>&1 | tail -n1)"
    log "  qwen $("$bin/qwen" --version 2>&1 | tail -n1)"
}

install_set() {  # $1 = prefix, then the package@version specs
    local prefix="$1"
    shift
    mkdir -p "$prefix"
    if up_to_date "$prefix" "$@"; then
        log "$* already in $prefix"
    else
        log "installing $* into $prefix"
        [[ -f "$prefix/package.json" ]] ||
            printf '{"name": "coverage-gate-clients", "private": true}\n' >"$prefix/package.json"
        npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$@" >&2
        up_to_date "$prefix" "$@" || { log "$prefix does not hold $* after npm install"; exit 1; }
    fi
    log "$prefix:"
    check "$prefix"
}

command -v npm >/dev/null || { log "npm is required (node >= 20)"; exit 1; }
install_set "$CG_TOOLS/clients" "${NEWEST[@]}"
install_set "$CG_TOOLS/clients-older" "${OLDER[@]}"
