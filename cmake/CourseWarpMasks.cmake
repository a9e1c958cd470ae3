# Mask-checked builds of the stages that teach warp-level intrinsics (harness/warp_mask_check.cuh).
#
#   course_add_warp_mask_check(CHAPTER 08-warp TEST test_masks.cpp [LIBS ...])
# compiles each GPU stage of the chapter (lessons.toml; cmake/CourseStages.cmake) once more, from solutions/ and from chapters/, with every _sync warp
# intrinsic of the stage's translation unit sent through a wrapper that records calls breaking
# the intrinsics' rules (a calling lane outside the mask, a shuffle reading a lane that does not
# take part, ...), and links it with TEST into bin/test.<variant>.<chapter>.<stage>.masks, run as
# the test <variant>/<chapter>/<stage>/masks (labels gpu, masks, the chapter, the variant). These
# objects are separate from the stage's own: the plain tests, the benchmarks and the SASS tools
# never see the wrappers, and the manifest (build/stages.json) does not list them.
#
#   course_warp_mask_check_variant(CHAPTER 08-warp STAGE 02_warp_reduce NAME partial_mask)
# after course_add_wrong_variant(... TEST test_masks.cpp NAME partial_mask ...): compiles that
# wrong variant with the checks too, so the mask check is what must reject it.

# The compile options of a mask-checked object: the header, force-included before the stage's own
# code (it includes the CUDA headers first, then defines the macros).
set(COURSE_WARP_MASK_CHECK_OPTIONS
    "$<$<COMPILE_LANGUAGE:CUDA>:--pre-include=${PROJECT_SOURCE_DIR}/harness/warp_mask_check.cuh>")

function(course_add_warp_mask_check)
  cmake_parse_arguments(A "" "CHAPTER;TEST" "LIBS" ${ARGN})
  course_stages(A_STAGES CHAPTER ${A_CHAPTER} KIND gpu)
  set(dir ${PROJECT_SOURCE_DIR}/chapters/${A_CHAPTER})
  # The test object, named as course_add_stages names its own, so course_add_wrong_variant finds it.
  set(test_object ${A_CHAPTER}.${A_TEST}.test)
  string(REPLACE "/" "-" test_object "${test_object}")
  add_library(${test_object} OBJECT ${dir}/${A_TEST})
  target_include_directories(${test_object} PRIVATE ${dir})
  target_link_libraries(${test_object} PUBLIC course_common course_test_support)
  foreach(stage IN LISTS A_STAGES)
    foreach(variant solution exercise)
      if(variant STREQUAL "solution")
        set(source ${PROJECT_SOURCE_DIR}/solutions/${A_CHAPTER}/${stage}.cu)
      else()
        set(source ${dir}/${stage}.cu)
      endif()
      set(obj masks.${variant}.${A_CHAPTER}.${stage})
      # The stage object as course_add_stages makes it (TODO detection included), ...
      _course_stage_object(${obj} ${source} ${A_CHAPTER} ${stage} ${variant})
      # ... but not one the SASS tools should find: take its manifest entry back out.
      get_property(manifest GLOBAL PROPERTY COURSE_STAGE_MANIFEST)
      list(POP_BACK manifest entry)
      string(FIND "${entry}" "${obj}" mentions)
      if(mentions EQUAL -1)
        message(FATAL_ERROR "course_add_warp_mask_check: the last manifest entry is not ${obj}'s; "
                            "update cmake/CourseWarpMasks.cmake with _course_stage_object")
      endif()
      set_property(GLOBAL PROPERTY COURSE_STAGE_MANIFEST "${manifest}")
      target_compile_options(${obj} PRIVATE ${COURSE_WARP_MASK_CHECK_OPTIONS})

      set(program test.${variant}.${A_CHAPTER}.${stage}.masks)
      add_executable(${program} $<TARGET_OBJECTS:${test_object}> $<TARGET_OBJECTS:${obj}>)
      target_link_libraries(${program} PRIVATE course_test_main course_common ${A_LIBS})
      course_add_test(NAME ${variant}/${A_CHAPTER}/${stage}/masks COMMAND ${program}
                      OBJECT ${variant}.${A_CHAPTER}.${stage})
      set_tests_properties(
        ${variant}/${A_CHAPTER}/${stage}/masks
        PROPERTIES SKIP_REGULAR_EXPRESSION "COURSE_SKIP:" LABELS
                   "gpu;masks;${A_CHAPTER};${variant}")
    endforeach()
  endforeach()
endfunction()

function(course_warp_mask_check_variant)
  cmake_parse_arguments(A "" "CHAPTER;STAGE;NAME" "" ${ARGN})
  set(obj wrong.${A_CHAPTER}.${A_STAGE}.${A_NAME})
  if(NOT TARGET ${obj})
    message(
      FATAL_ERROR
        "course_warp_mask_check_variant: no wrong variant ${obj}; declare it first with course_add_wrong_variant"
    )
  endif()
  target_compile_options(${obj} PRIVATE ${COURSE_WARP_MASK_CHECK_OPTIONS})
endfunction()
