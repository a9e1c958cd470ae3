"""Tests for harness/lesson.py: the rule language, the SASS verdicts on synthetic captures, and
every solution stage against its own signature on the SASS committed from the reference GPU (no
GPU and no CUDA tools needed)."""

import contextlib
import io
import shutil
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import course  # noqa: E402
import lesson  # noqa: E402
import sass  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAXPY = FIXTURES / "saxpy_sm90.sass"  # grid-stride loop, 32-bit loads
VEC4 = FIXTURES / "saxpy_vec4_sm90.sass"  # the same with 128-bit loads


def kernels_of(path):
    ks = sass.parse(path.read_text())
    sass.demangle(ks)
    return ks


class RuleTest(unittest.TestCase):
    def test_forms(self):
        r = lesson.parse_rule("LDG.128 >= 2")
        self.assertEqual((r.low, r.high), (2, float("inf")))
        self.assertTrue(r.patterns[0].matches("LDG.E.128"))
        self.assertTrue(r.patterns[0].matches("LDG.E.128.CONSTANT"))
        self.assertFalse(r.patterns[0].matches("LDG.E"))
        self.assertFalse(r.patterns[0].matches("LDGSTS.E.128"))
        r = lesson.parse_rule("LDL|STL == 0")
        self.assertEqual([p.base for p in r.patterns], ["LDL", "STL"])
        self.assertEqual((r.low, r.high), (0, 0))
        r = lesson.parse_rule("SHFL.BFLY in 5..15")
        self.assertEqual((r.low, r.high), (5, 15))
        self.assertEqual((lesson.parse_rule("X < 3").high, lesson.parse_rule("X > 3").low), (2, 4))

    def test_forbidden_modifiers(self):
        p = lesson.parse_rule("WARPSYNC.!COLLECTIVE.!ALL == 0").patterns[0]
        self.assertTrue(p.matches("WARPSYNC"))
        self.assertFalse(p.matches("WARPSYNC.COLLECTIVE"))
        self.assertFalse(p.matches("WARPSYNC.ALL"))
        self.assertEqual(str(p), "WARPSYNC.!COLLECTIVE.!ALL")

    def test_bad_rules_are_one_line_errors(self):
        for bad in ("LDG >=", "ldg.128 >= 1", "LDG >= two", "LDG ~ 3", ". >= 1"):
            with self.assertRaises(lesson.Usage, msg=bad):
                lesson.parse_rule(bad)


class VerdictTest(unittest.TestCase):
    def test_scalar_loads_miss_the_float4_rule(self):
        rules = [lesson.parse_rule({"rule": "LDG.128 >= 2", "why": "float4 loads"})]
        self.assertEqual(lesson.check_rules(kernels_of(VEC4), rules), [])
        misses = lesson.check_rules(kernels_of(SAXPY), rules)
        self.assertEqual(len(misses), 1)
        rule, kernel, n, found = misses[0]
        self.assertEqual(n, 0)
        self.assertIn("LDG.E", found)  # the nearest: what the kernel has instead

    def test_kernel_filter_names_what_is_there(self):
        rules = [lesson.parse_rule({"rule": "LDG >= 1", "kernels": "no_such_kernel"})]
        ((rule, kernel, n, found),) = lesson.check_rules(kernels_of(SAXPY), rules)
        self.assertIn("no kernel named like 'no_such_kernel'", found)

    def test_missed_verdict_points_at_sass_diff(self):
        with (
            mock.patch.object(lesson, "rules_of", return_value=[lesson.parse_rule("LDG.128 >= 1")]),
            mock.patch.object(lesson, "stage_sass", return_value=(kernels_of(SAXPY), "x")),
            mock.patch.object(sass, "find_tool", return_value="/bin/true"),
        ):
            state, lines = lesson.sass_verdict("exercise", "11-streaming/03_vectorized_float4")
        self.assertEqual(state, "missed")
        self.assertIn("'LDG.128 >= 1'", lines[0])
        self.assertIn(
            "make sass-diff A=11-streaming/03_vectorized_float4 B=exercise/11-streaming/03_vectorized_float4",
            lines[-1],
        )

    def test_no_cuobjdump_is_never_a_pass(self):
        with mock.patch.object(sass, "find_tool", return_value=None):
            state, lines = lesson.sass_verdict("exercise", "11-streaming/03_vectorized_float4")
        self.assertEqual(state, "not checked")
        self.assertIn("SASS not checked: cuobjdump not found", lines[0])
        out = io.StringIO()
        with (
            mock.patch.object(sass, "find_tool", return_value=None),
            contextlib.redirect_stdout(out),
        ):
            status = lesson.main(["sass", "exercise/11-streaming/03_vectorized_float4"])
        self.assertEqual(status, 0)
        self.assertIn("COURSE_SKIP: SASS not checked", out.getvalue())


def listing(kernels, arch="sm_90"):
    """A hand-written `cuobjdump -sass` listing: {mangled name: [instruction, ...]}, each kernel
    ending in EXIT, in the form sass.parse reads (there is no cuobjdump here: a design's SASS is
    written down as the instructions that matter to its rules)."""
    lines = ["", "Fatbin elf code:", "================", f"arch = {arch}", "", f"\tcode for {arch}"]
    for name, body in kernels.items():
        lines += ["", f"\t\tFunction : {name}"]
        for i, insn in enumerate(body + ["EXIT", "BRA 0x0"]):
            lines.append(f"        /*{16 * i:04x}*/                   {insn} ;  /* 0x0 */")
    return "\n".join(lines) + "\n"


def parsed(text):
    ks = sass.parse(text)
    sass.demangle(ks)
    return ks


# Mangled names of the kernels the tests below write SASS for (c++filt demangles them).
REDUCE_09 = "_ZN12_GLOBAL__N_113reduce_kernelILj{b}EEEvPiPKim"  # reduce_kernel<B> (B an unsigned)
SCAN_RANGES4 = (
    "_ZN4scan12scan_ranges4ILj{b}ENS_15warp_block_scanINS_14shfl_warp_scanEEEiEEvPT1_PKS4_S7_mmbb"
)
SCAN_PARTIALS = "_ZN4scan13scan_partialsILj{b}ENS_15warp_block_scanINS_14shfl_warp_scanEEEiEEvPT1_m"


def warp_block_scan_sass(b, second_level_steps, shared=True):
    """The SASS that matters of stage 06's block scan at block size b: five SHFL.UP per warp scan,
    then (several warps) warp 0's scan of the warps' totals in second_level_steps more, the totals
    through shared memory; a block of one warp (shared=False) hands its total on by a SHFL.IDX."""
    body = ["S2R R0, SR_TID.X", "LDG.E.128 R4, desc[UR4][R2.64]"]
    body += ["SHFL.UP PT, R9, R8, 0x1, RZ", "IADD3 R8, R8, R9, RZ"] * 5
    if shared:
        body += ["BAR.SYNC.DEFER_BLOCKING 0x0", "STS [R3], R8", "BAR.SYNC.DEFER_BLOCKING 0x0"]
        body += ["LDS R10, [R3]"] + ["SHFL.UP PT, R11, R10, 0x1, RZ"] * second_level_steps
        body += ["STS [R3], R10", "BAR.SYNC.DEFER_BLOCKING 0x0", "LDS R12, [R3+-0x4]"]
    else:
        body += ["SHFL.IDX PT, R13, R8, 0x1f, 0x1f"]
    return body + ["STG.E.128 desc[UR4][R2.64], R4"]


class ScopedRuleTest(unittest.TestCase):
    """A rule applies where the lesson lives: `sizes` scopes it to the block sizes B it is about,
    and the other right designs pass."""

    def test_sizes_parse_and_scope_the_rule(self):
        r = lesson.parse_rule({"rule": "SHFL.UP >= 6", "kernels": "k<", "sizes": "in 64..512"})
        self.assertEqual((r.size_low, r.size_high), (64, 512))
        self.assertEqual(r.label(), "SHFL.UP >= 6 at B in 64..512")
        self.assertIn("at block sizes B in 64..512", r.scope())
        self.assertEqual(lesson.parse_rule({"rule": "X >= 1", "sizes": ">= 64"}).size_low, 64)
        with self.assertRaises(lesson.Usage):
            lesson.parse_rule({"rule": "X >= 1", "sizes": "64 or more"})

    def test_block_size_is_the_first_unsigned_template_argument(self):
        ks = parsed(
            listing({SCAN_RANGES4.format(b=32): ["NOP"], REDUCE_09.format(b=1024): ["NOP"]})
        )
        self.assertEqual([lesson.block_size(k) for k in ks], [32, 1024])

    def test_a_rule_with_no_kernel_at_its_sizes_is_missed_unless_the_capture_is_a_subset(self):
        ks = parsed(listing({REDUCE_09.format(b=256): ["SHFL.BFLY PT, R1, R0, 0x10, 0x1f"]}))
        rule = lesson.parse_rule(
            {"rule": "SHFL.BFLY >= 1", "kernels": "reduce_kernel", "sizes": "== 32"}
        )
        ((_, _, _, found),) = lesson.check_rules(ks, [rule])
        self.assertIn("no kernel like 'reduce_kernel' at B == 32 (built at B = 256)", found)
        self.assertEqual(lesson.check_rules(ks, [rule], partial=True), [])

    def test_13_06_block_of_one_warp_scans_without_shared_memory(self):
        # At B = 32 the block is one warp: its scan is the warp scan, its total lane 31's value,
        # no shared memory and no barrier. At 64 a second level as short as the two warps need.
        design = {}
        for b, steps in ((32, 0), (64, 1), (128, 2), (256, 3), (512, 4), (1024, 5)):
            for name in (SCAN_RANGES4, SCAN_PARTIALS):
                design[name.format(b=b)] = warp_block_scan_sass(b, steps, shared=b > 32)
        ks = parsed(listing(design))
        rules = [
            r for r in lesson.rules_of("13-scan/06_warp_scans") if "warp_block_scan" in r.kernels
        ]
        self.assertGreaterEqual(len(rules), 3)
        self.assertEqual(lesson.check_rules(ks, rules), [])
        # The rule as it was, at every block size, refused this design at B = 32.
        unscoped = lesson.parse_rule({"rule": "SHFL.UP >= 10", "kernels": "warp_block_scan<"})
        ((_, kernel, n, _),) = lesson.check_rules(ks, [unscoped])
        self.assertEqual(
            (lesson.block_size(next(k for k in ks if lesson.short_name(k) == kernel)), n), (32, 5)
        )
        one_warp = [k for k in ks if lesson.block_size(k) == 32]
        self.assertEqual(
            lesson.count_matching(one_warp[0], lesson.parse_rule("LDS|STS >= 0").patterns), 0
        )
        # A block of several warps that leaves its warps' totals unscanned is still missed.
        ks = parsed(listing({SCAN_RANGES4.format(b=64): warp_block_scan_sass(64, 0)}))
        misses = lesson.check_rules(ks, rules, partial=True)
        self.assertEqual([m[0].label() for m in misses], ["SHFL.UP >= 6 at B in 64..512"])

    def test_12_09_shorter_second_level_passes(self):
        # warp 0 adds the B / 32 warps' sums in log2(B / 32) butterfly steps, not always five.
        design = {}
        for b, steps in ((32, 0), (64, 1), (128, 2), (256, 3), (512, 4), (1024, 5)):
            body = ["SHFL.BFLY PT, R1, R0, 0x10, 0x1f", "IADD3 R0, R0, R1, RZ"] * 5
            if b > 32:
                body += ["STS [R2], R0", "BAR.SYNC.DEFER_BLOCKING 0x0", "LDS R3, [R2]"]
                body += ["SHFL.BFLY PT, R4, R3, 0x1, 0x1f"] * steps
            design[REDUCE_09.format(b=b)] = body + ["STG.E desc[UR4][R6.64], R0"]
        self.assertEqual(
            lesson.check_rules(parsed(listing(design)), lesson.rules_of("12-reduction/09_shuffle")),
            [],
        )
        # No second level at all above one warp: missed.
        design[REDUCE_09.format(b=128)] = ["SHFL.BFLY PT, R1, R0, 0x10, 0x1f"] * 5 + [
            "BAR.SYNC 0x0",
            "LDS R3, [R2]",
        ]
        misses = lesson.check_rules(
            parsed(listing(design)), lesson.rules_of("12-reduction/09_shuffle")
        )
        self.assertEqual(
            [(m[0].label(), m[1]) for m in misses],
            [("SHFL.BFLY|SHFL.DOWN >= 6 at B in 64..512", "reduce_kernel<128u>")],
        )

    def test_show_prints_each_rule_with_its_scope_and_why(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            lesson.main(["show", "13-scan"])
        text = out.getvalue()
        self.assertIn(
            "sass:  SHFL.UP >= 6 in kernels like 'warp_block_scan<scan::shfl_warp_scan>', at block sizes B in 64..512",
            text,
        )
        self.assertIn("warp 0 scans the warps' totals on shuffles too", text)


class AlternativeDesignsTest(unittest.TestCase):
    """The other right designs as source, for a run on a GPU machine, where the hand-written SASS
    above stands in for it here. Each patch applies to solutions/; judge the patched stage as the
    student's exercise (a patched solution can drop the code its wrong variants edit, and CMake
    then refuses to configure), e.g. for 15-07:

        P=harness/tests/fixtures/alternatives/15-07-interior-sums-once.patch
        git apply $P && cp solutions/15-ncc/07_dp4a.cu solutions/15-ncc/lesson_dp4a.cuh chapters/15-ncc/
        git apply -R $P
        make check STAGE=exercise/15-ncc/07_dp4a   # tests, sanitizers, SASS signature, speed
        git checkout chapters/

    On the H200 (2026-11-29) 15-07 passed all four checks so (speed 1.00x the reference).
    """

    def test_15_07_loop_split_with_shared_window_sums_passes(self):
        # The text-only student's 07 (15-07-interior-sums-once.patch): the row's loop split into
        # the first word, the words inside every window and the rest; 640 IDP.4A at 16x16 (the
        # PTX of the patch has 640 dp4a: 16 rows x (5 words x 4 shifts of SumIT + 3 x 2 shared
        # window sums + 7 edge words-and-shifts x 2)) and one LDG per image word.
        name = "_ZN12_GLOBAL__N_19corr_dp4aILb{s}ELi16ELi16EEEvN3ncc4viewENS1_6outputEPKj"
        body = ["LDG.E.CONSTANT R2, desc[UR4][R4.64]"] * 80
        body += ["IDP.4A.U8.U8 R6, R2, c[0x3][0x0], R6"] * 640
        ks = parsed(listing({name.format(s=b): body for b in (0, 1)}))
        self.assertEqual(lesson.check_rules(ks, lesson.rules_of("15-ncc/07_dp4a")), [])
        # Bytes multiplied one by one (the planted no_dp4a): about 70 IDP.4A, missed.
        ks = parsed(listing({name.format(s=1): body[:80] + body[80:150]}))
        misses = lesson.check_rules(ks, lesson.rules_of("15-ncc/07_dp4a"))
        self.assertEqual([m[0].label() for m in misses], ["IDP.4A >= 300"])

    def test_the_alternatives_still_apply_to_the_solutions(self):
        patches = sorted((FIXTURES / "alternatives").glob("*.patch"))
        self.assertEqual(
            [p.name for p in patches],
            [
                "12-09-short-second-level.patch",
                "13-06-one-warp-block-scan.patch",
                "15-07-interior-sums-once.patch",
            ],
        )
        if not shutil.which("git"):
            self.skipTest("git not found")
        for p in patches:
            run = subprocess.run(
                ["git", "apply", "--check", str(p)], cwd=course.ROOT, capture_output=True, text=True
            )
            self.assertEqual(run.returncode, 0, f"{p.name}: {run.stderr.strip()}")


class DeclarationsTest(unittest.TestCase):
    def test_every_chapter_parses_and_names_real_stages(self):
        for chapter in course.chapters():
            lessons = lesson.load_lessons(chapter)
            for stage, decl in lessons.items():
                self.assertIn("lesson", decl, f"{chapter}/{stage}")
                speed = decl.get("speed")
                self.assertTrue(
                    speed is None or isinstance(speed, (str, dict)), f"{chapter}/{stage}"
                )
                lesson.rules_of(f"{chapter}/{stage}")  # every rule parses

    def test_every_stage_declares_its_lesson(self):
        missing = [
            f"{c}/{s}"
            for c in course.chapters()
            for s in course.stages(c)
            if "lesson" not in lesson.load_lessons(c).get(s, {})
        ]
        self.assertEqual(missing, [], "stages with no lesson in chapters/<chapter>/lessons.toml")

    def test_every_solution_meets_its_signature_on_the_committed_sass(self):
        failures = []
        for stage_id in course.stage_ids():
            if not course.capture_path(stage_id).is_file():
                continue
            state, lines = lesson.sass_verdict("solution", stage_id, captured=True)
            if state not in ("met", "none"):
                failures.append(f"{stage_id}: {state}: {' / '.join(lines)}")
        self.assertEqual(failures, [])


class SpeedStatisticsTest(unittest.TestCase):
    def test_quantiles(self):
        xs = [1.0, 2.0, 3.0, 4.0]
        self.assertEqual(lesson.quantile(xs, 0.0), 1.0)
        self.assertEqual(lesson.quantile(xs, 1.0), 4.0)
        self.assertAlmostEqual(lesson.quantile(xs, 0.5), 2.5)

    def test_a_stage_without_a_speed_lesson_is_skipped_not_failed(self):
        res = lesson.speed_verdict("08-warp/02_warp_reduce", "/nonexistent", "/nonexistent")
        self.assertEqual(res.state, "skipped")
        self.assertIn("not judged", res.lines[0])

    def test_unbuilt_programs_are_an_error_not_a_pass(self):
        res = lesson.speed_verdict(
            "11-streaming/02_unrolled_templated", "/nonexistent/a", "/nonexistent/b"
        )
        self.assertEqual(res.state, "error")


if __name__ == "__main__":
    unittest.main()
