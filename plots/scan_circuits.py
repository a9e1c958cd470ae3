#!/usr/bin/env python3
"""Draw the scan circuits of The CUDA Handbook 13.3 for 16 inputs: serial (figure 13.6),
Brent-Kung (13.9), Sklansky (13.10) and Kogge-Stone (13.11), each with its depth and work.

Time runs down the page; each vertical line is a wire (an element); a dot on wire i at step t
is an operator node that adds the value of the wire its line comes from (as it stood after step
t - 1) into wire i. Every circuit computes the inclusive scan.

    /usr/bin/python3 plots/scan_circuits.py [--n 16] [--out reference/h200/13-scan/scan_circuits.png]

The course's code, by circuit (chapters/13-scan/README.md says more): serial in host_scan.h and
in each thread's four elements (scan4); Kogge-Stone in every warp scan (scan_warp, the shuffle
scans of stage 06); Brent-Kung in stage 10's Blelloch up-sweep/down-sweep.
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def serial(n):
    """[(step, src, dst)]: wire dst += wire src at that step."""
    return [(i, i - 1, i) for i in range(1, n)]


def kogge_stone(n):
    ops, step, off = [], 1, 1
    while off < n:
        ops += [(step, i - off, i) for i in range(off, n)]
        step, off = step + 1, off * 2
    return ops


def sklansky(n):
    ops, step, half = [], 1, 1
    while half < n:
        block = 2 * half
        ops += [(step, (i // block) * block + half - 1, i) for i in range(n) if i % block >= half]
        step, half = step + 1, half * 2
    return ops


def brent_kung(n):
    ops, step, d = [], 1, 1
    while d < n:  # up-sweep (Blelloch's reduce phase)
        ops += [(step, i - d, i) for i in range(n) if (i + 1) % (2 * d) == 0]
        step, d = step + 1, d * 2
    d //= 4
    while d >= 1:  # down-sweep, inclusive form: fan each partial into the middle of the next span
        ops += [(step, i - d, i) for i in range(3 * d - 1, n, 2 * d) if (i + 1) % (2 * d) != 0]
        step, d = step + 1, d // 2
    return ops


def depth_and_work(n, ops):
    level = [0] * n
    for step in sorted({s for s, _, _ in ops}):
        new = level[:]
        for s, src, dst in ops:
            if s == step:
                new[dst] = max(level[dst], level[src]) + 1
        level = new
    return max(level), len(ops)


def as_soon_as_possible(n, ops):
    """The same ops, each moved to the earliest step its inputs allow. The drawings keep the
    circuits' own schedules (Brent-Kung's up-sweep, then its down-sweep); the depth printed is
    this schedule's, the longest chain of adds: Brent-Kung's first down-sweep add can run beside
    the last up-sweep add, so 16 inputs are drawn in 7 steps and have depth 6 (2 log2 n - 2)."""
    level, out = [0] * n, []
    for step in sorted({s for s, _, _ in ops}):
        new = level[:]
        for s, src, dst in ops:
            if s == step:
                new[dst] = max(level[dst], level[src]) + 1
                out.append((new[dst], src, dst))
        level = new
    return out


def check(n, ops):
    """The circuit computes the inclusive scan of 1, 2, ... n (an assertion, not a test run)."""
    x = list(range(1, n + 1))
    for step in sorted({s for s, _, _ in ops}):
        before = x[:]
        for s, src, dst in ops:
            if s == step:
                x[dst] = before[dst] + before[src]
    want = [sum(range(1, i + 2)) for i in range(n)]
    assert x == want, (x, want)


def draw(ax, n, name, ops, where):
    depth, work = depth_and_work(n, ops)
    steps = max(s for s, _, _ in ops)
    drawn = "" if steps == depth else f" (drawn in {steps} steps)"
    for i in range(n):
        ax.plot([i, i], [0, steps + 0.6], color="0.75", lw=1, zorder=1)
    for s, src, dst in ops:
        ax.plot([src, dst], [s - 0.75, s], color="tab:blue", lw=1.2, zorder=2)
        ax.plot([dst], [s], "o", color="tab:red", ms=4.5, zorder=3)
    ax.set_xlim(-0.8, n - 0.2)
    ax.set_ylim(steps + 0.9, -0.6)
    ax.set_xticks(range(n))
    ax.set_xticklabels([str(i) for i in range(n)], fontsize=7)
    ax.set_yticks(range(1, steps + 1))
    ax.tick_params(axis="y", labelsize=7)
    ax.set_ylabel("step", fontsize=8)
    ax.set_title(f"{name}: depth {depth}{drawn}, work {work} adds\n{where}", fontsize=9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=16, help="inputs (a power of two)")
    ap.add_argument("--out", default=str(ROOT / "reference/h200/13-scan/scan_circuits.png"))
    args = ap.parse_args()
    n = args.n
    circuits = [
        ("Serial (fig. 13.6)", serial(n), "host_scan.h, scan4 (a thread's 4), scan_rows"),
        (
            "Kogge-Stone (fig. 13.11)",
            kogge_stone(n),
            "every warp scan: scan_warp, shfl_warp_scan (stages 02-12)",
        ),
        (
            "Sklansky (fig. 13.10)",
            sklansky(n),
            "minimum depth and work n/2 log n: not in the course's code",
        ),
        (
            "Brent-Kung (figs. 13.8, 13.9)",
            brent_kung(n),
            "Blelloch's up-/down-sweep: stage 10_blelloch (lab)",
        ),
    ]
    for _, ops, _ in circuits:
        check(n, ops)
        check(n, as_soon_as_possible(n, ops))
    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5))
    for ax, (name, ops, where) in zip(axes.flat, circuits):
        draw(ax, n, name, ops, where)
    fig.suptitle(
        f"Scan circuits for {n} inputs (The CUDA Handbook 13.3): a dot adds the wire its line comes from",
        fontsize=11,
    )
    fig.tight_layout()
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    for name, ops, _ in circuits:
        d, w = depth_and_work(n, ops)
        print(f"{name}: depth {d}, work {w}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
