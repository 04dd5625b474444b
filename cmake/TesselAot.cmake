# tessel_add_aot_kernels(<target>
#     MANIFEST <kernels.json> ARCHS <arch>...
#     [KERNELS <name>...] [NAME <stem>] [NAMESPACE <ns>] [TOOL <target|path>])
#
# Runs tessel-aot at build time (docs/aot.md): the manifest's kernels (or
# the entries of KERNELS) compiled for each of ARCHS, written as
# <build>/tessel_aot/<target>/<stem>.h and .cc (stem: tessel_kernels), and
# adds them to <target>, which then includes "<stem>.h" and links
# tessel::aot_runtime only (no NVRTC, no Abseil). TOOL is the tessel-aot
# that knows the kernels: tessel's own (tessel::tessel-aot, with tessel's
# samples) by default, or an executable target of the project's own whose
# main() calls tessel::AotMain (tessel/aot.h) and which links the code that
# registers its kernels. The tool runs on the build machine (ptxas / NVRTC
# there); the files are made again when the manifest or the tool changes,
# and rewritten only when their text does.
function(tessel_add_aot_kernels target)
  cmake_parse_arguments(ARG "" "MANIFEST;NAME;NAMESPACE;TOOL"
                        "ARCHS;KERNELS" ${ARGN})
  if(NOT ARG_MANIFEST OR NOT ARG_ARCHS)
    message(FATAL_ERROR "tessel_add_aot_kernels(${target}): MANIFEST and "
                        "ARCHS are required")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME tessel_kernels)
  endif()
  if(NOT ARG_TOOL)
    if(NOT TARGET tessel::tessel-aot)
      message(FATAL_ERROR "tessel_add_aot_kernels(${target}): no tessel-aot "
                          "(build tessel with TESSEL_BUILD_TOOLS, or give TOOL)")
    endif()
    set(ARG_TOOL tessel::tessel-aot)
  endif()
  if(TARGET ${ARG_TOOL})
    set(tool "$<TARGET_FILE:${ARG_TOOL}>")
  else()
    set(tool "${ARG_TOOL}")
  endif()
  get_filename_component(manifest "${ARG_MANIFEST}" ABSOLUTE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/tessel_aot/${target}")
  list(JOIN ARG_ARCHS "," archs)
  set(args --manifest "${manifest}" --arch "${archs}" --out-dir "${dir}"
           --name "${ARG_NAME}")
  if(ARG_KERNELS)
    list(JOIN ARG_KERNELS "," kernels)
    list(APPEND args --kernels "${kernels}")
  endif()
  if(ARG_NAMESPACE)
    list(APPEND args --namespace "${ARG_NAMESPACE}")
  endif()
  add_custom_command(
    OUTPUT "${dir}/${ARG_NAME}.h" "${dir}/${ARG_NAME}.cc"
    COMMAND ${tool} ${args}
    DEPENDS "${manifest}" ${ARG_TOOL}
    COMMENT "tessel-aot: ${ARG_NAME} for ${archs}"
    VERBATIM)
  target_sources(${target} PRIVATE "${dir}/${ARG_NAME}.h"
                                   "${dir}/${ARG_NAME}.cc")
  target_include_directories(${target} PRIVATE "${dir}")
  target_link_libraries(${target} PRIVATE tessel::aot_runtime)
endfunction()
