#!/usr/bin/env bash
# A bounded libFuzzer run for the test suite of a GCC build (`fuzz_checkpoint` test): builds
# the fuzz targets of the zip reader, the pickle VM and the safetensors header with clang
# (libFuzzer + ASan + UBSan) into WORK_DIR, straight from the sources of linter/checkpoint/
# (which depends on nothing but zlib and nlohmann-json for these entry points), and runs
# each for SECONDS on the seed corpus. Objects are kept and rebuilt only when a source or
# header changed, so only the first run pays for compiling.
#
# Exit status: 0 when every target ran its time without a crash, 77 (the test is then
# reported as skipped) when clang++ or libFuzzer is not available, 1 on a crash, a leak,
# a timeout or a build failure. Crash inputs are kept in WORK_DIR/crashes/.
#
# usage: tests/fuzz/bounded.sh WORK_DIR [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:?usage: bounded.sh WORK_DIR [SECONDS]}
seconds=${2:-8}
cxx=${TORCHLINT_FUZZ_CXX:-}
if [[ -z $cxx ]]; then
  for c in clang++ clang++-14 clang++-15 clang++-16; do
    if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
  done
fi
if [[ -z $cxx ]]; then
  echo "fuzz: SKIPPED, no clang++ (libFuzzer needs clang)"
  exit 77
fi
mkdir -p "$work/obj" "$work/crashes" "$work/seeds"
probe=$work/probe.cpp
printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' >"$probe"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe" -o "$work/probe" >"$work/probe.log" 2>&1; then
  echo "fuzz: SKIPPED, $cxx cannot link libFuzzer with ASan/UBSan:"
  sed -n 1,5p "$work/probe.log"
  exit 77
fi

flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -I"$root/linter" -I"$root/tests/checkpoint")
# Every header of the library counts for every object (coarse but safe).
newest_header=$(find "$root/linter/checkpoint" -name '*.h' -printf '%T@\n' | sort -n | tail -1)
stale() {  # stale OBJ SRC
  [[ ! -f $1 ]] && return 0
  local o
  o=$(stat -c %Y "$1")
  [[ $(stat -c %Y "$2") -gt $o ]] && return 0
  awk -v h="$newest_header" -v o="$o" 'BEGIN { exit !(h > o) }'
}
sources=()
for src in "$root"/linter/checkpoint/*.cpp; do
  [[ $(basename "$src") == rule.cpp ]] && continue  # the rule interface needs torchlint_core
  sources+=("$src")
done
todo=()
for src in "${sources[@]}"; do
  obj=$work/obj/$(basename "$src" .cpp).o
  if stale "$obj" "$src"; then todo+=("$src"); fi
done
if ((${#todo[@]})); then
  echo "fuzz: compiling ${#todo[@]} sources with $cxx"
  export cxx work
  export flags_joined="${flags[*]}"
  # shellcheck disable=SC2016
  printf '%s\n' "${todo[@]}" | xargs -P "${TORCHLINT_FUZZ_JOBS:-2}" -I{} bash -c \
    'o="$work/obj/$(basename "{}" .cpp).o"; $cxx $flags_joined -c "{}" -o "$o.tmp" && mv "$o.tmp" "$o"'
fi
if ((${#todo[@]})) || [[ ! -f $work/libckpt.a ]]; then
  rm -f "$work/libckpt.a"
  ar rcs "$work/libckpt.a" "$work"/obj/*.o
fi

# Seeds: one well-formed input per container (no sanitizers needed).
seeds_src=("$root/tests/fuzz/make_seeds.cpp" "$root/tests/checkpoint/seeds.h" "$root/tests/checkpoint/builders.h")
if [[ ! -x $work/make_seeds ]] || [[ -n $(find "${seeds_src[@]}" -newer "$work/make_seeds") ]]; then
  "$cxx" -std=c++20 -O1 -I"$root/linter" -I"$root/tests/checkpoint" "$root/tests/fuzz/make_seeds.cpp" -lz -o "$work/make_seeds"
fi
"$work/make_seeds" "$work/seeds"

status=0
for target in pickle_vm zip_reader safetensors; do
  bin=$work/fuzz_$target
  src=$root/tests/fuzz/fuzz_$target.cpp
  if [[ ! -x $bin || $src -nt $bin || $work/libckpt.a -nt $bin ]]; then
    "$cxx" "${flags[@]/fuzzer-no-link/fuzzer}" "$src" "$work/libckpt.a" -lz -o "$bin"
  fi
  # A private copy of the corpus, so runs do not grow the shared seeds.
  corpus=$work/corpus_$target
  rm -rf "$corpus"
  cp -r "$work/seeds" "$corpus"
  if "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$work/crashes/$target-" "$corpus" >"$work/$target.log" 2>&1; then
    runs=$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$' || echo '?')
    cov=$(grep -o 'cov: [0-9]*' "$work/$target.log" | tail -1 || true)
    echo "fuzz_$target: ${seconds}s, $runs inputs, $cov, no crash"
  else
    echo "fuzz_$target: FAILED (log: $work/$target.log)"
    tail -40 "$work/$target.log"
    status=1
  fi
done
exit $status
