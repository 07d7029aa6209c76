#!/usr/bin/env bash
# The Debian package, installed with apt into a fresh Debian 12 root (debootstrap, no
# container): `torchlint check` and the pre-commit hook work against the installed binary,
# the man page and the bash completion are where Debian looks for them.
# usage: deb_install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source_dir=$2
if [[ $(id -u) -ne 0 ]]; then echo "SKIP: needs root for debootstrap and chroot"; exit 77; fi
command -v debootstrap >/dev/null || { echo "debootstrap is not installed (scripts/bootstrap.sh installs it)" >&2; exit 1; }

work=$(mktemp -d)
cleanup() {
  umount "$work/root/proc" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $1" >&2; exit 1; }

# The package of the torchlint component only (torchlint-cpp and the probe pull in Clang
# and LibTorch; they have packages of their own).
(cd "$build" && cpack -G DEB -D CPACK_COMPONENTS_ALL=torchlint -B "$work/pkg" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/pkg/torchlint_*_amd64.deb)
echo "ok   built $(basename "$deb")"

# A minimal Debian 12 root, kept between runs in the build tree (it only saves time).
cache=$build/deb-test-root.tar
root=$work/root
mkdir -p "$root"
if [[ -f $cache ]]; then
  tar -xf "$cache" -C "$root"
else
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; fail "debootstrap failed"; }
  tar -cf "$cache" -C "$root" .
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
in_root apt-get update -qq >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get update failed"; }
in_root apt-get install -y -qq --no-install-recommends "/tmp/$(basename "$deb")" git pre-commit >>"$work/apt.log" 2>&1 ||
  { tail -30 "$work/apt.log"; fail "apt could not install the package"; }
echo "ok   apt installed the package and its dependencies"

in_root torchlint --version | grep -q "^torchlint 0\." || fail "torchlint --version"
[[ -f $root/usr/share/man/man1/torchlint.1.gz || -f $root/usr/share/man/man1/torchlint.1 ]] || fail "no man page"
[[ -f $root/usr/share/bash-completion/completions/torchlint ]] || fail "no bash completion"
echo "ok   version, man page, completion"

# torchlint check against the installed binary.
mkdir -p "$root/work/proj"
printf 'import torch\nmodel = torch.nn.DataParallel(net)\n' >"$root/work/proj/bad.py"
set +e
in_root sh -c 'cd /work/proj && torchlint check bad.py --no-cache --output-format concise' >"$work/check.out" 2>&1
rc=$?
set -e
[[ $rc -eq 1 ]] || { cat "$work/check.out"; fail "torchlint check exit $rc, expected 1"; }
grep -q "bad.py:2:9: TL401" "$work/check.out" || { cat "$work/check.out"; fail "finding not reported"; }
echo "ok   torchlint check finds the violation"

# The pre-commit hook, from this repository's manifest, runs the installed torchlint.
mkdir -p "$root/work/hooks"
cp "$source_dir/.pre-commit-hooks.yaml" "$root/work/hooks/"
cat >"$root/work/hook_test.sh" <<'SH'
set -eu
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export PRE_COMMIT_HOME=/work/pre-commit-cache
cd /work/hooks && git init -q && git add . && git commit -qm hooks
rev=$(git rev-parse HEAD)
cd /work/proj && git init -q
printf 'repos:\n  - repo: /work/hooks\n    rev: %s\n    hooks:\n      - id: torchlint\n' "$rev" >.pre-commit-config.yaml
git add .pre-commit-config.yaml && git commit -qm config --no-verify
pre-commit install >/dev/null
git add bad.py
if git commit -qm bad; then echo "the hook let a violation through"; exit 1; fi
git reset -q bad.py && rm bad.py
printf 'import torch\nx = torch.zeros(3)\n' >clean.py && git add clean.py && git commit -qm clean
SH
in_root sh /work/hook_test.sh >"$work/hook.out" 2>&1 || { cat "$work/hook.out"; fail "pre-commit hook with the installed torchlint"; }
grep -q "TL401" "$work/hook.out" || { cat "$work/hook.out"; fail "the hook did not print the finding"; }
echo "ok   pre-commit hook blocks a violation and passes a clean file"
