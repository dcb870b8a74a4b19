#!/usr/bin/env bash
# Builds and runs the Objective-C forwarding benchmark (GNUstep Base + GCC's
# libobjc, as Debian ships them). Installs the toolchain when it is missing.
# Usage: bash Benchmarks/objc/run.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/.build-objc"

# gobjc: the gcc Objective-C front end (and libobjc); libgnustep-base-dev:
# Foundation headers and library; gnustep-make: gnustep-config.
packages=(gobjc libgnustep-base-dev gnustep-make)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} > 0)); then
  if ((EUID != 0)); then
    echo "missing packages: ${missing[*]}; run as root to install them" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  for p in "${missing[@]}"; do
    # Fail early with a clear message if this distribution lacks a package.
    if apt-cache policy "$p" | grep -q 'Candidate: (none)' \
      || [[ -z "$(apt-cache policy "$p")" ]]; then
      echo "package $p is not available from apt on this system" >&2
      exit 1
    fi
  done
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# gcc, not clang: Debian's GNUstep Base is built against GCC's libobjc ABI.
cc="${CC:-gcc}"
mkdir -p "$build"
# --objc-flags brings what GNUstep code needs under gcc (-fobjc-exceptions,
# -fconstant-string-class=NSConstantString, -DGNUSTEP...) plus -O2; its -MMD
# drops a harmless .d file next to the binary.
# shellcheck disable=SC2046  # the flag lists must word-split
"$cc" $(gnustep-config --objc-flags) \
  -o "$build/ForwardingBench" "$here/ForwardingBench.m" \
  $(gnustep-config --base-libs)

echo "compiler: $("$cc" --version | head -n 1)"
echo "libobjc:  $(dpkg-query -W -f='${Package} ${Version}' 'libobjc4*' 2>/dev/null | head -n 1)"
echo "GNUstep:  $(dpkg-query -W -f='${Package} ${Version}' 'libgnustep-base1*' 2>/dev/null | head -n 1)"
echo

# This program never reads user defaults, so GNUstep prints nothing on a
# bare machine; stderr is left alone so that real errors show.
exec "$build/ForwardingBench"
