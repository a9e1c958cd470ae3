#!/usr/bin/env bash
# Every MPI launch the course makes goes through here (make nbody ARGS='--ranks P', the stage-11
# tests, the ranks bench), so that each gets the same environment:
#   - NCCL_NVLS_ENABLE=0: NVLink SHARP (multicast) stays off; on a shared host it can take the
#     GPUs out of service for others;
#   - --oversubscribe: more ranks than cores is allowed (ranks mostly wait on their GPU);
#   - --allow-run-as-root when run as root (containers, the course's GPU machines).
#   mpirun.sh -n P PROGRAM [ARGS...]
# MPIEXEC (default: mpirun on the PATH) names another launcher.
set -eu
launcher=${MPIEXEC:-mpirun}
if ! command -v "$launcher" >/dev/null 2>&1; then
  echo "mpirun.sh: $launcher not found: install Open MPI (apt-get install openmpi-bin libopenmpi-dev)" >&2
  exit 2
fi
export NCCL_NVLS_ENABLE=0
extra=(--oversubscribe -x NCCL_NVLS_ENABLE)
# Open MPI passes these on by name (-x); the tests read them.
for var in COURSE_RANKS_TRANSPORT COURSE_SEED COURSE_SANITIZER COURSE_TEST_TIMEOUT; do
  [ -n "${!var:-}" ] && extra+=(-x "$var")
done
[ "$(id -u)" = 0 ] && extra+=(--allow-run-as-root)
exec "$launcher" "${extra[@]}" "$@"
