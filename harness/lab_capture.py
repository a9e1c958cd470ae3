"""What the labs' capture scripts (labs/<chapter>/capture_*.py) share. Each runs Nsight Compute
over a chapter's bench where `make profile-capture` does not (a lab's rows, calls that are no
stage's profile range) and writes reference/<gpu>/<chapter>/profiles/<folder>/, in the format of
the stage captures where it can: harness/profile.py, loaded here as ncu_profile ('profile' is also
a standard-library module).

Here: Failed (a message and an exit status), committed (where a capture is written and read from),
ncu_and_bench (ncu and the bench, on a GPU machine only), run_ncu (one ncu run, the metrics this
ncu does not know dropped), printable (the command as a capture's header shows it), cell, and cli
(--build DIR captures, --show prints the committed capture). The scripts' exit status: 0 ok, 1 ncu
failed or found nothing, 2 no capture to show, 3 no GPU or ncu here.
"""

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent
ROOT = HARNESS.parent
sys.path.insert(0, str(HARNESS))
import course  # noqa: E402

ncu_profile = course.profile_module()


class Failed(Exception):
    """ncu could not run or profiled nothing: the message is printed, the status returned."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def committed(chapter, name):
    """(where a capture is written: the reference GPU's evidence, where it is read from: there,
    else the same file captured on an older GPU (ncu_profile.FALLBACK_GPUS) until make reference
    retakes it)."""
    own = ncu_profile.capture_dir(chapter, ROOT) / name
    older = [
        ncu_profile.capture_dir(chapter, ROOT, gpu) / name for gpu in ncu_profile.FALLBACK_GPUS
    ]
    return own, next((p for p in [own, *older] if p.is_file()), own)


def check_permission(output, who):
    """Failed (status 3) when ncu's output says it may not read this GPU's counters."""
    if ncu_profile.permission_denied(output):
        raise Failed(
            f"{who}: ncu may not read this GPU's counters (ERR_NVGPUCTRPERM); fix: "
            + ncu_profile.PERMISSION_FIX,
            3,
        )


def ncu_and_bench(who, build, chapter):
    """(ncu, the chapter's bench) on a GPU machine; Failed with status 3 where there is none."""
    reason = ncu_profile.live_reason()
    if reason:
        raise Failed(
            f"{who}: {reason}; it runs on a GPU machine (--show prints the committed capture)", 3
        )
    return ncu_profile.find_ncu(), ncu_profile.check_migrated(
        ncu_profile.bench_binary(build, chapter)
    )


def run_ncu(make_command, metrics, who):
    """ncu run as make_command(metrics) says (a command with --log-file); a metric this ncu does
    not know is dropped (one line says which) and the run repeated. Returns (the raw CSV text, the
    metrics kept, the command)."""
    for _attempt in range(3):
        cmd = make_command(metrics)
        run = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
        log = Path(cmd[cmd.index("--log-file") + 1])
        text = log.read_text() if log.is_file() else ""
        output = run.stdout + run.stderr + text
        check_permission(output, who)
        errors = [l for l in output.splitlines() if l.startswith("==ERROR==")]
        unknown = [m for m in metrics if any(m in l for l in errors)]
        if unknown and len(unknown) < len(metrics):
            print(
                f"{who}: this ncu does not know {', '.join(unknown)}; without them", file=sys.stderr
            )
            metrics = [m for m in metrics if m not in unknown]
            continue
        if not ncu_profile.parse_raw(text):
            tail = "; ".join(errors[-3:]) or (run.stderr.strip().splitlines() or ["no output"])[-1]
            raise Failed(f"{who}: ncu profiled no kernel (status {run.returncode}): {tail}", 1)
        return text, metrics, cmd
    raise Failed(f"{who}: ncu kept refusing metrics; see harness/profile.py metrics", 1)


def printable(cmd, metrics, scratch):
    """The command as the capture's header shows it: no metric list, no scratch paths."""
    line = " ".join(shlex.quote(str(c)) for c in cmd).replace(
        ",".join(metrics), "<metrics: profile.py metrics>"
    )
    line = line.replace(f"--log-file {Path(scratch) / 'ncu.csv'} ", "")
    return line.replace(str(Path(scratch) / "results"), "<scratch>")


def cell(value, digits=0):
    return "n/a" if value is None else f"{value:,.{digits}f}"


def cli(who, doc, chapter, capture_fn, show_fn, argv=None):
    """The command line of a capture script: --build DIR to capture (capture_fn(build)), --show to
    print the committed capture (show_fn())."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument(
        "--build",
        type=Path,
        default=ROOT / "build",
        help=f"the build directory holding bin/{ncu_profile.course.bench_program(chapter)}",
    )
    parser.add_argument(
        "--show", action="store_true", help="print the committed capture; profile nothing"
    )
    args = parser.parse_args(argv)
    if args.show:
        return show_fn()
    try:
        return capture_fn(args.build)
    except Failed as err:
        print(err, file=sys.stderr)
        return err.status
    except ncu_profile.UsageError as err:
        print(f"{who}: {err}", file=sys.stderr)
        return getattr(err, "status", 1)
