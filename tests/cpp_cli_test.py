#!/usr/bin/env python3
"""torchlint-cpp's command line around the fixtures: the messages for a missing compilation
database and a missing -p database, and the fallback include path for files without a
compile command. (The fixtures' findings against their `// expect:` marks are
tests/cpp_golden_test.cpp.)

usage: cpp_cli_test.py TORCHLINT_CPP SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

exe, src = sys.argv[1], os.path.abspath(sys.argv[2])
include = os.path.join(src, "fixtures", "cpp", "include")
failures = 0

# A file without any compilation database: one clear note, lints with the fallback flags.
lonely = os.path.join(tempfile.mkdtemp(prefix="torchlint-cpp-lonely-"), "lonely", "main.cpp")
os.makedirs(os.path.dirname(lonely), exist_ok=True)
with open(lonely, "w") as fh:
    fh.write("int main() { return 0; }\n")
p = subprocess.run([os.path.abspath(exe), "--output-format", "json", lonely], capture_output=True, text=True, timeout=120, cwd="/")
if p.returncode != 0 or "no compile_commands.json found" not in p.stderr or p.stderr.count("note: no compile_commands") != 1:
    failures += 1
    print("missing database: expected exit 0 and one note, got", p.returncode, p.stderr)

# -p without a database: exit 2 with a clear error, no crash.
p = subprocess.run([exe, "-p", os.path.dirname(lonely), lonely], capture_output=True, text=True, timeout=120)
if p.returncode != 2 or "no compile_commands.json in this directory" not in p.stderr:
    failures += 1
    print("-p without database: expected exit 2 and an error, got", p.returncode, p.stderr)

# Files without a compile command, in one run (fallback include path, driver.cpp):
# - each file gets only its own program's include/ folders: `b` comes first and has a
#   train_setup.h of its own, which must not shadow `a`'s (a's TL101 is must-flag: with b's
#   header `Model` is undeclared and the training is not seen; b seeds: must-not-flag);
# - a quoted project header elsewhere in the repository is found when exactly one file
#   has that path (data_io.h: no "not found" note), and stays a stand-in when two do (dup.h).
repo = os.path.join(tempfile.mkdtemp(prefix="torchlint-cpp-fallback-"), "repo")
layout = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "b/include/train_setup.h": "#pragma once\nconstexpr int kEpochs = 3;\n",
    "b/src/main.cpp": "#include <fixture_net.h>\n#include \"train_setup.h\"\nint main() {\n  torch::manual_seed(1);\n  Net model;\n"
                      "  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));\n"
                      "  for (int e = 0; e < kEpochs; ++e) {\n    optimizer.zero_grad();\n"
                      "    auto loss = model->forward(torch::randn({8, 784})).sum();\n    loss.backward();\n    optimizer.step();\n  }\n}\n",
    "a/include/train_setup.h": "#pragma once\n#include <fixture_net.h>\nusing Model = Net;\n",
    "utils/io/include/data_io.h": "#pragma once\n#include <fixture_net.h>\ninline torch::Tensor load_batch() { return torch::randn({8, 784}); }\n",
    "x/dup.h": "#pragma once\n", "y/dup.h": "#pragma once\n",
    "a/src/main.cpp": "#include <fixture_net.h>\n#include \"train_setup.h\"\n#include \"data_io.h\"\n#include \"dup.h\"\n"
                      "int main() {\n  Model model;\n"
                      "  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));\n"
                      "  for (int e = 0; e < 3; ++e) {\n    optimizer.zero_grad();\n"
                      "    auto loss = model->forward(load_batch()).sum();\n    loss.backward();\n    optimizer.step();\n  }\n}\n",
}
for rel, text in layout.items():
    path = os.path.join(repo, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
p = subprocess.run([os.path.abspath(exe), "--output-format", "json", "--select", "ALL", "--extra-arg=-I" + include, "-j", "2",
                    "b/src/main.cpp", "a/src/main.cpp"], capture_output=True, text=True, timeout=600, cwd=repo)
got = {(os.path.normpath(d["filename"]), d["location"]["row"], d["code"]) for d in json.loads(p.stdout or "[]")}
want = {("a/src/main.cpp", 5, "TL101")}
if got != want or "'data_io.h'" in p.stderr or "'train_setup.h'" in p.stderr or "'dup.h'" not in p.stderr:
    failures += 1
    print("fallback include path: expected", want, "got", got, p.stderr)

print(f"torchlint-cpp command line: {failures} failures")
sys.exit(1 if failures else 0)
