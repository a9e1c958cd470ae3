#!/usr/bin/env python3
"""A check run's verdicts in one schema, and the formats class graders read, derived from it.

`make check` records each run's verdicts in BUILD/verdicts.json (the schema below). With GRADES=DIR
it also merges them into DIR/verdicts.json and writes, from that one record:
  DIR/junit.xml      JUnit XML: a testsuite per chapter, a testcase per check of a stage (its tests,
                     each sanitizer, the SASS signature, the speed verdict): what GitLab, Jenkins and
                     GitHub's test reporters read;
  DIR/results.json   Gradescope's autograder results: a test per check with its score, visibility
                     and output, and a leaderboard of each stage's speed against the reference.
GRADING=FILE (TOML or JSON) sets the points, the weight of each kind of check and its visibility;
docs/grading.md shows one and how a class wires this into Gradescope or a CI.

  verdicts.py write DIR [--record BUILD/verdicts.json | --progress BUILD/progress.json] [--grading FILE]
      The two files from a recorded run, or from what `make progress` shows (one check per kind).
  verdicts.py validate [GRADES=DIR] [GRADING=FILE]
      The Makefile's check of its variables: one line and status 2 when one is wrong.
  verdicts.py crashed DIR MESSAGE
      A results.json and junit.xml saying that the check itself could not run (an autograder's
      last resort, so the student sees why instead of an empty result).
"""

import argparse
import dataclasses
import datetime
import json
import pathlib
import re
import socket
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course  # noqa: E402
import lesson  # noqa: E402  (what each stage declares: its speed lesson)

try:
    import tomllib
except (
    ImportError
):  # Python < 3.11 (Ubuntu 22.04, Gradescope's base image): JSON grading files only
    tomllib = None

SCHEMA = "course-verdicts/1"
ROOT = course.ROOT

# What a check came to. passed and failed are judgements; the others say why there is none:
#   todo      the stage's exercise region still holds the stub
#   untested  the check could not run here (no GPU, no cuobjdump, a noisy GPU, not selected alone)
#   n/a       the check does not apply to the stage (no speed lesson, no GPU code)
OUTCOMES = ("passed", "failed", "todo", "untested", "n/a")
CATEGORIES = ("tests", "sanitizers", "sass", "speed")
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")

# The defaults an instructor overrides with GRADING=FILE. Correctness carries most of a stage's
# points; the speed verdict, timed on a shared GPU, carries least and is hidden until the due date
# (students tune against the visible checks, then see the judgement of speed with the grades).
DEFAULT_GRADING = {
    "total": 100.0,
    "weights": {"tests": 60.0, "sanitizers": 15.0, "sass": 15.0, "speed": 10.0},
    "visibility": {
        "tests": "visible",
        "sanitizers": "visible",
        "sass": "visible",
        "speed": "after_due_date",
    },
    "stdout_visibility": "hidden",
    "leaderboard": True,
    "stages": {},
}


class Usage(Exception):
    """A wrong argument or file, in one line (status 2)."""


# --- the schema -----------------------------------------------------------------------------------
@dataclass
class Check:
    """One verdict of a stage: its tests (one per ctest test), a sanitizer, the SASS signature or
    the speed against the reference."""

    category: str  # one of CATEGORIES
    name: str  # "tests", "sweep", "memcheck", "SASS signature", "speed"
    outcome: str  # one of OUTCOMES
    message: str = ""  # one line: why it failed or did not run
    output: str = ""  # what a student reads to fix it (a test's failure, a log's start)
    time: float = 0.0  # seconds, where measured
    measures: dict = field(
        default_factory=dict
    )  # speed: ratio, low, high (middle half of the pairs)


@dataclass
class Stage:
    key: str  # variant/chapter/stage, e.g. exercise/12-reduction/09_shuffle
    state: str  # make check's summary state ("passed", "correct, but slow", ...)
    detail: str = ""
    date: str = ""
    checks: list = field(default_factory=list)

    @property
    def chapter(self):
        return self.key.split("/")[1]


@dataclass
class Run:
    """One `make check` (or several merged: a class grades stage by stage into one folder)."""

    schema: str = SCHEMA
    date: str = ""
    selection: list = field(default_factory=list)  # the STAGE= of each run merged in ("" for all)
    no_gpu: str = ""  # why no GPU could run the checks here, or "" with a GPU
    execution_time: float = 0.0
    stages: list = field(default_factory=list)
    other: list = field(
        default_factory=list
    )  # tests of no stage (host/harness, wrong/..., labs): Checks

    def to_dict(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data):
        if data.get("schema") != SCHEMA:
            raise Usage(f"verdicts: not a {SCHEMA} record (schema {data.get('schema')!r})")
        stages = [
            Stage(**{**s, "checks": [Check(**c) for c in s["checks"]]}) for s in data["stages"]
        ]
        other = [Check(**c) for c in data.get("other", [])]
        return cls(**{**data, "stages": stages, "other": other})


def load(path):
    try:
        return Run.from_dict(json.loads(pathlib.Path(path).read_text()))
    except OSError as err:
        raise Usage(f"verdicts: cannot read {path}: {err.strerror}")
    except (ValueError, KeyError, TypeError) as err:
        raise Usage(f"verdicts: {path} is not a verdicts record: {err}")


def save(run, path):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run.to_dict(), indent=1) + "\n")


def merge(earlier, run):
    """earlier with run's stages and other tests added, a stage checked again replacing its
    earlier verdicts (an autograder runs make check once per stage into one folder)."""
    stages = {s.key: s for s in earlier.stages}
    stages.update({s.key: s for s in run.stages})
    other = {c.name: c for c in earlier.other}
    other.update({c.name: c for c in run.other})
    return Run(
        date=run.date,
        selection=earlier.selection + run.selection,
        no_gpu=run.no_gpu or earlier.no_gpu,
        execution_time=earlier.execution_time + run.execution_time,
        stages=sorted(stages.values(), key=lambda s: s.key),
        other=sorted(other.values(), key=lambda c: c.name),
    )


# --- a check run into the schema -------------------------------------------------------------------
def ctest_times(build):
    """{test name: seconds} from the JUnit file ctest wrote for the run (check.py's run_ctest)."""
    try:
        root = ET.parse(pathlib.Path(build) / "check-results.xml").getroot()
    except (OSError, ET.ParseError):
        return {}
    return {c.get("name"): float(c.get("time") or 0) for c in root.iter("testcase")}


def _first_line(text):
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _test_check(name, kind, status, output, no_gpu, time=0.0, failure=""):
    """A ctest result (check.py: passed, failed or skipped, with the program's output) as a Check."""
    if status == "passed":
        return Check("tests", kind, "passed", "", "", time)
    if status == "failed":
        message = failure or _first_line(output) or "failed"
        return Check("tests", kind, "failed", message, output[-4000:], time)
    skip = re.search(r"COURSE_SKIP:\s*(.*)", output)
    why = skip.group(1).strip() if skip else _first_line(output)
    if why.startswith("TODO"):
        where = re.search(r"(fill in the EXERCISE region of \S+)", why)
        return Check(
            "tests",
            kind,
            "todo",
            "not yet implemented: "
            + (where.group(1) if where else "fill in the stage's EXERCISE region"),
        )
    return Check("tests", kind, "untested", why or (f"not run: {no_gpu}" if no_gpu else "not run"))


def _sanitizer_log(build, key, tool):
    path = pathlib.Path(build) / "sanitize" / f"{key.replace('/', '.')}.{tool}.log"
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "", path
    return "\n".join(text.splitlines()[:60]), path


def _shown(path):
    path = pathlib.Path(path)
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def gpu_code(chapter, stage):
    """Whether a stage runs on the GPU (lessons.toml kind = "gpu"): only then do the sanitizers and
    a SASS signature apply."""
    try:
        return course.build_facts(chapter, ROOT).get(stage, {}).get("kind", "gpu") == "gpu"
    except course.UsageError:
        return True


def lesson_checks(stage_id, variant, on_gpu, lessons, no_gpu, why_not, pending="untested"):
    """The SASS and speed Checks of one stage from check.py's lesson_checks() result (or None when
    they were not run: why_not says why)."""
    speed_decl = lesson.declaration(stage_id).get("speed")
    speed_lesson = variant == "exercise" and isinstance(speed_decl, dict)
    checks = []
    if lessons is None:
        if on_gpu:
            checks.append(Check("sass", "SASS signature", pending, why_not))
        checks.append(
            Check(
                "speed",
                "speed",
                pending if speed_lesson else "n/a",
                why_not if speed_lesson else "no speed lesson in this stage",
            )
        )
        return checks
    sass = lessons.get("sass", {})
    verdict = sass.get("verdict", "")
    outcome = {"met": "passed", "missed": "failed", "none": "n/a"}.get(verdict, "untested")
    if on_gpu or outcome != "n/a":
        checks.append(
            Check(
                "sass",
                "SASS signature",
                outcome,
                "" if outcome == "passed" else sass.get("detail", verdict),
            )
        )
    speed = lessons.get("speed", {})
    verdict = speed.get("verdict", "")
    message = speed.get("detail", verdict)
    # An error of the student's judge program (it crashed, or gave up) is theirs; one of the
    # reference's, or a program not built, is the grader's: not run.
    outcome = {
        "passed": "passed",
        "slow": "failed",
        "reference": "n/a",
        "not a speed lesson": "n/a",
        "todo": "todo",
        "error": "failed" if "your stage" in message else "untested",
    }.get(verdict, "untested")
    measures = {k: speed[k] for k in ("ratio", "low", "high") if k in speed}
    if verdict == "not judged":
        message = "not judged (the timings were too noisy to call; run it again): " + message
    elif verdict == "needs a GPU":
        message = f"not judged: {no_gpu or 'no GPU'}"
    checks.append(Check("speed", "speed", outcome, message, "", 0.0, measures))
    return checks


def from_check(
    build,
    selection,
    results,
    by_stage,
    sanitizers,
    lessons,
    states,
    no_gpu,
    seconds,
    failures=None,
    sanitizer_tools=course.SANITIZERS,
):
    """The Run of one check.py run, from what check.py's run() holds at its end:
    results {test: (status, output)}, by_stage {key: {kind: test}}, sanitizers {key: {tool: state}},
    lessons {key: {"sass": ..., "speed": ...}}, states {key: (state, detail)} (its summary), no_gpu
    (course.gpu_reason()), failures {test: one line} (the first failed check of a test's output)."""
    times = ctest_times(build)
    failures = failures or {}
    stages = []
    alone = len(by_stage) == 1
    for key in sorted(by_stage):
        variant, chapter, stage = key.split("/")
        kinds = by_stage[key]
        state, detail = states.get(key, ("not run", ""))
        checks = []
        for kind, name in sorted(kinds.items(), key=lambda kv: (kv[0] != "tests", kv[0])):
            status, output = results.get(name, ("skipped", "not run"))
            checks.append(
                _test_check(
                    name, kind, status, output, no_gpu, times.get(name, 0.0), failures.get(name, "")
                )
            )
        on_gpu = "host" not in kinds and gpu_code(chapter, stage)
        tests_pass = all(c.outcome == "passed" for c in checks)
        pending = "todo" if any(c.outcome == "todo" for c in checks) else "untested"
        if not tests_pass:
            why_not = (
                "not run until the stage is implemented"
                if pending == "todo"
                else "not run: the stage's tests do not pass"
                if any(c.outcome == "failed" for c in checks)
                else f"not run: {no_gpu}"
                if no_gpu
                else "not run: its tests did not run"
            )
        elif not alone:
            why_not = f"not run: checked when one stage is selected (make check STAGE={key})"
        elif any(v == "errors" for v in sanitizers.get(key, {}).values()):
            why_not = "not judged: the sanitizers report errors"
        else:
            why_not = f"not run: {no_gpu}" if no_gpu else "not run"
        if on_gpu:
            ran = sanitizers.get(key)
            for tool in sanitizer_tools:
                if ran is None or tool not in ran:
                    checks.append(Check("sanitizers", tool, pending, why_not))
                    continue
                log, path = _sanitizer_log(build, key, tool)
                verdict = ran[tool]
                outcome = {"clean": "passed", "errors": "failed"}.get(verdict, "untested")
                skip = re.search(r"COURSE_SKIP:\s*(.*)", log)
                # The first report of the log (compute-sanitizer prefixes its lines with ====).
                report = next(
                    (
                        line.lstrip("= ").strip()
                        for line in log.splitlines()
                        if line.startswith("=")
                        and line.lstrip("= ").strip()
                        and "COMPUTE-SANITIZER" not in line
                    ),
                    "",
                )
                message = (
                    ""
                    if outcome == "passed"
                    else f"not run: {skip.group(1).strip()}"
                    if skip
                    else f"{report or 'errors'} (the log: {_shown(path)})"
                )
                checks.append(
                    Check("sanitizers", tool, outcome, message, log if outcome == "failed" else "")
                )
        if key in lessons:
            checks += lesson_checks(f"{chapter}/{stage}", variant, on_gpu, lessons[key], no_gpu, "")
        else:
            checks += lesson_checks(
                f"{chapter}/{stage}", variant, on_gpu, None, no_gpu, why_not, pending
            )
        stages.append(Stage(key, state, detail, now(), checks))
    staged = {n for kinds in by_stage.values() for n in kinds.values()}
    other = []
    for name, (status, output) in sorted(results.items()):
        if name not in staged:
            check = _test_check(
                name, "tests", status, output, no_gpu, times.get(name, 0.0), failures.get(name, "")
            )
            other.append(dataclasses.replace(check, name=name))
    return Run(
        date=now(),
        selection=[selection or ""],
        no_gpu=no_gpu or "",
        execution_time=round(seconds, 1),
        stages=stages,
        other=other,
    )


def from_progress(progress, no_gpu=""):
    """A Run from make progress's record (BUILD/progress.json): one tests check per stage, and the
    sanitizer, SASS and speed verdicts recorded last (an instructor's view of a build folder)."""
    stages = []
    for key, rec in sorted(progress.get("stages", {}).items()):
        variant, chapter, stage = key.split("/")
        state, detail = rec.get("state", "not run"), rec.get("detail", "")
        passed = state in ("passed", "correct, but slow", "misses its SASS signature")
        outcome = (
            "passed"
            if passed
            else "todo"
            if state == "TODO"
            else "failed"
            if state in ("failed", "does not compile")
            else "untested"
        )
        checks = [Check("tests", "tests", outcome, "" if passed else (detail or state))]
        for tool, verdict in (rec.get("sanitizers") or {}).items():
            checks.append(
                Check(
                    "sanitizers",
                    tool,
                    {"clean": "passed", "errors": "failed"}.get(verdict, "untested"),
                    "" if verdict == "clean" else f"{tool}: {verdict}",
                )
            )
        on_gpu = gpu_code(chapter, stage)
        if on_gpu and not rec.get("sanitizers") and state != "TODO":
            checks += [
                Check("sanitizers", tool, "untested", "not recorded in progress.json")
                for tool in course.SANITIZERS
            ]
        recorded = rec if ("sass" in rec or "speed" in rec) else None
        todo = state == "TODO"
        checks += lesson_checks(
            f"{chapter}/{stage}",
            variant,
            on_gpu,
            recorded,
            no_gpu,
            "not run until the stage is implemented" if todo else "not recorded in progress.json",
            "todo" if todo else "untested",
        )
        stages.append(Stage(key, state, detail, rec.get("date", ""), checks))
    return Run(date=now(), selection=["(from progress.json)"], no_gpu=no_gpu, stages=stages)


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the grading file -----------------------------------------------------------------------------
def load_grading(path=None):
    """DEFAULT_GRADING with the instructor's file (TOML or JSON) over it, checked: a wrong key or
    value is a Usage error naming the choices."""
    grading = json.loads(json.dumps(DEFAULT_GRADING))
    if not path:
        return grading
    path = pathlib.Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise Usage(f"verdicts: GRADING={path}: {err.strerror}")
    try:
        if path.suffix == ".toml":
            if tomllib is None:
                raise Usage(
                    f"verdicts: GRADING={path}: TOML needs Python 3.11 or newer; write it as JSON"
                )
            given = tomllib.loads(text)
        else:
            given = json.loads(text)
    except (ValueError, getattr(tomllib, "TOMLDecodeError", ValueError)) as err:
        raise Usage(f"verdicts: GRADING={path} does not parse: {err}")
    if not isinstance(given, dict):
        raise Usage(f"verdicts: GRADING={path}: expected a table of settings")
    for k, v in given.items():
        if k not in grading:
            raise Usage(
                f"verdicts: GRADING={path}: no setting '{k}'; settings: {', '.join(grading)}"
            )
        if k == "total":
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
                raise Usage(f"verdicts: GRADING={path}: total = {v!r}; a number of points above 0")
            grading[k] = float(v)
        elif k in ("weights", "visibility"):
            if not isinstance(v, dict):
                raise Usage(
                    f"verdicts: GRADING={path}: [{k}] is a table of {', '.join(CATEGORIES)}"
                )
            for cat, value in v.items():
                if cat not in CATEGORIES:
                    raise Usage(
                        f"verdicts: GRADING={path}: [{k}] {cat}: no such check; one of {', '.join(CATEGORIES)}"
                    )
                if k == "weights" and (
                    not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0
                ):
                    raise Usage(
                        f"verdicts: GRADING={path}: [weights] {cat} = {value!r}; a number, 0 or more"
                    )
                if k == "visibility" and value not in VISIBILITIES:
                    raise Usage(
                        f"verdicts: GRADING={path}: [visibility] {cat} = {value!r}; one of "
                        f"{', '.join(VISIBILITIES)}"
                    )
                grading[k][cat] = value
        elif k == "stdout_visibility":
            if v not in VISIBILITIES:
                raise Usage(
                    f"verdicts: GRADING={path}: stdout_visibility = {v!r}; one of {', '.join(VISIBILITIES)}"
                )
            grading[k] = v
        elif k == "leaderboard":
            if not isinstance(v, bool):
                raise Usage(f"verdicts: GRADING={path}: leaderboard = {v!r}; true or false")
            grading[k] = v
        elif k == "stages":
            if not isinstance(v, dict) or any(
                not isinstance(w, (int, float)) or isinstance(w, bool) or w < 0 for w in v.values()
            ):
                raise Usage(
                    f"verdicts: GRADING={path}: [stages] maps a stage (12-reduction/09_shuffle) to a "
                    f"relative weight, 0 or more"
                )
            ids = set(course.stage_ids(ROOT))
            unknown = [s for s in v if s.split("/", 1)[-1] not in ids and s not in ids]
            if unknown:
                raise Usage(
                    f"verdicts: GRADING={path}: [stages] {unknown[0]}: no such stage; e.g. "
                    f"{course.stage_ids(ROOT)[0]}"
                )
            grading[k] = dict(v)
    if sum(grading["weights"].values()) <= 0:
        raise Usage(f"verdicts: GRADING={path}: [weights] are all 0: nothing would score")
    return grading


# --- scores ---------------------------------------------------------------------------------------
def graded_stages(run):
    """The stages a grade is about: the exercises when the run checked any, else (an instructor
    trying the autograder on the reference) the solutions."""
    exercises = [s for s in run.stages if s.key.startswith("exercise/")]
    return exercises or list(run.stages)


def points(run, grading):
    """[(stage, check, max_score)] for every check that counts: the total split over the graded
    stages (by their [stages] weights), a stage's points over its kinds of check (by [weights],
    among the kinds that apply to it), a kind's points evenly over its checks. A check that does not
    apply (n/a) is left out; one that could not run keeps its points at stake and scores 0."""
    stages = graded_stages(run)
    stage_weight = {
        s.key: float(grading["stages"].get(s.key.split("/", 1)[1], 1.0)) for s in stages
    }
    total_weight = sum(stage_weight.values()) or 1.0
    rows = []
    for s in stages:
        share = grading["total"] * stage_weight[s.key] / total_weight
        counted = [c for c in s.checks if c.outcome != "n/a"]
        cats = [cat for cat in CATEGORIES if any(c.category == cat for c in counted)]
        cat_weight = sum(grading["weights"][cat] for cat in cats) or 1.0
        for cat in cats:
            members = [c for c in counted if c.category == cat]
            each = share * grading["weights"][cat] / cat_weight / len(members)
            rows += [(s, c, each) for c in members]
    # Points to 4 decimals, the rounding's remainder on the largest, so that they add up to the total.
    rows = [(s, c, round(m, 4)) for s, c, m in rows]
    if rows:
        largest = max(range(len(rows)), key=lambda i: rows[i][2])
        s, c, m = rows[largest]
        rows[largest] = (s, c, round(m + grading["total"] - sum(r[2] for r in rows), 4))
    return rows


# --- the writers ----------------------------------------------------------------------------------
def _reason(c):
    """Why a check did not pass, in words that stand alone (a JUnit skip or failure message)."""
    word = {
        "passed": "passed",
        "failed": "failed",
        "todo": "TODO",
        "untested": "not run",
        "n/a": "does not apply",
    }
    if not c.message or c.outcome == "passed":
        return word[c.outcome]
    if c.outcome == "todo":
        return c.message if c.message.startswith("TODO") else f"TODO: {c.message}"
    if c.outcome in ("untested", "n/a") or c.message.lower().startswith("not "):
        return c.message
    return f"{word[c.outcome]}: {c.message}"


def _check_line(c):
    return f"{c.name}: {_reason(c)}"


def junit(run):
    """JUnit XML: <testsuites> of a <testsuite> per chapter (and one for the tests of no stage),
    a <testcase> per check, classname the stage (variant.chapter.stage). A check that could not run,
    is TODO or does not apply is <skipped> with the reason; a failed one has a <failure>."""
    suites = {}
    for s in run.stages:
        for c in s.checks:
            suites.setdefault(s.chapter, []).append((s.key.replace("/", "."), c))
    for c in run.other:
        m = re.search(r"(\d\d-[a-z]+)", c.name)
        suites.setdefault(m.group(1) if m else "course", []).append(
            ("course." + c.name.split("/")[0], c)
        )
    root = ET.Element("testsuites", name="make check")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    for chapter in sorted(suites):
        cases = suites[chapter]
        # The JUnit schema's timestamp has no zone: UTC, as the record's date is.
        suite = ET.SubElement(
            root,
            "testsuite",
            name=chapter,
            timestamp=run.date.removesuffix("Z"),
            hostname=socket.gethostname(),
        )
        counts = {
            "tests": len(cases),
            "failures": sum(c.outcome == "failed" for _, c in cases),
            "errors": 0,
            "skipped": sum(c.outcome not in ("passed", "failed") for _, c in cases),
            "time": sum(c.time for _, c in cases),
        }
        for k, v in counts.items():
            suite.set(k, f"{v:.3f}" if k == "time" else str(v))
            totals[k] += v
        if run.no_gpu:
            props = ET.SubElement(suite, "properties")
            ET.SubElement(props, "property", name="no_gpu", value=run.no_gpu)
        for classname, c in cases:
            case = ET.SubElement(
                suite, "testcase", classname=classname, name=c.name, time=f"{c.time:.3f}"
            )
            if c.outcome == "failed":
                failure = ET.SubElement(
                    case, "failure", message=c.message or "failed", type=c.category
                )
                failure.text = c.output or c.message
            elif c.outcome != "passed":
                ET.SubElement(case, "skipped", message=_reason(c))
            if c.measures:
                out = ET.SubElement(case, "system-out")
                out.text = "  ".join(f"{k}={v}" for k, v in c.measures.items())
    for k, v in totals.items():
        root.set(k, f"{v:.3f}" if k == "time" else str(v))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def gradescope(run, grading):
    """Gradescope's results.json (the autograder specification: gradescope-autograders.readthedocs.io
    /en/latest/specs/): no top-level score, so Gradescope sums the tests' scores."""
    rows = points(run, grading)
    numbers = {}
    tests = []
    for s, c, max_score in rows:
        stage_no = numbers.setdefault(s.key, len(numbers) + 1)
        check_no = sum(1 for t in tests if t["number"].startswith(f"{stage_no}.")) + 1
        score = max_score if c.outcome == "passed" else 0.0
        label = s.key.split("/", 1)[1] if s.key.startswith("exercise/") else s.key
        lines = [_check_line(c)]
        if c.outcome in ("failed", "todo"):
            lines.append(f"again on your machine: make check STAGE={s.key}")
        if c.outcome == "untested" and run.no_gpu:
            lines.append("it scores 0 until a grader with a GPU runs it")
        if c.measures:
            lines.append(
                "your stage's speed over the reference's: {ratio:.2f}x (middle half of the timed pairs "
                "{low:.2f}-{high:.2f})".format(**c.measures)
            )
        if c.output:
            lines += ["", c.output]
        test = {
            "name": f"{label}: {c.name}",
            "number": f"{stage_no}.{check_no}",
            "score": round(score, 4),
            "max_score": round(max_score, 4),
            "status": "passed" if c.outcome == "passed" else "failed",
            "output": "\n".join(lines),
            "output_format": "text",
            "tags": [s.chapter, c.category],
            "visibility": grading["visibility"][c.category],
            "extra_data": {"stage": s.key, "check": c.category, "outcome": c.outcome},
        }
        if c.measures:
            test["extra_data"].update(c.measures)
        tests.append(test)
    counted = [c for _, c, _ in rows]
    untested = sum(c.outcome == "untested" for c in counted)
    summary = [
        f"make check {' '.join('STAGE=' + s for s in run.selection if s) or '(every stage)'}: "
        f"{sum(c.outcome == 'passed' for c in counted)} of {len(counted)} checks passed "
        f"over {len(numbers)} stage(s)."
    ]
    todo = sum(c.outcome == "todo" for c in counted)
    if todo:
        summary.append(f"{todo} check(s) wait for a stage that is not yet implemented (TODO).")
    if run.no_gpu:
        summary.append(
            f"This grader has no GPU ({run.no_gpu}): the stages were compiled"
            + (
                f", and {untested} check(s) that need a GPU could not run: they score 0 here, so this score is "
                f"not the grade (the course's docs/grading.md says how a GPU grader runs them)."
                if untested
                else "."
            )
        )
    elif untested:
        summary.append(f"{untested} check(s) could not run; each says why.")
    hidden = sorted({t["visibility"] for t in tests} - {"visible"})
    if hidden:
        summary.append(
            "Some checks are shown later ("
            + ", ".join(v.replace("_", " ") for v in hidden)
            + "); until then the total is hidden too."
        )
    result = {
        "tests": tests,
        "execution_time": int(round(run.execution_time)),
        "output": "\n".join(summary),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": grading["stdout_visibility"],
        "extra_data": {
            "schema": SCHEMA,
            "date": run.date,
            "no_gpu": run.no_gpu,
            "untested": untested,
        },
    }
    if grading["leaderboard"]:
        result["leaderboard"] = [
            {
                "name": f"{s.key.split('/', 1)[1]} speed vs reference",
                "value": round(c.measures["ratio"], 3),
                "order": "desc",
            }
            for s in graded_stages(run)
            for c in s.checks
            if c.category == "speed" and "ratio" in c.measures
        ]
    return result


def write_reports(run, folder, grading):
    """folder/junit.xml and folder/results.json from run; returns their paths."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "junit.xml").write_text(junit(run))
    (folder / "results.json").write_text(json.dumps(gradescope(run, grading), indent=1) + "\n")
    return folder / "junit.xml", folder / "results.json"


def after_check(build, grades, grading_file, run):
    """check.py's hook: the run into BUILD/verdicts.json and, with GRADES=DIR, merged into
    DIR/verdicts.json and written out as DIR/junit.xml and DIR/results.json. Prints one line."""
    try:
        save(run, pathlib.Path(build) / "verdicts.json")
        if not grades:
            return
        grading = load_grading(grading_file)
        folder = pathlib.Path(grades)
        record = folder / "verdicts.json"
        merged = merge(load(record), run) if record.is_file() else run
        save(merged, record)
        junit_path, results = write_reports(merged, folder, grading)
    except (OSError, Usage) as err:
        # The check's own verdicts are printed already: say what is missing, in one line, and go on.
        print(
            f"grades: not written: {getattr(err, 'strerror', None) and f'{err.filename}: {err.strerror}' or err}"
        )
        return
    rows = points(merged, grading)
    score = sum(m for _, c, m in rows if c.outcome == "passed")
    print(
        f"grades: {_shown(junit_path)} and {_shown(results)} ({len(graded_stages(merged))} stage(s), "
        f"{score:.1f} of {grading['total']:g} points"
        + (", the GPU checks not run" if merged.no_gpu else "")
        + ")"
    )


def crashed(folder, message):
    """A results.json and junit.xml saying that the check could not run at all."""
    run = Run(
        date=now(), selection=[""], other=[Check("tests", "make check", "failed", message, message)]
    )
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "junit.xml").write_text(junit(run))
    result = {
        "score": 0.0,
        "output": f"The autograder could not check this submission: {message}",
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
        "extra_data": {"schema": SCHEMA, "crashed": True},
    }
    (folder / "results.json").write_text(json.dumps(result, indent=1) + "\n")


# --- the command line -----------------------------------------------------------------------------
def validate(assignments):
    """The Makefile's check of GRADES= and GRADING=: the one-line error, or None."""
    given = dict(a.split("=", 1) for a in assignments if "=" in a)
    grades, grading = given.get("GRADES", "").strip(), given.get("GRADING", "").strip()
    if grading and not grades:
        return (
            "check: GRADING= says how to score the verdicts GRADES=<folder> writes; give GRADES too"
        )
    if grades:
        path = pathlib.Path(grades)
        if path.exists() and not path.is_dir():
            return f"check: GRADES={grades} is a file; GRADES= names a folder for junit.xml and results.json"
        parent = next((p for p in [path, *path.absolute().parents] if p.exists()), None)
        if parent is not None and not parent.is_dir():
            return f"check: GRADES={grades}: {parent} is not a folder"
    try:
        load_grading(grading or None)
    except Usage as err:
        return "check: " + str(err).removeprefix("verdicts: ")
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("folder")
    src = w.add_mutually_exclusive_group()
    src.add_argument("--record", help="a verdicts record (default: build/verdicts.json)")
    src.add_argument("--progress", help="make progress's record, build/progress.json")
    w.add_argument("--grading")
    v = sub.add_parser("validate")
    v.add_argument("assignments", nargs="*")
    c = sub.add_parser("crashed")
    c.add_argument("folder")
    c.add_argument("message")
    args = parser.parse_args(argv)
    try:
        if args.command == "validate":
            error = validate(args.assignments)
            if error:
                print(error)
            return 0
        if args.command == "crashed":
            crashed(args.folder, args.message)
            return 0
        grading = load_grading(args.grading)
        if args.progress:
            try:
                progress = json.loads(pathlib.Path(args.progress).read_text())
            except (OSError, ValueError) as err:
                raise Usage(f"verdicts: cannot read {args.progress}: {err}")
            run = from_progress(progress)
        else:
            run = load(args.record or ROOT / "build" / "verdicts.json")
        for path in write_reports(run, args.folder, grading):
            print(f"wrote {path}")
        return 0
    except Usage as err:
        print(err, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
