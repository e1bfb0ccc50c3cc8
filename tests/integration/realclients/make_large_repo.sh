#!/usr/bin/env bash
# Builds the LARGE-DIFF test repo: twelve Python modules, committed, then every one changed in the
# working tree (uncommitted), so that plain `git diff` prints about 70 KB (71,343 bytes): more than
# the real clients give the model of one shell command's output. Each module's lines name the
# module, so no line of one file is a line of another. Each module's change is twelve hunks (every
# third of its 34 functions rewritten, and its LIMIT_ constant), about 5.9 KB of diff, so a cut
# that falls inside a module's section shows some of its hunks and not others. The content is
# fixed (no clock, no randomness, no network; the commit's dates are pinned): the same tree, the
# same diff, every time.
# usage: bash make_large_repo.sh DIR [FUNCTIONS]   (DIR is wiped first; FUNCTIONS per module,
#                                                   default 34)
set -euo pipefail
dir="$1"
functions="${2:-34}"
modules=(alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima)
rm -rf "$dir"; mkdir -p "$dir/src/pkg"; cd "$dir"
git init -q -b main
git config user.email mock@example.invalid; git config user.name mock

# module NAME VERSION: the module's text; VERSION 1 is the base, 2 the change under review
module() {
    local name="$1" version="$2" n
    printf '"""The %s module: helpers for the %s records."""\n\n' "$name" "$name"
    printf 'import math\n\nLIMIT_%s = %d\n\n' "${name^^}" "$((version * 100))"
    for ((n = 1; n <= functions; n++)); do
        printf '\ndef %s_step_%02d(value):\n' "$name" "$n"
        printf '    """Step %d of the %s pipeline."""\n' "$n" "$name"
        if ((version == 2)) && ((n % 3 == 1)); then
            printf '    checked_%s_%02d = max(value, 0)  # %s step %d clamps first\n' \
                "$name" "$n" "$name" "$n"
            printf '    scaled_%s_%02d = checked_%s_%02d * %d + LIMIT_%s\n' \
                "$name" "$n" "$name" "$n" "$((n + 7))" "${name^^}"
            printf '    return math.floor(scaled_%s_%02d / %d)  # %s step %d, new rounding\n' \
                "$name" "$n" "$((n + 2))" "$name" "$n"
        else
            printf '    scaled_%s_%02d = value * %d + LIMIT_%s\n' \
                "$name" "$n" "$((n + 7))" "${name^^}"
            printf '    return scaled_%s_%02d // %d  # %s step %d\n' \
                "$name" "$n" "$((n + 2))" "$name" "$n"
        fi
    done
}

for name in "${modules[@]}"; do module "$name" 1 > "src/pkg/$name.py"; done
: > src/pkg/__init__.py
git add -A
GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z" \
    git commit -q -m "base"

# ---------- the change under review (uncommitted) ----------
for name in "${modules[@]}"; do module "$name" 2 > "src/pkg/$name.py"; done
