# Small helpers shared by the folders' CMakeLists.

# Adds `dir` when its switch is on and the folder has a CMakeLists.txt.
function(tessel_add_optional_subdirectory dir switch)
  if(${switch} AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt")
    add_subdirectory(${dir})
  endif()
endfunction()

# tessel_hash_files(<output .cc> <namespace::Function> <prefix> <files>...)
# Generates, at build time, a source defining `std::string_view Function()`
# that returns "<prefix> <16 hex digits>" hashing the files
# (cmake/HashFiles.cmake): an identity that changes whenever one does.
function(tessel_hash_files output function prefix)
  add_custom_command(
    OUTPUT "${output}"
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DFUNCTION=${function}
            -DPREFIX=${prefix} "-DFILES=${ARGN}"
            -P "${PROJECT_SOURCE_DIR}/cmake/HashFiles.cmake"
    DEPENDS ${ARGN} "${PROJECT_SOURCE_DIR}/cmake/HashFiles.cmake"
    COMMENT "Hashing the sources behind ${function}"
    VERBATIM)
endfunction()

# Warnings every tessel target compiles with.
function(tessel_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter
                                           -Wno-missing-field-initializers)
endfunction()

# Sanitizer instrumentation (TESSEL_SANITIZE, e.g. "address,undefined": the
# asan preset) for tessel's own libraries. The test binaries link the
# sanitizer runtimes (the preset's linker flags) but are not instrumented:
# the code under test is, and instrumenting the gtest-heavy test sources
# too would more than double the CI build.
set(TESSEL_SANITIZE "" CACHE STRING
    "Sanitizers (-fsanitize=...) for the tessel libraries, e.g. address,undefined")
function(tessel_sanitize target)
  if(TESSEL_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${TESSEL_SANITIZE}
                                             -fno-sanitize-recover=all)
  endif()
endfunction()

# tessel_add_test(<name> SOURCES ... [LIBS ...] [GPU])
# One gtest binary; every test in it is a CTest test labelled `gpu` (needs a
# device, skips with a reason otherwise) or `cpu`.
function(tessel_add_test name)
  cmake_parse_arguments(ARG "GPU" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  # Tests include internals (src/, jit/) and tests/common by their paths.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock
                                        GTest::gtest_main)
  tessel_set_warnings(${name})
  if(ARG_GPU)
    set(label gpu)
  else()
    set(label cpu)
  endif()
  gtest_discover_tests(${name}
    PROPERTIES LABELS ${label}
               ENVIRONMENT "TESSEL_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    DISCOVERY_TIMEOUT 120)
endfunction()

# tessel_add_layer(<layer> SOURCES ... [USES <layers>...] [PUBLIC ...]
#                  [PRIVATE ...])
# One static library tessel::<layer> per layer of src/. USES names the
# layers it may call into: linked PRIVATE, they are the allowed arrows
# (tools/check-layers.sh checks the includes against the same picture).
# tessel::tessel links every layer for its users.
function(tessel_add_layer layer)
  cmake_parse_arguments(ARG "" "" "SOURCES;USES;PUBLIC;PRIVATE" ${ARGN})
  set(t tessel_${layer})
  add_library(${t} STATIC ${ARG_SOURCES})
  add_library(tessel::${layer} ALIAS ${t})
  set_target_properties(${t} PROPERTIES OUTPUT_NAME tessel_${layer}
                                        EXPORT_NAME ${layer})
  target_include_directories(${t}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:include>
    PRIVATE ${PROJECT_SOURCE_DIR})
  list(TRANSFORM ARG_USES PREPEND tessel::)
  target_link_libraries(${t}
    PUBLIC absl::status absl::statusor absl::strings absl::span ${ARG_PUBLIC}
    PRIVATE ${ARG_USES} ${ARG_PRIVATE})
  tessel_set_warnings(${t})
  tessel_sanitize(${t})
  set_property(GLOBAL APPEND PROPERTY TESSEL_LAYER_TARGETS ${t})
endfunction()
