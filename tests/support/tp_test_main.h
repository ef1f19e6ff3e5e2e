/* tp_test_main.h — the main() of a cmocka unit test, included as a test file's last line.
 *
 * It runs every case of the file: the case list cmake/TestCases.cmake generates from the
 * file's `static void test_*(void **state)` functions. A file with a
 * group fixture defines TP_TEST_GROUP_SETUP / TP_TEST_GROUP_TEARDOWN before the include. */
#ifndef TP_TEST_GROUP_SETUP
#define TP_TEST_GROUP_SETUP NULL
#endif
#ifndef TP_TEST_GROUP_TEARDOWN
#define TP_TEST_GROUP_TEARDOWN NULL
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#include "tp_test_cases.h"
	};
	return cmocka_run_group_tests(tests, TP_TEST_GROUP_SETUP, TP_TEST_GROUP_TEARDOWN);
}
