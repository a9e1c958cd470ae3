#!/usr/bin/env python3
"""make reference: every piece of evidence for one GPU, regenerated in one run on a GPU machine.

    reference.py run  [--steps "build bench sass profile pitfalls charts tables stamps"] [--build DIR] [--jobs N]
                      [--chapters "CH ..."] [--stale]
    reference.py plan [--steps ...] [--stale]   what each step would run and write (no GPU needed)

--stale (make reference STALE=1): each step only for the chapters where stamps.py finds one of its
captures stale (stale_plan), or nothing when all is fresh.

Into reference/<gpu>/<chapter>/ (<gpu> from nvidia-smi's name: NVIDIA H200 -> h200):

    build    the chapters' benchmarks (and with them every solution stage's object) in --build
    bench    each chapter's benchmark, as make tour runs it: bench.json (its results) and
             bench.txt (the tables it prints); nothing else runs on its GPU meanwhile
    sass     the stage objects for sm_80 and sm_120 in <build>-sass (compile only), then
             sass/sm_90/ from --build, sass/sm_80/ and sass/sm_120/ from <build>-sass (cuobjdump);
             CPU work, so it runs beside the profile step when both are asked for
    profile  profiles/<stage>.csv and profiles/baseline.csv (one ncu run per chapter over the
             stages' NVTX ranges, the bench in its --profile-only mode), the per-instruction
             samples (a run per source stage), then each chapter's own capture scripts
    pitfalls each wrong variant built and its tests run: what it fails, per chapter, into
             pitfalls.json (harness/pitfalls.py record --run)
    charts   every hinted table of bench.json as <table>.png, roofline.png (plots/), and
             13-scan's scan_circuits.png
    tables   the READMEs' results blocks (harness/readme_tables.py write)
    stamps   stamps.json: each file this run wrote, stamped with the hash of its sources (stamps.py)

On a machine with two GPUs of the reference model (nvidia-h200-x2), --lanes 2 (the default)
spreads the GPU work over both: GPU 0 runs the benches, alone on that GPU, GPU 1 the Nsight Compute
captures at the same time; the chapters' capture scripts go to whichever GPU is free first, then
GPU 0 runs the wrong variants' tests. Each of those processes sees one GPU (CUDA_VISIBLE_DEVICES),
as on a machine of one, so every file is what a one-GPU run writes. Last, with both GPUs visible,
the bench rows that use every GPU ([chapter] multi_gpu in lessons.toml: stage 10's table 14.3), into
reference/<gpu>x2/<chapter>/ (course.multi_gpu_folder). --lanes 1 (LANES=1), one GPU, or a
CUDA_VISIBLE_DEVICES already set runs everything on one GPU, one step after the other.

A step that fails is reported and the run goes on; the exit status is 1 when any failed. Each
step records the files it wrote in <build>/reference-written.txt, so a run split over two calls
(STEPS="build bench", then STEPS="sass profile charts tables stamps") stamps both halves. Files no
step writes (hand-written notes beside the captures) keep their stamps, pending ones included.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402
import stamps  # noqa: E402

ROOT = course.ROOT
STEPS = ("build", "bench", "sass", "profile", "pitfalls", "charts", "tables", "stamps")
# The architectures captured beside the reference GPU's (A100 and RTX 50), from one build of their own.
OTHER_ARCHS = ("sm_80", "sm_120")
WRITTEN = "reference-written.txt"


def gpu_folder(name):
    """A GPU's folder under reference/: 'NVIDIA H200' -> 'h200', 'NVIDIA H100 80GB HBM3' -> 'h100',
    'NVIDIA GeForce RTX 4090' -> 'geforce-rtx-4090' (plots/plot.py's short form)."""
    words = [
        w
        for w in re.split(r"[\s_-]+", name or "")
        if w and w.upper() != "NVIDIA" and not re.fullmatch(r"\d+GB|HBM\d*E?|GDDR\d*X?", w, re.I)
    ]
    return re.sub(r"[^\w.+-]", "-", "-".join(words).lower()) or "unknown-gpu"


def plot_python():
    """An interpreter with matplotlib (the Makefile's PLOT_PYTHON), or None."""
    for candidate in dict.fromkeys([sys.executable, "python3", "/usr/bin/python3"]):
        exe = shutil.which(candidate) or candidate
        if (
            Path(exe).exists()
            and subprocess.run([exe, "-c", "import matplotlib"], capture_output=True).returncode
            == 0
        ):
            return exe
    return None


class Run:
    """One step's commands; in plan mode they are printed, not run."""

    def __init__(self, args, gpu):
        self.args, self.gpu, self.plan = args, gpu, args.cmd == "plan"
        self.build = Path(args.build)
        self.sass_build = Path(f"{args.build}-sass")
        self.failed = []
        self.logs = self.build / "reference-logs"
        self.lock = threading.Lock()  # the sass step runs in a thread beside the profile step
        self.per_step = None  # --stale: {step: [chapters]}, each step its own chapters
        self.local = threading.local()  # .env: the GPU lane of the thread's commands (two_lanes)

    def chosen(self, step):
        """The chapters a step regenerates: --stale's for that step, else --chapters', else None
        (every chapter)."""
        if self.per_step is not None:
            return self.per_step.get(step, [])
        return self.args.chapters.split() or None

    def wants(self, chapter, step):
        """Whether the step regenerates the chapter's evidence."""
        chosen = self.chosen(step)
        return chosen is None or chapter in chosen

    def bench_chapters(self, step):
        return [c for c in course.bench_chapters() if self.wants(c, step)]

    def stage_targets(self, step):
        """The solution stages' objects (course.StageRef's targets) of the step's chapters."""
        return [
            course.StageRef("solution", *i.split("/", 1)).target
            for i in course.gpu_stages()
            if self.wants(i.split("/")[0], step)
        ]

    def only(self, step):
        """sass.py capture-all's --only for the step's chapters ([] for all)."""
        chosen = self.chosen(step)
        if chosen is None:
            return []
        return ["--only", f"^({'|'.join(map(re.escape, chosen))})/"]

    def folder(self, chapter):
        return ROOT / "reference" / self.gpu / chapter

    def sh(self, what, cmd, stdout=None, env=None):
        """Run cmd (a list) from the repository root; its output to a log, or stdout to a file.
        True when it succeeded (in plan mode: printed, and True)."""
        shown = shown_command(cmd) + (f" > {rel(stdout)}" if stdout else "")
        if self.plan:
            print(f"    {shown}")
            return True
        start = time.time()
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / (re.sub(r"[^\w.-]", "_", what) + ".log")
        with open(log, "w") as err:
            out = open(stdout, "w") if stdout else None
            try:
                done = subprocess.run(
                    [str(c) for c in cmd],
                    cwd=ROOT,
                    stdout=out or err,
                    stderr=err if out else subprocess.STDOUT,
                    env=dict(os.environ, **getattr(self.local, "env", {}), **(env or {})),
                )
            finally:
                if out:
                    out.close()
        took = f"{time.time() - start:.0f} s"
        if done.returncode != 0:
            tail = log.read_text(errors="replace").strip().splitlines()[-15:]
            with self.lock:
                print(
                    f"    {what}: failed (exit status {done.returncode}, {took}); {rel(log)} ends:"
                )
                print("\n".join(f"      {line}" for line in tail))
                self.failed.append(what)
            return False
        print(f"    {what}: {took}")
        return True

    def wrote(self, paths):
        """Record the files a step wrote, for the stamps step (across calls)."""
        paths = [Path(p) for p in paths if Path(p).is_file()]
        if self.plan or not paths:
            return
        self.build.mkdir(parents=True, exist_ok=True)
        with self.lock, open(self.build / WRITTEN, "a") as f:
            f.writelines(f"{rel(p)}\n" for p in paths)


def stale_plan(gpu, root=ROOT):
    """{step: [chapters]} that brings reference/<gpu>/ up to date (make reference STALE=1): for
    each artefact stamps.py lists as stale, deferred, unstamped, or stamped and gone, the step that
    makes it, in its chapter (a pending one was moved in from an older run, and no step may write
    it again); for a GPU stage without its SASS for an architecture (a new stage), the sass step
    and its chapter's profile. A chart is drawn from the bench's results of the same run, so charts
    bring their bench; a bench brings its charts and the READMEs' tables. Build and stamps come
    with any step. {} when everything is fresh."""
    need = {}

    def add(step, chapter):
        need.setdefault(step, set()).add(chapter)

    for path, state, _detail in stamps.report(root, gpu):
        if state == "pending":
            continue
        parts = Path(path).parts  # reference, <gpu>, <chapter>, ...
        if len(parts) < 4:
            continue
        chapter, inner = parts[2], parts[3:]
        if inner[0] == "sass":
            add("sass", chapter)
        elif inner[0] == "profiles":
            add("profile", chapter)
        elif inner[-1] == "pitfalls.json":
            add("pitfalls", chapter)
        else:  # bench.json, bench.txt, the charts
            add("bench", chapter)
    for stage_id in course.gpu_stages(root):
        chapter, stage = stage_id.split("/", 1)
        sass_dir = course.evidence_dir(chapter, root) / "sass"
        if any(
            not (sass_dir / arch / f"{stage}.sass").is_file()
            for arch in (course.REFERENCE_ARCH, *OTHER_ARCHS)
        ):
            add("sass", chapter)
            add("profile", chapter)  # a new stage: its profile too, where the chapter has a bench
    measured = set(course.bench_chapters(root))
    for step in ("bench", "profile"):
        if step in need:
            need[step] &= measured
    if need.get("bench"):
        need["charts"] = set(need["bench"])
        need["tables"] = set()
    if not any(need.values()):
        return {}
    need["build"] = set().union(*(need.get(s, set()) for s in ("bench", "sass", "profile")))
    need["stamps"] = set()
    return {step: sorted(need[step]) for step in STEPS if step in need}


def shown_command(cmd):
    """A command as the plan prints it: python3 for this interpreter, long target lists cut."""
    words = ["python3" if str(c) == sys.executable else shlex.quote(str(c)) for c in cmd]
    if "--target" in words:
        at = words.index("--target") + 1
        targets = words[at:]
        if len(targets) > 6:
            words = words[:at] + targets[:3] + [f"... ({len(targets)} targets)"]
    return " ".join(words)


def rel(path):
    path = Path(path)
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def newer(folder, since):
    return [p for p in Path(folder).rglob("*") if p.is_file() and p.stat().st_mtime >= since]


# ---------------------------------------------------------------- the steps


def generator(build):
    """cmake's -G for a new build folder: Ninja where there is one, as the Makefile configures; an
    existing build keeps its generator."""
    if (Path(build) / "CMakeCache.txt").is_file() or not shutil.which("ninja"):
        return []
    return ["-G", "Ninja"]


def step_build(r):
    """The reference GPU's build: the benchmarks and the solution stages (sm_90). The other
    architectures' objects are the sass step's, built while the profile step has the GPU."""
    jobs = str(r.args.jobs)
    benches = [f"bench-{c}" for c in r.bench_chapters("build")]
    stage_targets = r.stage_targets("build")
    ok = r.sh("configure", ["cmake", "-S", ".", "-B", r.build, *generator(r.build)])
    if not benches and not stage_targets:  # STALE=1 with only pitfalls stale: the step builds them
        return f"configured {rel(r.build)}/, nothing to build" + ("" if ok else " (failed)")
    ok = ok and r.sh(
        "build", ["cmake", "--build", r.build, "-j", jobs, "--target", *benches, *stage_targets]
    )
    return f"benchmarks and stages in {rel(r.build)}/" + ("" if ok else " (failed)")


def run_bench(r, what, chapter, folder, scratch, args=(), env=None):
    """One bench run into folder/bench.json and bench.txt (its JSON written to scratch first);
    True when both were written (in plan mode: the command printed)."""
    if not r.plan:
        folder.mkdir(parents=True, exist_ok=True)
        scratch.mkdir(parents=True, exist_ok=True)
        (scratch / f"{chapter}.json").unlink(missing_ok=True)
    cmd = [r.build / "bin" / f"bench-{chapter}", *args, "--results", scratch]
    if not r.sh(what, cmd, stdout=folder / "bench.txt", env=env):
        return False
    if r.plan:
        return True
    result = scratch / f"{chapter}.json"
    if not result.is_file():
        print(f"    {what}: wrote no {rel(result)}")
        r.failed.append(what)
        return False
    shutil.copy(result, folder / "bench.json")
    r.wrote([folder / "bench.json", folder / "bench.txt"])
    return True


def step_bench(r):
    scratch = r.build / "reference-results"
    done = []
    for chapter in r.bench_chapters("bench"):
        start = time.time()
        folder = r.folder(chapter)
        if run_bench(r, f"bench-{chapter}", chapter, folder, scratch):
            if not r.plan:
                print(
                    f"    {chapter}: {rel(folder / 'bench.json')}, bench.txt ({time.time() - start:.0f} s)"
                )
            done.append(chapter)
    if r.plan:
        print(f"    each result copied to reference/{r.gpu}/<chapter>/bench.json")
    return f"{len(done)} benchmarks"


def multi_gpu_benches(r, lanes):
    """The bench rows that use every visible GPU ([chapter] multi_gpu: stage 10 on 1 and 2 GPUs),
    run with all the lanes' GPUs visible, into reference/<gpu>x<lanes>/<chapter>/bench.json and
    bench.txt; the rest of the chapter's bench is the one-GPU run's."""
    where = course.multi_gpu_folder(r.gpu, len(lanes))
    env = lane_env(",".join(lanes))
    done = [
        chapter
        for chapter in r.bench_chapters("bench")
        if course.multi_gpu_rows(chapter)
        and run_bench(
            r,
            f"bench-{chapter}-x{len(lanes)}",
            chapter,
            ROOT / "reference" / where / chapter,
            r.build / f"reference-results-x{len(lanes)}",
            ["--only", course.multi_gpu_rows(chapter)],
            env,
        )
    ]
    if r.plan:
        print(f"    each result copied to reference/{where}/<chapter>/bench.json")
    return f"{len(done)} benchmarks on GPUs {','.join(lanes)}"


def step_sass(r):
    start = time.time()
    py = sys.executable
    stage_targets = r.stage_targets("sass")
    archs = ";".join(f"{a[3:]}-real" for a in OTHER_ARCHS)
    built = r.sh(
        "configure-sass",
        ["cmake", "-S", ".", "-B", r.sass_build, *generator(r.sass_build)]
        + [f"-DCMAKE_CUDA_ARCHITECTURES={archs}"],
    )
    built = built and r.sh(
        "build-sass",
        ["cmake", "--build", r.sass_build, "-j", str(r.args.jobs), "--target", *stage_targets],
    )
    r.sh(
        "sass-sm_90",
        [
            py,
            "harness/sass.py",
            "capture-all",
            "--build",
            r.build,
            "--jobs",
            r.args.jobs,
            "--arch",
            course.REFERENCE_ARCH,
            "--no-build",
            *r.only("sass"),
        ],
    )
    for arch in OTHER_ARCHS if built else ():
        r.sh(
            f"sass-{arch}",
            [
                py,
                "harness/sass.py",
                "capture-all",
                "--build",
                r.sass_build,
                "--jobs",
                r.args.jobs,
                "--arch",
                arch,
                "--no-build",
                *r.only("sass"),
            ],
        )
    folders = [course.evidence_dir(c) / "sass" for c in course.chapters() if r.wants(c, "sass")]
    if r.plan:
        return f"reference/{course.REFERENCE_DIR}/<chapter>/sass/{{{course.REFERENCE_ARCH},{','.join(OTHER_ARCHS)}}}/<stage>.sass"
    written = [p for f in folders if f.is_dir() for p in newer(f, start)]
    r.wrote(written)
    return f"{len(written)} SASS captures"


def profile_captures(r):
    """The Nsight Compute captures of the stages (one ncu run per chapter) and their
    per-instruction samples."""
    py = sys.executable
    for chapter in r.chosen("profile") or [None]:
        pick = ["--chapter", chapter] if chapter else []
        for command in ("capture", "capture-source"):
            r.sh(
                f"profile-{command}" + (f"-{chapter}" if chapter else ""),
                [py, "harness/profile.py", command, "--build", r.build, "--jobs", r.args.jobs]
                + ["--gpu", r.gpu, "--no-build", *pick],
            )


def profile_scripts(r):
    """The labs' capture scripts (labs/<chapter>/capture_*.py), as (what, command) for r.sh."""
    return [
        (
            f"profile-{script.parent.name}-{script.stem}",
            [sys.executable, rel(script), "--build", r.build],
        )
        for script in sorted(ROOT.glob("labs/*/capture_*.py"))
        if r.wants(script.parent.name, "profile")
    ]


def profile_written(r, start):
    """Record the profiles written since start; what the step says of them."""
    if r.plan:
        return f"reference/{r.gpu}/<chapter>/profiles/<stage>.csv, baseline.csv, and the labs' captures"
    written = [
        p
        for c in r.bench_chapters("profile")
        for folder in (r.folder(c) / "profiles", course.evidence_dir(c) / "profiles")
        if folder.is_dir()
        for p in newer(folder, start)
    ]
    r.wrote(written)
    return f"{len(set(written))} profiles"


def step_profile(r):
    start = time.time()
    profile_captures(r)
    for what, cmd in profile_scripts(r):
        r.sh(what, cmd)
    return profile_written(r, start)


def prebuild_pitfalls(r):
    """The wrong variants' build, on the CPU while the profile step has the GPU (after the sass
    step, in its thread): the pitfalls step then only runs their tests."""
    chosen = r.chosen("pitfalls")
    pick = ["--chapters", " ".join(chosen)] if chosen is not None else []
    cmd = [sys.executable, "harness/pitfalls.py", "build", "--build", r.build]
    r.sh("pitfalls-build", cmd + ["--jobs", r.args.jobs, *pick])
    return "wrong variants built"


def step_pitfalls(r):
    start = time.time()
    cmd = [sys.executable, "harness/pitfalls.py", "record", "--run", "--build", r.build]
    chosen = r.chosen("pitfalls")
    pick = ["--chapters", " ".join(chosen)] if chosen is not None else []
    r.sh("pitfalls", cmd + ["--jobs", r.args.jobs, "--gpu", r.gpu, *pick])
    if r.plan:
        return f"reference/{r.gpu}/<chapter>/pitfalls.json"
    written = [
        r.folder(c) / "pitfalls.json"
        for c in course.chapters()
        if r.wants(c, "pitfalls")
        and (r.folder(c) / "pitfalls.json").is_file()
        and (r.folder(c) / "pitfalls.json").stat().st_mtime >= start
    ]
    r.wrote(written)
    return f"{len(written)} pitfalls records"


def step_charts(r):
    start = time.time()
    py = sys.executable if r.plan else plot_python()
    if py is None:
        print(
            "    charts: skipped, matplotlib not found (apt-get install python3-matplotlib); the charts "
            "keep their stamps (stale where the results changed)"
        )
        r.failed.append("charts (no matplotlib)")
        return "no charts"
    for chapter in r.bench_chapters("charts"):
        folder = r.folder(chapter)
        if not r.plan and not (folder / "bench.json").is_file():
            continue
        r.sh(
            f"charts-{chapter}",
            [py, "plots/plot.py", "--plain", "--out", rel(folder), rel(folder / "bench.json")],
        )
        r.sh(
            f"roofline-{chapter}",
            [
                py,
                "plots/roofline.py",
                "--plain",
                "--out",
                rel(folder),
                "--results",
                rel(r.build / "reference-results"),
                chapter,
            ],
        )
    scan = r.folder("13-scan")
    if r.wants("13-scan", "charts"):
        r.sh(
            "scan_circuits",
            [py, "plots/scan_circuits.py", "--out", rel(scan / "scan_circuits.png")],
        )
    # Stage 11's model beside its measured points (chapter 14): the ranks bench's, where run.
    nbody = r.folder("14-nbody")
    ranks = [str(nbody / "bench_ranks.json")] if (nbody / "bench_ranks.json").is_file() else []
    if r.wants("14-nbody", "charts"):
        r.sh(
            "model_ranks",
            [py, "labs/14-nbody/model_ranks.py", "--chart", rel(nbody / "model_ranks.png")]
            + (["--measured", rel(Path(ranks[0]))] if ranks else []),
        )
    if r.plan:
        return f"reference/{r.gpu}/<chapter>/<table>.png, roofline.png"
    written = [
        p
        for c in r.bench_chapters("charts")
        for p in r.folder(c).glob("*.png")
        if p.stat().st_mtime >= start
    ]
    r.wrote(written)
    return f"{len(written)} charts"


def step_tables(r):
    r.sh("tables", [sys.executable, "harness/readme_tables.py", "write"])
    return "README results blocks"


def step_stamps(r):
    listing = r.build / WRITTEN
    if r.plan:
        print(
            f"    stamps.json of each reference/{r.gpu}/<chapter>/ (and the SASS folders'): every file "
            f"listed in {rel(listing)}, with commit, date, GPU and command"
        )
        return "stamps"
    names = sorted(set(listing.read_text().split())) if listing.is_file() else []
    by_folder = {}
    for name in names:
        parts = Path(name).parts
        if len(parts) >= 4 and parts[0] == "reference" and (ROOT / name).is_file():
            by_folder.setdefault(Path(*parts[:3]), []).append(str(Path(*parts[3:]).as_posix()))
    run = stamps.run_facts(course.gpu_name() or r.gpu, "make reference", ROOT)
    count = 0
    for folder, files in sorted(by_folder.items()):
        stamps.stamp(ROOT / folder, folder.name, run, ROOT, names=files)
        count += len(files)
    listing.unlink(missing_ok=True)
    return f"{count} files stamped in {len(by_folder)} folders"


def gpu_lanes(want):
    """The GPUs the run spreads its GPU work over, as CUDA_VISIBLE_DEVICES values: the first
    `want` of the GPUs of GPU 0's model, in nvidia-smi's order (CUDA_DEVICE_ORDER=PCI_BUS_ID makes
    it CUDA's); [None], one lane on the process's own GPUs, where there is one such GPU, `want` is
    1, or CUDA_VISIBLE_DEVICES already picks the GPUs."""
    if want < 2 or os.environ.get("CUDA_VISIBLE_DEVICES") is not None:
        return [None]
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return [None]
    rows = [[f.strip() for f in line.split(",", 1)] for line in out.splitlines() if "," in line]
    same = [index for index, name in rows if name == rows[0][1]] if rows else []
    return same[:want] if len(same) >= 2 else [None]


def lane_env(gpu):
    return {"CUDA_VISIBLE_DEVICES": gpu, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}


def cpu_side(r, steps, timed):
    """The CPU's share while a GPU profiles: the SASS captures, then the wrong variants' build."""
    if "sass" in steps:
        timed("sass")
    if "pitfalls" in steps and r.chosen("pitfalls") != []:
        timed("pitfalls-build", prebuild_pitfalls)


def two_lanes(r, steps, timed, lanes):
    """bench, sass, profile and pitfalls over two GPUs and the CPU at once:
        GPU 0  the benches (alone on their GPU), then capture scripts, then the wrong variants' tests
        GPU 1  the stages' Nsight Compute captures, then capture scripts
        CPU    the SASS captures, then the wrong variants' build
    Each capture script goes to the GPU that is free first, the longest (chapter 14's) first."""
    scripts = profile_scripts(r)  # main() lays out two lanes only with bench and profile asked for
    profile_start = time.time()

    def more_scripts():
        while True:
            with r.lock:
                item = scripts.pop() if scripts else None
            if item is None:
                return
            r.sh(*item)

    def gpu1():
        r.local.env = lane_env(lanes[1])

        def captures_then_scripts(r):
            profile_captures(r)
            more_scripts()
            return f"captures and capture scripts on GPU {lanes[1]}"

        timed("profile", captures_then_scripts)

    print(f"== bench (GPU {lanes[0]}) beside profile (GPU {lanes[1]}) and sass (CPU)")
    side = [
        threading.Thread(target=gpu1),
        threading.Thread(target=cpu_side, args=(r, steps, timed)),
    ]
    for t in side:
        t.start()
    r.local.env = lane_env(lanes[0])
    timed("bench")
    more_scripts()
    side[1].join()  # the wrong variants built
    if "pitfalls" in steps:
        print(f"== pitfalls (GPU {lanes[0]})")
        timed("pitfalls")
    r.local.env = {}
    side[0].join()
    print(f"   profile: {profile_written(r, profile_start)}")
    print(f"== bench on GPUs {','.join(lanes)} at once (the rows that use every GPU)")
    timed("bench-multi-gpu", lambda r: multi_gpu_benches(r, lanes))


def main(argv=None):
    ap = argparse.ArgumentParser(description="regenerate a GPU's evidence under reference/")
    ap.add_argument("cmd", choices=("run", "plan"))
    ap.add_argument("--steps", default=" ".join(STEPS), help=f"a subset of: {' '.join(STEPS)}")
    ap.add_argument("--build", default="build")
    ap.add_argument("--jobs", default=str(os.cpu_count() or 2))
    ap.add_argument(
        "--chapters",
        default="",
        help="only these chapters' evidence (space-separated; default: every chapter)",
    )
    ap.add_argument(
        "--lanes",
        type=int,
        default=None,
        help="GPUs to spread the GPU work over, where as many of the reference model are present "
        "(default 2; plan: 1, or as if the GPUs given were there)",
    )
    ap.add_argument(
        "--stale",
        action="store_true",
        help="only what stamps.py finds not fresh: each step for the chapters it is needed in",
    )
    args = ap.parse_args(argv)
    steps = args.steps.split()
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        print(f"reference: unknown step '{unknown[0]}'; STEPS= some of: {' '.join(STEPS)}")
        return 2
    name = course.gpu_name()
    if args.cmd == "run":
        why = course.gpu_reason()
        if why:
            print(f"reference: needs a GPU ({why}); it runs on a GPU machine")
            return 77
    gpu = gpu_folder(name) if name else course.REFERENCE_DIR
    where = (
        f"{name} -> reference/{gpu}/"
        if name
        else f"no GPU here: reference/{gpu}/ on the reference GPU"
    )
    print(
        f"make reference{' (plan: nothing is run)' if args.cmd == 'plan' else ''}: {where}; steps: {' '.join(steps)}"
    )
    r = Run(args, gpu)
    if args.stale:
        r.per_step = stale_plan(gpu)
        if not r.per_step:
            fresh = f"every capture under reference/{gpu}/ is fresh"
            print(f"make reference STALE=1: {fresh}; nothing to do")
            return 0
        steps = [s for s in steps if s in r.per_step]
        for step in steps:
            print(f"    stale: {step} {' '.join(r.per_step[step]) or '(all)'}")
    if not r.plan and "build" in steps:
        (r.build / WRITTEN).unlink(missing_ok=True)  # a fresh run: stamp only what it writes
    times = []
    total = time.time()
    beside = None  # the sass step's thread, while the profile step has the GPU

    def timed(step, run=None):
        start = time.time()
        said = (run or globals()[f"step_{step}"])(r)
        times.append((step, time.time() - start, said))
        if not r.plan:
            print(f"   {step}: {said} ({time.time() - start:.0f} s)")

    lanes = [str(i) for i in range(args.lanes or 1)] if r.plan else gpu_lanes(args.lanes or 2)
    laned = ("bench", "sass", "profile", "pitfalls")
    if len(lanes) >= 2 and {"bench", "profile"} <= set(steps):
        print(f"    two GPUs: {', '.join(lanes[:2])} (bench and profile at once; LANES=1 for one)")
    else:
        lanes = lanes[:1]
    for step in (s for s in STEPS if s in steps):
        if len(lanes) >= 2 and step in laned:
            if step == "bench":
                if r.plan:
                    then = " and pitfalls there" if "pitfalls" in steps else " there"
                    print(f"== bench (GPU {lanes[0]}), then capture scripts{then}")
                    timed("bench")
                    print(f"== profile (GPU {lanes[1]}, beside bench), then capture scripts")
                    timed("profile")
                    if "sass" in steps:
                        print("== sass (CPU, beside bench)")
                        timed("sass")
                    if "pitfalls" in steps:
                        print("== pitfalls build (CPU, after sass)")
                        prebuild_pitfalls(r)
                        print(f"== pitfalls (GPU {lanes[0]})")
                        timed("pitfalls")
                    print(
                        f"== bench on GPUs {','.join(lanes)} at once (the rows that use every GPU)"
                    )
                    timed("bench-multi-gpu", lambda r: multi_gpu_benches(r, lanes))
                else:
                    two_lanes(r, steps, timed, lanes)
            continue
        if step == "sass" and "profile" in steps and not r.plan:
            print("== sass (CPU: beside the profile step)")
            beside = threading.Thread(target=cpu_side, args=(r, steps, timed))
            beside.start()
            continue
        print(f"== {step}")
        timed(step)
        if r.plan and step == "sass" and {"profile", "pitfalls"} <= set(steps):
            print("== pitfalls build (CPU: beside the profile step, after sass)")
            prebuild_pitfalls(r)
        if step == "profile" and beside is not None:
            beside.join()
            beside = None
    if r.plan:
        return 0
    print(
        "\nmake reference: "
        + "; ".join(f"{s} {t:.0f} s" for s, t, _ in times)
        + f"; {time.time() - total:.0f} s in all"
    )
    if r.failed:
        print(f"make reference: failed: {', '.join(r.failed)} (logs in {rel(r.logs)}/)")
        return 1
    print(
        "make reference: done; commit reference/ and the READMEs (python3 harness/stamps.py stale "
        "lists what is still not stamped)"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except course.UsageError as err:  # the course model refused the tree: one line, no traceback
        print(err, file=sys.stderr)
        sys.exit(2)
