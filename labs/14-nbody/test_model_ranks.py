#!/usr/bin/env python3
"""Host test of model_ranks.py's arithmetic (ctest: host/14-nbody/model_ranks)."""

import io
import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import model_ranks as m  # noqa: E402

R, B = 2e12, 450e9


class ModelTest(unittest.TestCase):
    def test_one_gpu_is_compute_only(self):
        n = 1 << 18
        self.assertAlmostEqual(m.step_time(n, 1, R, B, 5e-6), n * n / R)
        self.assertAlmostEqual(m.efficiency(n, 1, R, B, 5e-6), 1.0)

    def test_step_time_terms(self):
        n, p, alpha = 1 << 20, 4, 2e-6
        want = n * n / (p * R) + 0.75 * 16 * n / B + 3 * alpha
        self.assertAlmostEqual(m.step_time(n, p, R, B, alpha), want)

    def test_n_min_without_latency_is_16_r_over_b(self):
        self.assertAlmostEqual(m.n_min(7, R, B), 16 * R / B)

    def test_n_min_is_where_one_more_gpu_stops_helping(self):
        for p in (8, 64, 1024):
            for alpha in (0.0, 3e-6):
                n = m.n_min(p, R, B, alpha)
                above, below = n * 1.01, n * 0.99
                self.assertLess(
                    m.step_time(above, p + 1, R, B, alpha), m.step_time(above, p, R, B, alpha)
                )
                self.assertGreater(
                    m.step_time(below, p + 1, R, B, alpha), m.step_time(below, p, R, B, alpha)
                )

    def test_stage_10_fit_recovers_its_inputs(self):
        n, rate, c = 1 << 18, 1.9e12, 3e-3
        pts = [(p, n, 1e3 * (n * n / (p * rate) + c), 0) for p in (1, 2)]
        fit = m.fit_stage_10(pts)
        self.assertTrue(math.isclose(fit["rate"], rate, rel_tol=1e-9))
        self.assertTrue(math.isclose(fit["setup_s"], c, rel_tol=1e-9))

    def test_stage_11_fit_recovers_its_inputs(self):
        rate, bw, alpha = 2.05e12, 300e9, 4e-6
        pts = []
        for p in (1, 2, 4):
            for n in (1 << 18, 1 << 20):
                force = 1e3 * n * n / (p * rate)
                gather = 1e3 * ((p - 1) / p * 16 * n / bw + (p - 1) * alpha)
                pts.append((p, p, n, force + gather, force, gather))
        fit = m.fit_stage_11(pts)
        self.assertTrue(math.isclose(fit["rate"], rate, rel_tol=1e-9))
        self.assertTrue(math.isclose(fit["bandwidth"], bw, rel_tol=1e-6))
        self.assertTrue(math.isclose(fit["alpha"], alpha, rel_tol=1e-6))

    def test_shared_gpu_rows_are_not_fitted(self):
        # ranks sharing one GPU (transport mpi) say nothing about scaling
        self.assertIsNone(m.fit_stage_11([(4, 1, 1024, 1.0, 0.5, 0.5)]))

    def test_report_labels_measured_and_predicted(self):
        out = io.StringIO()
        m.report(R, "a test", None, out)
        text = out.getvalue()
        self.assertIn("MEASURED (a test)", text)
        self.assertIn("PREDICTED", text)
        self.assertIn("not been measured on several GPUs", text)


if __name__ == "__main__":
    unittest.main()
