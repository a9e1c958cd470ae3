#!/usr/bin/env python3
"""The rsqrt lab (lab_rsqrt_pipes.cu) under the microscope: its SASS and its Nsight Compute
counters, which `make profile-capture` does not take (the lab's rows are not stages).

    capture_lab_rsqrt_pipes.py sass [--build DIR]      (cuobjdump) per lab kernel and stage 08's:
                                                       the instruction mix and how close together
                                                       the MUFU.RSQ sit
    capture_lab_rsqrt_pipes.py capture [--build DIR] [--row REGEX]
                                                       (GPU, ncu) one ncu run per bench row of the
                                                       lab (stage 08 first), the first launch of
                                                       its kernel, written to reference/h200/
                                                       14-nbody/profiles/lab/lab_rsqrt_pipes.csv in
                                                       the format of the stage captures
    capture_lab_rsqrt_pipes.py show                    the table from that capture

What to look for in `sass`: MUFU.RSQ per kernel (stage 08's loop: one per interaction, 64 per trip
and loop copy), the seeds' SHF/IADD3/LEA/LOP3 of the FMA-pipe variants, NOP or WARPSYNC where the
fences stayed, and the gaps between consecutive MUFU.RSQ: the most in any 16 instructions, and the
share of gaps of 4 instructions or fewer (ptxas' grouping). Build the bench first: `cmake --build
build --target bench-14-nbody`. Exit status: 0 ok, 1 a tool failed, 2 nothing to show, 3 no GPU,
ncu or cuobjdump here.
"""

import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "harness"))
sys.path.insert(0, str(ROOT / "chapters" / "12-reduction"))

import sass  # noqa: E402
from capture_lab import Failed, ncu_profile, printable, run_ncu  # noqa: E402

CHAPTER = "14-nbody"
CAPTURE = ncu_profile.capture_dir(CHAPTER, ROOT) / "lab" / "lab_rsqrt_pipes.csv"
# (the bench's label, its kernel): the labels of bench_nbody.cpp's lab_rsqrt_pipes table.
ROWS = [
    ("rsqrt lab: 08_mass_scaled (R 4, B 256, U 16)", r"mass_scaled_form, 4, 256, 16>"),
    ("rsqrt lab: stage 08's loop, all MUFU.RSQ", r"rsqrt_form<0, .*order\)0"),
    ("rsqrt lab: 1 in 16 on the FMA pipe", r"rsqrt_form<16,"),
    ("rsqrt lab: 1 in 8 on the FMA pipe", r"rsqrt_form<8, .*order\)0"),
    ("rsqrt lab: 1 in 4 on the FMA pipe", r"rsqrt_form<4,"),
    ("rsqrt lab: 1 in 2 on the FMA pipe", r"rsqrt_form<2,"),
    ("rsqrt lab: all MUFU.RSQ, spread (PTX order)", r"rsqrt_form<0, .*order\)1"),
    ("rsqrt lab: all MUFU.RSQ, spread, fenced", r"rsqrt_form<0, .*order\)2"),
    ("rsqrt lab: 1 in 8 on the FMA pipe, spread", r"rsqrt_form<8, .*order\)1"),
    ("rsqrt lab: all MUFU.RSQ, chained one after another", r"rsqrt_form<0, .*order\)3"),
    ("rsqrt lab: all MUFU.RSQ, chained in pairs", r"rsqrt_form<0, .*order\)4"),
]
KEPT = ["MUFU", "FFMA", "FMUL", "FADD", "FSEL", "LDS", "SHF", "IADD3", "LEA", "LOP3", "NOP"]


def gaps(kernel):
    """(instructions, MUFU.RSQ count, most MUFU.RSQ in 16 instructions, median gap, % gaps <= 4)."""
    ops = [i.opcode for i in kernel.body]
    at = [k for k, op in enumerate(ops) if op.startswith("MUFU.RSQ")]
    between = [b - a for a, b in zip(at, at[1:])]
    most = max((sum(1 for x in at if k <= x < k + 16) for k in at), default=0)
    close = 100 * sum(1 for g in between if g <= 4) / len(between) if between else 0
    return len(ops), len(at), most, statistics.median(between) if between else 0, close


def cmd_sass(build):
    text = sass.disassemble(ncu_profile.bench_binary(build, CHAPTER))
    kernels = sass.parse(text)
    sass.demangle(kernels)
    rows = []
    for label, pattern in ROWS:
        found = [k for k in kernels if re.search(pattern, k.title) and "sm_90" in k.arch]
        for k in found[:1]:
            n, mufu, most, median, close = gaps(k)
            mix = {}
            for insn in k.body:
                base = insn.opcode.split(".", 1)[0]
                if base in KEPT:
                    mix[base] = mix.get(base, 0) + 1
            rows.append(
                [label.replace("rsqrt lab: ", ""), str(n), str(most), f"{median:g}", f"{close:.0f}"]
                + [str(mix.get(op, 0)) for op in KEPT]
            )
    if not rows:
        print("capture_lab_rsqrt_pipes: no lab kernel in the bench's SASS", file=sys.stderr)
        return 1
    headers = ["kernel", "instr", "MUFU in 16", "median gap", "gaps<=4 %"] + KEPT
    print("\n".join(ncu_profile.table(rows, headers)))
    return 0


def command(ncu, bench, metrics, log, results, label, kernel):
    return [
        ncu, "--csv", "--page", "raw", "--print-units", "base",
        "--print-metric-instances", "details", "--clock-control", "none",
        "--kernel-name", "regex:register_blocked_forces", "--launch-count", "1",
        "--metrics", ",".join(metrics), "--log-file", str(log), "--force-overwrite",
        str(bench), "--N", "128", "--only", "^" + label.replace("(", r"\(").replace(")", r"\)") + "$",
        "--skip-cpu", "--warmup", "1", "--repeats", "1", "--max-repeats", "1",
        "--results", str(results),
    ]  # fmt: skip


def cmd_capture(build, row):
    reason = ncu_profile.live_reason()
    if reason:
        raise Failed(f"capture_lab_rsqrt_pipes: {reason}; it runs on a GPU machine", 3)
    ncu = ncu_profile.find_ncu()
    bench = ncu_profile.check_migrated(ncu_profile.bench_binary(build, CHAPTER))
    metrics = list(ncu_profile.METRIC_NAMES)
    launches, commands = [], []
    with tempfile.TemporaryDirectory(prefix="course-rsqrt-profile-") as scratch:
        for label, kernel in ROWS:
            if row and not re.search(row, label):
                continue
            log, results = Path(scratch) / "ncu.csv", Path(scratch) / "results"
            text, metrics, cmd = run_ncu(
                lambda m: command(ncu, bench, m, log, results, label, kernel),
                metrics,
                f"capture_lab_rsqrt_pipes: {label}",
            )
            for launch in ncu_profile.parse_raw(text)[:1]:
                launch.label = label
                launches.append(launch)
            commands.append(printable(cmd, metrics, scratch))
    if not launches:
        raise Failed("capture_lab_rsqrt_pipes: no row matched --row", 1)
    header = ncu_profile.header_line(
        f"{CHAPTER}/lab_rsqrt_pipes",
        ncu_profile.gpu_name(),
        ncu_profile.ncu_version(ncu),
        "one ncu run per lab row: " + commands[0],
    )
    CAPTURE.parent.mkdir(parents=True, exist_ok=True)
    ncu_profile.write_capture(CAPTURE, header, launches)
    print(f"{CAPTURE.relative_to(ROOT)}: {len(launches)} kernels")
    return cmd_show()


def cmd_show():
    if not CAPTURE.is_file():
        print(f"capture_lab_rsqrt_pipes: no {CAPTURE.relative_to(ROOT)} yet", file=sys.stderr)
        return 2
    header, launches = ncu_profile.read_capture(CAPTURE)
    print(f"# {header}\n")
    rows = []
    for launch in launches:
        s = ncu_profile.summarize([launch])
        rows.append(
            [
                launch.label.replace("rsqrt lab: ", ""),
                f"{s.get('time_us') or 0:.1f}",
                f"{s.get('stall_total') or 0:.1f}",
                s.get("stalls") or "n/a",
            ]
        )
    print(
        "\n".join(
            ncu_profile.table(
                rows,
                ["row", "duration us", "cycles between a warp's instructions", "top stalls"],
            )
        )
    )
    print("\n(every counter of the capture: python3 harness/profile.py metrics names them)")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["sass", "capture", "show"])
    parser.add_argument("--build", type=Path, default=ROOT / "build")
    parser.add_argument("--row", default="", help="capture: only the rows matching this regex")
    args = parser.parse_args(argv)
    try:
        if args.what == "sass":
            return cmd_sass(args.build)
        if args.what == "capture":
            return cmd_capture(args.build, args.row)
        return cmd_show()
    except Failed as err:
        print(err, file=sys.stderr)
        return err.status
    except (sass.ToolMissing, ncu_profile.UsageError, sass.UsageError) as err:
        print(f"capture_lab_rsqrt_pipes: {err}", file=sys.stderr)
        return 3 if isinstance(err, sass.ToolMissing) else 1


if __name__ == "__main__":
    sys.exit(main())
