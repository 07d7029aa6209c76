#!/usr/bin/env bash
# Formats every C++ file git tracks with clang-format-14 and the repository's .clang-format
# (--check: change nothing, list the files that differ, exit 1 if any).
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-14}
command -v "$clang_format" >/dev/null || { echo "format.sh: $clang_format not found (apt install clang-format-14)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cc' | grep -v '^fixtures/' | grep -v '^tests/golden/')
if [[ "${1:-}" == "--check" ]]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$clang_format" --style=file "$f" | cmp -s - "$f"; then
      echo "needs formatting: $f (scripts/format.sh)"
      bad=1
    fi
  done
  exit $bad
fi
printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$clang_format" --style=file -i
