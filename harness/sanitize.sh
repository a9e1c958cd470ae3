#!/usr/bin/env bash
# Runs one GPU test program under compute-sanitizer (memcheck, racecheck or synccheck) and fails
# on any report. Plain tests miss warp races and out-of-bounds reads that happen to land in
# mapped memory; the sanitizer does not. The [large] tests are left out (the sanitizer runs
# kernels 10-100x slower). Without a GPU or compute-sanitizer it prints a COURSE_SKIP line.
set -u
tool=$1
program=$2
sanitizer=$(command -v compute-sanitizer || true)
for dir in "${CUDA_HOME:-}/bin" /usr/local/cuda/bin; do
  [ -z "$sanitizer" ] && [ -x "$dir/compute-sanitizer" ] && sanitizer=$dir/compute-sanitizer
done
if [ -z "$sanitizer" ]; then
  echo "COURSE_SKIP: compute-sanitizer not found (it ships with the CUDA Toolkit: apt-get install cuda-sanitizer-13-0)"
  exit 0
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "COURSE_SKIP: no GPU: sanitizer runs need one"
  exit 0
fi
extra=()
[ "$tool" = memcheck ] && extra=(--leak-check full)
exec "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 86 --print-limit 20 "$program" "~[large]"
