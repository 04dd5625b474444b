# Finds tessel's dependencies. Nothing is vendored: each comes from the system,
# and a missing one stops configure with the Debian package that provides it.

function(tessel_require found_var what debian_package)
  if(NOT ${found_var})
    message(FATAL_ERROR
      "tessel needs ${what}, which was not found.\n"
      "On Debian/Ubuntu: apt-get install ${debian_package}")
  endif()
endfunction()

find_package(CUDAToolkit QUIET)
tessel_require(CUDAToolkit_FOUND "the CUDA toolkit (NVRTC and headers)"
               "nvidia-cuda-toolkit (or NVIDIA's cuda-toolkit-13-0)")
# NVRTC by path, not CUDA::nvrtc: that target drags in libcuda, and tessel
# must load the driver with dlopen so that it runs (uncached, CPU only) on
# machines without one.
find_library(TESSEL_NVRTC_LIBRARY nvrtc HINTS "${CUDAToolkit_LIBRARY_DIR}")
tessel_require(TESSEL_NVRTC_LIBRARY "NVRTC (libnvrtc.so)" "nvidia-cuda-toolkit (libnvrtc)")
# PTX compiles run the toolkit's ptxas program, found at run time
# (jit/ptx_compile.h): nothing to link.

find_package(absl CONFIG QUIET)
tessel_require(absl_FOUND "Abseil" "libabsl-dev")

find_package(nlohmann_json 3 CONFIG QUIET)
tessel_require(nlohmann_json_FOUND "nlohmann_json" "nlohmann-json3-dev")

find_package(xxHash QUIET)
tessel_require(xxHash_FOUND "xxHash (cache keys: XXH3-128)" "libxxhash-dev")

if(TESSEL_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    find_package(GTest QUIET)
  endif()
  tessel_require(GTest_FOUND "GoogleTest" "libgtest-dev libgmock-dev")
endif()
