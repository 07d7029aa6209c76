#!/usr/bin/env bash
# Lays out the real-code corpus's sources under build/realcode-src/<owner>+<name>/ (a build
# folder: git ignored, and skipped when torchlint walks this repository) from snapshots of the public repositories named in manifest/*.tsv: the whole
# tree at the manifest's commit (so helpers and launchers beside a labelled file are
# there, as in a user's checkout), then checks every labelled file's sha256.
#
# The snapshots are bare git directories; by default they are looked for under
# $TORCHLINT_MIRRORS (default /work/.mirror)/<owner>+<name>/repo, where a session's
# `fetch` puts them. Any clone works: TORCHLINT_MIRRORS=DIR with DIR/<owner>+<name>/repo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mirrors=${TORCHLINT_MIRRORS:-/work/.mirror}
out="${TORCHLINT_REALCODE_SRC:-$here/../../build/realcode-src}"
mkdir -p "$out"
status=0
for manifest in "$here"/manifest/*.tsv; do
  slug=$(basename "$manifest" .tsv)
  git_dir="$mirrors/$slug/repo"
  [[ -d "$git_dir" ]] || git_dir="$mirrors/$slug/.git"
  if [[ ! -d "$git_dir" ]]; then
    echo "materialize: no snapshot of $slug under $mirrors (fetch github:${slug/+//} first)" >&2
    status=1
    continue
  fi
  commit=$(awk -F'\t' 'NR == 2 { print $2 }' "$manifest")
  dest="$out/$slug"
  if [[ ! -f "$dest/.commit" || "$(cat "$dest/.commit")" != "$commit" ]]; then
    rm -rf "$dest"
    mkdir -p "$dest"
    # Source and project files only, blob by blob: a snapshot may lack its large binary
    # files, which `git archive` would stop at.
    git --git-dir="$git_dir" ls-tree -r "$commit" |
      while IFS=$'\t' read -r meta file; do
        read -r _mode type blob <<<"$meta"
        [[ $type == blob ]] || continue
        case "$file" in
          *.py | *.pyi | *.ipynb | *.cpp | *.cc | *.cxx | *.h | *.hpp | *.toml | *.cfg | *.txt | setup.py) ;;
          *) continue ;;
        esac
        mkdir -p "$dest/$(dirname "$file")"
        git --git-dir="$git_dir" cat-file blob "$blob" >"$dest/$file" 2>/dev/null || rm -f "$dest/$file"
      done
    # A project marker, as a user's clone has (.git): the repository is one project.
    mkdir -p "$dest/.git"
    echo "$commit" >"$dest/.commit"
  fi
  while IFS=$'\t' read -r repo row_commit path sha; do
    [[ "$repo" == "repo" ]] && continue
    got=$(sha256sum "$dest/$path" 2>/dev/null | cut -d' ' -f1 || true)
    if [[ "$got" != "$sha" ]]; then
      echo "materialize: $slug/$path: sha256 $got, manifest says $sha" >&2
      status=1
    fi
  done <"$manifest"
done
exit $status
