"""Tests for harness/sass.py on small synthetic `cuobjdump -sass` captures (no GPU, no CUDA tools)."""

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import sass  # noqa: E402
import sass_lines  # noqa: E402
import stamps  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAXPY = FIXTURES / "saxpy_sm90.sass"  # grid-stride loop, hex branch targets
VEC4 = FIXTURES / "saxpy_vec4_sm90.sass"  # the same with 128-bit loads
MULTI = FIXTURES / "multi.sass"  # sm_80 + sm_90 sections, nvdisasm-style labels


def kernels(path):
    return sass.parse(path.read_text())


def run_main(*argv):
    """sass.main(argv) -> (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = sass.main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


class ParseTest(unittest.TestCase):
    def test_kernels_and_architectures(self):
        found = kernels(MULTI)
        self.assertEqual(
            [(k.name, k.arch) for k in found],
            [
                ("_Z4fillPfif", "sm_80"),
                ("_Z6reduceILi256EEvPfPKfi", "sm_90"),
                ("_Z4fillPfif", "sm_90"),
            ],
        )

    def test_instruction_fields(self):
        (kernel,) = kernels(SAXPY)
        first, exit_if = kernel.instructions[0], kernel.instructions[6]
        self.assertEqual(
            (first.address, first.guard, first.opcode, first.operands),
            (0, "", "LDC", "R1, c[0x0][0x28]"),
        )
        self.assertEqual((exit_if.guard, exit_if.text), ("@P0", "EXIT"))

    def test_encodings_and_reuse_flags_are_dropped(self):
        (kernel,) = kernels(SAXPY)
        text = "\n".join(sass.listing(kernel))
        self.assertNotIn("0x000fe", text)
        self.assertNotIn(".reuse", text)
        self.assertNotIn("/*", text)
        self.assertIn("IMAD.SHL.U32 R2, R0, 0x4, RZ", text)

    def test_hex_branch_targets_become_labels(self):
        (kernel,) = kernels(SAXPY)
        lines = sass.listing(kernel)
        self.assertIn(".L_x_0:", lines)
        self.assertTrue(lines[lines.index(".L_x_0:") + 1].endswith("IMAD.SHL.U32 R2, R0, 0x4, RZ"))
        self.assertIn("  @!P0 BRA `(.L_x_0)", lines)

    def test_existing_labels_are_kept(self):
        reduce = kernels(MULTI)[1]
        lines = sass.listing(reduce)
        self.assertIn(".L_x_1:", lines)
        self.assertIn(".L_x_3:", lines)
        self.assertNotIn(".L_x_4:", lines)  # labels the padding branch, which is not listed

    def test_text_without_sass(self):
        self.assertEqual(sass.parse("Fatbin ptx code:\n================\narch = sm_90\n"), [])


class PaddingTest(unittest.TestCase):
    def test_self_branch_and_trailing_nops_are_padding(self):
        (kernel,) = kernels(SAXPY)
        padding = [i.text for i in kernel.instructions if i.padding]
        self.assertEqual(padding, ["BRA 0x110", "NOP", "NOP", "NOP"])
        self.assertEqual(kernel.body[-1].text, "EXIT")

    def test_label_style_self_branch(self):
        fill = kernels(MULTI)[2]
        self.assertEqual([i.text for i in fill.instructions if i.padding], ["BRA `(.L_x_5)"])

    def test_code_after_last_exit_still_counts(self):
        reduce = kernels(MULTI)[1]
        body = [i.opcode for i in reduce.body]
        self.assertEqual(body[-3:], ["EXIT", "MUFU.RCP", "RET.REL.NODEC"])
        self.assertIn("NOP", body)  # a NOP inside the kernel is real code
        self.assertEqual(sass.count(reduce)["padding"], 3)


class ClassifyTest(unittest.TestCase):
    def test_classes(self):
        cases = {
            "LDG.E.128": "global memory",
            "ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU": "global memory",
            "LDL": "local memory",
            "LDS.U.128": "shared memory",
            "ULDC.64": "constant memory",
            "LDCU.128": "constant memory",
            "SHFL.BFLY": "shuffle",
            "VOTEU.ANY": "vote",
            "MEMBAR.SC.GPU": "barrier/fence",
            "BSSY.RECONVERGENT": "branch/convergence",
            "ISETP.GE.U32.AND.EX": "predicate/select",
            "FSEL": "predicate/select",
            "HFMA2.MMA": "fp arithmetic",
            "IMAD.MOV.U32": "int arithmetic",
            "I2FP.F32.S32": "conversion",
            "CS2R": "move",
            "WEIRDOP": "other",
        }
        for opcode, expected in cases.items():
            with self.subTest(opcode=opcode):
                self.assertEqual(sass.classify(opcode), expected)

    def test_uniform_prefix_counts_by_base_class(self):
        self.assertEqual(sass.classify("UIADD3"), "int arithmetic")
        self.assertEqual(sass.classify("UMOV"), "move")
        self.assertEqual(sass.classify("UISETP.NE.AND"), "predicate/select")


class CountTest(unittest.TestCase):
    def test_reduce_mix(self):
        stats = sass.count(kernels(MULTI)[1])
        self.assertEqual(stats["total"], 25)
        self.assertEqual(stats["predicated"], 4)  # @P0, @!P1, @!PT, @P2
        self.assertEqual(stats["uniform"], 3)  # UMOV, ULDC.64, UIADD3
        self.assertEqual(
            stats["classes"],
            {
                "global memory": 2,
                "shared memory": 3,
                "constant memory": 2,
                "shuffle": 1,
                "vote": 1,
                "barrier/fence": 1,
                "branch/convergence": 6,
                "predicate/select": 1,
                "fp arithmetic": 2,
                "int arithmetic": 1,
                "conversion": 1,
                "move": 2,
                "other": 2,
            },
        )
        self.assertEqual(sum(stats["classes"].values()), stats["total"])

    def test_modifiers_kept_per_opcode(self):
        vec4 = sass.count(kernels(VEC4)[0])
        scalar = sass.count(kernels(SAXPY)[0])
        self.assertEqual(vec4["opcodes"]["LDG.E.128"], 2)
        self.assertEqual(vec4["classes"]["global memory"], 3)
        self.assertEqual(scalar["opcodes"]["LDG.E"], 2)
        self.assertNotIn("LDG.E", vec4["opcodes"])

    def test_table_is_aligned(self):
        lines = sass.count_table(sass.count(kernels(SAXPY)[0]))
        self.assertEqual(len({len(line) for line in lines[:-2]}), 1)
        self.assertIn("total", lines[-3])

    def test_json_output(self):
        status, out, _ = run_main("count", VEC4, "--json")
        self.assertEqual(status, 0)
        (stats,) = json.loads(out)["kernels"]
        self.assertEqual((stats["arch"], stats["total"], stats["padding"]), ("sm_90", 17, 2))
        self.assertEqual(stats["opcodes"]["STG.E.128"], 1)


class FilterTest(unittest.TestCase):
    def test_kernel_regex_and_arch(self):
        status, out, _ = run_main("count", MULTI, "--kernel", "fill", "--json")
        self.assertEqual([k["arch"] for k in json.loads(out)["kernels"]], ["sm_80", "sm_90"])
        status, out, _ = run_main("count", MULTI, "--kernel", "fill", "--arch", "sm_90", "--json")
        self.assertEqual(len(json.loads(out)["kernels"]), 1)

    @unittest.skipUnless(shutil.which("c++filt"), "needs c++filt to demangle")
    def test_regex_matches_demangled_name(self):
        status, out, _ = run_main("dump", MULTI, "--kernel", r"reduce<256>\(float")
        self.assertEqual(status, 0)
        self.assertIn("// void reduce<256>(float*, float const*, int)  [sm_90]", out)

    def test_no_match_lists_kernels(self):
        status, _, err = run_main("dump", MULTI, "--kernel", "nope")
        self.assertEqual(status, 1)
        self.assertIn("no kernel", err)


class DiffTest(unittest.TestCase):
    def test_side_by_side_shape(self):
        status, out, _ = run_main("diff", SAXPY, VEC4, "--width", "100")
        self.assertEqual(status, 0)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("A: ") and lines[1].startswith("B: "))
        listing = lines[2 : lines.index("")]
        self.assertTrue(all(len(line) <= 100 for line in listing))
        # Two 48-character columns with the mark between them.
        self.assertTrue(all(line[48] == " " and line[49] in " |<>" for line in listing))
        self.assertIn("LDC R1, c[0x0][0x28]", listing[0][50:])
        vector = [line for line in listing if "LDG.E.128" in line[50:]]
        self.assertTrue(
            vector and all("LDG.E " in line[:48] and line[49] == "|" for line in vector)
        )

    def test_count_columns_and_difference(self):
        out = run_main("diff", SAXPY, VEC4, "--width", "100")[1]
        table = out.splitlines()[out.splitlines().index("") + 1 :]
        rows = {line.split()[0]: line.split()[1:] for line in table if line.strip()}
        self.assertEqual(rows["class"], ["A", "B", "B-A"])
        self.assertEqual(rows["total"], ["17", "17", "0"])
        self.assertEqual(rows["fp"], ["arithmetic", "1", "4", "+3"])
        self.assertEqual(rows["LDG.E"], ["2", "0", "-2"])
        self.assertEqual(rows["LDG.E.128"], ["0", "2", "+2"])

    def test_separate_kernel_filter_for_b(self):
        status, out, _ = run_main("diff", SAXPY, MULTI, "--kernel-b", "reduce", "--width", "120")
        self.assertEqual(status, 0)
        self.assertTrue(out.splitlines()[1].startswith("B: ") and "reduce" in out.splitlines()[1])
        status, _, err = run_main("diff", SAXPY, MULTI)
        self.assertEqual(status, 1)
        self.assertIn("--kernel-b", err)

    def test_pairs_kernels_by_name(self):
        out = run_main("diff", MULTI, MULTI, "--width", "120")[1]
        headings = [line for line in out.splitlines() if line.startswith("A: ")]
        self.assertEqual(len(headings), 3)

    def test_alignment_marks(self):
        left = [("LDG.E", "LDG.E R2"), ("FFMA", "FFMA R1"), ("EXIT", "EXIT")]
        right = [("LDG.E", "LDG.E R4"), ("EXIT", "EXIT")]
        marks = [line[21] for line in sass.side_by_side(left, right, 43)]
        self.assertEqual(marks, ["|", "<", " "])


class ToolTest(unittest.TestCase):
    """cuobjdump is simulated through PATH: absent, or a script replaying a fixture."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.bin = self.tmp / "bin"
        self.bin.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
        env["PATH"] = str(self.bin)
        for patcher in (
            mock.patch.dict(os.environ, env, clear=True),
            mock.patch.object(sass, "CUDA_FALLBACK_DIRS", []),
        ):
            patcher.start()
            self.addCleanup(patcher.stop)

    def make_build(self):
        obj = self.tmp / "01_grid_stride.cu.o"
        obj.write_bytes(b"\x7fELF fake object")
        build = self.tmp / "build"
        build.mkdir()
        stages = [
            {
                "id": "11-streaming/01_grid_stride",
                "variant": variant,
                "objects": [str(obj)],
                "source": f"/src/{variant}s/11-streaming/01_grid_stride.cu",
            }
            for variant in ("solution", "exercise")
        ]
        (build / "stages.json").write_text(json.dumps({"stages": stages}))
        return build

    def fake_cuobjdump(self, fixture):
        script = self.bin / "cuobjdump"
        script.write_text(f'#!/bin/sh\n[ "$1" = -sass ] || exit 1\nexec /bin/cat "{fixture}"\n')
        script.chmod(0o755)

    def test_missing_cuobjdump_falls_back_to_the_committed_capture(self):
        status, out, err = run_main("count", "11-streaming/01_grid_stride")
        self.assertEqual(status, 0)
        self.assertIn("saxpy_kernel", out)
        self.assertIn("captured on the reference GPU", err)

    def test_missing_cuobjdump_exercise_never_falls_back_to_its_solution(self):
        # The reference's capture is the answer: an exercise shows its own PTX instead
        # (test_ptx.py), and where that cannot be made (no build here), one line saying why.
        status, out, err = run_main(
            "dump", "exercise/11-streaming/01_grid_stride", "--build", self.tmp / "none"
        )
        self.assertEqual((status, out, len(err.splitlines())), (2, "", 1), err)
        self.assertIn("stages.json", err)
        self.assertNotIn("sass/sm_90", err)

    def fake_course(self, captures):
        """A course tree with one chapter of three stages and the given captures."""
        root = self.tmp / "course"
        for stage in ("01_first", "02_second", "03_host"):
            (root / "solutions" / "01-test").mkdir(parents=True, exist_ok=True)
            (root / "solutions" / "01-test" / f"{stage}.cu").write_text("")
        (root / "chapters" / "01-test").mkdir(parents=True)
        (root / "reference" / "h200" / "01-test" / "sass" / "sm_90").mkdir(parents=True)
        for name, text in captures.items():
            (
                root / "reference" / "h200" / "01-test" / "sass" / "sm_90" / f"{name}.sass"
            ).write_text(text)
        patcher = mock.patch.object(sass, "ROOT", root)
        patcher.start()
        self.addCleanup(patcher.stop)
        return root

    def test_missing_capture_and_stage_without_kernels(self):
        self.fake_course(
            {
                "01_first": SAXPY.read_text(),
                "03_host": "# 01-test/03_host: no kernels: the stage's object holds no device code\n",
            }
        )
        self.assertEqual(run_main("count", "01-test/01")[0], 0)
        status, out, err = run_main("dump", "01-test/02_second")
        self.assertEqual((status, out, len(err.splitlines())), (1, "", 1))
        self.assertIn("no capture of 01-test/02_second yet", err)
        self.assertIn("make reference", err)
        status, out, err = run_main("dump", "01-test/03_host")
        self.assertEqual((status, out, len(err.splitlines())), (1, "", 1))
        self.assertIn("has no GPU kernels of its own", err)

    def test_a_capture_older_than_its_stage_says_so(self):
        root = self.fake_course({"01_first": SAXPY.read_text()})
        source = root / "solutions" / "01-test" / "01_first.cu"
        source.write_text("__global__ void k() {}  // the code the capture was made from\n")
        folder = root / "reference" / "h200" / "01-test"
        stamps.stamp(folder, "01-test", {"commit": None}, root, names=["sass/sm_90/01_first.sass"])
        stamps.forget()
        source.write_text("__global__ void k() {}  // a comment changes nothing\n")
        self.assertNotIn("older version", run_main("dump", "01-test/01_first")[2])
        source.write_text("__global__ void k(int) {}\n")
        stamps.forget()
        status, out, err = run_main("dump", "01-test/01_first")
        self.assertEqual(status, 0, err)
        self.assertIn("(captured from an older version of this stage)", err)

    def test_capture_all_writes_every_stage_with_its_first_line(self):
        root = self.fake_course(
            {
                "01_first": "old capture without a first line\n",
                "04_renumbered": "a stage that is no more\n",
            }
        )
        # cuobjdump prints <object>.txt: 01_first has kernels for two architectures, 02_second none;
        # 03_host is not in the manifest (a CPU stage).
        objects = {}
        for stage, text in (
            ("01_first", MULTI.read_text()),
            ("02_second", "\nFatbin elf code:\n================\narch = sm_90\n"),
        ):
            obj = self.tmp / f"{stage}.o"
            obj.write_bytes(b"\x7fELF")
            Path(f"{obj}.txt").write_text(text)
            objects[stage] = obj
        script = self.bin / "cuobjdump"
        script.write_text(
            '#!/bin/sh\n[ "$1" = --version ] && { echo "Cuda compilation tools, release 13.0"; exit 0; }\n'
            'exec /bin/cat "$2.txt"\n'
        )
        script.chmod(0o755)
        build = self.tmp / "build"
        build.mkdir()
        (build / "stages.json").write_text(
            json.dumps(
                {
                    "stages": [
                        {
                            "id": f"01-test/{stage}",
                            "variant": "solution",
                            "objects": [str(obj)],
                            "source": "",
                        }
                        for stage, obj in objects.items()
                    ]
                }
            )
        )
        status, out, err = run_main("capture-all", "--build", build, "--no-build")
        self.assertEqual(status, 0, err)
        captures = root / "reference" / "h200" / "01-test" / "sass" / "sm_90"
        self.assertEqual(
            sorted(p.name for p in captures.iterdir()),
            ["01_first.sass", "02_second.sass", "03_host.sass"],
        )
        first = (captures / "01_first.sass").read_text()
        self.assertTrue(
            first.startswith(
                "# 01-test/01_first: sm_90, every kernel compiled into the stage's "
                "object (2 functions"
            ),
            first.splitlines()[0],
        )
        self.assertEqual({k.arch for k in sass.parse(first)}, {"sm_90"})  # sm_80 left out
        self.assertIn("release 13.0", first.splitlines()[0])
        self.assertTrue(
            (captures / "02_second.sass")
            .read_text()
            .startswith("# 01-test/02_second: no kernels: ")
        )
        self.assertTrue(
            (captures / "03_host.sass").read_text().startswith("# 01-test/03_host: no kernels: ")
        )
        self.assertIn("04_renumbered.sass: removed", out)
        # What make sass then says about them, without cuobjdump.
        (self.bin / "cuobjdump").unlink()
        self.assertEqual(run_main("count", "01-test/01_first")[0], 0)
        status, _, err = run_main("dump", "01-test/03_host")
        self.assertEqual(status, 1)
        self.assertIn("no GPU kernels of its own", err)

    def test_bad_stage_names_the_choices_in_one_line(self):
        self.fake_course({})
        for arg, expected in (
            (
                "nonsense",
                "no stage 'nonsense'; use [exercise/]<chapter>/<stage>, one of: "
                "01-test/{01_first,02_second,03_host}",
            ),
            ("01-test/0", "names several stages: 01-test/01_first, 01-test/02_second"),
            # The old suggestion: a capture path that does not exist is a missing
            # file, not a stage to look up under chapters/chapters/...
            ("reference/h200/01-test/sass/sm_90/01_first.exercise.sass", "no such file"),
        ):
            status, out, err = run_main("dump", arg)
            self.assertEqual((status, out, len(err.splitlines())), (2, "", 1), err)
            self.assertIn(expected, err)
            self.assertNotIn("chapters/chapters", err)

    def test_missing_cuobjdump_for_object(self):
        obj = self.tmp / "k.o"
        obj.write_bytes(b"\x7fELF")
        status, _, err = run_main("count", obj)
        self.assertEqual((status, len(err.splitlines())), (3, 1))

    def test_captured_text_needs_no_tools(self):
        self.assertEqual(run_main("count", SAXPY)[0], 0)

    def test_stage_lookup_and_dump(self):
        build = self.make_build()
        self.fake_cuobjdump(SAXPY)
        for stage in (
            "11-streaming/01_grid_stride",
            "exercise/11-streaming/01_grid_stride",
            "01_grid_stride",
            "01_grid",
            "11-streaming/01",
        ):
            status, out, _ = run_main("dump", stage, "--build", build)
            self.assertEqual(status, 0, stage)
            self.assertIn("LDG.E R4, desc[UR6][R2.64]", out)

    def test_unknown_stage_and_missing_manifest(self):
        self.fake_cuobjdump(SAXPY)
        status, _, err = run_main("dump", "11-streaming/99_nope", "--build", self.make_build())
        self.assertEqual(status, 2)
        self.assertIn("11-streaming/{01_grid_stride,", err)
        status, _, err = run_main(
            "dump", "11-streaming/01_grid_stride", "--build", self.tmp / "none"
        )
        self.assertEqual(status, 2)
        self.assertIn("stages.json", err)

    def test_capture_writes_raw_output(self):
        build = self.make_build()
        self.fake_cuobjdump(MULTI)
        out_dir = self.tmp / "sass"
        status, out, _ = run_main(
            "capture",
            "--out",
            out_dir,
            "--build",
            build,
            "11-streaming/01_grid_stride",
            "exercise/11-streaming/01_grid_stride",
        )
        self.assertEqual(status, 0)
        self.assertEqual(
            sorted(p.name for p in out_dir.iterdir()),
            ["01_grid_stride.exercise.sass", "01_grid_stride.sass"],
        )
        # cuobjdump's output, each instruction's control field decoded after its semicolon (no
        # nvdisasm in this test, so no source lines).
        expected = sass_lines.merge(MULTI.read_text(), {})
        self.assertEqual((out_dir / "01_grid_stride.sass").read_text(), expected)
        self.assertIn("; /* B------:R-:W-:", expected)

    def test_capture_keeps_only_selected_functions(self):
        build = self.make_build()
        self.fake_cuobjdump(MULTI)
        out_dir = self.tmp / "sass"
        status, _, _ = run_main(
            "capture",
            "--out",
            out_dir,
            "--build",
            build,
            "--kernel",
            "fill",
            "11-streaming/01_grid_stride",
        )
        self.assertEqual(status, 0)
        text = (out_dir / "01_grid_stride.sass").read_text()
        self.assertEqual(
            [(k.name, k.arch) for k in sass.parse(text)],
            [("_Z4fillPfif", "sm_80"), ("_Z4fillPfif", "sm_90")],
        )
        self.assertNotIn("reduce", text)
        self.assertIn("Fatbin elf code:", text)


if __name__ == "__main__":
    unittest.main()


class StableAnonymousNamesTest(unittest.TestCase):
    """A capture's anonymous-namespace names lose the number nvcc draws per compilation, so that a
    recapture of unchanged code changes no line."""

    RUN_A = (
        "Function : _ZN55_GLOBAL__N__4d45ee78_17_10_tensor_bank_cu_8b99d393_191313corr_bank_mmaILi4E"
        "Lb0EEEvNS_9bank_argsEN3ncc11bank_outputE\n"
        "  CALL.REL.NOINC `(_ZN56_GLOBAL__N__4d45ee78_17_10_tensor_bank_cu_8b99d393_187204helpEv) ;\n"
    )
    RUN_B = RUN_A.replace("_191313", "_187213").replace("_187204", "_91404").replace("N56", "N55")

    def test_two_compilations_capture_alike(self):
        a, b = sass.stable_anonymous_names(self.RUN_A), sass.stable_anonymous_names(self.RUN_B)
        self.assertEqual(a, b)
        self.assertIn("_ZN52_GLOBAL__N__4d45ee78_17_10_tensor_bank_cu_8b99d393_013corr_bank_mma", a)
        self.assertIn("_ZN52_GLOBAL__N__4d45ee78_17_10_tensor_bank_cu_8b99d393_04helpEv", a)
        self.assertEqual(sass.stable_anonymous_names(a), a)  # idempotent

    def test_the_length_after_an_identifier_ending_in_a_digit(self):
        text = "_ZN4foo256_GLOBAL__N__4d45ee78_17_10_tensor_bank_cu_8b99d393_191303barE"
        self.assertEqual(
            sass.stable_anonymous_names(text),
            "_ZN4foo252_GLOBAL__N__4d45ee78_17_10_tensor_bank_cu_8b99d393_03barE",
        )

    @unittest.skipUnless(shutil.which("c++filt"), "c++filt (binutils) not found")
    def test_names_still_demangle_the_same(self):
        import subprocess

        before = self.RUN_A.split()[2]
        after = sass.stable_anonymous_names(self.RUN_A).split()[2]
        demangle = [
            subprocess.run(["c++filt", n], capture_output=True, text=True).stdout
            for n in (before, after)
        ]
        self.assertEqual(demangle[0], demangle[1])
        self.assertIn("(anonymous namespace)::corr_bank_mma<4, false>", demangle[1])
