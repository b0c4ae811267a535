#!/usr/bin/env bash
# Checks that every C++ source (.cpp and .h under runner/, services/, tests/
# and bench/) is formatted as .clang-format says, with Debian 12's
# clang-format-15; the FormatTest ctest test runs it.
#   scripts/format.sh          check: names each file that differs, exits 1
#   scripts/format.sh --fix    rewrite the files in place
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CLANG_FORMAT="${CLANG_FORMAT:-clang-format-15}"
command -v "$CLANG_FORMAT" >/dev/null || { echo "format: $CLANG_FORMAT not found (apt-get install clang-format-15)" >&2; exit 2; }
mapfile -t files < <(find runner services tests bench -type f \( -name '*.cpp' -o -name '*.h' \) | sort)
[ ${#files[@]} -gt 0 ] || { echo "format: no sources found under $ROOT" >&2; exit 2; }
if [ "${1:-}" = "--fix" ]; then
  "$CLANG_FORMAT" -i "${files[@]}"
  echo "format: ${#files[@]} files formatted"
  exit 0
fi
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
if ! "$CLANG_FORMAT" --dry-run --Werror "${files[@]}" 2>"$report"; then
  grep -o '^[^:]*\.\(cpp\|h\):' "$report" | sort -u | sed 's/:$//; s/^/format: not formatted: /' >&2
  head -40 "$report" >&2
  echo "format: run scripts/format.sh --fix" >&2
  exit 1
fi
echo "format: ${#files[@]} files formatted as .clang-format says"
