"""Tests for harness/hints.py (make hint) and the hints column of make progress: the ladder read
from a chapter's lessons.toml, one rung per call, the count recorded in progress.json beside what
check.py writes there, and a wrong stage as one line with status 2. A temporary tree, no build."""

import argparse
import contextlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
REPO = HARNESS.parent
sys.path.insert(0, str(HARNESS))
import course  # noqa: E402
import hints  # noqa: E402

LESSONS = """[chapter]
test = "test_demo.cpp"

[01_first]
lesson = "the first idea"
hints = [
'''Book: 1.1. Concept: the first.''',
'''The approach, in words that are long enough to be wrapped over more than one line of the terminal when they are shown to the student.''',
'''Near-code:

    for (int i = 0; i < n; ++i)
      sum += in[i];''',
]

[02_second]
lesson = "no ladder yet"
"""


def tree():
    root = Path(tempfile.mkdtemp(prefix="course-hints-"))
    for side in ("chapters", "solutions"):
        (root / side / "99-demo").mkdir(parents=True)
        for stage in ("01_first", "02_second"):
            (root / side / "99-demo" / f"{stage}.cu").write_text("// a stage\n")
    (root / "chapters" / "99-demo" / "lessons.toml").write_text(LESSONS)
    return root


def run(root, *argv):
    out = io.StringIO()
    parser_argv = list(argv)
    with contextlib.redirect_stdout(out):
        ns = argparse.Namespace(
            stage=parser_argv[0],
            all="--all" in parser_argv,
            n=int(parser_argv[parser_argv.index("--n") + 1]) if "--n" in parser_argv else None,
            build=str(root / "build"),
        )
        try:
            status = hints.show(ns, root)
        except course.UsageError as err:
            print(err)
            status = err.status
    return status, out.getvalue()


class HintLadderTest(unittest.TestCase):
    def setUp(self):
        self.root = tree()
        self.addCleanup(shutil.rmtree, self.root)

    def taken(self):
        return json.loads((self.root / "build" / "progress.json").read_text())["hints"]

    def test_one_rung_per_call_then_all_taken(self):
        status, out = run(self.root, "exercise/99-demo/01_first")
        self.assertEqual(status, 0)
        self.assertIn("hint 1 of 3:", out)
        self.assertIn("Book: 1.1", out)
        self.assertNotIn("hint 2 of 3", out)
        self.assertEqual(self.taken(), {"exercise/99-demo/01_first": 1})
        status, out = run(self.root, "99-demo/01")  # the same stage, named short
        self.assertIn("hint 2 of 3:", out)
        self.assertTrue(all(len(line) <= 100 for line in out.splitlines()), out)
        status, out = run(self.root, "exercise/99-demo/01_first")
        self.assertIn("hint 3 of 3:", out)
        self.assertIn(
            "    for (int i = 0; i < n; ++i)\n      sum += in[i];", out
        )  # code kept as written
        status, out = run(self.root, "exercise/99-demo/01_first")
        self.assertEqual(status, 0)
        self.assertIn("all 3 hints", out)
        self.assertEqual(self.taken(), {"exercise/99-demo/01_first": 3})

    def test_all_and_n_reshow_without_counting(self):
        run(self.root, "exercise/99-demo/01_first")
        run(self.root, "exercise/99-demo/01_first")
        status, out = run(self.root, "exercise/99-demo/01_first", "--all")
        self.assertEqual(status, 0)
        self.assertIn("hint 1 of 3:", out)
        self.assertIn("hint 2 of 3:", out)
        self.assertNotIn("hint 3 of 3", out)
        status, out = run(self.root, "exercise/99-demo/01_first", "--n", "1")
        self.assertEqual(status, 0)
        self.assertIn("hint 1 of 3:", out)
        status, out = run(self.root, "exercise/99-demo/01_first", "--n", "3")
        self.assertEqual(status, 2, "a hint not yet reached is not shown by N=")
        self.assertEqual(len(out.splitlines()), 1)
        self.assertEqual(self.taken(), {"exercise/99-demo/01_first": 2})

    def test_keeps_what_check_records(self):
        build = self.root / "build"
        build.mkdir()
        (build / "progress.json").write_text(
            json.dumps({"stages": {"exercise/99-demo/01_first": {"state": "TODO"}}})
        )
        run(self.root, "exercise/99-demo/01_first")
        data = json.loads((build / "progress.json").read_text())
        self.assertEqual(data["stages"], {"exercise/99-demo/01_first": {"state": "TODO"}})
        self.assertEqual(data["hints"], {"exercise/99-demo/01_first": 1})

    def test_bad_stage_is_one_line_status_2(self):
        for arg in ("", "99-demo/07_nope", "wrong/99-demo/01_first", "nope"):
            status, out = run(self.root, arg)
            self.assertEqual(status, 2, arg)
            self.assertEqual(len(out.strip().splitlines()), 1, out)
            self.assertTrue(out.startswith("hint: "), out)

    def test_stage_without_ladder(self):
        status, out = run(self.root, "exercise/99-demo/02_second")
        self.assertEqual(status, 1)
        self.assertIn("no hints yet", out)
        self.assertFalse((self.root / "build" / "progress.json").exists())

    def test_malformed_ladder(self):
        path = self.root / "chapters" / "99-demo" / "lessons.toml"
        path.write_text(LESSONS.replace('lesson = "no ladder yet"', 'hints = "one string"'))
        status, out = run(self.root, "exercise/99-demo/02_second")
        self.assertEqual(status, 2)
        self.assertIn("hints must be a list", out)


class CourseLaddersTest(unittest.TestCase):
    def test_every_declared_ladder_reads(self):
        """Every stage's hints, where declared, are 1 to 4 non-empty strings (course.stage_hints)."""
        for stage_id in course.stage_ids():
            ladder = course.stage_hints(stage_id)
            self.assertLessEqual(len(ladder), 4, stage_id)

    def test_chapter_12_has_a_full_ladder(self):
        for stage in course.stages("12-reduction"):
            ladder = course.stage_hints(f"12-reduction/{stage}")
            self.assertEqual(len(ladder), 3, stage)
            self.assertTrue(ladder[0].startswith(("Book:", "Beyond the book")), stage)
            self.assertIn("Near-code", ladder[2], stage)


@unittest.skipUnless(shutil.which("make"), "make not installed")
class MakeHintTest(unittest.TestCase):
    def test_bad_stage_through_make(self):
        env = {
            k: v
            for k, v in __import__("os").environ.items()
            if k
            not in (
                "MAKEFLAGS",
                "MFLAGS",
                "MAKELEVEL",
                "MAKEOVERRIDES",
                "STAGE",
                "N",
                "ALL",
                "BUILD",
            )
        }
        run_ = subprocess.run(
            ["make", "--no-print-directory", "hint", "STAGE=99-nope/01"],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=env,
        )
        self.assertEqual(run_.returncode, 2)
        self.assertEqual(run_.stdout, "")
        self.assertEqual(len(run_.stderr.splitlines()), 1, run_.stderr)
        self.assertIn("hint: no stage '99-nope/01'", run_.stderr)


if __name__ == "__main__":
    unittest.main()


SOLUTION_HEADER = """// a lesson header
__device__ int f(int x) {
  // EXERCISE BEGIN: double x.
  return 2 * x;
  // EXERCISE END
}
__device__ int g(int x) {
  // EXERCISE BEGIN: add one to x.
  return x + 1;
  // EXERCISE END
}
"""
STAGE = '#include "lesson.cuh"\n// a stage\n'


class PrerequisitesTest(unittest.TestCase):
    """make check STAGE=exercise/... names the regions of earlier stages' lesson headers that the
    stage runs and that are still stubs (hints.prerequisites), before it builds."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="course-prereq-"))
        self.addCleanup(shutil.rmtree, self.root)
        for side in ("chapters", "solutions"):
            folder = self.root / side / "99-demo"
            folder.mkdir(parents=True)
            for stage in ("01_teach", "02_use"):
                (folder / f"{stage}.cu").write_text(STAGE)
            (folder / "03_alone.cu").write_text("// no lesson header\n")
        (self.root / "solutions" / "99-demo" / "lesson.cuh").write_text(SOLUTION_HEADER)
        stub = SOLUTION_HEADER.replace("  return 2 * x;\n", "  COURSE_TODO();\n").replace(
            "  return x + 1;\n", "  COURSE_TODO();\n"
        )
        self.exercise = self.root / "chapters" / "99-demo" / "lesson.cuh"
        self.exercise.write_text(stub)

    def test_names_unwritten_regions_and_their_stage(self):
        found = hints.prerequisites("99-demo/02_use", self.root)
        self.assertEqual(
            [(h, k, t) for h, k, _, t in found],
            [("lesson.cuh", 1, "01_teach"), ("lesson.cuh", 2, "01_teach")],
        )
        lines = hints.prerequisite_lines("exercise/99-demo/02_use", self.root)
        self.assertIn("2 region(s)", lines[0])
        self.assertIn(
            'chapters/99-demo/lesson.cuh, region 1 "double x." (taught by 01_teach)', lines[-2]
        )

    def test_the_teaching_stage_and_others_have_none(self):
        self.assertEqual(
            hints.prerequisites("99-demo/01_teach", self.root),
            [],
            "its own lesson, not a prerequisite",
        )
        self.assertEqual(hints.prerequisites("99-demo/03_alone", self.root), [])
        self.assertEqual(
            hints.prerequisite_lines("solution/99-demo/02_use", self.root),
            [],
            "the reference needs none",
        )

    def test_a_written_region_is_not_named(self):
        self.exercise.write_text(
            self.exercise.read_text().replace("  COURSE_TODO();\n", "  return 2 * x;\n", 1)
        )
        found = hints.prerequisites("99-demo/02_use", self.root)
        self.assertEqual([(h, k) for h, k, _, _ in found], [("lesson.cuh", 2)])
        self.exercise.write_text(SOLUTION_HEADER)
        self.assertEqual(hints.prerequisites("99-demo/02_use", self.root), [])
        self.assertEqual(hints.prerequisite_lines("exercise/99-demo/02_use", self.root), [])

    def test_chapter_13_stage_06_in_this_tree(self):
        """The case that cost a student three hours: 06 runs the headers of 02 to 05."""
        found = hints.prerequisites("13-scan/06_warp_scans")
        teachers = {t for *_, t in found}
        self.assertTrue(
            teachers <= {"02_scan_then_fan", "03_reduce_then_scan", "04_two_level", "05_vector_io"},
            teachers,
        )
