# The Debian package: scripts/package.sh runs cpack in a Release build
# configured with CMAKE_INSTALL_PREFIX=/usr.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME skillrunner)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "runs LLM skills registered as YAML and returns JSON that matches their schemas")
set(CPACK_PACKAGE_DESCRIPTION
  "skillrunner runs skills (a prompt or a program, with input and output JSON Schemas) \
against LLM providers, validates and retries their answers, gates them with rubrics, \
serves them over JSON-RPC on a Unix socket and runs eval suites with a history.")
set(CPACK_PACKAGE_CONTACT "skillrunner maintainers <skillrunner@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
# The shared libraries come from dpkg-shlibdeps on the installed binary;
# adduser is what postinst needs for the system user, procps the kill of
# ExecReload.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, procps")
# The shipped exec skill (word_stats) runs python3.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${CMAKE_SOURCE_DIR}/packaging/debian/conffiles
  ${CMAKE_SOURCE_DIR}/packaging/debian/postinst
  ${CMAKE_SOURCE_DIR}/packaging/debian/prerm
  ${CMAKE_SOURCE_DIR}/packaging/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
