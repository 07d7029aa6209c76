#!/usr/bin/env bash
# End to end with the real Debian LibTorch headers: `torchlint check` on a directory with
# a LibTorch C++ trainer and a generated compile_commands.json runs torchlint-cpp and
# reports its findings in JSON (matching the `// expect:` marks) and SARIF (own run and
# automationDetails category); the first run builds the precompiled header of
# <torch/torch.h> in a private cache, the second (SARIF) uses it, and a run without the PCH
# gives the same findings; without torchlint-cpp it says so once.
# usage: cpp_e2e_test.sh TORCHLINT SOURCE_DIR EXPECT_MARKS
# (EXPECT_MARKS: tests/support/expect_marks_main.cpp, the tests' one reader of the marks)
set -euo pipefail
torchlint=$(realpath "$1")
src=$(realpath "$2")
expect_marks=$(realpath "$3")
if [[ ! -f /usr/include/torch/csrc/api/include/torch/torch.h ]]; then
  echo "LibTorch headers not installed (libtorch-dev): skipped"; exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"  # a cold PCH cache of our own
mkdir -p "$work/project/build"
cp "$src/fixtures/cpp/e2e/mnist_train.cpp" "$work/project/"
cat > "$work/project/build/compile_commands.json" <<JSON
[{"directory": "$work/project/build", "file": "$work/project/mnist_train.cpp",
  "command": "/usr/bin/c++ -std=gnu++17 -isystem /usr/include/torch/csrc/api/include -D_GLIBCXX_USE_CXX11_ABI=1 -O2 -o mnist_train.o -c $work/project/mnist_train.cpp"}]
JSON
cd "$work/project"
set +e
"$torchlint" check . --select ALL --no-cache --output-format json > "$work/out.json" 2> "$work/err.txt"
rc=$?
set -e
cat "$work/err.txt"
[[ $rc -eq 1 ]] || { echo "expected exit 1 (findings), got $rc"; exit 1; }
"$expect_marks" mnist_train.cpp > "$work/marks.json" || { echo "mnist_train.cpp: malformed expect marks"; exit 1; }
/usr/bin/python3 - "$work/out.json" mnist_train.cpp "$work/marks.json" <<'PY'
import json, sys
found = {(d["location"]["row"], d["code"]) for d in json.load(open(sys.argv[1])) if d["filename"].endswith(sys.argv[2])}
expected = {(m["line"], m["code"]) for m in json.load(open(sys.argv[3]))}
ok = True
for k in sorted(found - expected): print("Noisy:", k); ok = False
for k in sorted(expected - found): print("Missing:", k); ok = False
print(f"{len(expected)} marks, {len(found)} findings")
sys.exit(0 if ok else 1)
PY
"$torchlint" check . --select ALL --no-cache --output-format sarif > "$work/out.sarif" 2>/dev/null || true
/usr/bin/python3 - "$work/out.sarif" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
ids = [r["automationDetails"]["id"] for r in log["runs"]]
assert "torchlint/cpp/" in ids, ids
cpp = [r for r in log["runs"] if r["automationDetails"]["id"] == "torchlint/cpp/"][0]
assert cpp["results"] and all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".cpp") for r in cpp["results"])
print("SARIF runs:", ids)
PY
# The PCH was built once and cached; without it the findings are the same.
ls "$XDG_CACHE_HOME"/torchlint/pch/*.pch > /dev/null || { echo "no PCH in $XDG_CACHE_HOME/torchlint/pch"; exit 1; }
cpp=$(dirname "$torchlint")/torchlint-cpp
"$cpp" mnist_train.cpp --select ALL --output-format json --no-pch > "$work/nopch.json" 2>/dev/null || true
/usr/bin/python3 - "$work/out.json" "$work/nopch.json" <<'PY'
import json, sys
key = lambda d: (d["location"]["row"], d["location"]["column"], d["code"], d["message"])
with_pch = sorted(key(d) for d in json.load(open(sys.argv[1])) if d["filename"].endswith(".cpp"))
without = sorted(key(d) for d in json.load(open(sys.argv[2])))
assert with_pch == without, (with_pch, without)
print(f"PCH and no-PCH findings identical ({len(without)})")
PY
# Without torchlint-cpp: one note, Python linting goes on.
out=$(TORCHLINT_CPP=/nonexistent "$torchlint" check . --no-cache 2>&1 >/dev/null || true)
[[ $(grep -c "torchlint-cpp (the C++ front-end) was not found" <<<"$out") -eq 1 ]] || { echo "missing-binary note: $out"; exit 1; }
echo "cpp e2e: ok"
