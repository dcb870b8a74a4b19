#!/usr/bin/env bash
# Reports the public-API changes of the library products since a baseline revision that would
# break a package using them (a removed or changed declaration, a new protocol requirement…).
#
#   scripts/check-api.sh              # against the newest tag (or main's first-parent HEAD~1 if none)
#   scripts/check-api.sh 0.1.0        # against a tag, branch or commit
#
# Exit status 0: nothing breaks. Non-zero: the breakages are listed above the status line.
# Intended breakages (a 0.x minor release) go into .ci/api-breakage-allowlist.txt, one exact
# message a line, with a CHANGELOG entry. SwiftPM builds the baseline in a scratch copy, so the
# first run takes about two release-less builds (a few minutes on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."

baseline="${1:-$(git describe --tags --abbrev=0 2>/dev/null || git rev-parse HEAD~1)}"
allowlist=.ci/api-breakage-allowlist.txt
args=(--products DynamicRuntime MessageThrottle SelectorRunLoop)
[ -f "$allowlist" ] && args+=(--breakage-allowlist-path "$allowlist")

echo "API of DynamicRuntime, MessageThrottle and SelectorRunLoop against $baseline ($(git rev-parse --short "$baseline"))"
exec swift package --scratch-path .build-api diagnose-api-breaking-changes "$baseline" "${args[@]}"
