"""The evidence under reference/<gpu>/<chapter>/ is stamped with the sources it came from
(harness/stamps.py), and this lists the stale captures by name and fails while any is stale or
unstamped. An artefact moved in without a capture run carries "pending": true in its stamps.json:
it is not counted until `make reference` on a GPU machine replaces it with a real stamp, after which
any code change to its sources fails here until the next run. A temporary tree shows the rule: a
comment or formatting change keeps a stamp, a code change stales it.
"""

import io
import json
import shutil
import sys
import tempfile
import unittest
import unittest.mock
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import reference  # noqa: E402
import stamps  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

STAGE = """// Stage 01: the first.
#include "common/check.h"
#include "lesson.cuh"

__global__ void k(int* out, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = i;   // grid-stride
}
"""
HEADER = "/* A lesson header. */\n#pragma once\ninline int twice(int x) { return 2 * x; }\n"


class Tree(unittest.TestCase):
    """A course of one chapter with one stage, its SASS capture stamped."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.root)
        self.write("solutions/01-test/01_first.cu", STAGE)
        self.write("solutions/01-test/lesson.cuh", HEADER)
        self.write("chapters/01-test/bench_test.cpp", "int main() { return 0; }\n")
        self.write("common/check.h", "#pragma once\n#define CHECK(x) (x)\n")
        self.folder = self.root / "reference" / "h200" / "01-test"
        self.write("reference/h200/01-test/sass/sm_90/01_first.sass", "# 01-test/01_first: sm_90\n")
        self.write("reference/h200/01-test/bench.json", "{}\n")
        stamps.stamp(self.folder, "01-test", {"commit": None}, self.root)
        stamps.forget()

    def write(self, name, text):
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def edit(self, name, old, new):
        path = self.root / name
        text = path.read_text()
        self.assertIn(old, text)
        path.write_text(text.replace(old, new))
        stamps.forget()

    def state(self, artefact="sass/sm_90/01_first.sass"):
        return stamps.state(self.folder, artefact, root=self.root)[0]

    def test_sources_follow_the_includes(self):
        self.assertEqual(
            stamps.sources_of("01-test", "sass/sm_90/01_first.sass", self.root),
            ["common/check.h", "solutions/01-test/01_first.cu", "solutions/01-test/lesson.cuh"],
        )
        self.assertIn(
            "chapters/01-test/bench_test.cpp", stamps.sources_of("01-test", "bench.json", self.root)
        )

    def test_fresh_after_stamping(self):
        self.assertEqual(stamps.report(self.root), [])

    def test_a_comment_or_reformat_keeps_the_stamp(self):
        self.edit("solutions/01-test/01_first.cu", "// grid-stride", '// a new comment, "quoted"')
        self.edit("solutions/01-test/01_first.cu", "out[i] = i;", "out[i]=i;")
        self.edit(
            "solutions/01-test/01_first.cu",
            "__global__ void k(int* out, int n) {",
            "/* what k does */\n__global__ void\nk(int *out,\n  int n)\n{",
        )
        self.edit("solutions/01-test/lesson.cuh", "/* A lesson header. */", "// Another comment.")
        self.assertEqual(self.state(), "fresh")

    def test_a_code_change_stales_it(self):
        self.edit("solutions/01-test/01_first.cu", "out[i] = i;", "out[i] = i + 1;")
        self.assertEqual(
            stamps.state(self.folder, "sass/sm_90/01_first.sass", root=self.root),
            ("stale", stamps.STALE_NOTE),
        )
        self.assertEqual(stamps.state(self.folder, "bench.json", root=self.root)[0], "stale")

    def test_a_change_in_an_included_header_stales_it(self):
        self.edit("solutions/01-test/lesson.cuh", "2 * x", "3 * x")
        self.assertEqual(self.state(), "stale")
        path = self.folder / "sass" / "sm_90" / "01_first.sass"
        self.assertEqual(stamps.stale_note(path, self.root), f" ({stamps.STALE_NOTE})")

    def test_a_new_stage_stales_what_the_bench_made(self):
        # The bench times every stage of the chapter: one more is code its results did not see.
        self.write("solutions/01-test/02_second.cu", STAGE)
        stamps.forget()
        what, detail = stamps.state(self.folder, "bench.json", root=self.root)
        self.assertEqual(what, "stale")
        self.assertIn("solutions/01-test/02_second.cu is new", detail)
        self.assertEqual(self.state(), "fresh")  # the first stage's SASS: not its code

    def test_a_string_holding_comment_marks_is_code(self):
        self.edit(
            "solutions/01-test/01_first.cu", "out[i] = i;", 'out[i] = i; const char* s = "a // b";'
        )
        stamps.stamp(self.folder, "01-test", {"commit": None}, self.root)
        self.edit("solutions/01-test/01_first.cu", '"a // b"', '"a // c"')
        self.assertEqual(self.state(), "stale")

    def test_deferred_stays_stale_to_the_tools(self):
        self.edit("solutions/01-test/01_first.cu", "out[i] = i;", "out[i] = 2 * i;")
        self.assertEqual(self.state(), "stale")
        doc = stamps.load(self.folder)
        doc["artefacts"]["sass/sm_90/01_first.sass"]["deferred"] = "no GPU time left"
        stamps.save(self.folder, doc)
        what, detail = stamps.state(self.folder, "sass/sm_90/01_first.sass", root=self.root)
        self.assertEqual(what, "deferred")
        self.assertIn("no GPU time left", detail)
        path = self.folder / "sass" / "sm_90" / "01_first.sass"
        self.assertEqual(stamps.stale_note(path, self.root), f" ({stamps.STALE_NOTE})")
        # Restamped by a capture run, it is fresh again and the reason is gone.
        stamps.stamp(self.folder, "01-test", {"commit": None}, self.root)
        self.assertEqual(self.state(), "fresh")
        self.assertNotIn(
            "deferred", stamps.load(self.folder)["artefacts"]["sass/sm_90/01_first.sass"]
        )

    def test_pending_and_unstamped_are_listed(self):
        doc = stamps.load(self.folder)
        doc["artefacts"]["bench.json"] = {"hash": None, "pending": True, "reason": "moved"}
        stamps.save(self.folder, doc)
        self.write("reference/h200/01-test/new.png", "")
        states = {path: what for path, what, _ in stamps.report(self.root)}
        self.assertEqual(
            states,
            {
                "reference/h200/01-test/bench.json": "pending",
                "reference/h200/01-test/new.png": "unstamped",
            },
        )

    def test_python_hash_leaves_out_empty_fields(self):
        # 3.12's ast.dump writes type_params=[] in every def, 3.11's does not: the hash must not
        # see the Python version (the GPU machine stamps with one, this machine checks with another).
        text = stamps.normalise_python("def f(a):\n    return a\n")
        self.assertNotIn("type_params", text)
        self.assertNotIn("=None", text)
        self.assertIn("(FunctionDef name='f'", text)

    def test_python_sources_ignore_comments_and_docstrings(self):
        a = stamps.normalise_python('"""Doc."""\nx = 1  # one\n')
        b = stamps.normalise_python("'''Other doc.'''\n\nx = (\n    1\n)\n")
        self.assertEqual(a, b)
        self.assertNotEqual(a, stamps.normalise_python("x = 2\n"))

    def test_cmake_and_toml_ignore_hash_comments(self):
        # A CMakeLists.txt and lessons.toml are sources of pitfalls.json: rewording a comment in
        # them stales nothing, a string holding '#' is kept.
        a = stamps.normalise_hash_comments('# Issue 15: why\nset(A "x # y") # z\n#[[ a\nb ]]\n')
        b = stamps.normalise_hash_comments('# Why, reworded.\nset(A   "x # y")\n')
        self.assertEqual(a, b)
        self.assertNotEqual(a, stamps.normalise_hash_comments('set(A "x # z")\n'))
        toml = stamps.normalise_hash_comments("[s]\nspeed = 'a # b'  # note\n")
        self.assertEqual(toml, "[s] speed = 'a # b'")


class LabSourcesTest(unittest.TestCase):
    """The labs (labs/<chapter>/) are sources of their chapter's evidence: their kernels of what
    the bench made, their capture scripts of the captures they write, stage 11's model of its
    chart; their tests are not."""

    def test_a_lab_capture_comes_from_the_labs_scripts_and_kernels(self):
        found = stamps.sources_of("12-reduction", "profiles/lab/lab_folding.csv", REPO)
        for name in ("capture_lab.py", "capture_single_tile.py", "lab_folding.cu", "lab_folding.h"):
            self.assertIn(f"labs/12-reduction/{name}", found)
        self.assertNotIn("labs/12-reduction/test_lab_folding.cpp", found)
        self.assertFalse([s for s in found if s.startswith("chapters/") and "lab" in s], found)

    def test_the_bench_results_come_from_the_labs_kernels(self):
        found = stamps.sources_of("14-nbody", "bench.json", REPO)
        for name in ("lab_rsqrt_pipes.cu", "lab_rsqrt_pipes.h", "lab_symmetric_atomics.cu"):
            self.assertIn(f"labs/14-nbody/{name}", found)
        self.assertFalse([s for s in found if s.endswith(".py")], found)

    def test_the_model_chart_comes_from_the_model(self):
        found = stamps.sources_of("14-nbody", "model_ranks.png", REPO)
        self.assertIn("labs/14-nbody/model_ranks.py", found)
        self.assertNotIn("plots/plot.py", found)


class Committed(unittest.TestCase):
    """The committed evidence: nothing stale, nothing unstamped but what is marked pending, or
    stale with its reason recorded (stamps.py defer)."""

    def test_no_capture_is_stale(self):
        rows = stamps.report(REPO)
        bad = [
            f"{path} ({what}: {detail})"
            for path, what, detail in rows
            if what not in ("pending", "deferred")
        ]
        self.assertEqual(
            bad,
            [],
            f"{len(bad)} stale or unstamped capture(s), fixed by {stamps.FIX}: "
            + "; ".join(bad[:20]),
        )

    def test_every_folder_has_its_stamps(self):
        for gdir in stamps.gpu_dirs(REPO):
            for folder in (d for d in gdir.iterdir() if d.is_dir()):
                doc = json.loads((folder / stamps.STAMPS).read_text())
                self.assertEqual(doc["schema"], stamps.SCHEMA, folder)

    def test_the_cli_says_the_fix(self):
        out = io.StringIO()
        with redirect_stdout(out):
            status = stamps.main(["stale"])
        self.assertEqual(status, 0, out.getvalue())
        self.assertIn("stamps: no stale capture", out.getvalue())


class ReferencePlanTest(unittest.TestCase):
    """make reference (harness/reference.py): its plan, printed here without a GPU, names every step
    and where each writes; without a GPU the run itself is one line and status 77."""

    def main(self, *argv):
        out = io.StringIO()
        with redirect_stdout(out):
            status = reference.main(list(argv))
        return status, out.getvalue()

    def test_the_plan_names_each_step_and_what_it_writes(self):
        before = sorted(p for p in (REPO / "reference").rglob("*"))
        with unittest.mock.patch.object(reference.course, "gpu_name", return_value="NVIDIA H200"):
            status, out = self.main("plan", "--build", "/nonexistent-build", "--jobs", "16")
        self.assertEqual(status, 0, out)
        self.assertTrue(
            out.startswith("make reference (plan: nothing is run): NVIDIA H200 -> reference/h200/")
        )
        for step in reference.STEPS:
            self.assertIn(f"== {step}\n", out)
        for text in (
            "bench-12-reduction --results",
            "> reference/h200/12-reduction/bench.txt",
            "sass.py capture-all --build /nonexistent-build-sass --jobs 16 --arch sm_120",
            "profile.py capture",
            "profile.py capture-source --build /nonexistent-build --jobs 16 --gpu h200 --no-build",
            "pitfalls.py build --build /nonexistent-build --jobs 16",
            "capture_single_tile.py",
            "plot.py --plain --out reference/h200/13-scan",
            "readme_tables.py write",
            "stamps.json",
        ):
            self.assertIn(text, out)
        self.assertEqual(
            sorted(p for p in (REPO / "reference").rglob("*")), before
        )  # nothing written

    def test_a_subset_and_a_wrong_step(self):
        status, out = self.main("plan", "--steps", "bench tables")
        self.assertEqual(status, 0)
        self.assertEqual(
            [line for line in out.splitlines() if line.startswith("== ")], ["== bench", "== tables"]
        )
        self.assertEqual(
            self.main("plan", "--steps", "bench nope"),
            (
                2,
                "reference: unknown step 'nope'; STEPS= some of: "
                + " ".join(reference.STEPS)
                + "\n",
            ),
        )

    def test_without_a_gpu_it_says_so(self):
        with unittest.mock.patch.object(
            reference.course, "gpu_reason", return_value="no NVIDIA driver"
        ):
            status, out = self.main("run")
        self.assertEqual(
            (status, out),
            (77, "reference: needs a GPU (no NVIDIA driver); it runs on a GPU machine\n"),
        )

    def test_stale_plan_follows_the_stamps(self):
        """STALE=1: each stale artefact's step in its chapter, a stage without its SASS too; a
        pending (moved-in) file asks for nothing, since no step writes it."""
        rows = [
            ("reference/h200/15-ncc/sass/sm_80/07_dp4a.sass", "stale", ""),
            ("reference/h200/14-nbody/by_n.png", "stale", ""),
            ("reference/h200/12-reduction/pitfalls.json", "deferred", ""),
            ("reference/h200/13-scan/profiles/alignment/ncu_raw.csv", "unstamped", ""),
            ("reference/h200/11-streaming/profiles/old.txt", "pending", ""),
        ]
        stages = reference.course.gpu_stages() + ["08-warp/99_new_stage"]
        with unittest.mock.patch.object(reference.stamps, "report", return_value=rows):
            with unittest.mock.patch.object(reference.course, "gpu_stages", return_value=stages):
                plan = reference.stale_plan("h200")
        self.assertEqual(
            plan,
            {
                "build": ["08-warp", "13-scan", "14-nbody", "15-ncc"],
                "bench": ["14-nbody"],
                "sass": ["08-warp", "15-ncc"],
                "profile": ["13-scan"],
                "pitfalls": ["12-reduction"],
                "charts": ["14-nbody"],
                "tables": [],
                "stamps": [],
            },
        )
        with unittest.mock.patch.object(reference.stamps, "report", return_value=rows[-1:]):
            self.assertEqual(reference.stale_plan("h200"), {})

    def test_stale_runs_each_step_for_its_chapters(self):
        plan = {"build": ["15-ncc"], "sass": ["15-ncc"], "pitfalls": ["15-ncc"], "stamps": []}
        with unittest.mock.patch.object(reference, "stale_plan", return_value=plan):
            status, out = self.main("plan", "--stale", "--build", "/nonexistent-build")
        self.assertEqual(status, 0, out)
        self.assertEqual(
            [line for line in out.splitlines() if line.startswith("== ")],
            ["== build", "== sass", "== pitfalls", "== stamps"],
        )
        self.assertIn("    stale: sass 15-ncc\n", out)
        self.assertIn("--target bench-15-ncc solution.15-ncc.01_tex_tex", out)
        self.assertIn("--arch sm_80 --no-build --only '^(15\\-ncc)/'", out)
        self.assertIn("pitfalls.py record --run --build /nonexistent-build --jobs", out)
        self.assertIn("--chapters 15-ncc", out)
        with unittest.mock.patch.object(reference, "stale_plan", return_value={}):
            status, out = self.main("plan", "--stale")
        self.assertEqual(status, 0)
        self.assertIn("is fresh; nothing to do", out)

    def test_gpu_folders(self):
        for name, folder in (
            ("NVIDIA H200", "h200"),
            ("NVIDIA H100 80GB HBM3", "h100"),
            ("NVIDIA GeForce RTX 4090", "geforce-rtx-4090"),
        ):
            self.assertEqual(reference.gpu_folder(name), folder)


if __name__ == "__main__":
    unittest.main()
