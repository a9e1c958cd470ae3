"""Tests for harness/pitfalls.py: the wrong variants read from CMake as a catalogue, a check's
results recorded as what each one fails, and a student's failure matched against the record. The
results fixture is ctest's own JUnit file (CMake 3.25, the course's CTestCustom.cmake) of a run
whose tests print what the wrong variants print: Catch2 v2.13's console output of two real test
cases of chapter 13 failing, a SASS verdict, a skip. No GPU, no build."""

import contextlib
import io
import json
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import check  # noqa: E402
import course  # noqa: E402
import pitfalls  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RESULTS = FIXTURES / "pitfalls-check-results.xml"
# Two of test_scan.cpp's cases; the first wraps over two lines in Catch's header.
AWKWARD = "inclusive and exclusive scans match the host at awkward sizes and every block size"
IN_PLACE = "scans in place (d_out == d_in)"


def catch_output(*cases):
    """Catch2's console text for failing cases, as the fixture's run printed it."""
    out = []
    for name, *sections in cases:
        head = [name] if len(name) <= 79 else [name[:73].rstrip(), name[73:].strip()]
        out += ["-" * 79, *head, *("  " + s for s in sections), "-" * 79, "t.cpp:3", "." * 79, ""]
        out += ["t.cpp:5: FAILED:", "  CHECK( 1 == 2 )", ""]
    return "\n".join(out + ["=" * 79, "test cases: 3 | 1 passed | 2 failed", ""])


class CatalogueTest(unittest.TestCase):
    def test_every_wrong_variant_is_read_with_its_why(self):
        variants = course.wrong_variants()
        self.assertEqual(len(variants), len({v.id for v in variants}))
        self.assertTrue(
            all(v.why and v.test and v.stage in course.stages(v.chapter) for v in variants)
        )
        by_id = {v.id: v for v in variants}
        # A FIND in a bracket argument, a WHY with ")" and ";" inside quotes, LIBS after TOOL.
        v = by_id["13-scan/06_warp_scans.ptx_form_in_shared"]
        self.assertEqual((v.tool, v.file), ("sass", "06_warp_scans.cu"))
        self.assertTrue(v.why.startswith("the PTX form's step"))
        self.assertEqual(
            by_id["13-scan/02_scan_then_fan.fan_adds_own_warp"].file, "lesson_block_scan.cuh"
        )
        self.assertTrue(all(v.tool in ("", "sass", "speed", *course.SANITIZERS) for v in variants))

    def test_targets_are_the_recorded_variants(self):
        recorded = [v for v in course.wrong_variants() if v.tool in ("", "sass")]
        self.assertEqual(len(pitfalls.targets()), len(recorded))
        self.assertIn("test.wrong.13-scan.02_scan_then_fan.base_of_own_block", pitfalls.targets())
        self.assertIn("wrong.13-scan.06_warp_scans.ptx_form_in_shared", pitfalls.targets())

    def test_targets_of_some_chapters(self):
        some = pitfalls.targets(chapters={"15-ncc"})
        self.assertTrue(some)
        self.assertTrue(all(".15-ncc." in t for t in some), some)
        self.assertEqual(
            len(some), sum(1 for t in pitfalls.targets() if ".15-ncc." in t)
        )  # all of that chapter's
        self.assertEqual(pitfalls.targets(chapters=set()), [])

    def test_an_unknown_chapter_is_refused(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = pitfalls.main(["record", "--run", "--chapters", "15-nc"])
        self.assertEqual(status, 2)
        self.assertIn("pitfalls: no chapter '15-nc'", out.getvalue())

    def test_cmake_arguments(self):
        text = 'f(A "x \\"y\\" (z); w" B [=[a "b" ]]=] C d) # tail'
        self.assertEqual(
            course._cmake_arguments(text, 2), ["A", 'x "y" (z); w', "B", 'a "b" ]', "C", "d"]
        )

    def test_test_case_names_from_the_test_file(self):
        names = pitfalls.case_names("13-scan", "test_scan.cpp")
        self.assertIn(AWKWARD, names)
        self.assertIn(IN_PLACE, names)


class FailingCasesTest(unittest.TestCase):
    def test_wrapped_names_and_sections(self):
        names = pitfalls.case_names("13-scan", "test_scan.cpp")
        out = catch_output((AWKWARD,), (IN_PLACE, "threads = 64"), (AWKWARD, "again"))
        self.assertEqual(pitfalls.failing_cases(out, names), [AWKWARD, IN_PLACE])
        self.assertIn("size\n", out)  # the name did wrap

    def test_a_hang_is_a_failing_case(self):
        out = catch_output((IN_PLACE,)) + "\nTIMEOUT: the tests did not finish in 30 s\n"
        self.assertEqual(pitfalls.failing_cases(out, [IN_PLACE]), [IN_PLACE, pitfalls.HANG])

    def test_missed_rules(self):
        lines = [
            "SASS signature missed: 'SHFL.UP >= 6 at B in 64..512' in x<64u>: found 5. why",
            "SASS signature missed (on sm_80; the rules are written for sm_90): 'LDS <= 2' in y: found 4",
        ]
        self.assertEqual(
            pitfalls.missed_rules("\n".join(lines)), ["SHFL.UP >= 6 at B in 64..512", "LDS <= 2"]
        )


class RecordTest(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="course-pitfalls-"))
        self.addCleanup(shutil.rmtree, self.dir)
        where = lambda chapter, gpu=None, root=None: self.dir / chapter / pitfalls.RECORD  # noqa: E731
        patcher = mock.patch.object(pitfalls, "record_path", where)
        patcher.start()
        self.addCleanup(patcher.stop)
        with mock.patch.object(course, "gpu_name", return_value="NVIDIA H200"):
            self.lines = pitfalls.record(RESULTS, "h200", course.ROOT, "test")

    def test_a_chapters_record_leaves_the_others_alone(self):
        with mock.patch.object(course, "gpu_name", return_value="NVIDIA H200"):
            shutil.rmtree(self.dir / "12-reduction", ignore_errors=True)
            lines = pitfalls.record(RESULTS, "h200", course.ROOT, "test", chapters={"13-scan"})
        self.assertEqual([line.split(":")[0] for line in lines], ["13-scan"])
        self.assertFalse((self.dir / "12-reduction").exists())

    def test_the_record_holds_what_each_variant_failed(self):
        doc = json.loads((self.dir / "13-scan" / pitfalls.RECORD).read_text())
        self.assertEqual(doc["schema"], pitfalls.SCHEMA)
        self.assertEqual(doc["run"]["gpu"], "NVIDIA H200")
        got = doc["variants"]
        self.assertEqual(
            got["02_scan_then_fan.base_of_own_block"], {"tool": "", "failing": [AWKWARD, IN_PLACE]}
        )
        self.assertEqual(got["03_reduce_then_scan.exclusive_off_by_one"]["failing"], [IN_PLACE])
        self.assertEqual(
            got["06_warp_scans.shfl_form_in_shared"],
            {"tool": "sass", "missed": ["SHFL.UP >= 5", "LDS|STS <= 8"]},
        )
        # A sanitizer's variant keeps its tool (the sanitizer's verdict explains it).
        self.assertEqual(got["02_scan_then_fan.scan_warp_no_syncwarp"], {"tool": "racecheck"})
        # Not recorded, and said why: a skipped one, and one the run did not hold.
        left = doc["not_recorded"]
        self.assertIn("skipped: SASS not checked", left["06_warp_scans.ptx_form_in_shared"])
        self.assertIn("not in the results", left["04_two_level.tile_loop_forgets_carry"])
        racecheck = sum(
            1 for v in course.wrong_variants() if v.chapter == "13-scan" and v.tool == "racecheck"
        )
        self.assertTrue(
            any(line.startswith(f"13-scan: {3 + racecheck} of ") for line in self.lines), self.lines
        )
        # Stamped beside it, from the sources that make what the variants fail.
        stamp = json.loads((self.dir / "13-scan" / "stamps.json").read_text())["artefacts"][
            pitfalls.RECORD
        ]
        self.assertIn("chapters/13-scan/CMakeLists.txt", stamp["sources"])
        self.assertIn("chapters/13-scan/test_scan.cpp", stamp["sources"])
        self.assertIn("solutions/13-scan/lesson_block_scan.cuh", stamp["sources"])

    def test_a_student_with_the_same_failing_cases_is_told_the_pitfall_and_the_hint(self):
        lines = pitfalls.advice("13-scan/02_scan_then_fan", failing=[IN_PLACE, AWKWARD])
        text = "\n".join(lines)
        self.assertIn("the same failing test cases as a known mistake (base_of_own_block)", text)
        self.assertIn("off by one block", text)  # its WHY, from CMakeLists.txt
        self.assertIn("make hint STAGE=exercise/13-scan/02_scan_then_fan", text)
        # Another stage's variants are not this stage's pitfalls; other cases match nothing.
        self.assertEqual(pitfalls.advice("13-scan/04_two_level", failing=[IN_PLACE, AWKWARD]), [])
        self.assertEqual(pitfalls.advice("13-scan/02_scan_then_fan", failing=[IN_PLACE]), [])

    def test_the_random_sweep_does_not_decide(self):
        # The sweep fails or not by the run's seed: the fixed cases decide.
        sweep = pitfalls.case_names("13-scan", "test_scan.cpp", tag="[sweep]")
        self.assertEqual(len(sweep), 1)
        ((v, how),) = pitfalls.match("13-scan/03_reduce_then_scan", failing=[IN_PLACE, *sweep])
        self.assertEqual((v.name, how), ("exclusive_off_by_one", "same"))

    def test_close_is_said_as_close(self):
        other = "sums that wrap around 2^32 match the host's wrapping scan"
        self.assertEqual(
            pitfalls.match("13-scan/03_reduce_then_scan", failing=[IN_PLACE, other]), []
        )
        with mock.patch.object(
            pitfalls,
            "load",
            return_value={"02_scan_then_fan.base_of_own_block": {"failing": ["a", "b", "c"]}},
        ):
            ((v, how),) = pitfalls.match("13-scan/02_scan_then_fan", failing=["a", "b", "c", "d"])
        self.assertEqual((v.name, how), ("base_of_own_block", "close"))

    def test_the_same_missing_sass_fact(self):
        lines = pitfalls.advice(
            "13-scan/06_warp_scans", missed=["SHFL.UP >= 5", "LDS|STS <= 8", "LDL|STL == 0"]
        )
        self.assertIn(
            "missing the same SASS fact as a known mistake (shfl_form_in_shared)", lines[0]
        )
        self.assertIn("[in lesson_warp_block_scan.cuh]", lines[0])

    def test_make_check_names_the_pitfall_of_a_failing_exercise(self):
        out = catch_output((AWKWARD,), (IN_PLACE, "threads = 64"))
        kinds = {
            "tests": "exercise/13-scan/02_scan_then_fan",
            "sweep": "exercise/13-scan/02_scan_then_fan/sweep",
        }
        results = {kinds["tests"]: ("failed", out), kinds["sweep"]: ("passed", "")}
        lines = check.pitfall_lines("exercise/13-scan/02_scan_then_fan", kinds, results, {})
        self.assertIn("base_of_own_block", lines[0])
        self.assertIn("make hint STAGE=exercise/13-scan/02_scan_then_fan", lines[-1])
        self.assertEqual(
            check.pitfall_lines("solution/13-scan/02_scan_then_fan", kinds, results, {}), []
        )


class ShowTest(unittest.TestCase):
    def test_show_lists_the_catalogue(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(pitfalls.main(["show", "13-scan"]), 0)
        self.assertIn(
            "02_scan_then_fan.base_of_own_block: each block adds the inclusive total",
            out.getvalue(),
        )


if __name__ == "__main__":
    unittest.main()


class CommittedRecordsTest(unittest.TestCase):
    """The records make reference took on the reference GPU (reference/<gpu>/*/pitfalls.json)."""

    def test_a_student_who_fails_as_a_variant_did_is_told_that_variant(self):
        # Variants that fail the same cases tie, and every one of a tie is named: a cap on the
        # names once hid a variant behind three others with the same failures (13/08).
        told, recorded = [], 0
        for v in course.wrong_variants():
            entry = pitfalls.load(v.chapter).get(f"{v.stage}.{v.name}")
            if not entry or not (entry.get("failing") or entry.get("missed")):
                continue  # not recorded, or judged only on speed or by a sanitizer
            recorded += 1
            found = pitfalls.match(
                f"{v.chapter}/{v.stage}", entry.get("failing", []), entry.get("missed", [])
            )
            if v.name not in [w.name for w, _ in found]:
                told.append(f"{v.chapter}/{v.stage}.{v.name}: {[w.name for w, _ in found]}")
        if recorded == 0:
            self.skipTest("no pitfalls record is committed for the reference GPU")
        self.assertEqual(told, [], "a failure the record holds that names another mistake only")
