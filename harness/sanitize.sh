#!/usr/bin/env bash
# Runs one GPU test program under compute-sanitizer (memcheck, racecheck or synccheck) and fails
# on any report. Plain tests miss warp races and out-of-bounds reads that happen to land in
# mapped memory; the sanitizer does not. The [large] tests are left out (the sanitizer runs
# kernels 10-100x slower). Without a GPU or compute-sanitizer it prints a COURSE_SKIP line.
#   sanitize.sh [--expect-reject] TOOL PROGRAM
# With --expect-reject (a planted wrong variant whose bug only a sanitizer sees: a warp race) it
# passes only if the tool reports an error.
set -u
expect_reject=0
if [ "${1:-}" = --expect-reject ]; then expect_reject=1; shift; fi
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
# A program that was never built is an error, not a rejection: with --expect-reject the
# sanitizer's failure to start it would otherwise pass for the tool catching the planted bug.
if [ ! -x "$program" ]; then
  echo "sanitize.sh: $program is not built (cmake --build build --target $(basename "$program"))"
  exit 2
fi
extra=()
[ "$tool" = memcheck ] && extra=(--leak-check full)
# The [large] and [sweep] tests are left out: the tools run kernels 10-100x slower. Each test
# case prints its duration (--durations yes): the log says where a slow sanitizer run goes.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The tools slow kernels down 10-100x: ctest's TIMEOUT, not the test main's watchdog, bounds the run;
# COURSE_SANITIZER lets the tests shrink their big sizes (course::test::sanitizer_size).
COURSE_SANITIZER=$tool COURSE_TEST_TIMEOUT=0 "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 86 --print-limit 20 "$program" "~[large]~[sweep]" --durations yes 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# Racecheck files some hazards as warnings (e.g. lanes of one warp writing and reading shared
# memory with no __syncwarp between): races all the same, so they count as errors here.
warnings=$(sed -n 's/.*RACECHECK SUMMARY: .*(\([0-9]*\) errors*, \([0-9]*\) warnings*).*/\2/p' "$log" | tail -n 1)
if [ -n "$warnings" ] && [ "$warnings" != 0 ]; then
  echo "sanitize.sh: racecheck reported $warnings hazard warning(s): counted as errors"
  [ "$status" = 0 ] && status=86
fi
# Each report explained: both accesses of a race, the memory, what would order them (one line of
# compute-sanitizer's own says only the first place).
if [ "$status" != 0 ] && [ $expect_reject = 0 ]; then
  # --program: a header the log names bare is found in the stage's own folder first, as make
  # check finds it, so the report names both accesses with their source lines.
  python3 "$(dirname "$0")/sanitizer_report.py" --tool "$tool" --program "$program" "$log" || true
fi
if [ $expect_reject = 1 ]; then
  case "$status" in
    0) echo "WRONG STAGE ACCEPTED: $tool reported nothing and the tests passed on a stage built to be wrong"; exit 1 ;;
    86) echo "expected: $tool rejected this deliberately wrong stage" ;;
    *) echo "expected: the deliberately wrong stage was rejected (the tests failed under $tool, exit $status)" ;;
  esac
  exit 0
fi
exit "$status"
