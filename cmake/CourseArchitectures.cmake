# Which GPU architectures to build, decided before project() enables CUDA.
#   1. -DCMAKE_CUDA_ARCHITECTURES=... or the CUDAARCHS environment variable, if given;
#   2. otherwise the GPUs present, as nvidia-smi reports their compute capabilities (9.0 -> 90);
#   3. otherwise (no GPU, as in CI) the default set: 90, i.e. SASS for Hopper (the reference H200,
#      whose SASS the course commits) plus compute_90 PTX that newer GPUs compile at load time.
# A GPU newer than this nvcc knows gets the newest PTX it has; one older than its oldest, none.
# make archs compiles everything for every generation from sm_75 (T4) to sm_120 (RTX 50).
# One architecture keeps the two-core CI build short; add more with ARCH="80;90" in make.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(_course_archs "")
  find_program(COURSE_NVIDIA_SMI nvidia-smi)
  if(COURSE_NVIDIA_SMI)
    execute_process(
      COMMAND ${COURSE_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE _caps
      RESULT_VARIABLE _rc
      ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
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
  # Each GPU's architecture must be one this nvcc builds for: a GPU newer than the toolkit (an RTX 50,
  # sm_120, with CUDA 12.6) gets the newest PTX the toolkit has, which the driver compiles for the GPU
  # when a program loads (slower to start, same answers); a GPU older than the toolkit's oldest
  # (CUDA 13 builds sm_75 and newer) cannot run the course's GPU parts: said, and left out.
  if(_course_archs)
    if(DEFINED CMAKE_CUDA_COMPILER)
      set(_nvcc ${CMAKE_CUDA_COMPILER})
    elseif(DEFINED ENV{CUDACXX})
      set(_nvcc $ENV{CUDACXX})
    else()
      find_program(COURSE_NVCC nvcc PATHS /usr/local/cuda/bin)
      set(_nvcc ${COURSE_NVCC})
    endif()
    set(_known "")
    if(_nvcc)
      execute_process(
        COMMAND ${_nvcc} --list-gpu-arch
        OUTPUT_VARIABLE _known
        RESULT_VARIABLE _rc
        ERROR_QUIET)
      if(_rc EQUAL 0)
        string(REGEX MATCHALL "compute_[0-9]+" _known "${_known}")
        string(REPLACE "compute_" "" _known "${_known}")
      else()
        set(_known "")
      endif()
    endif()
    if(_known)
      set(_chosen "")
      foreach(_arch IN LISTS _course_archs)
        if(_arch IN_LIST _known)
          list(APPEND _chosen ${_arch})
          continue()
        endif()
        set(_best 0)
        foreach(_k IN LISTS _known)
          if(_k LESS _arch AND _k GREATER _best)
            set(_best ${_k})
          endif()
        endforeach()
        if(_best)
          list(APPEND _chosen ${_best}-virtual)
          message(
            STATUS
              "CUDA architectures: this nvcc cannot build for the GPU's sm_${_arch}: compute_${_best} PTX "
              "instead, compiled by the driver when a program loads (a newer CUDA Toolkit builds for it)"
          )
        else()
          list(GET _known 0 _oldest)
          message(
            WARNING
              "The GPU present is sm_${_arch}, older than this CUDA Toolkit builds for (sm_${_oldest} and "
              "newer): the course's GPU programs cannot run on it (they say so); its host parts build and run."
          )
        endif()
      endforeach()
      list(REMOVE_DUPLICATES _chosen)
      set(_course_archs ${_chosen})
    endif()
  endif()
  if(_course_archs)
    set(CMAKE_CUDA_ARCHITECTURES "${_course_archs}"
        CACHE STRING "CUDA architectures (from the GPUs present)")
    message(STATUS "CUDA architectures: ${_course_archs} (the GPUs present)")
  else()
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures (default set: no GPU found)")
    message(
      STATUS
        "CUDA architectures: 90 (no GPU found, or none this toolkit builds for: the default set)")
  endif()
endif()
