#!/usr/bin/env python3
"""Judge what a stage teaches, not only its answer: its SASS signature and its speed.

Each chapter declares, in chapters/<chapter>/lessons.toml, per stage:

    [02_unrolled_templated]
    lesson = "n independent loads per thread, blockDim.x apart (coalesced)"
    speed = { n = 67108864, threads = 32, unroll = 4 }      # or: speed = "not judged: <why>"
    sass = [
      { rule = "LDG.E >= 8", kernels = "saxpy_kernel<4>", why = "four loads of x and four of y" },
    ]

`lesson` names the optimisation in a few words (the verdicts quote it). `needs` (optional) says
what the stage's lesson needs of the GPU beyond the course's minimum (compute capability 7.5):
`needs = { cc = "8.0", gpus = 2, why = "..." }`; `make doctor` reads it to say, per chapter, what
runs on the GPU present. `speed` holds the judge
program's parameters (key=value, see chapters/<chapter>/judge_<chapter>.cpp), over the chapter's
[workload] table (its sizes, in one home; a stage may set its own), and optionally
`min_ratio` (default 0.90: the student's stage must run at least at 0.9x the reference solution's
speed); a string says why the stage's lesson is not speed. `sass` lists the instruction facts the
lesson produces. Every stage also gets the rule "LDL|STL == 0" (no local memory: spills or a
local array) unless it says why it needs local memory in `local_memory = "<why>"`. The other keys
a lessons.toml holds (test, kind, capture, perf, [chapter], [workload]) are the build's and the
tools'; harness/course.py lists them all and refuses any other.

A rule is `ALTERNATIVES OP COUNT`:
    ALTERNATIVES  one or more opcode patterns joined by |; a pattern is a base opcode and
                  modifiers, each required (.128) or forbidden (.!COLLECTIVE), in any order:
                  "LDG.128" matches LDG.E.128 and LDG.E.128.CONSTANT; "WARPSYNC.!COLLECTIVE.!ALL"
                  matches a WARPSYNC with neither modifier.
    OP COUNT      >= n, <= n, == n, > n, < n, or "in a..b" (inclusive)
counted per kernel over the non-padding instructions. `kernels` (a regex on the demangled name;
default: every kernel of the stage) says which kernels each must satisfy the rule; `arch` limits
a rule to one architecture; `sizes` limits it to the block sizes where the lesson lives, in the
same form as the count ("== 32", ">= 64", "in 64..512"): B is the kernel's block-size template
argument, its first unsigned one (`scan_ranges4<256u, ...>` is B = 256). A rule must hold for
every block size it names, so it names only those where every right design shows the fact (a
block of one warp needs no block barrier and no shared memory to scan: a rule about the second
level of a block scan says `sizes = ">= 64"`). `make lessons` prints each rule with its scope. The rules are written for sm_90 (the course's reference GPU); an
object without sm_90 code is checked on the architecture it has, and the report says so.

    lesson.py sass STAGE [--object OBJ ...] [--captured] [--expect-reject] [--build DIR]
        Checks a stage's SASS against its signature: the stage's own object (cuobjdump), the
        objects named, or with --captured the capture committed under reference/h200/<ch>/sass/sm_90/.
        Without cuobjdump (and no --captured): "SASS not checked: cuobjdump not found", never a pass.
    lesson.py speed STAGE --reference PROG --candidate PROG [--expect-slow] [--set KEY=VALUE ...]
        Times the two judge programs against each other, interleaved (A-B-B-A rounds), and prints
        the ratio reference time / candidate time with its spread and the verdict.
    lesson.py show [CHAPTER]
        What each stage declares.
    lesson.py calibrate [CHAPTER] [--build DIR]
        (GPU) every judged stage's reference timed against itself: the verdict's noise here.
    lesson.py needs --cc X.Y [--gpus N]
        Per chapter, the stages whose lesson this GPU cannot show (make doctor).

STAGE is <chapter>/<stage>, optionally prefixed by exercise/ or solution/. Exit status: 0 met
(or skipped, with a COURSE_SKIP line), 1 missed, 2 bad arguments. With --expect-reject/--expect-slow
the status is inverted (the checker checking itself on a deliberately wrong stage).
"""

import argparse
import math
import re
import select
import statistics
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402
import sass  # noqa: E402
import stamps  # noqa: E402

ROOT = course.ROOT
DEFAULT_MIN_RATIO = 0.90
NO_LOCAL_MEMORY = "LDL|STL == 0"
# A STAGE argument as course.resolve_stage reads it (wrong/ taken too): the example its errors show.
EXAMPLE = "lesson.py sass 11-streaming/03_vectorized_float4"
NO_LOCAL_WHY = (
    "no local memory: a spill or an array indexed at run time lives in slow local memory "
    "(LDL/STL in the SASS; the build's -Xptxas -v reports the stack frame)"
)


# A wrong argument or declaration: one line, exit status 2.
Usage = course.UsageError


# ---------------------------------------------------------------- the declarations


def lessons_path(chapter):
    return course.lessons_path(chapter, ROOT)


def load_lessons(chapter):
    """{stage: declaration} of one chapter ({} when the chapter declares nothing): its stage
    tables, each speed table over the chapter's [workload]."""
    data = course.stage_declarations(chapter, ROOT)
    work = course.workload(chapter, ROOT)
    for decl in data.values():
        if isinstance(decl.get("speed"), dict):
            decl["speed"] = course.speed_params(decl["speed"], work)
    return data


def declaration(stage_id):
    chapter, stage = stage_id.split("/", 1)
    return load_lessons(chapter).get(stage, {})


# ---------------------------------------------------------------- SASS rules


@dataclass
class Pattern:
    base: str
    need: list = field(default_factory=list)
    forbid: list = field(default_factory=list)

    def matches(self, opcode):
        parts = opcode.split(".")
        if parts[0] != self.base:
            return False
        mods = parts[1:]
        return all(m in mods for m in self.need) and not any(m in mods for m in self.forbid)

    def __str__(self):
        return ".".join([self.base] + self.need + ["!" + m for m in self.forbid])


@dataclass
class Rule:
    text: str
    patterns: list
    low: int
    high: float  # math.inf for no upper bound
    kernels: str = ""
    arch: str = ""
    why: str = ""
    sizes: str = ""  # the block sizes it applies at, "OP N" or "in a..b"; "" for every one
    size_low: int = 0
    size_high: float = math.inf

    def holds(self, n):
        return self.low <= n <= self.high

    def at_size(self, b):
        return self.size_low <= b <= self.size_high

    def scope(self):
        """Where the rule applies, in words: ' in kernels like 'x', at block sizes B >= 64'."""
        where = f" in kernels like '{self.kernels}'" if self.kernels else " in every kernel"
        where += f", at block sizes B {self.sizes}" if self.sizes else ""
        return where + (f" (on {self.arch} only)" if self.arch else "")

    def label(self):
        """The rule as the verdicts quote it: its text, and its block sizes when it has some."""
        return self.text + (f" at B {self.sizes}" if self.sizes else "")


BOUND = r"(?:(?P<op>>=|<=|==|>|<)\s*(?P<n>\d+)|in\s+(?P<a>\d+)\s*\.\.\s*(?P<b>\d+))"
RULE_RE = re.compile(r"^\s*(?P<alts>[A-Z0-9_.!|]+)\s*" + BOUND + r"\s*$")
SIZES_RE = re.compile(r"^\s*" + BOUND + r"\s*$")
# The block size in a demangled kernel name: its first unsigned template argument (`<256u, `).
BLOCK_SIZE_RE = re.compile(r"[<,]\s*(\d+)u\s*[,>]")


def bounds(m):
    """(low, high) of a matched BOUND: 'OP N' or 'in a..b'."""
    if m.group("op"):
        n, op = int(m.group("n")), m.group("op")
        return {
            ">=": (n, math.inf),
            "<=": (0, n),
            "==": (n, n),
            ">": (n + 1, math.inf),
            "<": (0, n - 1),
        }[op]
    return int(m.group("a")), int(m.group("b"))


def block_size(kernel):
    """A kernel's block size B from its demangled name (its first unsigned template argument), or
    None when its name has none."""
    m = BLOCK_SIZE_RE.search(kernel.title)
    return int(m.group(1)) if m else None


def parse_rule(entry):
    """A Rule from a lessons.toml entry (a table with rule/kernels/arch/why, or a bare string)."""
    if isinstance(entry, str):
        entry = {"rule": entry}
    text = entry.get("rule", "")
    m = RULE_RE.match(text)
    if not m:
        raise Usage(
            f"lesson: bad SASS rule '{text}' (want e.g. 'LDG.128 >= 2', 'LDL|STL == 0', 'SHFL.BFLY in 5..15')"
        )
    patterns = []
    for alt in m.group("alts").split("|"):
        base, *mods = alt.split(".")
        if not base:
            raise Usage(f"lesson: bad opcode pattern '{alt}' in rule '{text}'")
        patterns.append(
            Pattern(
                base,
                [x for x in mods if not x.startswith("!")],
                [x[1:] for x in mods if x.startswith("!")],
            )
        )
    low, high = bounds(m)
    sizes = str(entry.get("sizes", "")).strip()
    size_low, size_high = 0, math.inf
    if sizes:
        sm = SIZES_RE.match(sizes)
        if not sm:
            raise Usage(
                f"lesson: bad block sizes '{sizes}' in rule '{text}' (want e.g. '>= 64', '== 32', "
                "'in 64..512')"
            )
        size_low, size_high = bounds(sm)
    return Rule(
        text.strip(),
        patterns,
        low,
        high,
        entry.get("kernels", ""),
        entry.get("arch", ""),
        entry.get("why", ""),
        sizes,
        size_low,
        size_high,
    )


def rules_of(stage_id):
    decl = declaration(stage_id)
    rules = [parse_rule(e) for e in decl.get("sass", [])]
    if not decl.get("local_memory"):
        rules.append(parse_rule({"rule": NO_LOCAL_MEMORY, "why": NO_LOCAL_WHY}))
    return rules


def count_matching(kernel, patterns):
    return sum(1 for insn in kernel.body if any(p.matches(insn.opcode) for p in patterns))


def nearest(kernel, patterns):
    """What the kernel has of the rule's opcode families, for the message: '8 x LDG.E'."""
    bases = {p.base for p in patterns}
    found = {}
    for insn in kernel.body:
        if insn.base in bases:
            found[insn.opcode] = found.get(insn.opcode, 0) + 1
    return (
        ", ".join(f"{n} x {op}" for op, n in sorted(found.items(), key=lambda kv: -kv[1])[:3])
        or "none of them"
    )


def pick_arch(kernels):
    archs = sorted({k.arch for k in kernels if k.arch})
    if course.REFERENCE_ARCH in archs:
        return course.REFERENCE_ARCH
    return archs[-1] if archs else ""


def short_name(kernel):
    title = kernel.title.replace("(anonymous namespace)::", "")
    title = title.split("(", 1)[0] if "(" in title else title
    return title[len("void ") :] if title.startswith("void ") else title


def in_scope(rule, kernels):
    """The kernels a rule applies to (its kernels regex, then its block sizes), or a message (a
    str) saying why none is there."""
    chosen = list(kernels)
    if rule.kernels:
        rx = re.compile(rule.kernels)
        chosen = [k for k in chosen if rx.search(short_name(k)) or rx.search(k.title)]
        if not chosen:
            names = ", ".join(sorted({short_name(k) for k in kernels}))
            return f"no kernel named like '{rule.kernels}' (kernels: {names})"
    if rule.sizes:
        sized = [(k, block_size(k)) for k in chosen]
        if all(b is None for _, b in sized):
            return (
                f"no block size in the names of the kernels like '{rule.kernels}' "
                "(the rule's sizes want a block-size template argument, e.g. <256u>)"
            )
        chosen = [k for k, b in sized if b is not None and rule.at_size(b)]
        if not chosen:
            built = ", ".join(str(b) for b in sorted({b for _, b in sized if b is not None}))
            return f"no kernel like '{rule.kernels}' at B {rule.sizes} (built at B = {built})"
    return chosen


def check_rules(kernels, rules, partial=False):
    """[(rule, kernel name, count, message)] for each miss; [] when every rule holds. partial: the
    kernels are a subset (a committed capture keeps some instantiations), so a rule none of whose
    kernels is among them is passed over, not missed."""
    misses = []
    for rule in rules:
        chosen = [k for k in kernels if not rule.arch or k.arch == rule.arch]
        if rule.arch and not chosen:
            continue
        chosen = in_scope(rule, chosen)
        if isinstance(chosen, str):
            if not partial:
                misses.append((rule, rule.kernels, 0, chosen))
            continue
        for k in chosen:
            n = count_matching(k, rule.patterns)
            if not rule.holds(n):
                misses.append((rule, short_name(k), n, f"found {n} ({nearest(k, rule.patterns)})"))
                break  # one kernel is enough to say it
    return misses


def stage_sass(variant, stage_id, objects, captured, build):
    """(kernels, where) of a stage: from objects, the stage's own object, or the committed capture."""
    if captured:
        src = sass.captured(stage_id, "solution", quiet=True)
        path = course.capture_path(stage_id, ROOT)
        where = f"the capture {path.relative_to(ROOT)}{stamps.stale_note(path, ROOT)}"
    elif objects:
        src = sass.Source(" ".join(objects), "".join(sass.disassemble(o) for o in objects))
        where = "the object" + ("s" if len(objects) > 1 else "")
    else:
        src = sass._stage_source(sass.find_stage(f"{variant}/{stage_id}", build))
        where = f"your build ({variant})"
    kernels = sass.parse(src.text)
    sass.demangle(kernels)
    return kernels, where


def sass_verdict(variant, stage_id, objects=(), captured=False, build="build"):
    """(state, lines): state 'met', 'missed', 'not checked' or 'none' (no GPU code)."""
    rules = rules_of(stage_id)
    if not captured and sass.find_tool("cuobjdump") is None:
        return "not checked", [
            "SASS not checked: cuobjdump not found (it comes with the CUDA Toolkit from NVIDIA: "
            "the cuda-cuobjdump package of NVIDIA's repository, or the runfile installer)"
        ]
    try:
        kernels, where = stage_sass(variant, stage_id, list(objects), captured, build)
    except (sass.UsageError, sass.ToolMissing) as err:
        if "no GPU kernels" in str(err):
            return "none", [f"SASS: {stage_id} has no GPU code of its own"]
        return "not checked", [f"SASS not checked: {err}"]
    if not kernels:
        return "none", [f"SASS: {stage_id} has no GPU code of its own"]
    arch = pick_arch(kernels)
    kernels = [k for k in kernels if k.arch == arch]
    rules = [r for r in rules if not r.arch or r.arch == arch]
    misses = check_rules(kernels, rules, partial=captured)
    on = (
        ""
        if arch == course.REFERENCE_ARCH
        else f" (on {arch}; the rules are written for {course.REFERENCE_ARCH})"
    )
    if not misses:
        return "met", [f"SASS signature met{on}: " + "; ".join(r.label() for r in rules)]
    lines = []
    ex = stage_id if variant == "solution" else f"{variant}/{stage_id}"
    for rule, kernel, n, found in misses:
        lines.append(
            f"SASS signature missed{on}: '{rule.label()}' in {kernel}: {found}"
            + (f". {rule.why}" if rule.why else "")
        )
    if variant != "solution":
        lines.append(f"compare with the reference: make sass-diff A={stage_id} B={ex}")
    return "missed", lines


# ---------------------------------------------------------------- PTX analogues

# Without cuobjdump, make sass shows a stage's PTX, and beside each rule of its signature the
# count in that PTX of what stands for the rule's opcodes. A hint, never the verdict: ptxas
# unrolls, merges, splits and drops instructions, so the SASS count can differ. Keys are opcode
# patterns as lessons.toml writes them, less SASS's .E (a 64-bit address, which PTX says in the
# operand); values: (regex on the whole PTX opcode, the PTX as shown, a note where they differ in
# kind). One table for every chapter; harness/tests/test_ptx.py checks it covers every rule.
_M = r"(\.[\w:]+)*"  # any modifiers
_V128 = r"\.(v4\.[bfsu]32|v2\.[bfsu]64|v8\.[bfsu]16|b128)$"  # 16 bytes at once
_NOT128 = rf"(?!.*{_V128})"
_ATOM_NOTE = "ptxas makes a RED of an atom whose result is unused"
PTX_ANALOGUES = {
    "LDG": (rf"^ldu?{_M}\.global\b", "ld.global", ""),
    "LDG.128": (rf"^ldu?{_M}\.global\b.*{_V128}", "ld.global.v4 (128-bit)", ""),
    "LDG.!128": (rf"^ldu?{_NOT128}{_M}\.global\b", "ld.global (not 128-bit)", ""),
    "STG": (rf"^st{_M}\.global\b", "st.global", ""),
    "STG.128": (rf"^st{_M}\.global\b.*{_V128}", "st.global.v4 (128-bit)", ""),
    "STG.!128": (rf"^st{_NOT128}{_M}\.global\b", "st.global (not 128-bit)", ""),
    "LDG.64.STRONG.GPU": (
        r"^ld\.(relaxed|acquire)\.gpu\.global(\.v\d)?\.[bsu]64$",
        "ld.relaxed.gpu.global.64",
        "",
    ),
    "LD.64.STRONG.GPU": (
        r"^ld\.(relaxed|acquire)\.gpu(\.v\d)?\.[bsu]64$",
        "ld.relaxed.gpu.64 (generic)",
        "",
    ),
    "STG.64.STRONG.GPU": (
        r"^st\.(relaxed|release)\.gpu\.global(\.v\d)?\.[bsu]64$",
        "st.relaxed.gpu.global.64",
        "",
    ),
    "ST.64.STRONG.GPU": (
        r"^st\.(relaxed|release)\.gpu(\.v\d)?\.[bsu]64$",
        "st.relaxed.gpu.64 (generic)",
        "",
    ),
    "LDS": (rf"^ld{_M}\.shared\b", "ld.shared", ""),
    "LDS.128": (rf"^ld{_M}\.shared\b.*{_V128}", "ld.shared.v4 (128-bit)", ""),
    "STS": (rf"^st{_M}\.shared\b", "st.shared", ""),
    "LDL": (
        rf"^ld{_M}\.local\b",
        "ld.local",
        "in PTX a local array; spills are added by ptxas and show only in the SASS",
    ),
    "STL": (
        rf"^st{_M}\.local\b",
        "st.local",
        "in PTX a local array; spills are added by ptxas and show only in the SASS",
    ),
    "LDC.U8": (rf"^ld{_M}\.const{_M}\.[bsu]8$", "ld.const.u8", ""),
    "ATOMG": (rf"^atom{_M}\.global\b", "atom.global", _ATOM_NOTE),
    "ATOMG.ADD": (rf"^atom{_M}\.global\.add\b", "atom.global.add", _ATOM_NOTE),
    "REDG": (rf"^red{_M}\.global\b", "red.global", _ATOM_NOTE),
    "REDG.ADD": (rf"^red{_M}\.global\.add\b", "red.global.add", _ATOM_NOTE),
    "ATOM": (r"^atom(\.(?!global\b|shared\b)[\w:]+)*$", "atom (generic)", _ATOM_NOTE),
    "RED": (r"^red(\.(?!global\b|shared\b)[\w:]+)*$", "red (generic)", _ATOM_NOTE),
    "MEMBAR": (r"^(membar\.\w+|fence\.(sc|acq_rel)\.\w+)$", "membar|fence", ""),
    "MEMBAR.GPU": (r"^(membar\.gl|fence\.(sc|acq_rel)\.gpu)$", "membar.gl|fence.sc.gpu", ""),
    "BAR": (r"^(bar|barrier)(\.cta)?\.(?!warp\b)", "bar|barrier", ""),
    "BAR.SYNC": (r"^(bar|barrier)(\.cta)?(\.aligned)?\.sync(\.aligned)?$", "bar.sync", ""),
    "BAR.RED.POPC": (r"^(bar|barrier)(\.cta)?\.red\.popc\b", "bar.red.popc", ""),
    "SHFL": (r"^shfl\.", "shfl", ""),
    "SHFL.BFLY": (r"^shfl(\.sync)?\.bfly\b", "shfl.sync.bfly", ""),
    "SHFL.DOWN": (r"^shfl(\.sync)?\.down\b", "shfl.sync.down", ""),
    "SHFL.UP": (r"^shfl(\.sync)?\.up\b", "shfl.sync.up", ""),
    "SHFL.IDX": (r"^shfl(\.sync)?\.idx\b", "shfl.sync.idx", ""),
    "VOTE": (r"^(vote\.|activemask\b)", "vote|activemask", ""),
    "VOTE.ANY": (r"^(vote(\.sync)?\.(any|ballot)\b|activemask\b)", "vote.sync.any|ballot", ""),
    "VOTE.ALL": (r"^vote(\.sync)?\.all\b", "vote.sync.all", ""),
    "POPC": (r"^popc\.", "popc", ""),
    "IDP.4A": (r"^dp4a\.", "dp4a", ""),
    "IMMA.U8": (rf"^(mma|wmma\.mma){_M}\.u8\b", "mma.sync .u8", ""),
    "TEX": (r"^(tex|tld4)\.", "tex|tld4", "a tex.1d fetch by index may be a TLD in the SASS"),
    "MUFU.RSQ": (r"^rsqrt\.approx\b", "rsqrt.approx", ""),
    "FFMA": (r"^(fma|mad)(\.\w+)*\.f32$", "fma.f32", ""),
    "FADD": (r"^(add|sub)(\.\w+)*\.f32$", "add.f32|sub.f32", ""),
    "FMUL": (r"^mul(\.\w+)*\.f32$", "mul.f32", ""),
    "DADD": (r"^(add|sub)(\.\w+)*\.f64$", "add.f64|sub.f64", ""),
    "DMUL": (r"^mul(\.\w+)*\.f64$", "mul.f64", ""),
    "DFMA": (r"^(fma|mad)(\.\w+)*\.f64$", "fma.f64", ""),
    "F2F.F64.F32": (r"^cvt(\.\w+)*\.f64\.f32$", "cvt.f64.f32", ""),
    "VIMNMX": (r"^(min|max)(\.\w+)*\.[su](16|32|64)$", "min|max (integer)", ""),
    "IMNMX": (r"^(min|max)(\.\w+)*\.[su](16|32|64)$", "min|max (integer)", ""),
    "ISETP": (r"^setp(\.\w+)*\.[bsu](16|32|64)$", "setp (integer)", ""),
    "BRA": (r"^bra\b", "bra", "ptxas adds and removes branches (unrolling, predication)"),
    "NANOSLEEP": (r"^nanosleep\b", "nanosleep", ""),
}
_ADD64 = (r"^(add|sub)(\.cc)?\.[su]64$", "add.s64 (64-bit)", "address arithmetic is 64-bit too")
PTX_ANALOGUES.update({key: _ADD64 for key in ("IADD3.X", "IMAD.X", "IADD.64", "UIADD3.X")})
NO_PTX_ANALOGUE = {
    "BSSY": "convergence barriers are ptxas's",
    "WARPSYNC.!COLLECTIVE.!ALL.!EXCLUSIVE": "which WARPSYNC form a __syncwarp or shuffle mask "
    "becomes is ptxas's choice",
}


def ptx_analogue(pattern):
    """(regex, shown, note) that stands for a rule's opcode pattern in PTX, or (None, why)."""
    keys = [
        str(pattern),
        str(Pattern(pattern.base, [m for m in pattern.need if m != "E"], pattern.forbid)),
    ]
    for key in keys:
        if key in PTX_ANALOGUES:
            regex, shown, note = PTX_ANALOGUES[key]
            return re.compile(regex), shown, note
    for key in keys:
        if key in NO_PTX_ANALOGUE:
            return None, NO_PTX_ANALOGUE[key]
    return None, "no PTX instruction stands for it"


def _grouped(counts, most=4):
    """'5 in a, b; 10 in c' from [(kernel, n)]: kernels with the same count together; with
    more counts than that, the range (a rule's bound is about the fewest or the most)."""
    groups = {}
    for name, n in counts:
        groups.setdefault(n, []).append(name)
    if len(groups) > most:
        (lo, low_names), (hi, high_names) = min(groups.items()), max(groups.items())
        return (
            f"from {lo} in {low_names[0]} to {hi} in {high_names[0]} "
            f"({len(counts)} kernels, {len(groups)} different counts)"
        )
    parts = []
    for n, names in groups.items():
        shown = ", ".join(names[:3]) + (
            f" and {len(names) - 3} more kernels" if len(names) > 3 else ""
        )
        parts.append(f"{n} in {shown}")
    return "; ".join(parts)


def ptx_hints(stage_id, kernels):
    """Lines: each rule of the stage's signature with its PTX analogue's count per kernel in the
    PTX kernels given (ptx.parse, demangled). Never a verdict: no 'met', no 'missed'."""
    arch = "sm_" + (kernels[0].arch.split("_", 1)[-1] if kernels else "")
    lines = [
        "The SASS signature of this stage, and for each rule the count of its PTX analogue",
        "in this PTX (a hint, not the verdict: ptxas may unroll, merge, split or drop",
        "instructions, so the SASS count can differ):",
    ]
    for rule in rules_of(stage_id):
        if rule.arch and rule.arch != arch:
            continue
        found = [ptx_analogue(p) for p in rule.patterns]
        missing = [entry[1] for entry in found if entry[0] is None]
        if missing:
            lines.append(f"  {rule.text}  ->  no PTX analogue ({missing[0]})")
            continue
        shown = " | ".join(dict.fromkeys(s for _, s, _ in found))
        notes = "; ".join(dict.fromkeys(n for _, _, n in found if n))
        chosen = in_scope(rule, kernels)
        if isinstance(chosen, str):
            lines.append(f"  {rule.label()}  ->  {shown}: {chosen.split(' (', 1)[0]}")
            continue
        counts = [
            (
                short_name(k),
                sum(1 for insn in k.body if any(rx.search(insn.opcode) for rx, _, _ in found)),
            )
            for k in chosen
        ]
        lines.append(
            f"  {rule.label()}  ->  {shown}: {_grouped(counts)}" + (f" ({notes})" if notes else "")
        )
    return lines


# ---------------------------------------------------------------- speed


class Judge:
    """One judge program, serving timed calls over a pipe (harness/judge.h)."""

    def __init__(self, program, params, label):
        self.label = label
        args = [str(program)] + [f"{k}={v}" for k, v in params.items()]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.status, self.detail = self._read()

    def _read(self, timeout=120):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            return "error", (err.strip().splitlines() or ["no answer"])[-1]
        verb, _, rest = line.strip().partition(" ")
        return verb, rest

    def time(self, k):
        self.proc.stdin.write(f"t {k}\n")
        self.proc.stdin.flush()
        verb, rest = self._read()
        if verb != "ms":
            raise RuntimeError(f"{self.label}: {rest}")
        return float(rest)

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("q\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


def quantile(xs, q):
    xs = sorted(xs)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (pos - lo)


@dataclass
class SpeedResult:
    state: str  # passed, slow, not judged, skipped, todo, error
    lines: list
    ratio: float = 0.0
    low: float = 0.0
    high: float = 0.0
    pairs: int = 0


def speed_rounds(ref, cand, budget_s, min_rounds=15, max_rounds=200):
    """Ratios reference/candidate of A-B-B-A rounds, each sample a batch of back-to-back calls of
    about 2 ms, until the median is settled or the time budget is spent."""
    t_ref, t_cand = min(ref.time(1) for _ in range(2)), min(cand.time(1) for _ in range(2))
    k_ref, k_cand = (max(1, min(64, math.ceil(2.0 / max(t, 1e-4)))) for t in (t_ref, t_cand))
    ratios, ref_ms, cand_ms = [], [], []
    start = time.monotonic()
    while len(ratios) < max_rounds:
        a1, b1, b2, a2 = ref.time(k_ref), cand.time(k_cand), cand.time(k_cand), ref.time(k_ref)
        ref_ms += [a1, a2]
        cand_ms += [b1, b2]
        ratios.append((a1 + a2) / (b1 + b2))
        elapsed = time.monotonic() - start
        if len(ratios) >= min_rounds:
            q1, q3 = quantile(ratios, 0.25), quantile(ratios, 0.75)
            if (q3 - q1) / statistics.median(ratios) < 0.02 or elapsed > budget_s:
                break
        elif len(ratios) >= 3 and elapsed > budget_s:
            break
    return ratios, ref_ms, cand_ms


def speed_verdict(stage_id, reference, candidate, budget_s=8.0, overrides=None):
    decl = declaration(stage_id)
    speed = decl.get("speed")
    if overrides and isinstance(speed, dict):
        speed = {**speed, **overrides}
    lesson = decl.get("lesson", "")
    if speed is None:
        return SpeedResult("skipped", [f"speed not judged: {stage_id} declares no speed lesson"])
    if isinstance(speed, str):
        return SpeedResult("skipped", [f"speed: {speed}"])
    params = {k: v for k, v in speed.items() if k not in ("min_ratio",)}
    min_ratio = float(speed.get("min_ratio", DEFAULT_MIN_RATIO))
    for prog in (reference, candidate):
        if not Path(prog).is_file():
            return SpeedResult("error", [f"speed not judged: {prog} is not built"])
    ref = Judge(reference, params, "the reference")
    cand = Judge(candidate, params, "your stage")
    try:
        for j in (ref, cand):
            if j.status == "skip":
                return SpeedResult("skipped", [f"speed not judged: {j.detail}"])
            if j.status == "todo":
                return SpeedResult("todo", [f"speed not judged: TODO in {j.detail}"])
            if j.status != "ready":
                return SpeedResult("error", [f"speed not judged: {j.label} failed: {j.detail}"])
        what = ref.detail
        ratios, ref_ms, cand_ms = speed_rounds(ref, cand, budget_s)
    except RuntimeError as err:
        return SpeedResult("error", [f"speed not judged: {err}"])
    finally:
        ref.close()
        cand.close()
    med = statistics.median(ratios)
    q1, q3 = quantile(ratios, 0.25), quantile(ratios, 0.75)
    spread = (q3 - q1) / med * 100
    ref_med, cand_med = statistics.median(ref_ms), statistics.median(cand_ms)
    summary = (
        f"{med:.2f}x the reference (middle half of {len(ratios)} interleaved pairs {q1:.2f}-{q3:.2f}; "
        f"yours {cand_med:.3f} ms, reference {ref_med:.3f} ms; {what})"
    )
    result = SpeedResult("", [], med, q1, q3, len(ratios))
    if med >= min_ratio:
        result.state = "passed"
        result.lines = [f"speed: {summary}: passed (threshold {min_ratio:.2f}x)"]
    elif spread > 10 and q3 >= min_ratio * 0.8:
        result.state = "not judged"
        result.lines = [
            f"speed not judged: spread {spread:.0f}% between pairs (a busy GPU?): {summary}; run it again"
        ]
    else:
        result.state = "slow"
        result.lines = [
            f"speed: correct, but {med:.2f}x the reference at {what} (threshold {min_ratio:.2f}x): "
            f"this stage's lesson is {lesson or 'its speed'}",
            f"  {summary}",
            f"  compare with the reference: make sass-diff A={stage_id} B=exercise/{stage_id}",
        ]
    return result


# ---------------------------------------------------------------- commands


def cmd_sass(args):
    ref = course.resolve_stage(args.stage, "lesson", ROOT, wrong=True, example=EXAMPLE)
    variant, stage_id = ref.variant, ref.id
    state, lines = sass_verdict(variant, stage_id, args.object or (), args.captured, args.build)
    if state == "not checked":
        print("COURSE_SKIP: " + lines[0])
        return 0
    for line in lines:
        print(line)
    if args.expect_reject:
        print(
            "the checker rejects this deliberately wrong stage: good"
            if state == "missed"
            else "a deliberately wrong stage met the SASS signature: the signature is too weak"
        )
        return 0 if state == "missed" else 1
    return 1 if state == "missed" else 0


def cmd_speed(args):
    stage_id = course.resolve_stage(args.stage, "lesson", ROOT, wrong=True, example=EXAMPLE).id
    overrides = {}
    for item in args.set or []:
        k, eq, v = item.partition("=")
        if not eq or not k:
            raise Usage(f"lesson: --set wants key=value, not '{item}'")
        overrides[k] = v
    res = speed_verdict(stage_id, args.reference, args.candidate, args.budget, overrides)
    if res.state in ("skipped", "todo"):
        print("COURSE_SKIP: " + res.lines[0])
        return 0
    for line in res.lines:
        print(line)
    if args.expect_slow:
        print(
            "the checker finds this deliberately slow stage slow: good"
            if res.state == "slow"
            else "a deliberately slow stage was not found slow"
        )
        return 0 if res.state == "slow" else (0 if res.state == "not judged" else 1)
    return 1 if res.state in ("slow", "error") else 0


def cmd_show(args):
    chapters = [args.chapter] if args.chapter else course.chapters(ROOT)
    for chapter in chapters:
        if chapter not in course.chapters(ROOT):
            raise Usage(
                f"lesson: no chapter '{chapter}'; chapters: {', '.join(course.chapters(ROOT))}"
            )
    print(
        "Each SASS rule must hold in every kernel it names, counted per kernel: at every block size "
        "B the stage is built for, unless the rule names its block sizes."
    )
    for chapter in chapters:
        lessons = load_lessons(chapter)
        print(chapter)
        for stage in course.stages(chapter):
            decl = lessons.get(stage, {})
            speed = decl.get("speed")
            sp = (
                "not declared"
                if speed is None
                else speed
                if isinstance(speed, str)
                else f">= {float(speed.get('min_ratio', DEFAULT_MIN_RATIO)):.2f}x the reference at "
                + " ".join(f"{k}={v}" for k, v in speed.items() if k != "min_ratio")
            )
            print(f"  {stage}: {decl.get('lesson', '(no lesson declared)')}")
            print(f"    speed: {sp}")
            for rule in rules_of(f"{chapter}/{stage}"):
                # Exactly what is required, and where: the rule, its kernels, its block sizes.
                print(f"    sass:  {rule.text}{rule.scope()}")
                if rule.why:
                    print(
                        textwrap.fill(
                            rule.why, 100, initial_indent=" " * 11, subsequent_indent=" " * 11
                        )
                    )
    return 0


def cmd_calibrate(args):
    """The reference timed against itself (an A/A run) for every stage with a speed lesson: the
    judge programs start and time, and the verdict's own noise on this GPU. An instructor runs it
    once per machine. Per stage: "ok" when the reference times itself at 1.00x within 5% (middle
    half included); "wide" when the pairs spread wider but their lower quartile still clears the
    stage's own threshold (lessons.toml's min_ratio, set lower for a stage timed through the host),
    so a correct stage still passes; "----" when a correct stage could fail here."""
    if course.gpu_reason():
        print("calibrate: needs a GPU (the judge programs time the stages on it)")
        return 77
    chapters = [args.chapter] if args.chapter else course.chapters(ROOT)
    build = Path(args.build)
    bad = wide = 0
    for chapter in chapters:
        for stage, decl in load_lessons(chapter).items():
            if not isinstance(decl.get("speed"), dict):
                continue
            min_ratio = float(decl["speed"].get("min_ratio", DEFAULT_MIN_RATIO))
            prog = build / "bin" / course.judge_program("solution", chapter, stage)
            res = speed_verdict(f"{chapter}/{stage}", prog, prog, args.budget)
            ok = res.state == "passed" and 0.95 <= res.ratio <= 1.05 and res.high - res.low <= 0.05
            holds = res.state == "passed" and res.low >= min_ratio
            mark = "ok  " if ok else "wide" if holds else "----"
            bad += 0 if ok or holds or res.state == "skipped" else 1
            wide += 0 if ok or not holds else 1
            print(
                f"{mark}  {chapter}/{stage}: "
                + (
                    f"{res.ratio:.3f}x itself, middle half {res.low:.3f}-{res.high:.3f} over {res.pairs} pairs"
                    + ("" if ok else f" (threshold {min_ratio:.2f}x)")
                    if res.pairs
                    else res.lines[0]
                )
            )
    if bad:
        print(
            f"calibrate: {bad} stage(s) whose verdict this GPU cannot support: a correct stage may be "
            "called slow there (a busy GPU or host?)"
        )
    else:
        print(
            "calibrate: every judged stage times itself at 1.00x within 5%"
            + (
                f", but {wide} whose pairs spread wider, still above their own threshold"
                if wide
                else ""
            )
        )
    return 1 if bad else 0


def cmd_needs(args):
    """Per chapter, what of it runs on a GPU of compute capability args.cc with args.gpus GPUs."""
    have_cc = tuple(int(x) for x in args.cc.split("."))
    for chapter in course.chapters(ROOT):
        lacking = []
        for stage, decl in load_lessons(chapter).items():
            need = decl.get("needs") or {}
            cc = tuple(int(x) for x in str(need.get("cc", "7.5")).split("."))
            gpus = int(need.get("gpus", 1))
            if cc > have_cc or gpus > args.gpus:
                what = " and ".join(
                    ([f"compute capability {need['cc']}"] if cc > have_cc else [])
                    + ([f"{gpus} GPUs"] if gpus > args.gpus else [])
                )
                lacking.append(
                    f"{stage} needs {what}" + (f" ({need['why']})" if need.get("why") else "")
                )
        print(
            f"  {chapter:<18} "
            + ("every stage" if not lacking else "every stage, but " + "; ".join(lacking))
        )
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sass")
    s.add_argument("stage")
    s.add_argument("--object", action="append")
    s.add_argument("--captured", action="store_true")
    s.add_argument("--expect-reject", action="store_true")
    s.add_argument("--build", default=str(ROOT / "build"))
    p = sub.add_parser("speed")
    p.add_argument("stage")
    p.add_argument("--reference", required=True)
    p.add_argument("--candidate", required=True)
    p.add_argument("--budget", type=float, default=8.0)
    p.add_argument("--expect-slow", action="store_true")
    p.add_argument(
        "--set", action="append", help="key=value: a judge parameter other than lessons.toml's"
    )
    w = sub.add_parser("show")
    w.add_argument("chapter", nargs="?")
    c = sub.add_parser("calibrate")
    c.add_argument("chapter", nargs="?")
    c.add_argument("--build", default=str(ROOT / "build"))
    c.add_argument("--budget", type=float, default=3.0)
    n = sub.add_parser("needs")
    n.add_argument("--cc", required=True, help="the GPU's compute capability, e.g. 8.6")
    n.add_argument("--gpus", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        return {
            "sass": cmd_sass,
            "speed": cmd_speed,
            "show": cmd_show,
            "needs": cmd_needs,
            "calibrate": cmd_calibrate,
        }[args.command](args)
    except Usage as err:
        print(err, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
