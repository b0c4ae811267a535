# The Python client (clients/python): its unittest suite against a real
# `skillrunner serve`, and mypy --strict on the package (Debian's python3-mypy,
# which only /usr/bin/python3 sees). Not under the sanitizer builds (CI's budget).
if(NOT SKILLRUNNER_SANITIZE AND NOT SKILLRUNNER_TSAN)
  if(EXISTS /usr/bin/python3)
    set(SKILLRUNNER_CLIENT_PYTHON /usr/bin/python3)
  else()
    find_program(SKILLRUNNER_CLIENT_PYTHON python3 REQUIRED)
  endif()
  add_test(NAME python_client_unittest
    COMMAND ${CMAKE_COMMAND} -E env SKILLRUNNER_BINARY=$<TARGET_FILE:skillrunner>
            PYTHONDONTWRITEBYTECODE=1
            ${SKILLRUNNER_CLIENT_PYTHON} -m unittest discover -s clients/python/tests -v
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  # Timing checks (deadlines, OVERLOADED retries) want the cores to themselves.
  set_tests_properties(python_client_unittest PROPERTIES TIMEOUT 240 RUN_SERIAL TRUE)
  add_test(NAME python_client_mypy
    COMMAND ${SKILLRUNNER_CLIENT_PYTHON} -m mypy --strict
            --cache-dir ${CMAKE_BINARY_DIR}/mypy-cache clients/python/skillrunner_client
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(python_client_mypy PROPERTIES TIMEOUT 240)
endif()
