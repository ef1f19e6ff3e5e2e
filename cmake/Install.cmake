# Install rules (`make install`, `cmake --install BUILD [--prefix P]`, DESTDIR honoured): the
# tpuprof command and tpuprof-gendump, libtpuprof (.so with its SONAME links, and .a), the
# public header with its generated version header, and a generated pkg-config file so a
# program builds with `pkg-config --cflags --libs tpuprof`.
include(GNUInstallDirs)

install(TARGETS tpuprof tpuprof-gendump RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tpuprof_shared tpuprof_static
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/tpuprof/tpuprof.h
              ${CMAKE_BINARY_DIR}/generated/tpuprof/tpuprof_version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpuprof)

# The .pc names the configured prefix; `cmake --install --prefix` elsewhere or a DESTDIR
# staging tree are read with pkg-config --define-prefix or PKG_CONFIG_SYSROOT_DIR.
configure_file(${CMAKE_SOURCE_DIR}/cmake/tpuprof.pc.in ${CMAKE_BINARY_DIR}/generated/tpuprof.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/generated/tpuprof.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
