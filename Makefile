# The course from the repository root. `make help` lists the targets.
BUILD    ?= build
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# Sanitizer runs at once: each is mostly CPU work beside a GPU context of a few hundred MB.
SANITIZE_JOBS ?= $(JOBS)
# Chapters, stages and benchmarks are read from the tree (harness/course.py), never listed here.
CHAPTER  ?= 11-streaming
# ARCH="80;90" overrides the CUDA architectures (default: the GPUs present, else 90).
ARCH     ?=
# CMAKE_ARGS="-D..." more options for the first configure (CI: -DCOURSE_WARNINGS_AS_ERRORS=ON).
CMAKE_ARGS ?=
PYTHON   ?= python3
# matplotlib may live in another interpreter than the first python3 on PATH (pyenv, venvs).
PLOT_PYTHON = $(shell for p in $(PYTHON) /usr/bin/python3; do $$p -c 'import matplotlib' 2>/dev/null && { echo $$p; break; }; done)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
# Build on past a target that fails (an exercise that does not compile), for the targets that run many.
KEEP_GOING := $(if $(GENERATOR),-- -k 0,-- -k)

.PHONY: help deps configure build archs check progress hint lessons lessons-calibrate tour bench bench-ranks model-ranks nbody ncc sanitize sass sass-count sass-diff sass-html sass-capture profile profile-diff profile-capture reference check-perf plots tables notebook doctor exercises reset format lint hooks clean

# Arguments are checked before a target does anything (configure included): an unknown chapter or
# stage, or a missing variable, stops make with one line naming the valid choices (status 2).
VALIDATED := bench sass sass-count sass-diff reset nbody ncc check sanitize profile profile-diff profile-capture hint
quote = '$(subst ','\'',$(1))'
ifneq ($(and $(filter $(VALIDATED),$(MAKECMDGOALS)),$(wildcard harness/course.py)),)
ARGS_ERROR := $(shell $(PYTHON) harness/course.py validate $(filter $(VALIDATED),$(MAKECMDGOALS)) \
  $(call quote,CHAPTER=$(CHAPTER)) $(call quote,STAGE=$(STAGE)) $(call quote,A=$(A)) $(call quote,B=$(B)) \
  $(call quote,ARGS=$(ARGS)))
ifneq ($(ARGS_ERROR),)
$(error $(ARGS_ERROR))
endif
endif

# make check GRADES=DIR [GRADING=FILE]: the run's verdicts for a class grader (harness/verdicts.py,
# docs/grading.md), the folder and the grading file checked before anything runs.
ifneq ($(and $(filter check,$(MAKECMDGOALS)),$(or $(GRADES),$(GRADING))),)
GRADES_ERROR := $(shell $(PYTHON) harness/verdicts.py validate $(call quote,GRADES=$(GRADES)) $(call quote,GRADING=$(GRADING)))
ifneq ($(GRADES_ERROR),)
$(error $(GRADES_ERROR))
endif
endif

# The targets that need a GPU say so before they build anything: the program's one line, status 77
# in the recipe (make itself then exits 2, as it does for any failed recipe).
GPU_REASON = $(PYTHON) -c 'import sys; sys.path.insert(0, "harness"); import course; print(course.gpu_reason() or "")'
need_gpu = @why=$$($(GPU_REASON)); if [ -n "$$why" ]; then echo "$(1): needs a GPU ($$why); $(2)"; exit 77; fi

help:
	@echo "The CUDA Handbook, Part III, as staged exercises. From the repository root:"
	@echo ""
	@echo "  make tour                    every chapter's progression: with a GPU, build and run its benchmarks;"
	@echo "                               without one, the committed reference results (nothing is built)"
	@echo "  make check                   build and run every test (no GPU: GPU tests are reported skipped)"
	@echo "  make check STAGE=01_grid     only tests whose name matches (e.g. STAGE=exercise/11-streaming/02)"
	@echo "                               one stage: its tests, then memcheck, racecheck, synccheck on a GPU"
	@echo "  make check ... GRADES=DIR [GRADING=FILE]   also the verdicts as DIR/junit.xml and Gradescope's"
	@echo "                               DIR/results.json (docs/grading.md: scores, visibility, a GPU autograder)"
	@echo "  make progress                every exercise's state from the last runs: answer, sanitizers, speed, SASS"
	@echo "  make hint STAGE=exercise/12-reduction/04_single_pass   the stage's next hint (1: the book and the"
	@echo "                               concept, 2: the approach, 3: near-code); ALL=1 those taken again, N=k one"
	@echo "  make lessons [CHAPTER=...]   what each stage teaches: its speed threshold and SASS signature"
	@echo "  make lessons-calibrate       (GPU) each judged reference timed against itself: the verdict's noise here"
	@echo "  make bench CHAPTER=11-streaming [EXERCISE=1] [ARGS='--N 64']   one chapter's benchmark"
	@echo "  make nbody ARGS='--N 16384 --steps 100 --stage 07'    the N-body simulation (chapter 14)"
	@echo "  make nbody ARGS='--ranks 4'  the N-body simulation on 4 MPI ranks, one GPU each (stage 11)"
	@echo "  make bench-ranks [RANKS=P]   (GPUs) stage 11's strong and weak scaling, stage 10 beside it"
	@echo "  make model-ranks [MEASURED=results/bench_ranks.json]   stage 11 modelled to 1024 GPUs"
	@echo "  make ncc ARGS='--wTemplate 16 --hTemplate 16'         template matching on a PGM (chapter 15)"
	@echo "  make sanitize [STAGE=...]    GPU tests under compute-sanitizer memcheck, racecheck, synccheck"
	@echo "  make sass STAGE=11-streaming/03_vectorized_float4      SASS of a stage's kernels, each"
	@echo "                               source line above its instructions (CONTROL=1: stalls, waits)"
	@echo "  make sass-count STAGE=...    instruction counts by class"
	@echo "  make sass-html STAGE=12-reduction/09_shuffle   the SASS beside its source as a page (build/sass-html/);"
	@echo "                               A=... B=... two stages, ARCHS=\"sm_80 sm_90\", CHAPTER=... a chapter's walk"
	@echo "  make sass-diff A=11-streaming/02_unrolled_templated B=11-streaming/03_vectorized_float4"
	@echo "  make sass-capture [ARCH=80]  (cuobjdump) every stage's SASS into reference/h200/*/sass/sm_90/ (sm_80/ ...)"
	@echo "  make profile STAGE=12-reduction/10_fastest [SECTIONS=dram,stall]   Nsight Compute metrics of a stage's kernels"
	@echo "                               (no GPU, no ncu or no counter permission: the profile captured on the reference GPU)"
	@echo "  make profile-diff A=12-reduction/09_shuffle B=12-reduction/10_fastest   two stages' metrics side by side"
	@echo "  make profile-capture [CHAPTER=...]   (GPU machine, ncu) every stage's profile into reference/<gpu>/*/profiles/"
	@echo "  make reference [STEPS=...]   (GPU machine) all of a GPU's evidence in one run: benchmarks, SASS, profiles,"
	@echo "                               pitfall records, charts, README tables, stamps, into reference/<gpu>/"
	@echo "                               (PLAN=1: what it would do; STALE=1: only what stamps.py finds stale;"
	@echo "                               on two GPUs bench and profile run at once, LANES=1 for one GPU)"
	@echo "  make check-perf              (GPU machine, ncu) counter bounds of the best stages (lessons.toml perf)"
	@echo "  make plots                   PNG charts from results/*.json (none: from the committed reference results)"
	@echo "  make tables                  rewrite the results tables of the READMEs, notes.md, profiles.md, docs/"
	@echo "                               (the <!-- results: ... --> blocks) from the committed reference/*/*/*.json"
	@echo "  make notebook                rewrite notebooks/course-on-a-hosted-gpu.ipynb from harness/notebook.py"
	@echo "  make doctor                  what this machine has, and what of the course runs here"
	@echo "  make archs                   compile only, warnings as errors: every stage, lab and benchmark for"
	@echo "                               every GPU generation (sm_75 T4 ... sm_120 RTX 50), in $(ARCHS_BUILD)/ (CI runs it)"
	@echo "  make exercises               regenerate chapters/ stage files from solutions/ (keeps your regions"
	@echo "                               and each exercise's opening comment)"
	@echo "  make reset STAGE=11-streaming/01_grid_stride           put the exercise stub back, in the stage's file"
	@echo "                               and in the lesson headers it teaches (each saved to backups/ first)"
	@echo "  make format                  format the sources in place (clang-format, ruff, cmake-format), then lint"
	@echo "  make lint                    the format gate, as CI runs it: clang-format, ruff, cmake-format,"
	@echo "                               shellcheck, codespell; every violation by file (harness/format.sh)"
	@echo "  make hooks                   git runs the gate before each commit, and refuses subjects over 72 characters"
	@echo "  make clean"
	@echo ""
	@echo "Stages:"
	@for f in solutions/*/[0-9]*.cu; do s=$${f#solutions/}; echo "  $${s%.cu}"; done

# The chapters' programs, with their options in ARGS (--help lists them).
# Each target builds only what it runs: an exercise that does not compile blocks nothing else.
# --ranks P runs stage 11 (ranks, chapter 14) instead: nbody-ranks starts itself on P ranks
# through harness/mpirun.sh, which sets the course's launch environment (NCCL_NVLS_ENABLE=0).
NBODY_PROGRAM = $(if $(findstring --ranks,$(ARGS)),nbody-ranks,nbody)
nbody: configure
	@cmake --build $(BUILD) -j $(JOBS) --target $(NBODY_PROGRAM)
	NCCL_NVLS_ENABLE=0 $(BUILD)/bin/$(NBODY_PROGRAM) $(ARGS)

# Stage 11's scaling beside stage 10's (chapter 14): one rank per visible GPU, at most 4;
# RANKS=P sets the count (with ARGS='--transport mpi' several ranks share a GPU).
bench-ranks: configure
	$(call need_gpu,bench-ranks,the scaling of stage 11 runs on GPUs)
	@cmake --build $(BUILD) -j $(JOBS) --target bench-ranks
	harness/mpirun.sh -n $(or $(RANKS),$$(n=$$(nvidia-smi -L | wc -l); [ $$n -gt 4 ] && n=4; echo $$n)) \
	  $(BUILD)/bin/bench-ranks $(ARGS)

ncc:
	$(call need_gpu,ncc,its kernels run on a GPU)
	@$(MAKE) --no-print-directory configure
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

# Every object with device code (the stages, solutions and exercises, the labs, the benchmarks'
# and programs' CUDA sources) compiled for every generation a student is likely to have: T4, A100,
# RTX 30 and 40, H100, B200, RTX 50. Compile only, warnings (ptxas's, spills included) as errors,
# in a build folder of its own (cmake/CourseArchCheck.cmake says what it leaves out and why).
ARCHS_BUILD ?= build-archs
CHECK_ARCHS ?= 75-real;80-real;86-real;89-real;90;100-real;120-real
archs:
	@harness/deps.sh
	@mkdir -p $(ARCHS_BUILD) && cmake -S . -B $(ARCHS_BUILD) $(GENERATOR) -DCMAKE_CUDA_ARCHITECTURES="$(CHECK_ARCHS)" \
	  -DCOURSE_WARNINGS_AS_ERRORS=ON -DCOURSE_ARCH_CHECK=ON $(CMAKE_ARGS) >$(ARCHS_BUILD)/configure.log 2>&1 || \
	  { cat $(ARCHS_BUILD)/configure.log; exit 1; }
	@start=$$(date +%s); cmake --build $(ARCHS_BUILD) -j $(JOBS) --target arch-check $(KEEP_GOING) && \
	  echo "archs: every object with device code compiles warning-free for $(CHECK_ARCHS) ($$(( $$(date +%s) - start )) s)"

# harness/check.py: builds what the selected tests need (going on past a stage that does not
# compile, and naming it), runs them, runs the sanitizers when STAGE selects one stage on a GPU,
# prints a summary per stage and records it for `make progress`.
check: configure
	@$(PYTHON) harness/check.py run --build $(BUILD) --jobs $(JOBS) $(if $(STAGE),--stage "$(STAGE)") $(if $(ALL),--everything) \
	  $(if $(GRADES),--grades $(call quote,$(GRADES))) $(if $(GRADING),--grading $(call quote,$(GRADING)))

progress:
	@$(PYTHON) harness/check.py progress --build $(BUILD)

# A stage's hint ladder (its lessons.toml `hints`), one rung per call; the count taken is recorded
# in $(BUILD)/progress.json, which `make progress` shows.
hint:
	@$(PYTHON) harness/hints.py show --build $(BUILD) $(if $(ALL),--all) $(if $(N),--n $(N)) -- $(call quote,$(STAGE))

# What each stage teaches, as make check judges it: the speed it must reach against the reference
# and the SASS signature (chapters/<chapter>/lessons.toml). CHAPTER= one chapter, else all.
lessons:
	@$(PYTHON) harness/lesson.py show $(if $(filter command line environment,$(origin CHAPTER)),$(CHAPTER))

# (GPU) every judged stage's reference timed against itself: the judge programs run, and the speed
# verdict's own noise on this GPU (an instructor's check of a new machine).
lessons-calibrate:
	$(call need_gpu,lessons-calibrate,it times the stages on it)
	@$(MAKE) --no-print-directory configure
	@cmake --build $(BUILD) -j $(JOBS) >/dev/null
	@$(PYTHON) harness/lesson.py calibrate $(if $(filter command line environment,$(origin CHAPTER)),$(CHAPTER)) --build $(BUILD)

# harness/tour.py: builds quietly (a line per chapter, the output in $(BUILD)/tour.log), runs every
# benchmark on a GPU and sums up; without one, prints the committed reference results.
tour:
	@$(PYTHON) harness/tour.py run --build $(BUILD) --jobs $(JOBS) \
	  --configure "$(MAKE) --no-print-directory configure BUILD=$(BUILD)" --args=$(call quote,$(ARGS))

# The exercises' benchmark writes under results/exercise/, beside the solutions' results/.
bench:
	$(call need_gpu,bench,make tour shows the committed reference results)
	@$(MAKE) --no-print-directory configure
	@cmake --build $(BUILD) -j $(JOBS) --target bench-$(CHAPTER)$(if $(EXERCISE),-exercise)
	$(BUILD)/bin/bench-$(CHAPTER)$(if $(EXERCISE),-exercise) $(if $(EXERCISE),--results results/exercise) $(ARGS)

# Each sanitizer run is a process of its own on a shared GPU: they run side by side.
# compute-sanitizer needs a GPU: without one, say so (exit 77, the course's "needs a GPU") instead
# of reporting skipped runs as passed.
sanitize:
	$(call need_gpu,sanitize,the sanitizers run on a GPU machine)
	@$(MAKE) --no-print-directory configure
	@cmake --build $(BUILD) -j $(JOBS) $(KEEP_GOING) || echo "sanitize: some targets did not build (above): their tests will fail"
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j $(SANITIZE_JOBS) -L sanitize $(if $(STAGE),-R "$(STAGE)")

# SASS: with cuobjdump, the stages' objects are built and read; without it, nothing is built and
# the captures committed from the reference GPU are read (an exercise gets its solution's, said so).
HAVE_CUOBJDUMP = $(PYTHON) -c 'import sys; sys.path.insert(0, "harness"); import sass; sys.exit(sass.find_tool("cuobjdump") is None)'
# With cuobjdump: the stages' objects built, then disassembled. Without it a reference stage shows
# its committed capture (no build needed), and an exercise its PTX, which sass.py compiles from
# the source as it is now with the flags of the stage's object: that needs the build configured
# (its compile commands), not built.
sass_objects = if $(HAVE_CUOBJDUMP); then $(MAKE) --no-print-directory configure >/dev/null && \
  cmake --build $(BUILD) -j $(JOBS) --target $(foreach s,$(1),$$($(PYTHON) harness/course.py target $(call quote,$(s)))) >/dev/null 2>&1; true; \
  elif [ -n "$(strip $(filter exercise/% %.cu,$(1)))" ]; then $(MAKE) --no-print-directory configure >/dev/null || true; fi

sass:
	@$(call sass_objects,$(STAGE))
	@$(PYTHON) harness/sass.py dump --build $(BUILD) $(if $(CONTROL),--control) $(call quote,$(STAGE))

sass-count:
	@$(call sass_objects,$(STAGE))
	@$(PYTHON) harness/sass.py count --build $(BUILD) $(call quote,$(STAGE))

sass-diff:
	@$(call sass_objects,$(A) $(B))
	@$(PYTHON) harness/sass.py diff --build $(BUILD) $(call quote,$(A)) $(call quote,$(B))

# The SASS beside its source as static pages under $(BUILD)/sass-html/ (harness/sass_html.py): one
# stage (STAGE=, and ARCHS="sm_80 sm_90 sm_120" for several architectures), two (A= B=), a
# chapter's walk (CHAPTER= given on the command line), or with none of them every chapter.
sass-html:
	@$(if $(strip $(STAGE)$(A)$(B)),$(call sass_objects,$(STAGE) $(A) $(B)),true)
	@$(PYTHON) harness/sass_html.py page --build $(BUILD) --out $(BUILD)/sass-html \
	  $(if $(STAGE),--stage $(call quote,$(STAGE))) $(if $(A),--a $(call quote,$(A))) \
	  $(if $(B),--b $(call quote,$(B))) $(if $(ARCHS),--archs $(call quote,$(ARCHS))) \
	  $(if $(filter command line environment override,$(origin CHAPTER)),--chapter $(call quote,$(CHAPTER)))

# With cuobjdump: every solution stage's SASS into reference/h200/<chapter>/sass/sm_90/ (a step of
# make reference, which stamps them). ARCH=80 (one architecture): the stages compiled for it in a
# build folder of its own, captured into reference/h200/*/sass/sm_80/ beside sm_90's (no GPU
# needed, only cuobjdump), so make sass-diff can put two generations side by side:
# make sass-diff A=reference/h200/12-reduction/sass/sm_80/10_fastest.sass
# B=reference/h200/12-reduction/sass/sm_90/10_fastest.sass
ifeq ($(ARCH),)
sass-capture: configure
	@$(PYTHON) harness/sass.py capture-all --build $(BUILD) --jobs $(JOBS)
else
sass-capture:
	@harness/deps.sh
	@cmake -S . -B build-sm$(ARCH) $(GENERATOR) -DCMAKE_CUDA_ARCHITECTURES="$(ARCH)-real" $(CMAKE_ARGS) >/dev/null
	@$(PYTHON) harness/sass.py capture-all --build build-sm$(ARCH) --jobs $(JOBS) --arch sm_$(ARCH)
endif

# Nsight Compute (harness/profile.py): the stage's name is checked before anything is built; with a
# GPU and ncu the chapter's bench runs under ncu for that stage's one profiled call; without them (or
# without counter permission) the capture committed from the reference GPU is read, and said so.
PROFILE = $(PYTHON) harness/profile.py
PROFILE_BUILD = --build $(BUILD) --jobs $(JOBS) --configure "$(MAKE) --no-print-directory configure BUILD=$(BUILD)"

profile:
	@$(PROFILE) show $(PROFILE_BUILD) $(if $(SECTIONS),--sections $(call quote,$(SECTIONS))) $(call quote,$(STAGE))

profile-diff:
	@$(PROFILE) diff $(PROFILE_BUILD) $(if $(SECTIONS),--sections $(call quote,$(SECTIONS))) $(call quote,$(A)) $(call quote,$(B))

# On the GPU machine: one ncu run per chapter (every profile: range at once); CHAPTER= one chapter.
# A step of make reference, which also stamps what it writes.
profile-capture:
	@$(PROFILE) capture $(PROFILE_BUILD) $(if $(filter command line,$(origin CHAPTER)),--chapter $(call quote,$(CHAPTER)))

# On a GPU machine, one command regenerates all of its GPU's evidence (harness/reference.py):
# build, every benchmark, SASS (sm_90, and sm_80 and sm_120 from a build of their own), Nsight
# Compute captures, charts, the READMEs' tables, and the stamps that tie each file to its sources.
# STEPS="bench sass" runs a subset; STALE=1 only the steps and chapters whose captures stamps.py
# finds stale; PLAN=1 prints what would run and be written (no GPU needed).
reference:
ifeq ($(PLAN),)
	$(call need_gpu,reference,it measures and captures on the GPU machine)
	@harness/deps.sh
	@$(PYTHON) harness/reference.py run --build $(BUILD) --jobs $(JOBS) $(if $(STEPS),--steps $(call quote,$(STEPS))) $(if $(CHAPTERS),--chapters $(call quote,$(CHAPTERS))) $(if $(STALE),--stale) $(if $(LANES),--lanes $(call quote,$(LANES)))
else
	@$(PYTHON) harness/reference.py plan --build $(BUILD) --jobs $(JOBS) $(if $(STEPS),--steps $(call quote,$(STEPS))) $(if $(CHAPTERS),--chapters $(call quote,$(CHAPTERS))) $(if $(STALE),--stale) $(if $(LANES),--lanes $(call quote,$(LANES)))
endif

# GPU only, never in CI and not part of make check: counter bounds that catch a regression.
check-perf:
	@$(PROFILE) check-perf $(PROFILE_BUILD)

# Stage 11's scaling model (chapter 14; labs/14-nbody/model_ranks.py): 8..1024 GPUs predicted from
# the measured one-GPU rate, with its chart in results/model_ranks.png where matplotlib is;
# MEASURED=results/bench_ranks.json (make bench-ranks) adds stage 11's measured points and the
# model fitted to them.
model-ranks:
	@mkdir -p results; py="$(PLOT_PYTHON)"; \
	$${py:-$(PYTHON)} labs/14-nbody/model_ranks.py $(if $(MEASURED),--measured $(MEASURED)) \
	  $$([ -n "$$py" ] && echo --chart results/model_ranks.png)

plots:
	@py="$(PLOT_PYTHON)"; if [ -z "$$py" ]; then echo "plots: matplotlib not found; install it with: apt-get install python3-matplotlib"; exit 3; fi; \
	$$py plots/plot.py && $$py plots/roofline.py

# harness/readme_tables.py: one home per number. The READMEs' results blocks are generated from
# the committed results; a host test (harness/tests/test_readme_tables.py) fails when one is stale.
tables:
	@$(PYTHON) harness/readme_tables.py write

# The hosted-GPU notebook, generated from its one source (a host test fails when it is stale).
notebook:
	@$(PYTHON) harness/notebook.py write

doctor:
	@bash harness/doctor.sh

exercises:
	@$(PYTHON) harness/exercises.py generate

reset:
	@$(PYTHON) harness/exercises.py reset -- "$(STAGE)"

# The format gate (harness/format.sh: the tools, their versions and what each checks). The tools
# are installed when missing (as root), else the one command that installs them is printed.
format:
	@harness/format.sh --fix

lint:
	@harness/format.sh check

# git runs harness/hooks/ from now on: pre-commit (the gate on the files a commit changes) and
# commit-msg (subjects of at most 72 characters). git config core.hooksPath "" turns them off.
hooks:
	@git config core.hooksPath harness/hooks && echo "hooks: git now runs harness/hooks/pre-commit and commit-msg"

clean:
	rm -rf $(BUILD) $(ARCHS_BUILD)
