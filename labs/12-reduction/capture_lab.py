#!/usr/bin/env python3
"""Nsight Compute counters of the folding lab (lab_folding.cu, figure 12.1), which
`make profile-capture` does not take: the lab's rows are timed by the benchmark but are not
stages, so they have no profile range.

    capture_lab.py [--build DIR]     (GPU, ncu) one ncu run per lab row of bench-12-reduction, on
                                     the first launch of the row's kernel (a warm-up call: every
                                     call does the same work), written to reference/h200/12-reduction/
                                     profiles/lab/lab_folding.csv in the format of the stage
                                     captures; then the table below
    capture_lab.py --show            the table from the committed capture (the H100's,
                                     reference/h100/..., until make reference has taken one)

The table puts the shared-memory counters (wavefronts, bank conflicts, instructions) beside the
counts predicted from the code (chapters/12-reduction/profiles.md, "Lab: figure 12.1"), and for the global rows
the sectors per request, L1 hit rate and DRAM bytes. Build the bench first:
`cmake --build build --target bench-12-reduction`. Exit status: 0 ok, 1 ncu failed or found
nothing, 2 no capture to show, 3 no GPU or ncu here.
"""

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness"))

from lab_capture import (  # noqa: E402
    cell,
    cli,
    committed,
    ncu_and_bench,
    ncu_profile,
    printable,
    run_ncu,
)

CHAPTER = "12-reduction"
CAPTURE, SHOWN = committed(CHAPTER, "lab/lab_folding.csv")

# (the bench's label, its --only, the kernel's name, --N): the shared folds use 2^20 ints whatever
# --N is, so a small input keeps the bench's start short; the global rows read the default 256M.
ROWS = [
    ("shared fold: interleaved, t < s", "^shared fold: interleaved", "fold_kernel", 16),
    (
        "shared fold: pairwise, t % 2s (divergent)",
        "^shared fold: pairwise, t % 2s",
        "fold_kernel",
        16,
    ),
    (
        "shared fold: pairwise, slot 2st (bank conflicts)",
        "^shared fold: pairwise, slot 2st",
        "fold_kernel",
        16,
    ),
    (
        "global reads: grid-stride (interleaved)",
        "^global reads: grid-stride",
        "grid_stride_kernel",
        256,
    ),
    (
        "global reads: contiguous run per thread (pairwise)",
        "^global reads: contiguous",
        "contiguous_runs_kernel",
        256,
    ),
]

# Predicted from the code per block and round (lab_folding.cu; the chapter's notes.md): shared load and store
# wavefronts, load and store bank conflicts, load and store instructions (counting an instruction
# only for a warp with an active lane). The benchmark runs 4096 blocks x 64 rounds.
BLOCK_ROUNDS = 4096 * 64
PREDICTED = {
    "shared fold: interleaved, t < s": (25, 20, 0, 0, 25, 20),
    "shared fold: pairwise, t % 2s (divergent)": (95, 55, 0, 0, 95, 55),
    "shared fold: pairwise, slot 2st (bank conflicts)": (95, 55, 70, 35, 25, 20),
}
SHARED = [
    ("ld wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    ("st wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
    ("ld conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
    ("st conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
    ("ld instructions", "smsp__inst_executed_op_shared_ld.sum"),
    ("st instructions", "smsp__inst_executed_op_shared_st.sum"),
]


def command(ncu, bench, metrics, log, results, only, kernel, n_m):
    return [
        ncu,
        *ncu_profile.RAW_PAGE,
        "--kernel-name",
        f"regex:{kernel}",
        "--launch-count",
        "1",
        "--metrics",
        ",".join(metrics),
        "--log-file",
        str(log),
        "--force-overwrite",
        str(bench),
        "--N",
        str(n_m),
        "--only",
        only,
        "--warmup",
        "1",
        "--profile-only",
        "--results",
        str(results),
    ]


def capture(build):
    ncu, bench = ncu_and_bench("capture_lab", build, CHAPTER)
    metrics = list(ncu_profile.METRIC_NAMES)
    launches, commands = [], []
    with tempfile.TemporaryDirectory(prefix="course-lab-profile-") as scratch:
        for label, only, kernel, n_m in ROWS:
            log, results = Path(scratch) / "ncu.csv", Path(scratch) / "results"
            text, metrics, cmd = run_ncu(
                lambda m: command(ncu, bench, m, log, results, only, kernel, n_m),
                metrics,
                f"capture_lab: {label}",
            )
            for launch in ncu_profile.parse_raw(text)[:1]:
                launch.label = label
                launches.append(launch)
            commands.append(printable(cmd, metrics, scratch))
    header = ncu_profile.header_line(
        f"{CHAPTER}/lab_folding",
        (ncu_profile.course.gpu_name() or "unknown GPU"),
        ncu_profile.ncu_version(ncu),
        "one ncu run per lab row: " + commands[0].replace(ROWS[0][1], "<row>"),
    )
    CAPTURE.parent.mkdir(parents=True, exist_ok=True)
    ncu_profile.write_capture(CAPTURE, header, launches)
    print(f"{CAPTURE.relative_to(ROOT)}: {len(launches)} kernels")
    return show(CAPTURE)


def show(path=SHOWN):
    if not path.is_file():
        print(
            f"capture_lab: no {path.relative_to(ROOT)} yet: run this on a GPU machine with ncu",
            file=sys.stderr,
        )
        return 2
    header, launches = ncu_profile.read_capture(path)
    print(f"# {header}\n")
    by_label = {l.label: l for l in launches}
    rows = []
    for label, _, _, _ in ROWS[:3]:
        launch = by_label.get(label)
        predicted = PREDICTED[label]
        for (what, metric), per_round in zip(SHARED, predicted):
            measured = launch.get(metric) if launch else None
            rows.append(
                [
                    label if what == SHARED[0][0] else "",
                    what,
                    cell(measured),
                    cell(per_round * BLOCK_ROUNDS),
                    cell(measured / BLOCK_ROUNDS, 1) if measured is not None else "n/a",
                    str(per_round),
                ]
            )
    print(
        "\n".join(
            ncu_profile.table(
                rows,
                [
                    "kernel",
                    "counter",
                    "measured",
                    "predicted",
                    "measured per block-round",
                    "predicted per block-round",
                ],
            )
        )
    )
    print()
    rows = []
    for label, _, _, _ in ROWS[3:]:
        launch = by_label.get(label)
        s = ncu_profile.summarize([launch]) if launch else {}
        sectors = s.get("ld_bytes_per_request")
        rows.append(
            [
                label,
                cell(None if sectors is None else sectors / 32, 1),
                cell(s.get("l1_hit"), 1),
                cell(s.get("dram_mb"), 1),
                cell(s.get("time_us"), 1),
                s.get("stalls") or "n/a",
            ]
        )
    print(
        "\n".join(
            ncu_profile.table(
                rows,
                [
                    "kernel",
                    "sectors per request",
                    "L1 hit %",
                    "DRAM MB",
                    "duration us",
                    "top stalls (warps per issue)",
                ],
            )
        )
    )
    print()
    rows = []
    for label, _, _, _ in ROWS[:3]:
        launch = by_label.get(label)
        s = ncu_profile.summarize([launch]) if launch else {}
        rows.append(
            [
                label,
                cell(s.get("time_us"), 1),
                cell(s.get("stall_total"), 1),
                s.get("stalls") or "n/a",
            ]
        )
    print(
        "\n".join(
            ncu_profile.table(
                rows,
                [
                    "kernel",
                    "duration us",
                    "cycles between a warp's instructions",
                    "top stalls (warps per issue)",
                ],
            )
        )
    )
    return 0


def main(argv=None):
    return cli("capture_lab", __doc__, CHAPTER, capture, show, argv)


if __name__ == "__main__":
    sys.exit(main())
