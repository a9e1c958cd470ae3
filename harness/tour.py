#!/usr/bin/env python3
"""make tour: build the reference stages' benchmarks quietly, run them on a GPU, and say what the
course holds.

    tour.py run --build DIR [--jobs N] [--configure CMD] [--args ARGS]
    tour.py tables [--summary-only] [--all] [FILES...]  the progression tables (--all: every table) and the summary of
                                                   result files (default: the committed reference runs)

Building prints one line per chapter; the full output goes to <build>/tour.log, shown (its
errors) only when a step fails. With a GPU, every chapter's benchmark runs as it always did,
then one screen sums up each chapter's best stage against its library and its ceiling, from the
results just written. Without one, the tour prints each chapter's progression table from the
committed reference results (reference/h200/<chapter>/bench.json), labelled with their GPU and
date (and, when a chapter's code changed since, "captured from an older version of this stage"),
and ends with what this machine can do and the next command to type.

Exit status: 0 ok, 1 a build or a benchmark failed.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402
import stamps  # noqa: E402

ROOT = course.ROOT

# The width the tour's own text keeps to: a laptop terminal's.
WIDTH = 100
# The statistics of a row beside its median (time_ms): the JSON file and the chapter's README keep
# them; the tour drops them so that a progression table fits WIDTH.
STATISTICS = ("min_ms", "max_ms", "repeats", "spread%", "batch_ms")


def wrap(text, indent="", hanging="  ", width=WIDTH):
    """Prose as lines of at most width columns; a word longer than that (a path) stays whole."""
    # Hyphens are not break points: chapter names (11-streaming) and ranges (1.03-1.08x) stay whole.
    return textwrap.wrap(
        str(text),
        width,
        initial_indent=indent,
        subsequent_indent=indent + hanging,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent]


def split_header(name):
    """A column name on two lines, broken at a space or after a '_' or '/' where that makes it
    narrowest (pct_fp32_ceiling: pct_fp32_ / ceiling); a name without one stays whole."""
    cuts = [i + 1 for i, c in enumerate(name[:-1]) if c in "_/ "]
    if not cuts:
        return [name]
    cut = min(cuts, key=lambda i: max(i, len(name) - i))
    return [name[:cut].rstrip(), name[cut:]]


def fit_rows(rows, left, width, sep="  ", indent=""):
    """Aligned lines of rows of text cells (rows[0] the header), at most width columns where the
    cells allow. First a name wider than its column's cells goes on two header lines; then the
    widest column still able to narrow wraps its cells at spaces (its rows take several lines).
    Columns in left are left-aligned, the others right-aligned."""
    ncols = len(rows[0])
    heads = [[name] for name in rows[0]]
    body = rows[1:]
    cell_width = [max([0] + [len(r[i]) for r in body]) for i in range(ncols)]

    def widths_now():
        return [max([cell_width[i]] + [len(h) for h in heads[i]]) for i in range(ncols)]

    room = width - len(indent) - len(sep) * (ncols - 1)
    # Splitting a name costs one header line; wrapping cells costs lines in every row it touches.
    # A split that saves a column or two only makes names hard to read: those come last, below.
    while sum(widths_now()) > room:
        saving = [
            max(len(heads[i][0]), cell_width[i])
            - max([cell_width[i]] + [len(h) for h in split_header(heads[i][0])])
            if len(heads[i]) == 1
            else 0
            for i in range(ncols)
        ]
        i = max(range(ncols), key=lambda i: saving[i])
        if saving[i] < 3:
            break
        heads[i] = split_header(heads[i][0])
    words = [max([0] + [len(w) for r in body for w in r[i].split()]) for i in range(ncols)]
    while sum(widths_now()) > room:
        widths = widths_now()
        # A column's cells can narrow down to its name and its longest word.
        narrowable = [
            i for i in range(ncols) if widths[i] > max([words[i]] + [len(h) for h in heads[i]])
        ]
        if narrowable:
            i = max(narrowable, key=lambda i: widths[i])
            cell_width[i] = max(
                len(piece) for r in body for piece in wrap(r[i], hanging="", width=widths[i] - 1)
            )
            continue
        # Every column is down to its name or its longest word: names on two lines, then again.
        unsplit = [
            i
            for i in range(ncols)
            if len(heads[i]) == 1
            and len(heads[i][0]) > words[i]
            and len(split_header(heads[i][0])) == 2
        ]
        if not unsplit:
            break
        i = max(unsplit, key=lambda i: len(heads[i][0]))
        heads[i] = split_header(heads[i][0])
    widths = widths_now()
    depth = max(len(h) for h in heads)
    # Names sit on the header's last line, over the rule, whatever their number of lines.
    header = [[""] * (depth - len(h)) + h for h in heads]
    out = []
    wrapped = [[wrap(c, hanging="", width=w) for c, w in zip(r, widths)] for r in body]
    for cells in [header] + wrapped:
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "") for c in cells]
            out.append(
                indent
                + sep.join(
                    f"{t:<{w}}" if i in left else f"{t:>{w}}"
                    for i, (t, w) in enumerate(zip(parts, widths))
                ).rstrip()
            )
    return out, depth


# ---------------------------------------------------------------- tables


def cell_text(value):
    """A number as the benchmarks print it: about four significant digits, no exponent."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return "-"
    magnitude = abs(value)
    digits = 0 if magnitude >= 1000 else 1 if magnitude >= 100 else 2 if magnitude >= 10 else 3
    return f"{value:.{digits}f}"


def format_table(table):
    """The lines the benchmark printed for a table: title, header, rule, rows aligned like
    harness/bench.cpp (names left, numbers right)."""
    columns = table.get("columns", [])
    rows = [
        [cell_text(row[i]) if i < len(row) else "-" for i in range(len(columns))]
        for row in table.get("rows", [])
    ]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]

    def line(cells):
        parts = [f"{cells[0]:<{widths[0]}}"] + [f"{c:>{w}}" for c, w in zip(cells[1:], widths[1:])]
        return "  ".join(parts).rstrip()

    out = [
        table.get("title") or table.get("name", ""),
        line(columns),
        "-" * (sum(widths) + 2 * (len(widths) - 1)),
    ]
    return out + [line(r) for r in rows] + [str(n) for n in table.get("notes", [])]


def fitted_table(table, width=WIDTH):
    """A table as the tour shows it: format_table's, less the STATISTICS columns, its long cells
    wrapped so that it fits width columns where it can; title and notes wrapped as prose."""
    columns = table.get("columns", [])
    keep = [i for i, c in enumerate(columns) if c not in STATISTICS]
    rows = [[columns[i] for i in keep]]
    rows += [
        [cell_text(row[i]) if i < len(row) else "-" for i in keep] for row in table.get("rows", [])
    ]
    lines, depth = fit_rows(rows, {0}, width)
    rule = "-" * max(len(line) for line in lines)
    title = wrap(table.get("title") or table.get("name", ""))
    notes = [line for note in table.get("notes", []) for line in wrap(note)]
    return title + lines[:depth] + [rule] + lines[depth:] + notes


def repeats(headline, notes):
    """Whether a headline says again what a table's note says: the benchmark prints its goals
    under the table and again, with the chapter's name for a prefix, as headlines."""

    def shared_tail(a, b):
        n = 0
        while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
            n += 1
        return n

    return any(shared_tail(str(headline), str(note)) >= 0.8 * len(str(headline)) for note in notes)


def progression_tables(doc):
    """The tables that tell a chapter's story stage by stage (progression, device_progression...)."""
    return [t for t in doc.get("tables", []) if t.get("name", "").endswith("progression")]


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def summarize(table):
    """The best stage of a progression table against its library row and ceiling row:
    a dict with metric, lower_is_better, best (label, value), library and ceiling ((label, value)
    or None), or None when the table has no stage with a value."""
    hint = table.get("plot") or {}
    columns = table.get("columns", [])
    metric = hint.get("y")
    if metric not in columns:
        return None
    col = columns.index(metric)
    lower = bool(hint.get("lower_is_better"))
    rows = [r for r in table.get("rows", []) if r and col < len(r)]
    stages = [
        (r[0], r[col])
        for r in rows
        if isinstance(r[0], str) and course.STAGE_LABEL.match(r[0]) and _number(r[col])
    ]
    if not stages:
        return None
    best = (min if lower else max)(stages, key=lambda s: s[1])
    library = next(((r[0], r[col]) for r in rows if "library" in r[1:] and _number(r[col])), None)
    ceiling_name = hint.get("ceiling_from_row")
    ceiling = next(
        (
            (r[0], r[col])
            for r in rows
            if ceiling_name is not None and r[0] == ceiling_name and _number(r[col])
        ),
        None,
    )
    if ceiling is None:
        ceiling = next(
            (
                (r[0], r[col])
                for r in rows
                if isinstance(r[0], str)
                and _number(r[col])
                and re.search(r"^(ceiling|floor)\b|\bceiling\b", r[0])
            ),
            None,
        )
    return {
        "metric": metric,
        "lower_is_better": lower,
        "best": best,
        "library": library,
        "ceiling": ceiling,
    }


def _ratio(s, other):
    """How the best stage compares with another row: > 1 is better, whichever way the metric goes."""
    best = s["best"][1]
    if not other or not other[1] or not best:
        return None
    return other[1] / best if s["lower_is_better"] else best / other[1]


def _strip(label):
    return re.sub(r"^(ceiling|floor):\s*", "", label)


def interleaved_range(doc):
    """(min, max) of the library ratio over the interleaved pairs, from the first row of a
    schema /2 file's first "vs_*" table with min and max columns (the aligned case); else None."""
    for table in doc.get("tables", []):
        columns = table.get("columns", [])
        if (
            not str(table.get("name", "")).startswith("vs_")
            or "min" not in columns
            or "max" not in columns
        ):
            continue
        rows = table.get("rows", [])
        if (
            rows
            and _number(rows[0][columns.index("min")])
            and _number(rows[0][columns.index("max")])
        ):
            return rows[0][columns.index("min")], rows[0][columns.index("max")]
    return None


def summary_row(name, s, interleaved=None):
    """[chapter, best stage, its rate, against the library, against the ceiling] as text:
    ['12-reduction', '10_fastest', '3094 GB/s', '1.02x CUB DeviceReduce::Sum', '101% of float4 read kernel'];
    with the interleaved range (min, max) of a /2 file: '1.02x CUB DeviceReduce::Sum (1.01-1.04x interleaved)'."""
    if s is None:
        return [name, "no stage with a result", "", "", ""]
    best_label, best_value = s["best"]
    lib, ceil = _ratio(s, s["library"]), _ratio(s, s["ceiling"])
    against = f"{lib:.2f}x {s['library'][0]}" if lib else "-"
    if lib and interleaved:
        against += f" ({interleaved[0]:.2f}-{interleaved[1]:.2f}x interleaved)"
    return [
        name,
        best_label,
        f"{cell_text(best_value)} {s['metric']}",
        against,
        f"{100 * ceil:.0f}% of {_strip(s['ceiling'][0])}" if ceil else "-",
    ]


def summary_lines(entries, width=WIDTH):
    """Aligned summary rows, with a header, from (name, summary dict) pairs; long cells wrap so
    that the rows fit width columns."""
    rows = [["chapter", "best stage", "rate", "against the library", "against the ceiling"]]
    rows += [summary_row(*entry) for entry in entries]
    return fit_rows(rows, set(range(5)), width, indent="  ")[0]


def summary_entries(doc, chapter):
    """(name, summary, interleaved range or None) per progression table; the range (a /2 file's
    vs_* table) goes with the first, the table whose best stage it compares."""
    tables = progression_tables(doc)
    entries = []
    for i, t in enumerate(tables):
        name = chapter
        if len(tables) > 1:
            name += " " + t["name"].replace("_progression", "").replace("progression", "").strip(
                "_"
            )
        entries.append((name, summarize(t), interleaved_range(doc) if i == 0 else None))
    return entries


def run_label(doc, path, reference):
    device = doc.get("device", {}).get("name", "unknown GPU")
    cuda = doc.get("cuda", {}).get("runtime")
    cuda = f", CUDA {cuda}" if cuda else ""
    where = "reference run, not this machine" if reference else "this machine"
    try:
        path = Path(path).resolve().relative_to(ROOT)
    except ValueError:
        pass
    older = f"; {stamps.STALE_NOTE}" if reference and stamps.stale_note(ROOT / path) else ""
    return f"{where}: {device}{cuda}, {course.short_date(doc)} ({path}{older})"


def chapter_report(chapter, path, doc, reference=True, every_table=False):
    """A chapter's heading, its label and its progression tables (every table, as the benchmark
    printed them), as lines; the headlines that its tables' notes do not already say."""
    lines = ["", f"== {doc.get('title') or chapter}"] + wrap(run_label(doc, path, reference), "   ")
    tables = doc.get("tables", []) if every_table else progression_tables(doc)
    for table in tables:
        lines += [""] + (format_table(table) if every_table else fitted_table(table))
    notes = [note for table in tables for note in table.get("notes", [])]
    headlines = [h for h in doc.get("headlines") or [] if not repeats(h, notes)]
    if headlines:
        lines += ["", "Headlines:"] + [line for h in headlines for line in wrap(h, "  ")]
    return lines


def results_for(chapters, reference=True, results=None, since=None):
    """[(chapter, path, doc)] from the committed reference runs, or from results/ (those written
    after `since`, when given)."""
    found = []
    for chapter in chapters:
        if reference:
            path, doc = course.reference_result(chapter)
        else:
            path = Path(results or ROOT / "results") / f"{chapter}.json"
            fresh = path.is_file() and (since is None or path.stat().st_mtime >= since)
            doc = course.load_result(path) if fresh else None
        if doc:
            found.append((chapter, path, doc))
    return found


def summary_block(found, reference):
    entries = [e for chapter, _, doc in found for e in summary_entries(doc, chapter)]
    if not entries:
        return []
    dates = {}
    for _, _, doc in found:
        dates.setdefault(doc.get("device", {}).get("name", "?"), set()).add(course.short_date(doc))
    runs = "; ".join(f"{device}, {', '.join(sorted(d))}" for device, d in sorted(dates.items()))
    where = "reference runs, not this machine" if reference else "this machine"
    return (
        ["", "Summary: each chapter's best stage against its library and its measured ceiling"]
        + wrap(f"({where}: {runs})", hanging=" ")
        + summary_lines(entries)
    )


# ---------------------------------------------------------------- the machine

gpu_reason = course.gpu_reason


def minutes(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def error_excerpt(text, limit=40):
    """The failing part of a build log: from the first FAILED:/error line, else its end."""
    lines = text.splitlines()
    start = next(
        (
            i
            for i, l in enumerate(lines)
            if l.startswith("FAILED:")
            or " error" in l
            or l.startswith("CMake Error")
            or l.startswith("deps:")
        ),
        None,
    )
    if start is None:
        return lines[-limit:]
    return lines[start : start + limit]


def step(label, command, log, width):
    """Run one quiet build step, its output appended to the log; one progress line."""
    tty = sys.stdout.isatty()
    print(f"  {label:<{width}} " + ("..." if tty else ""), end="", flush=True)
    back = f"\r  {label:<{width}} " if tty else ""
    start = time.monotonic()
    with open(log, "a") as f:
        f.write(f"\n=== {label}: {command if isinstance(command, str) else shlex.join(command)}\n")
        f.flush()
        mark = f.tell()
        status = subprocess.run(
            command, shell=isinstance(command, str), stdout=f, stderr=subprocess.STDOUT, cwd=ROOT
        ).returncode
    took = minutes(time.monotonic() - start)
    if status == 0:
        print(f"{back}done ({took})")
        return True
    print(f"{back}FAILED ({took}); from {log}:")
    with open(log) as f:
        f.seek(mark)
        print("\n".join("    " + l for l in error_excerpt(f.read())))
    return False


def host_test_count(build):
    try:
        run = subprocess.run(
            ["ctest", "-N", "-L", "host"], cwd=build, capture_output=True, text=True
        )
    except OSError:
        return None
    m = re.search(r"Total Tests:\s*(\d+)", run.stdout)
    return int(m.group(1)) if m else None


def region_file(stage_id):
    """Where a stage's EXERCISE region is: its own file, else the lesson header it includes that
    holds one (11-streaming/01_grid_stride's loop is in lesson_grid_stride.cuh)."""
    chapter, stage = stage_id.split("/", 1)
    path = ROOT / "chapters" / chapter / f"{stage}.cu"
    text = path.read_text(errors="replace") if path.is_file() else ""
    if "EXERCISE BEGIN" not in text:
        for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            header = ROOT / "chapters" / chapter / name
            if (
                ROOT / "solutions" / chapter / name
            ).is_file() and "EXERCISE BEGIN" in header.read_text(errors="replace"):
                return f"chapters/{chapter}/{name}"
    return f"chapters/{stage_id}.cu"


def offline_ending(build, reason):
    nbody = course.program_chapter("nbody")
    first = course.stage_ids()[0] if course.stage_ids() else "11-streaming/01_grid_stride"
    first_bench = course.bench_chapters()[0] if course.bench_chapters() else "11-streaming"
    first_stage = next((i for i in course.stage_ids() if i.startswith(first_bench + "/")), first)
    fastest = next(
        (f"{c}/{course.stages(c)[-1]}" for c in course.chapters() if c.endswith("-reduction")),
        first_stage,
    )
    hosts = host_test_count(build)
    hosts = f"the {hosts} host tests run" if hosts else "the host tests run"
    rows = [("make check", f"every stage compiled; {hosts}")]
    if nbody:
        rows.append(
            (
                "make nbody ARGS='--stage cpu'",
                "the N-body simulation on its CPU stage (SIMD x threads)",
            )
        )
    rows += [
        (f"make sass STAGE={fastest}", "the reference GPU's SASS; also make sass-count, sass-diff"),
        ("make progress", "your exercises' state: answer, sanitizers, speed, SASS"),
    ]
    plots = plot_python()
    if plots:
        rows.insert(-1, ("make plots", "charts of the reference results above"))
    lines = ["", f"This machine has no usable GPU: {reason}. What runs here:"]
    lines += fit_rows([["", ""]] + [list(r) for r in rows], {0, 1}, WIDTH, indent="  ")[0][1:]
    if not plots:
        lines += wrap(f"make plots needs matplotlib: {install_command('python3-matplotlib')}", "  ")
    lines += [""] + wrap(
        f"Next: make check, then fill in the EXERCISE region of "
        f"{region_file(first_stage)} (make check STAGE=exercise/{first_stage})."
    )
    return lines


def plot_python():
    """The interpreter make plots would use (the Makefile's PLOT_PYTHON: this one, else
    /usr/bin/python3), or None when neither has matplotlib."""
    for python in (sys.executable, "/usr/bin/python3"):
        if not python or not os.access(python, os.X_OK):
            continue
        try:
            found = subprocess.run([python, "-c", "import matplotlib"], capture_output=True)
            if found.returncode == 0:
                return python
        except OSError:
            pass
    return None


def install_command(package):
    return ("" if os.geteuid() == 0 else "sudo ") + f"apt-get install {package}"


# ---------------------------------------------------------------- commands


def cmd_run(args):
    build = Path(args.build)
    if not build.is_absolute():
        build = ROOT / build
    build.mkdir(parents=True, exist_ok=True)
    log = build / "tour.log"
    log.write_text("")
    benches = course.bench_chapters()
    others = [c for c in course.chapters() if c not in benches]
    width = max(len(c) for c in benches + ["configure"])
    reason = gpu_reason()
    if reason is not None:
        # Nothing to run here: the committed reference results need no build (make check builds
        # what this machine can check).
        print(
            "\n".join(
                wrap(
                    f"make tour: no GPU here ({reason}), so nothing is built or run. "
                    "Below, each chapter's progression from the committed reference "
                    "results: a reference run, not this machine (time_ms is the median; "
                    "min, max and spread are in each result file)."
                )
            )
        )
        if args.args.strip():
            print(
                "\n".join(
                    wrap(
                        f"note: ARGS='{args.args.strip()}' is for the benchmarks, which "
                        "need a GPU: not used here"
                    )
                )
            )
        found = results_for(benches)
        for chapter, path, doc in found:
            print("\n".join(chapter_report(chapter, path, doc)))
        for chapter in others:
            print()
            print(
                "\n".join(
                    wrap(
                        f"== {chapter}: no benchmark (its lessons are the tests and the "
                        f"SASS: make check STAGE={chapter}, "
                        f"make sass STAGE={chapter}/...)",
                        hanging="   ",
                    )
                )
            )
        print("\n".join(summary_block(found, reference=True)))
        print("\n".join(offline_ending(build, reason)))
        return 0
    print(
        f"make tour: building the reference stages' benchmarks ({len(benches)} chapters; "
        f"the full output goes to {log.relative_to(ROOT) if log.is_relative_to(ROOT) else log})"
    )
    start = time.monotonic()
    if args.configure and not step("configure", args.configure, log, width):
        return 1
    for chapter in benches:
        if not step(
            chapter,
            [
                "cmake",
                "--build",
                str(build),
                "-j",
                str(args.jobs),
                "--target",
                course.bench_program(chapter),
            ],
            log,
            width,
        ):
            return 1
    print(f"  built in {minutes(time.monotonic() - start)}")
    return run_benches(build, benches, others, args.args)


def run_benches(build, benches, others, extra, results=None):
    """Every benchmark as it always ran (its tables on stdout, its JSON in results/), then the
    summary of the results they just wrote."""
    start = time.time() - 1
    failed = []
    for chapter in benches:
        status = subprocess.run(
            [str(build / "bin" / course.bench_program(chapter)), *shlex.split(extra or "")],
            cwd=ROOT,
        ).returncode
        if status != 0:
            failed.append(f"{chapter} (exit status {status})")
    found = results_for(benches, reference=False, results=results, since=start)
    print("\n".join(summary_block(found, reference=False)))
    missing = [c for c in benches if c not in {f[0] for f in found}]
    if missing:
        print(f"  no results written by: {', '.join(missing)}")
    if others:
        print(f"  {', '.join(others)}: no benchmark (tests and SASS only)")
    if failed:
        print(f"\nmake tour: failed: {', '.join(failed)}")
        return 1
    print()
    print(
        "\n".join(
            wrap(
                "Next: make plots (charts of these results, in results/plots/), make check "
                "(every test), make sass-diff A=... B=... (two stages' SASS side by side)."
            )
        )
    )
    return 0


def cmd_tables(args):
    if args.files:
        found = []
        for f in args.files:
            doc = course.load_result(f)
            if doc is None:
                print(f"tour: {f}: not a benchmark result file", file=sys.stderr)
                return 1
            found.append((doc.get("bench", Path(f).stem), f, doc))
        reference = args.reference
    else:
        found, reference = results_for(course.bench_chapters()), True
    if not args.summary_only:
        for chapter, path, doc in found:
            print("\n".join(chapter_report(chapter, path, doc, reference, args.all)))
    print("\n".join(summary_block(found, reference)))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="tour.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run", help="build, then run the benchmarks (or show the reference results)"
    )
    run.add_argument("--build", default="build")
    run.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    run.add_argument(
        "--configure", help="shell command that configures the build (run quietly first)"
    )
    run.add_argument("--args", default="", help="options for every benchmark (make tour ARGS=...)")
    run.set_defaults(func=cmd_run)
    tables = sub.add_parser("tables", help="progression tables and summary of result files")
    tables.add_argument("--summary-only", action="store_true")
    tables.add_argument(
        "--all", action="store_true", help="every table of each file, not only its progression"
    )
    tables.add_argument(
        "--reference",
        action="store_true",
        help="label the given files as a reference run, not this machine",
    )
    tables.add_argument("files", nargs="*")
    tables.set_defaults(func=cmd_tables)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
