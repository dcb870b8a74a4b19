#!/usr/bin/env bash
# Builds and installs the C library (docs/c-api.md):
#   DIR/lib/libSelectorForwarding.so          the runtime, Swift standard library linked in
#   DIR/include/SelectorForwarding.h          the public header (and nothing private), with
#   DIR/include/SelectorForwarding/*.h        the topic headers it includes
#   DIR/lib/pkgconfig/selector-forwarding.pc  for `cc app.c $(pkg-config --cflags --libs selector-forwarding)`
# Usage: scripts/install-c-library.sh --prefix DIR [--scratch-path PATH]
# The library needs only libc, libstdc++, libm and libffi (libffi8) at run time: the Swift
# runtime is linked statically (-static-stdlib) and every symbol but the header's is local.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="" scratch="$root/.build-clib"
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --scratch-path) scratch="$2"; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "unknown option: $1 (usage: $0 --prefix DIR)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "usage: $0 --prefix DIR" >&2; exit 2; }
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
header="$root/CDynamicRuntime/include/SelectorForwarding.h"

mkdir -p "$scratch"
map="$scratch/selector-forwarding.map"
{ echo "{ global:"; "$root/scripts/c-api-symbols.sh" "$header" | sed 's/^/  /; s/$/;/'; echo "  local: *; };"; } > "$map"

(cd "$root" && swift build -c release --product SelectorForwarding --scratch-path "$scratch" \
    -Xswiftc -static-stdlib -Xlinker "--version-script=$map" -Xlinker -soname=libSelectorForwarding.so)

install -d "$prefix/lib/pkgconfig" "$prefix/include/SelectorForwarding"
strip --strip-unneeded -o "$prefix/lib/libSelectorForwarding.so" "$scratch/release/libSelectorForwarding.so"
chmod 755 "$prefix/lib/libSelectorForwarding.so"
install -m 644 "$header" "$prefix/include/SelectorForwarding.h"
install -m 644 "$root"/CDynamicRuntime/include/SelectorForwarding/*.h "$root"/CMessageThrottle/include/SelectorForwarding/*.h \
    "$prefix/include/SelectorForwarding/"
version="$(cat "$header" "$root"/CDynamicRuntime/include/SelectorForwarding/*.h | sed -n 's/^#define SF_VERSION_STRING "\(.*\)"/\1/p')"
cat > "$prefix/lib/pkgconfig/selector-forwarding.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: selector-forwarding
Description: Objective-C-style dynamic dispatch, message forwarding, hooks and throttling for C
Version: ${version:-0.1.0}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lSelectorForwarding
Cflags: -I\${includedir}
PC
"$root/scripts/check-c-exports.sh" "$prefix/lib/libSelectorForwarding.so" "$prefix/include/SelectorForwarding.h"
echo "installed into $prefix ($(du -k "$prefix/lib/libSelectorForwarding.so" | cut -f1) KiB library)"
