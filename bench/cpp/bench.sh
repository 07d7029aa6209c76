#!/usr/bin/env bash
# torchlint-cpp against clang-tidy-14 (one cheap check) on the same LibTorch translation
# units and flags, one TU at a time; prints the times and the ratio.
# usage: bench/cpp/bench.sh [BUILD_DIR] [RUNS]   (BUILD_DIR holds torchlint-cpp; default build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:-$root/build}")
runs=${2:-2}
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
[[ -x "$build/torchlint-cpp" ]] || { echo "no $build/torchlint-cpp (configure with TORCHLINT_WITH_CPP=ON)"; exit 2; }
[[ -n "$tidy" ]] || { echo "clang-tidy-14 not installed (apt-get install clang-tidy-14)"; exit 2; }
[[ -f /usr/include/torch/csrc/api/include/torch/torch.h ]] || { echo "LibTorch headers not installed (libtorch-dev)"; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A private, empty precompiled-header cache: run 1 builds the PCH (cold), later runs use it.
export XDG_CACHE_HOME="$work/cache"
# The corpus: the end-to-end trainer and a second TU (the fixture trainer built against
# the real headers), with the flags a CMake build of a LibTorch project uses.
cp "$root/fixtures/cpp/e2e/mnist_train.cpp" "$work/mnist_train.cpp"
sed 's/int main()/int main2()/' "$root/fixtures/cpp/e2e/mnist_train.cpp" > "$work/trainer.cpp"
files=("$work/mnist_train.cpp" "$work/trainer.cpp")
{
  echo "["
  sep=""
  for f in "${files[@]}"; do
    printf '%s{"directory": "%s", "file": "%s", "command": "/usr/bin/c++ -std=gnu++17 -isystem /usr/include/torch/csrc/api/include -O2 -c %s -o /dev/null"}\n' \
      "$sep" "$work" "$f" "$f"
    sep=","
  done
  echo "]"
} > "$work/compile_commands.json"

time_of() {  # prints seconds of wall time of "$@"
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null 2>&1 || true
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

echo "corpus: ${#files[@]} LibTorch TUs (<torch/torch.h>), one at a time; $runs runs each"
for run in $(seq 1 "$runs"); do
  t_tidy=$(time_of "$tidy" -p "$work" --checks='-*,misc-unused-using-decls' --quiet "${files[@]}")
  t_lint=$(time_of "$build/torchlint-cpp" -p "$work" -j 1 --output-format json "${files[@]}")
  state=$([[ $run -eq 1 ]] && echo "PCH cold" || echo "PCH warm")
  printf 'run %d (%s): clang-tidy-14 %.2f s, torchlint-cpp %.2f s, ratio %.2f\n' "$run" "$state" "$t_tidy" "$t_lint" "$(echo "$t_lint / $t_tidy" | bc -l)"
done
