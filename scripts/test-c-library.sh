#!/usr/bin/env bash
# Installs the C library into a temporary prefix, as a user would, then checks it: exports equal
# the header's functions, no Swift toolchain library is needed at run time, and the C and Python
# examples print their expected output (examples/*/expected.txt; addresses normalised).
# Usage: scripts/test-c-library.sh [--scratch-path PATH]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
"$root/scripts/install-c-library.sh" --prefix "$prefix" "$@"
lib="$prefix/lib/libSelectorForwarding.so"

if ldd "$lib" | grep -E "swift|not found"; then
    echo "libSelectorForwarding.so needs a Swift toolchain library (above)" >&2
    exit 1
fi

normalise() { sed -E 's/0x[0-9a-fA-F]+/0xADDR/g'; }
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc -std=c11 -Wall -Wextra -Werror "$root/examples/c/demo.c" $(pkg-config --cflags --libs selector-forwarding) -o "$prefix/demo"
# Only the prefix on the library path, nothing from the environment (no /opt/swift).
env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$prefix/lib" "$prefix/demo" | normalise > "$prefix/c.out"
diff -u <(normalise < "$root/examples/c/expected.txt") "$prefix/c.out"
echo "examples/c: output as expected"

env -i PATH=/usr/bin:/bin PKG_CONFIG_PATH="$PKG_CONFIG_PATH" python3 "$root/examples/python/demo.py" | normalise > "$prefix/py.out"
diff -u <(normalise < "$root/examples/python/expected.txt") "$prefix/py.out"
echo "examples/python: output as expected"
