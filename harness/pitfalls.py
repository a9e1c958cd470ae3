#!/usr/bin/env python3
"""Known mistakes: the wrong variants as a catalogue that names a student's pitfall.

The catalogue is declared in one place, the chapters' course_add_wrong_variant calls (course.py
reads them: each variant's stage, NAME and WHY). What each one fails is measured: on a GPU
machine, `make check ALL=1` runs every wrong variant, and `record` reads that run's results and
writes, per chapter, reference/<gpu>/<chapter>/pitfalls.json (stamped: stamps.py): for each
variant the test cases that failed on it, or for a SASS variant the rules it missed.

When `make check STAGE=exercise/...` finds a stage failing, it asks `advice`: a known variant of
that stage with the same failing test cases (or the same missing SASS fact) is named, with its
WHY, and the stage's hint ladder (`make hint STAGE=...`).

    pitfalls.py record [--build DIR] [--results FILE] [--gpu h200]
        (after make check ALL=1 on a GPU machine) each wrong variant's failing cases or missed
        rules, from FILE (default DIR/check-results.xml, the check's ctest results), into
        reference/<gpu>/<chapter>/pitfalls.json, and its stamp into that folder's stamps.json.
    pitfalls.py record --run [--build DIR] [--jobs N] [--gpu h200] [--chapters "CH ..."]
        (GPU machine) the same without a whole make check: builds the wrong variants (targets),
        runs their tests (ctest -L wrong, sanitizer and speed ones aside) into
        DIR/pitfalls-results.xml, and records from it; --chapters: only those chapters' variants
        and records (make reference STALE=1 asks for the chapters whose record is stale).
    pitfalls.py build [--build DIR] [--jobs N] [--chapters "CH ..."]
        builds the wrong variants and nothing else (make reference, beside its profile step).
    pitfalls.py targets
        the build targets of the wrong variants whose record needs them (tests and SASS).
    pitfalls.py show [CHAPTER]
        the catalogue: per stage, each known mistake, its why and what it fails (as recorded).

A variant found only by a sanitizer (TOOL racecheck, memcheck, synccheck) or by its speed is
recorded as such; the student's sanitizer verdict explains those itself (sanitizer_report.py).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402  (the catalogue: course.wrong_variants)
import stamps  # noqa: E402  (the record's stamp)

ROOT = course.ROOT
SCHEMA = "cuda-course-pitfalls/1"
RECORD = "pitfalls.json"
# The failing "case" of a run that never finished (the test main's watchdog line).
HANG = "(a hang: the tests did not finish)"
# Catch's console header of a failing test case: a rule of dashes, the case's name (wrapped at 79
# columns) and its sections (indented), another rule.
RULE = "-" * 79
HEADER = re.compile(rf"^{RULE}\n(.*?)\n{RULE}$", re.M | re.S)
TEST_CASE = re.compile(r'\bTEST_CASE\s*\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+),?\s*("[^"]*")?')
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
MISSED = re.compile(r"SASS signature missed(?: \([^)]*\))?: '([^']+)'")


# ---------------------------------------------------------------- reading test output


def case_names(chapter, test_file, root=ROOT, tag=None):
    """The TEST_CASE names of a chapter's test file, as written (adjacent literals joined); with
    tag, only those whose tags hold it ("[sweep]")."""
    path = Path(root) / "chapters" / chapter / test_file
    try:
        text = path.read_text()
    except OSError:
        return []
    return [
        "".join(bytes(s, "utf-8").decode("unicode_escape") for s in LITERAL.findall(m.group(1)))
        for m in TEST_CASE.finditer(text)
        if tag is None or tag in (m.group(2) or "")
    ]


def _squeezed(text):
    return re.sub(r"\s+", "", text)


def failing_cases(output, names=()):
    """The test cases that failed in a Catch console output, in order, each once: a header's case
    is the longest of names its text starts with (Catch wraps a long name over lines, and puts
    the sections below it), else the header's first line. HANG when the run did not finish."""
    known = sorted(((_squeezed(n), n) for n in names), key=lambda kv: -len(kv[0]))
    found = []
    for m in HEADER.finditer(output):
        block = m.group(1)
        flat = _squeezed(block)
        name = next((n for sq, n in known if sq and flat.startswith(sq)), None)
        name = name or block.splitlines()[0].strip()
        if name not in found:
            found.append(name)
    if re.search(r"^TIMEOUT: ", output, re.M) and HANG not in found:
        found.append(HANG)
    return found


def missed_rules(output):
    """The SASS rules (their labels, lesson.Rule.label) a verdict's lines say were missed."""
    return list(dict.fromkeys(MISSED.findall(output)))


# ---------------------------------------------------------------- the record


def record_path(chapter, gpu=course.REFERENCE_DIR, root=ROOT):
    return course.evidence_dir(chapter, root, gpu) / RECORD


def load(chapter, gpu=course.REFERENCE_DIR, root=ROOT):
    """{'<stage>.<name>': {"tool": ..., "failing": [...]} or {"missed": [...]}} of a chapter's
    record ({} when none was made)."""
    path = record_path(chapter, gpu, root)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc.get("variants", {}) if doc.get("schema") == SCHEMA else {}


def read_results(path):
    """{test name: (status, output)} of a ctest JUnit file (check.py's check-results.xml)."""
    tree = ET.parse(path)
    results = {}
    for case in tree.getroot().iter("testcase"):
        out = case.findtext("system-out") or ""
        skipped = case.find("skipped") is not None or "COURSE_SKIP:" in out
        failed = case.get("status") == "fail" or case.find("failure") is not None
        results[case.get("name")] = (
            "skipped" if skipped else "failed" if failed else "passed",
            out,
        )
    return results


def measure(variant, results, root=ROOT):
    """What one wrong variant failed in a check's results: {"tool", "failing" | "missed"}, or a
    str saying why nothing was recorded."""
    if variant.tool not in ("", "sass"):
        # Found by a sanitizer or by its speed: the student's own verdict explains those (the
        # sanitizer's report, the speed ratio); the catalogue keeps the tool it is found by.
        return {"tool": variant.tool}
    test = course.test_name("wrong", variant.chapter, f"{variant.stage}.{variant.name}", "wrong")
    if test not in results:
        return f"{test} is not in the results (make check ALL=1 runs it)"
    status, out = results[test]
    if status == "skipped":
        return f"{test} was skipped: " + next(
            (
                l.split("COURSE_SKIP:", 1)[1].strip()
                for l in out.splitlines()
                if "COURSE_SKIP:" in l
            ),
            "no GPU or tool",
        )
    if status == "failed":
        return f"{test} failed (the wrong stage was accepted, or its run crashed): see its output"
    entry = {"tool": variant.tool}
    if variant.tool == "sass":
        entry["missed"] = missed_rules(out)
    elif not variant.tool:
        entry["failing"] = failing_cases(out, case_names(variant.chapter, variant.test, root))
        if not entry["failing"]:
            return f"{test}: no failing test case found in its output (ctest kept only part of it?)"
    return entry


def record(results_path, gpu=course.REFERENCE_DIR, root=ROOT, command="", chapters=None):
    """Writes each chapter's pitfalls.json (of `chapters`, or every chapter) from a check's
    results and stamps it; returns lines to print."""
    results = read_results(results_path)
    by_chapter = {}
    for v in course.wrong_variants(root):
        if chapters is None or v.chapter in chapters:
            by_chapter.setdefault(v.chapter, []).append(v)
    lines = []
    run = stamps.run_facts(course.gpu_name() or gpu, command or "pitfalls.py record", root)
    for chapter, variants in sorted(by_chapter.items()):
        recorded, left = {}, {}
        for v in variants:
            got = measure(v, results, root)
            (left if isinstance(got, str) else recorded)[f"{v.stage}.{v.name}"] = got
        path = record_path(chapter, gpu, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"schema": SCHEMA, "run": run, "variants": recorded, "not_recorded": left}
        path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        # The stamp: the record's sources now (stamps.sources_of), the folder's run kept.
        folder = path.parent
        stamp = stamps.load(folder)
        sources = stamps.sources_of(chapter, RECORD, root)
        stamp["artefacts"][RECORD] = {"hash": stamps.source_hash(sources, root), "sources": sources}
        stamp.setdefault("schema", stamps.SCHEMA)
        stamps.save(folder, stamp)
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        lines.append(
            f"{chapter}: {len(recorded)} of {len(variants)} wrong variants recorded in {shown}"
            + (f"; not recorded: {len(left)} (first: {next(iter(left.values()))})" if left else "")
        )
    return lines


# ---------------------------------------------------------------- matching


def _jaccard(a, b):
    return len(a & b) / len(a | b) if a | b else 0.0


def match(stage_id, failing=(), missed=(), root=ROOT, gpu=course.REFERENCE_DIR):
    """[(WrongVariant, how)] of the stage's known mistakes that a student's failure matches, best
    first: how is "same" (the same failing test cases, or every SASS rule the variant misses
    missed too) or "close" (most of the same failing cases: a Jaccard overlap of 0.6 or more).
    Among equals all are given: mistakes that fail the same cases cannot be told apart by them."""
    chapter, stage = stage_id.split("/", 1)
    record_of = load(chapter, gpu, root)
    failing, missed = set(failing), set(missed)
    scored = []
    for v in course.wrong_variants(root):
        entry = record_of.get(f"{v.stage}.{v.name}")
        if v.chapter != chapter or v.stage != stage or not entry:
            continue
        theirs_failing, theirs_missed = set(entry.get("failing", [])), set(entry.get("missed", []))
        # The seeded random sweep fails or not by the run's seed: the fixed cases decide, and
        # the sweep counts only where no fixed case failed on either side.
        sweep = set(case_names(chapter, v.test, root, tag="[sweep]"))
        mine, theirs = failing - sweep, theirs_failing - sweep
        if not mine and not theirs:
            mine, theirs = failing, theirs_failing
        if missed and theirs_missed and theirs_missed <= missed:
            scored.append((2.0, v, "same"))
        elif mine and theirs:
            score = _jaccard(mine, theirs)
            if score == 1.0:
                scored.append((1.0, v, "same"))
            elif score >= 0.6:
                scored.append((score, v, "close"))
    if not scored:
        return []
    best = max(s for s, _, _ in scored)
    return [(v, how) for s, v, how in sorted(scored, key=lambda t: -t[0]) if s == best]


def advice(stage_id, failing=(), missed=(), root=ROOT, gpu=course.REFERENCE_DIR):
    """Lines for make check's summary naming the known pitfall a failure matches, and the
    stage's hint ladder; [] when none matches."""
    found = match(stage_id, failing, missed, root, gpu)
    if not found:
        return []
    what = {
        "same": "missing the same SASS fact as" if missed else "the same failing test cases as",
        "close": "most of the same failing test cases as",
    }
    lines = [
        f"    {what[how]} a known mistake ({v.name}): {v.why}"
        + (f" [in {v.file}]" if v.file != f"{v.stage}.cu" else "")
        for v, how in found
    ]
    return lines + [
        f"    the hints for this stage, one step at a time: make hint STAGE=exercise/{stage_id}"
    ]


# ---------------------------------------------------------------- commands


def cmd_show(args):
    chapters = [args.chapter] if args.chapter else course.chapters(ROOT)
    for chapter in chapters:
        if chapter not in course.chapters(ROOT):
            raise course.UsageError(
                f"pitfalls: no chapter '{chapter}'; chapters: {', '.join(course.chapters(ROOT))}"
            )
        record_of = load(chapter)
        print(
            chapter + ("" if record_of else " (no record yet: pitfalls.py record on a GPU machine)")
        )
        for v in course.wrong_variants(ROOT):
            if v.chapter != chapter:
                continue
            entry = record_of.get(f"{v.stage}.{v.name}", {})
            fails = (
                "misses " + "; ".join(entry["missed"])
                if entry.get("missed")
                else "fails " + "; ".join(entry["failing"])
                if entry.get("failing")
                else f"found by {v.tool}"
                if v.tool
                else "not recorded"
            )
            print(f"  {v.stage}.{v.name}: {v.why}\n    {fails}")
    return 0


def targets(root=ROOT, chapters=None):
    """The build targets of the recorded variants (cmake/CourseStages.cmake's names): a test
    variant's program, a SASS variant's object; of `chapters` only, when given."""
    return [
        f"test.wrong.{v.chapter}.{v.stage}.{v.name}"
        if not v.tool
        else f"wrong.{v.chapter}.{v.stage}.{v.name}"
        for v in course.wrong_variants(root)
        if v.tool in ("", "sass") and (chapters is None or v.chapter in chapters)
    ]


def build_variants(build, jobs, chapters=None):
    """Builds the wrong variants (of `chapters` only, when given): what `record --run` does first,
    and make reference does on the CPU while the profile step has the GPU. False if one failed."""
    wanted = targets(chapters=chapters)
    if not wanted:
        return True
    made = subprocess.run(["cmake", "--build", str(build), "-j", str(jobs), "--target", *wanted])
    return made.returncode == 0


def cmd_build(args):
    if not (Path(args.build) / "CMakeCache.txt").is_file():
        print(f"pitfalls: no build in {args.build}: configure it first (make configure)")
        return 2
    return 0 if build_variants(args.build, args.jobs, set(args.chapters.split()) or None) else 1


def run_variants(build, jobs, chapters=None):
    """Builds the variants and runs their tests (ctest -L wrong, sanitizer and speed runs aside),
    of `chapters` only when given; returns the JUnit file, or None when the build or ctest could
    not run."""
    build = Path(build).resolve()
    if not (build / "CMakeCache.txt").is_file():
        print(f"pitfalls: no build in {build}: configure it first (make configure)")
        return None
    if not targets(chapters=chapters):
        print("pitfalls: no wrong variant in those chapters")
        return None
    if not build_variants(build, jobs, chapters):
        print("pitfalls: some wrong variants did not build (above); the others are recorded")
    junit = build / "pitfalls-results.xml"
    junit.unlink(missing_ok=True)
    subprocess.run(
        [
            "ctest",
            "-L",
            "wrong",
            "-LE",
            "sanitize|speed",
            *(["-R", "/(" + "|".join(sorted(chapters)) + ")/"] if chapters else []),  # NN-name
            "-j",
            str(jobs),
            "--output-junit",
            str(junit),
        ],
        cwd=build,
        stdout=subprocess.DEVNULL,
    )
    return junit if junit.is_file() else None


def cmd_record(args):
    build = Path(args.build)
    chapters = set(args.chapters.split()) or None
    unknown = sorted((chapters or set()) - set(course.chapters()))
    if unknown:
        print(f"pitfalls: no chapter '{unknown[0]}' (chapters: {' '.join(course.chapters())})")
        return 2
    if args.run:
        if course.gpu_reason():
            print(f"pitfalls: record --run needs a GPU ({course.gpu_reason()})")
            return 77
        found = run_variants(build, args.jobs, chapters)
        if not found:
            return 1
        args.results = str(found)
    results = Path(args.results) if args.results else build / "check-results.xml"
    if not results.is_file():
        print(
            f"pitfalls: no {results}: run make check ALL=1 on a GPU machine first (it runs every "
            "wrong variant)"
        )
        return 2
    for line in record(
        results, args.gpu, ROOT, "make check ALL=1; python3 harness/pitfalls.py record", chapters
    ):
        print(line)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record")
    r.add_argument("--build", default=str(ROOT / "build"))
    r.add_argument("--results", default="")
    r.add_argument("--gpu", default=course.REFERENCE_DIR)
    r.add_argument("--run", action="store_true", help="build and run the wrong variants first")
    r.add_argument(
        "--chapters",
        default="",
        help="only these chapters' variants (space-separated; default all)",
    )
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    b = sub.add_parser("build")
    b.add_argument("--build", default=str(ROOT / "build"))
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    b.add_argument("--chapters", default="", help="only these chapters' variants")
    sub.add_parser("targets")
    s = sub.add_parser("show")
    s.add_argument("chapter", nargs="?")
    args = parser.parse_args(argv)
    try:
        return {
            "record": cmd_record,
            "build": cmd_build,
            "show": cmd_show,
            "targets": lambda _: print("\n".join(targets())) or 0,
        }[args.command](args)
    except course.UsageError as err:
        print(err, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
