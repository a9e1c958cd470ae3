"""Tests for harness/check.py (make check, make progress): how it reads test names, ninja's
failures, compute-sanitizer's reports and benchmark results. No GPU, no build needed."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import check  # noqa: E402

NINJA_LOG = """[1/3] Building CUDA object chapters/13-scan/CMakeFiles/exercise.13-scan.05_warp_scans.dir/05_warp_scans.cu.o
FAILED: chapters/13-scan/CMakeFiles/exercise.13-scan.05_warp_scans.dir/05_warp_scans.cu.o 
/usr/local/cuda/bin/nvcc -x cu -c {root}/chapters/13-scan/05_warp_scans.cu -o x.o
{root}/chapters/13-scan/05_warp_scans.cu(31): error: identifier "y" is undefined
    x += y;
         ^

1 error detected in the compilation of "{root}/chapters/13-scan/05_warp_scans.cu".
FAILED: chapters/14-nbody/CMakeFiles/nbody-cpu-exercise.dir/08_cpu_simd.cu.o 
/usr/bin/c++ -x c++ -c {root}/chapters/14-nbody/08_cpu_simd.cu
{root}/chapters/14-nbody/08_cpu_simd.cu:40:5: error: expected ';' before '}}' token
ninja: build stopped: cannot make progress due to previous errors.
"""

MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 16 bytes
=========     at void <unnamed>::forces<(unsigned int)256>(float4 *, const float4 *, unsigned long, float)+0x3a0 in {root}/chapters/14-nbody/05_warp_shuffle.cu:57
=========     by thread (31,0,0) in block (0,0,0)
=========     Address 0x7f00001000 is out of bounds
=========
========= ERROR SUMMARY: 224 errors
"""

RACECHECK = """========= COMPUTE-SANITIZER
========= Warning: Race reported between Write access at void <unnamed>::warp_sum_short(int *)+0x1d0 in {root}/chapters/08-warp/03_single_warp_shared.cu:40
=========     and Read access at void <unnamed>::warp_sum_short(int *)+0x1b0 in {root}/chapters/08-warp/03_single_warp_shared.cu:39 [16 hazards]
=========
========= RACECHECK SUMMARY: 16 hazards displayed (0 errors, 16 warnings)
sanitize.sh: racecheck reported 16 hazard warning(s): counted as errors
"""

CLEAN = """========= COMPUTE-SANITIZER
All tests passed (120 assertions in 9 test cases)
========= ERROR SUMMARY: 0 errors
"""


class TestNames(unittest.TestCase):
    def test_stage_tests(self):
        self.assertEqual(check.stage_of_test("exercise/13-scan/04_two_level"), ("exercise", "13-scan", "04_two_level", "tests"))
        self.assertEqual(check.stage_of_test("solution/13-scan/04_two_level/sweep"),
                         ("solution", "13-scan", "04_two_level", "sweep"))
        self.assertEqual(check.stage_of_test("host/exercise/14-nbody/08_cpu_simd"),
                         ("exercise", "14-nbody", "08_cpu_simd", "host"))
        self.assertEqual(check.stage_of_test("sanitize/racecheck/exercise/08-warp/03_single_warp_shared"),
                         ("exercise", "08-warp", "03_single_warp_shared", "sanitize:racecheck"))
        self.assertEqual(check.stage_of_test("wrong/13-scan/07_decoupled_lookback.counter_not_reset")[0], "wrong")

    def test_other_tests_are_not_stages(self):
        for name in ("host/harness", "host/13-scan", "solution/15-ncc/program", "gpu/14-nbody/driver",
                     "host/exercises-in-sync"):
            self.assertIsNone(check.stage_of_test(name), name)

    def test_programs_a_test_needs(self):
        build = Path("/tmp/course-build")
        bin_dir = str(build / "bin")
        # A wrong variant judged by its SASS: the test reads the variant's object, not a program.
        sass = {"name": "wrong/15-ncc/07_dp4a.no_dp4a",
                "command": ["python3", "harness/lesson.py", "sass", "15-ncc/07_dp4a", "--object",
                            str(build / "chapters/15-ncc/CMakeFiles/wrong.15-ncc.07_dp4a.no_dp4a.dir/x/07_dp4a.cu.o"),
                            "--expect-reject"]}
        self.assertEqual(check.programs_of(sass, build), ["wrong.15-ncc.07_dp4a.no_dp4a"])
        # A speed verdict: both judges.
        speed = {"name": "wrong/11-streaming/03_vectorized_float4.scalar",
                 "command": ["python3", "harness/lesson.py", "speed", "11-streaming/03_vectorized_float4",
                             "--reference", bin_dir + "/judge.solution.11-streaming.03_vectorized_float4",
                             "--candidate", bin_dir + "/judge.wrong.11-streaming.03_vectorized_float4.scalar",
                             "--expect-slow"]}
        self.assertEqual(check.programs_of(speed, build), ["judge.solution.11-streaming.03_vectorized_float4",
                                                           "judge.wrong.11-streaming.03_vectorized_float4.scalar"])
        # Not built yet (ctest lists no command): by the naming convention; the chapter's program by name.
        self.assertEqual(check.programs_of({"name": "solution/13-scan/04_two_level"}, build),
                         ["test.solution.13-scan.04_two_level"])
        self.assertEqual(check.programs_of({"name": "solution/15-ncc/program"}, build), ["ncc"])
        self.assertEqual(check.programs_of({"name": "host/exercises-in-sync"}, build), [])


class TestBuildLog(unittest.TestCase):
    def test_first_error_of_each_failed_output(self):
        blocks = check.failed_blocks(NINJA_LOG.format(root=check.ROOT))
        self.assertEqual(len(blocks), 2)
        scan = blocks["chapters/13-scan/CMakeFiles/exercise.13-scan.05_warp_scans.dir/05_warp_scans.cu.o"]
        self.assertEqual(scan, 'chapters/13-scan/05_warp_scans.cu(31): error: identifier "y" is undefined')
        cpu = blocks["chapters/14-nbody/CMakeFiles/nbody-cpu-exercise.dir/08_cpu_simd.cu.o"]
        self.assertTrue(cpu.startswith("chapters/14-nbody/08_cpu_simd.cu:40:5: error:"), cpu)


class TestSanitizerVerdicts(unittest.TestCase):
    def test_memcheck_names_the_first_report_and_its_line(self):
        state, line = check.sanitizer_verdict("memcheck", MEMCHECK.format(root=check.ROOT), 86)
        self.assertEqual(state, "errors")
        self.assertIn("Invalid __global__ read of size 16 bytes", line)
        self.assertTrue(line.endswith("at chapters/14-nbody/05_warp_shuffle.cu:57"), line)

    def test_racecheck_warnings_are_errors(self):
        state, line = check.sanitizer_verdict("racecheck", RACECHECK.format(root=check.ROOT), 86)
        self.assertEqual(state, "errors")
        self.assertIn("Race reported", line)
        self.assertTrue(line.endswith("at chapters/08-warp/03_single_warp_shared.cu:40"), line)

    def test_clean(self):
        state, line = check.sanitizer_verdict("synccheck", CLEAN, 0)
        self.assertEqual(state, "clean")
        self.assertTrue(line.startswith("synccheck: clean"), line)

    def test_failure_without_a_report(self):
        state, line = check.sanitizer_verdict("memcheck", "test failed\nreplay: COURSE_SEED=1\n", 1)
        self.assertEqual(state, "errors")
        self.assertIn("exit 1", line)


class TestFirstFailure(unittest.TestCase):
    def test_the_stage_message_on_one_line(self):
        out = """/x/test_nbody.cpp:155: FAILED:
explicitly with messages:
  seed 16788064165754444464; bound 1.02e-05
  stage 05_warp_shuffle, n=1 threads=256 unroll=4: 1 of 1 forces wrong; first [0]: relative error 1.
  91105e+07 > 1.02e-05

-------
"""
        self.assertEqual(check.first_failure(out), "stage 05_warp_shuffle, n=1 threads=256 unroll=4: 1 of 1 forces "
                                                   "wrong; first [0]: relative error 1. 91105e+07 > 1.02e-05")

    def test_a_hang(self):
        self.assertTrue(check.first_failure("x\nTIMEOUT: the tests did not finish in 300 s\n").startswith("TIMEOUT"))

    def test_sanitizer_with_failing_tests_but_no_report(self):
        out = "/x/t.cpp:1: FAILED:\n  stage x\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
        state, line = check.sanitizer_verdict("racecheck", out, 1)
        self.assertEqual(state, "clean")
        self.assertIn("the tests failed under it too", line)


class TestStageState(unittest.TestCase):
    kinds = {"tests": "exercise/13-scan/04_two_level", "sweep": "exercise/13-scan/04_two_level/sweep"}

    def state(self, results, broken=None):
        return check.stage_state(self.kinds, results, broken)[0]

    def test_states(self):
        skip_todo = ("skipped", "COURSE_SKIP: TODO 04_two_level is not yet implemented")
        skip_gpu = ("skipped", "COURSE_SKIP: GPU tests skipped: no NVIDIA driver found")
        names = list(self.kinds.values())
        self.assertEqual(self.state({n: skip_todo for n in names}), "TODO")
        self.assertEqual(self.state({n: skip_gpu for n in names}), "compiled, not run: needs a GPU")
        self.assertEqual(self.state({names[0]: ("passed", ""), names[1]: ("passed", "")}), "passed")
        self.assertEqual(self.state({names[0]: ("passed", ""), names[1]: ("failed", "")}), "failed")
        self.assertEqual(self.state({}, broken="x.cu(1): error"), "does not compile")


class TestProgress(unittest.TestCase):
    def test_a_stage_whose_lesson_is_in_a_header_is_todo_while_the_header_is(self):
        # 13-scan/04_two_level has no region of its own: its lesson is two_level.cuh.
        todo, files = check.todo_files("13-scan", "04_two_level")
        names = {p.name for p in files}
        self.assertIn("04_two_level.cu", names)
        self.assertIn("two_level.cuh", names)
        stub = "COURSE_TODO();" in (check.ROOT / "chapters/13-scan/two_level.cuh").read_text()
        self.assertEqual(any(p.name == "two_level.cuh" for p in todo), stub)

    def test_cells(self):
        self.assertEqual(check.speed_cell({"speed": {"verdict": "passed", "ratio": 1.02}}), "1.02x")
        self.assertEqual(check.speed_cell({"speed": {"verdict": "slow", "ratio": 0.31}}), "0.31x slow")
        self.assertEqual(check.speed_cell({"speed": {"verdict": "not a speed lesson"}}), "not a lesson")
        self.assertEqual(check.speed_cell({}), "not run")
        self.assertEqual(check.sass_cell({"sass": {"verdict": "missed"}}), "missed")
        self.assertEqual(check.sass_cell(None), "not run")


if __name__ == "__main__":
    unittest.main()
