#!/usr/bin/env bash
# Prints the functions declared in the public C header, one per line, sorted: the export list
# of libSelectorForwarding.so and what scripts/check-c-exports.sh compares it against.
# The preprocessor drops comments and follows the topic headers it includes, so only
# declarations count, wherever they are.
set -euo pipefail
header="${1:-$(dirname "$0")/../CDynamicRuntime/include/SelectorForwarding.h}"
# The throttle header lives with the throttle engine (CMessageThrottle); the umbrella includes
# it where it can find it, as in an installed tree.
"${CC:-cc}" -E -P -x c -I "$(dirname "$header")" -I "$(dirname "$0")/../CMessageThrottle/include" "$header" | grep -v '^typedef' | grep -oE '\bsf_[A-Za-z0-9_]+ *\(' | tr -d ' (' | sort -u
