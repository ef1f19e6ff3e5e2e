# cmake -DSRC=<test source> -DOUT=<list file> -P TestCases.cmake — a unit test's cmocka case list.
#
# One cmocka_unit_test() line per `static void test_*(void **state)` function of SRC, in file
# order, so that a test written is a test run: no hand-kept list to forget a case in. A test
# file ends with `#include "tp_test_main.h"` (tests/support), whose main() runs this list;
# tp_test() puts the list on the test's include path.
file(STRINGS "${SRC}" defs REGEX "^static void test_[A-Za-z0-9_]+\\(void \\*\\*state\\)")
set(text "/* Generated from ${SRC} by cmake/TestCases.cmake: do not edit. */\n")
foreach(line IN LISTS defs)
  string(REGEX REPLACE "^static void (test_[A-Za-z0-9_]+)\\(.*$" "\\1" fn "${line}")
  string(APPEND text "cmocka_unit_test(${fn}),\n")
endforeach()
file(WRITE "${OUT}.new" "${text}")
# Only a changed list rebuilds the test.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.new" "${OUT}")
file(REMOVE "${OUT}.new")
