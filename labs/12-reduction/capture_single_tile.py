#!/usr/bin/env python3
"""Nsight Compute counters of one call at n = 4096 ints, stage 10 against CUB, where each is one
launch of one block (chapters/12-reduction/notes.md, "Small n"). `make profile-capture` profiles the progression's call
at the bench's size, 2^28 ints; this call is one of the by-n table's.

    capture_single_tile.py [--build DIR]   (GPU, ncu) one ncu run over bench-12-reduction --N 1
                                           --threads 512 (stage 10 and CUB only, at the block
                                           size plain runs pick, one timed pair a size), every
                                           launch of their kernels profiled; kept: the by-n
                                           table's timed pair at 4096, written to reference/h200/
                                           12-reduction/profiles/single_tile/4096.csv in the
                                           format of the stage captures; then the table below
    capture_single_tile.py --show          the table from the committed capture (the
                                           reference H200's, taken by make reference)

Which launches: the by-n table times CUB, then stage 10, for each n in turn. At 4096 ints CUB
launches DeviceReduceSingleTileKernel alone (at larger n the same kernel also ends a two-kernel
call, after DeviceReduceKernel) and stage 10 one reduce_kernel of 1 block of 256 threads, which it
launches at no other n; the last such pair in the run is the timed one (the first is the
warm-up). ncu replays each kernel with the caches flushed, as the bench's L2 flush does. Exit
status: 0 ok, 1 ncu failed or the pair was not found, 2 no capture to show, 3 no GPU or ncu here.
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
CAPTURE, SHOWN = committed(CHAPTER, "single_tile/4096.csv")
N = 4096
CUB_SINGLE, CUB_FIRST, STAGE = "DeviceReduceSingleTileKernel", "DeviceReduceKernel", "reduce_kernel"
FOLD_OPCODES = ["LDG", "REDUX", "SHFL", "STS", "BAR", "LDS", "STG"]
# The block size a plain run of the bench picks for stage 10 (the chapter README's progression table). Under ncu
# the bench's own pick is the profiler's noise, and below 256 threads 4096 ints are no single tile.
THREADS = 512


def command(ncu, bench, metrics, log, results):
    return [
        ncu,
        *ncu_profile.RAW_PAGE,
        "--kernel-name",
        f"regex:{CUB_SINGLE}|{CUB_FIRST}|{STAGE}",
        "--metrics",
        ",".join(metrics),
        "--log-file",
        str(log),
        "--force-overwrite",
        str(bench),
        "--N",
        "1",
        "--threads",
        str(THREADS),
        "--only",
        "^(10_fastest|CUB DeviceReduce::Sum)$",
        "--warmup",
        "1",
        "--profile-only",
        "--results",
        str(results),
    ]


def single_tile_pair(launches):
    """(CUB's launch, stage 10's launch) of the last call pair at n = 4096, or None."""

    def is_stage(launch):
        return (
            STAGE in launch.kernel
            and CUB_SINGLE not in launch.kernel
            and CUB_FIRST not in launch.kernel
        )

    found = None
    for before, cub, stage in zip([None] + launches, launches, launches[1:]):
        if (
            CUB_SINGLE in cub.kernel
            and not (before and CUB_FIRST in before.kernel)
            and is_stage(stage)
            and stage.get("launch__grid_size") == 1
            and stage.get("launch__block_size") == 256
        ):
            found = (cub, stage)
    return found


def capture(build):
    ncu, bench = ncu_and_bench("capture_single_tile", build, CHAPTER)
    with tempfile.TemporaryDirectory(prefix="course-single-tile-profile-") as scratch:
        log, results = Path(scratch) / "ncu.csv", Path(scratch) / "results"
        text, metrics, cmd = run_ncu(
            lambda m: command(ncu, bench, m, log, results),
            list(ncu_profile.METRIC_NAMES),
            "capture_single_tile",
        )
        line = printable(cmd, metrics, scratch)
    launches = ncu_profile.parse_raw(text)
    pair = single_tile_pair(launches)
    if pair is None:
        print(
            f"capture_single_tile: no call pair at n = {N} among the {len(launches)} launches profiled "
            f"(CUB's {CUB_SINGLE} alone, then stage 10's {STAGE} on 1 block of 256 threads)",
            file=sys.stderr,
        )
        return 1
    pair[0].label, pair[1].label = "CUB DeviceReduce::Sum", "10_fastest"
    header = ncu_profile.header_line(
        f"{CHAPTER}/single_tile n={N}",
        (ncu_profile.course.gpu_name() or "unknown GPU"),
        ncu_profile.ncu_version(ncu),
        f"the by-n table's timed pair at n = {N}: {line}",
    )
    CAPTURE.parent.mkdir(parents=True, exist_ok=True)
    ncu_profile.write_capture(CAPTURE, header, list(pair))
    print(f"{CAPTURE.relative_to(ROOT)}: 2 kernels of {len(launches)} profiled")
    return show(CAPTURE)


def show(path=SHOWN):
    if not path.is_file():
        print(
            f"capture_single_tile: no {path.relative_to(ROOT)} yet: run this on a GPU machine with ncu",
            file=sys.stderr,
        )
        return 2
    header, launches = ncu_profile.read_capture(path)
    print(f"# {header}\n")
    rows = []
    for launch in launches:
        s = ncu_profile.summarize([launch])
        most = sorted(launch.opcodes.items(), key=lambda kv: -kv[1])[:6]
        dram_kb = None if s.get("dram_mb") is None else s["dram_mb"] * 1e3
        rows.append(
            [
                launch.label,
                f"{launch.get('launch__grid_size'):.0f} x {launch.get('launch__block_size'):.0f}",
                cell(s.get("time_us"), 2),
                cell(launch.get("smsp__inst_executed.sum")),
                cell(s.get("stall_total"), 1),
                s.get("stalls") or "n/a",
                cell(dram_kb, 1),
                ", ".join(f"{op} {count:.0f}" for op, count in most) or "n/a",
            ]
        )
    print(
        "\n".join(
            ncu_profile.table(
                rows,
                [
                    "call at n = 4096",
                    "blocks x threads",
                    "duration us",
                    "warp instructions",
                    "cycles between a warp's instructions",
                    "top stalls (warps per issue)",
                    "DRAM kB",
                    "most executed opcodes",
                ],
            )
        )
    )
    print()
    # The loads and the fold, warp instructions per call (a predicated-off instruction counts too).
    rows = [
        [launch.label] + [cell(launch.opcodes.get(op, 0.0)) for op in FOLD_OPCODES]
        for launch in launches
    ]
    print("\n".join(ncu_profile.table(rows, ["call at n = 4096"] + FOLD_OPCODES)))
    return 0


def main(argv=None):
    return cli("capture_single_tile", __doc__, CHAPTER, capture, show, argv)


if __name__ == "__main__":
    sys.exit(main())
