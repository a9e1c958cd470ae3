#!/usr/bin/env python3
"""Would a thousand GPUs help? Stage 11's step time, modelled from what one GPU measured.

One step of stage 11 on P GPUs, N bodies (each rank N / P of them):

    t(N, P) = N^2 / (P R)                  the force kernel, at the one-GPU rate R
            + (P - 1) / P * 16 N / B       the all-gather: each GPU receives the other slices,
                                           16 bytes a body, at the link's bandwidth B per GPU
            + (P - 1) alpha                its latency: a ring all-gather takes P - 1 steps

speedup S = t(N, 1) / t(N, P), efficiency E = S / P. Adding a GPU helps while
t(N, P + 1) < t(N, P), that is while

    N^2 / (R P (P + 1)) > 16 N / (B P (P + 1)) + alpha

so without latency any N > 16 R / B gains from every GPU, and with it the latency sets the
limit: N_min(P) solves that quadratic.

What is measured and what is not (--help lists the sources):
  - R: measured, stage 08 on one H200 (reference/h200/14-nbody/bench.json, the progression).
  - Stage 10 on 1 and 2 H200s (reference/h200x2/14-nbody/bench.json): measured; shown beside the
    model of the same form, whose misfit is the per-call setup stage 10 pays (device memory
    allocated and freed on every call, as in the book).
  - Stage 11 on several GPUs: not measured yet (no run on 2 or 4 GPUs); a bench_ranks.json given
    with --measured is fitted (R from the force time, B and alpha from the all-gather time) and
    drawn.
  - B: a datasheet lead, not measured here: NVLink 4 on the H200, 900 GB/s in both directions
    together, 450 GB/s each way; InfiniBand NDR, 400 Gb/s = 50 GB/s per GPU with one NIC each.
  - alpha: assumed, not measured (--alpha-us): a few microseconds per ring step.

    model_ranks.py                       the predictions, as text
    model_ranks.py --chart out.png       and the chart (matplotlib)
    model_ranks.py --measured results/bench_ranks.json   stage 11's measured points, fitted
"""

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ONE_GPU = ROOT / "reference" / "h200" / "14-nbody" / "bench.json"
TWO_GPUS = ROOT / "reference" / "h200x2" / "14-nbody" / "bench.json"
BYTES_PER_BODY = 16
# Datasheet leads, not measurements (the module's docstring says where from).
LINKS = {
    "NVLink": {"bandwidth": 450e9, "alpha": 3e-6},
    "InfiniBand": {"bandwidth": 50e9, "alpha": 5e-6},
}
GPU_COUNTS = [8, 16, 32, 64, 128, 256, 512, 1024]


def step_time(n, p, rate, bandwidth, alpha=0.0):
    """Seconds per step on p GPUs: compute at `rate` interactions/s per GPU, a ring all-gather."""
    compute = n * n / (p * rate)
    gather = (p - 1) / p * BYTES_PER_BODY * n / bandwidth + (p - 1) * alpha
    return compute + gather


def efficiency(n, p, rate, bandwidth, alpha=0.0):
    """Speedup over one GPU, divided by p."""
    return step_time(n, 1, rate, bandwidth, alpha) / step_time(n, p, rate, bandwidth, alpha) / p


def n_min(p, rate, bandwidth, alpha=0.0):
    """The smallest N for which a (p + 1)-th GPU still shortens the step: the positive root of
    N^2 / (R p (p + 1)) = 16 N / (B p (p + 1)) + alpha."""
    k = p * (p + 1)
    a, b, c = 1.0 / (rate * k), -BYTES_PER_BODY / (bandwidth * k), -alpha
    if c == 0:
        return -b / a
    return (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)


def table_rows(doc, name):
    """A bench JSON table's rows as dicts."""
    for t in doc.get("tables", []):
        if t["name"] == name:
            return [dict(zip(t["columns"], row)) for row in t["rows"]]
    return []


def one_gpu_rate(path=ONE_GPU):
    """Stage 08's measured rate (interactions/s) on one GPU, and where it comes from."""
    doc = json.loads(Path(path).read_text())
    rows = [r for r in table_rows(doc, "progression") if r["stage"] == "08_mass_scaled"]
    if not rows:
        raise SystemExit(f"model_ranks: {path} has no stage 08 row in its progression")
    n = doc.get("params", {}).get("n")
    return rows[0]["Ginteractions/s"] * 1e9, f"stage 08 at N = {n}, {doc['device']['name']}"


def stage_10_points(path=TWO_GPUS):
    """Stage 10's measured (gpus, N, ms, efficiency %) on the two-GPU host."""
    if not Path(path).is_file():
        return []
    doc = json.loads(Path(path).read_text())
    n = 256 * 1024  # the multi-GPU table's N (its title; the bench's --mgpu-N)
    return [(r["gpus"], n, r["time_ms"], r["efficiency_pct"]) for r in table_rows(doc, "multi_gpu")]


def fit_stage_10(points):
    """Stage 10's model t = N^2 / (P R10) + c: R10 and the per-call cost c (s) from two points."""
    by_p = {p: ms * 1e-3 for p, _, ms, _ in points}
    if 1 not in by_p or 2 not in by_p:
        return None
    n = points[0][1]
    # t1 = W + c, t2 = W / 2 + c  ->  W = 2 (t1 - t2), c = t1 - W
    work = 2 * (by_p[1] - by_p[2])
    return {"rate": n * n / work, "setup_s": by_p[1] - work}


def stage_11_points(path):
    """(ranks, gpus, N, step_ms, force_ms, gather_ms) of stage 11's rows in a bench_ranks.json."""
    doc = json.loads(Path(path).read_text())
    out = []
    for name in ("ranks_strong", "ranks_weak"):
        for r in table_rows(doc, name):
            if str(r["setup"]).startswith("11_ranks"):
                out.append(
                    (r["ranks"], r["gpus"], r["N"], r["step_ms"], r["force_ms"], r["gather_ms"])
                )
    return out


def fit_stage_11(points):
    """R from the force times (least squares of t = N^2 / P / R), and B, alpha from the
    all-gather times of the runs on distinct GPUs (t = x / B + y alpha, x = (P-1)/P 16 N,
    y = P - 1), or None where there is nothing to fit."""
    real = [p for p in points if p[1] == p[0]]  # one GPU per rank: the runs that show scaling
    if not real:
        return None
    xs = [n * n / ranks for ranks, _, n, _, _, _ in real]
    ts = [force * 1e-3 for *_, force, _ in real]
    inv_rate = sum(x * t for x, t in zip(xs, ts)) / sum(x * x for x in xs)
    fit = {"rate": 1 / inv_rate}
    multi = [p for p in real if p[0] > 1]
    if len(multi) >= 2:
        x = [(r - 1) / r * BYTES_PER_BODY * n for r, _, n, *_ in multi]
        y = [r - 1 for r, *_ in multi]
        t = [g * 1e-3 for *_, g in multi]
        sxx, sxy, syy = (
            sum(a * a for a in x),
            sum(a * b for a, b in zip(x, y)),
            sum(b * b for b in y),
        )
        sxt, syt = sum(a * c for a, c in zip(x, t)), sum(b * c for b, c in zip(y, t))
        det = sxx * syy - sxy * sxy
        if det > 0:
            inv_b, alpha = (sxt * syy - syt * sxy) / det, (sxx * syt - sxy * sxt) / det
            if inv_b > 0:
                fit["bandwidth"], fit["alpha"] = 1 / inv_b, max(alpha, 0.0)
    return fit


def report(rate, source, measured=None, out=sys.stdout):
    w = out.write
    w(f"One-GPU rate R = {rate / 1e12:.3f}e12 interactions/s: MEASURED ({source})\n")
    w("Links: PREDICTED from datasheet leads and an assumed latency per ring step\n")
    for link, p in LINKS.items():
        w(
            f"  {link}: B = {p['bandwidth'] / 1e9:.0f} GB/s per GPU, "
            f"alpha = {p['alpha'] * 1e6:.0f} us (assumed)\n"
        )
    w("\nPREDICTED efficiency of stage 11 (speedup / GPUs); in brackets, without latency\n")
    for n in (256 * 1024, 1024 * 1024):
        w(f"  N = {n // 1024}K\n")
        for link, p in LINKS.items():
            cells = [
                f"{g}: {100 * efficiency(n, g, rate, p['bandwidth'], p['alpha']):.0f}% "
                f"({100 * efficiency(n, g, rate, p['bandwidth']):.0f}%)"
                for g in GPU_COUNTS
            ]
            w(f"    {link:10s} " + ", ".join(cells) + "\n")
    w("\nPREDICTED N below which one more GPU no longer shortens a step\n")
    for link, p in LINKS.items():
        cells = [f"{g}: {n_min(g, rate, p['bandwidth'], p['alpha']):,.0f}" for g in GPU_COUNTS]
        w(f"  {link:10s} " + ", ".join(cells) + "\n")
        w(f"  {'':10s} without latency: N > {n_min(1, rate, p['bandwidth']):,.0f} at any P\n")
    n = 1024 * 1024
    w("\nPREDICTED: 1M bodies on 1024 GPUs\n")
    for link, p in LINKS.items():
        t = step_time(n, 1024, rate, p["bandwidth"], p["alpha"])
        w(
            f"  {link:10s} {t * 1e3:.3f} ms per step, efficiency "
            f"{100 * efficiency(n, 1024, rate, p['bandwidth'], p['alpha']):.1f}% "
            f"(compute {n * n / (1024 * rate) * 1e3:.3f} ms)\n"
        )
    ten = fit_stage_10(stage_10_points())
    if ten:
        w(
            "\nMEASURED stage 10 on 1 and 2 H200s (N = 256K), fitted as t = N^2 / (P R) + c: "
            f"R = {ten['rate'] / 1e12:.3f}e12/s, c = {ten['setup_s'] * 1e3:.2f} ms per call, "
            "where 16 N bytes over PCIe would take about 0.1 ms: the misfit is the setup "
            "(allocation, threads) that stage 10 pays on every call, and stage 11 once\n"
        )
    if measured:
        fit = fit_stage_11(measured)
        w("\nMEASURED stage 11 points (ranks, GPUs, N, step ms) against the model fitted to them\n")
        for ranks, gpus, n, step, force, gather in measured:
            w(
                f"  {ranks} ranks on {gpus} GPU(s), N = {n}: {step:.3f} ms (force {force:.3f}, "
                f"all-gather {gather:.3f})\n"
            )
        if fit:
            w(f"  fitted R = {fit['rate'] / 1e12:.3f}e12/s")
            if "bandwidth" in fit:
                w(f", B = {fit['bandwidth'] / 1e9:.1f} GB/s, alpha = {fit['alpha'] * 1e6:.1f} us")
            w("\n  the fitted model against each point (where they disagree):\n")
            for ranks, gpus, n, step, _, _ in measured:
                if ranks != gpus:
                    continue
                model = 1e3 * step_time(
                    n, ranks, fit["rate"], fit.get("bandwidth", math.inf), fit.get("alpha", 0.0)
                )
                w(
                    f"    {ranks} GPU(s), N = {n}: model {model:.3f} ms, measured {step:.3f} ms "
                    f"({100 * (step - model) / model:+.1f}%)\n"
                )
    else:
        w(
            "\nStage 11 has not been measured on several GPUs yet: no measured point of it is "
            "shown (make bench-ranks on a 2- or 4-GPU machine, then --measured "
            "results/bench_ranks.json)\n"
        )


def chart(path, rate, measured=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    ps = [1, 2, 4] + GPU_COUNTS
    for link, p in LINKS.items():
        for n, style in ((256 * 1024, "--"), (1024 * 1024, "-")):
            ax.plot(
                ps,
                [100 * efficiency(n, g, rate, p["bandwidth"], p["alpha"]) for g in ps],
                style,
                label=f"predicted, {link}, N = {n // 1024}K",
            )
    ten = stage_10_points()
    if ten:
        ax.plot(
            [g for g, *_ in ten],
            [e for *_, e in ten],
            "ks",
            label="measured, stage 10, N = 256K (2 H200s)",
        )
    if measured:
        real = [m for m in measured if m[0] == m[1]]
        base = {n: s for r, _, n, s, _, _ in real if r == 1}
        pts = [(r, 100 * base[n] / s / r) for r, _, n, s, _, _ in real if n in base]
        if pts:
            ax.plot(*zip(*pts), "ro", label="measured, stage 11")
        fit = fit_stage_11(measured)
        if fit and "bandwidth" in fit:
            for n in sorted(base):
                few = [g for g in ps if g <= 64]
                ax.plot(
                    few,
                    [
                        100 * efficiency(n, g, fit["rate"], fit["bandwidth"], fit["alpha"])
                        for g in few
                    ],
                    ":",
                    label=f"model fitted to stage 11's points, N = {n // 1024}K",
                )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("GPUs")
    ax.set_ylabel("efficiency, % (speedup / GPUs)")
    ax.set_ylim(0, 105)
    ax.set_title(
        f"Stage 11, modelled from one H200's rate ({rate / 1e12:.2f}e12 interactions/s)\n"
        "lines: predicted (links: datasheet leads, latency assumed); marks: measured"
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chart", help="write the chart here (PNG, needs matplotlib)")
    ap.add_argument("--measured", help="a bench_ranks.json with stage 11's measured rows")
    ap.add_argument("--one-gpu", default=str(ONE_GPU), help="bench.json with stage 08's rate")
    args = ap.parse_args(argv)
    rate, source = one_gpu_rate(args.one_gpu)
    measured = stage_11_points(args.measured) if args.measured else None
    report(rate, source, measured)
    if args.chart:
        chart(args.chart, rate, measured)
    return 0


if __name__ == "__main__":
    sys.exit(main())
