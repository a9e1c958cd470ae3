"""sass_lines.py: nvdisasm's source lines merged into cuobjdump listings, control fields decoded,
and the listing make sass prints with the source beside the instructions."""

import re
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import sass  # noqa: E402
import sass_lines  # noqa: E402

# One function of nvdisasm -g -gi -hex -c on stage 12/09's object (sm_90, CUDA 13.0, H200 machine,
# 2026-11-29), built under /work/main.
NVDISASM = (HERE / "fixtures" / "nvdisasm_09_shuffle_sm90.txt").read_text()
ROOT = "/work/main"


def cuobjdump_like(text):
    """The same instructions as cuobjdump -sass prints them: Function headers, hex branch targets,
    each instruction's two encoding words."""
    out = ["\tcode for sm_90"]
    labels = {}
    for line in text.splitlines():
        if m := re.match(r"^(\.L_x_\d+):", line):
            labels[m.group(1)] = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if m := re.match(r"^\s*\.section\s+\.text\.([^,\s]+)", line):
            out.append(f"\t\tFunction : {m.group(1)}")
        elif re.match(r"^\s*/\*[0-9a-f]{4}\*/", line) or re.match(
            r"^\s*/\* 0x[0-9a-f]{16} \*/\s*$", line
        ):
            out.append(line)
    return "\n".join(out) + "\n"


class ControlTest(unittest.TestCase):
    def test_fields(self):
        # LDC R1 opens every kernel: stall 1, yield set, no scoreboard.
        self.assertEqual(sass_lines.decode_control(0x000FE20000000800), "B------:R-:W-:Y:S01")
        # S2R sets write scoreboard 0 (a variable-latency result).
        self.assertEqual(sass_lines.decode_control(0x000E220000002500), "B------:R-:W0:Y:S01")
        # The IMAD that reads S2R's result waits on scoreboard 0.
        self.assertEqual(sass_lines.decode_control(0x001FC600078E0002), "B0-----:R-:W-:-:S03")


class MergeTest(unittest.TestCase):
    def setUp(self):
        tables = {"sm_90": sass_lines.line_tables(NVDISASM, root=ROOT)}
        self.text = sass.without_encodings(sass_lines.merge(cuobjdump_like(NVDISASM), tables))

    def test_paths_are_relative_and_course_level(self):
        self.assertIn("//## solutions/12-reduction/09_shuffle.cu:29\n", self.text)
        # The shuffle's line is the course's line 22 (inlined at 37), not the intrinsic's body.
        self.assertIn(
            "//## solutions/12-reduction/09_shuffle.cu:22 < solutions/12-reduction/09_shuffle.cu:37",
            self.text,
        )
        self.assertNotIn("sm_30_intrinsics", self.text)
        self.assertNotIn("/work/main", self.text)

    def test_one_line_per_change(self):
        lines = self.text.splitlines()
        marks = [i for i, line in enumerate(lines) if "//##" in line]
        self.assertTrue(all(lines[i] != lines[j] for i, j in zip(marks, marks[1:]) if j == i + 2))
        insns = sum(1 for line in lines if "/*0" in line)
        self.assertLess(len(marks), insns)

    def test_parser_reads_the_same_instructions(self):
        plain = sass.parse(sass.without_encodings(cuobjdump_like(NVDISASM)))
        merged = sass.parse(self.text)
        self.assertEqual(
            [i.text for i in plain[0].instructions], [i.text for i in merged[0].instructions]
        )

    def test_positions_and_controls(self):
        kernel = sass.parse(self.text)[0]
        shfl = next(i for i in kernel.body if i.opcode == "SHFL.BFLY")
        level = sass_lines.course_level(shfl.where)
        self.assertEqual((level.file, level.line), ("solutions/12-reduction/09_shuffle.cu", 22))
        self.assertEqual(level.at, ("solutions/12-reduction/09_shuffle.cu", 37))
        self.assertTrue(all(i.control for i in kernel.body))
        self.assertEqual(kernel.body[0].control, "B------:R-:W-:Y:S01")

    def test_listing_shows_source_lines(self):
        kernel = sass.parse(self.text)[0]
        lines = sass.listing(kernel, sources={}, control=True)
        self.assertTrue(any(line.lstrip().startswith("// 09_shuffle.cu:22") for line in lines))
        bar = next(line for line in lines if "BAR.SYNC" in line)
        self.assertRegex(bar, r"B[0-5-]{6}:R.:W.:[Y-]:S\d\d$")
        self.assertEqual(sass.listing(kernel), [line for line in sass.listing(kernel)])
        self.assertFalse(any("//" in line for line in sass.listing(kernel)))

    def test_sm120_keeps_no_control(self):
        tables = {"sm_120": sass_lines.line_tables(NVDISASM, root=ROOT)}
        text = sass_lines.merge(cuobjdump_like(NVDISASM).replace("sm_90", "sm_120"), tables)
        self.assertIn("//## solutions/", text)
        self.assertIsNone(sass_lines.CONTROL_RE.search(text))


if __name__ == "__main__":
    unittest.main()
