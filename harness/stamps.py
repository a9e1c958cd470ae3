#!/usr/bin/env python3
"""Stamps: which sources each captured artefact under reference/<gpu>/<chapter>/ was made from.

    stamps.py stale [--gpu h200] [--strict]     the stale and unstamped captures, by name
    stamps.py stamp --gpu h200 [--chapter CH] [--command TEXT]
                                                stamp every artefact of the GPU's folders as made now
                                                from the sources in the tree (make reference runs it)
    stamps.py hash FILE...                      the normalised hash of sources (to compare by hand)

A stamp is the sha256 of an artefact's sources, each normalised so that only a change to the code
changes it: comments (// and /* */, not inside string or character literals) are dropped and the
remaining tokens joined by single spaces, so a comment edit or a clang-format run stales nothing.
Python sources (the chart scripts) are hashed by their syntax tree, without docstrings; CMake files
and lessons.toml by their words outside # comments.

The sources of an artefact (sources_of): a stage's SASS or profile, the stage's solution file and
every local #include "..." it pulls in, transitively, resolved as the build's include paths do
(the including file's folder, solutions/<chapter>/, chapters/<chapter>/, labs/<chapter>/, the
repository root); a chapter's bench results, charts and other captures, the bench's sources (its
labs' kernels among them), every stage's and baseline's, and the harness's bench library (a chart
also the script that draws it, a lab's capture the chapter's capture scripts in labs/<chapter>/).

reference/<gpu>/<chapter>/stamps.json holds, per artefact path (relative to that folder), {hash,
sources}, and the run that made them: commit, date, GPU, command. An artefact moved in without a
capture run has hash null, "pending": true and a reason: it is listed as unstamped, and `stale`
exits 0 for it unless --strict (make reference replaces it with a real stamp).

Exit status of `stale`: 0 nothing stale (pending ones aside), 1 some stale or unstamped, 2 usage.
"""

import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = "cuda-course-stamps/1"
STAMPS = "stamps.json"
# The command that brings the stale captures of a GPU up to date (docs/reference.md).
FIX = "make reference STALE=1 on a GPU machine (it recaptures and restamps what is stale)"
STALE_NOTE = "captured from an older version of this stage"
STAGE_FILE = re.compile(r"^\d\d_\w+$")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".h")

# Tokens of C, C++ and CUDA: comments (dropped), raw strings, strings and characters (kept whole,
# so that '//' inside one is no comment), pp-numbers (1'000'000 stays one token), identifiers, and
# any other character on its own (so that 'a+b' and 'a + b' are the same tokens).
_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)")
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<char>'(?:\\.|[^'\\\n])*')
  | (?P<number>\.?\d(?:[eEpP][+-]|'?[\w.])*)
  | (?P<word>[A-Za-z_]\w*)
  | (?P<space>\s+)
  | (?P<other>.)
""",
    re.S | re.X,
)


def normalise_c(text):
    """The tokens of a C/C++/CUDA source without its comments, joined by single spaces."""
    tokens = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("comment", "space"):
            continue
        if kind == "delim":  # the raw string's inner group: the whole match is the token
            kind = "raw"
        tokens.append(m.group(0))
    return " ".join(tokens)


# CMake and TOML: comments start with # outside a string ("...", and TOML's '...'); CMake's
# bracket comments #[[ ... ]] (or #[==[ ... ]==]) may span lines.
_HASH_TOKEN = re.compile(
    r"""
    (?P<comment>\#\[(?P<eq>=*)\[.*?\](?P=eq)\]|\#[^\n]*)
  | (?P<string>"(?:\\.|[^"\\])*"|'[^'\n]*')
  | (?P<space>\s+)
  | (?P<word>[^\s#"']+)
  | (?P<other>.)
""",
    re.S | re.X,
)


def normalise_hash_comments(text):
    """A CMake or TOML file's words without its comments, joined by single spaces."""
    return " ".join(
        m.group(0) for m in _HASH_TOKEN.finditer(text) if m.lastgroup not in ("comment", "space")
    )


def normalise_python(text):
    """A Python source's syntax tree without docstrings: comments and formatting do not count."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(getattr(body[0], "value", None), ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return canonical(tree)


def canonical(node):
    """A syntax tree as text that one Python version writes as another does: ast.dump's output
    changes between versions (3.12 adds type_params=[] to every def), so empty fields are left out."""
    if isinstance(node, ast.AST):
        fields = (
            f"{name}={canonical(value)}"
            for name, value in ast.iter_fields(node)
            if value is not None and value != []
        )
        return "(" + " ".join([type(node).__name__, *fields]) + ")"
    if isinstance(node, list):
        return "[" + ", ".join(canonical(item) for item in node) + "]"
    return repr(node)


def normalise(path):
    text = Path(path).read_text(errors="replace")
    name = Path(path).name
    if name.endswith(".py"):
        return normalise_python(text)
    if name == "CMakeLists.txt" or name.endswith((".cmake", ".toml")):
        return normalise_hash_comments(text)
    return normalise_c(text)


def source_hash(paths, root=ROOT):
    """sha256 over the sources' names (relative to root) and normalised texts, in a fixed order."""
    digest = hashlib.sha256()
    for path in sorted({Path(p) for p in paths}, key=lambda p: rel(p, root)):
        digest.update(rel(path, root).encode() + b"\0")
        digest.update(normalise(root / rel(path, root)).encode() + b"\0")
    return digest.hexdigest()


def rel(path, root=ROOT):
    path = Path(path)
    return (path.relative_to(root) if path.is_absolute() else path).as_posix()


# ---------------------------------------------------------------- sources of an artefact


def include_dirs(chapter, root=ROOT):
    return [
        root / "solutions" / chapter,
        root / "chapters" / chapter,
        root / "labs" / chapter,
        root,
    ]


def with_includes(files, chapter, root=ROOT):
    """The files and every local #include "..." they pull in, transitively (absolute paths)."""
    found, todo = set(), [Path(f) for f in files]
    while todo:
        path = todo.pop()
        if path in found or not path.is_file():
            continue
        found.add(path)
        for name in INCLUDE.findall(path.read_text(errors="replace")):
            for base in [path.parent, *include_dirs(chapter, root)]:
                if (base / name).is_file():
                    todo.append((base / name).resolve())
                    break
    return found


def stage_sources(chapter, stage, root=ROOT):
    return with_includes([(root / "solutions" / chapter / f"{stage}.cu").resolve()], chapter, root)


def bench_sources(chapter, root=ROOT, stages=True):
    """The chapter's bench and what it times: its own code (not its tests, judge, exercises or the
    exercise twins of lesson headers), its labs' kernels (labs/<chapter>/, not their tests), every
    solution stage (unless not stages: a library row's profile), and the bench and common
    libraries."""
    solutions = [p for p in (root / "solutions" / chapter).glob("*") if p.suffix in SOURCE_SUFFIXES]
    twins = {p.name for p in solutions}
    own = [
        p
        for p in (root / "chapters" / chapter).iterdir()
        if p.suffix in SOURCE_SUFFIXES
        and not p.name.startswith(("test_", "judge_"))
        and not STAGE_FILE.match(p.stem)
        and p.name not in twins
    ]
    labs = root / "labs" / chapter
    own += [
        p
        for p in (labs.iterdir() if labs.is_dir() else [])
        if p.suffix in SOURCE_SUFFIXES and not p.name.startswith("test_")
    ]
    library = [
        *(root / "harness").glob("bench*.cpp"),
        *(root / "common").glob("*.cpp"),
        *(root / "common").glob("*.cu"),
    ]
    return with_includes(
        [p.resolve() for p in own + (solutions if stages else []) + library], chapter, root
    )


# The scripts that draw a chart (plots/README.md says which draws which; make reference runs stage
# 11's scaling model for model_ranks.png).
CHART_SCRIPTS = {
    "roofline": "plots/roofline.py",
    "scan_circuits": "plots/scan_circuits.py",
    "model_ranks": "labs/14-nbody/model_ranks.py",
}


def sources_of(chapter, artefact, root=ROOT):
    """The source files (relative paths, sorted) an artefact of reference/<gpu>/<chapter>/ comes
    from; artefact is its path inside that folder."""
    parts = Path(artefact).parts
    stem = Path(artefact).stem
    is_stage = (root / "solutions" / chapter / f"{stem}.cu").is_file()
    if parts[0] == "sass" and is_stage:
        found = stage_sources(chapter, stem, root)
    elif parts[0] == "profiles" and len(parts) == 2 and is_stage and artefact.endswith(".csv"):
        found = stage_sources(chapter, stem, root)
    elif parts[:2] == ("profiles", "source") and len(parts) == 3 and is_stage:
        found = stage_sources(chapter, stem, root)  # one stage's kernel, sampled per instruction
    elif artefact == "pitfalls.json":
        # What the wrong variants fail (harness/pitfalls.py): their declarations, the tests that
        # ran them, the stages they edit, and the SASS rules a variant may miss.
        chapter_dir = root / "chapters" / chapter
        found = set().union(
            *(
                stage_sources(chapter, p.stem, root)
                for p in (root / "solutions" / chapter).glob("*.cu")
                if STAGE_FILE.match(p.stem)
            ),
            {p.resolve() for p in chapter_dir.glob("test_*.cpp")},
            {(chapter_dir / n).resolve() for n in ("CMakeLists.txt", "lessons.toml")},
        )
    elif parts[0] == "profiles" and len(parts) == 2 and stem == "baseline":
        found = bench_sources(chapter, root, stages=False)  # the library's row: no stage in it
    else:
        found = bench_sources(chapter, root)
        if artefact.endswith(".png"):
            script = next((s for k, s in CHART_SCRIPTS.items() if k in stem), "plots/plot.py")
            found.add((root / script).resolve())
        if parts[0] == "profiles" and len(parts) > 2:  # a capture script of the chapter's labs
            found |= {p.resolve() for p in (root / "labs" / chapter).glob("capture_*.py")}
    return sorted(rel(p, root) for p in found)


# ---------------------------------------------------------------- the stamp files


def gpu_dirs(root=ROOT, gpu=None):
    base = root / "reference"
    if not base.is_dir():
        return []
    return [d for d in sorted(base.iterdir()) if d.is_dir() and (gpu is None or d.name == gpu)]


def artefacts(folder):
    """The artefacts of one reference/<gpu>/<chapter>/ folder (paths inside it), stamps aside."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name != STAMPS
    )


def load(folder):
    path = Path(folder) / STAMPS
    if not path.is_file():
        return {"schema": SCHEMA, "run": None, "artefacts": {}}
    return json.loads(path.read_text())


def save(folder, doc):
    doc["artefacts"] = dict(sorted(doc["artefacts"].items()))
    (Path(folder) / STAMPS).write_text(json.dumps(doc, indent=1) + "\n")


def forget():
    """Drop what this process remembers of the sources (after files change under it)."""
    _cached_sources.cache_clear()
    _cached_hash.cache_clear()


@lru_cache(maxsize=None)
def _cached_sources(root, chapter, artefact):
    return tuple(sources_of(chapter, artefact, Path(root)))


@lru_cache(maxsize=None)
def _cached_hash(root, sources):
    return source_hash(sources, Path(root))


def state(folder, artefact, doc=None, root=ROOT):
    """(state, detail) of one artefact: 'fresh', 'stale' (its sources changed since the stamp, a
    source is gone, or a new one joined them, as a stage added to a chapter joins its bench's),
    'pending' (moved in, never stamped by a capture run), or 'unstamped'."""
    doc = doc if doc is not None else load(folder)
    entry = doc["artefacts"].get(artefact)
    if entry is None:
        return "unstamped", "no stamp"
    if not entry.get("hash"):
        return ("pending" if entry.get("pending") else "unstamped"), entry.get("reason", "no hash")
    sources = entry.get("sources") or []
    missing = [s for s in sources if not (root / s).is_file()]
    if missing:
        return "stale", f"{missing[0]} is gone"
    # A source the artefact has now and had not then (a stage added to the chapter its bench
    # times): the code it was made from is not all the code that would make it now.
    new = sorted(set(_cached_sources(str(root), Path(folder).name, artefact)) - set(sources))
    if new:
        return "stale", f"{STALE_NOTE}; {new[0]} is new"
    if _cached_hash(str(root), tuple(sources)) != entry["hash"]:
        if entry.get("deferred"):
            return "deferred", f"{STALE_NOTE}; {entry['deferred']}"
        return "stale", STALE_NOTE
    return "fresh", ""


def capture_state(path, root=ROOT):
    """The state of a capture file given by its path (reference/<gpu>/<chapter>/...): ('fresh',
    '') for anything outside the evidence tree."""
    path = Path(path).resolve()
    try:
        gpu, chapter, *inner = path.relative_to(root / "reference").parts
    except ValueError:
        return "fresh", ""
    if not inner:
        return "fresh", ""
    return state(root / "reference" / gpu / chapter, "/".join(inner), root=root)


def stale_note(path, root=ROOT):
    """' (captured from an older version of this stage)' for a stale capture, else ''."""
    return f" ({STALE_NOTE})" if capture_state(path, root)[0] in ("stale", "deferred") else ""


def report(root=ROOT, gpu=None):
    """[(path, state, detail)] of every artefact that is not fresh, and of stamps whose file is
    gone, under reference/<gpu>/."""
    rows = []
    for gdir in gpu_dirs(root, gpu):
        for folder in sorted(d for d in gdir.iterdir() if d.is_dir()):
            doc = load(folder)
            present = artefacts(folder)
            for name in present:
                what, detail = state(folder, name, doc, root)
                if what != "fresh":
                    rows.append((rel(folder / name, root), what, detail))
            for name in sorted(set(doc["artefacts"]) - set(present)):
                rows.append((rel(folder / name, root), "stale", "stamped, but the file is gone"))
    return rows


def stamp(folder, chapter, run, root=ROOT, names=None):
    """Stamp the artefacts of one folder (all, or names) from the sources in the tree now."""
    doc = load(folder)
    doc["schema"], doc["run"] = SCHEMA, run
    for name in names if names is not None else artefacts(folder):
        sources = sources_of(chapter, name, root)
        doc["artefacts"][name] = {"hash": source_hash(sources, root), "sources": sources}
    for name in set(doc["artefacts"]) - set(artefacts(folder)):
        del doc["artefacts"][name]
    save(folder, doc)
    return doc


def run_facts(gpu_name, command, root=ROOT):
    try:
        commit = (
            subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30
            ).stdout.strip()
            or None
        )
        dirty = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--",
                "solutions",
                "chapters",
                "labs",
                "common",
                "harness",
                "plots",
            ],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        commit, dirty = None, ""
    # A copy of the tree (a GPU machine's working copy, whose .git may be missing or of another
    # commit) names the commit it was copied from this way, and it is taken as the truth.
    if os.environ.get("COURSE_COMMIT"):
        commit, dirty = os.environ["COURSE_COMMIT"], ""
    return {
        "commit": commit,
        "uncommitted_changes": bool(dirty),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": gpu_name,
        "command": command,
    }


# ---------------------------------------------------------------- command line


def cmd_stale(args):
    rows = report(ROOT, args.gpu)
    waiting = ("pending", "deferred")
    counted = [r for r in rows if args.strict or r[1] not in waiting]
    pending = sum(1 for r in rows if r[1] == "pending")
    deferred = sum(1 for r in rows if r[1] == "deferred")
    for path, what, detail in rows:
        if args.strict or what not in waiting or args.verbose:
            print(f"{what:9}  {path}: {detail}")
    if counted:
        print(f"stamps: {len(counted)} capture(s) stale or unstamped; fix: {FIX}")
        return 1
    notes = [f"{pending} pending: moved in, not yet captured by make reference"] if pending else []
    if deferred:
        notes.append(
            f"{deferred} deferred: stale, with the reason stamps.py defer recorded (--verbose)"
        )
    print(f"stamps: no stale capture{' (' + '; '.join(notes) + ')' if notes else ''}")
    return 0


def cmd_defer(args):
    """Mark stale artefacts as known to be stale, with the reason (the run that would retake them
    did not happen): stale lists them only with --verbose or --strict, the tools still say
    "captured from an older version of this stage", and the next make reference restamps them."""
    count = 0
    for name in args.files:
        path = (ROOT / name).resolve()
        try:
            gpu, chapter, *inner = path.relative_to(ROOT / "reference").parts
        except ValueError:
            print(f"stamps: {name} is not under reference/")
            return 2
        folder = ROOT / "reference" / gpu / chapter
        doc = load(folder)
        entry = doc["artefacts"].get("/".join(inner))
        if entry is None or state(folder, "/".join(inner), doc)[0] not in ("stale", "deferred"):
            print(f"stamps: {name} is not stale; nothing to defer")
            return 2
        entry["deferred"] = args.reason
        save(folder, doc)
        count += 1
    print(f"stamps: {count} stale capture(s) deferred: {args.reason}")
    return 0


def cmd_stamp(args):
    gdir = ROOT / "reference" / args.gpu
    if not gdir.is_dir():
        print(f"stamps: no folder {rel(gdir)}")
        return 2
    run = run_facts(args.gpu_name or args.gpu, args.command)
    for folder in sorted(d for d in gdir.iterdir() if d.is_dir()):
        if args.chapter and folder.name != args.chapter:
            continue
        doc = stamp(folder, folder.name, run)
        print(f"{rel(folder / STAMPS)}: {len(doc['artefacts'])} artefacts stamped")
    return 0


def cmd_hash(args):
    print(source_hash([Path(f).resolve() for f in args.files]))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="stamps of the captured evidence (reference/)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stale", help="list the stale and unstamped captures")
    s.add_argument("--gpu", help="one GPU folder (h200, h100, ...)")
    s.add_argument("--strict", action="store_true", help="count pending (never stamped) ones too")
    s.add_argument("--verbose", action="store_true", help="list the pending ones too")
    s.set_defaults(run=cmd_stale)
    t = sub.add_parser("stamp", help="stamp a GPU's artefacts from the sources in the tree")
    t.add_argument("--gpu", required=True)
    t.add_argument("--gpu-name", help="the GPU's full name (nvidia-smi)")
    t.add_argument("--chapter")
    t.add_argument("--command", default="make reference")
    t.set_defaults(run=cmd_stamp)
    d = sub.add_parser("defer", help="mark stale captures as known, with the reason")
    d.add_argument("--reason", required=True, help="why they were not retaken, and what will")
    d.add_argument("files", nargs="+", metavar="FILE", help="reference/<gpu>/<chapter>/... paths")
    d.set_defaults(run=cmd_defer)
    h = sub.add_parser("hash", help="the normalised hash of source files")
    h.add_argument("files", nargs="+")
    h.set_defaults(run=cmd_hash)
    args = ap.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
