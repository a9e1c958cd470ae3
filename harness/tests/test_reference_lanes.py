"""make reference on two GPUs (harness/reference.py two_lanes): the benches on one GPU while the
profile captures run on the other and the SASS builds on the CPU; each command sees one GPU. The
steps are faked here: what is checked is which GPU each one's commands are given, and the order."""

import io
import os
import sys
import threading
import unittest
import unittest.mock
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import reference  # noqa: E402


def smi(rows):
    out = "".join(f"{i}, {name}\n" for i, name in enumerate(rows))
    return unittest.mock.Mock(return_value=unittest.mock.Mock(stdout=out))


class GpuLanesTest(unittest.TestCase):
    def lanes(self, rows, want=2, visible=None):
        env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
        if visible is not None:
            env["CUDA_VISIBLE_DEVICES"] = visible
        with (
            unittest.mock.patch.dict(os.environ, env, clear=True),
            unittest.mock.patch.object(reference.subprocess, "run", smi(rows)),
        ):
            return reference.gpu_lanes(want)

    def test_two_gpus_of_one_model(self):
        self.assertEqual(self.lanes(["NVIDIA H200", "NVIDIA H200"]), ["0", "1"])
        self.assertEqual(self.lanes(["NVIDIA H200"] * 4), ["0", "1"])

    def test_one_lane_otherwise(self):
        self.assertEqual(self.lanes(["NVIDIA H200"]), [None])
        self.assertEqual(self.lanes(["NVIDIA H200", "NVIDIA H100 80GB HBM3"]), [None])
        self.assertEqual(self.lanes(["NVIDIA H200", "NVIDIA H200"], want=1), [None])
        self.assertEqual(self.lanes(["NVIDIA H200", "NVIDIA H200"], visible="1"), [None])
        self.assertEqual(self.lanes([]), [None])


class TwoLanesTest(unittest.TestCase):
    def test_each_step_on_its_gpu(self):
        calls, lock = [], threading.Lock()

        def fake(name):
            def step(r, *_):
                with lock:
                    calls.append((name, getattr(r.local, "env", {}).get("CUDA_VISIBLE_DEVICES")))
                return name

            return step

        scripts = [("script-12", ["x"]), ("script-14", ["y"])]
        r = unittest.mock.Mock()
        r.lock, r.local = threading.Lock(), threading.local()
        r.chosen.return_value = None
        r.sh.side_effect = lambda what, cmd: fake(what)(r)
        patches = {
            "step_bench": fake("bench"),
            "step_sass": fake("sass"),
            "prebuild_pitfalls": fake("pitfalls-build"),
            "step_pitfalls": fake("pitfalls"),
            "profile_captures": fake("captures"),
            "profile_scripts": lambda r: list(scripts),
            "profile_written": lambda r, start: "2 profiles",
            "multi_gpu_benches": lambda r, lanes: fake("multi-gpu " + ",".join(lanes))(r),
        }
        times = []

        def timed(step, run=None):
            times.append((step, (run or getattr(reference, f"step_{step}"))(r)))

        steps = ["bench", "sass", "profile", "pitfalls"]
        with unittest.mock.patch.multiple(reference, **patches), redirect_stdout(io.StringIO()):
            reference.two_lanes(r, steps, timed, ["0", "1"])
        on = dict(calls)
        self.assertEqual(on["bench"], "0")
        self.assertEqual(on["pitfalls"], "0")
        self.assertEqual(on["captures"], "1")
        self.assertIsNone(on["sass"])
        self.assertIsNone(on["pitfalls-build"])
        self.assertEqual({on["script-12"], on["script-14"]} <= {"0", "1"}, True)
        order = [name for name, _ in calls]
        self.assertLess(order.index("pitfalls-build"), order.index("pitfalls"))
        # Both GPUs at once only once each lane is done: after the pitfalls and the captures.
        self.assertEqual(order[-1], "multi-gpu 0,1")
        self.assertIsNone(on["multi-gpu 0,1"])  # no lane of its own: it names both GPUs itself
        self.assertIn(("profile", "captures and capture scripts on GPU 1"), times)
        self.assertEqual(getattr(r.local, "env", {}), {})  # the main thread's lane cleared


class MultiGpuBenchTest(unittest.TestCase):
    def test_the_rows_on_every_gpu(self):
        """Chapter 14's [chapter] multi_gpu rows, with both GPUs visible, into h200x2/."""
        r = unittest.mock.Mock(plan=True, gpu="h200", build=Path("/nonexistent-build"))
        r.bench_chapters.return_value = ["13-scan", "14-nbody"]
        seen = []
        r.sh.side_effect = lambda what, cmd, stdout=None, env=None: (
            seen.append((what, [str(c) for c in cmd], stdout, env)) or True
        )
        with redirect_stdout(io.StringIO()):
            said = reference.multi_gpu_benches(r, ["0", "1"])
        self.assertEqual(len(seen), 1, seen)  # 13-scan has no multi_gpu rows
        what, cmd, stdout, env = seen[0]
        self.assertEqual(what, "bench-14-nbody-x2")
        self.assertEqual(cmd[0], "/nonexistent-build/bin/bench-14-nbody")
        self.assertEqual(cmd[1:3], ["--only", reference.course.multi_gpu_rows("14-nbody")])
        self.assertEqual(env["CUDA_VISIBLE_DEVICES"], "0,1")
        self.assertEqual(
            Path(stdout).relative_to(reference.ROOT).as_posix(),
            "reference/h200x2/14-nbody/bench.txt",
        )
        self.assertEqual(said, "1 benchmarks on GPUs 0,1")


class LanesPlanTest(unittest.TestCase):
    def test_the_plan_on_two_gpus(self):
        out = io.StringIO()
        with redirect_stdout(out):
            status = reference.main(["plan", "--lanes", "2", "--build", "/nonexistent-build"])
        text = out.getvalue()
        self.assertEqual(status, 0, text)
        for line in (
            "    two GPUs: 0, 1 (bench and profile at once; LANES=1 for one)",
            "== bench (GPU 0), then capture scripts and pitfalls there",
            "== profile (GPU 1, beside bench), then capture scripts",
            "== sass (CPU, beside bench)",
            "== pitfalls build (CPU, after sass)",
            "== pitfalls (GPU 0)",
            "== bench on GPUs 0,1 at once (the rows that use every GPU)",
            "== charts",
        ):
            self.assertIn(line + "\n", text)

    def test_one_gpu_plan_unchanged(self):
        out = io.StringIO()
        with redirect_stdout(out):
            reference.main(["plan", "--build", "/nonexistent-build"])
        self.assertNotIn("two GPUs", out.getvalue())
        self.assertIn("== profile\n", out.getvalue())


if __name__ == "__main__":
    unittest.main()


class BuildStepTest(unittest.TestCase):
    def commands(self, benches, stages):
        r = unittest.mock.Mock(build=Path("build"))
        r.args.jobs = 2
        r.bench_chapters.return_value = benches
        r.stage_targets.return_value = stages
        r.sh.return_value = True
        reference.step_build(r)
        return [c.args[1] for c in r.sh.call_args_list]

    def test_nothing_to_build_is_configure_alone(self):
        # STALE=1 with only a pitfalls record stale: `cmake --build --target` with no target fails.
        commands = self.commands([], [])
        self.assertEqual(len(commands), 1)
        self.assertEqual(commands[0][:5], ["cmake", "-S", ".", "-B", Path("build")])

    def test_the_benches_and_stages(self):
        built = self.commands(["14-nbody"], ["solution.14-nbody.07_register_blocked"])[1]
        self.assertEqual(built[-2:], ["bench-14-nbody", "solution.14-nbody.07_register_blocked"])
