# The course from the repository root. `make help` lists the targets.
BUILD    ?= build
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# Sanitizer runs at once: each is mostly CPU work beside a GPU context of a few hundred MB.
SANITIZE_JOBS ?= $(JOBS)
CHAPTERS := 11-streaming 12-reduction 13-scan 14-nbody 15-ncc
CHAPTER  ?= 11-streaming
# ARCH="80;90" overrides the CUDA architectures (default: the GPUs present, else 90).
ARCH     ?=
# CMAKE_ARGS="-D..." more options for the first configure (CI: -DCOURSE_WARNINGS_AS_ERRORS=ON).
CMAKE_ARGS ?=
PYTHON   ?= python3
# matplotlib may live in another interpreter than the first python3 on PATH (pyenv, venvs).
PLOT_PYTHON := $(shell for p in $(PYTHON) /usr/bin/python3; do $$p -c 'import matplotlib' 2>/dev/null && { echo $$p; break; }; done)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
# Build on past a target that fails (an exercise that does not compile), for the targets that run many.
KEEP_GOING := $(if $(GENERATOR),-- -k 0,-- -k)

.PHONY: help deps configure build check progress tour bench nbody ncc sanitize sass sass-count sass-diff plots doctor exercises reset clean

help:
	@echo "The CUDA Handbook, Part III, as staged exercises. From the repository root:"
	@echo ""
	@echo "  make tour                    build, then run every chapter's reference stages with its progression table"
	@echo "  make check                   build and run every test (no GPU: GPU tests are reported skipped)"
	@echo "  make check STAGE=01_grid     only tests whose name matches (e.g. STAGE=exercise/11-streaming/02)"
	@echo "                               one stage: its tests, then memcheck, racecheck, synccheck on a GPU"
	@echo "  make progress                every exercise's state from the last runs, your time beside the reference"
	@echo "  make bench CHAPTER=11-streaming [EXERCISE=1] [ARGS='--N 64']   one chapter's benchmark"
	@echo "  make nbody ARGS='--N 16384 --steps 100 --stage 07'    the N-body simulation (chapter 14)"
	@echo "  make ncc ARGS='--wTemplate 16 --hTemplate 16'         template matching on a PGM (chapter 15)"
	@echo "  make sanitize [STAGE=...]    GPU tests under compute-sanitizer memcheck, racecheck, synccheck"
	@echo "  make sass STAGE=11-streaming/03_vectorized_float4      SASS of a stage's kernels"
	@echo "  make sass-count STAGE=...    instruction counts by class"
	@echo "  make sass-diff A=11-streaming/02_unrolled_templated B=11-streaming/03_vectorized_float4"
	@echo "  make plots                   PNG charts from results/*.json"
	@echo "  make doctor                  what this machine has, and what of the course runs here"
	@echo "  make exercises               regenerate chapters/ stage files from solutions/ (keeps your regions)"
	@echo "  make reset STAGE=11-streaming/01_grid_stride           put the exercise stub back"
	@echo "  make clean"
	@echo ""
	@echo "Stages:"
	@for f in solutions/*/[0-9]*.cu; do s=$${f#solutions/}; echo "  $${s%.cu}"; done

# The chapters' programs, with their options in ARGS (--help lists them).
# Each target builds only what it runs: an exercise that does not compile blocks nothing else.
nbody: configure
	@cmake --build $(BUILD) -j $(JOBS) --target nbody
	$(BUILD)/bin/nbody $(ARGS)

ncc: configure
	@cmake --build $(BUILD) -j $(JOBS) --target ncc
	$(BUILD)/bin/ncc $(ARGS)

deps:
	@harness/deps.sh

$(BUILD)/CMakeCache.txt:
	@harness/deps.sh
	cmake -S . -B $(BUILD) $(GENERATOR) $(if $(ARCH),-DCMAKE_CUDA_ARCHITECTURES="$(ARCH)") $(CMAKE_ARGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# harness/check.py: builds what the selected tests need (going on past a stage that does not
# compile, and naming it), runs them, runs the sanitizers when STAGE selects one stage on a GPU,
# prints a summary per stage and records it for `make progress`.
check: configure
	@$(PYTHON) harness/check.py run --build $(BUILD) --jobs $(JOBS) $(if $(STAGE),--stage "$(STAGE)")

progress:
	@$(PYTHON) harness/check.py progress --build $(BUILD)

tour: configure
	@cmake --build $(BUILD) -j $(JOBS) --target $(addprefix bench-,$(CHAPTERS))
	@for c in $(CHAPTERS); do $(BUILD)/bin/bench-$$c $(ARGS) || exit 1; done

# The exercises' benchmark writes under results/exercise/, beside the solutions' results/.
bench: configure
	@cmake --build $(BUILD) -j $(JOBS) --target bench-$(CHAPTER)$(if $(EXERCISE),-exercise)
	$(BUILD)/bin/bench-$(CHAPTER)$(if $(EXERCISE),-exercise) $(if $(EXERCISE),--results results/exercise) $(ARGS)

# Each sanitizer run is a process of its own on a shared GPU: they run side by side.
sanitize: configure
	@cmake --build $(BUILD) -j $(JOBS) $(KEEP_GOING) || echo "sanitize: some targets did not build (above): their tests will fail"
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j $(SANITIZE_JOBS) -L sanitize $(if $(STAGE),-R "$(STAGE)")

# The object library of a stage named exercise/<chapter>/<stage>, solution/... or <chapter>/<stage>.
stage_object = $(if $(filter exercise/%,$(1)),exercise.$(subst /,.,$(patsubst exercise/%,%,$(1))),solution.$(subst /,.,$(patsubst solution/%,%,$(1))))
# SASS needs only the stages' objects (or, without cuobjdump, nothing: the committed captures).
sass_objects = cmake --build $(BUILD) -j $(JOBS) --target $(foreach s,$(1),$(call stage_object,$(s))) >/dev/null 2>&1 || true

sass: configure
	@$(call sass_objects,$(STAGE))
	@$(PYTHON) harness/sass.py dump --build $(BUILD) $(STAGE)

sass-count: configure
	@$(call sass_objects,$(STAGE))
	@$(PYTHON) harness/sass.py count --build $(BUILD) $(STAGE)

sass-diff: configure
	@$(call sass_objects,$(A) $(B))
	@$(PYTHON) harness/sass.py diff --build $(BUILD) $(A) $(B)

plots:
	@if [ -z "$(PLOT_PYTHON)" ]; then echo "plots: matplotlib not found; install it with: apt-get install python3-matplotlib"; exit 3; fi
	@$(PLOT_PYTHON) plots/plot.py

doctor:
	@bash harness/doctor.sh

exercises:
	@$(PYTHON) harness/exercises.py generate

reset:
	@$(PYTHON) harness/exercises.py reset -- "$(STAGE)"

clean:
	rm -rf $(BUILD)
