#!/usr/bin/env python3
"""The rsqrt lab (lab_rsqrt_pipes.cu) under the microscope: its SASS and its Nsight Compute
counters, which `make profile-capture` does not take (the lab's rows are not stages).

    capture_lab_rsqrt_pipes.py [capture] [--build DIR] [--row REGEX]
                                 (GPU, ncu; what `make reference` runs) per bench row of the lab
                                 (stage 08 first; --row: only those matching): the counters of
                                 the stage captures, first launch of the row's kernel, into
                                 reference/h200/14-nbody/profiles/lab/lab_rsqrt_pipes.csv; and
                                 ncu's per-instruction stall sampling (SourceCounters, as the
                                 chapter's profiles.md took stage 08's) summed by opcode, into
                                 lab_rsqrt_pipes_source.txt beside it; then `show`
    capture_lab_rsqrt_pipes.py show | --show
                                 the table from that capture
    capture_lab_rsqrt_pipes.py source --row REGEX [--build DIR]
                                 (GPU, ncu) the by-opcode sampling of one row, printed only
    capture_lab_rsqrt_pipes.py sass [--build DIR]
                                 (cuobjdump) per lab kernel and stage 08's: the instruction mix
                                 and how close together the MUFU.RSQ sit

What to look for in `sass`: MUFU.RSQ per kernel (stage 08's loop: one per interaction, 64 per trip
and loop copy), the seeds' SHF/IADD3/LEA/LOP3 of the FMA-pipe variants, NOP or WARPSYNC where the
fences stayed, and the gaps between consecutive MUFU.RSQ (in instructions): their median, the share
of 4 or fewer (ptxas' grouping) and of 9 or more (spaced); the few roots of the tile staging count
too. Build the bench first: `cmake --build build --target bench-14-nbody`. Exit status: 0 ok, 1 a
tool failed, 2 nothing to show, 3 no GPU, ncu or cuobjdump here.
"""

import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness"))

import sass  # noqa: E402
from lab_capture import Failed, ncu_and_bench, ncu_profile, printable, run_ncu  # noqa: E402

CHAPTER = "14-nbody"
CAPTURE = ncu_profile.capture_dir(CHAPTER, ROOT) / "lab" / "lab_rsqrt_pipes.csv"
SOURCE = CAPTURE.with_name("lab_rsqrt_pipes_source.txt")
# (the bench's label, its kernel): the labels of bench_nbody.cpp's lab_rsqrt_pipes table.
ROWS = [
    ("rsqrt lab: 08_mass_scaled (R 4, B 256, U 16)", r"mass_scaled_form, 4, 256, 16>"),
    ("rsqrt lab: stage 08's loop, all MUFU.RSQ", r"rsqrt_form<0, .*order\)0"),
    ("rsqrt lab: 1 in 16 on the FMA pipe", r"rsqrt_form<16, .*order\)0"),
    ("rsqrt lab: 1 in 8 on the FMA pipe", r"rsqrt_form<8, .*order\)0"),
    ("rsqrt lab: 1 in 4 on the FMA pipe", r"rsqrt_form<4,"),
    ("rsqrt lab: 1 in 2 on the FMA pipe", r"rsqrt_form<2,"),
    ("rsqrt lab: all MUFU.RSQ, spread (PTX order)", r"rsqrt_form<0, .*order\)1"),
    ("rsqrt lab: all MUFU.RSQ, spread, fenced", r"rsqrt_form<0, .*order\)2"),
    ("rsqrt lab: 1 in 8 on the FMA pipe, spread", r"rsqrt_form<8, .*order\)1"),
    ("rsqrt lab: all MUFU.RSQ, chained one after another", r"rsqrt_form<0, .*order\)3"),
    ("rsqrt lab: all MUFU.RSQ, chained in pairs", r"rsqrt_form<0, .*order\)4"),
]
KERNEL = "regex:register_blocked_forces"  # the kernel of every row: the variants and stage 08
KEPT = ["MUFU", "FFMA", "FMUL", "FADD", "FSEL", "LDS", "SHF", "IADD3", "LEA", "LOP3", "NOP"]


def gaps(kernel):
    """(instructions, median gap between consecutive MUFU.RSQ, % of gaps <= 4, % of gaps >= 9)."""
    ops = [i.opcode for i in kernel.body]
    at = [k for k, op in enumerate(ops) if op.startswith("MUFU.RSQ")]
    between = [b - a for a, b in zip(at, at[1:])] or [0]
    close = 100 * sum(1 for g in between if g <= 4) / len(between)
    far = 100 * sum(1 for g in between if g >= 9) / len(between)
    return len(ops), statistics.median(between), close, far


def cmd_sass(build):
    text = sass.disassemble(ncu_profile.bench_binary(build, CHAPTER))
    kernels = sass.parse(text)
    sass.demangle(kernels)
    rows = []
    for label, pattern in ROWS:
        found = [k for k in kernels if re.search(pattern, k.title) and "sm_90" in k.arch]
        for k in found[:1]:
            n, median, close, far = gaps(k)
            mix = {}
            for insn in k.body:
                base = insn.opcode.split(".", 1)[0]
                if base in KEPT:
                    mix[base] = mix.get(base, 0) + 1
            rows.append(
                [
                    label.replace("rsqrt lab: ", ""),
                    str(n),
                    f"{median:g}",
                    f"{close:.0f}",
                    f"{far:.0f}",
                ]
                + [str(mix.get(op, 0)) for op in KEPT]
            )
    if not rows:
        print("capture_lab_rsqrt_pipes: no lab kernel in the bench's SASS", file=sys.stderr)
        return 1
    headers = ["kernel", "instr", "median gap", "gaps<=4 %", "gaps>=9 %"] + KEPT
    print("\n".join(ncu_profile.table(rows, headers)))
    return 0


def rows_filter(labels):
    """The bench's --only and ncu's --nvtx-include for these lab rows: each is a profile range
    of the bench (profile:14-nbody:<label>), so one ncu run takes them all."""
    names = "|".join(ncu_profile.regex_escape(l) for l in labels)
    return f"^({names})$", f"regex:profile:{CHAPTER}:({names})/"


def command(ncu, bench, metrics, log, results, labels):
    only, ranges = rows_filter(labels)
    return [
        ncu, *ncu_profile.RAW_PAGE,
        "--nvtx", "--nvtx-include", ranges, "--kernel-name", KERNEL,
        "--metrics", ",".join(metrics), "--log-file", str(log), "--force-overwrite",
        str(bench), *bench_args(only), "--results", str(results),
    ]  # fmt: skip


def cmd_capture(build, row):
    ncu, bench = ncu_and_bench("capture_lab_rsqrt_pipes", build, CHAPTER)
    labels = [label for label, _ in ROWS if not row or re.search(row, label)]
    if not labels:
        raise Failed("capture_lab_rsqrt_pipes: no row matched --row", 1)
    metrics = list(ncu_profile.METRIC_NAMES)
    with tempfile.TemporaryDirectory(prefix="course-rsqrt-profile-") as scratch:
        log, results = Path(scratch) / "ncu.csv", Path(scratch) / "results"
        text, metrics, cmd = run_ncu(
            lambda m: command(ncu, bench, m, log, results, labels),
            metrics,
            "capture_lab_rsqrt_pipes",
        )
        first = {}
        for launch in ncu_profile.parse_raw(text, CHAPTER):
            first.setdefault(launch.label, launch)
        launches = [first[label] for label in labels if label in first]
        missing = [label for label in labels if label not in first]
        if missing:
            raise Failed(f"capture_lab_rsqrt_pipes: ncu profiled no kernel of {missing}", 1)
        shown = printable(cmd, metrics, scratch)
    sources = []
    for label, rows in sampled_rows(ncu, bench, labels):
        sources += [*opcode_table(label, rows), ""]
    header = ncu_profile.header_line(
        f"{CHAPTER}/lab_rsqrt_pipes",
        (ncu_profile.course.gpu_name() or "unknown GPU"),
        ncu_profile.ncu_version(ncu),
        "one ncu run over the lab rows: " + shown,
    )
    CAPTURE.parent.mkdir(parents=True, exist_ok=True)
    ncu_profile.write_capture(CAPTURE, header, launches)
    SOURCE.write_text(f"# {header}\n\n" + "\n".join(sources))
    print(f"{CAPTURE.relative_to(ROOT)}: {len(launches)} kernels; {SOURCE.relative_to(ROOT)}")
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
    if SOURCE.is_file():
        print("\n" + SOURCE.read_text())
    return 0


def sampled_rows(ncu, bench, labels):
    """[(label, source page rows as dicts)]: ncu's per-instruction sampling of each row's kernel,
    in one run over the rows (the bench in its --profile-only mode), each row's first kernel read
    back from the report as its own result; a row that read back nothing is sampled alone."""
    patterns = {label: ncu_profile.regex_escape(label) for label in labels}
    found = []
    with tempfile.TemporaryDirectory(prefix="course-rsqrt-source-") as scratch:
        results = ["--results", Path(scratch) / "results"]
        pages, _ = ncu_profile.sample_ranges(
            ncu,
            bench,
            CHAPTER,
            patterns,
            [*bench_args(rows_filter(labels)[0]), *results],
            scratch,
            kernel=KERNEL,
        )
        for label in labels:
            _, header, body = pages[label] or ncu_profile.sample_alone(
                ncu,
                bench,
                CHAPTER,
                "row",
                scratch,
                pattern=patterns[label],
                bench_args=[*bench_args(rows_filter([label])[0]), *results],
                kernel=KERNEL,
            )
            if not body:
                raise Failed(
                    f"capture_lab_rsqrt_pipes: ncu's source page was empty for '{label}'", 1
                )
            found.append((label, [dict(zip(header, r)) for r in body]))
    return found


def bench_args(only):
    return ["--N", "128", "--only", only, "--skip-cpu", "--warmup", "1", "--profile-only"]


def opcode_table(label, rows):
    """The warp-state samples of one row's kernel summed by opcode, as lines."""
    executed = [c for c in rows[0] if c.startswith("Instructions Executed")][:1]
    cols = executed + [c for c in rows[0] if "Sampl" in c or c.startswith("stall_")]
    by_op = {}
    for r in rows:
        words = [w for w in (r.get("Source") or "").split() if not w.startswith("@")]
        op = words[0].split(".")[0] if words else "?"
        sums = by_op.setdefault(op, dict.fromkeys(cols, 0.0))
        for c in cols:
            try:
                sums[c] += float((r.get(c) or "0").replace(",", ""))
            except ValueError:
                pass
    totals = {c: sum(v[c] for v in by_op.values()) or 1.0 for c in cols}
    key = cols[len(executed)] if len(cols) > len(executed) else cols[0]
    ranked = sorted(by_op.items(), key=lambda kv: -kv[1][key])[:16]
    table_rows = [[op] + [f"{100 * v[c] / totals[c]:.1f}" for c in cols] for op, v in ranked]
    return [
        f"## {label}: % of each column's total, by opcode",
        *ncu_profile.table(table_rows, ["opcode", *cols]),
    ]


def cmd_source(build, row):
    ncu, bench = ncu_and_bench("capture_lab_rsqrt_pipes", build, CHAPTER)
    label = next((l for l, _ in ROWS if re.search(row, l)), None)
    if not label:
        raise Failed(f"capture_lab_rsqrt_pipes: no lab row matches '{row}'", 1)
    for label, rows in sampled_rows(ncu, bench, [label]):
        print("\n".join(opcode_table(label, rows)))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "what", nargs="?", default="capture", choices=["capture", "show", "source", "sass"]
    )
    parser.add_argument("--build", type=Path, default=ROOT / "build")
    parser.add_argument("--show", action="store_true", help="the same as `show`")
    parser.add_argument("--row", default="", help="capture, source: the rows matching this regex")
    args = parser.parse_args(argv)
    try:
        if args.show or args.what == "show":
            return cmd_show()
        if args.what == "sass":
            return cmd_sass(args.build)
        if args.what == "source":
            return cmd_source(args.build, args.row or "08_mass_scaled")
        return cmd_capture(args.build, args.row)
    except Failed as err:
        print(err, file=sys.stderr)
        return err.status
    except (sass.ToolMissing, ncu_profile.UsageError) as err:
        print(f"capture_lab_rsqrt_pipes: {err}", file=sys.stderr)
        return 3 if isinstance(err, sass.ToolMissing) else 1


if __name__ == "__main__":
    sys.exit(main())
