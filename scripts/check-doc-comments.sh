#!/usr/bin/env bash
# Fails when a public (or open) Swift declaration under Sources/, Fixtures/ or Fuzz/ has no doc
# comment: every library, fixture and fuzz module, SPI included. A protocol witness without one of its own
# counts as documented by its requirement's (DocC shows that text for it).
#
#   scripts/check-doc-comments.sh        # builds (debug) if needed, then lists file:line: symbol
#
# It reads the symbol graphs SwiftPM emits (`swift package dump-symbol-graph`), so it sees what
# the compiler sees: cases of public enums, requirements of public protocols, members of
# public extensions. About a minute on two cores once the package is built.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! swift package dump-symbol-graph --skip-synthesized-members --include-spi-symbols >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
graphs="$(swift build --show-bin-path)/../symbolgraph"
python3 - "$(pwd -P)" "$graphs" <<'PY'
import glob, json, os, sys
root, graphs = sys.argv[1], sys.argv[2]
missing = set()
for path in glob.glob(os.path.join(graphs, "*.symbols.json")):
    with open(path) as f:
        graph = json.load(f)
    for symbol in graph["symbols"]:
        uri = symbol.get("location", {}).get("uri", "")
        if not any(uri.startswith("file://" + root + d) for d in ("/Sources/", "/Fixtures/", "/Fuzz/")):
            continue
        if symbol.get("accessLevel") not in ("public", "open") or symbol.get("docComment"):
            continue
        line = symbol["location"]["position"]["line"] + 1
        missing.add((uri[len("file://" + root) + 1:], line, ".".join(symbol["pathComponents"])))
for file, line, name in sorted(missing):
    print(f"{file}:{line}: public declaration without a doc comment: {name}")
print(f"{len(missing)} public declarations without a doc comment")
sys.exit(1 if missing else 0)
PY
