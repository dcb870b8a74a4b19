#!/usr/bin/env bash
# Builds SFFuzz with libFuzzer and runs it on one target. See docs/reliability.md ("Fuzzing").
#
#   scripts/fuzz.sh encoding                 # until stopped (Ctrl-C), corpus in .build-fuzz/corpus/encoding
#   scripts/fuzz.sh send -runs=2000000       # extra arguments go to libFuzzer
#   SF_FUZZ_ASAN=1 scripts/fuzz.sh send      # libFuzzer + AddressSanitizer (slower, finds overflows)
#   SF_FUZZ_KNOWN_BUGS=1 scripts/fuzz.sh send  # also run inputs that reach known open bugs
#
# New inputs go to .build-fuzz/corpus/<target> (seeded from Tests/FuzzCorpus/<target>, which is
# only read); crashes to .build-fuzz/artifacts/. Minimize a crash with
#   SF_FUZZ_TARGET=send .build-fuzz/release/SFFuzz -minimize_crash=1 -runs=100000 crash-…
# and commit it to Tests/FuzzCorpus/<target>/ once the bug is understood.
#
# Recipe notes: SwiftPM renames an executable's main to SFFuzz_main on Linux, so FuzzMain.swift
# defines SFFuzz_main itself (with -parse-as-library) and hands control to LLVMFuzzerRunDriver;
# gold cannot link -sanitize=fuzzer objects, lld can.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-encoding}"
shift || true
case "$target" in encoding|send) ;; *) echo "usage: $0 encoding|send [libFuzzer args…]" >&2; exit 2 ;; esac

sanitizers=fuzzer
scratch=.build-fuzz
if [ "${SF_FUZZ_ASAN:-0}" = 1 ]; then
    sanitizers=fuzzer,address
    scratch=.build-fuzz-asan
    # Known LeakSanitizer false positives (Swift tagged enum pointers), as in .ci/run.
    export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/.ci/lsan.supp:print_suppressions=0}"
fi

swift build -c release --scratch-path "$scratch" --product SFFuzz \
    -Xswiftc -sanitize="$sanitizers" -Xswiftc -parse-as-library -Xswiftc -use-ld=lld -Xswiftc -DFUZZING

mkdir -p "$scratch/corpus/$target" "$scratch/artifacts"
export SF_FUZZ_TARGET="$target"
exec "$scratch/release/SFFuzz" "$scratch/corpus/$target" "Tests/FuzzCorpus/$target" \
    -artifact_prefix="$scratch/artifacts/" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "$@"
