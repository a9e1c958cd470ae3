"""Tests for harness/exercises.py (check, generate, reset) on temporary course trees.

Nothing here reads or writes the repository's own chapters/: every test builds a small course
(solutions/, chapters/, backups/) under a temporary directory and points the tool at it."""

import contextlib
import datetime
import io
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

HARNESS = Path(__file__).resolve().parent.parent
REPO = HARNESS.parent
sys.path.insert(0, str(HARNESS))
import exercises  # noqa: E402

FIRST = """\
// 01_first: a stage with two regions, the first hint over two lines.
#include <cstdio>

__global__ void fill(float *out) {
  // EXERCISE BEGIN: write 1 to out[threadIdx.x]; the hint goes on
  // over a second line.
  out[threadIdx.x] = 1.0f;
  // EXERCISE END
}

void launch(float *out) {
  // EXERCISE BEGIN: launch fill on one block of 32 threads.
  fill<<<1, 32>>>(out);
  // EXERCISE END
}
"""

SECOND = """\
// 02_second: one region.
int twice(int x) {
  // EXERCISE BEGIN: return twice x.
  return 2 * x;
  // EXERCISE END
}
"""

STAGE = "01-test/01_first"


def run(root, *argv):
    """exercises.main(['--root', root, *argv]) -> (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = exercises.main(["--root", str(root), *argv])
    return status, out.getvalue(), err.getvalue()


def run_cli(root, *argv):
    """The script itself, as `make` runs it -> (status, stdout + stderr)."""
    done = subprocess.run([sys.executable, str(HARNESS / "exercises.py"), "--root", str(root), *argv],
                          capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


class Course(unittest.TestCase):
    """A temporary course: solutions/01-test/{01_first,02_second}.cu and their generated exercises."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="exercises-test-"))
        self.addCleanup(shutil.rmtree, self.root)
        (self.root / "solutions" / "01-test").mkdir(parents=True)
        self.solution = self.root / "solutions" / "01-test" / "01_first.cu"
        self.exercise = self.root / "chapters" / "01-test" / "01_first.cu"
        self.solution.write_text(FIRST)
        (self.root / "solutions" / "01-test" / "02_second.cu").write_text(SECOND)
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        self.stub = self.exercise.read_text()

    def backups(self):
        folder = self.root / "backups" / "01-test"
        return sorted(folder.iterdir()) if folder.exists() else []

    def student_writes(self, first_body, second_body):
        """The exercise with the two regions' bodies of 01_first replaced."""
        text = self.stub.replace("  COURSE_TODO();\n", "\0", 2)
        text = text.replace("\0", first_body, 1).replace("\0", second_body, 1)
        self.exercise.write_text(text)
        return text

    def assertInSync(self):
        status, out, _ = run(self.root, "check")
        self.assertEqual(status, 0, out)
        self.assertIn("exercises in sync: 2 stage files", out)

    def assertOutOfSync(self):
        status, out, _ = run(self.root, "check")
        self.assertEqual(status, 1, out)
        return out


class GeneratedStubTest(Course):
    def test_stub_keeps_hints_and_replaces_bodies(self):
        self.assertIn("  // EXERCISE BEGIN: write 1 to out[threadIdx.x]; the hint goes on\n"
                      "  // over a second line.\n  COURSE_TODO();\n  // EXERCISE END\n", self.stub)
        self.assertNotIn("fill<<<", self.stub)
        self.assertInSync()

    def test_generate_twice_changes_nothing(self):
        status, out, _ = run(self.root, "generate")
        self.assertEqual((status, out), (0, ""))
        self.assertEqual(self.exercise.read_text(), self.stub)
        self.assertEqual(self.backups(), [])


class CommentsInRegionsTest(Course):
    """A student's // lines at the start of a region are the student's, not the hint's."""

    def test_comment_at_region_start_is_in_sync_and_survives_generate(self):
        text = self.student_writes("  // my note: one thread per element\n  out[threadIdx.x] = 1.0f;\n",
                                   "  // launch it\n  // (32 threads)\n  fill<<<1, 32>>>(out);\n")
        self.assertInSync()
        status, out, _ = run(self.root, "generate")
        self.assertEqual((status, out), (0, ""))
        self.assertEqual(self.exercise.read_text(), text)
        self.assertEqual(self.backups(), [])

    def test_comment_before_the_stub_survives_generate(self):
        text = self.student_writes("  // idea: a grid-stride loop?\n  COURSE_TODO();\n", "  COURSE_TODO();\n")
        self.assertInSync()
        run(self.root, "generate")
        self.assertEqual(self.exercise.read_text(), text)

    def test_comment_survives_generate_after_the_solution_changes_outside(self):
        self.student_writes("  // my note\n  out[threadIdx.x] = 1.0f;\n", "  COURSE_TODO();\n")
        self.solution.write_text(FIRST.replace("#include <cstdio>", "#include <cstdio>\n#include <cstdint>"))
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        self.assertIn("  // my note\n  out[threadIdx.x] = 1.0f;\n", self.exercise.read_text())
        self.assertIn("#include <cstdint>", self.exercise.read_text())
        self.assertEqual(len(self.backups()), 1)  # the student had written something: saved first
        self.assertIn("outside its EXERCISE regions changed", out)
        self.assertInSync()

    def test_check_stays_strict_outside_the_regions(self):
        self.student_writes("  // my note\n  out[threadIdx.x] = 1.0f;\n", "  COURSE_TODO();\n")
        text = self.exercise.read_text()
        self.exercise.write_text(text.replace("over a second line.", "over a 2nd line."))
        self.assertIn("differs from solutions/01-test/01_first.cu", self.assertOutOfSync())
        self.exercise.write_text(text.replace("  // over a second line.", "    // over a second line."))
        self.assertOutOfSync()
        self.exercise.write_text(text.replace("#include <cstdio>", "#include <stdio.h>"))
        self.assertOutOfSync()
        self.exercise.write_text(text.replace("  // EXERCISE END\n}\n\nvoid", "}\n\nvoid", 1))
        self.assertIn("01_first.cu:12: EXERCISE BEGIN inside the region opened on line 5", self.assertOutOfSync())
        self.exercise.write_text(text)
        self.assertInSync()


class ResetTest(Course):
    def test_reset_saves_the_students_text_then_restores_the_stub(self):
        mine = self.student_writes("  // mine\n  out[threadIdx.x] = 1.0f;\n", "  fill<<<1, 32>>>(out);\n")
        status, out, err = run(self.root, "reset", STAGE)
        self.assertEqual((status, err), (0, ""))
        (saved,) = self.backups()
        self.assertRegex(saved.name, r"^01_first\.\d{8}-\d{6}\.cu$")
        self.assertEqual(out, f"saved your version of {STAGE} to backups/01-test/{saved.name}; "
                              f"reset chapters/01-test/01_first.cu to the stub\n")
        self.assertEqual(saved.read_text(), mine)
        self.assertEqual(self.exercise.read_text(), self.stub)
        self.assertInSync()

    def test_reset_of_the_stub_makes_no_backup(self):
        self.student_writes("  return;\n", "  COURSE_TODO();\n")
        run(self.root, "reset", STAGE)
        status, out, _ = run(self.root, "reset", STAGE)
        self.assertEqual(status, 0)
        self.assertEqual(out, "chapters/01-test/01_first.cu is already the stub: nothing to save, nothing reset\n")
        self.assertEqual(len(self.backups()), 1)
        self.assertEqual(self.exercise.read_text(), self.stub)

    def test_backups_in_the_same_second_never_overwrite(self):
        stamp = datetime.datetime(2026, 11, 23, 8, 15, 2)
        with mock.patch.object(exercises, "now", return_value=stamp):
            first = self.student_writes("  // attempt 1\n", "  COURSE_TODO();\n")
            run(self.root, "reset", STAGE)
            second = self.student_writes("  // attempt 2\n", "  COURSE_TODO();\n")
            status, out, _ = run(self.root, "reset", STAGE)
        self.assertEqual(status, 0)
        self.assertEqual([p.name for p in self.backups()],
                         ["01_first.20261123-081502-2.cu", "01_first.20261123-081502.cu"])
        self.assertEqual((self.backups()[1].read_text(), self.backups()[0].read_text()), (first, second))
        self.assertIn("backups/01-test/01_first.20261123-081502-2.cu", out)

    def test_stage_forms(self):
        for form in (STAGE, f"exercise/{STAGE}", f"chapters/{STAGE}.cu", f"./chapters/{STAGE}.cu",
                     str(self.exercise)):
            with self.subTest(form=form):
                self.student_writes("  // try\n", "  COURSE_TODO();\n")
                status, out, _ = run(self.root, "reset", form)
                self.assertEqual(status, 0)
                self.assertTrue(out.startswith(f"saved your version of {STAGE} to backups/01-test/01_first."), out)
                self.assertEqual(self.exercise.read_text(), self.stub)

    def test_missing_exercise_is_written(self):
        self.exercise.unlink()
        status, out, _ = run(self.root, "reset", STAGE)
        self.assertEqual((status, out), (0, "chapters/01-test/01_first.cu was missing; wrote the stub\n"))
        self.assertEqual(self.exercise.read_text(), self.stub)

    def test_bad_stage_names_exit_2_with_one_line(self):
        before = self.exercise.read_text()
        for arg, says in (("", "say which stage"), ("nope", "the chapters are 01-test"),
                          ("01-test/01", "01-test has 01_first, 02_second"), ("01-test", "01-test has 01_first, 02_second"),
                          ("solutions/01-test/01_first.cu", "no stage"), ("../01-test/01_first", "no stage"),
                          ("-x", "no stage '-x'")):
            with self.subTest(arg=arg):
                status, output = run_cli(self.root, "reset", "--", arg)
                self.assertEqual(status, 2, output)
                self.assertEqual(len(output.splitlines()), 1, output)
                self.assertIn(says, output)
                self.assertIn("make reset STAGE=", output)
                self.assertNotIn("usage:", output)
        status, output = run_cli(self.root, "reset")  # no stage at all
        self.assertEqual((status, len(output.splitlines())), (2, 1), output)
        self.assertEqual(self.exercise.read_text(), before)
        self.assertEqual(self.backups(), [])

    @unittest.skipUnless(shutil.which("make"), "make not installed")
    def test_make_reset(self):
        (self.root / "harness").mkdir()
        shutil.copy(HARNESS / "exercises.py", self.root / "harness")
        shutil.copy(REPO / "Makefile", self.root)
        self.student_writes("  // via make\n", "  COURSE_TODO();\n")
        done = subprocess.run(["make", "-s", "reset", f"STAGE=exercise/{STAGE}"], cwd=self.root,
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertTrue(done.stdout.startswith(f"saved your version of {STAGE} to backups/"), done.stdout)
        self.assertEqual(self.exercise.read_text(), self.stub)
        for stage in ("", "01-test/9"):
            done = subprocess.run(["make", "-s", "reset", f"STAGE={stage}"], cwd=self.root,
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 2)
            self.assertEqual(done.stdout, "")
            self.assertTrue(done.stderr.startswith("reset: "), done.stderr)
            self.assertNotIn("usage:", done.stderr)


class GenerateKeepsWorkTest(Course):
    def test_solution_gains_a_region(self):
        mine = self.student_writes("  // one per thread\n  out[threadIdx.x] = 1.0f;\n", "  fill<<<1, 32>>>(out);\n")
        self.solution.write_text(FIRST.replace("void launch(float *out) {\n", """\
void clear(float *out) {
  // EXERCISE BEGIN: zero out[0, 32).
  cudaMemset(out, 0, 32 * sizeof(float));
  // EXERCISE END
}

void launch(float *out) {
"""))
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        (saved,) = self.backups()
        self.assertEqual(saved.read_text(), mine)
        self.assertIn(f"saved your version of chapters/01-test/01_first.cu to backups/01-test/{saved.name}: "
                      "the solution has 3 EXERCISE regions, this file had 2", out)
        self.assertIn('region 2 "zero out[0, 32)." is new: it starts as the stub', out)
        self.assertIn('kept your region "launch fill on one block of 32 threads." (same hint)', out)
        text = self.exercise.read_text()
        self.assertIn("  // over a second line.\n  // one per thread\n  out[threadIdx.x] = 1.0f;\n", text)
        self.assertIn("  // EXERCISE BEGIN: zero out[0, 32).\n  COURSE_TODO();\n", text)
        self.assertIn("  // EXERCISE BEGIN: launch fill on one block of 32 threads.\n  fill<<<1, 32>>>(out);\n", text)
        self.assertInSync()
        self.assertEqual(run(self.root, "generate")[1], "")  # settled: no second backup
        self.assertEqual(len(self.backups()), 1)

    def test_changed_hint_keeps_the_body_by_position(self):
        self.student_writes("  // my note\n  out[threadIdx.x] = 1.0f;\n", "  COURSE_TODO();\n")
        self.solution.write_text(FIRST.replace("write 1 to out[threadIdx.x]", "store 1.0f in out[threadIdx.x]"))
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        self.assertEqual(len(self.backups()), 1)
        self.assertIn("the hint of region 1 changed in the solution", out)
        self.assertIn("by position; the hint changed", out)
        self.assertIn("store 1.0f in out[threadIdx.x]", self.exercise.read_text())
        self.assertIn("  // my note\n  out[threadIdx.x] = 1.0f;\n", self.exercise.read_text())
        self.assertInSync()

    def test_removed_region_is_only_in_the_backup_and_named(self):
        self.student_writes("  out[threadIdx.x] = 1.0f;\n", "  fill<<<1, 32>>>(out);  // mine\n")
        self.solution.write_text(FIRST.replace(
            "  // EXERCISE BEGIN: write 1 to out[threadIdx.x]; the hint goes on\n  // over a second line.\n", "")
            .replace("  out[threadIdx.x] = 1.0f;\n  // EXERCISE END\n", "  out[threadIdx.x] = 1.0f;\n", 1))
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        (saved,) = self.backups()
        self.assertIn("out[threadIdx.x] = 1.0f;", saved.read_text())
        self.assertIn('your region 1 "write 1 to out[threadIdx.x]; the hint goes on" has no place', out)
        self.assertIn("  fill<<<1, 32>>>(out);  // mine\n", self.exercise.read_text())
        self.assertInSync()

    def test_stubs_only_are_regenerated_without_backup(self):
        self.solution.write_text(FIRST + "\nvoid extra() {\n  // EXERCISE BEGIN: nothing.\n  return;\n  // EXERCISE END\n}\n")
        status, out, _ = run(self.root, "generate")
        self.assertEqual((status, out), (0, "wrote chapters/01-test/01_first.cu\n"))
        self.assertEqual(self.backups(), [])
        self.assertInSync()

    def test_unpaired_markers_are_saved_then_stubbed(self):
        mine = self.student_writes("  out[threadIdx.x] = 1.0f;\n", "  fill<<<1, 32>>>(out);\n")
        self.exercise.write_text(mine.replace("  // EXERCISE END\n", "", 1))
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        (saved,) = self.backups()
        self.assertEqual(saved.read_text(), mine.replace("  // EXERCISE END\n", "", 1))
        self.assertIn("its EXERCISE markers do not pair up", out)
        self.assertEqual(self.exercise.read_text(), self.stub)


class RealCourseTest(unittest.TestCase):
    """The repository's own solutions/ and chapters/, copied: in sync, and generate changes nothing."""

    def test_copy_of_the_course(self):
        root = Path(tempfile.mkdtemp(prefix="exercises-real-"))
        self.addCleanup(shutil.rmtree, root)
        for folder in ("solutions", "chapters"):
            shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("sass", "*.png"))
        before = {p: p.read_bytes() for p in (root / "chapters").glob("*/*.cu")}
        status, out, _ = run(root, "check")
        self.assertEqual(status, 0, out)
        status, out, _ = run(root, "generate")
        self.assertEqual((status, out), (0, ""))
        self.assertEqual({p: p.read_bytes() for p in (root / "chapters").glob("*/*.cu")}, before)
        self.assertFalse((root / "backups").exists())


LESSON = """\
// block_sum.cuh: taught by stage 01_first.
#pragma once
__device__ int block_sum(int x) {
  // EXERCISE BEGIN: sum x over the block.
  return x;
  // EXERCISE END
}
"""


class LessonHeaderTest(Course):
    """A lesson header in solutions/<chapter>/ is mirrored, stubbed, like a stage file."""

    def setUp(self):
        super().setUp()
        (self.root / "solutions" / "01-test" / "block_sum.cuh").write_text(LESSON)
        self.header = self.root / "chapters" / "01-test" / "block_sum.cuh"

    def test_generate_stubs_it_and_check_counts_it(self):
        status, out, _ = run(self.root, "generate")
        self.assertEqual((status, out), (0, "wrote chapters/01-test/block_sum.cuh\n"))
        self.assertIn("  // EXERCISE BEGIN: sum x over the block.\n  COURSE_TODO();\n", self.header.read_text())
        status, out, _ = run(self.root, "check")
        self.assertEqual(status, 0, out)
        self.assertIn("2 stage files and 1 lesson headers", out)

    def test_edit_outside_its_region_is_reported(self):
        run(self.root, "generate")
        self.header.write_text(self.header.read_text().replace("int x", "long x"))
        out = self.assertOutOfSync()
        self.assertIn("chapters/01-test/block_sum.cuh differs from solutions/01-test/block_sum.cuh", out)

    def test_reset_by_file_name_keeps_the_suffix(self):
        run(self.root, "generate")
        stub = self.header.read_text()
        self.header.write_text(stub.replace("COURSE_TODO();", "return 2 * x;"))
        with mock.patch.object(exercises, "now", return_value=datetime.datetime(2026, 11, 23, 8, 15, 2)):
            status, out, _ = run(self.root, "reset", "01-test/block_sum.cuh")
        self.assertEqual(status, 0, out)
        self.assertEqual(self.header.read_text(), stub)
        self.assertEqual([p.name for p in self.backups()], ["block_sum.20261123-081502.cuh"])

    def test_a_chapter_header_must_not_include_it(self):
        run(self.root, "generate")
        (self.root / "chapters" / "01-test" / "common.cuh").write_text('#include "block_sum.cuh"\n')
        out = self.assertOutOfSync()
        self.assertIn("chapters/01-test/common.cuh includes the lesson header block_sum.cuh", out)


if __name__ == "__main__":
    unittest.main()
