# How a chapter declares its stages, tests, wrong variants and benchmark.
#
# The stages come from the tree: solutions/<chapter>/[0-9][0-9]_*.cu, each with its entry in
# chapters/<chapter>/lessons.toml, which says the test file that tests it (`test`, or the
# [chapter] table's) and its kind (gpu, or cpu for a stage built on the host). Configure runs
# `harness/course.py cmake` once to read them (COURSE_STAGES_<chapter>, COURSE_STAGE_TEST_...,
# COURSE_STAGE_KIND_..., COURSE_WORKLOAD_...); a stage without its lessons entry stops it.
#
#   course_add_stages(CHAPTER 11-streaming TEST test_device_stages.cpp [JUDGE judge.cpp]
#                     [SOURCES extra.cu ...] [LIBS ...])
# builds each GPU stage that TEST tests twice, from solutions/<chapter>/<stage>.cu and chapters/<chapter>/<stage>.cu,
# as object libraries, and one test program per stage and variant, registered with CTest as
# solution/<chapter>/<stage> and exercise/<chapter>/<stage> (labels: gpu, the chapter, the variant),
# its [sweep] test case as <variant>/<chapter>/<stage>/sweep (label sweep), and its sanitizer runs as
# sanitize/<tool>/<variant>/<chapter>/<stage> (label sanitize).
# A stage file that still holds the exercise stub (a line "COURSE_TODO();"), or includes a lesson
# header that does (a file mirrored in solutions/<chapter>/ and chapters/<chapter>/ like the stage
# files, see harness/exercises.py), is compiled with COURSE_STAGE_TODO=1, and its tests report TODO (skipped); the warnings the stub itself causes
# (unused variables, missing return) are silenced there alone. Editing the file re-runs this check.
#
#   course_add_wrong_variant(CHAPTER ... STAGE ... TEST ... NAME ... FIND "text" REPLACE "text" WHY "..."
#                            [FILE lesson_header.cuh])
# makes a deliberately wrong copy of a solution stage (or of a lesson header it includes) in the build tree and a test that passes
# only if the stage's tests reject it (the checker checks itself). With TOOL racecheck (or memcheck,
# synccheck) the test instead runs the stage's tests under that compute-sanitizer tool (label
# sanitize: make sanitize) and passes only if the tool reports an error.
#
#   course_add_host_test(CHAPTER ... SOURCES ... [PROGRAM name] [TEST name] [LABELS ...] [LIBS ...])
# one host-only test program (no GPU needed) of a chapter's references and host code.
#
#   course_add_bench(CHAPTER ... NAME ... SOURCES ... [LIBS ...])
# links every stage of the chapter into one benchmark, once with the solutions (bench-<chapter>)
# and once with the exercises (bench-<chapter>-exercise).

# ctest keeps only the first 1 KB of a passing test's output. A wrong variant's test passes when
# the tests fail on it, and its whole output (every failing test case) is what harness/pitfalls.py
# records from make check ALL=1's results: keep up to 1 MB of it.
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/CTestCustom.cmake CONTENT
     "set(CTEST_CUSTOM_MAXIMUM_PASSED_TEST_OUTPUT_SIZE 1048576)\n")

set_property(GLOBAL PROPERTY COURSE_STAGE_MANIFEST "")
set_property(GLOBAL PROPERTY COURSE_TEST_MANIFEST "")
set_property(GLOBAL PROPERTY COURSE_STAGES_BUILT "")

# The course model (harness/course.py): every chapter's stages, their test files and kinds, and
# the workloads. A new stage file, or an edited lessons.toml, configures again.
file(GLOB _course_stage_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/solutions/*/[0-9][0-9]_*.cu)
file(GLOB _course_manifests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/chapters/*/lessons.toml)
set_property(
  DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_course_manifests}
                                                  ${PROJECT_SOURCE_DIR}/harness/course.py)
execute_process(
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/harness/course.py cmake
  OUTPUT_VARIABLE _course_model
  ERROR_VARIABLE _course_model_error
  RESULT_VARIABLE _course_model_status)
if(NOT _course_model_status EQUAL 0)
  string(STRIP "${_course_model_error}" _course_model_error)
  message(FATAL_ERROR "${_course_model_error}")
endif()
cmake_language(EVAL CODE "${_course_model}")
# The same stages as the tree's files (a name course.py would not take as a stage stops here).
foreach(_file IN LISTS _course_stage_files)
  get_filename_component(_stage ${_file} NAME_WE)
  get_filename_component(_chapter ${_file} DIRECTORY)
  get_filename_component(_chapter ${_chapter} NAME)
  if(_chapter IN_LIST COURSE_CHAPTERS AND NOT _stage IN_LIST COURSE_STAGES_${_chapter})
    message(FATAL_ERROR "solutions/${_chapter}/${_stage}.cu is not a stage name (NN_name, letters, "
                        "digits and _): rename it")
  endif()
endforeach()

# The stages of a chapter, in order: every one, or those of one KIND (gpu, cpu) or TEST file.
#   course_stages(out CHAPTER 14-nbody [KIND cpu] [TEST test_nbody.cpp])
function(course_stages out)
  cmake_parse_arguments(A "" "CHAPTER;KIND;TEST" "" ${ARGN})
  set(found "")
  foreach(stage IN LISTS COURSE_STAGES_${A_CHAPTER})
    if(A_KIND AND NOT COURSE_STAGE_KIND_${A_CHAPTER}_${stage} STREQUAL A_KIND)
      continue()
    endif()
    if(A_TEST AND NOT COURSE_STAGE_TEST_${A_CHAPTER}_${stage} STREQUAL A_TEST)
      continue()
    endif()
    list(APPEND found ${stage})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Every test of the course is added through this function, never with a bare add_test: it records
# the build targets the test needs (the program it runs, and every $<TARGET_FILE:...> or
# $<TARGET_OBJECTS:...> among its arguments) in build/tests.json, so make check builds exactly what
# a test runs without knowing any naming convention. OBJECT names the stage object a stage's test
# judges: without a GPU, check builds that object alone (the program would only be skipped).
# course_check_test_manifest() fails the configuration if a test escaped it.
#   course_add_test(NAME name COMMAND program-or-command [args ...] [OBJECT stage-object])
function(course_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 A "" "NAME;OBJECT" "COMMAND")
  set(needs "")
  foreach(word IN LISTS A_COMMAND)
    if(TARGET "${word}")
      list(APPEND needs "${word}")
    endif()
    string(REGEX MATCHALL "\\$<TARGET_(FILE|OBJECTS):[^>]+>" refs "${word}")
    foreach(ref IN LISTS refs)
      string(REGEX REPLACE "^\\$<TARGET_(FILE|OBJECTS):([^>]+)>$" "\\2" target "${ref}")
      list(APPEND needs "${target}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES needs)
  add_test(NAME ${A_NAME} COMMAND ${A_COMMAND})
  list(JOIN needs "\", \"" needs_json)
  if(needs)
    set(needs_json "\"${needs_json}\"")
  endif()
  set(entry "\"${A_NAME}\": {\"needs\": [${needs_json}]")
  if(A_OBJECT)
    string(APPEND entry ", \"object\": \"${A_OBJECT}\"")
  endif()
  set_property(GLOBAL APPEND PROPERTY COURSE_TEST_MANIFEST "${entry}}")
  set_property(GLOBAL APPEND PROPERTY COURSE_TEST_NAMES "${A_NAME}")
endfunction()

# A chapter's host-only test program: built from SOURCES with the chapter's headers and the host
# Catch2 main (which runs without a GPU), in build/bin/PROGRAM (default test-<chapter>-host),
# registered as TEST (default host/<chapter>) with the labels host, the chapter and LABELS. A test
# that may report COURSE_SKIP: (a stage still an exercise) is skipped, not failed.
#   course_add_host_test(CHAPTER 12-reduction SOURCES test_host.cpp)
#   course_add_host_test(CHAPTER 08-warp SOURCES test_warp_model.cpp PROGRAM test-08-warp-model
#                        TEST host/08-warp/warp_model)
function(course_add_host_test)
  cmake_parse_arguments(PARSE_ARGV 0 A "" "CHAPTER;PROGRAM;TEST" "SOURCES;LABELS;LIBS")
  if(NOT A_PROGRAM)
    set(A_PROGRAM test-${A_CHAPTER}-host)
  endif()
  if(NOT A_TEST)
    set(A_TEST host/${A_CHAPTER})
  endif()
  add_executable(${A_PROGRAM} ${A_SOURCES})
  target_include_directories(${A_PROGRAM} PRIVATE ${PROJECT_SOURCE_DIR}/chapters/${A_CHAPTER})
  target_link_libraries(${A_PROGRAM} PRIVATE course_test_main_host ${A_LIBS})
  course_add_test(NAME ${A_TEST} COMMAND ${A_PROGRAM})
  set(labels host ${A_CHAPTER} ${A_LABELS})
  set_tests_properties(${A_TEST} PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:" LABELS
                                            "${labels}")
endfunction()

# build/tests.json: every test and the targets it needs (course_add_test), for harness/check.py.
# A test added with a bare add_test would be invisible to the checker: it stops the configuration.
function(course_write_test_manifest)
  set(dirs ${PROJECT_SOURCE_DIR})
  set(all "")
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(tests DIRECTORY ${dir} PROPERTY TESTS)
    list(APPEND all ${tests})
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
  endwhile()
  get_property(known GLOBAL PROPERTY COURSE_TEST_NAMES)
  foreach(test IN LISTS all)
    if(NOT test IN_LIST known)
      message(FATAL_ERROR "test ${test} was added with add_test: use course_add_test "
                          "(cmake/CourseStages.cmake), so that make check knows what it needs")
    endif()
  endforeach()
  get_property(entries GLOBAL PROPERTY COURSE_TEST_MANIFEST)
  list(JOIN entries ",\n  " body)
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/tests.json CONTENT "{\"tests\": {\n  ${body}\n}}\n")
endfunction()

# The warnings a stub causes, silenced in a stage file that still holds COURSE_TODO() and nowhere
# else. An emptied region leaves behind what only the region used (variables, constants, helper
# functions: nvcc #177-D "declared but never referenced", #550-D "set but never used"; g++
# -Wunused-variable, -Wunused-but-set-variable, -Wunused-function, and -Wunused-parameter under
# -Wextra) and, where the region was a whole function body, a missing return (nvcc #940-D; g++
# -Wreturn-type). These are noise to a student who has not started the stage yet, so a fresh build
# is warning-free. Only these diagnostics, only in TODO stage objects: once the student deletes the
# last COURSE_TODO() line, the build re-runs this check (CMAKE_CONFIGURE_DEPENDS below) and the
# stage compiles with every warning again, so an unused variable in the student's code is reported.
# nvcc's front end reports device and host code (-diag-suppress); g++ compiles the host side of a
# .cu file (-Xcompiler) and the C++ stage 14/08.
set(COURSE_TODO_NVCC_DIAGS 177 550 940)
set(COURSE_TODO_GCC_WARNINGS unused-variable unused-but-set-variable unused-function
                             unused-parameter return-type)
function(_course_todo_warnings target is_todo)
  if(is_todo)
    list(JOIN COURSE_TODO_NVCC_DIAGS "," diags)
    list(TRANSFORM COURSE_TODO_GCC_WARNINGS PREPEND "-Wno-" OUTPUT_VARIABLE gcc)
    list(JOIN gcc "," gcc_joined)
    target_compile_options(
      ${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-diag-suppress=${diags}
                        -Xcompiler=${gcc_joined}> $<$<COMPILE_LANGUAGE:CXX>:${gcc}>)
  endif()
endfunction()

# The lesson headers a file includes (#include "x" where solutions/<chapter>/x exists), and theirs,
# each found where the compiler finds it: beside the including file first, else in lesson_dir
# (solutions/<chapter> for the solutions and wrong variants, chapters/<chapter> for the exercises).
function(_course_lesson_includes out file chapter lesson_dir)
  set(found "")
  set(queue ${file})
  while(queue)
    list(POP_FRONT queue current)
    file(STRINGS ${current} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"]+\"")
    get_filename_component(here ${current} DIRECTORY)
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" name "${line}")
      if(NOT EXISTS ${PROJECT_SOURCE_DIR}/solutions/${chapter}/${name})
        continue()
      endif()
      if(EXISTS ${here}/${name})
        set(header ${here}/${name})
      else()
        set(header ${lesson_dir}/${name})
      endif()
      if(NOT header IN_LIST found)
        list(APPEND found ${header})
        list(APPEND queue ${header})
      endif()
    endforeach()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(_course_stage_object target source chapter stage variant)
  add_library(${target} OBJECT ${source})
  # A stage is TODO while its file, or a lesson header it includes, still holds the stub.
  if(variant STREQUAL "exercise")
    set(lesson_dir ${PROJECT_SOURCE_DIR}/chapters/${chapter})
  else()
    set(lesson_dir ${PROJECT_SOURCE_DIR}/solutions/${chapter})
  endif()
  _course_lesson_includes(headers ${source} ${chapter} ${lesson_dir})
  set(todo_in "")
  foreach(file IN ITEMS ${source} ${headers})
    file(STRINGS ${file} _todo REGEX "^[ \t]*COURSE_TODO\\(\\);")
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    if(_todo)
      file(RELATIVE_PATH shown ${PROJECT_SOURCE_DIR} ${file})
      list(APPEND todo_in ${shown})
    endif()
  endforeach()
  if(todo_in)
    set(_is_todo 1)
    list(JOIN todo_in " and " todo_in)
  else()
    set(_is_todo 0)
  endif()
  target_compile_definitions(
    ${target} PRIVATE COURSE_STAGE_ID="${stage}" COURSE_STAGE_FILE="${source}"
                      COURSE_STAGE_TODO=${_is_todo} COURSE_STAGE_TODO_IN="${todo_in}")
  _course_todo_warnings(${target} ${_is_todo})
  # Lesson headers: a stage file finds its own chapter's beside it; a wrong variant's copy in the
  # build tree finds the solutions' (or the edited copy beside it).
  if(NOT variant STREQUAL "exercise")
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/solutions/${chapter})
  endif()
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/chapters/${chapter})
  target_link_libraries(${target} PUBLIC course_common)
  set_property(
    GLOBAL APPEND
    PROPERTY
      COURSE_STAGE_MANIFEST
      "{\"id\": \"${chapter}/${stage}\", \"variant\": \"${variant}\", \"todo\": ${_is_todo}, \"objects\": [\"$<JOIN:$<TARGET_OBJECTS:${target}>,\"$<COMMA> \">\"], \"source\": \"${source}\"}"
  )
endfunction()

function(
  _course_test_program
  name
  test_object
  stage_object
  variant
  chapter
  stage
  extra_args
  labels)
  add_executable(${name} $<TARGET_OBJECTS:${test_object}> $<TARGET_OBJECTS:${stage_object}>)
  target_link_libraries(${name} PRIVATE course_test_main course_common ${ARGN})
  get_property(has_large GLOBAL PROPERTY COURSE_HAS_LARGE_${test_object})
  if(variant STREQUAL "wrong")
    # The whole program but its [large] cases, sweep included: it passes when some test rejects
    # the stage (no wrong variant needs 2^31 elements to be rejected).
    course_add_test(NAME ${variant}/${chapter}/${stage} COMMAND ${name} ${extra_args} "~[large]")
    set(tests ${variant}/${chapter}/${stage})
  else()
    # The stage's tests, then its seeded random sweep as a test of its own (label sweep), then its
    # [large] cases (past 2^31 elements) as one more, the only ones that hold the GPU alone.
    course_add_test(
      NAME ${variant}/${chapter}/${stage} COMMAND ${name} ${extra_args} "~[sweep]~[large]"
      OBJECT ${stage_object})
    course_add_test(
      NAME ${variant}/${chapter}/${stage}/sweep COMMAND ${name} ${extra_args} "[sweep]"
      OBJECT ${stage_object})
    set_tests_properties(${variant}/${chapter}/${stage}/sweep
                         PROPERTIES LABELS "gpu;sweep;${chapter};${variant};${labels}")
    set(tests ${variant}/${chapter}/${stage} ${variant}/${chapter}/${stage}/sweep)
    if(has_large)
      course_add_test(
        NAME ${variant}/${chapter}/${stage}/large COMMAND ${name} ${extra_args} "[large]"
        OBJECT ${stage_object})
      # One at a time: the [large] cases take up to 27 GB of device memory each.
      set_tests_properties(
        ${variant}/${chapter}/${stage}/large PROPERTIES RESOURCE_LOCK gpu LABELS
                                                        "gpu;large;${chapter};${variant};${labels}")
      list(APPEND tests ${variant}/${chapter}/${stage}/large)
    endif()
    # Sanitizer runs (make sanitize; label sanitize, not in make check): the reference solutions
    # and the exercises (reported as skipped while TODO). Each runs in a process of its own, so
    # they share the GPU: no resource lock, make sanitize runs them in parallel.
    foreach(tool memcheck racecheck synccheck)
      course_add_test(
        NAME sanitize/${tool}/${variant}/${chapter}/${stage}
        COMMAND ${PROJECT_SOURCE_DIR}/harness/sanitize.sh ${tool} $<TARGET_FILE:${name}>)
      set_tests_properties(
        sanitize/${tool}/${variant}/${chapter}/${stage}
        PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:" TIMEOUT 600 LABELS
                   "sanitize;${chapter};${variant}")
    endforeach()
  endif()
  set_tests_properties(${tests} PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:")
  # The rest take little device memory and, since each test process counts only its own
  # allocations, run beside anything.
  set_tests_properties(${variant}/${chapter}/${stage}
                       PROPERTIES LABELS "gpu;${chapter};${variant};${labels}")
endfunction()

# The speed verdict's timing program of one stage object (harness/judge.h): the chapter's workload
# (JUDGE, compiled once per chapter) linked with the stage, as bin/judge.<variant>.<chapter>.<stage>.
function(_course_judge_program name chapter stage_object)
  get_property(judge GLOBAL PROPERTY COURSE_JUDGE_${chapter})
  if(NOT judge)
    return()
  endif()
  set(judge_object judge.${chapter})
  if(NOT TARGET ${judge_object})
    add_library(${judge_object} OBJECT ${judge} ${PROJECT_SOURCE_DIR}/harness/judge.cpp)
    target_include_directories(${judge_object} PRIVATE ${PROJECT_SOURCE_DIR}/chapters/${chapter})
    # The workload's defaults (lessons.toml's [workload]: COURSE_WORKLOAD_N, ...).
    target_compile_definitions(${judge_object} PRIVATE ${COURSE_WORKLOAD_DEFS_${chapter}})
    target_link_libraries(${judge_object} PUBLIC course_common)
  endif()
  add_executable(${name} $<TARGET_OBJECTS:${judge_object}> $<TARGET_OBJECTS:${stage_object}>)
  target_link_libraries(${name} PRIVATE course_common ${ARGN})
endfunction()

# The SASS signature of a solution stage (chapters/<chapter>/lessons.toml), checked on its own
# object with cuobjdump; skipped where cuobjdump is missing (the committed captures are checked
# by the host test harness/tests/test_lesson.py instead).
function(_course_sass_test chapter stage object)
  if(NOT Python3_Interpreter_FOUND)
    return()
  endif()
  course_add_test(
    NAME lesson/sass/solution/${chapter}/${stage}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/harness/lesson.py sass ${chapter}/${stage}
            --object $<TARGET_OBJECTS:${object}>)
  set_tests_properties(
    lesson/sass/solution/${chapter}/${stage} PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:"
                                                        LABELS "sass;${chapter};solution")
endfunction()

function(course_add_stages)
  cmake_parse_arguments(A "" "CHAPTER;TEST;JUDGE" "SOURCES;LIBS" ${ARGN})
  course_stages(
    A_STAGES
    CHAPTER ${A_CHAPTER}
    KIND gpu
    TEST ${A_TEST})
  if(NOT A_STAGES)
    message(FATAL_ERROR "course_add_stages(CHAPTER ${A_CHAPTER} TEST ${A_TEST}): no stage of "
                        "chapters/${A_CHAPTER}/lessons.toml is tested by ${A_TEST}")
  endif()
  if(A_JUDGE)
    set_property(GLOBAL PROPERTY COURSE_JUDGE_${A_CHAPTER}
                                 ${PROJECT_SOURCE_DIR}/chapters/${A_CHAPTER}/${A_JUDGE})
  endif()
  set(dir ${PROJECT_SOURCE_DIR}/chapters/${A_CHAPTER})
  set(test_object ${A_CHAPTER}.${A_TEST}.test)
  string(REPLACE "/" "-" test_object "${test_object}")
  add_library(${test_object} OBJECT ${dir}/${A_TEST})
  file(STRINGS ${dir}/${A_TEST} _large REGEX "\\[large\\]")
  if(_large)
    set_property(GLOBAL PROPERTY COURSE_HAS_LARGE_${test_object} 1)
  endif()
  target_include_directories(${test_object} PRIVATE ${dir})
  target_link_libraries(${test_object} PUBLIC course_common course_test_support)
  foreach(stage IN LISTS A_STAGES)
    foreach(variant solution exercise)
      if(variant STREQUAL "solution")
        set(source ${PROJECT_SOURCE_DIR}/solutions/${A_CHAPTER}/${stage}.cu)
      else()
        set(source ${dir}/${stage}.cu)
      endif()
      set(obj ${variant}.${A_CHAPTER}.${stage})
      _course_stage_object(${obj} ${source} ${A_CHAPTER} ${stage} ${variant})
      target_sources(${obj} PRIVATE ${A_SOURCES})
      _course_test_program(
        test.${obj}
        ${test_object}
        ${obj}
        ${variant}
        ${A_CHAPTER}
        ${stage}
        ""
        ""
        ${A_LIBS})
      _course_judge_program(judge.${obj} ${A_CHAPTER} ${obj} ${A_LIBS})
      if(variant STREQUAL "solution")
        _course_sass_test(${A_CHAPTER} ${stage} ${obj})
      endif()
      set_property(GLOBAL APPEND PROPERTY COURSE_${variant}_OBJECTS_${A_CHAPTER} ${obj})
    endforeach()
    set_property(GLOBAL APPEND PROPERTY COURSE_STAGES_BUILT ${A_CHAPTER}/${stage})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY COURSE_TEST_OBJECT_${A_CHAPTER}_${A_TEST} ${test_object})
endfunction()

# A wrong variant's FIND text as a regular expression that matches the same code in any layout, so
# that a formatter (clang-format) never breaks a planted bug. Leading and trailing white space is
# dropped; between two characters of a word (letters, digits, _) nothing may come in between, white
# space between two words must stay (one or more blanks or newlines: "int x" never matches "intx"),
# and anywhere else any white space may come and go ("a+b" matches "a + b", "f(x,\n  y)" matches
# "f(x, y)"). In a // comment the line breaks may move too (a comment reflowed over two lines still
# matches). Only layout is free: the characters, comments included, must be the same.
function(_course_layout_free_regex out find)
  string(STRIP "${find}" find)
  string(LENGTH "${find}" length)
  set(regex "")
  set(previous "")
  set(gap FALSE)
  set(comment FALSE)
  set(skip FALSE)
  set(word "[A-Za-z0-9_]")
  set(space "[ \t\r\n]")
  if(length GREATER 0)
    math(EXPR last "${length} - 1")
    foreach(i RANGE 0 ${last})
      if(skip)
        set(skip FALSE)
        continue()
      endif()
      string(SUBSTRING "${find}" ${i} 1 c)
      if(c STREQUAL "\n")
        set(comment FALSE)
      endif()
      # Inside a comment, a "//" that a reflow adds or removes is layout too.
      if(c MATCHES "${space}" OR (comment AND c STREQUAL "/"))
        set(gap TRUE)
        continue()
      endif()
      set(blank "${space}")
      if(comment)
        set(blank "[ \t\r\n/]")
      endif()
      if(NOT previous STREQUAL "")
        if(previous MATCHES "${word}" AND c MATCHES "${word}")
          if(gap)
            string(APPEND regex "${blank}+")
          endif()
        else()
          string(APPEND regex "${blank}*")
        endif()
      endif()
      math(EXPR next_at "${i} + 1")
      string(SUBSTRING "${find}" ${next_at} 1 next)
      if(NOT comment AND c STREQUAL "/" AND next STREQUAL "/")
        string(APPEND regex "//")
        set(comment TRUE)
        set(skip TRUE)
      elseif(c MATCHES "[]\\[^$.*+?|()]")
        string(APPEND regex "\\${c}")
      else()
        string(APPEND regex "${c}")
      endif()
      set(previous "${c}")
      set(gap FALSE)
    endforeach()
  endif()
  set(${out} "${regex}" PARENT_SCOPE)
endfunction()

function(course_add_wrong_variant)
  # PARSE_ARGV keeps a ";" inside FIND and REPLACE (with ${ARGN} the text would be cut at the first one).
  cmake_parse_arguments(PARSE_ARGV 0 A "" "CHAPTER;STAGE;TEST;NAME;FIND;REPLACE;WHY;TOOL;FILE"
                        "SOURCES;LIBS")
  # FILE: the lesson header to edit (default: the stage file). The copy goes into a folder of its
  # own beside a copy of the stage file, so the stage includes the edited header.
  set(stage_file ${A_STAGE}.cu)
  if(NOT A_FILE)
    set(A_FILE ${stage_file})
  endif()
  set(solution ${PROJECT_SOURCE_DIR}/solutions/${A_CHAPTER}/${A_FILE})
  if(NOT EXISTS ${solution})
    message(FATAL_ERROR "wrong variant ${A_NAME}: no ${solution}")
  endif()
  file(READ ${solution} text)
  # FIND matches the code, not its layout (_course_layout_free_regex): a reformat of the stage
  # leaves its planted bugs in place.
  _course_layout_free_regex(find_regex "${A_FIND}")
  string(REGEX MATCH "${find_regex}" found "${text}")
  if(found STREQUAL "")
    message(
      FATAL_ERROR
        "wrong variant ${A_NAME}: '${A_FIND}' is not in ${solution}; update the variant with the stage"
    )
  endif()
  string(FIND "${text}" "${found}" at)
  # A planted bug tests what a student writes: the edit must fall inside an EXERCISE region.
  string(SUBSTRING "${text}" 0 ${at} before)
  string(FIND "${before}" "// EXERCISE BEGIN" last_begin REVERSE)
  string(FIND "${before}" "// EXERCISE END" last_end REVERSE)
  string(FIND "${A_FIND}" "// EXERCISE" crosses)
  if(last_begin EQUAL -1 OR last_end GREATER last_begin OR NOT crosses EQUAL -1)
    message(
      FATAL_ERROR
        "wrong variant ${A_NAME}: '${A_FIND}' in ${solution} is outside its EXERCISE regions; "
        "a planted bug must edit code the student writes")
  endif()
  # Every occurrence is replaced, as string(REPLACE) would, each in whatever layout it has.
  set(edited "")
  while(NOT found STREQUAL "")
    string(FIND "${text}" "${found}" at)
    string(SUBSTRING "${text}" 0 ${at} before)
    string(LENGTH "${found}" found_length)
    math(EXPR after "${at} + ${found_length}")
    string(SUBSTRING "${text}" ${after} -1 text)
    string(APPEND edited "${before}${A_REPLACE}")
    string(REGEX MATCH "${find_regex}" found "${text}")
  endwhile()
  set(text "${edited}${text}")
  set(folder ${PROJECT_BINARY_DIR}/wrong/${A_CHAPTER}/${A_STAGE}.${A_NAME})
  set(wrong ${folder}/${A_FILE})
  file(WRITE ${wrong}.tmp "// DELIBERATELY WRONG (${A_NAME}): ${A_WHY}\n${text}")
  configure_file(${wrong}.tmp ${wrong} COPYONLY)
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${solution})
  if(NOT A_FILE STREQUAL stage_file)
    configure_file(${PROJECT_SOURCE_DIR}/solutions/${A_CHAPTER}/${stage_file}
                   ${folder}/${stage_file} COPYONLY)
    set(wrong ${folder}/${stage_file})
  endif()
  set(obj wrong.${A_CHAPTER}.${A_STAGE}.${A_NAME})
  _course_stage_object(${obj} ${wrong} ${A_CHAPTER} ${A_STAGE} wrong)
  target_sources(${obj} PRIVATE ${A_SOURCES})
  set(test_object ${A_CHAPTER}.${A_TEST}.test)
  string(REPLACE "/" "-" test_object "${test_object}")
  if(A_TOOL STREQUAL "sass")
    # A stage that is right but misses its lesson's instructions: its SASS signature must reject it.
    course_add_test(
      NAME wrong/${A_CHAPTER}/${A_STAGE}.${A_NAME}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/harness/lesson.py sass
              ${A_CHAPTER}/${A_STAGE} --object $<TARGET_OBJECTS:${obj}> --expect-reject)
    set_tests_properties(
      wrong/${A_CHAPTER}/${A_STAGE}.${A_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:"
                                                         LABELS "sass;wrong;${A_CHAPTER}")
  elseif(A_TOOL STREQUAL "speed")
    # A stage that is right but slow: the speed verdict against the solution must find it slow.
    _course_judge_program(judge.${obj} ${A_CHAPTER} ${obj} ${A_LIBS})
    course_add_test(
      NAME wrong/${A_CHAPTER}/${A_STAGE}.${A_NAME}
      COMMAND
        ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/harness/lesson.py speed ${A_CHAPTER}/${A_STAGE}
        --reference $<TARGET_FILE:judge.solution.${A_CHAPTER}.${A_STAGE}> --candidate
        $<TARGET_FILE:judge.${obj}> --expect-slow)
    set_tests_properties(
      wrong/${A_CHAPTER}/${A_STAGE}.${A_NAME}
      PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:" RESOURCE_LOCK gpu LABELS
                 "gpu;speed;wrong;${A_CHAPTER}")
  elseif(A_TOOL)
    # A bug only a sanitizer sees (a warp race): the plain tests may pass; the tool must report it.
    add_executable(test.${obj} $<TARGET_OBJECTS:${test_object}> $<TARGET_OBJECTS:${obj}>)
    target_link_libraries(test.${obj} PRIVATE course_test_main course_common ${A_LIBS})
    course_add_test(
      NAME wrong/${A_CHAPTER}/${A_STAGE}.${A_NAME}
      COMMAND ${PROJECT_SOURCE_DIR}/harness/sanitize.sh --expect-reject ${A_TOOL}
              $<TARGET_FILE:test.${obj}>)
    set_tests_properties(
      wrong/${A_CHAPTER}/${A_STAGE}.${A_NAME}
      PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:" TIMEOUT 600 LABELS
                 "sanitize;wrong;${A_CHAPTER}")
  else()
    _course_test_program(
      test.${obj}
      ${test_object}
      ${obj}
      wrong
      ${A_CHAPTER}
      ${A_STAGE}.${A_NAME}
      "--expect-reject"
      ""
      ${A_LIBS})
  endif()
endfunction()

# A lab's kernels (labs/<chapter>/: not a stage, no exercise, no wrong variants), compiled once: the
# object library lab.<chapter>.<name>, which the lab's test (course_add_lab_test ... LIBS) and the
# chapter's benchmark (course_add_bench ... LIBS) link. Its users get its folder and the chapter's
# (whose headers the lab's include) on their include path.
#   course_add_lab(CHAPTER 14-nbody NAME rsqrt_pipes SOURCES lab_rsqrt_pipes.cu [LIBS ...])
function(course_add_lab)
  cmake_parse_arguments(A "" "CHAPTER;NAME" "SOURCES;LIBS" ${ARGN})
  set(target lab.${A_CHAPTER}.${A_NAME})
  add_library(${target} OBJECT ${A_SOURCES})
  target_include_directories(${target} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}
                                              ${PROJECT_SOURCE_DIR}/chapters/${A_CHAPTER})
  target_link_libraries(${target} PUBLIC course_common ${A_LIBS})
endfunction()

# A lab's GPU test program (labs/<chapter>/): lab/<chapter>/<name> in make check, its [sweep] case
# as lab/<chapter>/<name>/sweep when SWEEP is given, and the three sanitizer runs (make sanitize),
# labelled like the stages'. Its includes: the lab's folder, then the chapter's. A source outside
# the lab's folder is named by its full path.
#   course_add_lab_test(CHAPTER 08-warp NAME predicated_load SOURCES test_lab_x.cpp
#                       LIBS lab.08-warp.predicated_load [SWEEP])
function(course_add_lab_test)
  cmake_parse_arguments(A "SWEEP" "CHAPTER;NAME" "SOURCES;LIBS" ${ARGN})
  string(REPLACE "_" "-" program_name "${A_NAME}")
  set(program test-${A_CHAPTER}-lab-${program_name})
  set(test lab/${A_CHAPTER}/${A_NAME})
  add_executable(${program} ${A_SOURCES})
  target_include_directories(${program} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                                ${PROJECT_SOURCE_DIR}/chapters/${A_CHAPTER})
  target_link_libraries(${program} PRIVATE course_test_main course_common ${A_LIBS})
  set(large "")
  foreach(source IN LISTS A_SOURCES)
    get_filename_component(source ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    file(STRINGS ${source} _large REGEX "\\[large\\]")
    if(_large)
      set(large 1)
    endif()
  endforeach()
  if(A_SWEEP)
    course_add_test(NAME ${test} COMMAND ${program} "~[sweep]~[large]")
    course_add_test(NAME ${test}/sweep COMMAND ${program} "[sweep]")
    set_tests_properties(${test}/sweep PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:" LABELS
                                                  "gpu;sweep;${A_CHAPTER};lab")
  else()
    course_add_test(NAME ${test} COMMAND ${program} "~[large]")
  endif()
  set_tests_properties(${test} PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:" LABELS
                                          "gpu;${A_CHAPTER};lab")
  if(large)
    course_add_test(NAME ${test}/large COMMAND ${program} "[large]")
    set_tests_properties(
      ${test}/large PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:" RESOURCE_LOCK gpu LABELS
                               "gpu;large;${A_CHAPTER};lab")
  endif()
  foreach(tool memcheck racecheck synccheck)
    course_add_test(NAME sanitize/${tool}/${test} COMMAND ${PROJECT_SOURCE_DIR}/harness/sanitize.sh
                                                          ${tool} $<TARGET_FILE:${program}>)
    set_tests_properties(
      sanitize/${tool}/${test} PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:" TIMEOUT 600 LABELS
                                          "sanitize;${A_CHAPTER};lab")
  endforeach()
endfunction()

function(course_add_bench)
  cmake_parse_arguments(A "" "CHAPTER;NAME" "SOURCES;LIBS" ${ARGN})
  set(dir ${PROJECT_SOURCE_DIR}/chapters/${A_CHAPTER})
  foreach(variant solution exercise)
    get_property(objects GLOBAL PROPERTY COURSE_${variant}_OBJECTS_${A_CHAPTER})
    set(target bench-${A_CHAPTER})
    if(variant STREQUAL "exercise")
      set(target bench-${A_CHAPTER}-exercise)
    endif()
    set(object_files "")
    foreach(o IN LISTS objects)
      list(APPEND object_files $<TARGET_OBJECTS:${o}>)
    endforeach()
    add_executable(${target} ${A_SOURCES} ${object_files})
    target_include_directories(${target} PRIVATE ${dir})
    # Its options' defaults (lessons.toml's [workload.bench]: COURSE_BENCH_N, ...).
    target_compile_definitions(${target} PRIVATE ${COURSE_BENCH_DEFS_${A_CHAPTER}})
    target_link_libraries(${target} PRIVATE course_bench course_test_support course_common
                                            ${A_LIBS})
  endforeach()
endfunction()

# build/stages.json: where each stage's object file is, for harness/sass.py. Every GPU stage of the
# model must have been built by a course_add_stages call of its test file.
function(course_write_stage_manifest)
  get_property(built GLOBAL PROPERTY COURSE_STAGES_BUILT)
  foreach(chapter IN LISTS COURSE_CHAPTERS)
    course_stages(gpu CHAPTER ${chapter} KIND gpu)
    foreach(stage IN LISTS gpu)
      if(NOT ${chapter}/${stage} IN_LIST built)
        message(
          FATAL_ERROR
            "stage ${chapter}/${stage}: chapters/${chapter}/CMakeLists.txt has no "
            "course_add_stages(CHAPTER ${chapter} TEST ${COURSE_STAGE_TEST_${chapter}_${stage}}) "
            "for its test file (chapters/${chapter}/lessons.toml)")
      endif()
    endforeach()
  endforeach()
  get_property(entries GLOBAL PROPERTY COURSE_STAGE_MANIFEST)
  string(REPLACE ";{" ",\n  {" body "${entries}")
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/stages.json CONTENT "{\"stages\": [\n  ${body}\n]}\n")
endfunction()
