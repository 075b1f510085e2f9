#!/usr/bin/env bash
# Installs, from Debian's packages only, whatever clustersweep needs to build and test.
# Idempotent and non-interactive: packages already present are skipped; apt waits for the dpkg lock.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  openmpi-bin libopenmpi-dev libhdf5-openmpi-dev hdf5-tools
  libboost-program-options-dev libeigen3-dev libfmt-dev libtomlplusplus-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  pybind11-dev python3-dev python3-numpy python3-pandas python3-xarray python3-h5netcdf
)
if [[ "${1:-}" == "--test" ]]; then
  # The real-scheduler tests (iproute2 and util-linux for the multi-node cluster's network and UTS
  # namespaces), the h5py reader tests, the Python module's `pip install` into a virtual
  # environment, the headless SVG render test, the format check, the fuzzers (clang, and what clang
  # only recommends: its libFuzzer and sanitizer runtimes, and llvm-symbolizer, without which their
  # reports show bare addresses).
  packages+=(slurm-wlm munge iproute2 util-linux python3-h5py python3-venv python3-pip python3-setuptools python3-wheel
             chromium clang-format clang libclang-rt-dev llvm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q -o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
# A stock Slurm/munge service started by the package is not ours; block service starts during install.
policy_made=0
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
  $sudo chmod 755 /usr/sbin/policy-rc.d
  policy_made=1
fi
trap '[[ $policy_made -eq 1 ]] && $sudo rm -f /usr/sbin/policy-rc.d' EXIT
$sudo apt-get "${apt_opts[@]}" update
$sudo apt-get "${apt_opts[@]}" install --no-install-recommends "${missing[@]}"
