#!/usr/bin/env bash
# Fails when an instruction-set-specific object of the library (a member
# named *_avx2.cpp.o, *_avx512*.cpp.o or *_vnni.cpp.o) defines a weak
# function (nm type W). Such a function (an inline function or a template
# instantiation, std's or ours, compiled there with AVX2/AVX-512 flags) is
# merged with the same function from the portable objects, and the linker
# may keep this copy: code that runs on any CPU would then execute AVX-512
# instructions. Weak data (V, u: e.g. the type descriptors UBSan emits)
# holds no instructions and passes. The kernel entry points these objects
# export are strong symbols, so none is exempt.
# Usage: check_isa_symbols.sh ARCHIVE
set -euo pipefail
archive=$(realpath "$1")
members=$(ar t "$archive" | grep -E '_(avx2|avx512[a-z0-9]*|vnni)\.cpp\.o$' || true)
if [ -z "$members" ]; then
  echo "check_isa_symbols: $archive has no instruction-set-specific object" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
status=0
for member in $members; do
  ar x "$archive" "$member"
  weak=$(nm -C --defined-only "$member" | awk '$2 == "W"')
  if [ -n "$weak" ]; then
    echo "check_isa_symbols: $member defines weak functions (give them internal linkage: an unnamed namespace):" >&2
    echo "$weak" >&2
    status=1
  fi
done
[ "$status" -ne 0 ] || echo "check_isa_symbols: $(echo "$members" | wc -w) objects define no weak function"
exit "$status"
