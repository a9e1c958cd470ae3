#!/usr/bin/env bash
# One run on a GPU machine that does everything the course claims there, and keeps the logs:
# build, make check (every stage, every wrong variant), the sanitizers, every chapter's benchmark,
# and the SASS of every stage captured for committing (chapters/<chapter>/sass/sm_<cc>/).
#   harness/reference_run.sh OUTDIR [steps...]     steps: build check sanitize bench sass (default: all)
set -uo pipefail
out=${1:?usage: harness/reference_run.sh OUTDIR [build check sanitize bench sass]}
shift
steps=${*:-build check sanitize bench sass}
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
      cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
      python3 - "$cuobjdump" "$out/sass" <<'PY'
import json, pathlib, subprocess, sys
cuobjdump, dest = sys.argv[1], pathlib.Path(sys.argv[2])
for s in json.load(open("build/stages.json"))["stages"]:
    if s["variant"] != "solution":
        continue
    chapter, stage = s["id"].split("/")
    text = subprocess.run([cuobjdump, "-sass", s["objects"][0]], capture_output=True, text=True, check=True).stdout
    (dest / chapter).mkdir(parents=True, exist_ok=True)
    (dest / chapter / f"{stage}.sass").write_text(text)
    print("captured", s["id"], len(text.splitlines()), "lines")
PY
      (cd "$out" && tar czf sass.tgz sass && rm -rf sass) ;;
  esac
done
exit $status
