"""Tests for harness/tour.py's tables and summary: on the committed reference results, and on a
synthetic result file (no GPU, no build)."""

import contextlib
import io
import json
import os
import re
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import course  # noqa: E402
import tour  # noqa: E402

SYNTHETIC = {
    "schema": "cuda-course-bench/1",
    "bench": "99-test",
    "title": "Chapter 99: test",
    "device": {"name": "NVIDIA GeForce RTX 4090"},
    "cuda": {"runtime": "12.4"},
    "date": "2026-12-01T10:00:00Z",
    "tables": [
        {
            "name": "progression",
            "title": "Test progression",
            "columns": ["stage", "threads", "time_ms", "GB/s"],
            "rows": [
                ["01_first", 256, 2.0, 500.0],
                ["02_second (variant)", 128, 1.0, 1000.0],
                ["03_todo", 256, None, None],
                ["LIB Sum", "library", 1.25, 800.0],
                ["ceiling: copy", "-", None, 1250.0],
            ],
            "plot": {
                "kind": "bars",
                "x": "stage",
                "y": "GB/s",
                "ceiling_from_row": "ceiling: copy",
            },
        },
        {
            "name": "host_progression",
            "title": "Host",
            "columns": ["stage", "wall_ms"],
            "rows": [["04_slow", 40.0], ["05_fast", 25.0], ["floor: copies", 20.0]],
            "plot": {"kind": "bars", "x": "stage", "y": "wall_ms", "lower_is_better": True},
        },
        {"name": "by_n", "columns": ["n", "GB/s"], "rows": [[1, 2.0]]},
    ],
}


def run(*argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = tour.main([str(a) for a in argv])
    return status, out.getvalue()


class TableTest(unittest.TestCase):
    def test_cells_read_like_the_benchmark(self):
        self.assertEqual(
            [
                tour.cell_text(v)
                for v in (None, "own", 512, 2744.44, 226.263, 91.9082, 1.17373, 0.0)
            ],
            ["-", "own", "512", "2744", "226.3", "91.91", "1.174", "0.000"],
        )

    def test_table_is_aligned(self):
        lines = tour.format_table(SYNTHETIC["tables"][0])
        self.assertEqual(lines[0], "Test progression")
        self.assertEqual(lines[1].split(), ["stage", "threads", "time_ms", "GB/s"])
        self.assertEqual(set(lines[2]), {"-"})
        self.assertEqual(len(lines[2]), max(len(line) for line in lines[1:]))
        self.assertEqual(lines[5].split(), ["03_todo", "256", "-", "-"])
        # Numbers end in one column.
        self.assertEqual({len(line) for line in lines[3:]}, {len(lines[1])})

    def test_summary_of_a_synthetic_result(self):
        s = tour.summarize(SYNTHETIC["tables"][0])
        self.assertEqual(s["best"], ("02_second (variant)", 1000.0))
        self.assertEqual(s["library"], ("LIB Sum", 800.0))
        self.assertEqual(s["ceiling"], ("ceiling: copy", 1250.0))
        self.assertEqual(
            tour.summary_row("99-test", s),
            ["99-test", "02_second (variant)", "1000 GB/s", "1.25x LIB Sum", "80% of copy"],
        )
        host = tour.summarize(SYNTHETIC["tables"][1])
        self.assertEqual(host["best"], ("05_fast", 25.0))  # lower is better
        self.assertEqual(tour.summary_row("h", host)[3:], ["-", "80% of copies"])
        self.assertIsNone(tour.summarize({"columns": ["stage"], "rows": [], "plot": {"y": "GB/s"}}))

    def test_synthetic_file_through_the_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "99-test.json"
            path.write_text(json.dumps(SYNTHETIC))
            status, out = run("tables", path)
        self.assertEqual(status, 0)
        self.assertIn("this machine: NVIDIA GeForce RTX 4090, CUDA 12.4, 2026-12-01", out)
        self.assertIn("Test progression", out)
        self.assertIn("Host", out)
        self.assertNotIn("by_n", out)  # only the progression tables
        self.assertRegex(
            out, r"\n  99-test +02_second \(variant\) +1000 GB/s +1.25x LIB Sum +80% of copy\n"
        )
        self.assertIn("99-test host", out)


FIXTURE_V2 = Path(__file__).resolve().parent / "fixtures" / "bench-v2.json"


class SchemaTwoTest(unittest.TestCase):
    """A result file of schema cuda-course-bench/2 (harness/tests/fixtures/bench-v2.json): rows with
    median, min, max, repeats and spread, notes under tables, headlines, an interleaved vs_ table."""

    def setUp(self):
        self.doc = course.load_result(FIXTURE_V2)

    def test_read_as_a_result(self):
        self.assertIsNotNone(self.doc)
        self.assertEqual(self.doc["schema"], "cuda-course-bench/2")
        self.assertEqual(self.doc["clocks"]["sm_sustained_mhz"], 1755)
        self.assertEqual(self.doc["versions"]["CCCL"], "3.0.1")

    def test_notes_print_under_their_table(self):
        lines = tour.format_table(self.doc["tables"][0])
        self.assertEqual(
            lines[1].split()[:8],
            ["stage", "threads", "time_ms", "min_ms", "max_ms", "repeats", "spread%", "batch_ms"],
        )
        self.assertTrue(lines[-1].startswith("warning: CUB DeviceReduce::Sum: spread 6.2%"))
        self.assertEqual(len(lines), 3 + 4 + 1)

    def test_summary_carries_the_interleaved_range(self):
        self.assertEqual(tour.interleaved_range(self.doc), (1.0, 1.03))
        ((name, s, interleaved),) = tour.summary_entries(self.doc, "12-reduction")
        self.assertEqual(s["best"], ("10_fastest", 3033.2))
        self.assertEqual(
            tour.summary_row(name, s, interleaved)[3],
            "1.01x CUB DeviceReduce::Sum (1.00-1.03x interleaved)",
        )
        self.assertIsNone(tour.interleaved_range(SYNTHETIC))  # a /1 file has none

    def test_through_the_command(self):
        status, out = run("tables", FIXTURE_V2)
        self.assertEqual(status, 0)
        self.assertIn("Reduction progression (256M ints", out)
        self.assertIn("warning: CUB DeviceReduce::Sum: spread 6.2%", out)
        self.assertIn(
            "Headlines:\n  reduce 10_fastest against CUB (range over the interleaved pairs): aligned 1.00-1.03x",
            out,
        )
        self.assertNotIn("vs_CUB_by_n", out)  # only the progression tables
        # The library's cell wraps before its range: the row would pass 100 columns.
        self.assertRegex(
            out,
            r"\n  12-reduction +10_fastest +3033 GB/s +1.01x CUB "
            r"DeviceReduce::Sum +100% of float4 read kernel\n"
            r" +\(1.00-1.03x interleaved\)\n",
        )


class ReferenceTest(unittest.TestCase):
    """The committed reference results (reference/h200/*/bench.json), whatever their number."""

    def test_every_benchmark_has_a_reference_with_a_progression(self):
        for chapter in course.bench_chapters():
            path, doc = course.reference_result(chapter)
            with self.subTest(chapter=chapter):
                self.assertIsNotNone(doc, f"{chapter}: no committed reference result")
                self.assertTrue(tour.progression_tables(doc), path)
                for table in tour.progression_tables(doc):
                    s = tour.summarize(table)
                    self.assertIsNotNone(s, f"{path}: {table['name']}")
                    self.assertRegex(s["best"][0], r"^\d\d_")
                    self.assertTrue(
                        s["library"] or s["ceiling"] or chapter.endswith("-scan"),
                        f"{path}: {table['name']}: neither a library nor a ceiling row",
                    )

    def test_reference_is_the_reference_gpu(self):
        for chapter in course.bench_chapters():
            _, doc = course.reference_result(chapter)
            self.assertIn(course.REFERENCE_GPU, doc["device"]["name"], chapter)

    def test_tables_are_labelled_as_a_reference_run(self):
        status, out = run("tables")
        self.assertEqual(status, 0)
        headings = [line for line in out.splitlines() if line.startswith("== ")]
        self.assertEqual(len(headings), len(course.bench_chapters()))
        # A label wraps before its file's path where the line would pass 100 columns.
        labels = re.findall(
            r"reference run, not this machine: NVIDIA \S+.*, \d{4}-\d\d-\d\d"
            r"\s+\(reference/",
            out,
        )
        self.assertEqual(len(labels), len(headings))
        self.assertIn(f"(reference runs, not this machine: NVIDIA {course.REFERENCE_GPU}", out)

    def test_summary_fits_one_screen(self):
        status, out = run("tables", "--summary-only")
        self.assertEqual(status, 0)
        lines = out.strip().splitlines()
        self.assertLessEqual(len(lines), 24)
        for chapter in course.bench_chapters():
            self.assertTrue(any(line.strip().startswith(chapter) for line in lines), chapter)

    def test_offline_ending_names_what_runs_here(self):
        text = "\n".join(
            tour.offline_ending(Path(tempfile.gettempdir()) / "no-build", "no NVIDIA driver")
        )
        for what in (
            "make check",
            "make nbody ARGS='--stage cpu'",
            "make sass STAGE=",
            "make plots",
            "Next: ",
        ):
            self.assertIn(what, text)
        first = course.stage_ids()
        self.assertTrue(any(f"exercise/{s}" in text.replace("\n", " ") for s in first))

    def test_make_plots_runs_here_only_with_matplotlib(self):
        build = Path(tempfile.gettempdir()) / "no-build"
        with mock.patch.object(tour, "plot_python", return_value=None):
            lines = tour.offline_ending(build, "no NVIDIA driver")
        plots = [line for line in lines if "make plots" in line]
        self.assertEqual(len(plots), 1, lines)
        self.assertRegex(
            plots[0],
            r"^  make plots needs matplotlib: (sudo )?apt-get install "
            r"python3-matplotlib$",
        )
        with mock.patch.object(tour, "plot_python", return_value="/usr/bin/python3"):
            lines = tour.offline_ending(build, "no NVIDIA driver")
        self.assertTrue(
            any(re.match(r"^  make plots +charts of the reference results", line) for line in lines)
        )
        self.assertFalse(any("needs matplotlib" in line for line in lines))

    def test_without_a_gpu_the_tour_fits_100_columns_and_says_each_thing_once(self):
        reason = "no NVIDIA driver (nvidia-smi not found)"
        with (
            tempfile.TemporaryDirectory() as tmp,
            mock.patch.object(tour, "gpu_reason", return_value=reason),
        ):
            status, out = run("run", "--build", tmp)
        self.assertEqual(status, 0)
        lines = out.splitlines()
        self.assertEqual([line for line in lines if len(line) > tour.WIDTH], [])
        # Chapter 14's goals are table notes and headlines both: printed once.
        flat = " ".join(out.split())  # a phrase may wrap at the 100 columns
        for text in ("2.11e+12 interactions/s (", "at 0.917x the goal"):
            self.assertEqual(flat.count(text), 1, text)
        # Every progression table is still there, every stage in it.
        for chapter in course.bench_chapters():
            _, doc = course.reference_result(chapter)
            for table in tour.progression_tables(doc):
                for row in table["rows"]:
                    self.assertIn(str(row[0]).split()[0], out, (chapter, row[0]))

    def test_fitted_rows_wrap_the_widest_text_cell(self):
        rows = [
            ["stage", "config", "GB/s"],
            ["01_first", "threads 256, unroll 32", "1000"],
            ["02_second", "64 thr", "2000"],
        ]
        lines, depth = tour.fit_rows(rows, {0}, 30)
        self.assertEqual(depth, 1)
        self.assertTrue(all(len(line) <= 30 for line in lines), lines)
        self.assertEqual(lines[1].split()[0], "01_first")
        self.assertEqual(lines[1].split()[-1], "1000")
        self.assertEqual(lines[2].strip(), "unroll 32")  # the rest of the cell, under its column
        # Wide enough: one line a row, as before.
        self.assertEqual(len(tour.fit_rows(rows, {0}, 100)[0]), 3)
        # A name wider than its numbers goes on two header lines first.
        rows = [["stage", "pct_fp32_ceiling"], ["01_first", "64.04"]]
        lines, depth = tour.fit_rows(rows, {0}, 20)
        self.assertEqual((depth, lines[:2]), (2, ["          pct_fp32_", "stage       ceiling"]))

    def test_with_a_gpu_the_summary_reads_the_results_just_written(self):
        # Fake benchmarks: each writes its chapter's reference result as if measured now; one
        # leaves an old file alone and fails.
        benches = course.bench_chapters()
        with tempfile.TemporaryDirectory() as tmp:
            build, results = Path(tmp) / "build", Path(tmp) / "results"
            (build / "bin").mkdir(parents=True)
            results.mkdir()
            for i, chapter in enumerate(benches):
                path, _ = course.reference_result(chapter)
                script = build / "bin" / f"bench-{chapter}"
                if i == 0:
                    (results / f"{chapter}.json").write_text(path.read_text())
                    os.utime(results / f"{chapter}.json", (1, 1))  # from an earlier run
                    script.write_text("#!/bin/sh\nexit 1\n")
                else:
                    script.write_text(f"#!/bin/sh\ncp '{path}' '{results}/{chapter}.json'\n")
                script.chmod(0o755)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = tour.run_benches(build, benches, ["08-warp"], "--N 64", results=results)
        text = out.getvalue()
        self.assertEqual(status, 1)
        self.assertIn(f"(this machine: NVIDIA {course.REFERENCE_GPU}", text)
        self.assertNotIn("reference run", text)
        self.assertIn(f"no results written by: {benches[0]}", text)
        self.assertIn(f"make tour: failed: {benches[0]} (exit status 1)", text)
        for chapter in benches[1:]:
            self.assertRegex(text, rf"\n  {chapter}\S* +\d\d_")

    def test_build_failure_excerpt_starts_at_the_error(self):
        log = "[1/9] Building\n[2/9] Building\nFAILED: x.o\nx.cu(3): error: oops\nninja: build stopped\n"
        self.assertEqual(tour.error_excerpt(log)[0], "FAILED: x.o")
        self.assertEqual(tour.error_excerpt("a\nb\n", limit=1), ["b"])


if __name__ == "__main__":
    unittest.main()
