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
        self.assertEqual(
            check.course.stage_test("exercise/13-scan/04_two_level"),
            ("exercise", "13-scan", "04_two_level", "tests"),
        )
        self.assertEqual(
            check.course.stage_test("solution/13-scan/04_two_level/sweep"),
            ("solution", "13-scan", "04_two_level", "sweep"),
        )
        self.assertEqual(
            check.course.stage_test("host/exercise/14-nbody/08_cpu_simd"),
            ("exercise", "14-nbody", "08_cpu_simd", "host"),
        )
        self.assertEqual(
            check.course.stage_test("sanitize/racecheck/exercise/08-warp/03_single_warp_shared"),
            ("exercise", "08-warp", "03_single_warp_shared", "sanitize:racecheck"),
        )
        self.assertEqual(
            check.course.stage_test("wrong/13-scan/07_decoupled_lookback.counter_not_reset")[0],
            "wrong",
        )

    def test_other_tests_are_not_stages(self):
        for name in (
            "host/harness",
            "host/13-scan",
            "solution/15-ncc/program",
            "gpu/14-nbody/driver",
            "host/exercises-in-sync",
        ):
            self.assertIsNone(check.course.stage_test(name), name)

    def test_programs_a_test_needs_come_from_the_build(self):
        # build/tests.json, as course_add_test writes it: what a test runs or reads, whatever its
        # name (a test the checker could not place once broke make check on a fresh clone).
        manifest = {
            "wrong/15-ncc/07_dp4a.no_dp4a": {"needs": ["wrong.15-ncc.07_dp4a.no_dp4a"]},
            "solution/13-scan/04_two_level": {
                "needs": ["test.solution.13-scan.04_two_level"],
                "object": "solution.13-scan.04_two_level",
            },
            "host/12-reduction/bench-threads-cli": {"needs": ["bench-12-reduction"]},
            "host/exercises-in-sync": {"needs": []},
        }
        self.assertEqual(
            check.programs_of({"name": "wrong/15-ncc/07_dp4a.no_dp4a"}, manifest),
            ["wrong.15-ncc.07_dp4a.no_dp4a"],
        )
        self.assertEqual(
            check.programs_of({"name": "host/12-reduction/bench-threads-cli"}, manifest),
            ["bench-12-reduction"],
        )
        self.assertEqual(check.programs_of({"name": "host/exercises-in-sync"}, manifest), [])
        self.assertEqual(
            check.object_of({"name": "solution/13-scan/04_two_level"}, manifest),
            "solution.13-scan.04_two_level",
        )
        self.assertIsNone(check.object_of({"name": "host/exercises-in-sync"}, manifest))

    def test_a_stage_name_selects_that_stage_alone(self):
        # The reference's name is the reference (as make sass and make reset read it), not also
        # the student's stage; exercise/ selects the student's.
        self.assertEqual(
            check.stage_selection("11-streaming/01_grid_stride"),
            "solution/11-streaming/01_grid_stride",
        )
        self.assertEqual(
            check.stage_selection("exercise/11-streaming/02"),
            "exercise/11-streaming/02_unrolled_templated",
        )
        self.assertEqual(
            check.stage_selection("03_vectorized"), "solution/11-streaming/03_vectorized_float4"
        )
        # Not one stage: a regex over the test names, as before.
        for arg in (
            "11-streaming",
            "exercise/13-scan",
            "host/harness",
            "01",
            "",
            "solution/11-streaming/0[12]",
        ):
            self.assertEqual(check.stage_selection(arg), arg)


class TestBuildLog(unittest.TestCase):
    def test_first_error_of_each_failed_output(self):
        blocks = check.failed_blocks(NINJA_LOG.format(root=check.ROOT))
        self.assertEqual(len(blocks), 2)
        scan = blocks[
            "chapters/13-scan/CMakeFiles/exercise.13-scan.05_warp_scans.dir/05_warp_scans.cu.o"
        ]
        self.assertEqual(
            scan, 'chapters/13-scan/05_warp_scans.cu(31): error: identifier "y" is undefined'
        )
        cpu = blocks["chapters/14-nbody/CMakeFiles/nbody-cpu-exercise.dir/08_cpu_simd.cu.o"]
        self.assertTrue(cpu.startswith("chapters/14-nbody/08_cpu_simd.cu:40:5: error:"), cpu)

    def test_ninja_113_exit_code_before_the_output(self):
        # Ninja 1.13 writes "FAILED: [code=1] <output>"; the GPU image's ninja does.
        log = NINJA_LOG.replace("FAILED: ", "FAILED: [code=1] ").format(root=check.ROOT)
        blocks = check.failed_blocks(log)
        self.assertEqual(len(blocks), 2)
        self.assertIn(
            "chapters/14-nbody/CMakeFiles/nbody-cpu-exercise.dir/08_cpu_simd.cu.o", blocks
        )
        failed = check.failed_in_log({"exercise.13-scan.05_warp_scans", "judge.x"}, blocks)
        self.assertEqual(failed, {"exercise.13-scan.05_warp_scans"})


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
        self.assertEqual(
            check.first_failure(out),
            "stage 05_warp_shuffle, n=1 threads=256 unroll=4: 1 of 1 forces "
            "wrong; first [0]: relative error 1. 91105e+07 > 1.02e-05",
        )

    def test_a_hang(self):
        self.assertTrue(
            check.first_failure("x\nTIMEOUT: the tests did not finish in 300 s\n").startswith(
                "TIMEOUT"
            )
        )

    def test_sanitizer_with_failing_tests_but_no_report(self):
        out = "/x/t.cpp:1: FAILED:\n  stage x\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
        state, line = check.sanitizer_verdict("racecheck", out, 1)
        self.assertEqual(state, "clean")
        self.assertIn("the tests failed under it too", line)


class TestStageState(unittest.TestCase):
    kinds = {
        "tests": "exercise/13-scan/04_two_level",
        "sweep": "exercise/13-scan/04_two_level/sweep",
    }

    def state(self, results, broken=None):
        return check.stage_state(self.kinds, results, broken)[0]

    def test_states(self):
        skip_todo = ("skipped", "COURSE_SKIP: TODO 04_two_level is not yet implemented")
        skip_gpu = ("skipped", "COURSE_SKIP: GPU tests skipped: no NVIDIA driver found")
        names = list(self.kinds.values())
        self.assertEqual(self.state({n: skip_todo for n in names}), "TODO")
        self.assertEqual(self.state({n: skip_gpu for n in names}), check.UNTESTED)
        self.assertEqual(self.state({names[0]: ("passed", ""), names[1]: ("passed", "")}), "passed")
        self.assertEqual(self.state({names[0]: ("passed", ""), names[1]: ("failed", "")}), "failed")
        self.assertEqual(self.state({}, broken="x.cu(1): error"), "does not compile")


class TestProgress(unittest.TestCase):
    def test_a_stage_whose_lesson_is_in_a_header_is_todo_while_the_header_is(self):
        # 13-scan/04_two_level has no region of its own: its lesson is lesson_two_level.cuh.
        todo, files = check.todo_files("13-scan", "04_two_level")
        names = {p.name for p in files}
        self.assertIn("04_two_level.cu", names)
        self.assertIn("lesson_two_level.cuh", names)
        stub = (
            "COURSE_TODO();" in (check.ROOT / "chapters/13-scan/lesson_two_level.cuh").read_text()
        )
        self.assertEqual(any(p.name == "lesson_two_level.cuh" for p in todo), stub)

    def test_cells(self):
        self.assertEqual(check.speed_cell({"speed": {"verdict": "passed", "ratio": 1.02}}), "1.02x")
        self.assertEqual(
            check.speed_cell({"speed": {"verdict": "slow", "ratio": 0.31}}), "0.31x slow"
        )
        self.assertEqual(
            check.speed_cell({"speed": {"verdict": "not a speed lesson"}}), "not a lesson"
        )
        self.assertEqual(check.speed_cell({}), "not run")
        self.assertEqual(check.sass_cell({"sass": {"verdict": "missed"}}), "missed")
        self.assertEqual(check.sass_cell(None), "not run")


if __name__ == "__main__":
    unittest.main()
