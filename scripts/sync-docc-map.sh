#!/usr/bin/env bash
# The README's "Which API do I want" table is the one source of the map of the public API; the
# DynamicRuntime catalog's landing page carries a copy between two markers, written by this
# script. CI runs it with --check, which fails when the copy differs.
#
#   scripts/sync-docc-map.sh           rewrite the landing page's copy
#   scripts/sync-docc-map.sh --check   exit 1 if it is out of date
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - "$@" <<'PY'
import re, sys
check = "--check" in sys.argv[1:]
readme = open("README.md").read()
m = re.search(r"^## Which API do I want\n\n((?:\|.*\n)+)", readme, re.M)
if not m:
    sys.exit("sync-docc-map: README.md has no 'Which API do I want' table")
table = m.group(1)
page_path = "Sources/DynamicRuntime/DynamicRuntime.docc/DynamicRuntime.md"
page = open(page_path).read()
begin = "<!-- map: a copy of README.md's table, written by scripts/sync-docc-map.sh; edit the README -->\n"
end = "<!-- end of map -->\n"
if begin not in page or end not in page:
    sys.exit(f"sync-docc-map: {page_path} lacks the map's markers")
head, rest = page.split(begin, 1)
_, tail = rest.split(end, 1)
new = head + begin + table + end + tail
if new == page:
    sys.exit(0)
if check:
    sys.exit(f"sync-docc-map: the map in {page_path} differs from README.md's table; run scripts/sync-docc-map.sh")
open(page_path, "w").write(new)
PY
