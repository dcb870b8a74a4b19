#!/usr/bin/env bash
# Compile-fail check for the Swift 6 API (docs/forwarding.md, "Closures the runtime calls are `@Sendable`"): every program in
# scripts/concurrency-check/racy/ shares mutable state with a closure the runtime may call from
# any thread, and must FAIL to type-check in Swift 6 mode with the diagnostic named on its first
# line (`// expect: ...`), and type-check in Swift 5 mode (so nothing else is wrong with it);
# scripts/concurrency-check/sound/main.swift must build and run.
#
# Uses the modules of an existing debug build (`swift build` first; .ci/run has built them), so
# it takes seconds: swiftc type-checks each racy file alone and links the sound program against
# the build's object files. Usage: scripts/check-concurrency.sh [build-dir, default .build/debug]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-.build/debug}"
modules="$build/Modules"
[ -f "$modules/DynamicRuntime.swiftmodule" ] || { echo "no $modules/DynamicRuntime.swiftmodule: run swift build first" >&2; exit 2; }
flags=(-swift-version 6 -I "$modules" -I CDynamicRuntime/include -I CMessageThrottle/include)
scratch=.build-concurrency-check
mkdir -p "$scratch"
failed=0

for file in scripts/concurrency-check/racy/*.swift; do
    expect=$(sed -n '1s|^// expect: ||p' "$file")
    [ -n "$expect" ] || { echo "FAIL $file: no '// expect:' line" >&2; failed=1; continue; }
    # The control: in Swift 5 mode the same file type-checks, so Swift 6's concurrency checking
    # is the only thing that rejects it (not a typo or an API that moved).
    if ! control=$(swiftc -typecheck -swift-version 5 "${flags[@]:2}" "$file" 2>&1); then
        echo "FAIL $file: does not type-check in Swift 5 mode either, so it fails for another reason:" >&2
        echo "$control" | grep "error:" | head -5 >&2; failed=1; continue
    fi
    if output=$(swiftc -typecheck "${flags[@]}" "$file" 2>&1); then
        echo "FAIL $file: compiled, but it races" >&2; failed=1
    elif ! grep -qF "error: $expect" <<<"$output"; then
        echo "FAIL $file: rejected, but not with \"$expect\":" >&2; echo "$output" | grep "error:" | head -5 >&2; failed=1
    else
        echo "ok   $file: $expect"
    fi
done

objects=()
for target in CDynamicRuntime DynamicRuntime CMessageThrottle MessageThrottle; do
    objects+=("$build/$target.build"/*.o)
done
if swiftc "${flags[@]}" scripts/concurrency-check/sound/main.swift "${objects[@]}" -lffi -o "$scratch/sound" 2>"$scratch/sound.log" \
    && timeout 60 "$scratch/sound"; then
    echo "ok   scripts/concurrency-check/sound/main.swift builds and runs"
else
    echo "FAIL scripts/concurrency-check/sound/main.swift:" >&2; grep -E "error" "$scratch/sound.log" | head -10 >&2; failed=1
fi
exit "$failed"
