#!/usr/bin/env bash
# Scaffolds a new rule (like clang-tidy's add_new_check.py): its implementation, its doc,
# must-flag and must-not-flag fixtures and its catalog line. Nothing else is edited: the
# build lists every rules/<kind>/TLnnn-name.cpp by itself (rules/CMakeLists.txt). The
# rule then builds, is listed by `torchlint rules`, and the catalog test checks it; fill in
# the logic, the doc and the fixtures, and add the code to its checklist item
# (checklists/pytorch-best-practices.toml). Logic another rule needs too goes in
# rules/python/shared/ (a .h/.cpp pair), not in the rule's file.
#
# usage: scripts/new_rule.sh python|checkpoint|cpp CODE NAME [CHECKLIST_ITEM]
#   scripts/new_rule.sh python TL220 dataloader-prefetch-factor A2
#   scripts/new_rule.sh cpp TL202 dataloader-pin-memory      # a C++ twin of a catalog code
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-}
code=${2:-}
name=${3:-}
item=${4:-TOOL}
die() { echo "new_rule.sh: error: $1" >&2; exit 2; }
[[ $kind =~ ^(python|checkpoint|cpp)$ ]] || die "KIND must be python, checkpoint or cpp (usage: new_rule.sh KIND CODE NAME [CHECKLIST_ITEM])"
[[ $code =~ ^TL[0-9]{3}$ ]] || die "CODE must look like TL220"
[[ $name =~ ^[a-z][a-z0-9]*(-[a-z0-9]+)*$ ]] || die "NAME must be kebab-case, like dataloader-prefetch-factor"
catalog=$root/rules/catalog.def
in_catalog=0
grep -q "TORCHLINT_CATALOG(\"$code\"" "$catalog" && in_catalog=1
if [[ $kind != cpp && $in_catalog == 1 ]]; then die "$code is already in rules/catalog.def"; fi
if [[ $kind == cpp && $in_catalog == 0 ]]; then die "$code is not in rules/catalog.def: declare the rule (python KIND) first, or add its line"; fi
# snake_case identifier and CamelCase class name from the kebab name.
ident=${name//-/_}
class=$(echo "$name" | sed -E 's/(^|-)([a-z])/\U\2/g')
base="$code-$name"

write() {  # write FILE, refusing to overwrite
  [[ -e $1 ]] && die "$1 exists"
  mkdir -p "$(dirname "$1")"
  cat >"$1"
  echo "created ${1#"$root"/}"
}

doc() {
  cat <<EOF
# $code: $name

One sentence that says what is wrong (it is the rule's summary everywhere).

## What it does

What the rule matches, exactly.

## Why is this bad?

What goes wrong in training, evaluation or production.

## Example

\`\`\`python
# code that is flagged
\`\`\`

## Use instead

\`\`\`python
# the fixed code
\`\`\`

## Not flagged

- Near misses the rule deliberately stays silent on.

## Options

None.

## References

- 
EOF
}

case $kind in
python)
  write "$root/rules/python/$base.cpp" <<EOF
// $code $name: TODO one line on what the rule flags.
#include "catalog.h"
#include "python/rule.h"

namespace torchlint {
namespace python {
namespace {

class $class final : public Rule {
 public:
  void on_call(const CallEvent& call, RuleContext& ctx) override {
    (void)call;
    (void)ctx;
  }
};

}  // namespace
}  // namespace python

python::RuleEntry ${ident}_rule() {
  return python::rule_entry<python::$class>(catalog_entry("$code"));
}

}  // namespace torchlint
EOF
  doc | write "$root/rules/python/$base.md"
  write "$root/fixtures/python/$base/bad_example.py" <<EOF
"""Code the rule must flag: each finding is marked on its line."""
import torch

model = torch.nn.Linear(2, 2)  # expect: $code
EOF
  write "$root/fixtures/python/$base/good_example.py" <<EOF
"""A near miss the rule must not flag."""
import torch

model = torch.nn.Linear(2, 2)
EOF
  echo "TORCHLINT_CATALOG(\"$code\", \"$name\", kWarning, true, false, \"\", \"high\", (\"$item\"), (kPython))" >>"$catalog"
  echo "declared in rules/catalog.def"
  ;;
checkpoint)
  write "$root/rules/checkpoint/$base.cpp" <<EOF
// $code $name: TODO one line on what the rule flags in a checkpoint.
#include "catalog.h"
#include "checkpoint/rule.h"

namespace torchlint {
namespace ckpt {
namespace {

class $class final : public CheckpointRule {
 public:
  void check(const Checkpoint& checkpoint, CheckpointContext& ctx) const override {
    (void)checkpoint;
    (void)ctx;
  }
};

}  // namespace
}  // namespace ckpt

ckpt::CheckpointRuleEntry ${ident}_rule() {
  return ckpt::checkpoint_rule_entry<ckpt::$class>(catalog_entry("$code"));
}

}  // namespace torchlint
EOF
  doc | sed 's/```python/```text/' | write "$root/rules/checkpoint/$base.md"
  write "$root/fixtures/checkpoints/$base/cases.toml" <<EOF
# The cases of $code, made by fixtures/checkpoints/make.py with the makers in makers.py
# beside this file: \`file\` is relative to this folder, \`expect\` the exact codes it gives.

[[case]]
file = "bad_example.pt"
maker = "bad_example"
expect = ["$code"]

[[case]]
file = "good_example.pt"
maker = "good_example"
expect = []
EOF
  write "$root/fixtures/checkpoints/$base/makers.py" <<EOF
"""Makers of the $code cases: each writes one checkpoint with the real torch.save. They
run inside make.py and use its helpers (save, net, torch) as globals."""


def bad_example(path):
    """A checkpoint the rule must flag."""
    save({"model": net().state_dict()}, path)  # noqa: F821 (make.py's helpers)


def good_example(path):
    """A near miss the rule must not flag."""
    save({"model": net().state_dict()}, path)  # noqa: F821
EOF
  echo "TORCHLINT_CATALOG(\"$code\", \"$name\", kWarning, true, false, \"\", \"high\", (\"$item\"), (kCheckpoint))" >>"$catalog"
  echo "declared in rules/catalog.def"
  echo "next: make the cases in fixtures/checkpoints/$base/ mean what they say"
  ;;
cpp)
  write "$root/rules/cpp/$base.cpp" <<EOF
// $code $name (C++): TODO one line on what the rule flags in LibTorch code.
#include "cpp/rule.h"

namespace torchlint::cpp {
namespace {

class $class final : public Rule {
 public:
  explicit $class(Context& ctx) : Rule(ctx) {}
  void register_matchers(clang::ast_matchers::MatchFinder& finder) override { (void)finder; }
  void run(const clang::ast_matchers::MatchFinder::MatchResult& result) override { (void)result; }
};

}  // namespace

std::unique_ptr<Rule> make_${ident}(Context& ctx) { return std::make_unique<$class>(ctx); }

}  // namespace torchlint::cpp
EOF
  write "$root/rules/cpp/$base.md" <<EOF
## C++

What the C++ rule matches (declarations, not spellings).
EOF
  write "$root/fixtures/cpp/$base/bad_example.cpp" <<EOF
// Code the rule must flag.
#include <torch/torch.h>

int main() { return 0; }  // expect: $code
EOF
  write "$root/fixtures/cpp/$base/good_example.cpp" <<EOF
// A near miss the rule must not flag.
#include <torch/torch.h>

int main() { return 0; }
EOF
  echo "next: add kCpp to the code's languages in rules/catalog.def"
  ;;
esac
