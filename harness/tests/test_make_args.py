"""Every make target checks its arguments before doing anything: a wrong chapter or stage, or a
missing variable, is one line naming the valid choices, and status 2. Run through make itself
(make -n, with a scratch build folder that is never created) and through harness/course.py."""

import os
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

# The Makefile's own variables, and those by which a parent make passes its command line on: a
# test run from `make check STAGE=...` (or with STAGE exported) must not hand them to the make it
# tests, or "say which stage" would be answered by the caller's STAGE.
MAKE_VARIABLES = (
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
    "MAKEOVERRIDES",
    "STAGE",
    "CHAPTER",
    "A",
    "B",
    "ARGS",
    "EXERCISE",
    "ALL",
    "SECTIONS",
    "ARCH",
    "JOBS",
    "BUILD",
    "CMAKE_ARGS",
)


def make_environment():
    """This process's environment without MAKE_VARIABLES."""
    return {k: v for k, v in os.environ.items() if k not in MAKE_VARIABLES}


def make(*args):
    scratch = Path(tempfile.gettempdir()) / "course-make-args-never-created"
    run = subprocess.run(
        ["make", "-n", "--no-print-directory", f"BUILD={scratch}", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=make_environment(),
    )
    assert not scratch.exists(), "make -n created the build folder"
    return run.returncode, run.stdout, run.stderr


@unittest.skipUnless(shutil.which("make"), "make not installed")
class MakeTest(unittest.TestCase):
    def refused(self, *args, naming=()):
        status, out, err = make(*args)
        self.assertEqual(status, 2, f"make {' '.join(args)}: {out}{err}")
        self.assertEqual(out, "", args)
        self.assertEqual(len(err.splitlines()), 1, err)
        for name in naming:
            self.assertIn(name, err, args)
        return err

    def test_bench(self):
        benches = course.bench_chapters()
        self.refused("bench", "CHAPTER=99-nope", naming=["no chapter '99-nope'", *benches])
        no_bench = [c for c in course.chapters() if c not in benches]
        for chapter in no_bench:
            err = self.refused(
                "bench", f"CHAPTER={chapter}", naming=[f"{chapter} has no benchmark", *benches]
            )
            self.assertNotIn("No such file", err)
        self.assertEqual(make("bench", f"CHAPTER={benches[0]}")[0], 0)

    def test_sass(self):
        first, last = course.stage_ids()[0], course.stage_ids()[-1]
        for goal in ("sass", "sass-count"):
            self.refused(
                goal,
                "STAGE=nonsense",
                naming=["no stage 'nonsense'", first.split("/")[1], last.split("/")[1]],
            )
            self.refused(goal, naming=["say which stage", first.split("/")[1]])
            self.assertEqual(make(goal, f"STAGE=exercise/{last}")[0], 0)
        self.refused("sass-diff", naming=["A=", "B=", first.split("/")[1]])
        self.refused("sass-diff", f"A={first}", naming=["A=", "B="])
        self.refused("sass-diff", f"A={first}", "B=nope", naming=["B: no stage 'nope'"])
        self.assertEqual(make("sass-diff", f"A={first}", f"B={last}")[0], 0)

    def test_reset(self):
        self.refused("reset", naming=["say which stage"])
        self.refused("reset", "STAGE=nope/01", naming=["no stage"])

    def test_check(self):
        self.refused("check", "STAGE=no-such-test", naming=["matches no test", *course.chapters()])
        for ok in (
            "",
            "STAGE=exercise/" + course.stage_ids()[0],
            "STAGE=08-warp",
            "STAGE=solution/1[12]",
            "STAGE=lab/14-nbody/rsqrt_pipes",  # a lab's test (labs/14-nbody/CMakeLists.txt)
        ):
            self.assertEqual(make("check", *([ok] if ok else []))[0], 0, ok)

    def test_programs(self):
        nbody = course.program_chapter("nbody")
        self.assertEqual(nbody, "14-nbody")
        self.assertEqual(course.program_chapter("ncc"), "15-ncc")
        self.refused(
            "nbody", "ARGS=--stage 99", naming=["no stage '99'", "cpu", course.stages(nbody)[0]]
        )
        self.refused("nbody", "ARGS=--stage=nope", naming=["no stage 'nope'"])
        for ok in ("--stage cpu", "--stage 03", "--help", "--N 1024 --steps 2"):
            self.assertEqual(make("nbody", f"ARGS={ok}")[0], 0, ok)
        self.refused("ncc", "ARGS=--image missing file.pgm", naming=["--image missing"])
        self.assertEqual(make("ncc", "ARGS=--wTemplate 16")[0], 0)

    def test_profile(self):
        benches = course.bench_chapters()
        self.refused("profile", "STAGE=nonsense", naming=["profile: no stage 'nonsense'"])
        self.refused("profile", naming=["say which stage", "baseline"])
        self.refused("profile-diff", "A=12-reduction/10", naming=["say which two stages"])
        self.refused(
            "profile-diff", "A=12-reduction/10", "B=zz", naming=["profile-diff: B: no stage 'zz'"]
        )
        no_bench = [c for c in course.chapters() if c not in benches]
        self.refused(
            "profile-capture",
            f"CHAPTER={no_bench[0]}",
            naming=["no chapter with a benchmark", *benches],
        )
        for ok in (
            ("profile", "STAGE=12-reduction/10"),
            ("profile", "STAGE=12-reduction/baseline"),
            ("profile-diff", "A=12-reduction/09", "B=12-reduction/10"),
            ("profile-capture",),
        ):
            self.assertEqual(make(*ok)[0], 0, ok)

    def test_quotes_in_arguments_do_not_break_make(self):
        self.refused("bench", "CHAPTER=it's", naming=["no chapter 'it's'"])


class ValidateTest(unittest.TestCase):
    """harness/course.py validate, the function make calls."""

    def test_every_message_is_one_line(self):
        for goal, variables in (
            ("bench", {"CHAPTER": "x"}),
            ("sass", {}),
            ("sass-diff", {"A": "x"}),
            ("reset", {}),
            ("nbody", {"ARGS": "--stage 'x"}),
            ("ncc", {"ARGS": "--image /nope"}),
            ("profile", {}),
            ("profile-diff", {"A": "x", "B": "y"}),
            ("profile-capture", {"CHAPTER": "x"}),
        ):
            error = course.validate(goal, variables)
            self.assertTrue(error, goal)
            self.assertNotIn("\n", error)

    def test_unchecked_goals_pass(self):
        for goal in ("tour", "plots", "help", "doctor", "progress", "check"):
            self.assertIsNone(course.validate(goal, {}))

    def test_stage_prefixes_and_files(self):
        first = course.stage_ids()[0]
        self.assertIsNone(course.validate("sass", {"STAGE": first[: len(first.split("/")[0]) + 4]}))
        self.assertIsNone(
            course.validate("sass", {"STAGE": str(REPO / "README.md")})
        )  # a file: sass.py reads it
        self.assertIn("several stages", course.validate("sass", {"STAGE": "0"}))


if __name__ == "__main__":
    unittest.main()
