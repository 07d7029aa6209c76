#!/usr/bin/env bash
# TorchFix parity: lint TorchFix's own checker fixtures with torchlint and count how many
# of their expected `LINE:COL TORxxx` lines torchlint reports (through mapping.tsv).
#
#   bash bench/peers/torchfix/run.sh [TORCHFIX_GIT_DIR]
#
# TORCHFIX_GIT_DIR: a git directory (bare or not) of pytorch-labs/torchfix; default
# $TORCHFIX_GIT, else /work/.mirror/pytorch-labs+torchfix/repo, else a clone into
# build/torchfix-git. The fixtures are extracted into build/torchfix-src (git-ignored):
# TorchFix's files are never committed here. Needs build/torchlint and python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${TORCHLINT:-$root/build/torchlint}
[[ -x $bin ]] || { echo "run.sh: $bin is missing: build the torchlint target first" >&2; exit 2; }
git_dir=${1:-${TORCHFIX_GIT:-/work/.mirror/pytorch-labs+torchfix/repo}}
if ! git --git-dir="$git_dir" rev-parse HEAD >/dev/null 2>&1; then
  git_dir=$root/build/torchfix-git
  [[ -d $git_dir ]] || git clone --bare --quiet https://github.com/pytorch-labs/torchfix "$git_dir"
fi
exec python3 "$root/bench/peers/torchfix/score.py" --git-dir "$git_dir" --torchlint "$bin" \
  --mapping "$root/bench/peers/torchfix/mapping.tsv" --work "$root/build/torchfix-src"
