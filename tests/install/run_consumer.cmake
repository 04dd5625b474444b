# cmake -P script: install, configure the consumer, build it, run it.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BUILD}")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}")
run(${CMAKE_COMMAND} -S "${CONSUMER_SOURCE}" -B "${CONSUMER_BUILD}" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}"
    # The same sanitizer flags as the library, in the asan preset.
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build "${CONSUMER_BUILD}")
run("${CONSUMER_BUILD}/consumer")
