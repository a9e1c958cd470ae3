#!/usr/bin/env python3
"""Results tables in the READMEs, generated from the committed results: one home per number.

Measured figures live in the committed benchmark results, reference/<gpu>/<chapter>/*.json.
A README does not copy them: it marks where a table goes, and `make tables` fills the block from
the JSON. A figure then has one home, and a block that no longer matches its JSON (a new
reference run committed, a table renamed) fails the host test harness/tests/test_readme_tables.py
until `make tables` is run again.

    readme_tables.py write [README ...]   fill every marked block (default: README.md, each
                                          chapter's README.md and notes.md, and docs/*.md); the
                                          files that change are named
    readme_tables.py check [README ...]   exit 1, naming each block that differs from what write
                                          would put there (and the command that fixes it)

A block is two marker lines, each alone on its line, and what the generator writes between them:

    <!-- results: progression columns=stage,time_ms,GB/s,vs_CUB rows='^(0[1-9]|10)_|CUB' -->
    NVIDIA H200, CUDA 13.0 (driver 13.0), 2026-11-28, `make bench CHAPTER=12-reduction` ([h200/12-reduction/bench.json](../reference/h200/12-reduction/bench.json))

    ```text
    Reduction progression (256M ints, 4 B/element read)
    stage        time_ms   GB/s  vs_CUB
    ...
    ```
    <!-- end results -->

The opening marker names a table of the JSON (its "name": `tour.py tables --all` prints them
all) and options, key=value, quoted like a shell word where a value has spaces or backslashes
(single quotes keep a regex as it is):

    columns=a,b,c      these columns, in this order (default: all)
    rows=REGEX         only the rows whose first cell, as printed, matches REGEX (re.search)
    chapter=NN-topic   whose reference result (default: the README's own chapter; the root
                       README must say)
    file=PATH          this result file instead, relative to the repository root
    gpu=NAME           the chapter's newest committed result on a GPU whose device name contains
                       NAME (gpu=H200), instead of its reference result; not with file=
    format=text        the table as the benchmark prints it, in a ```text fence (the default);
                       format=markdown: a Markdown table, names left, numbers right
    notes=yes          the table's notes under it (default: no; they are run warnings and goals)

The reference result is the reference GPU's reference/h200/<chapter>/bench.json (course.reference_result,
the one `make tour` shows without a GPU). Its provenance is the block's first line: the GPU, the
CUDA runtime and driver versions, the date, the command that produces it (the JSON's "command"
when it records one, else `make bench CHAPTER=<its bench>`) and a link to the file. To add a
table: write the two marker lines with nothing between them, run `make tables`, commit both.
Markers inside a fenced code block are text, not blocks (a README may show the syntax).
`<!-- results: profiles -->` (a chapter's page) is the chapter's Nsight Compute captures on the
reference GPU, reference/h200/<chapter>/profiles/*.csv, as a Markdown table: a row per stage (a row
per bench row for a stage with several) and the library's row last, the columns the metrics
`make profile` shows for the chapter, or columns= names them (profile.py's row keys: time_us,
pipe_fma, occupancy, stalls, ...); rows= selects rows by their name.
`<!-- results: summary -->` (no chapter or file) is the cross-chapter headline: each chapter's best
stage against its library and its ceiling, as make tour ends, from every chapter's reference.
`<!-- results: summary gpu=H200 -->` is the same headline from another GPU's committed results:
each chapter's newest result whose device name contains H200, a chapter with none left out (a
block where no chapter has one is an error). "Newest" is a one-GPU run before a run on several,
then the JSON's date, then the path (the later wins a tie), so the choice does not depend on the
order of the files: chapter 14 keeps the rows that use both GPUs of a two-GPU H200 machine
(reference/h200x2/14-nbody/bench.json, which its multi-GPU table shows) beside the one-GPU
reference/h200/14-nbody/bench.json, and gpu=H200 takes the one-GPU run.

Exit status: 0 fine, 1 a block is stale or cannot be generated (its file:line says why).
"""

import argparse
import os
import re
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402
import tour  # noqa: E402

ROOT = course.ROOT
BEGIN = re.compile(r"^\s*<!--\s*results:\s*(.*?)\s*-->\s*$")
END = re.compile(r"^\s*<!--\s*end results\s*-->\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
OPTIONS = ("columns", "rows", "chapter", "file", "gpu", "format", "notes")
FIX = "make tables"


class BlockError(Exception):
    """A marker that cannot be read or filled: one line, file:line first."""


def readmes(root=ROOT):
    """The pages whose blocks make tables fills: the root README, then each chapter's README, its
    notes.md and profiles.md (the material a chapter README links to), then the pages of docs/."""
    found = [root / "README.md"]
    for chapter in sorted(p for p in (root / "chapters").glob("*") if p.is_dir()):
        found += [chapter / "README.md", chapter / "notes.md", chapter / "profiles.md"]
    found += sorted((root / "docs").glob("*.md"))
    return [p for p in found if p.is_file()]


def rel(path, root=ROOT):
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- markers


def parse_spec(text, where):
    """'progression columns=a,b rows=^0' -> {'table': 'progression', 'columns': [...], ...}."""
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise BlockError(f"{where}: results marker: {err} in '{text}'") from None
    names = [w for w in words if "=" not in w]
    if len(names) != 1:
        raise BlockError(
            f"{where}: results marker names {len(names)} tables ('{text}'); "
            f"write <!-- results: TABLE [columns=a,b] [rows=REGEX] ... -->"
        )
    spec = {"table": names[0]}
    for word in words:
        if "=" not in word:
            continue
        key, value = word.split("=", 1)
        if key not in OPTIONS:
            raise BlockError(
                f"{where}: results marker: unknown option '{key}' (options: {', '.join(OPTIONS)})"
            )
        spec[key] = value
    if spec.get("gpu") == "":
        raise BlockError(
            f"{where}: results marker: gpu= names no GPU; write a part of its device name (gpu=H200)"
        )
    if "gpu" in spec and "file" in spec:
        raise BlockError(
            f"{where}: results marker: gpu= and file= both say whose results; give one"
        )
    if spec.get("format", "text") not in ("text", "markdown"):
        raise BlockError(f"{where}: results marker: format={spec['format']}; use text or markdown")
    if spec.get("notes", "no") not in ("yes", "no"):
        raise BlockError(f"{where}: results marker: notes={spec['notes']}; use yes or no")
    if "rows" in spec:
        try:
            re.compile(spec["rows"])
        except re.error as err:
            raise BlockError(
                f"{where}: results marker: rows={spec['rows']} is not a regex ({err})"
            ) from None
    if "columns" in spec:
        spec["columns"] = [c for c in spec["columns"].split(",") if c]
    return spec


def find_blocks(text, name):
    """[(begin line index, end line index, spec)] of a README's blocks; markers inside a fenced
    code block outside any results block are text. BlockError for a marker without its pair."""
    lines = text.splitlines()
    blocks, fenced, open_at = [], False, None
    for i, line in enumerate(lines):
        if open_at is not None:
            if BEGIN.match(line):
                raise BlockError(
                    f"{name}:{i + 1}: results block inside the one opened on line {open_at + 1} "
                    f"(each needs its <!-- end results -->)"
                )
            if END.match(line):
                blocks.append(
                    (
                        open_at,
                        i,
                        parse_spec(BEGIN.match(lines[open_at]).group(1), f"{name}:{open_at + 1}"),
                    )
                )
                open_at = None
            continue
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and BEGIN.match(line):
            open_at = i
        elif not fenced and END.match(line):
            raise BlockError(
                f"{name}:{i + 1}: <!-- end results --> without a <!-- results: ... --> before it"
            )
    if open_at is not None:
        raise BlockError(f"{name}:{open_at + 1}: results block without <!-- end results -->")
    return blocks


# ---------------------------------------------------------------- what a block holds


def device_name(doc):
    return doc.get("device", {}).get("name", "")


def devices_with_results(chapters, root):
    """The device names of the chapters' committed results, for an error message."""
    names = sorted(
        {
            device_name(d) or "unknown GPU"
            for c in chapters
            for _, d in course.committed_results(c, root)
        }
    )
    return ", ".join(names) or "none"


def result_for(spec, readme, root, where):
    """(path, doc) of the result file a block reads."""
    if "file" in spec:
        path = root / spec["file"]
        doc = course.load_result(path)
        if doc is None:
            raise BlockError(f"{where}: file={spec['file']}: not a benchmark result file")
        return path, doc
    chapter = page_chapter(spec, readme, root, where)
    if "gpu" in spec:
        path, doc = course.newest_result(chapter, spec["gpu"], root)
        if doc is None:
            raise BlockError(
                f"{where}: gpu={spec['gpu']}: no committed result of {chapter} on a GPU whose "
                f"name contains '{spec['gpu']}' (its results are from: "
                f"{devices_with_results([chapter], root)})"
            )
        return path, doc
    path, doc = course.reference_result(chapter, root)
    if doc is None:
        raise BlockError(
            f"{where}: no committed results for {chapter} (reference/*/{chapter}/*.json)"
        )
    return path, doc


def select(table, spec, where):
    """The table reduced to the spec's columns and rows (a dict like the JSON's)."""
    columns = table.get("columns", [])
    wanted = spec.get("columns") or columns
    missing = [c for c in wanted if c not in columns]
    if missing:
        raise BlockError(
            f"{where}: table '{table.get('name')}' has no column {', '.join(missing)} "
            f"(its columns: {', '.join(columns)})"
        )
    index = [columns.index(c) for c in wanted]
    rows = table.get("rows", [])
    if "rows" in spec:
        rows = [r for r in rows if r and re.search(spec["rows"], tour.cell_text(r[0]))]
        if not rows:
            raise BlockError(
                f"{where}: rows={spec['rows']} matches no row of table '{table.get('name')}'"
            )
    rows = [[r[i] if i < len(r) else None for i in index] for r in rows]
    return {
        "name": table.get("name"),
        "title": table.get("title"),
        "columns": wanted,
        "rows": rows,
        "notes": table.get("notes", []) if spec.get("notes") == "yes" else [],
    }


def shown(path):
    """A result file as a link's text: its GPU, chapter and name (h200/12-reduction/bench.json)."""
    parts = Path(path).parts
    return (
        "/".join(parts[len(parts) - parts[::-1].index("reference") :])
        if "reference" in parts
        else Path(path).name
    )


def provenance(doc, path, readme):
    """The block's first line: GPU, CUDA runtime and driver, date, command, and the file."""
    device = doc.get("device", {}).get("name", "unknown GPU")
    cuda = doc.get("cuda", {})
    versions = f"CUDA {cuda.get('runtime', '?')}" + (
        f" (driver {cuda['driver']})" if cuda.get("driver") else ""
    )
    command = doc.get("command") or f"make bench CHAPTER={doc.get('bench', '?')}"
    link = os.path.relpath(Path(path).resolve(), Path(readme).resolve().parent).replace(os.sep, "/")
    return f"{device}, {versions}, {course.short_date(doc)}, `{command}` ([{shown(path)}]({link}))"


def markdown_table(table):
    """A Markdown table, aligned in the source: names left, numbers right, as the benchmark."""

    def cell(value):
        return tour.cell_text(value).replace("|", "\\|")

    columns = [c.replace("|", "\\|") for c in table["columns"]]
    rows = [[cell(v) for v in r] for r in table["rows"]]
    widths = [max([len(c), 3] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]

    def line(cells):
        parts = [f"{cells[0]:<{widths[0]}}"] + [f"{c:>{w}}" for c, w in zip(cells[1:], widths[1:])]
        return "| " + " | ".join(parts) + " |"

    rule = (
        "|"
        + "|".join([":" + "-" * (widths[0] + 1)] + ["-" * (w + 1) + ":" for w in widths[1:]])
        + "|"
    )
    return (
        [line(columns), rule]
        + [line(r) for r in rows]
        + ([""] + [str(n) for n in table["notes"]] if table["notes"] else [])
    )


def render_summary(readme, root, gpu=None, where=""):
    """The `summary` block: each chapter's best stage against its library and its ceiling, from every
    chapter's reference result (what make tour ends with), or with gpu, from each chapter's newest
    result on that GPU (a chapter without one left out), as a Markdown table."""
    chapters = course.bench_chapters(root)
    found = [
        (c, p, d)
        for c in chapters
        for p, d in [
            course.newest_result(c, gpu, root)
            if gpu is not None
            else course.reference_result(c, root)
        ]
        if d
    ]
    if not found and gpu is not None:
        raise BlockError(
            f"{where}: summary gpu={gpu}: no chapter has a committed result on a GPU whose name "
            f"contains '{gpu}' (results are from: {devices_with_results(chapters, root)})"
        )
    if not found:
        raise BlockError(f"{where}: no committed results (reference/*/*/*.json) for the summary")
    entries = [e for chapter, _, doc in found for e in tour.summary_entries(doc, chapter)]
    table = {
        "columns": ["chapter", "best stage", "rate", "against the library", "against the ceiling"],
        "rows": [tour.summary_row(*e) for e in entries],
        "notes": [],
    }
    runs = sorted(
        {
            f"{d.get('device', {}).get('name', '?')}, CUDA {d.get('cuda', {}).get('runtime', '?')}, "
            f"{course.short_date(d)}"
            for _, _, d in found
        }
    )
    links = ", ".join(
        f"[{c}]({os.path.relpath(Path(p).resolve(), Path(readme).resolve().parent)})"
        for c, p, _ in found
    )
    return [f"{'; '.join(runs)}, `make tour` (results: {links})", ""] + markdown_table(table)


def page_chapter(spec, readme, root, where):
    """The chapter a block is about: chapter=, else the chapter whose page it is."""
    chapter = spec.get("chapter")
    if chapter is None:
        parent = Path(readme).resolve().parent
        if parent.parent == (root / "chapters").resolve():
            return parent.name
        raise BlockError(
            f"{where}: results marker: say whose results, chapter=NN-topic or file=PATH "
            f"(only a chapter's README has a default)"
        )
    return chapter


def render_profiles(spec, readme, root, where):
    """The `profiles` block: the chapter's Nsight Compute captures on the reference GPU, a row per
    stage (per bench row where a stage has several) and the library's last."""
    for option in ("file", "gpu", "notes"):
        if option in spec:
            raise BlockError(f"{where}: results marker: profiles takes no {option}=")
    profile = course.profile_module()
    chapter = page_chapter(spec, readme, root, where)
    folder = profile.capture_dir(chapter, root)
    names = course.stages(chapter, root) + [course.BASELINE]
    paths = [folder / f"{n}.csv" for n in names if (folder / f"{n}.csv").is_file()]
    if not paths:
        raise BlockError(f"{where}: no profiles of {chapter} in {rel(folder, root)}")
    keys = spec.get("columns") or [k for k in profile.rows_for(chapter) if k != "kernels"]
    unknown = [k for k in keys if k not in profile.ROWS]
    if unknown:
        raise BlockError(
            f"{where}: profiles has no column {', '.join(unknown)} "
            f"(its columns: {', '.join(profile.ROWS)})"
        )
    rows, runs = [], set()
    for path in paths:
        header, launches = profile.read_capture(path)
        # The run's time of day left out: one day's captures read as one run.
        runs.add(re.sub(r"(\d{4}-\d\d-\d\d)T[\d:]+Z", r"\1", profile.header_run(header)))
        groups = profile.by_label(launches)
        parts = [(path.stem, launches)] if len(groups) == 1 else list(groups.items())
        for name, group in parts:
            name = name if path.stem != course.BASELINE else f"baseline: {group[0].label}"
            if spec.get("rows") and not re.search(spec["rows"], name):
                continue
            counts = profile.summarize(group)
            kernels = f" ({len(group)} kernels)" if len(group) > 1 else ""
            rows.append([name + kernels] + [profile.fmt(k, counts.get(k)) for k in keys])
    if not rows:
        raise BlockError(f"{where}: rows={spec['rows']} matches no profile of {chapter}")
    table = {
        "columns": ["stage"] + [profile.ROWS[k].title for k in keys],
        "rows": rows,
        "notes": [],
    }
    link = os.path.relpath(folder.resolve(), Path(readme).resolve().parent).replace(os.sep, "/")
    first = f"{'; '.join(sorted(runs))}, `make reference`, its profile step ([{shown(folder)}/]({link}/))"
    return [first, ""] + markdown_table(table)


def render(spec, readme, root=ROOT, where=""):
    """The lines a block holds between its markers."""
    if spec["table"] == "summary" and "file" not in spec and "chapter" not in spec:
        return render_summary(readme, root, spec.get("gpu"), where)
    if spec["table"] == "profiles":
        return render_profiles(spec, readme, root, where)
    path, doc = result_for(spec, readme, root, where)
    table = next((t for t in doc.get("tables", []) if t.get("name") == spec["table"]), None)
    if table is None:
        names = ", ".join(str(t.get("name")) for t in doc.get("tables", [])) or "none"
        raise BlockError(
            f"{where}: {rel(path, root)} has no table '{spec['table']}' (its tables: {names})"
        )
    table = select(table, spec, where)
    if spec.get("format") == "markdown":
        body = markdown_table(table)
    else:
        body = ["```text"] + tour.format_table(table) + ["```"]
    return [provenance(doc, path, readme), ""] + body


def regenerate(text, readme, root=ROOT):
    """-> (the README's text with every block filled, [(line, table) of blocks that changed])."""
    name = rel(readme, root)
    lines = text.splitlines()
    out, changed, last = [], [], 0
    for begin, end, spec in find_blocks(text, name):
        body = render(spec, readme, root, f"{name}:{begin + 1}")
        out += lines[last : begin + 1] + body
        if lines[begin + 1 : end] != body:
            changed.append((begin + 1, spec["table"]))
        last = end
    out += lines[last:]
    return "\n".join(out) + ("\n" if text.endswith("\n") or not text else ""), changed


# ---------------------------------------------------------------- commands


def stale_blocks(files, root=ROOT):
    """One line per block that differs from its JSON or cannot be generated (empty: all fine)."""
    problems = []
    for readme in files:
        try:
            _, changed = regenerate(Path(readme).read_text(), readme, root)
        except BlockError as err:
            problems.append(str(err))
            continue
        problems += [
            f"{rel(readme, root)}:{line}: the results block '{table}' differs from its JSON; "
            f"run `{FIX}` and commit the README"
            for line, table in changed
        ]
    return problems


def cmd_check(files, root):
    problems = stale_blocks(files, root)
    if problems:
        print("\n".join(problems))
        return 1
    count = sum(len(find_blocks(Path(f).read_text(), rel(f, root))) for f in files)
    print(
        f"tables: {count} results block(s) in {len(files)} README(s), all as the committed results say"
    )
    return 0


def cmd_write(files, root):
    """Fill every block; a README with a block that cannot be generated is left as it is (the
    others are written) and the run fails."""
    status, written, blocks = 0, 0, 0
    for readme in files:
        text = Path(readme).read_text()
        try:
            new, changed = regenerate(text, readme, root)
            blocks += len(find_blocks(text, rel(readme, root)))
        except BlockError as err:
            print(err)
            status = 1
            continue
        if new != text:
            Path(readme).write_text(new)
            written += 1
            print(
                f"tables: {rel(readme, root)}: rewrote {len(changed)} block(s): "
                + ", ".join(f"'{t}' (line {n})" for n, t in changed)
            )
    if status == 0 and not written:
        print(f"tables: {blocks} results block(s) in {len(files)} README(s), all up to date")
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="readme_tables.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the course's root (the tests use copies)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, what in (
        ("write", "fill every marked block"),
        ("check", "fail when a block is stale"),
    ):
        sub.add_parser(name, help=what).add_argument(
            "files",
            nargs="*",
            type=Path,
            help="pages (default: README.md, chapters/*/README.md and notes.md, docs/*.md)",
        )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    files = args.files or readmes(root)
    missing = [str(f) for f in files if not Path(f).is_file()]
    if missing:
        print(f"tables: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    return (cmd_write if args.command == "write" else cmd_check)(files, root)


if __name__ == "__main__":
    sys.exit(main())
