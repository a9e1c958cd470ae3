"""sass_html.py: the pages that put a stage's SASS beside its source, made from the committed
captures; then loaded in headless Chromium (skipped, saying why, where it is not installed)."""

import contextlib
import csv
import io
import json
import re
import struct
import sys
import tempfile
import unittest
import zlib
from html.parser import HTMLParser
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import course  # noqa: E402
import lesson  # noqa: E402
import sass  # noqa: E402
import sass_html  # noqa: E402

STAGE = "12-reduction/09_shuffle"
NCU = HERE / "fixtures" / "profile" / "ncu_source_sass_12_09.csv"
# 12/09's first rule: a warp's sum takes five shuffles.
SHUFFLE_RULE = "SHFL.BFLY|SHFL.DOWN >= 5"


class Element:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, attrs, parent, [], ""

    @property
    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)


class Tree(HTMLParser):
    """The page as a tree of Elements (the void elements closed at once)."""

    VOID = {"meta", "br", "img", "link", "input"}

    def __init__(self, text):
        super().__init__()
        self.root = Element("root", {}, None)
        self.at = self.root
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs), self.at)
        self.at.children.append(element)
        if tag not in self.VOID:
            self.at = element

    def handle_endtag(self, tag):
        node = self.at
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.at = node.parent

    def handle_data(self, data):
        self.at.text += data

    def elements(self):
        return list(self.root.walk())


def check_links(test, elements):
    """Every link between source and SASS resolves both ways; the number of each kind."""
    by_id = {e.attrs["id"]: e for e in elements if "id" in e.attrs}
    sources = [e for e in elements if "src" in e.classes and "data-insns" in e.attrs]
    insns = [e for e in elements if "insn" in e.classes]
    for s in sources:
        for i in s.attrs["data-insns"].split():
            test.assertIn(i, by_id, f"{s.attrs['id']} names {i}")
            test.assertEqual(by_id[i].attrs.get("data-src"), s.attrs["id"])
    for i in insns:
        if "data-src" in i.attrs:
            target = by_id.get(i.attrs["data-src"])
            test.assertIsNotNone(target, i.attrs["data-src"])
            test.assertIn(i.attrs["id"], target.attrs["data-insns"].split())
    for a in elements:
        if a.tag == "a" and a.attrs.get("href", "").startswith("#"):
            test.assertIn(a.attrs["href"][1:], by_id)
    return len(sources), len(insns)


def rows_of(elements, kernel_id):
    """(opcode, badge texts) of each instruction of one kernel section."""
    section = next(e for e in elements if e.attrs.get("id") == kernel_id)
    rows = []
    for e in section.walk():
        if "insn" in e.classes:
            op = next(c for c in e.walk() if "op" in c.classes).all_text()
            badges = [c.all_text() for c in e.walk() if "badge" in c.classes]
            rows.append((op, badges))
    return rows


def profile_capture(path):
    """The fixture's ncu source page written as profile.py capture-source writes it."""
    kernel, header, body = sass_html.profile.source_rows(NCU.read_text())
    with open(path, "w", newline="") as out:
        out.write(f"# {STAGE}: warp-state samples per SASS instruction (test fixture)\n")
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["Kernel Name", kernel])
        writer.writerow(header)
        writer.writerows(body)
    return path


def run_main(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = sass_html.main(list(argv))
    return status, out.getvalue(), err.getvalue()


class Scratch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="course-sass-html-")
        self.out = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def stage_page(self, **kwargs):
        panel = sass_html.load_panel(STAGE, **kwargs)
        path = sass_html.write(self.out / "page.html", sass_html.panels_page([panel], STAGE))
        return panel, path


class PageTest(Scratch):
    """The generator alone, on the committed captures."""

    def test_stage_links_both_ways(self):
        panel, path = self.stage_page()
        elements = Tree(path.read_text()).elements()
        n_src, n_insn = check_links(self, elements)
        self.assertGreater(n_src, 10)
        self.assertEqual(n_insn, sum(len(k.body) for k in panel.kernels))

    def test_lesson_kernel_first_and_signature_badges(self):
        panel, path = self.stage_page()
        self.assertIn("reduce_kernel<1024u>", panel.kernels[0].title)
        rule = next(i for i, r in enumerate(panel.rules) if r.text == SHUFFLE_RULE)
        badge = f"R{rule + 1}"
        rows = rows_of(Tree(path.read_text()).elements(), "p0k0")
        marked = [op for op, badges in rows if badge in badges]
        self.assertGreaterEqual(len(marked), 5)
        self.assertTrue(all(op.startswith(("SHFL.BFLY", "SHFL.DOWN")) for op in marked), marked)
        self.assertEqual(len(marked), sum(op.startswith("SHFL.") for op, _ in rows))

    def test_failing_rule_says_what_is_missing(self):
        panel = sass_html.load_panel(STAGE)
        panel.rules = [lesson.parse_rule({"rule": "SHFL.BFLY >= 50", "why": "a test"})]
        text = sass_html.kernel_section(
            panel, 0, 0, panel.kernels[0], sass_html.SourceFiles(), True
        )
        self.assertIn("MISSED: found 15 (15 x SHFL.BFLY)", text)
        self.assertIn("class='badge bad'", text)

    def test_classes_coloured_as_sass_count_counts(self):
        panel, path = self.stage_page()
        text = path.read_text()
        rows = rows_of(Tree(text).elements(), "p0k0")
        self.assertEqual(len(rows), len(panel.kernels[0].body))
        css = dict(re.findall(r"\.(k\d+) \{ background: (#[0-9a-f]{6}); \}", text))
        ops = re.findall(r"<span class='op (k\d+)' title='([^']+)'>([^<]+)<", text)
        for css_class, cls, opcode in ops:
            self.assertEqual(sass.classify(opcode), cls)
            self.assertEqual(css[css_class], sass_html.CLASS_COLOURS[cls])
        self.assertIn("shuffle", {cls for _, cls, _ in ops})
        self.assertEqual(set(sass_html.CLASS_COLOURS), {*sass.CLASSES, sass.OTHER})

    def test_control_field_decoded(self):
        self.assertEqual(sass_html.control_field("B0-2---:R3:W1:Y:S04"), "S4  Y w02 W1 R3")
        self.assertEqual(sass_html.control_field("B------:R-:W-:-:S13"), "S13 -")
        self.assertEqual(sass_html.control_field(""), "")
        _, path = self.stage_page()
        self.assertIn("<span class=ctl>S1  Y W0</span>", path.read_text())

    def test_stall_samples_of_the_profiled_kernel_only(self):
        path = profile_capture(self.out / "09_shuffle.csv")
        panel, page = self.stage_page(profile_path=path)
        samples = {k.title: sass_html.stall_samples(k, path)[0] for k in panel.kernels}
        profiled = [t for t, s in samples.items() if s]
        self.assertEqual(len(profiled), 1)
        self.assertIn("reduce_kernel<32u>", profiled[0])
        text = page.read_text()
        self.assertIn("top stall reasons: long_sb 41", text)
        self.assertIn("is of reduce_kernel&lt;32&gt;", text)  # the other kernels say whose it is

    def test_no_capture_no_stall_column(self):
        _, page = self.stage_page(profile_path=self.out / "absent.csv")
        self.assertNotIn("class=stall>", page.read_text())

    def test_capture_without_source_lines(self):
        # A capture taken without nvdisasm: the committed one with its //## lines taken out.
        real = course.capture_path(STAGE, course.ROOT, "sm_120")
        bare = self.out / "without_lines.sass"
        lines = real.read_text().splitlines(keepends=True)
        bare.write_text("".join(line for line in lines if not line.lstrip().startswith("//##")))
        with mock.patch.object(course, "capture_path", return_value=bare):
            panel = sass_html.load_panel(STAGE, arch="sm_120")
        self.assertTrue(any("no source lines in this capture" in n for n in panel.notes))
        text = sass_html.panels_page([panel], STAGE)
        self.assertIn("split nosrc", text)
        self.assertFalse(re.search(r"<div class=src id=", text), "a source line with no lines")

    def test_self_contained(self):
        _, path = self.stage_page()
        text = path.read_text()
        self.assertNotRegex(text, r"(src|href)=['\"]?(https?:)?//")
        self.assertNotIn("<link", text)
        self.assertNotRegex(text, r"<script[^>]+src")

    def test_header_lines_in_their_own_file(self):
        panel = sass_html.load_panel("13-scan/06_warp_scans")
        text = sass_html.panels_page([panel], "x")
        files = re.findall(r"<div class=file><h3>([^<]+)</h3>", text)
        self.assertIn("solutions/13-scan/06_warp_scans.cu", files)
        self.assertTrue(any(f.endswith(".cuh") for f in files), files)

    def test_commands(self):
        out = str(self.out)
        status, printed, _ = run_main("page", "--out", out, "--stage", STAGE)
        self.assertEqual(status, 0)
        self.assertTrue(printed.strip().endswith("12-reduction/09_shuffle.html"))
        status, printed, _ = run_main(
            "page", "--out", out, "--a", STAGE, "--b", "12-reduction/10_fastest"
        )
        self.assertEqual(status, 0)
        self.assertEqual(
            Path(printed.strip()).name, "12-reduction.09_shuffle--12-reduction.10_fastest.html"
        )
        status, printed, _ = run_main(
            "page", "--out", out, "--stage", STAGE, "--archs", "sm_80 sm_90 sm_120"
        )
        self.assertEqual(status, 0)
        text = Path(printed.strip()).read_text()
        self.assertEqual(text.count("<div class=panel>"), 3)
        self.assertIn("body class=n3", text)
        status, _, err = run_main("page", "--out", out, "--stage", "12-reduction/99_none")
        self.assertEqual(status, 2)
        self.assertEqual(len(err.strip().splitlines()), 1)
        status, _, _ = run_main("page", "--out", out, "--a", STAGE)
        self.assertEqual(status, 2)
        status, _, err = run_main("page", "--out", out, "--archs", "sm_80")
        self.assertEqual(status, 2)
        self.assertIn("ARCHS goes with STAGE", err)
        status, _, err = run_main("page", "--out", out, "--stage", STAGE, "--archs", "sm_75")
        self.assertEqual(status, 1)
        self.assertIn("no sm_75 capture", err)

    def test_exercise_without_cuobjdump_says_so(self):
        with mock.patch.object(sass, "find_tool", return_value=None):
            status, _, err = run_main(
                "page", "--out", str(self.out), "--stage", f"exercise/{STAGE}"
            )
        self.assertEqual(status, 3)
        self.assertIn("cuobjdump not found", err)
        self.assertEqual(len(err.strip().splitlines()), 1)

    def test_exercise_with_cuobjdump_is_its_own_object(self):
        """With cuobjdump, an exercise is read from the build's object (here the capture's text
        stands in for it), on the architecture it was built for, without the reference's
        samples."""
        text = course.capture_path(STAGE, arch="sm_80").read_text()
        with (
            mock.patch.object(sass, "find_tool", return_value="/usr/bin/cuobjdump"),
            mock.patch.object(sass, "find_stage", return_value={"id": STAGE}) as find,
            mock.patch.object(sass, "_stage_source", return_value=sass.Source("x", text)),
        ):
            panel = sass_html.load_panel(f"exercise/{STAGE}", "somewhere")
            with self.assertRaisesRegex(sass_html.UsageError, "no sm_90 code in your build"):
                sass_html.load_panel(f"exercise/{STAGE}", "somewhere", arch="sm_90")
        find.assert_called_with(f"exercise/{STAGE}", "somewhere")
        self.assertEqual((panel.variant, panel.arch), ("exercise", "sm_80"))
        self.assertIn("your build's object", panel.where)
        self.assertIsNone(panel.profile_path)
        self.assertEqual(panel.misses, [])
        text = sass_html.panels_page([panel], "x")
        self.assertIn("exercise/12-reduction/09_shuffle [sm_80]", text)

    def test_reference_not_built_is_its_capture(self):
        """With cuobjdump but no build of the stage (a GPU machine before its build), the
        reference's page is its committed capture, and says so."""
        with mock.patch.object(sass, "find_tool", return_value="/usr/bin/cuobjdump"):
            panel = sass_html.load_panel(STAGE, str(self.out / "no-build"), live=True)
        self.assertIn("the capture", panel.where)
        self.assertTrue(any("is not built in" in n for n in panel.notes), panel.notes)
        self.assertTrue(panel.kernels)

    def test_two_stages_show_the_same_kernel_first(self):
        a = sass_html.load_panel(STAGE)
        b = sass_html.load_panel("12-reduction/10_fastest")
        b.kernels.reverse()
        self.assertNotEqual(b.kernels[0].title, a.kernels[0].title)
        shown = sass_html.beside(a, b)
        self.assertEqual(shown.kernels[0].title, a.kernels[0].title)
        self.assertEqual(sorted(k.title for k in shown.kernels), sorted(k.title for k in b.kernels))

    def test_chapter_walk(self):
        index, pages = sass_html.write_chapter("12-reduction", self.out)
        stages = course.stages("12-reduction")
        links = re.findall(r"<tr><td><a href='([^']+)\.html'>", index.read_text())
        self.assertEqual(links, stages)
        for stage in stages:
            self.assertIn(
                lesson.declaration(f"12-reduction/{stage}")["lesson"][:30],
                index.read_text().replace("&#x27;", "'"),
            )
        first, second = (Path(p).read_text() for p in pages[:2])
        self.assertNotIn("previous", first)
        self.assertIn(f"href='{stages[1]}.html'>next", first)
        self.assertIn(f"href='{stages[0]}.html'>\u2190 previous", second)
        self.assertIn("href='index.html'>index", second)
        step = f"{stages[0]}--{stages[1]}.html"
        self.assertIn(f"<a href='{step}'>beside {stages[1]}</a>", index.read_text())
        self.assertEqual(
            (self.out / "12-reduction" / step).read_text().count("<div class=panel>"), 2
        )


def find_chromium():
    return sass_html.find_chromium()


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG, decoded with zlib."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        filt, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = previous[x]
            c = previous[x - bpp] if x >= bpp else 0
            if filt == 1:
                line[x] = (line[x] + a) & 0xFF
            elif filt == 2:
                line[x] = (line[x] + b) & 0xFF
            elif filt == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, [[tuple(r[i : i + 3]) for i in range(0, stride, bpp)] for r in rows]


def rgb(colour):
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


@unittest.skipIf(find_chromium() is None, "chromium not installed (apt-get install chromium)")
class BrowserTest(Scratch):
    """The pages in headless Chromium: its script follows every link, and its pixels."""

    def test_links_followed_in_the_browser(self):
        for argv in (
            ("--stage", STAGE),
            ("--a", STAGE, "--b", "12-reduction/10_fastest"),
            ("--stage", STAGE, "--archs", "sm_80 sm_90 sm_120"),
        ):
            status, printed, _ = run_main("page", "--out", str(self.out), *argv)
            self.assertEqual(status, 0)
            dom = sass_html.dump_dom(printed.strip(), "#selftest")
            m = re.search(r'<pre id="selftest-result">([^<]+)</pre>', dom)
            self.assertIsNotNone(m, f"the page's self-test did not run: {dom[-300:]}")
            result = json.loads(m.group(1))
            self.assertEqual(result["broken"], [], argv)
            self.assertGreater(result["src"], 10)
            self.assertGreater(result["insn"], 100)
            self.assertLessEqual(result["overflow"], 0, f"{argv}: wider than 1920 pixels")
            stall = re.match(r"S(\d+)", result["ctl"][0]).group(1)
            self.assertIn(f"stall {stall} cycle", result["ctl"][1])

    def test_signature_in_the_rendered_dom(self):
        panel, path = self.stage_page()
        dom = sass_html.dump_dom(path)
        rule = next(i for i, r in enumerate(panel.rules) if r.text == SHUFFLE_RULE)
        rows = rows_of(Tree(dom).elements(), "p0k0")
        marked = [op for op, badges in rows if f"R{rule + 1}" in badges]
        self.assertEqual(len(marked), 15)
        self.assertTrue(all(op == "SHFL.BFLY" for op in marked), marked)

    def test_screenshot_shows_the_colours(self):
        _, path = self.stage_page()
        png = sass_html.screenshot(path, self.out / "page.png")
        width, height, pixels = png_pixels(png)
        self.assertEqual((width, height), (1920, 1080))
        seen = {}
        for row in pixels:
            for p in row:
                seen[p] = seen.get(p, 0) + 1
        for cls in ("shuffle", "int arithmetic", "global memory", "branch/convergence"):
            self.assertGreater(seen.get(rgb(sass_html.CLASS_COLOURS[cls]), 0), 200, cls)
        lines = [c for c in sass_html.LINE_COLOURS if seen.get(rgb(c), 0) > 100]
        self.assertGreaterEqual(len(lines), 5, "the source lines' colours")


if __name__ == "__main__":
    unittest.main()
