# `cmake --install` and the Debian package (scripts/package.sh). Paths follow
# CMAKE_INSTALL_PREFIX; the package is built with the prefix /usr, which puts
# the configuration in /etc and the units in /usr/lib/systemd/system.
include(GNUInstallDirs)

install(TARGETS skillrunner RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The shipped tree: what postinst copies to /etc/skillrunner when absent.
set(SR_EXAMPLES_DIR ${CMAKE_INSTALL_DATADIR}/skillrunner/examples)
install(FILES ${CMAKE_SOURCE_DIR}/skillrunner.yaml DESTINATION ${SR_EXAMPLES_DIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/skills ${CMAKE_SOURCE_DIR}/rubrics ${CMAKE_SOURCE_DIR}/evals
  DESTINATION ${SR_EXAMPLES_DIR}
  PATTERN "__pycache__" EXCLUDE)

# The docs, docs/reference.md among them: the reference of every key, equal
# to `skillrunner schema --markdown` (a test keeps it so), and the compiled-in
# schemas themselves.
set(SR_DOC_DIR ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/CHANGELOG.md DESTINATION ${SR_DOC_DIR})
# Debian's place for the license: /usr/share/doc/skillrunner/copyright.
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE DESTINATION ${SR_DOC_DIR} RENAME copyright)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${SR_DOC_DIR}/docs
  FILES_MATCHING PATTERN "*.md")
set(SR_DOC_SCHEMAS ${EMBEDDED_SCHEMAS})
list(FILTER SR_DOC_SCHEMAS EXCLUDE REGEX "/metaschemas/")
install(FILES ${SR_DOC_SCHEMAS} DESTINATION ${SR_DOC_DIR}/schemas)
# The socket protocol's JSON Schemas (docs/protocol.md), for clients to validate against.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/schemas/ DESTINATION ${SR_DOC_DIR}/protocol-schemas
  FILES_MATCHING PATTERN "*.schema.json")

# systemd units and the nightly eval's wrapper (it names the run folder by
# the UTC date, which a unit file cannot compute).
set(SR_LIBEXEC_DIR ${CMAKE_INSTALL_FULL_LIBEXECDIR}/skillrunner)
set(SR_BIN ${CMAKE_INSTALL_FULL_BINDIR}/skillrunner)
foreach(unit skillrunner.service skillrunner-eval@.service skillrunner-eval@.timer)
  configure_file(${CMAKE_SOURCE_DIR}/packaging/systemd/${unit}.in
    ${CMAKE_BINARY_DIR}/packaging/systemd/${unit} @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/packaging/systemd/${unit}
    DESTINATION lib/systemd/system)
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/packaging/eval-suite.in
  ${CMAKE_BINARY_DIR}/packaging/eval-suite @ONLY)
install(PROGRAMS ${CMAKE_BINARY_DIR}/packaging/eval-suite DESTINATION ${SR_LIBEXEC_DIR})
# API keys for the units (EnvironmentFile): root-only, a dpkg conffile.
install(FILES ${CMAKE_SOURCE_DIR}/packaging/default/skillrunner
  DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default
  PERMISSIONS OWNER_READ OWNER_WRITE)

include(${CMAKE_CURRENT_LIST_DIR}/cpack.cmake)
