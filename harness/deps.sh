#!/usr/bin/env bash
# Checks what the build needs (CUDA Toolkit, cmake >= 3.24, a C++17 compiler, Catch2, python3)
# and installs what is missing when run as root on Debian/Ubuntu; otherwise prints the one
# command that does. Quiet when everything is there.
set -u
missing_pkgs=()
problems=()

nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
[ -z "$nvcc" ] && problems+=("the CUDA Toolkit (nvcc) is not installed: see https://developer.nvidia.com/cuda-downloads")

if ! command -v cmake >/dev/null; then
  missing_pkgs+=(cmake)
elif ! cmake --version | awk 'NR==1 { split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 24)) }'; then
  problems+=("cmake $(cmake --version | awk 'NR==1{print $3}') is older than 3.24")
fi
command -v g++ >/dev/null || missing_pkgs+=(g++)
command -v python3 >/dev/null || missing_pkgs+=(python3)
if [ ! -e /usr/include/catch2/catch.hpp ] && [ ! -e /usr/include/catch2/catch_all.hpp ] &&
   [ ! -e /usr/local/include/catch2/catch_all.hpp ] && [ ! -e /usr/local/include/catch2/catch.hpp ]; then
  missing_pkgs+=(catch2)
fi
command -v ninja >/dev/null || missing_pkgs+=(ninja-build)

if [ ${#missing_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing ${missing_pkgs[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_pkgs[@]}" >/dev/null) ||
      problems+=("apt-get install ${missing_pkgs[*]} failed")
  else
    problems+=("missing: ${missing_pkgs[*]}; install with: sudo apt-get install ${missing_pkgs[*]}")
  fi
fi
# Optional: MPI for chapter 14's stage 11 (ranks). Without it that stage alone is not built, so a
# missing MPI is installed where we can (root, apt) and otherwise only mentioned.
if ! command -v mpicxx >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing libopenmpi-dev (chapter 14, stage 11)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenmpi-dev openmpi-bin >/dev/null ||
      echo "deps: apt-get install libopenmpi-dev failed: stage 11 of chapter 14 will not be built" >&2
  else
    echo "deps: no MPI: stage 11 of chapter 14 will not be built (sudo apt-get install libopenmpi-dev)"
  fi
fi
if [ ${#problems[@]} -gt 0 ]; then
  printf 'deps: %s\n' "${problems[@]}" >&2
  exit 1
fi
exit 0
