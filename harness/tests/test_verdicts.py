"""Tests for harness/verdicts.py: one check run's verdicts, as JUnit XML and as Gradescope's
results.json (checked against a JSON Schema written from Gradescope's published format, with a
small validator here: the jsonschema package is not installed where the course's tests run).
No GPU, no build needed: the runs are made from the data check.py holds at the end of a run."""

import contextlib
import io
import json
import shutil
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import verdicts  # noqa: E402

SCHEMA = json.loads(
    (Path(__file__).parent / "fixtures" / "gradescope-results.schema.json").read_text()
)
NO_GPU = "no NVIDIA driver (nvidia-smi not found)"
SHUFFLE, FASTEST = "exercise/12-reduction/09_shuffle", "exercise/12-reduction/10_fastest"


# --- the subset of JSON Schema the fixture uses ---------------------------------------------------
def schema_errors(value, schema, root=SCHEMA, where="$"):
    """Where value breaks schema: type, enum, required, properties, additionalProperties, items,
    minimum, anyOf and local $ref, the keywords the fixture uses (an unknown one is an error, so
    the fixture cannot grow past what is checked)."""
    known = {
        "$schema",
        "$comment",
        "$defs",
        "$ref",
        "type",
        "enum",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "minimum",
        "anyOf",
    }
    unknown = set(schema) - known
    if unknown:
        return [f"{where}: the validator does not know {sorted(unknown)}"]
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return schema_errors(value, target, root, where)
    errors = []
    types = schema.get("type")
    if types:
        kinds = {"object": dict, "array": list, "string": str, "number": (int, float)}
        allowed = types if isinstance(types, list) else [types]
        if isinstance(value, bool) or not any(isinstance(value, kinds[t]) for t in allowed):
            return [f"{where}: {value!r} is not {types}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} not one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{where}: {value} < {schema['minimum']}")
    if isinstance(value, dict):
        errors += [
            f"{where}: '{k}' is required" for k in schema.get("required", []) if k not in value
        ]
        props = schema.get("properties", {})
        for k, v in value.items():
            if k in props:
                errors += schema_errors(v, props[k], root, f"{where}.{k}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}: '{k}' is not in the published format")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], root, f"{where}[{i}]")
    if "anyOf" in schema and all(schema_errors(value, s, root, where) for s in schema["anyOf"]):
        errors.append(f"{where}: matches none of anyOf")
    return errors


# --- runs as check.py would hand them over ------------------------------------------------------
def check_run(
    build,
    *,
    no_gpu="",
    stages=(SHUFFLE, FASTEST),
    lessons=None,
    sanitizers=None,
    results=None,
    states=None,
):
    by_stage = {k: {"tests": k, "sweep": k + "/sweep"} for k in stages}
    if results is None:
        results = {}
        for k in stages:
            results[k] = ("passed", "")
            results[k + "/sweep"] = ("passed", "")
        results["host/harness"] = ("passed", "")
        results["wrong/12-reduction/09_shuffle"] = ("passed", "")
    states = states or {k: ("passed", "") for k in stages}
    return verdicts.from_check(
        build,
        stages[0] if len(stages) == 1 else "",
        results,
        by_stage,
        sanitizers or {},
        lessons or {},
        states,
        no_gpu,
        12.3,
    )


class Fixture(unittest.TestCase):
    def setUp(self):
        self.build = Path(tempfile.mkdtemp(prefix="verdicts-"))
        self.addCleanup(shutil.rmtree, self.build, True)
        self.grading = verdicts.load_grading()

    def assertValid(self, result):
        self.assertEqual(schema_errors(result, SCHEMA), [])
        if "score" not in result:  # the spec: a score on each test when none at the top
            for t in result["tests"]:
                self.assertIn("score", t, t["name"])


class GpuRun(Fixture):
    """One stage checked alone on a GPU: its tests, the sanitizers, SASS and speed."""

    def run_one(self, speed=None, memcheck="clean"):
        (self.build / "sanitize").mkdir()
        (self.build / "sanitize" / f"{SHUFFLE.replace('/', '.')}.memcheck.log").write_text(
            "========= Invalid __global__ read of size 4 bytes\n========= ERROR SUMMARY: 1 error\n"
        )
        (self.build / "check-results.xml").write_text(
            f'<testsuite><testcase name="{SHUFFLE}" time="1.5"/><testcase name="{SHUFFLE}/sweep" time="2.25"/>'
            "</testsuite>"
        )
        speed = speed or {
            "verdict": "passed",
            "detail": "speed: 1.02x",
            "ratio": 1.02,
            "low": 0.99,
            "high": 1.04,
        }
        return check_run(
            self.build,
            stages=(SHUFFLE,),
            sanitizers={
                SHUFFLE: {"memcheck": memcheck, "racecheck": "clean", "synccheck": "clean"}
            },
            lessons={
                SHUFFLE: {
                    "sass": {"verdict": "met", "detail": "SASS signature met"},
                    "speed": speed,
                }
            },
        )

    def test_junit_counts(self):
        run = self.run_one()
        root = ET.fromstring(verdicts.junit(run))
        self.assertEqual(root.tag, "testsuites")
        cases = list(root.iter("testcase"))
        # tests, sweep, 3 sanitizers, SASS, speed for the stage; host/harness and the wrong variant.
        self.assertEqual(len(cases), 9)
        self.assertEqual(int(root.get("tests")), 9)
        self.assertEqual(int(root.get("failures")), 0)
        self.assertEqual(int(root.get("skipped")), 0)
        suites = {s.get("name"): s for s in root.iter("testsuite")}
        self.assertEqual(set(suites), {"12-reduction", "course"})
        self.assertEqual(
            int(suites["12-reduction"].get("tests")), 8
        )  # the wrong variant is the chapter's
        names = [
            c.get("name")
            for c in suites["12-reduction"]
            if c.get("classname") == SHUFFLE.replace("/", ".")
        ]
        self.assertEqual(
            names,
            ["tests", "sweep", "memcheck", "racecheck", "synccheck", "SASS signature", "speed"],
        )
        self.assertAlmostEqual(float(suites["12-reduction"].get("time")), 3.75)
        speed = next(c for c in cases if c.get("name") == "speed")
        self.assertIn("ratio=1.02", speed.findtext("system-out"))

    def test_gradescope_full_marks(self):
        result = verdicts.gradescope(self.run_one(), self.grading)
        self.assertValid(result)
        tests = result["tests"]
        self.assertEqual(len(tests), 7)  # the stage's checks only: host tests are not graded
        self.assertAlmostEqual(sum(t["max_score"] for t in tests), 100.0, places=2)
        self.assertAlmostEqual(sum(t["score"] for t in tests), 100.0, places=2)
        by_check = {}
        for t in tests:
            by_check.setdefault(t["extra_data"]["check"], []).append(t)
        self.assertAlmostEqual(sum(t["max_score"] for t in by_check["tests"]), 60.0, places=2)
        self.assertAlmostEqual(sum(t["max_score"] for t in by_check["sanitizers"]), 15.0, places=2)
        self.assertEqual({t["visibility"] for t in by_check["speed"]}, {"after_due_date"})
        self.assertEqual({t["visibility"] for t in by_check["tests"]}, {"visible"})
        self.assertEqual([t["number"] for t in tests], [f"1.{i}" for i in range(1, 8)])
        self.assertEqual(
            result["leaderboard"],
            [
                {
                    "name": "12-reduction/09_shuffle speed vs reference",
                    "value": 1.02,
                    "order": "desc",
                }
            ],
        )
        self.assertIn("shown later", result["output"])

    def test_failures_score_zero_and_say_why(self):
        run = self.run_one(
            speed={
                "verdict": "slow",
                "detail": "0.60x the reference's speed",
                "ratio": 0.6,
                "low": 0.58,
                "high": 0.61,
            },
            memcheck="errors",
        )
        result = verdicts.gradescope(run, self.grading)
        self.assertValid(result)
        memcheck = next(t for t in result["tests"] if t["name"].endswith("memcheck"))
        self.assertEqual((memcheck["score"], memcheck["status"]), (0.0, "failed"))
        self.assertIn("Invalid __global__ read", memcheck["output"])
        self.assertIn("make check STAGE=" + SHUFFLE, memcheck["output"])
        speed = next(t for t in result["tests"] if t["name"].endswith("speed"))
        self.assertEqual(speed["score"], 0.0)
        self.assertIn("0.60x", speed["output"])
        self.assertEqual(result["leaderboard"][0]["value"], 0.6)
        root = ET.fromstring(verdicts.junit(run))
        self.assertEqual(int(root.get("failures")), 2)
        failure = next(c for c in root.iter("testcase") if c.get("name") == "memcheck").find(
            "failure"
        )
        self.assertTrue(
            failure.get("message").startswith("Invalid __global__ read of size 4 bytes (the log: ")
        )

    def test_noisy_speed_is_not_a_failure(self):
        run = self.run_one(
            speed={
                "verdict": "not judged",
                "detail": "speed not judged: spread 30%",
                "ratio": 0.9,
                "low": 0.7,
                "high": 1.1,
            }
        )
        speed = next(c for c in run.stages[0].checks if c.category == "speed")
        self.assertEqual(speed.outcome, "untested")
        case = next(
            c
            for c in ET.fromstring(verdicts.junit(run)).iter("testcase")
            if c.get("name") == "speed"
        )
        self.assertIsNotNone(case.find("skipped"))

    def test_after_sanitizer_errors_the_lesson_waits(self):
        (self.build / "sanitize").mkdir()
        run = check_run(
            self.build,
            stages=(SHUFFLE,),
            sanitizers={
                SHUFFLE: {"memcheck": "errors", "racecheck": "clean", "synccheck": "clean"}
            },
        )
        lesson = [c for c in run.stages[0].checks if c.category in ("sass", "speed")]
        self.assertEqual({c.message for c in lesson}, {"not judged: the sanitizers report errors"})

    def test_sanitizer_skip_and_judge_errors(self):
        (self.build / "sanitize").mkdir()
        (self.build / "sanitize" / f"{SHUFFLE.replace('/', '.')}.racecheck.log").write_text(
            "COURSE_SKIP: compute-sanitizer not found\n"
        )
        theirs = {"verdict": "error", "detail": "speed not judged: your stage failed: exit 139"}
        run = check_run(
            self.build,
            stages=(SHUFFLE,),
            sanitizers={
                SHUFFLE: {"memcheck": "clean", "racecheck": "skipped", "synccheck": "clean"}
            },
            lessons={SHUFFLE: {"sass": {"verdict": "met"}, "speed": theirs}},
        )
        checks = {c.name: c for c in run.stages[0].checks}
        self.assertEqual(
            (checks["racecheck"].outcome, checks["racecheck"].message),
            ("untested", "not run: compute-sanitizer not found"),
        )
        self.assertEqual(checks["speed"].outcome, "failed")
        ours = {
            "verdict": "error",
            "detail": "speed not judged: build/bin/judge.solution.x is not built",
        }
        run = check_run(
            self.build,
            stages=(SHUFFLE,),
            lessons={SHUFFLE: {"sass": {"verdict": "met"}, "speed": ours}},
        )
        self.assertEqual(
            next(c for c in run.stages[0].checks if c.name == "speed").outcome, "untested"
        )


class NoGpuRun(Fixture):
    """What a grader without a GPU reports: the stage compiles, nothing of it could run."""

    def run_offline(self):
        skip = f"COURSE_SKIP: GPU tests skipped: {NO_GPU}"
        results = {
            SHUFFLE: ("skipped", skip),
            SHUFFLE + "/sweep": ("skipped", skip),
            "host/harness": ("passed", ""),
        }
        lessons = {
            SHUFFLE: {
                "sass": {"verdict": "not checked", "detail": "SASS not checked: no cuobjdump"},
                "speed": {"verdict": "needs a GPU", "detail": "speed not judged: no GPU"},
            }
        }
        return check_run(
            self.build,
            no_gpu=NO_GPU,
            stages=(SHUFFLE,),
            results=results,
            lessons=lessons,
            states={SHUFFLE: ("compiles; untested (no GPU)", "")},
        )

    def test_junit_skipped(self):
        root = ET.fromstring(verdicts.junit(self.run_offline()))
        stage = [
            c for c in root.iter("testcase") if c.get("classname") == SHUFFLE.replace("/", ".")
        ]
        self.assertEqual(len(stage), 7)
        self.assertTrue(all(c.find("skipped") is not None for c in stage))
        self.assertIn("no NVIDIA driver", stage[0].find("skipped").get("message"))
        self.assertEqual(int(root.get("failures")), 0)
        self.assertEqual(int(root.get("skipped")), 7)
        prop = root.find("testsuite/properties/property")
        self.assertEqual((prop.get("name"), prop.get("value")), ("no_gpu", NO_GPU))

    def test_gradescope_zero_of_max(self):
        # Decided: a check that could not run keeps its points at stake and scores 0, so a grader
        # set up without a GPU cannot hand out full marks for code that never ran.
        result = verdicts.gradescope(self.run_offline(), self.grading)
        self.assertValid(result)
        self.assertAlmostEqual(sum(t["max_score"] for t in result["tests"]), 100.0, places=2)
        self.assertEqual(sum(t["score"] for t in result["tests"]), 0)
        self.assertEqual({t["status"] for t in result["tests"]}, {"failed"})
        self.assertEqual(result["extra_data"]["untested"], 7)
        self.assertIn("no GPU", result["output"])
        self.assertIn("not the grade", result["output"])
        self.assertEqual(result["leaderboard"], [])


class Stages(Fixture):
    def test_todo_and_not_a_speed_lesson(self):
        warp = "exercise/08-warp/02_warp_reduce"  # its speed is a sentence, not a judged lesson
        results = {
            SHUFFLE: ("skipped", "COURSE_SKIP: TODO"),
            SHUFFLE + "/sweep": ("skipped", "COURSE_SKIP: TODO"),
            warp: ("passed", ""),
            warp + "/sweep": ("passed", ""),
        }
        run = check_run(
            self.build,
            stages=(SHUFFLE, warp),
            results=results,
            states={SHUFFLE: ("TODO", ""), warp: ("passed", "")},
        )
        shuffle, reduce_ = (next(s for s in run.stages if s.key == k) for k in (SHUFFLE, warp))
        self.assertEqual({c.outcome for c in shuffle.checks}, {"todo"})
        speed = next(c for c in reduce_.checks if c.category == "speed")
        self.assertEqual(speed.outcome, "n/a")
        sass = next(c for c in reduce_.checks if c.category == "sass")
        self.assertIn("STAGE=" + warp, sass.message)  # checked when selected alone
        result = verdicts.gradescope(run, self.grading)
        self.assertValid(result)
        self.assertFalse(any(t["name"] == "08-warp/02_warp_reduce: speed" for t in result["tests"]))
        self.assertAlmostEqual(sum(t["max_score"] for t in result["tests"]), 100.0, places=2)
        todo = next(t for t in result["tests"] if t["name"] == "12-reduction/09_shuffle: tests")
        self.assertIn("TODO", todo["output"])

    def test_solutions_graded_when_no_exercise(self):
        key = "solution/12-reduction/09_shuffle"
        run = check_run(
            self.build,
            stages=(key,),
            sanitizers={key: dict.fromkeys(verdicts.course.SANITIZERS, "clean")},
            lessons={key: {"sass": {"verdict": "met"}, "speed": {"verdict": "reference"}}},
        )
        result = verdicts.gradescope(run, self.grading)
        self.assertAlmostEqual(sum(t["score"] for t in result["tests"]), 100.0, places=2)

    def test_cpu_stage_has_no_sanitizers_or_sass(self):
        key = "exercise/14-nbody/09_cpu_simd"
        run = verdicts.from_check(
            self.build,
            key,
            {"host/exercise/14-nbody/09_cpu_simd": ("passed", "")},
            {key: {"host": "host/exercise/14-nbody/09_cpu_simd"}},
            {},
            {},
            {key: ("passed", "")},
            "",
            1.0,
        )
        self.assertEqual({c.category for c in run.stages[0].checks}, {"tests", "speed"})


class Grading(Fixture):
    def write(self, name, text):
        path = self.build / name
        path.write_text(text)
        return path

    def test_json_and_toml(self):
        path = self.write(
            "g.json",
            json.dumps(
                {
                    "total": 10,
                    "weights": {"speed": 0},
                    "visibility": {"speed": "visible", "sass": "hidden"},
                    "leaderboard": False,
                }
            ),
        )
        g = verdicts.load_grading(path)
        self.assertEqual(
            (g["total"], g["weights"]["speed"], g["weights"]["tests"]), (10.0, 0, 60.0)
        )
        self.assertEqual(g["visibility"]["sass"], "hidden")
        if verdicts.tomllib:
            toml = self.write(
                "g.toml",
                'total = 20\n[weights]\ntests = 1\n[stages]\n"12-reduction/10_fastest" = 3\n',
            )
            g = verdicts.load_grading(toml)
            self.assertEqual(g["stages"], {"12-reduction/10_fastest": 3})

    def test_weights_and_stage_weights_apply(self):
        path = self.write(
            "g.json",
            json.dumps(
                {
                    "total": 40,
                    "weights": {"tests": 1, "sanitizers": 0, "sass": 0, "speed": 1},
                    "stages": {"12-reduction/10_fastest": 3},
                }
            ),
        )
        run = check_run(self.build)
        result = verdicts.gradescope(run, verdicts.load_grading(path))
        per_stage = {}
        for t in result["tests"]:
            per_stage[t["extra_data"]["stage"]] = (
                per_stage.get(t["extra_data"]["stage"], 0) + t["max_score"]
            )
        self.assertAlmostEqual(per_stage[SHUFFLE], 10.0, places=2)
        self.assertAlmostEqual(per_stage[FASTEST], 30.0, places=2)

    def test_wrong_files_are_one_line(self):
        cases = {
            "nope.json": None,
            "a.json": '{"totl": 5}',
            "b.json": '{"visibility": {"speed": "later"}}',
            "c.json": '{"weights": {"tests": -1}}',
            "d.json": '{"weights": {"style": 1}}',
            "e.json": '{"stages": {"99-nope/01": 1}}',
            "f.json": "{",
            "g.json": '{"weights": {"tests": 0, "sanitizers": 0, "sass": 0, "speed": 0}}',
        }
        for name, text in cases.items():
            path = self.write(name, text) if text is not None else self.build / name
            with self.assertRaises(verdicts.Usage, msg=name) as err:
                verdicts.load_grading(path)
            self.assertEqual(len(str(err.exception).splitlines()), 1, name)

    def test_validate(self):
        file = self.write("f", "")
        self.assertIsNone(verdicts.validate([f"GRADES={self.build / 'new'}", "GRADING="]))
        self.assertIn("is a file", verdicts.validate([f"GRADES={file}", "GRADING="]))
        self.assertIn("give GRADES", verdicts.validate(["GRADES=", "GRADING=x.json"]))


class Folder(Fixture):
    def test_after_check_merges_stage_by_stage(self):
        grades = self.build / "grades"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            verdicts.after_check(
                self.build, str(grades), "", check_run(self.build, stages=(SHUFFLE,))
            )
            verdicts.after_check(
                self.build, str(grades), "", check_run(self.build, stages=(FASTEST,))
            )
        self.assertIn("grades:", out.getvalue())
        self.assertTrue((self.build / "verdicts.json").is_file())
        result = json.loads((grades / "results.json").read_text())
        self.assertValid(result)
        self.assertEqual({t["extra_data"]["stage"] for t in result["tests"]}, {SHUFFLE, FASTEST})
        root = ET.parse(grades / "junit.xml").getroot()
        self.assertEqual(
            {
                c.get("classname")
                for c in root.iter("testcase")
                if c.get("classname").startswith("exer")
            },
            {SHUFFLE.replace("/", "."), FASTEST.replace("/", ".")},
        )

    def test_record_round_trip_and_cli(self):
        run = check_run(self.build)
        verdicts.save(run, self.build / "verdicts.json")
        self.assertEqual(verdicts.load(self.build / "verdicts.json"), run)
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(
                verdicts.main(
                    [
                        "write",
                        str(self.build / "out"),
                        "--record",
                        str(self.build / "verdicts.json"),
                    ]
                ),
                0,
            )
        self.assertValid(json.loads((self.build / "out" / "results.json").read_text()))
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(
                verdicts.main(
                    ["write", str(self.build / "out"), "--record", str(self.build / "no")]
                ),
                2,
            )
        self.assertEqual(len(err.getvalue().splitlines()), 1)

    def test_from_progress(self):
        progress = {
            "stages": {
                SHUFFLE: {
                    "state": "correct, but slow",
                    "date": "2026-11-28 10:00",
                    "sanitizers": {"memcheck": "clean", "racecheck": "clean", "synccheck": "clean"},
                    "sass": {"verdict": "met"},
                    "speed": {
                        "verdict": "slow",
                        "detail": "0.7x",
                        "ratio": 0.7,
                        "low": 0.69,
                        "high": 0.71,
                    },
                },
                FASTEST: {"state": "TODO", "date": "2026-11-28 10:00"},
            }
        }
        (self.build / "progress.json").write_text(json.dumps(progress))
        with contextlib.redirect_stdout(io.StringIO()):
            verdicts.main(
                ["write", str(self.build / "p"), "--progress", str(self.build / "progress.json")]
            )
        result = json.loads((self.build / "p" / "results.json").read_text())
        self.assertValid(result)
        shuffle = {
            t["name"].split(": ", 1)[1]: t
            for t in result["tests"]
            if t["extra_data"]["stage"] == SHUFFLE
        }
        self.assertEqual(shuffle["tests"]["status"], "passed")
        self.assertEqual(shuffle["speed"]["status"], "failed")
        self.assertEqual(result["leaderboard"][0]["value"], 0.7)
        fastest = [t for t in result["tests"] if t["extra_data"]["stage"] == FASTEST]
        self.assertEqual({t["extra_data"]["outcome"] for t in fastest}, {"todo"})

    def test_crashed(self):
        verdicts.crashed(self.build / "c", "cmake could not configure the build")
        result = json.loads((self.build / "c" / "results.json").read_text())
        self.assertValid(result)
        self.assertEqual(result["score"], 0.0)
        root = ET.parse(self.build / "c" / "junit.xml").getroot()
        self.assertEqual(root.get("failures"), "1")

    def test_schema_validator_catches(self):
        bad = {
            "tests": [{"name": "x", "visibility": "later", "scor": 1}],
            "leaderboard": [{"value": 1}],
        }
        errors = schema_errors(bad, SCHEMA)
        self.assertTrue(any("later" in e for e in errors))
        self.assertTrue(any("'scor'" in e for e in errors))
        self.assertTrue(any("'name' is required" in e for e in errors))
        self.assertTrue(schema_errors({"output": "x"}, SCHEMA))  # neither score nor tests

    def test_points_add_up(self):
        stages = tuple(f"exercise/{i}" for i in verdicts.course.stage_ids())
        run = check_run(self.build, stages=stages, results={})
        result = verdicts.gradescope(run, self.grading)
        self.assertEqual(round(sum(t["max_score"] for t in result["tests"]), 6), 100.0)


class Docs(Fixture):
    """docs/grading.md's example grading file loads, and its table of defaults is the code's."""

    def test_example_and_defaults(self):
        text = (HARNESS.parent / "docs" / "grading.md").read_text()
        example = text.split("```json\n", 1)[1].split("```", 1)[0]
        g = verdicts.load_grading(self.write_file("g.json", example))
        self.assertEqual(g["stages"], {"12-reduction/10_fastest": 2})
        for cat in verdicts.CATEGORIES:
            row = (
                f"| {cat} | {verdicts.DEFAULT_GRADING['weights'][cat]:g} | "
                f"{verdicts.DEFAULT_GRADING['visibility'][cat]} |"
            )
            self.assertIn(row, text)

    def write_file(self, name, text):
        path = self.build / name
        path.write_text(text)
        return path


@unittest.skipUnless(shutil.which("make"), "make not installed")
class Make(unittest.TestCase):
    """make check GRADES=... GRADING=...: wrong values stop make with one line and status 2."""

    @staticmethod
    def make(*args):
        """make -n as test_make_args runs it, without the caller's GRADES and GRADING: a command
        line variable is exported to the recipes, so `make check GRADES=...` would hand its own on."""
        import test_make_args

        saved = {
            k: test_make_args.os.environ.pop(k)
            for k in ("GRADES", "GRADING")
            if k in test_make_args.os.environ
        }
        try:
            return test_make_args.make(*args)
        finally:
            test_make_args.os.environ.update(saved)

    def test_wrong_values(self):
        for args, naming in (
            (["GRADES=/etc/passwd"], "is a file"),
            (["GRADING=x.json"], "give GRADES"),
            (["GRADES=/tmp/g", "GRADING=/no/such.json"], "No such file"),
        ):
            status, out, err = self.make("check", *args)
            self.assertEqual(status, 2, args)
            self.assertEqual(out, "")
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(naming, err)
        status, out, _ = self.make(
            "check", "STAGE=exercise/12-reduction/09_shuffle", "GRADES=/tmp/g"
        )
        self.assertEqual(status, 0)
        self.assertIn("--grades '/tmp/g'", out)


if __name__ == "__main__":
    unittest.main()
