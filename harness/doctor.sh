#!/usr/bin/env bash
# `make doctor`: what this machine has for the course, and which parts of the course will run here.
# It only reports, so it always exits 0. A missing piece names the command that installs it where
# this machine's package lists have it; the CUDA Toolkit's tools (cuobjdump, compute-sanitizer, ncu,
# NPP) come from NVIDIA (the toolkit's installer, or NVIDIA's CUDA repository), not from Debian's or
# Ubuntu's own repositories: then the row says so, and what the course does without the tool.
set -u

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo "

row() {  # row NAME TEXT
  printf '  %-19s %s\n' "$1" "$2"
}

installs() {  # installs PACKAGE... -> "<sudo >apt-get install PACKAGE..."
  echo "${SUDO}apt-get install $*"
}

version_at_least() {  # version_at_least HAVE NEED
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# --- probes: each sets the variables the summary uses ---------------------------------------

probe_os() {
  local name="unknown"
  if [ -r /etc/os-release ]; then
    # shellcheck source=/dev/null
    name=$(. /etc/os-release && echo "${PRETTY_NAME:-$NAME}")
  fi
  row "OS" "$name, $(uname -m), kernel $(uname -r)"
}

probe_toolkit() {
  NVCC=$(command -v nvcc || true)
  for dir in ${CUDA_HOME:-} ${CUDA_PATH:-} /usr/local/cuda; do
    [ -z "$NVCC" ] && [ -x "$dir/bin/nvcc" ] && NVCC="$dir/bin/nvcc"
  done
  CUDA_VERSION=""
  CUDA_ROOT=""
  # Package names carry the toolkit version (cuda-cuobjdump-13-0); 13-0 when there is no nvcc.
  CUDA_PKG="13-0"
  if [ -z "$NVCC" ]; then
    row "CUDA Toolkit" "missing: $(installs cuda-toolkit-13-0)"
    return
  fi
  CUDA_VERSION=$("$NVCC" --version | sed -n 's/.*release \([0-9][0-9.]*\),.*/\1/p')
  CUDA_ROOT=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
  CUDA_PKG=${CUDA_VERSION//./-}
  row "CUDA Toolkit" "${CUDA_VERSION:-unknown version} ($NVCC)"
}

probe_gpu() {
  GPU=0
  DRIVER_CUDA=""
  if ! command -v nvidia-smi >/dev/null; then
    row "GPU" "none (no nvidia-smi: no NVIDIA driver on this machine)"
    return
  fi
  local list
  if ! list=$(nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv,noheader 2>&1); then
    row "GPU" "none (nvidia-smi: $(echo "$list" | head -n 1))"
    return
  fi
  DRIVER_CUDA=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)
  local index name cc driver
  while IFS=',' read -r index name cc driver; do
    GPU=$((GPU + 1))
    # nvidia-smi separates its CSV fields with ", ".
    row "GPU $index" "${name# }, compute capability ${cc# }, driver ${driver# } (CUDA ${DRIVER_CUDA:-?})"
  done <<< "$list"
  if [ "$GPU" = 0 ]; then
    row "GPU" "none (nvidia-smi lists no GPU)"
  elif [ -n "$CUDA_VERSION" ] && [ -n "$DRIVER_CUDA" ] && ! version_at_least "$DRIVER_CUDA" "$CUDA_VERSION"; then
    # Programs built with a newer toolkit than the driver supports fail at their first CUDA call.
    row "" "warning: the driver supports CUDA $DRIVER_CUDA, older than the toolkit's $CUDA_VERSION"
  fi
}

probe_cmake() {
  CMAKE_OK=0
  if ! command -v cmake >/dev/null; then
    row "cmake" "missing: $(installs cmake)"
    return
  fi
  local version
  version=$(cmake --version | sed -n '1s/.*version \([0-9][0-9.]*\).*/\1/p')
  if version_at_least "$version" 3.24; then
    CMAKE_OK=1
    row "cmake" "$version (need >= 3.24: ok)"
  else
    row "cmake" "$version, too old (need >= 3.24): pip install --user 'cmake>=3.24'"
  fi
}

probe_compiler() {
  CXX_OK=0
  local cxx
  for cxx in ${CXX:-} g++ clang++ c++; do
    command -v "$cxx" >/dev/null || continue
    if echo 'int main() { if constexpr (true) return 0; }' |
       "$cxx" -std=c++17 -x c++ -fsyntax-only - 2>/dev/null; then
      CXX_OK=1
      row "C++17 compiler" "$("$cxx" --version | head -n 1)"
      return
    fi
  done
  row "C++17 compiler" "missing: $(installs g++)"
}

probe_catch2() {
  CATCH2=""
  local dir config
  for dir in /usr/include /usr/local/include; do
    if [ -e "$dir/catch2/catch_all.hpp" ]; then
      CATCH2="v3 ($dir/catch2/catch_all.hpp)"
    elif [ -z "$CATCH2" ] && [ -e "$dir/catch2/catch.hpp" ]; then
      CATCH2="v2 ($dir/catch2/catch.hpp)"
    fi
  done
  if [ -z "$CATCH2" ]; then
    for config in /usr/lib/cmake/Catch2 /usr/local/lib/cmake/Catch2 /usr/lib/*/cmake/Catch2 /usr/share/cmake/Catch2; do
      [ -e "$config/Catch2ConfigVersion.cmake" ] || continue
      CATCH2="$(sed -n 's/.*PACKAGE_VERSION "\([0-9.]*\)".*/\1/p' "$config/Catch2ConfigVersion.cmake" | head -n 1) ($config)"
      break
    done
  fi
  if [ -n "$CATCH2" ]; then
    row "Catch2" "$CATCH2"
  else
    row "Catch2" "missing: $(installs catch2)"
  fi
}

probe_ninja() {
  if command -v ninja >/dev/null; then
    row "ninja" "$(ninja --version) (optional: faster builds)"
  else
    row "ninja" "not found (optional, faster builds): $(installs ninja-build)"
  fi
}

has_matplotlib() {  # has_matplotlib PYTHON -> prints the version, fails when missing
  "$1" -c 'import matplotlib; print(matplotlib.__version__)' 2>/dev/null
}

probe_python() {
  PLOT_PYTHON=""
  PYTHON_OK=0
  local py version mpl seen=""
  for py in $(command -v python3 || true) /usr/bin/python3; do
    [ -x "$py" ] || continue
    # The same interpreter twice (python3 on PATH is /usr/bin/python3) is reported once.
    case " $seen " in *" $(readlink -f "$py") "*) continue ;; esac
    seen="$seen $(readlink -f "$py")"
    PYTHON_OK=1
    version=$("$py" -c 'import platform; print(platform.python_version())')
    if mpl=$(has_matplotlib "$py"); then
      [ -n "$PLOT_PYTHON" ] || PLOT_PYTHON="$py"
      row "python3" "$version ($py), matplotlib $mpl"
    else
      row "python3" "$version ($py), no matplotlib"
    fi
  done
  if [ "$PYTHON_OK" = 0 ]; then
    row "python3" "missing: $(installs python3 python3-matplotlib)"
  elif [ -z "$PLOT_PYTHON" ]; then
    row "matplotlib" "missing: $(installs python3-matplotlib)"
  fi
}

find_cuda_tool() {  # find_cuda_tool NAME -> path on PATH or in the toolkit, else fails
  local found
  found=$(command -v "$1" || true)
  [ -z "$found" ] && [ -n "$CUDA_ROOT" ] && [ -x "$CUDA_ROOT/bin/$1" ] && found="$CUDA_ROOT/bin/$1"
  [ -z "$found" ] && [ -x "/usr/local/cuda/bin/$1" ] && found="/usr/local/cuda/bin/$1"
  # Nsight Compute also installs outside the toolkit, one directory per version.
  local candidate
  for candidate in /opt/nvidia/nsight-compute/*/"$1"; do
    [ -z "$found" ] && [ -x "$candidate" ] && found="$candidate"
  done
  [ -n "$found" ] && echo "$found"
}

# Where a CUDA Toolkit component comes from: the apt command when this machine's package lists
# carry it (NVIDIA's repository is configured), else NVIDIA's installer or repository.
nvidia_source() {  # nvidia_source PACKAGE -> text
  if command -v apt-cache >/dev/null && apt-cache show "$1" >/dev/null 2>&1; then
    installs "$1"
  else
    echo "it comes with NVIDIA's CUDA Toolkit (the runfile installer, or package $1 from NVIDIA's CUDA repository; Debian's and Ubuntu's own repositories do not carry it)"
  fi
}

probe_tool() {  # probe_tool NAME PACKAGE PURPOSE WITHOUT -> sets HAVE_<NAME>
  local path var
  var="HAVE_$(echo "$1" | tr '[:lower:]-' '[:upper:]_')"
  if path=$(find_cuda_tool "$1"); then
    printf -v "$var" 1
    row "$1" "$path"
  else
    printf -v "$var" 0
    row "$1" "missing ($3): $(nvidia_source "$2-$CUDA_PKG")"
    [ -n "${4:-}" ] && row "" "without it: $4"
  fi
}

find_cuda_lib() {  # find_cuda_lib NAME -> the first libNAME.so* in the toolkit's library dirs
  local dir lib
  for dir in "$CUDA_ROOT/lib64" "$CUDA_ROOT"/targets/*/lib /usr/local/cuda/lib64 \
             /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu; do
    for lib in "$dir/lib$1.so"*; do
      [ -e "$lib" ] && echo "$lib" && return 0
    done
  done
  return 1
}

probe_lib() {  # probe_lib LABEL LIB PACKAGE PURPOSE -> sets HAVE_<LIB>
  local path var
  var="HAVE_$(echo "$2" | tr '[:lower:]' '[:upper:]')"
  if path=$(find_cuda_lib "$2"); then
    printf -v "$var" 1
    row "$1" "$path"
  else
    printf -v "$var" 0
    row "$1" "missing ($4): $(nvidia_source "$3-$CUDA_PKG")"
  fi
}

# --- what will run --------------------------------------------------------------------------

lacking() {  # lacking "NEED=0|1"... -> the NEEDs that are 0, comma-separated (empty: none)
  local need list=""
  for need in "$@"; do
    [ "${need##*=}" = 1 ] || list="${list:+$list, }${need%=*}"
  done
  echo "$list"
}

verdict() {  # verdict NAME "NEED=0|1"... -> "yes", or "no: needs" and the NEEDs that are 0
  local name=$1 missing
  shift
  missing=$(lacking "$@")
  if [ -z "$missing" ]; then
    row "$name" "yes"
  else
    row "$name" "no: needs $missing"
  fi
}

summary() {
  local build=0 catch2=0 gpu=0 python=$PYTHON_OK
  [ -n "$NVCC" ] && [ "$CMAKE_OK" = 1 ] && [ "$CXX_OK" = 1 ] && build=1
  [ -n "$CATCH2" ] && catch2=1
  [ "$GPU" -gt 0 ] && gpu=1

  verdict "build" "the CUDA Toolkit=$([ -n "$NVCC" ] && echo 1)" "cmake >= 3.24=$CMAKE_OK" \
          "a C++17 compiler=$CXX_OK"
  verdict "host tests" "the build=$build" "Catch2=$catch2" "python3=$python"
  verdict "GPU tests" "the build=$build" "Catch2=$catch2" "an NVIDIA GPU=$gpu"
  local bench_needs=("the build=$build" "an NVIDIA GPU=$gpu" "cuBLAS=$HAVE_CUBLAS")
  verdict "benchmarks" "${bench_needs[@]}"
  # Without a GPU the tour builds nothing: it prints the committed reference runs (harness/tour.py).
  if [ "$gpu" = 0 ]; then
    row "make tour" "yes: the committed reference runs (no GPU here)"
  elif [ -z "$(lacking "${bench_needs[@]}")" ]; then
    row "make tour" "yes: builds and runs every benchmark"
  else
    row "make tour" "no: needs $(lacking "${bench_needs[@]}")"
  fi
  verdict "make sanitize" "the build=$build" "Catch2=$catch2" "an NVIDIA GPU=$gpu" \
          "compute-sanitizer=$HAVE_COMPUTE_SANITIZER"
  if [ "$HAVE_CUOBJDUMP" = 1 ]; then
    row "make sass" "yes"
  else
    # Your stage's PTX comes from nvcc alone; the reference's SASS was captured on the reference GPU
    # and committed, so it needs no CUDA tool.
    row "make sass" "your stage's PTX (no cuobjdump); the reference's SASS captures by its name:"
    row "" "make sass STAGE=<chapter>/<stage>"
  fi
  if [ -n "$PLOT_PYTHON" ]; then
    row "make plots" "yes ($PLOT_PYTHON)"
  else
    row "make plots" "no: needs matplotlib: $(installs python3-matplotlib)"
  fi
  verdict "NPP baselines" "the build=$build" "an NVIDIA GPU=$gpu" "NPP=$HAVE_NPPC"
}

# Per chapter, what the GPU present can run (chapters/<chapter>/lessons.toml's `needs`).
chapters_on_gpu() {
  [ "$GPU" -gt 0 ] || return
  local cc
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' ')
  [ -n "$cc" ] || return
  echo
  echo "The chapters on this GPU (compute capability $cc, $GPU GPU(s)); goals in the benchmarks are the reference H100's"
  if version_at_least "$cc" 7.5; then
    python3 "$(dirname "$0")/lesson.py" needs --cc "$cc" --gpus "$GPU" 2>/dev/null ||
      row "" "(python3 3.11 or newer reads chapters/*/lessons.toml)"
  else
    row "" "compute capability $cc is below the course's minimum, 7.5 (Turing: T4, RTX 20): the GPU tests will fail"
  fi
}

main() {
  echo "CUDA course doctor: what this machine has"
  probe_os
  probe_toolkit
  probe_gpu
  probe_cmake
  probe_compiler
  probe_catch2
  probe_ninja
  probe_python
  probe_tool cuobjdump cuda-cuobjdump "make sass, and the SASS signature make check judges" \
    "make check says 'SASS not checked'; make sass: below"
  probe_tool nvdisasm cuda-nvdisasm "control-flow graphs of SASS" ""
  probe_tool compute-sanitizer cuda-sanitizer "make sanitize, and make check STAGE=... on a GPU" \
    "make check STAGE=... runs the tests without the three sanitizer runs"
  probe_tool ncu cuda-nsight-compute "kernel profiles" \
    "make profile and make check-perf read the profiles committed from the reference GPU"
  probe_lib "NPP" nppc libnpp-dev "chapter baselines"
  probe_lib "cuBLAS" cublas libcublas-dev "the benchmarks' library baseline"
  echo
  echo "What will run here"
  summary
  chapters_on_gpu
}

main
exit 0
