"""One home per number: the results blocks of the READMEs are what harness/readme_tables.py
generates from the committed results (reference/<gpu>/<chapter>/*.json), and the generator itself, on a
fixture result file (fixtures/readme-tables.json) in temporary course trees."""

import contextlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
REPO = HARNESS.parent
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "readme-tables.json"
sys.path.insert(0, str(HARNESS))
import course  # noqa: E402
import readme_tables  # noqa: E402

PROVENANCE = (
    "NVIDIA H200, CUDA 13.0 (driver 13.1), 2026-12-01, `make bench CHAPTER=99-test` "
    "([h200/99-test/bench.json](../../reference/h200/99-test/bench.json))"
)
H100 = "NVIDIA H100 80GB HBM3"


class RepositoryReadmesTest(unittest.TestCase):
    """Every marked block of README.md, chapters/*/README.md and notes.md and docs/*.md equals what
    `make tables` writes."""

    def test_every_block_is_what_its_json_says(self):
        problems = readme_tables.stale_blocks(readme_tables.readmes(REPO), REPO)
        self.assertEqual(problems, [], "\n" + "\n".join(problems))


def run(root, *argv):
    """readme_tables.main(['--root', root, *argv]) -> (status, stdout)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = readme_tables.main(["--root", str(root), *map(str, argv)])
    return status, out.getvalue()


class Tree(unittest.TestCase):
    """A temporary course: reference/h200/99-test/bench.json, the fixture, as its reference run (and
    an older H100 run in reference/h100/99-test/), and READMEs written by each test."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="readme-tables-"))
        self.addCleanup(shutil.rmtree, self.root)
        self.reference = self.root / "reference" / "h200" / "99-test" / "bench.json"
        self.reference.parent.mkdir(parents=True)
        (self.root / "chapters" / "99-test").mkdir(parents=True)
        self.doc = json.loads(FIXTURE.read_text())
        older = dict(self.doc, date="2026-11-01T10:00:00Z", tables=self.doc["tables"][1:])
        self.save("h100", older)
        self.doc["device"] = dict(self.doc["device"], name="NVIDIA H200")
        self.reference.write_text(json.dumps(self.doc))
        self.readme = self.root / "chapters" / "99-test" / "README.md"

    def save(self, gpu, doc):
        path = self.root / "reference" / gpu / "99-test" / "bench.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
        return path

    def block(self, marker, readme=None):
        """Write a README holding one empty block, fill it -> the lines between its markers."""
        readme = readme or self.readme
        readme.write_text(
            f"# Test\n\nBefore.\n\n<!-- results: {marker} -->\n<!-- end results -->\n\nAfter.\n"
        )
        status, out = run(self.root, "write", readme)
        self.assertEqual(status, 0, out)
        lines = readme.read_text().splitlines()
        self.assertEqual(lines[:4] + lines[-2:], ["# Test", "", "Before.", "", "", "After."])
        return lines[5 : lines.index("<!-- end results -->")]

    def error(self, marker, readme=None):
        """The one line a bad marker gives (write fails, the README is left as it is)."""
        readme = readme or self.readme
        text = f"<!-- results: {marker} -->\n<!-- end results -->\n"
        readme.write_text(text)
        status, out = run(self.root, "write", readme)
        self.assertEqual(status, 1, out)
        self.assertEqual(readme.read_text(), text)
        self.assertEqual(len(out.splitlines()), 1, out)
        return out.strip()


class GeneratorTest(Tree):
    def test_text_table_with_chosen_columns_and_rows(self):
        self.assertEqual(
            self.block("progression columns=stage,time_ms,GB/s rows='^0[12]_'"),
            [
                PROVENANCE,
                "",
                "```text",
                "Test progression (1K ints)",
                "stage              time_ms   GB/s",
                "---------------------------------",
                "01_first             2.000  512.3",
                "02_second (a | b)    1.000   1024",
                "```",
            ],
        )

    def test_whole_table_as_the_benchmark_prints_it(self):
        lines = self.block("progression")
        self.assertEqual(
            lines[3:5],
            ["Test progression (1K ints)", "stage              threads  time_ms   GB/s  vs_LIB"],
        )
        self.assertEqual(lines[8], "03_todo                256        -      -       -")
        self.assertEqual(lines[-2:], ["LIB Sum            library    1.000   1024       1", "```"])
        self.assertNotIn("warning", "\n".join(lines))  # notes only when asked

    def test_markdown_with_notes(self):
        self.assertEqual(
            self.block("progression format=markdown notes=yes columns=stage,GB/s,vs_LIB"),
            [
                PROVENANCE,
                "",
                "| stage              |  GB/s | vs_LIB |",
                "|:-------------------|------:|-------:|",
                "| 01_first           | 512.3 |  0.500 |",
                "| 02_second (a \\| b) |  1024 |  1.000 |",
                "| 03_todo            |     - |      - |",
                "| LIB Sum            |  1024 |      1 |",
                "",
                "warning: 01_first: spread 6.0% over 1000 repeats",
            ],
        )

    def test_rows_match_the_first_cell_as_printed(self):
        lines = self.block("by_n rows=^1048576$ columns=n,time_us")
        self.assertEqual(
            lines[3:], ["By n", "n        time_us", "----------------", "1048576    12.50", "```"]
        )

    def test_the_json_may_name_its_command(self):
        self.doc["command"] = "make bench CHAPTER=99-test ARGS='--N 1024'"
        self.reference.write_text(json.dumps(self.doc))
        self.assertIn("`make bench CHAPTER=99-test ARGS='--N 1024'`", self.block("by_n")[0])

    def test_root_readme_names_the_chapter_or_the_file(self):
        root_readme = self.root / "README.md"
        self.assertIn(
            "say whose results, chapter=NN-topic or file=PATH", self.error("by_n", root_readme)
        )
        self.assertEqual(
            self.block("by_n chapter=99-test", root_readme)[0],
            PROVENANCE.replace("](../../reference/", "](reference/"),
        )
        older = self.block("by_n file=reference/h100/99-test/bench.json", root_readme)
        self.assertTrue(
            older[0].startswith("NVIDIA H100 80GB HBM3, CUDA 13.0 (driver 13.1), 2026-11-01, "),
            older,
        )

    def test_markers_in_a_code_fence_are_text(self):
        text = "```\n<!-- results: nope -->\n<!-- end results -->\n```\n"
        self.readme.write_text(text)
        self.assertEqual(run(self.root, "write", self.readme)[0], 0)
        self.assertEqual(self.readme.read_text(), text)

    def test_bad_markers_say_what_and_where(self):
        self.assertEqual(
            self.error("nope"),
            "chapters/99-test/README.md:1: reference/h200/"
            "99-test/bench.json has no table 'nope' (its tables: progression, by_n)",
        )
        self.assertIn(
            "has no column speed (its columns: stage, threads, time_ms, GB/s, vs_LIB)",
            self.error("progression columns=stage,speed"),
        )
        self.assertIn(
            "rows=^9 matches no row of table 'progression'", self.error("progression rows=^9")
        )
        self.assertIn("unknown option 'colums'", self.error("progression colums=stage"))
        self.assertIn("format=html; use text or markdown", self.error("progression format=html"))
        self.assertIn("names 2 tables", self.error("progression by_n"))
        self.assertIn("is not a regex", self.error("progression rows=(("))
        self.assertIn("no committed results for 98-none", self.error("by_n chapter=98-none"))
        for text, says in (
            ("<!-- results: by_n -->\n", ":1: results block without <!-- end results -->"),
            ("<!-- end results -->\n", ":1: <!-- end results --> without"),
            (
                "<!-- results: by_n -->\n<!-- results: by_n -->\n<!-- end results -->\n",
                ":2: results block inside the one opened on line 1",
            ),
        ):
            with self.subTest(text=text):
                self.readme.write_text(text)
                status, out = run(self.root, "write", self.readme)
                self.assertEqual(status, 1)
                self.assertIn(says, out)


def capture(label, kernels, us=10.0, occupancy=50.0):
    """A stage's capture in profile.py's compact form: a '#' line, then a row per kernel and metric."""
    rows = ["label,launch,kernel,metric,unit,value"]
    for n, kernel in enumerate(kernels):
        rows += [
            f"{label},{n},{kernel},gpu__time_duration.sum,ns,{us * 1000 / len(kernels)}",
            f"{label},{n},{kernel},sm__warps_active.avg.pct_of_peak_sustained_active,%,{occupancy}",
        ]
    header = "# 99-test/x: NVIDIA H200 (sm_90), ncu 2025.3.1.0, 2026-11-29T19:35:01Z; ncu --csv ..."
    return "\n".join([header] + rows) + "\n"


class ProfilesTest(Tree):
    """The profiles block: a chapter page's table of its Nsight Compute captures on the reference
    GPU, a row per stage (two kernels summed) and the library's row last."""

    def setUp(self):
        super().setUp()
        (self.root / "solutions" / "99-test").mkdir(parents=True)
        folder = self.root / "reference" / "h200" / "99-test" / "profiles"
        folder.mkdir(parents=True)
        for stage in ("01_first", "02_second", "03_uncaptured"):
            (self.root / "solutions" / "99-test" / f"{stage}.cu").write_text("// a stage\n")
        (folder / "01_first.csv").write_text(capture("01_first", ["k1"], 20.0, 40.0))
        (folder / "02_second.csv").write_text(capture("02_second", ["k2a", "k2b"], 10.0))
        (folder / "baseline.csv").write_text(capture("CUB Sum", ["cub"], 12.5))
        self.page = self.root / "chapters" / "99-test" / "profiles.md"

    def test_a_row_per_stage_and_the_library_last(self):
        lines = self.block("profiles columns=time_us,occupancy", self.page)
        self.assertEqual(
            lines[0],
            "NVIDIA H200 (sm_90), ncu 2025.3.1.0, 2026-11-29, `make reference`, its profile step "
            "([h200/99-test/profiles/](../../reference/h200/99-test/profiles/))",
        )
        self.assertEqual(
            lines[2], "| stage                 | duration (us) | achieved occupancy (%) |"
        )
        self.assertEqual(
            lines[4:],
            [
                "| 01_first              |          20.0 |                   40.0 |",
                "| 02_second (2 kernels) |          10.0 |                   50.0 |",
                "| baseline: CUB Sum     |          12.5 |                   50.0 |",
            ],
        )
        self.assertEqual(len(self.block("profiles columns=time_us rows=^0", self.page)), 6)

    def test_make_tables_fills_profiles_md(self):
        self.page.write_text("# Profiles\n")
        self.assertIn(self.page, readme_tables.readmes(self.root))
        self.assertIn(REPO / "chapters" / "14-nbody" / "profiles.md", readme_tables.readmes(REPO))

    def test_bad_profiles_markers(self):
        self.assertIn(
            "has no column speed", self.error("profiles columns=time_us,speed", self.page)
        )
        self.assertIn("takes no gpu=", self.error("profiles gpu=H100", self.page))
        self.assertIn("matches no profile", self.error("profiles rows=^9", self.page))
        (self.root / "reference" / "h200" / "99-test" / "profiles").rename(self.root / "gone")
        self.assertIn("no profiles of 99-test", self.error("profiles", self.page))


class GpuTest(Tree):
    """gpu=NAME: another GPU's committed results instead of the reference (the H200's here), the
    summary included. The tree gets a benchmark (for the summary) and H100 results beside the
    H200's: a single-GPU run and an older two-GPU one."""

    def setUp(self):
        super().setUp()
        (self.root / "solutions" / "99-test").mkdir(parents=True)
        (self.root / "chapters" / "99-test" / "CMakeLists.txt").write_text(
            "course_add_bench(NAME bench-99-test)\n"
        )
        self.doc["tables"][0]["plot"] = {"y": "GB/s"}
        self.reference.write_text(json.dumps(self.doc))
        self.h100 = json.loads(json.dumps(self.doc))
        self.h100["device"]["name"] = H100
        self.h100["tables"][0]["rows"][1][3] = 2048.8
        self.save_h100("h100", "2026-11-30T10:00:00Z", 1536.6)
        self.save_h100("h100x2", "2026-11-20T10:00:00Z", 4096.0)
        self.root_readme = self.root / "README.md"

    def save_h100(self, gpu, date, best):
        doc = json.loads(json.dumps(self.h100))
        doc["date"] = date
        doc["tables"][0]["rows"][1][3] = best
        return self.save(gpu, doc)

    def test_summary_of_the_reference_and_of_another_gpu(self):
        self.assertEqual(
            self.block("summary", self.root_readme),
            [
                "NVIDIA H200, CUDA 13.0, 2026-12-01, `make tour` "
                "(results: [99-test](reference/h200/99-test/bench.json))",
                "",
                "| chapter |         best stage |      rate | against the library | against the ceiling |",
                "|:--------|-------------------:|----------:|--------------------:|--------------------:|",
                "| 99-test | 02_second (a \\| b) | 1024 GB/s |       1.00x LIB Sum |                   - |",
            ],
        )
        lines = self.block("summary gpu=H100", self.root_readme)
        self.assertEqual(
            lines[0],
            f"{H100}, CUDA 13.0, 2026-11-30, `make tour` "
            "(results: [99-test](reference/h100/99-test/bench.json))",
        )
        self.assertEqual(
            lines[-1],
            "| 99-test | 02_second (a \\| b) | 1537 GB/s |       1.50x LIB Sum |"
            "                   - |",
        )

    def test_newest_by_date_then_by_file_name(self):
        path, _ = course.newest_result("99-test", "H100", self.root)
        self.assertEqual(
            path, self.root / "reference/h100/99-test/bench.json"
        )  # not the older two-GPU run
        twin = self.save_h100("h100x2", "2026-12-02T10:00:00Z", 4096.0)
        path, _ = course.newest_result("99-test", "H100", self.root)
        self.assertEqual(path, self.root / "reference/h100/99-test/bench.json")  # one GPU first
        (self.root / "reference/h100/99-test/bench.json").unlink()
        path, _ = course.newest_result("99-test", "H100", self.root)
        self.assertEqual(path, twin)  # the two-GPU run where there is no other
        self.save_h100("h100-sxm", "2026-11-30T10:00:00Z", 1536.6)
        self.save_h100("h100-pcie", "2026-11-30T10:00:00Z", 1536.6)
        path, _ = course.newest_result("99-test", "H100", self.root)
        self.assertEqual(path.parent.parent.name, "h100-sxm")  # a tie on the date: the later path
        self.assertEqual(course.newest_result("99-test", "H200", self.root)[0], self.reference)
        self.assertEqual(course.newest_result("99-test", "B200", self.root), (None, None))

    def test_a_table_from_another_gpu(self):
        lines = self.block("progression gpu=H100 columns=stage,GB/s rows=^02")
        self.assertEqual(
            lines[0],
            f"{H100}, CUDA 13.0 (driver 13.1), 2026-11-30, `make bench CHAPTER=99-test` "
            "([h100/99-test/bench.json](../../reference/h100/99-test/bench.json))",
        )
        self.assertEqual(lines[-2], "02_second (a | b)  1537")

    def test_an_unknown_or_missing_gpu_says_so(self):
        self.assertEqual(
            self.error("summary gpu=B200", self.root_readme),
            "README.md:1: summary gpu=B200: no chapter has a committed result on a GPU whose name "
            "contains 'B200' (results are from: NVIDIA H100 80GB HBM3, NVIDIA H200)",
        )
        self.assertEqual(
            self.error("by_n gpu=B200"),
            "chapters/99-test/README.md:1: gpu=B200: no committed result of 99-test on a GPU whose "
            "name contains 'B200' (its results are from: NVIDIA H100 80GB HBM3, NVIDIA H200)",
        )
        self.assertIn("gpu= names no GPU", self.error("summary gpu=", self.root_readme))
        self.assertIn(
            "gpu= and file= both say whose results",
            self.error("by_n gpu=H100 file=reference/h100/99-test/bench.json"),
        )


class CheckTest(Tree):
    def test_write_then_check_then_a_stale_block(self):
        self.block("progression columns=stage,GB/s")
        status, out = run(self.root, "check", self.readme)
        self.assertEqual(
            (status, out),
            (0, "tables: 1 results block(s) in 1 README(s), all as the committed results say\n"),
        )
        filled = self.readme.read_text()
        self.assertEqual(
            run(self.root, "write", self.readme),
            (0, "tables: 1 results block(s) in 1 README(s), all up to date\n"),
        )
        self.assertEqual(self.readme.read_text(), filled)
        # A hand-edited figure: the check names the file, the block and the fix.
        self.readme.write_text(filled.replace("512.3", "600.0"))
        status, out = run(self.root, "check", self.readme)
        self.assertEqual(status, 1)
        self.assertEqual(
            out,
            "chapters/99-test/README.md:5: the results block 'progression' differs from its JSON; "
            "run `make tables` and commit the README\n",
        )
        # A new reference run committed: every block from it is stale until make tables.
        self.readme.write_text(filled)
        self.reference.write_text(json.dumps(dict(self.doc, date="2026-12-02T10:00:00Z")))
        self.assertEqual(run(self.root, "check", self.readme)[0], 1)
        self.assertEqual(run(self.root, "write", self.readme)[0], 0)
        self.assertIn(
            "2026-12-02, `make bench CHAPTER=99-test` ([h200/99-test/bench.json]",
            self.readme.read_text(),
        )
        self.assertEqual(run(self.root, "check", self.readme)[0], 0)

    def test_default_files_and_a_missing_one(self):
        self.block("by_n")
        (self.root / "README.md").write_text(
            "<!-- results: by_n chapter=99-test -->\n<!-- end results -->\n"
        )
        (self.root / "docs").mkdir()
        page = self.root / "docs" / "page.md"
        page.write_text("<!-- results: by_n chapter=99-test -->\n<!-- end results -->\n")
        self.assertEqual(
            readme_tables.readmes(self.root), [self.root / "README.md", self.readme, page]
        )
        status, out = run(self.root, "check")
        self.assertEqual(status, 1)
        self.assertTrue(out.startswith("README.md:1: the results block 'by_n' differs"), out)
        self.assertEqual(run(self.root, "write")[0], 0)
        self.assertIn(
            "[h200/99-test/bench.json](../reference/h200/99-test/bench.json)", page.read_text()
        )
        self.assertEqual(run(self.root, "check")[0], 0)
        self.assertEqual(
            run(self.root, "check", self.root / "nope.md"),
            (2, f"tables: no such file: {self.root / 'nope.md'}\n"),
        )

    @unittest.skipUnless(shutil.which("make"), "make not installed")
    def test_make_tables(self):
        (self.root / "harness").mkdir()
        for name in ("readme_tables.py", "tour.py", "course.py", "stamps.py"):
            shutil.copy(HARNESS / name, self.root / "harness")
        shutil.copy(REPO / "Makefile", self.root)
        self.readme.write_text("<!-- results: by_n -->\n<!-- end results -->\n")
        done = subprocess.run(
            ["make", "-s", "tables"], cwd=self.root, capture_output=True, text=True
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn(
            "tables: chapters/99-test/README.md: rewrote 1 block(s): 'by_n' (line 1)", done.stdout
        )
        self.assertIn("1048576", self.readme.read_text())


if __name__ == "__main__":
    unittest.main()
