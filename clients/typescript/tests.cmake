# The TypeScript client (clients/typescript), included from the top-level CMakeLists.txt.
# typescript_client_build: npm ci of the pinned build tools (cache in .deps/npm), tsc --strict, and a check
# that the committed dist/ matches src/; typescript_client_tests: node --test against a real
# `skillrunner serve`. Not under the sanitizers (CI's budget). Node 18+ and npm: scripts/setup.sh.
if(NOT SKILLRUNNER_SANITIZE AND NOT SKILLRUNNER_TSAN)
  set(SKILLRUNNER_TS_CLIENT_SCRIPT ${CMAKE_SOURCE_DIR}/clients/typescript/scripts/test.sh)
  add_test(NAME typescript_client_build
    COMMAND bash ${SKILLRUNNER_TS_CLIENT_SCRIPT} build
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(typescript_client_build PROPERTIES
    FIXTURES_SETUP typescript_client TIMEOUT 300 RESOURCE_LOCK typescript_client_dir)
  add_test(NAME typescript_client_tests
    COMMAND ${CMAKE_COMMAND} -E env SKILLRUNNER_BINARY=$<TARGET_FILE:skillrunner>
            bash ${SKILLRUNNER_TS_CLIENT_SCRIPT} test
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(typescript_client_tests PROPERTIES
    FIXTURES_REQUIRED typescript_client TIMEOUT 180 RESOURCE_LOCK typescript_client_dir)
endif()
