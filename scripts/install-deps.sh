#!/usr/bin/env bash
# Installs the Debian 12 packages moetrace needs to build, test and fuzz.
# Idempotent: returns at once when everything is present.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  protobuf-compiler libprotobuf-dev libzstd-dev zlib1g-dev libdeflate-dev
  libcli11-dev libfmt-dev libboost-dev libsimdjson-dev libsqlite3-dev
  libgtest-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev
  clang libclang-rt-14-dev
  libtomlplusplus-dev libkainjow-mustache-dev
)
# Extra packages a caller asks for (for example: chromium for the browser test).
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
