#!/usr/bin/env bash
# One run on a GPU machine that does everything the course claims there, and keeps the logs:
# build, make check (every stage, every wrong variant), the sanitizers, every chapter's benchmark,
# the SASS of every stage captured for committing (chapters/<chapter>/sass/sm_<cc>/), and the
# Nsight Compute profiles of every stage (chapters/<chapter>/profiles/sm_<cc>/).
#   harness/reference_run.sh OUTDIR [steps...]   steps: build check sanitize bench sass profile (default: all)
set -uo pipefail
out=${1:?usage: harness/reference_run.sh OUTDIR [build check sanitize bench sass profile]}
shift
steps=${*:-build check sanitize bench sass profile}
mkdir -p "$out"
cd "$(dirname "$0")/.."
status=0
step() { echo; echo "=== $1 ($(date -u +%H:%M:%S))"; }
for s in $steps; do
  case $s in
    build)
      step build
      nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm,clocks.max.mem --format=csv | tee "$out/gpu.txt"
      make build JOBS="$(nproc)" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
      grep -E "warning|CUDA architectures" "$out/build.log" | sort | uniq | head -20 ;;
    check)
      step "make check"
      make check JOBS=4 2>&1 | tee "$out/check.log" | tail -25 || status=1 ;;
    sanitize)
      step "make sanitize"
      make sanitize 2>&1 | tee "$out/sanitize.log" | tail -30 || status=1 ;;
    bench)
      step "make tour"
      mkdir -p results
      make tour 2>&1 | tee "$out/tour.log" || status=1
      cp results/*.json "$out/" 2>/dev/null ;;
    sass)
      step "SASS capture"
      make sass-capture JOBS="$(nproc)" 2>&1 | tee "$out/sass.log" | tail -5 || status=1 ;;
    profile)
      step "profile capture"
      make profile-capture JOBS="$(nproc)" 2>&1 | tee "$out/profile.log" | tail -10 || status=1 ;;
  esac
done
exit $status
