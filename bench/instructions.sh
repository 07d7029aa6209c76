#!/usr/bin/env bash
# Instruction counts (valgrind's callgrind) of tree-sitter parsing alone and of
# `torchlint check --jobs 1`, on the benchmark corpus or on the paths given. Unlike times,
# these are the same on every run, so they show what a change to the linter saves even on
# a noisy machine; they do not count cache misses, so the time ratio of bench/run.sh stays
# the figure the target is about. Run bench/run.sh first (it assembles the corpus).
#
# Usage: bench/instructions.sh [PATH...]      (default: bench/corpus; about 6 minutes)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${TORCHLINT_BUILD_DIR:-$root/build}
cd "$root"
command -v valgrind >/dev/null || { echo "instructions: valgrind is not installed" >&2; exit 2; }
[[ -x $build/torchlint && -x $build/bench/ts_parse_only ]] ||
  { echo "instructions: build first (bash scripts/build.sh)" >&2; exit 2; }
(($# > 0)) || set -- bench/corpus
[[ -e $1 ]] || { echo "instructions: $1 not found (bench/run.sh assembles bench/corpus)" >&2; exit 2; }

# collected CMD...: the instructions callgrind counted for CMD.
collected() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# The default rules, as in the target, and every rule (--select ALL), as in bench/run.sh (b').
parse=$(collected "$build/bench/ts_parse_only" "$@")
lint=$(collected "$build/torchlint" check "$@" --jobs 1 --exit-zero --output-format concise --no-cache)
lint_all=$(collected "$build/torchlint" check "$@" --jobs 1 --select ALL --exit-zero --output-format concise --no-cache)
[[ -n $parse && -n $lint && -n $lint_all ]] || { echo "instructions: callgrind reported no count" >&2; exit 1; }
ratio() { awk "BEGIN { printf \"%.3f\", $1 / $parse }"; }
printf '%-40s %16s\n' "parse only (instructions)" "$parse"
printf '%-40s %16s %8s\n' "torchlint --jobs 1 (instructions, ratio)" "$lint" "$(ratio "$lint")"
printf '%-40s %16s %8s\n' "  --select ALL" "$lint_all" "$(ratio "$lint_all")"
