# Checks a program's command line: `PROGRAM --help` exits 0 and prints the usage, and
# `PROGRAM --no-such-option` exits non-zero with an error naming the option. LAUNCH is the
# launcher as a |-separated list (empty: run the program directly).
string(REPLACE "|" ";" launch "${LAUNCH}")
get_filename_component(name "${PROGRAM}" NAME)

# A program that ignores --help would run its whole benchmark: the time-out catches that.
execute_process(COMMAND ${launch} "${PROGRAM}" --help RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0 OR NOT out MATCHES "Usage:")
  message(FATAL_ERROR "cli: '${name} --help' exited with '${rc}' or printed no usage:\n${out}\n${err}")
endif()

execute_process(COMMAND ${launch} "${PROGRAM}" --no-such-option RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "--no-such-option")
  message(FATAL_ERROR "cli: '${name} --no-such-option' exited with '${rc}' or did not name the "
                      "option:\n${out}\n${err}")
endif()
message(STATUS "cli: ${name} prints its usage and rejects --no-such-option")
