#!/usr/bin/env bash
# Checks that a built libSelectorForwarding.so exports exactly the public header's functions:
# every declared function defined and global, and no other global `sf_` symbol.
# Usage: scripts/check-c-exports.sh LIB [HEADER]  (HEADER: the umbrella, which includes the rest)
set -euo pipefail
lib="$1"
header="${2:-$(dirname "$0")/../CDynamicRuntime/include/SelectorForwarding.h}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$(dirname "$0")/c-api-symbols.sh" "$header" > "$tmp/declared"
# Global (upper-case type) defined dynamic symbols only: thread-locals the library reaches with
# initial-exec relocations appear in .dynsym as LOCAL and are not exported.
nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ { print $3 }' | sed 's/@.*//' | sort -u > "$tmp/all"
grep '^sf_' "$tmp/all" > "$tmp/exported" || true
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
others=$(grep -vc '^sf_' "$tmp/all" || true)
status=0
if [ -n "$missing" ]; then echo "declared in the header but not exported:"; echo "$missing" | sed 's/^/  /'; status=1; fi
if [ -n "$extra" ]; then echo "exported but not in the header:"; echo "$extra" | sed 's/^/  /'; status=1; fi
if [ "$others" -ne 0 ]; then echo "$others other global symbols exported:"; grep -v '^sf_' "$tmp/all" | head -5 | sed 's/^/  /'; status=1; fi
echo "$(wc -l < "$tmp/exported") of $(wc -l < "$tmp/declared") header functions exported, $(echo -n "$extra" | grep -c . || true) extra sf_ symbols, $others other symbols"
exit $status
