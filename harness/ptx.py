#!/usr/bin/env python3
"""PTX of a course stage: the student's own code where no cuobjdump can show its SASS.

nvcc always produces PTX (the virtual instruction set it hands to ptxas); cuobjdump, which
disassembles the SASS ptxas makes of it, ships only with a full CUDA Toolkit. So on a laptop
without it, `make sass STAGE=exercise/...` shows this: the stage's source compiled now, with the
exact flags of its object in the build, to PTX for the architecture the build targets.

PTX comes before ptxas's optimisation, instruction selection and register allocation: ptxas
unrolls, merges, splits and drops instructions, and adds some of its own (spills to local memory,
convergence barriers, uniform-datapath copies). A PTX count is a hint about the SASS, never the
verdict on a stage's signature.

Used by sass.py (dump, count, diff); the PTX analogue of each signature rule lives in lesson.py.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402  (the repository root)

ROOT = course.ROOT
# The architecture a PTX listing is made for when the build targets several: the course's
# reference (the rules are written for sm_90), else the newest the build names.
PREFERRED_ARCH = "90"


class Failed(Exception):
    """PTX could not be made (no Ninja build, the stage does not compile): one line, a status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- classes

# PTX instruction classes, in the order of sass.py's SASS classes where one corresponds. Memory
# instructions go by their state space, arithmetic by its type (an f16/f32/f64 operand type is
# fp, any other int), the rest by their first word.
CLASSES = [
    "global memory",
    "local memory",
    "shared memory",
    "constant memory",
    "parameters",
    "generic memory",
    "texture/surface",
    "shuffle",
    "vote",
    "barrier/fence",
    "branch/convergence",
    "predicate/select",
    "fp arithmetic",
    "int arithmetic",
    "conversion",
    "move",
]
OTHER = "other"
CLASS_DOC = {
    "global memory": "ld st ldu atom red prefetch .global; cp.async (global to shared)",
    "local memory": "ld st .local (a local array: spills come later, from ptxas)",
    "shared memory": "ld st atom red .shared; ldmatrix stmatrix",
    "constant memory": "ld .const (__constant__ data)",
    "parameters": "ld st .param (kernel and call arguments)",
    "generic memory": "ld st atom red with no state space (ptxas resolves it)",
    "texture/surface": "tex tld4 txq suld sust sured suq",
    "shuffle": "shfl",
    "vote": "vote match redux activemask",
    "barrier/fence": "bar barrier membar fence mbarrier cp.async.wait/commit",
    "branch/convergence": "bra brx call ret exit trap nanosleep bar.warp.sync",
    "predicate/select": "setp selp slct set testp",
    "fp arithmetic": "add sub mul fma mad div min max abs neg rcp sqrt rsqrt sin cos lg2 ex2 "
    "tanh mma on .f16 .bf16 .tf32 .f32 .f64",
    "int arithmetic": "the same on integer types; and or xor not shl shr shf lop3 bfe bfi brev "
    "popc clz bfind prmt dp4a dp2a; mma on integer types",
    "conversion": "cvt",
    "move": "mov cvta",
}
_FP_TYPES = {"f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "e4m3", "e5m2"}
_ARITHMETIC = set(
    "add sub mul mad fma div rem abs neg min max rcp sqrt rsqrt sin cos lg2 ex2 "
    "tanh copysign mul24 mad24 sad mma wmma wgmma addc subc madc".split()
)
_INT_ONLY = set(
    "and or xor not cnot shl shr shf lop3 bfe bfi brev popc clz bfind fns prmt dp4a "
    "dp2a bmsk szext".split()
)
_SPACES = {
    "global": "global memory",
    "local": "local memory",
    "shared": "shared memory",
    "const": "constant memory",
    "param": "parameters",
}
_BY_BASE = {
    "tex": "texture/surface",
    "tld4": "texture/surface",
    "txq": "texture/surface",
    "suld": "texture/surface",
    "sust": "texture/surface",
    "sured": "texture/surface",
    "suq": "texture/surface",
    "shfl": "shuffle",
    "vote": "vote",
    "match": "vote",
    "redux": "vote",
    "activemask": "vote",
    "bar": "barrier/fence",
    "barrier": "barrier/fence",
    "membar": "barrier/fence",
    "fence": "barrier/fence",
    "mbarrier": "barrier/fence",
    "bra": "branch/convergence",
    "brx": "branch/convergence",
    "call": "branch/convergence",
    "ret": "branch/convergence",
    "exit": "branch/convergence",
    "trap": "branch/convergence",
    "nanosleep": "branch/convergence",
    "setp": "predicate/select",
    "selp": "predicate/select",
    "slct": "predicate/select",
    "set": "predicate/select",
    "testp": "predicate/select",
    "cvt": "conversion",
    "mov": "move",
    "cvta": "move",
    "ldmatrix": "shared memory",
    "stmatrix": "shared memory",
}


def classify(opcode):
    parts = opcode.split(".")
    base, mods = parts[0], [m.split("::", 1)[0] for m in parts[1:]]
    if base in ("ld", "st", "ldu", "atom", "red", "prefetch", "prefetchu") or (
        base == "wmma" and mods[:1] in (["load"], ["store"])
    ):
        space = next((_SPACES[m] for m in mods if m in _SPACES), None)
        return space or "generic memory"
    if base == "cp":
        waits = {"wait_group", "wait_all", "commit_group"}
        return "barrier/fence" if waits & set(mods) else "global memory"
    if base == "bar" and "warp" in mods:
        return "branch/convergence"  # __syncwarp: WARPSYNC in the SASS
    if base == "wmma" and mods[:1] == ["mma"] or base in _ARITHMETIC:
        return "fp arithmetic" if _FP_TYPES & set(mods) else "int arithmetic"
    if base in _INT_ONLY:
        return "int arithmetic"
    return _BY_BASE.get(base, OTHER)


# ---------------------------------------------------------------- parsing


@dataclass
class Instruction:
    guard: str  # "@%p1", "@!%p2" or ""
    opcode: str  # full form, e.g. "ld.global.nc.v4.f32"
    operands: str
    labels: list = field(default_factory=list)
    where: tuple = ()  # (file shown, line) of the source it comes from, when -lineinfo

    @property
    def base(self):
        return self.opcode.split(".", 1)[0]

    @property
    def text(self):
        return f"{self.opcode} {self.operands}".rstrip()


@dataclass
class Kernel:
    name: str
    arch: str  # "compute_90"
    instructions: list = field(default_factory=list)
    title: str = ""  # demangled name; the raw name until sass.demangle() runs
    entry: bool = True  # a kernel (.entry), else a device function ptxas was not asked to inline

    @property
    def body(self):
        return self.instructions


_HEADER_RE = re.compile(
    r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\s+"
    r"(?:\([^)]*\)\s*)?([\w$.]+)"
)
_TARGET_RE = re.compile(r"^\s*\.target\s+(\w+)")
_FILE_RE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')
_LOC_RE = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(?:.*inlined_at\s+(\d+)\s+(\d+))?")
_LABEL_RE = re.compile(r"^\s*([$\w.]+):\s*$")
_GUARD_RE = re.compile(r"^(@!?%\w+)\s+(.*)$", re.S)
# A function-local static (a __shared__ array) is mangled _ZZ<function>E<length><name>.
_LOCAL_STATIC_RE = re.compile(r"\b_ZZ\w*E(\d+)([A-Za-z_]\w*)")


def shown_path(path):
    """A source path as the listing shows it: relative to the course, else its file name."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return Path(path).name


def _short_static(match):
    length, name = int(match.group(1)), match.group(2)
    return name if len(name) == length else match.group(0)


def parse(text):
    """Kernels (.entry) and device functions (.func with a body) in PTX text, in file order."""
    files = {m.group(1): m.group(2) for line in text.splitlines() if (m := _FILE_RE.match(line))}
    arch = next(
        (
            f"compute_{m.group(1)[3:]}"
            for line in text.splitlines()
            if (m := _TARGET_RE.match(line))
        ),
        "",
    )
    kernels, kernel, state, depth, labels, pending, where = [], None, "", 0, [], "", ()
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if state == "":
            if m := _HEADER_RE.match(line):
                kernel = Kernel(m.group(2), arch, entry=m.group(1) == "entry")
                kernel.title = kernel.name
                state, labels, pending, where = "header", [], "", ()
            continue
        if state == "header":
            # A declaration (.extern .func f(...);) has no body; a definition's opens with '{'.
            if line == "{":
                state, depth = "body", 1
                kernels.append(kernel)
            elif line.endswith(";"):
                state = ""
            continue
        if not pending and line in ("{", "}"):
            depth += 1 if line == "{" else -1
            if depth == 0:
                state = ""
            continue
        if not pending and (m := _LOC_RE.match(line)):
            where = _location(files, m)
            continue
        if not pending and (line.startswith(".") or (m := _LABEL_RE.match(line))):
            if not line.startswith("."):
                labels.append(m.group(1))
            continue
        pending += " " + line
        if ";" not in pending:
            continue  # a call's argument list spans lines
        *statements, pending = pending.split(";")
        for statement in statements:
            insn = _instruction(statement, kernel.name)
            if insn:
                insn.labels, labels, insn.where = labels, [], where
                kernel.instructions.append(insn)
    return kernels


def _location(files, m):
    """(file shown, line) for a .loc: the innermost inside the course, else its call site
    there (an intrinsic from a CUDA header shows the stage line that called it)."""
    inner, line = files.get(m.group(1), ""), int(m.group(2))
    if m.group(3) and not shown_path(inner).startswith(
        ("chapters/", "solutions/", "labs/", "common/")
    ):
        outer = files.get(m.group(3), "")
        if shown_path(outer) != Path(outer).name:
            inner, line = outer, int(m.group(4))
    return (shown_path(inner), line) if inner and line else ()


def _instruction(statement, kernel_name):
    body = " ".join(statement.split())
    if not body:
        return None
    guard = ""
    if m := _GUARD_RE.match(body):
        guard, body = m.groups()
    opcode, _, operands = body.partition(" ")
    # The kernel's own mangled name prefixes every parameter; a shared array carries its
    # function's: both are noise in a listing.
    operands = operands.replace(f"{kernel_name}_param_", "param_")
    operands = _LOCAL_STATIC_RE.sub(_short_static, operands)
    return Instruction(guard, opcode, operands.strip())


# ---------------------------------------------------------------- counting


def count(kernel):
    """Instruction mix of one kernel, as a JSON-ready dict (the keys of sass.count less the
    SASS-only ones: no padding and no uniform datapath in PTX)."""
    body = kernel.body
    classes = Counter(classify(insn.opcode) for insn in body)
    return {
        "name": kernel.name,
        "demangled": kernel.title,
        "arch": kernel.arch,
        "total": len(body),
        "predicated": sum(1 for insn in body if insn.guard),
        "classes": {cls: classes[cls] for cls in [*CLASSES, OTHER] if classes[cls]},
        "opcodes": dict(Counter(insn.opcode for insn in body).most_common()),
    }


def listing(kernel, sources=None, guard_width=7, width=120):
    """The kernel's instructions, each source line it comes from above them (-lineinfo)."""
    sources = {} if sources is None else sources
    lines, shown = [], ()
    for insn in kernel.body:
        lines += [f"{label}:" for label in insn.labels]
        if insn.where and insn.where != shown:
            shown = insn.where
            line = (
                f"        // {Path(shown[0]).name}:{shown[1]}  {_source_line(sources, *shown)}"
            ).rstrip()
            lines.append(line if len(line) <= width else line[: width - 1] + "~")
        lines.append(f"{insn.guard:>{guard_width}} {insn.text}")
    return lines


def _source_line(sources, path, number):
    if path not in sources:
        try:
            sources[path] = (ROOT / path).read_text(errors="replace").splitlines()
        except OSError:
            sources[path] = []
    text = sources[path]
    return text[number - 1].strip() if 0 < number <= len(text) else ""


# ---------------------------------------------------------------- making it


@dataclass
class Made:
    texts: list  # PTX text per object of the stage
    arch: str  # "compute_90"
    todo_in: str  # where the COURSE_TODO stub still is ("" once written)
    files: list  # the PTX files written, for the curious


def _ninja(build):
    """The ninja the build was configured with (CMakeCache), else the one on PATH."""
    cache = Path(build) / "CMakeCache.txt"
    try:
        for line in cache.read_text(errors="replace").splitlines():
            if line.startswith("CMAKE_MAKE_PROGRAM:"):
                program = line.split("=", 1)[1].strip()
                if Path(program).name.startswith("ninja") and os.access(program, os.X_OK):
                    return program
    except OSError:
        pass
    return shutil.which("ninja")


def _arch_flags(argv):
    """argv with its architecture flags replaced by one -arch=compute_NN (a PTX file holds one
    virtual architecture); NN as the build targets it, preferring the course's reference."""
    found, keep, skip = [], [], False
    flags = ("--generate-code", "-gencode", "-arch", "--gpu-architecture", "-code", "--gpu-code")
    for i, word in enumerate(argv):
        if skip:
            skip = False
            found += re.findall(r"compute_(\d+[a-z]?)", word)
            continue
        name = word.split("=", 1)[0]
        if name in flags:
            found += re.findall(r"compute_(\d+[a-z]?)", word)
            skip = "=" not in word and i + 1 < len(argv)
            continue
        keep.append(word)
    if not found:
        return argv, ""  # -arch=native or all: left to nvcc
    number = lambda v: (int(re.match(r"\d+", v).group()), v)  # noqa: E731
    arch = PREFERRED_ARCH if PREFERRED_ARCH in found else max(found, key=number)
    return keep + [f"-arch=compute_{arch}"], f"compute_{arch}"


def ptx_command(command, out):
    """An object's compile command (as ninja prints it) turned into one writing PTX to out:
    -c becomes -ptx, -o goes to out, the dependency-file flags go."""
    argv = shlex.split(command)
    start = next((i for i, w in enumerate(argv) if Path(w).name.startswith("nvcc")), None)
    if start is None:
        raise Failed(f"sass: PTX needs the stage compiled by nvcc; its command is: {command[:200]}")
    argv, result, skip = argv[start:], [], False
    for i, word in enumerate(argv):
        if skip:
            skip = False
        elif word in ("-MT", "-MF", "-MQ", "-o"):
            skip = True
        elif word in ("-MD", "-MMD"):
            continue
        elif word == "-c":
            result.append("-ptx")
        else:
            result.append(word)
    result, arch = _arch_flags(result)
    return result + ["-o", str(out)], arch


def _define(argv, name):
    for word in argv:
        if word.startswith(f"-D{name}="):
            return word.split("=", 1)[1].strip('"')
    return ""


def make(stage, build, label):
    """PTX of a stage (a stages.json entry) from its source as it is now, compiled with its
    objects' own flags. Raises Failed with one line when it cannot."""
    build = Path(build).resolve()
    ninja = _ninja(build)
    if not (build / "build.ninja").is_file() or ninja is None:
        raise Failed(
            f"sass: PTX is made from the build's compile commands, which needs a Ninja "
            f"build; {build} is not one (configure it with cmake -G Ninja)",
            2,
        )
    # A stage file edited since the last configure (its COURSE_TODO stub written, or put back)
    # changes the stage's flags: cmake re-runs first, as a build would.
    run = subprocess.run([ninja, "-C", str(build), "build.ninja"], capture_output=True, text=True)
    if run.returncode != 0:
        last = (run.stdout + run.stderr).strip().splitlines()[-1:] or ["?"]
        raise Failed(f"sass: re-configuring {build} failed: {last[0]}")
    out_dir = build / "ptx"
    out_dir.mkdir(exist_ok=True)
    texts, files, arch, todo_in = [], [], "", ""
    objects = stage.get("objects") or [stage["object"]]
    for k, obj in enumerate(objects):
        target = os.path.relpath(obj, build)
        run = subprocess.run(
            [ninja, "-C", str(build), "-t", "commands", "-s", target],
            capture_output=True,
            text=True,
        )
        command = run.stdout.strip().splitlines()[-1:] if run.returncode == 0 else []
        if not command:
            raise Failed(
                f"sass: the build has no compile command for {target} "
                f"(re-configure: cmake -B {build})"
            )
        name = f"{stage['variant']}.{stage['id'].replace('/', '.')}" + (f".{k}" if k else "")
        out = out_dir / f"{name}.ptx"
        argv, arch = ptx_command(command[0], out)
        todo_in = todo_in or (
            _define(argv, "COURSE_STAGE_TODO_IN")
            if _define(argv, "COURSE_STAGE_TODO") == "1"
            else ""
        )
        run = subprocess.run(argv, cwd=build, capture_output=True, text=True)
        if run.returncode != 0:
            log = out.with_suffix(".log")
            log.write_text(run.stdout + run.stderr)
            raise Failed(
                f"sass: {label} does not compile: {first_error(run.stdout + run.stderr)}"
                f" (the compiler's whole output: {log})"
            )
        texts.append(out.read_text())
        files.append(out)
    return Made(texts, arch, todo_in, files)


def first_error(output):
    """The compiler's first error line, paths shown relative to the course, and how many."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if re.search(r"\berror\s*:", line)] or [
        line for line in lines if re.search(r"\berror\b", line, re.I)
    ]
    first = errors[0] if errors else (lines[0] if lines else "no output")
    first = first.replace(f"{ROOT}/", "")
    m = re.search(r"(\d+) errors? detected", output)
    return first + (f" ({m.group(1)} errors)" if m and m.group(1) != "1" else "")
