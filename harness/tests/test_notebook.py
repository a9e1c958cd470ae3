"""The hosted-GPU notebook (notebooks/course-on-a-hosted-gpu.ipynb) is what harness/notebook.py
writes, a valid nbformat 4.5 notebook, and its script (`notebook.py script`) is the notebook's
shell cells as valid bash: the make commands the notebook shows, without the optional cells, the
clone skipped where the course already is, a missing or too old GPU said in one line naming the
cell. No GPU and no network are needed: nvidia-smi is faked where a cell asks it."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
REPO = HARNESS.parent
sys.path.insert(0, str(HARNESS))
import notebook  # noqa: E402

SCRIPT = [sys.executable, str(HARNESS / "notebook.py")]
NBFORMAT_SKIP = "COURSE_SKIP: python3-nbformat not installed (apt-get install python3-nbformat)"
# The variables the script takes from the environment: the caller's must not leak into a test.
SETTINGS = [name for name, _, _ in notebook.SETTINGS] + ["MAKEFLAGS", "MAKELEVEL", "MFLAGS"]


def script(*args):
    run = subprocess.run([*SCRIPT, "script", *args], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stderr
    return run.stdout


def run_script(text, path_dirs=(), **env):
    """Runs a script with the environment given (and PATH with path_dirs first)."""
    environment = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    environment.update(env)
    environment["PATH"] = os.pathsep.join([*map(str, path_dirs), environment["PATH"]])
    return subprocess.run(
        ["bash", "-c", text],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tempfile.gettempdir(),
    )


def fake_nvidia_smi(folder, answer, status=0):
    """An nvidia-smi that prints answer and exits with status."""
    tool = Path(folder) / "nvidia-smi"
    tool.write_text(f"#!/bin/sh\nprintf '%s\\n' '{answer}'\nexit {status}\n")
    tool.chmod(0o755)
    return folder


def nbformat_validator():
    """Validates a notebook's text with nbformat: in this interpreter, else in /usr/bin/python3
    (Debian's python3-nbformat installs there, not in a pyenv python3); None when neither has it."""
    try:
        import nbformat

        return lambda text: nbformat.validate(nbformat.reads(text, as_version=4))
    except ImportError:
        pass
    system = Path("/usr/bin/python3")
    if system.is_file() and Path(sys.executable).resolve() != system.resolve():
        probe = subprocess.run([str(system), "-c", "import nbformat"], capture_output=True)
        if probe.returncode == 0:

            def validate(text):
                run = subprocess.run(
                    [
                        str(system),
                        "-c",
                        "import sys, nbformat; nbformat.validate("
                        "nbformat.reads(sys.stdin.read(), as_version=4))",
                    ],
                    input=text,
                    capture_output=True,
                    text=True,
                )
                if run.returncode != 0:
                    last = run.stderr.strip().splitlines()[-1]
                    raise AssertionError(f"nbformat (/usr/bin/python3): {last}")

            return validate
    return None


class NotebookFileTest(unittest.TestCase):
    def setUp(self):
        self.text = notebook.NOTEBOOK.read_text()
        self.nb = json.loads(self.text)

    def test_committed_notebook_is_what_write_writes(self):
        self.assertEqual(
            self.text, notebook.render(), "run python3 harness/notebook.py write (make notebook)"
        )
        run = subprocess.run([*SCRIPT, "check"], capture_output=True, text=True, cwd=REPO)
        self.assertEqual((run.returncode, run.stderr), (0, ""))

    def test_check_fails_in_one_line_on_a_stale_notebook(self):
        with tempfile.TemporaryDirectory() as tmp:
            stale = Path(tmp) / "stale.ipynb"
            stale.write_text(self.text.replace("T4", "K80", 1))
            run = subprocess.run(
                [*SCRIPT, "--notebook", str(stale), "check"],
                capture_output=True,
                text=True,
                cwd=REPO,
            )
            self.assertEqual(run.returncode, 1)
            self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
            self.assertIn("notebook.py write", run.stderr)
            # write makes it current, and a second write changes nothing.
            for _ in range(2):
                subprocess.run(
                    [*SCRIPT, "--notebook", str(stale), "write"],
                    check=True,
                    capture_output=True,
                    cwd=REPO,
                )
                self.assertEqual(stale.read_text(), self.text)

    def test_valid_nbformat(self):
        validate = nbformat_validator()
        if validate is None:
            self.skipTest(NBFORMAT_SKIP)
        validate(self.text)

    def test_metadata_and_no_outputs(self):
        self.assertEqual((self.nb["nbformat"], self.nb["nbformat_minor"]), (4, 5))
        meta = self.nb["metadata"]
        self.assertEqual(meta["kernelspec"]["name"], "python3")
        self.assertEqual(meta["accelerator"], "GPU")
        self.assertEqual(meta["colab"]["gpuType"], "T4")
        ids = [cell["id"] for cell in self.nb["cells"]]
        self.assertEqual(len(ids), len(set(ids)), "cell ids repeat")
        for cell in self.nb["cells"]:
            if cell["cell_type"] == "code":
                self.assertEqual((cell["execution_count"], cell["outputs"]), (None, []), cell["id"])

    def test_shell_cells_are_bash_cells(self):
        code = [cell for cell in self.nb["cells"] if cell["cell_type"] == "code"]
        bash = [cell for cell in code if cell["source"][0] == "%%bash\n"]
        self.assertGreaterEqual(len(bash), 5)
        for cell in code:
            if cell not in bash:
                tags = cell["metadata"].get("tags", [])
                self.assertTrue(
                    {"settings", "optional"} & set(tags),
                    f"Python cell {cell['id']} is neither the settings nor optional",
                )

    def test_what_the_notebook_says(self):
        text = "".join("".join(cell["source"]) for cell in self.nb["cells"])
        for words in (
            "nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader",
            "Runtime > Change runtime type > T4 GPU",
            'drive.mount("/content/drive")',
            "/content/drive/MyDrive/",
            'BUILD = "/content/build"',
            "getpass",
            "Save Version",
            "harness/deps.sh",
            'nvcc)" --version',
            "sys.version_info < (3, 11)",
            "https://github.com/<you>/cuda-handbook-course",
        ):
            self.assertTrue(words in text, f"the notebook does not say {words!r}")


class ScriptTest(unittest.TestCase):
    def setUp(self):
        self.script = script()
        self.nb = json.loads(notebook.NOTEBOOK.read_text())

    def cells(self, tag=None):
        return [
            cell
            for cell in self.nb["cells"]
            if cell["cell_type"] == "code"
            and (tag is None or tag in cell["metadata"].get("tags", []))
        ]

    def test_valid_bash(self):
        run = subprocess.run(["bash", "-n"], input=self.script, capture_output=True, text=True)
        self.assertEqual((run.returncode, run.stderr), (0, ""))

    def test_the_notebook_shell_cells_in_order(self):
        optional = [cell["id"] for cell in self.cells("optional")]
        bodies = [
            "".join(cell["source"][1:])
            for cell in self.cells()
            if cell["source"][0] == "%%bash\n" and cell["id"] not in optional
        ]
        at = 0
        for body in bodies:
            found = self.script.find(body.rstrip("\n"), at)
            self.assertGreaterEqual(found, 0, f"not in the script, or out of order:\n{body}")
            at = found + 1
        for command in (
            'make --no-print-directory check STAGE="$STAGE" BUILD="$BUILD"',
            'make --no-print-directory sass STAGE="$STAGE" BUILD="$BUILD"',
            'make --no-print-directory bench CHAPTER="$CHAPTER"',
            'make --no-print-directory configure BUILD="$BUILD" ARCH="$arch"',
            "harness/deps.sh",
            "git clone",
        ):
            self.assertIn(command, self.script)

    def test_optional_cells_left_out(self):
        optional = self.cells("optional")
        self.assertGreaterEqual(len(optional), 2)
        for cell in optional:
            for line in cell["source"]:
                if line.strip() and not line.lstrip().startswith("#") and len(line.strip()) > 12:
                    self.assertNotIn(line.strip(), self.script, cell["id"])
        for words in ("drive.mount", "git push", '"push"', "getpass", "GITHUB_TOKEN"):
            self.assertNotIn(words, self.script)

    def test_settings_are_environment_defaults(self):
        for name, default, _ in notebook.SETTINGS:
            self.assertIn(f'[ -n "${{{name}+set}}" ] || {name}=', self.script)
        shown = "\n".join(f'echo "{name}=${name}"' for name, _, _ in notebook.SETTINGS)
        text = script("--cells", "") + shown
        run = run_script(text, STAGE="11-streaming/02_unrolled_templated", ARCH="")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("STAGE=11-streaming/02_unrolled_templated\n", run.stdout)
        self.assertIn("ARCH=\n", run.stdout)
        self.assertIn("COURSE_DIR=/content/cuda-handbook-course\n", run.stdout)
        self.assertIn("CHAPTER=11-streaming\n", run.stdout)

    def test_clone_skipped_where_the_course_is(self):
        run = run_script(
            script("--cells", "clone"),
            COURSE_DIR=str(REPO),
            COURSE_REPO="https://example.invalid/no-network-here",
        )
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn(f"the course is already in {REPO}", run.stdout)

    def test_clone_asks_for_the_repository(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = run_script(script("--cells", "clone"), COURSE_DIR=str(Path(tmp) / "course"))
            self.assertNotEqual(run.returncode, 0)
            self.assertIn("Set COURSE_REPO in the settings cell", run.stdout)
            self.assertEqual(
                run.stderr.splitlines(),
                ["notebook script: cell 'clone' failed (exit status 1): the lines above say why"],
            )
            self.assertFalse((Path(tmp) / "course").exists())

    def test_gpu_cell(self):
        gpu = script("--cells", "gpu")
        with tempfile.TemporaryDirectory() as tmp:
            run = run_script(gpu, [fake_nvidia_smi(tmp, "NVIDIA-SMI has failed", status=9)])
            self.assertNotEqual(run.returncode, 0)
            lines = run.stdout.splitlines()
            self.assertEqual(len(lines), 2, run.stdout)  # the cell's header, then one line
            self.assertIn("Runtime > Change runtime type > T4 GPU", lines[1])
            self.assertIn("cell 'gpu' failed", run.stderr)

            run = run_script(gpu, [fake_nvidia_smi(tmp, "Tesla P100-PCIE-16GB, 6.0")])
            self.assertNotEqual(run.returncode, 0)
            self.assertIn("Compute capability 6.0 is below the course's minimum, 7.5", run.stdout)

            for answer, env, arch in (
                ("Tesla T4, 7.5", {}, "75"),
                ("NVIDIA H200, 9.0", {}, "90"),
                ("Tesla T4, 7.5", {"ARCH": "80"}, "80"),
            ):
                run = run_script(gpu, [fake_nvidia_smi(tmp, answer)], **env)
                self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
                self.assertIn(f"building for ARCH={arch}\n", run.stdout)

    def test_unknown_cell_named(self):
        run = subprocess.run(
            [*SCRIPT, "script", "--cells", "nope"], capture_output=True, text=True, cwd=REPO
        )
        self.assertEqual(run.returncode, 1)
        self.assertIn("no shell cell nope", run.stderr)
        self.assertIn("gpu, clone", run.stderr)


if __name__ == "__main__":
    unittest.main()
