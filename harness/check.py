#!/usr/bin/env python3
"""The student's loop: `make check` and `make progress`.

check.py run [--build DIR] [--stage REGEX] [--jobs N] [--grades FOLDER [--grading FILE]]
    Builds only what the selected tests need, keeps going past a stage that does not compile
    (and names it), runs the tests with ctest, and, when the selection is one stage on a GPU
    with compute-sanitizer, runs memcheck, racecheck and synccheck on it with a one-line
    verdict each, then judges what the stage teaches (harness/lesson.py, chapters/*/lessons.toml):
    its SASS against the stage's signature (with cuobjdump) and, on a GPU, its speed against the
    reference solution's, interleaved. Ends with a summary per stage (passed, failed, correct but
    slow, misses its SASS signature, compiled but not run, TODO, does not compile; a failing
    exercise stage with the known mistake it matches, harness/pitfalls.py) and records it
    in DIR/progress.json for `make progress`, and its verdicts in DIR/verdicts.json (harness/verdicts.py;
    --grades FOLDER also writes them as JUnit XML and Gradescope's results.json there).
check.py progress [--build DIR]
    Per chapter, each exercise stage's state from the last runs (instant: nothing is built or
    run): TODO, compiles, answer, sanitizers, speed against the reference, SASS signature.
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import pathlib
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course  # noqa: E402  (the stages, read from the tree)
import hints  # noqa: E402  (the stages' hint ladders and unwritten prerequisites)
import lesson  # noqa: E402  (the lesson checks: SASS signature and speed verdict)
import pitfalls  # noqa: E402  (the known mistakes a failure matches)
import sanitizer_report  # noqa: E402  (a sanitizer's reports explained)
import verdicts  # noqa: E402  (the run's verdicts for graders: JUnit XML, Gradescope)

ROOT = course.ROOT
TOOLS = course.SANITIZERS
# A stage that compiles where no GPU can run it: nothing is known of its answer yet.
UNTESTED = "compiles; untested (no GPU)"


# --- test names and stage keys ------------------------------------------------------------------
def key(variant, chapter, stage):
    return f"{variant}/{chapter}/{stage}"


# --- the build directory -------------------------------------------------------------------------
def generator_is_ninja(build):
    return (build / "build.ninja").is_file()


def refresh_configuration(build):
    """Re-runs CMake if a stage file changed in a way the configuration depends on (a COURSE_TODO
    removed): the test list below must be the current one."""
    if generator_is_ninja(build):
        cmd = ["cmake", "--build", str(build), "--target", "build.ninja"]
    else:
        cmd = ["cmake", "-S", str(ROOT), "-B", str(build)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.stdout.write(run.stdout + run.stderr)
        raise SystemExit("check: CMake could not configure the build (above)")


def list_tests(build, regex, labels_exclude="sanitize"):
    cmd = ["ctest", "-N", "--show-only=json-v1"]
    if labels_exclude:
        cmd += ["-LE", labels_exclude]
    if regex:
        cmd += ["-R", regex]
    run = subprocess.run(cmd, cwd=build, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit("check: ctest could not list the tests:\n" + run.stderr)
    return json.loads(run.stdout)["tests"]


def read_test_manifest(build):
    """{test name: {"needs": [targets], "object": stage object}} as CMake wrote it (build/tests.json,
    from course_add_test in cmake/CourseStages.cmake): what each test runs or reads, by
    construction, whatever its name."""
    try:
        return json.loads((build / "tests.json").read_text())["tests"]
    except (OSError, ValueError, KeyError):
        raise SystemExit(
            f"check: {build / 'tests.json'} is missing or unreadable; configure again "
            f"(rm -rf {build} && make check)"
        )


def programs_of(test, manifest):
    """The build targets a test needs (its program, the objects and programs among its
    arguments), as CMake recorded them; [] for a test that needs none (a Python tool's test)."""
    return list(manifest.get(test["name"], {}).get("needs", []))


def object_of(test, manifest):
    """The stage object a stage's test judges (built alone without a GPU), or None."""
    return manifest.get(test["name"], {}).get("object")


# --- building -----------------------------------------------------------------------------------
FIRST_ERROR = re.compile(r"(^\S+?[:(]\d+[):]?.*\berror\b.*$)|(^.*\berror\b:.*$)", re.MULTILINE)


def failed_blocks(log):
    """{output path: first error line} for each FAILED: block of a ninja log. Ninja 1.13 and later
    print the command's exit status first ("FAILED: [code=1] out"); older ones do not."""
    blocks = {}
    for m in re.finditer(
        r"^FAILED: (?:\[code=-?\d+\] )?(\S+).*?$(.*?)(?=^FAILED: |^ninja: |\Z)",
        log,
        re.MULTILINE | re.DOTALL,
    ):
        out, body = m.group(1), m.group(2)
        err = FIRST_ERROR.search(body)
        line = (
            err.group(0).strip()
            if err
            else body.strip().splitlines()[-1]
            if body.strip()
            else "failed"
        )
        blocks[out] = line.replace(str(ROOT) + "/", "")
    return blocks


def failed_in_log(targets, blocks):
    """Targets among `targets` that the log's FAILED: blocks name: their own objects
    (CMakeFiles/<target>.dir/), their program (bin/<target>), or, for a test or judge program, the
    stage objects it links (CMakeFiles/<stage target>.dir/). From the log, not from a dry run:
    the stages are globbed from the tree, so `ninja -n` always stops at re-running CMake and lists
    nothing."""
    failed = set()
    for target in targets:
        stem = re.sub(r"^(test|judge)\.", "", target)
        names = {f"CMakeFiles/{target}.dir/", f"CMakeFiles/{stem}.dir/"}
        if any(n in out for out in blocks for n in names) or any(
            out == f"bin/{target}" or out.endswith(f"/bin/{target}") for out in blocks
        ):
            failed.add(target)
    return failed


def labels_of(test):
    return next((p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"), [])


def chapter_of_target(target):
    m = re.search(r"(\d\d-[a-z]+)", target)
    return m.group(1) if m else "common"


def minutes(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def build_targets(build, targets, jobs, everything):
    """Builds the targets (everything: all of them, the benchmarks and wrong variants too) quietly,
    one line per chapter, the compiler's output in BUILD/check.log; keeps going past failures.
    Returns {target: first error} for the targets that did not build."""
    targets = sorted(targets)
    if not targets and not everything:
        return {}
    log = build / "check.log"
    log.write_text("")
    groups = {"everything": []} if everything else {}
    for t in targets if not everything else []:
        groups.setdefault(chapter_of_target(t), []).append(t)
    ninja = generator_is_ninja(build)
    width = max(len(g) for g in groups)
    shown = log.relative_to(ROOT) if log.is_relative_to(ROOT) else log
    print(
        f"building ({len(targets) if not everything else 'every target'}; the compiler's output goes to {shown})"
    )
    broken = {}
    for group, members in sorted(groups.items()):
        cmd = ["cmake", "--build", str(build), "-j", str(jobs)] + (
            [] if everything else ["--target"] + members
        )
        if ninja:
            cmd += ["--", "-k", "0"]
        start = time.monotonic()
        with open(log, "a") as f:
            f.write(f"\n=== {group}: {' '.join(cmd)}\n")
            f.flush()
            mark = f.tell()
            status = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
        took = minutes(time.monotonic() - start)
        if status == 0:
            print(f"  {group:<{width}}  done ({took})")
            continue
        if not ninja:
            raise SystemExit(
                f"check: the build failed (see {shown}); with the Ninja generator check would go on"
            )
        with open(log) as f:
            f.seek(mark)
            blocks = failed_blocks(f.read())
        failed = failed_in_log(set(members or targets), blocks)
        if not failed:
            # A target no selected test needs (a benchmark, in a build of everything): still a failure.
            broken[f"({group})"] = next(iter(blocks.values()), "see the log")
        for target in failed:
            stem = target[len("test.") :] if target.startswith("test.") else target
            broken[target] = next((e for out, e in blocks.items() if stem in out), None) or next(
                iter(blocks.values()), "did not build"
            )
        print(
            f"  {group:<{width}}  {len(failed) or 'some'} target(s) did not build ({took}); "
            f"the first error: {next(iter(blocks.values()), 'see the log')}"
        )
    return broken


def read_manifest(build):
    """The stages as the build configured them (build/stages.json, written by CMake)."""
    try:
        return json.loads((build / "stages.json").read_text())["stages"]
    except (OSError, ValueError, KeyError):
        return []


# --- running ------------------------------------------------------------------------------------
gpu_reason = course.gpu_reason


def run_ctest(build, names, jobs):
    """Runs exactly the named tests; returns {name: (status, output)}, status one of passed,
    failed, skipped."""
    if not names:
        return {}
    junit = build / "check-results.xml"
    regex = "^(" + "|".join(re.escape(n) for n in sorted(names)) + ")$"
    cmd = [
        "ctest",
        "--output-on-failure",
        "--no-label-summary",
        "--no-tests=error",
        "-j",
        str(jobs),
        "-LE",
        "sanitize",
        "-R",
        regex,
        "--output-junit",
        str(junit),
    ]
    subprocess.run(cmd, cwd=build)
    results = {}
    if not junit.is_file():
        return results
    for case in ET.parse(junit).getroot().iter("testcase"):
        out = case.findtext("system-out") or ""
        status = case.get("status")
        skipped = case.find("skipped")
        if (
            "COURSE_SKIP:" in out
            or status == "disabled"
            or (skipped is not None and "SKIP" in (skipped.get("message") or ""))
        ):
            results[case.get("name")] = ("skipped", out)
        elif status == "notrun":
            # ctest found no program to run: a build step this check did not take.
            results[case.get("name")] = (
                "failed",
                out + "\nnot run: ctest found no program to run "
                "(build it with: cmake --build " + str(build) + ")",
            )
        elif status == "fail" or case.find("failure") is not None:
            results[case.get("name")] = ("failed", out)
        else:
            results[case.get("name")] = ("passed", out)
    return results


REPORT_LINE = re.compile(
    r"^=+\s+(Invalid .*|Error.*|Warning.*|Barrier error.*|Program hit .*|Race reported.*|"
    r"Uninitialized .*|Leaked .*|.*hazard.*)$",
    re.IGNORECASE,
)
SOURCE_LINE = re.compile(r"in (\S+?:\d+)")


def sanitizer_verdict(tool, output, code):
    """One line: clean, or the first report and its source line."""
    lines = output.splitlines()
    first, where = None, None
    for i, line in enumerate(lines):
        if REPORT_LINE.match(line) and "SUMMARY" not in line:
            first = re.sub(r"^=+\s+", "", line).strip()
            first = re.sub(
                r"\s+at\s+.*?\+0x[0-9a-fA-F]+\s+in\s+\S+:\d+", "", first
            )  # the place goes last
            for follow in lines[i : i + 12]:
                m = SOURCE_LINE.search(follow)
                if m:
                    where = m.group(1).replace(str(ROOT) + "/", "")
                    break
            break
    summary = next((l for l in lines if "SUMMARY" in l), "")
    summary = re.sub(r"^=+ *", "", summary).strip()
    if code == 0:
        return "clean", f"{tool}: clean" + (f" ({summary})" if summary else "")
    if first:
        return "errors", f"{tool}: {first}" + (f" at {where}" if where else "")
    if re.search(r"\b0 errors", summary) and re.search(r"replay: COURSE_SEED|FAILED", output):
        return "clean", f"{tool}: nothing to report, but the tests failed under it too ({summary})"
    tail = next((l for l in reversed(lines) if l.strip()), "")
    return "errors", f"{tool}: failed (exit {code}): {tail.strip()}"


def run_sanitizers(build, program, name):
    """memcheck, racecheck and synccheck on one stage's program at small sizes, side by side."""
    logs = build / "sanitize"
    logs.mkdir(exist_ok=True)
    script = ROOT / "harness" / "sanitize.sh"

    def one(tool):
        run = subprocess.run([str(script), tool, str(program)], capture_output=True, text=True)
        out = run.stdout + run.stderr
        (logs / f"{name.replace('/', '.')}.{tool}.log").write_text(out)
        if "COURSE_SKIP" in out and run.returncode == 0:
            return (
                tool,
                "skipped",
                f"{tool}: skipped: "
                + next(l for l in out.splitlines() if "COURSE_SKIP" in l)
                .split("COURSE_SKIP:", 1)[1]
                .strip(),
            )
        state, line = sanitizer_verdict(tool, out, run.returncode)
        if state == "errors":
            # Both accesses of a race, the memory, the threads, what would order them (sanitizer_report.py).
            variant, chapter = name.split("/")[:2]
            search = course.source_folders(variant, chapter)
            line += "".join(
                "\n    " + more for more in sanitizer_report.explain(out, tool, search=search)
            )
        return tool, state, line

    print(
        f"\nsanitizers on {name} (small sizes; full logs in {logs.relative_to(ROOT) if logs.is_relative_to(ROOT) else logs}/):"
    )
    verdicts = {}
    with concurrent.futures.ThreadPoolExecutor(len(TOOLS)) as pool:
        for tool, state, line in pool.map(one, TOOLS):
            verdicts[tool] = state
            print("  " + line)
    return verdicts


# --- what the stage teaches ----------------------------------------------------------------------
def lesson_checks(build, k, gpu):
    """The SASS signature and, on a GPU, the speed verdict of one stage whose answers are right;
    prints them and returns {"sass": {...}, "speed": {...}} for progress.json."""
    variant, chapter, stage = k.split("/")
    stage_id = f"{chapter}/{stage}"
    print(f"\nwhat {k} teaches: {lesson.declaration(stage_id).get('lesson', '(not declared)')}")
    try:
        sass_state, sass_lines = lesson.sass_verdict(variant, stage_id, build=str(build))
    except lesson.Usage as err:
        sass_state, sass_lines = "not checked", [f"SASS not checked: {err}"]
    for line in sass_lines:
        print("  " + line)
    first = next((l for l in sass_lines if "missed" in l), sass_lines[0] if sass_lines else "")
    # The summary's one line: the rule and what was found, without the why printed above.
    short = re.sub(r"^SASS signature missed(?: \(on \w+[^)]*\))?: ", "", first).split(". ", 1)[0]
    checks = {"sass": {"verdict": sass_state, "detail": short if sass_state == "missed" else first}}
    if sass_state == "missed":
        checks["sass"]["missed"] = pitfalls.missed_rules("\n".join(sass_lines))
    speed = lesson.declaration(stage_id).get("speed")
    if variant != "exercise":
        checks["speed"] = {"verdict": "reference", "detail": "the reference solution itself"}
    elif not isinstance(speed, dict):
        checks["speed"] = {
            "verdict": "not a speed lesson",
            "detail": speed or "no speed lesson declared",
        }
        print("  speed: " + (speed or "no speed lesson declared"))
    elif not gpu:
        checks["speed"] = {"verdict": "needs a GPU", "detail": "speed not judged: no GPU"}
        print("  speed not judged: no GPU here")
    else:
        res = lesson.speed_verdict(
            stage_id,
            build / "bin" / course.judge_program("solution", chapter, stage),
            build / "bin" / course.judge_program("exercise", chapter, stage),
        )
        for line in res.lines:
            print("  " + line)
        checks["speed"] = {"verdict": res.state, "detail": res.lines[0]}
        if res.state == "slow":
            checks["speed"]["detail"] = (
                f"{res.ratio:.2f}x the reference's speed, below the stage's threshold"
            )
        if res.pairs:
            checks["speed"].update(
                ratio=round(res.ratio, 3), low=round(res.low, 3), high=round(res.high, 3)
            )
    return checks


# --- the summary and progress.json ---------------------------------------------------------------
def now():
    return datetime.datetime.now().strftime("%Y-%m-%d %H:%M")


def load_progress(build):
    path = build / "progress.json"
    if path.is_file():
        try:
            return json.loads(path.read_text())
        except ValueError:
            pass
    return {"stages": {}}


def save_progress(build, progress):
    (build / "progress.json").write_text(json.dumps(progress, indent=1, sort_keys=True) + "\n")


def first_failure(output):
    """The message of the first failed check in a test program's output (the tests' messages
    start with "stage <id>"), on one line, or ""."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("FAILED:"):
            continue
        block = []
        for follow in lines[i + 1 :]:
            if not follow.startswith("  "):
                if block:
                    break
                continue
            block.append(follow.strip())
        msg = next((k for k, b in enumerate(block) if b.startswith("stage ")), None)
        text = " ".join(block[msg:] if msg is not None else block[-1:])
        return text if len(text) <= 240 else text[:237] + "..."
    m = re.search(r"^(TIMEOUT: .*)$", output, re.MULTILINE)
    return m.group(1) if m else ""


def pitfall_lines(k, kinds, results, lessons):
    """The known mistakes (the wrong variants, harness/pitfalls.py) an exercise stage's failure
    matches: the same failing test cases, or the same missing SASS fact; [] for none."""
    variant, chapter, stage = k.split("/")
    if variant != "exercise":
        return []
    missed = ((lessons.get(k) or {}).get("sass") or {}).get("missed", [])
    failing = []
    if not missed:
        try:
            test_file = course.build_facts(chapter, ROOT).get(stage, {}).get("test", "")
        except course.UsageError:
            test_file = ""
        names = pitfalls.case_names(chapter, test_file)
        for name in kinds.values():
            status, out = results.get(name, ("", ""))
            if status == "failed":
                failing += [c for c in pitfalls.failing_cases(out, names) if c not in failing]
    return pitfalls.advice(f"{chapter}/{stage}", failing, missed)


def stage_state(kinds, results, broken_reason):
    """A stage's state from its tests' results: (state, detail)."""
    if broken_reason:
        return "does not compile", broken_reason
    states = [results[n] for n in kinds.values() if n in results]
    if not states:
        return "not run", ""
    if any(s == "failed" for s, _ in states):
        return "failed", next(
            (first_failure(o) for s, o in states if s == "failed" and first_failure(o)), ""
        )
    if all(s == "skipped" for s, _ in states):
        text = " ".join(o for _, o in states)
        if "TODO" in text:
            return "TODO", ""
        if "GPU" in text or "driver" in text:
            return UNTESTED, ""
        return "skipped", text.strip().splitlines()[0] if text.strip() else ""
    return "passed", ""


def stage_selection(arg):
    """STAGE as ctest's -R. A name that resolves to one stage (course.match_stage: the whole id or
    the unambiguous start of one) selects that stage alone, the reference's unless exercise/ is
    given, as every other target reads a stage name; anything else is a regex over test names."""
    if not arg:
        return arg
    found, _ = course.parse_stage(arg, ROOT)
    return f"{found.variant}/{found.id}" if found else arg


def run(args):
    started = time.monotonic()
    build = ROOT / args.build if not os.path.isabs(args.build) else pathlib.Path(args.build)
    wrong = verdicts.validate([f"GRADES={args.grades}", f"GRADING={args.grading}"])
    if wrong:
        print(wrong)
        return 2
    refresh_configuration(build)
    selected = stage_selection(args.stage)
    if selected != args.stage:
        yours = (
            f"; your stage is STAGE=exercise/{selected.split('/', 1)[1]}"
            if selected.startswith("solution/")
            else ""
        )
        print(f"check: STAGE={args.stage} selects {selected}{yours}")
    args.stage = selected
    # One exercise stage whose lesson headers from earlier stages are still stubs: say which, first.
    for line in hints.prerequisite_lines(args.stage):
        print(line)
    tests = list_tests(build, args.stage)
    if not tests:
        chapters = course.chapters(ROOT)
        print(
            f"check: no test matches STAGE={args.stage}. Stages are named <variant>/<chapter>/<stage>, e.g. "
            f"exercise/13-scan/04_two_level; chapters: {', '.join(chapters)}; `make help` lists every stage."
        )
        return 2
    reason = gpu_reason()
    manifest = read_test_manifest(build)
    # Without a GPU only what can run here is built: every selected stage's objects (so a stage
    # that does not compile is found) and the host tests' programs. The GPU test programs and the
    # wrong variants would only be skipped. ALL=1 (--everything) builds and runs every test anyway.
    offline = bool(reason) and not args.everything
    if reason:
        print(
            f"note: {reason}: GPU tests are not run here"
            + (
                "; every selected stage is compiled, and the host tests run (chapter 14's CPU stage among them)"
                if offline
                else " (reported as Skipped); host tests run"
            )
        )

    # Which programs the selected tests need (build/tests.json), and which stage each test belongs to.
    programs, by_stage, offline_skip = {}, {}, {}
    for t in tests:
        s = course.stage_test(t["name"])
        if s and s[0] != "wrong":
            by_stage.setdefault(key(*s[:3]), {})[s[3]] = t["name"]
        if offline and "host" not in labels_of(t):
            obj = object_of(t, manifest)
            if obj:
                programs.setdefault(obj, []).append(t["name"])
                offline_skip[t["name"]] = obj
            continue
        for prog in programs_of(t, manifest):
            programs.setdefault(prog, []).append(t["name"])
    # One stage selected on a GPU: the judge programs of its speed verdict, its own and the solution's.
    judged = sorted(by_stage)
    if len(judged) == 1 and not reason:
        variant, chapter, stage = judged[0].split("/")
        if variant == "exercise" and isinstance(
            lesson.declaration(f"{chapter}/{stage}").get("speed"), dict
        ):
            for v in ("exercise", "solution"):
                programs.setdefault(course.judge_program(v, chapter, stage), [])
    broken = build_targets(
        build, set(programs), args.jobs, everything=not args.stage and not offline
    )
    broken_tests = {n: broken[p] for p, names in programs.items() if p in broken for n in names}
    for program, reason_text in sorted(broken.items()):
        print(f"check: {program} does not compile, its tests are left out: {reason_text}")

    runnable = [
        t["name"]
        for t in tests
        if t["name"] not in broken_tests
        and t["name"] not in offline_skip
        and (not offline or "host" in labels_of(t))
    ]
    results = run_ctest(build, runnable, args.jobs)
    todo = {
        f"{m['variant']}.{m['id'].replace('/', '.')}" for m in read_manifest(build) if m.get("todo")
    }
    for n, obj in offline_skip.items():
        if n not in broken_tests:
            results[n] = (
                "skipped",
                "COURSE_SKIP: TODO" if obj in todo else f"COURSE_SKIP: GPU tests skipped: {reason}",
            )
    for n, why in broken_tests.items():
        results[n] = ("failed", "does not compile: " + why)

    # One stage selected, its tests run: the sanitizers too.
    sanitizers = {}
    stage_keys = sorted(by_stage)
    if len(stage_keys) == 1 and not reason:
        k = stage_keys[0]
        ran = [results.get(n, ("", ""))[0] for n in by_stage[k].values()]
        if ran and all(s in ("passed", "failed") for s in ran) and "host" not in by_stage[k]:
            main = by_stage[k].get("tests")
            program = next(iter(programs_of({"name": main}, manifest)), None) if main else None
            if program and (build / "bin" / program).is_file():
                sanitizers[k] = run_sanitizers(build, build / "bin" / program, k)

    # One stage selected, its tests and sanitizers clean: what it teaches.
    lessons = {}
    if len(stage_keys) == 1:
        k = stage_keys[0]
        state, _ = stage_state(
            by_stage[k],
            results,
            next((broken_tests[n] for n in by_stage[k].values() if n in broken_tests), None),
        )
        clean = not any(v == "errors" for v in sanitizers.get(k, {}).values())
        if state in ("passed", UNTESTED) and clean:
            lessons[k] = lesson_checks(build, k, gpu=not reason)

    # The summary, and progress.json.
    progress = load_progress(build)
    counts = {}
    lines = []
    for k in stage_keys:
        kinds = by_stage[k]
        reason_text = next((broken_tests[n] for n in kinds.values() if n in broken_tests), None)
        state, detail = stage_state(kinds, results, reason_text)
        if (
            k in sanitizers
            and state == "passed"
            and any(v == "errors" for v in sanitizers[k].values())
        ):
            state = "failed"
            detail = "the sanitizers report errors"
        if k in lessons:
            checks = lessons[k]
            if checks["sass"]["verdict"] == "missed":
                state, detail = "misses its SASS signature", checks["sass"]["detail"]
            elif checks["speed"]["verdict"] == "slow" and state == "passed":
                state, detail = "correct, but slow", checks["speed"]["detail"]
        variant = k.split("/")[0]
        counts.setdefault(variant, {})
        counts[variant][state] = counts[variant].get(state, 0) + 1
        entry = {"state": state, "date": now()}
        if detail:
            entry["detail"] = detail
        earlier = progress["stages"].get(k, {})
        if k in sanitizers:
            entry["sanitizers"] = sanitizers[k]
        elif "sanitizers" in earlier and state != "TODO":
            entry["sanitizers"] = earlier[
                "sanitizers"
            ]  # kept until the next sanitizer run of the stage
        if k in lessons:
            entry.update(lessons[k])
        elif state in ("TODO", "failed", "does not compile"):
            pass  # the lesson checks of an earlier run no longer hold
        else:
            for what in ("speed", "sass"):
                if what in earlier:
                    entry[what] = earlier[what]
        progress["stages"][k] = entry
        if state not in ("TODO",) and (
            k.startswith("exercise/") or state not in ("passed", UNTESTED)
        ):
            lines.append(f"  {k}: {state}" + (f": {detail}" if detail else ""))
            if state in ("failed", "misses its SASS signature"):
                lines += pitfall_lines(k, kinds, results, lessons)
    save_progress(build, progress)

    failed_other = [
        n for n, (s, _) in results.items() if s == "failed" and not course.stage_test(n)
    ]
    wrong_failed = [
        n
        for n, (s, _) in results.items()
        if s == "failed" and (course.stage_test(n) or ("",))[0] == "wrong"
    ]
    order = [
        "passed",
        "correct, but slow",
        "misses its SASS signature",
        "failed",
        UNTESTED,
        "TODO",
        "does not compile",
        "skipped",
        "not run",
    ]
    print()
    for variant in ("exercise", "solution"):
        if variant in counts:
            parts = [f"{counts[variant][s]} {s}" for s in order if counts[variant].get(s)]
            print(f"{variant} stages: " + "; ".join(parts))
    if not counts:
        print("stages: none selected")
    for line in lines:
        print(line)
    for n in wrong_failed:
        print(f"  {n}: a deliberately wrong stage was accepted by the tests")
    for n in failed_other:
        out = results[n][1]
        why = first_failure(out) or next(
            (l.strip() for l in reversed(out.splitlines()) if l.strip()), ""
        )
        print(
            f"  {n}: failed"
            + (f": {why}" if why else "")
            + f" (ctest --test-dir {build} -R '^{n}$' "
            "--output-on-failure shows it all)"
        )
    if not args.stage:
        print(
            "`make progress` shows every stage's state; `make check STAGE=exercise/<chapter>/<stage>` checks one "
            "stage completely (its tests; on a GPU the sanitizers and its speed; with cuobjdump its SASS)."
        )
    # The same verdicts for graders: BUILD/verdicts.json, and with GRADES=DIR junit.xml and results.json.
    verdicts.after_check(
        build,
        args.grades,
        args.grading,
        verdicts.from_check(
            build,
            args.stage,
            results,
            by_stage,
            sanitizers,
            lessons,
            {
                k: (progress["stages"][k]["state"], progress["stages"][k].get("detail", ""))
                for k in stage_keys
            },
            reason,
            time.monotonic() - started,
            {n: first_failure(o) for n, (s, o) in results.items() if s == "failed"},
        ),
    )
    bad = sum(
        c.get("failed", 0)
        + c.get("does not compile", 0)
        + c.get("correct, but slow", 0)
        + c.get("misses its SASS signature", 0)
        for c in counts.values()
    )
    bad += len(wrong_failed) + len(failed_other) + len([p for p in broken if p not in programs])
    return 1 if bad else 0


# --- progress -----------------------------------------------------------------------------------
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
TODO_LINE = re.compile(r"^[ \t]*COURSE_TODO\(\);", re.M)


def todo_files(chapter, stage):
    """The exercise files that still hold the stub for a stage: its own file and the lesson headers it
    includes (a header mirrored in solutions/<chapter>/), followed through their includes as the
    build follows them (cmake/CourseStages.cmake)."""
    folder, lessons = ROOT / "chapters" / chapter, ROOT / "solutions" / chapter
    queue, seen, todo = [folder / f"{stage}.cu"], set(), []
    while queue:
        path = queue.pop(0)
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = path.read_text(errors="replace")
        if TODO_LINE.search(text):
            todo.append(path)
        queue += [folder / name for name in INCLUDE.findall(text) if (lessons / name).is_file()]
    return todo, seen


def speed_cell(rec):
    sp = (rec or {}).get("speed") or {}
    verdict = sp.get("verdict", "")
    if "ratio" in sp:
        return f"{sp['ratio']:.2f}x" + (
            "" if verdict == "passed" else " slow" if verdict == "slow" else " noisy"
        )
    return {
        "not a speed lesson": "not a lesson",
        "needs a GPU": "needs GPU",
        "": "not run",
        "todo": "TODO",
    }.get(verdict, verdict)


def sass_cell(rec):
    verdict = ((rec or {}).get("sass") or {}).get("verdict", "")
    return {"": "not run", "none": "no GPU code"}.get(verdict, verdict)


def progress(args):
    """Each exercise stage from what the last runs recorded: nothing is built or run."""
    build = ROOT / args.build if not os.path.isabs(args.build) else pathlib.Path(args.build)
    loaded = load_progress(build)
    recorded, hints_taken = loaded["stages"], loaded.get("hints", {})
    total = {}
    for chapter in course.chapters(ROOT):
        stages = course.stages(chapter, ROOT)
        print(f"\n{chapter}")
        print(f"  {'stage':26} {'answer':29} {'sanitizers':16} {'speed':12} {'SASS':12} hints")
        try:
            ladders = {s: len(course.stage_hints(f"{chapter}/{s}")) for s in stages}
        except course.UsageError:
            ladders = {}
        for stage in stages:
            k = key("exercise", chapter, stage)
            rec = recorded.get(k)
            todo, files = todo_files(chapter, stage)
            if todo:
                state = "TODO"
            elif rec:
                state = rec["state"]
                when = datetime.datetime.strptime(rec["date"], "%Y-%m-%d %H:%M")
                newest = max((f.stat().st_mtime for f in files), default=0)
                if datetime.datetime.fromtimestamp(newest) > when + datetime.timedelta(minutes=1):
                    state = "edited since: " + state
            else:
                state = "written, not checked"
            san = sp = sa = ""
            if not todo:
                vals = (rec or {}).get("sanitizers")
                san = (
                    (
                        "clean"
                        if all(v == "clean" for v in vals.values())
                        else ", ".join(f"{t} {v}" for t, v in vals.items() if v != "clean")
                    )
                    if vals
                    else "not run"
                )
                sp, sa = speed_cell(rec), sass_cell(rec)
            short = (
                state if len(state) <= 28 else state[:25] + "..."
            )  # two spaces before the next column
            total[state.split(":")[-1].strip()] = total.get(state.split(":")[-1].strip(), 0) + 1
            # Hints taken of the stage's ladder (make hint): blank when it has none.
            ladder = ladders.get(stage, 0)
            hint = f"{hints_taken.get(k, 0)}/{ladder}" if ladder else ""
            print(f"  {stage:26} {short:29} {san:16} {sp:12} {sa:12} {hint:6}".rstrip())
    print("\n" + "; ".join(f"{v} {k}" for k, v in sorted(total.items())))
    print(
        "speed: your stage's speed over the reference solution's, timed interleaved by make check STAGE=exercise/...;"
        " SASS: its instructions against the stage's signature (chapters/<chapter>/lessons.toml);"
        " hints: taken of the stage's ladder (make hint STAGE=exercise/<chapter>/<stage>)"
    )
    if not recorded:
        print(
            "(nothing recorded yet in "
            + str(build.relative_to(ROOT) if build.is_relative_to(ROOT) else build)
            + "/progress.json: `make check` records each stage it runs)"
        )
    return 0


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--build", default="build")
    r.add_argument("--stage", default="")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    r.add_argument(
        "--everything",
        action="store_true",
        help="build and run every test even without a GPU (make check ALL=1; CI's strict pass)",
    )
    r.add_argument(
        "--grades", default="", help="folder for junit.xml and results.json (make check GRADES=DIR)"
    )
    r.add_argument(
        "--grading",
        default="",
        help="points, weights and visibility (GRADING=FILE; docs/grading.md)",
    )
    p = sub.add_parser("progress")
    p.add_argument("--build", default="build")
    args = parser.parse_args()
    return run(args) if args.command == "run" else progress(args)


if __name__ == "__main__":
    sys.exit(main())
