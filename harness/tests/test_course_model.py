"""The course model (harness/course.py): the stage grammar and the test names, read once; and a
stage added with its three files only (solution, exercise, lessons entry) that the build, the
tests, the checker and the listings all find (docs/reference.md, "Adding a stage")."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
import profile  # noqa: E402

import check  # noqa: E402
import course  # noqa: E402
import exercises  # noqa: E402
import lesson  # noqa: E402
import sass  # noqa: E402
import tour  # noqa: E402

ROOT = course.ROOT


class GrammarTest(unittest.TestCase):
    def test_stage_references(self):
        ref = course.StageRef("solution", "11-streaming", "01_grid_stride")
        for arg in (
            "11-streaming/01_grid_stride",
            "11-streaming/01",
            "01_grid",
            "solution/11-streaming/01_grid_stride",
            "solutions/11-streaming/01_grid_stride.cu",
            f"{ROOT}/solutions/11-streaming/01_grid_stride.cu",
            "./solutions/11-streaming/01_grid_stride.cu",
        ):
            with self.subTest(arg=arg):
                self.assertEqual(course.parse_stage(arg)[0], ref)
        exercise = ref._replace(variant="exercise")
        for arg in ("exercise/11-streaming/01", "chapters/11-streaming/01_grid_stride.cu"):
            with self.subTest(arg=arg):
                self.assertEqual(course.parse_stage(arg)[0], exercise)
        wrong = course.parse_stage(
            "wrong/11-streaming/01_grid_stride.off_by_one_bound", wrong=True
        )[0]
        self.assertEqual(
            (wrong.variant, wrong.id, wrong.wrong),
            ("wrong", "11-streaming/01_grid_stride", "off_by_one_bound"),
        )
        self.assertEqual(wrong.target, "wrong.11-streaming.01_grid_stride.off_by_one_bound")
        self.assertIsNone(
            course.parse_stage("wrong/11-streaming/01_grid_stride")[0]
        )  # not without wrong=True
        found, candidates = course.parse_stage("11-streaming/0")
        self.assertIsNone(found)
        self.assertGreater(len(candidates), 1)

    def test_every_tool_reads_stages_with_it(self):
        ref = course.resolve_stage(
            "exercise/11-streaming/03", "lesson", wrong=True, example=lesson.EXAMPLE
        )
        self.assertEqual((ref.variant, ref.id), ("exercise", "11-streaming/03_vectorized_float4"))
        self.assertEqual(
            check.stage_selection("exercise/11-streaming/03"),
            "exercise/11-streaming/03_vectorized_float4",
        )
        self.assertEqual(
            course.profile_stage("12-reduction/10"), ("solution", "12-reduction", "10_fastest")
        )
        self.assertEqual(
            course.reset_target("chapters/11-streaming/01_grid_stride.cu"),
            "11-streaming/01_grid_stride",
        )
        self.assertEqual(
            course.reset_target("13-scan/lesson_block_scan.cuh"), "13-scan/lesson_block_scan.cuh"
        )
        self.assertEqual(
            sass._tree_stage("exercise/12-reduction/09"), ("exercise", "12-reduction/09_shuffle")
        )
        with self.assertRaises(course.UsageError) as caught:
            course.resolve_stage("11-streaming/0", "lesson", wrong=True, example=lesson.EXAMPLE)
        self.assertIn("names several stages", str(caught.exception))

    def test_one_usage_error_one_probe_one_root(self):
        for module in (sass, profile, exercises):
            self.assertIs(module.UsageError, course.UsageError)
        self.assertIs(lesson.Usage, course.UsageError)
        for module in (check, tour, profile):
            self.assertIs(module.gpu_reason, course.gpu_reason)
        for module in (check, lesson, sass, profile, exercises, tour):
            self.assertEqual(module.ROOT, course.ROOT)

    def test_test_names_compose_and_parse(self):
        for kind in (
            "tests",
            "sweep",
            "large",
            "masks",
            "host",
            "sanitize:racecheck",
            "lesson-sass",
        ):
            with self.subTest(kind=kind):
                name = course.test_name("exercise", "13-scan", "04_two_level", kind)
                self.assertEqual(
                    course.parse_test_name(name), ("exercise", "13-scan", "04_two_level", kind)
                )
        self.assertEqual(
            course.test_name("solution", "13-scan", "04_two_level", "sanitize:memcheck"),
            "sanitize/memcheck/solution/13-scan/04_two_level",
        )
        self.assertEqual(
            course.parse_test_name("wrong/13-scan/04_two_level.x"),
            ("wrong", "13-scan", "04_two_level.x", "wrong"),
        )
        self.assertIsNone(course.stage_test("lesson/sass/solution/13-scan/04_two_level"))
        self.assertEqual(course.stage_test("wrong/13-scan/04_two_level.x").kind, "wrong")
        for name in ("host/harness", "lab/12-reduction/folding", "host/08-warp/warp_model"):
            self.assertIsNone(course.parse_test_name(name), name)

    def test_program_and_target_names(self):
        # As cmake/CourseStages.cmake names them (AddAStageTest sees them in a real build).
        self.assertEqual(
            course.judge_program("exercise", "12-reduction", "10_fastest"),
            "judge.exercise.12-reduction.10_fastest",
        )
        self.assertEqual(course.bench_program("12-reduction"), "bench-12-reduction")
        self.assertEqual(
            course.bench_program("12-reduction", "exercise"), "bench-12-reduction-exercise"
        )
        self.assertEqual(
            course.StageRef("solution", "12-reduction", "10_fastest").target,
            "solution.12-reduction.10_fastest",
        )

    def test_workload_has_one_home(self):
        work = course.workload("12-reduction")
        self.assertEqual(work, {"n": 268435456})
        self.assertEqual(course.bench_defaults("12-reduction"), {"N": 256})
        self.assertEqual(
            lesson.declaration("12-reduction/01_two_pass")["speed"],
            {"n": 268435456, "threads": 512},
        )
        # A stage that sets the workload's keys itself keeps them, in its own order.
        self.assertEqual(
            list(lesson.declaration("13-scan/06_warp_scans")["speed"]), ["entry", "form", "n", "k"]
        )
        self.assertIn("COURSE_BENCH_CPU_N=16", course.cmake_code())

    def test_a_stage_without_its_lessons_entry_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for folder in ("chapters", "solutions"):
                (root / folder / "01-x").mkdir(parents=True)
                (root / folder / "01-x" / "01_a.cu").write_text("\n")
            (root / "chapters" / "01-x" / "lessons.toml").write_text('[chapter]\ntest = "t.cpp"\n')
            with self.assertRaises(course.UsageError) as caught:
                course.build_facts("01-x", root)
            self.assertEqual(
                str(caught.exception),
                "course: stage 01-x/01_a (solutions/01-x/01_a.cu) has no entry "
                "in chapters/01-x/lessons.toml: add a [01_a] table with its lesson",
            )
            (root / "chapters" / "01-x" / "lessons.toml").write_text(
                '[chapter]\ntest = "t.cpp"\n[01_a]\n'
            )
            self.assertEqual(
                course.build_facts("01-x", root), {"01_a": {"test": "t.cpp", "kind": "gpu"}}
            )


class SchemaTest(unittest.TestCase):
    """lessons.toml's keys are checked: a misspelt one is one line naming the file and the key
    (at configure time too: course.py cmake reads every manifest), not a silent default."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        for folder in ("chapters", "solutions"):
            (self.root / folder / "01-x").mkdir(parents=True)
            (self.root / folder / "01-x" / "01_a.cu").write_text("\n")

    def declare(self, text):
        (self.root / "chapters" / "01-x" / "lessons.toml").write_text(
            '[chapter]\ntest = "t.cpp"\n' + text
        )

    def refused(self, text, *words):
        self.declare(text)
        with self.assertRaises(course.UsageError) as caught:
            course.cmake_code(self.root)
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        for word in ("chapters/01-x/lessons.toml", *words):
            self.assertIn(word, message)
        return message

    def test_the_course_s_manifests_hold_only_known_keys(self):
        for chapter in course.chapters():
            with self.subTest(chapter=chapter):
                self.assertIsNone(course.schema_error(course.read_manifest(chapter)))

    def test_capture_perf_and_profile_rows_are_read(self):
        self.declare(
            'profile_rows = ["l2_hit"]\n[01_a]\nlesson = "a"\n'
            "capture = { kernels = '<256u>', says = \"256 threads\" }\n"
            'perf = [ { metric = "dram_pct", min = 80, why = "measured 90" } ]\n'
        )
        self.assertEqual(course.capture_subset("01-x/01_a", self.root), ("<256u>", "256 threads"))
        self.assertEqual(
            course.perf_bounds(self.root),
            [{"stage": "01-x/01_a", "metric": "dram_pct", "min": 80, "why": "measured 90"}],
        )
        self.assertEqual(course.profile_rows("01-x", self.root), ["l2_hit"])

    def test_unknown_keys_are_refused(self):
        self.assertIn("[01_a] unknown key 'lessen'", self.refused('[01_a]\nlessen = "a"\n'))
        self.refused("verbose = true\n[01_a]\n", "[chapter] unknown key 'verbose'")
        self.refused(
            '[01_a]\nperf = [ { metric = "dram_pct", mni = 80 } ]\n',
            "[01_a] perf: unknown key 'mni'",
        )
        self.refused(
            "[01_a]\nsass = [ { rule = \"BAR >= 1\", kernel = 'k' } ]\n",
            "[01_a] sass: unknown key 'kernel'",
        )
        self.refused(
            "[01_a]\ncapture = { kernels = 'k', says = 'k', keep = 1 }\n",
            "[01_a] capture: unknown key 'keep'",
        )

    def test_wrong_shapes_are_refused(self):
        self.refused(
            '[01_a]\nperf = [ { metric = "dram_pct", why = "no bound" } ]\n',
            "[01_a] perf",
            "min or a max",
        )
        self.refused(
            "[01_a]\ncapture = { kernels = '<256u>' }\n", "[01_a] capture needs kernels", "says"
        )
        self.refused(
            "[01_a]\ncapture = { kernels = '(', says = 'x' }\n",
            "[01_a] capture: kernels '(' is no regex",
        )
        self.refused('profile_rows = "l2_hit"\n[01_a]\n', "[chapter] profile_rows is a list")


# The dummy stage: a copy of the smallest stage, under a new name, in the smallest chapter.
CHAPTER, MODEL, DUMMY = "11-streaming", "01_grid_stride", "08_dummy_copy"
LESSON = "a copy of stage 01 under a new name (harness/tests/test_course_model.py)"
# Evidence no step of this test reads: left out of the copy.
SKIPPED = ("sass", "profiles", "figures")


def without_gpu_env(folder):
    """The environment of a machine whose driver answers no GPU: an nvidia-smi in FOLDER that
    fails (first on PATH) and no visible device, so the checker takes the no-GPU path everywhere.
    The rest of PATH stays: on a GPU machine nvidia-smi shares /usr/bin with the build's tools."""
    shim = Path(folder) / "no-gpu-bin"
    shim.mkdir(parents=True, exist_ok=True)
    smi = shim / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed: no GPU (a test hides it)'\nexit 9\n")
    smi.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(shim), env.get("PATH", "")])
    env["CUDA_VISIBLE_DEVICES"] = ""
    nvcc = sass.find_tool("nvcc")
    if nvcc:
        env.setdefault("CUDACXX", nvcc)
    return env


class AddAStageTest(unittest.TestCase):
    """A stage added in a copy of the repository with its three files only, seen by every tool:
    configured, built (its test program and the exercise's object), listed by ctest, course.py,
    lesson.py and make lessons, in the checker's manifest, and judged by make check's checker.
    About a minute on 2 cores (one stage's objects, course_common and the chapter's test file)."""

    @classmethod
    def setUpClass(cls):
        missing = [tool for tool in ("cmake", "ninja", "git", "make") if shutil.which(tool) is None]
        if sass.find_tool("nvcc") is None:
            missing.append("nvcc")
        if missing:
            raise unittest.SkipTest(f"COURSE_SKIP: adding a stage needs {', '.join(missing)}")
        # Tracked files and the untracked ones git does not ignore: a copy of the tree whose
        # .git is older than its files (as the GPU machines' copies are) still has them all.
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if listed.returncode != 0:
            raise unittest.SkipTest("COURSE_SKIP: not a git checkout (git ls-files lists the copy)")
        cls.tmp = Path(tempfile.mkdtemp(prefix="course-model-"))
        cls.root = cls.tmp / "course"
        for name in listed.stdout.split("\0"):
            parts = Path(name).parts
            if not name or (len(parts) > 2 and parts[0] == "chapters" and parts[2] in SKIPPED):
                continue
            source, target = ROOT / name, cls.root / name
            if source.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        # The three files of a stage, and nothing else.
        for folder in ("solutions", "chapters"):
            shutil.copy(
                ROOT / folder / CHAPTER / f"{MODEL}.cu", cls.root / folder / CHAPTER / f"{DUMMY}.cu"
            )
        with open(cls.root / "chapters" / CHAPTER / "lessons.toml", "a") as f:
            f.write(f'\n[{DUMMY}]\nlesson = "{LESSON}"\nspeed = "not judged: a dummy stage"\n')
        cls.env = without_gpu_env(cls.tmp)
        cls.build = cls.tmp / "build"
        cls.configured = cls.run_here(
            ["cmake", "-S", str(cls.root), "-B", str(cls.build), "-G", "Ninja"]
        )

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def run_here(cls, argv, cwd=None):
        return subprocess.run(
            argv, cwd=cwd or cls.root, capture_output=True, text=True, env=cls.env
        )

    @classmethod
    def check_stage(cls, stage):
        """make check's checker on one STAGE, in the copy (no GPU here: tests untested)."""
        argv = [sys.executable, "harness/check.py", "run", "--build", str(cls.build)]
        return cls.run_here(argv + ["--stage", stage, "--jobs", "2"])

    def test_1_configured_with_its_tests(self):
        self.assertEqual(
            self.configured.returncode,
            0,
            self.configured.stdout[-2000:] + self.configured.stderr[-2000:],
        )
        listed = self.run_here(["ctest", "-N"], cwd=self.build).stdout
        for name in (
            f"solution/{CHAPTER}/{DUMMY}",
            f"exercise/{CHAPTER}/{DUMMY}/sweep",
            f"sanitize/racecheck/exercise/{CHAPTER}/{DUMMY}",
            f"lesson/sass/solution/{CHAPTER}/{DUMMY}",
        ):
            self.assertIn(f": {name}\n", listed)
        manifest = (self.build / "tests.json").read_text()
        self.assertIn(
            f'"solution/{CHAPTER}/{DUMMY}": {{"needs": ["test.solution.{CHAPTER}.{DUMMY}"]',
            manifest,
        )
        self.assertIn(f'"id": "{CHAPTER}/{DUMMY}"', (self.build / "stages.json").read_text())
        # Its judge programs, by the names the checker asks course.py for.
        ninja = (self.build / "build.ninja").read_text()
        for variant in course.VARIANTS:
            self.assertIn(f"bin/{course.judge_program(variant, CHAPTER, DUMMY)}:", ninja)

    def test_2_listed(self):
        stages = self.run_here(
            [sys.executable, "harness/course.py", "list", "stages"]
        ).stdout.split()
        self.assertIn(f"{CHAPTER}/{DUMMY}", stages)
        shown = self.run_here([sys.executable, "harness/lesson.py", "show", CHAPTER]).stdout
        self.assertIn(f"  {DUMMY}: {LESSON}\n    speed: not judged: a dummy stage\n", shown)
        made = self.run_here(["make", "-s", "lessons", f"CHAPTER={CHAPTER}"])
        self.assertEqual(made.returncode, 0, made.stderr)
        self.assertIn(f"  {DUMMY}: {LESSON}", made.stdout)
        self.assertIn(
            f"  {DUMMY}\n", self.run_here(["make", "-s", "help"]).stdout.replace(f"{CHAPTER}/", "")
        )

    def test_3_built_tested_and_judged(self):
        built = self.run_here(
            [
                "cmake",
                "--build",
                str(self.build),
                "--target",
                f"test.solution.{CHAPTER}.{DUMMY}",
                f"exercise.{CHAPTER}.{DUMMY}",
            ]
        )
        self.assertEqual(built.returncode, 0, built.stdout[-3000:])
        self.assertTrue((self.build / "bin" / f"test.solution.{CHAPTER}.{DUMMY}").is_file())
        # make check's checker, on the stage (here as on a machine without a GPU: its tests are
        # reported untested, then what it teaches is judged).
        checked = self.check_stage(f"{CHAPTER}/{DUMMY[:4]}")
        out = checked.stdout
        self.assertEqual(checked.returncode, 0, out[-3000:] + checked.stderr[-2000:])
        self.assertIn(f"check: STAGE={CHAPTER}/{DUMMY[:4]} selects solution/{CHAPTER}/{DUMMY}", out)
        self.assertIn(f"what solution/{CHAPTER}/{DUMMY} teaches: {LESSON}", out)
        self.assertIn("solution stages: 1 compiles; untested (no GPU)", out)

    def test_4_an_exercise_that_stops_compiling_is_said_not_to(self):
        # Its object built once (test 3), then an edit that does not compile: the build re-runs
        # CMake (the stages are globbed), where ninja's dry run sees nothing; the check must still
        # say the stage does not compile, not "compiles" from the old object.
        exercise = self.root / "chapters" / CHAPTER / f"{DUMMY}.cu"
        kept = exercise.read_text()
        try:
            exercise.write_text(kept + '\nstatic_assert(false, "a student\'s typo");\n')
            checked = self.check_stage(f"exercise/{CHAPTER}/{DUMMY}")
        finally:
            exercise.write_text(kept)
        out = checked.stdout
        self.assertNotEqual(checked.returncode, 0, out[-3000:])
        self.assertIn("exercise stages: 1 does not compile", out, out[-3000:])
        self.assertNotIn("compiles; untested", out)


if __name__ == "__main__":
    unittest.main()
