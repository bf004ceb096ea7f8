# Runs heat2d in rank_count_independent mode at 1-4 ranks with different block layouts and
# checks that every run ends with the same bits of the total. LAUNCH is the launcher, its
# words separated by |, with the placeholder NP for the rank count; HEAT2D the program.
string(REPLACE "|" ";" LAUNCH "${LAUNCH}")
# Each run: the rank count, then heat2d's arguments.
set(runs
  "1 --bx 2 --by 2"
  "2 --bx 4 --by 1 --layout round_robin"
  "3 --bx 3 --by 2"
  "3 --bx 5 --by 3 --layout round_robin"
  "4 --bx 1 --by 3"
  "4 --bx 4 --by 4")
set(first "")
set(count 0)
foreach(run IN LISTS runs)
  set(flat "${run}")
  separate_arguments(run UNIX_COMMAND "${run}")
  list(GET run 0 np)
  list(SUBLIST run 1 -1 args)
  string(REPLACE "NP" "${np}" launch "${LAUNCH}")
  execute_process(COMMAND ${launch} ${HEAT2D} --mode rank_count_independent --steps 8 ${args}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "heat2d failed (${flat}): ${out}${err}")
  endif()
  string(REGEX MATCH "final total bits: (0x[0-9a-f]+)" _ "${out}")
  set(bits "${CMAKE_MATCH_1}")
  message(STATUS "${flat}: ${bits}")
  if(first STREQUAL "")
    set(first "${bits}")
  elseif(NOT bits STREQUAL first)
    message(FATAL_ERROR "different bits: ${bits} (${flat}) vs ${first}")
  endif()
  math(EXPR count "${count} + 1")
endforeach()
message(STATUS "same bits in ${count} runs: ${first}")
