# Install and export: a host application does
#   find_package(tessel CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE tessel::tessel)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSEL_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tessel")

get_property(tessel_layers GLOBAL PROPERTY TESSEL_LAYER_TARGETS)
install(TARGETS tessel_tessel tessel_jit ${tessel_layers} tessel_aot_runtime
  EXPORT tesselTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/tessel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tesselTargets NAMESPACE tessel:: DESTINATION ${TESSEL_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/tesselConfig.cmake.in
  "${PROJECT_BINARY_DIR}/tesselConfig.cmake"
  INSTALL_DESTINATION ${TESSEL_INSTALL_CMAKEDIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/tesselConfig.cmake"
              "${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake"
              third_party/FindxxHash.cmake
              cmake/TesselAot.cmake
        DESTINATION ${TESSEL_INSTALL_CMAKEDIR})
# The quickstarts' sources (docs/quickstart.md, docs/aot.md), projects that
# build against this install: <prefix>/share/tessel/examples/quickstart and
# quickstart_aot.
install(DIRECTORY examples/quickstart examples/quickstart_aot
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tessel/examples)
