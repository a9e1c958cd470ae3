#!/usr/bin/env python3
"""A stage's SASS beside its source, as one self-contained HTML page an instructor can project.

    sass_html.py page --stage 12-reduction/09_shuffle            one stage (sm_90)
    sass_html.py page --a 12-reduction/09_shuffle --b 12-reduction/10_fastest   two side by side
    sass_html.py page --stage 12-reduction/09_shuffle --archs "sm_80 sm_90 sm_120"
    sass_html.py page --chapter 12-reduction    a page per stage and an index: the walk in class
    sass_html.py page                           every chapter, and an index of the indexes
    sass_html.py screenshot PAGE --out PNG [--size 1920,1080]   (headless Chromium)

Pages go under --out (default build/sass-html/), named by chapter and stage; each is one file with
its CSS and script inline: no server, no network. On each page, per kernel (a selector picks one;
the kernel the stage's signature rules are most about comes first):

- the source lines the instructions come from (the build's -lineinfo, read by nvdisasm into the
  captures, sass_lines.py), a lesson header's lines in a section of their own file, and the SASS;
  a source line and its instructions share a colour; a click on one marks the others;
- the class of each instruction as `make sass-count` counts it (sass.CLASSES);
- the stage's signature rules (lessons.toml `sass`, lesson.py): a badge on each instruction a rule
  counts, and what was found when a rule fails;
- each instruction's control field decoded (stall cycles, yield, scoreboards waited on and set;
  sm_70 to sm_90, not documented by NVIDIA: sass_lines.py);
- where the stage has a per-instruction Nsight Compute capture
  (reference/<gpu>/<chapter>/profiles/source/<stage>.csv) of the kernel shown, its warp-stall
  samples per instruction.

A reference stage reads its committed capture (reference/<gpu>/<chapter>/sass/<arch>/), or with
cuobjdump the build's object, as `make sass` does; an exercise (exercise/...) is the student's own
object, which needs cuobjdump. Exit status: 0 written, 1 nothing to show, 2 bad arguments, 3
cuobjdump (an exercise) or chromium (a screenshot) missing.
"""

import argparse
import dataclasses
import html
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402
import lesson  # noqa: E402
import sass  # noqa: E402
import sass_lines  # noqa: E402
import stamps  # noqa: E402

profile = course.profile_module()

ROOT = course.ROOT
UsageError = course.UsageError
EXAMPLE = "make sass-html STAGE=12-reduction/09_shuffle"

# Light tints, one per sass-count class: black text stays readable on each when projected.
CLASS_COLOURS = {
    "global memory": "#ffb3b3",
    "local memory": "#ff66cc",
    "shared memory": "#ffd480",
    "constant memory": "#e6e6e6",
    "texture/surface": "#d9b3ff",
    "shuffle": "#80e5ff",
    "vote": "#99ccff",
    "barrier/fence": "#ff9966",
    "branch/convergence": "#c2c2f0",
    "predicate/select": "#f0f0a8",
    "fp arithmetic": "#b3f0b3",
    "int arithmetic": "#d6f5d6",
    "conversion": "#f5d6eb",
    "move": "#f2f2f2",
    sass.OTHER: "#ffffff",
}
# One colour per source line (cycled): a strip beside the line and beside each of its
# instructions, saturated enough to tell apart from across a room.
LINE_COLOURS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#393b79",
    "#637939",
    "#ad494a",
]
# A source line's gap longer than this (lines no instruction comes from) is folded.
GAP = 6
CONTEXT = 2


def slug(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def esc(text):
    return html.escape(str(text), quote=True)


# ---------------------------------------------------------------- what a page shows


@dataclass
class Panel:
    """One column of a page: a stage's kernels on one architecture, from one listing."""

    stage_id: str
    variant: str
    arch: str
    where: str  # where the listing came from, in words
    kernels: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    rules: list = field(default_factory=list)
    misses: list = field(default_factory=list)  # lesson.check_rules over the panel's kernels
    profile_path: Path = None
    where_title: str = ""  # what the capture's first line says it holds

    @property
    def label(self):
        who = "" if self.variant == "solution" else f"{self.variant}/"
        return f"{who}{self.stage_id} [{self.arch}]"


def stage_ref(arg):
    ref, _ = course.parse_stage(arg, ROOT)
    if ref is None:
        raise UsageError(course.stage_error("sass-html", arg, ROOT, example=EXAMPLE))
    return ref


def built(ref, build):
    """Whether the build lists the stage and holds its objects."""
    try:
        stage = sass.find_stage(f"{ref.variant}/{ref.id}", build)
    except UsageError:
        return False
    objects = stage.get("objects") or [stage.get("object", "")]
    return all(Path(o).is_file() for o in objects)


def load_panel(arg, build="build", arch=None, live=False, profile_path=None):
    """The Panel of a stage argument: its capture for arch (default sm_90), or with live (and
    cuobjdump) the build's object (default: its sm_90 code, else its newest); an exercise is
    always its own object."""
    ref = stage_ref(arg)
    cuobjdump = sass.find_tool("cuobjdump")
    notes, where_title = [], ""
    if ref.variant == "solution" and live and cuobjdump and not built(ref, build):
        # The reference's capture is of the same source (its stamp says when it is not).
        live = False
        notes.append(f"solution/{ref.id} is not built in {build}: its committed capture is shown")
    if ref.variant != "solution" or (live and cuobjdump):
        if not cuobjdump:
            raise UsageError(
                f"sass-html: cuobjdump not found, so the SASS of your own code "
                f"({ref.variant}/{ref.id}) cannot be shown (it ships with the CUDA Toolkit); "
                f"make sass STAGE={ref.variant}/{ref.id} shows its PTX meanwhile",
                3,
            )
        source = sass._stage_source(sass.find_stage(f"{ref.variant}/{ref.id}", build), arch)
        text, where = source.text, f"your build's object ({ref.variant})"
        if ref.variant == "solution":
            where = "the build's object"
        partial = False
        # A student's GPU may be built for its own architecture only: the rules' (sm_90) when
        # the object has it, else the newest it has, as make check judges it (lesson.pick_arch).
        arch = arch or lesson.pick_arch(sass.parse(text)) or course.REFERENCE_ARCH
    else:
        arch = arch or course.REFERENCE_ARCH
        path = course.capture_path(ref.id, ROOT, arch)
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if not path.is_file():
            raise UsageError(
                f"sass-html: no {arch} capture of {ref.id} ({rel}); make sass-capture "
                f"ARCH={arch[3:]} takes it (cuobjdump)",
                1,
            )
        text = path.read_text()
        header = course.capture_header(path)
        where = f"the capture {rel}{stamps.stale_note(path, ROOT)}"
        if header:
            where_title = header
        partial = course.capture_subset(ref.id, ROOT) is not None
    every = sass.parse(text)
    kernels = [k for k in every if k.arch == arch]
    if every and not kernels:
        archs = ", ".join(sorted({k.arch for k in every}))
        raise UsageError(f"sass-html: no {arch} code in {where} (it has {archs})", 1)
    sass.demangle(kernels)
    if kernels and not sass_lines.has_lines(text):
        notes.append(
            "no source lines in this capture (taken without nvdisasm): the SASS is shown "
            "without its source"
        )
    rules = lesson.rules_of(ref.id)
    misses = lesson.check_rules(kernels, rules, partial) if kernels else []
    # The reference's samples are of the reference's code: never shown beside a student's.
    if profile_path is None and ref.variant == "solution":
        profile_path = profile.source_capture_path(ref.id, ROOT)
    kernels = order_kernels(kernels, rules)
    return Panel(
        ref.id, ref.variant, arch, where, kernels, notes, rules, misses, profile_path, where_title
    )


def order_kernels(kernels, rules):
    """The kernels with those the signature is most about first (the most rules in scope,
    the no-local-memory rule every kernel has aside), else in the listing's order."""
    specific = [r for r in rules if r.text != lesson.NO_LOCAL_MEMORY]

    def in_scope(kernel):
        return sum(1 for r in specific if not isinstance(lesson.in_scope(r, [kernel]), str))

    return sorted(kernels, key=lambda k: -in_scope(k))


def beside(a, b):
    """Panel b with the kernel of a's first kernel's name first, where it has one: the kernel
    compared, shown first on both sides."""
    name = display_name(a.kernels[0].title) if a.kernels else None
    same = [k for k in b.kernels if display_name(k.title) == name]
    return dataclasses.replace(b, kernels=same[:1] + [k for k in b.kernels if k not in same[:1]])


def rule_results(kernel, rules):
    """[(rule, applies, count, holds, addresses, words)] for one kernel."""
    out = []
    for rule in rules:
        scope = [] if rule.arch and rule.arch != kernel.arch else lesson.in_scope(rule, [kernel])
        applies = not isinstance(scope, str) and bool(scope)
        hits = [i.address for i in kernel.body if any(p.matches(i.opcode) for p in rule.patterns)]
        holds = rule.holds(len(hits))
        if not applies:
            words = "not this kernel's rule" + (
                f" ({scope})" if isinstance(scope, str) else f" (on {rule.arch} only)"
            )
        elif holds:
            words = f"met: {len(hits)} found"
        else:
            words = (
                f"MISSED: found {len(hits)} ({lesson.nearest(kernel, rule.patterns)}); "
                f"the rule wants {rule.text}"
            )
        out.append((rule, applies, len(hits), holds, hits, words))
    return out


# ---------------------------------------------------------------- stall samples


def without_params(title):
    """A demangled name without its parameter list (the last parenthesis at the top level: a
    template argument may hold some, as in warp_segments<(scan::warp_form)0>)."""
    depth = 0
    for i in range(len(title) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(title[i], 0)
        if depth == 0 and title[i] == "(":
            return title[:i]
    return title


def display_name(title):
    """A kernel's name as the selector shows it: no return type, namespace noise or parameters."""
    name = without_params(title).replace("(anonymous namespace)::", "")
    return name.removeprefix("void ")


def _params_cut(title):
    """A kernel's name without its parameter list, in one spelling for c++filt's and ncu's:
    'reduce_kernel<32>' for 'void (anonymous namespace)::reduce_kernel<32u>(int*, ...)' and
    'void <unnamed>::reduce_kernel<(unsigned int)32>(int *, ...)'."""
    text = without_params(title.replace("(anonymous namespace)::", "").replace("<unnamed>::", ""))
    text = re.sub(r"\((?:unsigned |signed )?(?:int|long|char|short)\)", "", text)
    text = re.sub(r"\b(\d+)(?:u|ul|l|ll|ull)\b", r"\1", text)
    return text.removeprefix("void ").replace(" ", "")


def stall_samples(kernel, path):
    """({address: (samples, not-issued samples, [(reason, samples), ...])}, words) from a
    per-instruction capture when it is of this kernel (its name and its opcodes at each address),
    else (None, why not)."""
    if not path or not Path(path).is_file():
        return None, ""
    try:
        name, rows = profile.read_source_capture(path)
    except (OSError, ValueError, IndexError, KeyError) as err:
        return None, f"{Path(path).name} unreadable: {err}"
    rel = Path(path).relative_to(ROOT) if Path(path).is_relative_to(ROOT) else Path(path)
    if kernel.arch != course.REFERENCE_ARCH:
        return None, f"the per-instruction capture ({rel}) is of the {course.REFERENCE_ARCH} code"
    by_address = {i.address: i for i in kernel.body}
    # The rows of the kernel's body (ncu lists its padding too) must hold the listing's opcodes.
    same = inside = 0
    for row in rows:
        insn = by_address.get(int(row.get("Address", "0x0"), 16))
        text = row.get("Source", "").split()
        text = text[1:] if text and text[0].startswith("@") else text
        inside += insn is not None
        same += bool(insn and text and text[0] == insn.opcode)
    if _params_cut(name) != _params_cut(kernel.title) or not inside or same < 0.9 * inside:
        return None, f"the per-instruction capture ({rel}) is of {_params_cut(name)}"
    samples = {}
    for row in rows:
        reasons = [
            (k[len("stall_") :], _number(v))
            for k, v in row.items()
            if k and k.startswith("stall_") and "(" not in k and _number(v) > 0
        ]
        reasons.sort(key=lambda kv: -kv[1])
        samples[int(row["Address"], 16)] = (
            _number(row.get("Warp Stall Sampling (All Samples)")),
            _number(row.get("Warp Stall Sampling (Not-issued Samples)")),
            reasons,
        )
    return samples, f"warp-state samples per instruction from {rel}"


def _number(value):
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return 0.0


# ---------------------------------------------------------------- control field


def control_field(control):
    """The short form of a control field 'B0-2---:R3:W1:Y:S04': 'S4  Y w02 W1 R3' (stall
    cycles, yield, the scoreboards it waits on, the scoreboards it sets when its result is written
    and when its operands are read); the page's script puts it in words on hover."""
    m = re.match(r"B([0-5-]{6}):R([0-5-]):W([0-5-]):([Y-]):S(\d\d)", control or "")
    if not m:
        return ""
    waits = "".join(c for c in m.group(1) if c != "-")
    short = [f"S{int(m.group(5)):<2d}", m.group(4)]
    short += [f"w{waits}"] if waits else []
    short += [f"W{m.group(3)}"] if m.group(3) != "-" else []
    short += [f"R{m.group(2)}"] if m.group(2) != "-" else []
    return " ".join(short)


def class_css(cls):
    """The CSS class of an instruction class (its colour)."""
    return f"k{list(CLASS_COLOURS).index(cls)}"


def colour_css():
    """The CSS rules of the class and line colours."""
    rules = [f".k{i} {{ background: {c}; }}" for i, c in enumerate(CLASS_COLOURS.values())]
    rules += [f".l{i} {{ background: {c}; }}" for i, c in enumerate(LINE_COLOURS)]
    return "\n".join(rules)


# ---------------------------------------------------------------- HTML


CSS = """
:root { --fs: 18px; }
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; background: #fff; color: #000; }
body { font: var(--fs)/1.35 "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace;
  display: flex; flex-direction: column; overflow-x: hidden; }
body.n2 { --fs: 16px; } body.n3 { --fs: 14px; } body.n4 { --fs: 12px; }
body.index { display: block; padding: 0.5em 1em; overflow: auto; }
header.page { padding: 0.25em 0.6em; border-bottom: 3px solid #000; flex: none; }
header.page h1 { font-size: 1.25em; margin: 0; display: inline; }
header.page nav { float: right; }
header.page nav a { margin-left: 1em; }
.lessonline { font-weight: bold; }
.note { color: #333; font-size: 0.8em; }
a { color: #0033cc; }
.panels { flex: 1; min-height: 0; display: grid; gap: 0 6px; grid-auto-flow: column;
  grid-auto-columns: minmax(0, 1fr); }
.panel { display: flex; flex-direction: column; min-height: 0; min-width: 0;
  border-right: 2px solid #888; }
.panelhead { flex: none; padding: 0.2em 0.5em; border-bottom: 2px solid #000; }
.panelhead h2 { font-size: 1em; margin: 0; display: inline; }
.panelhead select { font: inherit; max-width: 100%; }
.chips { display: flex; flex-wrap: wrap; gap: 0.2em 0.35em; margin: 0.15em 0; }
.chip { border: 1px solid #000; padding: 0 0.3em; font-size: 0.8em; white-space: nowrap; }
.rule.ok { border-color: #006400; } .rule.bad { background: #b00000; color: #fff; }
.rule.na { color: #777; border-style: dashed; }
details { font-size: 0.8em; } details p { margin: 0.2em 0; }
.kernel { flex: 1; min-height: 0; display: flex; flex-direction: column; }
.kernel[hidden] { display: none; }
.kernel > .chips, .kernel > .note { flex: none; padding: 0 0.5em; }
.split { flex: 1; min-height: 0; display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 3fr); }
body.n2 .split, body.n3 .split, body.n4 .split {
  grid-template-columns: minmax(0, 1fr); grid-template-rows: minmax(0, 2fr) minmax(0, 3fr); }
.split.nosrc { grid-template-columns: minmax(0, 1fr) !important; grid-template-rows: minmax(0, 1fr) !important; }
.split.nosrc .srcpane { display: none; }
.pane { overflow-y: auto; overflow-x: hidden; min-height: 0; border-top: 1px solid #888; }
.srcpane { border-right: 2px solid #000; }
.file h3 { font-size: 0.85em; margin: 0.4em 0 0.1em; padding: 0 0.3em; background: #000; color: #fff;
  position: sticky; top: 0; }
.src, .insn, .label, .fold { display: grid; align-items: start; }
.src { grid-template-columns: 0.55em 3.2em minmax(0, 1fr) 2.5em; }
.src .code { white-space: pre-wrap; overflow-wrap: anywhere; padding-left: 0.3em; }
.src.ctx { color: #555; }
.src .n { text-align: right; font-size: 0.8em; color: #333; }
.fold { color: #666; font-style: italic; padding-left: 4em; font-size: 0.8em; }
.insn { grid-template-columns: 0.55em 3.2em 3.3em minmax(0, 1fr) 7.2em 4.2em 6em; }
.insn .addr { color: #444; font-size: 0.8em; }
.insn .text { white-space: pre-wrap; overflow-wrap: anywhere; }
.insn .op { font-weight: bold; padding: 0 0.15em; }
.insn .ctl { font-size: 0.8em; white-space: pre; }
.badges { display: flex; flex-wrap: wrap; gap: 2px; }
.badge { font-size: 0.75em; border: 1px solid #000; padding: 0 0.2em; background: #fff; }
.badge.ok { background: #006400; color: #fff; } .badge.bad { background: #b00000; color: #fff; }
.stall { position: relative; font-size: 0.8em; text-align: right; }
.stall .bar { position: absolute; left: 0; top: 0.15em; bottom: 0.15em; background: #ff8c00; }
.stall .v { position: relative; }
.label { color: #444; padding-left: 7em; font-size: 0.85em; }
.strip { align-self: stretch; }
a.ln { text-decoration: none; color: #000; text-align: right; padding-right: 0.3em; }
.hl { outline: 3px solid #000; outline-offset: -3px; background: #fff36b !important; }
.hl .code, .hl .text { background: #fff36b; }
.sel { outline: 3px solid #d00; outline-offset: -3px; }
table.walk { border-collapse: collapse; margin: 0.5em 0; }
table.walk td, table.walk th { border: 1px solid #888; padding: 0.15em 0.5em; text-align: left;
  vertical-align: top; }
"""

SCRIPT = """
(function () {
  function clear() {
    document.querySelectorAll('.hl, .sel').forEach(function (e) {
      e.classList.remove('hl'); e.classList.remove('sel'); });
  }
  function mark(origin, ids) {
    clear();
    origin.classList.add('sel');
    var first = null;
    ids.forEach(function (id) {
      var t = document.getElementById(id);
      if (t) { t.classList.add('hl'); first = first || t; }
    });
    if (first && first.scrollIntoView) first.scrollIntoView({block: 'center'});
    return first;
  }
  function follow(el) {
    if (el.dataset.insns) return mark(el, el.dataset.insns.split(' '));
    if (el.dataset.src) return mark(el, [el.dataset.src]);
    return null;
  }
  document.addEventListener('click', function (ev) {
    var el = ev.target.closest('.src[data-insns], .insn[data-src]');
    if (!el) return;
    ev.preventDefault();
    follow(el);
    // The address names the marked line, so a link can open the page at it.
    if (history.replaceState) history.replaceState(null, '', '#' + el.id);
  });
  document.querySelectorAll('select.kpick').forEach(function (s) {
    s.addEventListener('change', function () {
      document.querySelectorAll('.kernel[data-panel="' + s.dataset.panel + '"]').forEach(
        function (k) { k.hidden = k.id !== s.value; });
    });
  });
  // A control field in words on hover (built here, not stored per instruction).
  document.addEventListener('mouseover', function (ev) {
    var c = ev.target.closest('.ctl');
    if (!c || c.title || !c.textContent.trim()) return;
    var words = [];
    c.textContent.trim().split(/ +/).forEach(function (f) {
      var n = f.slice(1);
      if (f[0] === 'S') words.push('stall ' + n + ' cycle' + (n === '1' ? '' : 's') +
                                   " before the warp's next instruction");
      else if (f === 'Y') words.push('yield: the scheduler may switch to another warp');
      else if (f[0] === 'w') words.push('waits on scoreboard' + (n.length > 1 ? 's ' : ' ') +
                                        n.split('').join(', '));
      else if (f[0] === 'W') words.push('sets scoreboard ' + n + ' until its result is written');
      else if (f[0] === 'R') words.push('sets scoreboard ' + n + ' until its operands are read');
    });
    c.title = words.join('; ') + ' (undocumented by NVIDIA: harness/sass_lines.py)';
  });
  // #<id of a source line or an instruction>: its kernel shown, and it marked as by a click.
  var start = location.hash.length > 1 && document.getElementById(location.hash.slice(1));
  if (start && start.matches('.src[data-insns], .insn[data-src]')) {
    var kernel = start.closest('.kernel'), pick = document.querySelector(
      'select.kpick[data-panel="' + kernel.dataset.panel + '"]');
    if (pick) { pick.value = kernel.id; pick.dispatchEvent(new Event('change')); }
    follow(start);
  }
  // #selftest: every link followed in this browser; the result written into the page for a test.
  if (location.hash === '#selftest') {
    var out = {src: 0, insn: 0, broken: [], hrefs: 0, overflow: 0};
    document.querySelectorAll('.src[data-insns]').forEach(function (el) {
      out.src++;
      el.click();
      el.dataset.insns.split(' ').forEach(function (id) {
        var t = document.getElementById(id);
        if (!t || !t.classList.contains('hl') || t.dataset.src !== el.id) out.broken.push(el.id + '>' + id);
      });
    });
    document.querySelectorAll('.insn[data-src]').forEach(function (el) {
      out.insn++;
      el.click();
      var t = document.getElementById(el.dataset.src);
      if (!t || !t.classList.contains('hl') ||
          t.dataset.insns.split(' ').indexOf(el.id) < 0) out.broken.push(el.id + '>' + el.dataset.src);
    });
    document.querySelectorAll('a[href^="#"]').forEach(function (a) {
      out.hrefs++;
      if (!document.getElementById(a.getAttribute('href').slice(1))) out.broken.push(a.getAttribute('href'));
    });
    var ctl = Array.prototype.find.call(document.querySelectorAll('.ctl'), function (c) {
      return c.textContent.trim(); });
    if (ctl) {
      ctl.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
      out.ctl = [ctl.textContent, ctl.title];
    }
    clear();
    out.overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
    var pre = document.createElement('pre');
    pre.id = 'selftest-result';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
})();
"""


def page(title, body, n_panels=1, css_class=""):
    kind = css_class or f"n{min(n_panels, 4)}"
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<meta name=generator content='harness/sass_html.py: generated, never edited'>"
        f"<title>{esc(title)}</title><style>{CSS}{colour_css()}</style></head>\n"
        f"<body class={kind}>\n{body}\n<script>{SCRIPT}</script></body></html>\n"
    )


class SourceFiles:
    """Source files read once; a line's text, '' past its end, None for a file not here."""

    def __init__(self, root=ROOT):
        self.root, self.cache = Path(root), {}

    def lines(self, file):
        if file not in self.cache:
            path = self.root / file
            self.cache[file] = (
                path.read_text(errors="replace").splitlines() if path.is_file() else None
            )
        return self.cache[file]


def kernel_section(panel, p, k, kernel, files, shown):
    """The HTML of one kernel: its rules, source pane and SASS pane."""
    kid = f"p{p}k{k}"
    results = rule_results(kernel, panel.rules)
    badges = {}  # address -> [(index, holds, why)]
    for r, (rule, applies, _, holds, hits, _) in enumerate(results):
        if applies:
            for a in hits:
                badges.setdefault(a, []).append((r, holds, rule))
    stalls, stall_words = stall_samples(kernel, panel.profile_path)
    most = max((s[0] for s in stalls.values()), default=0) if stalls else 0

    # Each instruction's course-level position, and each position's colour and instructions.
    position = {}
    order = []
    for insn in kernel.body:
        level = sass_lines.course_level(insn.where)
        if level:
            key = (level.file, level.line)
            position[insn.address] = (key, level)
            if key not in order:
                order.append(key)
    colour = {key: f"l{i % len(LINE_COLOURS)}" for i, key in enumerate(order)}
    file_order = sorted(
        {f for f, _ in order},
        key=lambda f: (not f.endswith(f"/{panel.stage_id.split('/')[1]}.cu"), f.startswith("<"), f),
    )
    file_index = {f: i for i, f in enumerate(file_order)}

    def src_id(key):
        return f"{kid}-f{file_index[key[0]]}-{key[1]}"

    def insn_id(address):
        return f"{kid}-i{address:04x}"

    insns_of, inlined_at = {}, {}
    for address, (key, level) in position.items():
        insns_of.setdefault(key, []).append(insn_id(address))
        if level.at:
            inlined_at.setdefault(key, set()).add(f"{Path(level.at[0]).name}:{level.at[1]}")

    out = [f"<div class=kernel id={kid} data-panel=p{p}{'' if shown else ' hidden'}>"]
    # Rules, classes and legends of this kernel.
    chips = []
    for r, (rule, applies, n, holds, _, words) in enumerate(results):
        state = "na" if not applies else ("ok" if holds else "bad")
        title = f"{rule.label()}{rule.scope()}: {words}. Why: {rule.why}"
        mark = "" if not applies else ("\u2713 " if holds else "\u2717 ")
        found = "not this kernel's" if not applies else (n if holds else words)
        text = f"R{r + 1} {rule.label()}: {mark}{found}"
        chips.append(f"<span class='chip rule {state}' title='{esc(title)}'>{esc(text)}</span>")
    out.append(f"<div class=chips>{''.join(chips)}</div>")
    counts = {}
    for insn in kernel.body:
        cls = sass.classify(insn.opcode)
        counts[cls] = counts.get(cls, 0) + 1
    class_chips = "".join(
        f"<span class='chip {class_css(c)}'>{esc(c)} {counts[c]}</span>"
        for c in [*sass.CLASSES, sass.OTHER]
        if c in counts
    )
    out.append(
        f"<div class=chips title='instruction classes, as make sass-count counts them'>"
        f"{class_chips}<span class=chip>total {len(kernel.body)}</span></div>"
    )
    notes = []
    if not order:
        notes.append("no source lines in this capture: the SASS alone")
    if not any(i.control for i in kernel.body):
        notes.append(f"no control field decoded for {kernel.arch} (sm_70 to sm_90 only)")
    if stall_words:
        notes.append(stall_words)
    if notes:
        out.append(f"<div class=note>{esc('; '.join(notes))}</div>")

    out.append(f"<div class='split{'' if order else ' nosrc'}'><div class='pane srcpane'>")
    for f in file_order:
        lines = files.lines(f)
        wanted = sorted(line for ff, line in order if ff == f)
        # Lines of the k-th file (k > 0) are k:N in the SASS.
        tag = f"[{file_index[f]}] " if file_index[f] else ""
        out.append(f"<div class=file><h3>{tag}{esc(f)}</h3>")
        if lines is None:
            shown_lines = wanted
        else:
            shown_lines = []
            for line in range(
                max(1, wanted[0] - CONTEXT), min(len(lines), wanted[-1] + CONTEXT) + 1
            ):
                near = min(abs(line - w) for w in wanted)
                if near <= CONTEXT or near <= GAP // 2:
                    shown_lines.append(line)
            shown_lines = sorted(set(shown_lines) | set(wanted))
        previous = None
        for line in shown_lines:
            if previous is not None and line > previous + 1:
                out.append(f"<div class=fold>\u22ef lines {previous + 1}-{line - 1}</div>")
            previous = line
            text = "" if lines is None else (lines[line - 1] if line <= len(lines) else "")
            key = (f, line)
            if key in colour:
                ids = insns_of[key]
                at = inlined_at.get(key)
                title = f"{f}:{line}: {len(ids)} instruction{'s' if len(ids) > 1 else ''}"
                title += f"; inlined at {', '.join(sorted(at))}" if at else ""
                out.append(
                    f"<div class=src id={src_id(key)} data-insns='{' '.join(ids)}' "
                    f"title='{esc(title)}'><span class='strip {colour[key]}'>"
                    f"</span><a class=ln href='#{ids[0]}'>{line}</a>"
                    f"<span class=code>{esc(text) or ' '}</span><span class=n>{len(ids)}</span></div>"
                )
            else:
                out.append(
                    f"<div class='src ctx'><span></span><span class=ln>{line}</span>"
                    f"<span class=code>{esc(text) or ' '}</span><span></span></div>"
                )
        out.append("</div>")
    out.append("</div><div class='pane sasspane'>")
    for insn in kernel.body:
        for label in insn.labels:
            out.append(f"<div class=label>{esc(label)}:</div>")
        cls = sass.classify(insn.opcode)
        where = position.get(insn.address)
        if where:
            key, level = where
            sid = src_id(key)
            tip = f"{Path(level.file).name}:{level.line}" + (
                f", inlined at {Path(level.at[0]).name}:{level.at[1]}" if level.at else ""
            )
            short = (
                str(level.line) if file_index[key[0]] == 0 else f"{file_index[key[0]]}:{level.line}"
            )
            head = (
                f"<div class='insn' id={insn_id(insn.address)} data-src={sid}>"
                f"<span class='strip {colour[key]}'></span>"
                f"<a class=ln href='#{sid}' title='{esc(tip)}'>{esc(short)}</a>"
            )
        else:
            head = f"<div class='insn' id={insn_id(insn.address)}><span></span><span></span>"
        short_ctl = control_field(insn.control)
        # The rule's why is on its chip and in the legend: a page of 10k instructions stays small.
        marks = "".join(
            f"<span class='badge {'ok' if holds else 'bad'}' title='{esc(rule.label())}'>"
            f"R{r + 1}</span>"
            for r, holds, rule in badges.get(insn.address, [])
        )
        stall = ""
        # An instruction never sampled keeps its cell empty: the few that stall stand out.
        if stalls and stalls.get(insn.address, (0,))[0] > 0:
            n, not_issued, reasons = stalls[insn.address]
            top = ", ".join(f"{k} {v:g}" for k, v in reasons[:3]) or "none"
            width = 100 * n / most if most else 0
            stall = (
                f"<span class=stall title='{esc(f'{n:g} samples ({not_issued:g} not issued); top stall reasons: {top}')}'>"
                f"<span class=bar style='width:{width:.0f}%'></span><span class=v>{n:g}</span></span>"
            )
        elif stalls is not None:
            stall = "<span class=stall></span>"
        guard = f"{insn.guard} " if insn.guard else ""
        out.append(
            f"{head}<span class=addr>{insn.address:04x}</span>"
            f"<span class=text>{esc(guard)}<span class='op {class_css(cls)}' "
            f"title='{esc(cls)}'>{esc(insn.opcode)}</span> {esc(insn.operands)}</span>"
            "<span class=ctl>"
            f"{esc(short_ctl)}</span><span class=badges>{marks}</span>{stall or '<span></span>'}</div>"
        )
    out.append("</div></div></div>")
    return "\n".join(out)


LEGEND = """<details><summary>legend</summary>
<p>Click a source line: its instructions are marked (and the first scrolled to); click an
instruction: its source line. A strip's colour is the source line's; an opcode's background is its
class, as <code>make sass-count</code> counts it. A source line's number on the right: how many
instructions it made. In the SASS, a line number <code>k:N</code> is line N of the k-th file
(0: the stage's own).</p>
<p>Control field (after the operands; NVIDIA does not document it: decoded from the instruction's
bits 105-125 as Jia et al. measured them for Volta to Hopper, harness/sass_lines.py):
<b>S n</b> stall n cycles before the warp issues its next instruction; <b>Y</b> yield (the
scheduler may switch warps); <b>w 0 2</b> wait on scoreboards 0 and 2 (set by an earlier variable-
latency instruction) before issuing; <b>W n</b> set scoreboard n until the result is written;
<b>R n</b> until the operands are read. Hover for the words.</p>
<p><b>R1</b>, <b>R2</b>, ...: the stage's SASS signature rules (lessons.toml, make lessons): a badge
on each instruction a rule counts, green when the rule is met, red when not; the rule's why on
hover. A dashed rule does not apply to this kernel.</p>
<p>Stall column (where the stage has a per-instruction Nsight Compute capture of this kernel): warp
samples at that instruction, the bar scaled to the kernel's largest; hover for the top reasons.</p>
</details>"""


def panel_html(panel, p, files):
    """One panel: its heading, kernel selector and kernels."""
    out = ["<div class=panel><div class=panelhead>"]
    out.append(
        f"<h2>{esc(panel.label)}</h2> <span class=note title='{esc(panel.where_title)}'>{esc(panel.where)}</span>"
    )
    if panel.kernels:
        options = "".join(
            f"<option value=p{p}k{k}>{esc(display_name(kern.title))} "
            f"({len(kern.body)} instructions"
            f"{', stall samples' if stall_samples(kern, panel.profile_path)[0] else ''})</option>"
            for k, kern in enumerate(panel.kernels)
        )
        out.append(f" <select class=kpick data-panel=p{p} title='kernel'>{options}</select>")
    if panel.misses:
        words = "; ".join(f"{rule.label()} in {name}: {msg}" for rule, name, _, msg in panel.misses)
        out.append(f"<div class='chip rule bad'>signature missed: {esc(words)}</div>")
    for note in panel.notes:
        out.append(f"<div class=note>{esc(note)}</div>")
    out.append(LEGEND if p == 0 else "")
    out.append("</div>")
    if not panel.kernels:
        out.append(f"<p>{esc(panel.label)}: no kernels to show.</p>")
    for k, kernel in enumerate(panel.kernels):
        out.append(kernel_section(panel, p, k, kernel, files, k == 0))
    out.append("</div>")
    return "\n".join(out)


def lesson_line(stage_id):
    return lesson.declaration(stage_id).get("lesson", "")


def panels_page(panels, title, nav="", root=ROOT):
    files = SourceFiles(root)
    lessons = {pn.stage_id: lesson_line(pn.stage_id) for pn in panels}
    lines = "".join(
        f"<div class=lessonline>{esc(sid if len(lessons) > 1 else '')}"
        f"{': ' if len(lessons) > 1 else ''}{esc(text)}</div>"
        for sid, text in lessons.items()
        if text
    )
    header = f"<header class=page><h1>{esc(title)}</h1>{nav}{lines}</header>"
    body = "<div class=panels>" + "".join(panel_html(pn, p, files) for p, pn in enumerate(panels))
    return page(title, header + body + "</div>", len(panels))


# ---------------------------------------------------------------- the walk: chapters and indexes


def stage_page_path(out, stage_id, variant="solution", archs=None):
    chapter, stage = stage_id.split("/", 1)
    name = stage + ("" if variant == "solution" else f".{variant}")
    if archs:
        name += "." + "-".join(archs)
    return Path(out) / chapter / f"{name}.html"


def nav_links(index="", prev="", nxt=""):
    links = [(index, "index"), (prev, "\u2190 previous"), (nxt, "next \u2192")]
    return "<nav>" + "".join(f"<a href='{esc(h)}'>{t}</a>" for h, t in links if h) + "</nav>"


def has_kernels(stage_id, arch=course.REFERENCE_ARCH):
    header = course.capture_header(course.capture_path(stage_id, ROOT, arch))
    return course.capture_path(stage_id, ROOT, arch).is_file() and not header.split(": ", 1)[
        -1
    ].startswith(course.NO_KERNELS)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def write_chapter(chapter, out, build="build"):
    """A page per stage with kernels, from the captures, and the chapter's index; the index's
    path and the stage pages."""
    ids = [f"{chapter}/{s}" for s in course.stages(chapter, ROOT)]
    shown = [i for i in ids if has_kernels(i)]
    panels = {stage_id: load_panel(stage_id, build) for stage_id in shown}
    pages, pairs = [], {}
    for n, stage_id in enumerate(shown):
        prev = stage_page_path("", shown[n - 1]).name if n else ""
        nxt = stage_page_path("", shown[n + 1]).name if n + 1 < len(shown) else ""
        nav = nav_links("index.html", prev, nxt)
        title = f"{stage_id} ({n + 1} of {len(shown)})"
        pages.append(
            write(stage_page_path(out, stage_id), panels_page([panels[stage_id]], title, nav))
        )
        if nxt:
            # The step from this stage to the next, side by side: the diff is the lesson.
            name = f"{stage_id.split('/')[1]}--{shown[n + 1].split('/')[1]}.html"
            pair = [panels[stage_id], beside(panels[stage_id], panels[shown[n + 1]])]
            title = f"{stage_id} \u2192 {shown[n + 1].split('/')[1]}"
            write(Path(out) / chapter / name, panels_page(pair, title, nav_links("index.html")))
            pairs[stage_id] = (name, shown[n + 1].split("/")[1])
    rows = []
    for stage_id in ids:
        stage = stage_id.split("/", 1)[1]
        text = esc(lesson_line(stage_id))
        step = ""
        if stage_id in pairs:
            name, nxt = pairs[stage_id]
            step = f"<a href='{name}'>beside {esc(nxt)}</a>"
        if stage_id in shown:
            rows.append(
                f"<tr><td><a href='{stage}.html'>{esc(stage)}</a></td><td>{text}</td>"
                f"<td>{step}</td></tr>"
            )
        else:
            rows.append(
                f"<tr><td>{esc(stage)}</td><td>{text} <i>(no GPU kernels)</i></td><td></td></tr>"
            )
    body = (
        f"<header class=page><h1>{esc(chapter)}: its stages' SASS, in order</h1>"
        f"{nav_links('../index.html')}</header><table class=walk><tr><th>stage</th>"
        f"<th>lesson</th><th>the next step</th></tr>{''.join(rows)}</table>"
    )
    index = write(Path(out) / chapter / "index.html", page(chapter, body, css_class="index"))
    return index, pages


def write_all(out, build="build"):
    rows, lines = [], []
    for chapter in course.chapters(ROOT):
        index, pages = write_chapter(chapter, out, build)
        lines.append(f"{index} ({len(pages)} stage pages)")
        rows.append(
            f"<li><a href='{chapter}/index.html'>{esc(chapter)}</a> ({len(pages)} stages)</li>"
        )
    body = (
        "<header class=page><h1>The course's SASS beside its source, chapter by chapter</h1>"
        f"</header><ol>{''.join(rows)}</ol>"
    )
    top = write(Path(out) / "index.html", page("SASS beside its source", body, css_class="index"))
    return top, lines


# ---------------------------------------------------------------- screenshots


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if found := shutil.which(name):
            return found
    return None


def chromium_args(chromium, size):
    return [
        chromium,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--hide-scrollbars",
        f"--window-size={size}",
    ]


def screenshot(page_path, png, size="1920,1080", chromium=None, fragment=""):
    """A PNG of the page at size, by headless Chromium; fragment (#<id>) marks a source line or an
    instruction first, as a click does."""
    chromium = chromium or find_chromium()
    if not chromium:
        raise UsageError("sass-html: chromium not found (apt-get install chromium)", 3)
    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="course-chromium-") as profile_dir:
        run = subprocess.run(
            chromium_args(chromium, size)
            + [
                f"--user-data-dir={profile_dir}",
                f"--screenshot={png}",
                Path(page_path).resolve().as_uri() + fragment,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    if run.returncode != 0 or not png.is_file():
        raise UsageError(f"sass-html: chromium failed: {run.stderr.strip()[-500:]}", 1)
    return png


def dump_dom(page_path, fragment="", chromium=None):
    """The page's DOM after its script ran, by headless Chromium."""
    chromium = chromium or find_chromium()
    with tempfile.TemporaryDirectory(prefix="course-chromium-") as profile_dir:
        run = subprocess.run(
            chromium_args(chromium, "1920,1080")
            + [
                f"--user-data-dir={profile_dir}",
                "--dump-dom",
                Path(page_path).resolve().as_uri() + fragment,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    return run.stdout


# ---------------------------------------------------------------- commands


def shown_path(path):
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def cmd_page(args):
    out = Path(args.out)
    archs = args.archs.split() if args.archs else []
    if (args.a is None) != (args.b is None):
        raise UsageError("sass-html: A and B go together (make sass-html A=... B=...)")
    if args.a:
        panels = [load_panel(x, args.build, live=True) for x in (args.a, args.b)]
        panels[1] = beside(*panels)
        name = "--".join(
            slug(
                f"{'' if pn.variant == 'solution' else pn.variant + '.'}{pn.stage_id}".replace(
                    "/", "."
                )
            )
            for pn in panels
        )
        name += ".html"
        title = f"{panels[0].label}  vs  {panels[1].label}"
        print(shown_path(write(out / "compare" / name, panels_page(panels, title))))
        return
    if archs and not args.stage:
        raise UsageError("sass-html: ARCHS goes with STAGE (make sass-html STAGE=... ARCHS=...)")
    if args.stage:
        if archs:
            panels = [load_panel(args.stage, args.build, arch) for arch in archs]
            target = stage_page_path(out, panels[0].stage_id, panels[0].variant, archs)
            title = f"{args.stage} on {', '.join(archs)}"
        else:
            panels = [load_panel(args.stage, args.build, live=True)]
            target = stage_page_path(out, panels[0].stage_id, panels[0].variant)
            title = panels[0].label
        print(shown_path(write(target, panels_page(panels, title))))
        return
    if args.chapter:
        if args.chapter not in course.chapters(ROOT):
            raise UsageError(
                f"sass-html: unknown chapter '{args.chapter}'; chapters: "
                f"{', '.join(course.chapters(ROOT))}"
            )
        index, pages = write_chapter(args.chapter, out, args.build)
        print(f"{shown_path(index)} ({len(pages)} stage pages)")
        return
    top, lines = write_all(out, args.build)
    for line in lines:
        print(shown_path(line.split(" ", 1)[0]), line.split(" ", 1)[1])
    print(shown_path(top))


def cmd_screenshot(args):
    fragment = f"#{args.mark}" if args.mark else ""
    print(shown_path(screenshot(args.page, args.out, args.size, fragment=fragment)))


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sass_html.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    sub = parser.add_subparsers(dest="command", required=True)
    pg = sub.add_parser(
        "page", help="write pages (one stage, two, several architectures, chapters)"
    )
    pg.add_argument("--build", default="build", help="build directory holding stages.json")
    pg.add_argument("--out", default="build/sass-html", help="where the pages go")
    pg.add_argument(
        "--stage", help="a stage: 12-reduction/09_shuffle, exercise/12-reduction/09_shuffle"
    )
    pg.add_argument("--a", help="with --b: two stages side by side")
    pg.add_argument("--b")
    pg.add_argument("--archs", help='with --stage: architectures, e.g. "sm_80 sm_90 sm_120"')
    pg.add_argument("--chapter", help="a chapter: a page per stage and its index")
    pg.set_defaults(run=cmd_page)
    shot = sub.add_parser("screenshot", help="a PNG of a page in headless Chromium")
    shot.add_argument("page")
    shot.add_argument("--out", required=True)
    shot.add_argument("--size", default="1920,1080", help="window WIDTH,HEIGHT")
    shot.add_argument(
        "--mark", metavar="ID", help="a source line or instruction to mark first (p0k0-f0-22)"
    )
    shot.set_defaults(run=cmd_screenshot)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except UsageError as err:
        print(err, file=sys.stderr)
        return getattr(err, "status", 2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
