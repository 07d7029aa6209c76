#!/usr/bin/env bash
# torchlint-cpp's configuration, result cache and PCH cache, on a small project against the
# stand-in LibTorch header of fixtures/cpp/include (fast; no real LibTorch needed):
#  - [cpp] in torchlint.toml (build-path, extra-args) read by torchlint-cpp alone and by
#    `torchlint check`; -p / --extra-arg on the command line win; unknown keys exit 2;
#  - the result cache: a warm run parses nothing and reports the same; editing a project
#    header re-parses exactly the TUs that include it; creating a header that was missing
#    re-parses the TU that looked for it; `torchlint check` keeps them in its own cache;
#  - the PCH cache's LRU size cap (--pch-max-size): least recently used first out, never
#    the PCH in use, findings unchanged;
#  - SARIF of a run with a missing header has no error-level result; TL000 keeps the
#    catalog's level (error).
# usage: cpp_cache_test.sh TORCHLINT TORCHLINT_CPP SOURCE_DIR
set -euo pipefail
torchlint=$(realpath "$1")
cpp=$(realpath "$2")
src=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/xdg"  # PCHs of our own
fail() { echo "FAIL: $*"; exit 1; }

proj="$work/proj"
mkdir -p "$proj/include" "$proj/out"
cat > "$proj/include/model.h" <<'EOF'
#pragma once
#define SEED() torch::manual_seed(42)
EOF
# train.cpp trains; it is seeded through a macro of the project header model.h.
cat > "$proj/train.cpp" <<'EOF'
#include <torch/torch.h>
#include "model.h"

int main() {
#ifndef NO_SEED
  SEED();
#endif
  torch::nn::Linear model(784, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto data = torch::randn({64, 784});
  for (int epoch = 0; epoch < 10; ++epoch) {
    optimizer.zero_grad();
    auto loss = model->forward(data).sum();
    loss.backward();
    optimizer.step();
  }
}
EOF
# other.cpp includes no project header and is never seeded.
sed -e 's/#include "model.h"//' -e 's/SEED();//' "$proj/train.cpp" > "$proj/other.cpp"
# missing.cpp includes a project header that does not exist (yet), and is never seeded.
sed -e 's/#include "model.h"/#include "generated_config.h"/' -e 's/SEED();//' "$proj/train.cpp" > "$proj/missing.cpp"
/usr/bin/python3 - "$proj" "$src/fixtures/cpp/include" <<'PY'
import json, os, sys
proj, inc = sys.argv[1], sys.argv[2]
db = [{"directory": proj, "file": os.path.join(proj, f),
       "arguments": ["clang++", "-std=c++17", "-I" + inc, "-I" + os.path.join(proj, "include"), "-c", f]}
      for f in ("train.cpp", "other.cpp", "missing.cpp")]
json.dump(db, open(os.path.join(proj, "out", "compile_commands.json"), "w"), indent=1)
PY
cd "$proj"

# The codes found per file, as "file:code" lines.
cat > "$work/codes.py" <<'PY'
import json, os, sys
print("\n".join(sorted(os.path.basename(d["filename"]) + ":" + d["code"] for d in json.load(open(sys.argv[1])))))
PY
codes() { /usr/bin/python3 "$work/codes.py" "$1"; }
# Runs torchlint-cpp with the result cache; stdout JSON to $work/$1.json, stderr to $work/$1.err.
lint() {
  local name=$1; shift
  set +e
  "$cpp" --cache-dir "$work/cache" -v --output-format json "$@" > "$work/$name.json" 2> "$work/$name.err"
  local rc=$?
  set -e
  [[ $rc -le 1 ]] || { cat "$work/$name.err"; fail "$name: exit $rc"; }
}
cached() { grep -o "result cache: [0-9]* of [0-9]*" "$work/$1.err" || true; }

# --- configuration -------------------------------------------------------------------
# Without [cpp] build-path the database in out/ is not found: fallback flags, one note.
"$cpp" --isolated --output-format json train.cpp > /dev/null 2> "$work/nocfg.err" || true
grep -q "no compile_commands.json found" "$work/nocfg.err" || fail "expected the missing-database note: $(cat "$work/nocfg.err")"
printf '[cpp]\nbuild-path = "out"\n' > torchlint.toml
lint cold train.cpp other.cpp missing.cpp
grep -q "no compile_commands.json" "$work/cold.err" && fail "[cpp] build-path not used: $(cat "$work/cold.err")"
[[ "$(cached cold)" == "result cache: 0 of 3" ]] || fail "cold run: $(cat "$work/cold.err")"
[[ "$(codes "$work/cold.json")" == $'missing.cpp:TL101\nother.cpp:TL101' ]] || fail "cold findings: $(codes "$work/cold.json")"
grep -q "'generated_config.h' not found" "$work/cold.err" || fail "missing-header note: $(cat "$work/cold.err")"
# -p on the command line wins over build-path.
set +e
"$cpp" -p "$work" train.cpp > /dev/null 2> "$work/p.err"; rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q "no compile_commands.json in this directory" "$work/p.err" || fail "-p did not win: $rc $(cat "$work/p.err")"
# Unknown keys are errors, for torchlint-cpp and for `torchlint check`.
printf '[cpp]\nbuild-path = "out"\nextra_args = ["-DX"]\n' > torchlint.toml
set +e
"$cpp" train.cpp > /dev/null 2> "$work/bad.err"; rc=$?
"$torchlint" check train.cpp > /dev/null 2> "$work/bad2.err"; rc2=$?
set -e
[[ $rc -eq 2 && $rc2 -eq 2 ]] || fail "unknown key: exit $rc / $rc2"
grep -q "cpp.extra_args\`: unknown setting (known: build-path, extra-args, pch-dir, pch-max-size)" "$work/bad.err" || fail "$(cat "$work/bad.err")"
grep -q "cpp.extra_args\`: unknown setting" "$work/bad2.err" || fail "$(cat "$work/bad2.err")"
printf '[cpp]\nbuild-path = "out"\n' > torchlint.toml
echo "configuration: ok"

# --- result cache ----------------------------------------------------------------------
lint warm train.cpp other.cpp missing.cpp
[[ "$(cached warm)" == "result cache: 3 of 3" ]] || fail "warm run parsed: $(cat "$work/warm.err")"
cmp -s "$work/cold.json" "$work/warm.json" || fail "warm findings differ"
grep -q "'generated_config.h' not found" "$work/warm.err" || fail "warm run lost the missing-header note"
# Editing the project header re-parses the TU that includes it, and only that one.
printf '#pragma once\n#define SEED() (void)0\n' > include/model.h
lint edited train.cpp other.cpp missing.cpp
[[ "$(cached edited)" == "result cache: 2 of 3" ]] || fail "after editing model.h: $(cat "$work/edited.err")"
[[ "$(codes "$work/edited.json")" == $'missing.cpp:TL101\nother.cpp:TL101\ntrain.cpp:TL101' ]] || fail "after editing model.h: $(codes "$work/edited.json")"
# The missing header appears where it was looked for: that TU is parsed again.
echo '#pragma once' > include/generated_config.h
lint created train.cpp other.cpp missing.cpp
[[ "$(cached created)" == "result cache: 2 of 3" ]] || fail "after creating the missing header: $(cat "$work/created.err")"
grep -q "not found" "$work/created.err" && fail "header still reported missing: $(cat "$work/created.err")"
# The configuration's extra-args are part of the compile command, so of the key.
printf '[cpp]\nbuild-path = "out"\nextra-args = ["-DNO_SEED"]\n' > torchlint.toml
printf '#pragma once\n#define SEED() torch::manual_seed(42)\n' > include/model.h
lint config_args train.cpp other.cpp
[[ "$(cached config_args)" == "result cache: 0 of 2" ]] || fail "extra-args not in the key: $(cat "$work/config_args.err")"
[[ "$(codes "$work/config_args.json")" == $'other.cpp:TL101\ntrain.cpp:TL101' ]] || fail "[cpp] extra-args not used: $(codes "$work/config_args.json")"
printf '[cpp]\nbuild-path = "out"\n' > torchlint.toml
echo "result cache (torchlint-cpp): ok"

# `torchlint check`: the same configuration, -p/--extra-arg passed through, results in
# the project's result cache beside the Python ones.
run_check() {
  local name=$1; shift
  set +e
  "$torchlint" check . --select ALL --output-format json "$@" > "$work/$name.json" 2> "$work/$name.err"
  local rc=$?
  set -e
  [[ $rc -le 1 ]] || { cat "$work/$name.err"; fail "check $name: exit $rc"; }
}
run_check check_cold
ls .torchlint_cache/cpp-pack-*.tlc > /dev/null 2>&1 || fail "no C++ entries in .torchlint_cache: $(ls -a .torchlint_cache)"
run_check check_warm
cmp -s "$work/check_cold.json" "$work/check_warm.json" || fail "check: warm findings differ"
[[ "$(codes "$work/check_warm.json")" == $'missing.cpp:TL101\nother.cpp:TL101' ]] || fail "check findings: $(codes "$work/check_warm.json")"
run_check check_arg --extra-arg=-DNO_SEED
[[ "$(codes "$work/check_arg.json")" == $'missing.cpp:TL101\nother.cpp:TL101\ntrain.cpp:TL101' ]] || fail "check --extra-arg: $(codes "$work/check_arg.json")"
mv out build-elsewhere
printf '[cpp]\n' > torchlint.toml
run_check check_p -p build-elsewhere
grep -q "no compile_commands.json" "$work/check_p.err" && fail "check -p not passed: $(cat "$work/check_p.err")"
mv build-elsewhere out
printf '[cpp]\nbuild-path = "out"\n' > torchlint.toml
echo "result cache and options (torchlint check): ok"

# --- SARIF with a missing header -------------------------------------------------------
rm include/generated_config.h
set +e
"$torchlint" check missing.cpp other.cpp --no-cache --output-format sarif > "$work/missing.sarif" 2> "$work/missing_sarif.err"
set -e
grep -q "'generated_config.h' not found" "$work/missing_sarif.err" || fail "no missing-header note: $(cat "$work/missing_sarif.err")"
/usr/bin/python3 - "$work/missing.sarif" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
results = [r for run in log["runs"] for r in run["results"]]
errors = [r for r in results if r.get("level") == "error"]
assert not errors, f"error-level results in a run with a missing header: {errors}"
assert all(r["ruleId"] != "TL000" for r in results), results
uri = lambda r: r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
assert any(r["ruleId"] == "TL101" and uri(r).endswith("missing.cpp") for r in results), "the file with the missing header was not analysed"
print(f"SARIF with a missing header: {len(results)} results, none at level error")
PY
# TL000 (a file Clang cannot compile at all) keeps its catalog severity: error.
cp "$src/fixtures/cpp/TL000-parse-error/bad_does_not_compile.cpp" broken.cpp
"$torchlint" check broken.cpp --no-cache --extra-arg=-I"$src/fixtures/cpp/include" --output-format sarif > "$work/broken.sarif" 2> /dev/null || true
/usr/bin/python3 - "$work/broken.sarif" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
tl000 = [r for run in log["runs"] for r in run["results"] if r["ruleId"] == "TL000"]
assert tl000 and all(r["level"] == "error" for r in tl000), tl000
print("TL000 in SARIF: level error (catalog: kError)")
PY
rm broken.cpp

# --- PCH cache: LRU size cap -----------------------------------------------------------
# Three PCHs (one per -D: the flags are in the PCH's key), built in the order a, b, c.
/usr/bin/python3 - "$proj" "$src/fixtures/cpp/include" <<'PY'
import json, os, sys
proj, inc = sys.argv[1], sys.argv[2]
db = []
for name in "abc":
    f = os.path.join(proj, f"pch_{name}.cpp")
    open(f, "w").write(open(os.path.join(proj, "other.cpp")).read())
    db.append({"directory": proj, "file": f, "arguments": ["clang++", "-std=c++17", "-DVARIANT_" + name.upper(), "-I" + inc, "-c", f]})
os.makedirs(os.path.join(proj, "pchdb"), exist_ok=True)
json.dump(db, open(os.path.join(proj, "pchdb", "compile_commands.json"), "w"), indent=1)
PY
pch="$work/pch"
one() { "$cpp" --isolated -p pchdb --pch-dir "$pch" -j 1 --output-format json "$@" 2>/dev/null || true; }
newest() { ls -t "$pch"/*.pch | head -1; }
one pch_a.cpp > /dev/null; a=$(newest); sleep 1
one pch_b.cpp > /dev/null; b=$(newest); sleep 1
one pch_c.cpp > /dev/null; c=$(newest)
[[ $(ls "$pch"/*.pch | wc -l) -eq 3 && $a != "$b" && $b != "$c" ]] || fail "expected three PCHs: $(ls "$pch")"
size=$(stat -c %s "$a")
# Another run's PCH used in the last minute may be in use there and is kept: age them.
touch -d '300 seconds ago' "$a"; touch -d '200 seconds ago' "$b"; touch -d '100 seconds ago' "$c"
one pch_a.cpp > /dev/null  # a is used: now b is the least recently used
# A cap of two PCHs: running c (in use) evicts b, the least recently used; a stays.
one pch_c.cpp --pch-max-size $((size * 2 + size / 2)) > /dev/null
[[ -f $a && ! -f $b && -f $c ]] || fail "LRU: expected a and c kept, b evicted: $(ls -l --time-style=+%T "$pch")"
[[ ! -f ${b%.pch}.h ]] || fail "the evicted PCH's header was left behind"
# A tiny cap: only the PCH in use survives, and the findings are those without a PCH.
touch -d '100 seconds ago' "$pch"/*.pch
one pch_a.cpp pch_b.cpp pch_c.cpp --pch-max-size 1 > "$work/tiny.json"
[[ $(ls "$pch"/*.pch | wc -l) -eq 1 ]] || fail "tiny cap: $(ls "$pch")"
"$cpp" --isolated -p pchdb --no-pch --output-format json pch_a.cpp pch_b.cpp pch_c.cpp > "$work/nopch.json" 2>/dev/null || true
cmp -s "$work/tiny.json" "$work/nopch.json" || fail "tiny cap: findings differ from the run without PCH"
[[ "$(codes "$work/tiny.json")" == $'pch_a.cpp:TL101\npch_b.cpp:TL101\npch_c.cpp:TL101' ]] || fail "tiny cap findings: $(codes "$work/tiny.json")"
set +e
"$cpp" --isolated -p pchdb --pch-max-size lots pch_a.cpp > /dev/null 2> "$work/size.err"; rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q "expected a size such as 500M" "$work/size.err" || fail "--pch-max-size lots: $rc $(cat "$work/size.err")"
# The configuration's pch-max-size and pch-dir (relative to the file) are read too.
printf '[cpp]\nbuild-path = "pchdb"\npch-dir = "pch2"\npch-max-size = "1"\n' > torchlint.toml
"$cpp" -j 1 pch_a.cpp pch_b.cpp > /dev/null 2>&1 || true
[[ $(ls pch2/*.pch | wc -l) -eq 1 ]] || fail "[cpp] pch-dir / pch-max-size: $(ls pch2 2>&1)"
echo "PCH cache LRU: ok"
echo "cpp cache: ok"
