# The compile-only check of every GPU generation (make archs; CI runs it after make check).
#
# Configured with -DCOURSE_ARCH_CHECK=ON (make archs does, in a build folder of its own, with
# CMAKE_CUDA_ARCHITECTURES naming every architecture and COURSE_WARNINGS_AS_ERRORS=ON), this adds
# the target arch-check: every object with device code that a student's build compiles, for every
# architecture of the build, warnings as errors, nothing linked, nothing run:
#   - the stage objects, solutions and exercises (and the mask-checked builds of chapter 8);
#   - the libraries of the course with device code (course_common, course_bench, streaming_kernel,
#     the labs' kernels lab.<chapter>.<name> from labs/...);
#   - the CUDA sources of the benchmarks and the programs (cub_baseline.cu, cublas_bank.cu, ...),
#     each once, with the include folders, definitions and libraries of the first program that
#     compiles it.
# Left out, and why: C++ sources (test files, the benchmarks' and judge programs' frames, stage
# 14/09): they hold no device code, so they compile the same for every architecture, and the
# normal build compiles them with warnings as errors. The deliberately wrong variants: each is a
# solution with a small edit inside an EXERCISE region, compiled by the normal build for its
# architecture; 119 of them for seven architectures would double the check's time.
# nvcc's -Werror=all-warnings reaches ptxas too, so what differs between architectures fails here:
# an intrinsic or PTX instruction an older SM lacks, launch bounds or shared memory over an SM's
# limits, and any front-end warning in a path taken for one architecture only. Register spills are
# not warnings and are not checked: with CUDA 13.0, ptxas spills 4 to 16 bytes in a few kernels for
# some generations (none for sm_90): corr_dp4a_blocked<false, 28, 28, 4> of 15-ncc/08 for sm_75
# and sm_80; corr_bank_mma of 15-ncc/10 and segmented_scan<256, int> of 13-scan/11 for sm_100;
# CUB's scan and select kernels for sm_100. make archs CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-Xptxas=-warn-spills
# lists them (as errors).
function(course_add_arch_check)
  set(objects "")
  set(seen_sources "")
  set(dirs ${PROJECT_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      get_target_property(type ${t} TYPE)
      if(t MATCHES "^wrong\\." OR t MATCHES "^compile-check\\.")
        continue()
      endif()
      get_target_property(sources ${t} SOURCES)
      if(NOT sources)
        continue()
      endif()
      get_target_property(source_dir ${t} SOURCE_DIR)
      # The target's CUDA sources (a .cu compiled as C++, like stage 14/09, is not one).
      set(cuda_sources "")
      foreach(s IN LISTS sources)
        if(s MATCHES "^\\$<" OR NOT s MATCHES "\\.cu$")
          continue()
        endif()
        get_filename_component(path ${s} ABSOLUTE BASE_DIR ${source_dir})
        get_property(
          language
          SOURCE ${path}
          DIRECTORY ${source_dir}
          PROPERTY LANGUAGE)
        if(language AND NOT language STREQUAL "CUDA")
          continue()
        endif()
        list(APPEND cuda_sources ${path})
      endforeach()
      if(NOT cuda_sources)
        continue()
      endif()
      if(type STREQUAL "OBJECT_LIBRARY" OR type STREQUAL "STATIC_LIBRARY")
        # Stage objects, mask-checked objects, the labs' kernels, the course's libraries: as they are.
        list(APPEND objects ${t})
        list(APPEND seen_sources ${cuda_sources})
      elseif(type STREQUAL "EXECUTABLE")
        # A program's own CUDA sources (baselines): each compiled once, as that program
        # compiles it, in a target of its own.
        if(seen_sources)
          list(REMOVE_ITEM cuda_sources ${seen_sources})
        endif()
        list(APPEND seen_sources ${cuda_sources})
        get_target_property(includes ${t} INCLUDE_DIRECTORIES)
        get_target_property(definitions ${t} COMPILE_DEFINITIONS)
        get_target_property(options ${t} COMPILE_OPTIONS)
        get_target_property(libraries ${t} LINK_LIBRARIES)
        foreach(v includes definitions options libraries)
          if(NOT ${v})
            set(${v} "")
          endif()
        endforeach()
        foreach(source IN LISTS cuda_sources)
          get_filename_component(name ${source} NAME_WE)
          set(check compile-check.${t}.${name})
          add_library(${check} OBJECT ${source})
          set_target_properties(${check} PROPERTIES EXCLUDE_FROM_ALL TRUE)
          target_include_directories(${check} PRIVATE ${includes})
          target_compile_definitions(${check} PRIVATE ${definitions})
          target_compile_options(${check} PRIVATE ${options})
          target_link_libraries(${check} PRIVATE ${libraries})
          list(APPEND objects ${check})
        endforeach()
      endif()
    endforeach()
  endwhile()
  add_custom_target(arch-check)
  add_dependencies(arch-check ${objects})
  list(LENGTH objects count)
  message(
    STATUS
      "arch-check: ${count} targets with device code, for CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}"
  )
endfunction()
