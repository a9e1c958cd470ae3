#!/usr/bin/env python3
"""Keep chapters/ (exercises) and solutions/ (complete) in step.

A stage file in solutions/<chapter>/ marks the student's part:

    // EXERCISE BEGIN: what to write (the hint may go on over more // lines)
    ...the solution...
    // EXERCISE END

Its twin in chapters/<chapter>/ is the same file with each region's body replaced by the stub
`COURSE_TODO();` (until the student writes their own). Outside the regions the two must be equal.

  exercises.py check              fail (exit 1) if any pair differs outside the regions
  exercises.py generate           write chapters/ from solutions/, keeping regions a student filled in
  exercises.py reset STAGE        put the stub back in one stage, e.g. 11-streaming/01_grid_stride
"""
import argparse
import difflib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BEGIN = re.compile(r"^(\s*)// EXERCISE BEGIN")
END = re.compile(r"^\s*// EXERCISE END")
STUB = "COURSE_TODO();"


def split(text, path):
    """[outside, region body, outside, region body, ..., outside]; the hint stays outside."""
    lines = text.splitlines(keepends=True)
    parts, current, i = [], [], 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if not m:
            if END.match(lines[i]):
                raise SystemExit(f"{path}:{i + 1}: EXERCISE END without BEGIN")
            current.append(lines[i])
            i += 1
            continue
        current.append(lines[i])
        i += 1
        while i < len(lines) and lines[i].strip().startswith("//") and not END.match(lines[i]):
            current.append(lines[i])  # the hint's continuation lines
            i += 1
        parts.append("".join(current))
        body = []
        while i < len(lines) and not END.match(lines[i]):
            if BEGIN.match(lines[i]):
                raise SystemExit(f"{path}:{i + 1}: nested EXERCISE BEGIN")
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise SystemExit(f"{path}: EXERCISE BEGIN without END")
        parts.append("".join(body))
        current = [lines[i]]  # the END line opens the next outside part
        i += 1
    parts.append("".join(current))
    return parts


def indent_of_region(outside_before):
    for line in reversed(outside_before.splitlines()):
        m = BEGIN.match(line)
        if m:
            return m.group(1)
    return ""


def stage_pairs():
    for solution in sorted((ROOT / "solutions").glob("*/*.cu")):
        yield solution, ROOT / "chapters" / solution.parent.name / solution.name


def exercise_text(solution_parts, keep_bodies=None):
    out = []
    for k, part in enumerate(solution_parts):
        if k % 2 == 0:
            out.append(part)
        elif keep_bodies is not None:
            out.append(keep_bodies[k])
        else:
            out.append(indent_of_region(solution_parts[k - 1]) + STUB + "\n")
    return "".join(out)


def check():
    problems, count = [], 0
    for solution, exercise in stage_pairs():
        count += 1
        if not exercise.exists():
            problems.append(f"{exercise.relative_to(ROOT)}: missing (make exercises writes it)")
            continue
        s_parts = split(solution.read_text(), solution)
        e_parts = split(exercise.read_text(), exercise)
        if len(s_parts) != len(e_parts):
            problems.append(f"{exercise.relative_to(ROOT)}: {len(e_parts) // 2} EXERCISE regions, the solution has {len(s_parts) // 2}")
            continue
        expected = exercise_text(s_parts, keep_bodies=e_parts)
        actual = exercise.read_text()
        if expected != actual:
            diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "expected (from the solution)",
                                        str(exercise.relative_to(ROOT)), lineterm="", n=1)
            problems.append(f"{exercise.relative_to(ROOT)} differs from {solution.relative_to(ROOT)} outside the EXERCISE regions:\n"
                            + "\n".join(list(diff)[:40]))
    for exercise in sorted((ROOT / "chapters").glob("*/[0-9]*.cu")):
        if not (ROOT / "solutions" / exercise.parent.name / exercise.name).exists():
            problems.append(f"{exercise.relative_to(ROOT)}: no solution beside it in solutions/")
    if problems:
        print("\n".join(problems))
        print(f"exercises out of sync: {len(problems)} problem(s); 'make exercises' regenerates chapters/ from solutions/")
        return 1
    print(f"exercises in sync: {count} stage files, chapters/ equals solutions/ outside the EXERCISE regions")
    return 0


def generate():
    for solution, exercise in stage_pairs():
        s_parts = split(solution.read_text(), solution)
        keep = None
        if exercise.exists():
            e_parts = split(exercise.read_text(), exercise)
            if len(e_parts) == len(s_parts):
                keep = e_parts  # the student's regions (or the stubs) survive a regeneration
        text = exercise_text(s_parts, keep)
        if not exercise.exists() or exercise.read_text() != text:
            exercise.parent.mkdir(parents=True, exist_ok=True)
            exercise.write_text(text)
            print(f"wrote {exercise.relative_to(ROOT)}")
    return 0


def reset(stage):
    solution = ROOT / "solutions" / (stage + ".cu")
    if not solution.exists():
        raise SystemExit(f"exercises: no stage {stage} (expected {solution.relative_to(ROOT)})")
    exercise = ROOT / "chapters" / (stage + ".cu")
    exercise.write_text(exercise_text(split(solution.read_text(), solution)))
    print(f"reset {exercise.relative_to(ROOT)} to the stub")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check")
    sub.add_parser("generate")
    r = sub.add_parser("reset")
    r.add_argument("stage")
    args = parser.parse_args()
    if args.command == "check":
        return check()
    if args.command == "generate":
        return generate()
    return reset(args.stage)


if __name__ == "__main__":
    sys.exit(main())
