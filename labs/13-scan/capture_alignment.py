#!/usr/bin/env python3
"""Nsight Compute counters of stage 08 and CUB on the `vs_CUB` rows (aligned and misaligned
inputs and outputs, chapters/13-scan/notes.md "What the profile showed"): the load and store sectors, requests and
instructions, and the DRAM bytes, per launch. `make profile-capture` does not take them: the
`vs_CUB` rows are interleaved pairs, not profile ranges.

    capture_alignment.py [--build DIR]   (GPU, ncu; what `make reference` runs) one ncu run over
                                         bench-13-scan --N 64 --only stage 08 and CUB, every launch
                                         of lookback_scan and DeviceScanKernel profiled (100 at
                                         most), ncu's whole output into reference/h200/13-scan/
                                         profiles/alignment/ncu_raw.csv; then the table below
    capture_alignment.py --show          per launch of the pairs: kernel, sectors, requests,
                                         instructions, DRAM MB and time, from that capture

Which launches: 0-39 are the progression's and the block-size rows' calls; 40-79 the `vs_CUB`
pairs in the table's order (aligned, input + 1, + 2, + 3, output + 1; at N and at the odd n each),
CUB first in each pair. One timed call a row (--repeats 1 --max-repeats 1 --warmup 0): the bench's
own frame, not its --profile-only mode, so that the pairs run as the timed table runs them. ncu
replays each kernel with the caches flushed. Exit status: 0 ok, 1 ncu failed or profiled nothing,
2 no capture to show, 3 no GPU or ncu here.
"""

import csv
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness"))

from lab_capture import Failed, check_permission, cli, ncu_and_bench, ncu_profile  # noqa: E402

CHAPTER = "13-scan"
CAPTURE = ncu_profile.capture_dir(CHAPTER, ROOT) / "alignment" / "ncu_raw.csv"
METRICS = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "smsp__inst_executed_op_global_st.sum",
    "smsp__inst_executed_op_global_ld.sum",
    "launch__registers_per_thread",
]
FIRST_PAIR = 40  # the first launch of the vs_CUB pairs


def command(ncu, bench, results):
    return [
        ncu, "--nvtx", "--launch-count", "100",
        "--kernel-name", "regex:lookback_scan|DeviceScanKernel",
        "--metrics", ",".join(METRICS), "--csv", "--page", "raw",
        str(bench), "--N", "64", "--only", "^(08_decoupled_lookback|CUB DeviceScan)",
        "--repeats", "1", "--max-repeats", "1", "--warmup", "0", "--max-noise", "0",
        "--results", str(results),
    ]  # fmt: skip


def capture(build):
    ncu, bench = ncu_and_bench("capture_alignment", build, CHAPTER)
    results = Path(build) / "capture-alignment"
    cmd = command(ncu, bench, results)
    run = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    output = run.stdout + run.stderr
    check_permission(output, "capture_alignment")
    if run.returncode != 0 or not launches(output):
        tail = (output.strip().splitlines() or ["no output"])[-1]
        raise Failed(
            f"capture_alignment: ncu profiled nothing (status {run.returncode}): {tail}", 1
        )
    CAPTURE.parent.mkdir(parents=True, exist_ok=True)
    CAPTURE.write_text(output)
    shown = " ".join(shlex.quote(str(c)) for c in cmd).replace(str(results), "<scratch>")
    print(f"{CAPTURE.relative_to(ROOT)}: {len(launches(output))} launches; {shown}")
    return show()


def launches(text):
    """The raw page's launch rows, as {column: value}: ncu's CSV lines among the bench's output
    (a header, a units row, then a row per launch)."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.DictReader(lines))
    return [r for r in rows if (r.get("ID") or "").isdigit()]


def number(row, metric):
    try:
        return float((row.get(metric) or "").replace(",", ""))
    except ValueError:
        return 0.0


def show():
    if not CAPTURE.is_file():
        print(f"capture_alignment: no {CAPTURE.relative_to(ROOT)} yet", file=sys.stderr)
        return 2
    rows = []
    for r in launches(CAPTURE.read_text())[FIRST_PAIR:]:
        kernel = "CUB" if "DeviceScanKernel" in (r.get("Kernel Name") or "") else "stage 08"
        rows.append(
            [
                r["ID"],
                kernel,
                f"{number(r, METRICS[3]) / 1e6:.2f}",
                f"{number(r, METRICS[4]) / 1e3:.0f}",
                f"{number(r, METRICS[5]) / 1e6:.2f}",
                f"{number(r, METRICS[7]) / 1e3:.0f}",
                f"{(number(r, METRICS[1]) + number(r, METRICS[2])) / 1e6:.0f}",
                f"{number(r, METRICS[0]) / 1e3:.0f}",
            ]
        )
    if not rows:
        print(
            f"capture_alignment: no vs_CUB launch in {CAPTURE.relative_to(ROOT)}", file=sys.stderr
        )
        return 2
    headers = ["launch", "kernel", "load Msectors", "load kreq", "store Msectors", "store kinstr"]
    print("\n".join(ncu_profile.table(rows, headers + ["DRAM MB", "time us"])))
    return 0


def main(argv=None):
    return cli("capture_alignment", __doc__, CHAPTER, capture, show, argv)


if __name__ == "__main__":
    sys.exit(main())
