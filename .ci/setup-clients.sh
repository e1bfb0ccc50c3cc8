#!/usr/bin/env bash
# Installs the real review clients the end-to-end tests run, idempotently, into
# ${CG_TOOLS:-$PWD/.tools}/clients:
#   - @mariozechner/pi-coding-agent 0.73.1  (pi, run through `coverage-gate run`)
#   - @anthropic-ai/claude-code     2.1.328 (Claude Code; its native binary ships in the
#                                             platform package @anthropic-ai/claude-code-linux-x64)
#   - @openai/codex                 0.169.0 (Codex CLI; native binary in a platform package too)
#   - opencode-ai                   1.18.33 (OpenCode; native binary in a platform package, linked
#                                             into the package's bin by its postinstall step)
#   - @github/copilot               1.0.102 (GitHub Copilot CLI; native binary in a platform package)
#   - @google/gemini-cli            0.61.0  (Gemini CLI, `gemini -p ... --output-format stream-json`)
#   - @qwen-code/qwen-code          0.24.4  (Qwen Code, `qwen -p ... --output-format stream-json`)
# Re-running is cheap: nothing is installed when every package is already at its pinned version.
# Needs node >= 20 with npm. Network: the npm registry only.
set -euo pipefail

CG_TOOLS="${CG_TOOLS:-$PWD/.tools}"
PREFIX="$CG_TOOLS/clients"
PI_VERSION="0.73.1"
CLAUDE_VERSION="2.1.328"
CODEX_VERSION="0.169.0"
OPENCODE_VERSION="1.18.33"
COPILOT_VERSION="1.0.102"
GEMINI_VERSION="0.61.0"
QWEN_VERSION="0.24.4"

log() { printf 'setup-clients: %s\n' "$*" >&2; }

installed_version() {  # $1 = package name; prints its installed version or nothing
    local manifest="$PREFIX/node_modules/$1/package.json"
    [[ -f "$manifest" ]] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version || "")' "$manifest"
}

claude_binary() {
    # The claude-code package's own launcher is installed by a postinstall step; the platform
    # package carries the native executable itself, which is what the tests run.
    local platform
    case "$(uname -m)" in
        x86_64) platform="linux-x64" ;;
        aarch64 | arm64) platform="linux-arm64" ;;
        *) log "unsupported machine $(uname -m)"; exit 1 ;;
    esac
    printf '%s\n' "$PREFIX/node_modules/@anthropic-ai/claude-code-$platform/claude"
}

up_to_date() {
    [[ "$(installed_version @mariozechner/pi-coding-agent)" == "$PI_VERSION" ]] &&
        [[ "$(installed_version @anthropic-ai/claude-code)" == "$CLAUDE_VERSION" ]] &&
        [[ "$(installed_version @openai/codex)" == "$CODEX_VERSION" ]] &&
        [[ -x "$(claude_binary)" ]] &&
        [[ -x "$PREFIX/node_modules/.bin/pi" ]] &&
        [[ -x "$PREFIX/node_modules/.bin/codex" ]] &&
        [[ "$(installed_version opencode-ai)" == "$OPENCODE_VERSION" ]] &&
        [[ "$(installed_version @github/copilot)" == "$COPILOT_VERSION" ]] &&
        [[ -x "$PREFIX/node_modules/.bin/opencode" ]] &&
        [[ -x "$PREFIX/node_modules/.bin/copilot" ]] &&
        [[ "$(installed_version @google/gemini-cli)" == "$GEMINI_VERSION" ]] &&
        [[ "$(installed_version @qwen-code/qwen-code)" == "$QWEN_VERSION" ]] &&
        [[ -x "$PREFIX/node_modules/.bin/gemini" ]] &&
        [[ -x "$PREFIX/node_modules/.bin/qwen" ]]
}

check() {
    local claude
    claude="$(claude_binary)"
    [[ -x "$claude" ]] || { log "missing $claude"; exit 1; }
    log "pi $("$PREFIX/node_modules/.bin/pi" --version 2>&1 | tail -n1)"
    log "claude $("$claude" --version 2>&1 | head -n1)"
    log "codex $("$PREFIX/node_modules/.bin/codex" --version 2>&1 | head -n1)"
    log "opencode $("$PREFIX/node_modules/.bin/opencode" --version 2>&1 | head -n1)"
    # copilot unpacks itself into $HOME/.cache on first start: give it a throwaway HOME
    local home
    home="$(mktemp -d)"
    log "copilot $(HOME="$home" "$PREFIX/node_modules/.bin/copilot" --version 2>&1 | head -n1)"
    rm -rf "$home"
    log "gemini $("$PREFIX/node_modules/.bin/gemini" --version 2>&1 | tail -n1)"
    log "qwen $("$PREFIX/node_modules/.bin/qwen" --version 2>&1 | tail -n1)"
}

command -v npm >/dev/null || { log "npm is required (node >= 20)"; exit 1; }
mkdir -p "$PREFIX"
if up_to_date; then
    log "pi $PI_VERSION, claude-code $CLAUDE_VERSION, codex $CODEX_VERSION," \
        "opencode $OPENCODE_VERSION, copilot $COPILOT_VERSION," \
        "gemini-cli $GEMINI_VERSION, qwen-code $QWEN_VERSION already in $PREFIX"
else
    log "installing the review clients into $PREFIX"
    [[ -f "$PREFIX/package.json" ]] || printf '{"name": "coverage-gate-clients", "private": true}\n' >"$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
        "@mariozechner/pi-coding-agent@$PI_VERSION" \
        "@anthropic-ai/claude-code@$CLAUDE_VERSION" \
        "@openai/codex@$CODEX_VERSION" \
        "opencode-ai@$OPENCODE_VERSION" \
        "@github/copilot@$COPILOT_VERSION" \
        "@google/gemini-cli@$GEMINI_VERSION" \
        "@qwen-code/qwen-code@$QWEN_VERSION" >&2
fi
check
