#!/usr/bin/env python3
"""Draw the course's benchmark results (JSON, schema cuda-course-bench/1 or /2) as PNG charts.

    python3 plots/plot.py [--results DIR] [--out DIR] [--plain] [FILES...]

Every table of a result file that carries a "plot" hint becomes <out>/<bench>-<gpu>-<table>.png
(the GPU in the name: results from two GPUs never replace each other); tables without one are
skipped; --plain names it <table>.png, for a folder that already says both (make reference draws
into reference/<gpu>/<chapter>/). Without FILES it draws <results>/*.json, or, when there are
none, the committed reference results (reference/h200/*/bench.json), and says which. Hint kinds:

    {"kind": "bars", "x": COL, "y": COL, "ceiling": 2990.0, "ceiling_label": "D2D memcpy"}
        "ceiling_from_row": LABEL instead of "ceiling": that row (by its x) is the ceiling line;
        "lower_is_better": true says so on the y axis.
    {"kind": "lines", "x": COL, "y": COL, "series": COL, "logx": true, "logy": false, "ceiling": ...}
        x numeric; one line per value of the optional series column.
    {"kind": "heatmap", "x": COL, "y": COL, "value": COL}
        or a wide table, {"kind": "heatmap", "x": NAME, "y": COL, "value": NAME,
        "columns_are_x": true, "skip_columns": [COL, ...]}: one row per y, one column per x.

A bars table of schema /2 whose rows carry min_ms and max_ms beside their median time (time_ms
or wall_ms) gets error bars from min to max: on the time itself, or, for a rate (inversely
proportional to the time), from the rate at the slowest call to the rate at the fastest.

Exit status: 0 ok, 1 a file or table could not be drawn, 3 matplotlib missing.
"""

import argparse
import json
import math
import re
import sys
import textwrap
from datetime import datetime
from pathlib import Path

SCHEMA = "cuda-course-bench/"
DPI = 150


class PlotError(Exception):
    """A table whose hint does not fit its columns; reported, and the next table is drawn."""


def import_pyplot():
    """matplotlib.pyplot on the Agg backend, or None when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")  # files only: GPU servers have no display
    import matplotlib.pyplot as plt

    return plt


def column(table, name):
    try:
        index = table["columns"].index(name)
    except ValueError:
        raise PlotError(f"no column '{name}' (columns: {', '.join(table['columns'])})") from None
    return [row[index] for row in table["rows"]]


def number(value):
    return math.nan if value is None else float(value)


def label_of(value):
    """Whole numbers as integers (1048576, not 1.04858e+06); others as short decimals."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def power_label(value):
    """2^20 for a large power of two on a log2 axis; otherwise as label_of."""
    if isinstance(value, (int, float)) and value >= 1024 and float(value).is_integer():
        k = int(value).bit_length() - 1
        if 1 << k == int(value):
            return f"2^{k}"
    return label_of(value)


def value_text(value):
    """2660 rather than 2.66e+03: rates in the thousands are read as whole numbers."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def series_names(table, hint):
    """A lines chart's series, in the order of their first row."""
    if hint.get("kind") != "lines" or not hint.get("series"):
        return []
    try:
        return [label_of(v) for v in dict.fromkeys(column(table, hint["series"]))]
    except PlotError:
        return []


def chart_title(table, hint):
    """The table's title; a lines chart's names its series as they are drawn (the part after a
    colon replaced), so the title never names a line the chart does not have."""
    title = table.get("title") or table["name"]
    names = series_names(table, hint)
    if names:
        head = title.split(": ", 1)[0] if ": " in title else title
        title = f"{head}: {', '.join(names)}"
    return title


def title_of(doc, table):
    device = doc.get("device", {}).get("name", "unknown device")
    when = doc.get("date", "")
    try:
        when = datetime.fromisoformat(when.replace("Z", "+00:00")).strftime("%Y-%m-%d")
    except ValueError:
        pass
    runtime = doc.get("cuda", {}).get("runtime")
    cuda = f", CUDA {runtime}" if runtime else ""
    return f"{chart_title(table, table.get('plot') or {})}\n{device}{cuda}, {when}".rstrip(", ")


def draw_ceiling(ax, hint, outside=True):
    """The dashed ceiling line, labelled with its name and its number: beside the plot on the
    right (bars), or just above the line at the left (lines, whose legend is on the right)."""
    ceiling = hint.get("ceiling")
    if ceiling is None:
        return
    ax.axhline(ceiling, linestyle="--", color="0.4", linewidth=1)
    text = f"{hint.get('ceiling_label', 'ceiling')}: {value_text(ceiling)}"
    if outside:
        ax.annotate(
            textwrap.fill(text, 18),
            xy=(1, ceiling),
            xycoords=("axes fraction", "data"),
            xytext=(4, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=8,
            color="0.3",
        )
    else:
        ax.annotate(
            text,
            xy=(0, ceiling),
            xycoords=("axes fraction", "data"),
            xytext=(4, 2),
            textcoords="offset points",
            ha="left",
            va="bottom",
            fontsize=8,
            color="0.3",
        )


def error_bars(table, y):
    """(below, above) per row for a /2 table with min_ms and max_ms beside its median time, or
    None: the time's own range when y is the time, else the range of a rate (value x median / time)."""
    columns = table.get("columns", [])
    median = next((c for c in ("time_ms", "wall_ms") if c in columns), None)
    if median is None or "min_ms" not in columns or "max_ms" not in columns:
        return None
    below, above = [], []
    for v, t, lo, hi in zip(
        column(table, y), column(table, median), column(table, "min_ms"), column(table, "max_ms")
    ):
        v, t, lo, hi = number(v), number(t), number(lo), number(hi)
        if any(math.isnan(x) for x in (v, t, lo, hi)) or min(t, lo, hi) <= 0:
            below.append(0.0)
            above.append(0.0)
        elif y == median:
            below.append(max(v - lo, 0.0))
            above.append(max(hi - v, 0.0))
        else:  # a rate: the slowest call gives the least
            below.append(max(v - v * t / hi, 0.0))
            above.append(max(v * t / lo - v, 0.0))
    return below, above


def draw_bars(ax, table, hint):
    labels = [label_of(v) for v in column(table, hint["x"])]
    values = [number(v) for v in column(table, hint["y"])]
    errors = error_bars(table, hint["y"])
    ceiling = hint.get("ceiling")
    if hint.get("ceiling_from_row") is not None:
        # The ceiling is one of the table's rows: draw it as the line, not as a bar.
        row = label_of(hint["ceiling_from_row"])
        if row not in labels:
            raise PlotError(f"ceiling_from_row '{row}' is not a value of column '{hint['x']}'")
        at = labels.index(row)
        ceiling = values.pop(at)
        labels.remove(row)
        if errors:
            errors = (errors[0][:at] + errors[0][at + 1 :], errors[1][:at] + errors[1][at + 1 :])
        hint = {"ceiling_label": row, **hint}
    ax.bar(range(len(values)), values, color="tab:blue")
    if errors and any(errors[0] + errors[1]):
        ax.errorbar(
            range(len(values)),
            [0 if math.isnan(v) else v for v in values],
            yerr=[errors[0], errors[1]],
            fmt="none",
            ecolor="black",
            elinewidth=0.8,
            capsize=3,
            label="min-max over the repeats",
        )
    finite = [v for v in values if not math.isnan(v)]
    if errors:
        finite += [v + e for v, e in zip(values, errors[1]) if not math.isnan(v)]
    top = max(finite + ([ceiling] if ceiling is not None else []), default=1.0) * 1.08 or 1.0
    # Value labels inside the tall bars, at mid-height: nothing (a ceiling line near the top, a
    # legend) can sit on them. Short bars get theirs just above.
    for i, v in enumerate(values):
        if math.isnan(v):  # a row without a value (a stage still TODO) keeps its place
            ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=8, color="0.4")
        elif v >= 0.2 * top:
            ax.text(
                i,
                v / 2,
                value_text(v),
                ha="center",
                va="center",
                fontsize=8,
                color="white",
                fontweight="bold",
                rotation=90 if len(values) > 10 else 0,
            )
        else:
            ax.annotate(
                value_text(v),
                xy=(i, v),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=8,
            )
    slanted = max(map(len, labels), default=0) > 8
    ax.set_xticks(
        range(len(labels)),
        labels,
        rotation=30 if slanted else 0,
        ha="right" if slanted else "center",
        rotation_mode="anchor",
    )
    ax.set_xlim(-0.6, len(labels) - 0.4)  # keeps value-less bars on the axis
    ax.set_xlabel(hint["x"])
    ax.set_ylabel(hint["y"] + ("  (lower is better)" if hint.get("lower_is_better") else ""))
    draw_ceiling(ax, {**hint, "ceiling": ceiling})
    ax.set_ylim(0, top)  # rates and times: a bar must start at zero to be read honestly


def _powers_of_two(values):
    return all(v > 0 and float(v).is_integer() and (int(v) & (int(v) - 1)) == 0 for v in values)


def draw_lines(ax, table, hint):
    xs = [number(v) for v in column(table, hint["x"])]
    ys = [number(v) for v in column(table, hint["y"])]
    series = column(table, hint["series"]) if hint.get("series") else [None] * len(xs)
    for name in dict.fromkeys(series):  # first-appearance order, for a stable legend
        points = sorted((x, y) for x, y, s in zip(xs, ys, series) if s == name)
        ax.plot(
            [x for x, _ in points],
            [y for _, y in points],
            marker="o",
            markersize=4,
            label=None if name is None else label_of(name),
        )
    if hint.get("logx"):
        ax.set_xscale("log", base=2 if _powers_of_two(xs) else 10)
    ticks = sorted({x for x in xs if not math.isnan(x)})
    # Sizes on a log2 axis read best as 2^k; block sizes and stream counts as plain numbers.
    fmt = power_label if hint.get("logx") and _powers_of_two(xs) else label_of
    if len(ticks) > 12:
        ticks = ticks[::2]
    if len(ticks) <= 12:
        ax.set_xticks(ticks, [fmt(x) for x in ticks])
        ax.minorticks_off()
    if hint.get("logy"):
        ax.set_yscale("log")
    elif all(y >= 0 for y in ys if not math.isnan(y)):
        ax.set_ylim(bottom=0)
    ax.set_xlabel(hint["x"])
    ax.set_ylabel(hint["y"])
    draw_ceiling(ax, hint, outside=False)
    ax.grid(True, which="major", alpha=0.3)
    if hint.get("series"):
        # Beside the plot, never over a line or a point.
        ax.legend(
            title=hint["series"],
            fontsize=8,
            loc="upper left",
            bbox_to_anchor=(1.01, 1),
            borderaxespad=0,
        )


def _ordered(values):
    unique = list(dict.fromkeys(values))
    if all(isinstance(v, (int, float)) for v in unique):
        return sorted(unique)
    return unique


def _as_number(text):
    try:
        return float(text)
    except ValueError:
        return text


def heatmap_cells(table, hint):
    """(x, y, value) triples. A long table has x, y and value columns; a wide one
    ("columns_are_x": true) has one row per y, and its column names are the x values."""
    ys = column(table, hint["y"])
    if not hint.get("columns_are_x"):
        return list(zip(column(table, hint["x"]), ys, column(table, hint["value"])))
    skip = {hint["y"], *hint.get("skip_columns", [])}
    cells = []
    for name in table["columns"]:
        if name not in skip:
            cells += [(_as_number(name), y, v) for y, v in zip(ys, column(table, name))]
    return cells


def draw_heatmap(fig, ax, table, hint):
    cells = [(x, y, number(v)) for x, y, v in heatmap_cells(table, hint)]
    x_keys, y_keys = _ordered([x for x, _, _ in cells]), _ordered([y for _, y, _ in cells])
    grid = [[math.nan] * len(x_keys) for _ in y_keys]
    for x, y, v in cells:
        grid[y_keys.index(y)][x_keys.index(x)] = v
    image = ax.imshow(grid, cmap="viridis", aspect="auto", origin="lower")
    fig.colorbar(image, ax=ax, label=hint["value"])
    finite = [v for _, _, v in cells if not math.isnan(v)]
    middle = (min(finite) + max(finite)) / 2 if finite else 0
    for row, values in enumerate(grid):
        for col, v in enumerate(values):
            if not math.isnan(v):
                # Light text on the dark (low) end of viridis, dark text on the bright end.
                ax.text(
                    col,
                    row,
                    value_text(v),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if v < middle else "black",
                )
    ax.set_xticks(range(len(x_keys)), [label_of(k) for k in x_keys])
    ax.set_yticks(range(len(y_keys)), [label_of(k) for k in y_keys])
    ax.set_xlabel(hint["x"])
    ax.set_ylabel(hint["y"])


def gpu_slug(doc):
    """A short file-name form of the GPU: 'NVIDIA H100 80GB HBM3' -> 'h100', 'NVIDIA GeForce RTX
    4090' -> 'geforce-rtx-4090', 'NVIDIA A100-SXM4-80GB' -> 'a100-sxm4'. Memory sizes and kinds
    are left out; what tells two GPUs apart (PCIe, SXM, the model) is kept."""
    name = str(doc.get("device", {}).get("name") or "unknown-gpu")
    words = [
        w
        for w in re.split(r"[\s_-]+", name)
        if w and w.upper() != "NVIDIA" and not re.fullmatch(r"\d+GB|HBM\d*E?|GDDR\d*X?", w, re.I)
    ]
    return re.sub(r"[^\w.+-]", "-", "-".join(words).lower()) or "unknown-gpu"


def output_name(bench, table, gpu=None, plain=False):
    """<bench>-<gpu>-<table>.png: results from two GPUs never share a file name (plain: <table>.png)."""
    name = table if plain else f"{bench}-{gpu}-{table}" if gpu else f"{bench}-{table}"
    return re.sub(r"[^\w.+-]", "-", name) + ".png"  # '/' and spaces would make paths


def plot_table(plt, doc, table, out_dir, gpu=None, plain=False):
    hint = table["plot"]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    try:
        kind = hint.get("kind")
        if kind == "bars":
            draw_bars(ax, table, hint)
        elif kind == "lines":
            draw_lines(ax, table, hint)
        elif kind == "heatmap":
            draw_heatmap(fig, ax, table, hint)
        else:
            raise PlotError(f"unknown plot kind '{kind}'")
        ax.set_title(title_of(doc, table), fontsize=10)
        if ax.get_legend() is None and ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / output_name(doc.get("bench", "bench"), table["name"], gpu, plain)
        fig.savefig(path, dpi=DPI)
        return path
    finally:
        plt.close(fig)  # many tables in one run: do not keep every figure in memory


def plot_file(plt, path, out_dir, taken=None, plain=False):
    """Draw every hinted table of one result file; return the number of failures. File names
    carry the GPU, and the run's date when an earlier file of this run took the name."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        print(f"plot: cannot read {path}: {err}", file=sys.stderr)
        return 1
    if not str(doc.get("schema", "")).startswith(SCHEMA):
        print(f"plot: {path}: not a {SCHEMA}* result file, skipped", file=sys.stderr)
        return 1
    gpu = gpu_slug(doc)
    if taken is not None:
        key = (doc.get("bench", "bench"), gpu)
        if key in taken:
            gpu = f"{gpu}-{str(doc.get('date', ''))[:10] or len(taken)}"
        taken.add((doc.get("bench", "bench"), gpu))
    failures = 0
    for table in doc.get("tables", []):
        if not table.get("plot"):
            continue
        try:
            print(plot_table(plt, doc, table, out_dir, gpu, plain))
        except (PlotError, KeyError, TypeError, ValueError) as err:
            print(f"plot: {path}: table '{table.get('name')}': {err}", file=sys.stderr)
            failures += 1
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--results", default="results", help="where result JSON files are (default: results)"
    )
    parser.add_argument("--out", help="where PNGs go (default: <results>/plots)")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="name a chart <table>.png (a folder per bench and GPU: reference/<gpu>/<chapter>/)",
    )
    parser.add_argument("files", nargs="*", help="result files (default: every <results>/*.json)")
    args = parser.parse_args(argv)

    plt = import_pyplot()
    if plt is None:
        print(
            f"plot: matplotlib is not installed for {sys.executable}; install it with: "
            "sudo apt-get install python3-matplotlib (or: pip install matplotlib)",
            file=sys.stderr,
        )
        return 3
    files = args.files or sorted(Path(args.results).glob("*.json"))
    if not files and not args.files:
        files = reference_files()
        if not files:
            print(
                f"plot: no result files in {args.results}/ and no committed reference results "
                "(reference/h200/*/bench.json)",
                file=sys.stderr,
            )
            return 1
        print(
            f"plot: no results in {args.results}/ (make bench writes them, on a GPU): drawing the "
            f"committed reference results instead, {len(files)} files from reference/h200/",
            file=sys.stderr,
        )
    elif not args.files:
        print(
            f"plot: drawing this machine's results from {args.results}/ ({len(files)} files)",
            file=sys.stderr,
        )
    out_dir = Path(args.out or Path(args.results) / "plots")
    out_dir.mkdir(parents=True, exist_ok=True)
    taken = set()
    failures = sum(plot_file(plt, path, out_dir, taken, args.plain) for path in files)
    return 1 if failures else 0


def reference_files():
    """The reference GPU's committed results, chapter by chapter."""
    root = Path(__file__).resolve().parent.parent
    return sorted(root.glob("reference/h200/[0-9][0-9]-*/bench.json"))


if __name__ == "__main__":
    sys.exit(main())
