# Which GPU architectures to build, decided before project() enables CUDA.
#   1. -DCMAKE_CUDA_ARCHITECTURES=... or the CUDAARCHS environment variable, if given;
#   2. otherwise the GPUs present, as nvidia-smi reports their compute capabilities (9.0 -> 90);
#   3. otherwise (no GPU, as in CI) the default set: 90, i.e. SASS for Hopper (the reference H100,
#      whose SASS the course commits) plus compute_90 PTX that newer GPUs compile at load time.
# One architecture keeps the two-core CI build short; add more with ARCH="80;90" in make.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(_course_archs "")
  find_program(COURSE_NVIDIA_SMI nvidia-smi)
  if(COURSE_NVIDIA_SMI)
    execute_process(COMMAND ${COURSE_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE _caps RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_rc EQUAL 0 AND _caps MATCHES "^[0-9]")
      string(REPLACE "\n" ";" _caps "${_caps}")
      foreach(_cap IN LISTS _caps)
        string(STRIP "${_cap}" _cap)
        string(REPLACE "." "" _arch "${_cap}")
        list(APPEND _course_archs ${_arch})
      endforeach()
      list(REMOVE_DUPLICATES _course_archs)
    endif()
  endif()
  if(_course_archs)
    set(CMAKE_CUDA_ARCHITECTURES "${_course_archs}" CACHE STRING "CUDA architectures (from the GPUs present)")
    message(STATUS "CUDA architectures: ${_course_archs} (the GPUs present)")
  else()
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures (default set: no GPU found)")
    message(STATUS "CUDA architectures: 90 (no GPU found: the default set)")
  endif()
endif()
