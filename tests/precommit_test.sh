#!/usr/bin/env bash
# The real pre-commit with this repository's .pre-commit-hooks.yaml as a hook source:
# a staged violation fails the commit and prints the finding, a clean file passes, and
# a commit with no Python file passes.
set -euo pipefail
torchlint=$1
source_dir=$2
command -v pre-commit >/dev/null || { echo "pre-commit is not installed (scripts/bootstrap.sh installs it)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PRE_COMMIT_HOME=$work/cache HOME=$work/home
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME" "$work/bin"
ln -s "$torchlint" "$work/bin/torchlint"
export PATH=$work/bin:$PATH

# The hook source: this repository's manifest in a git repository of its own, as a user's
# checkout of a torchlint release would be.
hooks=$work/hooks
mkdir -p "$hooks"
cp "$source_dir/.pre-commit-hooks.yaml" "$hooks/"
git -C "$hooks" init -q
git -C "$hooks" add .pre-commit-hooks.yaml
git -C "$hooks" commit -qm hooks
rev=$(git -C "$hooks" rev-parse HEAD)

project=$work/project
mkdir -p "$project"
cd "$project"
git init -q
# The project's configuration, using the hooks named.
write_config() {
  { printf 'repos:\n  - repo: %s\n    rev: %s\n    hooks:\n' "$hooks" "$rev"
    for id in "$@"; do printf '      - id: %s\n' "$id"; done; } >.pre-commit-config.yaml
}
write_config torchlint
git add .pre-commit-config.yaml
git commit -qm config --no-verify
pre-commit install >/dev/null

fail() { echo "FAIL: $1" >&2; exit 1; }

# 1. A violation fails the commit and the finding is printed.
printf 'import torch\nmodel = torch.nn.DataParallel(net)\n' >bad.py
git add bad.py
if git commit -qm bad >"$work/out1" 2>&1; then cat "$work/out1"; fail "commit with a violation passed"; fi
grep -q "bad.py:2:9: TL401" "$work/out1" || { cat "$work/out1"; fail "finding not printed"; }
git reset -q bad.py
rm bad.py
echo "ok   violation blocks the commit"

# 2. A clean file passes.
printf 'import torch\nx = torch.zeros(3)\n' >clean.py
git add clean.py
git commit -qm clean >"$work/out2" 2>&1 || { cat "$work/out2"; fail "clean commit failed"; }
echo "ok   clean file commits"

# 3. No Python file staged: the hook is skipped and the commit passes.
echo notes >README.txt
git add README.txt
git commit -qm docs >"$work/out3" 2>&1 || { cat "$work/out3"; fail "commit without Python files failed"; }
echo "ok   commit without Python files"

# 4. The project's configuration applies to the hook too.
printf '[tool.torchlint]\nignore = ["TL401"]\n' >pyproject.toml
printf 'import torch\nmodel = torch.nn.DataParallel(net)\n' >ignored.py
git add pyproject.toml ignored.py
git commit -qm configured >"$work/out4" 2>&1 || { cat "$work/out4"; fail "configured ignore not honoured"; }
echo "ok   [tool.torchlint] honoured by the hook"

# 5. The checkpoint hook: staged binaries are checkpoints by their bytes. A `vocab.bin`
# that is no checkpoint is skipped with a note; a pickle that runs a command is found
# whatever its name, and blocks the commit.
write_config torchlint torchlint-checkpoints
git add .pre-commit-config.yaml
git commit -qm "checkpoint hook" --no-verify
printf '\x00\x01\x02vocabulary\x00\xff\xfe' >vocab.bin
git add vocab.bin
git commit -qm vocab >"$work/out5" 2>&1 || { cat "$work/out5"; fail "a staged non-checkpoint .bin failed the commit"; }
echo "ok   a non-checkpoint .bin is skipped"
printf '\x80\x02cos\nsystem\nq\x00X\x07\x00\x00\x00echo hiq\x01\x85q\x02Rq\x03.' >weights.epoch4
git add weights.epoch4
if git commit -qm evil >"$work/out6" 2>&1; then cat "$work/out6"; fail "a dangerous pickle was committed"; fi
grep -q "weights.epoch4:1:1: TL81" "$work/out6" || { cat "$work/out6"; fail "the dangerous pickle was not reported"; }
echo "ok   a dangerous pickle with an unusual name blocks the commit"
