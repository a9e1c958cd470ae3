#!/usr/bin/env python3
"""Keep chapters/ (exercises) and solutions/ (complete) in step.

A stage file in solutions/<chapter>/ marks the student's part:

    // EXERCISE BEGIN: what to write (the hint may go on over more // lines)
    ...the solution...
    // EXERCISE END

Its twin in chapters/<chapter>/ is the same file with each region's body replaced by the stub
`COURSE_TODO();` (until the student writes their own). Outside the regions the two must be equal,
except for the file's opening comment: the block of // lines at the top (after the SPDX line, up
to the first line that is not a // comment). An exercise's opening comment sets the task (the
idea, the book section, what to watch for); the solution's may explain the answer (where the
fences go, what the SASS shows). So each file keeps its own: check ignores the difference,
generate and reset keep the exercise's (a new exercise starts with the solution's).

Lesson headers are mirrored the same way: every other file in solutions/<chapter>/ (a .cuh or .h
holding a kernel that a stage teaches, e.g. 13-scan/lesson_block_scan.cuh) has its twin in
chapters/<chapter>/, stubbed. Their names start with lesson_, so that a student tells the headers
they edit from the chapter's plumbing (scan_common.cuh); a host test holds the course to it. Only stage files and other lesson headers may include a lesson
header: a chapter header in chapters/ that did would pull in the stub for the solutions too.
The hint is the BEGIN line and the // lines right after it in the solution; in the exercise,
everything after those same hint lines up to END is the student's, comments included. When the
solution's hint changes, the exercise still holds the old one, which git knows: generate takes
the hint of any committed version of the solution as the old hint and writes the new one in its
place, the student's lines below it kept. An old hint that no commit had is a guess: the file is
saved to backups/ first, and generate says so.

A lesson header is the lesson of the first stage that runs it (through its includes, as the
build follows them: cmake/CourseStages.cmake); later stages that include it run the student's
version of it. Resetting a stage resets the lesson headers it teaches, never those of earlier
stages that it only runs (a reset of 13-scan/07_compact would otherwise wipe stages 02 to 05).

  exercises.py check              fail (exit 1) if any pair differs outside the regions and the
                                  opening comments
  exercises.py check|generate --chapter 13-scan    the same, for one chapter (may be repeated)
  exercises.py generate           write chapters/ from solutions/, keeping regions a student filled in
                                  and each exercise's opening comment; a file whose regions no longer
                                  match the solution's is first saved under backups/<chapter>/
  exercises.py reset STAGE        put the stub back in the stage's file and in the lesson headers it
                                  teaches, each first saved to backups/<chapter>/<name>.<date-time>.cu
                                  (.cuh, .h); one line per file, e.g. STAGE=13-scan/04_two_level
                                  (its lesson is all in lesson_two_level.cuh); a lesson header alone by its
                                  file name, e.g. STAGE=13-scan/lesson_block_scan.cuh
"""

import argparse
import datetime
import difflib
import pathlib
import re
import shlex
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course  # noqa: E402  (the stage grammar, the usage error)

ROOT = course.ROOT
BEGIN = re.compile(r"^(\s*)// EXERCISE BEGIN")
END = re.compile(r"^\s*// EXERCISE END")
STUB = "COURSE_TODO();"
SPDX = re.compile(r"^//\s*SPDX-License-Identifier:")


class ParseError(Exception):
    """A stage file whose EXERCISE markers do not pair up."""


# A wrong STAGE: one line for the user, exit status 2.
UsageError = course.UsageError


def now():
    return datetime.datetime.now()  # the backups' time stamp (tests replace it)


def matching_hint(lines, i, candidates):
    """The length of the first of candidates (hints, stripped lines) that the lines from i on
    equal, without running past the region's END; None when none does."""
    for hint in candidates:
        window = [line.strip() for line in lines[i : i + len(hint)]]
        if tuple(window) == tuple(hint) and not any(
            END.match(line) for line in lines[i + 1 : i + len(hint)]
        ):
            return len(hint)
    return None


def is_comment(line):
    """A // line inside a region that is neither of its markers."""
    return line.strip().startswith("//") and not END.match(line) and not BEGIN.match(line)


def parse(text, path, hints=None, history=None, guessed=None):
    """-> (parts, region hints).

    parts: [outside, region body, outside, region body, ..., outside]; each region's hint (its
    BEGIN line and the hint's // continuation lines) ends the outside part before its body.
    region hints: per region, the hint's lines stripped (a tuple).

    hints=None reads a solution: the hint is the BEGIN line and the // lines right after it.
    Given the solution's region hints, reads an exercise: where the lines from BEGIN on equal
    one of those hints (the region's own by position first), exactly those lines are the hint
    and the rest, comments included, is the student's body.

    An exercise generated before the solution's hint changed holds the old hint. history (a
    function -> the region hints of the solution's earlier versions, from git) names the hints
    an earlier generation wrote: the longest one that the lines equal is the hint, so that a hint
    that lost lines leaves none of them behind in the body. Only a hint that matches no version
    at all (an edit not committed, no git) falls back to the solution's rule, taking no more
    lines than the solution's hint at the same position has; the region's number then goes in
    guessed (a list), since its first // lines may be the old hint or the student's comment.
    """
    lines = text.splitlines(keepends=True)
    parts, region_hints, current, i = [], [], [], 0
    while i < len(lines):
        if not BEGIN.match(lines[i]):
            if END.match(lines[i]):
                raise ParseError(f"{path}:{i + 1}: EXERCISE END without BEGIN")
            current.append(lines[i])
            i += 1
            continue
        begin = i
        hint_len = None
        if hints is not None:
            k = len(region_hints)
            hint_len = matching_hint(
                lines,
                i,
                ([hints[k]] if k < len(hints) else []) + sorted(hints, key=len, reverse=True),
            )
            # Asking git costs a process per version: only where an old hint may be in place,
            # that is no current hint matches, or one does and a // line follows it.
            if history is not None and (
                hint_len is None or (i + hint_len < len(lines) and is_comment(lines[i + hint_len]))
            ):
                longer = [h for h in history() if len(h) > (hint_len or 0)]
                hint_len = (
                    matching_hint(lines, i, sorted(longer, key=len, reverse=True)) or hint_len
                )
        if hint_len is None:
            hint_len = 1
            while i + hint_len < len(lines) and is_comment(lines[i + hint_len]):
                hint_len += 1  # the hint's continuation lines
            if hints is not None and len(region_hints) < len(hints):
                # A reworded hint most often keeps its number of lines: the student's comments
                # after it stay theirs.
                hint_len = min(hint_len, len(hints[len(region_hints)]))
                if guessed is not None and (
                    hint_len > 1 or (i + hint_len < len(lines) and is_comment(lines[i + hint_len]))
                ):
                    guessed.append(len(region_hints) + 1)
        current.extend(lines[i : i + hint_len])
        region_hints.append(tuple(line.strip() for line in lines[i : i + hint_len]))
        i += hint_len
        parts.append("".join(current))
        body = []
        while i < len(lines) and not END.match(lines[i]):
            if BEGIN.match(lines[i]):
                raise ParseError(
                    f"{path}:{i + 1}: EXERCISE BEGIN inside the region opened on line {begin + 1}"
                )
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ParseError(f"{path}:{begin + 1}: EXERCISE BEGIN without END")
        parts.append("".join(body))
        current = [lines[i]]  # the END line opens the next outside part
        i += 1
    parts.append("".join(current))
    return parts, region_hints


def hint_history(solution, root):
    """-> a function -> the region hints of every committed version of solution (git log),
    asked once and only when called; [] where git or the repository is missing. An exercise is
    written from some version of its solution, so these are the hints it can hold."""
    found = None

    def hints():
        nonlocal found
        if found is None:
            found = []
            path = "./" + rel(solution, root)  # ./: relative to root, wherever the repository is
            try:
                # --follow: a stage renamed since keeps its hints; --name-only: its name then.
                log = subprocess.run(
                    ["git", "-C", str(root), "log", "--follow", "--format=%x00%H", "--name-only"]
                    + ["--", path],
                    capture_output=True,
                    text=True,
                )
                for entry in log.stdout.split("\0")[1:] if log.returncode == 0 else []:
                    commit, *names = entry.split()
                    if not names:
                        continue  # a merge: its versions are its parents'
                    shown = subprocess.run(
                        ["git", "-C", str(root), "show", f"{commit}:{names[0]}"],
                        capture_output=True,
                        text=True,
                    )
                    try:
                        found += parse(shown.stdout, path)[1] if shown.returncode == 0 else []
                    except ParseError:
                        continue  # a version with unpaired markers wrote no exercise
            except OSError:
                pass  # no git: the hints of the solution as it is now are all there is
            found = list(dict.fromkeys(found))
        return found

    return hints


def split(text, path):
    """A solution's [outside, region body, ..., outside]; the hint stays outside."""
    return parse(text, path)[0]


def indent_of_region(outside_before):
    for line in reversed(outside_before.splitlines()):
        m = BEGIN.match(line)
        if m:
            return m.group(1)
    return ""


def is_stub(body):
    return body.strip() == STUB


def split_opening(text):
    """-> (the SPDX line or '', the opening comment, the rest); the three joined are text.

    The opening comment is the block of // lines right after the SPDX line (or from the first
    line when there is none), up to the first line that is not a // comment or that opens or
    closes an EXERCISE region. It is the one part outside the regions where an exercise may say
    something else than its solution: the exercise sets the task, the solution explains it."""
    lines = text.splitlines(keepends=True)
    start = 1 if lines and SPDX.match(lines[0]) else 0
    end = start
    while (
        end < len(lines)
        and lines[end].lstrip().startswith("//")
        and not BEGIN.match(lines[end])
        and not END.match(lines[end])
    ):
        end += 1
    return "".join(lines[:start]), "".join(lines[start:end]), "".join(lines[end:])


def with_opening(text, own):
    """text with its opening comment replaced by own's (the exercise keeps its own comment)."""
    head, _, rest = split_opening(text)
    return head + split_opening(own)[1] + rest


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


CHAPTERS = None  # --chapter: limit check and generate to these chapters


def stage_pairs(root=None):
    """(solution, exercise) for every mirrored file: stage files, then lesson headers, by chapter."""
    root = root or ROOT
    files = [
        p
        for p in (root / "solutions").glob("*/*")
        if p.is_file()
        and p.suffix in course.MIRRORED
        and (CHAPTERS is None or p.parent.name in CHAPTERS)
    ]
    for solution in sorted(
        files, key=lambda p: (p.parent.name, not course.is_stage_file(p), p.name)
    ):
        yield solution, root / "chapters" / solution.parent.name / solution.name


def lesson_headers(root=None):
    """{chapter: {header file name}} of the chapters worked on (course.lesson_headers)."""
    root = root or ROOT
    found = {
        c: set(course.lesson_headers(c, root))
        for c in course.chapters(root)
        if CHAPTERS is None or c in CHAPTERS
    }
    return {c: names for c, names in found.items() if names}


def exercise_text(solution_parts, bodies=None):
    """The solution with each region's body replaced by bodies[k] (the stub where None)."""
    out = []
    for k, part in enumerate(solution_parts):
        if k % 2 == 0:
            out.append(part)
        elif bodies is not None and bodies[k // 2] is not None:
            out.append(bodies[k // 2])
        else:
            out.append(indent_of_region(solution_parts[k - 1]) + STUB + "\n")
    return "".join(out)


def rel(path, root):
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def backup(exercise, root):
    """Copy the exercise to backups/<chapter>/<stage>.<YYYYmmdd-HHMMSS>.cu (a lesson header keeps
    its own suffix); never overwrites one."""
    folder = root / "backups" / exercise.parent.name
    folder.mkdir(parents=True, exist_ok=True)
    stamp = now().strftime("%Y%m%d-%H%M%S")
    data = exercise.read_bytes()
    n = 1
    while True:
        target = folder / f"{exercise.stem}.{stamp}{'' if n == 1 else f'-{n}'}{exercise.suffix}"
        try:
            with open(target, "xb") as f:
                f.write(data)
            return target
        except FileExistsError:
            n += 1


def check(root=None):
    root = root or ROOT
    problems, count = [], 0
    for solution, exercise in stage_pairs(root):
        count += 1
        if not exercise.exists():
            problems.append(f"{rel(exercise, root)}: missing (make exercises writes it)")
            continue
        actual = exercise.read_text()
        try:
            s_parts, s_hints = parse(solution.read_text(), rel(solution, root))
            e_parts, _ = parse(actual, rel(exercise, root), s_hints, hint_history(solution, root))
        except ParseError as err:
            problems.append(str(err))
            continue
        if len(s_parts) != len(e_parts):
            problems.append(
                f"{rel(exercise, root)}: {len(e_parts) // 2} EXERCISE regions, the solution has {len(s_parts) // 2}"
            )
            continue
        expected = with_opening(exercise_text(s_parts, e_parts[1::2]), actual)
        if expected != actual:
            diff = difflib.unified_diff(
                expected.splitlines(),
                actual.splitlines(),
                "expected (from the solution)",
                rel(exercise, root),
                lineterm="",
                n=1,
            )
            problems.append(
                f"{rel(exercise, root)} differs from {rel(solution, root)} outside the EXERCISE regions "
                f"and the opening comment:\n" + "\n".join(list(diff)[:40])
            )
    for exercise in sorted((root / "chapters").glob("*/[0-9]*.cu")):
        if CHAPTERS is not None and exercise.parent.name not in CHAPTERS:
            continue
        if not (root / "solutions" / exercise.parent.name / exercise.name).exists():
            problems.append(f"{rel(exercise, root)}: no solution beside it in solutions/")
    lessons = lesson_headers(root)
    for chapter, names in sorted(lessons.items()):
        for shared in sorted((root / "chapters" / chapter).glob("*")):
            if (
                not shared.is_file()
                or shared.name in names
                or course.is_stage_file(shared)
                or (root / "solutions" / chapter / shared.name).exists()
            ):
                continue
            try:
                included = set(INCLUDE.findall(shared.read_text(errors="replace"))) & names
            except OSError:
                continue
            for name in sorted(included):
                problems.append(
                    f"{rel(shared, root)} includes the lesson header {name}: the solutions would "
                    f"build on the exercise's stub; include it from the stage files instead"
                )
    if problems:
        print("\n".join(problems))
        print(
            f"exercises out of sync: {len(problems)} problem(s); 'make exercises' regenerates chapters/ from solutions/"
        )
        return 1
    headers = sum(len(v) for v in lessons.values())
    what = f"{count - headers} stage files" + (f" and {headers} lesson headers" if headers else "")
    print(
        f"exercises in sync: {what}, chapters/ equals solutions/ outside the EXERCISE regions "
        f"and the opening comments"
    )
    return 0


def label(hint):
    """A region's name in messages: the start of its hint."""
    text = re.sub(r"^// EXERCISE BEGIN:?\s*", "", hint[0]) if hint else ""
    return f'"{text[:57] + "..." if len(text) > 60 else text}"'


def regions(numbers):
    """[2] -> 'region 2'; [1, 3] -> 'regions 1 and 3'."""
    if len(numbers) == 1:
        return f"region {numbers[0]}"
    return "regions " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"


def match_regions(s_hints, e_hints):
    """For each solution region, the exercise region whose body it keeps (or None).

    By hint first (the same position preferred), then by position among those left."""
    assign, used = [None] * len(s_hints), set()
    for j, hint in enumerate(s_hints):
        if j < len(e_hints) and e_hints[j] == hint:
            assign[j] = j
            used.add(j)
    for j, hint in enumerate(s_hints):
        if assign[j] is None:
            i = next((i for i, h in enumerate(e_hints) if i not in used and h == hint), None)
            if i is not None:
                assign[j] = i
                used.add(i)
    for j in range(len(s_hints)):
        if assign[j] is None and j < len(e_hints) and j not in used:
            assign[j] = j
            used.add(j)
    return assign


def generate(root=None):
    root = root or ROOT
    status = 0
    for solution, exercise in stage_pairs(root):
        try:
            s_parts, s_hints = parse(solution.read_text(), rel(solution, root))
        except ParseError as err:
            print(f"{err}; {rel(exercise, root)} left as it is")
            status = 1
            continue
        if not exercise.exists():
            exercise.parent.mkdir(parents=True, exist_ok=True)
            exercise.write_text(exercise_text(s_parts))
            print(f"wrote {rel(exercise, root)}")
            continue
        old = exercise.read_text()
        notes, why, guessed = [], None, []
        try:
            e_parts, e_hints = parse(
                old, rel(exercise, root), s_hints, hint_history(solution, root), guessed
            )
        except ParseError as err:
            e_bodies, bodies = [], None
            why = f"its EXERCISE markers do not pair up ({err}); it is now the stub"
            written = True
        else:
            e_bodies = e_parts[1::2]
            written = any(not is_stub(b) for b in e_bodies)
            assign = match_regions(s_hints, e_hints)
            bodies = [None if i is None else e_bodies[i] for i in assign]
            if assign != list(range(len(s_hints))) or len(e_hints) != len(s_hints):
                if len(e_hints) != len(s_hints):
                    why = f"the solution has {len(s_hints)} EXERCISE regions, this file had {len(e_hints)}"
                else:
                    moved = [j + 1 for j, i in enumerate(assign) if i != j]
                    why = f"{regions(moved)} of the solution changed (hint or order)"
            elif any(e_hints[j] != s_hints[j] for j in range(len(s_hints))):
                changed = [j + 1 for j in range(len(s_hints)) if e_hints[j] != s_hints[j]]
                why = f"the hint of {regions(changed)} changed in the solution"
            for j, i in enumerate(assign):
                if i is None:
                    notes.append(
                        f"region {j + 1} {label(s_hints[j])} is new: it starts as the stub"
                    )
                elif is_stub(e_bodies[i]):
                    continue
                elif e_hints[i] == s_hints[j]:
                    notes.append(f"kept your region {label(s_hints[j])} (same hint)")
                else:
                    notes.append(
                        f"kept your region {i + 1} under the solution's region {j + 1} "
                        f"{label(s_hints[j])} (by position; the hint changed)"
                    )
            for n in guessed:
                # Which // lines were the old hint is a guess here: the file is saved, even a stub.
                written = True
                notes.append(
                    f"region {n} {label(e_hints[n - 1])}: its hint is none that the solution ever "
                    f"had (git log), so its first {len(e_hints[n - 1])} line(s) were taken as the "
                    f"old hint and the // lines after them kept as yours; delete any that are the "
                    f"old hint"
                )
            for i, body in enumerate(e_bodies):
                if i not in assign and not is_stub(body):
                    notes.append(
                        f"your region {i + 1} {label(e_hints[i])} has no place in the solution now: "
                        f"its text is only in the backup"
                    )
        text = with_opening(exercise_text(s_parts, bodies), old)
        if text == old:
            continue
        if written:
            why = (
                why
                or "the text outside its EXERCISE regions changed (an updated solution, or edits outside a region)"
            )
            saved = backup(exercise, root)
            print(f"saved your version of {rel(exercise, root)} to {rel(saved, root)}: {why}")
            for note in notes:
                print(f"  {note}")
        exercise.write_text(text)
        print(f"wrote {rel(exercise, root)}")
    return status


def lesson_includes(path, names):
    """The lesson headers (of names) that path includes directly, in order."""
    try:
        found = INCLUDE.findall(path.read_text(errors="replace"))
    except OSError:
        return []
    return [n for n in dict.fromkeys(found) if n in names]


def lesson_users(chapter, root):
    """{lesson header: [stages that run it, in course order]}: a stage runs the lesson headers
    its file includes and, through them, the ones they include (the build's rule,
    _course_lesson_includes). Read from solutions/: the includes are outside the regions, where
    the exercise equals its solution."""
    names = lesson_headers(root).get(chapter, set())
    folder = root / "solutions" / chapter
    users = {}
    for stage in (folder / f"{name}.cu" for name in course.stages(chapter, root)):
        seen, queue = [], lesson_includes(stage, names)
        while queue:
            name = queue.pop(0)
            if name not in seen:
                seen.append(name)
                queue += lesson_includes(folder / name, names)
        for name in seen:
            users.setdefault(name, []).append(stage.stem)
    return users


def stage_names(names):
    """['05_vector_io'] -> '05_vector_io'; three names -> 'a, b and c'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def header_role(chapter, name, root):
    """'the lesson of 13-scan/04_two_level; 05_vector_io and 07_compact run it too' for a lesson
    header ('' for one no stage includes): a student resetting it learns which stages turn TODO."""
    stages = lesson_users(chapter, root).get(name, [])
    if not stages:
        return ""
    role = f"the lesson of {chapter}/{stages[0]}"
    if len(stages) > 1:
        role += f"; {stage_names(stages[1:])} run{'s' if len(stages) == 2 else ''} it too"
    return role


def reset_file(name, chapter, root, stage=None):
    """Put the stub back in chapters/<chapter>/<name>, keeping its opening comment, after saving
    it to backups/; -> (the line that says what happened, whether the file changed). stage: the
    stage being reset when name is its own stage file (the line then names the stage, as it always
    did)."""
    solution = root / "solutions" / chapter / name
    exercise = root / "chapters" / chapter / name
    stub = exercise_text(split(solution.read_text(), rel(solution, root)))
    role = "" if stage else header_role(chapter, name, root)
    role = f" ({role})" if role else ""
    if not exercise.exists():
        exercise.parent.mkdir(parents=True, exist_ok=True)
        exercise.write_text(stub)
        return f"{rel(exercise, root)} was missing; wrote the stub{role}", True
    stub = with_opening(stub, exercise.read_text())
    if exercise.read_bytes() == stub.encode():
        return (
            f"{rel(exercise, root)} is already the stub: nothing to save, nothing reset{role}",
            False,
        )
    saved = backup(exercise, root)
    exercise.write_text(stub)
    # The command that puts the student's version back, to paste from the repository root.
    undo = f"; to undo: cp {shlex.quote(rel(saved, root))} {shlex.quote(rel(exercise, root))}"
    if stage:
        return (
            f"saved your version of {stage} to {rel(saved, root)}; "
            f"reset {rel(exercise, root)} to the stub{undo}"
        ), True
    return (
        f"saved your version of {rel(exercise, root)} to {rel(saved, root)}; "
        f"reset it to the stub{role}{undo}"
    ), True


def reset(stage_arg, root=None):
    """Reset a stage: its file and the lesson headers it teaches, one line per file; or one
    lesson header by its name. The lesson headers of earlier stages that it only runs are named
    in a last line, not reset."""
    root = root or ROOT
    stage = course.reset_target(stage_arg, root)
    chapter, name = stage.split("/", 1)
    if "." in name:
        print(reset_file(name, chapter, root)[0])
        return 0
    users = lesson_users(chapter, root)
    teaches = [h for h, stages in users.items() if stages[0] == name]
    runs = [h for h, stages in users.items() if name in stages[1:]]
    solution = root / "solutions" / chapter / f"{name}.cu"
    has_region = len(split(solution.read_text(), rel(solution, root))) > 1
    line, changed = reset_file(f"{name}.cu", chapter, root, stage)
    if has_region or changed or not teaches:
        print(
            line
        )  # a stage with no region of its own: its file is only worth a line if it changed
    for header in teaches:
        print(reset_file(header, chapter, root)[0])
    if runs:
        kept = ", ".join(f"{h} ({users[h][0]})" for h in runs)
        print(
            f"kept the lessons of earlier stages that {stage} runs: {kept}; "
            f"make reset STAGE={chapter}/{runs[0]} resets one"
        )
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--root",
        type=pathlib.Path,
        default=ROOT,
        help="the course's root (default: this repository; the tests use copies)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("check", "generate"):
        sub.add_parser(name).add_argument(
            "--chapter", action="append", help="only this chapter (e.g. 13-scan); may be repeated"
        )
    r = sub.add_parser("reset")
    r.add_argument("stage", nargs="?", default="")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    global CHAPTERS
    CHAPTERS = set(args.chapter) if getattr(args, "chapter", None) else None
    try:
        if args.command == "check":
            return check(root)
        if args.command == "generate":
            return generate(root)
        return reset(args.stage, root)
    except UsageError as err:
        print(err, file=sys.stderr)
        return 2
    except ParseError as err:
        print(f"exercises: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
