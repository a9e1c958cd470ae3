"""Source lines and control codes for SASS listings.

cuobjdump -sass prints what each instruction is, not where it came from. Every object is built with
-lineinfo, and nvdisasm -g -gi reads that table back: before an instruction whose source position
changes it prints the position, innermost first, one line per inlining level:

    //## File "/usr/local/cuda/.../sm_30_intrinsics.hpp", line 409 inlined at "/.../09_shuffle.cu", line 22
    //## File "/.../09_shuffle.cu", line 22 inlined at "/.../09_shuffle.cu", line 37
    //## File "/.../09_shuffle.cu", line 37
            /*0180*/                   SHFL.BFLY PT, R7, R0, 0x10, 0x1f ;

annotate() merges the position a reader wants into cuobjdump's listing of the same object (matched
by architecture, function and address): the innermost level in the course's own files, with the
line it was inlined at, paths relative to the repository. One line where that position changes
(the toolkit's intrinsics inside it are left out: __shfl_xor_sync's body is not the lesson), and
each instruction's control bits decoded from cuobjdump's second encoding word:

    //## solutions/12-reduction/09_shuffle.cu:22 < solutions/12-reduction/09_shuffle.cu:37
            /*0180*/                   SHFL.BFLY PT, R7, R0, 0x10, 0x1f ; /* B------:R-:W0:Y:S02 */

The control field (bits 105-125 of a Volta-to-Hopper instruction; Jia et al., "Dissecting the
NVIDIA Volta GPU Architecture via Microbenchmarking", 2018, section 2.1; NVIDIA documents none of
it): the scoreboards the instruction waits on (B, six slots), the scoreboard it sets when its
operands are read (R) and when its result is written (W), the yield bit (Y when set), and the stall
count (S, cycles before the warp may issue again). It is decoded for sm_70 to sm_90, whose layout
those papers measured; other architectures keep their listing without it.

Both additions are comments to the listing's instruction syntax, so rules and counts read captures
made with them as before; sass.parse gives each instruction its position (Instruction.where) and
control field (Instruction.control) for the tools that show source beside SASS.
"""

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LINE_RE = re.compile(
    r'^\s*//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?\s*$'
)
# The capture's form of a position: path:line, then " < path:line" where it was inlined.
POS_RE = re.compile(r"^\s*//## (\S+):(\d+)(?: < (\S+):(\d+))?\s*$")
_SECTION_RE = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
_INSN_RE = re.compile(r"^(\s*/\*([0-9a-fA-F]{4,})\*/\s*)(.*)$")
_WORD_RE = re.compile(r"^\s*/\*\s*0x([0-9a-fA-F]{16})\s*\*/\s*$")
ARCH_RE = re.compile(r"^\s*code for (sm_(\d+)\w*)")
FUNCTION_RE = re.compile(r"^\s*Function\s*:\s*(\S+)")
_TOOLKIT_RE = re.compile(r"^.*?/(?:targets/[^/]+/)?include/")
CONTROL_RE = re.compile(r"/\* (B[0-5-]{6}:R[0-5-]:W[0-5-]:[Y-]:S\d\d) \*/")

# Architectures whose control field is decoded (see the module's docstring).
DECODED = range(70, 100)


@dataclass(frozen=True)
class Position:
    """One level of an instruction's source position: file (repository-relative, or <cuda>/...)
    and line; `at` is the (file, line) it was inlined at, None for the outermost level."""

    file: str
    line: int
    at: tuple = None


def decode_control(high_word):
    """The control field of a Volta-and-later instruction, from its second 64-bit encoding word
    (bits 105-125 of the instruction are bits 41-61 of that word), as B------:R-:W-:Y:S00."""
    bits = high_word >> 41
    stall, yield_bit = bits & 0xF, (bits >> 4) & 1
    write, read, wait = (bits >> 5) & 7, (bits >> 8) & 7, (bits >> 11) & 0x3F
    slots = "".join(str(i) if wait >> i & 1 else "-" for i in range(6))
    sb = lambda n: "-" if n == 7 else str(n)  # noqa: E731  (7: no scoreboard)
    return f"B{slots}:R{sb(read)}:W{sb(write)}:{'Y' if yield_bit else '-'}:S{stall:02d}"


def relative(path, root=ROOT):
    """A source path as a listing shows it: relative to the repository, <cuda>/include/... for the
    toolkit's headers, else as given."""
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve()))
    except (ValueError, OSError):
        pass
    if "/cuda" in path and (m := _TOOLKIT_RE.match(path)):
        return "<cuda>/include/" + path[m.end() :]
    return path


def chain_of(lines, root=ROOT):
    """The Position chain (innermost first) of the //## lines printed before one instruction."""
    chain = []
    for line in lines:
        m = LINE_RE.match(line)
        at = (relative(m.group(3), root), int(m.group(4))) if m.group(3) else None
        chain.append(Position(relative(m.group(1), root), int(m.group(2)), at))
    return chain


def line_tables(nvdisasm_text, root=ROOT):
    """{function: {address: [Position, ...]}} from `nvdisasm -g -gi` output: the chain printed
    before each instruction whose position changes (innermost first)."""
    tables, function, pending = {}, None, []
    for line in nvdisasm_text.splitlines():
        if m := _SECTION_RE.match(line):
            function, pending = m.group(1), []
            tables.setdefault(function, {})
        elif function is None:
            continue
        elif LINE_RE.match(line):
            pending.append(line)
        elif m := _INSN_RE.match(line):
            if pending:
                tables[function][int(m.group(2), 16)] = chain_of(pending, root)
                pending = []
    return tables


def position_line(level):
    """The capture's line for a position: //## path:line [< path:line]."""
    text = f"\t//## {level.file}:{level.line}"
    return text + (f" < {level.at[0]}:{level.at[1]}" if level.at else "")


def merge(cuobjdump_text, tables_by_arch):
    """cuobjdump -sass text (encodings still in it) with a //## line before each instruction whose
    course-level position (course_level) differs from the one before it, from tables_by_arch
    ({arch: {function: {address: chain}}}), and, where decoded, each instruction's control field
    after its semicolon."""
    out, arch, number, table, shown = [], "", 0, {}, None
    lines = cuobjdump_text.splitlines()
    for i, line in enumerate(lines):
        if m := ARCH_RE.match(line):
            arch, number, table = m.group(1), int(m.group(2)), {}
        elif m := FUNCTION_RE.match(line):
            table, shown = tables_by_arch.get(arch, {}).get(m.group(1), {}), None
        elif m := _INSN_RE.match(line):
            address = int(m.group(2), 16)
            if address in table:
                level = course_level(table[address])
                if level and level != shown:
                    out.append(position_line(level))
                    shown = level
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            word = _WORD_RE.match(nxt)
            if word and number in DECODED and ";" in line:
                head, _, tail = line.partition(";")
                line = f"{head}; /* {decode_control(int(word.group(1), 16))} */{tail}"
        out.append(line)
    return "\n".join(out) + ("\n" if cuobjdump_text.endswith("\n") else "")


def tables_of_object(obj, cuobjdump, nvdisasm, root=ROOT, arch=None):
    """{arch: {function: {address: chain}}} for every cubin in an object or executable (those of
    one architecture with arch); {} when nvdisasm is missing or the object holds no cubin."""
    if not nvdisasm:
        return {}
    tables = {}
    with tempfile.TemporaryDirectory(prefix="course-sass-") as scratch:
        run = subprocess.run(
            [cuobjdump, "-xelf", "all", str(Path(obj).resolve())],
            cwd=scratch,
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            return {}
        for cubin in sorted(Path(scratch).glob("*.cubin")):
            m = re.search(r"\.(sm_\d+\w*)\.cubin$", cubin.name)
            if not m or (arch and m.group(1) != arch):
                continue
            # -ndf: no branch-stack dataflow analysis (labels only, which the listing takes from
            # cuobjdump), which is most of nvdisasm's time on the large kernels.
            dis = subprocess.run(
                [nvdisasm, "-g", "-gi", "-ndf", "-c", str(cubin)], capture_output=True, text=True
            )
            if dis.returncode == 0:
                for function, table in line_tables(dis.stdout, root).items():
                    tables.setdefault(m.group(1), {}).setdefault(function, {}).update(table)
    return tables


def annotate(cuobjdump_text, obj, cuobjdump, nvdisasm, root=ROOT, arch=None):
    """cuobjdump's listing of obj with source lines (where nvdisasm is found; those of one
    architecture with arch) and control fields."""
    return merge(cuobjdump_text, tables_of_object(obj, cuobjdump, nvdisasm, root, arch))


def position(match):
    """The Position of a POS_RE match (a capture's //## line)."""
    at = (match.group(3), int(match.group(4))) if match.group(3) else None
    return Position(match.group(1), int(match.group(2)), at)


def course_level(chain):
    """The level of a position chain a reader wants: the innermost one in the course's own files
    (a lesson header's line inlined into the kernel, not the toolkit's intrinsic it calls); the
    innermost level when all are the toolkit's. None for an empty chain."""
    for level in chain:
        if not level.file.startswith("<cuda>/"):
            return level
    return chain[0] if chain else None


def has_lines(text):
    """Whether a listing carries source lines."""
    return re.search(r"^\s*//## \S+:\d+", text, re.M) is not None
