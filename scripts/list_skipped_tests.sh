#!/usr/bin/env bash
# Prints one line for every test the last ctest run skipped, with the reason
# its test gave (gtest's "Skipped" message), from ctest's log:
#   skipped: Suite.Name: CPU lacks avx512vnni
# Usage: list_skipped_tests.sh BUILD_DIR
set -euo pipefail
log="$1/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "list_skipped_tests: no ctest log at $log" >&2; exit 1; }
awk '
  /^[0-9]+\/[0-9]+ Test: / { name = $3; next }
  / Skipped$/ { reading = 1; reason = ""; next }
  reading && /^\[  SKIPPED \]/ { print "skipped: " name ": " (reason == "" ? "(no reason given)" : reason); reading = 0; count++; next }
  reading { reason = reason (reason == "" ? "" : " ") $0 }
  END { print (count + 0) " tests skipped" }
' "$log"
