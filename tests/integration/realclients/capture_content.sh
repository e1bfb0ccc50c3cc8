#!/usr/bin/env bash
# Re-makes the content captures in tests/data: what a reviewer's calls returned of each changed
# file (the revision, an edited file, an older text, a placeholder), with the real clients
# against the mock model.
#   bash capture_content.sh                              # every content_* capture, into tests/data
#   bash capture_content.sh CLIENT SCENARIO OUT [ROLLOUT] # one: CLIENT is claude, codex, pi,
#                                                         # opencode, qwen, copilot or gemini
#   bash capture_content.sh odd [WAY...]                  # the presentation captures (below)
# SCENARIO names scenarios/<SCENARIO>.json, or is a scenario file's path; ROLLOUT (codex only)
# receives the session rollout file. CG_REPO_SCRIPT names the script that builds the repository
# (make_repo.sh unless given). Beside OUT, <OUT without .jsonl>.received.json says what the
# model received from each call (received.py, from the mock model's request bodies). The clients come from ${CG_TOOLS:-.tools}/clients (bash .ci/setup-clients.sh);
# CG_CLIENTS=clients-older takes the older releases it installs instead. Each run
# gets make_repo.sh's repository in a scratch folder with a fresh HOME and TMPDIR; its paths are
# rewritten as capture_native.sh does: <scratch>/repo -> /home/user/repo, <scratch>/home ->
# /home/user, <scratch> -> /home/user/scratch. Started as test_real_clients.py starts them, except:
# Claude Code may use Read,Bash,Edit,Write; Codex runs with --sandbox workspace-write; pi has its
# built-in read,bash,edit,write instead of cr_read/cr_diff; OpenCode's edit permission is allowed.
# New runs give new ids and timestamps; the *.truth.json files next to the captures hold no ids,
# but they name stream line numbers: check them after a re-run (Copilot's line count varies).
set -euo pipefail
kit="$(cd "$(dirname "$0")" && pwd)"
project="$(cd "$kit/../../.." && pwd)"
tools="${CG_TOOLS:-$project/.tools}/${CG_CLIENTS:-clients}/node_modules"
bin="$tools/.bin"
data="$project/tests/data"
answer='answer with one JSON object {"schema_version":1,"agent_id":"reviewer","inspected_files":[...],"findings":[...]}.'
prompt="Review the uncommitted change in this repository (git diff), read the changed files, then $answer"

claude_binary() {
    case "$(uname -m)" in
        x86_64) echo "$tools/@anthropic-ai/claude-code-linux-x64/claude" ;;
        *) echo "$tools/@anthropic-ai/claude-code-linux-arm64/claude" ;;
    esac
}

# The pi RPC driver: send one prompt, read events until the final agent_end, ask get_state,
# close stdin after its response (what tests/integration/test_real_clients.py's drive_pi_rpc does).
pi_driver='
import json, subprocess, sys
out, prompt, command = sys.argv[1], sys.argv[2], sys.argv[3:]
proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(obj):
    proc.stdin.write(json.dumps(obj).encode() + b"\n"); proc.stdin.flush()
send({"id": "req-1", "type": "prompt", "message": prompt})
asked = False
with open(out, "wb") as saved:
    for line in proc.stdout:
        saved.write(line)
        event = json.loads(line)
        kind = event.get("type")
        final = kind == "agent_end" and (event.get("messages") or [{}])[-1].get("stopReason") != "error"
        failed = kind == "auto_retry_end" and not event.get("success")
        if (final or failed) and not asked:
            asked = True
            send({"id": "req-2", "type": "get_state"})
        if kind == "response" and event.get("id") == "req-2":
            proc.stdin.close()
            saved.write(proc.stdout.read())
            break
sys.exit(proc.wait(timeout=60))
'

sanitize() {  # $1 scratch, $2 source, $3 destination
    python3 - "$1" "$2" "$3" <<'PY'
import sys
scratch, src, dst = sys.argv[1:]
text = open(src, encoding="utf-8").read()
for old, new in ((scratch + "/repo", "/home/user/repo"), (scratch + "/home", "/home/user"),
                 (scratch, "/home/user/scratch")):
    text = text.replace(old, new)
open(dst, "w", encoding="utf-8").write(text)
PY
}

capture_one() {  # client scenario out [rollout]
    local client="$1" scenario="$2" out rollout="" port
    out="$(realpath -m "$3")"
    [[ -n "${4:-}" ]] && rollout="$(realpath -m "$4")"
    scratch="$(realpath "$(mktemp -d)")"
    bash "$kit/${CG_REPO_SCRIPT:-make_repo.sh}" "$scratch/repo" >/dev/null
    local scenario_file="$kit/scenarios/$scenario.json"
    [[ -f "$scenario" ]] && scenario_file="$(realpath "$scenario")"
    mkdir -p "$scratch/home" "$scratch/tmp"
    python3 "$kit/mock_llm.py" --scenario "$scenario_file" --workdir "$scratch/repo" \
        --port 0 --bodies "$scratch/bodies.jsonl" >"$scratch/mock.out" 2>"$scratch/mock.log" &
    mock=$!
    for _ in $(seq 100); do grep -q listening "$scratch/mock.out" 2>/dev/null && break; sleep 0.1; done
    port="$(sed -n 's/^listening 127.0.0.1://p' "$scratch/mock.out")"
    local base=(PATH="$PATH" HOME="$scratch/home" TMPDIR="$scratch/tmp" LANG=C.UTF-8)
    (
        cd "$scratch/repo"
        case "$client" in
            claude)
                env -i "${base[@]}" ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=dummy \
                    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
                    DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
                    "$(claude_binary)" -p "$prompt" --output-format stream-json --verbose \
                    --allowedTools "Read,Bash,Edit,Write" <"/dev/null" >"$scratch/stream.jsonl" ;;
            codex)
                mkdir -p "$scratch/home/.codex"
                sed "s/\${PORT}/$port/" "$kit/codex_config.toml" >"$scratch/home/.codex/config.toml"
                # exec's default sandbox is read-only; these captures write to the workspace
                env -i "${base[@]}" CODEX_HOME="$scratch/home/.codex" MOCK_API_KEY=dummy \
                    "$bin/codex" exec --json --sandbox workspace-write "$prompt" \
                    <"/dev/null" >"$scratch/stream.jsonl" ;;
            pi)
                mkdir -p "$scratch/agentdir"
                sed "s/\${PORT}/$port/" "$kit/models.json" >"$scratch/agentdir/models.json"
                env -i "${base[@]}" PI_CODING_AGENT_DIR="$scratch/agentdir" PI_OFFLINE=1 \
                    PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0 \
                    python3 -c "$pi_driver" "$scratch/stream.jsonl" "$prompt" \
                    "$bin/pi" --mode rpc --provider mock --model mock-model --no-session \
                    --tools read,bash,edit,write --no-extensions --no-skills \
                    --no-prompt-templates --no-themes --no-context-files \
                    --system-prompt "You are a code reviewer." ;;
            opencode)
                # the kit's config denies edits; these captures edit, so they are allowed here
                sed -e "s/\${PORT}/$port/" -e 's/"edit": "deny"/"edit": "allow"/' \
                    "$kit/opencode.json" >"$scratch/opencode.json"
                env -i "${base[@]}" OPENCODE_CONFIG="$scratch/opencode.json" \
                    OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
                    OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 \
                    npm_config_offline=true \
                    "$bin/opencode" run --format json -m mock/mock-model "$prompt" \
                    <"/dev/null" >"$scratch/stream.jsonl" ;;
            qwen)
                mkdir -p "$scratch/home/.qwen"
                cp "$kit/qwen_settings.json" "$scratch/home/.qwen/settings.json"
                env -i "${base[@]}" OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=dummy \
                    OPENAI_MODEL=mock-model \
                    "$bin/qwen" -p "$prompt" --output-format stream-json --yolo --auth-type openai \
                    <"/dev/null" >"$scratch/stream.jsonl" ;;
            copilot)
                env -i "${base[@]}" COPILOT_OFFLINE=true \
                    COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$port/v1" \
                    COPILOT_PROVIDER_API_KEY=dummy COPILOT_MODEL=mock-model COPILOT_ALLOW_ALL=1 \
                    "$bin/copilot" -p "$prompt" --output-format json --allow-all-tools \
                    --no-auto-update <"/dev/null" >"$scratch/stream.jsonl" ;;
            gemini)
                mkdir -p "$scratch/home/.gemini"
                cp "$kit/gemini_settings.json" "$scratch/home/.gemini/settings.json"
                env -i "${base[@]}" GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" \
                    GEMINI_API_KEY=dummy GEMINI_CLI_NO_RELAUNCH=true \
                    "$bin/gemini" -p "$prompt" --output-format stream-json --yolo --skip-trust \
                    -m gemini-2.5-pro <"/dev/null" >"$scratch/stream.jsonl" ;;
            *) echo "unknown client $client" >&2; exit 2 ;;
        esac
    )
    mkdir -p "$(dirname "$out")"
    sanitize "$scratch" "$scratch/stream.jsonl" "$out"
    python3 "$kit/received.py" "$scratch/bodies.jsonl" >"$scratch/received.json"
    sanitize "$scratch" "$scratch/received.json" "${out%.jsonl}.received.json"
    if [[ "$client" == codex && -n "$rollout" ]]; then
        local found
        found="$(find "$scratch/home/.codex/sessions" -name 'rollout-*.jsonl' | head -n1)"
        mkdir -p "$(dirname "$rollout")"
        sanitize "$scratch" "$found" "$rollout"
    fi
    echo "captured $scenario -> $out${rollout:+ and $rollout}" >&2
    cleanup
}

scratch="" mock=""
daemon_dir="/tmp/codex-daemon-$(id -u)"  # Codex makes it whatever TMPDIR says
[[ -e "$daemon_dir" ]] && daemon_existed=1 || daemon_existed=0
cleanup() {
    if [[ -n "$mock" ]]; then kill "$mock" 2>/dev/null || true; wait "$mock" 2>/dev/null || true; fi
    if [[ -n "$scratch" ]]; then rm -rf "$scratch"; fi
    if [[ "$daemon_existed" == 0 ]]; then rmdir "$daemon_dir" 2>/dev/null || true; fi
    mock="" scratch=""
}
trap cleanup EXIT

# The presentation captures: make_odd_repo.sh's repository read honestly by every client at
# both releases, with its read tool, through `git diff` and `cat`, and through `cat` alone
# (odd_scenarios.py); into tests/data/presentation/<client>-<release>/<way>.jsonl.
odd() {  # [WAY...]: read diff cat failed unless given
    local release client way folder version ways=("$@")
    [[ ${#ways[@]} -gt 0 ]] || ways=(read diff cat failed)
    export CG_REPO_SCRIPT=make_odd_repo.sh
    for release in clients clients-older; do
        tools="${CG_TOOLS:-$project/.tools}/$release/node_modules" bin="$tools/.bin"
        for client in claude codex pi opencode copilot gemini qwen; do
            folder="$data/presentation/$client-newest"
            [[ "$release" == clients-older ]] && folder="$data/presentation/$client-older"
            for way in "${ways[@]}"; do
                [[ "$client" == codex && "$way" == read ]] && continue  # no read tool of its own
                python3 "$kit/odd_scenarios.py" "$client" "$way" >"$scratch_scenarios/$client-$way.json"
                if [[ "$client" == codex ]]; then
                    capture_one codex "$scratch_scenarios/$client-$way.json" "$folder/$way.exec.jsonl" \
                        "$folder/$way.rollout.jsonl"
                else
                    capture_one "$client" "$scratch_scenarios/$client-$way.json" "$folder/$way.jsonl"
                fi
            done
        done
    done
}

if [[ "${1:-}" == odd ]]; then
    scratch_scenarios="$(mktemp -d)"
    shift
    odd "$@"
    rm -rf "$scratch_scenarios"
    exit 0
fi
if [[ $# -gt 0 ]]; then
    capture_one "$@"
    exit 0
fi
for what in edit_then_read shell_only checkout_then_read reread; do
    capture_one claude "content_claude_$what" "$data/claude-code/content_claude_$what.jsonl"
done
for what in apply_patch shell_redirect; do
    capture_one codex "content_codex_$what" "$data/codex-exec/content_codex_$what.exec.jsonl" \
        "$data/codex-rollout/content_codex_$what.rollout.jsonl"
done
for what in bash_only edit_then_read; do
    capture_one pi "content_pi_$what" "$data/pi-rpc/content_pi_$what.jsonl"
done
for what in edit_then_read bash_only; do
    capture_one opencode "content_opencode_$what" "$data/opencode/content_opencode_$what.jsonl"
done
capture_one qwen content_qwen_shell_only "$data/qwen-code/content_qwen_shell_only.jsonl"
capture_one copilot content_copilot_shell_only "$data/copilot-cli/content_copilot_shell_only.jsonl"
