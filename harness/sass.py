#!/usr/bin/env python3
"""Read the SASS (the GPU's native machine code) that nvcc generated for a course stage.

It shows what the compiler really did with a kernel: whether loads were
vectorised (LDG.E.128), whether a loop was unrolled, what a warp reduction
costs in shuffles, and how two versions of a kernel differ.

    sass.py dump    SRC [--kernel REGEX] [--arch sm_90]           cleaned listing per kernel
    sass.py count   SRC [--kernel REGEX] [--json] [--opcodes]     instruction mix per kernel
    sass.py diff    A B [--kernel REGEX] [--kernel-b REGEX]       listings and mixes side by side
    sass.py capture --out DIR [--kernel REGEX] STAGE...           save raw `cuobjdump -sass` output
    sass.py capture-all [--arch sm_90]                            every stage into reference/h200/*/sass/sm_90/

SRC is a stage id such as ``11-streaming/01_grid_stride`` (optionally prefixed
``solution/`` or ``exercise/``; solution by default), looked up in
``<build>/stages.json`` (written by CMake); or a path to an object, cubin or
executable (disassembled with cuobjdump); or a captured ``.sass`` text file,
which needs no CUDA tools: the captures taken on the reference GPU are
committed under ``reference/h200/<chapter>/sass/sm_90/`` (a capture whose stage changed since is
labelled "captured from an older version of this stage", harness/stamps.py).

Without cuobjdump (a laptop with nvcc alone), a reference stage shows its
committed capture, and any other stage (yours: ``exercise/...``) its PTX, compiled
now from its source with the flags of its object in the build (harness/ptx.py),
labelled as PTX and followed by the PTX analogue of each rule of the stage's SASS
signature (lesson.py): a hint, never the verdict. ``diff`` then compares PTX with
PTX (a reference stage's made from solutions/ too), never the reference's capture
with itself.

Instruction classes used by ``count`` are keyed by base opcode: modifiers are
stripped (LDG.E.128 counts as LDG) and a uniform-datapath ``U`` prefix is
dropped when the rest is a known opcode (UIADD3 counts as IADD3):

    global memory      LDG STG LD ST ATOM ATOMG RED REDG LDGSTS, TMA/bulk copies
    local memory       LDL STL
    shared memory      LDS STS ATOMS LDSM STSM
    constant memory    LDC ULDC LDCU
    texture/surface    TEX TLD TLD4 TXD TXQ SULD SUST SUATOM SURED
    shuffle            SHFL
    vote               VOTE VOTEU MATCH REDUX
    barrier/fence      BAR MEMBAR FENCE DEPBAR ERRBAR CCTL SYNCS (mbarrier) ...
    branch/convergence BRA BRX JMP CALL RET EXIT BSSY BSYNC WARPSYNC BREAK ...
    predicate/select   ISETP FSETP DSETP HSETP2 PLOP3 SEL FSEL P2R R2P FCHK ...
    fp arithmetic      FFMA FADD FMUL FMNMX MUFU DFMA DADD DMUL HFMA2 HMMA ...
    int arithmetic     IMAD IADD3 LEA SHF LOP3 IMNMX POPC FLO IDP VIADD IABS PRMT ...
    conversion         F2I I2F F2F I2I F2FP I2FP FRND ...
    move               MOV S2R CS2R S2UR R2UR ...
    other              anything else (NOP inside a kernel, ...)

`count --help` prints the complete table. IMAD.MOV is the compiler moving a value
through the multiply-add unit; by its opcode it counts as int arithmetic.

The padding ptxas appends to every kernel (a branch to itself after the last
instruction, then NOPs) never executes: it is neither listed nor counted.
Branch targets, which cuobjdump prints as addresses, are shown as labels.
"""

import argparse
import concurrent.futures
import difflib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402  (the stages, read from the tree)
import ptx  # noqa: E402  (an exercise's own code where no cuobjdump can show its SASS)
import sass_lines  # noqa: E402
import stamps  # noqa: E402  (whether a capture predates its stage's code)

REFERENCE_ARCH = course.REFERENCE_ARCH

# Ordered: this is also the row order of the count tables.
CLASSES = {
    "global memory": "LDG STG LD ST ATOM ATOMG RED REDG LDGSTS "
    "UTMALDG UTMASTG UTMAPF UTMAREDG UBLKCP UBLKRED UBLKPF",
    "local memory": "LDL STL",
    "shared memory": "LDS STS ATOMS LDSM STSM",
    "constant memory": "LDC ULDC LDCU",
    "texture/surface": "TEX TLD TLD4 TXD TXQ TMML SULD SUST SUATOM SURED",
    "shuffle": "SHFL",
    "vote": "VOTE VOTEU MATCH REDUX",
    "barrier/fence": "BAR MEMBAR FENCE DEPBAR ERRBAR CCTL CCTLL LDGDEPBAR ARRIVES SYNCS "
    "WARPGROUP UCGABAR_ARV UCGABAR_WAIT UTMACCTL UTMACMDFLUSH",
    "branch/convergence": "BRA BRX BRXU JMP JMX JMXU CALL RET EXIT BSSY BSYNC WARPSYNC BREAK "
    "BPT YIELD KILL BMOV NANOSLEEP SSY SYNC PBK BRK PCNT CONT",
    "predicate/select": "ISETP FSETP DSETP HSETP2 PSETP PLOP3 SEL FSEL P2R R2P FCHK "
    "FSET DSET HSET2 ISET",
    "fp arithmetic": "FFMA FFMA32I FADD FADD32I FMUL FMUL32I FMNMX FMNMX3 FFMA2 FADD2 FMUL2 "
    "MUFU FSWZADD DFMA DADD DMUL DMNMX HFMA2 HADD2 HMUL2 HMNMX2 "
    "HMMA HGMMA DMMA QGMMA BMMA",
    "int arithmetic": "IMAD IMAD32I IMADSP IMUL IMUL32I IADD IADD3 IADD32I ISCADD XMAD LEA SHF SHL SHR "
    "LOP LOP3 LOP32I IMNMX VIMNMX VIMNMX3 VIADD VIADDMNMX POPC FLO IDP IDP4A "
    "IABS BREV BMSK BFE BFI SGXT PRMT VABSDIFF VABSDIFF4 IMMA IGMMA",
    "conversion": "F2I I2F F2F I2I F2FP I2FP F2IP I2IP FRND DRND",
    "move": "MOV MOV32I MOVM S2R CS2R S2UR R2UR B2R R2B LEPC",
}
_CLASS_OF = {op: cls for cls, ops in CLASSES.items() for op in ops.split()}
OTHER = "other"

# Uniform-datapath instructions: the U* opcodes plus these, which also run there.
_UNIFORM_EXTRA = {"S2UR", "R2UR", "LDCU", "VOTEU"}

# Control-flow opcodes whose final hex operand is a code address; they get labels.
_TARGETED = {"BRA", "BRX", "JMP", "CALL", "BSSY", "SSY", "PBK", "PCNT"}

# The listing's section and function headers, as sass_lines.py reads them too.
_ARCH_RE = sass_lines.ARCH_RE
_FUNCTION_RE = sass_lines.FUNCTION_RE
_INSTRUCTION_RE = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s*(.*)$")
_LABEL_RE = re.compile(r"^\s*([.\w$]+):\s*$")
_ENCODING_RE = re.compile(r"/\*\s*0x[0-9a-fA-F]+\s*\*/")
_GUARD_RE = re.compile(r"^(@!?U?P(?:\d+|T))\s+(.*)$")
# Scheduling annotations some disassemblers append (&wr=0x1 ?trans1): not semantics.
_ANNOTATION_RE = re.compile(r"\s+[&?]\S+")
_PADDED_RE = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s+(@!?U?P(?:\d+|T))?\s*(\S.*)$")
_HEX_TARGET_RE = re.compile(r"(?<![\w.])0x([0-9a-fA-F]+)$")


# A problem with the arguments or inputs; exit status 2 (1 for 'nothing found').
UsageError = course.UsageError


class ToolMissing(Exception):
    """cuobjdump is not installed; exit status 3."""


@dataclass
class Instruction:
    address: int
    guard: str  # "@P0", "@!PT" or "" when unpredicated
    opcode: str  # full form with modifiers, e.g. "LDG.E.128"
    operands: str
    labels: list = field(default_factory=list)
    padding: bool = False
    # Where it came from (sass_lines.Position chain, innermost first; () without -lineinfo lines)
    # and its decoded control field ("" where not decoded).
    where: tuple = ()
    control: str = ""

    @property
    def base(self):
        return self.opcode.split(".", 1)[0]

    @property
    def uniform(self):
        return self.base.startswith("U") or self.base in _UNIFORM_EXTRA

    @property
    def text(self):
        return f"{self.opcode} {self.operands}".rstrip()

    def is_self_branch(self):
        if self.base != "BRA" or self.guard:
            return False
        target = self.operands.strip("`() ")
        if target in self.labels:
            return True
        match = _HEX_TARGET_RE.search(target)
        return bool(match) and int(match.group(1), 16) == self.address


@dataclass
class Kernel:
    name: str
    arch: str
    instructions: list = field(default_factory=list)
    title: str = ""  # demangled name; the raw name until demangle() runs

    @property
    def body(self):
        return [insn for insn in self.instructions if not insn.padding]


def classify(opcode):
    base = opcode.split(".", 1)[0]
    cls = _CLASS_OF.get(base)
    if cls is None and base.startswith("U"):
        cls = _CLASS_OF.get(base[1:])
    return cls or OTHER


# ---------------------------------------------------------------- parsing


def parse(text):
    """Kernels in `cuobjdump -sass` (or nvdisasm-style) text, in file order."""
    kernels, arch, kernel, labels = [], "", None, []
    where, pending = (), []  # the source position chain, carried until the next //## lines
    for line in text.splitlines():
        if line.startswith("Fatbin"):
            kernel = None
        elif m := _ARCH_RE.match(line):
            arch, kernel = m.group(1), None
        elif m := _FUNCTION_RE.match(line):
            kernel, labels, where, pending = Kernel(m.group(1), arch), [], (), []
            kernel.title = kernel.name
            kernels.append(kernel)
        elif kernel is None:
            continue
        elif m := _LABEL_RE.match(line):
            labels.append(m.group(1))
        elif m := sass_lines.POS_RE.match(line):
            pending.append(sass_lines.position(m))
        elif m := _INSTRUCTION_RE.match(line):
            insn = _parse_instruction(int(m.group(1), 16), m.group(2))
            if insn:
                insn.labels, labels = labels, []
                if pending:
                    where, pending = tuple(pending), []
                insn.where = where
                if c := sass_lines.CONTROL_RE.search(m.group(2)):
                    insn.control = c.group(1)
                kernel.instructions.append(insn)
    for kernel in kernels:
        _mark_padding(kernel.instructions)
        _label_hex_targets(kernel.instructions)
    return kernels


def _parse_instruction(address, rest):
    body = _ENCODING_RE.sub("", rest).split(";", 1)[0]
    # Pre-Volta listings group dual-issued instructions in braces.
    body = body.replace("{", " ").replace("}", " ")
    body = _ANNOTATION_RE.sub("", body)
    # .reuse is an operand-cache hint for the scheduler; it only adds noise to diffs.
    body = " ".join(body.replace(".reuse", "").split())
    if not body:
        return None
    guard = ""
    if m := _GUARD_RE.match(body):
        guard, body = m.groups()
    opcode, _, operands = body.partition(" ")
    return Instruction(address, guard, opcode, operands.strip())


def _mark_padding(instructions):
    # ptxas ends every kernel with a branch-to-self and NOPs up to an alignment
    # boundary; they are never executed, so they are not part of the kernel.
    for insn in reversed(instructions):
        if insn.opcode != "NOP" and not insn.is_self_branch():
            break
        insn.padding = True


def _label_hex_targets(instructions):
    """cuobjdump prints branch targets as addresses; the listing drops addresses,
    so name each target .L_x_N (N in address order) and mark it with a label."""
    by_address = {insn.address: insn for insn in instructions if not insn.padding}
    targets = set()
    for insn in by_address.values():
        m = _HEX_TARGET_RE.search(insn.operands)
        if insn.base in _TARGETED and m and int(m.group(1), 16) in by_address:
            targets.add(int(m.group(1), 16))
    if not targets:
        return
    taken = {label for insn in instructions for label in insn.labels}
    names, serial = {}, itertools.count()
    for address in sorted(targets):
        name = f".L_x_{next(serial)}"
        while name in taken:
            name = f".L_x_{next(serial)}"
        names[address] = name
        by_address[address].labels.append(name)
    for insn in by_address.values():
        m = _HEX_TARGET_RE.search(insn.operands)
        if insn.base in _TARGETED and m and int(m.group(1), 16) in names:
            insn.operands = insn.operands[: m.start()] + f"`({names[int(m.group(1), 16)]})"


def keep_functions(text, names):
    """cuobjdump output with only the named functions' blocks; headers stay."""
    lines, keep = [], True
    for line in text.splitlines(keepends=True):
        if m := _FUNCTION_RE.match(line):
            keep = m.group(1) in names
        elif line.startswith("Fatbin") or _ARCH_RE.match(line):
            keep = True
        if keep:
            lines.append(line)
    return "".join(lines)


# ---------------------------------------------------------------- counting


def count(kernel):
    """Instruction mix of one kernel (padding excluded), as a JSON-ready dict."""
    body = kernel.body
    classes = Counter(classify(insn.opcode) for insn in body)
    return {
        "name": kernel.name,
        "demangled": kernel.title,
        "arch": kernel.arch,
        "total": len(body),
        "predicated": sum(1 for insn in body if insn.guard),
        "uniform": sum(1 for insn in body if insn.uniform),
        "padding": len(kernel.instructions) - len(body),
        "classes": {cls: classes[cls] for cls in [*CLASSES, OTHER] if classes[cls]},
        "opcodes": dict(Counter(insn.opcode for insn in body).most_common()),
    }


def _opcode_rows(opcodes):
    """(class, opcode, count) sorted by class order, then by count; PTX opcodes (lower case)
    by the PTX classes."""
    ptx_ops = any(op[:1].islower() for op in opcodes)
    classes, classify_op = (
        ([*ptx.CLASSES, ptx.OTHER], ptx.classify) if ptx_ops else ([*CLASSES, OTHER], classify)
    )
    order = {cls: i for i, cls in enumerate(classes)}
    rows = [(classify_op(op), op, n) for op, n in opcodes.items()]
    return sorted(rows, key=lambda row: (order[row[0]], -row[2], row[1]))


# ---------------------------------------------------------------- inputs


@dataclass
class Source:
    label: str  # what the user asked for, for headings
    text: str  # cuobjdump -sass output (PTX when kind is "ptx")
    name: str = ""  # capture file stem, for stages and objects
    kind: str = "sass"  # "ptx": an exercise's PTX, made where cuobjdump is missing
    kernels: list = None  # PTX: the kernels, parsed (each object's PTX has its own .file table)
    stage_id: str = ""  # PTX: the stage, for its signature's PTX analogues
    notes: list = field(default_factory=list)  # PTX: what the listing is, said before it
    todo_in: str = ""  # PTX: where the stage's COURSE_TODO stub still is


def _is_binary(path):
    with open(path, "rb") as f:
        head = f.read(4096)
    return head.startswith(b"\x7fELF") or b"\0" in head


ROOT = course.ROOT
# Where the CUDA Toolkit puts its tools when it is not on PATH.
CUDA_FALLBACK_DIRS = ["/usr/local/cuda/bin"]


def find_tool(name):
    """A CUDA tool on PATH, else next to nvcc ($CUDA_HOME/bin, /usr/local/cuda/bin)."""
    found = shutil.which(name)
    if found:
        return found
    dirs = [os.environ.get(var) for var in ("CUDA_HOME", "CUDA_PATH")]
    dirs = [str(Path(d) / "bin") for d in dirs if d] + CUDA_FALLBACK_DIRS
    for directory in dirs:
        candidate = Path(directory) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _missing_cuobjdump(stage=None):
    where = f"reference/{course.REFERENCE_DIR}/<chapter>/sass/{REFERENCE_ARCH}/"
    if stage and "/" in stage["id"]:
        where = f"{course.capture_dir(stage['id'].split('/', 1)[0], ROOT).relative_to(ROOT)}/"
    return ToolMissing(
        "sass: cuobjdump not found (it ships with the CUDA Toolkit's cuda-cuobjdump package); "
        f"the SASS captured on the reference GPU is committed under {where}"
    )


def disassemble(obj, stage=None, arch=None, lines=True):
    tool = find_tool("cuobjdump")
    if tool is None:
        raise _missing_cuobjdump(stage)
    if not Path(obj).is_file():
        raise UsageError(f"sass: {obj} does not exist; build it first (cmake --build build)")
    run = subprocess.run([tool, "-sass", str(obj)], capture_output=True, text=True)
    if run.returncode != 0:
        raise UsageError(f"sass: cuobjdump failed on {obj}: {run.stderr.strip()}")
    # The source line of each instruction (nvdisasm -g -gi on the object's cubins, from the build's
    # -lineinfo) and its decoded control field, as comments the parser skips (sass_lines.py).
    nvdisasm = find_tool("nvdisasm") if lines else None
    return sass_lines.annotate(run.stdout, obj, tool, nvdisasm, ROOT, arch)


def _read_manifest(build):
    manifest = Path(build) / "stages.json"
    if not manifest.is_file():
        raise UsageError(
            f"sass: {manifest} not found; configure the build first "
            f"(cmake -B {build}) or pass a captured .sass file"
        )
    return json.loads(manifest.read_text())["stages"]


def find_stage(arg, build):
    """The build's manifest entry (build/stages.json) of the stage an argument names
    (course.parse_stage: the id, or the unambiguous start of one)."""
    variant, stage_id = course.split_variant(arg)
    stages = [s for s in _read_manifest(build) if s["variant"] == variant]
    ref, candidates = course.parse_stage(arg, ROOT)
    matches = [s for s in stages if ref and s["id"] == ref.id] or [
        s for s in stages if s["id"] in candidates
    ]
    if len(matches) == 1:
        return matches[0]
    known = sorted(s["id"] for s in (matches or stages))
    raise UsageError(
        f"sass: {'ambiguous' if matches else 'unknown'} {variant} stage "
        f"'{stage_id}'; known: {', '.join(known) or 'none'}"
    )


def _stage_for_source(path, build):
    for stage in _read_manifest(build):
        if Path(stage["source"]).resolve() == path.resolve():
            return stage
    raise UsageError(f"sass: {path} is not a stage source listed in {Path(build) / 'stages.json'}")


def _capture_name(stage):
    name = stage["id"].rsplit("/", 1)[-1]
    return name if stage["variant"] == "solution" else f"{name}.{stage['variant']}"


def _stage_source(stage, arch=None, lines=True):
    # The manifest lists a stage's object files ("objects"); one "object" is accepted too.
    objects = stage.get("objects") or [stage["object"]]
    text = "".join(disassemble(obj, stage, arch, lines) for obj in objects)
    return Source(f"{stage['variant']}/{stage['id']}", text, _capture_name(stage))


def _tree_stage(arg):
    """(variant, stage id) for a stage argument, checked against the tree (solutions/<chapter>/):
    one line naming the valid choices when it names no stage or several."""
    found, _ = course.parse_stage(arg, ROOT)
    if found:
        return found.variant, found.id
    _, rest = course.split_variant(arg)
    if (
        arg.endswith(".sass")
        or "/sass/" in arg
        or rest.startswith(("chapters/", "solutions/", "/", "."))
        or arg.startswith(("chapters/", "solutions/", "/", "."))
    ):
        raise UsageError(f"sass: {arg}: no such file")
    raise UsageError(course.stage_error("sass", arg, ROOT))


def captured(stage_id, variant="solution", quiet=False):
    """The SASS captured on the reference GPU for a reference stage, as a Source, with a one-line
    note on stderr. Only for the reference by its name: it is the answer, so it never stands in
    for an exercise (whose PTX is shown instead, ptx_source)."""
    if variant != "solution":
        raise ValueError(f"the reference's capture is not {variant}/{stage_id}'s code")
    path = course.capture_path(stage_id, ROOT)
    rel = path.relative_to(ROOT)
    if not path.is_file():
        raise UsageError(
            f"sass: no capture of {stage_id} yet ({rel}); it is taken on a GPU machine "
            "by make reference. With the CUDA Toolkit's cuobjdump installed, make sass "
            "reads the stage's own object instead",
            1,
        )
    header = course.capture_header(path)
    if header.split(": ", 1)[-1].startswith(course.NO_KERNELS):
        raise UsageError(f"sass: {stage_id} has no GPU kernels of its own ({rel}: {header})", 1)
    if not quiet:
        print(
            f"sass: cuobjdump not found; showing the reference solution's SASS captured on the "
            f"reference GPU ({rel}){stamps.stale_note(path, ROOT)}",
            file=sys.stderr,
        )
    return Source(
        f"{stage_id} ({REFERENCE_ARCH}, captured{stamps.stale_note(path, ROOT)})",
        path.read_text(),
        path.stem,
    )


def ptx_source(variant, stage_id, build, stage=None):
    """A stage's PTX, made now from its source as it is (ptx.make), as a Source: what an exercise
    shows where cuobjdump is missing, with the notes that say what it is and is not."""
    stage = stage or find_stage(f"{variant}/{stage_id}", build)
    label = f"{variant}/{stage_id}"
    made = ptx.make(stage, build, label)
    kernels = [k for text in made.texts for k in ptx.parse(text)]
    source = stage.get("source", "")
    shown = ptx.shown_path(source) if source else label
    notes = [
        f"PTX of {label} ({shown} as it is now), for {made.arch or 'the build target'}",
        "cuobjdump is not installed, so this is PTX, not SASS: the virtual ISA nvcc hands to "
        "ptxas, before ptxas optimises it and allocates registers.",
        "It is not the verdict: the SASS signature is judged on SASS (with cuobjdump, or on "
        "a GPU machine); make check says 'SASS not checked' here.",
    ]
    if made.todo_in:
        notes.append(f"still TODO (COURSE_TODO(); in {made.todo_in}): this is the stub's PTX")
    return Source(
        f"{label} (PTX, {made.arch or '?'})",
        "".join(made.texts),
        f"{stage_id.rsplit('/', 1)[-1]}.{variant}",
        "ptx",
        kernels,
        stage_id,
        notes,
        made.todo_in,
    )


def _which(arg, build):
    """(variant, stage id, manifest entry or None) of a stage argument or stage source (.cu);
    None for another file (an object, a capture)."""
    path = Path(arg)
    if path.is_file() and path.suffix == ".cu":
        stage = _stage_for_source(path, build)
        return stage["variant"], stage["id"], stage
    if path.is_file():
        return None
    return (*_tree_stage(arg), None)


def load(arg, build):
    """Resolve SRC (stage id, .cu source, object, or captured text) to SASS text; without
    cuobjdump, a reference stage to its committed capture, any other to its PTX."""
    path = Path(arg)
    which = _which(arg, build)
    if which is None:
        if _is_binary(path):
            return Source(arg, disassemble(path), path.name.split(".", 1)[0])
        # A capture given by its path (sass-diff across architectures) says when it is stale.
        return Source(f"{arg}{stamps.stale_note(path, ROOT)}", path.read_text())
    variant, stage_id, stage = which
    if find_tool("cuobjdump") is None:
        if variant == "solution":
            return captured(stage_id)
        # Never the reference's capture for the student's code: their own, as PTX.
        return ptx_source(variant, stage_id, build, stage)
    return _stage_source(stage or find_stage(f"{variant}/{stage_id}", build))


def demangle(kernels):
    """Fill in Kernel.title with one demangler run for all names."""
    # c++filt prints template arguments as written (reduce<256, int>(int*, ...));
    # cu++filt prints them as T1, T2, so it is only the fallback.
    tool = shutil.which("c++filt") or find_tool("cu++filt")
    names = sorted({k.name for k in kernels})
    if not tool or not names:
        return
    try:
        run = subprocess.run([tool, *names], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return
    lines = run.stdout.splitlines()
    if len(lines) == len(names):
        titles = dict(zip(names, lines))
        for kernel in kernels:
            kernel.title = titles[kernel.name]


def kernels_of(source, pattern, arch=None):
    kernels = list(source.kernels) if source.kind == "ptx" else parse(source.text)
    if not kernels and source.kind == "ptx":
        stage = source.label.split(" ", 1)[0]
        if source.todo_in:
            raise UsageError(
                f"sass: {stage} has no GPU kernels yet: it is still TODO "
                f"(COURSE_TODO(); in {source.todo_in}), and its kernels are only "
                "compiled once you write them",
                1,
            )
        raise UsageError(f"sass: {stage} has no GPU kernels of its own (its PTX holds none)", 1)
    if not kernels:
        raise UsageError(
            f"sass: no SASS in {source.label} (compiled for PTX only? "
            "set CMAKE_CUDA_ARCHITECTURES to a real architecture such as 90)",
            1,
        )
    demangle(kernels)
    if pattern:
        try:
            regex = re.compile(pattern)
        except re.error as err:
            raise UsageError(f"sass: bad --kernel regex '{pattern}': {err}")
        chosen = [k for k in kernels if regex.search(k.name) or regex.search(k.title)]
        if not chosen:
            names = ", ".join(sorted({k.title for k in kernels}))
            raise UsageError(
                f"sass: no kernel in {source.label} matches '{pattern}'; kernels: {names}", 1
            )
        kernels = chosen
    if arch:
        # PTX is for a virtual architecture: compute_90 stands for sm_90.
        chosen = [k for k in kernels if arch in (k.arch, k.arch.replace("compute_", "sm_"))]
        if not chosen:
            archs = ", ".join(sorted({k.arch for k in kernels}))
            raise UsageError(f"sass: no {arch} code in {source.label}; it has: {archs}", 1)
        kernels = chosen
    return kernels


# ---------------------------------------------------------------- output


def heading(kernel, extra=""):
    return f"// {kernel.title}  [{kernel.arch or '?'}]{extra}"


def listing(kernel, guard_width=6, sources=None, control=False, width=120):
    """The kernel's instructions; with sources (a dict, filled as files are read), each source line
    they come from above them (the capture's or object's -lineinfo lines: a lesson header's line
    inlined into the kernel is named by its own file and line); with control, each instruction's
    control field after it (sass_lines.py)."""
    lines, shown = [], None
    for insn in kernel.body:
        lines += [f"{label}:" for label in insn.labels]
        level = sass_lines.course_level(insn.where) if sources is not None else None
        if level and (level.file, level.line) != shown:
            shown = (level.file, level.line)
            at = ""
            if level.at:  # where it was inlined; the line alone when it is the same file
                where = "" if level.at[0] == level.file else f"{Path(level.at[0]).name}:"
                at = f" (inlined at {where}{level.at[1]})"
            text = ptx._source_line(sources, level.file, level.line)
            line = f"        // {Path(level.file).name}:{level.line}{at}  {text}".rstrip()
            lines.append(line if len(line) <= width else line[: width - 1] + "~")
        text = f"{insn.guard:>{guard_width}} {insn.text}"
        if control and insn.control:
            text = f"{text:<64} {insn.control}"
        lines.append(text)
    return lines


def count_table(stats, opcodes=False):
    rows = [(cls, n) for cls, n in stats["classes"].items()]
    width = max(len("uniform datapath"), *(len(cls) for cls, _ in rows))
    total = stats["total"] or 1
    lines = [f"  {'class':<{width}} {'count':>6} {'%':>6}"]
    lines += [f"  {cls:<{width}} {n:>6} {100 * n / total:>6.1f}" for cls, n in rows]
    lines.append(f"  {'total':<{width}} {stats['total']:>6} {100.0 if stats['total'] else 0:>6.1f}")
    lines.append(f"  {'predicated (@P)':<{width}} {stats['predicated']:>6}")
    if "uniform" in stats:  # SASS only: PTX has no uniform datapath
        lines.append(f"  {'uniform datapath':<{width}} {stats['uniform']:>6}")
    if opcodes:
        lines.append("  opcodes:")
        lines += [f"    {op:<32} {n:>5}  {cls}" for cls, op, n in _opcode_rows(stats["opcodes"])]
    return lines


def _align(left, right, keys):
    """Pairs (a, b), None on the side that lacks a row: aligned on keys[0], then on
    keys[1:] inside each stretch that differs."""
    matcher = difflib.SequenceMatcher(
        a=[keys[0](r) for r in left], b=[keys[0](r) for r in right], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or len(keys) == 1:
            yield from itertools.zip_longest(left[i1:i2], right[j1:j2])
        else:
            yield from _align(left[i1:i2], right[j1:j2], keys[1:])


def side_by_side(left, right, width):
    """Rows of (opcode, text) side by side, aligned on the full opcode, then on the
    base opcode (so LDG.E faces LDG.E.128). Marks: ' ' same, '|' changed, '<' '>' one side."""
    column = max(20, (width - 3) // 2)

    def fit(text):
        return text if len(text) <= column else text[: column - 1] + "~"

    keys = (lambda row: row[0], lambda row: row[0].split(".", 1)[0])
    lines = []
    for a, b in _align(left, right, keys):
        if a and b:
            mark = " " if a[1] == b[1] else "|"
        else:
            mark = "<" if a else ">"
        lines.append(f"{fit(a[1] if a else ''):<{column}} {mark} {fit(b[1] if b else '')}".rstrip())
    return lines


def _diff_rows(kernel):
    rows = []
    for insn in kernel.body:
        rows += [(":", f"{label}:") for label in insn.labels]
        rows.append((insn.opcode, f"{insn.guard:>5} {insn.text}"))
    return rows


def compare_tables(a, b, kind="sass"):
    """Two instruction mixes (count() of SASS, or ptx.count() of PTX when kind is "ptx")."""
    order, classify_op = (
        ([*ptx.CLASSES, ptx.OTHER], ptx.classify)
        if kind == "ptx"
        else ([*CLASSES, OTHER], classify)
    )
    classes = [cls for cls in order if cls in a["classes"] or cls in b["classes"]]
    rows = [(cls, a["classes"].get(cls, 0), b["classes"].get(cls, 0)) for cls in classes]
    rows += [
        ("total", a["total"], b["total"]),
        ("predicated (@P)", a["predicated"], b["predicated"]),
    ]
    if "uniform" in a and "uniform" in b:
        rows.append(("uniform datapath", a["uniform"], b["uniform"]))
    # Memory opcodes with modifiers show vectorisation (LDG.E -> LDG.E.128) at a glance.
    memory = {"global memory", "local memory", "shared memory", "texture/surface", "generic memory"}
    ops = sorted({op for op in [*a["opcodes"], *b["opcodes"]] if classify_op(op) in memory})
    rows += [(f"  {op}", a["opcodes"].get(op, 0), b["opcodes"].get(op, 0)) for op in ops]
    width = max(len(name) for name, _, _ in rows)
    lines = [f"  {'class':<{width}} {'A':>6} {'B':>6} {'B-A':>6}"]
    for name, x, y in rows:
        delta = f"{y - x:+d}" if y != x else "0"
        lines.append(f"  {name:<{width}} {x:>6} {y:>6} {delta:>6}")
    return lines


def _pairs(kernels_a, kernels_b):
    """Kernels to compare: the only one on each side, else those with the same
    demangled name (the same architecture first, so sm_90 pairs with sm_90)."""
    if len(kernels_a) == 1 and len(kernels_b) == 1:
        return [(kernels_a[0], kernels_b[0])]
    pairs, unpaired = [], list(kernels_b)
    for same_arch in (True, False):
        for ka in kernels_a:
            if any(ka is a for a, _ in pairs):
                continue
            for kb in unpaired:
                # Anonymous-namespace kernels are mangled with a per-file hash, so
                # the same kernel in two stages only shares its demangled name.
                if kb.title == ka.title and (kb.arch == ka.arch or not same_arch):
                    pairs.append((ka, kb))
                    unpaired.remove(kb)
                    break
    if not pairs:

        def names(kernels):
            return "; ".join(f"{k.title} [{k.arch}]" for k in kernels)

        raise UsageError(
            "sass: A and B have several kernels and none in common; pick one on "
            f"each side with --kernel/--kernel-b (and --arch).\n  A: {names(kernels_a)}"
            f"\n  B: {names(kernels_b)}",
            1,
        )
    order = {id(k): i for i, k in enumerate(kernels_a)}
    return sorted(pairs, key=lambda pair: order[id(pair[0])])


# ---------------------------------------------------------------- commands


def _print_notes(*sources):
    for source in sources:
        for note in source.notes:
            print(textwrap.fill(note, 100, initial_indent="// ", subsequent_indent="//   "))
    if any(source.notes for source in sources):
        print()


def _print_ptx_hints(source):
    """The stage's signature with its PTX analogue counted per kernel (lesson.ptx_hints)."""
    import lesson  # here, not above: lesson imports this module

    kernels = list(source.kernels)
    demangle(kernels)
    try:
        lines = lesson.ptx_hints(source.stage_id, kernels)
    except lesson.Usage as err:
        lines = [f"the PTX analogue of the signature is not shown: {err}"]
    print("\n".join(lines))


def cmd_dump(args):
    source = load(args.src, args.build)
    if source.kind == "ptx":
        kernels = kernels_of(source, args.kernel, args.arch)
        _print_notes(source)
        sources = {}
        for kernel in kernels:
            what = "" if kernel.entry else " (a device function)"
            n = len(kernel.body)
            print(
                f"// {kernel.title}  [PTX {kernel.arch or '?'}]{what}  "
                f"{n} instruction{'' if n == 1 else 's'}"
            )
            print("\n".join(ptx.listing(kernel, sources)))
            print()
        _print_ptx_hints(source)
        return
    for kernel in kernels_of(source, args.kernel, args.arch):
        padding = len(kernel.instructions) - len(kernel.body)
        print(heading(kernel, f"  {len(kernel.body)} instructions (+{padding} padding not shown)"))
        if kernel.title != kernel.name:
            print(f"// {kernel.name}")
        sources = {} if not args.no_source else None
        print("\n".join(listing(kernel, sources=sources, control=args.control)))
        print()


def cmd_count(args):
    source = load(args.src, args.build)
    counter = ptx.count if source.kind == "ptx" else count
    stats = [counter(k) for k in kernels_of(source, args.kernel, args.arch)]
    if args.json:
        print(json.dumps({"source": args.src, "kind": source.kind, "kernels": stats}, indent=2))
        return
    _print_notes(source)
    for kernel_stats in stats:
        what = "PTX " if source.kind == "ptx" else ""
        print(f"{kernel_stats['demangled']}  [{what}{kernel_stats['arch'] or '?'}]")
        print("\n".join(count_table(kernel_stats, args.opcodes)))
        print()
    if source.kind == "ptx":
        _print_ptx_hints(source)


def diff_sources(a, b, build):
    """The two Sources sass-diff compares. Without cuobjdump an exercise has only its PTX, so
    a pair with one compares both as PTX (a reference stage's made from solutions/ too), and
    says in one line why not when the other side is a file; two reference stages compare their
    captures, never one capture with itself."""
    if find_tool("cuobjdump") is not None:
        return load(a, build), load(b, build)
    which = [_which(a, build), _which(b, build)]
    if all(w and w[0] == "solution" for w in which):
        if which[0][1] == which[1][1]:
            raise UsageError(
                f"sass-diff: A and B are the same reference stage ({which[0][1]}): "
                "nothing to compare",
                1,
            )
        return load(a, build), load(b, build)
    if not any(w and w[0] != "solution" for w in which):
        return load(a, build), load(b, build)
    if None in which:
        other = a if which[0] is None else b
        raise UsageError(
            f"sass-diff: without cuobjdump an exercise can only be shown as PTX, and "
            f"{other} is a file, not a stage whose PTX can be made: name two stages "
            "(e.g. A=11-streaming/03_vectorized_float4 "
            "B=exercise/11-streaming/03_vectorized_float4)",
            2,
        )
    return tuple(ptx_source(w[0], w[1], build, w[2]) for w in which)


def cmd_diff(args):
    source_a, source_b = diff_sources(args.a, args.b, args.build)
    kernels_a = kernels_of(source_a, args.kernel, args.arch)
    kernels_b = kernels_of(source_b, args.kernel_b or args.kernel, args.arch)
    width = args.width or shutil.get_terminal_size((160, 24)).columns
    kind = source_a.kind
    if kind == "ptx":
        # Each side's first note says whose PTX it is; the others are the same for both.
        notes = [
            f"A: {source_a.notes[0]}",
            f"B: {source_b.notes[0]}",
            *source_b.notes[1:3],
            *(n for s in (source_a, source_b) for n in s.notes[3:]),
        ]
        _print_notes(Source("", "", notes=notes))
    counter = ptx.count if kind == "ptx" else count
    for ka, kb in _pairs(kernels_a, kernels_b):
        print(f"A: {source_a.label}  {ka.title}  [{ka.arch}]")
        print(f"B: {source_b.label}  {kb.title}  [{kb.arch}]")
        print("\n".join(side_by_side(_diff_rows(ka), _diff_rows(kb), width)))
        print()
        print("\n".join(compare_tables(counter(ka), counter(kb), kind)))
        print()


def cmd_capture(args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for arg in args.stages:
        source = load(arg, args.build)
        if source.kind == "ptx":
            raise _missing_cuobjdump()
        if not source.name:
            raise UsageError(f"sass: capture needs a stage or an object, not {arg}")
        text = source.text
        if args.kernel:
            # A stage with many template instantiations disassembles to megabytes;
            # keep the functions worth committing.
            text = keep_functions(text, {k.name for k in kernels_of(source, args.kernel)})
        elif not parse(text):
            print(f"sass: warning: no SASS in {source.label}", file=sys.stderr)
        target = out / f"{source.name}.sass"
        target.write_text(text)
        print(target)


def _keep_arch(text, arch):
    """cuobjdump output with only the fatbin sections for one architecture."""
    sections, current = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("Fatbin") and current:
            sections.append(current)
            current = []
        current.append(line)
    sections.append(current)
    kept = [
        sec
        for sec in sections
        if not any(line.startswith("Fatbin") for line in sec)
        or any(re.match(rf"^\s*(arch = |code for ){arch}\b", line) for line in sec)
    ]
    return "".join(line for sec in kept for line in sec)


def subset_of(stage_id, text):
    """(text, header words) for a stage's capture: the subset its lessons.toml `capture` states
    (a stage whose every instantiation disassembles to megabytes), or all."""
    kernels = parse(text)
    subset = course.capture_subset(stage_id, ROOT)
    if subset is None or not kernels:
        return text, (
            f"every kernel compiled into the stage's object ({len(kernels)} functions: "
            "each instantiation the tests and the benchmark can pick)"
        )
    pattern, words = subset
    demangle(kernels)
    regex = re.compile(pattern)
    chosen = [k for k in kernels if regex.search(k.title) or regex.search(k.name)]
    if not chosen:
        raise UsageError(
            f"sass: capture subset '{pattern}' of {stage_id} matches none of its kernels", 1
        )
    return (
        keep_functions(text, {k.name for k in chosen}),
        f"a subset, {words} ({len(chosen)} of the {len(kernels)} functions compiled; "
        "make sass STAGE=... shows them all)",
    )


def without_encodings(text):
    """cuobjdump's listing without the instructions' binary encodings (the /* 0x... */ words: a
    second line per instruction on Volta and later), which nothing reads: a capture at a third of
    the size, so every generation's fits in the repository."""
    lines = []
    for line in text.splitlines():
        if re.match(r"^\s*/\* 0x[0-9a-f]+ \*/\s*$", line):
            continue
        line = re.sub(r"\s*/\* 0x[0-9a-f]{16} \*/\s*$", "", line).rstrip()
        # cuobjdump pads the address and the guard to 35 columns; one space and a 5-column guard
        # read the same at half the width.
        if m := _PADDED_RE.match(line):
            line = f"  /*{m.group(1)}*/ {m.group(2) or '':>5} {m.group(3)}"
        lines.append(line)
    return "\n".join(lines) + "\n"


# The anonymous namespace's mangled name, as nvcc writes it: _GLOBAL__N__<hash>_<n>_<file: n
# characters>_<hash>_<number>, behind its length. The number differs from one compilation of the
# same source to the next.
_ANON_RE = re.compile(r"(\d+)_GLOBAL__N__([0-9a-f]+)_(\d+)_")


def stable_anonymous_names(text):
    """Every anonymous namespace's per-compilation number made 0 (the name's length prefix
    adjusted, so it still demangles): a recapture of unchanged code changes no line."""
    out, at = [], 0
    for m in _ANON_RE.finditer(text):
        digits, start = m.group(1), m.start(1) + len(m.group(1))
        flen = int(m.group(3))
        fixed = m.end() - start + flen  # up to the file's name, inclusive
        tail = re.match(r"_([0-9a-f]+)_(\d+)", text[start + fixed :])
        if m.start() < at or not tail:
            continue
        for cut in range(len(digits)):  # the length may follow an identifier ending in digits
            length = int(digits[cut:])
            number = length - fixed - len(tail.group(1)) - 2
            if 1 <= number <= len(tail.group(2)):
                break
        else:
            continue
        name_end = start + fixed + len(tail.group(1)) + 2
        stable = text[start:name_end] + "0"
        out += [text[at : m.start(1)], digits[:cut], str(len(stable)), stable]
        at = name_end + number
    return "".join(out) + text[at:]


def _capture_one(job):
    """Capture one stage (capture-all's worker); (the line to print, whether its object lacks this
    architecture)."""
    stage_id, stage, arch, lines, version = job
    target = course.capture_path(stage_id, ROOT, arch)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = ""
    if stage:
        text = _keep_arch(_stage_source(stage, arch, lines).text, arch)
    kernels = parse(text)
    if not kernels:
        why = (
            "not a GPU stage: built without device code"
            if stage is None
            else "the stage's object holds no device code; it calls kernels compiled elsewhere "
            "(see the stage file)"
        )
        header = f"# {stage_id}: {course.NO_KERNELS}: {why}\n"
        missing = stage is not None and bool(parse(_stage_source(stage, lines=False).text))
        if missing:
            header = f"# {stage_id}: {course.NO_KERNELS} for {arch}: the build targets other architectures\n"
        target.write_text(header)
        return f"{target.relative_to(ROOT)}: no kernels", missing
    text, words = subset_of(stage_id, text)
    said = (
        "with nvdisasm -g -gi source lines"
        if sass_lines.has_lines(text)
        else "no source lines (--no-lines, or nvdisasm not found)"
    )
    header = f"# {stage_id}: {arch}, {words}; cuobjdump -sass, {version}; {said}\n"
    target.write_text(header + stable_anonymous_names(without_encodings(text)))
    return (
        f"{target.relative_to(ROOT)}: {len(parse(text))} of {len(kernels)} kernels, {len(text.splitlines())} lines",
        False,
    )


def cmd_capture_all(args):
    """Every solution stage's SASS into reference/<gpu>/<chapter>/sass/<arch>/<stage>.sass, each file
    opening with a line saying what it holds; captures of stages that no longer exist removed."""
    manifest = {s["id"]: s for s in _read_manifest(args.build) if s["variant"] == "solution"}
    ids = [i for i in course.stage_ids(ROOT) if not args.only or re.search(args.only, i)]
    tool = find_tool("cuobjdump")
    if tool is None:
        raise _missing_cuobjdump()
    if not args.no_build:
        targets = [
            course.StageRef("solution", *i.split("/", 1)).target for i in ids if i in manifest
        ]
        run = subprocess.run(
            ["cmake", "--build", str(args.build), "-j", str(args.jobs), "--target", *targets],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            raise UsageError(
                f"sass: building the stages' objects failed:\n{run.stdout[-3000:]}{run.stderr[-2000:]}",
                1,
            )
    version = (
        subprocess.run([tool, "--version"], capture_output=True, text=True)
        .stdout.strip()
        .splitlines()
    )
    version = version[-1].strip() if version else "cuobjdump"

    # One stage's disassembly, source lines and demangling do not depend on another's: side by side,
    # in processes (most of the time is Python reading the listings, which threads would serialize),
    # printed in course order.
    jobs = [(i, manifest.get(i), args.arch, not args.no_lines, version) for i in ids]
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(_capture_one, jobs))
    missing_arch = [i for i, (_, missing) in zip(ids, results) if missing]
    for line, _ in results:
        print(line)
    current = {course.capture_path(i, ROOT, args.arch) for i in ids}
    for chapter in sorted({i.split("/", 1)[0] for i in ids}):
        for old in sorted(course.capture_dir(chapter, ROOT, args.arch).glob("*.sass")):
            if old not in current and "." not in old.stem:
                old.unlink()
                print(f"{old.relative_to(ROOT)}: removed (no such stage now)")
    if missing_arch:
        raise UsageError(
            f"sass: no {args.arch} code for {', '.join(missing_arch)}: configure with "
            f"ARCH={args.arch[3:]} (make sass-capture ARCH={args.arch[3:]})",
            1,
        )


def _class_table():
    return "\n".join(
        textwrap.fill(
            " ".join(ops.split()), 79, initial_indent=f"  {cls:<19} ", subsequent_indent=" " * 22
        )
        for cls, ops in CLASSES.items()
    )


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sass.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="SRC: a stage id (11-streaming/01_grid_stride, exercise/11-streaming/...), "
        "a .cu stage source, an object/cubin/executable, or a captured .sass file.\n"
        "Exit status: 0 ok, 1 nothing found, 2 usage, 3 cuobjdump missing.",
    )
    parser.add_argument("--build", default="build", help="build directory holding stages.json")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name, help_text, **kwargs):
        command = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kwargs,
        )
        command.add_argument(
            "--build",
            default=argparse.SUPPRESS,
            help="build directory holding stages.json (default: build)",
        )
        command.add_argument(
            "--kernel", metavar="REGEX", help="only kernels whose raw or demangled name matches"
        )
        if name != "capture":
            command.add_argument(
                "--arch", metavar="SM", help="only code for this architecture, e.g. sm_90"
            )
        return command

    dump = add("dump", "print the cleaned SASS listing of each kernel")
    dump.add_argument("src", metavar="SRC")
    dump.add_argument(
        "--no-source",
        action="store_true",
        help="leave out the source lines the instructions come from (shown where the listing "
        "has -lineinfo lines: every capture made with nvdisasm, and live listings)",
    )
    dump.add_argument(
        "--control",
        action="store_true",
        help="show each instruction's control field: B waits, R/W scoreboards set, Y yield, "
        "S stall cycles (sm_70 to sm_90; see sass_lines.py)",
    )
    dump.set_defaults(run=cmd_dump)

    count_cmd = add(
        "count",
        "print the instruction mix of each kernel",
        epilog="Counts exclude the end-of-kernel padding (the branch-to-self after "
        "the last\ninstruction and the NOPs after it), which never runs. "
        "Predicated instructions\n(@P0 ..., @!PT ...) count by their opcode. "
        "Classes, by base opcode (modifiers\nstripped, U prefix dropped when "
        "the rest is known):\n" + _class_table(),
    )
    count_cmd.add_argument("src", metavar="SRC")
    count_cmd.add_argument(
        "--json",
        action="store_true",
        help="JSON, with per-opcode counts including modifiers (LDG.E.128)",
    )
    count_cmd.add_argument(
        "--opcodes", action="store_true", help="also list every opcode with its modifiers"
    )
    count_cmd.set_defaults(run=cmd_count)

    diff = add(
        "diff",
        "show two kernels' SASS and instruction mixes side by side",
        epilog="Markers: ' ' same, '|' changed, '<' only in A, '>' only in B.",
    )
    diff.add_argument("a", metavar="A")
    diff.add_argument("b", metavar="B")
    diff.add_argument(
        "--kernel-b",
        metavar="REGEX",
        help="B's kernels, when they differ from A's (default: --kernel)",
    )
    diff.add_argument("--width", type=int, help="output width (default: terminal, else 160)")
    diff.set_defaults(run=cmd_diff)

    capture = add(
        "capture",
        "save raw `cuobjdump -sass` output as <DIR>/<stage name>.sass",
        epilog="With --kernel, only the matching functions are kept (the file stays "
        "raw cuobjdump output).",
    )
    capture.add_argument("--out", required=True, metavar="DIR")
    capture.add_argument("stages", nargs="+", metavar="STAGE")
    capture.set_defaults(run=cmd_capture)

    capture_all = sub.add_parser(
        "capture-all",
        help="capture every solution stage into reference/<gpu>/<chapter>/sass/<arch>/",
        description="Builds every solution stage's object, and writes its SASS (one architecture) "
        "to reference/<gpu>/<chapter>/sass/<arch>/<stage>.sass, opening with a '#' line that "
        "says what it holds (or that the stage has no kernels); removes the captures "
        "of stages that no longer exist. Needs cuobjdump (a GPU machine's toolkit).",
    )
    capture_all.add_argument(
        "--build",
        default=argparse.SUPPRESS,
        help="build directory holding stages.json (default: build)",
    )
    capture_all.add_argument("--arch", default=REFERENCE_ARCH, help=f"default {REFERENCE_ARCH}")
    capture_all.add_argument(
        "--only", metavar="REGEX", help="only the stages whose id (chapter/stage) matches"
    )
    capture_all.add_argument(
        "--no-lines",
        action="store_true",
        help="leave out the source lines (nvdisasm -g -gi), which most of the time goes to",
    )
    capture_all.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    capture_all.add_argument(
        "--no-build", action="store_true", help="the objects are built already"
    )
    capture_all.set_defaults(run=cmd_capture_all)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except ToolMissing as err:
        print(err, file=sys.stderr)
        return 3
    except (UsageError, ptx.Failed) as err:
        print(err, file=sys.stderr)
        return err.status
    except BrokenPipeError:
        # `sass.py dump ... | head` closes the pipe early; that is not an error,
        # and the final flush of stdout must not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
