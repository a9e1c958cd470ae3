"""Tests for harness/ptx.py and the PTX paths of sass.py and lesson.py: what a student without
cuobjdump sees (their own code as PTX, the PTX analogue of the signature, never the reference's
capture in its place). Most need no CUDA tools; RealCompileTest compiles a stage with nvcc."""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import course  # noqa: E402
import lesson  # noqa: E402
import ptx  # noqa: E402
import sass  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# nvcc's PTX of two small kernels (the source is in its opening comment): a float4 SAXPY calling a
# device function, and a warp sum of five butterfly shuffles, a fence and an atomicAdd.
FIXTURE = FIXTURES / "saxpy4_warp_sum.ptx"
STAGE = "11-streaming/01_grid_stride"


FIND_TOOL = sass.find_tool


def without_cuobjdump(name):
    """sass.find_tool on a machine with nvcc but no cuobjdump (a laptop without a GPU)."""
    return None if name == "cuobjdump" else FIND_TOOL(name)


def fixture_kernels():
    kernels = ptx.parse(FIXTURE.read_text())
    sass.demangle(kernels)
    return kernels


def run_sass(*argv):
    """sass.main(argv) -> (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = sass.main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def rule_patterns():
    """Every opcode pattern a rule of some chapters/*/lessons.toml names, as written."""
    return sorted(
        {
            str(p)
            for stage_id in course.stage_ids()
            for rule in lesson.rules_of(stage_id)
            for p in rule.patterns
        }
    )


class AnalogueTableTest(unittest.TestCase):
    def test_every_rule_opcode_has_an_analogue_or_says_why_not(self):
        undecided = []
        for text in rule_patterns():
            pattern = lesson.parse_rule(f"{text} >= 1").patterns[0]
            found = lesson.ptx_analogue(pattern)
            if found[0] is None and text not in lesson.NO_PTX_ANALOGUE:
                undecided.append(text)
        self.assertEqual(undecided, [], "add them to lesson.PTX_ANALOGUES (or NO_PTX_ANALOGUE)")

    def test_each_analogue_matches_its_ptx_and_not_its_neighbours(self):
        cases = {
            "SHFL.BFLY": (["shfl.sync.bfly.b32"], ["shfl.sync.down.b32", "shfl.sync.idx.b32"]),
            "MEMBAR.GPU": (
                ["membar.gl", "fence.sc.gpu", "fence.acq_rel.gpu"],
                ["membar.cta", "fence.sc.sys", "fence.proxy.async"],
            ),
            "LDG.128": (
                [
                    "ld.global.v4.f32",
                    "ld.global.nc.v4.f32",
                    "ld.global.nc.v4.u32",
                    "ld.global.v2.f64",
                    "ld.global.L1::no_allocate.v4.s32",
                ],
                ["ld.global.f32", "ld.global.v2.f32", "ld.shared.v4.f32"],
            ),
            "LDG.E.!128": (
                ["ld.global.f32", "ld.global.nc.u32", "ld.global.v2.f32"],
                ["ld.global.v4.f32", "ld.shared.f32"],
            ),
            "STG.128": (["st.global.v4.f32"], ["st.global.f32", "st.shared.v4.f32"]),
            "IDP.4A": (["dp4a.s32.s32", "dp4a.u32.u32"], ["dp2a.lo.s32.s32"]),
            "LDL": (["ld.local.u32", "ld.local.v4.f32"], ["ld.global.u32"]),
            "STL": (["st.local.u32"], ["st.shared.u32"]),
            "ATOMG.ADD": (
                ["atom.global.add.u32", "atom.relaxed.gpu.global.add.u64"],
                ["atom.shared.add.u32", "red.global.add.u32", "atom.global.max.s32"],
            ),
            "REDG.ADD": (
                ["red.global.add.u32", "red.relaxed.gpu.global.add.f32"],
                ["atom.global.add.u32", "red.shared.add.u32"],
            ),
            "BAR.SYNC": (
                ["bar.sync", "barrier.sync.aligned", "barrier.sync", "bar.cta.sync"],
                ["bar.warp.sync", "bar.red.popc.u32", "bar.arrive"],
            ),
            "BAR.RED.POPC": (["bar.red.popc.u32", "barrier.red.popc.u32"], ["bar.sync"]),
            "VOTE.ANY": (
                ["vote.sync.ballot.b32", "vote.sync.any.pred", "activemask.b32"],
                ["vote.sync.all.pred"],
            ),
            "IMMA.U8": (
                ["mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32"],
                ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"],
            ),
            "LD.64.STRONG.GPU": (
                ["ld.relaxed.gpu.u64", "ld.acquire.gpu.b64"],
                ["ld.relaxed.gpu.global.u64", "ld.u64"],
            ),
            "LDG.64.STRONG.GPU": (["ld.relaxed.gpu.global.u64"], ["ld.global.u64"]),
            "ST.64.STRONG.GPU": (["st.relaxed.gpu.u64", "st.release.gpu.b64"], ["st.u64"]),
            "F2F.F64.F32": (["cvt.f64.f32"], ["cvt.rn.f32.f64"]),
            "MUFU.RSQ": (["rsqrt.approx.f32", "rsqrt.approx.ftz.f32"], ["sqrt.rn.f32"]),
        }
        for text, (hits, misses) in cases.items():
            pattern = lesson.parse_rule(f"{text} >= 1").patterns[0]
            regex, shown, _ = lesson.ptx_analogue(pattern)
            for opcode in hits:
                self.assertTrue(regex.search(opcode), f"{text} should match {opcode}")
            for opcode in misses:
                self.assertFalse(regex.search(opcode), f"{text} should not match {opcode}")

    def test_no_analogue_is_said(self):
        pattern = lesson.parse_rule("BSSY == 0").patterns[0]
        self.assertEqual(lesson.ptx_analogue(pattern)[0], None)


class ParseTest(unittest.TestCase):
    def test_kernels_functions_and_declarations(self):
        kernels = fixture_kernels()
        # The .extern .func declaration has no body: not a function here.
        self.assertEqual(
            [(k.name, k.entry) for k in kernels],
            [("_Z5twicef", False), ("_Z6saxpy4P6float4PKS_fi", True), ("_Z8warp_sumPiPKi", True)],
        )
        self.assertEqual({k.arch for k in kernels}, {"compute_90"})

    def test_instruction_counts(self):
        twice, saxpy4, warp_sum = (ptx.count(k) for k in fixture_kernels())
        self.assertEqual((twice["total"], saxpy4["total"], warp_sum["total"]), (4, 24, 30))
        self.assertEqual(
            saxpy4["classes"],
            {
                "global memory": 2,
                "parameters": 6,
                "branch/convergence": 3,
                "predicate/select": 1,
                "fp arithmetic": 3,
                "int arithmetic": 4,
                "move": 5,
            },
        )
        self.assertEqual(warp_sum["opcodes"]["shfl.sync.bfly.b32"], 5)
        self.assertEqual(warp_sum["classes"]["shuffle"], 5)
        self.assertEqual(warp_sum["classes"]["barrier/fence"], 1)  # membar.gl
        self.assertEqual((saxpy4["predicated"], warp_sum["predicated"]), (1, 1))
        for stats in (twice, saxpy4, warp_sum):
            self.assertEqual(sum(stats["classes"].values()), stats["total"])

    def test_multi_line_call_guard_and_labels(self):
        saxpy4 = fixture_kernels()[1]
        call = next(i for i in saxpy4.body if i.base == "call")
        self.assertEqual(call.text, "call.uni (retval0), _Z5twicef, ( param0 )")
        branch = next(i for i in saxpy4.body if i.base == "bra")
        self.assertEqual((branch.guard, branch.operands), ("@%p1", "$L__BB1_2"))
        self.assertEqual(saxpy4.body[-1].labels, ["$L__BB1_2"])

    def test_listing_is_readable(self):
        saxpy4 = fixture_kernels()[1]
        lines = ptx.listing(saxpy4)
        text = "\n".join(lines)
        self.assertNotIn(".loc", text)
        self.assertNotIn(".reg", text)
        self.assertIn("ld.param.u64 %rd1, [param_0]", text)  # the mangled prefix is gone
        self.assertIn("// fixture.cu:6", text)  # the source line it comes from
        self.assertIn("ld.global.v4.f32 {%f2, %f3, %f4, %f5}, [%rd5]", text)

    def test_classes(self):
        cases = {
            "ld.global.nc.v4.f32": "global memory",
            "st.local.u32": "local memory",
            "ld.shared::cta.u32": "shared memory",
            "ld.const.u8": "constant memory",
            "ld.param.u64": "parameters",
            "ld.u32": "generic memory",
            "tex.2d.v4.f32.f32": "texture/surface",
            "shfl.sync.up.b32": "shuffle",
            "vote.sync.ballot.b32": "vote",
            "fence.sc.gpu": "barrier/fence",
            "bar.warp.sync": "branch/convergence",
            "selp.b32": "predicate/select",
            "fma.rn.f32": "fp arithmetic",
            "add.s64": "int arithmetic",
            "dp4a.s32.s32": "int arithmetic",
            "cvt.rn.f32.s32": "conversion",
            "cvta.to.global.u64": "move",
            "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32": "int arithmetic",
            "cp.async.wait_group": "barrier/fence",
            "weird.op": "other",
        }
        for opcode, expected in cases.items():
            with self.subTest(opcode=opcode):
                self.assertEqual(ptx.classify(opcode), expected)


class HintTest(unittest.TestCase):
    def hints(self, rules):
        parsed = [lesson.parse_rule(r) for r in rules]
        with mock.patch.object(lesson, "rules_of", return_value=parsed):
            return lesson.ptx_hints(STAGE, fixture_kernels())

    def test_counts_per_kernel_and_never_a_verdict(self):
        lines = self.hints(
            [
                {"rule": "SHFL.BFLY == 5", "kernels": "warp_sum"},
                {"rule": "LDG.128 >= 2", "kernels": "saxpy4"},
                {"rule": "MEMBAR.GPU >= 2", "kernels": "warp_sum"},
                "LDL|STL == 0",
                "BSSY == 0",
                {"rule": "VOTE >= 1", "kernels": "nope"},
            ]
        )
        text = "\n".join(lines)
        self.assertIn("SHFL.BFLY == 5  ->  shfl.sync.bfly: 5 in warp_sum", text)
        self.assertIn("LDG.128 >= 2  ->  ld.global.v4 (128-bit): 1 in saxpy4", text)
        self.assertIn("MEMBAR.GPU >= 2  ->  membar.gl|fence.sc.gpu: 1 in warp_sum", text)
        self.assertIn("LDL|STL == 0  ->  ld.local | st.local: 0 in twice, saxpy4, warp_sum", text)
        self.assertIn("spills are added by ptxas", text)
        self.assertIn("BSSY == 0  ->  no PTX analogue", text)
        self.assertIn("no kernel named like 'nope'", text)
        self.assertIn("not the verdict", text)
        self.assertIsNone(re.search(r"\b(met|passed|missed|failed)\b", text), text)

    def test_the_stage_rules_arch_limits(self):
        lines = self.hints([{"rule": "SHFL.BFLY == 5", "arch": "sm_80"}])
        self.assertFalse(any("SHFL" in line for line in lines))


class CommandTest(unittest.TestCase):
    COMMAND = (
        "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DCOURSE_STAGE_TODO=1 "
        '-DCOURSE_STAGE_TODO_IN=\\"chapters/x/01_a.cu\\" -I/src/chapters/x -O3 '
        '"--generate-code=arch=compute_80,code=[compute_80,sm_80]" '
        '"--generate-code=arch=compute_90,code=[compute_90,sm_90]" -lineinfo -std=c++17 '
        "-MD -MT x/01_a.cu.o -MF x/01_a.cu.o.d -x cu -c /src/chapters/x/01_a.cu "
        "-o x/01_a.cu.o"
    )

    def test_compile_command_becomes_a_ptx_command(self):
        argv, arch = ptx.ptx_command(self.COMMAND, "/b/ptx/out.ptx")
        self.assertEqual(arch, "compute_90")
        self.assertEqual(argv[0], "/usr/local/cuda/bin/nvcc")
        self.assertEqual(argv[-2:], ["-o", "/b/ptx/out.ptx"])
        self.assertIn("-ptx", argv)
        for gone in ("-c", "-MD", "-MT", "-MF", "x/01_a.cu.o", "x/01_a.cu.o.d"):
            self.assertNotIn(gone, argv)
        self.assertEqual(
            [w for w in argv if "arch" in w or "generate-code" in w], ["-arch=compute_90"]
        )
        self.assertIn("-lineinfo", argv)
        self.assertIn("/src/chapters/x/01_a.cu", argv)
        self.assertEqual(ptx._define(argv, "COURSE_STAGE_TODO_IN"), "chapters/x/01_a.cu")

    def test_launcher_is_dropped_and_newest_arch_without_90(self):
        argv, arch = ptx.ptx_command(
            "/usr/bin/ccache /opt/cuda/bin/nvcc -gencode "
            "arch=compute_75,code=sm_75 -arch=compute_86 -c a.cu -o a.o",
            "o.ptx",
        )
        self.assertEqual((argv[0], arch), ("/opt/cuda/bin/nvcc", "compute_86"))
        self.assertNotIn("arch=compute_75,code=sm_75", argv)

    def test_first_error_line(self):
        output = (
            f'{course.ROOT}/chapters/x/01_a.cu(30): warning #177-D: variable "k" '
            "was declared\n"
            f'{course.ROOT}/chapters/x/01_a.cu(31): error: identifier "foo" is undefined\n'
            f'{course.ROOT}/chapters/x/01_a.cu(32): error: expected a ";"\n'
            '2 errors detected in the compilation of "/src/chapters/x/01_a.cu".\n'
        )
        self.assertEqual(
            ptx.first_error(output),
            'chapters/x/01_a.cu(31): error: identifier "foo" is undefined (2 errors)',
        )


class WithoutCuobjdumpTest(unittest.TestCase):
    """sass.py where cuobjdump is missing: ptx.make is replaced by the fixture, so these need no
    CUDA tools; RealCompileTest below runs the real one."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.build = self.tmp / "build"
        self.build.mkdir()
        folder = {"solution": "solutions", "exercise": "chapters"}
        stages = [
            {
                "id": STAGE,
                "variant": variant,
                "objects": [str(self.tmp / f"{variant}.o")],
                "source": str(course.ROOT / folder[variant] / f"{STAGE}.cu"),
            }
            for variant in folder
        ]
        (self.build / "stages.json").write_text(json.dumps({"stages": stages}))
        self.made = []

        def fake_make(stage, build, label):
            self.made.append(stage["variant"])
            text = FIXTURE.read_text()
            if stage["variant"] == "exercise":  # the student's: one load fewer
                text = text.replace("ld.global.v4.f32", "ld.global.f32", 1)
            todo = f"chapters/{STAGE}.cu" if stage["variant"] == "exercise" else ""
            return ptx.Made([text], "compute_90", todo, [])

        for patcher in (
            mock.patch.object(sass, "find_tool", without_cuobjdump),
            mock.patch.object(ptx, "make", fake_make),
        ):
            patcher.start()
            self.addCleanup(patcher.stop)
        self.capture = course.capture_path(STAGE).read_text()

    def test_an_exercise_shows_its_own_ptx_never_the_reference_capture(self):
        source = sass.load(f"exercise/{STAGE}", self.build)
        self.assertEqual((source.kind, self.made), ("ptx", ["exercise"]))
        self.assertNotEqual(source.text, self.capture)
        status, out, err = run_sass("dump", f"exercise/{STAGE}", "--build", self.build)
        self.assertEqual(status, 0, err)
        self.assertNotIn("captured", out + err)
        self.assertNotIn(self.capture.splitlines()[0], out)
        self.assertNotIn("c[0x0]", out)  # no SASS operand at all
        self.assertIn(f"// PTX of exercise/{STAGE}", out)
        self.assertIn("not SASS", out)
        self.assertIn("not the verdict", out)
        self.assertIn("still TODO", out)
        self.assertIn("shfl.sync.bfly.b32", out)
        self.assertIn("LDG.E.!128 in 2..2  ->  ld.global (not 128-bit)", out)  # the stage's rule
        with self.assertRaises(ValueError):
            sass.captured(STAGE, "exercise")

    def test_the_reference_by_its_name_still_shows_its_capture(self):
        status, out, err = run_sass("count", STAGE, "--build", self.build)
        self.assertEqual((status, self.made), (0, []))
        self.assertIn("captured on the reference GPU", err)
        self.assertIn("reference solution", err)

    def test_count_is_the_ptx_mix(self):
        status, out, err = run_sass("count", f"exercise/{STAGE}", "--build", self.build, "--json")
        self.assertEqual(status, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["kind"], "ptx")
        self.assertEqual([k["total"] for k in doc["kernels"]], [4, 24, 30])
        status, out, err = run_sass("count", f"exercise/{STAGE}", "--build", self.build)
        self.assertIn("shuffle", out)
        self.assertIn("[PTX compute_90]", out)
        self.assertNotIn("uniform datapath", out)

    def test_diff_of_a_stage_and_its_exercise_is_ptx_against_ptx(self):
        a, b = sass.diff_sources(STAGE, f"exercise/{STAGE}", self.build)
        self.assertEqual((a.kind, b.kind), ("ptx", "ptx"))
        self.assertEqual(sorted(self.made), ["exercise", "solution"])
        self.assertNotEqual(a.text, b.text)
        status, out, err = run_sass(
            "diff", STAGE, f"exercise/{STAGE}", "--build", self.build, "--width", "120"
        )
        self.assertEqual(status, 0, err)
        self.assertNotIn("captured", out + err)
        self.assertIn(f"A: solution/{STAGE} (PTX, compute_90)", out)
        self.assertIn(f"B: exercise/{STAGE} (PTX, compute_90)", out)
        self.assertIn("ld.global.v4.f32", out)
        # The load the exercise lacks shows as a changed row, and in the table.
        self.assertTrue(any(" | " in line and "ld.global.f32" in line for line in out.splitlines()))
        self.assertTrue(re.search(r"ld\.global\.v4\.f32\s+1\s+0\s+-1", out), out)

    def test_diff_never_compares_a_capture_with_itself(self):
        status, out, err = run_sass("diff", STAGE, STAGE, "--build", self.build)
        self.assertEqual((status, out, len(err.splitlines())), (1, "", 1))
        self.assertIn("same reference stage", err)
        status, out, err = run_sass(
            "diff", course.capture_path(STAGE), f"exercise/{STAGE}", "--build", self.build
        )
        self.assertEqual((status, out, len(err.splitlines())), (2, "", 1))
        self.assertIn("without cuobjdump", err)

    def test_a_stub_without_kernels_says_so_in_one_line(self):
        empty = ptx.Made(
            [".version 9.0\n.target sm_90\n"], "compute_90", f"chapters/{STAGE}.cu", []
        )
        with mock.patch.object(ptx, "make", lambda stage, build, label: empty):
            status, out, err = run_sass("dump", f"exercise/{STAGE}", "--build", self.build)
        self.assertEqual((status, out, len(err.splitlines())), (1, "", 1), err)
        self.assertIn("still TODO", err)

    def test_two_exercises(self):
        a, b = sass.diff_sources(f"exercise/{STAGE}", f"exercise/{STAGE}", self.build)
        self.assertEqual((a.kind, b.kind, self.made), ("ptx", "ptx", ["exercise", "exercise"]))


class CompileFailureTest(unittest.TestCase):
    """ptx.make through a stand-in ninja whose compile command is nvcc on a file with an error:
    one line with the compiler's first error, no traceback."""

    def test_first_error_line_not_a_traceback(self):
        nvcc = sass.find_tool("nvcc")
        if nvcc is None:
            self.skipTest("COURSE_SKIP: nvcc not found (the CUDA Toolkit)")
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        (tmp / "bad.cu").write_text("__global__ void k(int *p) { p[0] = undefined_thing; }\n")
        ninja = tmp / "ninja"
        ninja.write_text(
            f'#!/bin/sh\n[ "$3" = build.ninja ] && exit 0\n'
            f'echo "{nvcc} -O3 -MD -MT bad.o -MF bad.o.d -x cu -c {tmp}/bad.cu '
            '-o bad.o"\n'
        )
        ninja.chmod(0o755)
        (tmp / "build.ninja").write_text("")
        (tmp / "CMakeCache.txt").write_text(f"CMAKE_MAKE_PROGRAM:FILEPATH={ninja}\n")
        (tmp / "stages.json").write_text(
            json.dumps(
                {
                    "stages": [
                        {
                            "id": STAGE,
                            "variant": "exercise",
                            "objects": [str(tmp / "bad.o")],
                            "source": "",
                        }
                    ]
                }
            )
        )
        with mock.patch.object(sass, "find_tool", without_cuobjdump):
            status, out, err = run_sass("dump", f"exercise/{STAGE}", "--build", tmp)
        self.assertEqual((status, out, len(err.splitlines())), (1, "", 1), err)
        self.assertIn(f"exercise/{STAGE} does not compile: ", err)
        self.assertIn('error: identifier "undefined_thing" is undefined', err)
        self.assertNotIn("Traceback", err)


class RealCompileTest(unittest.TestCase):
    """One small stage compiled to PTX for real: a build configured in a scratch folder (cmake,
    ninja), then nvcc with the stage object's own flags. About 10 s."""

    @classmethod
    def setUpClass(cls):
        missing = [tool for tool in ("cmake", "ninja") if shutil.which(tool) is None]
        if sass.find_tool("nvcc") is None:
            missing.append("nvcc")
        if missing:
            raise unittest.SkipTest(f"COURSE_SKIP: PTX test needs {', '.join(missing)}")
        cls.tmp = Path(tempfile.mkdtemp())
        cls.build = cls.tmp / "build"
        env = dict(os.environ)
        nvcc = sass.find_tool("nvcc")
        env.setdefault("CUDACXX", nvcc)
        run = subprocess.run(
            ["cmake", "-S", str(course.ROOT), "-B", str(cls.build), "-G", "Ninja"],
            capture_output=True,
            text=True,
            env=env,
        )
        if run.returncode != 0:
            shutil.rmtree(cls.tmp)
            last = (run.stdout + run.stderr).strip().splitlines()[-1:] or ["?"]
            raise unittest.SkipTest(f"COURSE_SKIP: configuring a scratch build failed: {last[0]}")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_solution_and_exercise_compile_to_ptx(self):
        with mock.patch.object(sass, "find_tool", without_cuobjdump):
            solution = sass.diff_sources(STAGE, f"exercise/{STAGE}", self.build)[0]
            exercise = sass.load(f"exercise/{STAGE}", self.build)
        for source in (solution, exercise):
            self.assertEqual(source.kind, "ptx")
            self.assertTrue(source.kernels, source.label)
            self.assertTrue(source.kernels[0].arch.startswith("compute_"))
            self.assertTrue(source.notes[0].startswith("PTX of "))
        # The reference grid-stride SAXPY: two scalar loads, the stage's rule 'LDG.E.!128 in 2..2'.
        kernels = list(solution.kernels)
        sass.demangle(kernels)
        hints = "\n".join(lesson.ptx_hints(STAGE, kernels))
        self.assertRegex(
            hints,
            r"LDG\.E\.!128 in 2\.\.2  ->  ld\.global \(not 128-bit\): 2 in "
            r"(\w+::)?saxpy_kernel",
        )
        listing = "\n".join(ptx.listing(kernels[0]))
        self.assertRegex(listing, r"// \w+\.cuh?:\d+  ")  # the stage's source lines
        self.assertIn("fma.rn.f32", listing)


if __name__ == "__main__":
    unittest.main()
