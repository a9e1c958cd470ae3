#!/usr/bin/env python3
"""compute-sanitizer's text output (memcheck, racecheck, synccheck) read back as reports, and each
report explained in the course's terms: both accesses of a race (file:line, read or write, the
memory, the threads where the log names them, the source lines), what racecheck's Warning means
against its Error, and what would order the two accesses.

    sanitizer_report.py [--tool TOOL] LOG     the explanation of every report in LOG (nothing if
                                              none); exit 0
check.py prints it under a sanitizer's one-line verdict, sanitize.sh under the tool's own output.

The lines it reads (each after compute-sanitizer's "========= " prefix; anything else is skipped,
so a log with test output between the reports reads the same):
  racecheck, analysis mode (the default):
    Error|Warning: Race reported between Write|Read access at FUNC+0xOFF in FILE:LINE
        and Write|Read access at FUNC+0xOFF in FILE:LINE [N hazards]
    (older releases: "... access at 0xOFF in FILE:LINE:FUNC", on one line or two)
  racecheck, hazard mode (--racecheck-report hazard|all):
    Error|Warning: Potential WAW|WAR|RAW hazard detected at __shared__ 0xADDR in block (x,y,z) :
        Write|Read Thread (x,y,z) at FUNC+0xOFF in FILE:LINE      (twice: the two accesses)
  memcheck:
    Invalid __global__|__shared__|__local__ read|write of size N bytes
        at FUNC+0xOFF in FILE:LINE
        by thread (x,y,z) in block (x,y,z)
        Address 0x... is out of bounds | is misaligned | ...
  synccheck:
    Barrier error detected. Divergent thread(s) in warp|block | Invalid arguments | ...
        at FUNC+0xOFF in FILE:LINE
        by thread (x,y,z) in block (x,y,z)
  and, from any tool, "Program hit ..." and "Leaked N bytes ..." lines, kept as they are.
"""

import argparse
import pathlib
import re
import sys
import textwrap
from dataclasses import dataclass, field
from typing import List, Optional

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course  # noqa: E402  (where a stage's files are: program_folders)

ROOT = pathlib.Path(__file__).resolve().parent.parent
PREFIX = re.compile(r"^=+ ?")
# Where an access happened: "at FUNC+0xOFF in FILE:LINE" (today's releases) or
# "at 0xOFF in FILE:LINE:FUNC" (older ones). FILE may hold spaces only in neither: \S+.
WHERE_NEW = re.compile(r"\bat (?P<func>.+?)\+0x[0-9a-fA-F]+ in (?P<file>\S+?):(?P<line>\d+)\b")
WHERE_OLD = re.compile(r"\bat 0x[0-9a-fA-F]+ in (?P<file>[^\s:]+):(?P<line>\d+)(?::(?P<func>.+))?")
ACCESS = re.compile(r"\b(?P<kind>Read|Write) access\b", re.IGNORECASE)
THREAD = re.compile(r"\bthread \((?P<t>[\d, ]+)\)", re.IGNORECASE)
BLOCK = re.compile(r"\bblock \((?P<b>[\d, ]+)\)", re.IGNORECASE)
SPACE = re.compile(r"__(shared|global|local)__")


@dataclass
class Access:
    kind: str  # "read" or "write"
    file: str = ""
    line: int = 0
    function: str = ""
    thread: str = ""  # "(x,y,z)" where the log says it
    block: str = ""

    @property
    def place(self):
        return (
            f"{self.file}:{self.line}"
            if self.file
            else "(no source line in the log: build with -lineinfo)"
        )


@dataclass
class Report:
    tool: str  # racecheck, memcheck, synccheck, or "" (any tool's line)
    severity: str  # "Error", "Warning" (racecheck) or ""
    header: str  # the report's first line, without the prefix
    accesses: List[Access] = field(default_factory=list)
    space: str = ""  # shared, global, local, or "" when the log does not say
    hazards: Optional[int] = None
    hazard_type: str = ""  # WAW, WAR, RAW (racecheck's hazard mode)
    detail: List[str] = field(default_factory=list)


def relative(path, root=ROOT):
    text = str(path)
    for base in (str(root) + "/", str(pathlib.Path(root).resolve()) + "/"):
        if text.startswith(base):
            return text[len(base) :]
    return text


def short_function(func):
    """'void scan::scan_block<(unsigned int)32, float>(scan::block_scan_storage<...> &, ...)' ->
    'scan_block<32, float>': the name a student recognises, without return type or parameters."""
    func = re.sub(r"<unnamed>::|\(anonymous namespace\)::", "", func.strip())
    depth, cut = 0, len(func)
    for i, ch in enumerate(func):  # the parameter list is the first '(' outside template brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            cut = i
            break
    name = re.sub(r"\((?:unsigned |signed )?(?:int|long|long long|char|short)\)", "", func[:cut])
    head, sep, tail = name.partition("<")
    name = (head.split()[-1] if head.split() else head) + sep + tail  # the return type dropped
    name = re.sub(r"^(?:\w+::)+(?=\w+(<|$))", "", name)
    return name


def where(text, root=ROOT):
    m = WHERE_NEW.search(text)
    if m:
        return (
            relative(m.group("file"), root),
            int(m.group("line")),
            short_function(m.group("func")),
        )
    m = WHERE_OLD.search(text)
    if m:
        return (
            relative(m.group("file"), root),
            int(m.group("line")),
            short_function(m.group("func") or ""),
        )
    return "", 0, ""


def parse(text, root=ROOT):
    """Every report in a compute-sanitizer log, in order (see the module's docstring for the lines
    it expects); a line it does not know is skipped."""
    lines = [PREFIX.sub("", line.rstrip()) for line in text.splitlines() if line.startswith("=")]
    reports, i = [], 0
    while i < len(lines):
        line = lines[i].strip()
        m = re.match(r"^(Error|Warning|ERROR|WARNING|Info|INFO):\s*(.*)$", line)
        severity, body = (m.group(1).capitalize(), m.group(2)) if m else ("", line)
        if re.match(r"Race reported between", body):
            # Analysis mode: the first access on this line, the second on this one or the next.
            rep = Report("racecheck", severity, line, space="shared")
            joined = body
            if " and " not in body.split("Race reported between", 1)[1] and i + 1 < len(lines):
                joined = body + " " + lines[i + 1].strip()
                i += 1
            first, _, second = joined.partition(" and ")
            for part in (first, second):
                a = ACCESS.search(part)
                if a:
                    f, n, fn = where(part, root)
                    rep.accesses.append(Access(a.group("kind").lower(), f, n, fn))
            h = re.search(r"\[(\d+) hazards?\]", joined)
            rep.hazards = int(h.group(1)) if h else None
            sp = SPACE.search(joined)
            rep.space = (
                sp.group(1) if sp else "shared"
            )  # racecheck's analysis mode is of shared memory
            reports.append(rep)
        elif re.match(r"Potential (WAW|WAR|RAW) hazard detected", body):
            rep = Report("racecheck", severity, line)
            rep.hazard_type = re.match(r"Potential (\w+)", body).group(1)
            sp = SPACE.search(body)
            rep.space = sp.group(1) if sp else "shared"
            blk = BLOCK.search(body)
            j = i + 1
            while j < len(lines) and lines[j].startswith((" ", "\t")) and len(rep.accesses) < 2:
                a = re.match(r"^\s*(Read|Write) Thread \(([\d, ]+)\)", lines[j])
                if a:
                    f, n, fn = where(lines[j], root)
                    rep.accesses.append(
                        Access(
                            a.group(1).lower(),
                            f,
                            n,
                            fn,
                            f"({a.group(2).replace(' ', '')})",
                            f"({blk.group('b').replace(' ', '')})" if blk else "",
                        )
                    )
                j += 1
            i = j - 1
            reports.append(rep)
        elif re.match(
            r"Invalid (__\w+__ )?(read|write|atomic)", body, re.IGNORECASE
        ) or body.startswith(("Misaligned", "Out-of-range", "Uninitialized")):
            rep = Report("memcheck", "Error", line)
            sp = SPACE.search(body)
            rep.space = sp.group(1) if sp else ""
            kind = re.search(r"\b(read|write|atomic)\b", body, re.IGNORECASE)
            acc = Access(kind.group(1).lower() if kind else "access")
            i = _follow(lines, i, rep, acc, root)
            rep.accesses.append(acc)
            reports.append(rep)
        elif body.startswith("Barrier error") or re.match(
            r"(Divergent|Invalid) .*(barrier|warp|mask)", body, re.IGNORECASE
        ):
            rep = Report("synccheck", "Error", line)
            acc = Access("barrier")
            i = _follow(lines, i, rep, acc, root)
            rep.accesses.append(acc)
            reports.append(rep)
        elif body.startswith(("Program hit", "Leaked", "Target application returned an error")):
            reports.append(Report("", severity, line))
        i += 1
    return reports


def _follow(lines, i, rep, acc, root):
    """Reads a memcheck or synccheck report's indented lines into acc and rep.detail; returns the
    index of its last line."""
    j = i + 1
    while j < len(lines) and lines[j].startswith((" ", "\t")):
        text = lines[j].strip()
        if not acc.file and text.startswith("at "):
            acc.file, acc.line, acc.function = where(text, root)
        t, b = THREAD.search(text), BLOCK.search(text)
        if text.startswith("by thread") and t:
            acc.thread = f"({t.group('t').replace(' ', '')})"
            acc.block = f"({b.group('b').replace(' ', '')})" if b else ""
        elif text.startswith(("Address", "and is")):
            rep.detail.append(text)
        j += 1
    return j - 1


def source_line(access, root=ROOT):
    """The text of the access's source line, stripped, or ""."""
    if not access.file:
        return ""
    path = pathlib.Path(access.file)
    path = path if path.is_absolute() else pathlib.Path(root) / path
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return lines[access.line - 1].strip() if 0 < access.line <= len(lines) else ""


def lane_of(thread):
    """'(37,0,0)' -> 'warp 1, lane 5' for a one-dimensional block, else ''."""
    m = re.match(r"^\((\d+),0,0\)$", thread or "")
    if not m:
        return ""
    t = int(m.group(1))
    return f"warp {t // 32}, lane {t % 32}"


SEVERITY = {
    "Warning": (
        "a Warning: racecheck found both accesses in threads of one warp. Its documentation files "
        "such hazards as warnings because code written for warps that move in lock-step makes them "
        "on purpose; since Volta the lanes of a warp are scheduled independently, so nothing keeps "
        "one lane's access after the other's, and the course counts a Warning as an error."
    ),
    "Error": (
        "an Error: racecheck's highest level, a hazard very likely to be a real race, typically "
        "between threads of different warps (or lanes of one warp with nothing that could order "
        "them)."
    ),
}


def explain_race(rep, root=ROOT):
    out = []
    acc = rep.accesses
    kinds = " and a ".join(a.kind for a in acc) or "two accesses"
    memory = {"shared": "shared memory", "global": "global memory", "local": "local memory"}.get(
        rep.space, "memory"
    )
    count = f", {rep.hazards} hazards" if rep.hazards else ""
    kind = f" ({rep.hazard_type})" if rep.hazard_type else ""
    out.append(
        f"race{kind} on {memory} between a {kinds}{count}:"
        if acc
        else f"race{kind} on {memory}{count}:"
    )
    for a in acc:
        who = ""
        if a.thread:
            lane = lane_of(a.thread)
            who = f", thread {a.thread}{' (' + lane + ')' if lane else ''}" + (
                f" of block {a.block}" if a.block else ""
            )
        out.append(f"  {a.kind:5} at {a.place}" + (f" in {a.function}" if a.function else "") + who)
        text = source_line(a, root)
        if text:
            out.append(f"        {text}")
    if acc and not any(a.thread for a in acc):
        out.append(
            "  (this report names no threads: racecheck's default analysis mode gives the two places; "
            "--racecheck-report hazard lists each pair of threads)"
        )
    if rep.severity in SEVERITY:
        out.append("  It is " + SEVERITY[rep.severity])
    out += ["  " + line for line in ordering(rep, root)]
    return out


def ordering(rep, root=ROOT):
    """What would order the two accesses of a race, in a sentence or two."""
    acc = rep.accesses
    if len(acc) < 2:
        return []
    a, b = acc[0], acc[1]
    reader = next((x for x in acc if x.kind == "read"), None)
    writer = next((x for x in acc if x.kind == "write"), None)
    lines = []
    same_warp = rep.severity == "Warning"
    if a.thread and b.thread and lane_of(a.thread) and lane_of(b.thread):
        same_warp = (
            lane_of(a.thread).split(",")[0] == lane_of(b.thread).split(",")[0]
            and a.block == b.block
        )
    if rep.space == "global":
        lines.append(
            "What orders them: blocks cannot wait for each other; a fence (__threadfence()) on the "
            "writer's side and on the reader's, with a flag or an atomic between them, or a second launch."
        )
        return lines
    barrier = "__syncwarp() (with a mask naming both lanes)" if same_warp else "__syncthreads()"
    if reader and writer:
        lines.append(
            f"What orders them: a {barrier} that every thread involved reaches after the read at "
            f"{reader.place} and before the write at {writer.place} (or, if the write must come first, "
            f"after the write and before the read). A shuffle orders registers, not memory; a fence "
            f"alone orders one thread's accesses, not two threads' against each other."
        )
    else:
        lines.append(f"What orders them: a {barrier} between the two writes, or one writer.")
    text = source_line(reader, root) if reader else ""
    if reader and re.search(r"\?.*\[|&&.*\[|\|\|.*\[", text):
        lines.append(
            f"The read at {reader.place} sits in a condition (?:, && or ||) that only some lanes need: "
            "the compiler may load the slot in every lane and drop the value in the lanes that do not "
            "use it, and racecheck sees every load. Read into a register first, then a "
            f"{barrier.split(' ')[0]}, then the call or the store that writes the slot."
        )
    return lines


# What to do about a report with one place (memcheck's bad access, synccheck's divergent barrier).
ADVICE = {
    "memcheck": "  An access outside any allocation (or misaligned for its size): check the index against "
    "the bound that line assumes, for the thread named, and the alignment a vector load needs.",
    "synccheck": "  A barrier that some threads of the warp or block reach and others do not, or a "
    "__syncwarp() mask naming lanes that do not call it: keep every thread on the barrier's "
    "path (test the bound inside, not around it) and name only the lanes that arrive.",
}


def one_place(rep, root=ROOT, lanes=False):
    """A one-place report's header, where and by whom, and its source line."""
    a = rep.accesses[0]
    who = ""
    if a.thread:
        lane = lane_of(a.thread) if lanes else ""
        who = f" by thread {a.thread}" + (f" ({lane})" if lane else "")
        who += f" in block {a.block}" if a.block else ""
    lines = [f"{rep.header} at {a.place}" + (f" in {a.function}" if a.function else "") + who]
    src = source_line(a, root)
    return lines + ([f"        {src}"] if src else [])


def resolve(reports, root=ROOT, search=()):
    """The logs name a file as the compiler saw it (often the bare name of a header): each access's
    file becomes its path under root, found in the folders of `search` in order (the student's
    chapters/ folder before solutions/), when it is not one already."""
    for rep in reports:
        for a in rep.accesses:
            if not a.file or (pathlib.Path(root) / a.file).is_file():
                continue
            name = pathlib.PurePath(a.file).name
            found = next(
                (f"{d}/{name}" for d in search if (pathlib.Path(root) / d / name).is_file()), ""
            )
            a.file = found or a.file
    return reports


def explain(text, tool="", root=ROOT, limit=4, search=()):
    """The explanation of a log's reports, as lines (none when it holds none): the first `limit`
    distinct ones (by their places), and how many more there were. `search`: the folders (relative
    to root) where a file the log names bare is looked for."""
    reports = resolve(parse(text, root), root, search)
    seen, shown = set(), []
    for rep in reports:
        k = (
            rep.tool,
            rep.header.split(" at ")[0],
            tuple((a.kind, a.file, a.line) for a in rep.accesses),
        )
        if k not in seen:
            seen.add(k)
            shown.append(rep)
    out = []
    for rep in shown[:limit]:
        if rep.tool == "racecheck":
            out += explain_race(rep, root)
        elif rep.tool in ("memcheck", "synccheck"):
            out += one_place(rep, root, lanes=rep.tool == "memcheck")
            if rep.tool == "memcheck":
                out += ["  " + d for d in rep.detail[:2]]
            out.append(ADVICE[rep.tool])
        else:
            out.append(rep.header)
    if len(shown) > limit:
        out.append(f"... and {len(shown) - limit} more distinct report(s) in the full log")
    return [w for line in out for w in wrap(line)]


def wrap(line, width=100):
    """A prose line wrapped to width under its own indent; a source line (8 spaces) as it is."""
    if len(line) <= width or line.startswith("        "):
        return [line]
    indent = " " * (len(line) - len(line.lstrip()))
    return textwrap.wrap(
        line,
        width=width,
        initial_indent="",
        subsequent_indent=indent + "  ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tool", default="")
    parser.add_argument(
        "--program",
        default="",
        help="the test program the log is of: a file the log names bare is looked for in its "
        "stage's folders (course.program_folders), as make check does",
    )
    parser.add_argument("log")
    args = parser.parse_args(argv)
    try:
        text = pathlib.Path(args.log).read_text(errors="replace")
    except OSError as err:
        print(f"sanitizer_report: cannot read {args.log}: {err.strerror}")
        return 2
    lines = explain(
        text, args.tool, search=course.program_folders(args.program) if args.program else ()
    )
    if lines:
        print(
            f"what {args.tool or 'the sanitizer'} found, explained (harness/sanitizer_report.py):"
        )
        print("\n".join("  " + line for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
