#!/usr/bin/env python3
"""A stage's hint ladder: `make hint STAGE=exercise/<chapter>/<stage>`.

    hints.py show STAGE [--all | --n K] [--build DIR]
        the next hint not yet shown, "hint k of n" (each call one rung further);
        --all every hint up to the last, --n K hint K again (neither counts as a new one)
    hints.py taken [--build DIR]
        the hints taken, per stage, as `make progress` reads them

The ladder of a stage is its lessons.toml table's `hints`, an array of strings, in the order a
student should want them (chapters/<chapter>/lessons.toml):
    1. where to look in the book, and which concept the stage rests on;
    2. the approach, in words;
    3. near-code: the shape of the lines, for when the approach is clear and the code is not.
The text of the stage (README section, file comment, region BEGIN line) says the problem and the
idea; the ladder holds the steps, so a student takes them only when they choose to.

How many hints a student took is recorded in BUILD/progress.json ("hints": {stage key: count}),
beside the states `make check` records there, so `make progress` shows it.
"""

import argparse
import json
import os
import pathlib
import signal
import sys
import textwrap

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import course  # noqa: E402

ROOT = course.ROOT
EXAMPLE = "make hint STAGE=exercise/12-reduction/04_single_pass"


def build_dir(arg, root=ROOT):
    path = pathlib.Path(arg)
    return path if path.is_absolute() else pathlib.Path(root) / path


def load(build):
    """BUILD/progress.json as a dict ({"stages": {}} when absent or unreadable)."""
    path = build / "progress.json"
    try:
        data = json.loads(path.read_text())
        if isinstance(data, dict):
            data.setdefault("stages", {})
            return data
    except (OSError, ValueError):
        pass
    return {"stages": {}}


def record(build, stage_key, count):
    """Raises the number of hints taken for stage_key to count (never lowers it), keeping the rest
    of progress.json as it is: check.py writes the stages' states into the same file."""
    build.mkdir(parents=True, exist_ok=True)
    data = load(build)
    taken = data.setdefault("hints", {})
    if count > taken.get(stage_key, 0):
        taken[stage_key] = count
        path = build / "progress.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)


def taken(build):
    """{stage key (exercise/<chapter>/<stage>): hints taken}."""
    return {k: v for k, v in load(build).get("hints", {}).items() if isinstance(v, int)}


def resolve(arg, root=ROOT):
    """The stage an argument names, as exercise/<chapter>/<stage> (a hint is for the student's copy;
    solution/ and a bare <chapter>/<stage> name the same stage here). UsageError: one line."""
    found, _ = course.parse_stage(arg or "", root)
    if not found or (arg or "").strip().startswith("wrong/"):
        raise course.UsageError(
            course.stage_error("hint", arg, root, EXAMPLE)
            or f"hint: '{arg}' is a file; name a stage, e.g. {EXAMPLE}"
        )
    return f"exercise/{found.id}", found.id


def render(k, ladder, text):
    """'hint k of n:' and the hint, its prose paragraphs wrapped, its indented ones (code) as written."""
    out = [f"hint {k} of {len(ladder)}:"]
    for para in text.strip("\n").split("\n\n"):
        lines = para.split("\n")
        if all(line.startswith("  ") or not line.strip() for line in lines):
            out += [("    " + line).rstrip() for line in textwrap.dedent(para).split("\n")]
        else:
            out.append(
                textwrap.fill(
                    " ".join(para.split()), width=96, initial_indent="  ", subsequent_indent="  "
                )
            )
    return "\n".join(out)


def show(args, root=ROOT):
    stage_key, stage_id = resolve(args.stage, root)
    ladder = course.stage_hints(stage_id, root)
    if not ladder:
        print(
            f"hint: {stage_id} has no hints yet (its README section and the region's BEGIN line "
            f"are all there is); `make lessons CHAPTER={stage_id.split('/')[0]}` says what it is judged on"
        )
        return 1
    build = build_dir(args.build, root)
    before = taken(build).get(stage_key, 0)
    if args.n is not None:
        if not 1 <= args.n <= len(ladder):
            print(f"hint: N={args.n}: {stage_id} has hints 1 to {len(ladder)}")
            return 2
        if args.n > before:
            print(
                f"hint: hint {args.n} of {len(ladder)} is further than you have gone "
                f"({before} taken); `make hint STAGE={stage_key}` shows hint {before + 1}"
            )
            return 2
        shown = [args.n]
    elif args.all:
        if before == 0:
            print(
                f"hint: no hint of {stage_id} taken yet; `make hint STAGE={stage_key}` shows the first"
            )
            return 2
        shown = list(range(1, before + 1))
    else:
        if before >= len(ladder):
            print(
                f"hint: all {len(ladder)} hints of {stage_id} taken; ALL=1 shows them again, N=k one of them"
            )
            return 0
        shown = [before + 1]
        record(build, stage_key, before + 1)
    print(f"{stage_id}")
    for k in shown:
        print(render(k, ladder, ladder[k - 1]))
    last = max(shown)
    if not (args.all or args.n) and last < len(ladder):
        print(
            f"(the next, hint {last + 1}: make hint STAGE={stage_key}; "
            f"ALL=1 shows again those you took)"
        )
    return 0


# --- prerequisites: regions of earlier stages that a stage runs --------------------------------------
def prerequisites(stage_id, root=ROOT):
    """The regions a stage runs but does not teach (in the lesson headers of earlier stages that it
    includes, as the build follows the includes) that are still stubs in chapters/: a list of
    (header file, region number, region label, the stage that teaches it), in course order. The
    stage reports TODO until they are written: `make check` names them before it builds."""
    import exercises  # the mirror's parser and the lesson headers' users (harness/exercises.py)

    chapter, stage = stage_id.split("/", 1)
    users = exercises.lesson_users(chapter, pathlib.Path(root))
    found = []
    for header, stages in sorted(users.items(), key=lambda item: (item[1][0], item[0])):
        if stage not in stages[1:]:
            continue
        solution = pathlib.Path(root) / "solutions" / chapter / header
        exercise = pathlib.Path(root) / "chapters" / chapter / header
        try:
            s_parts, s_hints = exercises.parse(solution.read_text(), header)
            e_parts, e_hints = exercises.parse(exercise.read_text(), header, s_hints)
        except (OSError, exercises.ParseError):
            continue
        for k, body in enumerate(e_parts[1::2]):
            if exercises.is_stub(body):
                hint = e_hints[k] if k < len(e_hints) else ()
                found.append((header, k + 1, exercises.label(hint), stages[0]))
    return found


def prerequisite_lines(stage_key, root=ROOT):
    """What `make check` says before it builds a stage whose earlier regions are still stubs
    (none when there are none, or when stage_key is not one exercise stage)."""
    found_stage, _ = course.parse_stage(stage_key or "", root)
    if not found_stage or found_stage.variant != "exercise":
        return []
    todo = prerequisites(found_stage.id, root)
    if not todo:
        return []
    chapter = found_stage.chapter
    teachers = list(dict.fromkeys(t for *_, t in todo))
    head = (
        f"check: {found_stage.id} runs {len(todo)} region(s) of earlier stages that are still stubs, and "
        f"reports TODO until they are written (the stages that teach them: {', '.join(teachers)}):"
    )
    lines = textwrap.wrap(head, width=100, subsequent_indent="  ", break_on_hyphens=False)
    lines += [
        f"  chapters/{chapter}/{header}, region {k} {name} (taught by {teacher})"
        for header, k, name, teacher in todo
    ]
    return lines


def list_taken(args, root=ROOT):
    for k, v in sorted(taken(build_dir(args.build, root)).items()):
        print(f"{k}: {v}")
    return 0


def main(argv=None):
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `make hint ... | head` ends quietly
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("show")
    s.add_argument("stage", nargs="?", default="")
    group = s.add_mutually_exclusive_group()
    group.add_argument("--all", action="store_true")
    group.add_argument("--n", type=int)
    s.add_argument("--build", default="build")
    t = sub.add_parser("taken")
    t.add_argument("--build", default="build")
    args = parser.parse_args(argv)
    try:
        return show(args) if args.command == "show" else list_taken(args)
    except course.UsageError as err:
        print(err)
        return err.status


if __name__ == "__main__":
    sys.exit(main())
