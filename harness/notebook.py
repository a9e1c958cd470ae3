#!/usr/bin/env python3
"""The course on a free hosted GPU (Colab's T4, Kaggle's T4): the notebook, from this one source.

  notebook.py write     write notebooks/course-on-a-hosted-gpu.ipynb (stable bytes: no outputs,
                        no execution counts, no timestamps, so a test compares it with the file)
  notebook.py check     exit 1 with one line when the committed notebook is not what write writes
  notebook.py script    print the notebook's shell cells, in order, as one bash script, read from
                        the committed notebook: the settings cell's NAME = "value" lines become
                        defaults the environment overrides (COURSE_DIR=$PWD BUILD=/tmp/nb ...),
                        each %%bash cell runs in a subshell under set -euo pipefail, and a failing
                        cell stops the script with a line naming it. Cells tagged 'optional' (Drive,
                        git push: they need a person or Colab) are left out.
  notebook.py script --cells gpu,clone    only those cells (the settings always)

Every option takes --notebook PATH (default the committed notebook).

The notebook's shell cells are %%bash cells: each is a bash script of its own, and a variable it
sets dies with it. So the settings live in a Python cell that puts them in the kernel's
environment (os.environ), which every %%bash cell inherits.
"""

import argparse
import ast
import json
import shlex
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402  (the repository root)

ROOT = course.ROOT
NOTEBOOK = ROOT / "notebooks" / "course-on-a-hosted-gpu.ipynb"
OPTIONAL = "optional"
SETTINGS_TAG = "settings"


@dataclass
class Cell:
    id: str
    kind: str  # markdown, bash or python
    text: str
    tags: tuple = ()


def md(cell_id, text):
    return Cell(cell_id, "markdown", textwrap.dedent(text).strip("\n"))


def bash(cell_id, text):
    return Cell(cell_id, "bash", textwrap.dedent(text).strip("\n"))


def python(cell_id, text, tags=()):
    return Cell(cell_id, "python", textwrap.dedent(text).strip("\n"), tuple(tags))


# name, default, comment: the settings cell, and the script's environment defaults.
SETTINGS = [
    (
        "COURSE_REPO",
        "https://github.com/<you>/cuda-handbook-course",
        "Your fork's URL (section 2), or the course's own.",
    ),
    (
        "COURSE_DIR",
        "/content/cuda-handbook-course",
        "Where the course goes (Kaggle: /kaggle/working/cuda-handbook-course).",
    ),
    (
        "BUILD",
        "/content/build",
        "The build folder, on local disk: fast, and gone when the runtime ends.",
    ),
    (
        "STAGE",
        "exercise/11-streaming/01_grid_stride",
        "Your stage; without exercise/ the reference solution's.",
    ),
    ("CHAPTER", "11-streaming", "The chapter whose benchmark runs."),
    ("ARCH", "", "Empty: from the GPU's compute capability (a T4's 7.5 gives 75)."),
    ("PYTHON", "python3", "The course's tools need Python 3.11 or newer."),
    ("EXERCISE", "", '"1": the benchmark times your stages instead of the reference\'s.'),
    ("BENCH_ARGS", "", 'The benchmark\'s options, e.g. "--N 32 --deviceN 64" (shorter).'),
]


def settings_source():
    lines = [
        "# Edit, then run this cell (again after each change): the %%bash cells below read",
        "# these from the environment.",
        "import os",
        "",
    ]
    for name, value, comment in SETTINGS:
        lines += [f"# {comment}", f"{name} = {json.dumps(value)}"]
    update = "os.environ.update(" + ", ".join(f"{name}={name}" for name, _, _ in SETTINGS) + ")"
    lines += [""] + textwrap.wrap(update, width=92, subsequent_indent="                  ")
    lines += [
        "# nvcc and the CUDA tools: the hosted images keep them in /usr/local/cuda/bin.",
        'if "/usr/local/cuda/bin" not in os.environ["PATH"].split(":"):',
        '    os.environ["PATH"] += ":/usr/local/cuda/bin"',
    ]
    return "\n".join(lines)


CELLS = [
    md(
        "intro",
        """
        # The CUDA Handbook course on a free hosted GPU

        This notebook checks your stages on a borrowed GPU: Google Colab's free T4, or Kaggle's T4.
        It finds the GPU, clones the course (or your fork), installs what the build needs, builds
        for that GPU, then runs one stage's check, its SASS and its chapter's benchmark. Each
        `%%bash` cell is one shell script: run the cells from the top (Shift+Enter each, or
        Runtime > Run all).

        **With no GPU at all**, on your own machine, you can already compile every stage and run the
        host tests (`make check`), read the PTX that nvcc makes from your code (no GPU needed), and
        read the reference solution's SASS, profiles and results captured on the H200 (`make sass`,
        `make profile`, `make tour`).

        **This notebook adds what needs a GPU**: your stage's tests on the GPU; compute-sanitizer's
        memcheck, racecheck and synccheck; the speed verdict (your stage timed against the
        reference solution on the same T4, so it holds there; the benchmark's rate goals are the H200's);
        and the SASS of *your* code with `cuobjdump`. cuobjdump and compute-sanitizer come with the
        CUDA Toolkit in the hosted images, so they should be there: the setup cell's `make doctor`
        lists what it found, and `make check` says "SASS not checked" rather than guess without it.

        **Pick a GPU first.** Colab: Runtime > Change runtime type > T4 GPU. Kaggle: Settings >
        Accelerator > GPU T4 x2 (not the P100: its compute capability, 6.0, is below the course's
        7.5), and Settings > Internet on (Kaggle asks for a verified phone number).
        """,
    ),
    md(
        "settings-title",
        """
        ## 1. Settings
        """,
    ),
    python("settings", settings_source(), tags=[SETTINGS_TAG]),
    md(
        "keep-title",
        """
        ## 2. Keeping your work between sessions

        A hosted runtime loses its disk when the session ends. Two ways to keep your stages:

        **(a) Recommended: your fork on GitHub.** Fork the course on GitHub, set `COURSE_REPO` to
        your fork's URL, and at the end of a session run the last cell: it commits `chapters/` and
        pushes. Next session the clone cell brings your work back. Pushing needs a personal access
        token (GitHub: Settings > Developer settings > Fine-grained tokens; only your fork,
        *Contents: read and write*). **Never paste the token into a cell**: the notebook saves its
        cells (and Colab its outputs). Store it as a secret named `GITHUB_TOKEN` (Colab: the key
        icon on the left, with notebook access on; Kaggle: Add-ons > Secrets), or type it at the
        cell's hidden `getpass` prompt.

        **(b) Colab: Google Drive.** Run the next cell before the clone cell: it mounts your Drive
        and sets `COURSE_DIR` to `/content/drive/MyDrive/cuda-handbook-course`, so the clone
        happens once and later sessions find your files there. Drive is slow with many small files,
        so the build folder stays on local disk (`BUILD = "/content/build"`): each session
        rebuilds what it runs (a few minutes); your sources stay.

        **Kaggle** keeps `/kaggle/working` only when you *Save Version* (as the version's output),
        so use (a) there.

        The cells marked *Optional* are left out when the course tests this notebook.
        """,
    ),
    python(
        "drive",
        """
        # Optional (Colab): keep the course on your Google Drive; run before the clone cell.
        from google.colab import drive

        drive.mount("/content/drive")
        # The settings cell puts /content back: set COURSE_DIR there too to make this stick.
        COURSE_DIR = os.environ["COURSE_DIR"] = "/content/drive/MyDrive/cuda-handbook-course"
        """,
        tags=[OPTIONAL],
    ),
    md(
        "gpu-title",
        """
        ## 3. The GPU, the course and its tools
        """,
    ),
    bash(
        "gpu",
        """
        # The GPU and its compute capability: the build compiles for this GPU only.
        set -euo pipefail
        if ! gpu=$(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null) ||
           [ -z "$gpu" ]; then
          echo "No GPU in this runtime: Runtime > Change runtime type > T4 GPU" \\
            "(Kaggle: Settings > Accelerator > GPU T4 x2), then run the cells again."
          exit 1
        fi
        echo "$gpu"
        cc=$(echo "$gpu" | head -n 1 | sed 's/.*, *//')
        if [ "$(printf '%s\\n' 7.5 "$cc" | sort -V | head -n 1)" != 7.5 ]; then
          echo "Compute capability $cc is below the course's minimum, 7.5: choose a T4" \\
            "(Colab: Runtime > Change runtime type > T4 GPU; Kaggle: GPU T4 x2, not P100)."
          exit 1
        fi
        echo "building for ARCH=${ARCH:-${cc/./}}"
        """,
    ),
    bash(
        "clone",
        """
        # The course, or your fork: cloned once. A folder that already holds it is kept as it is.
        set -euo pipefail
        if [ -d "$COURSE_DIR/.git" ] || [ -f "$COURSE_DIR/harness/course.py" ]; then
          echo "the course is already in $COURSE_DIR: kept, with your edits" \\
            "(git -C $COURSE_DIR pull brings in your fork's newer commits)"
        else
          case "$COURSE_REPO" in
            *"<you>"*)
              echo "Set COURSE_REPO in the settings cell to your fork's URL (or the course's)," \\
                "run that cell, then this one."
              exit 1 ;;
          esac
          git clone --quiet "$COURSE_REPO" "$COURSE_DIR"
          echo "cloned $COURSE_REPO into $COURSE_DIR"
        fi
        if [ -d "$COURSE_DIR/.git" ]; then git -C "$COURSE_DIR" log -1 --format='at %h %s'; fi
        """,
    ),
    bash(
        "setup",
        """
        # What the build needs: cmake >= 3.24, Catch2 and ninja (harness/deps.sh installs them with
        # apt-get: the runtime runs as root; it is quiet when all is there), then what runs here.
        set -euo pipefail
        cd "$COURSE_DIR"
        if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
          echo "$("$PYTHON" --version 2>&1) is too old for the course's tools (3.11 or newer):" \\
            "apt-get install -y python3.11, then PYTHON = \\"python3.11\\" in the settings cell."
          exit 1
        fi
        # Ubuntu 22.04's own cmake is 3.22: an image without a newer one gets it from pip.
        cmake_new_enough() {
          command -v cmake >/dev/null && cmake --version |
            awk 'NR == 1 { split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 24)) }'
        }
        cmake_new_enough || python3 -m pip install --quiet 'cmake>=3.24'
        harness/deps.sh
        "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" --version | grep release
        make --no-print-directory doctor
        """,
    ),
    bash(
        "configure",
        """
        # Configure the build for this GPU (ARCH, e.g. 75 on a T4): the first run takes a minute.
        set -euo pipefail
        cd "$COURSE_DIR"
        arch=$ARCH
        if [ -z "$arch" ]; then
          arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')
        fi
        make --no-print-directory configure BUILD="$BUILD" ARCH="$arch" PYTHON="$PYTHON"
        cache="$BUILD/CMakeCache.txt"
        echo "$BUILD builds for: $(sed -n 's/^CMAKE_CUDA_ARCHITECTURES[^=]*=//p' "$cache")"
        """,
    ),
    md(
        "stage-title",
        """
        ## 4. Your stage

        Write the stage's `EXERCISE` region: `STAGE = "exercise/11-streaming/01_grid_stride"` is
        the file `chapters/11-streaming/01_grid_stride.cu` in the course folder (Colab: the folder
        icon on the left; double-click a file to edit it). The check says TODO while the region
        holds `COURSE_TODO();`, and `passed` when the stage is done: its tests, the three
        sanitizers, its speed against the reference and its SASS signature. A failure names the
        case and the `COURSE_SEED=...` that replays it. `STAGE = "11-streaming/01_grid_stride"`
        checks the reference solution instead: what passing looks like on this GPU.
        """,
    ),
    bash(
        "check",
        """
        # The stage, completely: builds only what it needs.
        set -euo pipefail
        cd "$COURSE_DIR"
        make --no-print-directory check STAGE="$STAGE" BUILD="$BUILD" PYTHON="$PYTHON"
        """,
    ),
    bash(
        "sass",
        """
        # The stage's SASS (cuobjdump), its source lines interleaved.
        set -euo pipefail
        cd "$COURSE_DIR"
        make --no-print-directory sass STAGE="$STAGE" BUILD="$BUILD" PYTHON="$PYTHON"
        """,
    ),
    md(
        "bench-title",
        """
        ## 5. The chapter's benchmark

        Every stage of the chapter, its library (cuBLAS, CUB, NPP) and its measured ceilings on this
        GPU, in one table; `EXERCISE = "1"` times your stages instead of the reference's. The
        goals in interactions/s and products/s are set for the reference H200 (on a T4 it says none is
        set there); a T4 has about a fifteenth of the H200's memory bandwidth.
        """,
    ),
    bash(
        "bench",
        """
        # One chapter's benchmark (minutes; BENCH_ARGS="--N 32 --deviceN 64" makes it shorter).
        set -euo pipefail
        cd "$COURSE_DIR"
        make --no-print-directory bench CHAPTER="$CHAPTER" EXERCISE="$EXERCISE" \\
          ARGS="$BENCH_ARGS" BUILD="$BUILD" PYTHON="$PYTHON"
        """,
    ),
    md(
        "push-title",
        """
        ## 6. Save your work to your fork

        Commits `chapters/` and pushes to `COURSE_REPO` (see section 2 for the token).
        """,
    ),
    python(
        "push",
        """
        # Optional: commit chapters/ and push it to your fork. The token is read here and handed
        # to this one push through its environment: never saved in the notebook or in .git/config.
        import base64
        import getpass
        import subprocess

        GIT_NAME = "Your Name"
        GIT_EMAIL = "you@users.noreply.github.com"


        def github_token():
            try:  # Colab: Secrets (the key icon), GITHUB_TOKEN
                from google.colab import userdata
                return userdata.get("GITHUB_TOKEN")
            except Exception:
                pass
            try:  # Kaggle: Add-ons > Secrets, GITHUB_TOKEN
                from kaggle_secrets import UserSecretsClient
                return UserSecretsClient().get_secret("GITHUB_TOKEN")
            except Exception:
                return getpass.getpass("GitHub token (hidden, not saved): ")


        def git(*args, env=None):
            folder = os.environ["COURSE_DIR"]
            return subprocess.run(["git", "-C", folder, *args], env=env).returncode


        git("add", "chapters")
        if git("diff", "--cached", "--quiet"):
            git("-c", f"user.name={GIT_NAME}", "-c", f"user.email={GIT_EMAIL}", "commit", "-q",
                "-m", "My stages")
        basic = base64.b64encode(f"x-access-token:{github_token()}".encode()).decode()
        env = dict(os.environ, GIT_CONFIG_COUNT="1",
                   GIT_CONFIG_KEY_0="http.https://github.com/.extraheader",
                   GIT_CONFIG_VALUE_0=f"Authorization: Basic {basic}")
        print("pushed" if git("push", "origin", "HEAD", env=env) == 0 else "push failed (above)")
        """,
        tags=[OPTIONAL],
    ),
]


# --- the notebook file ---------------------------------------------------------------------------


def lines(text):
    """A cell's source as Jupyter stores it: lines, each but the last ending in a newline."""
    return text.splitlines(keepends=True)


def cell_json(cell):
    metadata = {"tags": list(cell.tags)} if cell.tags else {}
    if cell.kind == "markdown":
        return {
            "cell_type": "markdown",
            "id": cell.id,
            "metadata": metadata,
            "source": lines(cell.text),
        }
    text = "%%bash\n" + cell.text if cell.kind == "bash" else cell.text
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cell.id,
        "metadata": metadata,
        "outputs": [],
        "source": lines(text),
    }


def render():
    """The notebook's bytes: nbformat 4.5, as Jupyter writes it (indent 1, sorted keys)."""
    notebook = {
        "cells": [cell_json(cell) for cell in CELLS],
        "metadata": {
            "accelerator": "GPU",
            "colab": {"gpuType": "T4", "provenance": []},
            "kaggle": {
                "accelerator": "nvidiaTeslaT4",
                "isGpuEnabled": True,
                "isInternetEnabled": True,
            },
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


# --- the script ----------------------------------------------------------------------------------


class NotebookError(Exception):
    pass


def read_cells(path):
    try:
        notebook = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise NotebookError(f"notebook: {path} not found (python3 harness/notebook.py write)")
    return notebook["cells"]


def settings_of(source):
    """The settings cell's NAME = "value" lines, in order; its other lines are Python the script
    has no use for."""
    found = []
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found.append((node.targets[0].id, node.value.value))
    return found


def script(path, only=None):
    cells = read_cells(path)
    out = [
        "#!/usr/bin/env bash",
        f"# The shell cells of {Path(path).name} in order (python3 harness/notebook.py script).",
        "# The settings cell's values are defaults: the environment overrides them.",
        "set -uo pipefail",
    ]
    shell, known = [], set()
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        source = "".join(cell["source"])
        known.add(cell["id"])
        if SETTINGS_TAG in tags:
            for name, value in settings_of(source):
                # Set in the environment, even empty, wins: ARCH= keeps "read it from the GPU".
                out.append(
                    f'[ -n "${{{name}+set}}" ] || {name}={shlex.quote(value)}; export {name}'
                )
        elif OPTIONAL in tags:
            continue
        elif source.startswith("%%bash\n"):
            body = source[len("%%bash\n") :]
            # The cell stops at its first failing command in the notebook as in the script.
            if "\nset -euo pipefail\n" not in "\n" + body:
                raise NotebookError(f"notebook: shell cell '{cell['id']}' lacks set -euo pipefail")
            shell.append((cell["id"], body))
        else:
            raise NotebookError(
                f"notebook: cell '{cell['id']}' is Python and not tagged "
                f"'{OPTIONAL}': the script cannot run it"
            )
    if only is not None:
        unknown = sorted(set(only) - {cell_id for cell_id, _ in shell})
        if unknown:
            raise NotebookError(
                f"notebook: no shell cell {', '.join(unknown)}; the shell cells: "
                + ", ".join(cell_id for cell_id, _ in shell)
            )
        shell = [(cell_id, body) for cell_id, body in shell if cell_id in only]
    for number, (cell_id, body) in enumerate(shell, 1):
        # set -e is ignored in a subshell that is the left side of || or &&: the status is
        # tested on its own line instead.
        out += [
            "",
            f'echo "== notebook cell {number} of {len(shell)}: {cell_id} =="',
            "(",
            body.rstrip("\n"),
            ")",
            "status=$?",
            f'if [ "$status" != 0 ]; then echo "notebook script: cell \'{cell_id}\' failed '
            f'(exit status $status): the lines above say why" >&2; exit "$status"; fi',
        ]
    out += ["", f'echo "notebook script: {len(shell)} cells ran"']
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="notebook.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--notebook", type=Path, default=NOTEBOOK, help="default: %(default)s")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("write", help="write the notebook")
    sub.add_parser("check", help="exit 1 when the committed notebook is stale")
    s = sub.add_parser("script", help="the notebook's shell cells as one bash script")
    s.add_argument("--cells", help="comma-separated cell ids (the settings always come first)")
    args = parser.parse_args(argv)
    shown = args.notebook.relative_to(ROOT) if args.notebook.is_relative_to(ROOT) else args.notebook
    try:
        if args.command == "write":
            args.notebook.parent.mkdir(parents=True, exist_ok=True)
            old = args.notebook.read_text() if args.notebook.is_file() else None
            new = render()
            if old != new:
                args.notebook.write_text(new)
            print(f"notebook: {shown} {'unchanged' if old == new else 'written'}")
        elif args.command == "check":
            if not args.notebook.is_file():
                raise NotebookError(
                    f"notebook: {shown} is missing: run python3 harness/notebook.py write"
                )
            if args.notebook.read_text() != render():
                raise NotebookError(
                    f"notebook: {shown} is not what harness/notebook.py writes: "
                    "run python3 harness/notebook.py write (make notebook)"
                )
        else:
            only = [c for c in args.cells.split(",") if c] if args.cells is not None else None
            sys.stdout.write(script(args.notebook, only))
    except NotebookError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
