#!/usr/bin/env python3
"""Says, before `make check` runs the tests, what will be skipped and why: GPU tests on a machine
with no usable GPU, and exercise stages still holding their COURSE_TODO stub (TODO)."""
import json
import pathlib
import shutil
import subprocess
import sys


def gpu_reason():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "no NVIDIA driver (nvidia-smi not found)"
    run = subprocess.run([smi, "-L"], capture_output=True, text=True)
    if run.returncode != 0 or "GPU" not in run.stdout:
        return "nvidia-smi finds no usable GPU"
    return None


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    reason = gpu_reason()
    if reason:
        print(f"note: {reason}: every GPU test will be reported as Skipped; host tests run.")
    manifest = build / "stages.json"
    if manifest.is_file():
        stages = json.loads(manifest.read_text())["stages"]
        todo = [s["id"] for s in stages if s["variant"] == "exercise" and s["todo"]]
        done = [s["id"] for s in stages if s["variant"] == "exercise" and not s["todo"]]
        if todo:
            print(f"note: {len(todo)} exercise stage(s) still TODO (reported as Skipped): {', '.join(todo)}")
        if done:
            print(f"note: {len(done)} exercise stage(s) attempted, tested like the solutions: {', '.join(done)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
