#!/usr/bin/env python3
"""Nsight Compute profiles of the course's stages: the counters that explain each optimisation.

    profile.py show STAGE [--sections LIST] [--offline]    one stage's kernels, the chapter's metrics
    profile.py diff A B [--offline]                         two stages side by side, with B/A
    profile.py capture [--chapter CH] [--per-stage]         (GPU) every stage into reference/<gpu>/*/profiles/
    profile.py capture-source [--chapter CH]                (GPU) per-instruction samples of the [chapter] source_profiles stages
    profile.py check-perf [--offline]                       (GPU) the lessons.toml perf bounds against fresh profiles
    profile.py metrics                                      the metrics collected, and why

STAGE is <chapter>/<stage> (an unambiguous start is enough: 12-reduction/10), exercise/<chapter>/<stage>
for the exercise's bench, or <chapter>/baseline for the chapter's library row (CUB, cuBLAS, NPP).

How one stage is profiled (the contract with the bench harness): the chapter's bench wraps ONE call
of each progression row's function, after its warm-ups and outside its timed events, in an NVTX
push/pop range named profile:<chapter>:<label>. So

    ncu --nvtx --nvtx-include "regex:profile:<chapter>:<stage>( .*)?/" --metrics ... \\
        build/bin/bench-<chapter> --only '^<stage>( .*)?$' --warmup 1 --profile-only \\
        --results <scratch>

profiles every kernel that one call launches (several for multi-pass stages), at the bench size,
and nothing else (--profile-only: the row's warm-ups, the profiled call and three timed calls; a
capture's '#' line holds the exact command). The metrics are named one by one (--metrics) rather
than as whole sections: fewer replay passes, and names that do not move between Nsight Compute
versions. The raw page (RAW_PAGE: --csv --page raw ...) gives one row per kernel with one column
per metric.

Without a GPU, without ncu, or when ncu may not read the counters (ERR_NVGPUCTRPERM), the profile
captured on the reference GPU (reference/h200/<chapter>/profiles/<stage>.csv; until make reference
has run there, the H100's in reference/h100/) is shown instead, and a line on stderr says so. A
capture is compact text: a '#' line (stage, GPU, ncu version, date, command), then one row per
kernel and metric: label,launch,kernel,metric,unit,value.

Exit status: 0 ok, 1 nothing to show (no capture yet, no kernels, bench not migrated, a bound
failed), 2 usage (a bad stage name), 3 a GPU or ncu is needed and missing.
"""

import argparse
import concurrent.futures
import csv
import io
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402
import stamps  # noqa: E402

ROOT = course.ROOT
ARCH = course.REFERENCE_ARCH
PREFIX = "profile"
PERMISSION_FIX = (
    "load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0 (echo 'options nvidia "
    "NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/nvidia-profiling.conf, "
    "then reboot), or run as root / with CAP_SYS_ADMIN"
)


# A message for the user, with the exit status.
UsageError = course.UsageError


# ---------------------------------------------------------------- what is collected

# Warp states (WarpStateStats): smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio is
# the number of warps waiting for that reason per issued instruction, so the reasons add up to the
# average latency between two instructions of a warp (in cycles).
STALL_REASONS = [
    "long_scoreboard",
    "short_scoreboard",
    "barrier",
    "membar",
    "wait",
    "math_pipe_throttle",
    "mio_throttle",
    "lg_throttle",
    "tex_throttle",
    "not_selected",
    "selected",
    "dispatch_stall",
    "drain",
    "imc_miss",
    "no_instruction",
    "branch_resolving",
    "sleeping",
    "misc",
]


def stall_metric(reason):
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


# (raw metric, section it comes from, what it says). Every name is a plain raw metric; sections are
# named only for the reader (ncu --section would add metrics we do not print, and passes).
METRICS = [
    ("gpu__time_duration.sum", "SpeedOfLight", "kernel duration (ns)"),
    (
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "SpeedOfLight",
        "compute (SM) throughput, % of peak",
    ),
    (
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "SpeedOfLight",
        "memory throughput (busiest unit), % of peak",
    ),
    (
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "SpeedOfLight",
        "DRAM throughput, % of peak",
    ),
    ("dram__bytes_read.sum", "MemoryWorkloadAnalysis", "DRAM bytes read"),
    ("dram__bytes_write.sum", "MemoryWorkloadAnalysis", "DRAM bytes written"),
    ("lts__t_sector_hit_rate.pct", "MemoryWorkloadAnalysis", "L2 hit rate"),
    ("l1tex__t_sector_hit_rate.pct", "MemoryWorkloadAnalysis", "L1/TEX hit rate"),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "MemoryWorkloadAnalysis",
        "global load sectors (32 B)",
    ),
    (
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "MemoryWorkloadAnalysis",
        "global load requests (one per warp instruction)",
    ),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "MemoryWorkloadAnalysis",
        "shared load bank conflicts",
    ),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "MemoryWorkloadAnalysis",
        "shared store bank conflicts",
    ),
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "MemoryWorkloadAnalysis",
        "shared load wavefronts",
    ),
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "MemoryWorkloadAnalysis",
        "shared store wavefronts",
    ),
    ("smsp__inst_executed_op_shared_ld.sum", "InstructionStats", "shared load instructions (warp)"),
    (
        "smsp__inst_executed_op_shared_st.sum",
        "InstructionStats",
        "shared store instructions (warp)",
    ),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "Occupancy", "achieved occupancy"),
    ("sm__maximum_warps_per_active_cycle_pct", "Occupancy", "theoretical occupancy"),
    ("launch__registers_per_thread", "LaunchStats", "registers per thread"),
    ("launch__block_size", "LaunchStats", "threads per block"),
    ("launch__grid_size", "LaunchStats", "blocks"),
    ("smsp__inst_executed.sum", "InstructionStats", "warp instructions executed"),
    ("smsp__thread_inst_executed.sum", "InstructionStats", "thread instructions executed"),
    ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "InstructionStats", "FFMA (thread)"),
    ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "InstructionStats", "FADD (thread)"),
    ("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "InstructionStats", "FMUL (thread)"),
    (
        "sass__inst_executed_per_opcode",
        "InstructionStats",
        "warp instructions by opcode (IMAD, IDP, MUFU, ...)",
    ),
    (
        "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
        "ComputeWorkloadAnalysis",
        "FMA pipe (FP32, IMAD, IDP)",
    ),
    (
        "sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active",
        "ComputeWorkloadAnalysis",
        "FMA-heavy pipe",
    ),
    (
        "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
        "ComputeWorkloadAnalysis",
        "ALU pipe (integer, logic)",
    ),
    (
        "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
        "ComputeWorkloadAnalysis",
        "XU pipe (MUFU: rsqrt, ...)",
    ),
    (
        "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
        "ComputeWorkloadAnalysis",
        "LSU pipe (loads, stores, shuffles)",
    ),
] + [(stall_metric(r), "WarpStateStats", f"stall: {r.replace('_', ' ')}") for r in STALL_REASONS]

METRIC_NAMES = [m for m, _, _ in METRICS]
INSTANCED = {"sass__inst_executed_per_opcode"}
DURATION = "gpu__time_duration.sum"


# ---------------------------------------------------------------- what is shown


@dataclass
class Row:
    key: str
    title: str
    fmt: str = "{:.1f}"
    higher_is: str = ""  # for the reader of a diff: "better", "worse" or ""


ROWS = {
    r.key: r
    for r in [
        Row("kernels", "kernels launched", "{:.0f}"),
        Row("time_us", "duration (us)", "{:.1f}", "worse"),
        Row("dram_pct", "DRAM throughput (% of peak)", "{:.1f}", "better"),
        Row("dram_gbs", "DRAM GB/s (read + write)", "{:.0f}", "better"),
        Row("dram_mb", "DRAM MB moved", "{:.1f}"),
        Row("mem_pct", "memory throughput, busiest unit (%)", "{:.1f}"),
        Row("sm_pct", "SM throughput (% of peak)", "{:.1f}"),
        Row("l1_hit", "L1/TEX hit rate (%)", "{:.1f}"),
        Row("l2_hit", "L2 hit rate (%)", "{:.1f}"),
        Row("ld_bytes_per_request", "global load bytes per request", "{:.0f}"),
        Row("occupancy", "achieved occupancy (%)", "{:.1f}"),
        Row("occupancy_theoretical", "theoretical occupancy (%)", "{:.1f}"),
        Row("registers", "registers per thread", "{:.0f}"),
        Row("stall_total", "cycles between a warp's instructions", "{:.1f}"),
        Row("stalls", "top stalls (warps per issue)", "{}"),
        Row("bank_conflicts", "shared bank conflicts", "{:.0f}", "worse"),
        Row("shared_wavefronts", "shared wavefronts per instruction", "{:.2f}", "worse"),
        Row("pipe_fma", "FMA pipe (% of peak)", "{:.1f}"),
        Row("pipe_fmaheavy", "FMA-heavy pipe (% of peak)", "{:.1f}"),
        Row("pipe_alu", "ALU pipe (% of peak)", "{:.1f}"),
        Row("pipe_xu", "XU pipe, MUFU (% of peak)", "{:.1f}"),
        Row("pipe_lsu", "LSU pipe (% of peak)", "{:.1f}"),
        Row("inst", "warp instructions executed (M)", "{:.2f}"),
        Row("ffma", "FFMA executed (M, warp)", "{:.2f}"),
        Row("imad", "IMAD executed (M, warp)", "{:.2f}"),
        Row("idp", "IDP4A executed (M, warp)", "{:.2f}"),
        Row("mufu", "MUFU executed (M, warp)", "{:.2f}"),
    ]
}

COMMON_ROWS = [
    "kernels",
    "time_us",
    "dram_pct",
    "dram_gbs",
    "sm_pct",
    "occupancy",
    "occupancy_theoretical",
    "registers",
    "stall_total",
    "stalls",
    "inst",
]
ALL_ROWS = list(ROWS)


def rows_for(chapter, sections=None):
    """Row keys to print: the chapter's, or those whose key or title matches one of SECTIONS."""
    # The metrics that teach the chapter (its lessons.toml profile_rows) after the common ones.
    own = course.profile_rows(chapter) if chapter in course.chapters() else None
    keys = COMMON_ROWS + (own if own is not None else [r for r in ALL_ROWS if r not in COMMON_ROWS])
    if sections:
        words = [w.strip().lower() for w in re.split(r"[,\s]+", sections) if w.strip()]
        if "all" in words:
            return ALL_ROWS
        keys = [k for k in ALL_ROWS if any(w in k or w in ROWS[k].title.lower() for w in words)]
        if not keys:
            raise UsageError(
                f"profile: SECTIONS='{sections}' matches no metric; words like dram, stall, "
                f"occupancy, pipe, shared, l2, or all (the metrics: {', '.join(ALL_ROWS)})"
            )
    return keys


# ---------------------------------------------------------------- parsing ncu's raw CSV

# A raw page's cell can pass csv's default 128 KiB (14-nbody's chapter run, ncu 2025.3).
csv.field_size_limit(2**31 - 1)


@dataclass
class Launch:
    label: str  # the NVTX range's label (10_fastest), '' when outside any profile: range
    index: int  # ncu's result ID
    kernel: str
    values: dict = field(default_factory=dict)  # metric -> float
    units: dict = field(default_factory=dict)  # metric -> unit
    opcodes: dict = field(
        default_factory=dict
    )  # opcode -> warp instructions (sass__inst_executed_per_opcode)

    def get(self, metric):
        return self.values.get(metric)


def number(text):
    """ncu's numbers: '1,234,567.5' (grouped), '4.0e-05', 'n/a' -> None."""
    text = str(text).strip().replace(",", "")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


_INSTANCE = re.compile(r"\s*([^:;()]+?)\s*:\s*([-+0-9.,eE]+)\s*")


def instances(text):
    """An instanced cell as --print-metric-instances details writes it, 'TOTAL (KEY: V; KEY: V)'
    ('values' writes the total alone: the H100 capture of 2026-11-23 had no opcode names)
    (',' between instances too): {KEY: V}. {} when the cell holds no instances."""
    text = str(text).strip()
    open_at = text.find("(")
    if open_at < 0 or not text.endswith(")"):
        return {}
    found = {}
    # Instance values may carry grouping commas (1,024): split on ';', else on ', ' before a key.
    body = text[open_at + 1 : -1]
    parts = body.split(";") if ";" in body else re.split(r",\s+(?=[A-Za-z_])", body)
    for part in parts:
        m = _INSTANCE.fullmatch(part)
        if m and number(m.group(2)) is not None:
            found[m.group(1)] = found.get(m.group(1), 0.0) + number(m.group(2))
    return found


def nvtx_label(cell, chapter=None):
    """The label of the profile:<chapter>:<label> range in an NVTX cell of ncu's raw page. Older
    versions write each push/pop range as "name:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
    (attributes 'none' when unset), quoted, the stack separated by spaces; newer ones the name
    alone. Returns (chapter, label) or None."""
    chapters = re.escape(chapter) if chapter else r"\d\d-[A-Za-z0-9_-]+"
    m = re.search(rf"{PREFIX}:({chapters}):([^\"]*)", cell)
    if not m:
        return None
    label = m.group(2)
    # The attribute fields after the name (none, or a payload/colour/message type), then any stack
    # entries that follow in the same cell.
    label = re.sub(r"(:(none|[A-Z_]+|[0-9a-fx]+))*\s*$", "", label.split('"')[0]).strip()
    label = re.sub(r"(:none)+$", "", label)
    return (m.group(1), label) if label else None


def is_nvtx_column(name):
    return "Push/Pop_Range" in name or name.strip().upper().startswith("NVTX")


def csv_lines(text):
    """The CSV part of ncu's output: no ==PROF==/==WARNING== lines, nor the program's own output
    before the header."""
    lines = [l for l in text.splitlines() if not l.startswith("==")]
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID",')), None)
    if start is None:
        return []
    return lines[start:]


def parse_raw(text, chapter=None):
    """Launches in ncu --csv --page raw output: a header, a units row, a row per kernel."""
    lines = csv_lines(text)
    if not lines:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, rows = rows[0], rows[1:]
    units = {}
    if rows and not rows[0][0].strip():  # the units row: no ID
        units = dict(zip(header, rows[0]))
        rows = rows[1:]
    col = {name: i for i, name in enumerate(header)}
    nvtx_cols = [i for i, name in enumerate(header) if is_nvtx_column(name)]
    kernel_col = col.get("Kernel Name", col.get("Function Name"))
    launches = []
    for row in rows:
        if len(row) != len(header) or not row[0].strip():
            continue
        label = ""
        for i in nvtx_cols:
            found = nvtx_label(row[i], chapter)
            if found:
                label = found[1]
                break
        launch = Launch(
            label, int(number(row[0]) or 0), row[kernel_col] if kernel_col is not None else "?"
        )
        for name in header:
            if name in METRIC_NAMES or re.match(r"^[a-z0-9]+__", name):
                cell = row[col[name]]
                if name in INSTANCED:
                    launch.opcodes = instances(cell)
                value = number(cell.split("(")[0])
                if value is not None:
                    launch.values[name] = value
                    launch.units[name] = units.get(name, "")
        launches.append(launch)
    return launches


# ---------------------------------------------------------------- captures

# Until make reference recaptures them on the reference GPU, a chapter's profiles may be the ones
# captured on the H100 (reference/h100/<chapter>/profiles/): read, and labelled as such.
FALLBACK_GPUS = {"h100": "H100"}


def capture_dir(chapter, root=None, gpu=None):
    """Where a chapter's profiles are written (the reference GPU's folder), or gpu's."""
    return course.evidence_dir(chapter, root or ROOT, gpu or course.REFERENCE_DIR) / "profiles"


def capture_path(stage_id, root=None, gpu=None):
    chapter, stage = stage_id.split("/", 1)
    return capture_dir(chapter, root, gpu) / f"{stage}.csv"


def read_dir(chapter, root=None):
    """(folder, GPU label or None) that make profile reads for a chapter: the reference GPU's when
    it holds a capture, else an older GPU's, labelled."""
    own = capture_dir(chapter, root)
    if any(own.glob("*.csv")):
        return own, None
    for gpu, label in FALLBACK_GPUS.items():
        other = capture_dir(chapter, root, gpu)
        if any(other.glob("*.csv")):
            return other, label
    return own, None


def read_path(stage_id, root=None):
    """(path, GPU label or None) of the capture make profile reads for a stage."""
    chapter, stage = stage_id.split("/", 1)
    folder, label = read_dir(chapter, root)
    return folder / f"{stage}.csv", label


CAPTURE_COLUMNS = ["label", "launch", "kernel", "metric", "unit", "value"]


def write_capture(path, header, launches):
    """The compact form: a '#' line, then a row per kernel and metric (opcode counts as
    sass__inst_executed_per_opcode[OPCODE])."""
    out = io.StringIO()
    out.write(f"# {header}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CAPTURE_COLUMNS)
    for n, launch in enumerate(launches):
        for metric in sorted(launch.values):
            writer.writerow(
                [
                    launch.label,
                    n,
                    launch.kernel,
                    metric,
                    launch.units.get(metric, ""),
                    f"{launch.values[metric]:.12g}",
                ]
            )
        for opcode, count in sorted(launch.opcodes.items()):
            writer.writerow(
                [
                    launch.label,
                    n,
                    launch.kernel,
                    f"sass__inst_executed_per_opcode[{opcode}]",
                    "inst",
                    f"{count:.12g}",
                ]
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out.getvalue())


def read_capture(path):
    """(header, launches) of a capture file."""
    text = Path(path).read_text()
    header = text.splitlines()[0][1:].strip() if text.startswith("#") else ""
    body = "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    launches = {}
    for row in csv.DictReader(io.StringIO(body)):
        key = (row["label"], int(row["launch"]))
        launch = launches.setdefault(key, Launch(row["label"], int(row["launch"]), row["kernel"]))
        value = number(row["value"])
        if value is None:
            continue
        m = re.fullmatch(r"sass__inst_executed_per_opcode\[(.+)\]", row["metric"])
        if m:
            launch.opcodes[m.group(1)] = value
        else:
            launch.values[row["metric"]] = value
            launch.units[row["metric"]] = row["unit"]
    return header, [launches[k] for k in sorted(launches, key=lambda k: k[1])]


# ---------------------------------------------------------------- stages and labels


def label_stage(label, stage_names, library=()):
    """The stage a bench row's label belongs to: '10_fastest' and '08_predicate (count, ...)' to
    their stages, a library row (CUB DeviceReduce::Sum, course.library_rows) to the baseline;
    None for neither (a lab's or a ceiling's row)."""
    for stage in stage_names:
        if label == stage or label.startswith(stage + " "):
            return stage
    if label in library:
        return course.BASELINE
    return None


def regex_escape(label):
    """A row label as a literal in the bench's --only (std::regex, ECMAScript) and ncu's regex
    filters: its specials escaped, nothing else."""
    return re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", label)


def library_regex(chapter):
    """The chapter's library row labels as one alternation."""
    return "|".join(regex_escape(l) for l in course.library_rows(chapter))


def only_regex(stage, chapter=None):
    """The bench's --only for a stage's rows (its label, or its label and a qualifier), or for the
    chapter's library rows (the baseline)."""
    if stage == course.BASELINE:
        return f"^({library_regex(chapter)})$"
    return f"^{stage}( .*)?$"


def nvtx_filter(chapter, stage=None):
    """--nvtx-include for one stage's range(s), or every profile range of a chapter. The trailing
    '/' makes it a push/pop range; 'regex:' makes the name a regular expression (full match)."""
    if stage is None:
        return f"regex:{PREFIX}:{chapter}:.*/"
    if stage == course.BASELINE:
        return f"regex:{PREFIX}:{chapter}:({library_regex(chapter)})/"
    return f"regex:{PREFIX}:{chapter}:{stage}( .*)?/"


def check_profilable(chapter, stage, root=ROOT):
    if chapter not in course.bench_chapters(root):
        raise UsageError(
            f"profile: {chapter} has no benchmark, so nothing runs its stages at a bench size; "
            f"its lesson is the tests and the SASS (make sass STAGE={chapter}/...)",
            1,
        )
    if stage == course.BASELINE and not course.library_rows(chapter, root):
        raise UsageError(f"profile: {chapter} has no library row to profile (no baseline)", 1)
    if stage != course.BASELINE and f"{chapter}/{stage}" not in course.gpu_stages(root):
        raise UsageError(f"profile: {chapter}/{stage} runs on the CPU: no kernels to profile", 1)


# ---------------------------------------------------------------- the numbers of a stage


def _sum(launches, metric):
    values = [l.get(metric) for l in launches if l.get(metric) is not None]
    return sum(values) if values else None


def _weighted(launches, metric):
    """A rate or percentage over several kernels: their average weighted by duration."""
    pairs = [(l.get(metric), l.get(DURATION) or 0.0) for l in launches if l.get(metric) is not None]
    if not pairs:
        return None
    total = sum(w for _, w in pairs)
    if total <= 0:
        return sum(v for v, _ in pairs) / len(pairs)
    return sum(v * w for v, w in pairs) / total


def _opcode(launches, prefix):
    counts = [
        sum(v for k, v in l.opcodes.items() if k.split(".")[0] == prefix)
        for l in launches
        if l.opcodes
    ]
    return sum(counts) / 1e6 if counts else None


def _ratio(a, b, scale=1.0):
    return None if a is None or not b else scale * a / b


def summarize(launches):
    """The shown numbers (ROWS keys) for a set of kernel launches: sums for counts, duration-weighted
    averages for rates and percentages."""
    s = {"kernels": float(len(launches))}
    duration = _sum(launches, DURATION)
    s["time_us"] = None if duration is None else duration / 1e3
    read, write = _sum(launches, "dram__bytes_read.sum"), _sum(launches, "dram__bytes_write.sum")
    dram = None if read is None and write is None else (read or 0.0) + (write or 0.0)
    s["dram_mb"] = None if dram is None else dram / 1e6
    s["dram_gbs"] = _ratio(dram, duration)  # bytes per ns = GB/s
    for key, metric in [
        ("dram_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        ("mem_pct", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
        ("sm_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        ("l1_hit", "l1tex__t_sector_hit_rate.pct"),
        ("l2_hit", "lts__t_sector_hit_rate.pct"),
        ("occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active"),
        ("occupancy_theoretical", "sm__maximum_warps_per_active_cycle_pct"),
        ("pipe_fma", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active"),
        ("pipe_fmaheavy", "sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active"),
        ("pipe_alu", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active"),
        ("pipe_xu", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"),
        ("pipe_lsu", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"),
    ]:
        s[key] = _weighted(launches, metric)
    s["ld_bytes_per_request"] = _ratio(
        _sum(launches, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
        _sum(launches, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        32.0,
    )
    registers = [
        l.get("launch__registers_per_thread")
        for l in launches
        if l.get("launch__registers_per_thread")
    ]
    s["registers"] = max(registers) if registers else None
    stalls = {r: _weighted(launches, stall_metric(r)) for r in STALL_REASONS}
    stalls = {r: v for r, v in stalls.items() if v is not None}
    s["stall_total"] = sum(stalls.values()) if stalls else None
    top = sorted(stalls.items(), key=lambda kv: -kv[1])[:3]
    s["stalls"] = ", ".join(f"{r} {v:.1f}" for r, v in top if v > 0) or None
    s["stall_by_reason"] = stalls
    conflicts = [
        _sum(launches, f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum")
        for op in ("ld", "st")
    ]
    s["bank_conflicts"] = None if conflicts == [None, None] else sum(c or 0.0 for c in conflicts)
    waves = [
        _sum(launches, f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
        for op in ("ld", "st")
    ]
    insts = [_sum(launches, f"smsp__inst_executed_op_shared_{op}.sum") for op in ("ld", "st")]
    s["shared_wavefronts"] = (
        None
        if waves == [None, None] or not sum(i or 0.0 for i in insts)
        else sum(w or 0.0 for w in waves) / sum(i or 0.0 for i in insts)
    )
    inst = _sum(launches, "smsp__inst_executed.sum")
    s["inst"] = None if inst is None else inst / 1e6
    for key, opcode in [("ffma", "FFMA"), ("imad", "IMAD"), ("idp", "IDP"), ("mufu", "MUFU")]:
        s[key] = _opcode(launches, opcode)
    # For the roofline: work per chapter, in operations (thread level).
    ffma, fadd, fmul = (
        _sum(launches, f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum")
        for op in ("ffma", "fadd", "fmul")
    )
    s["fp32_flop"] = None if ffma is None else 2 * ffma + (fadd or 0.0) + (fmul or 0.0)
    s["thread_inst"] = _sum(launches, "smsp__thread_inst_executed.sum")
    imad, idp = _opcode(launches, "IMAD"), _opcode(launches, "IDP")
    s["int_ops"] = None if imad is None and idp is None else 32e6 * ((imad or 0.0) + (idp or 0.0))
    s["duration_ns"] = duration
    s["dram_bytes"] = dram
    return s


def by_label(launches):
    """{label: [launches]} in first-seen order."""
    groups = {}
    for launch in launches:
        groups.setdefault(launch.label, []).append(launch)
    return groups


def short_kernel(name, width=28):
    """'void reduce_fastest<512u, int>(int*, const int*, unsigned long)' -> 'reduce_fastest<512u, int>'."""
    name = re.sub(r"^void\s+", "", name)
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0:
            cut = i
            break
    name = name[:cut]
    return name if len(name) <= width else name[: width - 3] + "..."


def fmt(key, value):
    if value is None:
        return "n/a"
    return ROWS[key].fmt.format(value)


def table(rows, headers):
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    line = lambda r: "  ".join(
        str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
        for i, (c, w) in enumerate(zip(r, widths))
    ).rstrip()
    return [line(headers)] + [line(r) for r in rows]


def stage_table(chapter, stage, launches, keys):
    """The printed profile of one stage: a column per kernel (and their total when several), or a
    column per bench row when the stage has several (08_predicate's two forms)."""
    groups = by_label(launches)
    columns = []
    if len(groups) > 1:
        columns = [(label or "(no range)", summarize(ls)) for label, ls in groups.items()]
    else:
        if len(launches) > 1:
            columns = [
                (f"{n + 1}: {short_kernel(l.kernel)}", summarize([l]))
                for n, l in enumerate(launches)
            ]
        columns.append(("stage" if len(launches) <= 1 else "all kernels", summarize(launches)))
    rows = [[ROWS[k].title] + [fmt(k, c[k]) for _, c in columns] for k in keys]
    lines = table(rows, ["metric"] + [name for name, _ in columns])
    kernels = [
        f"  {n + 1}) {short_kernel(l.kernel, 70)}  grid {fmt('kernels', l.get('launch__grid_size'))} x "
        f"{fmt('kernels', l.get('launch__block_size'))} threads"
        + (f"  [{l.label}]" if len(groups) > 1 else "")
        for n, l in enumerate(launches)
    ]
    return ["kernels:"] + kernels + [""] + lines


def diff_table(a_name, a, b_name, b, keys):
    rows = []
    for k in keys:
        ratio = ""
        if k != "stalls" and isinstance(a.get(k), float) and isinstance(b.get(k), float) and a[k]:
            ratio = f"{b[k] / a[k]:.2f}x"
        rows.append([ROWS[k].title, fmt(k, a.get(k)), fmt(k, b.get(k)), ratio])
    return table(rows, ["metric", a_name, b_name, "B/A"])


# ---------------------------------------------------------------- running ncu

gpu_reason = course.gpu_reason


def find_ncu():
    import sass  # its tool lookup: PATH, $CUDA_HOME/bin, /usr/local/cuda/bin

    return sass.find_tool("ncu")


class Offline(Exception):
    """Profiling cannot run here; the message says why (one line), the capture is shown instead."""


def ncu_version(ncu):
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "ncu"
    m = re.search(r"Version\s+(\S+)", out)
    return f"ncu {m.group(1)}" if m else "ncu"


def permission_denied(text):
    return "ERR_NVGPUCTRPERM" in text


# How every capture asks ncu for its numbers: the raw page as CSV, in base units (bytes, ns), with
# the per-opcode instances (the FFMA, MUFU ... counts), at the GPU's own clocks as the bench runs.
RAW_PAGE = [
    "--csv",
    "--page",
    "raw",
    "--print-units",
    "base",
    "--print-metric-instances",
    "details",
    "--clock-control",
    "none",
]


def ncu_command(ncu, bench, chapter, stage, metrics, log, results):
    return [
        ncu,
        *RAW_PAGE,
        "--nvtx",
        "--nvtx-include",
        nvtx_filter(chapter, stage),
        "--metrics",
        ",".join(metrics),
        "--log-file",
        str(log),
        "--force-overwrite",
        str(bench),
        "--only",
        only_regex(stage, chapter) if stage else chapter_only(chapter),
        "--warmup",
        "1",
        "--profile-only",
        "--results",
        str(results),
    ]


def chapter_only(chapter, root=ROOT):
    """--only for every progression row of a chapter and its library rows (not a lab's rows, nor
    the ceilings: a profile does not need them)."""
    rows = "|".join(course.stages(chapter, root))
    library = library_regex(chapter)
    return f"^({rows})( .*)?$" + (f"|^({library})$" if library else "")


def run_ncu(ncu, bench, chapter, stage, quiet=False):
    """Profile one stage (or a whole chapter with stage None). Metrics this ncu does not know are
    dropped (one line says which) and the run repeated. Returns (launches, command line)."""
    metrics = list(METRIC_NAMES)
    with tempfile.TemporaryDirectory(prefix="course-profile-") as scratch:
        log = Path(scratch) / "ncu.csv"
        for _attempt in range(3):
            cmd = ncu_command(ncu, bench, chapter, stage, metrics, log, Path(scratch) / "results")
            env = dict(os.environ, LC_ALL="C")  # 1,234.5 and not 1.234,5
            run = subprocess.run(cmd, capture_output=True, text=True, env=env)
            text = log.read_text() if log.is_file() else ""
            output = run.stdout + run.stderr + text
            if permission_denied(output):
                raise Offline(
                    "ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM); fix: "
                    + PERMISSION_FIX
                )
            errors = [l for l in output.splitlines() if l.startswith("==ERROR==")]
            unknown = [m for m in metrics if any(m in l for l in errors)]
            if unknown and len(unknown) < len(metrics):
                print(
                    f"profile: this ncu does not know {', '.join(unknown)}; profiling without them",
                    file=sys.stderr,
                )
                metrics = [m for m in metrics if m not in unknown]
                continue
            launches = parse_raw(text, chapter)
            if run.returncode != 0 and not launches:
                tail = (
                    "; ".join(errors[-3:]) or (run.stderr.strip().splitlines() or ["no output"])[-1]
                )
                raise UsageError(f"profile: ncu failed (status {run.returncode}): {tail}", 1)
            printable = " ".join(shlex.quote(str(c)) for c in cmd)
            printable = printable.replace(
                f" {','.join(metrics)} ", " <metrics: profile.py metrics> "
            )
            printable = re.sub(r"--log-file \S+ ", "", printable)
            printable = re.sub(r"--results \S+", "--results <scratch>", printable)
            return launches, printable
    raise UsageError("profile: ncu kept refusing metrics; see profile.py metrics", 1)


def bench_binary(build, chapter, variant="solution"):
    return Path(build) / "bin" / course.bench_program(chapter, variant)


def build_bench(args, chapter, variant):
    """Configure when needed, build the chapter's bench, and check it takes --only (the contract)."""
    build = Path(args.build)
    if getattr(args, "no_build", False):  # make reference built it, and builds beside this run
        return check_migrated(bench_binary(build, chapter, variant))
    if not (build / "CMakeCache.txt").is_file():
        cmd = args.configure or f"cmake -S {ROOT} -B {build}"
        if subprocess.run(cmd, shell=True, cwd=ROOT).returncode != 0:
            raise UsageError(f"profile: configuring {build} failed ({cmd})", 1)
    target = bench_binary(build, chapter, variant).name
    run = subprocess.run(
        ["cmake", "--build", str(build), "-j", str(args.jobs), "--target", target],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        raise UsageError(
            f"profile: building {target} failed:\n{(run.stdout + run.stderr)[-3000:]}", 1
        )
    return check_migrated(bench_binary(build, chapter, variant))


def check_migrated(binary):
    """The bench, when its --help offers --only (the profiling contract); else UsageError."""
    help_text = subprocess.run([str(binary), "--help"], capture_output=True, text=True)
    if "--only" not in help_text.stdout + help_text.stderr:
        raise UsageError(
            f"profile: this chapter's bench is not migrated yet ({Path(binary).name} has no --only, "
            "so ncu cannot pick one stage's call and its profile: range)",
            1,
        )
    return binary


def live_reason():
    """None when ncu can run here, else the one line that says why not."""
    reason = gpu_reason()
    if reason:
        return f"no GPU here ({reason})"
    if find_ncu() is None:
        return (
            "ncu (Nsight Compute) not found; it ships with the CUDA Toolkit (cuda-nsight-compute)"
        )
    return None


def header_run(header):
    """The run a capture's '#' line names, header_line's middle: 'NVIDIA H200 (sm_90), ncu
    2025.3.1.0, 2026-11-29T19:35:01Z' (for a line of another form, its text before the command)."""
    return header.split("; ")[0].split(": ", 1)[-1]


def header_line(stage_id, gpu, version, command):
    when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{stage_id}: {gpu} ({ARCH}), {version}, {when}; {command}"


# ---------------------------------------------------------------- getting a stage's launches


def captured(chapter, stage, why=None, variant="solution", quiet=False):
    """(source words, launches) from the committed capture; the note goes to stderr."""
    path, older_gpu = read_path(f"{chapter}/{stage}")
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if not path.is_file():
        where = f"{why}, and " if why else ""
        raise UsageError(
            f"profile: {where}no capture of {chapter}/{stage} yet ({rel}); make reference "
            "takes it on a GPU machine",
            1,
        )
    header, launches = read_capture(path)
    if not launches:
        raise UsageError(f"profile: {rel} holds no kernels ({header})", 1)
    if not quiet:
        whose = "" if variant == "solution" else " (the reference solution's, not your exercise's)"
        where = f"{why}; " if why else ""
        on = f"captured on the {older_gpu}" if older_gpu else "captured on the reference GPU"
        print(
            f"profile: {where}showing the profile {on}, {rel}{whose}{stamps.stale_note(path, ROOT)}",
            file=sys.stderr,
        )
    return header, launches


def stage_launches(args, variant, chapter, stage, quiet=False):
    """(source words, launches) for one stage: live under ncu when it can run here, else captured."""
    check_profilable(chapter, stage)
    if args.offline:
        return captured(chapter, stage, None, variant, quiet)
    reason = live_reason()
    if reason:
        return captured(chapter, stage, reason, variant, quiet)
    binary = build_bench(args, chapter, variant)
    try:
        launches, command = run_ncu(find_ncu(), binary, chapter, stage)
    except Offline as why:
        return captured(chapter, stage, str(why), variant, quiet)
    launches = [
        l
        for l in launches
        if label_stage(
            l.label,
            [stage] if stage != course.BASELINE else [],
            course.library_rows(chapter),
        )
        == stage
    ]
    if not launches:
        raise UsageError(
            f"profile: ncu profiled no kernel in a {PREFIX}:{chapter}:{stage} range; does the "
            "bench wrap its call in the NVTX range (the contract)?",
            1,
        )
    return (
        f"{chapter}/{stage}: {(course.gpu_name() or 'unknown GPU')}, {ncu_version(find_ncu())}, this run; {command}",
        launches,
    )


# ---------------------------------------------------------------- commands


def cmd_show(args):
    variant, chapter, stage = course.profile_stage(args.stage)
    keys = rows_for(chapter, args.sections)
    header, launches = stage_launches(args, variant, chapter, stage)
    print(f"{chapter}/{stage}  ({header_run(header)})")
    print("\n".join(stage_table(chapter, stage, launches, keys)))
    return 0


def cmd_diff(args):
    a, b = course.profile_stage(args.a), course.profile_stage(args.b)
    chapter = a[1] if a[1] == b[1] else None
    keys = (
        rows_for(chapter or "", args.sections)
        if chapter
        else COMMON_ROWS + [k for k in ALL_ROWS if k not in COMMON_ROWS]
    )
    sides = []
    for variant, ch, stage in (a, b):
        header, launches = stage_launches(args, variant, ch, stage)
        groups = by_label(launches)
        label = next(iter(groups))
        if len(groups) > 1:
            print(
                f"profile: {ch}/{stage} has {len(groups)} bench rows; comparing '{label}'",
                file=sys.stderr,
            )
        sides.append(
            (
                f"{ch}/{stage}" if not chapter else stage,
                summarize(groups[label]),
                header_run(header),
            )
        )
    (an, asum, asrc), (bn, bsum, bsrc) = sides
    print(f"A: {an}  ({asrc})")
    print(f"B: {bn}  ({bsrc})")
    print("\n".join(diff_table("A", asum, "B", bsum, keys)))
    return 0


def migrated_chapters(args):
    chapters = [args.chapter] if args.chapter else course.bench_chapters()
    for chapter in chapters:
        if chapter not in course.chapters():
            raise UsageError(
                f"profile: no chapter '{chapter}'; one of {', '.join(course.bench_chapters())}"
            )
    return chapters


def cmd_capture(args):
    """Every stage of every migrated chapter into reference/<gpu>/<chapter>/profiles/<stage>.csv."""
    reason = live_reason()
    if reason:
        raise UsageError(f"profile-capture: {reason}; it runs on the GPU machine", 3)
    ncu = find_ncu()
    version, gpu = ncu_version(ncu), (course.gpu_name() or "unknown GPU")
    skipped = []
    for chapter in migrated_chapters(args):
        if chapter not in course.bench_chapters():
            continue
        try:
            binary = build_bench(args, chapter, "solution")
        except UsageError as err:
            print(str(err).splitlines()[0], file=sys.stderr)
            skipped.append(chapter)
            continue
        names = course.stages(chapter)
        gpu_ids = set(course.gpu_stages())
        wanted = [s for s in names if f"{chapter}/{s}" in gpu_ids]
        wanted += [course.BASELINE] if course.library_rows(chapter) else []
        runs = []
        try:
            if args.per_stage:
                runs = [(s, *run_ncu(ncu, binary, chapter, s)) for s in wanted]
            else:
                runs = [(None, *run_ncu(ncu, binary, chapter, None))]
        except Offline as why:
            raise UsageError(f"profile-capture: {why}", 3)
        by_stage = {}
        commands = {}
        for only, launches, command in runs:
            for launch in launches:
                stage = label_stage(launch.label, names, course.library_rows(chapter))
                if stage is None or (only and stage != only):
                    continue
                by_stage.setdefault(stage, []).append(launch)
                commands[stage] = command
        for stage in wanted:
            path = capture_path(f"{chapter}/{stage}", gpu=args.gpu)
            if stage not in by_stage:
                print(
                    f"{path.relative_to(ROOT)}: no kernel in a {PREFIX}:{chapter}:{stage} range (is it a "
                    "progression row of the bench?)",
                    file=sys.stderr,
                )
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            write_capture(
                path,
                header_line(f"{chapter}/{stage}", gpu, version, commands[stage]),
                by_stage[stage],
            )
            print(f"{path.relative_to(ROOT)}: {len(by_stage[stage])} kernels")
    if skipped:
        print(f"profile-capture: not captured: {', '.join(skipped)}", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------- per-instruction captures

# What Nsight Compute's source page needs: the sampled warp states per instruction
# (SourceCounters) and the chapter's stall names (WarpStateStats).
SOURCE_SECTIONS = ("SourceCounters", "WarpStateStats")


def source_capture_path(stage_id, root=None, gpu=None):
    """reference/<gpu>/<chapter>/profiles/source/<stage>.csv."""
    chapter, stage = stage_id.split("/", 1)
    return capture_dir(chapter, root, gpu) / "source" / f"{stage}.csv"


def source_rows(text):
    """(kernel name, header, rows) of `ncu --page source --csv --print-source sass` output, each
    row's Address made the offset from the kernel's first instruction (0x0000, as the SASS
    listings number them): the absolute address is the run's, not the kernel's."""
    rows = list(csv.reader(l for l in text.splitlines() if not l.startswith("==")))
    kernel = next((r[1] for r in rows if len(r) > 1 and r[0] == "Kernel Name"), "")
    header_at = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
    if header_at is None:
        return kernel, [], []
    header, body = (
        rows[header_at],
        [r for r in rows[header_at + 1 :] if r and r[0].startswith("0x")],
    )
    if body:
        base = int(body[0][0], 16)
        for r in body:
            r[0] = f"0x{int(r[0], 16) - base:04x}"
    return kernel, header, body


def read_source_capture(path):
    """(kernel name, [{column: value}]) of a per-instruction capture; the offset in 'Address'."""
    lines = Path(path).read_text().splitlines()
    first = next(csv.reader(lines[1:2]), [])  # Kernel Name,"void f<..>(int *, ...)"
    kernel = first[1] if len(first) > 1 else ""
    reader = csv.DictReader(lines[2:])
    return kernel, list(reader)


def source_command(
    ncu, binary, chapter, stage, report, scratch, pattern=None, bench_args=None, kernel=None
):
    """ncu sampling every instruction (SOURCE_SECTIONS) of the first kernel in the stage's profile
    range, the bench in its --profile-only mode. For a range that is no stage's (a lab's row), as
    sample_ranges takes them: pattern (the range's label, a regex matched whole), bench_args (the
    bench's arguments) and kernel (only the kernels it matches)."""
    ranges = f"regex:{PREFIX}:{chapter}:({pattern})/" if pattern else nvtx_filter(chapter, stage)
    if bench_args is None:
        bench_args = ["--only", only_regex(stage), "--warmup", "1", "--profile-only"]
        bench_args += ["--results", Path(scratch) / "results"]
    return [
        ncu,
        "--clock-control",
        "none",
        "--nvtx",
        "--nvtx-include",
        ranges,
        *[a for section in SOURCE_SECTIONS for a in ("--section", section)],
        *(["--kernel-name", kernel] if kernel else []),
        "--launch-count",
        "1",
        "--force-overwrite",
        "--export",
        str(report),
        str(binary),
        *[str(a) for a in bench_args],
    ]


def ncu_text(cmd):
    run = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    if permission_denied(run.stdout + run.stderr):
        raise UsageError(
            "profile capture-source: ncu may not read this GPU's counters (ERR_NVGPUCTRPERM); "
            "fix: " + PERMISSION_FIX,
            3,
        )
    return run


def sample_alone(ncu, binary, chapter, stage, scratch, pattern=None, bench_args=None, kernel=None):
    """(kernel, header, rows) of one stage's first kernel, from a run of its own; or of the first
    kernel in a range that is no stage's, named by pattern, bench_args and kernel (source_command;
    then stage only names the report)."""
    report = Path(scratch) / re.sub(r"[^\w.-]+", "_", stage)
    run = ncu_text(
        source_command(ncu, binary, chapter, stage, report, scratch, pattern, bench_args, kernel)
    )
    page = ncu_text(
        [ncu, "--import", f"{report}.ncu-rep", "--page", "source", "--csv"]
        + ["--print-source", "sass"]
    )
    name, header, body = source_rows(page.stdout)
    if not body:
        print((run.stderr.strip().splitlines() or ["no output"])[-1], file=sys.stderr)
    return name, header, body


def first_block(page):
    """A source page cut after its first kernel's block: a page read back for one result can hold
    it twice (ncu 2025.3, --import with --launch-skip and --launch-count)."""
    lines = page.splitlines()
    starts = [i for i, l in enumerate(lines) if l.lstrip('"').startswith("Kernel Name")]
    return "\n".join(lines[: starts[1]] if len(starts) > 1 else lines)


def kernel_base(name):
    """A kernel's function name without its namespaces, template arguments and parameters, which
    the raw page (demangled short) and the source page (demangled in full) write differently."""
    name = re.sub(r"<unnamed>::|\(anonymous namespace\)::", "", name.replace("void ", "", 1))
    return re.split(r"[<(]", name.strip(), maxsplit=1)[0].rsplit("::", 1)[-1].strip()


def sample_ranges(ncu, binary, chapter, patterns, bench_args, scratch, kernel=None):
    """Every kernel in the chapter's profile ranges whose label matches one of `patterns` ({name:
    regex, matched whole}) sampled per instruction (SOURCE_SECTIONS) in one ncu run, kernels
    matching `kernel` only where given; then each name's first kernel read back from the report as
    its own result (--import with --launch-skip and --launch-count, on threads: CPU only).
    Returns ({name: (kernel, header, rows) or None}, the command): None where the report holds no
    such kernel or what came back is not it, for the caller to sample that one in a run of its
    own."""
    report = Path(scratch) / "ranges"
    ranges = "|".join(patterns.values())
    cmd = [
        ncu,
        "--clock-control",
        "none",
        "--nvtx",
        "--nvtx-include",
        f"regex:{PREFIX}:{chapter}:({ranges})/",
        *[a for section in SOURCE_SECTIONS for a in ("--section", section)],
        *(["--kernel-name", kernel] if kernel else []),
        "--force-overwrite",
        "--export",
        str(report),
        str(binary),
        *[str(a) for a in bench_args],
    ]
    ncu_text(cmd)
    rep = f"{report}.ncu-rep"
    if not Path(rep).is_file():
        return dict.fromkeys(patterns), cmd
    listing = ncu_text(
        [ncu, "--import", rep, "--page", "raw", "--csv", "--metrics", "gpu__time_duration.sum"]
    )
    launches = parse_raw(listing.stdout, chapter)

    def read(launch):
        page = ncu_text(
            [ncu, "--import", rep, "--page", "source", "--csv", "--print-source", "sass"]
            + ["--launch-skip", str(launch.index), "--launch-count", "1"]
        )
        name, header, body = source_rows(first_block(page.stdout))
        if not body or kernel_base(name) != kernel_base(launch.kernel):
            return None
        return name, header, body

    firsts = {
        name: next((l for l in launches if re.fullmatch(pattern, l.label)), None)
        for name, pattern in patterns.items()
    }
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        pages = {n: pool.submit(read, l) if l else None for n, l in firsts.items()}
    return {n: (page.result() if page else None) for n, page in pages.items()}, cmd


def printable_command(cmd):
    line = " ".join(shlex.quote(str(c)) for c in cmd)
    return re.sub(r"--results \S+", "--results <scratch>", line)


def cmd_capture_source(args):
    """The first kernel of each [chapter] source_profiles stage, sampled per instruction, into
    reference/<gpu>/<chapter>/profiles/source/<stage>.csv: one ncu run over the chapter's stages,
    the bench in its --profile-only mode, each stage's first kernel read back from the report as
    its own result. A stage that read back nothing is sampled in a run of its own."""
    reason = live_reason()
    if reason:
        raise UsageError(f"profile capture-source: {reason}; it runs on the GPU machine", 3)
    ncu = find_ncu()
    version, gpu = ncu_version(ncu), (course.gpu_name() or "unknown GPU")
    failed = []
    for chapter in course.bench_chapters():
        if args.chapter and chapter != args.chapter:
            continue
        names = course.source_profiles(chapter)
        if not names:
            continue
        binary = build_bench(args, chapter, "solution")
        with tempfile.TemporaryDirectory(prefix="course-source-") as scratch:
            only = f"^({'|'.join(names)})( .*)?$"
            bench_args = ["--only", only, "--warmup", "1", "--profile-only", "--results"]
            pages, one_run = sample_ranges(
                ncu,
                binary,
                chapter,
                {stage: f"{stage}( .*)?" for stage in names},
                bench_args + [Path(scratch) / "results"],
                scratch,
            )
            for stage in names:
                path = source_capture_path(f"{chapter}/{stage}", gpu=args.gpu)
                if pages[stage]:
                    kernel, header, body = pages[stage]
                    shown = "one ncu run over the chapter's source stages, this one's first kernel "
                    shown += "read back: " + printable_command(one_run)
                else:
                    print(f"{chapter}/{stage}: not in the chapter's run; sampled alone")
                    kernel, header, body = sample_alone(ncu, binary, chapter, stage, scratch)
                    command = source_command(ncu, binary, chapter, stage, "<scratch>", scratch)
                    shown = printable_command(command)
                if not body:
                    print(f"{path.relative_to(ROOT)}: nothing sampled", file=sys.stderr)
                    failed.append(stage)
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("w", newline="") as out:
                    out.write(
                        f"# {chapter}/{stage}: warp-state samples per SASS instruction of its first "
                        f"kernel; {gpu}; {version}; {shown}\n"
                    )
                    writer = csv.writer(out, lineterminator="\n")
                    writer.writerow(["Kernel Name", kernel])
                    writer.writerow(header)
                    writer.writerows(body)
                print(
                    f"{path.relative_to(ROOT)}: {len(body)} instructions of {short_kernel(kernel, 60)}"
                )
    if failed:
        print(f"profile capture-source: nothing sampled for {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------- bounds


def load_bounds():
    """make check-perf's bounds: each stage's lessons.toml `perf` (course.perf_bounds)."""
    return course.perf_bounds()


def check_bounds(bounds, summaries):
    """[(passed, line)] for each bound {stage, metric, min|max, why} against {stage_id: summary}."""
    results = []
    for bound in bounds:
        stage, key = bound["stage"], bound["metric"]
        value = summaries.get(stage, {}).get(key)
        limits = [(op, bound[op]) for op in ("min", "max") if op in bound]
        text = " and ".join(f"{'>=' if op == 'min' else '<='} {v:g}" for op, v in limits)
        if value is None:
            results.append(
                (
                    False,
                    f"FAIL  {stage}  {ROWS[key].title if key in ROWS else key}: no value "
                    f"(wanted {text})",
                )
            )
            continue
        ok = all(value >= v if op == "min" else value <= v for op, v in limits)
        results.append(
            (
                ok,
                f"{'pass' if ok else 'FAIL'}  {stage}  {ROWS[key].title if key in ROWS else key}: "
                f"{value:.3g} {text}",
            )
        )
    return results


def cmd_check_perf(args):
    bounds = load_bounds()
    if not args.offline:
        reason = live_reason()
        if reason:
            # As make profile does: without a GPU, ncu or counter permission, the captures committed
            # from the reference GPU are what can be checked.
            print(
                f"check-perf: {reason}; checking the captures committed from the reference GPU instead"
            )
            args.offline = True
    summaries, uncaptured = {}, []
    for stage_id in dict.fromkeys(b["stage"] for b in bounds):
        variant, chapter, stage = course.profile_stage(stage_id)
        if args.offline and not read_path(stage_id)[0].is_file():
            uncaptured.append(
                stage_id
            )  # offline, a stage never captured is not checked (said below)
            continue
        _, launches = stage_launches(args, variant, chapter, stage, quiet=True)
        summaries[stage_id] = summarize(by_label(launches)[launches[0].label])
    checked = [b for b in bounds if b["stage"] not in uncaptured]
    results = check_bounds(checked, summaries)
    for _, line in results:
        print(line)
    for stage_id in uncaptured:
        print(f"----  {stage_id}: no capture committed yet, its bounds not checked")
    failed = sum(1 for ok, _ in results if not ok)
    print(
        f"check-perf: {len(results) - failed} of {len(results)} bounds hold"
        + (
            f" (on the committed captures; {len(bounds) - len(checked)} not checked)"
            if args.offline
            else ""
        )
    )
    return 1 if failed else 0


def cmd_metrics(_args):
    for name, section, what in METRICS:
        print(f"{name:70} {section:24} {what}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="profile.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 2)[2],
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name, help_text, run):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--build", default="build", help="build folder (default: build)")
        p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
        p.add_argument(
            "--configure", help="command that configures the build folder when it is missing"
        )
        p.add_argument(
            "--offline", action="store_true", help="read the committed captures, run nothing"
        )
        p.add_argument(
            "--sections",
            help="metric words to show instead of the chapter's (dram, stall, all, ...)",
        )
        p.set_defaults(run=run)
        return p

    add("show", "profile one stage", cmd_show).add_argument("stage", metavar="STAGE")
    diff = add("diff", "two stages side by side", cmd_diff)
    diff.add_argument("a", metavar="A")
    diff.add_argument("b", metavar="B")
    capture = add("capture", "capture every stage's profile (GPU machine)", cmd_capture)
    capture.add_argument("--chapter", help="one chapter only")
    capture.add_argument(
        "--gpu",
        default=course.REFERENCE_DIR,
        help=f"the GPU's folder under reference/ (default {course.REFERENCE_DIR})",
    )
    capture.add_argument(
        "--no-build",
        action="store_true",
        help="use the bench as built (make reference: its build step built it)",
    )
    capture.add_argument(
        "--per-stage",
        action="store_true",
        help="one ncu run per stage (slower) instead of one per chapter",
    )
    source = add(
        "capture-source",
        "capture the [chapter] source_profiles stages per instruction (GPU machine)",
        cmd_capture_source,
    )
    source.add_argument("--chapter", help="one chapter only")
    source.add_argument(
        "--gpu",
        default=course.REFERENCE_DIR,
        help=f"the GPU's folder under reference/ (default {course.REFERENCE_DIR})",
    )
    source.add_argument(
        "--no-build",
        action="store_true",
        help="use the bench as built (make reference: its build step built it)",
    )
    add(
        "check-perf",
        "check the stages' lessons.toml perf bounds against fresh profiles",
        cmd_check_perf,
    )
    add("metrics", "list the metrics collected", cmd_metrics)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as err:
        print(err, file=sys.stderr)
        return err.status
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
