"""Tests for harness/lesson.py: the rule language, the SASS verdicts on synthetic captures, and
every solution stage against its own signature on the SASS committed from the reference GPU (no
GPU and no CUDA tools needed)."""

import contextlib
import io
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
