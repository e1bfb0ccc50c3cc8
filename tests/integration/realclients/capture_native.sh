#!/usr/bin/env bash
# Captures one OpenCode or Copilot CLI stream against the mock model, for tests/data:
#   bash capture_native.sh opencode|copilot SCENARIO OUT.jsonl
# SCENARIO names scenarios/<SCENARIO>.json. The client comes from ${CG_TOOLS:-.tools}/clients
# (bash .ci/setup-clients.sh; CG_CLIENTS=clients-older: the older release). The repository is make_repo.sh's, in a scratch folder with a fresh
# HOME; its paths are rewritten in the capture: <scratch>/repo -> /home/user/repo,
# <scratch>/home -> /home/user, <scratch> -> /home/user/scratch.
set -euo pipefail
client="$1"; scenario="$2"; out="$(realpath -m "$3")"
kit="$(cd "$(dirname "$0")" && pwd)"
bin="${CG_TOOLS:-$PWD/.tools}/${CG_CLIENTS:-clients}/node_modules/.bin"
scratch="$(realpath "$(mktemp -d)")"
mock=""
cleanup() { [[ -n "$mock" ]] && kill "$mock" 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT
bash "$kit/make_repo.sh" "$scratch/repo" >/dev/null
mkdir -p "$scratch/home" "$scratch/tmp"
python3 "$kit/mock_llm.py" --scenario "$kit/scenarios/$scenario.json" --workdir "$scratch/repo" \
    --port 0 >"$scratch/mock.out" 2>"$scratch/mock.log" &
mock=$!
for _ in $(seq 100); do grep -q listening "$scratch/mock.out" 2>/dev/null && break; sleep 0.1; done
port="$(sed -n 's/^listening 127.0.0.1://p' "$scratch/mock.out")"
prompt="Review the uncommitted change in this repository (git diff), read the changed files, then answer with one JSON object."
base=(PATH="$PATH" HOME="$scratch/home" TMPDIR="$scratch/tmp" LANG=C.UTF-8)
cd "$scratch/repo"
case "$client" in
    opencode)
        sed "s/\${PORT}/$port/" "$kit/opencode.json" >"$scratch/opencode.json"
        env -i "${base[@]}" OPENCODE_CONFIG="$scratch/opencode.json" OPENCODE_DISABLE_MODELS_FETCH=1 \
            OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 \
            OPENCODE_DISABLE_LSP_DOWNLOAD=1 npm_config_offline=true \
            "$bin/opencode" run --format json -m mock/mock-model "$prompt" \
            <"/dev/null" >"$scratch/stream.jsonl" ;;
    copilot)
        env -i "${base[@]}" COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$port/v1" \
            COPILOT_PROVIDER_API_KEY=dummy COPILOT_MODEL=mock-model COPILOT_ALLOW_ALL=1 \
            "$bin/copilot" -p "$prompt" --output-format json --allow-all-tools --no-auto-update \
            <"/dev/null" >"$scratch/stream.jsonl" ;;
    *) echo "usage: capture_native.sh opencode|copilot SCENARIO OUT.jsonl" >&2; exit 2 ;;
esac
python3 - "$scratch" "$scratch/stream.jsonl" "$out" <<'PY'
import sys
scratch, src, dst = sys.argv[1:]
text = open(src, encoding="utf-8").read()
for old, new in ((scratch + "/repo", "/home/user/repo"), (scratch + "/home", "/home/user"),
                 (scratch, "/home/user/scratch")):
    text = text.replace(old, new)
open(dst, "w", encoding="utf-8").write(text)
PY
