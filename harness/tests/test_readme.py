"""The README's counts are the tree's: chapters, stages (per chapter, and on the GPU), wrong
variants, and what make check prints without a GPU. The test counts come from a build: with
COURSE_BUILD_DIR=<build folder>, they are compared with `ctest -N` there (else skipped)."""

import os
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
import course  # noqa: E402

README = (course.ROOT / "README.md").read_text()


def ctest_count(build, *labels):
    run = subprocess.run(["ctest", "-N", *labels], cwd=build, capture_output=True, text=True)
    m = re.search(r"Total Tests:\s*(\d+)", run.stdout)
    return int(m.group(1)) if m else None


def one(pattern):
    """The numbers of the README's only sentence that matches pattern (a space in it matches
    any run of white space: the README wraps its lines)."""
    found = re.findall(pattern.replace(" ", r"\s+"), README)
    assert len(found) == 1, f"README: {len(found)} matches of {pattern!r}"
    return found[0]


class ReadmeTest(unittest.TestCase):
    def test_chapter_table_counts_each_chapters_stages(self):
        for chapter in course.chapters():
            row = re.search(
                rf"^\| \[{re.escape(chapter)}\]\([^)]*\) \| ([^|]*)\|", README, flags=re.M
            )
            with self.subTest(chapter=chapter):
                self.assertIsNotNone(row, f"README's chapter table has no row for {chapter}")
                n = re.search(r"(\d+) stages", row.group(1))
                self.assertIsNotNone(
                    n, f"{chapter}'s row does not say how many stages: {row.group(1)}"
                )
                self.assertEqual(int(n.group(1)), len(course.stages(chapter)), row.group(1))

    def test_course_size(self):
        chapters, stages, gpu, wrong = one(
            r"(\d+) chapters and (\d+) stages \((\d+) on the GPU[^)]*\),"
            r" and (\d+) deliberately wrong variants"
        )
        self.assertEqual(int(chapters), len(course.chapters()))
        self.assertEqual(int(stages), len(course.stage_ids()))
        self.assertEqual(int(gpu), len(course.gpu_stages()))
        self.assertEqual(int(wrong), len(course.wrong_variants()))

    def test_make_check_without_a_gpu(self):
        # The summary lines of make check on a clean clone without a GPU (in the quick start).
        todo = re.findall(r"exercise stages: (\d+) TODO\n", README)
        self.assertTrue(todo)
        for n in todo:
            self.assertEqual(int(n), len(course.stage_ids()))
        host, gpu = one(r"solution stages: (\d+) passed; (\d+) compiles; untested \(no GPU\)")
        self.assertEqual(int(host), len(course.stage_ids()) - len(course.gpu_stages()))
        self.assertEqual(int(gpu), len(course.gpu_stages()))

    def test_ci_runs_the_quick_start_as_written_before_anything_else(self):
        # .ci/run takes the commands from the README (course.py quickstart), so the two cannot part.
        commands = course.quickstart()
        self.assertIn("make check", commands)
        self.assertIn("make doctor", commands)
        for command in commands:
            self.assertTrue(command.startswith("make "), command)
        ci = (course.ROOT / ".ci" / "run").read_text()
        self.assertIn("harness/course.py quickstart", ci)
        self.assertLess(ci.index("harness/course.py quickstart"), ci.index("make build"))
        self.assertIn("env -u CI", ci)

    @unittest.skipUnless(
        os.environ.get("COURSE_BUILD_DIR") and shutil.which("ctest"),
        "set COURSE_BUILD_DIR=<build folder> to compare the test counts with ctest -N",
    )
    def test_test_counts_match_ctest(self):
        build = Path(os.environ["COURSE_BUILD_DIR"])
        tests = ctest_count(build, "-LE", "sanitize")
        sanitize = ctest_count(build, "-L", "sanitize")
        self.assertEqual(int(one(r"`make check` runs (\d+) tests")), tests)
        self.assertEqual(int(one(r"`make sanitize` runs (\d+)")), sanitize)
        for n in re.findall(r"tests passed, 0 tests failed out of (\d+)\n", README):
            if int(n) > 2:  # one stage's check runs 2
                self.assertEqual(int(n), tests)


if __name__ == "__main__":
    unittest.main()
