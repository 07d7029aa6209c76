#!/usr/bin/env bash
# Runs torchlint-probe's CUDA code paths on a GPU machine: builds the probe alone against that
# machine's PyTorch (a CUDA LibTorch), makes the fixture models with that PyTorch, runs every
# check on CUDA, and writes the JSON reports and a summary to OUTDIR.
#
#   bash scripts/gpu-check.sh --prepare   here, with apt: fetch the header-only dependencies
#                                         (nlohmann-json, CLI11, toml++, zlib headers) and unpack
#                                         them into build-gpu-deps/ (ignored by git; carry it)
#   bash scripts/gpu-check.sh OUTDIR      on the GPU machine (PyTorch with CUDA, CMake, nvcc;
#                                         no network, no -dev packages needed)
#
# Environment: PYTHON (default python3, the interpreter with CUDA torch), BUILD_DIR (default
# build-gpu), JOBS (default nproc), DEVICE (default cuda; `cpu` dry-runs the script on a
# machine without a GPU). The build takes a few minutes; each probe run is capped at 120 s.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps=$root/build-gpu-deps
packages=(nlohmann-json3-dev libcli11-dev libtomlplusplus-dev zlib1g-dev)

if [[ "${1:-}" == "--prepare" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  chmod 0777 "$tmp"  # apt downloads as the _apt user
  (cd "$tmp" && apt-get download "${packages[@]}" >/dev/null)
  rm -rf "$deps"
  mkdir -p "$deps"
  for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$deps"; done
  echo "gpu-check: unpacked ${packages[*]} into $deps ($(du -sh "$deps" | cut -f1))"
  exit 0
fi
[[ $# -eq 1 ]] || { sed -n '2,15p' "$0" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
python=${PYTHON:-python3}
device=${DEVICE:-cuda}
build=${BUILD_DIR:-$root/build-gpu}
jobs=${JOBS:-$(nproc)}
log=$out/gpu-check.log
: >"$log"
say() { echo "gpu-check: $*" | tee -a "$log" >&2; }

# --- build ---------------------------------------------------------------------------------
torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count(), [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])' | tee -a "$log"
prefix_path="$torch_prefix"
cmake_args=(-DTORCHLINT_PROBE_ONLY=ON -DCMAKE_BUILD_TYPE=Release -DTORCHLINT_BUILD_TESTS=OFF)
if [[ -d "$deps/usr" ]]; then
  prefix_path="$prefix_path;$deps/usr"
  cmake_args+=(-DZLIB_INCLUDE_DIR="$deps/usr/include")
  # The unpacked zlib1g-dev has headers; the library is the machine's own runtime libz.
  libz=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}' || true)
  [[ -n "$libz" ]] || libz=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib64/libz.so.1 /usr/lib64/libz.so.1 2>/dev/null | head -n 1 || true)
  [[ -n "$libz" ]] && cmake_args+=(-DZLIB_LIBRARY="$libz")
fi
command -v nvcc >/dev/null 2>&1 || export PATH="$PATH:/usr/local/cuda/bin"
build_start=$(date +%s)
say "configuring $build against $torch_prefix"
cmake -S "$root" -B "$build" -DCMAKE_PREFIX_PATH="$prefix_path" "${cmake_args[@]}" >>"$log" 2>&1 \
  || { say "configure failed (see $log)"; tail -n 30 "$log" >&2; exit 2; }
grep -E "torchlint-probe: LibTorch" "$log" | tee -a "$out/summary.txt" >&2 || true
say "building torchlint-probe with $jobs jobs"
cmake --build "$build" -j "$jobs" --target torchlint-probe >>"$log" 2>&1 \
  || { say "build failed (see $log)"; grep -E "error" "$log" | head -n 20 >&2; exit 2; }
echo "build: $(( $(date +%s) - build_start )) s" | tee -a "$out/summary.txt" >&2
probe=$build/torchlint-probe

# --- fixture models, made by this machine's PyTorch -----------------------------------------
models=$out/models
"$python" "$root/fixtures/models/make.py" "$models" --resnet18 >>"$log" 2>&1 \
  || { say "make.py failed (see $log)"; exit 2; }

# --- every check on CUDA ---------------------------------------------------------------------
run() {  # NAME MODEL ARGS...: one JSON report, capped at 120 s
  local name=$1 model=$2
  shift 2
  local t0=$SECONDS status=0
  timeout 120 "$probe" "$models/$model" --device "$device" --output-format json -o "$out/$name.json" \
    --seconds-per-batch 1 "$@" 2>>"$log" || status=$?
  echo "$name: exit $status, $(( SECONDS - t0 )) s" | tee -a "$out/summary.txt" >&2
}
inputs() { "$python" -c "import json,sys; m=json.load(open('$models/manifest.json'))['models']['$1']; print(' '.join('--input '+i for i in m['inputs']))"; }
for name in mlp cnn lstm overflow train_mode random_in_eval unfreezable nan_output; do
  # shellcheck disable=SC2046
  run "$name" "$name.pt" $(inputs "$name") --batch-sizes 2,16
done
run resnet18 resnet18.pt --input x:1x3x224x224:float32 --batch-sizes 1,8,32 --memory-budget 8GiB
run checkpoint mlp.pt --input x:4x16 --checkpoint "$models/mlp_b_training.pt" --compare "$models/mlp_b.pt" \
  --checks compare,memory

# --- summary: statuses, timings, findings against the manifest's expectations --------------
"$python" - "$out" "$models/manifest.json" <<'PY' | tee -a "$out/summary.txt"
import json, os, sys
out, manifest = sys.argv[1], json.load(open(sys.argv[2]))
for name in sorted(f[:-5] for f in os.listdir(out) if f.endswith(".json")):
    try:
        r = json.load(open(os.path.join(out, name + ".json")))
    except Exception as e:  # a crash leaves no report
        print(f"{name}: no report ({e})")
        continue
    if r.get("fatal"):
        print(f"{name}: FATAL {r['fatal']}")
        continue
    codes = sorted({f["code"] for f in r["findings"] if f["severity"] != "info"})
    expect = sorted(manifest["models"].get(name, {}).get("expect", []))
    note = "" if name not in manifest["models"] else ("as expected" if codes == expect else f"expected {expect}")
    print(f"{name}: device {r['environment']['device']}, findings {codes} {note}")
    for check, c in r["checks"].items():
        print(f"  {check:<12} {c['status']:<8} {c['seconds']:7.2f} s  {c['headline'] or c['reason'] or ''}")
    for f in r["findings"]:
        print(f"  {f['code']} {f['severity']}: {f['message']}")
PY
say "reports in $out"
