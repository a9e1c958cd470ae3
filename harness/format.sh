#!/usr/bin/env bash
# The format gate: clang-format (C++/CUDA), ruff (Python), cmake-format (CMake), shellcheck (shell)
# and codespell (spelling), each with its configuration at the repository root (.clang-format,
# ruff.toml, .cmake-format.yaml, .codespellrc).
#
#   harness/format.sh [check] [FILE...]   every violation, one line each (FILE:LINE: what); status 1
#                                         if there is any (make lint; the pre-commit hook)
#   harness/format.sh --fix [FILE...]     format in place (clang-format, ruff's safe fixes and
#                                         format, cmake-format), then check what is left (make format)
#   harness/format.sh --install           install the tools and nothing else
# Without FILE: every file git tracks. The tools are installed when missing (root: apt-get, and
# npm for ruff's WebAssembly build into .tools/), else the one command that installs them is
# printed (status 2). Spelling and shell findings are never fixed automatically: a person decides.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

# ruff has no Debian 12 package: its WebAssembly build from npm, pinned (harness/ruff.mjs runs it).
RUFF_NPM="@astral-sh/ruff-wasm-nodejs@0.17.4"
# The formatters' output depends on their version: the gate is Debian 12's.
CLANG_FORMAT_MAJOR=14

mode=check
case "${1:-}" in
  check) shift ;;
  --fix) mode=fix; shift ;;
  --install) mode=install; shift ;;
  -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "format.sh: unknown option '$1' (check, --fix, --install)" >&2; exit 2 ;;
esac

clang_format=$(command -v "clang-format-$CLANG_FORMAT_MAJOR" || command -v clang-format || true)
ruff_installed() { [ -e .tools/node_modules/@astral-sh/ruff-wasm-nodejs/package.json ]; }

install_tools() {
  local packages=()
  [ -n "$clang_format" ] || packages+=(clang-format)
  command -v shellcheck >/dev/null || packages+=(shellcheck)
  command -v codespell >/dev/null || packages+=(codespell)
  command -v cmake-format >/dev/null || packages+=(cmake-format)
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
  local npm_missing=
  ruff_installed || npm_missing=1
  [ ${#packages[@]} -eq 0 ] && [ -z "$npm_missing" ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    local how=""
    [ ${#packages[@]} -gt 0 ] && how="sudo apt-get install ${packages[*]} && "
    echo "format.sh: missing: ${packages[*]}${npm_missing:+ ruff}; install with: ${how}harness/format.sh --install" >&2
    [ ${#packages[@]} -gt 0 ] && exit 2
  fi
  if [ ${#packages[@]} -gt 0 ]; then
    echo "format.sh: installing ${packages[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null) ||
      { echo "format.sh: apt-get install ${packages[*]} failed" >&2; exit 2; }
    clang_format=$(command -v "clang-format-$CLANG_FORMAT_MAJOR" || command -v clang-format)
  fi
  if ! ruff_installed; then
    echo "format.sh: installing $RUFF_NPM into .tools/"
    mkdir -p .tools && [ -e .tools/package.json ] || echo '{"private": true}' >.tools/package.json
    npm install --prefix .tools --no-audit --no-fund --save-exact --loglevel=error "$RUFF_NPM" >/dev/null ||
      { echo "format.sh: npm install $RUFF_NPM failed" >&2; exit 2; }
  fi
}
install_tools
[ "$mode" = install ] && exit 0
version=$("$clang_format" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
[ "$version" = "$CLANG_FORMAT_MAJOR" ] ||
  echo "format.sh: note: $clang_format is version $version; the gate is clang-format $CLANG_FORMAT_MAJOR (Debian 12), whose output may differ" >&2

# The files: those named (the hook's staged files), else every tracked file; each tool gets its own.
if [ $# -gt 0 ]; then
  mapfile -t files < <(for f in "$@"; do [ -f "$f" ] && echo "$f"; done)
else
  mapfile -t files < <(git ls-files)
fi
cxx=() py=() cmake=() sh=() text=()
for f in "${files[@]}"; do
  case "$f" in
    *.cu | *.cuh | *.cpp | *.h | *.hpp) cxx+=("$f") ;;
    *.py) py+=("$f") ;;
    CMakeLists.txt | */CMakeLists.txt | *.cmake) cmake+=("$f") ;;
    *.sh) sh+=("$f") ;;
    # A script without an extension (.ci/run, the git hooks) by its #! line.
    *) [[ ${f##*/} != *.* ]] && IFS= read -r line <"$f" &&
      [[ $line =~ ^#!.*[/\ ](ba)?sh([[:space:]]|$) ]] && sh+=("$f") ;;
  esac
  # Spelling: prose and code, not captured evidence (SASS, profiler tables, results, images).
  case "$f" in
    *.sass | *.csv | *.json | *.png | *.svg | *.pgm | *.ptx | *.ipynb) ;;
    *) text+=("$f") ;;
  esac
done

# The C++ token streams (comments dropped, lines spliced, white space outside literals dropped):
# clang-format must leave them as they were, or evidence stamps would go stale.
tokens() {
  python3 - "$@" <<'PY'
import hashlib, re, sys
LEX = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(]*)\(.*?\)\1"|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|\w+|\s+|'
                 r'>>=|<<=|->\*|\.\.\.|<=>|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\.\*|##|.', re.S)
for path in sys.argv[1:]:
    text = re.sub(r"\\[ \t]*\n", "", open(path, encoding="utf-8").read())
    kept = (m.group(0) for m in LEX.finditer(text) if not m.group(0).isspace()
            and not m.group(0).startswith(("//", "/*")))
    print(hashlib.sha256("\0".join(kept).encode()).hexdigest(), path)
PY
}

if [ "$mode" = fix ]; then
  before=$(tokens "${cxx[@]}")
  [ ${#cxx[@]} -gt 0 ] && "$clang_format" -i "${cxx[@]}"
  changed=$(diff <(echo "$before") <(tokens "${cxx[@]}") | sed -n 's/^> [0-9a-f]* //p')
  if [ -n "$changed" ]; then
    while read -r f; do echo "$f: clang-format changed a token (see .clang-format; git diff shows it)"; done \
      <<<"$changed" >&2
    exit 1
  fi
  [ ${#py[@]} -gt 0 ] && node harness/ruff.mjs --fix "${py[@]}" >/dev/null
  [ ${#cmake[@]} -gt 0 ] && cmake-format -i "${cmake[@]}"
fi

# Check: each tool's findings as FILE:LINE: lines.
status=0
report() { [ -n "$1" ] && { printf '%s\n' "$1"; status=1; }; }
# clang-format names every line it would change: the first of each file is enough.
[ ${#cxx[@]} -gt 0 ] && report "$("$clang_format" --dry-run "${cxx[@]}" 2>&1 |
  sed -n 's/^\(.*:[0-9]*\):[0-9]*: warning: code should be clang-formatted.*/\1/p' | awk -F: '!seen[$1]++' |
  sed 's/$/: not formatted (clang-format; harness\/format.sh --fix)/')"
# clang-format 14 indents a comment that comes between a brace-less if or for body and a
# preprocessor line (#pragma unroll, #if) as if it belonged to that body; braces put it back.
[ ${#cxx[@]} -gt 0 ] && report "$(python3 - "${cxx[@]}" <<'PY'
import sys
for path in sys.argv[1:]:
    lines = open(path, encoding="utf-8").read().split("\n")
    indent = lambda line: len(line) - len(line.lstrip())
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("//"):
            j += 1
        k = j
        while k < len(lines) and lines[k].startswith("#"):
            k += 1
        code = lines[k].strip() if k < len(lines) else ""
        if j > i and k > j and code and not code.startswith("}") and indent(lines[i]) > indent(lines[k]):
            print(f"{path}:{i + 1}: comment indented under the brace-less statement above it "
                  "(clang-format 14, before a # line): put that statement in braces")
        i = max(j, i + 1)
PY
)"
[ ${#py[@]} -gt 0 ] && report "$(node harness/ruff.mjs "${py[@]}")"
# cmake-format starts slowly: all files at once, and one by one only to name those that fail.
if [ ${#cmake[@]} -gt 0 ] && ! cmake-format --check "${cmake[@]}" >/dev/null 2>&1; then
  out=""
  for f in "${cmake[@]}"; do
    cmake-format --check "$f" >/dev/null 2>&1 || out+="$f: not formatted (cmake-format; harness/format.sh --fix)"$'\n'
  done
  report "${out%$'\n'}"
fi
[ ${#sh[@]} -gt 0 ] && report "$(shellcheck -f gcc "${sh[@]}")"
[ ${#text[@]} -gt 0 ] && report "$(codespell "${text[@]}")"

if [ $status -ne 0 ]; then
  echo "format.sh: the violations above (${#files[@]} files checked)" >&2
fi
exit $status
