"""Tests for harness/sanitizer_report.py: compute-sanitizer's reports read back and explained. The
logs are compute-sanitizer's text as its releases print it (racecheck's analysis and hazard modes,
an older release's one-line form, memcheck, synccheck); the sources they point at are written into a
temporary tree so the explanation can quote them. No GPU, no build."""

import contextlib
import io
import pathlib
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import sanitizer_report as sr  # noqa: E402

# The text-only student's chapter 13 case: scan_block's warp 0 reads warp_sums[lane] inside a ?:
# (line 67) and scan_warp's first store writes the slot (line 26), with no __syncwarp() between.
# At B = 32 the compiler loads warp_sums[0] in every lane; lane 0's store races with the others' load.
STUDENT_RACE = """========= COMPUTE-SANITIZER
Filters: ~[large]~[sweep]
========= Warning: Race reported between Read access at void scan::scan_ranges<(unsigned int)32, float>(const float *, float *, unsigned long, float *)+0x3c0 in {root}/chapters/13-scan/block_scan.cuh:67
=========     and Write access at float scan::scan_warp<float>(float *, float, unsigned int)+0x420 in {root}/chapters/13-scan/block_scan.cuh:26 [248 hazards]
=========
All tests passed (5000 assertions in 12 test cases)
========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)
sanitize.sh: racecheck reported 1 hazard warning(s): counted as errors
"""

# Two warps, no barrier between warp k's store and warp 0's read: racecheck's Error level.
BLOCK_RACE = """========= Error: Race reported between Write access at void <unnamed>::reduce_kernel<(unsigned int)256>(int *, const int *, unsigned long)+0x2f0 in {root}/chapters/12-reduction/09_shuffle.cu:45
=========     and Read access at void <unnamed>::reduce_kernel<(unsigned int)256>(int *, const int *, unsigned long)+0x350 in {root}/chapters/12-reduction/09_shuffle.cu:47 [7 hazards]
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""

# An older release, on one line (as a GitHub issue quotes it): "at 0xOFF in FILE:LINE:FUNC".
OLD_FORMAT = (
    "========= WARNING: Race reported between Read access at 0xf10 in /src/Kokkos_FunctorAdapter.hpp:1571:"
    "Kokkos::Impl::scalar_intra_warp_reduction(double*) ========= and Write access at 0x8a0 in "
    "/src/Kokkos_Cuda_ReduceScan.hpp:557:Kokkos::Impl::scalar_intra_block_reduction(double*) [3968 hazards]\n"
)

HAZARD_MODE = """========= Error: Potential RAW hazard detected at __shared__ 0x80 in block (3,0,0) :
=========     Write Thread (0,0,0) at void k(int *)+0x88 in {root}/chapters/08-warp/03_single_warp_shared.cu:40
=========     Read Thread (33,0,0) at void k(int *)+0x90 in {root}/chapters/08-warp/03_single_warp_shared.cu:39
=========     Current Value : 0, Incoming Value : 1
"""

MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 16 bytes
=========     at void <unnamed>::forces<(unsigned int)256>(float4 *, const float4 *, unsigned long, float)+0x3a0 in {root}/chapters/14-nbody/05_warp_shuffle.cu:57
=========     by thread (37,0,0) in block (2,0,0)
=========     Address 0x7f00001000 is out of bounds
=========     and is 16 bytes after the nearest allocation at 0x7f00000000 of size 4096 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========
========= ERROR SUMMARY: 224 errors
"""

SYNCCHECK = """========= Barrier error detected. Divergent thread(s) in warp
=========     at void <unnamed>::count_ballot_kernel(unsigned long long *, const int *, unsigned long, int)+0x120 in {root}/chapters/12-reduction/08_predicate.cu:41
=========     by thread (5,0,0) in block (0,0,0)
========= ERROR SUMMARY: 1 error
"""


def write(root, rel, lines):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = [f"// line {i + 1}" for i in range(max(lines) + 2)]
    for number, line in lines.items():
        text[number - 1] = line
    path.write_text("\n".join(text) + "\n")


FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "sanitizer"


class SanitizerReportTest(unittest.TestCase):
    def setUp(self):
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="course-sanitizer-"))
        self.addCleanup(shutil.rmtree, self.root)
        write(
            self.root,
            "chapters/13-scan/block_scan.cuh",
            {
                26: "  sh[lane] = x;",
                67: "  if (warp == 0) scan_warp(s.warp_sums, lane < warps ? s.warp_sums[lane] : T(0), lane);",
            },
        )
        write(
            self.root,
            "chapters/12-reduction/09_shuffle.cu",
            {
                45: "    if (lane == 0) warp_sums[warp] = sum;",
                47: "    sum = warp_sum(warp_sums[lane]);",
            },
        )

    def log(self, text):
        return text.format(root=self.root)

    def test_student_race_names_both_accesses(self):
        reports = sr.parse(self.log(STUDENT_RACE), self.root)
        self.assertEqual(len(reports), 1)
        rep = reports[0]
        self.assertEqual(
            (rep.tool, rep.severity, rep.space, rep.hazards),
            ("racecheck", "Warning", "shared", 248),
        )
        self.assertEqual(
            [(a.kind, a.file, a.line, a.function) for a in rep.accesses],
            [
                ("read", "chapters/13-scan/block_scan.cuh", 67, "scan_ranges<32, float>"),
                ("write", "chapters/13-scan/block_scan.cuh", 26, "scan_warp<float>"),
            ],
        )
        text = "\n".join(sr.explain(self.log(STUDENT_RACE), "racecheck", self.root))
        for expected in (
            "read  at chapters/13-scan/block_scan.cuh:67",
            "write at chapters/13-scan/block_scan.cuh:26",
            "sh[lane] = x;",
            "s.warp_sums[lane]",
            "shared memory",
            "Warning",
            "one warp",
            "__syncwarp()",
            "condition",
            "every lane",
        ):
            self.assertIn(expected, text)
        self.assertTrue(
            all(len(line) <= 100 or line.startswith("        ") for line in text.splitlines()), text
        )

    def test_the_h200_log_of_the_student_race(self):
        # compute-sanitizer's own log (H200, CUDA 13.0, 2026-11-29) of the text-only student's
        # 13-scan regions under stage 06: the file is named bare, the check looks in the
        # student's chapters/ folder first.
        write(
            self.root,
            "chapters/13-scan/lesson_warp_block_scan.cuh",
            {
                58: "      T t = lane < warps ? s.warp_sums[lane] : T(0);",
                60: "      if (lane < warps) s.warp_sums[lane] = t;",
            },
        )
        log = (FIXTURES / "13-scan-06-student-racecheck.log").read_text()
        search = ("chapters/13-scan", "solutions/13-scan", "common", "harness")
        lines = sr.explain(log, "racecheck", self.root, search=search)
        text = "\n".join(lines)
        for expected in (
            "read  at chapters/13-scan/lesson_warp_block_scan.cuh:58",
            "write at chapters/13-scan/lesson_warp_block_scan.cuh:60",
            "s.warp_sums[lane] = t;",
            "Warning",
            "__syncwarp()",
            "condition",
        ):
            self.assertIn(expected, text)
        # The log repeats the same two places (two instructions each) 20 times: explained once.
        self.assertEqual(text.count("What orders them"), 1, text)

    def test_make_sanitize_finds_the_bare_file_where_make_check_does(self):
        # sanitize.sh passes its program (--program): the file the log names bare is looked for in
        # that stage's folders, the exercise's chapters/ first, as make check's verdict does.
        log = FIXTURES / "13-scan-06-student-racecheck.log"
        bin_dir = sr.ROOT / "build" / "bin"
        for program, folder in (
            ("test.exercise.13-scan.06_warp_scans", "chapters/13-scan"),
            ("test.solution.13-scan.06_warp_scans", "solutions/13-scan"),
        ):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = sr.main(
                    ["--tool", "racecheck", "--program", str(bin_dir / program), str(log)]
                )
            self.assertEqual(status, 0)
            self.assertIn(f"read  at {folder}/lesson_warp_block_scan.cuh:58", out.getvalue())
            self.assertIn(f"write at {folder}/lesson_warp_block_scan.cuh:60", out.getvalue())
        # Without --program the name stays bare (no folder to look in).
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sr.main(["--tool", "racecheck", str(log)])
        self.assertIn("read  at lesson_warp_block_scan.cuh:58", out.getvalue())

    def test_program_folders(self):
        wrong = (
            sr.ROOT / "build" / "bin" / "test.wrong.13-scan.02_scan_then_fan.scan_warp_no_syncwarp"
        )
        self.assertEqual(
            sr.course.program_folders(wrong)[:2],
            ("build/wrong/13-scan/02_scan_then_fan.scan_warp_no_syncwarp", "solutions/13-scan"),
        )
        self.assertEqual(
            sr.course.program_folders("build/bin/test-08-warp-lab-predicated-load")[:2],
            ("labs/08-warp", "chapters/08-warp"),
        )
        self.assertEqual(
            sr.course.program_folders("build/bin/test-08-warp-model")[0], "chapters/08-warp"
        )
        self.assertEqual(sr.course.program_folders("build/bin/bench-13-scan"), ())

    def test_error_between_warps_wants_a_block_barrier(self):
        text = "\n".join(sr.explain(self.log(BLOCK_RACE), "racecheck", self.root))
        self.assertIn("write at chapters/12-reduction/09_shuffle.cu:45 in reduce_kernel<256>", text)
        self.assertIn("read  at chapters/12-reduction/09_shuffle.cu:47", text)
        self.assertIn("an Error", text)
        self.assertIn("__syncthreads()", text)
        self.assertNotIn("__syncwarp()", text)

    def test_older_one_line_form(self):
        rep = sr.parse(OLD_FORMAT)[0]
        self.assertEqual(rep.severity, "Warning")
        self.assertEqual(
            [(a.kind, a.file, a.line) for a in rep.accesses],
            [
                ("read", "/src/Kokkos_FunctorAdapter.hpp", 1571),
                ("write", "/src/Kokkos_Cuda_ReduceScan.hpp", 557),
            ],
        )
        self.assertEqual(rep.accesses[0].function, "scalar_intra_warp_reduction")
        self.assertEqual(rep.hazards, 3968)

    def test_hazard_mode_names_threads_and_lanes(self):
        rep = sr.parse(self.log(HAZARD_MODE), self.root)[0]
        self.assertEqual(rep.hazard_type, "RAW")
        self.assertEqual(
            [(a.kind, a.thread, a.block) for a in rep.accesses],
            [("write", "(0,0,0)", "(3,0,0)"), ("read", "(33,0,0)", "(3,0,0)")],
        )
        text = "\n".join(sr.explain(self.log(HAZARD_MODE), "racecheck", self.root))
        self.assertIn("warp 0, lane 0", text)
        self.assertIn("warp 1, lane 1", text)
        self.assertIn("__syncthreads()", text, "threads of two warps: a block barrier")

    def test_memcheck(self):
        rep = sr.parse(self.log(MEMCHECK), self.root)[0]
        self.assertEqual(
            (rep.tool, rep.space, rep.accesses[0].kind), ("memcheck", "global", "read")
        )
        self.assertEqual((rep.accesses[0].thread, rep.accesses[0].block), ("(37,0,0)", "(2,0,0)"))
        text = "\n".join(sr.explain(self.log(MEMCHECK), "memcheck", self.root))
        self.assertIn("at chapters/14-nbody/05_warp_shuffle.cu:57 in forces<256>", text)
        self.assertIn("by thread (37,0,0) (warp 1, lane 5) in block (2,0,0)", text)
        self.assertIn("16 bytes after the nearest allocation", text)

    def test_synccheck(self):
        text = "\n".join(sr.explain(self.log(SYNCCHECK), "synccheck", self.root))
        self.assertIn(
            "Barrier error detected. Divergent thread(s) in warp at chapters/12-reduction/08_predicate.cu:41",
            text,
        )
        self.assertIn("by thread (5,0,0)", text)

    def test_nothing_to_explain(self):
        self.assertEqual(sr.explain("========= ERROR SUMMARY: 0 errors\nAll tests passed\n"), [])
        self.assertEqual(sr.explain(""), [])

    def test_repeats_are_shown_once(self):
        text = self.log(BLOCK_RACE) * 3
        self.assertEqual(
            sum(line.startswith("race") for line in sr.explain(text, "racecheck", self.root)), 1
        )


if __name__ == "__main__":
    unittest.main()
