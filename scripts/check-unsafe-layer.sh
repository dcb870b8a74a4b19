#!/usr/bin/env bash
# The runtime's conversions between objects, words and function pointers live in one layer,
# Sources/DynamicRuntime/Support/Unsafe/ (ObjectWord, AtomicObjectWord, PublishedObject,
# CFunction, ClosureWords; ObjectWord is `package`, for MessageThrottle and SelectorRunLoop):
# outside it, no product's source names the primitives below. Lists every offending file:line
# and exits non-zero if there is one.
#
#   scripts/check-unsafe-layer.sh
set -euo pipefail
cd "$(dirname "$0")/.."

layer='Sources/DynamicRuntime/Support/Unsafe'
status=0
git grep -nIE 'Unmanaged|unsafeBitCast|_getUnsafePointerToStoredProperties|_withUnsafeGuaranteedRef' -- \
    Sources ":(exclude)${layer}" || status=$?
case "$status" in
    0) echo "check-unsafe-layer: the lines above convert objects or functions outside ${layer}" >&2; exit 1 ;;
    1) echo "check-unsafe-layer: ok" ;;
    *) echo "check-unsafe-layer: git grep failed ($status)" >&2; exit 2 ;;
esac
