#!/usr/bin/env bash
# Installs every Debian package torchlint's build and tests need. Idempotent: when all
# are present it prints nothing and touches nothing. Works as root on a minimal Debian 12.
set -euo pipefail

PACKAGES=(
  ca-certificates git cmake make g++ pkg-config
  nodejs npm python3
  libtree-sitter-dev libtomlplusplus-dev libcli11-dev doctest-dev nlohmann-json3-dev
  zlib1g-dev libtorch-dev
  # the allocator torchlint links (optional for the build, used when present)
  libmimalloc-dev
  # torchlint-cpp (Clang LibTooling) and its benchmark against clang-tidy
  libclang-14-dev libclang-cpp14-dev llvm-14-dev clang-14 clang-tidy-14
  # the format check of the C++ tree (scripts/format.sh)
  clang-format-14
  # the bounded libFuzzer runs of the checkpoint readers (tests/fuzz)
  libclang-rt-14-dev
  # test-only: real torch for fixtures and the benchmark corpus, real pre-commit
  python3-torch pre-commit chromium
  # the Debian package test: a fresh Debian 12 root to install the .deb into; dpkg-shlibdeps
  debootstrap dpkg-dev
  # test-only: a real editor as the client of `torchlint server` (tests/lsp)
  neovim
  # the fleet driver (scripts/fleet/dask_fleet.py) and its LocalCluster test
  python3-distributed
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
# npm may come from outside dpkg (a Node.js distribution); accept it when it runs.
if [[ " ${missing[*]} " == *" npm "* ]] && command -v npm >/dev/null 2>&1; then
  missing=("${missing[@]/npm}")
fi
if [[ " ${missing[*]} " == *" nodejs "* ]] && command -v node >/dev/null 2>&1; then
  missing=("${missing[@]/nodejs}")
fi
read -r -a missing <<<"${missing[*]}"
[[ ${#missing[@]} -eq 0 ]] && exit 0

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "bootstrap: need root (or sudo) to install: ${missing[*]}" >&2; exit 2; }
  SUDO=sudo
fi
echo "bootstrap: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
