"""Tests for harness/profile.py and plots/roofline.py without a GPU or ncu: the parsing of ncu's raw
CSV (synthetic fixtures written from the documented format, named *.synthetic.*), the captures, the
offline fallback and its one-line messages, the permission message, bad names, profile-diff,
the bounds, and the roofline's data (not its drawing). A fake `ncu` script stands in for the tool."""

import contextlib
import importlib.util
import io
import json
import stat
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

HARNESS = Path(__file__).resolve().parent.parent
REPO = HARNESS.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "profile"
RAW12 = FIXTURES / "ncu_raw_12-reduction.synthetic.csv"
RAW11 = FIXTURES / "ncu_raw_11-streaming.newer-nvtx.synthetic.csv"
PERMISSION = FIXTURES / "ncu_permission.synthetic.txt"


def load(name, path):
    """harness/profile.py under its own module name ('profile' is also a standard-library module)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(HARNESS))
profile = load("course_profile", HARNESS / "profile.py")
roofline = load("course_roofline", REPO / "plots" / "roofline.py")


def run_main(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = profile.main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def launches_12():
    return profile.parse_raw(RAW12.read_text(), "12-reduction")


class ParseTest(unittest.TestCase):
    def test_rows_labels_and_kernels(self):
        found = launches_12()
        self.assertEqual(
            [l.label for l in found],
            [
                "01_two_pass",
                "01_two_pass",
                "08_predicate (count, __ballot_sync)",
                "08_predicate (count, __syncthreads_count)",
                "10_fastest",
                "CUB DeviceReduce::Sum",
                "CUB DeviceReduce::Sum",
            ],
        )
        self.assertEqual(
            found[4].kernel, "void reduce_fastest<512u, int>(int*, const int*, unsigned long)"
        )
        self.assertEqual([l.index for l in found], list(range(7)))

    def test_values_units_and_grouped_numbers(self):
        fastest = launches_12()[4]
        self.assertEqual(
            fastest.get("dram__bytes_read.sum"), 1073741824.0
        )  # written "1,073,741,824"
        self.assertEqual(fastest.get("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 93.1)
        self.assertEqual(fastest.units["gpu__time_duration.sum"], "nsecond")
        self.assertIsNone(fastest.get(profile.stall_metric("sleeping")))  # "n/a"

    def test_opcode_instances(self):
        fastest = launches_12()[4]
        self.assertEqual(fastest.opcodes, {"IMAD": 300000.0, "IADD3": 9000000.0, "LDG": 2097152.0})
        self.assertEqual(fastest.get("sass__inst_executed_per_opcode"), 11397152.0)
        self.assertEqual(profile.instances("12 (IMAD: 4, IDP: 8)"), {"IMAD": 4.0, "IDP": 8.0})
        self.assertEqual(
            profile.instances("1,024 (IMAD: 1,000; IDP: 24)"), {"IMAD": 1000.0, "IDP": 24.0}
        )
        self.assertEqual(profile.instances("158"), {})

    def test_newer_nvtx_column_and_program_output(self):
        (launch,) = profile.parse_raw(RAW11.read_text(), "11-streaming")
        self.assertEqual(launch.label, "03_vectorized_float4")
        self.assertEqual(launch.get("launch__grid_size"), 5000.0)

    def test_nvtx_cells(self):
        cell = ' "outer:none:none:none:none:none:none"  "profile:12-reduction:09_shuffle:none:none:none:none:none:none" '
        self.assertEqual(profile.nvtx_label(cell), ("12-reduction", "09_shuffle"))
        self.assertEqual(
            profile.nvtx_label("<default domain>:profile:15-ncc:07_dp4a"), ("15-ncc", "07_dp4a")
        )
        self.assertEqual(
            profile.nvtx_label(
                "profile:12-reduction:CUB DeviceReduce::Sum:none:none:none:none:none:none"
            ),
            ("12-reduction", "CUB DeviceReduce::Sum"),
        )
        self.assertIsNone(profile.nvtx_label("warmup:none:none"))
        self.assertIsNone(profile.nvtx_label("profile:13-scan:x", chapter="12-reduction"))

    def test_no_csv(self):
        self.assertEqual(profile.parse_raw(PERMISSION.read_text()), [])
        self.assertTrue(profile.permission_denied(PERMISSION.read_text()))


class StageTest(unittest.TestCase):
    def test_labels_to_stages(self):
        names = ["08_predicate", "10_fastest"]
        self.assertEqual(profile.label_stage("10_fastest", names), "10_fastest")
        self.assertEqual(
            profile.label_stage("08_predicate (count, __ballot_sync)", names), "08_predicate"
        )
        library = profile.course.library_rows("12-reduction")
        self.assertEqual(library, ["CUB DeviceReduce::Sum"])
        self.assertEqual(
            profile.label_stage("CUB DeviceReduce::Sum", names, library), profile.course.BASELINE
        )
        self.assertIsNone(profile.label_stage("ceiling: float4 read kernel", names, library))
        # A lab's rows are neither a stage nor the library (14-nbody's rsqrt lab once filled its
        # baseline capture; N-body has no library row).
        self.assertIsNone(profile.label_stage("rsqrt lab: 1 in 4 on the FMA pipe", names, library))
        self.assertEqual(profile.course.library_rows("14-nbody"), [])
        self.assertIsNone(profile.label_stage("10_fastest_v2", names[:1]))

    def test_filters(self):
        self.assertEqual(profile.only_regex("10_fastest"), "^10_fastest( .*)?$")
        self.assertEqual(
            profile.only_regex(profile.course.BASELINE, "12-reduction"),
            "^(CUB DeviceReduce::Sum)$",
        )
        self.assertEqual(
            profile.nvtx_filter("12-reduction", profile.course.BASELINE),
            "regex:profile:12-reduction:(CUB DeviceReduce::Sum)/",
        )
        only = profile.chapter_only("14-nbody")
        self.assertTrue(only.startswith("^(02_naive_aos|") and only.endswith(")( .*)?$"), only)
        self.assertEqual(
            profile.nvtx_filter("12-reduction", "10_fastest"),
            "regex:profile:12-reduction:10_fastest( .*)?/",
        )
        self.assertEqual(profile.nvtx_filter("12-reduction"), "regex:profile:12-reduction:.*/")
        self.assertTrue(profile.nvtx_filter("12-reduction", profile.course.BASELINE).endswith("/"))
        cmd = profile.ncu_command(
            "ncu",
            "build/bin/bench-12-reduction",
            "12-reduction",
            "10_fastest",
            ["a.sum", "b.pct"],
            "log.csv",
            "scratch",
        )
        self.assertEqual(cmd[cmd.index("--metrics") + 1], "a.sum,b.pct")
        self.assertEqual(cmd[cmd.index("--page") + 1], "raw")
        self.assertIn("--csv", cmd)
        self.assertEqual(cmd[cmd.index("--only") + 1], "^10_fastest( .*)?$")
        self.assertEqual(cmd[cmd.index("--results") + 1], "scratch")  # never the user's results/

    def test_resolve_and_bad_names(self):
        stage = profile.course.profile_stage
        self.assertEqual(stage("12-reduction/10"), ("solution", "12-reduction", "10_fastest"))
        self.assertEqual(stage("exercise/12-reduction/10_fastest")[0], "exercise")
        self.assertEqual(stage("12-reduction/baseline")[2], profile.course.BASELINE)
        self.assertEqual(stage("12-reduction/library")[2], profile.course.BASELINE)
        for bad in ("nope", "12-reduction/99", ""):
            status, out, err = run_main("show", "--offline", bad)
            self.assertEqual(status, 2, bad)
            self.assertEqual(out, "")
            self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("no stage 'nope'", run_main("show", "nope")[2])

    def test_validate_for_make(self):
        # make's check of the profile targets' arguments is course.py validate's (test_make_args).
        validate = profile.course.validate
        self.assertIsNone(validate("profile", {"STAGE": "12-reduction/10_fastest"}))
        self.assertIsNone(validate("profile", {"STAGE": "12-reduction/baseline"}))
        self.assertIn("no stage 'x'", validate("profile", {"STAGE": "x"}))
        self.assertIn("say which stage", validate("profile", {}))
        self.assertIn("say which two stages", validate("profile-diff", {"A": "12-reduction/10"}))
        self.assertIn(
            "profile-diff: B: no stage 'zz'",
            validate("profile-diff", {"A": "12-reduction/10", "B": "zz"}),
        )
        self.assertIn("08-warp", validate("profile-capture", {"CHAPTER": "08-warp"}))
        self.assertIsNone(validate("profile-capture", {}))
        # A valid name whose profile cannot exist is no usage error: the run says why (status 1).
        self.assertIsNone(validate("profile", {"STAGE": "08-warp/01_shuffle_forms"}))

    def test_not_profilable(self):
        status, _, err = run_main("show", "--offline", "08-warp/01_shuffle_forms")
        self.assertEqual((status, len(err.splitlines())), (1, 1))
        self.assertIn("no benchmark", err)
        status, _, err = run_main("show", "--offline", "14-nbody/09_cpu_simd")
        self.assertEqual(status, 1)
        self.assertIn("CPU", err)

    def test_not_migrated(self):
        with tempfile.TemporaryDirectory() as tmp:
            bench = Path(tmp) / "bench-13-scan"
            bench.write_text("#!/bin/sh\necho 'usage: bench [--repeats N] [--results DIR]'\n")
            bench.chmod(bench.stat().st_mode | stat.S_IEXEC)
            with self.assertRaises(profile.UsageError) as caught:
                profile.check_migrated(bench)
            self.assertEqual(caught.exception.status, 1)
            self.assertIn("not migrated yet", str(caught.exception))
            bench.write_text(
                "#!/bin/sh\necho '  --only REGEX   only the rows whose label matches'\n"
            )
            self.assertEqual(profile.check_migrated(bench), bench)


class SummaryTest(unittest.TestCase):
    def test_sums_and_weighted_averages(self):
        two_pass = [l for l in launches_12() if l.label == "01_two_pass"]
        s = profile.summarize(two_pass)
        self.assertEqual(s["kernels"], 2)
        self.assertAlmostEqual(s["time_us"], 473.0)
        # Weighted by duration: (72.4 * 470 + 0.1 * 3) / 473.
        self.assertAlmostEqual(s["dram_pct"], (72.4 * 470 + 0.1 * 3) / 473)
        self.assertAlmostEqual(s["dram_gbs"], (1073741824 + 1056 + 1056 + 4) / 473000)
        self.assertEqual(s["ld_bytes_per_request"], 128.0)
        self.assertEqual(s["bank_conflicts"], 276.0)
        self.assertAlmostEqual(s["shared_wavefronts"], (4500 + 4224) / (4224 * 2))
        self.assertTrue(s["stalls"].startswith("long_scoreboard"))
        self.assertEqual(s["registers"], 16.0)
        self.assertAlmostEqual(s["imad"], 1200040 / 1e6)

    def test_fastest_moves_more_bytes_per_request(self):
        fastest = profile.summarize([launches_12()[4]])
        self.assertEqual(fastest["ld_bytes_per_request"], 512.0)
        self.assertEqual(fastest["stalls"].split(",")[0], "long_scoreboard 11.2")
        self.assertEqual(fastest["ffma"], 0.0)  # opcodes collected, none of them FFMA
        self.assertEqual(
            profile.summarize([launches_12()[3]])["imad"], None
        )  # no opcode data at all

    def test_sections(self):
        self.assertIn("bank_conflicts", profile.rows_for("13-scan"))
        self.assertIn("idp", profile.rows_for("15-ncc"))
        self.assertEqual(profile.rows_for("12-reduction", "all"), profile.ALL_ROWS)
        self.assertTrue(all("stall" in k for k in profile.rows_for("12-reduction", "stall")))
        with self.assertRaises(profile.UsageError):
            profile.rows_for("12-reduction", "nothing-like-this")


class CaptureTest(unittest.TestCase):
    """Captures in a scratch tree (profile.ROOT pointed at it)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        patcher = mock.patch.object(profile, "ROOT", self.root)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.addCleanup(self.tmp.cleanup)
        by_stage = {}
        for launch in launches_12():
            stage = profile.label_stage(
                launch.label,
                ["01_two_pass", "08_predicate", "10_fastest"],
                profile.course.library_rows("12-reduction"),
            )
            by_stage.setdefault(stage, []).append(launch)
        for stage, launches in by_stage.items():
            profile.write_capture(
                profile.capture_path(f"12-reduction/{stage}"),
                f"12-reduction/{stage}: NVIDIA H100 80GB HBM3 (sm_90), ncu 2025.3.1, "
                "2026-11-24T00:00:00Z; ncu ... (synthetic)",
                launches,
            )

    def test_round_trip(self):
        header, back = profile.read_capture(profile.capture_path("12-reduction/01_two_pass"))
        self.assertTrue(header.startswith("12-reduction/01_two_pass: NVIDIA H100"))
        original = [l for l in launches_12() if l.label == "01_two_pass"]
        self.assertEqual(
            [(l.label, l.kernel, l.opcodes) for l in back],
            [(l.label, l.kernel, l.opcodes) for l in original],
        )
        for a, b in zip(back, original):
            self.assertEqual(a.values.keys(), b.values.keys())
            for key in a.values:
                self.assertAlmostEqual(
                    a.values[key], b.values[key], delta=abs(b.values[key]) * 1e-5
                )
        text = profile.capture_path("12-reduction/01_two_pass").read_text()
        self.assertTrue(text.startswith("# 12-reduction/01_two_pass: "))
        self.assertEqual(text.splitlines()[1], "label,launch,kernel,metric,unit,value")
        self.assertLess(len(text), 20000)  # compact

    def no_gpu(self, reason="no GPU here (no NVIDIA driver (nvidia-smi not found))"):
        return mock.patch.object(profile, "live_reason", return_value=reason)

    def test_offline_show_says_so_in_one_line(self):
        with self.no_gpu():
            status, out, err = run_main("show", "12-reduction/10_fastest")
        self.assertEqual(status, 0, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("no GPU here", err)
        self.assertIn("showing the profile captured on the reference GPU", err)
        self.assertIn("10_fastest.csv", err)
        self.assertIn("DRAM throughput (% of peak)", out)
        self.assertIn("93.1", out)
        self.assertIn("global load bytes per request", out)  # chapter 12's rows

    def test_no_ncu(self):
        with self.no_gpu(
            "ncu (Nsight Compute) not found; it ships with the CUDA Toolkit (cuda-nsight-compute)"
        ):
            status, _, err = run_main("show", "12-reduction/10_fastest")
        self.assertEqual(status, 0)
        self.assertIn("ncu (Nsight Compute) not found", err)
        self.assertEqual(len(err.splitlines()), 1)

    def test_exercise_gets_the_solutions_capture(self):
        with self.no_gpu():
            status, _, err = run_main("show", "exercise/12-reduction/10_fastest")
        self.assertEqual(status, 0)
        self.assertIn("the reference solution's, not your exercise's", err)

    def test_two_rows_of_one_stage(self):
        status, out, _ = run_main("show", "--offline", "12-reduction/08_predicate")
        self.assertEqual(status, 0)
        header = [l for l in out.splitlines() if l.startswith("metric")][0]
        self.assertIn("08_predicate (count, __ballot_sync)", header)
        self.assertIn("08_predicate (count, __syncthreads_count)", header)

    def test_multi_kernel_stage(self):
        status, out, _ = run_main("show", "--offline", "12-reduction/01_two_pass")
        self.assertEqual(status, 0)
        self.assertIn("1) reduce_pass1<512u>", out)
        self.assertIn("all kernels", out)

    def test_no_capture_yet(self):
        with self.no_gpu():
            status, out, err = run_main("show", "12-reduction/09_shuffle")
        self.assertEqual((status, out), (1, ""))
        self.assertEqual(len(err.splitlines()), 1)
        self.assertIn("no capture of 12-reduction/09_shuffle yet", err)
        self.assertIn("make reference", err)

    def test_an_older_gpus_capture_is_labelled(self):
        # Until make reference captures a chapter on the reference GPU, its H100 profiles are read.
        own = profile.capture_dir("12-reduction")
        older = profile.capture_dir("12-reduction", gpu="h100")
        older.mkdir(parents=True)
        for path in own.glob("*.csv"):
            path.rename(older / path.name)
        with self.no_gpu():
            status, out, err = run_main("show", "12-reduction/10_fastest")
        self.assertEqual(status, 0, err)
        self.assertIn(
            "showing the profile captured on the H100, reference/h100/12-reduction/profiles/", err
        )

    def test_diff(self):
        status, out, err = run_main(
            "diff", "--offline", "12-reduction/01_two_pass", "12-reduction/10_fastest"
        )
        self.assertEqual(status, 0, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("A: 01_two_pass"))
        self.assertTrue(lines[1].startswith("B: 10_fastest"))
        row = next(l for l in lines if l.startswith("duration (us)"))
        self.assertEqual(row.split()[-3:], ["473.0", "347.0", f"{347 / 473:.2f}x"])
        row = next(l for l in lines if l.startswith("global load bytes per request"))
        self.assertEqual(row.split()[-3:], ["128", "512", "4.00x"])
        self.assertNotIn("x", next(l for l in lines if l.startswith("top stalls")).split()[-1])

    def test_diff_baseline(self):
        status, out, _ = run_main(
            "diff", "--offline", "12-reduction/10_fastest", "12-reduction/baseline"
        )
        self.assertEqual(status, 0)
        self.assertIn("B: baseline", out)

    def fake_ncu(self, body):
        path = self.root / "ncu"
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
        return str(path)

    def live(self, ncu):
        return [
            mock.patch.object(profile, "live_reason", return_value=None),
            mock.patch.object(profile, "find_ncu", return_value=ncu),
            mock.patch.object(profile, "build_bench", return_value=Path("bench-12-reduction")),
            mock.patch.object(profile.course, "gpu_name", return_value="NVIDIA H100 80GB HBM3"),
        ]

    def test_permission_error_falls_back_with_the_fix(self):
        ncu = self.fake_ncu(f"cat '{PERMISSION}'\nexit 1\n")
        with contextlib.ExitStack() as stack:
            for patch in self.live(ncu):
                stack.enter_context(patch)
            status, out, err = run_main("show", "12-reduction/10_fastest")
        self.assertEqual(status, 0, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("ERR_NVGPUCTRPERM", err)
        self.assertIn("NVreg_RestrictProfilingToAdminUsers=0", err)
        self.assertIn("CAP_SYS_ADMIN", err)
        self.assertIn("93.1", out)

    def test_live_run_keeps_the_stage_and_drops_unknown_metrics(self):
        # Writes the fixture to --log-file; refuses one metric the first time, as an older ncu would.
        ncu = self.fake_ncu(
            'case "$*" in *sm__maximum_warps_per_active_cycle_pct*) '
            'echo "==ERROR== Failed to find metric sm__maximum_warps_per_active_cycle_pct"; exit 1;; esac\n'
            'while [ $# -gt 0 ]; do if [ "$1" = --log-file ]; then cp "'
            + str(RAW12)
            + '" "$2"; fi; shift; done\n'
        )
        with contextlib.ExitStack() as stack:
            for patch in self.live(ncu):
                stack.enter_context(patch)
            status, out, err = run_main("show", "12-reduction/10_fastest")
        self.assertEqual(status, 0, err)
        self.assertIn("does not know sm__maximum_warps_per_active_cycle_pct", err)
        self.assertIn("kernels:\n  1) reduce_fastest<512u, int>", out)
        self.assertNotIn("reduce_pass1", out)
        self.assertIn("this run", out)

    def test_bounds(self):
        bounds = [
            {"stage": "12-reduction/10_fastest", "metric": "dram_pct", "min": 85},
            {"stage": "12-reduction/10_fastest", "metric": "ld_bytes_per_request", "min": 512},
            {"stage": "12-reduction/01_two_pass", "metric": "dram_pct", "min": 85},
            {"stage": "12-reduction/10_fastest", "metric": "bank_conflicts", "max": 10},
        ]

        def check(declared):
            with mock.patch.object(profile.course, "perf_bounds", return_value=declared):
                return run_main("check-perf", "--offline")

        status, out, _ = check(bounds)
        self.assertEqual(status, 1)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("pass  12-reduction/10_fastest  DRAM throughput"))
        self.assertTrue(lines[2].startswith("FAIL  12-reduction/01_two_pass"))
        self.assertIn("3 of 4 bounds hold", lines[-1])
        self.assertEqual(check(bounds[:2])[0], 0)
        # Offline, a stage with no committed capture is said to be unchecked, not failed.
        uncaptured = {"stage": "13-scan/08_decoupled_lookback", "metric": "dram_pct", "min": 60}
        status, out, _ = check(bounds[:2] + [uncaptured])
        self.assertEqual(status, 0, out)
        self.assertIn("13-scan/08_decoupled_lookback: no capture committed yet", out)
        self.assertIn("2 of 2 bounds hold (on the committed captures; 1 not checked)", out)

    def test_the_declared_bounds_and_rows_name_real_metrics(self):
        # lessons.toml's perf bounds and profile_rows are profile.py row keys, and roofline a work
        # plots/roofline.py knows: a misspelt metric would otherwise show only on the GPU machine,
        # as a bound with no value.
        self.assertTrue(profile.course.perf_bounds())
        for bound in profile.course.perf_bounds():
            self.assertIn(bound["metric"], profile.ROWS, bound["stage"])
        for chapter in profile.course.chapters():
            for key in profile.course.profile_rows(chapter) or []:
                self.assertIn(key, profile.ROWS, chapter)
            work = profile.course.chapter_settings(chapter).get("roofline")
            if work or chapter in profile.course.bench_chapters():
                self.assertIn(work, roofline.WORKS, chapter)

    def test_check_perf_without_a_gpu_reads_the_committed_captures(self):
        # As make profile does: no GPU, no ncu or no counters is the offline check, said in one line.
        with self.no_gpu():
            status, out, _ = run_main("check-perf")
        self.assertIn(
            "checking the captures committed from the reference GPU instead", out.splitlines()[0]
        )
        self.assertIn("bounds hold (on the committed captures", out)
        self.assertEqual(status, 0, out)

    def test_roofline_data(self):
        results = self.root / "results"
        results.mkdir()
        (results / "12.json").write_text(
            json.dumps(
                {
                    "schema": "cuda-course-bench/1",
                    "bench": "12-reduction",
                    "date": "2026-11-24T00:00:00Z",
                    "device": {"name": "NVIDIA H100 80GB HBM3", "sms": 132, "sm_clock_mhz": 1980},
                    "params": {"read_kernel_gbs": 3000.0},
                }
            )
        )
        data, why = roofline.roofline_data("12-reduction", results, root=self.root)
        self.assertIsNone(why)
        self.assertEqual(data["bandwidth"], 3000e9)
        self.assertEqual(data["peak"], 128 * 132 * 1980e6)
        self.assertAlmostEqual(data["ridge"], 128 * 132 * 1980e6 / 3000e9)
        names = [p[0] for p in data["points"]]
        self.assertIn("10_fastest", names)
        self.assertIn("CUB DeviceReduce::Sum", names)
        name, x, y = next(p for p in data["points"] if p[0] == "10_fastest")
        self.assertAlmostEqual(x, 301989888 / (1073741824 + 4))
        self.assertAlmostEqual(y / (301989888 / 347e-6), 1.0)
        skipped, why = roofline.roofline_data("13-scan", results, root=self.root)
        self.assertIsNone(skipped)
        self.assertIn("no profile captures yet", why)

    def test_roofline_ceilings_from_other_chapters(self):
        doc = {"device": {"sms": 132, "sm_clock_mhz": 1980}, "params": {}}
        value, label = roofline.compute("15-ncc", doc, self.root / "none")
        self.assertEqual(value, 64 * 132 * 1980e6)
        self.assertIn("64/SM/clk", label)
        value, label = roofline.compute(
            "14-nbody", {"params": {"fma_tflops": 63.9}}, self.root / "none"
        )
        self.assertEqual(value, 63.9e12)
        # Chapter 13's run measures no bandwidth: chapter 11's copy (its committed reference run).
        value, label = roofline.bandwidth("13-scan", {"params": {}}, self.root / "none")
        self.assertTrue(value and "chapter 11" in label)


class CommittedCapturesTest(unittest.TestCase):
    def test_every_committed_capture_reads(self):
        paths = sorted(REPO.glob("reference/*/*/profiles/*.csv"))
        self.assertTrue(paths)
        for path in paths:
            header, launches = profile.read_capture(path)
            self.assertTrue(header.startswith(f"{path.parent.parent.name}/{path.stem}:"), path)
            self.assertTrue(launches, path)


class SingleTileCaptureTest(unittest.TestCase):
    """labs/12-reduction/capture_single_tile.py: which launches it keeps, its table."""

    @classmethod
    def setUpClass(cls):
        cls.tool = load(
            "course_capture_single_tile", REPO / "labs" / "12-reduction" / "capture_single_tile.py"
        )

    @staticmethod
    def launch(kernel, grid=1, block=256):
        return profile.Launch(
            "", 0, kernel, {"launch__grid_size": grid, "launch__block_size": block}
        )

    def test_keeps_the_last_single_kernel_cub_call_before_the_stage_on_one_block_of_256(self):
        L = self.launch
        cub_first, cub_single = (
            "cub::DeviceReduceKernel<P>(int)",
            "cub::DeviceReduceSingleTileKernel<P>(int)",
        )
        stage = "(anonymous namespace)::reduce_kernel<256u>(int *, const int *, unsigned long)"
        warm, timed = L(cub_single), L(cub_single)
        launches = [
            L(cub_first, 264),
            L(cub_single),
            L(stage, 264, 512),  # a large n
            L(cub_single),
            L(stage, 1, 64),  # n = 1024
            warm,
            L(stage),
            timed,
            L(stage),  # n = 4096, warm-up and timed
            L(cub_first, 2),
            L(cub_single),
            L(stage, 1, 512),
        ]  # n = 8192
        cub, kept = self.tool.single_tile_pair(launches)
        self.assertIs(cub, timed)
        self.assertIs(kept, launches[8])
        # A single-tile kernel that ends a two-kernel call is not a call at 4096.
        self.assertIsNone(self.tool.single_tile_pair([L(cub_first, 2), L(cub_single), L(stage)]))

    def test_show_prints_both_calls_and_their_folds(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = self.tool.show()
        self.assertEqual(status, 0)
        text = out.getvalue()
        for word in ("CUB DeviceReduce::Sum", "10_fastest", "REDUX", "1 x 256"):
            self.assertIn(word, text)

    def test_capture_without_a_gpu_says_so(self):
        err = io.StringIO()
        with (
            mock.patch.object(self.tool.ncu_profile, "live_reason", return_value="no GPU here"),
            contextlib.redirect_stderr(err),
        ):
            status = self.tool.main(["--build", "build"])
        self.assertEqual(status, 3)
        self.assertIn("no GPU here", err.getvalue())


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(__import__("shutil").which("make"), "make not installed")
class MakeTargetsTest(unittest.TestCase):
    """make profile / profile-diff / profile-capture refuse a bad name in one line, status 2, before
    anything is configured or built."""

    def make(self, *args):
        import subprocess

        scratch = Path(tempfile.gettempdir()) / "course-profile-make-never-created"
        from test_make_args import make_environment  # without the caller's STAGE, MAKEFLAGS, ...

        run = subprocess.run(
            ["make", "-n", "--no-print-directory", f"BUILD={scratch}", *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=make_environment(),
        )
        self.assertFalse(scratch.exists())
        return run.returncode, run.stdout, run.stderr

    def test_bad_names(self):
        for args, words in [
            (("profile", "STAGE=nope"), "no stage 'nope'"),
            (("profile",), "say which stage"),
            (("profile-diff", "A=12-reduction/10"), "say which two stages"),
            (("profile-diff", "A=12-reduction/10", "B=zz"), "B: no stage 'zz'"),
            (("profile-capture", "CHAPTER=08-warp"), "08-warp"),
        ]:
            status, out, err = self.make(*args)
            self.assertEqual((status, out), (2, ""), args)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(words, err)

    def test_good_names(self):
        status, out, _ = self.make(
            "profile", "STAGE=12-reduction/10_fastest", "SECTIONS=dram,stall"
        )
        self.assertEqual(status, 0)
        self.assertIn("harness/profile.py show", out)
        self.assertIn("--sections 'dram,stall'", out)
        self.assertEqual(
            self.make("profile-diff", "A=12-reduction/09", "B=12-reduction/baseline")[0], 0
        )
        self.assertIn("--chapter '13-scan'", self.make("profile-capture", "CHAPTER=13-scan")[1])
        self.assertNotIn("--chapter", self.make("profile-capture")[1])


class SourceCaptureTest(unittest.TestCase):
    """capture-source: ncu's source page (per SASS instruction) as a committed capture."""

    def test_rows_are_offsets_from_the_kernel(self):
        text = (FIXTURES / "ncu_source_sass_12_09.csv").read_text()
        kernel, header, rows = profile.source_rows(text)
        self.assertIn("reduce_kernel", kernel)
        self.assertEqual(header[:3], ["Address", "Source", "Warp Stall Sampling (All Samples)"])
        self.assertEqual(rows[0][0], "0x0000")
        self.assertEqual(rows[1][0], "0x0010")
        self.assertEqual(rows[0][1].strip(), "LDC R1, c[0x0][0x28]")

    def test_written_capture_reads_back(self):
        text = (FIXTURES / "ncu_source_sass_12_09.csv").read_text()
        kernel, header, rows = profile.source_rows(text)
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "09.csv"
            import csv

            with path.open("w", newline="") as out:
                out.write("# 12-reduction/09_shuffle: test\n")
                writer = csv.writer(out, lineterminator="\n")
                writer.writerow(["Kernel Name", kernel])
                writer.writerow(header)
                writer.writerows(rows)
            name, read = profile.read_source_capture(path)
        self.assertEqual(name, kernel)
        self.assertEqual(read[0]["Address"], "0x0000")
        self.assertIn("Warp Stall Sampling (All Samples)", read[0])

    def test_source_profiles_name_stages(self):
        for chapter in profile.course.bench_chapters():
            for stage in profile.course.source_profiles(chapter):
                self.assertIn(stage, profile.course.stages(chapter))


class SampleAloneTest(unittest.TestCase):
    """sample_alone: one range's first kernel sampled in a run of its own, a stage's or a lab
    row's (ncu faked)."""

    def commands(self, *args, **kwargs):
        calls = []

        def run(cmd):
            calls.append([str(c) for c in cmd])
            page = (FIXTURES / "ncu_source_sass_12_09.csv").read_text() if "--import" in cmd else ""
            return mock.Mock(stdout=page, stderr="", returncode=0)

        with mock.patch.object(profile, "ncu_text", side_effect=run):
            _, _, rows = profile.sample_alone("ncu", "bench", *args, **kwargs)
        self.assertTrue(rows)
        return calls

    def test_a_stage(self):
        run, page = self.commands("12-reduction", "09_shuffle", "/s")
        self.assertEqual(
            run,
            ["ncu", "--clock-control", "none", "--nvtx", "--nvtx-include",
             "regex:profile:12-reduction:09_shuffle( .*)?/", "--section", "SourceCounters",
             "--section", "WarpStateStats", "--launch-count", "1", "--force-overwrite",
             "--export", "/s/09_shuffle", "bench", "--only", "^09_shuffle( .*)?$", "--warmup",
             "1", "--profile-only", "--results", "/s/results"],
        )  # fmt: skip
        self.assertEqual(page[:3], ["ncu", "--import", "/s/09_shuffle.ncu-rep"])

    def test_a_lab_row(self):
        label = "rsqrt lab: 1 in 8 on the FMA pipe"
        run, page = self.commands(
            "14-nbody",
            label,
            "/s",
            pattern=profile.regex_escape(label),
            bench_args=["--N", "128", "--only", f"^({label})$", "--results", "/s/results"],
            kernel="regex:register_blocked_forces",
        )
        self.assertIn(f"regex:profile:14-nbody:({label})/", run)
        self.assertEqual(run[run.index("--kernel-name") + 1], "regex:register_blocked_forces")
        self.assertEqual(run[run.index("bench") :][:3], ["bench", "--N", "128"])
        self.assertEqual(run[run.index("--export") + 1], "/s/rsqrt_lab_1_in_8_on_the_FMA_pipe")
        self.assertEqual(page[2], "/s/rsqrt_lab_1_in_8_on_the_FMA_pipe.ncu-rep")


class LabCaptureScriptsTest(unittest.TestCase):
    """labs/<chapter>/capture_*.py (harness/lab_capture.py): each prints its committed capture
    without a GPU, and says it needs one to capture."""

    def scripts(self):
        found = sorted(REPO.glob("labs/*/capture_*.py"))
        self.assertEqual(len(found), 4, found)
        for path in found:
            yield path, load(f"course_{path.parent.name}_{path.stem}", path)

    def test_show_reads_the_committed_capture(self):
        for path, tool in self.scripts():
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                status = tool.main(["--show"])
            self.assertEqual(status, 0, path)
            self.assertTrue(out.getvalue().strip(), path)

    def test_capture_without_a_gpu_is_status_3(self):
        for path, tool in self.scripts():
            err = io.StringIO()
            with (
                mock.patch.object(tool.ncu_profile, "live_reason", return_value="no GPU here"),
                contextlib.redirect_stderr(err),
            ):
                status = tool.main(["--build", "build"])
            self.assertEqual(status, 3, path)
            self.assertIn(f"{path.stem}: no GPU here; it runs on a GPU machine", err.getvalue())


class OneRunSourceTest(unittest.TestCase):
    """sample_ranges: one ncu run over several profile ranges, each range's first kernel read back
    from the report as its own result (ncu faked: the listing and the pages it would print)."""

    PAGE = (FIXTURES / "ncu_source_sass_12_09.csv").read_text()
    RAW = (
        '"ID","Process ID","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:'
        'Msg","Kernel Name","gpu__time_duration.sum"\n'
        '"","","","","us"\n'
        '"0","1","""<default domain>:profile:12-reduction:08_predicate (count):none:none:none:'
        'none:none:none""","void other_kernel<256>(int *)","5"\n'
        '"1","1","""<default domain>:profile:12-reduction:09_shuffle:none:none:none:none:none:'
        'none""","void <unnamed>::reduce_kernel<256, int>(const int *, int *, unsigned long)","7"\n'
        '"2","1","""<default domain>:profile:12-reduction:09_shuffle:none:none:none:none:none:'
        'none""","void final_kernel(int *)","1"\n'
    )

    def fake_ncu(self, pages):
        calls = []

        def run(cmd):
            calls.append([str(c) for c in cmd])
            out = ""
            if "--page" in cmd and cmd[cmd.index("--page") + 1] == "raw":
                out = self.RAW
            elif "--launch-skip" in cmd:
                out = pages.get(int(cmd[cmd.index("--launch-skip") + 1]), "")
            return mock.Mock(stdout=out, stderr="", returncode=0)

        return run, calls

    def sample(self, pages, patterns):
        run, calls = self.fake_ncu(pages)
        with (
            tempfile.TemporaryDirectory() as scratch,
            mock.patch.object(profile, "ncu_text", side_effect=run),
        ):
            (Path(scratch) / "ranges.ncu-rep").write_text("report")
            found, cmd = profile.sample_ranges(
                "ncu", "bench", "12-reduction", patterns, ["--only", "x"], scratch
            )
        return found, cmd, calls

    def test_each_range_gets_its_first_kernel_once(self):
        doubled = self.PAGE + "\n" + self.PAGE  # a result read back twice
        found, cmd, calls = self.sample(
            {1: doubled, 0: "unused"}, {"09_shuffle": "09_shuffle( .*)?"}
        )
        kernel, header, rows = found["09_shuffle"]
        self.assertEqual(rows, profile.source_rows(self.PAGE)[2])
        self.assertIn("reduce_kernel", kernel)
        self.assertIn("regex:profile:12-reduction:(09_shuffle( .*)?)/", cmd)
        self.assertNotIn("--launch-count", cmd)  # the run samples every kernel of the ranges
        skips = [c[c.index("--launch-skip") + 1] for c in calls if "--launch-skip" in c]
        self.assertEqual(skips, ["1"])  # ID 1: the range's first kernel, not ID 2

    def test_a_range_with_no_kernel_or_another_kernel_is_none(self):
        found, _, _ = self.sample(
            {0: self.PAGE},  # ID 0 reads back reduce_kernel, but the listing says other_kernel
            {"08_predicate": "08_predicate( .*)?", "10_fastest": "10_fastest( .*)?"},
        )
        self.assertIsNone(found["08_predicate"])
        self.assertIsNone(found["10_fastest"])

    def test_kernel_base_names_agree_across_pages(self):
        raw = "void <unnamed>::lookback_scan<256, int>(T2 *, const T2 *, unsigned long)"
        full = "void <unnamed>::lookback_scan<(unsigned int)256, int>(T2 *, const T2 *)"
        self.assertEqual(profile.kernel_base(raw), "lookback_scan")
        self.assertEqual(profile.kernel_base(full), "lookback_scan")
        self.assertEqual(
            profile.kernel_base("void scan::reduce_ranges4<(unsigned int)256, int>(T2 *)"),
            profile.kernel_base("void reduce_ranges4<256, int, identity>(T2 *)"),
        )
