#!/usr/bin/env bash
# Builds the DocC documentation of the Swift libraries (DynamicRuntime, MessageThrottle,
# SelectorRunLoop) with
# swift-docc-plugin and fails on any DocC warning: an unresolved symbol link, an undocumented
# parameter, an ambiguous article name.
#
#   scripts/docs.sh                     # archives in .build/plugins/Swift-DocC/outputs/
#   SF_DOCS_COVERAGE=1 scripts/docs.sh  # also print which public symbols have no summary
#
# About a minute on two cores once the package is built (CI runs it as its last step).
set -euo pipefail
cd "$(dirname "$0")/.."

args=(--target DynamicRuntime --target MessageThrottle --target SelectorRunLoop --warnings-as-errors)
if [ "${SF_DOCS_COVERAGE:-0}" = 1 ]; then
    args+=(--experimental-documentation-coverage --coverage-summary-level brief)
fi
swift package generate-documentation "${args[@]}"
