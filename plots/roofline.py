#!/usr/bin/env python3
"""One roofline per chapter: the measured ceilings, and each stage as a point from its profile.

    python3 plots/roofline.py [--results DIR] [--out DIR] [--plain] [CHAPTER...]

The roof: the chapter's measured bandwidth (its results JSON: the run in <results>/ when there is
one, else the committed reference run) and the compute ceiling that fits the chapter's work (its
lessons.toml's [chapter] roofline):

    fp32_flop     FP32 FLOP (2 per FFMA)    FP32 FMA rate (chapter 14's bench measures it: fma_tflops)
    thread_inst   thread instructions        issue rate, 4 warp instructions per SM per clock
    int_ops       IMAD + IDP4A (thread)      64 per SM per clock each (IMAD and dp4a share the rate)

A stage is a point: its arithmetic intensity (work per DRAM byte) and achieved rate (work per
second of kernel time), both from its Nsight Compute capture (reference/h200/<chapter>/profiles/,
else the H100's in reference/h100/, as make profile reads them; make reference takes them). A
chapter without captures is skipped with one line. Draws <out>/<chapter>-roofline.png (default
out: <results>/plots; --plain: <out>/roofline.png, make reference's name in
reference/<gpu>/<chapter>/). Exit status: 0 ok (chapters without captures skipped), 3 matplotlib
missing.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "harness"))
import course  # noqa: E402


def _load_profile():
    """harness/profile.py, loaded under its own name: 'profile' is also a standard-library module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_profile", ROOT / "harness" / "profile.py")
    module = sys.modules.get("course_profile")
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["course_profile"] = module
        spec.loader.exec_module(module)
    return module


ncu_profile = _load_profile()  # reading and summing captures

# The work a point may count (a summarize() key; a chapter names its own in its lessons.toml,
# [chapter] roofline), its name, and its compute ceiling.
WORKS = {
    "fp32_flop": ("FP32 FLOP", "fp32"),
    "thread_inst": ("thread instructions", "issue"),
    "int_ops": ("IMAD + IDP4A (thread)", "int"),
}


def chapter_work(chapter):
    """(work key, its name, its ceiling) of a chapter's roofline, or None: it has none."""
    key = course.chapter_settings(chapter).get("roofline") if chapter in course.chapters() else None
    return (key, *WORKS[key]) if key else None


# Where a chapter's captures lack its work counter (chapter 15's opcode counts need ncu's
# --print-metric-instances details; the first H100 captures were taken with 'values'), the points
# count thread instructions against the issue ceiling instead, and the chart says so.
FALLBACK_WORK = ("thread_inst", "thread instructions", "issue")
BANDWIDTH_KEYS = ["d2d_memcpy_gbs", "read_kernel_gbs", "copy_kernel_gbs"]
# Per SM per clock, from the reference GPU's measured table (course-design.md) where the bench does
# not measure them itself: FP32 FMA 125 (x2 FLOP), IMAD and dp4a 64, issue 4 warps x 32 threads.
PER_SM_PER_CLOCK = {
    "fp32": (250.0, "FP32 FMA, 125/SM/clk x 2 FLOP"),
    "issue": (128.0, "issue: 4 warp inst/SM/clk"),
    "int": (64.0, "IMAD / IDP4A, 64/SM/clk"),
}


def results_doc(chapter, results_dir):
    """(doc, where) of the chapter's newest results JSON in results_dir, else its reference run."""
    found = []
    for path in sorted(Path(results_dir).glob("*.json")):
        doc = course.load_result(path)
        if doc and doc.get("bench") == chapter:
            found.append(doc)
    if found:
        return max(found, key=course.result_date), f"{results_dir}/"
    path, doc = course.reference_result(chapter)
    return doc, (str(path.relative_to(ROOT)) if path else None)


def bandwidth(chapter, doc, results_dir):
    """(bytes/s, label) of the chapter's measured bandwidth ceiling; chapter 11's copy when the
    chapter's own run measures none."""
    params = (doc or {}).get("params", {})
    for key in BANDWIDTH_KEYS:
        if params.get(key):
            return float(
                params[key]
            ) * 1e9, f"{key.replace('_gbs', '').replace('_', ' ')} {params[key]:.0f} GB/s"
    if chapter != "11-streaming":
        other, _ = results_doc("11-streaming", results_dir)
        value, label = bandwidth("11-streaming", other, results_dir)
        if value:
            return value, f"{label} (chapter 11's run)"
    return None, None


def compute(chapter, doc, results_dir, kind=None):
    """(ops/s, label) of the compute ceiling that fits the chapter's work (kind: its ceiling's
    name, by default the chapter's own)."""
    kind = kind or chapter_work(chapter)[2]
    if kind == "fp32":
        for source in (doc, results_doc("14-nbody", results_dir)[0]):
            tflops = (source or {}).get("params", {}).get("fma_tflops")
            if tflops:
                where = "" if source is doc else " (chapter 14's run)"
                return float(
                    tflops
                ) * 1e12, f"FP32 FMA {float(tflops):.1f} TFLOP/s, measured{where}"
    device = (doc or {}).get("device", {})
    sms, mhz = device.get("sms"), device.get("sm_clock_mhz")
    if not sms or not mhz:
        return None, None
    rate, words = PER_SM_PER_CLOCK[kind]
    return rate * sms * mhz * 1e6, f"{words} x {sms} SMs x {mhz} MHz"


def points(chapter, root=ROOT, work=None):
    """[(name, intensity, rate)] of the chapter's captured stages (one per bench row), and the
    stages whose capture lacks the counters a point needs (work: a summarize() key, by default
    the chapter's own)."""
    work = work or chapter_work(chapter)[0]
    found, missing = [], []
    directory, _ = ncu_profile.read_dir(chapter, root)
    order = {s: i for i, s in enumerate(course.stages(chapter, root) + [course.BASELINE])}
    for path in sorted(directory.glob("*.csv"), key=lambda p: (order.get(p.stem, 999), p.stem)):
        _, launches = ncu_profile.read_capture(path)
        groups = ncu_profile.by_label(launches)
        for label, group in groups.items():
            s = ncu_profile.summarize(group)
            name = label or path.stem
            if not s.get(work) or not s.get("duration_ns") or not s.get("dram_bytes"):
                missing.append(name)
                continue
            found.append((name, s[work] / s["dram_bytes"], s[work] / (s["duration_ns"] * 1e-9)))
    return found, missing


def roofline_data(chapter, results_dir="results", root=ROOT):
    """Everything a chart needs, or None (with the reason) when the chapter has no captures."""
    own = chapter_work(chapter)
    if own is None:
        return None, f"{chapter}: no roofline (no benchmark)"
    work = own
    pts, missing = points(chapter, root)
    if not pts and missing and work[0] != FALLBACK_WORK[0]:
        fallback, _ = points(chapter, root, FALLBACK_WORK[0])
        if fallback:
            work, pts = FALLBACK_WORK, fallback
            missing = [f"{m} ({own[1]}: not in the captures)" for m in missing]
    if not pts:
        why = (
            f"captures lack the counters ({', '.join(missing)})"
            if missing
            else f"no profile captures yet in {ncu_profile.capture_dir(chapter, root).relative_to(root)}/ "
            "(make reference on a GPU machine)"
        )
        return None, f"{chapter}: skipped, {why}"
    doc, where = results_doc(chapter, results_dir)
    bw, bw_label = bandwidth(chapter, doc, results_dir)
    peak, peak_label = compute(chapter, doc, results_dir, work[2])
    return {
        "chapter": chapter,
        "work": work[1],
        "fallback": work is not own,
        "points": pts,
        "missing": missing,
        "bandwidth": bw,
        "bandwidth_label": bw_label,
        "peak": peak,
        "peak_label": peak_label,
        "ridge": (peak / bw) if bw and peak else None,
        "results": where,
        "device": (doc or {}).get("device", {}).get("name", ""),
    }, None


def draw(plt, data, out_dir, plain=False):
    fig, ax = plt.subplots(figsize=(10, 5))
    try:
        xs = [p[1] for p in data["points"]]
        lo = min(xs + [data["ridge"] or min(xs)]) / 10
        hi = max(xs + [data["ridge"] or max(xs)]) * 10
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        if data["bandwidth"] and data["peak"]:
            ax.plot(
                grid,
                [min(data["bandwidth"] * x, data["peak"]) for x in grid],
                color="0.3",
                label=f"roof: {data['bandwidth_label']};\n{data['peak_label']}",
            )
        elif data["bandwidth"]:
            ax.plot(
                grid,
                [data["bandwidth"] * x for x in grid],
                color="0.3",
                label=data["bandwidth_label"],
            )
        elif data["peak"]:
            ax.axhline(data["peak"], color="0.3", label=data["peak_label"])
        # Stages of one chapter often sit on top of each other (every memory-bound reduce stage):
        # a numbered marker each, the names in the legend beside the chart.
        for i, (name, x, y) in enumerate(data["points"], 1):
            ax.plot(
                [x],
                [y],
                marker="os^D"[(i - 1) // 10 % 4],
                linestyle="none",
                label=f"{i}  {name[:40]}",
            )
            ax.annotate(str(i), xy=(x, y), xytext=(3, 3), textcoords="offset points", fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"arithmetic intensity ({data['work']} per DRAM byte)")
        ax.set_ylabel(f"{data['work']} per second")
        note = (
            "\n(no opcode counts in these captures: thread instructions instead)"
            if data.get("fallback")
            else ""
        )
        ax.set_title(
            f"{data['chapter']}: roofline from Nsight Compute captures, {data['device']}{note}",
            fontsize=10,
        )
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        fig.tight_layout()
        path = Path(out_dir) / ("roofline.png" if plain else f"{data['chapter']}-roofline.png")
        fig.savefig(path, dpi=150, bbox_inches="tight")
        return path
    finally:
        plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default="results")
    parser.add_argument("--out", help="where PNGs go (default: <results>/plots)")
    parser.add_argument("--plain", action="store_true", help="name the chart roofline.png")
    parser.add_argument("chapters", nargs="*", help="default: every chapter with a benchmark")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "plots"))
    import plot  # noqa: E402  (the same matplotlib set-up as plot.py)

    plt = plot.import_pyplot()
    if plt is None:
        print(f"roofline: matplotlib is not installed for {sys.executable}", file=sys.stderr)
        return 3
    out_dir = Path(args.out or Path(args.results) / "plots")
    drawn = 0
    for chapter in args.chapters or course.bench_chapters():
        data, why = roofline_data(chapter, args.results)
        if data is None:
            print(f"roofline: {why}", file=sys.stderr)
            continue
        out_dir.mkdir(parents=True, exist_ok=True)
        print(draw(plt, data, out_dir, args.plain))
        drawn += 1
    # Chapters skipped for want of captures are not a failure (make plots goes on).
    return 0


if __name__ == "__main__":
    sys.exit(main())
