#!/usr/bin/env bash
# Warm re-run of `torchlint check` on a project with C++ files against its cold run, in one
# run: prints both times, the ratio (target <= 0.10) and whether the findings are the same.
# Cold: an empty result cache, but a warm PCH cache (a warm-up run builds the PCHs first),
# so the cold run is what every run cost before C++ results were cached, not the one-off
# PCH build. Warm: the same command again, nothing changed.
# usage: bench/cpp/cache_bench.sh [BUILD_DIR] [PROJECT] [RUNS]
#   BUILD_DIR holds torchlint and torchlint-cpp (default: build)
#   PROJECT   a LibTorch project (default: build/realcode-src/prabhuomkar+pytorch-cpp when
#             bench/realcode/materialize.sh fetched it, else the e2e trainer four times)
#   RUNS      cold/warm pairs (default 2); the ratio reported is the median pair's
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:-$root/build}")
project=${2:-}
runs=${3:-2}
[[ -x "$build/torchlint" && -x "$build/torchlint-cpp" ]] || { echo "no torchlint / torchlint-cpp in $build"; exit 2; }
[[ -f /usr/include/torch/csrc/api/include/torch/torch.h ]] || { echo "LibTorch headers not installed (libtorch-dev)"; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/xdg"  # a private PCH cache
mkdir -p "$work/project"
if [[ -z $project && -d $root/build/realcode-src/prabhuomkar+pytorch-cpp ]]; then
  project=$root/build/realcode-src/prabhuomkar+pytorch-cpp
fi
if [[ -n $project ]]; then
  # A copy: the result cache goes into the project root, never into the sources.
  cp -r "$project"/. "$work/project/"
  rm -rf "$work/project/.torchlint_cache" "$work/project/.git"
  name=$(basename "$project")
else
  name="4 copies of fixtures/cpp/e2e/mnist_train.cpp with a compile_commands.json"
  mkdir -p "$work/project/build"
  sep=""
  echo "[" > "$work/project/build/compile_commands.json"
  for i in 1 2 3 4; do
    f=$work/project/train_$i.cpp
    sed "s/int main()/int main_$i()/" "$root/fixtures/cpp/e2e/mnist_train.cpp" > "$f"
    printf '%s{"directory": "%s/build", "file": "%s", "command": "/usr/bin/c++ -std=gnu++17 -isystem /usr/include/torch/csrc/api/include -O2 -c %s"}\n' \
      "$sep" "$work/project" "$f" "$f" >> "$work/project/build/compile_commands.json"
    sep=","
  done
  echo "]" >> "$work/project/build/compile_commands.json"
fi
# A project marker, so that the result cache is the project's .torchlint_cache.
[[ -f $work/project/torchlint.toml || -f $work/project/pyproject.toml ]] || : > "$work/project/torchlint.toml"
tus=$(find "$work/project" -type f \( -name '*.cpp' -o -name '*.cc' -o -name '*.cxx' \) -not -path '*/build/*' | wc -l)
cd "$work/project"

lint() { "$build/torchlint" check . --select ALL --exit-zero --output-format json "$@" 2> /dev/null; }
seconds() {  # wall time of "$@", its stdout to the file $1
  local out=$1 start end
  shift
  start=$(date +%s.%N)
  "$@" > "$out"
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

echo "project: $name ($tus C++ translation units)"
t=$(seconds "$work/warmup.json" lint --no-cache)
printf 'warm-up (builds the PCHs, no result cache): %.2f s\n' "$t"
ratios=()
for run in $(seq 1 "$runs"); do
  rm -rf .torchlint_cache
  cold=$(seconds "$work/cold.json" lint)
  warm=$(seconds "$work/warm.json" lint)
  same=$(cmp -s "$work/cold.json" "$work/warm.json" && echo "same findings" || echo "FINDINGS DIFFER")
  ratio=$(echo "$warm / $cold" | bc -l)
  ratios+=("$ratio")
  printf 'run %d: cold %.2f s, warm %.3f s, warm/cold %.3f (%s, %s findings)\n' "$run" "$cold" "$warm" "$ratio" "$same" \
    "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$work/warm.json")"
  [[ $same == "same findings" ]] || exit 1
done
median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
verdict=$(echo "$median <= 0.10" | bc -l)
printf 'warm/cold (median of %d): %.3f; target <= 0.10: %s\n' "$runs" "$median" "$([[ $verdict -eq 1 ]] && echo met || echo MISSED)"
[[ $verdict -eq 1 ]]
