// Ruff (format and lint) for the course's Python, through ruff's WebAssembly build: Debian 12 has
// no ruff package, and npm has this one. harness/format.sh installs it (pinned, into .tools/) and
// calls this script; a contributor with a native ruff gets the same verdicts from `ruff format`
// and `ruff check`, which read the same ruff.toml.
//
//   node harness/ruff.mjs [--fix] FILE...
// Without --fix: one line per violation (FILE:LINE:COL: CODE message, or FILE: not formatted) and
// status 1 if there is any. With --fix: the safe fixes applied and the files formatted in place,
// then what is left reported the same way.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// V8's baseline compiler only: the optimising tier would recompile the 10 MB module in the
// background, and node waits for it at exit (15 s on two busy cores, for a run of one second).
v8.setFlagsFromString("--liftoff-only");
const require = createRequire(join(root, ".tools", "package.json"));
let ruff;
try {
  ruff = require("@astral-sh/ruff-wasm-nodejs");
} catch {
  console.error("ruff.mjs: ruff is not installed; run: harness/format.sh --install");
  process.exit(2);
}

// The fixes applied by --fix: those ruff itself counts safe for these rules (imports sorted, an
// unused import or an empty f-string prefix removed, a stray semicolon). The WebAssembly build
// does not say which fixes are unsafe, so anything else is reported for a person to decide.
const SAFE_FIXES = new Set(["I001", "F401", "F541", "E703"]);

const args = process.argv.slice(2);
const fix = args[0] === "--fix";
const files = fix ? args.slice(1) : args;

// ruff.toml is TOML; node reads no TOML, so python3 (which the course needs anyway) converts it.
const settings = JSON.parse(
  execFileSync(
    "python3",
    ["-c", "import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))",
      join(root, "ruff.toml")],
    { encoding: "utf8" },
  ),
);
// UTF-16 positions: the column numbers then index JavaScript strings directly.
const workspace = new ruff.Workspace(settings, ruff.PositionEncoding.Utf16);

function offsets(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return (loc) => starts[loc.row - 1] + loc.column - 1;
}

// One round of safe fixes that do not overlap, applied from the end so that offsets stay valid.
function applySafeFixes(text) {
  const at = offsets(text);
  const edits = [];
  for (const d of workspace.check(text)) {
    if (!d.fix || !SAFE_FIXES.has(d.code)) continue;
    const fixEdits = d.fix.edits.map((e) => ({
      start: at(e.location),
      end: at(e.end_location),
      content: e.content ?? "",
    }));
    const overlaps = fixEdits.some((e) =>
      edits.some((o) => e.start < o.end && o.start < e.end),
    );
    if (!overlaps) edits.push(...fixEdits);
  }
  edits.sort((a, b) => b.start - a.start);
  for (const e of edits) text = text.slice(0, e.start) + e.content + text.slice(e.end);
  return [text, edits.length > 0];
}

let problems = 0;
for (const file of files) {
  const original = readFileSync(file, "utf8");
  let text = original;
  try {
    if (fix) {
      for (let round = 0, changed = true; changed && round < 10; round++) {
        [text, changed] = applySafeFixes(text);
      }
      text = workspace.format(text);
      if (text !== original) writeFileSync(file, text);
    } else if (workspace.format(text) !== text) {
      console.log(`${file}: not formatted (ruff format; harness/format.sh --fix)`);
      problems++;
    }
  } catch (error) {
    console.log(`${file}: ruff cannot parse it: ${String(error).split("\n")[0]}`);
    problems++;
    continue;
  }
  for (const d of workspace.check(text)) {
    const where = `${file}:${d.start_location.row}:${d.start_location.column}`;
    console.log(`${where}: ${d.code ?? "syntax"} ${d.message}`);
    problems++;
  }
}
process.exit(problems ? 1 : 0);
