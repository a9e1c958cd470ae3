#!/usr/bin/env python3
"""What the course holds, read from the tree (never a fixed list), and the checks of the make
targets' arguments.

    course.py validate GOAL [VAR=VALUE ...]    one line naming the valid choices, exit 2, when
                                               a target's arguments are wrong; nothing when fine
    course.py list {chapters,stages,gpu-stages,benches,wrong-variants}
    course.py target STAGE                     the object library of a stage (for make sass)
    course.py cmake                            the model as CMake code (stages, test files, workloads)
    course.py quickstart                       the README's quick-start commands (CI runs them)

Chapters are chapters/NN-topic/ with a solutions/NN-topic/; stages are
solutions/<chapter>/[0-9][0-9]_*.cu; a chapter has a benchmark when its CMakeLists.txt calls
course_add_bench; wrong variants are its course_add_wrong_variant calls. The Makefile runs
`validate` before a target does anything (configure included), and shows its line with $(error).
"""

import importlib.util
import json
import re
import shlex
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

# The repository root: every tool takes it from here.
ROOT = Path(__file__).resolve().parent.parent
REFERENCE_ARCH = "sm_90"
# The course's reference GPU: its committed results are the ones shown without a GPU. Its evidence
# (results, charts, SASS, profiles) lives in reference/<REFERENCE_DIR>/<chapter>/ (reference/README.md).
REFERENCE_GPU = "H200"
REFERENCE_DIR = "h200"
STAGE_FILE = re.compile(r"^\d\d_\w+\.cu$")
STAGE_LABEL = re.compile(r"^\d\d_\w+")
STAGE_NAME = re.compile(r"^\d\d_\w+$")
# The variants a stage is built as, and the prefixes a stage reference may carry.
VARIANTS = ("solution", "exercise")
SANITIZERS = ("memcheck", "racecheck", "synccheck")


class UsageError(Exception):
    """A wrong argument or input, said in one line for the user; status is the exit status (2 for
    a wrong argument, 1 for 'nothing found', 3 for a missing tool or machine)."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


def gpu_reason():
    """None when a GPU is usable, else why not (as make check says it)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "no NVIDIA driver (nvidia-smi not found)"
    try:
        run = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "nvidia-smi did not answer"
    if run.returncode != 0 or "GPU" not in run.stdout:
        return "nvidia-smi finds no usable GPU"
    return None


def gpu_name():
    """The first GPU's name as nvidia-smi gives it ('NVIDIA H200'), or None."""
    try:
        out = (
            subprocess.run(
                ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            .stdout.strip()
            .splitlines()
        )
    except (OSError, subprocess.TimeoutExpired):
        out = []
    return out[0].strip() if out else None


# ---------------------------------------------------------------- the tree


def chapters(root=ROOT):
    """NN-topic names with both chapters/ and solutions/ folders, in order."""
    return sorted(
        p.name
        for p in (root / "chapters").glob("[0-9][0-9]-*")
        if p.is_dir() and (root / "solutions" / p.name).is_dir()
    )


def stages(chapter, root=ROOT):
    """Stage names (01_grid_stride) of one chapter, in order."""
    return sorted(
        p.stem
        for p in (root / "solutions" / chapter).glob("[0-9][0-9]_*.cu")
        if STAGE_FILE.match(p.name)
    )


def stage_ids(root=ROOT):
    """Every stage as <chapter>/<stage>, in course order."""
    return [f"{c}/{s}" for c in chapters(root) for s in stages(c, root)]


# The files mirrored between solutions/ and chapters/ (exercises.py keeps them in step).
MIRRORED = (".cu", ".cuh", ".h")


def is_stage_file(path):
    return bool(STAGE_FILE.match(Path(path).name))


def lesson_headers(chapter, root=ROOT):
    """File names of a chapter's lesson headers: the mirrored files of solutions/<chapter>/ that
    are not stage files (a .cuh or .h holding a kernel a stage teaches), sorted."""
    return sorted(
        p.name
        for p in (Path(root) / "solutions" / chapter).glob("*")
        if p.is_file() and p.suffix in MIRRORED and not is_stage_file(p)
    )


def _cmake_calls(chapter, command, root=ROOT, tree="chapters"):
    """The arguments of each call of command in <tree>/<chapter>/CMakeLists.txt (tree: chapters,
    or labs for the chapter's labs), as text."""
    path = Path(root) / tree / chapter / "CMakeLists.txt"
    try:
        text = path.read_text()
    except OSError:
        return []
    text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    return re.findall(rf"^\s*{command}\s*\(([^)]*)\)", text, flags=re.M)


def bench_chapters(root=ROOT):
    """Chapters whose CMakeLists.txt declares a benchmark (course_add_bench)."""
    return [c for c in chapters(root) if _cmake_calls(c, "course_add_bench", root)]


def program_chapter(program, root=ROOT):
    """The chapter whose CMakeLists.txt builds a program of its own (add_executable(nbody ...):
    what make nbody runs), or None."""
    return next(
        (
            c
            for c in chapters(root)
            if any(
                args.split()[:1] == [program] for args in _cmake_calls(c, "add_executable", root)
            )
        ),
        None,
    )


class WrongVariant(NamedTuple):
    """One course_add_wrong_variant call (cmake/CourseStages.cmake): a known mistake, planted."""

    chapter: str
    stage: str
    name: str
    why: str
    tool: str  # "" (the tests reject it), sass, speed, memcheck, racecheck or synccheck
    file: str  # the file it edits: the stage's own, or a lesson header
    test: str  # the chapter's test file that runs it

    @property
    def id(self):
        return f"{self.chapter}/{self.stage}.{self.name}"


# CMake's argument syntax, as far as the chapters' calls use it: a bracket argument ([=[...]=]),
# a quoted one ("..." with \-escapes), the call's closing ")", a # comment, an unquoted word.
_CMAKE_TOKEN = re.compile(
    r'\[(=*)\[(.*?)\]\1\]|"((?:[^"\\]|\\.)*)"|(\))|(#[^\n]*)|([^\s()"#]+)', re.S
)
_CMAKE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _cmake_arguments(text, start):
    """The arguments of the CMake call whose "(" ends just before text[start:], as strings (a
    quoted argument unescaped, its ";" and ")" kept)."""
    args, pos = [], start
    while True:
        m = _CMAKE_TOKEN.search(text, pos)
        if not m:
            return args
        pos = m.end()
        if m.group(2) is not None:
            args.append(m.group(2).removeprefix("\n"))
        elif m.group(3) is not None:
            args.append(
                re.sub(r"\\(.)", lambda e: _CMAKE_ESCAPES.get(e.group(1), e.group(1)), m.group(3))
            )
        elif m.group(4):
            return args
        elif m.group(6):
            args.append(m.group(6))


def wrong_variants(root=ROOT):
    """Every course_add_wrong_variant call of the chapters' CMakeLists.txt, in order: the one place
    the known mistakes are declared, read here for the tools (make check names a matching one)."""
    keys = (
        "CHAPTER",
        "STAGE",
        "TEST",
        "NAME",
        "FIND",
        "REPLACE",
        "WHY",
        "TOOL",
        "FILE",
        "SOURCES",
        "LIBS",
    )
    found = []
    for chapter in chapters(root):
        path = Path(root) / "chapters" / chapter / "CMakeLists.txt"
        try:
            text = path.read_text()
        except OSError:
            continue
        for m in re.finditer(r"^[ \t]*course_add_wrong_variant[ \t]*\(", text, re.M):
            args = _cmake_arguments(text, m.end())
            values, current = {}, None
            for a in args:
                if a in keys:
                    current = a
                    values.setdefault(a, "")
                elif current:
                    values[current] = a if not values[current] else values[current] + ";" + a
            stage = values.get("STAGE", "?")
            found.append(
                WrongVariant(
                    values.get("CHAPTER", chapter),
                    stage,
                    values.get("NAME", "?"),
                    values.get("WHY", ""),
                    values.get("TOOL", ""),
                    values.get("FILE", "") or f"{stage}.cu",
                    values.get("TEST", ""),
                )
            )
    return found


# ---------------------------------------------------------------- the chapter's manifest
# chapters/<chapter>/lessons.toml: one table per stage (what it teaches, how it is judged, and what
# the build needs to know of it: `test`, the chapter's test file that tests it, and `kind`, "gpu"
# or "cpu", a stage built and tested on the host), plus two tables that are not stages:
#   [chapter]    defaults for every stage (test = "test_x.cpp", kind = "gpu"); profile_rows, the
#                metrics (profile.py row keys) that make profile shows for the chapter after the
#                common ones; roofline, the work its roofline counts (plots/roofline.py's WORKS);
#                source_profiles, the stages whose first kernel gets a per-instruction Nsight
#                Compute capture (stall samples beside the SASS: profile.py capture-source);
#                library, the labels of the bench's library rows (CUB, cuBLAS, NPP), which
#                make profile takes as the chapter's baseline (none: no library to beat);
#                multi_gpu, a regex on the bench's row labels that picks the rows using every
#                visible GPU, which make reference on a machine of two reference GPUs runs with
#                both visible, into reference/<gpu>x2/<chapter>/
#   [workload]   the chapter's workload, in one home: the judge's parameters under every stage's
#                speed table, and the sizes CMake hands the judge and the bench as their defaults
# A stage's table: lesson, speed, sass, needs, local_memory (lesson.py says what they mean), test
# and kind (the build's), and two the tools read:
#   capture = { kernels = "<regex>", says = "<words>" }   the kernels its committed SASS capture
#       keeps (a regex on the demangled name) where every instantiation would make megabytes, and
#       the words its first line says that with (sass.py capture-all)
#   perf = [ { metric = "dram_pct", min = 80, why = "measured ..." }, ... ]   make check-perf's
#       counter bounds (profile.py check-perf): metric is a profile.py row key, min and/or max
CHAPTER_TABLES = ("chapter", "workload")
KINDS = ("gpu", "cpu")
# Every key a lessons.toml may hold (a stage's speed table and [workload] are the judge's and the
# bench's parameters, checked by those programs): a misspelt key is an error, not a silent default.
CHAPTER_KEYS = (
    "test",
    "kind",
    "profile_rows",
    "roofline",
    "source_profiles",
    "library",
    "multi_gpu",
)
STAGE_KEYS = (
    "lesson",
    "speed",
    "sass",
    "needs",
    "local_memory",
    "test",
    "kind",
    "capture",
    "perf",
    "hints",
)
ENTRY_KEYS = {
    "sass": ("rule", "kernels", "arch", "sizes", "why"),
    "perf": ("metric", "min", "max", "why"),
    "capture": ("kernels", "says"),
    "needs": ("cc", "gpus", "why"),
}

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


def lessons_path(chapter, root=ROOT):
    return Path(root) / "chapters" / chapter / "lessons.toml"


def read_manifest(chapter, root=ROOT):
    """A chapter's lessons.toml as a dict ({} when it has none); UsageError when unreadable or when
    a table names no stage of the chapter."""
    path = lessons_path(chapter, root)
    if not path.is_file():
        return {}
    if tomllib is None:
        raise UsageError("lesson: reading lessons.toml needs Python 3.11 or newer (tomllib)")
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"lesson: {shown}: {err}")
    unknown = sorted(set(data) - set(stages(chapter, root)) - set(CHAPTER_TABLES))
    if unknown:
        raise UsageError(f"lesson: {shown} names no stage of {chapter}: {', '.join(unknown)}")
    error = schema_error(data)
    if error:
        raise UsageError(f"lesson: {shown}: {error}")
    return data


def schema_error(data):
    """What is wrong with a lessons.toml's keys and the shapes of capture and perf, in a few
    words naming the table and the key; None when nothing is."""

    def unknown(where, table, known):
        bad = sorted(set(table) - set(known))
        return f"{where} unknown key '{bad[0]}' (known: {', '.join(known)})" if bad else None

    for name, table in data.items():
        if not isinstance(table, dict):
            return f"'{name}' is not a table"
        if name == "workload":
            continue
        keys = CHAPTER_KEYS if name == "chapter" else STAGE_KEYS
        error = unknown(f"[{name}]", table, keys)
        if error:
            return error
        for key, value in table.items():
            if key == "multi_gpu" and not isinstance(value, str):
                return f"[{name}] multi_gpu is a regular expression on the bench's row labels"
            if key == "roofline" and not isinstance(value, str):
                return (
                    f"[{name}] roofline is the name of the work a point counts (plots/roofline.py)"
                )
            if key == "library" and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                return f"[{name}] library is a list of the bench's library row labels"
            if key == "source_profiles" and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                return f"[{name}] source_profiles is a list of the chapter's stage names"
            if key == "profile_rows" and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                return f"[{name}] profile_rows is a list of profile.py row keys"
            if key not in ENTRY_KEYS:
                continue
            entries = value if isinstance(value, list) else [value]
            if key in ("capture", "needs") and not isinstance(value, dict):
                return f"[{name}] {key} is a table ({key} = {{ {', '.join(ENTRY_KEYS[key])} }})"
            for entry in entries:
                if not isinstance(entry, dict):
                    return (
                        f"[{name}] {key} is a list of tables ({{ {', '.join(ENTRY_KEYS[key])} }})"
                    )
                error = unknown(f"[{name}] {key}:", entry, ENTRY_KEYS[key])
                if error:
                    return error
            if key == "capture":
                if not value.get("kernels") or not value.get("says"):
                    return f"[{name}] capture needs kernels (a regex) and says (what it keeps)"
                try:
                    re.compile(value["kernels"])
                except re.error as err:
                    return f"[{name}] capture: kernels '{value['kernels']}' is no regex ({err})"
            if key == "perf":
                for entry in entries:
                    if not entry.get("metric") or not ({"min", "max"} & set(entry)):
                        return f"[{name}] perf: each bound names a metric and a min or a max"
    return None


def stage_declarations(chapter, root=ROOT):
    """{stage: its lessons.toml table} (the chapter's own tables left out)."""
    return {k: v for k, v in read_manifest(chapter, root).items() if k not in CHAPTER_TABLES}


def stage_hints(stage_id, root=ROOT):
    """A stage's hint ladder (its lessons.toml `hints`: strings, first the book and the concept, then
    the approach, then near-code), [] when it declares none; UsageError when it is not a list of
    strings (harness/hints.py shows it, `make hint`)."""
    chapter, stage = stage_id.split("/", 1)
    ladder = read_manifest(chapter, root).get(stage, {}).get("hints", [])
    if not isinstance(ladder, list) or not all(isinstance(h, str) and h.strip() for h in ladder):
        raise UsageError(
            f"lesson: {lessons_path(chapter, root).relative_to(root)}: [{stage}] hints must be "
            f"a list of non-empty strings"
        )
    return ladder


def workload(chapter, root=ROOT):
    """The chapter's [workload]: the judge's parameters ({} when it declares none)."""
    table = read_manifest(chapter, root).get("workload", {})
    return {k: v for k, v in table.items() if not isinstance(v, dict)}


def bench_defaults(chapter, root=ROOT):
    """The chapter's [workload.bench]: the benchmark's option defaults, by option name."""
    return dict(read_manifest(chapter, root).get("workload", {}).get("bench", {}))


def capture_subset(stage_id, root=ROOT):
    """(kernels regex, words) of the kernels a stage's SASS capture keeps (its lessons.toml
    `capture`), or None: the capture keeps every kernel."""
    chapter, stage = stage_id.split("/", 1)
    capture = read_manifest(chapter, root).get(stage, {}).get("capture")
    return (capture["kernels"], capture["says"]) if capture else None


def perf_bounds(root=ROOT):
    """make check-perf's counter bounds, every stage's lessons.toml `perf` in course order, each
    as {stage: <chapter>/<stage>, metric, min and/or max, why}."""
    return [
        {"stage": f"{chapter}/{stage}", **bound}
        for chapter in chapters(root)
        for stage, decl in sorted(stage_declarations(chapter, root).items())
        for bound in decl.get("perf", [])
    ]


def chapter_settings(chapter, root=ROOT):
    """The chapter's [chapter] table: the stages' defaults (test, kind) and the tools' settings
    (profile_rows, roofline)."""
    return dict(read_manifest(chapter, root).get("chapter", {}))


def profile_rows(chapter, root=ROOT):
    """The metrics make profile shows for a chapter after the common ones ([chapter] profile_rows),
    or None when the chapter names none."""
    return chapter_settings(chapter, root).get("profile_rows")


def library_rows(chapter, root=ROOT):
    """The labels of a chapter's library rows in its bench ([chapter] library: CUB, cuBLAS, NPP),
    which make profile takes as <chapter>/baseline; [] for a chapter with no library to beat."""
    return list(chapter_settings(chapter, root).get("library", []))


def multi_gpu_folder(gpu, count):
    """The folder under reference/ of a run on several GPUs of one model: h200 on 2 -> h200x2."""
    return f"{gpu}x{count}"


def is_multi_gpu_folder(name):
    return re.fullmatch(r".+x\d+", name) is not None


def multi_gpu_rows(chapter, root=ROOT):
    """The regex of a chapter's bench rows that use every visible GPU ([chapter] multi_gpu), or
    None: make reference runs them on two GPUs at once where it has two."""
    return chapter_settings(chapter, root).get("multi_gpu")


def source_profiles(chapter, root=ROOT):
    """The stages of a chapter with a per-instruction (source page) Nsight Compute capture."""
    names = chapter_settings(chapter, root).get("source_profiles", [])
    unknown = [n for n in names if n not in stages(chapter, root)]
    if unknown:
        raise UsageError(
            f"{lessons_path(chapter, root)}: source_profiles names no stage: {', '.join(unknown)}"
        )
    return list(names)


def speed_params(speed, work):
    """A stage's speed table over the chapter's workload: the workload's keys in its order, then
    the stage's others; a stage that sets every workload key itself keeps its own order."""
    if all(k in speed for k in work):
        return dict(speed)
    return {**{k: speed.get(k, v) for k, v in work.items()}, **speed}


def definitions(prefix, table):
    """Compile definitions of a table's numbers: {"cpu-N": 16} -> ["COURSE_BENCH_CPU_N=16"]."""
    return [
        f"{prefix}_{re.sub(r'[^A-Za-z0-9]', '_', k).upper()}={v}"
        for k, v in table.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    ]


def build_facts(chapter, root=ROOT):
    """{stage: {"test": file, "kind": gpu|cpu}} of every stage in the tree, from lessons.toml (the
    stage's table over the chapter's defaults); UsageError naming the first stage that lacks what
    the build needs (its lessons entry, a test file, its exercise file)."""
    data = read_manifest(chapter, root)
    defaults = data.get("chapter", {})
    shown = f"chapters/{chapter}/lessons.toml"
    facts = {}
    for stage in stages(chapter, root):
        if stage not in data:
            raise UsageError(
                f"course: stage {chapter}/{stage} (solutions/{chapter}/{stage}.cu) has no "
                f"entry in {shown}: add a [{stage}] table with its lesson"
            )
        if not (Path(root) / "chapters" / chapter / f"{stage}.cu").is_file():
            raise UsageError(
                f"course: stage {chapter}/{stage} has no exercise file chapters/{chapter}/"
                f"{stage}.cu: make exercises writes it from the solution"
            )
        decl = {**defaults, **data[stage]}
        kind = decl.get("kind", "gpu")
        if kind not in KINDS:
            raise UsageError(
                f"course: {shown}: [{stage}] kind = '{kind}'; one of {', '.join(KINDS)}"
            )
        if kind == "gpu" and not decl.get("test"):
            raise UsageError(
                f'course: {shown}: [{stage}] names no test file: say test = "test_x.cpp" '
                f"in it or in [chapter]"
            )
        facts[stage] = {"test": decl.get("test", ""), "kind": kind}
    return facts


def gpu_stages(root=ROOT):
    """Stage ids of kind gpu (lessons.toml): tested on a GPU; the others (chapter 14's CPU stage)
    are built and tested on their own, on the host."""
    return [
        f"{c}/{s}"
        for c in chapters(root)
        for s, f in build_facts(c, root).items()
        if f["kind"] == "gpu"
    ]


def cmake_code(root=ROOT):
    """What CMake reads of the course model (cmake/CourseStages.cmake runs `course.py cmake`): per
    chapter the stages and each one's test file and kind, and the [workload] keys."""
    lines = [f"set(COURSE_CHAPTERS {';'.join(chapters(root))})"]
    for chapter in chapters(root):
        facts = build_facts(chapter, root)
        lines.append(f"set(COURSE_STAGES_{chapter} {';'.join(facts)})")
        for stage, f in facts.items():
            lines.append(f'set(COURSE_STAGE_TEST_{chapter}_{stage} "{f["test"]}")')
            lines.append(f"set(COURSE_STAGE_KIND_{chapter}_{stage} {f['kind']})")
        work = definitions("COURSE_WORKLOAD", workload(chapter, root))
        bench = definitions("COURSE_BENCH", bench_defaults(chapter, root))
        lines.append(f'set(COURSE_WORKLOAD_DEFS_{chapter} "{";".join(work)}")')
        lines.append(f'set(COURSE_BENCH_DEFS_{chapter} "{";".join(bench)}")')
    return "\n".join(lines)


def evidence_dir(chapter, root=ROOT, gpu=REFERENCE_DIR):
    """reference/<gpu>/<chapter>/: what a capture run on that GPU wrote for the chapter."""
    return root / "reference" / gpu / chapter


def capture_dir(chapter, root=ROOT, arch=REFERENCE_ARCH):
    return evidence_dir(chapter, root) / "sass" / arch


def capture_path(stage_id, root=ROOT, arch=REFERENCE_ARCH):
    chapter, stage = stage_id.split("/", 1)
    return capture_dir(chapter, root, arch) / f"{stage}.sass"


# A capture whose stage object holds no device code says so on its first line (sass.py capture).
NO_KERNELS = "no kernels"


def capture_header(path):
    """The first line of a capture when it is a '#' comment (what it holds), else ''."""
    try:
        with open(path) as f:
            first = f.readline()
    except OSError:
        return ""
    return first[1:].strip() if first.startswith("#") else ""


# ---------------------------------------------------------------- stage references


class StageRef(NamedTuple):
    """A stage as a command names it: [solution/|exercise/|wrong/]<chapter>/<stage>[.<wrong name>]."""

    variant: str
    chapter: str
    stage: str
    wrong: str = ""

    @property
    def id(self):
        return f"{self.chapter}/{self.stage}"

    @property
    def target(self):
        """The stage's object library (solution.<chapter>.<stage>, wrong.<chapter>.<stage>.<name>)."""
        return ".".join(
            [self.variant, self.chapter, self.stage] + ([self.wrong] if self.wrong else [])
        )


def stage_text(arg, prefixes=VARIANTS, root=ROOT):
    """(variant or None, the rest) of a stage reference as written: its prefix (solution/,
    exercise/, or another of prefixes), or the folder of a file path (chapters/<chapter>/<file>
    is the exercise's, solutions/... the solution's; absolute, or with ./ before it; a stage
    file's .cu dropped). None: no variant said."""
    text = (arg or "").strip()
    path = Path(text)
    if path.is_absolute():
        try:
            text = path.resolve().relative_to(Path(root).resolve()).as_posix()
        except (OSError, ValueError):
            pass
    while text.startswith("./"):
        text = text[2:]
    head, _, rest = text.partition("/")
    folders = {"chapters": "exercise", "solutions": "solution"}
    if head in folders and "/" in rest:
        return folders[head], rest[:-3] if STAGE_FILE.match(rest.rsplit("/", 1)[-1]) else rest
    if head in prefixes and rest:
        return head, rest
    return None, text


def split_variant(arg, prefixes=VARIANTS, root=ROOT):
    """'exercise/11-streaming/01_grid' -> ('exercise', '11-streaming/01_grid'); a stage file's path
    names its variant too (stage_text). Without one: the solution."""
    variant, rest = stage_text(arg, prefixes, root)
    return variant or "solution", rest


def match_stage(arg, root=ROOT):
    """The stage id an argument names: exact, or the unambiguous start of an id or of a stage
    name (11-streaming/03, 03_vector). Returns (id or None, candidates)."""
    ids = stage_ids(root)
    if arg in ids:
        return arg, [arg]
    found = [i for i in ids if i.startswith(arg) or i.split("/", 1)[1].startswith(arg)]
    return (found[0] if len(found) == 1 else None), found


def parse_stage(arg, root=ROOT, wrong=False):
    """The one parser of a stage reference: (StageRef or None, candidates). wrong: also take
    wrong/<chapter>/<stage>[.<name>] (a planted wrong variant)."""
    variant, rest = split_variant(arg, VARIANTS + (("wrong",) if wrong else ()), root)
    name = ""
    if variant == "wrong" and "." in rest.rsplit("/", 1)[-1]:
        rest, name = rest.rsplit(".", 1)
    found, candidates = match_stage(rest, root)
    if not found:
        return None, candidates
    chapter, stage = found.split("/", 1)
    return StageRef(variant, chapter, stage, name), candidates


def stage_choices(root=ROOT):
    """The valid stages in one short line: 08-warp/{01_shuffle_forms,02_warp_reduce} ..."""
    return "; ".join(f"{c}/{{{','.join(stages(c, root))}}}" for c in chapters(root))


def stage_error(what, arg, root=ROOT, example="make sass STAGE=11-streaming/03_vectorized_float4"):
    """None when arg names one stage (or is a file: a .cu, an object, a capture), else the
    one-line message."""
    if not arg:
        return (
            f"{what}: say which stage, e.g. {example} (or exercise/<chapter>/<stage>); "
            f"stages: {stage_choices(root)}"
        )
    if Path(arg).is_file():
        return None
    found, candidates = parse_stage(arg, root)
    if found:
        return None
    if candidates:
        more = f" and {len(candidates) - 8} more" if len(candidates) > 8 else ""
        return f"{what}: '{arg}' names several stages: {', '.join(candidates[:8])}{more}; say which"
    return (
        f"{what}: no stage '{arg}'; use [exercise/]<chapter>/<stage>, one of: {stage_choices(root)}"
    )


# A bench's library row (CUB, cuBLAS, ...), as make profile names it: <chapter>/baseline (or
# <chapter>/library), beside the chapter's stages.
BASELINE = "baseline"


def profile_module():
    """harness/profile.py, loaded once as the module course_profile: 'profile' is also a
    standard-library module, which another import may have loaded first."""
    name = "course_profile"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parent / "profile.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


def profile_stage(arg, root=ROOT):
    """(variant, chapter, stage) for make profile's STAGE: a stage, or a chapter's library row
    (stage BASELINE); UsageError (status 2) naming the choices."""
    if not arg:
        raise UsageError(
            "profile: say which stage, e.g. make profile STAGE=12-reduction/10_fastest "
            f"(or <chapter>/{BASELINE} for the library row); stages: {stage_choices(root)}"
        )
    variant, rest = split_variant(arg)
    chapter, _, name = rest.partition("/")
    if chapter in chapters(root) and name in (BASELINE, "library"):
        return variant, chapter, BASELINE
    error = stage_error("profile", arg, root, "make profile STAGE=12-reduction/10_fastest")
    if error or Path(arg).is_file():
        raise UsageError(
            error or f"profile: '{arg}' is a file; name a stage, e.g. 12-reduction/10_fastest"
        )
    found, _ = parse_stage(arg, root)
    return found.variant, found.chapter, found.stage


def resolve_stage(
    arg, what, root=ROOT, wrong=False, example="make sass STAGE=11-streaming/03_vectorized_float4"
):
    """The StageRef an argument names, else UsageError with stage_error's line."""
    found, _ = parse_stage(arg, root, wrong)
    if found:
        return found
    raise UsageError(
        stage_error(what, arg, root, example) or f"{what}: '{arg}' is a file; name a stage"
    )


def reset_target(arg, root=ROOT):
    """What make reset resets: '13-scan/04_two_level', 'exercise/13-scan/04_two_level' or
    'chapters/13-scan/04_two_level.cu' -> '13-scan/04_two_level'; a lesson header by its file
    name ('13-scan/lesson_block_scan.cuh'). Only exact names (a reset overwrites a student's work);
    UsageError (one line) for anything else."""
    names = sorted(
        [f"{c}/{s}" for c in chapters(root) for s in stages(c, root)]
        + [f"{c}/{h}" for c in chapters(root) for h in lesson_headers(c, root)]
    )
    how = "make reset STAGE=<chapter>/<stage>, e.g. " + (
        names[0] if names else "11-streaming/01_grid_stride"
    )
    stage = (arg or "").strip()
    if not stage:
        raise UsageError(f"reset: say which stage: {how} (make help lists every stage)")
    # The stage grammar's reading of it (stage_text); only an exercise is reset.
    variant, rest = stage_text(stage, ("exercise",), root)
    if variant in (None, "exercise"):
        stage = rest
    if stage.endswith(".cu") and stage[:-3] in names:
        stage = stage[:-3]
    if stage in names:
        return stage
    chapter = stage.split("/")[0]
    in_chapter = [s.split("/", 1)[1] for s in names if s.split("/")[0] == chapter]
    if in_chapter:
        raise UsageError(
            f"reset: no stage '{arg}'; {chapter} has {', '.join(in_chapter)} "
            f"(make reset STAGE={chapter}/<one of them>)"
        )
    found = sorted({s.split("/")[0] for s in names})
    raise UsageError(
        f"reset: no stage '{arg}'; the chapters are {', '.join(found)} ({how}; make help "
        "lists every stage)"
    )


# ---------------------------------------------------------------- test names
# cmake/CourseStages.cmake composes these names; every tool reads them back with parse_test_name.
#   <variant>/<chapter>/<stage>[/sweep|/large|/masks]   a stage's tests (kind tests, sweep, ...)
#   <variant>/<chapter>/<stage>/ranks-<how>-<P>         a stage's tests on P MPI ranks (14-nbody 11)
#   host/<variant>/<chapter>/<stage>                    a CPU stage's tests (kind host)
#   sanitize/<tool>/<variant>/<chapter>/<stage>         a sanitizer run (kind sanitize:<tool>)
#   wrong/<chapter>/<stage>.<name>                      a planted wrong variant (kind wrong)
#   lesson/sass/<variant>/<chapter>/<stage>             a SASS signature check (kind lesson-sass)


class TestRef(NamedTuple):
    variant: str
    chapter: str
    stage: str
    kind: str


def test_name(variant, chapter, stage, kind="tests"):
    """The CTest name of one test of a stage (the inverse of parse_test_name)."""
    if kind == "tests":
        return f"{variant}/{chapter}/{stage}"
    if kind in ("sweep", "large", "masks") or kind.startswith("ranks-"):
        return f"{variant}/{chapter}/{stage}/{kind}"
    if kind == "host":
        return f"host/{variant}/{chapter}/{stage}"
    if kind == "wrong":
        return f"wrong/{chapter}/{stage}"
    if kind == "lesson-sass":
        return f"lesson/sass/{variant}/{chapter}/{stage}"
    if kind.startswith("sanitize:"):
        return f"sanitize/{kind.split(':', 1)[1]}/{variant}/{chapter}/{stage}"
    raise ValueError(f"no test kind '{kind}'")


def stage_test(name):
    """TestRef of one of a stage's own tests (its tests, sweep, host, sanitizer runs, a wrong
    variant); None for a SASS signature check (it counts with the tests that are not a stage's
    own) and for a test of no stage (host/harness, labs)."""
    ref = parse_test_name(name)
    return None if ref is None or ref.kind == "lesson-sass" else ref


def parse_test_name(name):
    """TestRef(variant, chapter, stage, kind) of a stage's test, else None (host/harness, labs)."""
    parts = name.split("/")
    if parts[0] in VARIANTS and len(parts) >= 3 and STAGE_NAME.match(parts[2]):
        own = len(parts) == 4 and (
            parts[3] in ("sweep", "masks", "large") or parts[3].startswith("ranks-")
        )
        kind = parts[3] if own else "tests"
        return TestRef(parts[0], parts[1], parts[2], kind)
    if (
        parts[0] == "host"
        and len(parts) == 4
        and parts[1] in VARIANTS
        and STAGE_NAME.match(parts[3])
    ):
        return TestRef(parts[1], parts[2], parts[3], "host")
    if parts[0] == "sanitize" and len(parts) == 5:
        return TestRef(parts[2], parts[3], parts[4], "sanitize:" + parts[1])
    if parts[0] == "wrong" and len(parts) == 3:
        return TestRef("wrong", parts[1], parts[2], "wrong")
    if parts[:2] == ["lesson", "sass"] and len(parts) == 5:
        return TestRef(parts[2], parts[3], parts[4], "lesson-sass")
    return None


# ---------------------------------------------------------------- program names
# cmake/CourseStages.cmake names the programs (in bin/ of the build) and targets; the tools ask here.


def judge_program(variant, chapter, stage):
    """The program that times one stage for its speed verdict (harness/judge.h)."""
    return f"judge.{variant}.{chapter}.{stage}"


def source_folders(variant, chapter):
    """The folders (relative to the root) where a file that a sanitizer or compiler log names bare
    (a lesson header, as the compiler saw it) is looked for, in the order the build finds it: the
    variant's own chapter folder first (an exercise's chapters/, a solution's solutions/), then
    the other, then the shared code."""
    mine, other = ("chapters", "solutions") if variant == "exercise" else ("solutions", "chapters")
    return (f"{mine}/{chapter}", f"{other}/{chapter}", "common", "harness")


def program_folders(program, root=ROOT):
    """source_folders for a test program of the build (its bin/ name, as cmake/CourseStages.cmake
    names it): test.<variant>.<chapter>.<stage> for a stage, test.wrong.<chapter>.<stage>.<name>
    for a wrong variant (its edited copy in the build's wrong/ folder first, then the
    solutions'), test-<chapter>-lab-<name> for a lab (labs/<chapter>/, then the chapter's
    folders); () for any other."""
    name = Path(program).name
    m = re.match(
        r"^test\.(solution|exercise|wrong)\.(\d\d-[a-z0-9-]+)\.(\d\d_\w+?)(?:\.(\w+))?$", name
    )
    if m and m.group(2) in chapters(root):
        variant, chapter, stage, wrong = m.groups()
        if variant != "wrong":
            return source_folders(variant, chapter)
        # The wrong variant's copy: <build>/wrong/<chapter>/<stage>.<name>/, from <build>/bin/.
        copy = Path(program).resolve().parent.parent / "wrong" / chapter / f"{stage}.{wrong}"
        try:
            copy = copy.relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            copy = None
        return ((copy,) if copy else ()) + source_folders("solution", chapter)
    m = re.match(r"^test-(\d\d-[a-z0-9]+)-(lab-)?", name)
    if m and m.group(1) in chapters(root):
        lab = (f"labs/{m.group(1)}",) if m.group(2) else ()
        return lab + source_folders("exercise", m.group(1))
    return ()


def bench_program(chapter, variant="solution"):
    """A chapter's benchmark, built with the solutions (bench-<chapter>) or the exercises."""
    return f"bench-{chapter}" + ("-exercise" if variant == "exercise" else "")


# ---------------------------------------------------------------- make targets


def _option_values(args, name):
    """Values given to --name in an ARGS string (--name V or --name=V)."""
    try:
        words = shlex.split(args)
    except ValueError:
        return None
    values = []
    for i, word in enumerate(words):
        if word == f"--{name}" and i + 1 < len(words):
            values.append(words[i + 1])
        elif word.startswith(f"--{name}="):
            values.append(word.split("=", 1)[1])
    return values


def validate(goal, variables, root=ROOT):
    """The one-line error for a make goal and its variables, or None when they are fine."""
    get = lambda name: variables.get(name, "").strip()  # noqa: E731
    all_chapters = chapters(root)
    if goal == "bench":
        chapter = get("CHAPTER")
        benches = bench_chapters(root)
        if chapter in benches:
            return None
        if chapter in all_chapters:
            return (
                f"bench: {chapter} has no benchmark (its lesson is the tests and the SASS: "
                f"make check STAGE={chapter}, make sass STAGE={chapter}/...); "
                f"chapters with one: {', '.join(benches)}"
            )
        return f"bench: no chapter '{chapter}'; CHAPTER= one of {', '.join(benches)}"
    if goal == "hint":
        return stage_error(
            goal, get("STAGE"), root, "make hint STAGE=exercise/12-reduction/04_single_pass"
        )
    if goal in ("sass", "sass-count"):
        return stage_error(
            goal, get("STAGE"), root, f"make {goal} STAGE=11-streaming/03_vectorized_float4"
        )
    if goal == "sass-diff":
        missing = [v for v in ("A", "B") if not get(v)]
        if missing:
            return (
                f"sass-diff: say which two stages: make sass-diff A=<stage> B=<stage>, e.g. "
                f"A=11-streaming/02_unrolled_templated B=11-streaming/03_vectorized_float4; "
                f"stages: {stage_choices(root)}"
            )
        for v in ("A", "B"):
            error = stage_error(f"sass-diff: {v}", get(v), root)
            if error:
                return error
        return None
    if goal == "reset":
        try:
            reset_target(get("STAGE"), root)
        except UsageError as err:
            return str(err)
        return None
    if goal in ("check", "sanitize") and get("STAGE"):
        # A regex over test names: only a plain name that matches nothing is an error.
        stage = get("STAGE")
        if re.search(
            r"[\\^$.*+?()\[\]{}|]", stage.replace("_", "").replace("-", "").replace("/", "")
        ):
            return None
        names = [test_name(v, *i.split("/", 1)) for i in stage_ids(root) for v in VARIANTS]
        names += [f"wrong/{i}" for i in stage_ids(root)]
        names += [f"host/{c}" for c in all_chapters] + [
            "host/harness",
            "host/pgm",
            "host/exercises-in-sync",
            "host/python-tools",
        ]
        for c in all_chapters:  # the labs' tests: lab/<chapter>/<name> (labs/<chapter>/)
            for call in _cmake_calls(c, "course_add_lab_test", root, tree="labs"):
                m = re.search(r"\bNAME\s+(\S+)", call)
                if m:
                    names.append(f"lab/{c}/{m.group(1)}")
        if any(stage in n for n in names):
            return None
        return (
            f"{goal}: STAGE='{stage}' matches no test; use a chapter, a stage or a variant "
            f"(solution/, exercise/, wrong/), e.g. STAGE=exercise/11-streaming/01_grid_stride; "
            f"chapters: {', '.join(all_chapters)}"
        )
    if goal in ("profile", "profile-diff"):
        names = ("STAGE",) if goal == "profile" else ("A", "B")
        if goal == "profile-diff" and not (get("A") and get("B")):
            return (
                "profile-diff: say which two stages: make profile-diff A=12-reduction/09_shuffle "
                f"B=12-reduction/10_fastest; stages: {stage_choices(root)}"
            )
        for name in names:
            try:
                profile_stage(get(name), root)
            except UsageError as err:
                return (
                    str(err)
                    if goal == "profile"
                    else str(err).replace("profile:", f"profile-diff: {name}:", 1)
                )
        return None
    if goal == "profile-capture" and get("CHAPTER"):
        if get("CHAPTER") not in bench_chapters(root):
            return (
                f"profile-capture: no chapter with a benchmark '{get('CHAPTER')}'; CHAPTER= one of "
                f"{', '.join(bench_chapters(root))}"
            )
        return None
    if goal == "nbody":
        values = _option_values(get("ARGS"), "stage")
        if values is None:
            return f"nbody: ARGS has an unclosed quote: {get('ARGS')}"
        chapter = program_chapter("nbody", root)
        names = stages(chapter, root) if chapter else []
        for value in values:
            if value != "cpu" and not any(s.startswith(value) for s in names):
                return (
                    f"nbody: no stage '{value}'; --stage takes cpu or one of {', '.join(names)} "
                    f"(or its number)"
                )
        return None
    if goal == "ncc":
        values = _option_values(get("ARGS"), "image")
        if values is None:
            return f"ncc: ARGS has an unclosed quote: {get('ARGS')}"
        for value in values:
            if not Path(value).is_file():
                return f"ncc: --image {value}: no such file (a PGM image; without --image ncc draws a scene)"
        return None
    return None


def _goals_and_variables(argv):
    goals, variables = [], {}
    for arg in argv:
        if "=" in arg and re.match(r"^[A-Z_]+=", arg):
            name, value = arg.split("=", 1)
            variables[name] = value
        else:
            goals.extend(arg.split())
    return goals, variables


# ---------------------------------------------------------------- the README's quick start


def quickstart(root=ROOT):
    """The commands of the README's quick start (the first code block under '## Quick start'),
    without their comments: what a new student types first, and what CI runs first, as written."""
    text = (root / "README.md").read_text()
    m = re.search(r"^## Quick start\n.*?^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    if not m:
        return []
    commands = [line.split("#", 1)[0].strip() for line in m.group(1).splitlines()]
    return [c for c in commands if c]


# ---------------------------------------------------------------- reference results


def load_result(path):
    """A benchmark result file (schema cuda-course-bench/*) as a dict, or None."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    if not str(doc.get("schema", "")).startswith("cuda-course-bench/"):
        return None
    return doc


def result_date(doc):
    return str(doc.get("date", ""))


def short_date(doc):
    when = result_date(doc)
    try:
        return datetime.fromisoformat(when.replace("Z", "+00:00")).strftime("%Y-%m-%d")
    except ValueError:
        return when or "undated"


def committed_results(chapter, root=ROOT):
    """[(path, doc)] of a chapter's committed result files (reference/<gpu>/<chapter>/*.json), by path."""
    found = [
        (path, load_result(path))
        for path in sorted((root / "reference").glob(f"*/{chapter}/*.json"))
    ]
    return [(path, doc) for path, doc in found if doc]


def newest_result(chapter, gpu=None, root=ROOT):
    """(path, doc) of a chapter's newest committed result, on a GPU whose device name contains gpu
    when given: a one-GPU run before a run of several (reference/<gpu>x2/ holds only the rows that
    use every GPU), then the latest date, then the later file name (so the choice does not depend
    on the order of the files); (None, None) when there is none."""
    found = [
        (path, doc)
        for path, doc in committed_results(chapter, root)
        if gpu is None or gpu in doc.get("device", {}).get("name", "")
    ]
    if not found:
        return None, None
    return max(
        found,
        key=lambda f: (
            not is_multi_gpu_folder(f[0].parent.parent.name),
            result_date(f[1]),
            f[0].as_posix(),
        ),
    )


def reference_result(chapter, root=ROOT):
    """(path, doc) of a chapter's committed reference run: the reference GPU's bench.json, else its
    newest, else the newest on any GPU; (None, None) when there is none."""
    bench = evidence_dir(chapter, root) / "bench.json"
    doc = load_result(bench) if bench.is_file() else None
    if doc:
        return bench, doc
    path, doc = newest_result(chapter, REFERENCE_GPU, root)
    return (path, doc) if doc else newest_result(chapter, None, root)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["validate"]:
        goals, variables = _goals_and_variables(argv[1:])
        for goal in goals:
            error = validate(goal, variables)
            if error:
                print(error)
                return 2
        return 0
    if argv[:1] == ["target"] and len(argv) == 2:
        # The object library of a stage argument (solution.<chapter>.<stage>, exercise....).
        found, _ = parse_stage(argv[1])
        if found:
            print(found.target)
            return 0
        return 2
    if argv == ["cmake"]:
        try:
            print(cmake_code())
        except UsageError as err:
            print(err, file=sys.stderr)
            return 2
        return 0
    if argv == ["quickstart"]:
        print("\n".join(quickstart()))
        return 0
    if argv[:1] == ["list"] and len(argv) == 2:
        what = argv[1]
        rows = {
            "chapters": chapters,
            "stages": stage_ids,
            "benches": bench_chapters,
            "gpu-stages": gpu_stages,
            "wrong-variants": lambda: ["/".join(v[:3]) for v in wrong_variants()],
        }.get(what)
        if rows:
            print("\n".join(rows()))
            return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    # The tools this one imports (exercises.py) import course: the same module, not a second copy
    # (so that its UsageError is this one's).
    sys.modules.setdefault("course", sys.modules[__name__])
    sys.exit(main())
