"""Tests for plots/plot.py: a synthetic result file becomes one PNG per hinted table."""

import contextlib
import importlib.util
import io
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

PLOTS = Path(__file__).resolve().parents[2] / "plots"
sys.path.insert(0, str(PLOTS))
import plot  # noqa: E402

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

RESULT = {
    "schema": "cuda-course-bench/1",
    "bench": "11-streaming",
    "title": "synthetic",
    "device": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "sms": 132},
    "cuda": {"runtime": "13.0", "driver": "13.0"},
    "date": "2026-11-22T04:00:00Z",
    "params": {"N": 268435456},
    "tables": [
        {
            "name": "device_saxpy",
            "title": "SAXPY",
            "columns": ["stage", "time_ms", "GB/s"],
            "rows": [
                ["01_grid_stride", 1.21, 2660.3],
                ["02_unrolled", 1.15, 2801.0],
                ["03_vectorized", None, None],
            ],
            "plot": {
                "kind": "bars",
                "x": "stage",
                "y": "GB/s",
                "ceiling": 2990.0,
                "ceiling_label": "D2D memcpy",
            },
        },
        {
            "name": "host_progression",
            "title": "through the host",
            "columns": ["stage", "wall_ms"],
            "rows": [
                ["04_sync_pageable", 90.0],
                ["05_async_pinned", 60.0],
                ["floor: copies", 40.0],
            ],
            "plot": {
                "kind": "bars",
                "x": "stage",
                "y": "wall_ms",
                "ceiling_from_row": "floor: copies",
                "lower_is_better": True,
            },
        },
        {
            "name": "streams",
            "title": "streams",
            "columns": ["streams", "size", "time_ms"],
            "rows": [
                [1, 1024, 3.0],
                [2, 1024, 2.0],
                [4, 1024, 1.6],
                [1, 4096, 9.0],
                [2, 4096, 5.0],
            ],
            "plot": {
                "kind": "lines",
                "x": "streams",
                "y": "time_ms",
                "series": "size",
                "logx": True,
            },
        },
        {
            "name": "sweep/long",
            "title": "block x unroll",
            "columns": ["threads", "unroll", "GB/s"],
            "rows": [[128, 1, 2000.0], [256, 1, 2200.0], [128, 4, 2500.0], [256, 4, 2600.0]],
            "plot": {"kind": "heatmap", "x": "threads", "y": "unroll", "value": "GB/s"},
        },
        {
            "name": "sweep_wide",
            "title": "block x unroll, wide",
            "columns": ["unroll", "128", "256", "max_GB/s"],
            "rows": [[1.0, 2000.0, 2200.0, 2200.0], [4.0, 2500.0, 2600.0, 2600.0]],
            "plot": {
                "kind": "heatmap",
                "x": "threads",
                "y": "unroll",
                "value": "GB/s",
                "columns_are_x": True,
                "skip_columns": ["max_GB/s"],
            },
        },
        {"name": "no_plot", "columns": ["a"], "rows": [[1]]},
    ],
}


FIXTURE_V2 = Path(__file__).resolve().parent / "fixtures" / "bench-v2.json"


def run_plot(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = plot.main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


class PlotTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.results = Path(self.tmp.name) / "results"
        self.results.mkdir()

    def write(self, doc, name="11-streaming.json"):
        (self.results / name).write_text(json.dumps(doc))

    def test_error_bars_from_min_and_max(self):
        doc = json.loads(FIXTURE_V2.read_text())
        below, above = plot.error_bars(doc["tables"][0], "GB/s")
        # 10_fastest: 3033.2 GB/s at 0.354 ms, min 0.35, max 0.36: the rate at the slowest and fastest call.
        self.assertAlmostEqual(below[1], 3033.2 - 3033.2 * 0.354 / 0.36)
        self.assertAlmostEqual(above[1], 3033.2 * 0.354 / 0.35 - 3033.2)
        self.assertEqual((below[3], above[3]), (0.0, 0.0))  # the ceiling row has no time
        below, above = plot.error_bars(doc["tables"][0], "time_ms")
        self.assertAlmostEqual(below[0], 0.52 - 0.515)
        self.assertAlmostEqual(above[0], 0.531 - 0.52)
        self.assertIsNone(plot.error_bars(RESULT["tables"][0], "GB/s"))  # /1: no min_ms, max_ms

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed for this python3")
    def test_schema_two_file_is_drawn(self):
        out_dir = Path(self.tmp.name) / "out"
        status, out, err = run_plot("--out", out_dir, FIXTURE_V2)
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(
            sorted(p.name for p in out_dir.iterdir()),
            ["12-reduction-h100-by_n.png", "12-reduction-h100-progression.png"],
        )

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed for this python3")
    def test_one_png_per_hinted_table(self):
        self.write(RESULT)
        status, out, err = run_plot("--results", self.results)
        self.assertEqual(status, 0)
        self.assertEqual(
            err, f"plot: drawing this machine's results from {self.results}/ (1 files)\n"
        )
        pngs = sorted(p.name for p in (self.results / "plots").iterdir())
        self.assertEqual(
            pngs,
            [
                "11-streaming-h100-device_saxpy.png",
                "11-streaming-h100-host_progression.png",
                "11-streaming-h100-streams.png",
                "11-streaming-h100-sweep-long.png",
                "11-streaming-h100-sweep_wide.png",
            ],
        )
        self.assertEqual(len(out.splitlines()), 5)
        for png in (self.results / "plots").iterdir():
            self.assertEqual(png.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed for this python3")
    def test_bad_table_is_reported_and_others_drawn(self):
        doc = json.loads(json.dumps(RESULT))
        doc["tables"][0]["plot"]["y"] = "missing"
        self.write(doc)
        out_dir = Path(self.tmp.name) / "pngs"
        status, out, err = run_plot("--out", out_dir, self.results / "11-streaming.json")
        self.assertEqual(status, 1)
        self.assertIn("device_saxpy", err)
        self.assertEqual(len(list(out_dir.iterdir())), 4)

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed for this python3")
    def test_two_gpus_never_share_a_file_name(self):
        h200 = json.loads(json.dumps(RESULT))
        h200["device"]["name"] = "NVIDIA H200"
        again = json.loads(json.dumps(RESULT))
        again["date"] = "2026-12-01T00:00:00Z"
        self.write(RESULT, "a.json")
        self.write(h200, "b.json")
        self.write(again, "c.json")
        status, out, _ = run_plot("--results", self.results)
        self.assertEqual(status, 0)
        names = [Path(line).name for line in out.splitlines()]
        self.assertEqual(len(names), 15)
        self.assertEqual(len(set(names)), 15, names)
        self.assertIn("11-streaming-h200-device_saxpy.png", names)
        self.assertIn("11-streaming-h100-2026-12-01-device_saxpy.png", names)

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed for this python3")
    def test_no_results_draws_the_committed_reference_results(self):
        out_dir = Path(self.tmp.name) / "pngs"
        every = plot.reference_files()
        self.assertTrue(any(p.parent.name == "12-reduction" for p in every), every)
        one = [p for p in every if p.parent.name == "12-reduction"][:1]
        with mock.patch.object(plot, "reference_files", lambda: one):
            status, out, err = run_plot("--results", self.results, "--out", out_dir)
        self.assertEqual(status, 0, err)
        self.assertIn("drawing the committed reference results", err)
        self.assertEqual(len(err.splitlines()), 1)
        names = {Path(line).name for line in out.splitlines()}
        self.assertIn("12-reduction-h200-progression.png", names)
        self.assertEqual(len(names), len(out.splitlines()))

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed for this python3")
    def test_bar_labels_clear_of_the_legend_and_ceiling_numbered(self):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(9, 4.5))
        table = RESULT["tables"][0]
        plot.draw_bars(ax, table, table["plot"])
        texts = [t.get_text() for t in ax.texts]
        self.assertIn("D2D memcpy: 2990", [t.replace("\n", " ") for t in texts])
        self.assertIsNone(ax.get_legend())  # the ceiling is named on its line, no legend box
        fig.canvas.draw()
        values = [t for t in ax.texts if t.get_text() in ("2660", "2801")]
        line = ax.lines[0].get_window_extent()
        for t in values:
            self.assertFalse(t.get_window_extent().overlaps(line), t.get_text())
        plt.close(fig)

    def test_lines_title_names_its_series(self):
        table = {
            "name": "by_n",
            "title": "GB/s against n: the book's fastest stage, stage 10 and CUB",
            "columns": ["n", "series", "GB/s"],
            "rows": [[1, "01_two_pass", 1.0], [1, "10_fastest", 2.0], [1, "CUB", 3.0]],
        }
        hint = {"kind": "lines", "x": "n", "y": "GB/s", "series": "series"}
        self.assertEqual(
            plot.chart_title(table, hint), "GB/s against n: 01_two_pass, 10_fastest, CUB"
        )
        table["title"] = "Gtpix/s against the template size"
        self.assertEqual(
            plot.chart_title(table, hint),
            "Gtpix/s against the template size: 01_two_pass, 10_fastest, CUB",
        )
        self.assertEqual(
            plot.chart_title(table, {"kind": "bars"}), "Gtpix/s against the template size"
        )

    def test_plain_names_in_the_evidence_folders(self):
        # make reference draws into reference/<gpu>/<chapter>/, whose path names the bench and GPU.
        self.assertEqual(
            plot.output_name("12-reduction", "by_n", "h200"), "12-reduction-h200-by_n.png"
        )
        self.assertEqual(plot.output_name("12-reduction", "by_n", "h200", plain=True), "by_n.png")

    def test_gpu_slug(self):
        for name, slug in (
            ("NVIDIA H100 80GB HBM3", "h100"),
            ("NVIDIA H200", "h200"),
            ("NVIDIA GeForce RTX 4090", "geforce-rtx-4090"),
            ("NVIDIA A100-SXM4-80GB", "a100-sxm4"),
            ("NVIDIA H100 PCIe", "h100-pcie"),
        ):
            self.assertEqual(plot.gpu_slug({"device": {"name": name}}), slug)
        self.assertEqual(plot.gpu_slug({}), "unknown-gpu")

    def test_missing_matplotlib_is_one_line_and_status_3(self):
        self.write(RESULT)
        # A None entry in sys.modules makes `import matplotlib` fail, as if it were not installed.
        code = (
            "import sys; sys.modules['matplotlib'] = None; sys.path.insert(0, sys.argv[1]); "
            "import plot; sys.exit(plot.main(['--results', sys.argv[2]]))"
        )
        run = subprocess.run(
            [sys.executable, "-c", code, str(PLOTS), str(self.results)],
            capture_output=True,
            text=True,
        )
        self.assertEqual(run.returncode, 3)
        self.assertEqual(len(run.stderr.splitlines()), 1)
        self.assertIn("apt-get install python3-matplotlib", run.stderr)


if __name__ == "__main__":
    unittest.main()
