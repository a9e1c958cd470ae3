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
    done = subprocess.run(
        [sys.executable, str(HARNESS / "exercises.py"), "--root", str(root), *argv],
        capture_output=True,
        text=True,
    )
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
        self.assertIn(
            "  // EXERCISE BEGIN: write 1 to out[threadIdx.x]; the hint goes on\n"
            "  // over a second line.\n  COURSE_TODO();\n  // EXERCISE END\n",
            self.stub,
        )
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
        text = self.student_writes(
            "  // my note: one thread per element\n  out[threadIdx.x] = 1.0f;\n",
            "  // launch it\n  // (32 threads)\n  fill<<<1, 32>>>(out);\n",
        )
        self.assertInSync()
        status, out, _ = run(self.root, "generate")
        self.assertEqual((status, out), (0, ""))
        self.assertEqual(self.exercise.read_text(), text)
        self.assertEqual(self.backups(), [])

    def test_comment_before_the_stub_survives_generate(self):
        text = self.student_writes(
            "  // idea: a grid-stride loop?\n  COURSE_TODO();\n", "  COURSE_TODO();\n"
        )
        self.assertInSync()
        run(self.root, "generate")
        self.assertEqual(self.exercise.read_text(), text)

    def test_comment_survives_generate_after_the_solution_changes_outside(self):
        self.student_writes("  // my note\n  out[threadIdx.x] = 1.0f;\n", "  COURSE_TODO();\n")
        self.solution.write_text(
            FIRST.replace("#include <cstdio>", "#include <cstdio>\n#include <cstdint>")
        )
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
        self.exercise.write_text(
            text.replace("  // over a second line.", "    // over a second line.")
        )
        self.assertOutOfSync()
        self.exercise.write_text(text.replace("#include <cstdio>", "#include <stdio.h>"))
        self.assertOutOfSync()
        self.exercise.write_text(text.replace("  // EXERCISE END\n}\n\nvoid", "}\n\nvoid", 1))
        self.assertIn(
            "01_first.cu:12: EXERCISE BEGIN inside the region opened on line 5",
            self.assertOutOfSync(),
        )
        self.exercise.write_text(text)
        self.assertInSync()


class ResetTest(Course):
    def test_reset_saves_the_students_text_then_restores_the_stub(self):
        mine = self.student_writes(
            "  // mine\n  out[threadIdx.x] = 1.0f;\n", "  fill<<<1, 32>>>(out);\n"
        )
        status, out, err = run(self.root, "reset", STAGE)
        self.assertEqual((status, err), (0, ""))
        (saved,) = self.backups()
        self.assertRegex(saved.name, r"^01_first\.\d{8}-\d{6}\.cu$")
        self.assertEqual(
            out,
            f"saved your version of {STAGE} to backups/01-test/{saved.name}; "
            f"reset chapters/01-test/01_first.cu to the stub; "
            f"to undo: cp backups/01-test/{saved.name} "
            f"chapters/01-test/01_first.cu\n",
        )
        self.assertEqual(saved.read_text(), mine)
        self.assertEqual(self.exercise.read_text(), self.stub)
        self.assertInSync()

    def test_the_line_says_how_to_undo_the_reset(self):
        mine = self.student_writes("  out[threadIdx.x] = 2.0f;\n", "  fill<<<1, 32>>>(out);\n")
        _, out, _ = run(self.root, "reset", STAGE)
        self.assertEqual(out.count("\n"), 1, out)
        undo = out.strip().split("; to undo: ", 1)[1]
        self.assertTrue(undo.startswith("cp backups/"), undo)
        # The command as printed, run from the course's root, brings the student's text back.
        subprocess.run(undo, shell=True, cwd=self.root, check=True)
        self.assertEqual(self.exercise.read_text(), mine)

    def test_reset_of_the_stub_makes_no_backup(self):
        self.student_writes("  return;\n", "  COURSE_TODO();\n")
        run(self.root, "reset", STAGE)
        status, out, _ = run(self.root, "reset", STAGE)
        self.assertEqual(status, 0)
        self.assertEqual(
            out,
            "chapters/01-test/01_first.cu is already the stub: nothing to save, nothing reset\n",
        )
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
        self.assertEqual(
            [p.name for p in self.backups()],
            ["01_first.20261123-081502-2.cu", "01_first.20261123-081502.cu"],
        )
        self.assertEqual(
            (self.backups()[1].read_text(), self.backups()[0].read_text()), (first, second)
        )
        self.assertIn("backups/01-test/01_first.20261123-081502-2.cu", out)

    def test_stage_forms(self):
        for form in (
            STAGE,
            f"exercise/{STAGE}",
            f"chapters/{STAGE}.cu",
            f"./chapters/{STAGE}.cu",
            str(self.exercise),
        ):
            with self.subTest(form=form):
                self.student_writes("  // try\n", "  COURSE_TODO();\n")
                status, out, _ = run(self.root, "reset", form)
                self.assertEqual(status, 0)
                self.assertTrue(
                    out.startswith(f"saved your version of {STAGE} to backups/01-test/01_first."),
                    out,
                )
                self.assertEqual(self.exercise.read_text(), self.stub)

    def test_missing_exercise_is_written(self):
        self.exercise.unlink()
        status, out, _ = run(self.root, "reset", STAGE)
        self.assertEqual(
            (status, out), (0, "chapters/01-test/01_first.cu was missing; wrote the stub\n")
        )
        self.assertEqual(self.exercise.read_text(), self.stub)

    def test_bad_stage_names_exit_2_with_one_line(self):
        before = self.exercise.read_text()
        for arg, says in (
            ("", "say which stage"),
            ("nope", "the chapters are 01-test"),
            ("01-test/01", "01-test has 01_first, 02_second"),
            ("01-test", "01-test has 01_first, 02_second"),
            ("solutions/01-test/01_first.cu", "no stage"),
            ("../01-test/01_first", "no stage"),
            ("-x", "no stage '-x'"),
        ):
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
        # exercises.py reads the stage grammar from course.py, which make also asks first
        # (course.py validate: a wrong STAGE stops make with the same line, through $(error)).
        for tool in ("exercises.py", "course.py"):
            shutil.copy(HARNESS / tool, self.root / "harness")
        shutil.copy(REPO / "Makefile", self.root)
        self.student_writes("  // via make\n", "  COURSE_TODO();\n")
        done = subprocess.run(
            ["make", "-s", "reset", f"STAGE=exercise/{STAGE}"],
            cwd=self.root,
            capture_output=True,
            text=True,
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertTrue(
            done.stdout.startswith(f"saved your version of {STAGE} to backups/"), done.stdout
        )
        self.assertEqual(self.exercise.read_text(), self.stub)
        for stage in ("", "01-test/9"):
            done = subprocess.run(
                ["make", "-s", "reset", f"STAGE={stage}"],
                cwd=self.root,
                capture_output=True,
                text=True,
            )
            self.assertEqual(done.returncode, 2)
            self.assertEqual(done.stdout, "")
            self.assertIn("*** reset: ", done.stderr)
            self.assertNotIn("usage:", done.stderr)


class GenerateKeepsWorkTest(Course):
    def test_solution_gains_a_region(self):
        mine = self.student_writes(
            "  // one per thread\n  out[threadIdx.x] = 1.0f;\n", "  fill<<<1, 32>>>(out);\n"
        )
        self.solution.write_text(
            FIRST.replace(
                "void launch(float *out) {\n",
                """\
void clear(float *out) {
  // EXERCISE BEGIN: zero out[0, 32).
  cudaMemset(out, 0, 32 * sizeof(float));
  // EXERCISE END
}

void launch(float *out) {
""",
            )
        )
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        (saved,) = self.backups()
        self.assertEqual(saved.read_text(), mine)
        self.assertIn(
            f"saved your version of chapters/01-test/01_first.cu to backups/01-test/{saved.name}: "
            "the solution has 3 EXERCISE regions, this file had 2",
            out,
        )
        self.assertIn('region 2 "zero out[0, 32)." is new: it starts as the stub', out)
        self.assertIn('kept your region "launch fill on one block of 32 threads." (same hint)', out)
        text = self.exercise.read_text()
        self.assertIn(
            "  // over a second line.\n  // one per thread\n  out[threadIdx.x] = 1.0f;\n", text
        )
        self.assertIn("  // EXERCISE BEGIN: zero out[0, 32).\n  COURSE_TODO();\n", text)
        self.assertIn(
            "  // EXERCISE BEGIN: launch fill on one block of 32 threads.\n  fill<<<1, 32>>>(out);\n",
            text,
        )
        self.assertInSync()
        self.assertEqual(run(self.root, "generate")[1], "")  # settled: no second backup
        self.assertEqual(len(self.backups()), 1)

    def test_changed_hint_keeps_the_body_by_position(self):
        self.student_writes("  // my note\n  out[threadIdx.x] = 1.0f;\n", "  COURSE_TODO();\n")
        self.solution.write_text(
            FIRST.replace("write 1 to out[threadIdx.x]", "store 1.0f in out[threadIdx.x]")
        )
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
        self.solution.write_text(
            FIRST.replace(
                "  // EXERCISE BEGIN: write 1 to out[threadIdx.x]; the hint goes on\n  // over a second line.\n",
                "",
            ).replace(
                "  out[threadIdx.x] = 1.0f;\n  // EXERCISE END\n", "  out[threadIdx.x] = 1.0f;\n", 1
            )
        )
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        (saved,) = self.backups()
        self.assertIn("out[threadIdx.x] = 1.0f;", saved.read_text())
        self.assertIn(
            'your region 1 "write 1 to out[threadIdx.x]; the hint goes on" has no place', out
        )
        self.assertIn("  fill<<<1, 32>>>(out);  // mine\n", self.exercise.read_text())
        self.assertInSync()

    def test_stubs_only_are_regenerated_without_backup(self):
        self.solution.write_text(
            FIRST
            + "\nvoid extra() {\n  // EXERCISE BEGIN: nothing.\n  return;\n  // EXERCISE END\n}\n"
        )
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


# Hint rewrites of FIRST (issue 45 rewrites every hint): (old, new), as text.replace takes them.
ONE_TO_ONE = (
    "// EXERCISE BEGIN: launch fill on one block of 32 threads.\n",
    "// EXERCISE BEGIN: launch fill: one block, 32 threads.\n",
)
TWO_TO_ONE = (
    "// EXERCISE BEGIN: write 1 to out[threadIdx.x]; the hint goes on\n  // over a second line.\n",
    "// EXERCISE BEGIN: store 1.0f in out[threadIdx.x].\n",
)
# The first line stays: the old hint starts with the new one, whole.
TWO_TO_ITS_FIRST = (
    "// EXERCISE BEGIN: write 1 to out[threadIdx.x]; the hint goes on\n  // over a second line.\n",
    "// EXERCISE BEGIN: write 1 to out[threadIdx.x]; the hint goes on\n",
)
ONE_TO_THREE = (
    "// EXERCISE BEGIN: launch fill on one block of 32 threads.\n",
    "// EXERCISE BEGIN: launch fill on one block\n  // of 32 threads, one per element\n"
    "  // (the grid is one block).\n",
)
REWRITES = {
    "one to one": ONE_TO_ONE,
    "two to one": TWO_TO_ONE,
    "two to its first": TWO_TO_ITS_FIRST,
    "one to three": ONE_TO_THREE,
}
# A student's bodies for 01_first's two regions, each opening with their own comment.
MINE = ("  // my note\n  out[threadIdx.x] = 1.0f;\n", "  // launch it\n  fill<<<1, 32>>>(out);\n")


def git(root, *argv):
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
        + ["-c", "commit.gpgsign=false", *argv],
        check=True,
        capture_output=True,
    )


@unittest.skipUnless(shutil.which("git"), "git not installed")
class HintRewriteTest(Course):
    """The solution's hint changes (reworded, fewer lines, more lines): generate writes the new
    hint into the exercise, none of the old one, and keeps what the student wrote below it. The
    old hint is known from the solution's git history (the course is a git repository)."""

    def setUp(self):
        super().setUp()
        git(self.root, "init", "-q")
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", "course")

    def rewrite(self, old, new, commit=False):
        """The solution's hint changed; -> the exercise a fresh generate writes from it."""
        text = FIRST.replace(old, new)
        self.assertNotEqual(text, FIRST)
        self.solution.write_text(text)
        if commit:
            git(self.root, "commit", "-q", "-am", "new hint")
        return exercises.exercise_text(exercises.split(text, "new"))

    def test_a_stub_takes_the_new_hint_and_stays_a_stub(self):
        for name, (old, new) in REWRITES.items():
            for commit in (False, True):
                with self.subTest(rewrite=name, committed=commit):
                    self.exercise.write_text(self.stub)
                    git(self.root, "checkout", "-q", "HEAD", "--", "solutions")
                    for saved in self.backups():
                        saved.unlink()
                    stub = self.rewrite(old, new, commit)
                    status, out, _ = run(self.root, "generate")
                    self.assertEqual((status, out), (0, "wrote chapters/01-test/01_first.cu\n"))
                    self.assertEqual(self.exercise.read_text(), stub)
                    self.assertEqual(self.backups(), [])
                    self.assertInSync()
                    if commit:
                        git(self.root, "reset", "-q", "--hard", "HEAD~1")

    def test_written_regions_keep_the_students_lines_under_the_new_hint(self):
        for name, (old, new) in REWRITES.items():
            with self.subTest(rewrite=name):
                git(self.root, "checkout", "-q", "HEAD", "--", "solutions")
                for saved in self.backups():
                    saved.unlink()
                self.student_writes(*MINE)
                self.rewrite(old, new)
                status, out, _ = run(self.root, "generate")
                self.assertEqual(status, 0)
                self.assertEqual(len(self.backups()), 1)  # the student's file, saved first
                self.assertIn("changed in the solution", out)
                self.assertNotIn("delete any that are the old hint", out)
                want = exercises.exercise_text(
                    exercises.split(self.solution.read_text(), "new"), list(MINE)
                )
                self.assertEqual(self.exercise.read_text(), want)
                self.assertInSync()
                self.assertEqual(run(self.root, "generate")[1], "")  # settled

    def test_a_renamed_stage_keeps_its_old_hints(self):
        for folder in ("solutions", "chapters"):
            git(self.root, "mv", f"{folder}/01-test/01_first.cu", f"{folder}/01-test/01_fill.cu")
        git(self.root, "commit", "-q", "-m", "rename")
        self.solution = self.root / "solutions" / "01-test" / "01_fill.cu"
        self.exercise = self.root / "chapters" / "01-test" / "01_fill.cu"
        self.solution.write_text(FIRST.replace(*TWO_TO_ONE))
        status, out, _ = run(self.root, "generate")
        self.assertEqual((status, out), (0, "wrote chapters/01-test/01_fill.cu\n"))
        self.assertEqual(
            self.exercise.read_text(),
            exercises.exercise_text(exercises.split(self.solution.read_text(), "new")),
        )

    def test_check_shows_the_old_hint_as_the_difference(self):
        self.rewrite(*TWO_TO_ONE)
        out = self.assertOutOfSync()
        self.assertIn("-  // EXERCISE BEGIN: store 1.0f in out[threadIdx.x].", out)
        self.assertIn("+  // over a second line.", out)
        self.assertNotIn("+  COURSE_TODO", out)  # the stub is the body on both sides
        self.assertNotIn("-  COURSE_TODO", out)


class HintRewriteWithoutGitTest(Course):
    """No git history (a copy of the course, an edit made twice without a commit): which // lines
    after BEGIN were the old hint is a guess. The guess never drops a line the student may have
    written without saving it first: the file is saved, even a stub, and generate says what it
    did. The guess keeps the solution's number of hint lines (a reworded hint most often keeps
    it), so a leftover line stays in the region, and a longer hint may take the student's first
    comment, which is then in the backup only."""

    def test_fewer_lines_keep_the_leftover_and_say_so(self):
        self.solution.write_text(FIRST.replace(*TWO_TO_ONE))
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        (saved,) = self.backups()
        self.assertEqual(saved.read_text(), self.stub)
        self.assertIn("its hint is none that the solution ever had", out)
        self.assertIn("delete any that are the old hint", out)
        text = self.exercise.read_text()
        self.assertIn(
            "  // EXERCISE BEGIN: store 1.0f in out[threadIdx.x].\n"
            "  // over a second line.\n  COURSE_TODO();\n",
            text,
        )
        self.assertInSync()
        self.assertEqual(run(self.root, "generate")[1], "")

    def test_more_lines_save_the_file_first(self):
        mine = self.student_writes(*MINE)
        self.solution.write_text(FIRST.replace(*ONE_TO_THREE))
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        (saved,) = self.backups()
        self.assertEqual(saved.read_text(), mine)
        self.assertIn('region 2 "launch fill on one block of 32 threads."', out)
        self.assertIn("its first 2 line(s) were taken as the old hint", out)
        self.assertIn("  fill<<<1, 32>>>(out);\n", self.exercise.read_text())
        self.assertInSync()


class RealCourseTest(unittest.TestCase):
    """The repository's own solutions/ and chapters/, copied: in sync, and generate changes nothing."""

    def test_copy_of_the_course(self):
        root = Path(tempfile.mkdtemp(prefix="exercises-real-"))
        self.addCleanup(shutil.rmtree, root)
        for folder in ("solutions", "chapters"):
            shutil.copytree(
                REPO / folder, root / folder, ignore=shutil.ignore_patterns("sass", "*.png")
            )
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
        self.assertIn(
            "  // EXERCISE BEGIN: sum x over the block.\n  COURSE_TODO();\n",
            self.header.read_text(),
        )
        status, out, _ = run(self.root, "check")
        self.assertEqual(status, 0, out)
        self.assertIn("2 stage files and 1 lesson headers", out)

    def test_edit_outside_its_region_is_reported(self):
        run(self.root, "generate")
        self.header.write_text(self.header.read_text().replace("int x", "long x"))
        out = self.assertOutOfSync()
        self.assertIn(
            "chapters/01-test/block_sum.cuh differs from solutions/01-test/block_sum.cuh", out
        )

    def test_reset_by_file_name_keeps_the_suffix(self):
        run(self.root, "generate")
        stub = self.header.read_text()
        self.header.write_text(stub.replace("COURSE_TODO();", "return 2 * x;"))
        with mock.patch.object(
            exercises, "now", return_value=datetime.datetime(2026, 11, 23, 8, 15, 2)
        ):
            status, out, _ = run(self.root, "reset", "01-test/block_sum.cuh")
        self.assertEqual(status, 0, out)
        self.assertEqual(self.header.read_text(), stub)
        self.assertEqual([p.name for p in self.backups()], ["block_sum.20261123-081502.cuh"])

    def test_a_chapter_header_must_not_include_it(self):
        run(self.root, "generate")
        (self.root / "chapters" / "01-test" / "common.cuh").write_text('#include "block_sum.cuh"\n')
        out = self.assertOutOfSync()
        self.assertIn("chapters/01-test/common.cuh includes the lesson header block_sum.cuh", out)


OPENING = """\
// SPDX-License-Identifier: BSD-3-Clause
// 03_third: the solution's opening comment, which explains the answer:
// the fence goes after the store, and the SASS shows MEMBAR.GPU.
#include <cstdio>

// A comment after the opening one: checked like code.
int third(int x) {
  // EXERCISE BEGIN: return x plus one, with a fence.
  __threadfence();
  return x + 1;
  // EXERCISE END
}
"""

TASK = """\
// SPDX-License-Identifier: BSD-3-Clause
// 03_third: the exercise's own opening comment, which sets the task
// (the idea, the book section, what to watch for),
// over three lines.
"""


class OpeningCommentTest(Course):
    """The exercise's opening comment sets the task, the solution's explains the answer: they may
    differ; everything else outside the regions is checked as before."""

    def setUp(self):
        super().setUp()
        self.third_solution = self.root / "solutions" / "01-test" / "03_third.cu"
        self.third = self.root / "chapters" / "01-test" / "03_third.cu"
        self.third_solution.write_text(OPENING)
        run(self.root, "generate")
        self.third_stub = self.third.read_text()

    def exercise_says(self, task=TASK):
        """The exercise with its own opening comment (the SPDX line and the code as generated)."""
        self.third.write_text(
            task + "#include <cstdio>\n" + self.third_stub.split("#include <cstdio>\n", 1)[1]
        )
        return self.third.read_text()

    def assertChecks(self, status_wanted):
        status, out, _ = run(self.root, "check")
        self.assertEqual(status, status_wanted, out)
        return out

    def test_split_opening(self):
        head, comment, rest = exercises.split_opening(OPENING)
        self.assertEqual(head, "// SPDX-License-Identifier: BSD-3-Clause\n")
        self.assertEqual(comment.count("\n"), 2)
        self.assertTrue(rest.startswith("#include <cstdio>\n"))
        self.assertEqual(head + comment + rest, OPENING)
        # No SPDX line: the comment starts on the first line; a region at the top ends it.
        self.assertEqual(exercises.split_opening(SECOND)[:2], ("", "// 02_second: one region.\n"))
        top = "// EXERCISE BEGIN: all of it.\nint x;\n// EXERCISE END\n"
        self.assertEqual(exercises.split_opening(top), ("", "", top))

    def test_a_new_exercise_starts_with_the_solutions_comment(self):
        self.assertTrue(self.third_stub.startswith(OPENING.split("#include")[0]))
        self.assertIn("  COURSE_TODO();\n", self.third_stub)

    def test_differing_opening_comments_are_in_sync(self):
        self.exercise_says()
        out = self.assertChecks(0)
        self.assertIn("outside the EXERCISE regions and the opening comments", out)
        self.exercise_says("// SPDX-License-Identifier: BSD-3-Clause\n")  # no comment at all
        self.assertChecks(0)

    def test_a_difference_outside_the_comment_still_fails(self):
        text = self.exercise_says()
        for before, after in (
            ("#include <cstdio>", "#include <stdio.h>"),
            ("// A comment after the opening one", "// Another comment after it"),
            ("BSD-3-Clause", "MIT"),
            ("  // EXERCISE BEGIN: return x plus one", "  // EXERCISE BEGIN: return x plus two"),
        ):
            with self.subTest(changed=before):
                self.third.write_text(text.replace(before, after))
                out = self.assertChecks(1)
                self.assertIn(
                    "chapters/01-test/03_third.cu differs from solutions/01-test/03_third.cu", out
                )
        self.third.write_text(text)
        self.assertChecks(0)

    def test_generate_keeps_the_exercises_comment(self):
        text = self.exercise_says()
        # The solution's comment changes: the exercise's stays, nothing is written.
        self.third_solution.write_text(OPENING.replace("MEMBAR.GPU", "MEMBAR.SC.GPU"))
        self.assertEqual(run(self.root, "generate"), (0, "", ""))
        self.assertEqual(self.third.read_text(), text)
        # The solution's code changes: the code is updated, the comment kept, no backup (a stub).
        self.third_solution.write_text(OPENING.replace("#include <cstdio>", "#include <cstdint>"))
        status, out, _ = run(self.root, "generate")
        self.assertEqual((status, out), (0, "wrote chapters/01-test/03_third.cu\n"))
        self.assertEqual(
            self.third.read_text(), text.replace("#include <cstdio>", "#include <cstdint>")
        )
        self.assertEqual(self.backups(), [])
        self.assertChecks(0)

    def test_generate_keeps_the_comment_and_the_students_work(self):
        text = self.exercise_says().replace("  COURSE_TODO();\n", "  return x + 1;  // mine\n")
        self.third.write_text(text)
        self.third_solution.write_text(OPENING.replace("#include <cstdio>", "#include <cstdint>"))
        status, out, _ = run(self.root, "generate")
        self.assertEqual(status, 0)
        self.assertEqual(len(self.backups()), 1)
        self.assertEqual(
            self.third.read_text(), text.replace("#include <cstdio>", "#include <cstdint>")
        )

    def test_reset_keeps_the_exercises_comment(self):
        text = self.exercise_says()
        self.third.write_text(text.replace("  COURSE_TODO();\n", "  return x;\n"))
        status, out, _ = run(self.root, "reset", "01-test/03_third")
        self.assertEqual(status, 0, out)
        self.assertEqual(self.third.read_text(), text)
        status, out, _ = run(self.root, "reset", "01-test/03_third")
        self.assertIn("is already the stub", out)
        self.assertEqual(len(self.backups()), 1)

    def test_lesson_headers_follow_the_same_rule(self):
        header = self.root / "solutions" / "01-test" / "block_sum.cuh"
        header.write_text("// SPDX-License-Identifier: BSD-3-Clause\n" + LESSON)
        run(self.root, "generate")
        mirror = self.root / "chapters" / "01-test" / "block_sum.cuh"
        text = mirror.read_text().replace(
            "// block_sum.cuh: taught by stage 01_first.\n",
            "// block_sum.cuh: sum a block's values; watch the barriers.\n// Two lines.\n",
        )
        mirror.write_text(text)
        self.assertChecks(0)
        header.write_text(header.read_text().replace("taught by", "the lesson of"))
        self.assertEqual(run(self.root, "generate"), (0, "", ""))
        self.assertEqual(mirror.read_text(), text)
        mirror.write_text(text.replace("int x", "long x"))
        self.assertIn("chapters/01-test/block_sum.cuh differs", self.assertChecks(1))


def header(name, teaches, includes=(), region=True):
    """A lesson header's text: its opening comment, its includes, one region (or none)."""
    body = "".join(f'#include "{i}"\n' for i in includes)
    code = (
        f"__device__ int {name}(int x) {{\n  // EXERCISE BEGIN: {teaches}.\n  return x;\n  // EXERCISE END\n}}\n"
        if region
        else f"__device__ int {name}(int x) {{ return x; }}\n"
    )
    return f"// SPDX-License-Identifier: BSD-3-Clause\n// {name}: {teaches}.\n#pragma once\n{body}{code}"


class ResetLessonHeadersTest(unittest.TestCase):
    """make reset STAGE=... resets the stage's file and the lesson headers the stage teaches (the
    first stage to run them), naming the stages that run them too; those of earlier stages are
    kept and named.

    02_sum teaches sum.cuh; 03_scan has no region: its lesson is scan.cuh, which includes
    sum.cuh; 04_use has a region and includes scan.cuh."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="exercises-reset-"))
        self.addCleanup(shutil.rmtree, self.root)
        sol = self.root / "solutions" / "01-test"
        sol.mkdir(parents=True)
        (sol / "01_first.cu").write_text(FIRST)
        (sol / "02_sum.cu").write_text(
            '// 02_sum.\n#include "sum.cuh"\n' + SECOND.split("\n", 1)[1]
        )
        (sol / "03_scan.cu").write_text(
            '// 03_scan: its lesson is all in scan.cuh.\n#include "scan.cuh"\n'
        )
        (sol / "04_use.cu").write_text(
            '// 04_use.\n#include "scan.cuh"\n' + SECOND.split("\n", 1)[1]
        )
        (sol / "sum.cuh").write_text(header("sum", "sum the block"))
        (sol / "scan.cuh").write_text(header("scan", "scan the block", ["sum.cuh"]))
        self.assertEqual(run(self.root, "generate")[0], 0)
        self.ex = self.root / "chapters" / "01-test"
        self.stubs = {p.name: p.read_text() for p in self.ex.iterdir()}

    def write(self, name):
        """The student fills in every region of a file -> its text."""
        text = self.stubs[name].replace("COURSE_TODO();", "return 2 * x;  // mine")
        (self.ex / name).write_text(text)
        return text

    def backups(self):
        folder = self.root / "backups" / "01-test"
        return sorted(p.name for p in folder.iterdir()) if folder.exists() else []

    def reset(self, stage):
        with mock.patch.object(
            exercises, "now", return_value=datetime.datetime(2026, 11, 23, 8, 15, 2)
        ):
            status, out, err = run(self.root, "reset", stage)
        self.assertEqual((status, err), (0, ""))
        return out.splitlines()

    def test_who_teaches_and_who_runs_each_header(self):
        self.assertEqual(
            exercises.lesson_users("01-test", self.root),
            {"sum.cuh": ["02_sum", "03_scan", "04_use"], "scan.cuh": ["03_scan", "04_use"]},
        )

    def test_a_stage_without_a_region_resets_its_header(self):
        mine, earlier = self.write("scan.cuh"), self.write("sum.cuh")
        lines = self.reset("01-test/03_scan")
        self.assertEqual(
            lines,
            [
                "saved your version of chapters/01-test/scan.cuh to backups/01-test/scan.20261123-081502.cuh; "
                "reset it to the stub (the lesson of 01-test/03_scan; 04_use runs it too); "
                "to undo: cp backups/01-test/scan.20261123-081502.cuh chapters/01-test/scan.cuh",
                "kept the lessons of earlier stages that 01-test/03_scan runs: sum.cuh (02_sum); "
                "make reset STAGE=01-test/sum.cuh resets one",
            ],
        )
        self.assertEqual((self.ex / "scan.cuh").read_text(), self.stubs["scan.cuh"])
        self.assertEqual(
            (self.ex / "sum.cuh").read_text(), earlier
        )  # an earlier stage's work stays
        self.assertEqual(
            (self.root / "backups" / "01-test" / "scan.20261123-081502.cuh").read_text(), mine
        )

    def test_a_stage_resets_its_file_and_its_header_one_line_each(self):
        self.write("02_sum.cu")
        self.write("sum.cuh")
        lines = self.reset("01-test/02_sum")
        self.assertEqual(
            lines,
            [
                "saved your version of 01-test/02_sum to backups/01-test/02_sum.20261123-081502.cu; "
                "reset chapters/01-test/02_sum.cu to the stub; "
                "to undo: cp backups/01-test/02_sum.20261123-081502.cu chapters/01-test/02_sum.cu",
                "saved your version of chapters/01-test/sum.cuh to backups/01-test/sum.20261123-081502.cuh; "
                "reset it to the stub (the lesson of 01-test/02_sum; 03_scan and 04_use run it too); "
                "to undo: cp backups/01-test/sum.20261123-081502.cuh chapters/01-test/sum.cuh",
            ],
        )
        self.assertEqual(self.backups(), ["02_sum.20261123-081502.cu", "sum.20261123-081502.cuh"])
        for name in ("02_sum.cu", "sum.cuh"):
            self.assertEqual((self.ex / name).read_text(), self.stubs[name])

    def test_a_later_stage_keeps_the_headers_it_only_runs(self):
        scan, total = self.write("scan.cuh"), self.write("sum.cuh")
        self.write("04_use.cu")
        lines = self.reset("01-test/04_use")
        self.assertEqual(len(lines), 2, lines)
        self.assertTrue(
            lines[0].startswith("saved your version of 01-test/04_use to backups/"), lines
        )
        self.assertEqual(
            lines[1],
            "kept the lessons of earlier stages that 01-test/04_use runs: sum.cuh (02_sum), "
            "scan.cuh (03_scan); make reset STAGE=01-test/sum.cuh resets one",
        )
        self.assertEqual(
            ((self.ex / "scan.cuh").read_text(), (self.ex / "sum.cuh").read_text()), (scan, total)
        )

    def test_stubs_are_left_alone_and_said_so(self):
        lines = self.reset("01-test/03_scan")
        self.assertEqual(
            lines[0],
            "chapters/01-test/scan.cuh is already the stub: nothing to save, nothing reset "
            "(the lesson of 01-test/03_scan; 04_use runs it too)",
        )
        self.assertEqual(self.backups(), [])

    def test_edited_stage_file_without_a_region_is_reset_too(self):
        (self.ex / "03_scan.cu").write_text(self.stubs["03_scan.cu"] + "// a note\n")
        lines = self.reset("01-test/03_scan")
        self.assertTrue(
            lines[0].startswith(
                "saved your version of 01-test/03_scan to backups/01-test/03_scan."
            ),
            lines,
        )
        self.assertTrue(lines[1].startswith("chapters/01-test/scan.cuh is already the stub"), lines)
        self.assertEqual((self.ex / "03_scan.cu").read_text(), self.stubs["03_scan.cu"])

    def test_a_header_by_name_and_a_missing_header(self):
        self.write("sum.cuh")
        (self.ex / "scan.cuh").unlink()
        self.assertEqual(
            self.reset("01-test/sum.cuh"),
            [
                "saved your version of chapters/01-test/sum.cuh to backups/01-test/sum.20261123-081502.cuh; "
                "reset it to the stub (the lesson of 01-test/02_sum; 03_scan and 04_use run it too); "
                "to undo: cp backups/01-test/sum.20261123-081502.cuh chapters/01-test/sum.cuh"
            ],
        )
        self.assertEqual(
            self.reset("01-test/03_scan"),
            [
                "chapters/01-test/scan.cuh was missing; wrote the stub (the lesson of 01-test/03_scan; 04_use runs it too)",
                "kept the lessons of earlier stages that 01-test/03_scan runs: sum.cuh (02_sum); "
                "make reset STAGE=01-test/sum.cuh resets one",
            ],
        )
        self.assertEqual((self.ex / "scan.cuh").read_text(), self.stubs["scan.cuh"])


class RealLessonsTest(unittest.TestCase):
    """On the repository's own tree: every stage without a region of its own teaches a lesson
    header, so resetting it resets its lesson (13/04, 13/05, 14/07, 14/09, 15/03, 15/04, 15/05)."""

    def test_every_stage_without_a_region_teaches_a_header(self):
        bare = []
        for solution, _ in exercises.stage_pairs(REPO):
            if (
                exercises.course.is_stage_file(solution)
                and "// EXERCISE BEGIN" not in solution.read_text()
            ):
                chapter = solution.parent.name
                taught = [
                    h
                    for h, s in exercises.lesson_users(chapter, REPO).items()
                    if s[0] == solution.stem
                ]
                bare.append(f"{chapter}/{solution.stem}")
                with self.subTest(stage=bare[-1]):
                    self.assertTrue(
                        taught,
                        f"{bare[-1]} has no region and teaches no lesson header: "
                        f"make reset would reset nothing",
                    )
        self.assertTrue(bare)

    def test_two_level_is_the_lesson_of_04_and_run_by_05(self):
        users = exercises.lesson_users("13-scan", REPO)
        if "lesson_two_level.cuh" not in users:
            self.skipTest("13-scan/lesson_two_level.cuh is not a lesson header in this tree")
        self.assertEqual(users["lesson_two_level.cuh"][:2], ["04_two_level", "05_vector_io"])

    def test_lesson_headers_are_named_as_lessons(self):
        # A student tells the headers they edit from the chapter's plumbing by the prefix alone.
        for chapter, headers in exercises.lesson_headers(REPO).items():
            for name in headers:
                with self.subTest(header=f"{chapter}/{name}"):
                    self.assertTrue(
                        name.startswith("lesson_"),
                        f"{chapter}/{name}: a lesson header's name starts with lesson_",
                    )


if __name__ == "__main__":
    unittest.main()
