#!/usr/bin/env bash
# Audit benchmark: `torchlint audit` on the >= 300 000-line corpus of bench/run.sh plus a
# 2 GiB checkpoint inside it, against `torchlint check` on the same sources alone (target:
# audit <= 2x check). No value scan, no probe. The checkpoint is made by
# bench/checkpoint/make_bench.py (32 zero tensors of 64 MiB, holes punched, so it takes
# little disk) into bench/corpus/checkpoints/ and deleted afterwards unless KEEP=1.
# usage: bash bench/audit/run.sh [BUILD_DIR]   (default $TORCHLINT_BUILD_DIR or build/)
set -euo pipefail
invoked_from=$PWD
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${TORCHLINT_BUILD_DIR:-$root/build}}
[[ $build == /* ]] || build=$invoked_from/$build
cd "$root"
lint=$build/torchlint
[[ -x $lint ]] || { echo "bench/audit: $lint not found: build first (bash scripts/build.sh)" >&2; exit 2; }
corpus=bench/corpus
runs=${RUNS:-3}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
max_ratio=2.0
min_lines=300000

# --- corpus: the same as bench/run.sh (the .py files of python3-torch plus fixtures/) ---
torch_src=/usr/lib/python3/dist-packages/torch
if [[ ! -f $corpus/.assembled ]]; then
  [[ -d $torch_src ]] || { echo "bench/audit: $torch_src not found: install python3-torch" >&2; exit 2; }
  rm -rf "$corpus"
  mkdir -p "$corpus/torch"
  (cd "$torch_src" && find . -type f -name '*.py' -print0 | tar --null -T - -cf -) | tar -xf - -C "$corpus/torch"
  touch "$corpus/.assembled"
fi
if [[ ! -d $corpus/fixtures ]]; then
  mkdir -p "$corpus/fixtures"
  (cd fixtures && find . -type f -name '*.py' -print0 | tar --null -T - -cf -) | tar -xf - -C "$corpus/fixtures"
fi
lines=$(find "$corpus" -type f -name '*.py' -print0 | xargs -0 cat | wc -l)
((lines >= min_lines)) || { echo "bench/audit: corpus has $lines lines, need $min_lines" >&2; exit 1; }

# --- the 2 GiB checkpoint, inside the audited tree -------------------------------------
ckdir=$corpus/checkpoints
cleanup() {
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$ckdir"
  rm -rf "$tmp"
}
tmp=$(mktemp -d)
trap cleanup EXIT
echo "bench/audit: making the 2 GiB checkpoint (bench/checkpoint/make_bench.py --only large.pt)"
/usr/bin/python3 bench/checkpoint/make_bench.py "$ckdir" --only large.pt >/dev/null
ck_bytes=$(stat -c %s "$ckdir/large.pt")
ck_disk=$(du -k "$ckdir/large.pt" | cut -f1)
((ck_bytes >= 2000000000)) || { echo "bench/audit: $ckdir/large.pt is only $ck_bytes bytes" >&2; exit 1; }

# --- timing ---------------------------------------------------------------------------
now_us() { local t=$EPOCHREALTIME; echo $((10#${t//[.,]/})); }
# time_best N CMD...: the fastest of N runs in microseconds (exit status 0 or 1 accepted:
# findings and failed items are the point here, a crash is not).
time_best() {
  local n=$1 best= i start end status
  shift
  for ((i = 0; i < n; i++)); do
    start=$(now_us)
    status=0
    "$@" >/dev/null 2>"$tmp/stderr" || status=$?
    end=$(now_us)
    if ((status > 1)); then
      echo "bench/audit: '$*' exited with $status:" >&2
      tail -n 20 "$tmp/stderr" >&2
      exit 1
    fi
    if [[ -z $best ]] || ((end - start < best)); then best=$((end - start)); fi
  done
  echo "$best"
}

check_cmd=("$lint" check "$corpus" --jobs "$jobs" --exit-zero --output-format concise --no-cache)
audit_json=("$lint" audit "$corpus" --jobs "$jobs" --no-cache --format json -o "$tmp/audit.json")
audit_html=("$lint" audit "$corpus" --jobs "$jobs" --no-cache --format html -o "$tmp/audit.html")

echo "bench/audit: warming up (page cache)"
"${check_cmd[@]}" >/dev/null 2>&1 || true
"${audit_json[@]}" >/dev/null 2>&1 || true
/usr/bin/python3 - "$tmp/audit.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
cps = doc["checkpoints"]
assert len(cps) == 1 and cps[0]["path"] == "checkpoints/large.pt" and cps[0]["bytes"] >= 2_000_000_000, cps
print(f"bench/audit: the audit found {cps[0]['path']} ({cps[0]['bytes']} bytes, {cps[0]['format']}), "
      f"{doc['summary']['findings']} findings in {doc['summary']['files_linted']} files")
PY

echo "bench/audit: best of $runs, --jobs $jobs"
check_us=$(time_best "$runs" "${check_cmd[@]}")
audit_us=$(time_best "$runs" "${audit_json[@]}")
html_us=$(time_best "$runs" "${audit_html[@]}")
ckpt_us=$(time_best "$runs" "$lint" ckpt "$ckdir/large.pt" --no-summary --exit-zero)

calc() { awk "BEGIN { printf \"$1\", $2 }"; }
ratio=$(calc %.2f "$audit_us / $check_us")
ratio_html=$(calc %.2f "$html_us / $check_us")
verdict() { awk "BEGIN { exit !($1 <= $2) }" && echo ok || echo MISSED; }
echo
printf 'corpus: %s lines of Python; checkpoint: %s bytes (%s KiB on disk); %s CPUs\n\n' "$lines" "$ck_bytes" "$ck_disk" "$jobs"
printf '%-52s %9ss\n' "torchlint check (sources only)" "$(calc %.3f "$check_us / 1e6")"
printf '%-52s %9ss\n' "torchlint audit --format json (sources + checkpoint)" "$(calc %.3f "$audit_us / 1e6")"
printf '%-52s %9ss\n' "torchlint audit --format html" "$(calc %.3f "$html_us / 1e6")"
printf '%-52s %9ss\n' "torchlint ckpt on the 2 GiB checkpoint alone" "$(calc %.3f "$ckpt_us / 1e6")"
echo
printf '%-52s %10s   target <= %s %s\n' "audit (json) / check" "$ratio" "$max_ratio" "$(verdict "$ratio" "$max_ratio")"
printf '%-52s %10s   target <= %s %s\n' "audit (html) / check" "$ratio_html" "$max_ratio" "$(verdict "$ratio_html" "$max_ratio")"
mkdir -p bench/results
cat >bench/results/audit.json <<EOF
{
  "timestamp": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "cpus": $jobs,
  "corpus_lines": $lines,
  "checkpoint_bytes": $ck_bytes,
  "check_seconds": $(calc %.3f "$check_us / 1e6"),
  "audit_json_seconds": $(calc %.3f "$audit_us / 1e6"),
  "audit_html_seconds": $(calc %.3f "$html_us / 1e6"),
  "ckpt_seconds": $(calc %.3f "$ckpt_us / 1e6"),
  "audit_over_check": $ratio,
  "audit_html_over_check": $ratio_html,
  "target_max": $max_ratio
}
EOF
echo
echo "bench/audit: wrote bench/results/audit.json"
