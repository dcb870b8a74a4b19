#!/usr/bin/env bash
# Code, tests and docs speak of the project only: no tracker numbers, no work-period words, no
# paths of somebody's machine, no narration of a diff. Lists every offending file:line and exits
# non-zero if there is one. CHANGELOG.md is exempt: it is the place for history.
#
#   scripts/check-project-words.sh [path ...]   (default: every tracked file the rule covers)
#
# The patterns are assembled from pieces so that this file does not match itself.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
    paths=("$@")
else
    paths=(Sources Fixtures Fuzz Tests CDynamicRuntime CMessageThrottle examples Benchmarks scripts docs README.md CONTRIBUTING.md)
fi
for p in "${paths[@]}"; do
    [ -e "$p" ] || { echo "check-project-words: no such path: $p" >&2; exit 2; }
done
exempt=(':(exclude)CHANGELOG.md' ':(exclude)**/CHANGELOG.md')

word='iss''ue'
patterns=(
    -e "${word} #?[0-9]"                       # a tracker number
    -e '/''work/' -e '/''home/' -e '/''Users/'  # paths of a particular machine
    -e "(before|after) this ""change"          # narration of a diff
)
# A work period, as a whole word (inside a longer identifier such as URLSession it is not).
period='ses''sions?'
period_pattern="(^|[^A-Za-z])${period}([^A-Za-z]|\$)"
# Technical uses of the word that are allowed, matched against the hit's line. Keep this short:
# each entry is something the project's code could legitimately name with it.
allowed="(ssh|tmux|terminal|login|TLS|lldb|gdb|debugger) ${period}"

# git grep: 0 found, 1 nothing found, anything else an error (a bad path, a bad pattern).
search() {
    local status=0
    git grep -nIiE "$@" -- "${paths[@]}" "${exempt[@]}" || status=$?
    [ "$status" -le 1 ] || { echo "check-project-words: git grep failed ($status)" >&2; exit 2; }
}
hits=$(search "${patterns[@]}")
period_hits=$(search -e "$period_pattern")
period_hits=$(printf '%s\n' "$period_hits" | grep -viE "$allowed" || true)
found=$(printf '%s\n%s\n' "$hits" "$period_hits" | grep -v '^$' | sort -t: -k1,1 -k2,2n -u || true)

if [ -n "$found" ]; then
    printf '%s\n' "$found"
    echo "check-project-words: $(printf '%s\n' "$found" | wc -l) line(s) speak of more than the project" \
        "(tracker numbers, work periods, local paths or narration of a change; see CONTRIBUTING.md)" >&2
    exit 1
fi
echo "check-project-words: clean (${paths[*]})"
