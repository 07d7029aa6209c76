#!/usr/bin/env bash
# The runtime probe's performance run: every CPU check of torchlint-probe on a
# ResNet-18-sized TorchScript model (11.7 M parameters, 1x3x224x224 input) at batch sizes 1
# and 8. Target: the whole probe in at most 60 s on the project's 2-core machine.
#
#   bash bench/probe/run.sh [BUILD_DIR]      (default: build; needs <build>/torchlint-probe)
#
# Writes bench/results/probe-resnet18.{json,txt} and prints the text report, whose table
# gives the time of each check.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${TORCHLINT_BUILD_DIR:-$root/build}}
probe=$build/torchlint-probe
python=${TORCHLINT_PROBE_PYTHON:-/usr/bin/python3}
[[ -x "$probe" ]] || { echo "bench/probe: no $probe (build torchlint-probe first: needs libtorch-dev)" >&2; exit 2; }
models=$build/probe-bench-models
results=$root/bench/results
mkdir -p "$results"
if [[ ! -f "$models/resnet18.pt" ]]; then
  "$python" "$root/fixtures/models/make.py" "$models" --resnet18 >/dev/null
fi
threads=$(nproc 2>/dev/null || echo 2)
start=$(date +%s.%N)
set +e
"$probe" "$models/resnet18.pt" --input x:1x3x224x224:float32 --batch-sizes 1,8 --threads "$threads" \
  --output-format json -o "$results/probe-resnet18.json"
status=$?
set -e
end=$(date +%s.%N)
"$python" - "$results/probe-resnet18.json" "$start" "$end" <<'PY' | tee "$results/probe-resnet18.txt"
import json, sys
report = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"torchlint-probe on a ResNet-18-sized model, batch sizes 1 and 8, "
      f"{report['environment']['threads']} threads, torch {report['environment']['torch_version']}")
print(f"{'check':<12} {'status':<8} {'seconds':>8}  headline")
for name, check in report["checks"].items():
    print(f"{name:<12} {check['status']:<8} {check['seconds']:8.2f}  {check['headline'] or check['reason'] or ''}")
print(f"{'total':<12} {'':<8} {report['seconds']:8.2f}  (process wall time {wall:.2f} s, exit {report['exit_code']})")
PY
# 1 means findings (none are expected on this model); 2 means the probe could not run.
[[ $status -le 1 ]]
