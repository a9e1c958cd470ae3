"""harness/sanitize.sh with compute-sanitizer and nvidia-smi faked: what it says and returns."""

import os
import pathlib
import stat
import subprocess
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "harness" / "sanitize.sh"


def fake(folder, name, body):
    path = pathlib.Path(folder) / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


class SanitizeScriptTest(unittest.TestCase):
    def run_script(self, *args, sanitizer_exit=86):
        with tempfile.TemporaryDirectory() as tmp:
            fake(tmp, "nvidia-smi", "echo 'GPU 0: faked'")
            fake(
                tmp,
                "compute-sanitizer",
                f"echo '========= ERROR SUMMARY: 1 error'; exit {sanitizer_exit}",
            )
            program = fake(tmp, "test.program", "exit 0")
            env = dict(os.environ, PATH=f"{tmp}:{os.environ['PATH']}", CUDA_HOME=tmp)
            argv = [a.replace("PROGRAM", str(program)) for a in args]
            return subprocess.run(
                ["bash", str(SCRIPT), *argv], capture_output=True, text=True, env=env, timeout=60
            )

    def test_a_rejected_wrong_variant_passes(self):
        r = self.run_script("--expect-reject", "memcheck", "PROGRAM")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("rejected this deliberately wrong stage", r.stdout)

    def test_a_program_never_built_is_an_error_not_a_rejection(self):
        r = self.run_script("--expect-reject", "memcheck", "/nonexistent/test.wrong.x")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("is not built", r.stdout)
        self.assertNotIn("rejected", r.stdout)

    def test_a_wrong_variant_the_tool_misses_fails(self):
        r = self.run_script("--expect-reject", "memcheck", "PROGRAM", sanitizer_exit=0)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("WRONG STAGE ACCEPTED", r.stdout)


if __name__ == "__main__":
    unittest.main()
